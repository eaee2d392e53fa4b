"""Cost follows change (issue 29), told by what the sidecar does, not by timings: a working
agent's screen is read when it matters, not at every burst of its spinner; waiting agents
slow the sweep down, and what tmux says still wakes it at once."""
from __future__ import annotations

import shlex
import time

import pytest

from conftest import wait_for

# a Claude Code spinner row redrawn in place every 50 ms for `seconds`, then its permission
# dialog, then nothing: an agent that works, then asks
SPINNER = ("i=0; while [ $i -lt {frames} ]; do "
           "printf '\\r✻ Thinking… (%ss · esc to interrupt)\\033[K' $((i / 20)); "
           "i=$((i + 1)); sleep 0.05; done; "
           "printf '\\r\\033[KDo you want to proceed?\\n ❯ 1. Yes\\n   2. No\\n'; exec sleep 600")


def agent_pane(tmux_server, script: str) -> str:
    return tmux_server.new_pane("sh -c " + shlex.quote(script), rows=20, cols=100,
                                env={"AGENTSTATE_AGENT": "claude"})


def fresh_status(sc, after: float) -> dict:
    """The status file as written after `after` (unix time): a heartbeat comes every 5 s."""
    return wait_for(lambda: (lambda st: st if st and st.get("updated", 0) > after else None)(
        sc.status()), timeout=12, message="a status written after the mark")


def test_a_working_agents_screen_is_read_when_it_matters_not_at_every_burst(tmux_server, sidecar):
    sc = sidecar(intake="pipe").start()
    pane = agent_pane(tmux_server, SPINNER.format(frames=240))  # 12 s of spinner
    wait_for(lambda: tmux_server.state(pane) == "working", message="working")
    before = fresh_status(sc, time.time())
    time.sleep(4)  # 80 bursts; each used to cost a capture-pane (a line in show-messages)
    after = fresh_status(sc, time.time())
    assert after["tmux_commands"] - before["tmux_commands"] <= 10, (before, after)
    assert tmux_server.state(pane) == "working"
    # its prompt, drawn when the spinner stops, is read at once
    wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=20, message="blocked")


@pytest.mark.parametrize("intake", ["pipe", "emulate"])
def test_a_prompt_drawn_while_the_pane_still_prints_is_seen_from_its_bytes(tmux_server, sidecar,
                                                                            intake):
    """The prompt's text in the bytes of a busy pane is enough: its screen is read at once,
    though the spinner row goes on being redrawn below the dialog."""
    script = ("i=0; while [ $i -lt 40 ]; do printf '\\r✻ Thinking… (1s · esc to interrupt)"
              "\\033[K'; i=$((i + 1)); sleep 0.05; done; "
              "printf '\\nDo you want to proceed?\\n ❯ 1. Yes\\n   2. No\\n'; "
              "while :; do printf '\\r✻ Waiting %s\\033[K' $i; i=$((i + 1)); sleep 0.05; done")
    sc = sidecar(intake=intake).start()
    pane = agent_pane(tmux_server, script)
    wait_for(lambda: tmux_server.state(pane) == "working", message="working")
    wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=4, message="blocked")
    assert sc.proc.poll() is None


def test_waiting_agents_slow_the_sweep_and_news_still_wakes_it(tmux_server, sidecar):
    sc = sidecar(intake="emulate", interval=0.3).start()
    panes = [agent_pane(tmux_server, "printf 'idle\\n> '; exec sleep 600") for _ in range(3)]
    wait_for(lambda: all(tmux_server.state(p) == "idle" for p in panes), message="idle")
    first = fresh_status(sc, time.time())
    last = fresh_status(sc, first["updated"] + 5.5)
    seconds = last["updated"] - first["updated"]
    # at the sweep's pace (0.3 s) that would be 18 or more sweeps; slowed, one every 0.9 s
    assert last["sweeps"] - first["sweeps"] <= seconds / 0.8 + 2, (first, last)
    # a new agent window in another session than the control client's: tmux says so
    # (%unlinked-window-add), and the slowed loop wakes for it
    session = tmux_server.cmd("display-message", "-p", "-t", panes[-1], "#{session_name}")
    pane = tmux_server.cmd("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", f"{session}:",
                           "env AGENTSTATE_AGENT=claude sh -c \"printf 'idle'; exec sleep 600\"")
    wait_for(lambda: tmux_server.state(pane) == "idle", message="the new window's agent")


def test_a_working_pane_that_goes_on_printing_is_classified_when_quiet_or_rarely(tmp_path):
    """emulate, at the sweep: a pane that was not working is looked at `settle` after its
    bytes (its first bytes make it working at once); a working one only once quiet for
    `quiet` (a spinner pauses between frames: not quiet), or every `busy_classify`."""
    from types import SimpleNamespace

    from tmux_agentstate.core.combine import PaneState
    from tmux_agentstate.sidecar.config import Config
    from tmux_agentstate.sidecar.intakes import EmulateIntake

    c = Config()
    intake = EmulateIntake(None, c, {}, tmp_path)
    now = 1000.0

    def pane(state, since_byte, since_classified):
        return SimpleNamespace(state=state and PaneState(state, "screen"),
                               last_byte=now - since_byte, last_classified=now - since_classified)

    frame_gap = (c.settle + c.quiet) / 2  # longer than settle, shorter than quiet
    assert intake.worth_classifying(pane(None, 0.0, 0.0), now)
    assert intake.worth_classifying(pane("idle", frame_gap, 0.1), now)
    assert not intake.worth_classifying(pane("working", frame_gap, 0.1), now)
    assert intake.worth_classifying(pane("working", c.quiet, 0.1), now)
    assert intake.worth_classifying(pane("working", frame_gap, c.busy_classify), now)
    assert not intake.worth_classifying(pane("idle", 0.0, 0.1), now)
    intake.close()


def test_a_working_panes_look_waits_for_a_prompts_word_or_a_pause(tmp_path):
    """emulate: the pre-check of a working pane that goes on printing is put off until its
    bytes hold a word of a prompt (one cut between two reads too) or it pauses for `quiet`;
    a pane that is not working, or that paused, is looked at when due."""
    from types import SimpleNamespace

    from tmux_agentstate.core.catalog import Catalog
    from tmux_agentstate.core.combine import PaneState
    from tmux_agentstate.sidecar.config import Config
    from tmux_agentstate.sidecar.intakes import EmulateIntake

    c = Config()
    intake = EmulateIntake(None, c, {}, tmp_path)
    claude = Catalog().by_name["claude"]
    now = 1000.0

    def pane(state="working", since_byte=0.01):
        return SimpleNamespace(pane_id="%1", manifest=claude, due=now,
                               state=state and PaneState(state, "screen"),
                               last_byte=now - since_byte)

    spinner = "\r✻ Thinking… (3s · esc to interrupt)\x1b[K".encode()
    w = pane()
    intake._note_words(w, spinner)
    assert intake._put_off(w, now) and w.due == w.last_byte + c.quiet
    assert not intake._note_words(w, b"\x1b[9;1HEsc to can")
    assert intake._put_off(w, now)
    assert intake._note_words(w, b"cel")  # the word cut between two reads: the look is due
    assert not intake._note_words(w, b"cancel")  # already due
    assert not intake._put_off(w, now)
    intake._drop_words(w)
    assert not intake._put_off(pane(since_byte=c.quiet), now)  # a pause: looked at
    assert not intake._put_off(pane("idle"), now)
    assert not intake._put_off(pane("blocked"), now)
    intake.close()
