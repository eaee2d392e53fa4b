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

import fcntl
import hashlib
import json
import os
import re
import shutil
import socket as socketlib
import stat
import tempfile
import time
from pathlib import Path

RESTARTS_MAX = 5          # automatic starts allowed within RESTARTS_WINDOW seconds: a sidecar
RESTARTS_WINDOW = 60.0    # that dies more often than that is left down and said to be
BESIDE_SOCKET = ".agentstate"  # our folder inside tmux's


class RuntimeDirError(OSError):
    """A runtime folder that is not safe to use (one line says why)."""


def unsafe(path: Path, shared_ok: bool = False) -> str | None:
    """Why `path` is no private folder of ours (None: it is): a symlink, not a folder, another
    user's, or open to others (with `shared_ok`: only writable by others counts)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return f"{path} does not exist"
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    if st.st_uid != os.getuid():
        return f"{path} belongs to uid {st.st_uid}, not to you"
    if st.st_mode & (0o022 if shared_ok else 0o077):
        return f"{path} is open to others (mode {st.st_mode & 0o777:o})"
    return None


def base_dir(socket_path: str | None = None) -> Path:
    """The folder that holds the per-server folders (see the module doc)."""
    if socket_path and unsafe(Path(socket_path).parent, shared_ok=True) is None:
        return Path(socket_path).parent / BESIDE_SOCKET
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and unsafe(Path(xdg), shared_ok=True) is None and os.access(xdg, os.W_OK):
        return Path(xdg) / "tmux-agentstate"
    return Path(tempfile.gettempdir()) / f"tmux-agentstate-{os.getuid()}"


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
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(socket_path).name)[:40] or "server"
        digest = hashlib.sha1(socket_path.encode()).hexdigest()[:8]
        self.dir = (base or base_dir(socket_path)) / f"{tag}-{digest}"
        self._lock_fd: int | None = None

    def ensure(self) -> "Runtime":
        """Make the folder, private; raises RuntimeDirError if a part of it is not safe."""
        try:
            for d in (self.dir.parent, self.dir):
                _private_folder(d)
        except RuntimeDirError:
            raise
        except OSError as e:
            raise RuntimeDirError(f"{e.filename}: {e.strerror}") from None
        return self

    def ensure_with_socket(self) -> "Runtime":
        """ensure(), and note which server this folder is for (so a later start can tell a
        folder whose server has ended)."""
        self.ensure()
        (self.dir / "socket").write_text(self.socket_path)
        return self

    @property
    def stopped_path(self) -> Path:
        """Present while the sidecar was stopped on purpose: hooks do not bring it back."""
        return self.dir / "stopped"

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
        path.write_text(" ".join(f"{t:.3f}" for t in [*times, now]))
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
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd
        return True

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
                return int(text) if text.isdigit() else -1
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def recent_path(self, pane_id: str) -> Path:
        """Where the sidecar writes a pane's last bytes when `report` asks (SIGUSR1)."""
        return self.dir / f"recent-{pane_id.lstrip('%')}.raw"

    def write_status(self, data: dict) -> None:
        tmp = self.status_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, self.status_path)

    def read_status(self) -> dict | None:
        try:
            return json.loads(self.status_path.read_text())
        except (OSError, ValueError):
            return None


def server_alive(socket_path: str) -> bool:
    """Whether a tmux server listens on this socket (a connect, no tmux process)."""
    s = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
    try:
        s.connect(socket_path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def prune_ended(base: Path) -> list[Path]:
    """Remove the folders of servers that have ended (their sidecar was killed, so it could
    not remove its own): no server on the socket they name, and no sidecar holding the lock."""
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
        rt.remove()
        removed.append(d)
    return removed
