"""Where one sidecar keeps its FIFOs, lock, log and status: a private (0700) folder per server,
removed when that server ends.

Its home is beside the server's socket, in tmux's own folder (`/tmp/tmux-UID`, which tmux makes
0700 and checks is the user's): so every caller finds the same folder for a server, whatever
its environment (a hook run by the server, a shell over SSH), and no other user can make it
first. A socket in a shared folder (`-S /tmp/x`) falls back to `$XDG_RUNTIME_DIR`, then to
`/tmp/tmux-agentstate-UID`. A folder is only used when it is a real folder (never a symlink),
the user's, and closed to others; we never change the mode of what we did not make.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import socket as socketlib
import tempfile
import time
from pathlib import Path

from .folder import BESIDE_SOCKET, base_dir, server_dir, unsafe  # noqa: F401 (theirs)

RESTARTS_MAX = 5          # automatic starts allowed within RESTARTS_WINDOW seconds: a sidecar
RESTARTS_WINDOW = 60.0    # that dies more often than that is left down and said to be


def replace_whole(path: Path, text: str, prefix: str) -> bool:
    """Write `text` to `path` whole or not at all (a temporary file beside it, renamed over
    it: a reader never sees half); False when it could not be (a full disk: the last good
    one stays, and no partial file takes room). `prefix` names the temporary file, so what
    `forget_pane_text` takes away finds it."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


class RuntimeDirError(OSError):
    """A runtime folder that is not safe to use (one line says why)."""


def _private_folder(path: Path) -> None:
    """Make `path` (0700), or take it as it is if it is already a private folder of ours."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    why = unsafe(path)
    if why:
        raise RuntimeDirError(f"{why}; not using it (remove it if it is yours)")


class Runtime:
    def __init__(self, socket_path: str, base: Path | None = None):
        self.socket_path = socket_path
        self.dir = server_dir(socket_path, base)
        self._lock_fd: int | None = None

    def ensure(self) -> "Runtime":
        """Make the folder, private, noting which server it is for (so a later command can
        tell a folder whose server has ended); raises RuntimeDirError if a part of it is not
        safe."""
        try:
            for d in (self.dir.parent, self.dir):
                _private_folder(d)
        except RuntimeDirError:
            raise
        except OSError as e:
            raise RuntimeDirError(f"{e.filename}: {e.strerror}") from None
        note = self.dir / "socket"
        try:
            if not note.is_file() or note.read_text() != self.socket_path:
                note.write_text(self.socket_path)
        except OSError:  # a full disk: only pruning misses this folder (a sidecar still runs)
            pass
        return self

    @property
    def stopped_path(self) -> Path:
        """Present while the sidecar was stopped on purpose: hooks do not bring it back."""
        return self.dir / "stopped"

    @property
    def down_path(self) -> Path:
        """Why the sidecar was left down (it kept dying), for `doctor`, until one starts."""
        return self.dir / "down"

    @property
    def untold_path(self) -> Path:
        """A message the sidecar had for clients when none was attached: the next one is told."""
        return self.dir / "untold"

    def note_auto_start(self, now: float | None = None) -> bool:
        """Count an automatic (re)start; False when there were too many lately."""
        now = time.time() if now is None else now
        path = self.dir / "restarts"
        try:
            times = [float(t) for t in path.read_text().split()]
        except (OSError, ValueError):
            times = []
        times = [t for t in times if now - t < RESTARTS_WINDOW]
        if len(times) >= RESTARTS_MAX:
            return False
        try:
            path.write_text(" ".join(f"{t:.3f}" for t in [*times, now]))
        except OSError:  # a full disk: this start is not counted, and still made
            pass
        return True

    def hold_start_lock(self) -> None:
        """Serialise starts for this server: held until this process exits."""
        fd = os.open(self.dir / "start.lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._start_fd = fd

    def try_start_lock(self, timeout: float, give_up=lambda: False) -> bool:
        """hold_start_lock(), but waiting at most `timeout` seconds, and not at all once
        `give_up()` says so (a sidecar handing over that is being stopped meanwhile)."""
        fd = os.open(self.dir / "start.lock", os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._start_fd = fd
                return True
            except BlockingIOError:
                if give_up() or time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.05)

    def release(self) -> None:
        """Let go of the single-instance lock (a sidecar handing over to a new one)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    @property
    def python_path(self) -> Path:
        """The interpreter the last `start` ran with: where a sidecar whose own install is
        gone hands over to (the plugin's venv rebuilt in a new folder, say)."""
        return self.dir / "python"

    def remove(self) -> None:
        """The folder and all in it (FIFOs, lock, log, status): its server has ended."""
        shutil.rmtree(self.dir, ignore_errors=True)

    def forget_pane_text(self) -> None:
        """No sidecar runs (`stop`): nothing of the panes stays behind it, since the folder may
        outlive its server until a later command prunes it. The status file (pane addresses,
        what the sidecar made of each) and any pane's last bytes (`report`) go; the log holds no
        pane text (the sidecar logs rule ids, not prompt lines). Nor do the rows `stream`
        sends to other machines (pane_rows.py: panes.json) and those other hosts sent here
        (hosts/files.py: hosts.json), nor a half-written one of either."""
        for path in [self.status_path, self.status_path.with_suffix(".tmp"),
                     *self.dir.glob("recent-*"), *self.dir.glob("panes.json"),
                     *self.dir.glob(".panes-*"), *self.dir.glob("hosts.json"),
                     *self.dir.glob(".hosts-*")]:
            try:
                path.unlink()
            except OSError:  # gone already; anything else is the prune's to take
                pass

    @property
    def lock_path(self) -> Path:
        return self.dir / "sidecar.lock"

    @property
    def log_path(self) -> Path:
        return self.dir / "sidecar.log"

    @property
    def status_path(self) -> Path:
        return self.dir / "status.json"

    def acquire(self) -> bool:
        """Take the single-instance lock (held for the life of the process)."""
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._lock_fd = fd
        self._lock_named = False
        self.name_lock()
        return True

    def name_lock(self) -> None:
        """Write our pid into the lock we hold, if not done yet: a full disk at start leaves
        it unnamed (`running_pid` -1) until there is room."""
        if self._lock_fd is None or self._lock_named:
            return
        try:
            os.ftruncate(self._lock_fd, 0)
            os.pwrite(self._lock_fd, str(os.getpid()).encode(), 0)
            self._lock_named = True
        except OSError:
            pass

    def running_pid(self) -> int | None:
        """The pid holding the lock, or None if no sidecar runs for this server."""
        try:
            fd = os.open(self.lock_path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                text = os.read(fd, 32).decode(errors="replace").strip()
                if text.isdigit():
                    return int(text)
                from .. import procs  # a full disk kept the pid out of the file
                return procs.flock_holder(fd) or -1
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def recent_path(self, pane_id: str) -> Path:
        """Where the sidecar writes a pane's last bytes when `report` asks (SIGUSR1)."""
        return self.dir / f"recent-{pane_id.lstrip('%')}.raw"

    def write_status(self, data: dict) -> None:
        """Whole or not at all; OSError (a full disk) leaves no partial file taking room."""
        self.write_status_text(json.dumps(data, separators=(",", ":")))  # read by programs

    def write_status_text(self, text: str) -> None:
        """`write_status` of JSON text already made."""
        tmp = self.status_path.with_suffix(".tmp")
        try:
            tmp.write_text(text)
            os.replace(tmp, self.status_path)
        except OSError:
            try:
                tmp.unlink()
            except OSError:
                pass
            raise

    def read_status(self) -> dict | None:
        try:
            return json.loads(self.status_path.read_text())
        except (OSError, ValueError):
            return None


def server_alive(socket_path: str) -> bool:
    """Whether a tmux server listens on this socket (a connect, no tmux process). Only a socket
    that is gone or refuses counts as ended: a server too busy to accept at once is alive."""
    s = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
    s.settimeout(1.0)
    try:
        s.connect(socket_path)
        return True
    except OSError as e:
        return e.errno not in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTSOCK, errno.ENOTDIR)
    finally:
        s.close()


def tmux_socket_dir() -> Path:
    """Where tmux puts a server's socket when none is named by path (`-L`, the default)."""
    return Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"


def known_bases(socket_path: str | None = None) -> list[Path]:
    """Every folder that may hold our per-server folders (base_dir's choices): beside tmux's
    own sockets, beside the named or current server's, under $XDG_RUNTIME_DIR, the fallback."""
    sockets = [tmux_socket_dir() / "default"]
    current = os.environ.get("TMUX", "").split(",")[0]
    for path in (socket_path, current):
        if path:
            sockets.append(Path(path))
    bases = [Path(sock).parent / BESIDE_SOCKET for sock in sockets]
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        bases.append(Path(xdg) / "tmux-agentstate")
    bases.append(Path(tempfile.gettempdir()) / f"tmux-agentstate-{os.getuid()}")
    return list(dict.fromkeys(bases))


def prune_everywhere(socket_path: str | None = None) -> list[Path]:
    """prune_ended in every folder that may hold ours: what each command runs first, so a
    server that ended while no sidecar watched it (stopped, or killed) leaves no folder behind
    past the next command. Never fails: it is housekeeping."""
    removed = []
    for base in known_bases(socket_path):
        if unsafe(base) is None:  # only a private folder of ours is looked into
            try:
                removed += prune_ended(base)
            except OSError:
                pass
    return removed


def prune_ended(base: Path) -> list[Path]:
    """Remove the folders of servers that have ended without a sidecar to remove its own (it
    was stopped, or killed): no server on the socket they name, and no sidecar holding the
    lock."""
    removed = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    for d in entries:
        try:
            if d.is_symlink() or not d.is_dir() or d.stat().st_uid != os.getuid():
                continue
            socket_path = (d / "socket").read_text()
        except OSError:
            continue
        rt = Runtime(socket_path, base)
        if rt.dir != d or server_alive(socket_path) or rt.running_pid():
            continue
        if not _no_start_under_way(d):  # a new server on that socket, its sidecar starting
            continue
        rt.remove()
        removed.append(d)
    return removed


def _no_start_under_way(folder: Path) -> bool:
    """Whether no `start` holds the folder's start lock (it holds it until it has finished)."""
    try:
        fd = os.open(folder / "start.lock", os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
