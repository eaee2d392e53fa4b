"""The fake agent (tmux_agentstate/demo/fake_agent.py) in a real tmux, scored by its own truth file.

Each run records the pane's bytes with `pipe-pane -O` (started before the agent writes a byte),
plus the agent's truth file (`<time> <state>` per change) and trace file (`<time> <bytes written>
<state> <what>` after every write). The trace says where in the recording each frame ends, so the
recording can be replayed up to any complete frame and classified.
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import struct
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tmux_agentstate.core.catalog import Catalog
from tmux_agentstate.core.manifest import parse_manifest
from tmux_agentstate.core.screen import PaneScreen, replay

ROOT = Path(__file__).resolve().parent.parent
ROWS, COLS = 32, 120
SEED, SPEED, TASKS = 3, 10, 3   # seed 3: both looks show working, blocked and idle
TRUTH_LINE = re.compile(r"^\d{10}\.\d{3} (working|idle|blocked)$")

pytestmark = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v tmux"], capture_output=True).returncode != 0,
    reason="tmux is not installed")

# The rules of the DESIGN/seed (osFoundry's claude.toml): unanchored wording, a reference that
# does not move while manifests/claude.toml is being rewritten.
REFERENCE = parse_manifest({"name": "claude", "rules": [
    {"id": "prompt", "state": "blocked", "any": [
        r"Do you want to (proceed|continue|make this edit|create)", r"❯\s*1\.\s*Yes",
        r"Esc to cancel · Tab to amend"]},
    {"id": "working", "state": "working", "any": [r"esc to interrupt"]},
    {"id": "idle", "state": "idle", "any": [r"\? for shortcuts"]},
]}, "claude.toml")


class Run:
    """The fake agent in one pane of a private tmux server, its bytes piped to a file."""

    def __init__(self, server: "Server", name: str, args: list[str]):
        self.server, self.name = server, name
        d = server.dir / name
        d.mkdir()
        self.raw, self.truth, self.trace, go = d / "pane.raw", d / "truth", d / "trace", d / "go"
        self.raw.write_bytes(b"")
        cmd = [sys.executable, "-m", "tmux_agentstate.demo.fake_agent", *args]
        inner = (f"export AGENTSTATE_TRUTH_FILE={shlex.quote(str(self.truth))}; "
                 f"export AGENTSTATE_TRACE_FILE={shlex.quote(str(self.trace))}; "
                 f"export PYTHONPATH={shlex.quote(str(ROOT))}; cd {shlex.quote(str(ROOT))}; "
                 f"while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.02; done; exec {shlex.join(cmd)}")
        first = not server.started
        server.tmux(*(["-f", "/dev/null"] if first else []), "new-session", "-d", "-s", name,
                    "-x", str(COLS), "-y", str(ROWS), "bash", "--norc", "--noprofile", "-c", inner)
        server.started = True
        if first:
            server.tmux("set-option", "-g", "remain-on-exit", "on")
        self.pane = server.tmux("display-message", "-p", "-t", name, "#{pane_id}").strip()
        server.tmux("resize-window", "-t", name, "-x", str(COLS), "-y", str(ROWS))
        server.tmux("pipe-pane", "-O", "-t", self.pane, f"cat >> {shlex.quote(str(self.raw))}")
        self.go = go

    def start(self) -> None:
        self.go.touch()

    def dead(self) -> bool:
        return self.server.tmux("display-message", "-p", "-t", self.pane, "#{pane_dead}").strip() == "1"

    def wait_dead(self, timeout: float) -> None:
        deadline = time.time() + timeout
        while not self.dead():
            if time.time() > deadline:
                raise TimeoutError(f"{self.name}: still running after {timeout}s")
            time.sleep(0.1)

    def truth_lines(self) -> list[str]:
        return self.truth.read_text().splitlines() if self.truth.exists() else []

    def states(self) -> list[str]:
        return [l.split()[1] for l in self.truth_lines()]

    def wait_state(self, state: str, timeout: float, after: int = 0) -> None:
        deadline = time.time() + timeout
        while state not in self.states()[after:]:
            if time.time() > deadline:
                raise TimeoutError(f"{self.name}: never {state}; truth {self.states()}")
            time.sleep(0.05)

    def frames(self) -> list[tuple[int, str, str]]:
        """(byte offset, state, what) after every write, from the trace file."""
        out = []
        for line in self.trace.read_text().splitlines():
            _t, off, state, what = line.split()
            out.append((int(off), state, what))
        return out

    def recorded(self, timeout: float = 5.0) -> bytes:
        """The pane's bytes, once `cat` has flushed all the agent wrote."""
        want = self.frames()[-1][0]
        deadline = time.time() + timeout
        while self.raw.stat().st_size < want and time.time() < deadline:
            time.sleep(0.05)
        return self.raw.read_bytes()


class Server:
    def __init__(self, tmp: Path):
        self.dir = tmp
        self.socket = f"agentstate-fake-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.started = False

    def tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def kill(self) -> None:
        path = subprocess.run(["tmux", "-L", self.socket, "display-message", "-p",
                               "#{socket_path}"], capture_output=True, text=True).stdout.strip()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        if path:
            Path(path).unlink(missing_ok=True)  # tmux 3.3a leaves it behind


@pytest.fixture(scope="module")
def autopilot_runs(tmp_path_factory):
    """Both looks on autopilot, side by side in one private server, to the end of TASKS tasks."""
    server = Server(tmp_path_factory.mktemp("fake-agent"))
    try:
        common = ["--autopilot", "--seed", str(SEED), "--speed", str(SPEED), "--tasks", str(TASKS)]
        runs = {look: Run(server, look, [*common, "--look", look]) for look in ("current", "classic")}
        time.sleep(0.2)  # let pipe-pane's cat start
        for r in runs.values():
            r.start()
        for r in runs.values():
            r.wait_dead(timeout=25)
        out = {}
        for look, r in runs.items():
            data = r.recorded()
            # history too: tmux's "Pane is dead" notice can scroll the screen by a row or two
            r.final_screen = server.tmux("capture-pane", "-p", "-S", "-", "-t", r.pane)
            out[look] = (r, data)
        yield out
    finally:
        server.kill()


def mismatches(manifest, frames, data) -> list[str]:
    """Replay `data` frame by frame; every complete frame must classify as the true state."""
    screen, pos, bad = PaneScreen(ROWS, COLS), 0, []
    for off, state, what in frames:
        if state not in ("working", "idle", "blocked"):
            continue
        screen.feed(data[pos:off])
        pos = off
        got = manifest.evaluate(screen.view())
        if got.state != state:
            rows = "\n".join(r for r in screen.rows() if r.strip())
            bad.append(f"@{off} ({what}) truth {state}, classified {got.state} "
                       f"(rule {got.rule}, line {got.line!r})\n{rows}")
    return bad


@pytest.mark.parametrize("look", ["current", "classic"])
def test_no_newline_and_every_byte_accounted_for(autopilot_runs, look):
    run, data = autopilot_runs[look]
    assert len(data) > 5000
    assert b"\n" not in data
    assert run.frames()[-1][0] == len(data)  # the recording is exactly what the agent wrote
    assert b"\x1b]0;\xe2\x9c\xb3 Claude Code\x07" in data and data.count(b"\x1b]0;") == 1
    assert re.search(rb"Do\x1b\[\d+Gyou\x1b\[\d+Gwant\x1b\[\d+Gto\x1b\[\d+Gproceed\?", data)


@pytest.mark.parametrize("look", ["current", "classic"])
def test_tmux_and_the_emulated_screen_agree(autopilot_runs, look):
    """tmux's own rendering of the pane equals the replayed recording (scrolling included)."""
    run, data = autopilot_runs[look]
    assert b"\x1b[1S" in data  # the screen filled up and scrolled at least once
    ours = replay(data, ROWS, COLS).rows()
    while ours and not ours[-1]:
        ours.pop()
    theirs = [l.rstrip() for l in run.final_screen.splitlines() if not l.startswith("Pane is dead")]
    assert len(ours) > ROWS // 2
    starts = [i for i in range(len(theirs) - len(ours) + 1) if theirs[i:i + len(ours)] == ours]
    assert starts, "replayed screen not found in tmux's pane:\n" + "\n".join(ours)


@pytest.mark.parametrize("look", ["current", "classic"])
def test_truth_file_shows_every_state(autopilot_runs, look):
    run, _ = autopilot_runs[look]
    lines = run.truth_lines()
    assert lines and all(TRUTH_LINE.match(l) for l in lines), lines
    states = run.states()
    assert {"working", "blocked", "idle"} <= set(states)
    assert states[0] == "idle" and states[-1] == "idle"
    assert all(a != b for a, b in zip(states, states[1:]))  # a line per change, no repeats
    times = [float(l.split()[0]) for l in lines]
    assert times == sorted(times)
    # the trace's state changes are the truth file's lines, in order
    changes = []
    for _off, state, _what in run.frames():
        if state in ("working", "idle", "blocked") and (not changes or changes[-1] != state):
            changes.append(state)
    assert changes == states


@pytest.mark.parametrize("look", ["current", "classic"])
def test_reference_rules_read_every_frame_right(autopilot_runs, look):
    run, data = autopilot_runs[look]
    bad = mismatches(REFERENCE, run.frames(), data)
    assert not bad, f"{len(bad)} frames misread, first:\n" + bad[0]


def _claude():
    m = Catalog().get("claude")
    assert m is not None, "manifests/claude.toml did not load"
    return m


def test_claude_manifest_at_each_truth_transition(autopilot_runs):
    """`replay` of the recording cut where each true state was first drawn."""
    run, data = autopilot_runs["current"]
    manifest, prev, checked = _claude(), None, 0
    for off, state, what in run.frames():
        if state in ("working", "idle", "blocked") and state != prev:
            got = manifest.evaluate(replay(data[:off], ROWS, COLS).view())
            assert got.state == state, f"@{off} ({what}): truth {state}, got {got}"
            checked += 1
        prev = state
    assert checked == len(run.truth_lines())


def test_claude_manifest_reads_every_frame_right(autopilot_runs):
    run, data = autopilot_runs["current"]
    bad = mismatches(_claude(), run.frames(), data)
    assert not bad, f"{len(bad)} frames misread, first:\n" + bad[0]


def test_claude_manifest_reads_classic_look(autopilot_runs):
    run, data = autopilot_runs["classic"]
    bad = mismatches(_claude(), run.frames(), data)
    assert not bad, f"{len(bad)} frames misread, first:\n" + bad[0]


def test_interactive_keys_resize_and_ctrl_c(tmp_path):
    """Keys from the tty: a task, an approval if asked, a resize, Ctrl-C at the idle prompt."""
    server = Server(tmp_path)
    try:
        run = Run(server, "keys", ["--seed", str(SEED), "--speed", "20"])
        time.sleep(0.2)
        run.start()
        run.wait_state("idle", 5)
        server.tmux("send-keys", "-t", run.pane, "-l", "fix the tests")
        server.tmux("send-keys", "-t", run.pane, "Enter")
        run.wait_state("working", 5)
        deadline = time.time() + 15
        while run.states()[-1] != "idle":  # approve every prompt until the turn ends
            assert time.time() < deadline, run.states()
            if run.states()[-1] == "blocked":
                server.tmux("send-keys", "-t", run.pane, "1")
                time.sleep(0.3)
            time.sleep(0.05)
        server.tmux("resize-window", "-t", "keys", "-x", "80", "-y", "24")
        deadline = time.time() + 5
        while not any(w == "resize" for _o, _s, w in run.frames()):
            assert time.time() < deadline, "no redraw after SIGWINCH"
            time.sleep(0.05)
        time.sleep(0.2)
        screen = server.tmux("capture-pane", "-p", "-t", run.pane)
        assert "? for shortcuts" in screen and "─" * 79 in screen and "─" * 80 not in screen
        server.tmux("send-keys", "-t", run.pane, "C-c")
        run.wait_dead(5)
        data = run.recorded()
        assert b"\n" not in data
        assert REFERENCE.evaluate(replay(data, 24, 80).view()).state == "idle"
    finally:
        server.kill()


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_signal_exits_cleanly_and_restores_the_tty(signame):
    import pty
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: the fake agent on the pty's slave side
        os.chdir(ROOT)
        os.environ["PYTHONPATH"] = str(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "tmux_agentstate.demo.fake_agent",
                                  "--autopilot", "--speed", "5"])
    try:
        import fcntl
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        before = termios.tcgetattr(fd)
        out = b""
        deadline = time.time() + 5
        while b"shortcuts" not in out and time.time() < deadline:
            import select
            if select.select([fd], [], [], 0.1)[0]:
                out += os.read(fd, 65536)
        assert b"shortcuts" in out
        assert not termios.tcgetattr(fd)[3] & termios.ECHO  # raw mode while it runs
        os.kill(pid, getattr(signal, signame))
        deadline = time.time() + 5
        while time.time() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            try:  # keep draining so the child never blocks on a full pty
                import select
                if select.select([fd], [], [], 0.05)[0]:
                    out += os.read(fd, 65536)
            except OSError:
                pass
        else:
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"still running 5 s after {signame}")
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        after = termios.tcgetattr(fd)
        assert after[3] == before[3]  # ECHO, ICANON, ISIG back as they were
        assert b"\n" not in out
    finally:
        os.close(fd)
