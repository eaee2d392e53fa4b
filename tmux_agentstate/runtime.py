"""Where one sidecar keeps its FIFOs, lock, log and status: a private (0700) folder per server."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path


def base_dir() -> Path:
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg) and os.access(xdg, os.W_OK):
        return Path(xdg) / "tmux-agentstate"
    return Path(tempfile.gettempdir()) / f"tmux-agentstate-{os.getuid()}"


class Runtime:
    def __init__(self, socket_path: str, base: Path | None = None):
        self.socket_path = socket_path
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(socket_path).name)[:40] or "server"
        digest = hashlib.sha1(socket_path.encode()).hexdigest()[:8]
        self.dir = (base or base_dir()) / f"{tag}-{digest}"
        self._lock_fd: int | None = None

    def ensure(self) -> "Runtime":
        for d in (self.dir.parent, self.dir):
            d.mkdir(mode=0o700, exist_ok=True)
            st = d.stat()
            if st.st_uid != os.getuid():
                raise PermissionError(f"{d} belongs to another user")
            if st.st_mode & 0o077:
                os.chmod(d, 0o700)
        return self

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

    def write_status(self, data: dict) -> None:
        tmp = self.status_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, self.status_path)

    def read_status(self) -> dict | None:
        try:
            return json.loads(self.status_path.read_text())
        except (OSError, ValueError):
            return None
