import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# manifests a `manifests update` of the user's cached would override the bundled ones in every
# sidecar and CLI the tests start: a private, empty cache for the whole run
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="agentstate-test-cache-")


@pytest.fixture
def isolated_config(tmp_path, monkeypatch):
    """A private XDG_CONFIG_HOME so a user's own manifests never leak into a test."""
    cfg = tmp_path / "config"
    cfg.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return cfg


import itertools
import shlex
import shutil
import signal
import subprocess
import time

import libtmux

from tmux_agentstate.sidecar.runtime import Runtime
from tmux_agentstate.tmux import Tmux

_names = itertools.count()


def wait_for(fn, timeout=10.0, interval=0.05, message="condition"):
    """Poll `fn` until it returns something truthy; fail with the last value."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {message}; last value: {value!r}")


class TmuxServer:
    """A private tmux server for one test (its own socket, no user config)."""

    def __init__(self, name: str):
        self.name = name
        self.server = libtmux.Server(socket_name=name)
        self.tmux = Tmux(socket_name=name)
        self.cmd("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "120", "-y", "32")
        self.cmd("set-option", "-g", "remain-on-exit", "off")
        # a pane without a command is an interactive shell without the user's rc files: a test
        # types at its prompt, and an rc that is slow (pyenv's rehash waits 60 s on a lock a
        # killed shell left behind) must not stand between them
        self.cmd("set-option", "-g", "default-command", "exec bash --norc --noprofile")
        self.socket_path = self.tmux.socket()

    def cmd(self, *args) -> str:
        out = subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout.strip()

    def new_pane(self, command: str | None = None, *, rows=32, cols=120, env=None) -> str:
        """A new session of its own (so its size is exactly rows x cols) running `command`."""
        sname = f"s{next(_names)}"
        args = ["new-session", "-d", "-s", sname, "-x", str(cols), "-y", str(rows), "-P", "-F", "#{pane_id}"]
        for k, v in (env or {}).items():
            args += ["-e", f"{k}={v}"]
        if command:
            args.append(command)
        return self.cmd(*args)

    def option(self, pane: str, name: str) -> str:
        return self.cmd("display-message", "-p", "-t", pane, f"#{{{name}}}")

    def state(self, pane: str) -> str:
        return self.option(pane, "@agentstate")

    def kill(self):
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True)
        # tmux 3.3a leaves its socket file behind when it quits: a run of the suite left
        # thousands in /tmp/tmux-UID (no name is used twice)
        Path(self.socket_path).unlink(missing_ok=True)


@pytest.fixture
def tmux_server():
    srv = TmuxServer(f"agentstate-test-{os.getpid()}-{next(_names)}")
    runtime_dir = Runtime(srv.socket_path).dir
    yield srv
    srv.kill()
    shutil.rmtree(runtime_dir, ignore_errors=True)  # a sidecar killed by the test left it


class OuterClient:
    """A real tmux client of `server`, attached from inside a pane of a second tmux server (a
    pseudo-terminal of its own): `screen()` is what the user sees, status line included."""

    def __init__(self, server: TmuxServer, session: str = "main", cols=120, rows=32):
        self.server, self.outer = server, f"{server.name}-outer"
        env = dict(os.environ)
        env.pop("TMUX", None)
        subprocess.run(["tmux", "-L", self.outer, "-f", "/dev/null", "new-session", "-d", "-x",
                        str(cols), "-y", str(rows), f"tmux -L {server.name} attach -t {session}"],
                       env=env, check=True)
        self.outer_socket = subprocess.run(
            ["tmux", "-L", self.outer, "display-message", "-p", "#{socket_path}"],
            capture_output=True, text=True).stdout.strip()
        wait_for(lambda: self.name(), message="client attached")

    def name(self) -> str:
        names = self.server.cmd("list-clients", "-F", "#{?client_control_mode,,#{client_name}}")
        return next((n for n in names.split("\n") if n), "")

    def screen(self, escapes: bool = False) -> str:
        args = ["tmux", "-L", self.outer, "capture-pane", "-p", *(["-e"] if escapes else [])]
        return subprocess.run(args, capture_output=True, text=True).stdout

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.outer, "kill-server"], capture_output=True)
        if self.outer_socket:  # left behind, as the inner server's (TmuxServer.kill)
            Path(self.outer_socket).unlink(missing_ok=True)


class OutputTap:
    """Every byte a pane wrote, as tmux itself saw it: a control client of the test's own
    (`%output`, no sidecar in the way), so a test can tell what an agent sent from what the
    sidecar made of it. Attached with `ignore-size,read-only`: it never sizes or types."""

    def __init__(self, server: TmuxServer, pane: str):
        import threading
        session = server.cmd("display-message", "-p", "-t", pane, "#{session_name}")
        self.pane, self._chunks = pane, []
        self._proc = subprocess.Popen(
            ["tmux", "-L", server.name, "-C", "attach-session", "-t", session, "-f",
             "ignore-size,read-only"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        import re
        head = f"%output {self.pane} ".encode()
        octal = re.compile(rb"\\([0-7]{3})")  # tmux writes bytes < 0x20 and a backslash as \ooo
        for line in self._proc.stdout:
            if line.startswith(head):
                self._chunks.append(octal.sub(lambda m: bytes([int(m[1], 8)]), line[len(head):-1]))

    def data(self) -> bytes:
        return b"".join(list(self._chunks))

    def reports(self) -> list[str]:
        """The payload of every complete `OSC 7501` report the pane wrote, in order."""
        import re
        return [m.decode(errors="replace") for m in
                re.findall(rb"\x1b\]7501;([^\x07\x1b]*)(?:\x07|\x1b\\)", self.data())]

    def close(self) -> None:
        try:
            self._proc.stdin.close()  # a control client leaves when its input ends
            self._proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()
        self._reader.join(2)


class PtyClient:
    """A real tmux client in a pseudo-terminal of the test's own: `output()` is every byte
    written to its terminal (by tmux, and by the sidecar to the client's tty). It answers
    tmux's XTVERSION query (`CSI > q`) as `terminal` says, as a real terminal does."""

    def __init__(self, server: TmuxServer, session: str = "main", term: str = "xterm-256color",
                 terminal: str | None = None, cols=120, rows=32):
        import fcntl
        import pty
        import struct
        import termios
        import threading
        env = dict(os.environ, TERM=term)
        env.pop("TMUX", None)
        pid, fd = pty.fork()
        if pid == 0:  # the child: its terminal is the pty's other side
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            os.execvpe("tmux", ["tmux", "-L", server.name, "attach", "-t", session], env)
        self.server, self.pid, self.fd, self.terminal = server, pid, fd, terminal
        self._buf = bytearray()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        wait_for(lambda: self.name(), message="pty client attached")

    def _read(self) -> None:
        """The one user of the pty's fd, and the one to close it, after its last read: closed
        by another thread, its number is soon another file's (the pipe of the next command a
        test runs, say), and a read here would take that command's output."""
        import select
        answered = False
        try:
            while not self._stop.is_set():
                if not select.select([self.fd], [], [], 0.2)[0]:
                    continue
                data = os.read(self.fd, 65536)
                if not data:
                    return
                with self._lock:
                    self._buf += data
                    ask = not answered and self.terminal and b"\x1b[>q" in self._buf
                if ask:
                    answered = True
                    os.write(self.fd, b"\x1bP>|" + self.terminal.encode() + b"\x1b\\")
        except (OSError, ValueError):  # the client has gone: EIO
            return
        finally:
            os.close(self.fd)

    def name(self) -> str:
        rows = self.server.cmd("list-clients", "-F", "#{client_pid} #{client_name}").split("\n")
        return next((r.split(" ", 1)[1] for r in rows if r.split(" ")[0] == str(self.pid)), "")

    def output(self) -> bytes:
        with self._lock:
            return bytes(self._buf)

    def close(self) -> None:
        import signal as _signal
        self._stop.set()
        try:
            os.kill(self.pid, _signal.SIGTERM)
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        # the reader closes the fd as it ends (within its 0.2 s select); one still reading
        # after this keeps the fd open, so no other file can take its number
        self._reader.join(10)


@pytest.fixture
def pty_client(tmux_server):
    clients = []

    def attach(session="main", **kw):
        clients.append(PtyClient(tmux_server, session, **kw))
        return clients[-1]

    yield attach
    for c in clients:
        c.close()


@pytest.fixture
def run_dir(tmux_server, tmp_path):
    """A private runtime folder for the sidecars the plugin starts in this server (through
    the server's environment); whatever runs there is stopped at the end."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    tmux_server.cmd("set-environment", "-g", "XDG_RUNTIME_DIR", str(run))
    yield run
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)
    subprocess.run([sys.executable, "-m", "tmux_agentstate", "stop", "-L", tmux_server.name],
                   capture_output=True, env=env)


@pytest.fixture
def attached_client(tmux_server):
    clients = []

    def attach(session="main", cols=120, rows=32):
        clients.append(OuterClient(tmux_server, session, cols, rows))
        return clients[-1]

    yield attach
    for c in clients:
        c.close()


def replay_command(path, agent: str, hold: str = "exec sleep 600") -> str:
    """A pane command that plays a capture's bytes as the named agent, then holds the screen.
    Echo off, as the agent had it: tmux answers the capture's terminal queries (DA, XTVERSION)
    into the tty, and an echo of them would land mid-drawing and shift its relative moves."""
    return (f"env AGENTSTATE_AGENT={shlex.quote(agent)} sh -c "
            + shlex.quote(f"stty -echo; sleep 0.3; cat {shlex.quote(str(path))}; {hold}"))


class SidecarProcess:
    def __init__(self, server: TmuxServer, runtime_base, interval=0.3, intake="pipe"):
        self.server, self.interval, self.intake = server, interval, intake
        self.env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_base))
        self.env.pop("TMUX", None)
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tmux_agentstate", "watch", "-L", self.server.name,
             "--interval", str(self.interval), "--intake", self.intake], env=self.env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def runtime_dir(self):
        return Runtime(self.server.tmux.socket()).dir

    def status(self):
        return Runtime(self.server.tmux.socket()).read_status()

    def kill(self, sig=signal.SIGTERM):
        if self.proc is None or self.proc.stdout is None or self.proc.stdout.closed:
            return ""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        out = self.proc.stdout.read().decode(errors="replace") if self.proc and self.proc.stdout else ""
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        return out


@pytest.fixture
def sidecar(tmux_server, tmp_path):
    runtime_base = tmp_path / "run"
    runtime_base.mkdir(mode=0o700)
    procs = []

    def make(interval=0.3, intake="pipe"):
        sc = SidecarProcess(tmux_server, runtime_base, interval, intake)
        procs.append(sc)
        return sc

    yield make
    for sc in procs:
        sc.kill()
