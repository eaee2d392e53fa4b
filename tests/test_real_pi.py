"""The REAL pi 1.x (harness/pi.py's pinned release, on the Node.js the harness installs) launched
through `tmux-agentstate launch pi` in a private tmux server against harness/mock_pi.py: launch
turns pi's OSC 7501 reports on, and they come through tmux in the pane's bytes (what the
sidecar's intakes read), agreeing with the screen. Skipped when pi is not installed where the
harness keeps it (`scripts/install-agents` installs it)."""
from __future__ import annotations

import re
import shlex
import shutil
import sys
import time

import pytest

from conftest import wait_for
from test_real_agents import AgentPane, _harness, agent_path, launch_argv
from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.core.screen import replay
from tmux_agentstate.core.status import StatusBoard

hpi = _harness("pi")
hcommon = sys.modules["common"]  # the harness's shared module, imported by the drivers

needs_pi = pytest.mark.skipif(
    not hpi.PI_BIN.exists() or not (hpi.NODE_BIN / "node").exists(),
    reason=f"pi {hpi.VERSION} is not installed in {hpi.PREFIX} (run scripts/install-agents)")
OSC_7501 = re.compile(rb"\x1b\]7501;([^\x07\x1b]*)(?:\x07|\x1b\\)")
ROWS, COLS = 30, 100


@pytest.fixture
def pi_pane(tmux_server, tmp_path):
    """pi started by `launch pi` with the permission gate loaded, its bytes piped to a file."""
    mock = hcommon.Mock("mock_pi.py", tmp_path / "mock.jsonl")
    base = hpi.AGENTS / f"test-pi-{tmp_path.name}-{int(time.time() * 1000) % 10**8}"
    home, proj = base / "home", base / "proj"
    hpi.make_home(home, proj, mock.port)
    env = {"HOME": str(home), "PI_OFFLINE": "1", "TERM": "tmux-256color", "LANG": "C.UTF-8",
           "PATH": f"{hpi.NODE_BIN}:{agent_path(hpi.PI_BIN.parent)}"}  # pi 1.x needs node >= 22.19
    argv = launch_argv("pi", "--provider", "mock", "--model", "mock-model",
                       *hpi.extension_args(("permission-gate.ts",)))
    agent = AgentPane(tmux_server, argv, env, proj, rows=ROWS, cols=COLS)
    raw = tmp_path / "pane.raw"
    tmux_server.cmd("pipe-pane", "-O", "-t", agent.pane, f"cat >> {shlex.quote(str(raw))}")
    try:
        yield agent, raw
    finally:
        tmux_server.kill()
        hcommon.kill_pids(hcommon.pids_naming(str(home)))
        mock.close()
        shutil.rmtree(base, ignore_errors=True)


def reports(raw) -> list[str]:
    return [m.group(1).decode() for m in OSC_7501.finditer(raw.read_bytes())]


def root_state(raw) -> str:
    board = StatusBoard()
    for n, payload in enumerate(reports(raw)):
        board.take(payload, float(n))
    return board.root.status.state if board.root else ""


@needs_pi
def test_launched_pi_reports_its_state_through_tmux_and_agrees_with_its_screen(pi_pane):
    agent, raw = pi_pane
    pi = Catalog([BUNDLED_DIR]).get("pi")

    def screen_verdict() -> str:
        return pi.evaluate(replay(raw.read_bytes(), ROWS, COLS).view()).state

    agent.wait_text("mock-model", timeout=60)
    wait_for(lambda: root_state(raw) == "idle", timeout=10)  # pi's report at start
    agent.type("go ahead and run `sudo chown -R www-data:www-data /srv/app` on the box")
    agent.keys("Enter")
    agent.wait_text(hpi.GATE_HINT, timeout=30)
    wait_for(lambda: root_state(raw) == "blocked", timeout=10)
    said = [p for p in reports(raw) if p.startswith("state=blocked")][-1]
    assert ":app=pi" in said and ":msg=" in said, said  # the gate's title, base64
    assert screen_verdict() == "blocked"
    agent.keys("Enter")  # Yes
    agent.wait_text("Done. The tool finished", timeout=30)
    wait_for(lambda: root_state(raw) == "done", timeout=15)
    wait_for(lambda: screen_verdict() == "idle", timeout=10)
    states = [p.split(":")[0] for p in reports(raw)]
    assert states[:4] == ["state=idle", "state=working", "state=blocked", "state=working"], states
    assert "state=done" in states[4:], states
