"""A report lands on the pane whose agent sent it, and only there (issue 25, item 4).

`launch` records a per-launch token on its pane and hands it to the agent; the hook presents it
and the sidecar accepts a report only with the token recorded on that pane (core/origin.py).
The agent here is a stand-in for Claude Code started through the real `tmux-agentstate launch
claude` in a private tmux server: a script named `claude` on PATH that draws a captured idle
Claude screen and runs the hook commands of the `--settings` launch gave it the way Claude does
(`sh -c COMMAND`, the payload on stdin), and runs "tool calls" in a shell below itself.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import replay_command, wait_for
from test_signals import IDLE, cli, hook, launch_record
from test_wheel import wheel_venv  # noqa: F401 (a fixture)
from tmux_agentstate.sidecar.doorbell import ring
from tmux_agentstate.core.origin import LaunchRecord, refusal, safe_name

STANDIN = r'''#!PYTHON
"""Stand-in for Claude Code (see tests/test_origin.py)."""
import json, os, subprocess, sys, time
args = sys.argv[1:]
settings = json.loads(args[args.index("--settings") + 1]) if "--settings" in args else {}

def run_hook(event, payload):
    for entry in settings.get("hooks", {}).get(event, []):
        for h in entry["hooks"]:
            subprocess.run(["sh", "-c", h["command"]], input=json.dumps(payload), text=True)

once = [a.split("=", 1)[1] for a in args if a.startswith("--once=")]
if once:  # an agent that reports one event and quits (a nested one, inside a tool call)
    run_hook(once[0], {"hook_event_name": once[0], "tool_name": "Bash"})
    sys.exit(0)
open(os.environ["STANDIN_PID"], "w").write(str(os.getpid()))
subprocess.run(["stty", "-echo"])
time.sleep(0.3)
sys.stdout.buffer.write(open(os.environ["STANDIN_SCREEN"], "rb").read())
sys.stdout.flush()
inbox = os.environ["STANDIN_INBOX"]
while True:  # what the test asks of it: {"hook": EVENT} or {"tool": SHELL COMMAND}
    for name in sorted(n for n in os.listdir(inbox) if n.endswith(".json")):
        job = json.load(open(os.path.join(inbox, name)))
        if "hook" in job:
            run_hook(job["hook"], {"hook_event_name": job["hook"], "tool_name": "Bash"})
        else:  # a tool call: a shell on the agent's own terminal, in its process group
            subprocess.run(["sh", "-c", job["tool"]], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        os.rename(os.path.join(inbox, name), os.path.join(inbox, name[:-5] + ".done"))
    time.sleep(0.05)
'''


class StandIn:
    """The stand-in agent in a pane of its own, started as `claude` (through launch or not)."""

    def __init__(self, server, tmp_path: Path, launched: bool = True,
                 launcher: str = f"{sys.executable} -m tmux_agentstate"):
        self.server, self.dir = server, tmp_path / "standin"
        self.bin, self.inbox = self.dir / "bin", self.dir / "inbox"
        self.bin.mkdir(parents=True)
        self.inbox.mkdir()
        exe = self.bin / "claude"
        exe.write_text(STANDIN.replace("PYTHON", sys.executable, 1))
        exe.chmod(0o755)
        self.env = {"PATH": f"{self.bin}:{os.path.dirname(sys.executable)}:/usr/bin:/bin",
                    "STANDIN_SCREEN": str(IDLE.path), "STANDIN_INBOX": str(self.inbox),
                    "STANDIN_PID": str(self.dir / "pid")}
        argv = (f"{launcher} launch claude" if launched
                else f"env AGENTSTATE_AGENT=claude {exe}")
        # PATH in the command: tmux gives a new pane the client's PATH, whatever -e says
        self.pane = server.new_pane(f"env PATH={self.env['PATH']} {argv}", rows=IDLE.rows,
                                    cols=IDLE.cols, env=self.env)
        wait_for(lambda: "for shortcuts" in server.cmd("capture-pane", "-p", "-t", self.pane),
                 timeout=20, message="the stand-in's idle screen")
        self.pid = int((self.dir / "pid").read_text())
        self.jobs = 0

    def ask(self, **job) -> None:
        self.jobs += 1
        name = f"{self.jobs:03d}"
        (self.inbox / f"{name}.tmp").write_text(json.dumps(job))
        (self.inbox / f"{name}.tmp").rename(self.inbox / f"{name}.json")
        wait_for(lambda: (self.inbox / f"{name}.done").exists(), timeout=20, message=f"job {job}")

    def report(self) -> str:
        return self.server.option(self.pane, "@agentstate_report")


def sidecar_log(sc) -> str:
    path = sc.runtime_dir() / "sidecar.log"
    return path.read_text(errors="replace") if path.exists() else ""


def refusals(sc, pane: str) -> list[str]:
    return [line for line in sidecar_log(sc).splitlines() if f"{pane} (" in line and "ignored" in line]


def settle(sc, sweeps: int = 5) -> None:
    """Let the sidecar sweep a few times (what must not happen has had its chance)."""
    time.sleep(sc.interval * sweeps)


# -- (b) the launched agent's own report lands, with its pane's token ----------------------------
def test_a_launched_agents_report_carries_the_token_recorded_on_its_pane(tmux_server, sidecar, tmp_path):
    agent = StandIn(tmux_server, tmp_path)
    record = LaunchRecord.parse(tmux_server.option(agent.pane, "@agentstate_launch"))
    assert record is not None and record.pid == agent.pid  # launch's pid is the agent's (exec)
    sc = sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(agent.pane) == "idle", message="idle")
    agent.ask(hook="PermissionRequest")
    state, _, source, token = agent.report().split()
    assert (state, source, token) == ("blocked", "hook:claude:PermissionRequest", record.token)
    wait_for(lambda: tmux_server.state(agent.pane) == "blocked", message="the report counts")
    assert tmux_server.option(agent.pane, "@agentstate_source") == "hook"
    agent.ask(hook="Stop")
    wait_for(lambda: tmux_server.state(agent.pane) == "idle", message="idle again")
    assert refusals(sc, agent.pane) == []


def test_each_launch_gets_its_own_token_and_the_old_ones_reports_stop_counting(tmux_server, tmp_path):
    one = StandIn(tmux_server, tmp_path / "a")
    two = StandIn(tmux_server, tmp_path / "b")
    first, second = (LaunchRecord.parse(tmux_server.option(a.pane, "@agentstate_launch")) for a in (one, two))
    assert first.token != second.token and re.fullmatch(r"[0-9a-f]{32}", first.token)
    # the first agent's report copied onto the second pane proves nothing there
    one.ask(hook="PermissionRequest")
    tmux_server.cmd("set-option", "-p", "-t", two.pane, "@agentstate_report", one.report())
    assert refusal(one.report(), tmux_server.option(two.pane, "@agentstate_launch"))
    assert refusal(one.report(), tmux_server.option(one.pane, "@agentstate_launch")) is None


def test_from_the_wheel_the_launched_agents_report_lands_with_its_token(tmux_server, sidecar, tmp_path, wheel_venv):
    """As a user gets it: `tmux-agentstate launch` of an installed wheel (its hooks run the
    wheel's interpreter), not this checkout."""
    venv, _, _ = wheel_venv
    agent = StandIn(tmux_server, tmp_path, launcher=str(venv / "bin" / "tmux-agentstate"))
    sc = sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(agent.pane) == "idle", message="idle")
    agent.ask(hook="PermissionRequest")
    report = agent.report().split()
    assert report[2:] == ["hook:claude:PermissionRequest",
                          tmux_server.option(agent.pane, "@agentstate_launch").split()[0]]
    wait_for(lambda: tmux_server.state(agent.pane) == "blocked", message="the report counts")
    assert refusals(sc, agent.pane) == []


# -- (a) anyone with TMUX and TMUX_PANE marks nothing; one log line --------------------------------
def test_a_plain_process_running_the_hook_marks_nothing_and_is_logged_once(tmux_server, sidecar, tmp_path):
    agent = StandIn(tmux_server, tmp_path, launched=False)  # the agent's hooks are not ours
    sc = sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(agent.pane) == "idle", message="idle")
    res = hook(tmux_server, agent.pane, "claude", "PermissionRequest", {"tool_name": "Bash"},
               launched=False)
    assert (res.returncode, res.stdout.strip(), res.stderr) == (0, "{}", "")
    wait_for(lambda: refusals(sc, agent.pane), message="one log line")
    settle(sc)
    assert tmux_server.state(agent.pane) == "idle"
    lines = refusals(sc, agent.pane)
    assert len(lines) == 1 and "no proof of origin" in lines[0], sidecar_log(sc)
    # again, and by hand with a made-up token: still nothing; a new token, one more line
    hook(tmux_server, agent.pane, "claude", "PermissionRequest", launched=False)
    tmux_server.cmd("set-option", "-p", "-t", agent.pane, "@agentstate_report",
                    f"blocked {time.time():.3f} hook:claude:PermissionRequest {'ab' * 16}")
    # and its doorbell rung, as the hook does after it sets a report (otherwise the sidecar
    # reads reports with its pane listing: every `listing_every`, 30 s, when nothing happens)
    ring(sc.runtime_dir(), agent.pane)
    wait_for(lambda: len(refusals(sc, agent.pane)) == 2, timeout=20, message="a second line")
    settle(sc)
    assert tmux_server.state(agent.pane) == "idle"
    assert len(refusals(sc, agent.pane)) == 2, sidecar_log(sc)
    out = cli(tmux_server, "explain", "-L", tmux_server.name, agent.pane).stdout
    assert "state: idle" in out and "ignored" in out, out


def blocked_stand_in(tmux_server, sidecar, tmp_path):
    """A launched stand-in agent whose own hook reported its permission dialog: blocked."""
    agent = StandIn(tmux_server, tmp_path)
    sc = sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(agent.pane) == "idle", message="idle")
    agent.ask(hook="PermissionRequest")
    wait_for(lambda: tmux_server.state(agent.pane) == "blocked", message="blocked")
    return agent, sc


def test_a_plain_process_cannot_overwrite_a_launched_agents_report(tmux_server, sidecar, tmp_path):
    agent, sc = blocked_stand_in(tmux_server, sidecar, tmp_path)
    before = agent.report()
    hook(tmux_server, agent.pane, "claude", "Stop", launched=False)  # no token
    # the launch's token and pid in the environment of a process that is not the agent: e.g.
    # a daemon it started, since re-parented, or a script that copied its variables
    token, pid = tmux_server.option(agent.pane, "@agentstate_launch").split()
    hook(tmux_server, agent.pane, "claude", "Stop", launched=False,
         env_extra={"AGENTSTATE_TOKEN": token, "AGENTSTATE_LAUNCH_PID": pid})
    assert agent.report() == before
    settle(sc)
    assert tmux_server.state(agent.pane) == "blocked"


def test_a_report_without_a_token_never_lands_on_a_launched_pane_whatever_its_token(tmux_server):
    """Whatever the recorded token looks like: `if-shell -F` reads a value starting with '0' as
    false, so a record "0…" (a random token does, one launch in 16) once let a process without
    a token overwrite the launched agent's report (seen as a flake of the nested-agent test)."""
    pane = tmux_server.new_pane("sleep 600")
    for token in ("0" + "a" * 31, "0" * 32, "f" * 32):
        tmux_server.cmd("set-option", "-p", "-t", pane, "@agentstate_launch", f"{token} 4242")
        tmux_server.cmd("set-option", "-p", "-t", pane, "@agentstate_report",
                        f"blocked 1.000 hook:claude:PermissionRequest {token}")
        hook(tmux_server, pane, "claude", "Stop", launched=False)
        assert tmux_server.option(pane, "@agentstate_report").startswith("blocked "), token
    tmux_server.cmd("set-option", "-p", "-u", "-t", pane, "@agentstate_launch")
    hook(tmux_server, pane, "claude", "Stop", launched=False)  # no launch here: it lands
    assert tmux_server.option(pane, "@agentstate_report").startswith("idle "), "no record"


# -- (c) an agent started inside the launched one's tool call ------------------------------------
def test_a_nested_agent_inheriting_the_pane_and_token_does_not_report_onto_it(tmux_server, sidecar, tmp_path):
    agent, sc = blocked_stand_in(tmux_server, sidecar, tmp_path)
    before, recorded = agent.report(), tmux_server.option(agent.pane, "@agentstate_launch")
    settings = json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command":
        f"{sys.executable} -m tmux_agentstate.hook claude Stop 2>/dev/null || true"}]}]}})
    # a nested claude that was not launched by us, with hooks of its own (the user's settings):
    # it inherits TMUX_PANE, the launch's token and pid
    agent.ask(tool=f"claude --settings '{settings}' --once=Stop")
    assert agent.report() == before
    # a nested `tmux-agentstate launch claude` (an alias in the tool's shell): its tty is the
    # pane's and its process group is in front, but the agent launched there is above it
    tty = tmux_server.option(agent.pane, "pane_tty")
    agent.ask(tool=f"{sys.executable} -m tmux_agentstate launch claude --once=Stop < {tty}")
    assert agent.report() == before
    assert tmux_server.option(agent.pane, "@agentstate_launch") == recorded
    settle(sc)
    assert tmux_server.state(agent.pane) == "blocked"
    # the launched agent itself still reports
    agent.ask(hook="Stop")
    wait_for(lambda: tmux_server.state(agent.pane) == "idle", message="its own report")


def test_a_nested_launch_hands_on_no_token(tmux_server, tmp_path):
    """Whether its stdin is the pane's terminal in front (the agent above it is what tells) or
    not a terminal at all (a tool call's pipe)."""
    agent = StandIn(tmux_server, tmp_path)
    out = tmp_path / "env.json"
    dump = f"{sys.executable} -c 'import json, os; json.dump(dict(os.environ), open(\"{out}\", \"w\"))'"
    agent.bin.joinpath("envdump").write_text(f"#!/bin/sh\nexec {dump}\n")
    agent.bin.joinpath("envdump").chmod(0o755)
    for stdin in (tmux_server.option(agent.pane, "pane_tty"), "/dev/null"):
        out.unlink(missing_ok=True)
        agent.ask(tool=f"{sys.executable} -m tmux_agentstate launch envdump < {stdin}")
        env = json.loads(out.read_text())
        assert env["AGENTSTATE_AGENT"] == "envdump" and env["TMUX_PANE"] == agent.pane
        assert not {"AGENTSTATE_TOKEN", "AGENTSTATE_LAUNCH_PID"} & set(env), stdin
        assert LaunchRecord.parse(tmux_server.option(agent.pane, "@agentstate_launch")).pid == agent.pid


# -- (d) hostile agent and event names ---------------------------------------------------------------
HOSTILE = ["claude#(touch PWNED)", "a b", "\x1b]0;evil\x07x\x1b[2J", "#{pane_id}" + "x" * 500, ""]


def test_agent_and_event_names_are_published_escaped(tmux_server, sidecar, tmp_path):
    marker = tmp_path / "PWNED"
    pane = tmux_server.new_pane(replay_command(IDLE.path, "claude"), rows=IDLE.rows, cols=IDLE.cols)
    sc = sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "idle", message="idle")
    for name in HOSTILE:
        hook(tmux_server, pane, name.replace("PWNED", str(marker)), "blocked")
        value = tmux_server.option(pane, "@agentstate_report")
        state, _, source, token = value.split()
        assert state == "blocked" and source == f"hook:{safe_name(name.replace('PWNED', str(marker)))}:blocked"
        assert re.fullmatch(r"hook:[A-Za-z0-9._:+-]{1,40}:blocked", source), value
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked by the report")
    # the same by hand, with the pane's token: what the sidecar logs and explain prints is clean
    tmux_server.cmd("set-option", "-p", "-t", pane, "@agentstate_report",
                    f"blocked {time.time():.3f} hook:\x1b]0;x\x07#(touch${{IFS}}{marker}):ev {token}")
    settle(sc)
    out = cli(tmux_server, "explain", "-L", tmux_server.name, pane).stdout
    assert "hook report: blocked" in out, out
    for text in (out, sidecar_log(sc), *(tmux_server.option(pane, o) for o in
                                         ("@agentstate_source", "@agentstate_detail"))):
        assert "#(" not in text and "\x1b" not in text and "\x07" not in text, text
    assert not marker.exists()


def test_safe_name_keeps_plain_names_and_caps_the_rest():
    assert safe_name("PostToolUseFailure") == "PostToolUseFailure"
    assert safe_name("permission.asked") == "permission.asked"
    assert safe_name("a b#(x)\x1b") == "a_b__x__"
    assert len(safe_name("x" * 1000)) == 40 and safe_name("") == "-"


# -- the real Codex 0.171: a shared app-server daemon runs every plain session's hooks -------------
from test_real_agents import (CODEX_DIALOG, AgentPane, CodexHome, codex_mock, hcodex,  # noqa: E402,F401
                              needs_codex)


def _trust_hooks(*agents: AgentPane, until=lambda: True) -> None:
    """Codex's "Hooks need review" (at start-up, or late over the composer when a daemon
    serves the session, seconds later on a loaded machine): trust all, in every pane, until
    each composer has stood alone for 3 s and `until()` holds."""
    deadline, calm_since = time.time() + 90, {a.pane: None for a in agents}
    while True:
        screens = {a.pane: a.screen() for a in agents}
        assert time.time() < deadline, screens
        for agent in agents:
            scr = screens[agent.pane]
            if "t trust all" in scr:
                agent.keys("t")
                calm_since[agent.pane] = None
            elif "Trust all and continue" in scr:
                agent.keys("Enter" if re.search(r"›\s*2\. Trust all and continue", scr) else "Down")
                calm_since[agent.pane] = None
            elif "? for shortcuts" in scr:
                calm_since[agent.pane] = calm_since[agent.pane] or time.time()
            else:
                calm_since[agent.pane] = None
        if all(t and time.time() - t > 3 for t in calm_since.values()) and until():
            return
        time.sleep(0.5)


@needs_codex
def test_codex_daemon_runs_a_second_panes_hooks_with_the_first_panes_env_and_it_counts_nowhere(
        tmux_server, sidecar, codex_mock, tmp_path):
    """Two plain `codex` (not launched: the user wired our hook into config.toml) in two panes
    share one app-server daemon, started by the first with the first pane's environment; it
    runs the second session's hooks too, so their reports are set on the FIRST pane. They carry
    no proof: the first pane's state does not move, and the sidecar says why once."""
    home = CodexHome(codex_mock)
    try:
        proj2 = home.base / "proj2"
        proj2.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=proj2, check=True)
        hook_cmd = f"{sys.executable} -m tmux_agentstate.hook codex UserPromptSubmit 2>/dev/null || true"
        config = home.home / "config.toml"
        config.write_text(config.read_text() + f'\n[projects."{proj2}"]\ntrust_level = "trusted"\n'
                          f'\n[hooks]\nUserPromptSubmit = [{{hooks=[{{type="command",command="{hook_cmd}",timeout=5}}]}}]\n')
        sc = sidecar(interval=0.3).start()
        first = AgentPane(tmux_server, [str(hcodex.CODEX_BIN)], home.env(), home.proj, rows=30, cols=100)
        _trust_hooks(first)
        second = AgentPane(tmux_server, [str(hcodex.CODEX_BIN)], home.env(), proj2, rows=30, cols=100)

        def daemons():
            found = []
            for pid in hcodex.pids_naming(str(home.home)):
                try:
                    if b"app-server\0--listen" in Path(f"/proc/{pid}/cmdline").read_bytes():
                        found.append(pid)
                except OSError:
                    continue
            return found

        wait_for(daemons, timeout=30, message="the app-server daemon")
        # the daemon's late review may come to either pane: trust on both until both are idle
        _trust_hooks(first, second, until=lambda: (tmux_server.state(first.pane), tmux_server.state(second.pane))
                     == ("idle", "idle"))
        assert len(daemons()) == 1, daemons()
        daemon_env = Path(f"/proc/{daemons()[0]}/environ").read_bytes().split(b"\0")
        assert f"TMUX_PANE={first.pane}".encode() in daemon_env
        second.type("please execute `sleep 10 && ls` thanks")
        second.keys("Enter")
        second.wait_text(CODEX_DIALOG, timeout=30)  # the second pane's turn runs (and waits)
        # its UserPromptSubmit report sits on the first pane (the daemon's TMUX_PANE) ...
        assert "hook:codex:UserPromptSubmit" in tmux_server.option(first.pane, "@agentstate_report")
        assert tmux_server.option(second.pane, "@agentstate_report") == ""
        # ... and does not count there: the first pane stays idle, with one line in the log
        wait_for(lambda: refusals(sc, first.pane), timeout=20, message="the refusal logged")
        settle(sc)
        assert tmux_server.state(first.pane) == "idle", sidecar_log(sc)
        assert tmux_server.state(second.pane) == "blocked"  # its own screen says so
        assert len(refusals(sc, first.pane)) == 1, sidecar_log(sc)
    finally:
        tmux_server.kill()
        home.close()


def test_an_ancestor_that_exits_while_the_hook_looks_is_not_the_launched_agent(monkeypatch):
    """The walk up from a hook reads /proc one process at a time: a nested agent that does
    not wait for its hook exits mid-walk. That is no proof of the launched agent (it waits for
    its own hooks); only a machine with no /proc at all leaves the token alone to decide."""
    from tmux_agentstate.core.origin import LAUNCH_PID_ENV
    from tmux_agentstate.hooks import report
    launched, parent, gone = 4242, os.getppid(), 4243
    table = {os.getpid(): ("python3", parent, 1), parent: ("sh", gone, 1),
             launched: ("claude", 1, launched)}  # `gone`: exited before it was read
    monkeypatch.setattr(report, "_stat", table.get)
    assert report.run_by_launched_agent({LAUNCH_PID_ENV: str(launched)}) is False
    table[gone] = ("claude", launched, launched)  # still there: a child of the launched one
    assert report.run_by_launched_agent({LAUNCH_PID_ENV: str(launched)}) is True
    monkeypatch.setattr(report, "_stat", lambda pid: None)  # no /proc at all
    assert report.run_by_launched_agent({LAUNCH_PID_ENV: str(launched)}) is True
