"""hosts.sock (files.py): the commands' requests to a host (answer, focus), served by the
sidecar, each relayed over that host's own link and its reply sent back, one line each way.

Anyone who can open the socket is the user (the runtime folder is 0700); still, a request
is checked like any input: its size, its fields (hostproto's rules), the host one we link
to. A request waits on its host in its own thread, so one slow host never holds another's.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
from pathlib import Path
from typing import Callable

from .files import HOSTS_SOCKET

log = logging.getLogger("tmux_agentstate.sidecar")

REQUEST_MAX = 4096
READ_WAIT = 5.0
HANDLERS_MAX = 16


class HostsServer:
    def __init__(self, folder: Path, relay: Callable[[dict], tuple[int, str]]):
        self.path = Path(folder) / HOSTS_SOCKET
        self.relay = relay
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._slots = threading.BoundedSemaphore(HANDLERS_MAX)

    def start(self) -> bool:
        try:
            if self.path.is_socket():
                self.path.unlink()  # an earlier sidecar's (this one holds the lock now)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(str(self.path))
            os.chmod(self.path, 0o600)
            sock.listen(16)
            sock.settimeout(1.0)
        except OSError as e:
            log.error("cannot serve %s: %s", self.path, e.strerror or e)
            return False
        self._sock = sock
        threading.Thread(target=self._accept, name="hosts.sock", daemon=True).start()
        return True

    def stop(self) -> None:
        self._stop.set()
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None
            try:
                self.path.unlink()
            except OSError:
                pass

    def _accept(self) -> None:
        sock = self._sock
        while not self._stop.is_set() and sock is not None:
            try:
                conn, _ = sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                _reply(conn, 1, "the sidecar has too many host requests under way")
                conn.close()
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(READ_WAIT)
            buf = b""
            while b"\n" not in buf and len(buf) <= REQUEST_MAX:
                chunk = conn.recv(1024)
                if not chunk:
                    break
                buf += chunk
            request = _parse(buf)
            code, text = (1, request) if isinstance(request, str) else self.relay(request)
            _reply(conn, code, text)
        except OSError:
            pass
        finally:
            conn.close()
            self._slots.release()


def _parse(buf: bytes) -> dict | str:
    """The request, or one line on why it is none."""
    if len(buf) > REQUEST_MAX:
        return "a request too long"
    try:
        request = json.loads(buf.split(b"\n", 1)[0])
    except (ValueError, RecursionError):
        return "a request that is not JSON"
    if not isinstance(request, dict) or request.get("op") not in ("answer", "focus"):
        return "an unknown request (answer or focus)"
    if not isinstance(request.get("host"), str) or not isinstance(request.get("pane"), str):
        return "a request without its host and pane"
    if request["op"] == "answer" and not isinstance(request.get("choice"), str):
        return "an answer without its choice"
    return request


def _reply(conn: socket.socket, code: int, text: str) -> None:
    try:
        conn.sendall(json.dumps({"code": code, "text": " ".join(str(text).split())},
                                ensure_ascii=True).encode() + b"\n")
    except OSError:
        pass
