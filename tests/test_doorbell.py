"""Issue 27, item 1: a hook report (and a change of Claude Code's session file) reaches
`@agentstate` at once, not at the next pane listing: the hook rings the sidecar's doorbell
(sidecar/doorbell.py), the sidecar reads that pane's report in one tmux command, classifies and
publishes.

Real tmux server, real sidecar process, the real hook run by a launched stand-in agent (as
tests/test_origin.py). The sidecar here lists panes only once an hour (`--listing-every`), so
nothing but the doorbell can bring a report in before the generous waits run out.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import test_origin
from conftest import SidecarProcess, wait_for
from test_origin import StandIn, sidecar_log
from test_signals import hook
from tmux_agentstate.sidecar import doorbell
from tmux_agentstate.sidecar.doorbell import Doorbell, ring

NEVER = 3600  # the pane listing's period here: an hour


class QuietSidecar(SidecarProcess):
    """A sidecar whose pane listing is far away (`listing_every` seconds)."""

    def __init__(self, server, runtime_base, intake="emulate", listing_every=NEVER):
        super().__init__(server, runtime_base, 0.3, intake)
        self.listing_every = listing_every

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tmux_agentstate", "watch", "-L", self.server.name,
             "--interval", str(self.interval), "--intake", self.intake,
             "--listing-every", str(self.listing_every)],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        return self

    @property
    def bell(self) -> Path:
        return self.runtime_dir() / doorbell.NAME


@pytest.fixture
def quiet_sidecar(tmux_server, tmp_path):
    base = tmp_path / "run"
    base.mkdir(mode=0o700)
    made = []

    def make(**kw):
        sc = QuietSidecar(tmux_server, base, **kw)
        made.append(sc)
        return sc.start()

    yield make
    for sc in made:
        sc.kill()


class Agent(StandIn):
    """The stand-in of test_origin.py, its hooks' output kept from the terminal as Claude keeps
    it (printed, it would be bytes on the pane: the pipe intake would read the report with the
    screen they change, doorbell or not); with a HOME of its own if given (Claude's session
    files are in ~/.claude/sessions)."""

    def __init__(self, server, tmp_path, home: Path | None = None, launched: bool = True):
        self._home = home
        script = test_origin.STANDIN
        quiet = script.replace('input=json.dumps(payload), text=True)',
                               'input=json.dumps(payload), text=True, stdout=subprocess.DEVNULL)')
        assert quiet != script
        test_origin.STANDIN = quiet
        try:
            super().__init__(server, tmp_path, launched=launched)
        finally:
            test_origin.STANDIN = script

    @property
    def env(self):
        return self._env

    @env.setter
    def env(self, value):
        self._env = dict(value, **({"HOME": str(self._home)} if self._home else {}))


def ready(sc, server, pane, state="idle"):
    wait_for(lambda: server.state(pane) == state, timeout=20, message=f"{pane} {state}")
    wait_for(lambda: stat.S_ISFIFO(os.lstat(sc.bell).st_mode) if sc.bell.exists() else False,
             message="the doorbell")
    # past its first sweeps: the listings a start brings (its control client's own arrival
    # says a client may show another pane) are over; the next is `listing_every` away
    wait_for(lambda: (sc.status() or {}).get("sweeps", 0) >= 6, message="six sweeps")


def list_panes_sent(server) -> int:
    """How many times the sidecar read panes' reports (tmux logs every command a client sends
    in show-messages; the doorbell's read is a `list-panes` of @agentstate_report)."""
    out = server.cmd("show-messages")
    return sum("list-panes" in line and "@agentstate_launch}" in line and "pane_title" not in line
               for line in out.splitlines())


# -- a report reaches the state without the listing ----------------------------------------------
@pytest.mark.parametrize("intake", ["emulate", "pipe"])
def test_a_hook_report_reaches_the_state_without_the_pane_listing(tmux_server, quiet_sidecar,
                                                                   tmp_path, intake):
    agent = Agent(tmux_server, tmp_path)
    sc = quiet_sidecar(intake=intake)
    ready(sc, tmux_server, agent.pane)
    agent.ask(hook="PermissionRequest")  # the real hook, run by the agent as Claude runs it
    wait_for(lambda: tmux_server.state(agent.pane) == "blocked", timeout=15,
             message="the report, before any listing")
    assert tmux_server.option(agent.pane, "@agentstate_source") == "hook"
    agent.ask(hook="UserPromptSubmit")  # any change of state, not only into blocked
    wait_for(lambda: tmux_server.state(agent.pane) == "working", timeout=15, message="working")
    agent.ask(hook="Stop")
    wait_for(lambda: tmux_server.state(agent.pane) == "idle", timeout=15, message="idle again")
    assert "Traceback" not in sidecar_log(sc)


def test_a_session_file_change_reaches_the_state_without_the_pane_listing(tmux_server,
                                                                          quiet_sidecar, tmp_path):
    home = tmp_path / "home"
    sessions = home / ".claude" / "sessions"
    sessions.mkdir(parents=True)  # Claude makes it at its first start
    agent = Agent(tmux_server, tmp_path, home)
    sc = quiet_sidecar()
    ready(sc, tmux_server, agent.pane)
    session = sessions / f"{agent.pid}.json"
    # Claude Code rewrites its file in place; a rename over it is caught too (below)
    session.write_text(json.dumps({"pid": agent.pid, "status": "waiting"}))
    wait_for(lambda: tmux_server.state(agent.pane) == "blocked", timeout=15,
             message="the session file, before any listing")
    assert tmux_server.option(agent.pane, "@agentstate_source") == "hook"  # a report's source
    tmp = sessions / "next.tmp"
    tmp.write_text(json.dumps({"pid": agent.pid, "status": "busy"}))
    tmp.rename(session)
    wait_for(lambda: tmux_server.state(agent.pane) == "working", timeout=15, message="working")
    # another pid's file (another Claude, not watched here) changes nothing
    (sessions / f"{agent.pid + 100000}.json").write_text(json.dumps({"status": "waiting"}))
    time.sleep(1)
    assert tmux_server.state(agent.pane) == "working"
    # reading the file (the sidecar's own read, after a ring; any program's) rings nothing:
    # inotify tells opens and closes too, and a ring answered by a read looped, 2 % of a core
    # for one idle Claude pane
    mark = time.time()
    first = wait_for(lambda: (lambda st: st if st and st.get("updated", 0) > mark else None)(
        sc.status()), timeout=12, message="a fresh status")
    session.read_text()
    mark = time.time() + 3  # the read's events long answered (a ring is answered at once)
    last = wait_for(lambda: (lambda st: st if st and st.get("updated", 0) > mark else None)(
        sc.status()), timeout=15, message="a status written 3 s after the read")
    assert last["rings"] == first["rings"], (first, last)


# -- faults ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_doorbell_replaced_by_a_file_or_symlink_gets_nothing_and_is_made_afresh(
        tmux_server, quiet_sidecar, tmp_path, kind):
    agent = Agent(tmux_server, tmp_path)
    sc = quiet_sidecar(listing_every=1)  # it is checked at each listing
    ready(sc, tmux_server, agent.pane)
    target = tmp_path / "target"
    target.write_text("")
    sc.bell.unlink()
    if kind == "file":
        sc.bell.write_text("")
    else:
        sc.bell.symlink_to(target)
    res = hook(tmux_server, agent.pane, "claude", "Stop", launched=False)  # it rings
    assert (res.returncode, res.stdout.strip(), res.stderr) == (0, "{}", "")
    assert target.read_text() == "" and (kind == "symlink" or sc.bell.read_text() == "")
    wait_for(lambda: stat.S_ISFIFO(os.lstat(sc.bell).st_mode), timeout=15, message="made afresh")
    assert target.exists() and target.read_text() == ""  # the symlink went, not its target
    lines = [x for x in sidecar_log(sc).splitlines() if "doorbell" in x]
    assert len(lines) == 1 and "made afresh" in lines[0], lines
    agent.ask(hook="PermissionRequest")
    wait_for(lambda: tmux_server.state(agent.pane) == "blocked", timeout=15, message="rings again")


def test_without_a_sidecar_the_hook_returns_and_rings_nothing(tmux_server, tmp_path):
    """A FIFO no one reads (a sidecar killed -9 leaves its doorbell): the hook's open does not
    wait for a reader (ENXIO); no doorbell at all: nothing is made."""
    from tmux_agentstate.sidecar.runtime import Runtime
    pane = tmux_server.new_pane("sleep 600")
    runtime = Runtime(tmux_server.tmux.socket()).ensure()
    bell = runtime.dir / doorbell.NAME
    res = subprocess.run([sys.executable, "-m", "tmux_agentstate.hook", "claude", "Stop"],
                         input="{}", capture_output=True, text=True, timeout=30,
                         env=dict(os.environ, TMUX=f"{tmux_server.tmux.socket()},1,0",
                                  TMUX_PANE=pane))
    assert (res.returncode, res.stdout.strip()) == (0, "{}") and not bell.exists()
    os.mkfifo(bell, 0o600)
    res = subprocess.run([sys.executable, "-m", "tmux_agentstate.hook", "claude", "Stop"],
                         input="{}", capture_output=True, text=True, timeout=30,  # no hang
                         env=dict(os.environ, TMUX=f"{tmux_server.tmux.socket()},1,0",
                                  TMUX_PANE=pane))
    assert (res.returncode, res.stdout.strip(), res.stderr) == (0, "{}", "")
    assert ring(runtime.dir, pane) is False  # ENXIO: no reader
    assert tmux_server.option(pane, "@agentstate_report").startswith("idle ")


def test_a_flood_of_rings_and_garbage_costs_a_bounded_read_and_the_next_report_lands(
        tmux_server, quiet_sidecar, tmp_path):
    agent = Agent(tmux_server, tmp_path)
    sc = quiet_sidecar()
    ready(sc, tmux_server, agent.pane)
    fd = os.open(sc.bell, os.O_WRONLY | os.O_NONBLOCK)
    junk = [b"%" + b"9" * 5000 + b"\n", os.urandom(3000), b"%abc\n%-1\n\n\n", b"\x1b]0;x\x07\n",
            f"{agent.pane}\n".encode() * 2000, b"%99999\n" * 2000]
    full = 0
    for _ in range(30):  # more than the FIFO holds: the writer is told EAGAIN, never waits
        for chunk in junk:
            try:
                os.write(fd, chunk)
            except BlockingIOError:
                full += 1
    os.close(fd)
    assert full > 0
    agent.ask(hook="PermissionRequest")
    wait_for(lambda: tmux_server.state(agent.pane) == "blocked", timeout=30,
             message="a report after the flood")
    assert sc.proc.poll() is None and "Traceback" not in sidecar_log(sc)
    # the flood named the watched pane ~60,000 times: answered a bounded number of times
    # (one read per answer, an answer per COALESCE at most), not once per ring
    assert list_panes_sent(tmux_server) < 2000


def test_a_ring_for_a_pane_not_watched_reads_nothing(tmux_server, quiet_sidecar, tmp_path):
    agent = Agent(tmux_server, tmp_path)
    shell = tmux_server.new_pane("sleep 600")
    sc = quiet_sidecar()
    ready(sc, tmux_server, agent.pane)
    tmux_server.cmd("set-option", "-p", "-t", shell, "@agentstate_report",
                    f"blocked {time.time():.3f} hook:claude:PermissionRequest")
    before = list_panes_sent(tmux_server)
    for pane in (shell, "%999", "%0" * 3):
        assert ring(sc.runtime_dir(), pane) is (pane != "%0" * 3)  # not a pane id: not sent
    time.sleep(1.5)
    assert list_panes_sent(tmux_server) == before  # no read for a pane it does not watch
    assert tmux_server.state(shell) in ("", None)
    agent.ask(hook="PermissionRequest")  # and the doorbell still works
    wait_for(lambda: tmux_server.state(agent.pane) == "blocked", timeout=15, message="blocked")
    assert list_panes_sent(tmux_server) > before


# -- the doorbell itself (a real FIFO; no tmux) -----------------------------------------------------
def test_take_keeps_a_partial_line_and_drops_garbage(tmp_path):
    bell = Doorbell(tmp_path)
    assert bell.open() and stat.S_IMODE(os.lstat(bell.path).st_mode) == 0o600
    try:
        assert ring(tmp_path, "%12") and not ring(tmp_path, "12") and not ring(tmp_path, "%1\n%2")
        fd = os.open(bell.path, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"%3\nxx\n%4")
        assert bell.take() == {"%12", "%3"}
        os.write(fd, b"5\n" + b"%" + b"7" * 100)  # a line too long to be a pane id: dropped
        assert bell.take() == {"%45"}
        os.write(fd, b"7\n%8\n")
        assert bell.take() == {"%8"}
        os.write(fd, b"%1\n" * 20000)  # 60 KB: a take reads a bounded part of it
        first = bell.take()
        assert first == {"%1"} and bell.take() == {"%1"}
        bell.ring_here("%5")
        assert bell.take_here() == {"%5"} and bell.take_here() == set()
        os.close(fd)
    finally:
        bell.remove()
    assert not bell.path.exists()
    assert ring(tmp_path, "%1") is False  # no doorbell: nothing made
    assert not bell.path.exists()


def test_the_hook_imports_no_loop(tmp_path):
    """A hook's start-up is the agent's wait: the doorbell costs it no import of the sidecar's
    loop (libtmux, the core, watchdog)."""
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "tmux_agentstate.hook",
                          "claude", "Stop"], input="{}", capture_output=True, text=True,
                         env=dict(os.environ, TMUX=f"{tmp_path}/sock,1,0", TMUX_PANE="%1"))
    assert res.stdout.strip() == "{}"
    imported = {line.split("|")[-1].strip() for line in res.stderr.splitlines()}
    assert "tmux_agentstate.sidecar.doorbell" in imported
    assert not {"tmux_agentstate.sidecar.loop", "libtmux", "watchdog", "hashlib"} & imported
