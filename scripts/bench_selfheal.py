#!/usr/bin/env python3
"""Self-healing: `kill -9` of the sidecar, seconds until every pane is right again, with no
user action. tmux's own `client-detached` hook (the dead sidecar's control client leaves)
runs `plugin/ensure --auto`, which starts a new sidecar; that seeds every screen from tmux.

    .venv/bin/python scripts/bench_selfheal.py [--kills 10]

A private server with plugin.tmux loaded and a pane replaying a real blocked Claude Code
capture. Each round: kill -9 the sidecar, overwrite the pane's @agentstate with a wrong
value (what a dead watcher would leave stale), time until it reads `blocked` again. Also the
cost of the mechanism: the wall time of the hook's `start --auto` when a sidecar already runs
(what every client attach or detach costs).
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmux_agentstate.core.fixtures import load_index  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=10)
    args = ap.parse_args()
    name = f"agentstate-heal-{os.getpid()}"
    run = Path(tempfile.mkdtemp())
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)

    def tmux(*a):
        return subprocess.run(["tmux", "-L", name, *a], capture_output=True, text=True,
                              env=env).stdout.strip()

    def cli(*a):
        return subprocess.run([sys.executable, "-m", "tmux_agentstate", *a, "-L", name],
                              capture_output=True, text=True, env=env, cwd=ROOT)

    def pid() -> int:
        out = cli("status").stdout
        return int(out.split("(pid ")[1].split(")")[0]) if "(pid " in out else 0

    fx = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked")
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", str(fx.cols), "-y", str(fx.rows),
         f"env AGENTSTATE_AGENT=claude sh -c 'cat {fx.path}; exec sleep 3600'")
    tmux("set-environment", "-g", "XDG_RUNTIME_DIR", str(run))
    tmux("run-shell", str(ROOT / "plugin.tmux"))
    pane = tmux("display-message", "-p", "-t", "main", "#{pane_id}")
    state = lambda: tmux("display-message", "-p", "-t", pane, "#{@agentstate}")  # noqa: E731
    try:
        deadline = time.monotonic() + 20
        while state() != "blocked" and time.monotonic() < deadline:
            time.sleep(0.05)
        times = []
        for i in range(args.kills):
            old = pid()
            os.kill(old, signal.SIGKILL)
            t0 = time.monotonic()
            tmux("set-option", "-p", "-t", pane, "@agentstate", "idle")
            while state() != "blocked" and time.monotonic() - t0 < 30:
                time.sleep(0.02)
            took = time.monotonic() - t0
            times.append(took)
            print(f"kill {i + 1}: pid {old} → {pid()}, right again after {took:.2f} s")
            time.sleep(13)  # stay under the restart budget (5 in 60 s)
        print(f"median {statistics.median(times):.2f} s, max {max(times):.2f} s over {len(times)} kills")
        walls = []
        for _ in range(10):
            t0 = time.monotonic()
            cli("start", "--auto")
            walls.append(time.monotonic() - t0)
        print(f"hook cost: `start --auto` with a sidecar running: median {statistics.median(walls) * 1000:.0f} ms wall")
    finally:
        cli("stop")
        tmux("kill-server")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
