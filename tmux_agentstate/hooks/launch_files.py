"""The private files a launch hands its agent (Droid's `--settings`): made new in our per-user
runtime folder's `launch/` (0700, files 0600, never through a symlink), and removed once the
agent has exited, by a detached process or, if that was killed, by the next launch."""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

LAUNCH_FOLDER = "launch"  # in the per-user runtime folder (sidecar/folder.py's base_dir)


def launch_folder(environ) -> Path:
    """Our per-user runtime folder's `launch/` (made private, 0700), beside the pane's tmux
    server's folders; outside tmux $XDG_RUNTIME_DIR's or /tmp/tmux-agentstate-UID. Raises
    OSError when a part of it is not a private folder of ours (one line says why)."""
    from ..sidecar.folder import base_dir, unsafe
    socket_path = (environ.get("TMUX") or "").split(",")[0] or None
    base = base_dir(socket_path)
    for d in (base, base / LAUNCH_FOLDER):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
        why = unsafe(d)
        if why:
            raise OSError(why)
    return base / LAUNCH_FOLDER


def write_launch_settings(agent: str, settings: dict, environ) -> Path:
    """A new file `AGENT-PID-RANDOM.json` (mode 0600, never over an existing one) in
    launch_folder, after removing those whose launcher is gone."""
    folder = launch_folder(environ)
    prune_launch_settings(folder)
    path = folder / f"{agent}-{os.getpid()}-{secrets.token_hex(4)}.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(settings, f, indent=1)
    except OSError:
        _unlink(path)
        raise
    return path


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        pass
    return True


def prune_launch_settings(folder: Path) -> list[Path]:
    """Remove the files of launches that have ended (their launcher's pid is in the name): what
    a remover that was killed left behind."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        parts = name.split("-")
        if len(parts) == 3 and parts[1].isdigit() and name.endswith(".json"):
            if int(parts[1]) != os.getpid() and not _pid_alive(int(parts[1])):
                if _unlink(folder / name):
                    removed.append(folder / name)
    return removed


def _unlink(path: Path) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def remove_when_gone(pid: int, path: Path) -> bool:
    """Remove `path` once process `pid` (this one, which becomes the agent) has exited: a
    detached grandchild (its own session, no terminal, every descriptor closed) waits on a
    pidfd. False when it could not be started: the next launch prunes the file."""
    try:
        child = os.fork()
    except OSError:
        return False
    if child == 0:  # pragma: no cover - runs in the forked processes
        try:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            _wait_gone_then_unlink(pid, path)
        finally:
            os._exit(0)
    try:
        os.waitpid(child, 0)
    except OSError:
        pass
    return True


def _wait_gone_then_unlink(pid: int, path: Path) -> None:  # pragma: no cover - a grandchild
    import select
    import signal
    import time
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP):
        signal.signal(sig, signal.SIG_IGN)
    os.chdir("/")  # holds no folder of the user's
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        pidfd = None  # gone already
    except (AttributeError, OSError):  # no pidfd (Linux < 5.3): look every 2 s
        pidfd = -1
    # nothing of the launcher's stays open (a pipe someone reads to its end, its terminal)
    if pidfd is not None and pidfd >= 0:
        os.closerange(3, pidfd)
        os.closerange(pidfd + 1, 1 << 16)
    else:
        os.closerange(3, 1 << 16)
    if pidfd is not None and pidfd >= 0:
        select.select([pidfd], [], [])  # readable once the process has exited
    elif pidfd == -1:
        while _pid_alive(pid):
            time.sleep(2)
    _unlink(path)
