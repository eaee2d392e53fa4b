"""Remote hosts, the local side: the local sidecar keeps one SSH link per host in
@agentstate-hosts to that host's real `tmux-agentstate stream` (over a real sshd on 127.0.0.1,
each host its own default tmux server with its own sidecar). hosts.json has every host's rows,
`hosts` and `doctor` say how each link stands; a frozen, killed, misconfigured or hostile host
gives one clear line and never stops the local panes' states."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import replay_command, wait_for
from sshd import REMOTE_COMMAND, RemoteTmux, sshd  # noqa: F401  (the fixture)
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.sidecar.hosts import files

FIXTURES = load_index()
BLOCKED = next(f for f in FIXTURES if f.agent == "claude" and f.state == "blocked")
IDLE = next(f for f in FIXTURES if f.agent == "claude" and f.state == "idle")
SLOW = 90  # seconds: a link's worst case is the silence limit + the longest backoff + a connect


def link_options(tmux_server, sshd, hosts, remote=REMOTE_COMMAND):
    tmux_server.cmd("set-option", "-g", "@agentstate-ssh", sshd.ssh)
    tmux_server.cmd("set-option", "-g", "@agentstate-remote-command", remote)
    tmux_server.cmd("set-option", "-g", "@agentstate-hosts", hosts)


def host_of(sc, dest):
    return next((h for h in files.read_hosts(sc.runtime_dir()) if h["host"] == dest), None)


def cli(sc, *args):
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L", sc.server.name],
                          capture_output=True, text=True, env=sc.env, timeout=60)


def remote_pane(remote, fx, agent="claude"):
    pane = remote.cmd("new-window", "-P", "-F", "#{pane_id}", replay_command(fx.path, agent))
    remote.cmd("resize-window", "-t", pane, "-x", str(fx.cols), "-y", str(fx.rows))
    return pane


def row(sc, dest, pane):
    h = host_of(sc, dest)
    return next((r for r in (h or {}).get("rows", []) if r["pane"] == pane), None)


def session_tree(sshd):
    """Every sshd process of the open connections (each connection's monitor and its
    children): SIGSTOP them all and the connection is frozen as a host that hangs."""
    pids, todo = [], list(sshd.session_pids())
    while todo:
        pid = todo.pop()
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
            kids = open(f"/proc/{pid}/task/{pid}/children").read().split()
        except OSError:
            continue
        if comm.startswith("sshd"):
            pids.append(pid)
            todo += [int(k) for k in kids]
    return pids


@pytest.fixture
def remote(tmp_path):
    made = []

    def make(name="r1"):
        made.append(RemoteTmux(tmp_path / name))
        return made[-1]

    yield make
    for r in made:
        r.kill()


def test_a_hosts_blocked_pane_reaches_hosts_json_and_hosts_says_connected(
        tmux_server, sidecar, sshd, remote):
    host = remote()
    sshd.host("h1", tmpdir=host.tmpdir)
    pane = remote_pane(host, BLOCKED)
    link_options(tmux_server, sshd, "h1")
    sc = sidecar().start()
    got = wait_for(lambda: (r := row(sc, "h1", pane)) and r["state"] == "blocked" and r,
                   timeout=SLOW, message="the host's blocked pane in hosts.json")
    assert got["host"] == "h1" and got["stale"] is False and got["agent"] == "claude"
    wait_for(lambda: (host_of(sc, "h1") or {}).get("rtt") is not None, timeout=SLOW,
             message="a round trip")
    out = cli(sc, "hosts")
    assert out.returncode == 0, out
    assert out.stdout.startswith("h1  connected  1 pane(s)") and " ms" in out.stdout, out.stdout
    info = json.loads(cli(sc, "hosts", "--json").stdout)
    assert info["status"] == "connected" and info["panes"] == 1 and info["version"]
    assert "ok      remote hosts: 1 connected" in cli(sc, "doctor").stdout
    # hosts.sock: a request goes over the same link, the host's own reply comes back
    host.cmd("select-window", "-t", "main:0")
    code, text = files.ask(sc.runtime_dir(), {"op": "focus", "host": "h1", "pane": pane})
    assert code == 0, text
    assert host.cmd("display-message", "-p", "-t", "main", "#{pane_id}") == pane
    code, text = files.ask(sc.runtime_dir(), {"op": "answer", "host": "h1", "pane": pane,
                                              "choice": "yes; rm -rf ~"})
    assert code != 0 and text.startswith("not sent to h1"), text
    code, text = files.ask(sc.runtime_dir(), {"op": "focus", "host": "h9", "pane": pane})
    assert code != 0 and text == "'h9' is not in @agentstate-hosts"
    sc.kill()  # its ssh goes with it: no connection left behind
    wait_for(lambda: not sshd.session_pids(), timeout=SLOW, message="the link's ssh ended")
    assert not (sc.runtime_dir() / files.HOSTS_SOCKET).exists()


def test_a_frozen_host_turns_stale_the_local_pane_stays_right_and_it_comes_back(
        tmux_server, sidecar, sshd, remote):
    host = remote()
    sshd.host("h1", tmpdir=host.tmpdir)
    far = remote_pane(host, BLOCKED)
    near = tmux_server.new_pane(replay_command(BLOCKED.path, "claude"), rows=BLOCKED.rows,
                                cols=BLOCKED.cols)
    link_options(tmux_server, sshd, "h1")
    sc = sidecar().start()
    wait_for(lambda: (r := row(sc, "h1", far)) and r["state"] == "blocked", timeout=SLOW,
             message="the host's row")
    wait_for(lambda: tmux_server.state(near) == "blocked", message="the local pane")
    frozen = [sshd.proc.pid] + session_tree(sshd)  # the host hangs: no new connection either
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        h = wait_for(lambda: (h := host_of(sc, "h1")) and h["status"] == "stale" and h,
                     timeout=SLOW, message="the frozen host stale")
        assert "said nothing" in h["why"] or "unreachable" in h["why"], h["why"]
        kept = h["rows"][0]
        assert kept["pane"] == far and kept["state"] == "blocked" and kept["stale"] is True
        assert "h1  stale" in cli(sc, "hosts").stdout
        # the local sweep never waits on a host: a local pane's change is seen meanwhile
        tmux_server.cmd("respawn-pane", "-k", "-t", near, replay_command(IDLE.path, "claude"))
        wait_for(lambda: tmux_server.state(near) == "idle", message="the local pane idle")
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
    wait_for(lambda: (h := host_of(sc, "h1")) and h["status"] == "connected"
             and h["rows"] and h["rows"][0]["stale"] is False, timeout=SLOW,
             message="connected again, its rows fresh")


def test_a_killed_connection_reconnects(tmux_server, sidecar, sshd, remote):
    host = remote()
    sshd.host("h1", tmpdir=host.tmpdir)
    pane = remote_pane(host, BLOCKED)
    link_options(tmux_server, sshd, "h1")
    sc = sidecar().start()
    wait_for(lambda: row(sc, "h1", pane), timeout=SLOW, message="the host's row")
    killed = sshd.session_pids()
    assert killed
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: set(sshd.session_pids()) - set(killed), timeout=SLOW,
             message="a new connection")
    h = wait_for(lambda: (h := host_of(sc, "h1")) and h["status"] == "connected" and h,
                 timeout=SLOW, message="connected again")
    assert [r["pane"] for r in h["rows"]] == [pane]
    log = (sc.runtime_dir() / "sidecar.log").read_text()
    assert "host h1: stale: h1 unreachable" in log or "host h1: stale: the stream" in log, log


def test_a_host_without_our_command_says_so_once(tmux_server, sidecar, sshd, remote):
    host = remote()
    sshd.host("h1", tmpdir=host.tmpdir)
    link_options(tmux_server, sshd, "h1", remote=str(host.tmpdir / "missing" / "tmux-agentstate"))
    sc = sidecar().start()
    want = ("tmux-agentstate not found on h1: install it there or set "
            "@agentstate-remote-command")
    wait_for(lambda: (h := host_of(sc, "h1")) and h["why"] == want, timeout=SLOW,
             message="the missing command said")
    assert f"h1  error  0 pane(s)  last update never  round trip -  ({want})" in \
        cli(sc, "hosts").stdout
    doctor = cli(sc, "doctor").stdout
    assert f"problem remote host h1: error: {want}" in doctor, doctor
    time.sleep(4)  # a few more tries (1 s, 2 s apart): said once in the log all the same
    assert (sc.runtime_dir() / "sidecar.log").read_text().count(want) == 1


def test_an_unknown_host_key_says_what_to_do(tmux_server, sidecar, sshd):
    sshd.host("stranger", known=False)
    link_options(tmux_server, sshd, "stranger")
    sc = sidecar().start()
    want = "host key unknown: connect once with ssh stranger and accept it"
    wait_for(lambda: (h := host_of(sc, "stranger")) and h["status"] == "error"
             and h["why"] == want, timeout=SLOW, message="the unknown key said")
    assert want in cli(sc, "hosts").stdout
    assert want in cli(sc, "doctor").stdout
    assert want in (sc.runtime_dir() / "sidecar.log").read_text()
    # a request to a host that is down: one clear line at once
    code, text = files.ask(sc.runtime_dir(), {"op": "focus", "host": "stranger", "pane": "%1"})
    assert code != 0 and text == f"stranger is not connected (error): {want}"


# hosts that are not what we expect, as small programs in place of our command
HELLO = '{"v": 1, "t": "hello", "version": "7.0", "heartbeat": 5, "server": "/s"}'
HOSTILE = {
    "newer": ('print(\'{"v": 99, "t": "hello", "version": "9.0", "server": "/s"}\', flush=True)'
              '\nimport time; time.sleep(30)',
              "h1 runs tmux-agentstate 9.0, whose stream (schema 99) this one (schema 1) "
              "cannot read; upgrade this one"),
    "older": ('import sys; sys.stderr.write("usage: tmux-agentstate [-h]\\ntmux-agentstate: '
              'error: argument COMMAND: invalid choice: \'stream\' (choose from \'list\')\\n")'
              '\nsys.exit(2)',
              "h1 runs an older tmux-agentstate without the stream this one reads; upgrade it"),
    "huge": (f'print({HELLO!r}, flush=True)\nimport sys, time\n'
             'sys.stdout.write("x" * (1 << 20)); sys.stdout.flush(); time.sleep(30)',
             "h1 sent a broken stream (a message over 262144 bytes); its rows are kept as they "
             "were, reconnecting later"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_host_of_another_version_or_a_broken_stream_gives_one_clear_line(
        tmux_server, sidecar, sshd, tmp_path, kind):
    program, want = HOSTILE[kind]
    script = tmp_path / "fake.py"
    script.write_text(program)
    sshd.host("h1")
    link_options(tmux_server, sshd, "h1", remote=f"{sys.executable} {script}")
    sc = sidecar().start()
    wait_for(lambda: (h := host_of(sc, "h1")) and h["status"] == "error" and h["why"] == want,
             timeout=SLOW, message=want)
    assert want in cli(sc, "hosts").stdout
    assert want in cli(sc, "doctor").stdout


def test_hostile_rows_are_cleaned_and_nothing_in_them_runs(tmux_server, sidecar, sshd, tmp_path):
    marker = tmp_path / "ran"
    evil = {"pane": "%1", "state": "blocked", "agent": "claude",
            "target": "main:0.0\x1b]52;c;aGk=\x07\x1b[2J", "detail": f"$(touch {marker}) "
            f"#(touch {marker}) `touch {marker}`\x9b31m\u202e", "window_name": "#[fg=red]x"}
    rows = [evil, {"pane": "%2; rm -rf ~", "state": "idle", "agent": "codex"},
            {"pane": "%3", "state": "exploded", "agent": "codex"}]
    script = tmp_path / "fake.py"
    script.write_text(f'import json, sys, time\nprint({HELLO!r}, flush=True)\n'
                      f'print(json.dumps({{"v": 1, "t": "rows", "full": True, "rows": {rows!r}}}),'
                      ' flush=True)\nfor line in sys.stdin:\n'
                      '    pass\n')
    sshd.host("h1")
    link_options(tmux_server, sshd, "h1", remote=f"{sys.executable} {script}")
    sc = sidecar().start()
    h = wait_for(lambda: (h := host_of(sc, "h1")) and h["rows"] and h, timeout=SLOW,
                 message="the host's rows")
    assert [r["pane"] for r in h["rows"]] == ["%1"]  # the malformed ones dropped
    kept = h["rows"][0]
    assert kept["target"] == "main:0.0]52;c;aGk=[2J" and "\x1b" not in json.dumps(h)
    assert "\x9b" not in kept["detail"] and "\u202e" not in kept["detail"]
    out = cli(sc, "hosts")
    assert out.returncode == 0 and "\x1b" not in out.stdout
    time.sleep(1)
    assert not marker.exists()


def test_the_options_are_followed_while_the_sidecar_runs(tmux_server, sidecar, sshd, remote):
    host = remote()
    sshd.host("h1", tmpdir=host.tmpdir)
    sshd.host("stranger", known=False)
    pane = remote_pane(host, BLOCKED)
    tmux_server.cmd("set-option", "-g", "@agentstate-ssh", sshd.ssh)
    tmux_server.cmd("set-option", "-g", "@agentstate-remote-command", REMOTE_COMMAND)
    sc = sidecar().start()
    wait_for(lambda: (sc.runtime_dir() / files.HOSTS_FILE).exists(), timeout=SLOW,
             message="hosts.json")
    assert cli(sc, "hosts").stdout.strip() == "no remote hosts (set @agentstate-hosts)"
    tmux_server.cmd("set-option", "-g", "@agentstate-hosts", "h1 stranger")
    wait_for(lambda: row(sc, "h1", pane), timeout=SLOW, message="h1 linked without a restart")
    wait_for(lambda: (h := host_of(sc, "stranger")) and h["status"] == "error", timeout=SLOW,
             message="the stranger's link")
    tmux_server.cmd("set-option", "-g", "@agentstate-hosts", "stranger")
    wait_for(lambda: [h["host"] for h in files.read_hosts(sc.runtime_dir())] == ["stranger"],
             timeout=SLOW, message="h1's link gone")
    wait_for(lambda: not sshd.session_pids(), timeout=SLOW, message="h1's ssh ended")
    tmux_server.cmd("set-option", "-gu", "@agentstate-hosts")
    wait_for(lambda: files.read_hosts(sc.runtime_dir()) == [], timeout=SLOW,
             message="no hosts")
    # none of this was a command per sweep: tmux logged the subscriptions once
    messages = tmux_server.cmd("show-messages")
    assert messages.count("show-options") <= 2, messages


def test_the_three_options_are_read_split_like_a_shell_and_checked():
    from tmux_agentstate.sidecar.config import Config
    from tmux_agentstate.sidecar.hosts.session import ssh_argv
    c = Config.from_tmux({"@agentstate-hosts": "dev1 -oProxyCommand=touch\\ x user@dev2",
                          "@agentstate-ssh": "ssh -F '/my config'",
                          "@agentstate-remote-command": "'unbalanced"})
    assert c.remote() == (["dev1", "user@dev2"], ["ssh", "-F", "/my config"], ["tmux-agentstate"])
    lines = [p.line() for p in c.problems]
    assert any("@agentstate-hosts" in x and "starts with '-'" in x for x in lines), lines
    assert any("@agentstate-remote-command" in x and "balanced quotes" in x for x in lines), lines
    assert Config.from_tmux({}).remote() == ([], ["ssh"], ["tmux-agentstate"])
    # the host's shell gets each word quoted (nothing of it runs as shell), ~/ still expands
    argv = ssh_argv(["ssh"], "dev1", ["~/.venv/bin/tmux-agentstate", "$(touch x)"])
    assert argv[-3:] == ["dev1", "--", "~/.venv/bin/tmux-agentstate '$(touch x)' stream"]


def test_a_hosts_json_part_is_its_snapshot_with_rows_kept_until_they_change():
    """hosts.json is made from each row's kept JSON (the writer's cost): it must say exactly
    what the snapshot says, after a change too, and with text that needs escaping."""
    from tmux_agentstate.sidecar.hosts.link import HostLink
    link = HostLink("h1", ["ssh"], ["tmux-agentstate"], lambda loud: None)
    link.rows.apply({"full": True, "rows": [
        {"pane": "%1", "state": "idle", "agent": "claude", "detail": 'say "hi" \\ é'},
        {"pane": "%2", "state": "blocked", "agent": "codex", "since": 5}]})
    link.edits += 1
    assert json.loads(link.part.make(link)) == json.loads(files.host_json(link.snapshot()))
    link.rows.apply({"rows": [{"pane": "%2", "state": "idle", "agent": "codex"}], "gone": ["%1"]})
    link.status, link.edits = "stale", link.edits + 1
    part = json.loads(link.part.make(link))
    assert part == json.loads(files.host_json(link.snapshot()))
    assert [(r["pane"], r["state"], r["stale"]) for r in part["rows"]] == [("%2", "idle", True)]


def test_a_host_says_what_it_cannot_show_no_tmux_then_its_sidecar_stopped(
        tmux_server, sidecar, sshd, tmp_path):
    """Connected but with nothing to show: `hosts` says why, in the host's own words (its
    stream's notes), and follows them as the host changes."""
    empty = tmp_path / "r9"
    empty.mkdir(mode=0o700)
    sshd.host("h9", tmpdir=empty)
    link_options(tmux_server, sshd, "h9")
    sc = sidecar().start()
    said = lambda: (host_of(sc, "h9") or {}).get("why", "")  # noqa: E731
    wait_for(lambda: "no tmux server runs on this host" in said(), timeout=SLOW,
             message="no tmux on the host, said")
    assert host_of(sc, "h9")["status"] == "connected"
    assert "no tmux server runs on this host" in cli(sc, "hosts").stdout
    host = RemoteTmux(empty)  # a tmux server starts there; its sidecar is stopped on purpose
    try:
        assert host.agentstate("start").returncode == 0
        assert host.agentstate("stop").returncode == 0
        wait_for(lambda: "sidecar was stopped" in said(), timeout=SLOW,
                 message="the host's stopped sidecar, said")
        assert host.agentstate("start").returncode == 0
        wait_for(lambda: said() == "", timeout=SLOW, message="nothing to say once it runs")
    finally:
        host.kill()
