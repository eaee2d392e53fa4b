"""Agent reports (hooks), their lifetime against the screen, notifications, send/answer."""
import json
import re
import os
import secrets
import signal
import subprocess
import sys
import time

import pytest

from conftest import OuterClient, replay_command, wait_for
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.sidecar.doorbell import ring
from tmux_agentstate.sidecar.runtime import Runtime

FIXTURES = load_index()
BLOCKED = next(f for f in FIXTURES if f.agent == "claude" and f.state == "blocked" and f.kind == "command-approval")
IDLE = next(f for f in FIXTURES if f.agent == "claude" and f.state == "idle" and f.rows == BLOCKED.rows
            and f.cols == BLOCKED.cols and f.renderer == BLOCKED.renderer)


def launch_record(server, pane) -> dict[str, str]:
    """Record a launch on `pane` as `launch` does, this test process standing in for the
    launched agent (the hook's parent); the environment its hooks get. Once per pane."""
    recorded = server.option(pane, "@agentstate_launch").split()
    if len(recorded) != 2:
        recorded = [secrets.token_hex(16), str(os.getpid())]
        server.cmd("set-option", "-p", "-t", pane, "@agentstate_launch", " ".join(recorded))
    return {"AGENTSTATE_TOKEN": recorded[0], "AGENTSTATE_LAUNCH_PID": recorded[1]}


def hook(server, pane, agent, event, payload=None, env_extra=None, launched=True):
    """The hook as the agent launched in `pane` runs it (`launched=False`: as any process)."""
    socket = server.tmux.socket()
    env = dict(os.environ, TMUX=f"{socket},1,0", TMUX_PANE=pane)
    for name in ("AGENTSTATE_TOKEN", "AGENTSTATE_LAUNCH_PID", "AGENTSTATE_HOST_PID"):
        env.pop(name, None)  # never what the test runner itself may have inherited
    env.update(launch_record(server, pane) if launched else {}, **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "tmux_agentstate.hook", agent, event],
                          input=json.dumps(payload or {}), capture_output=True, text=True, env=env)


def use_notify_recorder(server, tmp_path, out):
    """@agentstate-notify-command = a script appending its argv, as JSON, to `out`."""
    recorder = tmp_path / "notify.py"
    recorder.write_text("import json, sys\nopen(%r, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n" % str(out))
    server.cmd("set-option", "-g", "@agentstate-notify-command", f"{sys.executable} {recorder}")


def cli(server, *args):
    env = dict(os.environ)
    env.pop("TMUX", None)
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, ], capture_output=True,
                          text=True, env=env)


def test_hook_records_report_prints_braces_and_never_fails(tmux_server):
    pane = tmux_server.new_pane("sleep 600")
    res = hook(tmux_server, pane, "claude", "PermissionRequest", {"tool_name": "Bash"})
    assert (res.returncode, res.stdout.strip()) == (0, "{}")
    state, at, source, token = tmux_server.option(pane, "@agentstate_report").split()
    assert state == "blocked" and abs(float(at) - time.time()) < 5 and source == "hook:claude:PermissionRequest"
    assert token == launch_record(tmux_server, pane)["AGENTSTATE_TOKEN"]
    hook(tmux_server, pane, "claude", "PreToolUse", {"tool_name": "AskUserQuestion"})
    assert tmux_server.option(pane, "@agentstate_report").startswith("blocked ")
    hook(tmux_server, pane, "claude", "Stop")
    assert tmux_server.option(pane, "@agentstate_report").startswith("idle ")
    hook(tmux_server, pane, "claude", "SessionEnd")
    assert tmux_server.option(pane, "@agentstate_report") == ""
    # garbage payload, unknown agent, no tmux at all: still {} and exit 0
    env = dict(os.environ, TMUX="/nonexistent/socket,1,0", TMUX_PANE="%99")
    for args, data in ((["claude", "Stop"], "not json"), (["nope", "x"], ""), ([], "")):
        r = subprocess.run([sys.executable, "-m", "tmux_agentstate.hook", *args], input=data,
                           capture_output=True, text=True, env=env)
        assert (r.returncode, r.stdout.strip(), r.stderr) == (0, "{}", "")


def prompt_then_idle_command(tmp_path):
    go = tmp_path / "go"
    script = (f"sleep 0.3; cat {BLOCKED.path}; while [ ! -e {go} ]; do sleep 0.05; done; "
              f"printf '\\033[?1049l\\033[2J\\033[H'; cat {IDLE.path}; exec sleep 600")
    return f"env AGENTSTATE_AGENT=claude sh -c \"{script}\"", go


def test_esc_on_prompt_with_no_hook_goes_idle_within_a_sweep(tmux_server, sidecar, tmp_path):
    cmd, go = prompt_then_idle_command(tmp_path)
    pane = tmux_server.new_pane(cmd, rows=BLOCKED.rows, cols=BLOCKED.cols)
    sc = sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="prompt seen")
    hook(tmux_server, pane, "claude", "PermissionRequest", {"tool_name": "Bash"})
    time.sleep(0.7)
    assert tmux_server.state(pane) == "blocked"
    go.touch()  # the user pressed Esc: the prompt goes away and no hook fires
    t0 = time.monotonic()
    wait_for(lambda: tmux_server.state(pane) == "idle", timeout=5, message="idle after Esc")
    assert time.monotonic() - t0 < 0.3 + 0.7 + 0.5  # one sweep, plus the replay's own cat
    assert tmux_server.option(pane, "@agentstate_source") == "screen"


def test_fresh_report_wins_over_screen_rules_and_stale_one_loses(tmux_server, sidecar):
    pane = tmux_server.new_pane(replay_command(IDLE.path, "claude"), rows=IDLE.rows, cols=IDLE.cols)
    sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "idle", message="idle")
    hook(tmux_server, pane, "claude", "UserPromptSubmit")  # e.g. Codex streaming: screen looks idle
    wait_for(lambda: tmux_server.state(pane) == "working", message="report wins")
    assert tmux_server.option(pane, "@agentstate_source") == "hook"
    # the agent was killed / its hook never fired again: a report older than its lifetime loses
    token = launch_record(tmux_server, pane)["AGENTSTATE_TOKEN"]
    tmux_server.cmd("set-option", "-p", "-t", pane, "@agentstate_report",
                    f"working {time.time() - 120:.0f} hook:claude:UserPromptSubmit {token}")
    # and its doorbell rung, as the hook does after each report (a report set by hand alone
    # is read at the next pane listing, a 30 s backstop)
    ring(Runtime(tmux_server.tmux.socket()).dir, pane)
    wait_for(lambda: tmux_server.state(pane) == "idle", message="stale report loses")
    assert tmux_server.option(pane, "@agentstate_source") == "screen"


def test_a_report_that_ages_past_its_lifetime_loses_with_nothing_else_happening(tmux_server, sidecar):
    """The hook that never fires again, the agent still in front, its screen unchanged: the
    report goes stale by time alone (the default lifetime, 30 s), and the pane is classified
    again then. Before, only a change to the pane (bytes, a report, a ring) did it."""
    pane = tmux_server.new_pane(replay_command(IDLE.path, "claude"), rows=IDLE.rows, cols=IDLE.cols)
    sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "idle", message="idle")
    reported = time.time()
    hook(tmux_server, pane, "claude", "UserPromptSubmit")
    wait_for(lambda: tmux_server.state(pane) == "working", message="report wins")
    # nothing rings, nothing prints from here: only time passes
    time.sleep(max(0.0, reported + 25 - time.time()))
    assert tmux_server.state(pane) == "working"
    wait_for(lambda: tmux_server.state(pane) == "idle", timeout=15, message="the report aged out")
    assert time.time() - reported >= 29.5
    assert tmux_server.option(pane, "@agentstate_source") == "screen"


def test_send_refuses_blocked_pane_and_answer_types_the_manifest_keys(tmux_server, tmp_path):
    typed = tmp_path / "typed.log"
    pane = tmux_server.new_pane(
        f"env AGENTSTATE_AGENT=claude sh -c 'stty raw -echo; cat {BLOCKED.path}; exec cat > {typed}'",
        rows=BLOCKED.rows, cols=BLOCKED.cols)
    wait_for(lambda: "Do you want to" in tmux_server.cmd("capture-pane", "-p", "-t", pane), message="prompt")
    time.sleep(0.3)
    before = typed.read_bytes()  # tmux's answers to the capture's terminal queries, nothing typed
    res = cli(tmux_server, "send", "-L", tmux_server.name, pane, "rm -rf everything")
    assert res.returncode == 3 and "blocked" in res.stderr and "Traceback" not in res.stderr
    time.sleep(0.3)
    assert typed.read_bytes() == before
    res = cli(tmux_server, "answer", "-L", tmux_server.name, pane, "maybe")
    assert res.returncode != 0 and "yes" in res.stderr
    res = cli(tmux_server, "answer", "-L", tmux_server.name, pane, "yes")
    wait_for(lambda: typed.read_bytes() == before + b"1", message="the key for yes")
    # the replay does not react to it: `answer` says the dialog is still there (tests/test_answer.py)
    assert res.returncode == 1 and "not taken" in res.stderr, res.stderr


def test_send_types_into_an_idle_agent(tmux_server, tmp_path):
    typed = tmp_path / "typed.log"
    pane = tmux_server.new_pane(
        f"env AGENTSTATE_AGENT=claude sh -c 'stty -echo; cat {IDLE.path}; exec cat > {typed}'",
        rows=IDLE.rows, cols=IDLE.cols)
    wait_for(lambda: "for shortcuts" in tmux_server.cmd("capture-pane", "-p", "-t", pane), message="idle")
    res = cli(tmux_server, "send", "-L", tmux_server.name, pane, "add a test #(touch x)")
    assert res.returncode == 0, res.stderr
    wait_for(lambda: typed.read_text().endswith("add a test #(touch x)\n"), message="typed text")
    res = cli(tmux_server, "answer", "-L", tmux_server.name, pane, "yes")
    assert res.returncode == 3 and "not blocked" in res.stderr


def test_explain_names_every_signal(tmux_server):
    pane = tmux_server.new_pane(replay_command(BLOCKED.path, "claude"), rows=BLOCKED.rows, cols=BLOCKED.cols)
    wait_for(lambda: "Do you want to" in tmux_server.cmd("capture-pane", "-p", "-t", pane), message="prompt")
    hook(tmux_server, pane, "claude", "UserPromptSubmit")
    out = cli(tmux_server, "explain", "-L", tmux_server.name, pane).stdout
    assert re.search(r"agent: claude \(manifest v\d+, bundled: ", out) and "MATCH blocked" in out
    assert "AGENTSTATE_AGENT=claude" in out and "hook report: working" in out and "state: blocked via screen" in out


def test_notify_command_gets_pane_text_as_arguments_once(tmux_server, sidecar, tmp_path):
    out = tmp_path / "notified.jsonl"
    marker = tmp_path / "pwned"
    use_notify_recorder(tmux_server, tmp_path, out)
    evil = tmp_path / "evil.raw"
    evil.write_bytes((f"\x1b[?1049h\x1b[HDo you want to proceed? $(touch {marker}) `touch {marker}`\r\n"
                      " \u276f 1. Yes\r\n Esc to cancel \u00b7 Tab to amend").encode())
    pane = tmux_server.new_pane(replay_command(evil, "claude"))
    tmux_server.new_pane("sleep 600")  # some other pane
    sidecar(interval=0.3).start()
    wait_for(lambda: out.exists() and out.read_text().strip(), message="notify command ran")
    time.sleep(1.0)
    calls = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(calls) == 1
    assert calls[0][:3] == [pane, "claude", "blocked"]
    assert calls[0][3].startswith("Do you want to proceed? $(touch")
    assert not marker.exists()


def test_a_client_looking_at_the_pane_marks_it_seen_and_others_get_told(tmux_server, sidecar, tmp_path):
    """A real client (attached from inside a pane of a second tmux server)."""
    out = tmp_path / "notified.jsonl"
    use_notify_recorder(tmux_server, tmp_path, out)
    go = tmp_path / "go"
    held = f"while [ ! -e {go} ]; do sleep 0.05; done; cat {BLOCKED.path}; exec sleep 600"
    watched = tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude sh -c '{held}'", rows=BLOCKED.rows, cols=BLOCKED.cols)
    other = tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude sh -c '{held}'", rows=BLOCKED.rows, cols=BLOCKED.cols)
    session = tmux_server.cmd("display-message", "-p", "-t", watched, "#{session_name}")
    client = OuterClient(tmux_server, session, cols=200, rows=50)
    try:
        sidecar(interval=0.3).start()
        time.sleep(1.0)
        go.touch()
        wait_for(lambda: tmux_server.state(watched) == "blocked" and tmux_server.state(other) == "blocked",
                 message="both blocked")
        wait_for(lambda: tmux_server.option(watched, "@agentstate_seen") == "1", message="seen")
        assert tmux_server.option(other, "@agentstate_seen") == "0"
        wait_for(lambda: out.exists() and out.read_text().strip(), message="notified")
        time.sleep(1.0)
        calls = [json.loads(l) for l in out.read_text().splitlines()]
        assert [c[0] for c in calls] == [other]  # the pane on screen was not announced
    finally:
        client.close()


def test_a_restarted_sidecar_does_not_announce_a_prompt_again(tmux_server, sidecar, tmp_path):
    """A sidecar that restarts (a crash healed, an update's hand-over) finds the prompt it
    announced still up: the state the earlier one left on the pane is its "before", so the
    user is not rung again for it; a prompt that comes later still is announced."""
    out = tmp_path / "notified.jsonl"
    use_notify_recorder(tmux_server, tmp_path, out)
    pane = tmux_server.new_pane(replay_command(BLOCKED.path, "claude"), rows=BLOCKED.rows,
                                cols=BLOCKED.cols)
    first = sidecar(interval=0.3).start()
    wait_for(lambda: out.exists() and out.read_text().strip(), message="announced once")
    first.kill(signal.SIGKILL)  # its options stay on the pane, as after a crash
    assert tmux_server.state(pane) == "blocked"
    second = sidecar(interval=0.3).start()
    wait_for(lambda: (second.status() or {}).get("pid") == second.proc.pid
             and any(p["pane"] == pane and p["state"] == "blocked"
                     for p in second.status().get("panes", [])), message="the new sidecar sees it")
    time.sleep(1.0)
    assert len(out.read_text().splitlines()) == 1, out.read_text()
    later = tmux_server.new_pane(replay_command(BLOCKED.path, "claude"), rows=BLOCKED.rows,
                                 cols=BLOCKED.cols)
    wait_for(lambda: any(json.loads(l)[0] == later for l in out.read_text().splitlines()),
             message="a new prompt announced")
