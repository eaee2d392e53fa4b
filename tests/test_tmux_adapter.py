"""The tmux adapter against a real server with enough panes that ids reach %10."""
import time

from conftest import wait_for
from tmux_agentstate.tmux import ServerGone, Tmux, TmuxError


def test_batched_captures_come_back_under_their_own_pane_ids(tmux_server):
    panes = [tmux_server.new_pane(f"sh -c 'echo screen-of-{i}; exec sleep 600'", rows=5, cols=30)
             for i in range(11)]
    assert "%10" in panes
    for p in panes:
        wait_for(lambda: "screen-of" in tmux_server.cmd("capture-pane", "-p", "-t", p), message=p)
    listed, _, screens = tmux_server.tmux.listing(panes)
    assert set(screens) == set(panes)
    for i, p in enumerate(panes):
        assert screens[p].splitlines()[0] == f"screen-of-{i}"
    escaped = tmux_server.tmux.capture(panes)
    assert set(escaped) == set(panes) and "screen-of-10" in escaped[panes[10]]
    assert {p.pane_id for p in listed} >= set(panes)


def test_control_client_runs_commands_literally_and_survives_pane_text(tmux_server):
    """The sidecar's control-mode client: arguments reach tmux as they are (no `$`, `~`, `;`,
    `#` or quote games), a capture of pane text that looks like the protocol's own guard
    lines is returned as text, and a failing command is an error, not a hang."""
    tmux = Tmux(socket_name=tmux_server.name)
    tmux.use_control()
    try:
        tricky = "it's $HOME ~ ; {x} #{pane_id} \"q\" \\ %end 1 2 1"
        tmux.run(["set-option", "-g", "@agentstate-test", tricky])
        assert tmux_server.cmd("show-options", "-gqv", "@agentstate-test") == tricky
        assert tmux.control.connected  # it went through the control client, not a process
        pane = tmux_server.new_pane(
            "sh -c 'printf \"%%end 1 2 1\\n%%begin 1 3 1\\n%%error 9 9 1\\nafter\\n\"; exec sleep 600'",
            rows=6, cols=40)
        wait_for(lambda: "after" in tmux_server.cmd("capture-pane", "-p", "-t", pane), message="text")
        views = tmux.capture_views([pane])
        assert views[pane].text.splitlines()[:4] == ["%end 1 2 1", "%begin 1 3 1", "%error 9 9 1", "after"]
        assert (views[pane].rows, views[pane].cols) == (6, 40)
        try:
            tmux.run(["display-message", "-p", "ok"], ["capture-pane", "-p", "-t", "%999"])
        except TmuxError as e:
            assert "%999" in str(e)
        else:
            raise AssertionError("a failing command must raise")
        assert tmux.run(["display-message", "-p", "still here"]) == ["still here"]
        # a newline cannot travel in a control-mode line: that call takes a process instead
        tmux.run(["set-option", "-g", "@agentstate-test", "two\nlines"])
        assert tmux_server.cmd("show-options", "-gv", "@agentstate-test") == "two\nlines"
        # the control client is attached to a session but never sizes its windows
        clients = tmux_server.cmd("list-clients", "-F", "#{client_control_mode} #{client_flags}")
        assert "ignore-size" in clients and clients.startswith("1 ")
        assert tmux_server.cmd("display-message", "-p", "-t", pane, "#{window_height}") == "6"
    finally:
        tmux.close()
    wait_for(lambda: tmux_server.cmd("list-clients") == "", message="control client gone")


def test_control_client_reports_a_dead_server(tmux_server):
    tmux = Tmux(socket_name=tmux_server.name)
    tmux.use_control()
    tmux.run(["display-message", "-p", "x"])
    tmux_server.cmd("kill-server")
    try:
        tmux.run(["display-message", "-p", "x"])
    except ServerGone:
        pass
    else:
        raise AssertionError("a dead server must raise ServerGone")
    finally:
        tmux.close()


def test_control_client_tells_when_a_client_may_show_another_pane(tmux_server, pty_client):
    """`news`: from the control client's notifications, read without waiting and
    without a command in between (a quiet sidecar sends none)."""
    other = tmux_server.new_pane("sleep 600")
    client = pty_client("main")
    tmux = Tmux(socket_name=tmux_server.name)
    tmux.use_control()
    try:
        tmux.run(["display-message", "-p", "x"])
        # its own attach: tmux queues that %session-changed, so it can come after the answer
        wait_for(tmux.news, timeout=3, message="the control client's own attach")
        time.sleep(0.2)
        assert not tmux.news()
        tmux_server.cmd("switch-client", "-c", client.name(), "-t", other)
        wait_for(tmux.news, timeout=3, message="a client switched session")
        assert not tmux.news()  # read once
        tmux_server.cmd("split-window", "-t", other, "sleep 600")
        wait_for(tmux.news, timeout=3, message="the active pane changed")
        time.sleep(0.6)  # the split's other news (its layout, the window's automatic name)
        tmux.news()
        tmux_server.cmd("set-option", "-g", "@agentstate-test", "1")  # not about focus
        time.sleep(0.3)
        assert not tmux.news()
        # a window of another session than the control client's: tmux says "unlinked"
        session = tmux_server.cmd("display-message", "-p", "-t", other, "#{session_name}")
        window = tmux_server.cmd("new-window", "-d", "-t", f"{session}:", "-P", "-F",
                                 "#{window_id}", "sleep 600")
        wait_for(tmux.news, timeout=3, message="a window was added in another session")
        tmux_server.cmd("rename-window", "-t", window, "renamed")
        wait_for(tmux.news, timeout=3, message="a window was renamed (automatic-rename too)")
        tmux_server.cmd("kill-window", "-t", window)
        wait_for(tmux.news, timeout=3, message="a window was closed")
        assert tmux.run(["display-message", "-p", "still answers"]) == ["still answers"]
    finally:
        tmux.close()
