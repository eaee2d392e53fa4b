"""launch.py argument building and the hook files it loads (the real CLIs are in
test_real_agents.py)."""
import json
import os
import subprocess
import sys

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
