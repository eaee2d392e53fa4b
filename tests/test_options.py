"""Reading the user's @agentstate-* options (pure): a value that cannot be used is named, with
what the option takes and what is used instead, never dropped in silence; an option name
nobody reads is named with the closest known one. (tests/test_doctor.py: the same through a
real server, the sidecar's message and doctor.)"""
import math

import pytest

from tmux_agentstate.sidecar.config import CHECK_PERIODS, Config
from tmux_agentstate.sidecar.options import style_problem


def problems(options):
    c = Config.from_tmux(options)
    return c, {p.option: p for p in c.problems}


@pytest.mark.parametrize("value", ["banana", "nan", "inf", "-inf", ""])
def test_an_interval_that_is_no_number_is_named_and_the_default_runs(value):
    c, found = problems({"@agentstate-interval": value})
    assert c.interval == 0.7 and math.isfinite(c.interval)  # nan would stall every sweep
    assert "a number of seconds from 0.1 to 10" in found["@agentstate-interval"].line()
    assert "using 0.7" in found["@agentstate-interval"].line()


def test_out_of_range_values_say_the_bound_used():
    c, found = problems({"@agentstate-interval": "60", "@agentstate-notify-cooldown": "-5",
                         "@agentstate-manifest-check": "0.1"})
    assert c.interval == 10 and "using 10" in found["@agentstate-interval"].line()
    assert c.notify.cooldown == 0 and "using 0" in found["@agentstate-notify-cooldown"].line()
    assert c.manifest_check == 3600 and "using 1 hour" in found["@agentstate-manifest-check"].line()


def test_each_kind_of_option_is_checked_against_what_it_takes():
    c, found = problems({
        "@agentstate-intake": "foo", "@agentstate-notify-bell": "maybe",
        "@agentstate-notify-terminal": "osc42", "@agentstate-notify-command": "say 'hi",
        "@agentstate-manifest-check": "soon", "@agentstate-style-idle": "fg=red,bgg=blue",
        "@agentstate-style-done": "fg=colour300", "@agentstate-style-working": "bold]#[fg=red",
    })
    assert (c.intake, c.notify.bell, c.notify.terminal, c.notify.command, c.manifest_check) == \
        ("emulate", True, "auto", "", CHECK_PERIODS["off"])
    assert c.styles == Config().styles  # each bad style: the default pill
    assert "one of pipe, emulate, capture" in found["@agentstate-intake"].line()
    assert "on or off" in found["@agentstate-notify-bell"].line()
    assert "osc9" in found["@agentstate-notify-terminal"].line()
    assert "balanced quotes" in found["@agentstate-notify-command"].line()
    assert "'bgg'= is no style key" in found["@agentstate-style-idle"].line()
    assert "'colour300' is no colour" in found["@agentstate-style-done"].line()
    assert "[, ]" in found["@agentstate-style-working"].line()
    assert all("set -gu " + name in p.fix() for name, p in found.items())


def test_good_values_are_no_problem():
    c, found = problems({
        "@agentstate-interval": "0.5", "@agentstate-intake": "Capture",
        "@agentstate-notify": "off", "@agentstate-notify-idle": "yes",
        "@agentstate-notify-terminal": "osc777", "@agentstate-manifest-check": "12",
        "@agentstate-style-idle": "fg=#ff00aa,bg=LightSkyBlue,nobold,align=left",
        "@agentstate-style-done": "fg=colour255 bg=default dim", "@agentstate-icon-idle": "#[x]",
        "@agentstate-next-key": "", "@agentstate-popup-key": "M-a",
    })
    assert found == {}
    assert (c.interval, c.intake, c.notify.enabled, c.notify.on_idle) == (0.5, "capture", False, True)
    assert style_problem(Config().styles["blocked"]) is None


def test_a_misspelt_option_name_is_named_with_the_closest_known_one():
    _, found = problems({"@agentstate-intervall": "2", "@agentstate-popupkey": "b",
                         "@agentstate-zzzz": "1", "@agentstate_summary": "ours, published"})
    assert set(found) == {"@agentstate-intervall", "@agentstate-popupkey", "@agentstate-zzzz"}
    assert "did you mean @agentstate-interval?" in found["@agentstate-intervall"].line()
    assert "did you mean @agentstate-popup-key?" in found["@agentstate-popupkey"].line()
    assert "did you mean" not in found["@agentstate-zzzz"].line()  # nothing close: no guess
