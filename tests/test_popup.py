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


def test_selection_follows_the_pane_not_the_row():
    from tmux_agentstate.plugin.popup import Selection
    rows = lambda *panes: [{"pane": p} for p in panes]  # noqa: E731
    sel = Selection()
    assert sel.follow(rows("%1", "%2", "%3")) == 0
    assert sel.move(rows("%1", "%2", "%3"), 2) == 2 and sel.pane == "%3"
    assert sel.follow(rows("%3", "%1", "%2")) == 0          # %3 became blocked: to the top
    assert sel.move(rows("%3", "%1", "%2"), 1) == 1 and sel.pane == "%1"
    assert sel.follow(rows("%3", "%2")) == 1 and sel.pane == "%2"  # %1 gone: the row it was on
    assert sel.follow(rows("%3")) == 0 and sel.pane == "%3"        # past the end: the last row
    assert sel.follow([]) == 0 and sel.pane is None
    assert sel.move([], 1) == 0 and sel.follow(rows("%4")) == 0 and sel.pane == "%4"


def highlighted(server, pane) -> str:
    """The text of the popup's selected (reverse video) row, as its terminal shows it."""
    import pyte
    text = server.cmd("capture-pane", "-p", "-e", "-t", pane)
    lines = text.split("\n")
    scr = pyte.Screen(200, len(lines))
    pyte.Stream(scr).feed("\r\n".join(lines))
    for y in range(len(lines)):
        row = scr.buffer[y]
        if any(row[x].reverse for x in range(5)):
            return "".join(row[x].data for x in range(200)).rstrip()
    return ""


def test_popup_keeps_the_selected_pane_when_the_list_re_sorts(tmux_server):
    """The user selects the last row's pane; it becomes blocked and moves to the top as the
    list refreshes: the selection moves with it, so Enter (or y, or r) acts on that pane, not on
    whichever pane slid into its row. When the selected pane goes, the row where it was is."""
    srv = tmux_server
    panes = {}
    for name, state, age in (("alpha", "working", 10), ("bravo", "idle", 20), ("charlie", "idle", 30)):
        pane = srv.new_pane("sleep 600")
        srv.cmd("rename-session", "-t", pane, name)
        for k, v in {"@agentstate_agent": "claude", "@agentstate": state,
                     "@agentstate_since": str(int(time.time()) - age)}.items():
            srv.cmd("set-option", "-p", "-t", pane, k, v)
        panes[name] = pane
    popup = popup_pane(srv)
    wait_for(lambda: highlighted(srv, popup).split()[2:3] == ["alpha:0.0"], message="first row selected")
    for _ in range(2):
        srv.cmd("send-keys", "-t", popup, "j")
    wait_for(lambda: "charlie:0.0" in highlighted(srv, popup), message="charlie selected")
    srv.cmd("set-option", "-p", "-t", panes["charlie"], "@agentstate", "blocked")
    wait_for(lambda: screen(srv, popup).split("\n")[2].startswith("blocked"), message="re-sorted")
    wait_for(lambda: "charlie:0.0" in highlighted(srv, popup), message="the selection kept charlie")
    assert highlighted(srv, popup).startswith("blocked")
    srv.cmd("send-keys", "-t", popup, "j")  # to alpha, now the second row
    wait_for(lambda: "alpha:0.0" in highlighted(srv, popup), message="alpha selected")
    srv.cmd("kill-pane", "-t", panes["alpha"])
    wait_for(lambda: "alpha" not in screen(srv, popup), message="alpha gone from the list")
    wait_for(lambda: "bravo:0.0" in highlighted(srv, popup), message="the row where alpha was")
    srv.cmd("send-keys", "-t", popup, "q")


def test_popup_names_the_command_when_it_is_not_on_path(tmux_server):
    """TPM's venv keeps `tmux-agentstate` inside the plugin folder: the popup's last line says
    where it is; with it on PATH, nothing is said."""
    venv_bin = Path(sys.executable).parent
    assert (venv_bin / "tmux-agentstate").exists()
    cmd = f"{sys.executable} -m tmux_agentstate popup -L {tmux_server.name}"
    # (env in the command: a new session's -e PATH does not reach it)
    off = tmux_server.new_pane(f"env PATH=/usr/bin:/bin {cmd}", rows=20, cols=200)
    wait_for(lambda: f"command line: {venv_bin / 'tmux-agentstate'}" in screen(tmux_server, off),
             message="the command's path in the popup")
    on = tmux_server.new_pane(f"env PATH={venv_bin}:/usr/bin:/bin {cmd}", rows=20, cols=200)
    wait_for(lambda: "no agents" in screen(tmux_server, on), message="the popup drawn")
    assert "command line:" not in screen(tmux_server, on)
    for pane in (off, on):
        tmux_server.cmd("send-keys", "-t", pane, "q")


def test_popup_lists_remote_rows_with_host_dims_stale_ones_and_answers_through_the_link(tmux_server):
    """Remote rows (hosts.json as the sidecar's links write it) among the local ones: with their
    host and age, a stale one dimmed and marked; y on a remote row asks its host through
    hosts.sock (served here as the sidecar does) and shows the one-line result."""
    from test_remote_view import FakeLinks, folder_of, host, remote_row
    from tmux_agentstate.sidecar.hosts import files
    srv = tmux_server
    now = int(time.time())
    local = srv.new_pane("sleep 600")
    for k, v in {"@agentstate_agent": "codex", "@agentstate": "idle",
                 "@agentstate_since": str(now - 90)}.items():
        srv.cmd("set-option", "-p", "-t", local, k, v)
    files.write_hosts(folder_of(srv), [
        host("devbox", [remote_row("%7", "blocked", "api:1.0", now - 7200, "Allow edit of a.py?")]),
        host("gpu2", [remote_row("%2", "working", "train:0.0", now - 600)], status="stale",
             last_update=time.time() - 75)])
    links = FakeLinks(folder_of(srv), {"answer": (0, "answered yes in %7 (api:1.0)")})
    try:
        pane = popup_pane(srv)
        wait_for(lambda: "gpu2" in screen(srv, pane), message="remote rows in the popup")
        capture = screen(srv, pane)
        print(capture)  # the report's text capture
        rows = [l for l in capture.splitlines()[2:] if l.strip()]
        assert rows[0].startswith("blocked") and "devbox:api:1.0" in rows[0] and " 2h " in rows[0]
        assert rows[1].startswith("working") and "gpu2:train:0.0" in rows[1] and " 10m " in rows[1]
        assert "[stale, heard 1m ago]" in rows[1]
        assert rows[2].startswith("idle") and "codex" in rows[2]
        import re
        escaped = srv.cmd("capture-pane", "-p", "-e", "-t", pane).splitlines()
        dimmed = lambda line: any("2" in sgr.split(";")  # noqa: E731
                                  for sgr in re.findall(r"\x1b\[([0-9;]*)m", line))
        assert [dimmed(l) for l in escaped if "gpu2" in l] == [True]  # A_DIM: the stale row
        assert [dimmed(l) for l in escaped if "devbox" in l] == [False]
        srv.cmd("send-keys", "-t", pane, "y")
        wait_for(lambda: "confirm" in screen(srv, pane), message="confirm step")
        srv.cmd("send-keys", "-t", pane, "y")
        wait_for(lambda: "devbox: answered yes in %7 (api:1.0)" in screen(srv, pane),
                 message="the host's answer in the popup")
        assert links.requests == [{"op": "answer", "host": "devbox", "pane": "%7", "choice": "yes"}]
        srv.cmd("send-keys", "-t", pane, "q")
    finally:
        links.close()
