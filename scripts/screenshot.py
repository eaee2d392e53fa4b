#!/usr/bin/env python3
"""Screenshot of a real tmux client running the demo, with the status segment, the window
badges and the `prefix + A` popup, rendered to PNG (docs/screenshot.png); with `--catppuccin`,
the hand-made catppuccin-style module of docs/configuration.md on a mocha bar instead of the popup
(docs/status-catppuccin.png).

    pip install pillow; apt-get install fonts-dejavu-core   (once; a dev tool, not a dependency)
    .venv/bin/python scripts/screenshot.py [--out docs/screenshot.png]
    .venv/bin/python scripts/screenshot.py --catppuccin --out docs/status-catppuccin.png

A real tmux client runs attached to the demo server inside a pane of a second, outer tmux
server; the outer pane's `capture-pane -e` is exactly what that client drew, colours included.
It is parsed with stock pyte (which keeps colours) and drawn cell by cell.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import pyte
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parent.parent
OUTER = f"agentstate-shot-{os.getpid()}"
ROWS, COLS = 30, 120
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
PALETTE = {"black": (30, 30, 30), "red": (224, 80, 80), "green": (110, 200, 110),
           "brown": (220, 190, 80), "yellow": (230, 200, 80), "blue": (100, 140, 230),
           "magenta": (200, 120, 200), "cyan": (90, 190, 200), "white": (220, 220, 220)}
FG, BG = (220, 220, 220), (24, 24, 28)


# docs/configuration.md's module without the theme, on catppuccin mocha's bar (badges as they are)
CATPPUCCIN = {
    "status-style": "bg=#1e1e2e,fg=#cdd6f4",
    "status-left": "#[fg=#11111b,bg=#89b4fa] demo #[default] ",
    "status-right": "#[fg=#11111b,bg=#fab387] A #[fg=#cdd6f4,bg=#313244] #{@agentstate_summary} "
                    "#[default] %H:%M ",
    "window-status-format": " #I:#W #{E:@agentstate_badge}",
    "window-status-current-format": "#[fg=#11111b,bg=#cba6f7] #I:#W #[default]#{E:@agentstate_badge}",
}


def colour(value: str, default):
    if value == "default":
        return default
    if value in PALETTE:
        return PALETTE[value]
    if value.startswith("bright"):
        return tuple(min(255, c + 30) for c in PALETTE.get(value[6:], default))
    try:
        return tuple(int(value[i:i + 2], 16) for i in (0, 2, 4))
    except ValueError:
        return default


def render(ansi: str, out: Path, first_row: int = 0) -> None:
    screen = pyte.Screen(COLS, ROWS)
    pyte.Stream(screen).feed(ansi.rstrip("\n").replace("\n", "\r\n"))
    font, bold = ImageFont.truetype(FONT, 15), ImageFont.truetype(FONT_BOLD, 15)
    cw, ch = int(font.getlength("M")), 20
    img = Image.new("RGB", (COLS * cw + 16, (ROWS - first_row) * ch + 16), BG)
    draw = ImageDraw.Draw(img)
    for y in range(first_row, ROWS):
        for x in range(COLS):
            cell = screen.buffer[y][x]
            fg, bg = colour(cell.fg, FG), colour(cell.bg, BG)
            if cell.reverse:
                fg, bg = bg, fg
            px, py = 8 + x * cw, 8 + (y - first_row) * ch
            if bg != BG:
                draw.rectangle([px, py, px + cw - 1, py + ch - 1], fill=bg)
            if cell.data.strip():
                draw.text((px, py + 2), cell.data, font=bold if cell.bold else font, fill=fg)
    out.parent.mkdir(parents=True, exist_ok=True)
    img.save(out)


def outer(*args: str) -> str:
    return subprocess.run(["tmux", "-L", OUTER, *args], capture_output=True, text=True).stdout


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshot.png"))
    ap.add_argument("--wait", type=float, default=25, help="seconds to let the fake agents run")
    ap.add_argument("--catppuccin", action="store_true",
                    help="docs/configuration.md's catppuccin-style module on a mocha bar, no popup")
    args = ap.parse_args()
    env = dict(os.environ, AGENTSTATE_DEMO_NO_ATTACH="1")
    env.pop("TMUX", None)
    demo = subprocess.run([str(ROOT / "scripts" / "demo")], env=env, capture_output=True, text=True)
    if demo.returncode:
        sys.exit(f"scripts/demo failed: {demo.stderr.strip()[-500:]}")
    try:
        outer("-f", "/dev/null", "new-session", "-d", "-x", str(COLS), "-y", str(ROWS),
              "env", "-u", "TMUX", "TERM=xterm-256color", "tmux", "-L", "agentstate-demo",
              "attach", "-t", "demo:api")
        outer("set", "-g", "status", "off")
        if args.catppuccin:
            demo_tmux = ["tmux", "-L", "agentstate-demo"]
            for opt, value in CATPPUCCIN.items():
                subprocess.run([*demo_tmux, "set", "-g", opt, value], check=True)
        # wait until some pane is blocked, so the picture shows all three states
        deadline = time.time() + args.wait
        while time.time() < deadline:
            states = subprocess.run(
                [sys.executable, "-m", "tmux_agentstate", "list", "-L", "agentstate-demo"],
                capture_output=True, text=True, cwd=ROOT).stdout
            if "blocked" in states and "working" in states:
                break
            time.sleep(0.5)
        if not args.catppuccin:
            outer("send-keys", "C-b", "A")
            time.sleep(1.5)
            render(outer("capture-pane", "-p", "-e"), Path(args.out))
        else:  # the status line alone, once no notification covers it
            deadline = time.time() + 20
            while "needs you" in outer("capture-pane", "-p") or "finished" in outer("capture-pane", "-p"):
                if time.time() > deadline:
                    break
                time.sleep(0.2)
            render(outer("capture-pane", "-p", "-e"), Path(args.out), first_row=ROWS - 1)
        print(f"wrote {args.out}")
    finally:
        outer("kill-server")
        subprocess.run([str(ROOT / "scripts" / "demo"), "stop"], capture_output=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
