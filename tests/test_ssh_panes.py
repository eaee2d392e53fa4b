"""Agents inside ssh panes, nothing installed on the far side: a local pane runs a real `ssh`
into the test sshd (tests/sshd.py); on the far side a real agent's byte stream is drawn (a
committed capture, written by a program that then waits, as the agent would). The sidecar
infers the agent from the screen and publishes it like any agent pane, with
`@agentstate_via`."""
import json
import os
import shlex
import subprocess
import sys
import time

import pytest

from conftest import replay_command, wait_for
from sshd import RemoteTmux, sshd  # noqa: F401  (the fixture)
from tmux_agentstate.core.catalog import Catalog
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.infer import DROP, present
from tmux_agentstate.core.screen import ScreenView, replay

FIXTURES = load_index()
MANIFESTS = list(Catalog(dirs=[Catalog().dirs[0]]).by_name.values())


def distinctive(state: str, agent: str = "claude", rows: int | None = None, titled=True):
    """A capture of `agent` in `state` whose screen alone names its agent (core/infer.present);
    `titled=False`: without the help of its title (a nested tmux does not pass titles on)."""
    for f in FIXTURES:
        if f.agent != agent or f.state != state or (rows and f.rows != rows) \
                or not f.path.with_suffix(".screen.txt").exists():
            continue
        v = replay(f.path.read_bytes(), f.rows, f.cols).view()
        if not titled:
            v = ScreenView(v.rows, v.cursor_row, "", v.osc_state)
        got = present(MANIFESTS, v)
        if got is not None and got.name == agent and f.cols <= 120:
            return f
    raise AssertionError(f"no distinctive {agent} {state} capture")


# A program on the far side that draws captures as the agent did, one after the other: each
# once the file named `<gate>.<n>` exists, then it resets the terminal (as an agent does on
# exit) and exits. The echo is off as the agent had it (tmux's answers to the capture's
# terminal queries must not land mid-drawing).
DRAWER = r"""
import os, sys, time
gate, paths = sys.argv[1], sys.argv[2:]
for n, path in enumerate(paths):
    while n and not os.path.exists(f"{gate}.{n}"):
        time.sleep(0.05)
    sys.stdout.buffer.write((b"\033[H\033[2J" if n else b"") + open(path, "rb").read())
    sys.stdout.flush()
while not os.path.exists(f"{gate}.{len(paths)}"):
    time.sleep(0.05)
sys.stdout.buffer.write(b"\033c")
"""


def drawer_command(gate, *fixtures) -> str:
    script = shlex.quote(DRAWER)
    files = " ".join(shlex.quote(str(f.path)) for f in fixtures)
    # clear first: the captures were taken on a blank terminal
    return (f"clear; stty -echo; sleep 0.3; {shlex.quote(sys.executable)} -c {script} "
            f"{shlex.quote(str(gate))} {files}; stty echo")


def ssh_pane(tmux_server, sshd, rows, cols, tmpdir=None) -> str:
    """A local shell pane that logged in to h1 with a real ssh; returns once the far side's
    shell prompts."""
    sshd.host("h1", tmpdir=tmpdir)
    pane = tmux_server.new_pane(rows=rows, cols=cols)
    marker = "far-side-ready"
    tmux_server.cmd("send-keys", "-t", pane, f"{sshd.ssh} h1", "Enter")
    tmux_server.cmd("send-keys", "-t", pane, f"echo {marker[:4]}''{marker[4:]}", "Enter")
    wait_for(lambda: marker in capture(tmux_server, pane), timeout=20, message="remote shell")
    return pane


def capture(tmux_server, pane) -> str:
    return tmux_server.cmd("capture-pane", "-p", "-t", pane)


def published(tmux_server, pane) -> tuple[str, str, str]:
    return tuple(tmux_server.option(pane, o) for o in
                 ("@agentstate", "@agentstate_agent", "@agentstate_via"))


def explain(tmux_server, pane, sidecar_env) -> str:
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "explain", "-L",
                          tmux_server.name, pane], capture_output=True, text=True,
                         env=sidecar_env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_an_agent_in_an_ssh_pane_is_inferred_classified_and_dropped(tmux_server, sidecar,
                                                                     sshd, tmp_path):
    blocked = distinctive("blocked")
    idle = next(f for f in FIXTURES if f.agent == "claude" and f.state == "idle"
                and (f.rows, f.cols, f.renderer) == (blocked.rows, blocked.cols, blocked.renderer)
                and f.agent_version == blocked.agent_version)
    notes = tmp_path / "notes"
    recorder = tmp_path / "notify.py"
    recorder.write_text("import json, sys\nopen(%r, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
                        % str(notes))
    tmux_server.cmd("set-option", "-g", "@agentstate-notify-command",
                    f"{sys.executable} {recorder}")
    sc = sidecar().start()
    pane = ssh_pane(tmux_server, sshd, blocked.rows, blocked.cols)
    wait_for(lambda: (sc.status() or {}).get("panes"), message="the ssh pane watched")
    assert published(tmux_server, pane) == ("", "", "")  # a shell on the far side: nothing
    gate = tmp_path / "gate"
    tmux_server.cmd("send-keys", "-t", pane, drawer_command(gate, blocked, idle), "Enter")
    wait_for(lambda: published(tmux_server, pane) == ("blocked", "claude", "ssh"),
             message=f"{blocked.id} through ssh → blocked")
    assert tmux_server.option(pane, "@agentstate_source") == "screen"
    assert tmux_server.cmd("show-options", "-gqv", "@agentstate_summary")  # counted
    window = tmux_server.cmd("display-message", "-p", "-t", pane, "#{window_id}")
    assert tmux_server.cmd("show-options", "-wqv", "-t", window, "@agentstate_window") == "blocked"
    # the user is told, as for any agent pane (no client shows it)
    note = wait_for(lambda: notes.exists() and json.loads(notes.read_text().splitlines()[0]),
                    message="a notification")
    assert note[:3] == [pane, "claude", "blocked"], note
    said = explain(tmux_server, pane, sc.env)
    assert "agent: claude, inferred from the screen through ssh" in said, said
    # the agent's next screen
    (tmp_path / "gate.1").touch()
    wait_for(lambda: published(tmux_server, pane) == ("idle", "claude", "ssh"),
             message=f"{idle.id} → idle")
    # the agent exits to the far side's shell: dropped once no agent was seen for a while
    (tmp_path / "gate.2").touch()
    wait_for(lambda: published(tmux_server, pane) == ("", "", ""), timeout=DROP + 15,
             message="dropped after the agent left")
    assert "ssh" in tmux_server.option(pane, "pane_current_command")  # still logged in


def test_cat_of_a_transcript_is_no_agent_and_ssh_exit_drops_at_once(tmux_server, sidecar,
                                                                   sshd, tmp_path):
    blocked = distinctive("blocked")
    sc = sidecar().start()
    pane = ssh_pane(tmux_server, sshd, blocked.rows, blocked.cols)
    wait_for(lambda: (sc.status() or {}).get("panes"), message="the ssh pane watched")
    # every claude transcript of this size scrolls past, the last one stays above the prompt
    texts = [f.path.with_suffix(".screen.txt") for f in FIXTURES
             if f.agent == "claude" and (f.rows, f.cols) == (blocked.rows, blocked.cols)]
    tmux_server.cmd("send-keys", "-t", pane,
                    "cat " + " ".join(shlex.quote(str(t)) for t in texts)
                    + f" {shlex.quote(str(blocked.path.with_suffix('.screen.txt')))}", "Enter")
    sweeps = (sc.status() or {}).get("sweeps", 0)
    # well past ADOPT, many sweeps: never an agent
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        assert published(tmux_server, pane) == ("", "", ""), "a transcript made an agent"
        time.sleep(0.1)
    assert (sc.status() or {}).get("sweeps", 0) > sweeps + 3
    # a real agent in the same pane is adopted
    gate = tmp_path / "gate"
    tmux_server.cmd("send-keys", "-t", pane, drawer_command(gate, blocked), "Enter")
    wait_for(lambda: published(tmux_server, pane) == ("blocked", "claude", "ssh"),
             message="the agent after the cat")
    # ssh itself exits (killed): the local shell is back, everything goes at once, without
    # waiting for the screen to stop showing an agent (it still does: the drawing stays)
    ssh_pid = int(tmux_server.option(pane, "pane_pid"))
    fg = subprocess.run(["ps", "-o", "tpgid=", "-p", str(ssh_pid)], capture_output=True,
                        text=True).stdout.strip()
    os.kill(int(fg), 15)
    wait_for(lambda: published(tmux_server, pane) == ("", "", ""), timeout=DROP / 2,
             message="dropped as ssh exits (not after the inference's delay)")


def test_a_nested_tmux_in_an_ssh_pane_is_read_as_what_it_shows(tmux_server, sidecar, sshd,
                                                               tmp_path):
    blocked = distinctive("blocked", titled=False)
    remote = RemoteTmux(tmp_path / "r1", cols=blocked.cols, rows=blocked.rows)
    try:
        sc = sidecar().start()
        # one row more than the capture: the nested tmux's status line
        pane = ssh_pane(tmux_server, sshd, blocked.rows + 1, blocked.cols, tmpdir=remote.tmpdir)
        tmux_server.cmd("send-keys", "-t", pane, "tmux -u attach -t main", "Enter")
        wait_for(lambda: "[main]" in capture(tmux_server, pane), message="nested tmux")
        remote.cmd("respawn-pane", "-k", "-t", "main", replay_command(blocked.path, "claude"))
        wait_for(lambda: published(tmux_server, pane) == ("blocked", "claude", "ssh"),
                 message="blocked inside the nested tmux")
        assert capture(tmux_server, pane).rstrip("\n").split("\n")[-1].startswith("[main]")
    finally:
        remote.kill()



@pytest.mark.parametrize("intake", ["pipe", "emulate", "capture"])
def test_an_agent_already_running_when_the_sidecar_starts_is_adopted(tmux_server, sidecar,
                                                                     sshd, tmp_path, intake):
    """No start of the agent was seen (a restart of the sidecar, or the plugin installed
    while it runs): its screen, distinctive, is enough, whichever intake reads it."""
    blocked = distinctive("blocked")
    pane = ssh_pane(tmux_server, sshd, blocked.rows, blocked.cols)
    tmux_server.cmd("send-keys", "-t", pane, drawer_command(tmp_path / "gate", blocked), "Enter")
    wait_for(lambda: "1. Yes" in capture(tmux_server, pane), message="the prompt drawn")
    sidecar(intake=intake).start()
    wait_for(lambda: published(tmux_server, pane) == ("blocked", "claude", "ssh"),
             message="adopted from its screen alone")


# -- a real agent CLI on the far side --------------------------------------------------------
from test_real_agents import claude_env, claude_mock, hclaude, hcodex, needs_claude  # noqa: E402,F401


@needs_claude
def test_real_claude_code_through_ssh(tmux_server, sidecar, sshd, tmp_path, claude_mock):
    """The real Claude Code CLI, started in the ssh pane on the far side (against the mock
    API on 127.0.0.1): idle, then its permission dialog, all from the screen through ssh;
    /exit, and it is dropped."""
    env, proj = claude_env(tmp_path, claude_mock)
    sidecar().start()
    pane = ssh_pane(tmux_server, sshd, 36, 120)
    start = (f"cd {shlex.quote(str(proj))} && env "
             + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
             + " claude --permission-mode manual")
    try:
        tmux_server.cmd("send-keys", "-t", pane, "-l", start)
        tmux_server.cmd("send-keys", "-t", pane, "Enter")
        wait_for(lambda: published(tmux_server, pane) == ("idle", "claude", "ssh"), timeout=60,
                 message="Claude idle through ssh")
        tmux_server.cmd("send-keys", "-t", pane, "-l",
                        "set up the build output RUNCMD mkdir -p build/out")
        time.sleep(0.5)
        tmux_server.cmd("send-keys", "-t", pane, "Enter")
        wait_for(lambda: published(tmux_server, pane) == ("blocked", "claude", "ssh"),
                 timeout=60, message="its permission dialog through ssh")
        tmux_server.cmd("send-keys", "-t", pane, "Escape")
        wait_for(lambda: tmux_server.state(pane) in ("idle", "working"), timeout=30,
                 message="the dialog answered")
        tmux_server.cmd("send-keys", "-t", pane, "-l", "/exit")
        time.sleep(0.5)
        tmux_server.cmd("send-keys", "-t", pane, "Enter")
        wait_for(lambda: published(tmux_server, pane) == ("", "", ""), timeout=DROP + 30,
                 message="dropped after Claude exits")
    finally:
        hcodex.kill_pids(hcodex.pids_naming(env["HOME"]))
