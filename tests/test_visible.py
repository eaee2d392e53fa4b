"""The default badges read on tmux's default status bar and on the popular dark themes: a real
client (attached inside a pane of a second tmux server, TERM=xterm-256color) draws the status
line; the cells it drew are parsed with stock pyte (which keeps colours) and each badge's
colours are measured against the bar's (WCAG relative luminance)."""
from pathlib import Path

import pyte

from conftest import OuterClient, wait_for
from tmux_agentstate.sidecar.config import Config
from tmux_agentstate.plugin.wiring import PLACEHOLDERS

ROOT = Path(__file__).resolve().parent.parent
# status-style of each theme's bar, as the theme sets it (tmux's own default first)
BARS = {
    "tmux default": "bg=green,fg=black",
    "catppuccin mocha": "bg=#1e1e2e,fg=#cdd6f4",
    "dracula": "bg=#44475a,fg=#f8f8f2",
    "nord": "bg=#3b4252,fg=#e5e9f0",
    "gruvbox dark": "bg=#3c3836,fg=#ebdbb2",
    "tokyo night": "bg=#1f2335,fg=#c0caf5",
}
# xterm's own palette for the 16 named colours (what a terminal with no theme shows)
XTERM = {"black": "000000", "red": "cd0000", "green": "00cd00", "brown": "cdcd00",
         "yellow": "cdcd00", "blue": "0000ee", "magenta": "cd00cd", "cyan": "00cdcd",
         "white": "e5e5e5"}
READABLE = 4.5      # WCAG AA for text: the icon on its own pill
APART = 1.5         # the pill against the bar


def luminance(hexcolour: str) -> float:
    def channel(c: int) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (int(hexcolour[i:i + 2], 16) for i in (0, 2, 4))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def colour(value: str) -> str:
    return XTERM.get(value, value)


def test_default_badges_stand_out_on_every_bar(tmux_server):
    """Each state as the sidecar publishes it (the badge format and summary from the default
    Config, the window option per window), in the formats plugin.tmux writes."""
    srv = tmux_server
    badge, summary = PLACEHOLDERS["#{agentstate_window}"], PLACEHOLDERS["#{agentstate}"]
    srv.cmd("set-option", "-g", "window-status-format", f"#W{badge}")
    srv.cmd("set-option", "-g", "window-status-current-format", f"#W{badge}")
    srv.cmd("set-option", "-g", "status-right", summary)
    srv.cmd("set-option", "-g", "status-left", "")
    config = Config()
    srv.cmd("set-option", "-g", "@agentstate_badge", config.badge_format())
    srv.cmd("set-option", "-g", "@agentstate_summary",
            config.render_summary({"blocked": 1, "done": 1, "working": 1, "idle": 1}))
    windows = {f"w{s[0]}": s for s in ("blocked", "done", "working", "idle")}
    for name, state in windows.items():
        srv.cmd("new-window", "-d", "-t", "main", "-n", name)
        srv.cmd("set-option", "-w", "-t", f"main:{name}", "@agentstate_window", state)
    srv.cmd("kill-window", "-t", "main:0")
    client = OuterClient(srv, "main", cols=120, rows=10)
    try:
        for theme, bar in BARS.items():
            srv.cmd("set-option", "-g", "status-style", bar)
            bar_bg = colour(bar.split("bg=")[1].split(",")[0].lstrip("#"))

            def status_row():  # the client's last row, as its terminal holds it
                lines = client.screen(escapes=True).rstrip("\n").split("\n")
                screen = pyte.Screen(120, len(lines))
                pyte.Stream(screen).feed("\r\n".join(lines))
                row = screen.buffer[len(lines) - 1]
                return row, "".join(row[x].data for x in range(120))

            wait_for(lambda: colour(status_row()[0][60].bg) == bar_bg,
                     message=f"{theme}: bar colour {bar_bg}, got {status_row()[0][60].bg}")
            cells, text = status_row()
            for name, state in windows.items():
                at = text.index(name) + len(name) + 1  # the icon, inside its pill " ! "
                cell = cells[at]
                fg, bg = colour(cell.fg), colour(cell.bg)
                assert "default" not in (fg, bg), (theme, state, cell)
                assert contrast(fg, bg) >= READABLE, (theme, state, fg, bg)
                assert contrast(bg, bar_bg) >= APART, (theme, state, bg, bar_bg)
            # the summary pills (status-right): one per state, each with its count
            for icon in ("!1", "+1", "*1", "-1"):
                cell = cells[text.rindex(icon)]
                assert contrast(colour(cell.bg), bar_bg) >= APART, (theme, icon)
    finally:
        client.close()
