"""Reading files other programs write (an agent's session file, transcript, rollout, package
metadata) without ever blocking or running away: the sidecar reads them every sweep, and a
FIFO (an open that waits for a writer forever), a device (`/dev/zero`: endless), a file of
GBs, a symlink to any of those, or one that vanishes mid-read must cost one failed read, never
a frozen or dead watcher.

Only regular files are read (checked before the open, so a device is never opened, and again
on the open descriptor, so a swap in between is caught), opened non-blocking, and at most
`limit` bytes of them. Every failure is None; JSON that is too deep for the parser
(RecursionError), too big (MemoryError) or not JSON is None too.
"""
from __future__ import annotations

import json
import os
import stat

_FLAGS = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))


def _open_regular(path: str) -> tuple[int, int] | None:
    """(fd, size) of a regular file, or None (not one, gone, unreadable)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, _FLAGS)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return fd, st.st_size


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, min(1 << 16, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_head(path: str, limit: int = 1 << 16) -> bytes | None:
    """The first `limit` bytes of a regular file (all of a smaller one), or None."""
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, _ = opened
    try:
        return _read_at_most(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_tail(path: str, limit: int) -> tuple[bytes, bool] | None:
    """The last `limit` bytes of a regular file and whether that cut anything off before
    them, or None."""
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, size = opened
    try:
        start = max(0, size - limit)
        if start:
            os.lseek(fd, start, os.SEEK_SET)
        return _read_at_most(fd, limit), start > 0
    except OSError:
        return None
    finally:
        os.close(fd)


def loads_json(data: bytes | str | None):
    """The JSON value in `data`, or None when there is none we can hold."""
    if data is None:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError, MemoryError, TypeError):  # UnicodeDecodeError: ValueError
        return None


def read_json(path: str, limit: int = 1 << 16):
    """The JSON value of a small regular file (None: no file, too big to be whole, not JSON)."""
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, size = opened
    try:
        if size > limit:
            return None  # a cut document is no document
        return loads_json(_read_at_most(fd, limit))
    except OSError:
        return None
    finally:
        os.close(fd)
