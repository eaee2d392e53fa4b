"""The sidecar's settings, read from the user's `@agentstate-*` tmux options. Pure."""
from __future__ import annotations

from dataclasses import dataclass, field

from .notify import NotifyConfig

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
INTAKES = ("pipe", "emulate", "capture")


def in_own_style(style: str, text: str) -> str:
    """`text` in `style`, then the style around it back as it was: #[default] alone would reset
    the user's theme (a themed #[fg=…] before our segment) for the rest of their status line.
    push-default makes the style in force here the default (tmux 3.2+), so #[default] returns
    to it; pop-default hands the default back to the status line's."""
    return f"#[push-default]#[{style}]{text}#[default]#[pop-default]"
CHECK_PERIODS = {"off": 0.0, "daily": 86400.0, "weekly": 7 * 86400.0}


def manifest_check_seconds(value: str) -> float:
    """`@agentstate-manifest-check`: off (default), daily, weekly, or a number of hours (at
    least 1); anything else is off."""
    value = value.strip().lower()
    if value in CHECK_PERIODS:
        return CHECK_PERIODS[value]
    try:
        hours = float(value)
    except ValueError:
        return 0.0
    return max(hours, 1.0) * 3600.0 if hours > 0 else 0.0


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
    read_gap: float = 0.1          # ...pipe: read changed screens at most once per read_gap,
    read_rate: float = 170.0       # or longer while many panes print: at most ~read_rate screens
    read_gap_max: float = 0.3      # a second (a CPU bound), but never longer than read_gap_max
    flood_bytes: int = 1 << 20     # bytes parsed per pane per sweep before it is called a flood
    flood_seconds: float = 0.05    # ...or parsing time per pane per sweep: costly sequences
                                   # (insert mode, line edits) must not lag the other panes
    listing_every: float = 5.0     # list panes from tmux at least this often (Sidecar.sweep)
    report_lifetime: float = 30.0
    icons: dict = field(default_factory=lambda: dict(ICONS))
    styles: dict = field(default_factory=lambda: dict(STYLES))
    notify: NotifyConfig = field(default_factory=NotifyConfig)
    manifest_check: float = 0.0    # seconds between manifest update checks; 0: never (default:
                                   # no network unless the user asks)
    manifest_url: str = ""         # where they come from ("": this project's manifests/)

    @classmethod
    def from_tmux(cls, options: dict[str, str], interval: float | None = None) -> "Config":
        c = cls()
        try:
            c.interval = float(options.get("@agentstate-interval", c.interval))
        except ValueError:
            pass
        if interval:
            c.interval = interval
        c.interval = min(max(c.interval, 0.1), 10.0)
        intake = options.get("@agentstate-intake", c.intake)
        c.intake = intake if intake in INTAKES else c.intake
        try:
            c.capture_interval = min(max(float(options.get("@agentstate-capture-interval",
                                                           c.capture_interval)), 0.1), c.interval)
        except ValueError:
            pass
        for s in URGENCY:
            c.icons[s] = options.get(f"@agentstate-icon-{s}", c.icons[s])
            c.styles[s] = options.get(f"@agentstate-style-{s}", c.styles[s])
        c.notify = NotifyConfig.from_options(options)
        c.manifest_check = manifest_check_seconds(options.get("@agentstate-manifest-check", "off"))
        c.manifest_url = options.get("@agentstate-manifest-url", "")
        return c

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

    def render_summary(self, counts: dict[str, int]) -> str:
        """The status segment: a pill per state with a count. Built from counts and the user's
        own icon and style options only, never from pane text, so it may carry style."""
        return " ".join(in_own_style(self.styles[s], f" {self.icons[s].replace('#', '##')}{counts[s]} ")
                        for s in URGENCY if counts.get(s))
