"""Per-pane FIFOs that tmux's `pipe-pane -O` writes into, read by one selector loop.

Measured pitfalls this handles:
- a FIFO reader sees EOF (and a selector spins on it) whenever no writer is attached: we hold
  our own write end open, so the reader never sees EOF while the pane is watched;
- a stalled reader makes tmux buffer the pane's output without bound: `read_ready` always
  drains what is there, and the caller decides how much of it to parse.
"""
from __future__ import annotations

import os
import selectors
import stat
from pathlib import Path

CHUNK = 65536
RECENT = 65536  # the last bytes read from each pane, kept for `report` (a miss bundle)


class Fifos:
    def __init__(self, directory: Path):
        self.dir = Path(directory)
        self.selector = selectors.DefaultSelector()
        self._fds: dict[str, tuple[int, int]] = {}  # pane id → (read fd, our write fd)
        self._recent: dict[str, bytearray] = {}

    def path_for(self, pane_id: str) -> Path:
        return self.dir / f"pane-{pane_id.lstrip('%')}.fifo"

    def open(self, pane_id: str) -> Path:
        """A fresh FIFO for this pane (an old one at the path is replaced: after a restart its
        writer, the previous `cat`, gets SIGPIPE on the unlinked inode and goes away)."""
        self.close(pane_id)
        path = self.path_for(pane_id)
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        os.mkfifo(path, 0o600)
        rfd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        wfd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        self._fds[pane_id] = (rfd, wfd)
        self.selector.register(rfd, selectors.EVENT_READ, pane_id)
        return path

    def close(self, pane_id: str) -> None:
        self._recent.pop(pane_id, None)
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

    def wait(self, timeout: float) -> list[str]:
        """Pane ids with bytes to read (empty after `timeout` seconds)."""
        if not self._fds:
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
        chunks, size = [], 0
        while size < limit:
            try:
                chunk = os.read(fds[0], min(CHUNK, limit - size))
            except (BlockingIOError, InterruptedError):
                break
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if len(chunk) < CHUNK:
                break  # drained (a FIFO holds at most 64 KB)
        data = b"".join(chunks)
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
