"""launch.py argument building and the hook files it loads (the real CLIs are in
test_real_agents.py)."""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tmux_agentstate.hooks import launch
from tmux_agentstate.hooks.report import GONE, state_for
from tmux_agentstate.hooks.launch_files import LAUNCH_FOLDER


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


# -- Factory Droid: our hooks in a private --settings file -----------------------------------------
@pytest.fixture
def droid_env(tmp_path, monkeypatch):
    """The environment of a launch in a tmux pane whose server's socket is in tmp_path (so the
    runtime folder is tmp_path/.agentstate); removing the file at exit is noted, not forked."""
    removers = []
    monkeypatch.setattr(launch, "remove_when_gone", lambda pid, path: removers.append((pid, path)))
    (tmp_path / "tmux").mkdir(mode=0o700)
    return {"TMUX": f"{tmp_path}/tmux/sock,1,0", "TMUX_PANE": "%1"}, removers


def _droid_settings(args) -> tuple[dict, str]:
    assert args[0] == "--settings"
    return json.loads(open(args[1]).read()), args[1]


def test_droid_settings_file_carries_our_hooks_privately_in_the_runtime_folder(droid_env, tmp_path):
    environ, removers = droid_env
    args = launch.droid_args(["--auto", "low", "fix it"], environ=environ)
    settings, path = _droid_settings(args)
    assert args[2:] == ["--auto", "low", "fix it"]
    folder = tmp_path / "tmux" / ".agentstate" / LAUNCH_FOLDER
    assert os.path.dirname(path) == str(folder) and os.path.basename(path).startswith(f"droid-{os.getpid()}-")
    assert (os.stat(path).st_mode & 0o777, os.stat(folder).st_mode & 0o777) == (0o600, 0o700)
    hooks = settings["hooks"]
    assert set(hooks) == set(launch.DROID_EVENTS) and set(settings) == {"hooks"}
    assert hooks["PreToolUse"][0]["matcher"] == "*" and "matcher" not in hooks["Stop"][0]
    (hook,) = hooks["Notification"][0]["hooks"]
    assert "tmux_agentstate.hook droid Notification" in hook["command"] and hook["timeout"] == 5
    assert removers == [(os.getpid(), Path(path))]
    # every hooked event records a state
    assert all(state_for("droid", e, {"notification_type": "permission_prompt"}) for e in launch.DROID_EVENTS)


@pytest.mark.parametrize("form", ["separate", "equals"])
def test_droid_users_own_settings_file_is_merged_and_left_as_it_is(droid_env, tmp_path, form):
    """Their keys stay, their hook for an event we hook too runs first, and their file (in a
    folder with a space in its name) is not written to."""
    environ, _ = droid_env
    mine = tmp_path / "my settings" / "droid settings.json"
    mine.parent.mkdir()
    theirs = {"model": "custom:mine", "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreCompact": [{"hooks": [{"type": "command", "command": "echo compact"}]}]}}
    mine.write_text(json.dumps(theirs))
    before = mine.read_bytes()
    given = ["--settings", str(mine)] if form == "separate" else [f"--settings={mine}"]
    args = launch.droid_args(["--auto", "low", *given, "--", "--settings", "literal"], environ=environ)
    settings, path = _droid_settings(args)
    assert args[2:] == ["--auto", "low", "--", "--settings", "literal"]  # after `--`: the prompt's
    assert path != str(mine) and mine.read_bytes() == before
    assert settings["model"] == "custom:mine"
    assert settings["hooks"]["PreCompact"] == theirs["hooks"]["PreCompact"]
    stop = settings["hooks"]["Stop"]
    assert stop[0] == theirs["hooks"]["Stop"][0] and "tmux_agentstate.hook droid Stop" in stop[1]["hooks"][0]["command"]


@pytest.mark.parametrize("content", [None, "dir", b"\xff\xfe not utf-8", "{not json", "[1, 2]",
                                     '{"hooks": ["Stop"]}', '{"hooks": {"Stop": "echo"}}'])
def test_droid_settings_we_cannot_read_start_droid_as_it_is_with_one_line(droid_env, tmp_path, capsys, content):
    """Missing, a folder, not UTF-8, not JSON, not an object, hooks not a table: Droid gets the
    user's arguments untouched (and says what it thinks of the file), without our hooks."""
    environ, removers = droid_env
    mine = tmp_path / "mine.json"
    if content == "dir":
        mine.mkdir()
    elif content is not None:
        mine.write_bytes(content if isinstance(content, bytes) else content.encode())
    given = ["--model", "m", "--settings", str(mine)]
    assert launch.droid_args(given, environ=environ) == given
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "droid starts with it as it is, without its state hooks" in err
    assert removers == [] and not (tmp_path / "tmux" / ".agentstate" / LAUNCH_FOLDER).exists()


@pytest.mark.parametrize("fault", ["symlink", "open", "file"])
def test_droid_without_a_private_folder_starts_without_hooks_with_one_line(droid_env, tmp_path, capsys, fault):
    environ, removers = droid_env
    base = tmp_path / "tmux" / ".agentstate"
    base.mkdir(mode=0o700)
    target = base / LAUNCH_FOLDER
    if fault == "symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        target.symlink_to(tmp_path / "elsewhere")
    elif fault == "open":
        target.mkdir()
        target.chmod(0o777)
    else:
        target.write_text("")
    assert launch.droid_args(["--model", "m"], environ=environ) == ["--model", "m"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "droid starts without its state hooks" in err and removers == []
    if fault == "symlink":
        assert not list((tmp_path / "elsewhere").iterdir())  # nothing written through it


def test_droid_launch_removes_the_files_of_launches_that_ended(droid_env, tmp_path):
    environ, _ = droid_env
    first = launch.droid_args([], environ=environ)[1]
    folder = os.path.dirname(first)
    dead = subprocess.Popen(["true"])
    dead.wait()
    for name in (f"droid-{dead.pid}-00000000.json", "droid-1-00000000.json", "notes.txt"):
        with open(os.path.join(folder, name), "w") as f:
            f.write("{}")
    second = launch.droid_args([], environ=environ)[1]
    # pid 1 lives, this process (the first launch) lives, what is not ours is not touched
    assert sorted(os.listdir(folder)) == sorted(["droid-1-00000000.json", "notes.txt",
                                                 os.path.basename(first), os.path.basename(second)])


def _fake_droid(tmp_path, script_body: str) -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "droid"
    fake.write_text("#!/bin/sh\n" + script_body)
    fake.chmod(0o755)
    base = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    (tmp_path / "xdg").mkdir(mode=0o700, exist_ok=True)
    return {**base, "PATH": f"{bin_dir}:{base.get('PATH', '')}", "XDG_RUNTIME_DIR": str(tmp_path / "xdg")}


def test_launch_droid_settings_file_is_there_while_droid_runs_and_gone_after(tmp_path):
    """The real launcher and its remover (outside tmux: $XDG_RUNTIME_DIR's folder): the fake
    droid reads the file (as Droid does at each new session), runs a while, exits 3."""
    seen = tmp_path / "seen.json"
    env = _fake_droid(tmp_path, f'echo "$1 $2" > {tmp_path}/args; sleep 1; cat "$2" > {seen}; exit 3\n')
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "launch", "droid", "--auto", "low"],
                         env=env, capture_output=True, text=True, timeout=30)
    assert (out.returncode, out.stderr) == (3, "")  # droid's own exit code
    flag, path = (tmp_path / "args").read_text().split()
    assert flag == "--settings" and path.startswith(str(tmp_path / "xdg" / "tmux-agentstate" / "launch"))
    assert set(json.loads(seen.read_text())["hooks"]) == set(launch.DROID_EVENTS)
    wait_for_gone = time.time() + 10
    while os.path.exists(path) and time.time() < wait_for_gone:
        time.sleep(0.05)
    assert not os.path.exists(path), "the launch's settings file outlived droid"


def test_droid_hook_prints_suppress_output_and_records_with_proof(tmux_server):
    """The hook command from the settings file as Droid runs it (sh -c, payload on stdin): it
    prints {"suppressOutput":true} (Droid would otherwise write the run into its transcript)."""
    from test_signals import launch_record
    pane = tmux_server.new_pane("sleep 600")
    hooks = launch.hooks_table("droid", launch.DROID_EVENTS)
    env = dict(os.environ, TMUX=f"{tmux_server.tmux.socket()},1,0", TMUX_PANE=pane,
               **launch_record(tmux_server, pane))

    def run(event, payload):
        res = subprocess.run(["sh", "-c", hooks[event][0]["hooks"][0]["command"]], input=json.dumps(payload),
                             capture_output=True, text=True, env=env)
        assert (res.returncode, res.stdout, res.stderr) == (0, '{"suppressOutput":true}\n', "")
        return tmux_server.option(pane, "@agentstate_report").split()

    assert run("Notification", {"notification_type": "permission_prompt", "hook_event_name": "Notification"})[::2] == [
        "blocked", "hook:droid:Notification"]
    assert run("PostToolUse", {"tool_name": "Execute"})[0] == "working"
    assert run("Stop", {})[0] == "idle"
    assert run("SessionEnd", {"reason": "other"}) == []


def test_droid_events_map_to_states():
    assert state_for("droid", "UserPromptSubmit", {"prompt": "hi"}) == "working"
    assert state_for("droid", "PreToolUse", {"tool_name": "Execute"}) == "working"
    assert state_for("droid", "PreToolUse", {"tool_name": "AskUser"}) == "blocked"
    assert state_for("droid", "Notification", {"notification_type": "permission_prompt"}) == "blocked"
    assert state_for("droid", "Notification", {"notification_type": "elicitation_dialog"}) == "blocked"
    assert state_for("droid", "Notification", {"notification_type": "idle_prompt"}) is None
    assert state_for("droid", "PostToolUse", {"tool_name": "Execute"}) == "working"
    assert state_for("droid", "Stop", {}) == "idle"
    assert state_for("droid", "SessionEnd", {}) == GONE
    assert state_for("droid", "SessionStart", {}) is None and state_for("droid", "PreCompact", {}) is None


def test_only_droid_hooks_print_suppress_output(capsys, monkeypatch):
    from tmux_agentstate.hooks import report
    monkeypatch.delenv("TMUX", raising=False)
    for agent, printed in (("droid", '{"suppressOutput":true}'), ("claude", "{}"), ("", "{}")):
        assert report.main([agent, "Stop", "{}"]) == 0
        assert capsys.readouterr().out == printed + "\n"
