"""`tmux-agentstate stream`, run on a host over SSH by another machine's sidecar: the state of
this host's agent panes as core/hostproto.py messages on stdout (hello, a snapshot, then the
changes, beats), and the requests that come on stdin (ping, answer, focus).

The rows are what this host's own sidecar computes and writes to `panes.json` in its runtime
folder (sidecar/pane_rows.py): watched with one stat every POLL seconds, so a link costs this
host's tmux server no command. A server that is not running, or a sidecar that is not, is said
in the beats' note; the sidecar is started the way our hooks start it (`start --auto`: one
stopped on purpose stays stopped).
"""
from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from ..core import hostproto as hp
from ..core.safe_read import read_json
from ..sidecar.pane_rows import PANE_ROWS
from ..sidecar.runtime import Runtime
from ..tmux import Tmux, TmuxError
from .fresh import answer, look

POLL = 0.1              # seconds between two looks at panes.json (one stat each)
RESTART_EVERY = 30.0    # a sidecar that is not running is started at most this often
ROWS_FILE_MAX = 4 << 20
REQUEST_MAX = 1 << 16


class Stream:
    def __init__(self, tmux: Tmux, version: str, write: Callable[[bytes], None], stdin: int,
                 start_sidecar: Callable[[], None]):
        self.tmux = tmux
        self.version = version
        self.write = write
        self.stdin = stdin
        self.start_sidecar = start_sidecar
        self.sent: dict[str, dict] | None = None  # pane → the row last sent (None: no snapshot)
        self.stamp: tuple | None = None
        self.note = ""
        self.runtime: Runtime | None = None
        self._inbuf = b""
        self._next_beat = 0.0
        self._next_start = 0.0

    def send(self, **message) -> None:
        self.write(hp.encode(message))

    def run(self) -> int:
        """Until the other side closes stdin (or stdout): 0."""
        self.find_server()
        self.send(t="hello", version=self.version, heartbeat=hp.HEARTBEAT,
                  server=self.runtime.socket_path if self.runtime else "")
        while True:
            now = time.monotonic()
            if now >= self._next_beat:
                self.find_server()
                self.check_sidecar(now)
                self.send(t="beat", note=self.note)
                self._next_beat = now + hp.HEARTBEAT
            self.send_rows()
            if not self.read_requests(POLL):
                return 0

    # -- this host's server, sidecar and rows ------------------------------------------------------
    def find_server(self) -> None:
        try:
            socket = self.tmux.socket()
        except TmuxError:
            self.runtime, self.note = None, "no tmux server runs on this host"
            return
        if self.runtime is None or self.runtime.socket_path != socket:
            self.runtime, self.stamp = Runtime(socket), None

    def check_sidecar(self, now: float) -> None:
        if self.runtime is None:
            return
        if self.runtime.running_pid():
            self.note = ""
            return
        stopped = self.runtime.stopped_path.exists()
        self.note = ("this host's sidecar was stopped (tmux-agentstate start there)" if stopped
                     else "this host's sidecar is not running; starting it")
        if not stopped and now >= self._next_start:
            self._next_start = now + RESTART_EVERY
            self.start_sidecar()

    def read_rows(self) -> list[dict] | None:
        """The rows in panes.json if it changed since the last look (None: unchanged)."""
        stamp, rows = None, []
        if self.runtime is not None:
            try:
                st = os.stat(self.runtime.dir / PANE_ROWS)
                stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
            except OSError:
                pass
        if stamp == self.stamp and self.sent is not None:
            return None
        self.stamp = stamp
        if stamp is not None:
            data = read_json(self.runtime.dir / PANE_ROWS, ROWS_FILE_MAX)
            rows = data.get("rows") if isinstance(data, dict) else None
            rows = rows if isinstance(rows, list) else []
        return [r for r in rows[:hp.MAX_ROWS] if isinstance(r, dict) and isinstance(r.get("pane"), str)]

    def send_rows(self) -> None:
        rows = self.read_rows()
        if rows is None:
            return
        now = {r["pane"]: r for r in rows}
        if self.sent is None:
            self.send(t="rows", full=True, rows=rows, gone=[], note=self.note)
        else:
            changed = [r for p, r in now.items() if self.sent.get(p) != r]
            gone = [p for p in self.sent if p not in now]
            if changed or gone:
                self.send(t="rows", full=False, rows=changed, gone=gone, note=self.note)
        self.sent = now

    # -- requests --------------------------------------------------------------------------------
    def read_requests(self, timeout: float) -> bool:
        """Serve the requests that came within `timeout`; False once stdin is closed."""
        try:
            ready, _, _ = select.select([self.stdin], [], [], timeout)
        except (OSError, ValueError):
            return False
        if not ready:
            return True
        try:
            chunk = os.read(self.stdin, 1 << 16)
        except OSError:
            return False
        if not chunk:
            return False
        self._inbuf += chunk
        while b"\n" in self._inbuf:
            line, self._inbuf = self._inbuf.split(b"\n", 1)
            self.serve(line)
        if len(self._inbuf) > REQUEST_MAX:  # no end of line in sight: not ours to keep
            self._inbuf = b""
        return True

    def serve(self, line: bytes) -> None:
        try:
            request = hp.decode_request(line)
        except hp.ProtocolError as e:
            self.send(t="reply", id=hp.request_id(line), code=2, text=f"refused: {e}")
            return
        rid = request["id"]
        if request["op"] == "ping":
            self.send(t="reply", id=rid, code=0, text="pong")
            return
        try:
            if request["op"] == "answer":
                code, text = answer(self.tmux, look(self.tmux, request["pane"]), request["choice"])
            else:
                code, text = self.focus(request["pane"])
        except TmuxError as e:
            code, text = 1, str(e)
        self.send(t="reply", id=rid, code=code, text=" ".join(str(text).split())[:300])

    def focus(self, pane: str) -> tuple[int, str]:
        """Make `pane` its session's current window and pane (a client attached there, ours
        over ssh, shows it)."""
        info = self.tmux.resolve_pane(pane)  # exactly that pane, or TmuxError
        self.tmux.run(["select-window", "-t", info.pane_id], ["select-pane", "-t", info.pane_id])
        return 0, f"{info.pane_id} ({info.address}) is current in its session"


def run_stream(tmux: Tmux, version: str, start_args: list[str]) -> int:
    """The command: stdout and stdin are the SSH session's."""
    out = sys.stdout.buffer

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    def start_sidecar() -> None:
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "start", "--auto", *start_args],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, cwd="/", timeout=30)

    try:
        return Stream(tmux, version, write, sys.stdin.fileno(), start_sidecar).run()
    except (BrokenPipeError, ConnectionError):
        return 0
