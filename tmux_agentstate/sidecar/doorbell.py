"""The doorbell: how a hook report (or a change of an agent's own session file) wakes the
sidecar at once instead of waiting for its next pane listing (issue 27).

A FIFO, `doorbell.fifo` (0600), in the sidecar's private runtime folder. The sidecar holds it
open for reading AND writing, non-blocking: with its own write end open the reader never sees
EOF, so a selector never spins on it (fifos.py has the measured pitfalls). A hook, after the
tmux command that records its report (tmux stays the proof of origin: the doorbell carries only
a pane id, `%N\n`, and the sidecar reads the report from tmux), rings with `ring`: one short
non-blocking write, nothing when no sidecar reads. A ring says only "look at this pane now":
a forged one costs a read of options, never a state.

`ring` is imported by the hook: nothing here imports more than folder.py does.
"""
from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

NAME = "doorbell.fifo"
TAKE_BYTES = 4096   # read per take, at most: a flood costs a bounded read per wake (and a
                    # writer gets EAGAIN once the FIFO's 64 KB are full: it drops its ring)
LINE_MAX = 16       # a partial line longer than any pane id is garbage: dropped


def is_pane_id(line: bytes) -> bool:
    """`%N`, N at most 9 ASCII digits (no regex: compiling one costs a hook ~1 ms)."""
    digits = line[1:]
    return line[:1] == b"%" and 0 < len(digits) <= 9 and digits.isdigit()


def path_in(runtime_dir) -> Path:
    return Path(runtime_dir) / NAME


def ring(runtime_dir, pane_id: str) -> bool:
    """Ring the doorbell of the sidecar whose runtime folder is `runtime_dir`, for `pane_id`.
    For other processes (a hook): opens only a FIFO that is there and the user's (never
    creates, never follows a symlink), never blocks, never raises. True when rung; False when
    there is no doorbell (ENOENT), no sidecar reading it (ENXIO), it is full (EAGAIN), or
    anything else is wrong with it."""
    line = pane_id.encode("ascii", "replace") + b"\n"
    if not is_pane_id(line[:-1]):
        return False
    path = path_in(runtime_dir)
    try:
        st = os.lstat(path)
        if not stat.S_ISFIFO(st.st_mode) or st.st_uid != os.getuid():
            return False  # a regular file or a symlink there: nothing is written to it
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        after = os.fstat(fd)
        if (after.st_dev, after.st_ino) != (st.st_dev, st.st_ino):
            return False  # replaced between the look and the open
        return os.write(fd, line) == len(line)  # < PIPE_BUF: whole or not at all
    except OSError:
        return False
    finally:
        os.close(fd)


class Doorbell:
    """The sidecar's end of the doorbell (see the module doc). Not thread-safe except
    `ring_here`, which another thread of the sidecar (the session-file watch) may call."""

    def __init__(self, runtime_dir):
        self.path = path_in(runtime_dir)
        self._rfd: int | None = None
        self._wfd: int | None = None
        self._partial = b""
        self._here: set[str] = set()  # rung from inside this process (ring_here)
        self._lock = threading.Lock()
        self.problem: str | None = None  # why there is no doorbell now (one line), if not

    # -- its FIFO ---------------------------------------------------------------------------------
    def open(self) -> bool:
        """Make the FIFO afresh (what is at its path goes: an old sidecar's FIFO, or a file or
        symlink someone put there) and open both ends. False, with `problem` set, when it
        cannot be had: the sidecar then goes on without it (reports at the listing)."""
        self.close()
        try:
            try:
                os.unlink(self.path)  # a symlink itself, never what it points to
            except FileNotFoundError:
                pass
            os.mkfifo(self.path, 0o600)
            rfd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            self._rfd = rfd
            wfd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            with self._lock:
                self._wfd = wfd
        except OSError as e:
            self.close()
            self.problem = f"no doorbell at {self.path} ({e.strerror or e})"
            return False
        self.problem = None
        return True

    def intact(self) -> bool:
        """Whether the path is still our FIFO (not removed, replaced by a file, a symlink or
        another FIFO): a hook rings only the FIFO at the path."""
        if self._rfd is None:
            return False
        try:
            st, ours = os.lstat(self.path), os.fstat(self._rfd)
        except OSError:
            return False
        return stat.S_ISFIFO(st.st_mode) and (st.st_dev, st.st_ino) == (ours.st_dev, ours.st_ino)

    def fileno(self) -> int | None:
        """The descriptor to wait on (readable: rung), or None without a doorbell."""
        return self._rfd

    def close(self) -> None:
        with self._lock:  # `ring_here` never writes to a descriptor closed (and reused) here
            for fd in (self._rfd, self._wfd):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self._rfd = self._wfd = None
        self._partial = b""

    def remove(self) -> None:
        """Close it and take its FIFO away (only ours: the path may be someone else's now)."""
        mine = self.intact()
        self.close()
        if mine:
            try:
                os.unlink(self.path)
            except OSError:
                pass

    # -- rings --------------------------------------------------------------------------------------
    def ring_here(self, pane_id: str) -> None:
        """A ring from inside the sidecar (another thread): its pane comes back from
        `take_here`, and the loop wakes."""
        with self._lock:
            self._here.add(pane_id)
            if self._wfd is not None:
                try:
                    os.write(self._wfd, b"\n")  # an empty line: a wake, no pane
                except OSError:
                    pass  # full: it wakes anyway

    def take_here(self) -> set[str]:
        with self._lock:
            here, self._here = self._here, set()
        return here

    def take(self) -> set[str]:
        """The pane ids rung since the last take: well-formed lines only, at most TAKE_BYTES
        read (the rest waits for the next take); a partial line is kept until it is complete."""
        if self._rfd is None:
            return set()
        try:
            data = os.read(self._rfd, TAKE_BYTES)
        except (BlockingIOError, InterruptedError):
            return set()
        except OSError:
            return set()
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > LINE_MAX:
            self._partial = b""
        return {line.decode("ascii") for line in lines if is_pane_id(line)}
