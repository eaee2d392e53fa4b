"""The process module: the only one that reads the process table (psutil, /proc).

A pane's agent is the tty's foreground process group, not `#{pane_current_command}`: Codex from
npm shows `node`, wrappers hide the agent one level down, and when the agent exits the shell is
back in front while the agent's last prompt is still on screen.
"""
from __future__ import annotations

from dataclasses import dataclass

import psutil

HINT_VAR = "AGENTSTATE_AGENT"


@dataclass(frozen=True)
class Foreground:
    pgid: int
    name: str
    cmdline: tuple[str, ...]
    hint: str | None                   # AGENTSTATE_AGENT from the environment, if any
    children: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (name, cmdline) one level down


def foreground_pgid(pane_pid: int) -> int | None:
    """tpgid of the pane's tty, from /proc/<pane_pid>/stat (cheap: one small read a sweep)."""
    try:
        with open(f"/proc/{pane_pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # comm may hold spaces and parentheses: split after the last ')'
    fields = stat[stat.rfind(b")") + 2:].split()
    try:
        tpgid = int(fields[5])
    except (IndexError, ValueError):
        return None
    return tpgid if tpgid > 0 else None


def _describe(proc: psutil.Process) -> tuple[str, tuple[str, ...], str | None]:
    with proc.oneshot():
        name = proc.name()
        cmdline = tuple(proc.cmdline())
    try:
        hint = proc.environ().get(HINT_VAR)
    except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
        hint = None
    return name, cmdline, hint


def foreground(pane_pid: int) -> Foreground | None:
    """What runs in front in this pane, or None if it cannot be read."""
    pgid = foreground_pgid(pane_pid)
    if pgid is None:
        return None
    try:
        leader = psutil.Process(pgid)
        name, cmdline, hint = _describe(leader)
        kids = []
        for child in leader.children()[:8]:
            try:
                cname, ccmd, chint = _describe(child)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            hint = hint or chint
            kids.append((cname, ccmd))
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    return Foreground(pgid, name, cmdline, hint, tuple(kids))
