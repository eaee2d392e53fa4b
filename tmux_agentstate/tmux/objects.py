"""What the adapter reads from tmux and sends it, as plain objects: a pane (`PaneInfo`), a
pane's screen of one moment (`PaneView`), a client (`ClientInfo`), a batch of commands
(`Batch`); the formats tmux fills in for them."""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

SEP = "\x1f"  # unit separator: cannot appear in tmux's escaped format output
_MARKER = "\x1fagentstate-capture\x1f"  # starts each pane's block in a batched capture
PANE_FIELDS = ("pane_id", "pane_pid", "pane_tty", "session_name", "window_id", "window_index",
               "pane_index", "pane_width", "pane_height", "pane_dead", "pane_pipe",
               "alternate_on", "cursor_x", "cursor_y", "pane_active", "window_active",
               "session_attached", "session_id", "@agentstate", "@agentstate_pipe",
               "@agentstate_recording", "@agentstate_report", "@agentstate_launch", "pane_title")
# the report is our hook's JSON (control characters escaped), beside it the launch it must prove
# it comes from (core/origin.py); the title last: it may hold SEP
VIEW_FIELDS = ("cursor_y", "pane_height", "pane_width", "cursor_x", "alternate_on",
               "scroll_region_upper", "scroll_region_lower", "@agentstate_screen",
               "@agentstate_report", "@agentstate_launch", "@agentstate_osc", "pane_title")
# the terminal's own answer (XTVERSION, e.g. "WezTerm 20240203") last: the terminal wrote it
CLIENT_FIELDS = ("client_name", "client_tty", "client_control_mode", "pane_id", "session_name",
                 "window_id", "client_termname", "client_termtype")
CLIENT_FORMAT = "C" + SEP + SEP.join(f"#{{{f}}}" for f in CLIENT_FIELDS)  # "C": not a pane row


@dataclass(frozen=True)
class PaneInfo:
    pane_id: str
    pane_pid: int
    tty: str
    session: str
    window_id: str
    window_index: str
    pane_index: str
    width: int
    height: int
    dead: bool
    piped: bool
    alternate_on: bool
    cursor_x: int
    cursor_y: int
    active: bool
    window_active: bool
    attached: int        # clients attached to its session (our control client included)
    session_id: str
    state_option: str    # @agentstate as tmux has it now (after a restart: what we left)
    our_pipe: str        # @agentstate_pipe: the FIFO we piped this pane into, if any
    recording: bool      # @agentstate_recording: `record` has the pipe (it tees into ours)
    report: str          # @agentstate_report: the last hook report
    title: str
    launch: str = ""     # @agentstate_launch: the launch its reports must prove they come from

    @property
    def address(self) -> str:
        return f"{self.session}:{self.window_index}.{self.pane_index}"


@dataclass(frozen=True)
class PaneView:
    """One pane's screen as tmux renders it (`capture-pane -p`) and what goes with it."""
    text: str
    cursor_y: int
    rows: int
    cols: int
    title: str
    report: str = ""     # @agentstate_report, read with the screen
    cursor_x: int = 0
    alternate_on: bool = False
    scroll_top: int = 0  # the scroll region (DECSTBM), rows from 0, both included
    scroll_bottom: int = -1  # -1: the last row
    launch: str = ""     # @agentstate_launch, read with the report
    screen_verdict: str = ""  # @agentstate_screen: the sidecar's screen verdict and its change
    osc: str = ""        # @agentstate_osc: the agent's own OSC record, as the sidecar took it


@dataclass(frozen=True)
class ClientInfo:
    name: str
    tty: str
    control: bool
    pane_id: str
    session: str
    window_id: str = ""
    termname: str = ""   # the client's TERM
    termtype: str = ""   # what its terminal says it is (tmux asks with XTVERSION), if it said

    def shows(self, window_id: str) -> bool:
        """Whether this client has that window on screen (every pane of it is visible)."""
        return self.window_id == window_id


def _views(lines: list[str], screens: dict[str, str]) -> dict[str, PaneView]:
    """PaneViews from a `list-panes` of VIEW_FIELDS and the captures of the same moment."""
    out = {}
    for line in lines:
        m = line.split(SEP, len(VIEW_FIELDS))
        if m[0] not in screens:
            continue
        try:
            top, bottom = int(m[6] or 0), int(m[7] or -1)
            out[m[0]] = PaneView(screens[m[0]], int(m[1] or 0), int(m[2]), int(m[3]), m[12],
                                 report=m[9], cursor_x=int(m[4] or 0), alternate_on=m[5] == "1",
                                 scroll_top=top, scroll_bottom=bottom, launch=m[10],
                                 screen_verdict=m[8], osc=m[11])
        except (IndexError, ValueError):
            continue
    return out


def _client_row(line: str) -> "ClientInfo | None":
    parts = line.split(SEP, len(CLIENT_FIELDS))
    if parts[0] != "C" or len(parts) != len(CLIENT_FIELDS) + 1:
        return None
    return ClientInfo(parts[1], parts[2], parts[3] == "1", *parts[4:])


def cat_into(fifo: str) -> str:
    """The `pipe-pane` shell command that feeds the sidecar's FIFO for a pane."""
    return f"exec cat > {shlex.quote(fifo)}"


def tmux_quote(value: str) -> str:
    """Escape text we copy into an option a status line renders: `#` starts a format."""
    return value.replace("#", "##")


@dataclass
class Batch:
    """Commands to run in one tmux process (see module doc)."""
    commands: list[list[str]] = field(default_factory=list)

    def add(self, *args: str) -> None:
        self.commands.append([str(a) for a in args])

    def set_pane(self, pane: str, name: str, value: str | None) -> None:
        if value is None:
            self.add("set-option", "-p", "-u", "-q", "-t", pane, name)
        else:
            self.add("set-option", "-p", "-q", "-t", pane, name, value)

    def set_window(self, window: str, name: str, value: str | None) -> None:
        if value is None:
            self.add("set-option", "-w", "-u", "-q", "-t", window, name)
        else:
            self.add("set-option", "-w", "-q", "-t", window, name, value)

    def set_global(self, name: str, value: str | None) -> None:
        if value is None:
            self.add("set-option", "-g", "-u", "-q", name)
        else:
            self.add("set-option", "-g", "-q", name, value)

    def pipe_to_fifo(self, pane: str, fifo: str, command: str | None = None) -> None:
        """Pipe the pane to the sidecar: a `cat` into `fifo`, or `command` (a hand-over of
        the pipe itself); `fifo` is named ours either way (another writer may use it)."""
        # -O: pane output only. Never -o: it toggles, and would turn an open pipe off.
        self.add("pipe-pane", "-O", "-t", pane, command or cat_into(fifo))
        self.set_pane(pane, "@agentstate_pipe", fifo)

    def close_pipe(self, pane: str) -> None:
        self.add("pipe-pane", "-t", pane)
        self.set_pane(pane, "@agentstate_pipe", None)

    def __bool__(self) -> bool:
        return bool(self.commands)
