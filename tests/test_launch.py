"""launch.py argument building (pure; the real CLIs are in test_real_agents.py)."""
import json

from tmux_agentstate.hooks import launch


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
