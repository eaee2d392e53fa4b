"""A real OpenSSH server on 127.0.0.1 for the tests of remote hosts and ssh panes, with keys
made for the test, and "remote" tmux servers, each under its own TMUX_TMPDIR (what a host's
default tmux server is, seen from a login on that host).

    sshd = Sshd(tmp_path)            # listens on 127.0.0.1:<free port>
    sshd.host("h1", tmpdir=r1)       # an ssh_config alias whose logins see TMUX_TMPDIR=r1
    sshd.ssh                         # the ssh command line: "ssh -F <its ssh_config>"
    remote = RemoteTmux(r1)          # that host's default tmux server

Every alias reaches the same sshd; what tells the hosts apart is the TMUX_TMPDIR its logins
get (ssh_config SetEnv, sshd_config AcceptEnv), hence each its own default tmux server.
No address but 127.0.0.1, no port but the one picked here, no key but the test's.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
ROOT = Path(__file__).resolve().parent.parent
# our command as a host has it installed: the checkout's own environment (the wheel's tests
# install one elsewhere and name it through @agentstate-remote-command)
REMOTE_COMMAND = str(ROOT / ".venv" / "bin" / "tmux-agentstate")


def need_sshd() -> None:
    """Skip where no sshd is installed, except in CI, which installs it (.ci/run): there a
    missing sshd is a failure, not a skip that hides every remote test."""
    if os.access(SSHD, os.X_OK):
        return
    if os.environ.get("CI"):
        pytest.fail(f"{SSHD} is missing; .ci/run installs openssh-server")
    pytest.skip("no sshd (apt-get install openssh-server)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


class Sshd:
    def __init__(self, folder: Path,
                 accept_env: tuple[str, ...] = ("TMUX_TMPDIR", "AGENTSTATE_*",
                                                "PYENV_REHASH_TIMEOUT")):
        need_sshd()
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        host_key = self.folder / "host_key"
        self.host_key_pub = _keygen(host_key)
        self.user_key = self.folder / "user_key"
        (self.folder / "authorized_keys").write_text(_keygen(self.user_key) + "\n")
        self.port = free_port()
        self.known_hosts = self.folder / "known_hosts"
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {self.host_key_pub}\n")
        self.config = self.folder / "ssh_config"
        self.config.write_text("")
        self.log = self.folder / "sshd.log"
        (self.folder / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
            f"AuthorizedKeysFile {self.folder / 'authorized_keys'}\n"
            f"PidFile {self.folder / 'sshd.pid'}\nStrictModes no\nUsePAM no\n"
            f"PermitRootLogin yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            f"AcceptEnv {' '.join(accept_env)}\nPrintMotd no\nLogLevel VERBOSE\n")
        os.makedirs("/run/sshd", exist_ok=True)  # its privilege separation folder
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self.folder / "sshd_config")],
                                     stdout=open(self.log, "wb"), stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"sshd did not start: {self.log.read_text()[-2000:]}")
                time.sleep(0.05)
        raise RuntimeError("sshd did not listen within 10 s")

    @property
    def ssh(self) -> str:
        """The ssh command line for @agentstate-ssh (and for a pane that runs ssh)."""
        return f"ssh -F {self.config}"

    def host(self, alias: str, tmpdir: Path | str | None = None, known: bool = True,
             env: dict[str, str] | None = None) -> str:
        """An ssh_config alias for this sshd. Its logins get TMUX_TMPDIR=`tmpdir` (that host's
        default tmux server); `known=False`: its host key is in no known_hosts file (ssh
        refuses it, as for a host never connected to with BatchMode)."""
        known_file = self.known_hosts if known else self.folder / f"empty_known_{alias}"
        if not known:
            known_file.write_text("")
        lines = [f"Host {alias}", "  HostName 127.0.0.1", f"  Port {self.port}", "  User root",
                 f"  IdentityFile {self.user_key}", "  IdentitiesOnly yes",
                 f"  UserKnownHostsFile {known_file}", "  GlobalKnownHostsFile /dev/null",
                 "  StrictHostKeyChecking yes", "  BatchMode yes", "  LogLevel ERROR"]
        # a login runs the test machine's own rc files: on this one, root's .bashrc runs
        # pyenv's rehash, which waits 60 s on a lock that a login killed by a test (a frozen or
        # killed host) left behind; sshd keeps HOME its own, so the wait is cut instead
        sets = {"PYENV_REHASH_TIMEOUT": "1", **(env or {})}
        if tmpdir is not None:
            sets["TMUX_TMPDIR"] = str(tmpdir)
        if sets:
            lines.append("  SetEnv " + " ".join(f"{k}={v}" for k, v in sets.items()))
        with open(self.config, "a") as f:
            f.write("\n".join(lines) + "\n")
        return alias

    def run(self, alias: str, command: str, timeout: float = 30) -> subprocess.CompletedProcess:
        """One command on a host, as ssh runs it."""
        return subprocess.run(["ssh", "-F", str(self.config), alias, command],
                              capture_output=True, text=True, timeout=timeout)

    def session_pids(self) -> list[int]:
        """The per-connection sshd processes (children of the listener): SIGSTOP one and its
        connection freezes while the listener still accepts new ones."""
        try:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                return [int(p) for p in f.read().split()]
        except OSError:
            return []

    def stop(self) -> None:
        for pid in self.session_pids():
            try:
                os.kill(pid, signal.SIGCONT)  # a frozen session dies only once it runs
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class RemoteTmux:
    """A host's default tmux server: `tmux` with TMUX_TMPDIR=`tmpdir` and no -L/-S, as a login
    on that host (through Sshd.host(..., tmpdir)) reaches it."""

    def __init__(self, tmpdir: Path | str, cols: int = 120, rows: int = 32):
        self.tmpdir = Path(tmpdir)
        self.tmpdir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.tmpdir, 0o700)
        self.env = dict(os.environ, TMUX_TMPDIR=str(self.tmpdir))
        self.env.pop("TMUX", None)
        self.socket = str(self.tmpdir / f"tmux-{os.getuid()}" / "default")
        self.cmd("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", str(cols),
                 "-y", str(rows))
        self.cmd("set-option", "-g", "default-command", "exec bash --norc --noprofile")

    def cmd(self, *args) -> str:
        out = subprocess.run(["tmux", *args], capture_output=True, text=True, env=self.env)
        if out.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout.strip()

    def agentstate(self, *args, timeout: float = 30) -> subprocess.CompletedProcess:
        """Our command on this host, as a login there runs it."""
        return subprocess.run([REMOTE_COMMAND, *args], capture_output=True, text=True,
                              env=self.env, timeout=timeout)

    def kill(self) -> None:
        self.agentstate("stop")
        subprocess.run(["tmux", "kill-server"], capture_output=True, env=self.env)
        shutil.rmtree(self.tmpdir, ignore_errors=True)


@pytest.fixture
def sshd(tmp_path):
    server = Sshd(tmp_path / "sshd")
    yield server
    server.stop()
