"""One SSH session to a host's stream: the ssh process in its own process group, its stdout
read in lines with a deadline, never one over hostproto.MAX_LINE nor more than HOST_BYTES a
window, its stderr's last lines kept (to say why it ended), killed whole.

One long-lived session per host, no ControlMaster: everything (the rows, the pings, the
requests and their replies) travels over this one session's stdin and stdout, so there is no
per-request connection for a master to save; and a master's socket would be a file another
process of the user's could reuse, a master process would outlive a killed sidecar. OpenSSH
alone authenticates (BatchMode: never a prompt); no port of ours listens anywhere.
"""
from __future__ import annotations

import os
import select
import shlex
import signal
import subprocess
import time

from ...core import hostproto
from ...core.hostproto import ProtocolError, clean_text
from ...tmux.control import _PRCTL, _die_with_parent
from .why import ended_why

SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ServerAliveInterval=5", "-o",
               "ServerAliveCountMax=3", "-o", "ConnectTimeout=10", "-T")
HOST_BYTES = 32 << 20                  # what one host may send per BUDGET_WINDOW...
BUDGET_WINDOW = 60.0                   # ...(a snapshot of MAX_ROWS rows is about 1 MB)
STDERR_KEPT = 5                        # ssh's last lines, each cut to STDERR_LINE
STDERR_LINE = 300


def remote_line(words: list[str]) -> str:
    """The command for the host's shell (ssh sends one string, which that shell splits):
    each word quoted, a leading `~/` left for that shell to expand."""
    out = []
    for word in words:
        if word.startswith("~/"):
            out.append("~/" + shlex.quote(word[2:]) if word[2:] else "~/")
        else:
            out.append(shlex.quote(word))
    return " ".join(out)


def ssh_argv(ssh: list[str], dest: str, remote_command: list[str]) -> list[str]:
    return [*ssh, *SSH_OPTIONS, dest, "--", remote_line([*remote_command, "stream"])]


class TooMuch(Exception):
    """A host over its byte budget."""


class SshSession:
    def __init__(self, ssh: list[str], dest: str, remote_command: list[str]):
        self.dest = dest
        self.argv = ssh_argv(ssh, dest, remote_command)
        self.proc: subprocess.Popen | None = None
        self.tail: list[str] = []
        self._buf = bytearray()
        self._poll = select.poll()
        self._budget_start, self._budget = time.monotonic(), 0

    def start(self) -> str:
        """"" once ssh runs, else why it cannot."""
        try:
            # its own process group (killed whole); SIGKILL if the thread that started it ends
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                bufsize=0, start_new_session=True,
                preexec_fn=_die_with_parent if _PRCTL is not None else None)
        except OSError as e:
            return f"cannot run {self.argv[0]}: {e.strerror or e} (set @agentstate-ssh)"
        os.set_blocking(self.proc.stdin.fileno(), False)  # a frozen host never blocks a writer
        self._poll.register(self.proc.stdout.fileno(), select.POLLIN)
        self._poll.register(self.proc.stderr.fileno(), select.POLLIN)
        return ""

    def read(self, timeout: float) -> list[bytes] | None:
        """The complete lines that came within `timeout` seconds ([] none); None: the stream
        ended. ProtocolError: a line too long; TooMuch: over the byte budget."""
        out, err = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        lines: list[bytes] = []
        for fd, _ in self._poll.poll(max(1, int(timeout * 1000))):
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                data = b""
            if fd == err:
                if not data:
                    self._poll.unregister(err)
                self._keep_tail(data)
                continue
            if not data:
                return lines or None  # lines first; the end at the next call
            now = time.monotonic()
            if now - self._budget_start > BUDGET_WINDOW:
                self._budget_start, self._budget = now, 0
            self._budget += len(data)
            if self._budget > HOST_BYTES:
                raise TooMuch(f"{self.dest} sent more than {HOST_BYTES >> 20} MB in "
                              f"{BUDGET_WINDOW:.0f}s: refused, reconnecting later")
            lines += self._split(data)
        return lines

    def _split(self, data: bytes) -> list[bytes]:
        self._buf += data
        *lines, rest = bytes(self._buf).split(b"\n")
        self._buf = bytearray(rest)
        if len(self._buf) > hostproto.MAX_LINE or any(len(x) > hostproto.MAX_LINE for x in lines):
            raise ProtocolError(f"a message over {hostproto.MAX_LINE} bytes")
        return lines

    def _keep_tail(self, data: bytes) -> None:
        text = data.decode("utf-8", "replace")
        lines = [clean_text(x.strip(), STDERR_LINE) for x in text.splitlines()]
        self.tail = (self.tail + [x for x in lines if x])[-STDERR_KEPT:]

    def send(self, data: bytes) -> bool:
        proc = self.proc
        if proc is None:
            return False
        try:
            return os.write(proc.stdin.fileno(), data) == len(data)
        except (OSError, ValueError):  # full (a frozen host), or closed
            return False

    def ended(self, was_connected: bool) -> tuple[str, str]:
        """(status, why) of a session whose stdout closed: ssh's exit and its last words."""
        try:
            code = self.proc.wait(2)
        except subprocess.TimeoutExpired:
            code = None
        try:  # what ssh said last, once stdout closed
            while select.select([self.proc.stderr], [], [], 0.2)[0]:
                data = os.read(self.proc.stderr.fileno(), 1 << 16)
                if not data:
                    break
                self._keep_tail(data)
        except (OSError, ValueError):
            pass
        return ended_why(self.dest, code, self.tail, was_connected)

    def kill(self) -> None:
        """ssh and whatever it started (a ProxyCommand). Any thread may call it: the reading
        thread sees the end and closes the pipes (`close`)."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            proc.wait(2)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        """Killed, and its pipes closed: by the thread that reads them, once it is done."""
        self.kill()
        proc = self.proc
        if proc is None:
            return
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                f.close()
            except OSError:
                pass
