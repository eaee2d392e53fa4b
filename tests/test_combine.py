from tmux_agentstate.combine import PaneState, Report, combine
from tmux_agentstate.manifest import Match

BLOCKED = Match("blocked", "dialog", "Do you want to proceed?")
WORKING = Match("working", "spinner", "esc to interrupt")
IDLE = Match("idle")


def test_no_agent_means_no_state_even_with_a_prompt_on_screen():
    assert combine(False, BLOCKED, Report("working", 100, "hook"), 100) is None


def test_blocked_screen_beats_a_fresh_report():
    assert combine(True, BLOCKED, Report("working", 100, "hook"), 101) == \
        PaneState("blocked", "screen", "Do you want to proceed?", "dialog")


def test_fresh_report_beats_other_screen_rules_and_goes_stale():
    assert combine(True, IDLE, Report("working", 100, "hook"), 110).state == "working"
    assert combine(True, IDLE, Report("working", 100, "hook"), 131) == PaneState("idle", "screen")
    assert combine(True, WORKING, None, 0).source == "screen"


def test_report_parse():
    assert Report.parse("blocked 1700000000.5 hook:claude") == Report("blocked", 1700000000.5, "hook:claude")
    for bad in ("", "stuck 1", "idle notatime", "idle"):
        assert Report.parse(bad) is None
