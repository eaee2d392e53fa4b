"""Per-pane FIFOs that tmux's `pipe-pane -O` writes into, read by one selector loop.

Measured pitfalls this handles:
- a FIFO reader sees EOF (and a selector spins on it) whenever no writer is attached: we hold
  our own write end open, so the reader never sees EOF while the pane is watched;
- a stalled reader makes tmux buffer the pane's output without bound: `read_ready` always
  drains what is there, and the caller decides how much of it to parse;
- each pane costs two descriptors: more panes than the fd limit allows would leave none for
  reading processes and files (every pane blind) or kill the sidecar (EMFILE). The soft limit
  is raised to the hard one (`raise_fd_limit`), FIFOs stop at the limit less a reserve, and
  `open` raises OSError past it: the caller reads that pane from tmux's rendering instead.
"""
from __future__ import annotations

import errno
import os
import selectors
import socket
import stat
from pathlib import Path

CHUNK = 65536
RECENT = 65536  # the last bytes read from each pane, kept for `report` (a miss bundle)
FD_RESERVE = 64  # descriptors kept free for everything else (/proc, tmux, logs, manifests)


BELL = ""  # what `wait` returns for the doorbell's descriptor (`listen`): no pane id
NEWS = "!"  # ...and for the control client's (tmux's notifications)
FD_WANTED = 1 << 16  # enough for 32,000 piped panes; the children we start inherit it too


def raise_fd_limit() -> int:
    """Raise this process's soft limit on open files towards the hard one (up to FD_WANTED);
    the limit now."""
    try:
        import resource
    except ImportError:  # no resource module: no limit we can read
        return FD_WANTED
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = FD_WANTED if hard == resource.RLIM_INFINITY else min(hard, FD_WANTED)
    if soft == resource.RLIM_INFINITY or soft >= want:
        return FD_WANTED if soft == resource.RLIM_INFINITY else soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        return want
    except (ValueError, OSError):
        return soft


def _drain(fd: int, limit: int, chunks: list[bytes]) -> bool:
    """Read what `fd` holds, up to `limit` bytes, into `chunks`: whether it is at EOF."""
    size = 0
    while size < limit:
        try:
            chunk = os.read(fd, min(CHUNK, limit - size))
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True  # gone under us: as EOF
        if not chunk:
            return True
        chunks.append(chunk)
        size += len(chunk)
        if len(chunk) < CHUNK:
            return False  # drained (a FIFO holds at most 64 KB)
    return False


class Fifos:
    def __init__(self, directory: Path):
        self.fd_limit = raise_fd_limit()
        self.dir = Path(directory)
        self.selector = selectors.DefaultSelector()
        self._fds: dict[str, tuple[int, int]] = {}  # pane id → (read fd, our write fd)
        # pane id → the socket tmux's pipe writes into, handed to us (handoff.py): read before
        # the FIFO, which then only gets what another writer (`record`'s tee) sends
        self._sockets: dict[str, socket.socket] = {}
        self._recent: dict[str, bytearray] = {}
        self._others: dict[str, int] = {}  # other descriptors waited on with the FIFOs (`listen`)
        self._real_dir: str | None = None

    def path_for(self, pane_id: str) -> Path:
        return self.dir / f"pane-{pane_id.lstrip('%')}.fifo"

    def real_path_for(self, pane_id: str) -> str:
        """`path_for` with every symlink of the folder resolved (what /proc shows a writer
        writing to); the folder's resolved once, not per pane per listing."""
        if self._real_dir is None:
            self._real_dir = os.path.realpath(self.dir)
        return os.path.join(self._real_dir, f"pane-{pane_id.lstrip('%')}.fifo")

    def open(self, pane_id: str) -> Path:
        """A fresh FIFO for this pane (an old one at the path is replaced: after a restart its
        writer, the previous `cat`, gets SIGPIPE on the unlinked inode and goes away).
        OSError when it cannot be made: too many open files (EMFILE, also before the limit
        itself: FD_RESERVE), no room for it, a folder gone."""
        self.close(pane_id)
        if not self.room():
            raise OSError(errno.EMFILE, f"{os.strerror(errno.EMFILE)} (limit {self.fd_limit})")
        path = self.path_for(pane_id)
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        os.mkfifo(path, 0o600)
        try:
            rfd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                wfd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                os.close(rfd)
                raise
        except OSError:
            path.unlink(missing_ok=True)
            raise
        self._fds[pane_id] = (rfd, wfd)
        self.selector.register(rfd, selectors.EVENT_READ, pane_id)
        return path

    def room(self) -> bool:
        """Whether one more FIFO fits under the fd limit."""
        return 2 * (len(self._fds) + 1) + len(self._sockets) + FD_RESERVE <= self.fd_limit

    def take_socket(self, pane_id: str, fd: int) -> bool:
        """Read this pane's bytes from `fd` (tmux's pipe, handed over) instead of its FIFO,
        until tmux closes it. False (and `fd` closed) when the pane has no FIFO here."""
        if pane_id not in self._fds or not self.room():
            os.close(fd)
            return False
        self._close_socket(pane_id)
        sock = socket.socket(fileno=fd)
        sock.setblocking(False)
        self._sockets[pane_id] = sock
        # the FIFO is not waited on or read meanwhile: nothing writes it until tmux closes our
        # socket (another writer, `record`'s tee, replaces our pipe first), and an empty read
        # of it after each of the socket's costs a raised BlockingIOError
        self.selector.unregister(self._fds[pane_id][0])
        self.selector.register(fd, selectors.EVENT_READ, pane_id)
        return True

    def socket_open(self, pane_id: str) -> bool:
        """Whether tmux still writes into the pane's handed socket (no EOF waits in it)."""
        sock = self._sockets.get(pane_id)
        if sock is None:
            return False
        try:
            return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except (BlockingIOError, InterruptedError):
            return True  # nothing to read: open
        except OSError:
            return False

    def _close_socket(self, pane_id: str) -> None:
        sock = self._sockets.pop(pane_id, None)
        if sock is not None:
            try:
                self.selector.unregister(sock.fileno())
            except (KeyError, ValueError):
                pass
            sock.close()
            fds = self._fds.get(pane_id)
            if fds is not None:  # what another writer sends comes by the FIFO again
                self.selector.register(fds[0], selectors.EVENT_READ, pane_id)

    def close(self, pane_id: str) -> None:
        self._recent.pop(pane_id, None)
        self._close_socket(pane_id)
        fds = self._fds.pop(pane_id, None)
        if fds:
            try:
                self.selector.unregister(fds[0])
            except (KeyError, ValueError):
                pass
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
        path = self.path_for(pane_id)
        try:
            if stat.S_ISFIFO(path.lstat().st_mode):
                path.unlink()
        except FileNotFoundError:
            pass

    def watching(self) -> set[str]:
        return set(self._fds)

    def listen(self, fd: int | None, key: str = "") -> None:
        """Wait on `fd` too (it replaces the one before under the same `key`; BELL, "", is the
        doorbell's): `wait` returns `key` among the pane ids when it is readable. The caller
        reads it."""
        old = self._others.pop(key, None)
        if old is not None:
            try:
                self.selector.unregister(old)
            except (KeyError, ValueError, OSError):
                pass
        if fd is not None:
            try:
                self.selector.register(fd, selectors.EVENT_READ, key)
            except (KeyError, ValueError, OSError):
                return  # closed meanwhile, or already there under another key
            self._others[key] = fd

    def wait(self, timeout: float) -> list[str]:
        """Pane ids with bytes to read, and BELL if the descriptor `listen` gave is readable
        (empty after `timeout` seconds)."""
        if not self._fds and not self._others:
            if timeout > 0:
                import time
                time.sleep(timeout)
            return []
        return [key.data for key, _ in self.selector.select(max(0.0, timeout))]

    def read(self, pane_id: str, limit: int = CHUNK) -> bytes:
        """What the pane's FIFO holds, up to `limit` bytes (b"" if nothing)."""
        fds = self._fds.get(pane_id)
        if not fds:
            return b""
        chunks: list[bytes] = []
        sock = self._sockets.get(pane_id)
        if sock is None:
            _drain(fds[0], limit, chunks)
        elif _drain(sock.fileno(), limit, chunks):
            # EOF: tmux closed our pipe (replaced, or the pane went); what another writer
            # sends comes by the FIFO, after the socket's last bytes
            self._close_socket(pane_id)
            _drain(fds[0], limit - sum(map(len, chunks)), chunks)
        data = b"".join(chunks) if len(chunks) != 1 else chunks[0]
        if data:
            tail = self._recent.setdefault(pane_id, bytearray())
            tail += data[-RECENT:]
            if len(tail) > 2 * RECENT:  # trimmed now and then, not at every read
                del tail[:-RECENT]
        return data

    def recent(self, pane_id: str) -> bytes:
        """The last RECENT bytes read from the pane (its tail, not a replayable start)."""
        return bytes(self._recent.get(pane_id, b"")[-RECENT:])

    def close_all(self) -> None:
        for pane_id in list(self._fds):
            self.close(pane_id)
        self.selector.close()
