""""done": a turn that finished while no client showed the pane reads apart from idle (window
badge, summary, `@agentstate_done`) until a client shows it; the pane's `@agentstate` stays
idle (the contract). Real tmux, real clients in pseudo-terminals, the sidecar as users run it."""
import time

from conftest import wait_for
from tmux_agentstate.sidecar.config import ICONS

WORKING = "\x1b[2J\x1b[H\u273b Thinking\u2026 (esc to interrupt)\r\n\r\n> \r\n  ? for shortcuts\r\n"
IDLE = "\x1b[2J\x1b[H\u25cf Done.\r\n\r\n> \r\n  ? for shortcuts\r\n"


def turn(tmux_server, tmp_path):
    """A Claude-like pane that works until `go` appears, then finishes its turn."""
    (tmp_path / "w.raw").write_text(WORKING)
    (tmp_path / "i.raw").write_text(IDLE)
    go = tmp_path / "go"
    script = (f"stty -echo; cat {tmp_path / 'w.raw'}; while [ ! -e {go} ]; do sleep 0.05; done; "
              f"cat {tmp_path / 'i.raw'}; exec sleep 600")
    pane = tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude sh -c '{script}'")
    return pane, go


def window_state(tmux_server, pane):
    return tmux_server.cmd("display-message", "-p", "-t", pane, "#{@agentstate_window}")


def summary(tmux_server):
    return tmux_server.cmd("show-options", "-gqv", "@agentstate_summary")


def test_a_turn_finished_unseen_is_done_until_a_client_shows_it(tmux_server, sidecar, pty_client, tmp_path):
    pane, go = turn(tmux_server, tmp_path)
    pty_client("main")  # a client elsewhere: the agent's session has none
    sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "working", message="working")
    go.touch()
    wait_for(lambda: tmux_server.option(pane, "@agentstate_done") == "1", message="done")
    assert tmux_server.state(pane) == "idle"  # the pane's own state: the contract
    assert window_state(tmux_server, pane) == "done"
    assert f"{ICONS['done']}1" in summary(tmux_server)
    session = tmux_server.cmd("display-message", "-p", "-t", pane, "#{session_name}")
    pty_client(session)  # the user looks
    wait_for(lambda: tmux_server.option(pane, "@agentstate_done") == "0", timeout=3,
             message="done no more once a client shows it")
    wait_for(lambda: window_state(tmux_server, pane) == "idle", timeout=3, message="badge idle")
    assert f"{ICONS['done']}1" not in summary(tmux_server)
    assert tmux_server.option(pane, "@agentstate_seen") == "1"


def test_switching_a_client_to_the_pane_clears_done_within_a_sweep(tmux_server, sidecar, pty_client, tmp_path):
    """The control client's notifications say a client moved: no wait for the periodic
    listing (5 s)."""
    pane, go = turn(tmux_server, tmp_path)
    client = pty_client("main")
    sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "working", message="working")
    go.touch()
    wait_for(lambda: tmux_server.option(pane, "@agentstate_done") == "1", message="done")
    time.sleep(0.5)
    tmux_server.cmd("switch-client", "-c", client.name(), "-t", pane)
    wait_for(lambda: tmux_server.option(pane, "@agentstate_done") == "0", timeout=2.5,
             message="done cleared after switch-client")


def test_a_turn_finished_in_front_of_the_user_is_plain_idle(tmux_server, sidecar, pty_client, tmp_path):
    pane, go = turn(tmux_server, tmp_path)
    session = tmux_server.cmd("display-message", "-p", "-t", pane, "#{session_name}")
    pty_client(session)
    sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "working", message="working")
    time.sleep(0.5)  # a listing has seen the client in front of it
    go.touch()
    wait_for(lambda: tmux_server.state(pane) == "idle", message="idle")
    time.sleep(1.0)
    assert tmux_server.option(pane, "@agentstate_done") == "0"
    assert window_state(tmux_server, pane) == "idle"
