"""The status shim's side of the new pty (hooks/status_shim.py): the keeper, which leads the
pty's session like a shell would, and the agent it starts in front there.

The keeper exists for job control: the agent's process group has its parent (the keeper) in its
own session, so it is not orphaned, and a Ctrl-Z (Claude Code suspends with `kill(0, SIGTSTP)`)
stops it instead of being discarded by the kernel. The keeper tells the shim, one line each on
a pipe: the agent's pid (P), that it runs (E: exec'd), each stop (S) and its exit status (X).
"""
from __future__ import annotations

import fcntl
import os
import signal
import termios

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
HANDLED = FORWARDED + (signal.SIGHUP, signal.SIGTSTP, signal.SIGCONT, signal.SIGWINCH, signal.SIGCHLD)
# reset in the agent before exec: Python ignores some, and an ignored signal stays ignored
RESET = (signal.SIGPIPE, signal.SIGTTOU, signal.SIGTTIN, signal.SIGTSTP, signal.SIGXFSZ,
         signal.SIGINT, signal.SIGQUIT, signal.SIGHUP)


def _claim_for(pid: int, env: dict) -> None:
    """The launch recorded "TOKEN SHIMPID" on its pane (proof of origin: hooks/report.py checks
    that the agent running a hook is the launched pid); the agent is this pid: record it instead,
    only while the pane still holds that record, and give the agent its own pid."""
    import re
    import subprocess

    from ..core.origin import LAUNCH_OPTION, LAUNCH_PID_ENV, TOKEN, TOKEN_ENV
    token, launched = env.get(TOKEN_ENV) or "", env.get(LAUNCH_PID_ENV) or ""
    pane, socket = env.get("TMUX_PANE") or "", (env.get("TMUX") or "").split(",")[0]
    if not (TOKEN.fullmatch(token) and launched.isdigit() and re.fullmatch(r"%\d+", pane)
            and socket):
        return
    env[LAUNCH_PID_ENV] = str(pid)
    subprocess.run(["tmux", "-S", socket, "if-shell", "-F", "-t", pane,
                    f"#{{==:#{{{LAUNCH_OPTION}}},{token} {launched}}}",
                    f"set-option -p -t {pane} {LAUNCH_OPTION} '{token} {pid}'"],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=5)


def _agent(slave: int, program: str, argv: list[str], env: dict) -> None:
    """In the forked agent: its own process group, in front on the new pty; then exec."""
    try:
        os.setpgid(0, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        for sig in RESET:
            signal.signal(sig, signal.SIG_DFL)
        try:
            _claim_for(os.getpid(), env)
        except Exception:  # noqa: BLE001 - OSError, a timeout: the launch's record stays, so
            pass  # the agent's hooks will not count; its screen (and its OSC reports) still do
        os.execvpe(program, argv, env)
    except BaseException as e:  # noqa: BLE001 - nothing may return into the shim's loop
        try:
            os.write(2, f"tmux-agentstate launch: cannot start {program}: {e}\r\n".encode())
        finally:
            os._exit(127)


def keeper_main(slave: int, status_w: int, program: str, argv: list[str], env: dict) -> None:
    """In the forked keeper: lead the new pty's session, start the agent in front on it, and
    tell the shim (a line on `status_w`) its pid (P), that it runs (E: exec'd), each stop (S)
    and its exit status (X)."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in HANDLED:
            signal.signal(sig, signal.SIG_DFL)
        for sig in (signal.SIGTTOU, signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a shell's stance: the agent is in front, and
            # a hangup never ends us: we stay to tell the shim the agent's exit status
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        exec_r, exec_w = os.pipe()  # close-on-exec: its end says the agent runs (or died)
        pid = os.fork()
        if pid == 0:
            os.close(exec_r)
            _agent(slave, program, argv, env)
        os.close(exec_w)

        def hangup(*_):  # our pty's master closed, and the shim may be gone (SIGKILL): the
            try:         # agent's hangup is ours to pass on, as a shell passes it to its jobs
                os.killpg(pid, signal.SIGHUP)
            except OSError:
                pass
        signal.signal(signal.SIGHUP, hangup)
        try:
            os.setpgid(pid, pid)  # both sides set it: whichever runs first (the shells' way)
        except OSError:
            pass
        try:
            os.tcsetpgrp(slave, pid)
        except OSError:
            pass
        os.write(status_w, b"P%d\n" % pid)
        os.read(exec_r, 1)
        os.write(status_w, b"E\n")
        while True:
            _, status = os.waitpid(pid, os.WUNTRACED)
            if os.WIFSTOPPED(status):
                os.write(status_w, b"S\n")
                continue
            os.write(status_w, b"X%d\n" % status)
            code = 0
            break
    finally:
        os._exit(code)
