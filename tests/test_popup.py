"""The prefix + A popup, run in a real tmux pane: order, literal pane text, jump, answer."""
import os
import sys
import time
from pathlib import Path

from conftest import replay_command, wait_for
from tmux_agentstate.core.fixtures import load_index

FIXTURES = load_index()
BLOCKED = next(f for f in FIXTURES if f.agent == "claude" and f.state == "blocked" and f.kind == "command-approval")
IDLE = next(f for f in FIXTURES if f.agent == "codex" and f.state == "idle")


def popup_pane(server):
    return server.new_pane(f"{sys.executable} -m tmux_agentstate popup -L {server.name}", rows=20, cols=200)


def screen(server, pane):
    return server.cmd("capture-pane", "-p", "-t", pane)


def test_popup_says_no_agents(tmux_server):
    pane = popup_pane(tmux_server)
    wait_for(lambda: "no agents" in screen(tmux_server, pane), message="'no agents'")
    tmux_server.cmd("send-keys", "-t", pane, "q")
    wait_for(lambda: tmux_server.cmd("list-panes", "-a", "-F", "#{pane_id}").count(pane) == 0,
             message="popup closed on q")


def test_popup_lists_blocked_first_shows_text_literally_jumps_and_answers(tmux_server, sidecar, tmp_path):
    marker = Path(f"/tmp/as{os.getpid()}")  # short: the row must fit the captured pane's width
    typed = tmp_path / "typed"
    evil = tmp_path / "evil.raw"
    evil.write_bytes(BLOCKED.path.read_bytes()
                     + f"\x1b[1;1HDo you want to proceed? #(touch {marker}) #[fg=red]".encode())
    idle = tmux_server.new_pane(replay_command(IDLE.path, "codex"), rows=IDLE.rows, cols=IDLE.cols)
    blocked = tmux_server.new_pane(
        f"env AGENTSTATE_AGENT=claude sh -c 'stty raw -echo; cat {evil}; exec cat > {typed}'",
        rows=BLOCKED.rows, cols=BLOCKED.cols)
    sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(blocked) == "blocked" and tmux_server.state(idle) == "idle",
             message="both classified")
    pane = popup_pane(tmux_server)
    wait_for(lambda: "codex" in screen(tmux_server, pane), message="popup rows")
    wait_for(lambda: "#[fg=red]" in screen(tmux_server, pane), message="the whole prompt row")
    rows = [l for l in screen(tmux_server, pane).splitlines() if l.split()[3:4] in (["claude"], ["codex"])]
    assert len(rows) == 2, screen(tmux_server, pane)
    assert rows[0].startswith("blocked") and rows[1].startswith("idle")
    assert f"#(touch {marker}) #[fg=red]" in rows[0]
    # answer the blocked one: y, then y again to confirm
    before = typed.read_bytes()
    tmux_server.cmd("send-keys", "-t", pane, "y")
    wait_for(lambda: "confirm" in screen(tmux_server, pane), message="confirm step")
    tmux_server.cmd("send-keys", "-t", pane, "y")
    wait_for(lambda: typed.read_bytes() == before + b"1", message="answered yes")
    # jump to the idle one
    tmux_server.cmd("send-keys", "-t", pane, "j")
    time.sleep(0.2)
    tmux_server.cmd("send-keys", "-t", pane, "Enter")
    wait_for(lambda: tmux_server.option(idle, "pane_active") == "1"
             and tmux_server.option(idle, "window_active") == "1", message="jumped")
    assert not marker.exists()
    marker.unlink(missing_ok=True)


def test_popup_marks_done_context_and_the_error_a_turn_ended_in(tmux_server):
    """What the sidecar publishes (set here by hand, as it would): a done pane reads `done`
    and sorts after blocked, before working; context in use and the error's kind show."""
    srv = tmux_server
    rows = {}
    for name, opts in {
        "working": {"@agentstate": "working", "@agentstate_context": "12"},
        "done": {"@agentstate": "idle", "@agentstate_done": "1", "@agentstate_context": "75",
                 "@agentstate_error": "rate-limit",
                 "@agentstate_detail": "API Error: 429 rate_limit_error ##5"},
        "idle": {"@agentstate": "idle", "@agentstate_done": "0"},
    }.items():
        pane = srv.new_pane("sleep 600")
        for k, v in {"@agentstate_agent": "claude", "@agentstate_since": str(int(time.time()) - 30),
                     **opts}.items():
            srv.cmd("set-option", "-p", "-t", pane, k, v)
        rows[name] = pane
    pane = popup_pane(srv)
    wait_for(lambda: "rate-limit" in screen(srv, pane), message="popup rows")
    lines = [l for l in screen(srv, pane).splitlines() if l.split()[3:4] == ["claude"]]
    assert [l.split()[0] for l in lines] == ["done", "working", "idle"], lines
    assert "75%" in lines[0] and "[rate-limit] API Error: 429 rate_limit_error #5" in lines[0]
    assert "12%" in lines[1] and "%" not in lines[2]
