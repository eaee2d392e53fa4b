#!/usr/bin/env python3
"""Benchmark: the local side's CPU for many remote hosts (10 x 50 agent panes by default),
each host a small stream speaking core/hostproto over a real SSH session on loopback
(tests/sshd.py), its panes changing state at real agents' rate.

    .venv/bin/python scripts/bench_hosts_cost.py [--hosts 10] [--panes 50] [--every 20] [--seconds 60]

`--every`: seconds between two state changes of one pane (a turn; 20 s: 10 x 50 panes make
25 changes a second). Measured: this process's CPU (the `Hosts` links, their threads and the
hosts.json writes: what the local sidecar adds), not ssh's nor the hosts'.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from sshd import Sshd  # noqa: E402
from tmux_agentstate.sidecar.hosts import files  # noqa: E402
from tmux_agentstate.sidecar.hosts.links import Hosts  # noqa: E402

STREAM = r'''
import json, random, select, sys, time
panes, every = int(sys.argv[1]), float(sys.argv[2])
def out(m):
    sys.stdout.write(json.dumps({"v": 1, **m}) + "\n"); sys.stdout.flush()
def row(i, state):
    return {"pane": f"%{i}", "state": state, "agent": "claude", "target": f"main:{i}.0",
            "session": "main", "window": str(i), "source": "screen", "since": int(time.time()),
            "detail": "Do you want to make this edit to README.md?" if state == "blocked" else ""}
states = {i: random.choice(["working", "idle", "blocked"]) for i in range(panes)}
out({"t": "hello", "version": "bench", "heartbeat": 5, "server": "/bench"})
out({"t": "rows", "full": True, "rows": [row(i, s) for i, s in states.items()]})
gap, next_beat = every / panes, time.monotonic() + 5
while True:
    if select.select([sys.stdin], [], [], random.expovariate(1 / gap))[0]:
        line = sys.stdin.readline()
        if not line:
            break
        out({"t": "reply", "id": json.loads(line)["id"], "code": 0, "text": "pong"})
    i = random.randrange(panes)
    states[i] = random.choice([s for s in ("working", "idle", "blocked") if s != states[i]])
    out({"t": "rows", "full": False, "rows": [row(i, states[i])], "gone": []})
    if time.monotonic() > next_beat:
        out({"t": "beat", "note": ""}); next_beat = time.monotonic() + 5
'''


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=10)
    ap.add_argument("--panes", type=int, default=50)
    ap.add_argument("--every", type=float, default=20.0)
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-hosts-cost-"))
    sshd = Sshd(tmp / "sshd")
    script = tmp / "stream.py"
    script.write_text(STREAM)
    run = tmp / "run"
    run.mkdir(mode=0o700)
    names = [sshd.host(f"h{i}") for i in range(args.hosts)]
    hosts = Hosts(run)
    try:
        hosts.configure(names, sshd.ssh.split(), [sys.executable, str(script), str(args.panes),
                                                  str(args.every)])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            linked = files.read_hosts(run)
            if len(linked) == args.hosts and all(h["status"] == "connected" and
                                                 len(h["rows"]) == args.panes for h in linked):
                break
            time.sleep(0.2)
        else:
            raise SystemExit(f"not all linked: {[(h['host'], h['status'], h['why']) for h in files.read_hosts(run)]}")
        writes = []
        start_cpu, start = cpu(), time.monotonic()
        last = None
        while time.monotonic() - start < args.seconds:
            time.sleep(0.5)
            st = os.stat(run / files.HOSTS_FILE).st_mtime
            if st != last:
                writes.append(st)
                last = st
            hosts.take_transitions()  # as the sidecar's sweep does
        used, wall = cpu() - start_cpu, time.monotonic() - start
        rate = args.hosts * args.panes / args.every
        print(f"{args.hosts} hosts x {args.panes} panes, {rate:.0f} state changes/s: "
              f"{100 * used / wall:.2f} % of a core over {wall:.0f} s "
              f"(hosts.json {os.path.getsize(run / files.HOSTS_FILE) >> 10} KB)")
    finally:
        hosts.stop()
        sshd.stop()


if __name__ == "__main__":
    main()
