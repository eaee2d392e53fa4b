"""A live fake agent (draws like Claude Code) followed by the sidecar: every change of its true
state shows in @agentstate within one sweep of the screen changing."""
import sys
import time

import pytest

from conftest import wait_for

INTERVAL = 0.3
SLACK = 0.35  # the option poll below, process scheduling on a loaded 2-core machine


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
    late = []
    for (at, state), (nxt, _) in zip(changes, changes[1:] + [(seen[-1][0], "")]):
        if nxt - at < INTERVAL + SLACK:
            continue  # too short-lived to require (the sweep may sample either side)
        hit = next((t for t, s in seen if at <= t <= nxt and s == state), None)
        if hit is None or hit - at > INTERVAL + SLACK:
            late.append((state, at, None if hit is None else round(hit - at, 3)))
    assert not late, f"{intake}: late or missed {late}"
