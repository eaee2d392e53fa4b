"""Where a tmux server's runtime folder is (runtime.py keeps what is in it): computed the same
way by every process from the server's socket path. Apart from runtime.py because a hook finds
its sidecar's doorbell from here (doorbell.py), and a hook's start-up is what the agent waits
for: nothing here imports more than `os`, `re`, `stat` and `pathlib` (`_sha1`, a built-in
module, where there is one; hashlib costs a hook ~2 ms more)."""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

BESIDE_SOCKET = ".agentstate"  # our folder inside tmux's


def _sha1_hex(data: bytes) -> str:
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover (a Python built without it)
        from hashlib import sha1
    return sha1(data).hexdigest()


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
    """The folder that holds the per-server folders (see runtime.py's doc)."""
    if socket_path and unsafe(Path(socket_path).parent, shared_ok=True) is None:
        return Path(socket_path).parent / BESIDE_SOCKET
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and unsafe(Path(xdg), shared_ok=True) is None and os.access(xdg, os.W_OK):
        return Path(xdg) / "tmux-agentstate"
    import tempfile  # only here: ~3 ms a hook need not pay
    return Path(tempfile.gettempdir()) / f"tmux-agentstate-{os.getuid()}"


def server_dir(socket_path: str, base: Path | None = None) -> Path:
    """The runtime folder of the server at `socket_path` (not made: see Runtime.ensure)."""
    tag = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(socket_path).name)[:40] or "server"
    digest = _sha1_hex(socket_path.encode())[:8]
    return (base or base_dir(socket_path)) / f"{tag}-{digest}"
