#!/usr/bin/env python3
"""Benchmark: an agent's own `OSC 7501` report → `@agentstate`, through a real tmux server and
a real sidecar, for each byte intake (emulate, pipe).

    .venv/bin/python scripts/bench_osc_latency.py [--reports 50] [--interval 0.7]

A stand-in agent (identified by the `AGENTSTATE_AGENT` hint as an identity-only manifest in a
throwaway config folder) prints one report at a time, alternating working / blocked / idle;
the time from its write to the pane option changing is polled every 5 ms with
`display-message` (the poll's own round trip, ~2 ms, is in the figures). Private tmux socket,
everything killed at the end.
"""
from __future__ import annotations

import argparse
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STAND_IN = r'''
import os, sys, time
fifo = sys.argv[1]
os.write(1, b"stand-in agent\r\n")
with open(fifo, "rb", buffering=0) as f:
    while True:
        line = f.readline()
        if not line:
            break
        os.write(1, line.rstrip(b"\n"))
'''
MANIFEST = 'name = "benchagent"\nengine = 4\n\n[identify]\ncommands = ["benchagent"]\n'
# --rules: the reports read by `osc_state` screen rules instead (how Codex's were read before
# issue 27; any release runs it, for a before/after)
RULES = 'name = "benchagent"\n\n[identify]\ncommands = ["benchagent"]\n' + "".join(
    f'\n[[rules]]\nid = "osc-{s}"\nstate = "{s}"\nregion = "osc_state"\nany = [\'^state={s}(:|$)\']\n'
    for s in ("blocked", "working", "idle"))
STATES = ("working", "blocked", "idle")


def tmux(sock: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True).stdout.strip()


def run(intake: str, reports: int, interval: float, tmp: Path) -> list[float]:
    sock = f"bench-osc-{os.getpid()}-{intake}"
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp / "cfg"), XDG_RUNTIME_DIR=str(tmp / "run"))
    env.pop("TMUX", None)
    fifo = tmp / f"fifo-{intake}"
    os.mkfifo(fifo)
    script = tmp / "stand_in.py"
    script.write_text(STAND_IN)
    tmux(sock, "-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "120", "-y", "32",
         f"env AGENTSTATE_AGENT=benchagent {shlex.quote(sys.executable)} {script} {fifo}")
    pane = tmux(sock, "display-message", "-p", "-t", "main", "#{pane_id}")
    writer = open(fifo, "wb", buffering=0)
    sidecar = subprocess.Popen([sys.executable, "-m", "tmux_agentstate", "watch", "-L", sock,
                                "--interval", str(interval), "--intake", intake], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    out = []
    try:
        deadline = time.monotonic() + 20
        while tmux(sock, "display-message", "-p", "-t", pane, "#{@agentstate}") != "idle":
            if time.monotonic() > deadline:
                sys.exit(f"{intake}: the sidecar never adopted the stand-in")
            time.sleep(0.05)
        for i in range(reports):
            state = STATES[i % len(STATES)]
            time.sleep(0.3)  # apart, as an agent's transitions are
            t0 = time.monotonic()
            writer.write(f"\x1b]7501;state={state}:app=benchagent\x07\n".encode())
            while tmux(sock, "display-message", "-p", "-t", pane, "#{@agentstate}") != state:
                if time.monotonic() - t0 > 15:
                    sys.exit(f"{intake}: report {i} ({state}) never reached @agentstate")
                time.sleep(0.005)
            out.append(time.monotonic() - t0)
    finally:
        writer.close()
        os.killpg(sidecar.pid, signal.SIGTERM)
        sidecar.wait(10)
        tmux(sock, "kill-server")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", type=int, default=50)
    ap.add_argument("--interval", type=float, default=0.7, help="the sidecar's sweep interval")
    ap.add_argument("--rules", action="store_true", help="read the reports by osc_state rules")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-osc-") as d:
        tmp = Path(d)
        (tmp / "cfg" / "tmux-agentstate" / "manifests").mkdir(parents=True)
        (tmp / "cfg" / "tmux-agentstate" / "manifests" / "benchagent.toml").write_text(RULES if args.rules else MANIFEST)
        (tmp / "run").mkdir(mode=0o700)
        for intake in ("emulate", "pipe"):
            t = sorted(run(intake, args.reports, args.interval, tmp))
            print(f"{intake:8s} OSC 7501 → @agentstate over {len(t)} reports: "
                  f"median {statistics.median(t) * 1000:.0f} ms, p90 {t[int(len(t) * 0.9)] * 1000:.0f} ms, "
                  f"max {t[-1] * 1000:.0f} ms (sweep every {args.interval:g} s)")


if __name__ == "__main__":
    main()
