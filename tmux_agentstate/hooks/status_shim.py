"""`launch --status-shim AGENT`: the agent on a terminal of its own, whose Program Status query
(`OSC 7501 ; ?`) we answer, so it writes its own state reports (OSC 7501) into the pane's bytes.

Claude Code 2.1.33x asks `ESC ] 7501 ; ? BEL` and right after it a DA1 (`ESC [ c`) as its
end-of-probe marker; tmux answers the DA1 and never the query, so the agent settles on "not
supported" before anything outside the pane could answer. Here the agent writes into a pty we
hold: we see the query in its output and put the reply into its input *before* we hand the DA1
on to tmux, so the reply is always first. Everything else is copied both ways unchanged.

    pane tty ── shim (this process: the pane's foreground job; its tty in raw mode)
                  └─ keeper (leads the new pty's session, like a shell; waits on the agent)
                       └─ agent (its own process group, in front on the new pty)

The keeper (shim_keeper.py) is there for job control: when the agent stops (Ctrl-Z) it tells
us, and we stop too, in the pane's shell, the way the agent would have without us.
Window size (at start, on SIGWINCH), SIGINT/SIGTERM/SIGQUIT/SIGUSR1/SIGUSR2 (to the agent),
SIGHUP and a closed pane (to its process group), SIGTSTP/SIGCONT and the exit status (a signal's
death is died again) are passed on. Our tty is put back as it was at exit, on a crash too
(only SIGKILL cannot be caught; `stty sane` then).

Run as `python -m tmux_agentstate.hooks.status_shim PROGRAM ARGV0 [ARGS...]` by launch, with the
agent's environment plus SHIM_ENV (which the agent does not get): `procs.foreground` looks
through a leader carrying it to the agent behind it. Imports stay small: this process lives as
long as the agent.
"""
from __future__ import annotations

import errno
import fcntl
import os
import select
import signal
import sys
import termios
import tty

from .shim_keeper import FORWARDED, HANDLED, keeper_main

SHIM_ENV = "AGENTSTATE_STATUS_SHIM"   # in the shim's own environment only (procs looks through)
QUERY = b"\x1b]7501;?"                # the Program Status support query (its terminator follows)
REPLY = b"\x1b]7501;?\x1b\\"          # "supported": an OSC 7501 whose data starts with "?"
CHUNK = 65536
INPUT_LIMIT = 1 << 20                 # bytes for the agent held while it does not read: then
                                      # we stop reading the pane (tmux holds the rest)


class QueryWatch:
    """Counts the Program Status queries in a byte stream that arrives in pieces (a query may
    be split across two reads)."""

    def __init__(self):
        self._tail = b""

    def feed(self, data: bytes) -> int:
        buf = self._tail + data
        found = buf.count(QUERY)
        keep = 0  # the longest end of buf that starts a query (to finish in the next piece)
        for n in range(min(len(QUERY) - 1, len(buf)), 0, -1):
            if QUERY.startswith(buf[-n:]):
                keep = n
                break
        self._tail = buf[-keep:] if keep else b""
        return found


def _winsize(fd: int) -> bytes | None:
    try:
        return fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
    except OSError:
        return None


class Shim:
    def __init__(self, program: str, argv: list[str], env: dict):
        self.program, self.argv, self.env = program, argv, env
        self.agent = 0            # the agent's pid (= its process group), once the keeper says
        self.status: int | None = None
        self.saved = None         # our tty's modes before raw mode
        self.to_agent = bytearray()
        self.pane_open = True     # our tty still gives input
        self.master_open = True   # the agent's pty (closed when the pane is: its hangup)
        self.pane_writable = True
        self.watch = QueryWatch()

    # -- our terminal ------------------------------------------------------------------------
    def raw(self) -> None:
        try:
            if self.saved is None:
                self.saved = termios.tcgetattr(0)
            tty.setraw(0, termios.TCSANOW)
        except (OSError, termios.error):
            pass  # the pane is gone (a SIGCONT comes with its hangup): nothing to set

    def restore(self) -> None:
        if self.saved is not None:
            try:
                termios.tcsetattr(0, termios.TCSAFLUSH, self.saved)
            except (OSError, termios.error):
                pass

    def sync_size(self) -> None:
        size = _winsize(0) if self.master_open else None
        if size is not None:
            try:
                fcntl.ioctl(self.master, termios.TIOCSWINSZ, size)
            except OSError:
                pass

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> int:
        self.master, slave = os.openpty()
        try:
            termios.tcsetattr(slave, termios.TCSANOW, termios.tcgetattr(0))
        except (OSError, termios.error):
            pass
        size = _winsize(0)
        if size is not None:
            fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
        status_r, status_w = os.pipe()
        wake_r, wake_w = os.pipe()
        for fd in (wake_r, wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wake_w)  # before the fork: nothing the pane sends is lost
        for sig in HANDLED:
            signal.signal(sig, lambda *_: None)  # the wakeup fd carries them to the loop
        keeper = os.fork()
        if keeper == 0:
            os.close(self.master)
            os.close(status_r)
            keeper_main(slave, status_w, self.program, self.argv, self.env)
        os.close(slave)
        os.close(status_w)
        os.set_blocking(self.master, False)
        try:
            self.raw()
            self.loop(status_r, wake_r)
        finally:
            self.restore()
        os.waitpid(keeper, 0)
        return self.status if self.status is not None else (1 << 8)

    def loop(self, status_r: int, wake_r: int) -> None:
        lines = b""
        while self.status is None:
            reads = [wake_r, status_r] + ([self.master] if self.master_open else [])
            if self.pane_open and len(self.to_agent) < INPUT_LIMIT:
                reads.append(0)
            writes = [self.master] if self.to_agent and self.master_open else []
            try:
                readable, writable, _ = select.select(reads, writes, [])
            except InterruptedError:
                continue
            if wake_r in readable:
                self.signals(os.read(wake_r, 64))
            if self.master_open and self.master in readable:
                self.master_open = self.from_agent()
            if 0 in readable:
                self.from_pane()
            if self.master_open and self.master in writable:
                self.flush_to_agent()
            if status_r in readable:
                data = os.read(status_r, 4096)
                if not data:  # the keeper died without a word
                    self.status = 1 << 8
                lines += data
                while b"\n" in lines:
                    line, lines = lines.split(b"\n", 1)
                    self.keeper_said(line)
        # the agent is gone: what it wrote last is still in the pty (read it; a process it
        # left behind may hold the pty open, so only while more comes at once)
        while self.master_open and select.select([self.master], [], [], 0.05)[0]:
            self.master_open = self.from_agent()

    def keeper_said(self, line: bytes) -> None:
        kind, value = line[:1], line[1:]
        if kind == b"P":
            self.agent = int(value)
        elif kind == b"E":  # the agent runs: take its name (see name_as)
            name_as(self.program)
        elif kind == b"X":
            self.status = int(value)
        elif kind == b"S":  # the agent stopped (Ctrl-Z): so do we, in the pane's shell, by the
            if os.getsid(0) == os.getpgrp():  # same signal ($? 148 as without us). With no
                self.kill(signal.SIGCONT, group=True)  # shell above us (we are the pane's
                return  # command) a stop would be discarded: the agent goes on instead
            self.restore()
            signal.signal(signal.SIGTSTP, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTSTP)
            signal.signal(signal.SIGTSTP, lambda *_: None)
            # continued: the SIGCONT that woke us is handled by signals() (raw, size, agent)

    def signals(self, got: bytes) -> None:
        for sig in got:
            if sig == signal.SIGWINCH:
                self.sync_size()
            elif sig == signal.SIGCONT:
                self.raw()
                self.sync_size()
                self.kill(signal.SIGCONT, group=True)
            elif sig == signal.SIGHUP:
                self.kill(signal.SIGHUP, group=True)
            elif sig == signal.SIGTSTP:
                self.kill(signal.SIGTSTP, group=True)
            elif sig in FORWARDED:
                self.kill(sig)

    def kill(self, sig: int, group: bool = False) -> None:
        if self.agent:
            try:
                (os.killpg if group else os.kill)(self.agent, sig)
            except OSError:
                pass

    def from_agent(self) -> bool:
        try:
            data = os.read(self.master, CHUNK)
        except BlockingIOError:
            return True
        except OSError:  # EIO: no process holds the pty any more
            return False
        if not data:
            return False
        if self.watch.feed(data) and len(self.to_agent) < INPUT_LIMIT:
            # into the agent's input before the DA1 that follows the query reaches tmux (one
            # reply per read: a program that floods queries gets no flood of replies)
            self.to_agent += REPLY
            self.flush_to_agent(wait=0.2)
        if self.pane_writable:
            try:
                self.write_all(data)
            except OSError:  # the pane is gone: keep reading so the agent never blocks
                self.pane_writable = False
        return True

    @staticmethod
    def write_all(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]

    def from_pane(self) -> None:
        try:
            data = os.read(0, CHUNK)
        except OSError as e:
            if e.errno == errno.EINTR:
                return
            data = b""
        if not data:  # hung up: the pane closed. So does the agent's terminal, as it would have
            self.pane_open = False  # without us: SIGHUP to it, then its reads end
            self.kill(signal.SIGHUP, group=True)
            if self.master_open:
                self.master_open = False
                os.close(self.master)
            return
        self.to_agent += data
        self.flush_to_agent()

    def flush_to_agent(self, wait: float = 0.0) -> None:
        while self.to_agent:
            try:
                n = os.write(self.master, self.to_agent[:CHUNK])
            except BlockingIOError:
                if wait <= 0 or not select.select([], [self.master], [], wait)[1]:
                    return
                continue
            except OSError:
                self.to_agent.clear()
                return
            del self.to_agent[:n]


def show_as(program: str) -> None:
    """Make this process's command line read `AGENT (tmux-agentstate status shim)`: tmux names
    a pane's command (`#{pane_current_command}`, so a window's automatic name) after argv[0]
    of the pane's foreground, which would read `python` instead of the agent. The argv area is
    overwritten in place (as setproctitle does), never past its end; where /proc does not say
    where it is, nothing changes."""
    try:
        import ctypes
        fields = open("/proc/self/stat", "rb").read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (stat fields 48, 49)
        title = os.path.basename(program).encode(errors="replace") + b"\0(tmux-agentstate status shim)"
        if end - start > 1 and start:
            ctypes.memmove(start, title[:end - start - 1].ljust(end - start, b"\0"), end - start)
    except (OSError, ValueError, IndexError, AttributeError):
        pass


def name_as(program: str) -> None:
    """Take the agent's name as this process's own (`comm`, what `ps` and `top` show) once the
    agent runs: the sidecar notices what is in front of a pane changed by the name of its
    foreground's leader (procs.foreground_key), and the launch before us was `python` too."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, os.path.basename(program).encode(errors="replace")[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def exit_like(status: int) -> int:
    """Leave the way the agent left: its exit code, or death by its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL, signal.SIGPIPE,
                   signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM):
            if sig != signal.SIGKILL:
                signal.signal(sig, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
            os.kill(os.getpid(), sig)
        return 128 + sig
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or not (os.isatty(0) and os.isatty(1)):
        print("usage: python -m tmux_agentstate.hooks.status_shim PROGRAM ARGV0 [ARGS...] "
              "(on a terminal)", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env.pop(SHIM_ENV, None)
    show_as(argv[1])
    try:
        status = Shim(argv[0], argv[1:], env).run()  # our tty is back as it was, whatever happened
    except KeyboardInterrupt:  # a Ctrl-C before our tty was raw
        return 130
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        print(f"tmux-agentstate launch: the status shim failed: {type(e).__name__}: {e}",
              file=sys.stderr)
        return 1
    return exit_like(status)


if __name__ == "__main__":
    sys.exit(main())
