"""tmux's control mode: one long-lived client (`tmux -C`) through which the sidecar sends its
commands, a line each, instead of a process per command.

The client dies with the process that started it (Linux: a parent-death signal). A control
client left behind by a killed sidecar stays attached, and tmux 3.3a's `kill-server` then waits
for it to flush output nobody reads: the server never exits (1 run in 5 of `kill -9` on the
sidecar, then `kill-server`).
"""
from __future__ import annotations

import ctypes
import math
import os
import select
import signal
import subprocess
import sys
import time


def _die_with_parent() -> None:
    """In the client, between fork and exec: SIGKILL when the sidecar's thread ends."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return fn


_PRCTL = _prctl()  # looked up once, here: the child may not import or load anything


def _readable(fd: int, timeout: float) -> bool:
    """Whether `fd` has something to read within `timeout` seconds. poll(), not select():
    select() cannot watch a descriptor numbered past 1024, which ours are with hundreds of
    panes piped (two descriptors each)."""
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(max(0, math.ceil(timeout * 1000))))


def control_quote(arg: str) -> str:
    """One argument for tmux's own command parser (a control-mode line, not a shell): single
    quotes stop `$VAR`, `~`, `;`, `{`, `#` comments; a quote itself goes in double quotes."""
    return "'" + arg.replace("'", "'\"'\"'") + "'"


class ControlClient:
    """A persistent `tmux -C` client. A request is one line of `;`-separated commands; tmux
    answers each command with its output between `%begin T N F` and `%end T N F` (`%error` if
    it failed, and then skips the rest of the line). Lines between blocks are notifications
    (`%session-changed`…), ignored, except `%exit`: the client is gone, and the ones that say
    what a pane listing shows may have changed (`NEWS`: a client may show another pane, a
    window came, went or was renamed): `news` is set, for the sidecar to list the panes again
    (a "done" badge goes as soon as the user looks; a new pane is watched at once).

    Attached with `ignore-size` (never sizes a window) and `no-output` (no `%output` copies of
    pane bytes). The one thing it changes that a user can see: its session counts as attached
    (`#{session_attached}`, "(attached)" in `tmux ls`) and it is listed by `list-clients`
    (with `#{client_control_mode}` 1, which the sidecar skips)."""

    TIMEOUT = 5.0
    # what may change what a pane listing shows, each sent to every control client: who
    # shows which pane (the first four, and a client that left), and which panes there are
    # and where (windows added, closed or moved; sessions made, closed or renamed). A window
    # renamed is news too: with automatic-rename (tmux's default) its name follows the
    # command in front of its active pane, so an agent started or left there is told at once
    NEWS = (b"%session-window-changed", b"%window-pane-changed", b"%client-session-changed",
             b"%session-changed", b"%client-detached",
             b"%window-add", b"%window-close", b"%window-renamed", b"%layout-change",
             b"%unlinked-window-", b"%sessions-changed", b"%session-renamed")

    def __init__(self, argv: list[str]):
        self.argv = argv          # tmux plus its -L/-S
        self.proc: subprocess.Popen | None = None
        self._buf, self._pos = b"", 0   # what tmux sent; read up to _pos
        self.session: str | None = None
        self.news = False
        # format subscriptions (tmux 3.2+, `refresh-client -B`): name → format, asked again at
        # each connect; what tmux last said of each (`%subscription-changed`), until taken
        self.subscriptions: dict[str, str] = {}
        self.subscribed: dict[str, str] = {}
        self.subscriptions_due = False  # not yet asked of this connection

    def connect(self, session: str) -> None:
        self.close()
        self.session = session
        self.proc = subprocess.Popen(
            [*self.argv, "-C", "attach-session", "-t", session, "-f", "ignore-size,no-output"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            bufsize=0, start_new_session=True,
            preexec_fn=_die_with_parent if _PRCTL is not None else None)
        self._buf, self._pos = b"", 0
        self.subscriptions_due = bool(self.subscriptions)

    @property
    def connected(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(1)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
            self.proc = None

    def run(self, commands: list[list[str]]) -> list[tuple[bool, str]]:
        """(ok, output) per command that ran: all of them, or up to the first failure.
        Raises ConnectionError if the client is gone or stops answering."""
        if any("\n" in a or "\r" in a for cmd in commands for a in cmd):
            raise ValueError("a control-mode line cannot carry a newline")
        line = " ; ".join(" ".join(control_quote(a) for a in cmd) for cmd in commands)
        if not self.connected:
            raise ConnectionError("control client is not running")
        try:
            self.proc.stdin.write(line.encode("utf-8", "surrogateescape") + b"\n")
        except OSError as e:
            raise ConnectionError(f"control client: {e}") from None
        deadline = time.monotonic() + self.TIMEOUT
        answers: list[tuple[bool, str]] = []
        while len(answers) < len(commands):
            head = self._line(deadline)
            if head.startswith(b"%exit"):
                self.close()
                raise ConnectionError("control client: " + head.decode(errors="replace"))
            if head.startswith(b"%begin ") and head.endswith(b" 1"):  # 1: our own command
                ok, body = self._block(head[len(b"%begin "):], deadline)
                answers.append((ok, body.decode("utf-8", "replace")))
                if not ok:
                    break
            else:
                self._notification(head)  # anything else is a notification or not ours
        return answers

    def poll(self) -> None:
        """Read the notifications that came while no command ran (never waits): between
        commands, every line tmux sends is one."""
        if not self.connected:
            return
        fd = self.proc.stdout.fileno()
        while _readable(fd, 0):
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self.close()
                return
            self._buf, self._pos = self._buf[self._pos:] + chunk, 0
        while True:
            i = self._buf.find(b"\n", self._pos)
            if i < 0:
                return
            head, self._pos = self._buf[self._pos:i], i + 1
            if head.startswith(b"%exit"):
                self.close()
                return
            self._notification(head)

    def _notification(self, head: bytes) -> None:
        if head.startswith(self.NEWS):
            self.news = True
        elif head.startswith(b"%subscription-changed "):
            # %subscription-changed NAME $S @W I %P ... : VALUE (for a session-wide format,
            # "- - -" for the window and pane parts); the value is the rest of the line
            name = head.split(b" ", 2)[1].decode("utf-8", "replace")
            _, sep, value = head.partition(b" : ")
            if name in self.subscriptions and sep:
                self.subscribed[name] = value.decode("utf-8", "replace")

    def subscribe_commands(self) -> list[list[str]]:
        """The commands that ask tmux for every subscription (after each connect: tmux
        forgets them with the client)."""
        return [["refresh-client", "-B", f"{name}::{fmt}"]
                for name, fmt in self.subscriptions.items()]

    def _block(self, guard: bytes, deadline: float) -> tuple[bool, bytes]:
        """A command's output, up to the `%end`/`%error` line that repeats its `%begin`'s time
        and command number exactly (pane text in a capture cannot know them in advance).
        Searched for in C, not line by line: a sweep's captures are thousands of lines; and
        read from an offset, since slicing the buffer per block would copy it per block."""
        ends = ((True, b"%end " + guard + b"\n"), (False, b"%error " + guard + b"\n"))
        while True:
            buf, pos = self._buf, self._pos
            for ok, token in ends:
                i = buf.find(token, pos)
                while i > pos and buf[i - 1] != 10:  # only at the start of a line
                    i = buf.find(token, i + 1)
                if i >= 0:
                    self._pos = i + len(token)
                    return ok, buf[pos:max(i - 1, pos)]
            self._fill(deadline)

    def _line(self, deadline: float) -> bytes:
        while True:
            i = self._buf.find(b"\n", self._pos)
            if i >= 0:
                raw, self._pos = self._buf[self._pos:i], i + 1
                return raw
            self._fill(deadline)

    def _fill(self, deadline: float) -> None:
        wait = deadline - time.monotonic()
        fd = self.proc.stdout.fileno()
        if wait <= 0 or not _readable(fd, wait):
            self.close()
            raise ConnectionError("control client: no answer")
        chunk = os.read(fd, 1 << 17)
        if not chunk:
            self.close()
            raise ConnectionError("control client: closed")
        self._buf, self._pos = self._buf[self._pos:] + chunk, 0
