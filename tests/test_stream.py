"""`tmux-agentstate stream` on a host, over a real SSH session: the host's agent panes as the
host's own sidecar sees them (a snapshot, then changes), beats, and requests (ping, answer,
focus) run on the host with its own fresh look; a host with no tmux server says so."""
import json
import os
import select
import shlex
import subprocess
import sys
import time

from conftest import wait_for
from sshd import REMOTE_COMMAND, RemoteTmux, sshd  # noqa: F401  (the fixture)
from test_answer import BLOCKED, DIALOG, IDLE
from tmux_agentstate.core import hostproto as hp


class Link:
    """One `ssh HOST tmux-agentstate stream`, read as the local side reads it."""

    def __init__(self, sshd, alias, command=REMOTE_COMMAND):
        self.proc = subprocess.Popen(["ssh", "-F", str(sshd.config), "-T", alias, "--",
                                      str(command), "stream"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.buf = b""
        self.messages: list[dict] = []
        self.rows = hp.HostRows()

    def read(self, timeout=0.2):
        fd = self.proc.stdout.fileno()
        if select.select([fd], [], [], timeout)[0]:
            chunk = os.read(fd, 1 << 16)
            self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            msg = hp.decode(line)
            self.messages.append(msg)
            if msg["t"] == "rows":
                self.rows.apply(msg)
        return self.messages

    def until(self, fn, message, timeout=30):
        return wait_for(lambda: (self.read(), fn())[1], timeout=timeout, message=message)

    def ask(self, **request):
        self.proc.stdin.write(json.dumps({"v": hp.SCHEMA, **request}).encode() + b"\n")
        self.proc.stdin.flush()
        rid = request.get("id")
        return self.until(lambda: next((m for m in self.messages if m["t"] == "reply"
                                        and m["id"] == rid), None), f"reply {rid}")

    def close(self):
        try:
            self.proc.stdin.close()
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def test_a_hosts_blocked_pane_streams_and_is_answered_over_the_same_session(sshd, tmp_path):
    host = RemoteTmux(tmp_path / "r1")
    try:
        prog = tmp_path / "dialog.py"
        prog.write_text(DIALOG)
        args = " ".join(shlex.quote(str(a)) for a in (prog, BLOCKED.path, "", IDLE.path, tmp_path / "typed"))
        pane = host.cmd("new-window", "-P", "-F", "#{pane_id}",
                        f"env AGENTSTATE_AGENT=claude {sys.executable} {args}")
        host.cmd("resize-window", "-t", pane, "-x", str(BLOCKED.cols), "-y", str(BLOCKED.rows))
        sshd.host("h1", tmpdir=host.tmpdir)
        link = Link(sshd, "h1")
        hello = link.until(lambda: link.messages and link.messages[0], "hello")
        assert hello["t"] == "hello" and hello["server"] == host.socket
        # no sidecar ran on the host: the stream started it, and its rows arrive
        row = link.until(lambda: link.rows.rows.get(pane), "the pane's row")
        link.until(lambda: link.rows.rows[pane]["state"] == "blocked", "blocked")
        row = link.rows.rows[pane]
        assert row["agent"] == "claude" and row["target"].startswith("main:")
        assert "Do you want" in row["detail"]
        assert link.ask(op="ping", id=1)["text"] == "pong"
        bad = link.ask(op="answer", id=2, pane=pane, choice="yes; rm -rf ~")
        assert bad["code"] != 0 and "refused" in bad["text"]
        reply = link.ask(op="answer", id=3, pane=pane, choice="yes")
        assert reply["code"] == 0, reply
        link.until(lambda: link.rows.rows[pane]["state"] == "idle", "idle after the answer")
        assert link.ask(op="focus", id=4, pane=pane)["code"] == 0
        assert host.cmd("display-message", "-p", "-t", "main", "#{pane_id}") == pane
        assert link.ask(op="focus", id=5, pane="%999")["code"] != 0
        host.cmd("kill-pane", "-t", pane)
        link.until(lambda: pane not in link.rows.rows, "the pane gone")
        assert any(m["t"] == "beat" for m in link.messages)
        assert link.close() == 0
    finally:
        host.kill()


def test_a_host_without_a_tmux_server_says_so_and_waits(sshd, tmp_path):
    empty = tmp_path / "r2"
    empty.mkdir(mode=0o700)
    sshd.host("h2", tmpdir=empty)
    link = Link(sshd, "h2")
    try:
        hello = link.until(lambda: link.messages and link.messages[0], "hello")
        assert hello["server"] == ""
        beat = link.until(lambda: next((m for m in link.messages if m["t"] == "beat"), None), "beat")
        assert "no tmux server" in beat["note"]
        snapshot = link.until(lambda: next((m for m in link.messages if m["t"] == "rows"), None),
                              "the snapshot")
        assert snapshot["full"] and snapshot["rows"] == []
    finally:
        assert link.close() == 0
