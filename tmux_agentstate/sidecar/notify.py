"""When to tell the user: on entering `blocked` (and, opted in, when a turn finishes).

A redrawing prompt can flap blocked → working → blocked in a second, so each (pane, state)
has a cooldown (a remote pane's name carries its host: publish.remote_key); a client already looking at the pane is not told what it can see.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import time
from dataclasses import dataclass, field


@dataclass
class NotifyConfig:
    enabled: bool = True
    on_idle: bool = False            # also when a turn finishes (working → idle)
    cooldown: float = 30.0
    command: str = ""                # @agentstate-notify-command: argv, pane text as arguments
    bell: bool = True
    terminal: str = "auto"           # @agentstate-notify-terminal: desktop.KINDS

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "NotifyConfig":
        c = cls()
        flag = lambda name, d: options.get(name, "on" if d else "off").lower() in ("on", "1", "yes", "true")  # noqa: E731
        c.enabled = flag("@agentstate-notify", True)
        c.on_idle = flag("@agentstate-notify-idle", False)
        c.bell = flag("@agentstate-notify-bell", True)
        try:
            c.cooldown = float(options.get("@agentstate-notify-cooldown", c.cooldown))
        except ValueError:
            pass
        c.command = options.get("@agentstate-notify-command", "")
        c.terminal = options.get("@agentstate-notify-terminal", c.terminal).strip().lower()
        return c


@dataclass
class Notifier:
    config: NotifyConfig
    _last: dict = field(default_factory=dict)  # (pane, state) → time of the last notification

    def should_notify(self, pane: str, old: str | None, new: str | None, now: float,
                      seen_at: float | None = None) -> bool:
        """`seen_at`: when a client last showed the pane. Someone who looked at it within the
        cooldown has seen the prompt come and go: a redraw does not call them back."""
        if not self.config.enabled or new is None or new == old:
            return False
        if seen_at is not None and now - seen_at < self.config.cooldown:
            return False
        wanted = new == "blocked" or (self.config.on_idle and new == "idle" and old == "working")
        if not wanted:
            return False
        last = self._last.get((pane, new))
        if last is not None and now - last < self.config.cooldown:
            return False
        self._last[(pane, new)] = now
        return True

    def forget(self, pane: str) -> None:
        for key in [k for k in self._last if k[0] == pane]:
            del self._last[key]

    def run_command(self, pane: str, address: str, agent: str, state: str, line: str,
                    host: str = "") -> None:
        """The user's command, with pane text as separate arguments and env vars: never a
        shell string built from pane text. A remote pane's: `pane` is that host's %N,
        `address` host:session:window.pane, and AGENTSTATE_HOST its host ("" for a local)."""
        if not self.config.command:
            return
        try:
            argv = shlex.split(self.config.command) + [pane, agent, state, line]
        except ValueError:
            return
        env = dict(os.environ, AGENTSTATE_PANE=pane, AGENTSTATE_TARGET=address,
                   AGENTSTATE_AGENT_NAME=agent, AGENTSTATE_STATE=state, AGENTSTATE_LINE=line,
                   AGENTSTATE_HOST=host)
        try:
            subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            pass


def ring(tty: str) -> None:
    """The terminal bell on a client's tty."""
    write_tty(tty, b"\a")


def write_tty(tty: str, data: bytes, patience: float = 0.2) -> bool:
    """Bytes to a client's terminal, never blocking the sidecar for long: a terminal that does
    not read (a frozen ssh) gets what fits, then, if a sequence was cut, its terminator, so the
    terminal does not take tmux's next output as part of it."""
    if not data:
        return False
    try:
        fd = os.open(tty, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return False
    deadline = time.monotonic() + patience
    sent = 0
    try:
        while sent < len(data):
            try:
                sent += os.write(fd, data[sent:])
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.005)
        if 0 < sent < len(data):
            try:
                os.write(fd, b"\x1b\\")  # ST: ends an OSC or DCS cut short
            except OSError:
                pass
    except OSError:
        return False
    finally:
        os.close(fd)
    return sent == len(data)
