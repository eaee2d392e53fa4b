"""launch.py argument building and the hook files it loads (the real CLIs are in
test_real_agents.py)."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from tmux_agentstate.hooks import launch
from tmux_agentstate.hooks.report import GONE, state_for


def test_claude_settings_carry_every_event_including_post_tool_use_failure():
    args = launch.claude_args(["--permission-mode", "manual"])
    assert args[0] == "--settings" and args[2:] == ["--permission-mode", "manual"]
    hooks = json.loads(args[1])["hooks"]
    assert set(hooks) == set(launch.CLAUDE_EVENTS)
    assert hooks["PostToolUseFailure"][0]["matcher"] == "*"
    assert "tmux_agentstate.hook claude PostToolUseFailure" in hooks["PostToolUseFailure"][0]["hooks"][0]["command"]


def test_codex_hook_trust_bypass_only_when_asked():
    plain = launch.codex_args(["--model", "x"], environ={})
    assert launch.CODEX_BYPASS_FLAG not in plain and plain[-2:] == ["--model", "x"]
    assert sum(1 for a in plain if a == "-c") == len(launch.CODEX_EVENTS)
    asked = launch.codex_args([], environ={launch.CODEX_BYPASS_ENV: "1"})
    assert asked.count(launch.CODEX_BYPASS_FLAG) == 1
    for off in ("", "0", "no"):
        assert launch.CODEX_BYPASS_FLAG not in launch.codex_args([], environ={launch.CODEX_BYPASS_ENV: off})
    # the user's own flag is not doubled
    mine = launch.codex_args([launch.CODEX_BYPASS_FLAG], environ={launch.CODEX_BYPASS_ENV: "1"})
    assert mine.count(launch.CODEX_BYPASS_FLAG) == 1


# -- Copilot CLI: the plugin folder `launch copilot` loads with --plugin-dir ---------------------
def _copilot_plugin() -> tuple[dict, dict]:
    folder = launch.COPILOT_PLUGIN
    plugin = json.loads((folder / "plugin.json").read_text())
    return plugin, json.loads((folder / plugin["hooks"]).read_text())


def test_copilot_launch_adds_our_plugin_folder_before_the_users_args():
    args = launch.copilot_args(["--plugin-dir", "/home/me/mine", "--model", "x"])
    assert args[:2] == ["--plugin-dir", str(launch.COPILOT_PLUGIN)]
    assert args[2:] == ["--plugin-dir", "/home/me/mine", "--model", "x"]  # theirs still load
    plugin, hooks = _copilot_plugin()
    assert plugin["name"] == "tmux-agentstate" and hooks["version"] == 1


def test_copilot_without_its_plugin_folder_starts_as_it_is_with_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(launch, "COPILOT_PLUGIN", tmp_path / "gone")
    assert launch.copilot_args(["--model", "x"]) == ["--model", "x"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "copilot starts without its state plugin" in err


def test_copilot_plugin_hooks_every_event_the_mapper_reads_and_only_those():
    _, hooks = _copilot_plugin()
    mapped = {e for e in hooks["hooks"]
              if any(state_for("copilot", e, p) for p in COPILOT_PAYLOADS.get(e, [{}]))}
    assert mapped == set(hooks["hooks"]), "a hooked event that never records a state"
    for event, entries in hooks["hooks"].items():
        (entry,) = entries
        assert entry["type"] == "command" and entry["timeoutSec"] <= 10
        assert f"-m tmux_agentstate.hook copilot {event} " in entry["bash"]
        assert entry["bash"].endswith("|| true")  # a failed report never fails a tool call
    # fires before Copilot's own allow rules, for tools that then run without asking
    assert "permissionRequest" not in hooks["hooks"]


COPILOT_PAYLOADS = {  # the payload fields seen from Copilot CLI 1.0.102's hooks
    "preToolUse": [{"toolName": "bash"}, {"toolName": "ask_user"}],
    "notification": [{"notification_type": "permission_prompt", "title": "Permission needed"},
                     {"notification_type": "elicitation_dialog", "title": "Information requested"},
                     {"notification_type": "shell_completed"}],
}


def test_copilot_events_map_to_states():
    assert state_for("copilot", "userPromptSubmitted", {"prompt": "hi"}) == "working"
    assert state_for("copilot", "preToolUse", {"toolName": "bash"}) == "working"
    assert state_for("copilot", "preToolUse", {"toolName": "ask_user"}) == "blocked"
    assert state_for("copilot", "notification", {"notification_type": "permission_prompt"}) == "blocked"
    assert state_for("copilot", "notification", {"notification_type": "elicitation_dialog"}) == "blocked"
    assert state_for("copilot", "notification", {"notification_type": "agent_idle"}) is None
    assert state_for("copilot", "postToolUseFailure", {}) == "working"
    assert state_for("copilot", "agentStop", {"stopReason": "end_turn"}) == "idle"
    assert state_for("copilot", "sessionEnd", {"reason": "user_exit"}) == GONE
    assert state_for("copilot", "permissionRequest", {"toolName": "bash"}) is None
    assert state_for("copilot", "preToolUse", "not a dict") == "working"


def test_copilot_hook_command_records_on_its_pane_through_bash(tmux_server):
    """The hooks.json text as Copilot runs it (bash -c, payload on stdin, our environment with
    AGENTSTATE_HOOK_PYTHON from launch); without that variable it fails quietly."""
    pane = tmux_server.new_pane("sleep 600")
    _, hooks = _copilot_plugin()
    env = dict(os.environ, TMUX=f"{tmux_server.tmux.socket()},1,0", TMUX_PANE=pane,
               **{launch.HOOK_PYTHON_ENV: sys.executable})

    def run(event, payload, **extra):
        cmd = hooks["hooks"][event][0]["bash"]
        return subprocess.run(["bash", "-c", cmd], input=json.dumps(payload), capture_output=True,
                              text=True, env={**env, **extra}, cwd="/")

    res = run("notification", {"notification_type": "permission_prompt", "hook_event_name": "Notification"})
    assert (res.returncode, res.stdout.strip(), res.stderr) == (0, "{}", "")
    assert tmux_server.option(pane, "@agentstate_report").split()[::2] == ["blocked", "hook:copilot:notification"]
    run("agentStop", {"stopReason": "end_turn"})
    assert tmux_server.option(pane, "@agentstate_report").startswith("idle ")
    lost = run("preToolUse", {"toolName": "ask_user"}, **{launch.HOOK_PYTHON_ENV: "/nonexistent/python"})
    assert (lost.returncode, lost.stderr) == (0, "")
    assert tmux_server.option(pane, "@agentstate_report").startswith("idle ")
    run("sessionEnd", {"reason": "user_exit"})
    assert tmux_server.option(pane, "@agentstate_report") == ""


# -- opencode and Kilo: the JS plugin `launch` names in *_CONFIG_CONTENT ---------------------------
def test_opencode_and_kilo_get_the_plugin_through_their_config_content_variable():
    for agent, name in (("opencode", "OPENCODE_CONFIG_CONTENT"), ("kilo", "KILO_CONFIG_CONTENT")):
        env, warning = launch.plugin_config_env(agent, environ={})
        assert warning is None and launch.OPENCODE_PLUGIN.is_file()
        assert json.loads(env[name]) == {"plugin": [str(launch.OPENCODE_PLUGIN)]}


def test_a_users_own_config_content_is_merged_into_not_replaced():
    name = "KILO_CONFIG_CONTENT"
    theirs = {"model": "mine/m", "plugin": ["file:///home/me/p.js"], "permission": {"bash": "ask"}}
    env, warning = launch.plugin_config_env("kilo", environ={name: json.dumps(theirs)})
    merged = json.loads(env[name])
    assert warning is None
    assert merged == {**theirs, "plugin": ["file:///home/me/p.js", str(launch.OPENCODE_PLUGIN)]}
    again, _ = launch.plugin_config_env("kilo", environ={name: env[name]})  # a nested launch
    assert json.loads(again[name])["plugin"].count(str(launch.OPENCODE_PLUGIN)) == 1


def test_a_config_content_we_cannot_read_is_left_as_it_is_with_one_line():
    for bad in ("{not json", "[1, 2]", '{"plugin": "one.js"}', '"text"'):
        env, warning = launch.plugin_config_env("opencode", environ={"OPENCODE_CONFIG_CONTENT": bad})
        assert env == {}, bad  # launch leaves the user's value in place: their config still loads
        assert "OPENCODE_CONFIG_CONTENT" in warning and "\n" not in warning


def test_without_the_plugin_file_opencode_starts_as_it_is(monkeypatch, tmp_path):
    monkeypatch.setattr(launch, "OPENCODE_PLUGIN", tmp_path / "agentstate.js")
    env, warning = launch.plugin_config_env("kilo", environ={"KILO_CONFIG_CONTENT": '{"plugin": []}'})
    assert env == {} and "kilo starts without its state plugin" in warning


def test_opencode_events_map_to_states():
    for agent in ("opencode", "kilo"):
        def s(event, **payload):
            return state_for(agent, event, {"type": event, **payload})
        assert s("chat.message", sessionID="ses_1") == "working"
        assert s("session.status", status={"type": "busy"}) == "working"
        assert s("session.status", status={"type": "retry", "attempt": 2}) == "working"
        assert s("session.status", status={"type": "idle"}) == "idle"
        assert s("session.status", status="busy") is None  # not the shape we know: nothing
        assert s("permission.asked", permission="bash", metadata={"command": "ls"}) == "blocked"
        assert s("question.asked", questions=[]) == "blocked"
        assert s("permission.replied", reply="once") == "working"
        assert s("question.rejected") == "working"
        assert s("session.idle") == "idle"
        assert s("session.error", error={"name": "MessageAbortedError"}) is None
        assert s("dispose") == GONE
        assert s("message.part.delta") is None


# The plugin under node, as the CLIs load it: an ES module whose exported function returns the
# hooks; AGENTSTATE_HOOK_PYTHON points at a recorder that logs each report's argv and stdin.
PLUGIN_DRIVER = r"""
const mod = await import(process.argv[2])
const hooks = await mod.default({}, undefined)
const ev = (type, properties) => hooks.event({ event: { type, properties } })
await hooks.event(null); await hooks.event({}); await hooks.event({ event: { type: 7 } })
await hooks["chat.message"]({ sessionID: "ses_main" }, {})
await ev("session.status", { sessionID: "ses_main", status: { type: "busy" } })
await ev("session.status", { sessionID: "ses_main", status: { type: "busy" } })
await ev("message.part.delta", { sessionID: "ses_main", delta: "tok" })
await ev("session.created", { info: { id: "ses_child", parentID: "ses_main" } })
await ev("session.status", { sessionID: "ses_child", status: { type: "busy" } })
await ev("permission.asked", { sessionID: "ses_child", permission: "edit" })
await ev("permission.replied", { sessionID: "ses_child", reply: "once" })
await ev("session.idle", { sessionID: "ses_child" })
await ev("permission.asked", { sessionID: "ses_main", permission: "bash", metadata: { command: "ls" } })
await ev("permission.replied", { sessionID: "ses_main", reply: "once" })
await ev("session.status", { sessionID: "ses_main", status: { type: "idle" } })
await ev("session.idle", { sessionID: "ses_main" })
await new Promise((r) => setTimeout(r, 3000))
await hooks.dispose()
await ev("session.error", { sessionID: "ses_main" })  // after dispose: never sent
"""
RECORDER = """#!/bin/sh
printf '%s %s\\n' "$*" "$(cat)" >> "$RECORD"
"""


def _node():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (scripts/install-agents needs it too)")
    return node


def test_the_opencode_plugin_under_node_reports_in_order_and_a_sub_agents_dialogs_only(tmp_path):
    node = _node()
    recorder, record = tmp_path / "python", tmp_path / "record.txt"
    recorder.write_text(RECORDER)
    recorder.chmod(0o755)
    (tmp_path / "driver.mjs").write_text(PLUGIN_DRIVER)
    env = dict(os.environ, AGENTSTATE_HOOK_PYTHON=str(recorder), AGENTSTATE_AGENT="kilo",
               RECORD=str(record))
    res = subprocess.run([node, str(tmp_path / "driver.mjs"), launch.OPENCODE_PLUGIN.as_uri()],
                         capture_output=True, text=True, env=env, timeout=60)
    assert (res.returncode, res.stderr) == (0, "")
    deadline = time.time() + 10
    while time.time() < deadline and "dispose" not in record.read_text():
        time.sleep(0.1)
    rows = [line.split(" ", 4) for line in record.read_text().splitlines()]
    assert [(r[0], r[1], r[2]) for r in rows] == [("-m", "tmux_agentstate.hook", "kilo")] * len(rows)
    # a sub-agent's dialog is on the pane's screen: sent; its busy and idle are not the pane's
    assert [r[3] for r in rows] == ["chat.message", "session.status", "permission.asked",
                                    "permission.replied", "permission.asked",
                                    "permission.replied", "session.status", "session.idle",
                                    "dispose"]
    payloads = [json.loads(r[4]) for r in rows]
    assert [p.get("sessionID") for p in payloads] == ["ses_main"] * 2 + ["ses_child"] * 2 + [
        "ses_main"] * 4 + [None]
    assert payloads[4]["metadata"] == {"command": "ls"} and payloads[6]["status"] == {"type": "idle"}


def test_the_opencode_plugin_does_nothing_without_the_launch_variable(tmp_path):
    node = _node()
    record = tmp_path / "record.txt"
    (tmp_path / "driver.mjs").write_text(PLUGIN_DRIVER)
    env = {k: v for k, v in os.environ.items() if k != launch.HOOK_PYTHON_ENV}
    res = subprocess.run([node, str(tmp_path / "driver.mjs"), launch.OPENCODE_PLUGIN.as_uri()],
                         capture_output=True, text=True, env={**env, "RECORD": str(record)},
                         timeout=60)
    assert (res.returncode, res.stderr, record.exists()) == (0, "", False)


# -- proof of origin (core/origin.py): the token launch hands the agent reaches the hook ---------
PROOF_DRIVER = r"""
const mod = await import(process.argv[2])
const hooks = await mod.default({}, undefined)
if (process.argv[3] === "dispose") {
  await hooks.dispose()  // the host quits at once: the report runs after it is gone
} else {
  await hooks.event({ event: { type: "permission.asked", properties: { sessionID: "s", permission: "bash" } } })
  await new Promise((r) => setTimeout(r, 3000))
}
"""


def test_the_opencode_plugin_passes_the_launch_token_and_a_nested_one_reports_nothing(tmux_server, tmp_path):
    """Under node onto a real pane: the launched agent's report carries the pane's token (this
    test process stands in for the npm wrapper launch started: node is its child), also when
    the host has quit before its last report runs; an opencode started inside a tool call
    inherits the environment (plugin, token) but is not the launched process: nothing."""
    node = _node()
    from test_signals import launch_record
    pane = tmux_server.new_pane("sleep 600")
    proof = launch_record(tmux_server, pane)
    (tmp_path / "driver.mjs").write_text(PROOF_DRIVER)
    env = dict(os.environ, TMUX=f"{tmux_server.tmux.socket()},1,0", TMUX_PANE=pane,
               AGENTSTATE_AGENT="opencode", **{launch.HOOK_PYTHON_ENV: sys.executable}, **proof)

    def run(*args, **extra):
        res = subprocess.run([node, str(tmp_path / "driver.mjs"), launch.OPENCODE_PLUGIN.as_uri(), *args],
                             capture_output=True, text=True, env={**env, **extra}, timeout=60)
        assert (res.returncode, res.stderr) == (0, "")

    run(AGENTSTATE_LAUNCH_PID="1")  # not launched as this process: a nested opencode
    assert tmux_server.option(pane, "@agentstate_report") == ""
    run()
    state, _, source, token = tmux_server.option(pane, "@agentstate_report").split()
    assert (state, source, token) == ("blocked", "hook:opencode:permission.asked", proof["AGENTSTATE_TOKEN"])
    run("dispose")
    deadline = time.time() + 10
    while time.time() < deadline and tmux_server.option(pane, "@agentstate_report"):
        time.sleep(0.1)
    assert tmux_server.option(pane, "@agentstate_report") == ""


def test_copilot_hook_command_carries_the_launch_token_through_bash(tmux_server):
    from test_signals import launch_record
    pane = tmux_server.new_pane("sleep 600")
    proof = launch_record(tmux_server, pane)
    _, hooks = _copilot_plugin()
    env = dict(os.environ, TMUX=f"{tmux_server.tmux.socket()},1,0", TMUX_PANE=pane,
               **{launch.HOOK_PYTHON_ENV: sys.executable}, **proof)

    def run(event, payload, **extra):
        return subprocess.run(["bash", "-c", hooks["hooks"][event][0]["bash"]], input=json.dumps(payload),
                              capture_output=True, text=True, env={**env, **extra}, cwd="/")

    run("notification", {"notification_type": "permission_prompt"})
    assert tmux_server.option(pane, "@agentstate_report").split()[2:] == [
        "hook:copilot:notification", proof["AGENTSTATE_TOKEN"]]
    # the same environment in a process the launched agent is not above: nothing lands
    run("agentStop", {"stopReason": "end_turn"}, AGENTSTATE_LAUNCH_PID="1")
    assert tmux_server.option(pane, "@agentstate_report").startswith("blocked ")
    run("agentStop", {"stopReason": "end_turn"})
    assert tmux_server.option(pane, "@agentstate_report").startswith("idle ")


def test_launch_outside_tmux_hands_on_no_inherited_token():
    env = {"AGENTSTATE_TOKEN": "ab" * 16, "AGENTSTATE_LAUNCH_PID": "1", "AGENTSTATE_HOST_PID": "2"}
    assert launch.origin_env(env) == {k: None for k in env}


# -- pi: its own OSC 7501 reports turned on --------------------------------------------------------
def _launch_fake_pi(tmp_path, **env):
    """`tmux-agentstate launch pi` (outside tmux) with a `pi` on PATH that writes down the
    PI_PROGRAM_STATUS it was given ('<unset>' when none)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    seen = tmp_path / "seen"
    fake = bin_dir / "pi"
    fake.write_text(f'#!/bin/sh\necho "${{PI_PROGRAM_STATUS-<unset>}} $*" > {seen}\n')
    fake.chmod(0o755)
    base = {k: v for k, v in os.environ.items()
            if k not in ("TMUX", "TMUX_PANE", launch.PI_STATUS_ENV)}
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "launch", "pi", "--model", "m"],
                         env={**base, "PATH": f"{bin_dir}:{base.get('PATH', '')}", **env},
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return seen.read_text().strip()


def test_launch_pi_turns_its_program_status_reports_on(tmp_path):
    assert _launch_fake_pi(tmp_path) == "1 --model m"


@pytest.mark.parametrize("theirs", ["0", "1", ""])
def test_launch_pi_keeps_a_program_status_the_user_set(tmp_path, theirs):
    assert _launch_fake_pi(tmp_path, PI_PROGRAM_STATUS=theirs) == f"{theirs} --model m".strip()
