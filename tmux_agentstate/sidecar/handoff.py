"""A busy pane's bytes straight from tmux, with no `cat` between.

tmux's `pipe-pane` writes a pane's output into one end of a socketpair and starts a shell
command with the other end as its stdin. A `cat` there copies every byte once more, into our
FIFO: at 50 busy panes that is ~1 % of a core, a fifth of what watching them costs. Here the
command is a few lines of Python that hand their stdin to the sidecar over a Unix socket
(SCM_RIGHTS) and exit: tmux then writes into a descriptor the sidecar reads. tmux does not
watch the child (it only reaps it), and a pipe replaced or closed ends in EOF on our side.

It costs a Python start (~8 ms of CPU) per pane, so only panes that print on and on are
handed over (intakes/piped.py); one that waits keeps its `cat`, asleep. A handed descriptor is
taken only for a pane we asked for, with the token we gave it; anything else is closed
unread. Were the command to fail (the interpreter gone in an update), no descriptor comes and
the pane gets its `cat` again; handing over is then not tried any more.
"""
from __future__ import annotations

import array
import logging
import os
import secrets
import shlex
import socket
import struct
import sys
from pathlib import Path

log = logging.getLogger("tmux_agentstate.sidecar")

HANDOFF = "+"  # what `Fifos.wait` returns for the listening socket (`Fifos.listen`)
SOCKET_NAME = "handoff.sock"
WAIT = 3.0  # seconds for a handed descriptor to come before the pane gets its `cat` again
_MESSAGE_MAX = 64

# the pipe's command: its stdin (the socketpair's end tmux gave it) to the sidecar, then exit.
# -S -I: no site, no environment: nothing but the interpreter's own modules, started fast
# (from inside the folder: a socket's path is at most 107 bytes, the folder's may be longer)
_CODE = ("import _socket as s,posix,sys;posix.chdir(sys.argv[1]);"
         "c=s.socket(s.AF_UNIX,s.SOCK_STREAM);c.connect(" + repr(SOCKET_NAME) + ");"
         "c.sendmsg([sys.argv[2].encode()],[(s.SOL_SOCKET,s.SCM_RIGHTS,bytes(4))])")
_PATH_MAX = 100  # a socket path longer than this is bound through the folder's descriptor


def _expandable(text: str) -> bool:
    """tmux expands `#` formats and strftime `%` sequences in a pipe command: none wanted."""
    return "#" in text or "%" in text


class Handoff:
    """The listening socket handed descriptors come to, and the tokens we gave out."""

    def __init__(self, directory: Path | str, python: str | None = None):
        self.dir = str(directory)
        self.path = str(Path(directory) / SOCKET_NAME)
        self.python = python or sys.executable
        self.broken = False  # a hand-over never came: `cat`s from now on
        self._tokens: dict[str, str] = {}  # pane id → the token its command carries
        self._listener: socket.socket | None = None
        if _expandable(self.path) or _expandable(self.python) or not self.python:
            return
        try:
            try:
                os.unlink(self.path)  # an earlier sidecar's
            except FileNotFoundError:
                pass
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self._bind(listener)
                os.chmod(self.path, 0o600)
                listener.listen(64)
                listener.setblocking(False)
            except OSError:
                listener.close()
                raise
            self._listener = listener
        except OSError as e:  # a path too long for a socket, no room: `cat`s, as before
            log.info("no hand-over socket (%s): busy panes keep their cat", e.strerror or e)

    def _bind(self, listener: socket.socket) -> None:
        if len(self.path.encode()) <= _PATH_MAX:
            listener.bind(self.path)
            return
        folder = os.open(self.dir, os.O_PATH | os.O_DIRECTORY)
        try:
            listener.bind(f"/proc/self/fd/{folder}/{SOCKET_NAME}")
        finally:
            os.close(folder)

    @property
    def usable(self) -> bool:
        return self._listener is not None and not self.broken

    def fileno(self) -> int | None:
        return self._listener.fileno() if self._listener is not None else None

    def command(self, pane_id: str) -> str:
        """The `pipe-pane` command that hands the pane's pipe to us (a fresh token each time:
        a late hand-over of an earlier pipe is not taken for this one)."""
        token = secrets.token_hex(8)
        self._tokens[pane_id] = token
        return (f"exec {shlex.quote(self.python)} -S -I -c {shlex.quote(_CODE)} "
                f"{shlex.quote(self.dir)} {pane_id.lstrip('%')}:{token}")

    def forget(self, pane_id: str) -> None:
        """No hand-over wanted for this pane any more (its pipe replaced, the pane gone)."""
        self._tokens.pop(pane_id, None)

    def accept(self) -> list[tuple[str, int]]:
        """The descriptors handed since the last call: (pane id, descriptor), each for a pane
        whose command we gave (the token matches); the caller owns them."""
        handed = []
        while self._listener is not None:
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break
            with conn:
                got = self._receive(conn)
            if got is None:
                continue
            pane_id, token, fd = got
            if self._tokens.get(pane_id) == token:
                del self._tokens[pane_id]
                handed.append((pane_id, fd))
            else:
                os.close(fd)  # not one we asked for: never read
        return handed

    @staticmethod
    def _receive(conn: socket.socket) -> tuple[str, str, int] | None:
        """What one connection sent: (pane id, token, descriptor); None for nothing usable (a
        peer that is not this user is refused). Every descriptor that came is closed or
        returned."""
        fds = array.array("i")
        try:
            conn.settimeout(1.0)  # the command sends at once; a stuck peer must not hold us
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            msg, ancdata, _, _ = conn.recvmsg(_MESSAGE_MAX, socket.CMSG_SPACE(4 * fds.itemsize))
        except OSError:
            return None
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        if not fds:
            return None
        _, uid, _ = struct.unpack("3i", creds)
        pane, _, token = msg.decode("ascii", "replace").partition(":")
        if uid != os.getuid() or len(fds) != 1 or not pane.isdigit():
            for fd in fds:
                os.close(fd)
            return None
        return f"%{pane}", token, fds[0]

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            try:
                os.unlink(self.path)
            except OSError:
                pass
