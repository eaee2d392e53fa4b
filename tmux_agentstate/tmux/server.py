"""`Tmux`: one tmux server, and the commands run on it (see the package's doc for how)."""
from __future__ import annotations

import errno
import os
import socket
import time

import libtmux

from .control import ControlClient
from .errors import _SERVER_GONE, ServerGone, TmuxError
from .objects import CLIENT_FORMAT, Batch, ClientInfo, _client_row
from .reading import Reading


def default_socket_path() -> str:
    """Where tmux puts its default server's socket (no -L/-S, outside tmux)."""
    return os.path.join(os.environ.get("TMUX_TMPDIR") or "/tmp", f"tmux-{os.getuid()}", "default")


def listening(path: str) -> bool:
    """Whether a server may be there (a connect, no tmux process, nothing sent): False only
    when none is (no socket, or one nobody accepts on); a busy or forbidden one is left to
    the command to say."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(2)
        try:
            s.connect(path)
        except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError):
            return False
        except OSError as e:
            return e.errno != errno.ENOTSOCK
    return True


# tmux sends a command line to its server in one message of at most 16 KB (MAX_IMSGSIZE, less
# its headers) and refuses a longer one: "command too long" (3.3a: past 16,364 bytes of
# NUL-terminated arguments, measured). A control-mode line has no such limit.
COMMAND_BYTES = 15_000


def by_size(commands, limit: int = COMMAND_BYTES) -> list[list[list[str]]]:
    """The commands in groups that each fit one tmux command line (a command too long on its
    own goes alone, for tmux to refuse)."""
    groups: list[list[list[str]]] = [[]]
    size = 0
    for cmd in commands:
        need = sum(len(a.encode("utf-8", "surrogateescape")) + 1 for a in cmd) + 2  # and ";"
        if groups[-1] and size + need > limit:
            groups.append([])
            size = 0
        groups[-1].append(cmd)
        size += need
    return groups


class Tmux(Reading):
    """One tmux server, addressed by -L name, -S path, or the $TMUX of the caller."""

    RETRY = 30.0  # seconds between tries to start a control client that failed at once

    def __init__(self, socket_name: str | None = None, socket_path: str | None = None):
        if not socket_name and not socket_path:
            env = os.environ.get("TMUX", "")
            if env:
                socket_path = env.split(",")[0]
        self.server = libtmux.Server(socket_name=socket_name, socket_path=socket_path)
        self.socket_name, self.socket_path = socket_name, socket_path
        self.control: ControlClient | None = None
        self._control_ok, self._control_retry_at = False, 0.0
        self._subscriptions_refused = False  # tmux said no to refresh-client -B (before 3.2)
        self.commands_sent = 0  # each one is a line in the user's show-messages log

    def use_control(self) -> None:
        """Run commands through one persistent control-mode client from now on (see
        `ControlClient`); until it connects, and whenever it cannot, one process per call."""
        argv = ["tmux", *(["-L", self.socket_name] if self.socket_name else []),
                *(["-S", self.socket_path] if self.socket_path else [])]
        self.control = ControlClient(argv)

    def close(self) -> None:
        if self.control is not None:
            self.control.close()

    @property
    def label(self) -> str:
        if self.socket_path:
            return self.socket_path
        return f"-L {self.socket_name}" if self.socket_name else "default"

    def run(self, *commands: list[str]) -> list[str]:
        """Run commands in one tmux process; stdout lines. Raises TmuxError/ServerGone."""
        if not commands:
            return []
        if self.control is not None:
            outs = self._run_control(commands)
            if outs is not None:
                return [line for out in outs if out for line in out.split("\n")]
        return self._spawn(*commands)

    def _spawn(self, *commands: list[str]) -> list[str]:
        """Run commands in tmux processes of their own: as few as fit its command-line limit,
        one after another, stopping at the first that fails (as tmux does within one)."""
        out: list[str] = []
        for group in by_size(commands):
            out += self._spawn_one(group)
        return out

    def _spawn_one(self, commands: list[list[str]]) -> list[str]:
        self.commands_sent += len(commands)
        args: list[str] = []
        for cmd in commands:
            if args:
                args.append(";")
            args.extend(cmd)
        try:
            res = self.server.cmd(*args)
        except libtmux.exc.LibTmuxException as e:
            raise TmuxError(str(e)) from None
        if res.returncode != 0:
            msg = " ".join(res.stderr) or f"tmux exited {res.returncode}"
            if any(gone in msg for gone in _SERVER_GONE):
                raise ServerGone(msg)
            raise TmuxError(msg)
        return res.stdout

    def _run_control(self, commands) -> list[str] | None:
        """Each command's output, through the control client. None: not possible now (not
        connected and cannot connect, a newline in an argument): run the usual way."""
        c = self.control
        if not c.connected:
            if time.monotonic() < self._control_retry_at:
                return None
            sessions = self._spawn(["list-sessions", "-F", "#{session_id}"])
            if not sessions:
                return None
            c.connect(sessions[0])
        self.commands_sent += len(commands)
        try:
            if c.subscriptions and c.subscriptions_due:
                self._subscribe(c)
            answers = c.run([list(cmd) for cmd in commands])
        except ValueError:
            return None
        except ConnectionError:
            c.close()
            # its session was killed (we attach to another at the next call), or control mode
            # does not work here: then not more than one try every RETRY seconds
            self._control_retry_at = time.monotonic() + (0 if self._control_ok else self.RETRY)
            self._control_ok = False
            return None
        self._control_ok = True
        for ok, out in answers:
            if not ok:
                raise TmuxError(out.replace("\n", " ") or "tmux command failed")
        return [out for _, out in answers]

    def apply(self, batch: Batch) -> None:
        if batch:
            self.run(*batch.commands)

    def clients(self) -> list[ClientInfo]:
        """The clients alone (to tell them something): one list-clients, no list-panes."""
        return [c for c in map(_client_row, self.run(["list-clients", "-F", CLIENT_FORMAT])) if c]

    @property
    def control_session(self) -> str | None:
        """The session our control client is attached to (it counts in #{session_attached})."""
        c = self.control
        return c.session if c is not None and c.connected else None

    def control_fd(self) -> int | None:
        """The control client's output, while it runs: readable when tmux has news (or the
        client ended). The sidecar's waits wake on it."""
        c = self.control
        return c.proc.stdout.fileno() if c is not None and c.connected else None

    def news_pending(self) -> bool:
        """Whether news came in with a command's answer and is not yet taken (`news`)."""
        return self.control is not None and self.control.news

    def news(self) -> bool:
        """Whether tmux said, since the last call, that what a pane listing shows may have
        changed (the control client's notifications: `ControlClient.NEWS`); always False
        without one: the periodic listing has it then."""
        c = self.control
        if c is None or not c.connected:
            return False
        try:
            c.poll()
        except OSError:
            return False
        changed, c.news = c.news, False
        return changed

    def subscribe(self, name: str, fmt: str) -> bool:
        """Have tmux tell the control client whenever `fmt` (in its session's context, so a
        user option reads the global value) expands to something new, at once and then within
        a second of each change: no command per sweep. False without a control client."""
        c = self.control
        if c is None:
            return False
        c.subscriptions[name] = fmt
        c.subscriptions_due = True
        if c.connected:
            try:
                self._subscribe(c)
            except (ConnectionError, ValueError):
                c.close()  # the next command connects again, and subscribes again
        return True

    def _subscribe(self, c: ControlClient) -> None:
        """Every subscription, once per connect (tmux forgets them with the client). Right
        after a connect, tmux may not have attached the client yet ("no current client"):
        then again with the next command. Refused otherwise (tmux older than 3.2): never
        again, and `subscribed` says None."""
        self.commands_sent += len(c.subscriptions)
        answers = c.run(c.subscribe_commands())
        if len(answers) == len(c.subscriptions) and all(ok for ok, _ in answers):
            c.subscriptions_due = False
        elif not any("no current client" in out for _, out in answers):
            c.subscriptions_due, self._subscriptions_refused = False, True

    def subscribed(self) -> dict[str, str] | None:
        """What the subscriptions said since the last call (name → value), then forgotten:
        read from the notifications already sent, never a command. None: this tmux has no
        subscriptions (or no control client)."""
        c = self.control
        if c is None or self._subscriptions_refused:
            return None
        if c.connected:
            try:
                c.poll()
            except OSError:
                pass
        said, c.subscribed = c.subscribed, {}
        return said

    def server_pid(self) -> int:
        out = self.run(["display-message", "-p", "#{pid}"])
        return int(out[0]) if out and out[0].isdigit() else 0

    def socket(self) -> str:
        return self.run(["display-message", "-p", "#{socket_path}"])[0]

    def global_options(self, prefix: str = "@agentstate") -> dict[str, str]:
        """User options (`@agentstate-*`) as set in tmux.conf."""
        out = {}
        for line in self.run(["show-options", "-g"]):
            if line.startswith(prefix):
                name, _, value = line.partition(" ")
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                    value = value[1:-1]
                out[name] = value
        return out

    def unset_everywhere(self, pane: tuple[str, ...] = (), window: tuple[str, ...] = (),
                         globals_: tuple[str, ...] = ()) -> None:
        """Unset these options on every pane, every window and globally: one round trip, or
        as few as tmux's command-line limit allows (`_spawn`)."""
        batch = Batch()
        for line in self.run(["list-panes", "-a", "-F", "#{pane_id} #{window_id}"]):
            pane_id, _, window_id = line.partition(" ")
            for name in pane:
                batch.set_pane(pane_id, name, None)
            for name in window:
                batch.set_window(window_id, name, None)
        for name in globals_:
            batch.set_global(name, None)
        self.apply(batch)

    def jump_to(self, pane_id: str, client: str | None = None) -> None:
        """Show a pane in the client: its session, its window, the pane itself."""
        self.run(["select-window", "-t", pane_id], ["select-pane", "-t", pane_id])
        try:  # the popup's own client; none when run outside a client (tests, scripts)
            self.run(["switch-client", *(["-c", client] if client else []), "-t", pane_id])
        except TmuxError:
            if client:
                raise

    def send_text(self, pane_id: str, text: str, enter: bool = True) -> None:
        """Type text literally (`-l`: no key names, no format), then Enter."""
        cmds = [["send-keys", "-t", pane_id, "-l", "--", text]]
        if enter:
            cmds.append(["send-keys", "-t", pane_id, "Enter"])
        self.run(*cmds)

    def pane_ids(self) -> set[str]:
        return set(self.run(["list-panes", "-a", "-F", "#{pane_id}"]))

    def pipe_pane(self, pane_id: str, shell_command: str | None) -> None:
        """Send the pane's output to a shell command (`pipe-pane -O`), or close its pipe."""
        self.run(["pipe-pane", "-t", pane_id, *(["-O", shell_command] if shell_command else [])])

    def send_keys(self, pane_id: str, keys: list[str]) -> None:
        """Press tmux key names (a manifest's [answers], e.g. "Escape", "1")."""
        self.run(["send-keys", "-t", pane_id, *keys])
