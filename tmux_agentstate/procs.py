"""The process module: the only one that reads the process table (psutil, /proc).

A pane's agent is the tty's foreground process group, not `#{pane_current_command}`: Codex from
npm shows `node`, wrappers hide the agent one level down, and when the agent exits the shell is
back in front while the agent's last prompt is still on screen.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import psutil

from .core.safe_read import read_head, read_json

HINT_VAR = "AGENTSTATE_AGENT"


@dataclass(frozen=True)
class Foreground:
    pgid: int
    name: str
    cmdline: tuple[str, ...]
    hint: str | None                   # AGENTSTATE_AGENT from the environment, if any
    children: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (name, cmdline) one level down
    pids: tuple[int, ...] = ()         # the leader and its children
    home: str | None = None            # HOME in the leader's environment
    codex_home: str | None = None      # CODEX_HOME there, if set
    cwd: str | None = None             # the leader's working folder
    shim: bool = False                 # the leader is our status shim (SHIM_VAR in its env)


def _read_small(path: str, size: int = 4096) -> bytes | None:
    """One read of a small /proc file; os.open, not open(): no file object per pane per
    sweep (half the cost). None when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            return os.read(fd, size)
        finally:
            os.close(fd)
    except OSError:
        return None


def foreground_pgid(pane_pid: int) -> int | None:
    """tpgid of the pane's tty, from /proc/<pane_pid>/stat (cheap: one small read a sweep)."""
    stat = _read_small(f"/proc/{pane_pid}/stat")
    if stat is None:
        return None
    # comm may hold spaces and parentheses: split after the last ')'
    fields = stat[stat.rfind(b")") + 2:].split()
    try:
        tpgid = int(fields[5])
    except (IndexError, ValueError):
        return None
    return tpgid if tpgid > 0 else None


def parent_pid(pid: int) -> int | None:
    """A process's parent, from /proc/<pid>/stat (None: gone, or no /proc)."""
    stat = _read_small(f"/proc/{pid}/stat", 512)
    if stat is None:
        return None
    try:
        return int(stat[stat.rfind(b")") + 2:].split()[1])
    except (IndexError, ValueError):
        return None


def flock_holder(fd: int) -> int | None:
    """The process holding an exclusive flock on the file open as `fd`, from /proc/locks
    (for a lock whose holder could not write its pid into it: a full disk)."""
    try:
        st = os.fstat(fd)
        with open("/proc/locks", "rb") as f:
            table = f.read(1 << 20)
    except OSError:
        return None
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}".encode()
    for row in table.splitlines():
        fields = row.split()
        if len(fields) >= 6 and fields[1] == b"FLOCK" and fields[3] == b"WRITE" \
                and fields[5] == where and fields[4].isdigit():
            return int(fields[4])
    return None


def foreground_key(pane_pid: int) -> tuple[int, bytes] | None:
    """What is in front, cheaply: the tty's foreground process group and its leader's name.
    The name changes on exec, the group does not: `exec claude` in a shell (or `bash -c`
    exec'ing into `env … agent` as a pane starts) is a new foreground in the same group."""
    pgid = foreground_pgid(pane_pid)
    if pgid is None:
        return None
    stat = _read_small(f"/proc/{pgid}/stat", 512) or b"()"
    return pgid, stat[stat.find(b"(") + 1:stat.rfind(b")")]


def stdout_targets(pids) -> dict[str, int]:
    """{what each process's stdout is (a path, a pipe:[…]): pid}, for these processes: one
    readlink each (the tmux server's `pipe-pane` children write their FIFO as stdout)."""
    out = {}
    for pid in pids or ():
        try:
            out[os.readlink(f"/proc/{pid}/fd/1")] = pid
        except OSError:
            continue  # gone, or not ours to read
    return out


def child_pids(pid: int) -> frozenset | None:
    """A process's children: one read of /proc/<pid>/task/<pid>/children where the kernel
    has it (psutil would scan every process); None when the process is gone."""
    found = _read_children(f"/proc/{pid}/task/{pid}/children")
    try:  # None: a kernel without that file, or the process is gone
        return found if found is not None else frozenset(
            c.pid for c in psutil.Process(pid).children())
    except psutil.Error:
        return None


def children_text(pid: int) -> bytes | None:
    """The kernel's list of a process's children, as text (a change is told without a set
    of pids made each time)."""
    return _read_all(f"/proc/{pid}/task/{pid}/children")


def _read_children(path: str) -> frozenset | None:
    """The pids in a /proc/…/children file; None when it cannot be read."""
    data = _read_all(path)
    return None if data is None else frozenset(int(p) for p in data.split())


def _read_all(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            data = b""
            while chunk := os.read(fd, 65536):
                data += chunk
            return data
        finally:
            os.close(fd)
    except OSError:
        return None


def tty_size(tty: str) -> tuple[int, int] | None:
    """(rows, cols) of a pane's terminal as the kernel has it: a resize is seen without asking
    tmux. None when it cannot be read."""
    import fcntl
    import struct
    import termios
    try:
        fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        rows, cols = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))[:2]
    except OSError:
        return None
    finally:
        os.close(fd)
    return (rows, cols) if rows and cols else None


def _describe(proc: psutil.Process) -> tuple[str, tuple[str, ...], str | None, dict]:
    with proc.oneshot():
        name = proc.name()
        cmdline = tuple(proc.cmdline())
    try:
        env = proc.environ()
    except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
        env = {}
    return name, cmdline, env.get(HINT_VAR), env


SHIM_VAR = "AGENTSTATE_STATUS_SHIM"  # hooks/status_shim.py: a leader that runs the agent on a pty


def foreground(pane_pid: int) -> Foreground | None:
    """What runs in front in this pane, or None if it cannot be read. Behind our status shim
    (its own environment says so) that is what runs in front on the shim's pty: the agent,
    whose pids, home and hint the session file, version and proof of origin are about."""
    fg = _foreground(pane_pid)
    if fg is None or not fg.shim:
        return fg
    try:  # the shim's child leads the pty's session (its keeper); its tty's foreground
        keepers = [c.pid for c in _children(psutil.Process(fg.pgid)) if os.getsid(c.pid) == c.pid]
    except (psutil.Error, OSError):
        keepers = []
    inner = _foreground(keepers[0]) if keepers else None
    return inner if inner is not None and not inner.shim else fg


def _children(proc: psutil.Process) -> list[psutil.Process]:
    """A process's children, in pid order, from the kernel's lists (a read per thread); not
    psutil's `children()`, which reads every process's stat (a cold start with 200 panes:
    half its CPU)."""
    try:  # a child is listed under the thread that started it (a runtime's worker thread)
        tasks = os.listdir(f"/proc/{proc.pid}/task")
    except FileNotFoundError:
        raise psutil.NoSuchProcess(proc.pid) from None
    except OSError:
        return proc.children()
    lists = [_read_children(f"/proc/{proc.pid}/task/{task}/children") for task in tasks]
    if all(found is None for found in lists):  # a kernel without those files
        return proc.children()
    pids = set().union(*(found for found in lists if found))
    out = []
    for pid in sorted(pids):
        try:
            out.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            continue
    return out


def _foreground(pane_pid: int) -> Foreground | None:
    pgid = foreground_pgid(pane_pid)
    if pgid is None:
        return None
    try:
        leader = psutil.Process(pgid)
        name, cmdline, hint, env = _describe(leader)
        try:
            cwd = leader.cwd()
        except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
            cwd = None
        kids, pids = [], [pgid]
        for child in _children(leader)[:8]:
            try:
                if os.getpgid(child.pid) != pgid:
                    continue  # a job of its own (stopped with C-z, or in the background)
                cname, ccmd, chint, _ = _describe(child)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
                continue
            hint = hint or chint
            kids.append((cname, ccmd))
            pids.append(child.pid)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    return Foreground(pgid, name, cmdline, hint, tuple(kids), tuple(pids), env.get("HOME"),
                      env.get("CODEX_HOME"), cwd, bool(env.get(SHIM_VAR)))


def agent_version(fg: Foreground | None) -> str | None:
    """The agent's release, from the package it runs out of: the `package.json` of the npm
    package that holds its program (`node …/@anthropic-ai/claude-code/cli.js`, Codex's native
    binary under `@openai/codex/vendor/`, opencode's `opencode-linux-x64/bin/`), or a Python
    venv's `<command>*.dist-info` (aider). No process is run. None when it cannot tell."""
    if fg is None:
        return None
    programs = []
    for pid in fg.pids:  # what each process executes (a native binary, or the interpreter)...
        try:
            programs.append(os.readlink(f"/proc/{pid}/exe"))
        except OSError:
            pass
    for argv in (fg.cmdline, *(c for _, c in fg.children)):
        programs += [a for a in argv[:2] if a.startswith("/")]  # ...and the script it runs
    for program in programs:
        version = _npm_version(program) or _dist_version(program)
        if version:
            return version
    return None


def _npm_version(program: str) -> str | None:
    parts = os.path.realpath(program).split("/")
    if "node_modules" not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index("node_modules")  # the innermost package
    root = parts[:at + 2 + (at + 1 < len(parts) and parts[at + 1].startswith("@"))]
    package = read_json("/".join(root + ["package.json"]), 1 << 20)
    version = package.get("version") if isinstance(package, dict) else None
    return version if isinstance(version, str) and len(version) < 40 else None


def _dist_version(program: str) -> str | None:
    """A console script in a venv's bin/: the version of the venv's distribution that
    declares that script (aider's script is `aider`, its distribution `aider_chat`). The
    interpreter itself declares nothing, so `python -m x` gives None."""
    script = os.path.basename(program)
    venv = os.path.dirname(os.path.dirname(program))
    if not script or not os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        return None
    import glob
    for info in sorted(glob.glob(os.path.join(venv, "lib", "python*", "site-packages",
                                              f"{glob.escape(script)}*.dist-info"))):
        name, _, rest = os.path.basename(info)[:-len(".dist-info")].partition("-")
        entry_points = (read_head(os.path.join(info, "entry_points.txt")) or b"").decode(
            "utf-8", "replace")
        if rest and re.search(rf"^\[console_scripts\][^\[]*^{re.escape(script)}\s*=",
                              entry_points, re.M | re.S):
            return rest
    return None


def claude_session_files(fg: Foreground) -> list[str]:
    """Where Claude Code's session file of this foreground would be: one per pid of it (the
    sidecar watches these for changes: sidecar/sessions.py)."""
    home = fg.home or os.path.expanduser("~")
    return [os.path.join(home, ".claude", "sessions", f"{pid}.json") for pid in fg.pids]


def claude_session(fg: Foreground) -> tuple[dict, float] | None:
    """Claude Code's own `~/.claude/sessions/<pid>.json` (status idle|busy|waiting) and its
    mtime. Undocumented and read-only: any shape is tolerated, anything odd (a FIFO, a device,
    a huge or deeply nested file: safe_read) gives None."""
    for path in claude_session_files(fg):
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        data = read_json(path)
        if isinstance(data, dict):
            return data, mtime
    return None


def would_run(path: str) -> tuple[str, list[str]]:
    """(process name, argv) of the process that running the program at `path` starts, as the
    kernel makes it: a script's `#!` interpreter with the script after it (`#!/usr/bin/env X`:
    X), else the program itself. A Python console script runs as its venv's python."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        head = b""
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if words and os.path.basename(words[0]) == "env":
            words = [w for w in words[1:] if not w.startswith("-")][:1]
        if words:
            return os.path.basename(words[0]), [words[0], path]
    return os.path.basename(path), [path]


def script_version(path: str) -> str | None:
    """The release of the Python console script at `path` (a symlink such as pipx's is
    followed), from its venv's dist-info; None when it is not one."""
    return _dist_version(os.path.realpath(path))


def installed_version(command: str, timeout: float = 5.0) -> tuple[str | None, str | None]:
    """(path on PATH, version) of an agent CLI, from `COMMAND --version` (stdin closed, bounded
    in time); (None, None) when it is not on PATH, version None when it did not say."""
    import shutil
    import subprocess
    import tempfile
    path = shutil.which(command)
    if path is None:
        return None, None
    try:
        # in an empty folder of its own: some CLIs make project files in their working folder
        # even for --version (Letta Code's .letta/), which must not land in the user's
        with tempfile.TemporaryDirectory(prefix="agentstate-version-") as cwd:
            out = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=timeout, stdin=subprocess.DEVNULL, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return path, None
    m = re.search(r"\d+\.\d+\.\d+", out.stdout + " " + out.stderr)
    return path, m.group(0) if m else None


def open_files(pids, pattern: re.Pattern) -> list[str]:
    """The files these processes hold open whose path matches (from /proc/PID/fd)."""
    found = []
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if pattern.search(target) and target not in found:
                found.append(target)
    return found


def started_at(pid: int) -> float | None:
    """When a process started (unix seconds)."""
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def ancestors(pid: int | None = None) -> list[int]:
    """The pids above a process (ours by default), its parent first; [] if it cannot be read."""
    try:
        return [p.pid for p in psutil.Process(pid).parents()]
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return []
