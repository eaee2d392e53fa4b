"""Issue 10, item 8: the fault matrix. Each fault is injected into a real tmux with a watching
sidecar; then every pane's published state must equal a fresh look at tmux's own screen (the
oracle: what `explain` says now), within a bound, and nothing may be left behind: no FIFO of a
pane not watched, no pipe or option on a pane without an agent, no traceback in the log.
(Faults covered elsewhere: agent exit, suspend and resume, foreign pipes before and after,
broken and slow manifests, a killed sidecar brought back by the hooks: test_sidecar,
test_manifest, test_plugin.)"""
import json
import os
import signal
import time

import pytest

from conftest import replay_command, wait_for
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.panes.fresh import look
from tmux_agentstate.tmux import Tmux, TmuxError

FIXTURES = load_index()
BOUND = 10.0  # seconds for the state to be right again after a fault (a sweep is 0.3 s here)


def pick(state, agent):
    return next(f for f in FIXTURES if f.state == state and f.agent == agent)


def true_state(server, pane: str) -> str:
    """What tmux's own screen says now (the fresh look `explain` and `send` use)."""
    try:
        lk = look(Tmux(socket_name=server.name), pane)
    except TmuxError:
        return ""
    return lk.state.state if lk.state else ""


def all_right(server, panes) -> bool:
    return all(server.state(p) == true_state(server, p) for p in panes)


def leftovers(server, sc) -> list[str]:
    found = []
    rows = server.cmd("list-panes", "-a", "-F", "#{pane_id} #{pane_pipe} #{@agentstate} "
                      "#{@agentstate_agent} #{@agentstate_pipe}").splitlines()
    watched = set()
    for row in rows:
        pane, piped, *rest = row.split(" ")
        state, agent, fifo = (rest + ["", "", ""])[:3]
        if agent:
            watched.add(pane.lstrip("%"))
        elif state or fifo or piped == "1":
            found.append(f"{pane}: no agent, yet state={state!r} pipe={piped} fifo={fifo!r}")
    folder = sc.runtime_dir()
    for fifo in folder.glob("pane-*.fifo"):
        if fifo.stem.split("-")[1] not in watched:
            found.append(f"FIFO of a pane not watched: {fifo.name}")
    log = folder / "sidecar.log"
    if log.exists() and "Traceback" in log.read_text():
        found.append("traceback in the log")
    return found


def settled(server, sc, panes, bound=BOUND):
    """Called right after a fault: every state right, then nothing left behind, each within
    `bound`. scripts/fault_matrix.py reads the time it took (AGENTSTATE_FAULT_TIMINGS)."""
    started = time.monotonic()
    wait_for(lambda: all_right(server, panes), timeout=bound, interval=0.02,
             message=f"states right: {[(p, server.state(p), true_state(server, p)) for p in panes]}")
    right = time.monotonic() - started
    wait_for(lambda: not leftovers(server, sc), timeout=bound,
             message=f"nothing left behind: {leftovers(server, sc)}")
    timings = os.environ.get("AGENTSTATE_FAULT_TIMINGS")
    if timings:
        with open(timings, "a") as f:
            f.write(json.dumps({"test": os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0],
                                "right": right, "clean": time.monotonic() - started}) + "\n")


@pytest.fixture
def two_agents(tmux_server, sidecar):
    blocked, idle = pick("blocked", "claude"), pick("idle", "codex")
    sc = sidecar(intake="emulate").start()
    panes = [tmux_server.new_pane(replay_command(blocked.path, "claude"), rows=blocked.rows, cols=blocked.cols),
             tmux_server.new_pane(replay_command(idle.path, "codex"), rows=idle.rows, cols=idle.cols)]
    wait_for(lambda: [tmux_server.state(p) for p in panes] == ["blocked", "idle"], message="watched")
    return sc, panes


def test_sidecar_killed_hard_and_started_again(tmux_server, sidecar, two_agents):
    sc, panes = two_agents
    sc.kill(signal.SIGKILL)
    again = sidecar(intake="emulate").start()
    settled(tmux_server, again, panes)


def test_pane_respawned_with_another_program(tmux_server, two_agents):
    sc, panes = two_agents
    codex_blocked = pick("blocked", "codex")
    tmux_server.cmd("respawn-pane", "-k", "-t", panes[0], replay_command(codex_blocked.path, "codex"))
    settled(tmux_server, sc, panes)
    assert tmux_server.option(panes[0], "@agentstate_agent") == "codex"
    tmux_server.cmd("respawn-pane", "-k", "-t", panes[1], "sh -c 'echo Do you want to proceed?; exec sleep 600'")
    settled(tmux_server, sc, panes)
    assert tmux_server.state(panes[1]) == ""


def test_pane_killed(tmux_server, two_agents):
    sc, panes = two_agents
    tmux_server.cmd("kill-pane", "-t", panes[0])
    settled(tmux_server, sc, panes[1:])


def test_window_moved_and_linked_into_two_sessions(tmux_server, two_agents):
    sc, panes = two_agents
    window = tmux_server.cmd("display-message", "-p", "-t", panes[0], "#{window_id}")
    tmux_server.cmd("new-session", "-d", "-s", "elsewhere")
    tmux_server.cmd("move-window", "-s", window, "-t", "elsewhere:")
    settled(tmux_server, sc, panes)
    tmux_server.cmd("link-window", "-s", window, "-t", "main:")
    settled(tmux_server, sc, panes)
    assert tmux_server.cmd("show-options", "-wqv", "-t", window, "@agentstate_window") == "blocked"
    wait_for(lambda: "1" in tmux_server.cmd("show-options", "-gqv", "@agentstate_summary"),
             message="the linked pane counted once")


@pytest.mark.parametrize("cols, rows", [(20, 5), (250, 60)])
def test_resized_to_extremes(tmux_server, two_agents, cols, rows):
    sc, panes = two_agents
    for p in panes:
        session = tmux_server.cmd("display-message", "-p", "-t", p, "#{session_name}")
        tmux_server.cmd("resize-window", "-t", session, "-x", str(cols), "-y", str(rows))
    settled(tmux_server, sc, panes)


def test_server_killed_and_a_new_one_on_the_same_socket(tmux_server, sidecar, two_agents):
    sc, panes = two_agents
    folder = sc.runtime_dir()
    tmux_server.kill()
    sc.proc.wait(15)  # it sees the server go, and goes
    assert not folder.exists()  # taking its folder with it
    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "120", "-y", "32")
    fx = pick("blocked", "claude")
    pane = tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    again = sidecar(intake="emulate").start()
    settled(tmux_server, again, [pane])


@pytest.mark.parametrize("what", ["flood", "random"])
def test_a_flood_or_random_bytes_in_one_pane(tmux_server, two_agents, tmp_path, what):
    """Tens of MB of text, or MBs of random bytes, in a third pane: every pane right after."""
    sc, panes = two_agents
    # CI sizes; AGENTSTATE_FAULT_MB sets both (100 for the run). Random bytes are 10x
    # fewer: they are slow for tmux itself (3.3a, minutes for a few MB, with no sidecar)
    mb = int(os.environ.get("AGENTSTATE_FAULT_MB", "20"))
    if what == "random":
        mb = max(1, mb // 10)
    if what == "flood":
        src = f"yes flood-line-of-text-flood-line-of-text | head -c {mb}000000"
    else:
        src = f"head -c {mb}000000 /dev/urandom"
    noisy = tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude sh -c 'stty -echo; {src}; "
                                 f"exec sleep 600'")
    wait_for(lambda: tmux_server.option(noisy, "pane_current_command") == "sleep",
             timeout=240, message="the noise is over")
    settled(tmux_server, sc, panes + [noisy], bound=BOUND * 2)
    assert sc.proc.poll() is None  # alive
