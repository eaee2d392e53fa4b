"""`prefix + a`: the pane that needs the user most, across sessions and windows (the longest
blocked first, then the oldest unseen "done"); pressed again, the next; a message when none
needs the user. Pressed for real: the plugin loaded into a real server, a real client in a
pseudo-terminal typing the prefix and the key."""
import os
import time
from pathlib import Path

from conftest import wait_for
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.plugin.nextkey import after, waiting

ROOT = Path(__file__).resolve().parent.parent
BLOCKED = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked"
               and f.kind == "command-approval")
WORKING = "\x1b[2J\x1b[H\u273b Thinking\u2026 (esc to interrupt)\r\n\r\n> \r\n  ? for shortcuts\r\n"
IDLE = "\x1b[2J\x1b[H\u25cf Done.\r\n\r\n> \r\n  ? for shortcuts\r\n"


def agent(tmux_server, tmp_path, name, first, then=None):
    """A Claude-like pane in a session of its own: draws `first`, and `then` once its go file
    appears."""
    go = tmp_path / f"go-{name}"
    (tmp_path / f"{name}-1.raw").write_bytes(first)
    script = f"stty -echo; cat {tmp_path / f'{name}-1.raw'}; "
    if then is not None:
        (tmp_path / f"{name}-2.raw").write_bytes(then)
        script += f"while [ ! -e {go} ]; do sleep 0.05; done; cat {tmp_path / f'{name}-2.raw'}; "
    pane = tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude sh -c '{script}exec sleep 600'",
                                rows=BLOCKED.rows, cols=BLOCKED.cols)
    return pane, go


def press_next(client):
    os.write(client.fd, b"\x02a")  # C-b a


def shown(tmux_server, client) -> str:
    return tmux_server.tmux.client_pane(client.name()) or ""


def test_the_key_visits_blocked_longest_first_then_done_then_wraps(tmux_server, run_dir, pty_client, tmp_path):
    srv = tmux_server
    blocked = BLOCKED.path.read_bytes()
    quiet, _ = agent(srv, tmp_path, "quiet", IDLE.encode())
    done, go_done = agent(srv, tmp_path, "done", WORKING.encode(), IDLE.encode())
    first, _ = agent(srv, tmp_path, "first", blocked)
    client = pty_client("main", cols=BLOCKED.cols, rows=BLOCKED.rows + 1)
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))  # binds the keys, starts the sidecar
    wait_for(lambda: srv.state(first) == "blocked" and srv.state(done) == "working", timeout=20,
             message="sidecar watching")
    time.sleep(1.1)  # @agentstate_since is in whole seconds: the second blocked one is later
    second, _ = agent(srv, tmp_path, "second", blocked)
    go_done.touch()
    wait_for(lambda: srv.state(second) == "blocked" and srv.option(done, "@agentstate_done") == "1",
             timeout=10, message="two blocked and one done")
    home = shown(srv, client)
    visits = []
    for _ in range(4):
        before = shown(srv, client)
        press_next(client)
        wait_for(lambda: shown(srv, client) != before, timeout=10, message=f"moved after {visits}")
        visits.append(shown(srv, client))
        if visits[-1] == done:  # shown now: seen, no longer done (the list shrinks)
            wait_for(lambda: srv.option(done, "@agentstate_done") == "0", message="done seen")
    assert visits == [first, second, done, first], (visits, home, quiet)
    assert quiet not in visits


def test_the_key_says_so_when_no_agent_needs_you(tmux_server, run_dir, pty_client, tmp_path):
    srv = tmux_server
    quiet, _ = agent(srv, tmp_path, "quiet", IDLE.encode())
    client = pty_client("main")
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    wait_for(lambda: srv.state(quiet) == "idle", timeout=20, message="sidecar watching")
    home = shown(srv, client)
    press_next(client)
    wait_for(lambda: b"no agent needs you" in client.output(), message="the message on the client")
    assert shown(srv, client) == home


def test_order_and_wrap_of_the_visits():
    rows = [{"pane": "%1", "state": "idle", "since": 1, "done": True},
            {"pane": "%2", "state": "blocked", "since": 50},
            {"pane": "%3", "state": "blocked", "since": 10},
            {"pane": "%4", "state": "idle", "since": 5, "done": False},
            {"pane": "%5", "state": "working", "since": 2},
            {"pane": "%6", "state": "idle", "since": 0, "done": True}]
    order = [r["pane"] for r in waiting(rows)]
    assert order == ["%3", "%2", "%6", "%1"]
    assert after(waiting(rows), None)["pane"] == "%3"
    assert after(waiting(rows), "%5")["pane"] == "%3"   # from a pane not in the list: the first
    assert after(waiting(rows), "%2")["pane"] == "%6"
    assert after(waiting(rows), "%1")["pane"] == "%3"   # wraps
    assert after([], "%1") is None
