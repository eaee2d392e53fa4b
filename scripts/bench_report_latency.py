#!/usr/bin/env python3
"""Hook report → `@agentstate`: how long from the hook's start to the state changing (issue 27).

    .venv/bin/python scripts/bench_report_latency.py [--reports 50] [--checkout DIR]

A private tmux server; in it a stand-in for Claude Code (a script named `claude` on PATH that
draws a captured idle Claude screen), started through the real `tmux-agentstate launch claude`,
so its hooks are the real hook commands launch writes into its `--settings`; it runs them as
Claude does (`sh -c COMMAND`, the JSON payload on stdin) when asked, and notes the moment it
starts each one. A real sidecar watches the server with its defaults (the emulate intake,
`interval` 0.7 s, a pane listing every 5 s). The reports alternate PermissionRequest (blocked)
and Stop (idle), each a state change the screen does not show, a random pause (0.3–1.3 s)
between them so they fall anywhere in the sidecar's sweeps. `@agentstate` is polled every 5 ms
through a control client of our own. Also said: the hook's own run time (what the agent waits
for), from the stand-in's start of `sh -c` to its end.

`--checkout DIR`: run the sidecar, `launch` and the hook from another checkout of the project
(PYTHONPATH), e.g. the commit before the doorbell, for the "before" figure:

    git worktree add /tmp/agentstate-before 6abec7c
    .venv/bin/python scripts/bench_report_latency.py --checkout /tmp/agentstate-before
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

STANDIN = r'''#!PYTHON
"""Stand-in for Claude Code (scripts/bench_report_latency.py)."""
import json, os, subprocess, sys, time
args = sys.argv[1:]
settings = json.loads(args[args.index("--settings") + 1]) if "--settings" in args else {}
subprocess.run(["stty", "-echo"])
time.sleep(0.3)
sys.stdout.buffer.write(open(os.environ["STANDIN_SCREEN"], "rb").read())
sys.stdout.flush()
inbox = os.environ["STANDIN_INBOX"]
while True:
    for name in sorted(n for n in os.listdir(inbox) if n.endswith(".json")):
        event = json.load(open(os.path.join(inbox, name)))["hook"]
        start = time.time()
        for entry in settings.get("hooks", {}).get(event, []):
            for h in entry["hooks"]:
                subprocess.run(["sh", "-c", h["command"]], text=True,
                               input=json.dumps({"hook_event_name": event, "tool_name": "Bash"}))
        end = time.time()
        with open(os.path.join(inbox, name[:-5] + ".times"), "w") as f:
            f.write(f"{start!r} {end!r}")
        os.rename(os.path.join(inbox, name[:-5] + ".times"), os.path.join(inbox, name[:-5] + ".start"))
        os.rename(os.path.join(inbox, name), os.path.join(inbox, name[:-5] + ".done"))
    time.sleep(0.005)
'''


def run(reports: int, checkout: str | None) -> tuple[list[float], list[float]]:
    """(hook start → @agentstate, the hook's own run time) of each report, in seconds."""
    from conftest import TmuxServer, wait_for
    from test_signals import IDLE
    from tmux_agentstate.tmux.control import ControlClient

    work = Path(tempfile.mkdtemp(prefix="agentstate-bench-latency-"))
    bin_dir, inbox = work / "bin", work / "inbox"
    bin_dir.mkdir()
    inbox.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(STANDIN.replace("PYTHON", sys.executable, 1))
    exe.chmod(0o755)
    path = f"{bin_dir}:{os.path.dirname(sys.executable)}:/usr/bin:/bin"
    pythonpath = f"PYTHONPATH={checkout} " if checkout else ""
    env = {"STANDIN_SCREEN": str(IDLE.path), "STANDIN_INBOX": str(inbox)}
    srv = TmuxServer(f"agentstate-bench-latency-{os.getpid()}")
    sidecar = poll = None
    try:
        # `-m` imports from the working folder first: the code's own
        code = checkout or str(ROOT)
        pane = srv.new_pane(f"sh -c 'cd {code} && exec env PATH={path} {pythonpath}"
                            f"{sys.executable} -m tmux_agentstate launch claude'",
                            rows=IDLE.rows, cols=IDLE.cols, env=env)
        wait_for(lambda: "for shortcuts" in srv.cmd("capture-pane", "-p", "-t", pane),
                 timeout=30, message="the stand-in's idle screen")
        sidecar_env = dict(os.environ, XDG_RUNTIME_DIR=str(work))
        sidecar_env.pop("TMUX", None)
        if checkout:
            sidecar_env["PYTHONPATH"] = checkout
        sidecar = subprocess.Popen([sys.executable, "-m", "tmux_agentstate", "watch", "-L",
                                    srv.name], env=sidecar_env, cwd=code, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for(lambda: srv.state(pane) == "idle", timeout=30, message="idle")
        poll = ControlClient(["tmux", "-L", srv.name])
        poll.connect("main")

        def state() -> str:
            return poll.run([["display-message", "-p", "-t", pane, "#{@agentstate}"]])[0][1]

        latencies, hooks = [], []
        for i in range(reports):
            event, want = (("PermissionRequest", "blocked") if i % 2 == 0 else ("Stop", "idle"))
            time.sleep(random.uniform(0.3, 1.3))
            name = f"{i:03d}"
            (inbox / f"{name}.tmp").write_text(json.dumps({"hook": event}))
            (inbox / f"{name}.tmp").rename(inbox / f"{name}.json")
            deadline = time.monotonic() + 30
            while state() != want:
                if time.monotonic() > deadline:
                    raise SystemExit(f"report {i}: {want} never came")
                time.sleep(0.005)
            seen = time.time()
            wait_for(lambda: (inbox / f"{name}.start").exists(), timeout=10, message="start")
            start, end = map(float, (inbox / f"{name}.start").read_text().split())
            latencies.append(seen - start)
            hooks.append(end - start)
            print(f"  {i + 1:2d} {event:17s} {latencies[-1] * 1000:7.1f} ms  (the hook ran "
                  f"{hooks[-1] * 1000:5.1f} ms)", flush=True)
        return latencies, hooks
    finally:
        if poll is not None:
            poll.close()
        if sidecar is not None:
            sidecar.terminate()
            try:
                sidecar.wait(5)
            except subprocess.TimeoutExpired:
                sidecar.kill()
        srv.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reports", type=int, default=50)
    ap.add_argument("--checkout", help="run the sidecar, launch and hook from this checkout")
    args = ap.parse_args()
    checkout = str(Path(args.checkout).resolve()) if args.checkout else None
    if checkout:
        where = subprocess.run([sys.executable, "-c", "import tmux_agentstate; print(tmux_agentstate.__file__)"],
                               env=dict(os.environ, PYTHONPATH=checkout), capture_output=True, cwd=checkout,
                               text=True).stdout.strip()
        if not where.startswith(checkout):
            raise SystemExit(f"{checkout} is not what Python imports ({where})")
    print(f"hook → @agentstate, {args.reports} reports, code from {checkout or ROOT}")
    latencies, hooks = run(args.reports, checkout)
    print(f"hook → @agentstate: {_summary(latencies)}")
    print(f"the hook's own run: {_summary(hooks)}")
    return 0


def _summary(values: list[float]) -> str:
    v = sorted(values)
    return (f"median {statistics.median(v) * 1000:.1f} ms  min {v[0] * 1000:.1f}  "
            f"p90 {v[int(round(0.9 * (len(v) - 1)))] * 1000:.1f}  max {v[-1] * 1000:.1f} ms  "
            f"(n={len(v)})")


if __name__ == "__main__":
    raise SystemExit(main())
