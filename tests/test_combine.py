from tmux_agentstate.core.combine import PaneState, Report, combine
from tmux_agentstate.core.manifest import Match

BLOCKED = Match("blocked", "dialog", "Do you want to proceed?")
WORKING = Match("working", "spinner", "esc to interrupt")
IDLE = Match("idle")


def test_no_agent_means_no_state_even_with_a_prompt_on_screen():
    assert combine(False, BLOCKED, Report("working", 100, "hook"), 100) is None


def test_blocked_screen_beats_a_fresh_report():
    assert combine(True, BLOCKED, Report("working", 100, "hook"), 101) == \
        PaneState("blocked", "screen", "Do you want to proceed?", "dialog")


def test_fresh_report_beats_other_screen_rules_and_goes_stale():
    assert combine(True, IDLE, Report("working", 100, "hook"), 110) == PaneState("working", "hook", "", "hook")
    assert combine(True, IDLE, Report("working", 100, "hook"), 131) == PaneState("idle", "screen")
    assert combine(True, WORKING, None, 0).source == "screen"


def test_report_parse():
    assert Report.parse("blocked 1700000000.5 hook:claude") == Report("blocked", 1700000000.5, "hook:claude")
    for bad in ("", "stuck 1", "idle notatime", "idle"):
        assert Report.parse(bad) is None


def test_a_report_or_screen_verdict_with_a_time_that_is_no_time_is_none():
    from tmux_agentstate.core.combine import parse_screen_option
    for at in ("inf", "-inf", "nan", "1e999"):  # "blocked inf" would never go stale
        assert Report.parse(f"blocked {at} hook:x:y") is None
        assert parse_screen_option(f"blocked {at}") is None
    assert Report.parse("blocked 12.5 hook:x:y").at == 12.5


def test_report_superseded_when_the_screen_changes_after_it():
    # PermissionRequest reported blocked at 100; the user pressed Esc (no hook) and the
    # screen's verdict changed at 102: the report is older evidence
    r = Report("blocked", 100, "hook:claude:PermissionRequest")
    assert combine(True, IDLE, r, 103, screen_changed_at=99).state == "blocked"
    assert combine(True, IDLE, r, 103, screen_changed_at=102) == PaneState("idle", "screen")
    # Codex streams with an idle-looking screen: a later "working" report holds
    assert combine(True, IDLE, Report("working", 110, "hook"), 115, screen_changed_at=102).state == "working"


def test_notify_cooldown_per_pane_and_state():
    from tmux_agentstate.sidecar.notify import Notifier, NotifyConfig
    n = Notifier(NotifyConfig(cooldown=30))
    # a prompt that redraws 20 times in 10 s: blocked → working → blocked …
    told = [n.should_notify("%1", "working", "blocked", t * 0.5) for t in range(20)]
    assert told.count(True) == 1
    assert n.should_notify("%2", "working", "blocked", 5)       # another pane: its own cooldown
    assert n.should_notify("%1", "working", "blocked", 31)      # after the cooldown
    assert not n.should_notify("%1", "working", "idle", 40)     # turn end: opt-in only
    assert Notifier(NotifyConfig(on_idle=True)).should_notify("%1", "working", "idle", 40)
    # a pane someone looked at a moment ago does not call them back
    assert not n.should_notify("%3", "working", "blocked", 100, seen_at=95)
    assert n.should_notify("%3", "working", "blocked", 100, seen_at=60)


def test_config_from_user_options():
    from tmux_agentstate.sidecar.config import Config
    c = Config.from_tmux({"@agentstate-interval": "0.5", "@agentstate-intake": "capture",
                          "@agentstate-capture-interval": "2", "@agentstate-icon-blocked": "B",
                          "@agentstate-notify-cooldown": "5", "@agentstate-notify-idle": "on"})
    assert (c.interval, c.intake, c.capture_interval, c.icons["blocked"]) == (0.5, "capture", 0.5, "B")
    assert c.notify.cooldown == 5 and c.notify.on_idle
    bad = Config.from_tmux({"@agentstate-interval": "fast", "@agentstate-intake": "magic"})
    assert (bad.interval, bad.intake) == (0.7, "emulate")
    assert Config.from_tmux({}, interval=30).interval == 10.0
