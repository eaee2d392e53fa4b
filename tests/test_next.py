"""`prefix + a`: the pane that needs the user most, across sessions and windows (the longest
blocked first, then the oldest unseen "done"); pressed again, the next; a message when none
needs the user. Pressed for real: the plugin loaded into a real server, a real client in a
pseudo-terminal typing the prefix and the key."""
import os
import time
from pathlib import Path

from conftest import wait_for
from sshd import sshd  # noqa: F401  (the fixture)
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


def test_the_key_reaches_a_remote_blocked_pane_over_ssh(tmux_server, pty_client, sshd, tmp_path):
    """A blocked row of host h1 (hosts.json as the sidecar's links write it; h1 an alias of the
    test's real sshd with its own default tmux server): `next` opens a local window running
    `ssh -t h1 tmux attach -t %N`, whose client attaches at that pane; pressed again from
    elsewhere, that window is reused and h1 asked (through hosts.sock) to focus the pane."""
    import subprocess
    import sys

    from sshd import RemoteTmux
    from test_remote_view import FakeLinks, folder_of, host, remote_row
    from tmux_agentstate.sidecar.hosts import files
    srv = tmux_server
    remote = RemoteTmux(tmp_path / "r1")
    try:
        sshd.host("h1", tmpdir=remote.tmpdir)
        pane = remote.cmd("new-window", "-d", "-P", "-F", "#{pane_id}", "sleep 600")
        address = remote.cmd("display-message", "-p", "-t", pane,
                             "#{session_name}:#{window_index}.#{pane_index}")
        srv.cmd("set-option", "-g", "@agentstate-hosts", "elsewhere h1")
        srv.cmd("set-option", "-g", "@agentstate-ssh", sshd.ssh)
        files.write_hosts(folder_of(srv), [host("h1", [remote_row(pane, "blocked", address,
                                                                  int(time.time()) - 5)])])
        client = pty_client("main")
        home = shown(srv, client)

        def press():
            return subprocess.run([sys.executable, "-m", "tmux_agentstate", "next", "-L", srv.name,
                                   "--client", client.name()], capture_output=True, text=True,
                                  timeout=60)

        out = press()
        assert out.returncode == 0 and f"in h1:{address}: blocked (1 of 1)" in out.stdout, out
        wait_for(lambda: remote.cmd("list-clients", "-F", "#{pane_id}") == pane, timeout=20,
                 message="h1's client attached at that pane")
        tagged = [w for w in srv.cmd("list-windows", "-a", "-F",
                                     "#{window_id} #{@agentstate_remote_host}").splitlines()
                  if w.endswith(" h1")]
        assert len(tagged) == 1
        window = tagged[0].split()[0]
        assert srv.cmd("list-clients", "-F", "#{window_id}") == window
        # from the home pane again: the same window, and h1 asked to focus the pane
        links = FakeLinks(folder_of(srv), {"focus": (0, f"focused {pane}")})
        try:
            srv.cmd("switch-client", "-c", client.name(), "-t", home)
            out = press()
            assert out.returncode == 0 and "in the window on h1" in out.stdout, out
            assert links.requests == [{"op": "focus", "host": "h1", "pane": pane}]
            assert srv.cmd("list-clients", "-F", "#{window_id}") == window
            assert len([w for w in srv.cmd("list-windows", "-a", "-F",
                                           "#{@agentstate_remote_host}").splitlines()
                        if w == "h1"]) == 1
        finally:
            links.close()
        srv.cmd("kill-window", "-t", window)
    finally:
        remote.kill()


def test_a_remote_pane_is_opened_only_for_the_users_own_hosts(tmux_server):
    """A host or pane id that is not what the user configured never reaches a command line."""
    from tmux_agentstate.plugin.remote import reach
    srv = tmux_server
    srv.cmd("set-option", "-g", "@agentstate-hosts", "h1 -oProxyCommand=sh")
    windows = srv.cmd("list-windows", "-a")
    row = {"host": "-oProxyCommand=sh", "pane": "%3", "target": "a:0.0"}
    assert "nothing opened" in reach(srv.tmux, row, None)
    assert "nothing opened" in reach(srv.tmux, {**row, "host": "h2"}, None)
    assert "nothing opened" in reach(srv.tmux, {**row, "host": "h1", "pane": "%3;ls"}, None)
    srv.cmd("set-option", "-g", "@agentstate-ssh", "ssh 'unclosed")
    assert "cannot be split" in reach(srv.tmux, {**row, "host": "h1"}, None)
    assert srv.cmd("list-windows", "-a") == windows
