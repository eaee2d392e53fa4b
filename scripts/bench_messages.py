#!/usr/bin/env python3
"""How much of the user's `show-messages` log the sidecar takes. tmux keeps every command any
client runs in that log (message-limit lines, 1000 by default), the sidecar's control-mode
client included: the more commands we send, the sooner a message the user displayed is gone.

    .venv/bin/python scripts/bench_messages.py [--minutes 10] [--agents 5] [--intake pipe]

A private tmux server, a real client attached (from inside a pane of a second server), a
message displayed to it, then the sidecar with N fake agents on autopilot (they work, ask and
answer every few seconds: busier than real agents). At the end: whether the user's message is
still in `show-messages`, and the sidecar's commands by kind, per second.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "USER-MESSAGE-FROM-THE-START"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--agents", type=int, default=5)
    ap.add_argument("--intake", default="pipe", choices=("pipe", "emulate", "capture"))
    ap.add_argument("--speed", type=float, default=1.0,
                    help="the fake agents' pace (1: a dialog or a task every few seconds; "
                         "0.25: four times slower, closer to real agents)")
    args = ap.parse_args()
    name = f"agentstate-msgs-{os.getpid()}"
    run = Path(tempfile.mkdtemp())
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)

    def tmux(*a, server=name):
        return subprocess.run(["tmux", "-L", server, *a], capture_output=True, text=True,
                              env=env).stdout.strip()

    tmux("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "120", "-y", "32")
    limit = tmux("show-options", "-gv", "message-limit")
    for i in range(args.agents):
        tmux("new-window", "-d", f"env AGENTSTATE_AGENT=claude {sys.executable} -m "
             f"tmux_agentstate.demo.fake_agent --autopilot --seed {i + 1} --tasks 100000 "
             f"--speed {args.speed}")
    outer = f"{name}-outer"
    tmux("-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "32",
         f"tmux -L {name} attach -t main", server=outer)
    try:
        client = ""
        while not client:
            time.sleep(0.2)
            client = tmux("list-clients", "-F", "#{client_name}")
        tmux("display-message", "-c", client, MARK)
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "start", "-L", name,
                        "--intake", args.intake], env=env, cwd=ROOT, check=True,
                       capture_output=True)
        time.sleep(args.minutes * 60)
        status = next(run.glob("tmux-agentstate/*/status.json"))
        sent = json.loads(status.read_text())["tmux_commands"]
        log = tmux("show-messages", "-t", client).splitlines()
        ours = [line for line in log if re.search(r"client-\d+ command: ", line)]
        if os.environ.get("BENCH_DUMP"):
            Path(os.environ["BENCH_DUMP"]).write_text("\n".join(ours))
        kinds = collections.Counter(line.split(" command: ")[1].split()[0] for line in ours)
        kept = any(MARK in line for line in log)
        secs = args.minutes * 60
        print(f"intake {args.intake}, {args.agents} agents at speed {args.speed:g}, "
              f"{args.minutes:g} min, message-limit "
              f"{limit}: the user's message is {'still there' if kept else 'GONE'}; the "
              f"sidecar sent {sent} commands ({sent / secs:.2f}/s: the log's {limit} lines last "
              f"{int(limit) / max(sent / secs, 1e-9) / 60:.0f} min); of the last {len(ours)} in "
              "the log:")
        for kind, n in kinds.most_common():
            print(f"  {kind:<16} {n:6d}")
    finally:
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "stop", "-L", name], env=env,
                       cwd=ROOT, capture_output=True)
        tmux("kill-server")
        tmux("kill-server", server=outer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
