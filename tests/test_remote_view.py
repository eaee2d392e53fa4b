"""One view of local and remote agents: `list`, the summary segment, notifications, `answer`
and `explain --host`, read from hosts.json as the sidecar's host links write it
(sidecar/hosts/files.py) in the real runtime folder of a real tmux server, and acting through
hosts.sock, served here by a small Unix-socket server that answers as the sidecar does (the
contract in files.py's docstring). The links themselves, over real SSH, are tested elsewhere."""
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import wait_for
from tmux_agentstate.sidecar.hosts import files
from tmux_agentstate.sidecar.runtime import Runtime

NOW = int(time.time())


def remote_row(pane, state, target, since, detail="", **kw):
    return {"pane": pane, "state": state, "agent": "claude", "target": target,
            "session": target.split(":")[0], "window": target.split(":")[1].split(".")[0],
            "window_name": "w", "source": "screen", "agent_version": "2.0.1", "error": None,
            "detail": detail, "since": since, "context": None, "done": False, **kw}


def host(name, rows, status="connected", last_update=None):
    return {"host": name, "status": status, "why": "", "last_update": last_update or time.time(),
            "rtt": 0.01, "version": "1", "rows": rows}


def folder_of(server):
    return Runtime(server.tmux.socket()).ensure().dir


def local_agent(server, state, since, **opts):
    pane = server.new_pane("sleep 600")
    for k, v in {"@agentstate_agent": "codex", "@agentstate": state,
                 "@agentstate_since": str(since), **opts}.items():
        server.cmd("set-option", "-p", "-t", pane, k, v)
    return pane


def cli(server, *args, env=None):
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L", server.name],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **(env or {})))


class FakeLinks:
    """hosts.sock as the sidecar serves it: one request line, one reply line; `replies` maps
    an op to (code, text); every request is kept."""

    def __init__(self, folder, replies):
        self.path = folder / files.HOSTS_SOCKET
        self.replies, self.requests = replies, []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(self.path))
        self.sock.listen(4)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                buf = b""
                while b"\n" not in buf:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    buf += chunk
                request = json.loads(buf.split(b"\n")[0])
                self.requests.append(request)
                code, text = self.replies.get(request.get("op"), (1, "unknown op"))
                conn.sendall(json.dumps({"code": code, "text": text}).encode() + b"\n")

    def close(self):
        self.sock.close()
        self.path.unlink(missing_ok=True)


@pytest.fixture
def links(tmux_server):
    made = []

    def serve(replies):
        made.append(FakeLinks(folder_of(tmux_server), replies))
        return made[-1]

    yield serve
    for m in made:
        m.close()


def test_list_json_has_every_host_and_keeps_the_local_fields(tmux_server, tmp_path):
    srv = tmux_server
    local_idle = local_agent(srv, "idle", NOW - 100)
    local_blocked = local_agent(srv, "blocked", NOW - 50, **{"@agentstate_detail": "Proceed?"})
    before = json.loads(cli(srv, "list", "--json").stdout.splitlines()[0])  # no hosts.json yet
    marker = tmp_path / "pwned"
    files.write_hosts(folder_of(srv), [
        host("h1", [remote_row("%3", "blocked", "dev:1.0", NOW - 10,
                               f"Run it? \x1b]0;title\x07#(touch {marker}) #[fg=red]"),
                    remote_row("%4", "working", "dev:2.0", NOW - 5)]),
        host("box.example", [remote_row("%3", "idle", "main:0.0", NOW - 300),
                             {"pane": "%9; rm -rf ~", "state": "blocked", "agent": "x"}],
             status="stale", last_update=time.time() - 200),
    ])
    out = cli(srv, "list", "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(l) for l in out.stdout.splitlines()]
    assert [(r["host"], r["pane"], r["state"]) for r in rows] == [
        ("h1", "%3", "blocked"), ("", local_blocked, "blocked"), ("h1", "%4", "working"),
        ("", local_idle, "idle"), ("box.example", "%3", "idle")]
    local = next(r for r in rows if r["pane"] == local_blocked)
    assert set(before) | {"host"} == set(local) and local["host"] == ""
    assert "stale" not in local
    h1 = rows[0]
    assert h1["stale"] is False and h1["target"] == "dev:1.0" and h1["agent"] == "claude"
    assert "\x1b" not in h1["detail"] and "\x07" not in h1["detail"]  # cleaned, as a host's text is
    assert rows[-1]["stale"] is True  # the malformed row of that host is dropped, not shown
    text = cli(srv, "list").stdout
    line = next(l for l in text.splitlines() if "h1:dev:1.0" in l)
    assert line.startswith("%3") and "blocked" in line and f"#(touch {marker}) #[fg=red]" in line
    stale = next(l for l in text.splitlines() if "box.example:main:0.0" in l)
    assert "[stale, heard 3m ago]" in stale
    assert not marker.exists()


def test_summary_counts_remote_panes_and_stale_ones_apart(tmux_server):
    from tmux_agentstate.sidecar.config import Config
    from tmux_agentstate.sidecar.publish import Publisher
    from tmux_agentstate.tmux import Batch
    srv = tmux_server
    pub = Publisher(srv.tmux, Runtime(srv.tmux.socket()), Config())

    def summary(remote):
        pub.remote_rows = lambda: remote
        batch = Batch()
        pub.aggregates([], batch)
        pub.apply(batch)
        return srv.cmd("show-options", "-gv", "@agentstate_summary")

    blocked = [remote_row("%1", "blocked", "a:0.0", NOW), remote_row("%2", "blocked", "a:1.0", NOW)]
    s = summary([{**r, "host": "h1", "stale": False} for r in blocked]
                + [{**remote_row("%1", "blocked", "b:0.0", NOW), "host": "h#2", "stale": False},
                   {**remote_row("%5", "working", "b:1.0", NOW), "host": "h#2", "stale": False},
                   {**remote_row("%1", "blocked", "c:0.0", NOW), "host": "h3", "stale": True}])
    assert " !3@2 " in s and " *1 " in s and " ?1 " in s, s   # 3 blocked on 2 hosts; 1 stale
    assert "h#2" not in s and "h1" not in s                   # no host text in a format
    assert summary([]) == ""
    def boom():
        raise RuntimeError("links broke")
    pub.remote_rows = boom  # another part's fault: the local summary goes on
    batch = Batch()
    pub.aggregates([], batch)


def test_remote_panes_are_notified_naming_the_host_with_the_cooldown_per_host(
        tmux_server, pty_client, tmp_path):
    from tmux_agentstate.sidecar.config import Config
    from tmux_agentstate.sidecar.publish import Publisher
    from tmux_agentstate.tmux import Batch
    srv = tmux_server
    log = tmp_path / "told"
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\nprintf "%s|%s|%s|%s|%s|%s\\n" "$1" "$2" "$3" "$AGENTSTATE_HOST" '
                    f'"$AGENTSTATE_TARGET" "$4" >> {log}\n')
    hook.chmod(0o755)
    config = Config.from_tmux({"@agentstate-notify-command": str(hook),
                               "@agentstate-notify-bell": "off"})
    client = pty_client("main")
    pub = Publisher(srv.tmux, Runtime(srv.tmux.socket()), config)
    marker = tmp_path / "pwned"

    def change(*transitions):
        pub.remote_changes(list(transitions))
        batch = Batch()
        pub.aggregates([], batch)
        pub.apply(batch)

    row = {**remote_row("%3", "blocked", "dev:1.0", NOW, f"Proceed? #(touch {marker})"),
           "host": "h1", "stale": False}
    change((row, "working"))
    wait_for(lambda: b"claude on h1:dev:1.0 needs you: Proceed? #(touch" in client.output(),
             message="the message on the client")
    wait_for(lambda: log.exists() and "h1" in log.read_text(), message="the user's command")
    change((row, "working"))                                   # within the cooldown: not again
    change(({**row, "host": "h2"}, "working"))                 # the same %3 on another host is
    change(({**row, "host": "h3", "stale": True}, "working"))  # stale: not told
    wait_for(lambda: len(log.read_text().splitlines()) == 2, message="h2 told")
    time.sleep(0.5)
    lines = log.read_text().splitlines()
    assert lines == [f"%3|claude|blocked|h1|h1:dev:1.0|Proceed? #(touch {marker})",
                     f"%3|claude|blocked|h2|h2:dev:1.0|Proceed? #(touch {marker})"], lines
    assert not marker.exists()


def test_answer_and_explain_a_remote_pane_by_host(tmux_server, links):
    srv = tmux_server
    files.write_hosts(folder_of(srv), [host("h1", [remote_row("%3", "blocked", "dev:1.0", NOW - 5,
                                                              "Allow this edit?")])])
    served = links({"answer": (0, "answered yes in %3 (dev:1.0)\x1b[2J")})
    out = cli(srv, "answer", "--host", "h1", "dev:1.0", "yes")
    assert out.returncode == 0 and out.stdout.strip() == "h1: answered yes in %3 (dev:1.0)[2J", out
    assert served.requests == [{"op": "answer", "host": "h1", "pane": "%3", "choice": "yes"}]
    out = cli(srv, "explain", "--host", "h1", "%3")
    assert out.returncode == 0 and "is a remote pane" in out.stdout and "Allow this edit?" in out.stdout
    for args in (("answer", "--host", "h2", "%3", "yes"), ("explain", "--host", "h1", "%8")):
        out = cli(srv, *args)
        assert out.returncode != 0 and len(out.stderr.strip().splitlines()) == 1, out
        assert "Traceback" not in out.stderr
    assert len(served.requests) == 1  # nothing else asked


def test_answer_without_a_sidecar_says_so_in_one_line(tmux_server):
    srv = tmux_server
    files.write_hosts(folder_of(srv), [host("h1", [remote_row("%3", "blocked", "dev:1.0", NOW)])])
    out = cli(srv, "answer", "--host", "h1", "%3", "yes")
    assert out.returncode != 0 and "no sidecar serves remote hosts" in out.stderr, out


def test_rows_a_sidecar_left_behind_are_stale(tmux_server):
    """A sidecar killed (SIGKILL: no clean stop) leaves hosts.json saying connected; once it is
    older than a connected host's beats allow, its rows read stale everywhere."""
    srv = tmux_server
    folder = folder_of(srv)
    files.write_hosts(folder, [host("h1", [remote_row("%3", "blocked", "dev:1.0", NOW - 10)])])
    fresh = json.loads(cli(srv, "list", "--json").stdout.splitlines()[0])
    assert (fresh["host"], fresh["stale"]) == ("h1", False)
    data = json.loads((folder / files.HOSTS_FILE).read_text())
    data["written"] -= files.WRITTEN_STALE + 1
    (folder / files.HOSTS_FILE).write_text(json.dumps(data))
    left = json.loads(cli(srv, "list", "--json").stdout.splitlines()[0])
    assert (left["host"], left["state"], left["stale"]) == ("h1", "blocked", True)
    assert "no word from the sidecar" in files.read_hosts(folder)[0]["why"]
