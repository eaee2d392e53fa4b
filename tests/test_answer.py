"""`answer` and `send` act on what is on screen now, by the sidecar's own rule; each dialog kind
takes its own keys; `answer` looks again after typing; `explain` agrees with the sidecar.

Panes replay real captures (fixtures/). A pane that must react to keys runs a small program
that plays the capture, logs every byte typed into its tty (raw, so a key arrives as tmux sent
it) and redraws as the agent would: its own screen text with the selection moved, another
capture after Enter. What the real agent expects is in harness/NOTES-<agent>.md."""
import os
import re
import shlex
import subprocess
import sys
import time

import pytest

from tmux_agentstate.sidecar.doorbell import ring
from tmux_agentstate.sidecar.runtime import Runtime
from conftest import wait_for
from test_signals import launch_record
from tmux_agentstate.core.fixtures import load_index

FIXTURES = load_index()


def pinned(agent, state, kind=None, **match):
    return next(f for f in FIXTURES if f.agent == agent and f.state == state
                and f.path.parent.name == agent and (kind is None or f.kind == kind)
                and all(getattr(f, k) == v for k, v in match.items()))


BLOCKED = pinned("claude", "blocked", "command-approval", renderer="classic")
IDLE = next(f for f in FIXTURES if f.agent == "claude" and f.state == "idle" and f.rows == BLOCKED.rows
            and f.cols == BLOCKED.cols and f.renderer == BLOCKED.renderer)
TRUST = pinned("claude", "blocked", "folder-trust", renderer="classic")  # 2.1.332: "❯ No, exit" first

DIALOG = r'''
import os, sys, termios, tty
dialog, moved, after, log = sys.argv[1:5]
tty.setraw(0)
attrs = termios.tcgetattr(0)
attrs[3] &= ~termios.ECHO
termios.tcsetattr(0, termios.TCSANOW, attrs)
os.write(1, open(dialog, "rb").read())
while True:
    data = os.read(0, 256)
    if not data:
        break
    with open(log, "ab") as f:
        f.write(data)
    if moved and data in (b"\x1b[B", b"\x1bOB"):  # Down: the selection moves
        rows = open(moved, encoding="utf-8").read().split("\n")
        os.write(1, b"\x1b[2J\x1b[H" + "\r\n".join(rows).encode())
    if after and data in (b"\r", b"1", b"2", b"y", b"\x1b"):  # a key that takes it: the agent goes on
        os.write(1, b"\x1b[?1049l\x1b[2J\x1b[H" + open(after, "rb").read())
'''


def cli(server, *args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    env.pop("TMUX", None)
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L", server.name],
                          capture_output=True, text=True, env=env)


def hook(server, pane, agent, event, payload="{}"):
    """The hook as the agent launched in `pane` runs it (with its proof of origin)."""
    env = dict(os.environ, TMUX=f"{server.tmux.socket()},1,0", TMUX_PANE=pane)
    env.update(launch_record(server, pane))
    subprocess.run([sys.executable, "-m", "tmux_agentstate.hook", agent, event], input=payload,
                   capture_output=True, text=True, env=env, check=True)


class DialogPane:
    """A pane playing `fixture` as claude, logging what is typed into it."""

    def __init__(self, server, tmp_path, fixture, moved="", after="", agent="claude"):
        self.server, self.log = server, tmp_path / "typed.log"
        prog = tmp_path / "dialog.py"
        prog.write_text(DIALOG)
        self.log.write_bytes(b"")
        args = " ".join(shlex.quote(str(a)) for a in (prog, fixture.path, moved, after, self.log))
        self.pane = server.new_pane(f"env AGENTSTATE_AGENT={agent} {sys.executable} {args}",
                                    rows=fixture.rows, cols=fixture.cols)
        self.settled = b""

    def text(self):
        return self.server.cmd("capture-pane", "-p", "-t", self.pane)

    def settle(self, shows: str):
        wait_for(lambda: shows in self.text(), message=repr(shows))
        time.sleep(0.4)  # tmux's answers to the capture's terminal queries land in the log
        self.settled = self.log.read_bytes()

    def typed(self) -> bytes:
        """What reached the program since it settled."""
        return self.log.read_bytes()[len(self.settled):]


def test_a_stale_blocked_report_on_a_screen_that_moved_on_types_nothing(tmux_server, sidecar, tmp_path):
    """(a) The dialog left the screen after the agent's blocked report (Esc fires no hook):
    the sidecar says idle, and so do `explain`, `answer` and `send`, by the same rule."""
    go = tmp_path / "go"
    typed = tmp_path / "typed.log"
    typed.write_bytes(b"")
    script = (f"stty raw -echo; sleep 0.3; cat {BLOCKED.path}; while [ ! -e {go} ]; do sleep 0.05; done; "
              f"printf '\\033[?1049l\\033[2J\\033[H'; cat {IDLE.path}; exec cat >> {typed}")
    pane = tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude sh -c {shlex.quote(script)}",
                                rows=BLOCKED.rows, cols=BLOCKED.cols)
    sc = sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="the dialog seen")
    hook(tmux_server, pane, "claude", "PermissionRequest", '{"tool_name": "Bash"}')
    go.touch()  # the user pressed Esc: the dialog leaves, no hook fires
    wait_for(lambda: tmux_server.state(pane) == "idle", message="idle after Esc")
    assert tmux_server.option(pane, "@agentstate_report").startswith("blocked ")
    time.sleep(0.3)
    before = typed.read_bytes()

    res = cli(tmux_server, "answer", pane, "yes")
    assert res.returncode == 3 and "nothing typed" in res.stderr, res
    assert tmux_server.option(pane, "@agentstate_screen").startswith("idle ")  # what it went by
    out = cli(tmux_server, "explain", pane).stdout
    assert "state: idle via screen" in out and re.search(r"hook report: blocked .*superseded", out), out
    time.sleep(0.5)
    assert typed.read_bytes() == before  # the pane's input is untouched

    # no sidecar: a report alone (in force, and nobody saw the screen change) never makes
    # `answer` type, and makes `send` refuse
    sc.kill()
    wait_for(lambda: tmux_server.option(pane, "@agentstate_screen") == "", message="options withdrawn")
    hook(tmux_server, pane, "claude", "PermissionRequest", '{"tool_name": "Bash"}')
    res = cli(tmux_server, "answer", pane, "yes")
    assert res.returncode == 3 and "no dialog is on screen" in res.stderr, res
    res = cli(tmux_server, "send", pane, "rm -rf everything")
    assert res.returncode == 3 and "blocked" in res.stderr, res
    time.sleep(0.5)
    assert typed.read_bytes() == before


def moved_trust_screen(tmp_path) -> str:
    """The trust dialog's own screen with the selection moved down one option (what Down does
    in Claude 2.1.332: harness/NOTES-claude.md)."""
    text = TRUST.path.with_suffix(".screen.txt").read_text(encoding="utf-8")
    assert " ❯ No, exit" in text and "   Yes, I trust this folder" in text
    text = text.replace(" ❯ No, exit", "   No, exit").replace("   Yes, I trust this folder",
                                                             " ❯ Yes, I trust this folder")
    path = tmp_path / "moved.txt"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_b_folder_trust_yes_picks_yes_i_trust_this_folder(tmux_server, tmp_path):
    """(b) Claude's folder trust has no numbers, "No, exit" first: `yes` moves the selection
    to "Yes, I trust this folder", sees it there, presses Enter; `always` does not exist
    there: one line naming what it takes, nothing typed."""
    dp = DialogPane(tmux_server, tmp_path, TRUST, moved=moved_trust_screen(tmp_path), after=IDLE.path)
    dp.settle("Yes, I trust this folder")
    res = cli(tmux_server, "answer", dp.pane, "always")
    assert res.returncode == 1 and "folder-trust" in res.stderr and "takes no, yes" in res.stderr, res
    assert res.stderr.count("\n") == 1 and "nothing typed" in res.stderr
    time.sleep(0.3)
    assert dp.typed() == b""
    res = cli(tmux_server, "answer", dp.pane, "yes")
    assert res.returncode == 0, res.stderr
    assert dp.typed() in (b"\x1b[B\r", b"\x1bOB\r")  # Down, then Enter on "Yes, I trust this folder"
    assert "for shortcuts" in dp.text()


def test_c_a_dialog_that_does_not_take_the_answer_is_said(tmux_server, tmp_path):
    """(c) The keys went in but the dialog stayed: exit non-zero, one line saying so."""
    dp = DialogPane(tmux_server, tmp_path, BLOCKED)
    dp.settle("Do you want to")
    res = cli(tmux_server, "answer", dp.pane, "yes")
    assert res.returncode == 1 and "still on screen" in res.stderr and "not taken" in res.stderr, res
    assert res.stderr.count("\n") == 1
    assert dp.typed() == b"1"  # what claude's permission dialog takes for yes


def test_answer_succeeds_when_the_dialog_takes_it(tmux_server, tmp_path):
    dp = DialogPane(tmux_server, tmp_path, BLOCKED, after=IDLE.path)
    dp.settle("Do you want to")
    res = cli(tmux_server, "answer", dp.pane, "yes")
    assert res.returncode == 0 and res.stdout.startswith("answered yes"), res
    assert dp.typed() == b"1"


def test_a_pick_whose_selection_does_not_move_never_presses_enter(tmux_server, tmp_path):
    """`always` on Claude's permission dialog picks "2. Yes, and don't ask again …" by its
    label (the numbers differ between dialogs and releases): Down, see it selected, Enter. A
    selection that did not move gets no Enter."""
    dp = DialogPane(tmux_server, tmp_path, BLOCKED, after=IDLE.path)
    dp.settle("Do you want to")
    res = cli(tmux_server, "answer", dp.pane, "always")
    assert res.returncode == 1 and "Enter not pressed" in res.stderr, res
    assert dp.typed() in (b"\x1b[B", b"\x1bOB")


def test_explain_agrees_with_the_sidecar(tmux_server, sidecar, tmp_path):
    """`explain` says the state and source the sidecar published, by the same reasoning: a
    report newer than the screen's last change wins; one older than it is superseded."""
    pane = tmux_server.new_pane(
        f"env AGENTSTATE_AGENT=claude sh -c {shlex.quote(f'stty -echo; sleep 0.3; cat {IDLE.path}; exec sleep 600')}",
        rows=IDLE.rows, cols=IDLE.cols)
    sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "idle", message="idle")

    def agree(state, source):
        wait_for(lambda: (tmux_server.state(pane), tmux_server.option(pane, "@agentstate_source"))
                 == (state, source), message=f"{state} via {source}")
        out = cli(tmux_server, "explain", pane).stdout
        assert f"state: {state} via {source}" in out, out
        return out

    agree("idle", "screen")
    first_look = int(tmux_server.option(pane, "@agentstate_since"))  # the screen's verdict began
    hook(tmux_server, pane, "claude", "UserPromptSubmit")  # after the screen's last change: wins
    out = agree("working", "hook")
    assert re.search(r"hook report: working .*in force", out)
    # a report from before the screen's verdict last changed is superseded, on both sides
    token = launch_record(tmux_server, pane)["AGENTSTATE_TOKEN"]
    tmux_server.cmd("set-option", "-p", "-t", pane, "@agentstate_report",
                    f"blocked {first_look - 1} hook:claude:PermissionRequest {token}")
    ring(Runtime(tmux_server.tmux.socket()).dir, pane)  # as the hook does after its report
    out = agree("idle", "screen")
    assert re.search(r"hook report: blocked .*superseded", out), out


def test_rule_answers_are_checked_when_loaded(tmp_path):
    from tmux_agentstate.core.manifest import ManifestError, parse_manifest
    base = {"name": "x", "engine": 3, "rules": [{"id": "d", "state": "blocked", "any": ["Q"]}]}

    def load(rule_extra=None, top=None, engine=3):
        data = dict(base, engine=engine, rules=[dict(base["rules"][0], **(rule_extra or {}))],
                    **(top or {}))
        return parse_manifest(data, tmp_path / "x.toml")

    m = load({"answers": {"yes": {"pick": "^Yes", "marker": "❯"}, "no": ["Escape"]}})
    assert set(m.rules[0].answers) == {"yes", "no"}
    assert load({"answers": {}}).rules[0].answers == {}
    for bad in ({"answers": {"yes": [";", "kill-server"]}}, {"answers": {"yes": ["-X"]}},
                {"answers": {"yes": []}}, {"answers": {"Yes!": ["y"]}},
                {"answers": {"yes": {"pick": "(", "marker": "❯"}}},
                {"answers": {"yes": {"pick": "Yes"}}}, {"answers": ["y"]}):
        with pytest.raises(ManifestError):
            load(bad)
    with pytest.raises(ManifestError, match="engine = 3"):
        load({"answers": {"yes": ["y"]}}, engine=2)
    with pytest.raises(ManifestError, match="only a blocked rule"):
        parse_manifest(dict(base, rules=[{"id": "w", "state": "working", "any": ["Q"],
                                          "answers": {"yes": ["y"]}}]), tmp_path / "x.toml")


def test_the_fresh_look_supersedes_reports_by_the_sidecars_rule():
    """One rule (core/combine.py), two callers: the sidecar at each classification, the fresh
    look from what the sidecar published."""
    from tmux_agentstate.core.combine import (Report, combine, fresh_screen_changed_at,
                                              screen_option, screen_verdict_since)
    from tmux_agentstate.core.manifest import Match
    now = 1_000_000.0
    assert screen_verdict_since(None, 0.0, "idle", now) == now          # a first look is a change
    assert screen_verdict_since("idle", now - 9, "idle", now) == now - 9
    assert screen_verdict_since("blocked", now - 9, "idle", now) == now
    published = screen_option("idle", now - 9)
    assert fresh_screen_changed_at(published, "idle", now) == now - 9
    assert fresh_screen_changed_at(published, "working", now) == now    # changed since it looked
    assert fresh_screen_changed_at("", "idle", now) == 0.0               # no sidecar: unknown
    assert fresh_screen_changed_at("blocked soon", "idle", now) == 0.0   # not ours
    report = Report("blocked", now - 10, "hook:claude:PermissionRequest")
    idle = Match("idle", "idle-footer", "? for shortcuts")
    assert combine(True, idle, report, now, screen_changed_at=now - 9).state == "idle"
    assert combine(True, idle, report, now, screen_changed_at=0.0).state == "blocked"
