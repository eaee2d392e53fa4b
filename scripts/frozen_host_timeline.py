#!/usr/bin/env python3
"""The frozen-host timeline: a host stops answering while a local agent needs the user.

    .venv/bin/python scripts/frozen_host_timeline.py [--freeze session|sshd] [--hold 70]

A real sshd on 127.0.0.1 (tests/sshd.py) and one host behind it whose tmux runs a blocked
Claude Code capture under its own sidecar; a local tmux server whose sidecar links to that
host. Once the host's row is in the local hosts.json, the host is frozen (SIGSTOP):
`session`: its SSH session's sshd process only (the link's connection hangs; a new one can
still be made); `sshd`: every sshd process, listener included (nothing answers). Two seconds
into the freeze, a local pane draws a blocked dialog. Printed, in seconds from the freeze:
when the local pane reads blocked, when the host's rows turn stale, when (after SIGCONT at
`--hold`) they are fresh again, with `hosts`' line at each step.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from sshd import REMOTE_COMMAND, RemoteTmux, Sshd  # noqa: E402
from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.sidecar.hosts.files import read_hosts  # noqa: E402
from tmux_agentstate.sidecar.runtime import Runtime  # noqa: E402

BLOCKED = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked"
               and f.renderer == "classic")


def replay(path, delay: float) -> str:
    return ("env AGENTSTATE_AGENT=claude sh -c "
            + shlex.quote(f"stty -echo; sleep {delay}; cat {shlex.quote(str(path))}; exec sleep 600"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--freeze", choices=("session", "sshd"), default="session")
    ap.add_argument("--hold", type=float, default=70.0, help="seconds frozen")
    a = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="frozen-host-"))
    sshd = Sshd(base / "sshd")
    remote = RemoteTmux(base / "r1", cols=BLOCKED.cols, rows=BLOCKED.rows)
    local = f"frozen-{os.getpid()}"
    env = dict(os.environ, XDG_RUNTIME_DIR=str(base / "xdg"))
    env.pop("TMUX", None)
    (base / "xdg").mkdir(mode=0o700)
    frozen: list[int] = []

    def tmux(*args) -> str:
        return subprocess.run(["tmux", "-L", local, *args], env=env, capture_output=True,
                              text=True).stdout.strip()

    def cli(*args) -> str:
        return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L", local],
                              env=env, capture_output=True, text=True).stdout.strip()

    try:
        remote.cmd("new-window", replay(BLOCKED.path, 0.3))
        sshd.host("h1", tmpdir=remote.tmpdir)
        subprocess.run(["tmux", "-L", local, "-f", "/dev/null", "new-session", "-d", "-x",
                        str(BLOCKED.cols), "-y", str(BLOCKED.rows)], env=env, check=True)
        tmux("set", "-g", "@agentstate-ssh", sshd.ssh)
        tmux("set", "-g", "@agentstate-remote-command", REMOTE_COMMAND)
        tmux("set", "-g", "@agentstate-hosts", "h1")
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "start", "-L", local], env=env,
                       check=True, capture_output=True)
        runtime = Runtime(tmux("display-message", "-p", "#{socket_path}"))

        def host() -> dict:
            return next(iter(read_hosts(runtime.dir)), {})

        deadline = time.monotonic() + 60
        while not any(r.get("state") == "blocked" for r in host().get("rows") or ()):
            if time.monotonic() > deadline:
                print("the host's blocked row never arrived:", host())
                return 1
            time.sleep(0.1)
        print(f"connected: {cli('hosts')}")
        frozen = ([p for p in sshd.session_pids()] if a.freeze == "session"
                  else [sshd.proc.pid, *sshd.session_pids()])
        t0 = time.monotonic()
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        print(f"t=0.0 s  SIGSTOP {a.freeze} ({len(frozen)} process(es))")
        pane = tmux("new-window", "-P", "-F", "#{pane_id}", replay(BLOCKED.path, 2.0))
        marks: dict[str, float] = {}
        last_status = ""
        resumed = False
        while time.monotonic() - t0 < a.hold + 90:
            t = time.monotonic() - t0
            if "local" not in marks and tmux("display-message", "-p", "-t", pane,
                                             "#{@agentstate}") == "blocked":
                marks["local"] = t
                print(f"t={t:.1f} s  local pane {pane} reads blocked (drawn at t=2.0 s + its "
                      f"0.3 s start)")
            h = host()
            status = h.get("status", "")
            stale = any(r.get("stale") for r in h.get("rows") or ()) or status != "connected"
            if status != last_status:
                print(f"t={t:.1f} s  host h1: {status} ({h.get('why') or ''}); rows kept: "
                      f"{len(h.get('rows') or ())}")
                last_status = status
            if stale and "stale" not in marks:
                marks["stale"] = t
            if not resumed and t >= a.hold:
                for pid in frozen:
                    os.kill(pid, signal.SIGCONT)
                resumed = True
                marks["resume"] = t
                print(f"t={t:.1f} s  SIGCONT")
            if resumed and status == "connected" and "fresh" not in marks:
                marks["fresh"] = t
                print(f"t={t:.1f} s  fresh again, {t - marks['resume']:.1f} s after SIGCONT: "
                      f"{cli('hosts')}")
                break
            time.sleep(0.05)
        print(f"summary: local pane blocked at {marks.get('local', float('nan')):.1f} s; rows "
              f"stale at {marks.get('stale', float('nan')):.1f} s; fresh "
              f"{marks.get('fresh', float('nan')) - marks.get('resume', float('nan')):.1f} s "
              f"after resume")
        return 0
    finally:
        for pid in frozen:
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "stop", "-L", local], env=env,
                       capture_output=True)
        subprocess.run(["tmux", "-L", local, "kill-server"], capture_output=True)
        remote.agentstate("stop")
        subprocess.run(["tmux", "kill-server"], env=remote.env, capture_output=True)
        sshd.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
