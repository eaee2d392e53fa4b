"""The tmux adapter: the only module that talks to tmux.

One-off commands go through libtmux's `Server.cmd`, batched: tmux takes a lone `;` argument
as a command separator, so one tmux process runs a whole list of commands (50 separate calls
cost ~300–600 ms; one batched call ~10 ms). The sidecar, which calls several times a second,
goes further and keeps one control-mode client (`ControlClient`), so a sweep costs a write and
a read instead of a tmux process (~4 ms of CPU each).
"""
from __future__ import annotations

import os
import re
import shlex
import time
from dataclasses import dataclass, field

import libtmux

from .control import ControlClient

SEP = "\x1f"  # unit separator: cannot appear in tmux's escaped format output
_MARKER = "\x1fagentstate-capture\x1f"  # starts each pane's block in a batched capture
PANE_FIELDS = ("pane_id", "pane_pid", "pane_tty", "session_name", "window_id", "window_index",
               "pane_index", "pane_width", "pane_height", "pane_dead", "pane_pipe",
               "alternate_on", "cursor_x", "cursor_y", "pane_active", "window_active",
               "session_attached", "session_id", "@agentstate", "@agentstate_pipe",
               "@agentstate_recording", "@agentstate_report", "pane_title")
# the report is our hook's JSON (control characters escaped); the title last: it may hold SEP
VIEW_FIELDS = ("cursor_y", "pane_height", "pane_width", "cursor_x", "alternate_on",
               "scroll_region_upper", "scroll_region_lower", "@agentstate_report", "pane_title")
CLIENT_FIELDS = ("client_name", "client_tty", "client_control_mode", "pane_id", "session_name")
CLIENT_FORMAT = "C" + SEP + SEP.join(f"#{{{f}}}" for f in CLIENT_FIELDS)  # "C": not a pane row


# what a tmux client says when there is no server: none was running, its socket is gone, or
# it ended while the client was connected (a kill-server racing our command)
_SERVER_GONE = ("no server running", "error connecting", "No such file", "server exited",
                "lost server")


class TmuxError(RuntimeError):
    pass


class ServerGone(TmuxError):
    """The tmux server is not running (any more)."""


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


@dataclass(frozen=True)
class ClientInfo:
    name: str
    tty: str
    control: bool
    pane_id: str
    session: str


def _views(lines: list[str], screens: dict[str, str]) -> dict[str, PaneView]:
    """PaneViews from a `list-panes` of VIEW_FIELDS and the captures of the same moment."""
    out = {}
    for line in lines:
        m = line.split(SEP, len(VIEW_FIELDS))
        if m[0] not in screens:
            continue
        try:
            top, bottom = int(m[6] or 0), int(m[7] or -1)
            out[m[0]] = PaneView(screens[m[0]], int(m[1] or 0), int(m[2]), int(m[3]), m[9], m[8],
                                 int(m[4] or 0), m[5] == "1", top, bottom)
        except (IndexError, ValueError):
            continue
    return out


def _client_row(line: str) -> "ClientInfo | None":
    parts = line.split(SEP)
    if parts[0] != "C" or len(parts) != len(CLIENT_FIELDS) + 1:
        return None
    return ClientInfo(parts[1], parts[2], parts[3] == "1", parts[4], parts[5])


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

    def pipe_to_fifo(self, pane: str, fifo: str) -> None:
        # -O: pane output only. Never -o: it toggles, and would turn an open pipe off.
        self.add("pipe-pane", "-O", "-t", pane, cat_into(fifo))
        self.set_pane(pane, "@agentstate_pipe", fifo)

    def close_pipe(self, pane: str) -> None:
        self.add("pipe-pane", "-t", pane)
        self.set_pane(pane, "@agentstate_pipe", None)

    def __bool__(self) -> bool:
        return bool(self.commands)


class Tmux:
    """One tmux server, addressed by -L name, -S path, or the $TMUX of the caller."""

    RETRY = 30.0  # seconds between tries to start a control client that failed at once

    def __init__(self, socket_name: str | None = None, socket_path: str | None = None):
        if not socket_name and not socket_path:
            env = os.environ.get("TMUX", "")
            if env:
                socket_path = env.split(",")[0]
        self.server = libtmux.Server(socket_name=socket_name, socket_path=socket_path)
        self.socket_name, self.socket_path = socket_name, socket_path
        self.control: ControlClient | None = None
        self._control_ok, self._control_retry_at = False, 0.0
        self.commands_sent = 0  # each one is a line in the user's show-messages log

    def use_control(self) -> None:
        """Run commands through one persistent control-mode client from now on (see
        `ControlClient`); until it connects, and whenever it cannot, one process per call."""
        argv = ["tmux", *(["-L", self.socket_name] if self.socket_name else []),
                *(["-S", self.socket_path] if self.socket_path else [])]
        self.control = ControlClient(argv)

    def close(self) -> None:
        if self.control is not None:
            self.control.close()

    @property
    def label(self) -> str:
        if self.socket_path:
            return self.socket_path
        return f"-L {self.socket_name}" if self.socket_name else "default"

    def run(self, *commands: list[str]) -> list[str]:
        """Run commands in one tmux process; stdout lines. Raises TmuxError/ServerGone."""
        if not commands:
            return []
        if self.control is not None:
            outs = self._run_control(commands)
            if outs is not None:
                return [line for out in outs if out for line in out.split("\n")]
        return self._spawn(*commands)

    def _spawn(self, *commands: list[str]) -> list[str]:
        """Run commands in a tmux process of their own."""
        self.commands_sent += len(commands)
        args: list[str] = []
        for cmd in commands:
            if args:
                args.append(";")
            args.extend(cmd)
        try:
            res = self.server.cmd(*args)
        except libtmux.exc.LibTmuxException as e:
            raise TmuxError(str(e)) from None
        if res.returncode != 0:
            msg = " ".join(res.stderr) or f"tmux exited {res.returncode}"
            if any(gone in msg for gone in _SERVER_GONE):
                raise ServerGone(msg)
            raise TmuxError(msg)
        return res.stdout

    def _run_control(self, commands) -> list[str] | None:
        """Each command's output, through the control client. None: not possible now (not
        connected and cannot connect, a newline in an argument): run the usual way."""
        c = self.control
        if not c.connected:
            if time.monotonic() < self._control_retry_at:
                return None
            sessions = self._spawn(["list-sessions", "-F", "#{session_id}"])
            if not sessions:
                return None
            c.connect(sessions[0])
        self.commands_sent += len(commands)
        try:
            answers = c.run([list(cmd) for cmd in commands])
        except ValueError:
            return None
        except ConnectionError:
            c.close()
            # its session was killed (we attach to another at the next call), or control mode
            # does not work here: then not more than one try every RETRY seconds
            self._control_retry_at = time.monotonic() + (0 if self._control_ok else self.RETRY)
            self._control_ok = False
            return None
        self._control_ok = True
        for ok, out in answers:
            if not ok:
                raise TmuxError(out.replace("\n", " ") or "tmux command failed")
        return [out for _, out in answers]

    def apply(self, batch: Batch) -> None:
        if batch:
            self.run(*batch.commands)

    def clients(self) -> list[ClientInfo]:
        """The clients alone (to tell them something): one list-clients, no list-panes."""
        return [c for c in map(_client_row, self.run(["list-clients", "-F", CLIENT_FORMAT])) if c]

    @property
    def control_session(self) -> str | None:
        """The session our control client is attached to (it counts in #{session_attached})."""
        c = self.control
        return c.session if c is not None and c.connected else None

    def server_pid(self) -> int:
        out = self.run(["display-message", "-p", "#{pid}"])
        return int(out[0]) if out and out[0].isdigit() else 0

    def socket(self) -> str:
        return self.run(["display-message", "-p", "#{socket_path}"])[0]

    def panes_and_clients(self) -> tuple[list[PaneInfo], list[ClientInfo]]:
        """All panes and clients in one round trip (see `listing` to capture screens too)."""
        panes, clients, _ = self.listing()
        return panes, clients

    def listing(self, capture: list[str] = (), with_clients: bool = True
                ) -> tuple[list[PaneInfo], list[ClientInfo], dict[str, str]]:
        """All panes, all clients (unless not wanted: a command less), and the plain text
        screens (`capture-pane -p`, as tmux itself renders them) of the `capture` panes: one
        round trip."""
        pfmt = SEP.join(f"#{{{f}}}" for f in PANE_FIELDS)
        cmds = [["list-panes", "-a", "-F", pfmt]]
        if with_clients:
            cmds.append(["list-clients", "-F", CLIENT_FORMAT])
        try:
            lines, screens = self._run_with_captures(cmds, capture, escapes=False)
        except ServerGone:
            raise
        except TmuxError:
            if not capture:
                raise
            # a captured pane vanished since the last listing: list now, capture next time
            return (*self.listing((), with_clients)[:2], {})
        panes, clients = [], []
        for line in lines:
            parts = line.split(SEP)
            client = _client_row(line)
            if client is not None:
                clients.append(client)
            elif len(parts) >= len(PANE_FIELDS):
                p = parts[: len(PANE_FIELDS) - 1] + [SEP.join(parts[len(PANE_FIELDS) - 1:])]
                try:
                    panes.append(PaneInfo(p[0], int(p[1]), p[2], p[3], p[4], p[5], p[6], int(p[7]),
                                          int(p[8]), p[9] == "1", p[10] == "1", p[11] == "1",
                                          int(p[12] or 0), int(p[13] or 0), p[14] == "1",
                                          p[15] == "1", int(p[16] or 0), p[17], p[18], p[19],
                                          p[20] != "", p[21], p[22]))
                except ValueError:
                    continue
        return panes, clients, screens

    def _run_with_captures(self, cmds: list[list[str]], pane_ids, escapes: bool):
        """Run `cmds`, then capture each pane, in one round trip: (lines of `cmds`, {pane:
        screen}). The control client answers command by command; a tmux process prints one
        stream, so there each capture is preceded by a marker line."""
        cmds, pane_ids = list(cmds), list(pane_ids)
        flag = ["-e"] if escapes else []
        if self.control is not None:
            outs = self._run_control(cmds + [["capture-pane", "-p", *flag, "-t", p] for p in pane_ids])
            if outs is not None:
                lines = [line for out in outs[:len(cmds)] if out for line in out.split("\n")]
                return lines, dict(zip(pane_ids, outs[len(cmds):]))
        for i, pid in enumerate(pane_ids):
            # the marker carries an index, not the pane id: display-message runs its text
            # through strftime, where "%3" becomes " %3" (a field width)
            cmds.append(["display-message", "-p", "-t", pid, f"{_MARKER}{i}"])
            cmds.append(["capture-pane", "-p", *flag, "-t", pid])
        lines, screens, current = [], {}, None
        for line in self.run(*cmds):
            if line.startswith(_MARKER):
                i = line[len(_MARKER):]
                pid = pane_ids[int(i)] if i.isdigit() and int(i) < len(pane_ids) else i
                current = screens.setdefault(pid, [])
            elif current is not None:
                current.append(line)
            else:
                lines.append(line)
        return lines, {k: "\n".join(v) for k, v in screens.items()}

    def capture(self, pane_ids: list[str], escapes: bool = True) -> dict[str, str]:
        """Visible screens (`capture-pane -p`, with `-e` escapes by default), one call."""
        return self._captures(pane_ids, escapes)[1]

    def capture_views(self, pane_ids: list[str], escapes: bool = False,
                      before: dict[str, list[list[str]]] | None = None) -> dict[str, PaneView]:
        """Screens as tmux renders them, each with its cursor, title, size and modes as of the
        same moment: one round trip. A pane that is gone is left out. The sizes come from one
        `list-panes` ahead of the captures (tmux runs a line's commands without reading any
        pane in between), not a `display-message` per pane: half the commands.
        `before` {pane: commands}: run in the same moment, ahead of the captures: a
        `pipe-pane` there gets exactly the bytes that come after its capture (a seeded screen
        goes on from there: no byte parsed twice, none missed)."""
        before = before or {}
        fmt = SEP.join(f"#{{{f}}}" for f in ("pane_id",) + VIEW_FIELDS)

        def commands(ids):
            return [c for p in ids for c in before.get(p, ())] + [["list-panes", "-a", "-F", fmt]]

        try:
            return _views(*self._run_with_captures(commands(pane_ids), pane_ids, escapes))
        except ServerGone:
            raise
        except TmuxError:  # a pane vanished between list and capture: one by one
            out = {}
            for pid in pane_ids:
                try:
                    out.update(_views(*self._run_with_captures(commands([pid]), [pid], escapes)))
                except ServerGone:
                    raise
                except TmuxError:
                    continue
            return out

    def _captures(self, pane_ids: list[str], escapes: bool,
                  cmds: list[list[str]] = ()) -> tuple[list[str], dict[str, str]]:
        """(lines of `cmds`, {pane: screen}) in one round trip."""
        if not pane_ids:
            return [], {}
        try:
            lines, screens = self._run_with_captures(cmds, pane_ids, escapes)
        except ServerGone:
            raise
        except TmuxError:  # a pane vanished between list and capture: capture one by one
            lines, screens = self.run(*cmds), {}
            for pid in pane_ids:
                try:
                    screens.update(self._run_with_captures([], [pid], escapes)[1])
                except TmuxError:
                    continue
        return lines, screens

    def capture_one(self, pane_id: str, escapes: bool = True) -> dict[str, str]:
        return {pane_id: "\n".join(self.run(["capture-pane", "-p", *(["-e"] if escapes else []),
                                               "-t", pane_id]))}

    def global_options(self, prefix: str = "@agentstate") -> dict[str, str]:
        """User options (`@agentstate-*`) as set in tmux.conf."""
        out = {}
        for line in self.run(["show-options", "-g"]):
            if line.startswith(prefix):
                name, _, value = line.partition(" ")
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                    value = value[1:-1]
                out[name] = value
        return out

    def agent_panes(self) -> list[dict]:
        """Panes that carry a state, with what `list` and the popup show."""
        fields = ("pane_id", "session_name", "window_index", "pane_index", "@agentstate",
                  "@agentstate_agent", "@agentstate_since", "@agentstate_source", "window_name",
                  "@agentstate_detail")
        fmt = SEP.join(f"#{{{f}}}" for f in fields)
        rows = []
        for line in self.run(["list-panes", "-a", "-F", fmt]):
            p = line.split(SEP)
            if len(p) < len(fields) or not p[4]:
                continue
            rows.append({"pane": p[0], "target": f"{p[1]}:{p[2]}.{p[3]}", "session": p[1],
                         "window": p[2], "state": p[4], "agent": p[5],
                         "since": int(p[6]) if p[6].isdigit() else None, "source": p[7],
                         "window_name": p[8],
                         # stored with '#' doubled for status lines; give the text back
                         "detail": SEP.join(p[9:]).replace("##", "#")})
        return rows

    def unset_everywhere(self, pane: tuple[str, ...] = (), window: tuple[str, ...] = (),
                         globals_: tuple[str, ...] = ()) -> None:
        """Unset these options on every pane, every window and globally, in one round trip."""
        batch = Batch()
        for line in self.run(["list-panes", "-a", "-F", "#{pane_id} #{window_id}"]):
            pane_id, _, window_id = line.partition(" ")
            for name in pane:
                batch.set_pane(pane_id, name, None)
            for name in window:
                batch.set_window(window_id, name, None)
        for name in globals_:
            batch.set_global(name, None)
        self.apply(batch)

    def resolve_pane(self, target: str) -> PaneInfo:
        """The one pane a user named, strictly: `%N` must exist; `session:window.pane` (window
        by index or by a name no other window of the session has) must name exactly one pane;
        `session:window` only a window with a single pane. Never tmux's own target lookup,
        which falls back to the current pane: typing must reach only the pane named."""
        fields = ("pane_id", "session_name", "window_index", "window_name", "pane_index", "window_id")
        rows = [line.split(SEP) for line in
                self.run(["list-panes", "-a", "-F", SEP.join(f"#{{{f}}}" for f in fields)])]
        rows = [r for r in rows if len(r) == len(fields)]
        if re.fullmatch(r"%\d+", target):
            hits = [r for r in rows if r[0] == target]
        else:
            m = re.fullmatch(r"([^:]+):([^:]+?)(?:\.(\d+))?", target)
            if not m:
                raise TmuxError(f"{target!r} is not a pane: name it as %N or session:window.pane")
            session, window, pane = m.groups()
            in_session = [r for r in rows if r[1] == session]
            if not in_session:
                raise TmuxError(f"no session {session!r}")
            by_index = [r for r in in_session if r[2] == window]
            by_name = [r for r in in_session if r[3] == window]
            if not by_index and len({r[5] for r in by_name}) > 1:
                raise TmuxError(f"{target!r} is ambiguous: {len({r[5] for r in by_name})} windows "
                                f"of {session!r} are named {window!r}; use the window's index")
            in_window = by_index or by_name
            if not in_window:
                raise TmuxError(f"no window {window!r} in session {session!r}")
            hits = [r for r in in_window if r[4] == pane] if pane is not None else in_window
            if pane is None and len(hits) > 1:
                raise TmuxError(f"{target!r} is a window of {len(hits)} panes: name one, e.g. "
                                f"{session}:{window}.{hits[0][4]}")
        # a grouped session lists the same pane again under each session: one pane still
        hits = list({r[0]: r for r in hits}.values())
        if len(hits) != 1:
            raise TmuxError(f"no pane {target!r}")
        info = next((p for p in self.listing(with_clients=False)[0] if p.pane_id == hits[0][0]), None)
        if info is None:
            raise TmuxError(f"no pane {target!r} (it just went away)")
        return info

    def jump_to(self, pane_id: str, client: str | None = None) -> None:
        """Show a pane in the client: its session, its window, the pane itself."""
        self.run(["select-window", "-t", pane_id], ["select-pane", "-t", pane_id])
        try:  # the popup's own client; none when run outside a client (tests, scripts)
            self.run(["switch-client", *(["-c", client] if client else []), "-t", pane_id])
        except TmuxError:
            if client:
                raise

    def send_text(self, pane_id: str, text: str, enter: bool = True) -> None:
        """Type text literally (`-l`: no key names, no format), then Enter."""
        cmds = [["send-keys", "-t", pane_id, "-l", "--", text]]
        if enter:
            cmds.append(["send-keys", "-t", pane_id, "Enter"])
        self.run(*cmds)

    def pane_ids(self) -> set[str]:
        return set(self.run(["list-panes", "-a", "-F", "#{pane_id}"]))

    def pipe_pane(self, pane_id: str, shell_command: str | None) -> None:
        """Send the pane's output to a shell command (`pipe-pane -O`), or close its pipe."""
        self.run(["pipe-pane", "-t", pane_id, *(["-O", shell_command] if shell_command else [])])

    def send_keys(self, pane_id: str, keys: list[str]) -> None:
        """Press tmux key names (a manifest's [answers], e.g. "Escape", "1")."""
        self.run(["send-keys", "-t", pane_id, *keys])
