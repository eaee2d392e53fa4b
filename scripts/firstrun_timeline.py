#!/usr/bin/env python3
"""A TPM first run, second by second: what a user sees while plugin.tmux builds its venv.

    .venv/bin/python scripts/firstrun_timeline.py [--client] [--shots docs/]

A private tmux server with `status-right '#{agentstate} %H:%M'`, the plugin's venv pointed at
an empty folder (as after `prefix + I`), then `run-shell plugin.tmux`. Each second: the status
segment, @agentstate_install, whether any pane shows an error (a run-shell view or a
"returned 127"), whether the sidecar runs. With --client a real client is attached (inside a
pane of a second server) and, with --shots, its status line is saved as PNG while installing
and once ready (needs pillow, like scripts/screenshot.py).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", action="store_true", help="attach a real client first")
    ap.add_argument("--shots", help="folder for firstrun-installing.png / firstrun-ready.png")
    ap.add_argument("--limit", type=float, default=240)
    args = ap.parse_args()
    name = f"agentstate-first-{os.getpid()}"
    tmp = Path(tempfile.mkdtemp())
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp))
    env.pop("TMUX", None)

    def tmux(*a, server=name):
        return subprocess.run(["tmux", "-L", server, *a], capture_output=True, text=True,
                              env=env).stdout.strip()

    def sidecar_runs() -> bool:
        return subprocess.run([sys.executable, "-m", "tmux_agentstate", "status", "-L", name],
                              capture_output=True, env=env, cwd=ROOT).returncode == 0

    def errors_in_panes() -> int:
        bad = 0
        for line in tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_in_mode}").splitlines():
            pane, mode = line.split()
            text = tmux("capture-pane", "-p", "-t", pane)
            bad += mode != "0" or "returned" in text or "not found" in text
        return bad

    tmux("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "120", "-y", "30")
    tmux("set-environment", "-g", "XDG_RUNTIME_DIR", str(tmp))
    tmux("set-option", "-g", "status-right", "#{agentstate} %H:%M")
    tmux("set-option", "-g", "@agentstate-venv", str(tmp / "venv"))
    outer = f"{name}-outer"
    if args.client:
        tmux("-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30",
             f"env TERM=xterm-256color tmux -L {name} attach -t main", server=outer)
        tmux("set", "-g", "status", "off", server=outer)
        time.sleep(1)
    shots = Path(args.shots) if args.shots and args.client else None
    if shots:
        sys.path.insert(0, str(ROOT / "scripts"))
        from screenshot import ROWS, render  # noqa: E402
    t0 = time.monotonic()
    tmux("run-shell", str(ROOT / "plugin.tmux"))
    print(f"plugin.tmux returned after {time.monotonic() - t0:.2f} s ({'a client attached' if args.client else 'no client attached'})")
    shot_installing = False
    try:
        while time.monotonic() - t0 < args.limit:
            summary = tmux("show-options", "-gqv", "@agentstate_summary")
            install = tmux("show-options", "-gqv", "@agentstate_install")
            runs = sidecar_runs()
            print(f"{time.monotonic() - t0:5.1f} s  segment {summary!r:60}  install {install or '-':<11}"
                  f"  pane errors {errors_in_panes()}  sidecar {'running' if runs else '-'}")
            if shots and not shot_installing:
                # the status segment, once the first message no longer covers it
                row = tmux("capture-pane", "-p", server=outer).rstrip("\n").split("\n")[-1]
                if "agentstate: installing" in row and "tmux-agentstate:" not in row:
                    render(tmux("capture-pane", "-p", "-e", server=outer),
                           shots / "firstrun-installing.png", first_row=ROWS - 1)
                    shot_installing = True
            if runs and "installing" not in summary:
                break
            time.sleep(1)
        if args.client:
            tmux("new-window", "-t", "main", f"env AGENTSTATE_AGENT=claude {tmp / 'venv' / 'bin' / 'python'} -m "
                 "tmux_agentstate.demo.fake_agent --autopilot --tasks 100")
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and "tmux-agentstate:" in tmux(
                    "capture-pane", "-p", server=outer).rstrip("\n").split("\n")[-1]:
                time.sleep(0.5)  # the "installed" message shows for 10 s
            time.sleep(2)
            print(f"{time.monotonic() - t0:5.1f} s  an agent started: segment "
                  f"{tmux('show-options', '-gqv', '@agentstate_summary')!r}")
            if shots:
                render(tmux("capture-pane", "-p", "-e", server=outer), shots / "firstrun-ready.png",
                       first_row=ROWS - 1)
    finally:
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "stop", "-L", name], env=env,
                       cwd=ROOT, capture_output=True)
        tmux("kill-server")
        tmux("kill-server", server=outer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
