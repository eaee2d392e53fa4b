"""A live fake agent (draws like Claude Code) followed by the sidecar: every true state that lasts
long enough to be seen shows in @agentstate before the agent moves on, and nothing else does.
How soon is a figure for scripts/bench_sidecar.py accuracy, not an assertion here: on a loaded
2-core machine a sweep can run late."""
import sys
import time

import pytest

from conftest import wait_for

INTERVAL = 0.3
SEEN_SPAN = 1.5  # a true state lasting this long must show: several sweeps, whatever the load


@pytest.mark.parametrize("intake", ["pipe", "emulate", "capture"])
def test_live_agent_working_blocked_working_idle(tmux_server, sidecar, tmp_path, intake):
    truth = tmp_path / "truth"
    sidecar(interval=INTERVAL, intake=intake).start()
    pane = tmux_server.new_pane(
        f"env AGENTSTATE_AGENT=claude AGENTSTATE_TRUTH_FILE={truth} {sys.executable} -m "
        f"tmux_agentstate.demo.fake_agent --autopilot --seed 11 --speed 2 --tasks 3")
    seen = []
    deadline = time.time() + 45
    while time.time() < deadline:
        seen.append((time.time(), tmux_server.state(pane)))
        states = [l.split()[1] for l in truth.read_text().splitlines()] if truth.exists() else []
        if states.count("idle") >= 3 and "blocked" in states and time.time() - float(
                truth.read_text().splitlines()[-1].split()[0]) > 1.5:
            break
        time.sleep(0.05)
    changes = [(float(t), s) for t, s in (l.split() for l in truth.read_text().splitlines())]
    assert [s for _, s in changes].count("blocked") >= 1, changes
    # each true state with the time the next one began (the last lasts until the last sample)
    spans = [(state, at, nxt) for (at, state), (nxt, _) in
             zip(changes, changes[1:] + [(seen[-1][0], "")])]
    missed = [(state, at, round(nxt - at, 3)) for state, at, nxt in spans
              if nxt - at >= SEEN_SPAN  # shorter ones the sweep may sample either side of
              and not any(at <= t <= nxt and s == state for t, s in seen)]
    assert not missed, f"{intake}: a true state never shown while it lasted {missed}"
    # never blocked unless the agent was: each blocked sample lies in or just after a true one
    false_blocked = [t for t, s in seen if s == "blocked" and not any(
        a <= t <= b + SEEN_SPAN for state, a, b in spans if state == "blocked")]
    assert not false_blocked, f"{intake}: blocked while the agent was not {false_blocked}"
