#!/usr/bin/env python3
"""Benchmark: a change on a remote host → the local sidecar's hosts.json (what `list --json`
reads), over a real SSH session on loopback (tests/sshd.py), and a frozen host's timeline.

    .venv/bin/python scripts/bench_host_latency.py [--changes 20] [--freeze]

A pane on the host flips between a blocked and an idle capture (respawn-pane); for each flip:
  host   = the host's own sidecar wrote it to its panes.json (its own classification)
  link   = the local hosts.json has it, counted from `host` (what the link adds)
  total  = the local hosts.json has it, counted from the respawn
--freeze: SIGSTOP of the host's sshd (listener and session), then SIGCONT: when hosts.json
says stale, when connected again, and a local pane's change meanwhile.
"""
from __future__ import annotations

import argparse
import json
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
sys.path.insert(0, str(ROOT / "tests"))

from conftest import TmuxServer, replay_command  # noqa: E402
from sshd import REMOTE_COMMAND, RemoteTmux, Sshd  # noqa: E402
from tmux_agentstate.core import hostproto  # noqa: E402
from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.sidecar.hosts import files  # noqa: E402
from tmux_agentstate.sidecar.pane_rows import PANE_ROWS  # noqa: E402
from tmux_agentstate.sidecar.runtime import Runtime  # noqa: E402

FIXTURES = load_index()
BLOCKED = next(f for f in FIXTURES if f.agent == "claude" and f.state == "blocked")
IDLE = next(f for f in FIXTURES if f.agent == "claude" and f.state == "idle")


def until(fn, timeout=60.0, step=0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(step)
    raise SystemExit("timed out")


def local_state(run: Path, pane: str):
    for h in files.read_hosts(run):
        for r in h.get("rows") or ():
            if r.get("pane") == pane:
                return r["state"], r["stale"], h["status"]
    return None


def host_state(path: Path, pane: str):
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return next((r["state"] for r in data.get("rows", []) if r.get("pane") == pane), None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--freeze", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-hosts-"))
    sshd = Sshd(tmp / "sshd")
    host = RemoteTmux(tmp / "r1")
    local = TmuxServer(f"bench-hosts-{os.getpid()}")
    run = tmp / "run"
    run.mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)
    watcher = None
    try:
        sshd.host("h1", tmpdir=host.tmpdir)
        pane = host.cmd("new-window", "-P", "-F", "#{pane_id}", replay_command(BLOCKED.path, "claude"))
        host.cmd("resize-window", "-t", pane, "-x", str(BLOCKED.cols), "-y", str(BLOCKED.rows))
        for name, value in (("@agentstate-ssh", sshd.ssh), ("@agentstate-remote-command",
                                                            REMOTE_COMMAND),
                            ("@agentstate-hosts", "h1")):
            local.cmd("set-option", "-g", name, value)
        watcher = subprocess.Popen([sys.executable, "-m", "tmux_agentstate", "watch", "-L",
                                    local.name], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        local_run = Runtime(local.tmux.socket()).dir
        until(lambda: (s := local_state(local_run, pane)) and s[0] == "blocked")
        rows_file = Runtime(host.socket).dir / PANE_ROWS
        until(lambda: host_state(rows_file, pane) == "blocked")
        print(f"heartbeat {hostproto.HEARTBEAT:g}s, stale after {hostproto.STALE_AFTER:g}s; "
              f"the host's stream polls panes.json every 0.1 s")
        host_times, link_times, totals = [], [], []
        for i in range(args.changes):
            fx = IDLE if i % 2 == 0 else BLOCKED
            t0 = time.monotonic()
            host.cmd("respawn-pane", "-k", "-t", pane, replay_command(fx.path, "claude"))
            t1 = until(lambda: host_state(rows_file, pane) == fx.state and time.monotonic())
            t2 = until(lambda: (s := local_state(local_run, pane)) and s[0] == fx.state
                       and time.monotonic())
            host_times.append(t1 - t0)
            link_times.append(t2 - t1)
            totals.append(t2 - t0)
            time.sleep(0.3)
        for name, values in (("host", host_times), ("link", link_times), ("total", totals)):
            print(f"{name:5}: median {statistics.median(values) * 1000:.0f} ms, max "
                  f"{max(values) * 1000:.0f} ms over {len(values)} changes")
        if args.freeze:
            freeze(sshd, local, local_run, pane)
    finally:
        if watcher is not None:
            watcher.terminate()
            watcher.wait(10)
        local.kill()
        host.kill()
        sshd.stop()


def freeze(sshd: Sshd, local: TmuxServer, local_run: Path, far: str) -> None:
    near = local.new_pane(replay_command(BLOCKED.path, "claude"), rows=BLOCKED.rows,
                          cols=BLOCKED.cols)
    until(lambda: local.state(near) == "blocked", step=0.05)
    pids = [sshd.proc.pid]
    todo = list(sshd.session_pids())
    while todo:
        pid = todo.pop()
        pids.append(pid)
        try:
            todo += [int(k) for k in open(f"/proc/{pid}/task/{pid}/children").read().split()
                     if open(f"/proc/{k}/comm").read().startswith("sshd")]
        except OSError:
            pass
    t0 = time.monotonic()
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    local.cmd("respawn-pane", "-k", "-t", near, replay_command(IDLE.path, "claude"))
    until(lambda: local.state(near) == "idle", step=0.01)
    print(f"frozen at 0 s; a local pane's change seen at {time.monotonic() - t0:.2f} s")
    until(lambda: (s := local_state(local_run, far)) and s[1], timeout=120, step=0.05)
    print(f"remote rows stale at {time.monotonic() - t0:.1f} s")
    time.sleep(10)
    t1 = time.monotonic()
    for pid in pids:
        os.kill(pid, signal.SIGCONT)
    until(lambda: (s := local_state(local_run, far)) and not s[1], timeout=120, step=0.05)
    print(f"resumed at {t1 - t0:.1f} s; fresh again {time.monotonic() - t1:.1f} s after")


if __name__ == "__main__":
    main()
