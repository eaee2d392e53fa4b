"""OSC 7501 for every agent (issue 27, items 2 and 5): every report a pane's bytes carry, in
order and with the time its bytes came, in the screen's StatusBoard (emulate: parsed; pipe:
searched); the root record ranked in `combine` as the agent's own report; what `explain`, the
popup and the pane options say of it. Hostile input: bounded and refused, never a state."""
from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from conftest import wait_for
from tmux_agentstate.core.combine import (PaneState, Report, combine, osc_option,
                                          parse_osc_option, record_decides)
from tmux_agentstate.core.manifest import Match, ManifestError, parse_manifest
from tmux_agentstate.core.screen import CapturedScreen, OscScan, PaneScreen
from tmux_agentstate.core.status import MAX_CHILDREN, MAX_MESSAGE, MAX_PAYLOAD, StatusBoard, StatusRecord, ProgramStatus

IDLE = Match("idle", "composer", "? for shortcuts")
WORKING = Match("working", "spinner", "esc to interrupt")
BLOCKED = Match("blocked", "dialog", "Do you want to proceed?")


def osc(payload: str, end: bytes = b"\x07") -> bytes:
    return b"\x1b]7501;" + payload.encode() + end


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def record(payload: str, at: float) -> StatusRecord:
    board = StatusBoard()
    assert board.take(payload, at)
    return board.root


# -- combine: the ranking ----------------------------------------------------------------------
def test_an_osc_record_ranks_as_the_agents_own_report():
    working = record("state=working:app=pi", 100)
    # beats the screen rules, whatever they say, and never goes stale or is superseded by them
    for now in (101, 1000, 10**6):
        assert combine(True, IDLE, None, now, screen_changed_at=now, record=working) == \
            PaneState("working", "hook", "", "osc:pi")
    # a blocked prompt on screen still wins over everything
    assert combine(True, BLOCKED, None, 101, record=working).source == "screen"
    # no agent in front: nothing, a record or not
    assert combine(False, IDLE, None, 101, record=working) is None


def test_the_newest_of_hook_session_and_osc_reports_wins():
    idle = record("state=idle:app=codex", 100)
    hook = Report("working", 105, "hook:codex:UserPromptSubmit")
    assert combine(True, IDLE, hook, 106, record=idle) == PaneState("working", "hook", "", hook.source)
    newer = record("state=done:app=codex", 107)
    assert combine(True, WORKING, hook, 108, record=newer) == PaneState("idle", "hook", "", "osc:codex")
    # the hook report gone stale (30 s), the older record stands again
    assert combine(True, WORKING, hook, 140, record=idle).rule == "osc:codex"
    # a hook report the screen superseded is no longer in force: the record decides
    assert combine(True, WORKING, hook, 106, screen_changed_at=105.5, record=idle).rule == "osc:codex"


def test_each_state_of_a_record():
    msg = b64("Allow `rm -rf build`?")
    blocked = combine(True, IDLE, None, 1, record=record(f"state=blocked:app=a:kind=permission:msg={msg}", 0))
    assert blocked == PaneState("blocked", "hook", "Allow `rm -rf build`?", "osc:a")
    error = combine(True, IDLE, None, 1, record=record(f"state=error:msg={b64('HTTP 429 Too Many Requests')}", 0))
    assert (error.state, error.mark, error.mark_line, error.rule) == \
        ("idle", "rate-limit", "HTTP 429 Too Many Requests", "osc")
    assert combine(True, IDLE, None, 1, record=record("state=error", 0)).mark == "api-error"
    # the screen's own mark (a manifest's [[marks]]) is the more precise one: it wins
    marked = Match("idle", "composer", "", "quota", "■ Quota exceeded.")
    assert combine(True, marked, None, 1, record=record("state=error", 0)).mark == "quota"
    assert combine(True, WORKING, None, 1, record=record("state=done", 0)).state == "idle"
    assert combine(True, WORKING, None, 1, record=record("state=idle", 0)).state == "idle"
    assert record_decides(blocked) and not record_decides(PaneState("idle", "hook", "", "hook:claude"))


def test_a_cleared_record_ends_the_report_and_children_never_decide():
    board = StatusBoard()
    assert board.take("state=working:app=x", 1)
    assert not board.take("state=blocked:app=x:id=sub1", 2)  # a child: counted only
    assert combine(True, IDLE, None, 3, record=board.root).state == "working"
    assert board.children_working() == 1
    # a sub-agent's own sub-agent (the protocol's "/" segments) is a child too
    assert not board.take("state=working:id=sub1/task-2", 3)
    assert board.children_working() == 2
    # a clear without an id removes every record (the protocol), the children with the root
    assert board.take("state=clear:app=x", 4) and board.root is None and board.children == {}
    assert combine(True, IDLE, None, 5, record=board.root) == PaneState("idle", "screen", "? for shortcuts", "composer")


def test_the_published_record_reads_back_and_a_forged_one_is_refused():
    rec = record(f"state=blocked:app=codex:kind=question:msg={b64('Which one? #{pane_id}')}", 12.5)
    shown = parse_osc_option(osc_option(rec, 3, True))
    assert (shown.record, shown.children, shown.decides) == (rec, 3, True)
    assert parse_osc_option(osc_option(record("state=idle", 1), 0, False)).record.status.app == ""
    for forged in ("", "blocked", "blocked 1 a b c d e f", "stuck 1 - - 0 0 -", "idle nan - - 0 0 -",
                   "idle 1 bad/app - 0 0 -", "idle 1 - - x 0 -", "idle 1 - - 0 0 !!!notbase64"):
        shown = parse_osc_option(forged)
        assert shown is None or shown.record.status.message == "", forged


# -- screens: every report, in order, with its time ----------------------------------------------
def test_the_pipe_search_takes_every_report_of_a_chunk_in_order_across_reads():
    data = (b"text " + osc("state=working:app=a") + b" \x1b]0;title\x07" + osc("state=blocked:app=a:id=s1")
            + osc("state=blocked:app=a:kind=permission", b"\x1b\\") + b" more " + osc("state=done:app=a"))
    want = ["state=working:app=a", "state=blocked:app=a:id=s1", "state=blocked:app=a:kind=permission",
            "state=done:app=a"]
    for cut in range(1, len(data)):  # every place a read can cut it
        scan = OscScan()
        assert scan.payloads(data[:cut]) + scan.payloads(data[cut:]) == want, cut
    screen = CapturedScreen()
    seen = []
    screen.status.take = lambda payload, at, take=screen.status.take: seen.append((payload, at)) or take(payload, at)
    assert screen.note_bytes(data, 42.0)
    assert seen == [(p, 42.0) for p in want]
    assert screen.status.root.status.state == "done" and screen.status.children == {"s1": "blocked"}
    assert screen.osc_state == "state=done:app=a"  # the root's payload: what codex.toml's rules read


def test_both_parsers_end_and_bound_a_report_alike():
    """The emulator (vtstream) and the pipe's search agree: BEL or any ESC ends a report,
    CAN/SUB abandon it, one longer than a payload may be is dropped whole, never cut."""
    cases = [osc("state=working"), b"\x1b]7501;state=blocked\x1b[2JX", b"\x1b]7501;state=blocked\x18",
             osc("state=working:msg=" + "A" * (MAX_PAYLOAD + 10)),
             b"\x1b]7501;state=idle" + b"x" * (MAX_PAYLOAD + 100),  # never terminated
             osc("state=working:app=" + "é" * 2100)]  # under the bound in characters, over in bytes
    for data in cases:
        emulated, searched = PaneScreen(), CapturedScreen()
        emulated.feed(data + b"\x07", at=1.0)
        searched.note_bytes(data + b"\x07", 1.0)
        assert emulated.osc_state == searched.osc_state, data[:40]
        assert (emulated.status.root is None) == (searched.status.root is None), data[:40]
    assert PaneScreen().feed(osc("state=idle:app=" + "a" * 64), 1.0)


def test_an_emulated_screen_takes_reports_with_the_time_its_bytes_came():
    screen = PaneScreen()
    assert screen.feed(b"hi " + osc("state=working:app=a"), at=100.0)
    assert not screen.feed(osc("state=working:app=a"), at=105.0)  # a repeat: no change, time stays
    assert screen.status.root.at == 100.0
    assert screen.feed(osc("state=blocked:app=a:id=s") + osc("state=idle:app=a"), at=110.0)
    assert (screen.status.root.status.state, screen.status.root.at) == ("idle", 110.0)
    # a flood's bytes are dropped, not parsed: their reports still count
    assert screen.note_bytes(b"x" * 1000 + osc("state=done:app=a"), 120.0)
    assert screen.status.root.status.state == "done"
    # a screen seeded again from tmux (a resize) goes on with the same agent's reports
    fresh = PaneScreen()
    fresh.carry_reports(screen)
    assert fresh.status.root.status.state == "done" and fresh.osc_state == "state=done:app=a"


def test_every_real_capture_that_holds_a_report_agrees_with_its_screen():
    """The real captures (Codex 0.171 writes OSC 7501 unconditionally): replayed, the agent's
    root record, ranked by `combine`, gives the state the index says, and the mark."""
    from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
    from tmux_agentstate.core.fixtures import load_index
    from tmux_agentstate.core.screen import replay
    catalog, checked = Catalog([BUNDLED_DIR]), 0
    for fx in load_index():
        data = fx.path.read_bytes()
        if b"\x1b]7501;" not in data:
            continue
        screen = replay(data, fx.rows, fx.cols)
        if screen.status.root is None:
            continue
        got = combine(True, catalog.get(fx.agent).evaluate(screen.view()), None, 1e10,
                      record=screen.status.root)
        assert (got.state, got.mark or "") == (fx.state, fx.mark), (fx.id, screen.status.root, got)
        checked += 1
    assert checked >= 40  # Codex 0.171's captures, at least


# -- hostile input ----------------------------------------------------------------------------------
def test_hostile_reports_are_bounded_and_refused():
    screen = CapturedScreen()
    # bad base64: the report stands, its message is empty
    screen.note_bytes(osc("state=blocked:msg=%%%not-base64"), 1)
    assert (screen.status.root.status.state, screen.status.root.status.message) == ("blocked", "")
    # control characters and bidi overrides in a message are taken out
    evil = "Allow\x1b[31m \u202eevil\u202c\x07 it?\r\n\x9b"
    screen.note_bytes(osc(f"state=blocked:kind=permission:msg={b64(evil)}"), 2)
    message = screen.status.root.status.message
    assert message.startswith("Allow") and not any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f
                                                   or 0x202a <= ord(c) <= 0x202e for c in message)
    # a message is cut to MAX_MESSAGE bytes
    screen.note_bytes(osc(f"state=error:msg={b64('x' * 2500)}"), 3)
    assert len(screen.status.root.status.message.encode()) <= MAX_MESSAGE
    # `state=` repeated: the first one counts (a later one cannot smuggle another state)
    screen.note_bytes(osc("state=working:app=a:state=blocked:kind=permission"), 4)
    assert (screen.status.root.status.state, screen.status.root.status.kind) == ("working", "")
    # a flood of child ids: counted, bounded, and never the pane's state
    flood = b"".join(osc(f"state=blocked:app=a:id=c{i}") for i in range(10_000))
    assert not screen.note_bytes(flood, 5)
    assert len(screen.status.children) == MAX_CHILDREN and screen.status.root.status.state == "working"
    # huge and unterminated: dropped, the tail kept bounded; what follows still counts
    screen.note_bytes(b"\x1b]7501;state=idle" + b"A" * 8_000_000, 6)
    assert len(screen._scan._tail) <= MAX_PAYLOAD + 8
    assert screen.status.root.status.state == "working"
    screen.note_bytes(b"\x07" + osc("state=done"), 7)
    assert screen.status.root.status.state == "done"
    # the query and malformed payloads are no reports
    for bad in ("?", "", "state=", "state=sleeping", "app=a", "state=idle:app=a b", "state=idle:id=a//b",
                "state=idle:id=" + "/".join("a" * 9)):
        assert ProgramStatus.parse(bad) is None, bad


# -- identity only -------------------------------------------------------------------------------
def test_an_identity_only_manifest_loads_with_engine_4_and_a_process_to_know_it_by():
    m = parse_manifest({"name": "selfreport", "engine": 4, "identify": {"commands": ["selfreport"]}},
                       "selfreport.toml")
    assert m.identity_only and m.evaluate(PaneScreen().view()).state == "idle"
    for data, why in (({"name": "x", "identify": {"commands": ["x"]}}, "engine = 4"),
                      ({"name": "x", "engine": 4, "identify": {"title": ["X"]}}, "identify.commands"),
                      ({"name": "x", "engine": 4, "fallback": "working", "identify": {"commands": ["x"]}},
                       "fallback"),
                      ({"name": "x", "engine": 4, "rules": {}, "identify": {"commands": ["x"]}}, "list")):
        with pytest.raises(ManifestError, match=why):
            parse_manifest(data, "x.toml")


# -- through a real tmux server and a real sidecar --------------------------------------------------
STAND_IN = r'''
import os, sys, time
steps = sys.argv[1]
os.write(1, b"stand-in agent: it says its state itself\r\n")
n = 0
while True:
    path = os.path.join(steps, str(n))
    if os.path.exists(path):
        with open(path, "rb") as f:
            os.write(1, f.read())
        n += 1
    else:
        time.sleep(0.02)
'''
SELF_REPORTING = 'name = "selfreport"\ndisplay = "Self Report"\nengine = 4\n\n[identify]\ncommands = ["selfreport"]\n'


class StandIn:
    """An agent in a pane that prints what the test hands it, step by step (the test moves it
    on, not a timer)."""

    def __init__(self, server, tmp_path):
        self.steps = tmp_path / "steps"
        self.steps.mkdir()
        script = tmp_path / "stand_in.py"
        script.write_text(STAND_IN)
        self.n = itertools.count()
        self.pane = server.new_pane(f"env AGENTSTATE_AGENT=selfreport {shlex.quote(sys.executable)} "
                                    f"{shlex.quote(str(script))} {shlex.quote(str(self.steps))}")

    def prints(self, data: bytes) -> None:
        n = next(self.n)
        tmp = self.steps / f".{n}"
        tmp.write_bytes(data)
        tmp.rename(self.steps / str(n))


def cli(server, *args):
    env = dict(os.environ)
    env.pop("TMUX", None)
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", "-L", server.name, *args],
                          capture_output=True, text=True, env=env)


# interval at its most (10 s): a report must reach the pane options by the early path, not the
# sweep (the waits below are generous, far under one sweep, never a measure of speed)
SLOW_SWEEP = 10.0
EARLY = 7.0


@pytest.mark.parametrize("intake", ["emulate", "pipe"])
def test_a_self_reporting_agent_in_tmux(tmux_server, sidecar, tmp_path, isolated_config, intake):
    folder = isolated_config / "tmux-agentstate" / "manifests"
    folder.mkdir(parents=True)
    (folder / "selfreport.toml").write_text(SELF_REPORTING)
    agent = StandIn(tmux_server, tmp_path)
    pane = agent.pane
    wait_for(lambda: "stand-in agent" in tmux_server.cmd("capture-pane", "-p", "-t", pane), message="agent up")
    sidecar(interval=SLOW_SWEEP, intake=intake).start()
    opt = lambda name: tmux_server.option(pane, name)  # noqa: E731
    # identity only, no report yet: idle
    wait_for(lambda: tmux_server.state(pane) == "idle", message="adopted, idle")
    assert opt("@agentstate_agent") == "selfreport" and opt("@agentstate_osc") == ""

    # a report cut between two writes (two reads) still counts, once whole
    agent.prints(b"\x1b]7501;state=work")
    agent.prints(b"ing:app=selfreport\x07 streaming text")
    wait_for(lambda: tmux_server.state(pane) == "working", timeout=EARLY, message="working, at once")
    assert opt("@agentstate_source") == "hook" and opt("@agentstate_osc").startswith("working ")

    # a sub-agent's record never decides (it wakes nothing either); it is counted
    agent.prints(osc("state=blocked:app=selfreport:id=sub-1:kind=permission"))

    # blocked: its kind, its message (cleaned) in the detail
    msg = b64("Allow rm -rf build/ ? \u202e#{pane_id}\x1b[2J")
    agent.prints(osc(f"state=blocked:app=selfreport:kind=permission:msg={msg}"))
    wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=EARLY, message="blocked, at once")
    rows = [json.loads(line) for line in cli(tmux_server, "list", "--json").stdout.splitlines()]
    row = next(r for r in rows if r["pane"] == pane)
    assert row["detail"].startswith("Allow rm -rf build/ ?") and "#{pane_id}" in row["detail"]
    assert "\u202e" not in row["detail"] and "\x1b" not in row["detail"]
    explain = cli(tmux_server, "explain", pane).stdout
    assert "OSC 7501: blocked (" in explain and "kind permission" in explain and "in force: it decides" in explain
    assert "1 sub-agent record(s)" in explain and "state: blocked via hook (osc:selfreport)" in explain
    # the popup's rows (and `list`'s): the kind and message of the report that decides
    assert "[permission] Allow rm -rf build/ ?" in cli(tmux_server, "list").stdout

    # done while no client shows the pane: idle, and done
    agent.prints(osc("state=done:app=selfreport"))
    wait_for(lambda: (tmux_server.state(pane), opt("@agentstate_done")) == ("idle", "1"), timeout=EARLY,
             message="done, unseen")

    # error: idle, its mark from its message, the message as the detail
    agent.prints(osc(f"state=working:app=selfreport") + osc(f"state=error:app=selfreport:msg={b64('429 Too Many Requests')}"))
    wait_for(lambda: opt("@agentstate_error") == "rate-limit", timeout=EARLY, message="error mark")
    assert tmux_server.state(pane) == "idle" and "429 Too Many Requests" in opt("@agentstate_detail")

    # clear: the report ends; identity only, the pane is idle, no mark, no record
    agent.prints(osc("state=clear:app=selfreport"))
    wait_for(lambda: opt("@agentstate_osc") == "", timeout=EARLY, message="cleared")
    assert (tmux_server.state(pane), opt("@agentstate_error"), opt("@agentstate_source")) == ("idle", "", "screen")


# -- a real Codex (0.171 writes OSC 7501 unconditionally) -----------------------------------------
from conftest import OutputTap  # noqa: E402
from test_real_agents import (INTERVAL, Observer, codex_command_turn, codex_home, codex_mock,  # noqa: E402,F401
                              codex_start, needs_codex)


@needs_codex
@pytest.mark.parametrize("intake", ["emulate", "pipe"])
def test_a_real_codex_reports_reach_the_pane(tmux_server, sidecar, codex_home, intake):
    """Codex's own reports, read from its bytes by both intakes: idle once ready, done after a
    turn (blocked on its approval between), each the record in @agentstate_osc.

    What Codex wrote is tapped apart from the sidecar (`OutputTap`, tmux's own copy of its
    bytes), so a report it never sent is told from one we lost: in a few loaded runs the raw
    bytes a sidecar read held no blocked report for the approval dialog (idle, working,
    working, done)."""
    sidecar(interval=INTERVAL, intake=intake).start()
    agent = codex_start(tmux_server, codex_home, AGENTSTATE_CODEX_BYPASS_HOOK_TRUST="1")
    tap = OutputTap(tmux_server, agent.pane)
    obs = Observer(tmux_server, agent.pane)
    records = []  # every @agentstate_osc the sidecar published, in order
    import threading
    polling = threading.Lock()  # the test and its poller thread both poll

    def poll():
        with polling:
            value = tmux_server.option(agent.pane, "@agentstate_osc")
            if value and (not records or records[-1] != value):
                records.append(value)
            return value
    try:
        agent.wait_text("? for shortcuts", timeout=60)
        wait_for(lambda: poll().startswith("idle ") and poll().split()[2] == "codex", timeout=15,
                 message="Codex's own idle report")
        stop = threading.Event()
        poller = threading.Thread(target=lambda: [poll() or True for _ in iter(lambda: stop.wait(0.03), True)],
                                  daemon=True)
        poller.start()
        try:
            codex_command_turn(agent, obs)
            wait_for(lambda: poll().startswith("done "), timeout=15, message="Codex's done report")
        finally:
            stop.set()
            poller.join(2)
        said = [r.split()[0] for r in records]
        sent = [p.split(":")[0].removeprefix("state=") for p in tap.reports()]
        assert said[-1] == "done" and sent[-1] == "done", (said, sent, obs.dump())
        # its blocked report, published if it was sent (it lasts until the test answers, seconds
        # of polls every 30 ms), and never made up
        assert ("blocked" in said) == ("blocked" in sent), (said, sent, obs.dump())
        if "blocked" in sent:
            blocked = next(r for r in records if r.startswith("blocked "))
            assert blocked.split()[3] == "permission", blocked  # its kind
        else:
            print(f"Codex sent no blocked report this run: {sent}")
        assert tmux_server.state(agent.pane) == "idle"
    finally:
        tap.close()
        obs.stop()


def test_doctor_and_manifests_list_take_an_identity_only_manifest(tmux_server, tmp_path, isolated_config):
    folder = isolated_config / "tmux-agentstate" / "manifests"
    folder.mkdir(parents=True)
    (folder / "selfreport.toml").write_text(SELF_REPORTING)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "selfreport").write_text("#!/bin/sh\necho 'selfreport 1.2.3'\n")
    (bin_dir / "selfreport").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", XDG_RUNTIME_DIR=str(tmp_path))
    env.pop("TMUX", None)
    listed = subprocess.run([sys.executable, "-m", "tmux_agentstate", "manifests", "list"],
                            capture_output=True, text=True, env=env)
    assert listed.returncode == 0 and "manifest error" not in listed.stderr, listed.stderr
    assert re.search(r"selfreport .* user +identity only", listed.stdout), listed.stdout
    doctor = subprocess.run([sys.executable, "-m", "tmux_agentstate", "doctor", "-L", tmux_server.name],
                            capture_output=True, text=True, env=env)
    assert "manifest selfreport v1 (user" in doctor.stdout and "manifest error" not in doctor.stdout
    assert "selfreport 1.2.3" in doctor.stdout and "identity only" in doctor.stdout, doctor.stdout
