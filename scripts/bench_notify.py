#!/usr/bin/env python3
"""Latency from a prompt drawn in an agent pane to the desktop notification's bytes written to
a client's terminal (`@agentstate-notify-terminal`), as a user gets it: a private tmux server,
a real client attached in a pseudo-terminal (its terminal says it is WezTerm when tmux asks),
the sidecar as `tmux-agentstate watch` runs it, an agent pane in a session no client shows.
Each round draws a real Claude Code permission prompt (a fixture's bytes) into the pane, waits
for the OSC 9 in the client's bytes, then clears the prompt and waits for idle.

    .venv/bin/python scripts/bench_notify.py [--rounds 20] [--intake emulate|pipe|capture]
"""
from __future__ import annotations

import argparse
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmux_agentstate.core.fixtures import load_index  # noqa: E402

OSC9 = b"\x1b]9;"
IDLE = "\x1b[2J\x1b[H\u25cf Done.\r\n\r\n> \r\n  ? for shortcuts\r\n".encode()


class Client:
    """A tmux client in a pty; every byte its terminal gets, with the time it came."""

    def __init__(self, sock: str, session: str):
        env = dict(os.environ, TERM="xterm-256color")
        env.pop("TMUX", None)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe("tmux", ["tmux", "-L", sock, "attach", "-t", session], env)
        self.buf = bytearray()
        self.hits: list[float] = []  # when each OSC 9 arrived
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        answered = False
        while True:
            try:
                if not select.select([self.fd], [], [], 0.5)[0]:
                    continue
                data = os.read(self.fd, 65536)
            except OSError:
                return
            now = time.monotonic()
            with self.lock:
                before = self.buf.count(OSC9)
                self.buf += data
                self.hits += [now] * (self.buf.count(OSC9) - before)
                ask = not answered and b"\x1b[>q" in self.buf
            if ask:
                answered = True
                os.write(self.fd, b"\x1bP>|WezTerm 20240203-110809-5046fc22\x1b\\")

    def close(self) -> None:
        try:
            os.kill(self.pid, 15)
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--intake", default="emulate")
    args = ap.parse_args()
    fixture = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked"
                   and f.kind == "command-approval" and f.renderer == "classic")
    prompt = b"\x1b[2J\x1b[H" + fixture.path.read_bytes()
    sock = f"agentstate-bench-notify-{os.getpid()}"
    tmp = Path(tempfile.mkdtemp(prefix="agentstate-bench-"))
    fifo = tmp / "feed"
    os.mkfifo(fifo)
    T = ["tmux", "-L", sock]

    def tmux(*a: str) -> str:
        return subprocess.run([*T, *a], capture_output=True, text=True).stdout.strip()

    tmux("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "120", "-y", "32")
    for opt, val in (("@agentstate-notify-terminal", "auto"), ("@agentstate-notify-cooldown", "0"),
                     ("@agentstate-notify-bell", "off")):
        tmux("set-option", "-g", opt, val)
    pane = tmux("new-session", "-d", "-s", "agent", "-x", str(fixture.cols), "-y", str(fixture.rows),
                "-P", "-F", "#{pane_id}", f"env AGENTSTATE_AGENT=claude sh -c 'stty -echo; exec cat {fifo}'")
    feed = open(fifo, "wb", buffering=0)
    feed.write(IDLE)
    client = Client(sock, "main")
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp))
    env.pop("TMUX", None)
    sidecar = subprocess.Popen([sys.executable, "-m", "tmux_agentstate", "watch", "-L", sock,
                                "--intake", args.intake], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    state = lambda: tmux("display-message", "-p", "-t", pane, "#{@agentstate}")  # noqa: E731

    def until(pred, timeout=15.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            time.sleep(0.01)
        return False

    latencies, missed = [], 0
    try:
        if not until(lambda: state() == "idle", 30):
            print("the sidecar never watched the pane", file=sys.stderr)
            return 1
        time.sleep(1.0)
        for _ in range(args.rounds):
            with client.lock:
                seen = len(client.hits)
            t0 = time.monotonic()
            feed.write(prompt)
            if until(lambda: len(client.hits) > seen, 10):
                latencies.append(client.hits[seen] - t0)
            else:
                missed += 1
            feed.write(IDLE)
            until(lambda: state() == "idle", 10)
            time.sleep(0.8)
    finally:
        sidecar.terminate()
        sidecar.wait(5)
        client.close()
        feed.close()
        subprocess.run([*T, "kill-server"], capture_output=True)
    ms = sorted(x * 1000 for x in latencies)
    print(f"intake {args.intake}: {len(ms)} of {args.rounds} prompts notified ({missed} missed); "
          f"prompt written -> OSC 9 on the client's terminal, ms: median {statistics.median(ms):.0f}, "
          f"max {max(ms):.0f}, min {min(ms):.0f}")
    print("each, ms: " + " ".join(f"{x:.0f}" for x in ms))
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main())
