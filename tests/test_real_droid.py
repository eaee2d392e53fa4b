"""End to end with the REAL Factory Droid (harness/droid.py's pinned release) launched through
`tmux-agentstate launch droid` in a private tmux server against the OpenAI mock, with the sidecar
watching: the hooks in launch's private `--settings` file report working → blocked → working →
idle (an approval) and blocked → idle (a question), invisibly (no "Hooks" rows of ours in Droid's
transcript), beside a hook of the user's own; the file is gone once Droid has exited. Skipped
when droid is not installed where the harness keeps it (`scripts/install-agents` installs it).

Droid may or may not ask "Trust this folder?" first (it depends on where the project sits and
what it trusted before), so every wait takes whichever comes first: that question (answered) or
the idle input box.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from test_real_agents import (INTERVAL, AgentPane, Observer, _harness, agent_path, assert_proven,
                              is_subsequence, launch_argv, source_of, submit, tear_down)

hdroid = _harness("droid")
hcommon = sys.modules["common"]  # the harness's shared module, imported by the drivers

needs_droid = pytest.mark.skipif(
    not hdroid.DROID.bin.exists(),
    reason=f"droid {hdroid.DROID.version} is not installed in {hdroid.DROID.prefix} "
           f"(run scripts/install-agents)")
ROWS, COLS = 36, 120
# a row Droid writes into its transcript for a hook that did not ask to be hidden
HOOKS_ROW = re.compile(r"^\s*Hooks (\w+)", re.M)


BLANK_FOR = 60  # seconds of a blank pane after which the wait fails, saying where Droid is


def droid_started(agent: AgentPane) -> str | None:
    """Where the pane's process tree is: the Droid process launch handed over to (its pid and
    state), or None while only the launcher (or a shell) runs."""
    import psutil
    pid = int(agent.server.cmd("display-message", "-p", "-t", agent.pane, "#{pane_pid}").strip())
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            if p.name() == "droid":
                return f"pid {p.pid}, {p.status()}"
    except psutil.Error:
        pass
    return None


def ready(agent: AgentPane, timeout: float = 90) -> str:
    """Wait for the idle input box; a folder-trust question that shows first is answered
    (Enter: "1. Trust this folder") and the wait goes on. A pane still blank after BLANK_FOR s
    fails at once, saying whether launch had handed over to Droid (a blank Droid was its CI mode:
    the CI variable, unset in the fixture)."""
    start = time.time()
    deadline = start + timeout
    answered = 0.0
    while True:
        scr = agent.screen()
        if hdroid.is_idle(scr):
            return scr
        if hdroid.TRUST in scr and time.time() - answered > 3:  # once, again only if it stays
            time.sleep(1.0)  # keys sent while it is being drawn are dropped
            agent.keys("Enter")
            answered = time.time()
        if not scr.strip() and time.time() - start > BLANK_FOR:
            where = droid_started(agent)
            raise AssertionError(
                f"the pane is blank after {BLANK_FOR} s: " + (
                    "launch droid never handed over (no droid process in the pane)" if where is None
                    else f"Droid runs ({where}) but drew nothing"))
        if time.time() > deadline:
            raise AssertionError(f"neither the idle input box nor the trust question:\n{scr}")
        time.sleep(0.1)


def history(agent: AgentPane) -> str:
    """The whole pane: scrollback and screen."""
    return agent.server.cmd("capture-pane", "-p", "-S", "-", "-t", agent.pane)


@pytest.fixture
def droid_launched(tmux_server, sidecar, tmp_path):
    """The real Droid through `launch droid`, air-gapped against the OpenAI mock, with a user
    settings file of its own holding a Stop hook that leaves a mark."""
    mock = hcommon.Mock("mock_openai.py", tmp_path / "requests.jsonl", slow=5, delay=5)
    base = hcommon.AGENTS / f"test-droid-{os.getpid()}-{int(time.time() * 1000) % 10**8}"
    home, proj = base / "home", base / "proj"
    (home / ".factory").mkdir(parents=True)
    mark = base / "user hook.mark"  # a space in the user's own path
    settings = hdroid.settings(mock.port)
    settings["hooks"] = {"Stop": [{"hooks": [
        {"type": "command", "command": f"echo stop >> '{mark}'", "timeout": 5}]}]}
    user_settings = home / ".factory" / "settings.json"
    user_settings.write_text(json.dumps(settings, indent=2))
    hcommon.demo_project(proj)
    env = {"HOME": str(home), "FACTORY_AIRGAP_ENABLED": "true", "FACTORY_DISABLE_KEYRING": "1",
           "TERM": "tmux-256color", "LANG": "C.UTF-8", "PATH": agent_path(hdroid.DROID.bin.parent)}
    sidecar(interval=INTERVAL).start()
    # a user's pane has no CI variable, and Droid with CI set (as CI runs this suite) draws
    # nothing at all (its Ink renderer's CI mode): the pane gets the server's global environment
    tmux_server.cmd("set-environment", "-g", "-u", "CI")
    agent = AgentPane(tmux_server, launch_argv("droid"), env, proj, rows=ROWS, cols=COLS)
    tmux_server.cmd("set-option", "-p", "-t", agent.pane, "remain-on-exit", "on")
    obs = Observer(tmux_server, agent.pane)
    try:
        yield agent, obs, base, user_settings
    finally:
        tear_down(obs, tmux_server, home, mock, base)


def droid_submit(agent: AgentPane, obs: Observer, text: str) -> float:
    """Type a prompt at the idle box; submitted once a hook reports (UserPromptSubmit)."""
    ready(agent)
    return submit(agent, obs, text, per_try=5, started=obs.reported_since)


def settings_path(agent: AgentPane) -> Path:
    """The --settings file of the droid running in the pane (its command line)."""
    pid = agent.server.cmd("display-message", "-p", "-t", agent.pane, "#{pane_pid}").strip()
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return Path(argv[argv.index("--settings") + 1])


@needs_droid
def test_droid_launch_hooks_report_blocked_working_idle_invisibly(droid_launched):
    agent, obs, base, user_settings = droid_launched
    user_before = user_settings.read_text()
    ready(agent)
    obs.wait_state("idle", timeout=20)
    ours = settings_path(agent)
    assert ours.is_file() and (ours.stat().st_mode & 0o777) == 0o600
    # an approval: blocked from the permission_prompt Notification, working while the approved
    # command runs, idle from Stop
    t0 = droid_submit(agent, obs, "please run `sleep 3; ls -la` now")
    t_blocked = obs.wait_state("blocked", timeout=30)
    agent.wait_text(hdroid.APPROVAL, timeout=10)
    time.sleep(1.0)
    agent.keys("Enter")  # Yes, allow
    t_idle = obs.wait_state("idle", timeout=40)
    time.sleep(1.0)
    log = obs.dump()
    assert is_subsequence(["working", "blocked", "working", "idle"], obs.states(t0)), log
    # (UserPromptSubmit and PreToolUse can come within one 50 ms poll: not required)
    assert is_subsequence(["Notification", "PostToolUse", "Stop"], obs.report_events(t0)), log
    assert any(rep.startswith("blocked ") and source_of(rep) == "hook:droid:Notification"
               for _, _, _, rep in obs.entries(t0)), log
    last = obs.entries()[-1][3]
    assert last.startswith("idle ") and source_of(last) == "hook:droid:Stop", log
    assert_proven(agent, last)
    # a question (AskUser): blocked from its PreToolUse or its elicitation Notification
    t1 = droid_submit(agent, obs, "ask me which option to use")
    obs.wait_state("blocked", timeout=30)
    agent.wait_text(hdroid.QUESTION, timeout=10)
    time.sleep(1.0)
    assert any(rep.startswith("blocked ") and source_of(rep) in ("hook:droid:PreToolUse",
                                                                 "hook:droid:Notification")
               for _, _, _, rep in obs.entries(t1)), obs.dump()
    agent.keys("1")
    obs.wait_state("idle", timeout=40)
    time.sleep(1.0)
    assert obs.current() == "idle" and source_of(obs.entries()[-1][3]) == "hook:droid:Stop", obs.dump()
    # a file approval refused with Esc: whatever hooks fire, the pane does not stay blocked
    t2 = droid_submit(agent, obs, "create src/cache_utils.py with a helper")
    obs.wait_state("blocked", timeout=30)
    agent.wait_text(hdroid.APPROVAL, timeout=10)
    time.sleep(1.0)
    t_esc = time.time()
    agent.keys("Escape")
    obs.wait_state("idle", timeout=15)
    time.sleep(2.0)
    assert obs.current() == "idle" and "blocked" not in obs.states(t_esc + 1.5), obs.dump()
    print(f"\ndroid Esc on an approval: {obs.report_events(t2)}")
    # our hooks ran invisibly; the user's own Stop hook ran too (and shows, as they set it)
    transcript = history(agent)
    assert "tmux_agentstate" not in transcript, transcript
    assert set(HOOKS_ROW.findall(transcript)) <= {"Stop"}, transcript
    assert (base / "user hook.mark").read_text().split() == ["stop"] * 3  # each turn's end
    # quit (Ctrl+C twice): SessionEnd clears the report, and the settings file goes
    agent.keys("C-c")
    time.sleep(0.5)
    agent.keys("C-c")
    deadline = time.time() + 20
    while time.time() < deadline and (obs.entries()[-1][3] != "" or ours.exists()):
        time.sleep(0.1)
    assert obs.entries()[-1][3] == "", obs.dump()
    assert not ours.exists(), f"{ours} outlived droid"
    # --settings is for this run only: nothing of ours in HOME; the user's settings file keeps
    # its own hooks (Droid rewrites the file itself: it gives its custom models ids)
    assert json.loads(user_settings.read_text())["hooks"] == json.loads(user_before)["hooks"]
    # (its session transcripts and logs record which hooks ran: not configuration)
    home = base / "home"
    assert not [p for p in home.rglob("*") if p.is_file() and p.stat().st_size < 10**6
                and p.relative_to(home).parts[:2] not in ((".factory", "sessions"), (".factory", "logs"))
                and "tmux_agentstate" in p.read_text(errors="ignore")]
    print(f"\ndroid: blocked {t_blocked - t0:.2f}s after Enter on the prompt, idle at "
          f"+{t_idle - t0:.2f}s\n{obs.dump()}")
