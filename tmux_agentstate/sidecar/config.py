"""The sidecar's settings, read from the user's `@agentstate-*` tmux options. Pure.

A value the sidecar cannot use is never dropped in silence: `Config.problems` names each
(options.py reads them), and each option name the project does not know; the sidecar says them
once as a message and logs them, `doctor` lists each with its fix.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .desktop import KINDS as NOTIFY_TERMINALS
from .hosts.why import destination_problem
from .notify import NotifyConfig
from .options import OptionReader, unknown_options

# what a window's badge shows, most urgent first: `done` is an idle pane whose turn finished
# while no client showed it (the pane's own @agentstate stays idle: the contract)
URGENCY = {"blocked": 4, "done": 3, "working": 2, "idle": 1}
# Each badge is a pill that brings its own background, so it reads on tmux's default green bar
# and on dark themes alike (a bare fg=green vanished on the default bar). Fixed 256-colour
# indices, not named colours, since themes repaint the 16 named ones (catppuccin's "blue" is
# light, gruvbox's "yellow" is dark); tests/test_visible.py renders them on each bar.
ICONS = {"blocked": "!", "done": "+", "working": "*", "idle": "-"}
STYLES = {"blocked": "fg=colour231,bg=colour160,bold",   # white on red
          "done": "fg=colour231,bg=colour28,bold",       # white on green
          "working": "fg=colour16,bg=colour220",         # black on amber
          "idle": "fg=colour231,bg=colour61"}            # white on slate blue
# remote panes whose host went silent: grey, apart from the states (render_summary)
STALE_STYLE = "fg=colour252,bg=colour240"
INTAKES = ("pipe", "emulate", "capture")


def in_own_style(style: str, text: str) -> str:
    """`text` in `style`, then the style around it back as it was: #[default] alone would reset
    the user's theme (a themed #[fg=…] before our segment) for the rest of their status line.
    push-default makes the style in force here the default (tmux 3.2+), so #[default] returns
    to it; pop-default hands the default back to the status line's."""
    return f"#[push-default]#[{style}]{text}#[default]#[pop-default]"
CHECK_PERIODS = {"off": 0.0, "daily": 86400.0, "weekly": 7 * 86400.0}
INTERVAL_RANGE = (0.1, 10.0)
# tmux's default status-right-length: our word in the status segment (" agentstate: TEXT ")
# must fit it whole, so it is a short form; the whole line goes to a message and to `doctor`
SEGMENT_WIDTH = 40
SEGMENT_TEXT_MAX = SEGMENT_WIDTH - len(" agentstate:  ")
# Every `@agentstate-*` option the project reads, wherever it reads it (here, plugin.tmux,
# plugin/ensure, the key bindings, remote hosts): a name not in this list is a typo, named
# with the closest of these. A new option is added here.
KNOWN_OPTIONS = frozenset({
    "@agentstate-interval", "@agentstate-intake", "@agentstate-capture-interval",
    "@agentstate-notify", "@agentstate-notify-idle", "@agentstate-notify-bell",
    "@agentstate-notify-cooldown", "@agentstate-notify-command", "@agentstate-notify-terminal",
    "@agentstate-manifest-check", "@agentstate-manifest-url",
    "@agentstate-key", "@agentstate-popup-key", "@agentstate-next-key",
    "@agentstate-venv", "@agentstate-python", "@agentstate-default-segment",
    "@agentstate-hosts", "@agentstate-ssh", "@agentstate-remote-command",
    *(f"@agentstate-{kind}-{state}" for kind in ("icon", "style") for state in URGENCY),
})


# the options remote hosts are configured from (read at start and whenever one changes)
REMOTE_OPTIONS = ("@agentstate-hosts", "@agentstate-ssh", "@agentstate-remote-command")


def read_remote(read: OptionReader, defaults: "Config") -> tuple[list, list, list]:
    """@agentstate-hosts (destinations, as ssh takes them), @agentstate-ssh and
    @agentstate-remote-command (command lines), each split like a shell."""
    hosts = read.words("@agentstate-hosts", [], destination_problem,
                       "space-separated ssh destinations")
    ssh = read.words("@agentstate-ssh", defaults.ssh)
    remote = read.words("@agentstate-remote-command", defaults.remote_command)
    return hosts, ssh, remote


def segment_text(text: str) -> str:
    """`text` as our status segment can show it whole: cut to SEGMENT_TEXT_MAX columns."""
    return text if len(text) <= SEGMENT_TEXT_MAX else text[:SEGMENT_TEXT_MAX - 1] + "…"


@dataclass
class Config:
    intake: str = "emulate"        # emulate: parse a pane's bytes (pipe-pane) in our own screen;
                                   # pipe: the bytes say when to read tmux's own rendering of it;
                                   # capture: read every agent pane's rendering each tick.
                                   # emulate by default: each read of tmux's rendering is a
                                   # command, and tmux logs every command in the user's
                                   # show-messages (5 busy agents: pipe ~13 a second, emulate ~1)
    interval: float = 0.7          # the sweep: backstop for everything
    capture_interval: float = 0.3  # capture intake: how often the screens are read
    settle: float = 0.05           # look at a pane this long after its bytes...
    min_gap: float = 0.15          # ...emulate: classify a pane at most once per min_gap
    busy_classify: float = 2.0     # ...emulate: a pane still printing, at the sweep
    read_gap: float = 0.1          # ...pipe: read changed screens at most once per read_gap,
    read_rate: float = 170.0       # or longer while many panes print: at most ~read_rate screens
    read_gap_max: float = 0.3      # a second (a CPU bound), but never longer than read_gap_max
    quiet: float = 0.2             # ...a working pane that goes on printing: read (pipe) or
                                   # classified at the sweep (emulate) once it has been quiet
    busy_read: float = 5.0         # this long (pipe: or its bytes drew a prompt's text), or
    burst_gap: float = 1.0         # after busy_read; bytes after this long a pause: at once
    flood_bytes: int = 1 << 20     # bytes parsed per pane per sweep before it is called a flood
    flood_seconds: float = 0.05    # ...or parsing time per pane per sweep: costly sequences
                                   # (insert mode, line edits) must not lag the other panes
    listing_every: float = 30.0    # list panes from tmux at least this often: a backstop,
                                   # events tell the rest (loop.listing_due)...
    listing_blind: float = 5.0     # ...or this often, without the events' sources (no
                                   # doorbell for hook reports, no control client)
    report_lifetime: float = 30.0
    icons: dict = field(default_factory=lambda: dict(ICONS))
    styles: dict = field(default_factory=lambda: dict(STYLES))
    notify: NotifyConfig = field(default_factory=NotifyConfig)
    manifest_check: float = 0.0    # seconds between manifest update checks; 0: never (default:
                                   # no network unless the user asks)
    manifest_url: str = ""         # where they come from ("": this project's manifests/)
    hosts: list = field(default_factory=list)     # remote hosts: ssh destinations (hosts/)
    ssh: list = field(default_factory=lambda: ["ssh"])                   # the ssh command line
    remote_command: list = field(default_factory=lambda: ["tmux-agentstate"])  # ours, there
    problems: list = field(default_factory=list)  # OptionProblem: what was set but not used

    @classmethod
    def from_tmux(cls, options: dict[str, str], interval: float | None = None) -> "Config":
        c = cls()
        read = OptionReader(options)
        low, high = INTERVAL_RANGE
        c.interval = read.number("@agentstate-interval", c.interval, low, high)
        if interval and math.isfinite(interval):  # the command line's --interval wins
            c.interval = min(max(interval, low), high)
        c.intake = read.choice("@agentstate-intake", c.intake, INTAKES)
        # never slower than the sweep itself
        c.capture_interval = min(read.number("@agentstate-capture-interval", c.capture_interval,
                                             low, high), c.interval)
        for s in URGENCY:
            c.icons[s] = options.get(f"@agentstate-icon-{s}", c.icons[s])
            c.styles[s] = read.style(f"@agentstate-style-{s}", c.styles[s])
        n = c.notify
        n.enabled = read.flag("@agentstate-notify", n.enabled)
        n.on_idle = read.flag("@agentstate-notify-idle", n.on_idle)
        n.bell = read.flag("@agentstate-notify-bell", n.bell)
        n.cooldown = read.number("@agentstate-notify-cooldown", n.cooldown, 0.0, None)
        n.command = read.command("@agentstate-notify-command")
        n.terminal = read.choice("@agentstate-notify-terminal", n.terminal, NOTIFY_TERMINALS)
        c.manifest_check = read.period("@agentstate-manifest-check", CHECK_PERIODS, "hours", "off")
        c.manifest_url = options.get("@agentstate-manifest-url", "")
        c.hosts, c.ssh, c.remote_command = read_remote(read, c)
        c.problems = read.problems + unknown_options(options, KNOWN_OPTIONS)
        return c

    def remote(self) -> tuple[list[str], list[str], list[str]]:
        """What `Hosts.configure` takes: the hosts, the ssh command, our command there."""
        return list(self.hosts), list(self.ssh), list(self.remote_command)

    def badge_format(self) -> str:
        """The window badge: a tmux format over the window option `@agentstate_window`, which
        plugin.tmux puts where the user wrote #{agentstate_window} (as #{E:@agentstate_badge},
        evaluated in each window's context). Built from the user's own icon and style options
        only, never from pane text."""
        def in_conditional(text: str) -> str:  # ',' and '}' end a #{?...} branch
            return text.replace(",", "#,").replace("}", "#}")
        badge = ""
        for state in URGENCY:
            icon = in_conditional(f" {self.icons[state]} ".replace("#", "##"))
            badge += (f"#{{?#{{==:#{{@agentstate_window}},{state}}},"
                      f"{in_own_style(in_conditional(self.styles[state]), icon)},")
        return badge + "}" * len(URGENCY)

    def render_summary(self, counts: dict[str, int], blocked_hosts: int = 0,
                       stale: int = 0) -> str:
        """The status segment: a pill per state with a count (local and remote panes). Built
        from counts and the user's own icon and style options only, never from pane or host
        text, so it may carry style. `blocked_hosts`: on how many hosts (this one counted as
        one) the blocked panes are, 0 when none is remote; said as `@N` in the blocked pill
        (`!3@2`: three blocked, on two hosts); `stale`: remote panes whose host is silent
        or unreachable, a grey `?N` pill of their own (their state is only the last known)."""
        pills = []
        for s in URGENCY:
            if counts.get(s):
                where = f"@{blocked_hosts}" if s == "blocked" and blocked_hosts else ""
                pills.append(in_own_style(self.styles[s],
                                          f" {self.icons[s].replace('#', '##')}{counts[s]}{where} "))
        if stale:
            pills.append(in_own_style(STALE_STYLE, f" ?{stale} "))
        return " ".join(pills)
