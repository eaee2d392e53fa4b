"""Claude Code signals a screen can lack (issue 28 item 1): the terminal title's spinner, the
transcript view (ctrl+o), reduce motion. The real captures are in tests/test_fixtures.py; here,
which rule reads them, and the near misses."""
import pytest

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.screen import ScreenView, replay

CLAUDE = Catalog([BUNDLED_DIR]).get("claude")
FIXTURES = {f.id: f for f in load_index() if f.agent == "claude"}


def rule(rule_id):
    return next(r for r in CLAUDE.rules if r.id == rule_id)


def view_of(fid):
    fx = FIXTURES[fid]
    return replay(fx.path.read_bytes(), fx.rows, fx.cols).view()


def view(rows, title=""):
    return ScreenView(list(rows), len(rows) - 1, title, "")


IDLE_ROWS = ["❯ fix the loader", "● Done.", "✻ Brewed for 3s · done", "─" * 40, "❯ ", "─" * 40,
             "  ⏸ manual mode on · ? for shortcuts"]
DIALOG_ROWS = ["● Bash(mkdir -p build)", "─" * 40, " Do you want to proceed?", " ❯ 1. Yes",
               "   2. No", "", " Esc to cancel · Tab to amend"]


# -- 1. the terminal title's spinner -------------------------------------------------------------
@pytest.mark.parametrize("title", ["⠂ Claude Code", "⠐ Claude Code", "◐ Claude Code",
                                   "◓ Fix the loader bug"])
def test_a_spinning_title_reads_working_where_the_screen_shows_no_turn(title):
    assert CLAUDE.evaluate(view(IDLE_ROWS, title)).state == "working"


@pytest.mark.parametrize("title", ["✳ Claude Code", "Claude Code", "", "⠂", "◐Claude"])
def test_an_idle_or_other_title_is_no_working_signal(title):
    assert CLAUDE.evaluate(view(IDLE_ROWS, title)).state == "idle"


def test_a_dialog_wins_over_a_spinning_title():
    assert CLAUDE.evaluate(view(DIALOG_ROWS, "⠂ Claude Code")).state == "blocked"


@pytest.mark.parametrize("fid", [
    "claude/2.1.220/classic-80x24-u1-working-transcript-view",
    "claude/2.1.220/fullscreen-120x40-u2-working-transcript-view",
])
def test_the_title_is_the_only_working_signal_of_2_1_220s_transcript_view(fid):
    v = view_of(fid)
    got = CLAUDE.evaluate(v)
    assert (got.state, got.rule) == ("working", "title-spinner"), got
    assert rule("title-spinner").match(view(v.rows, "✳ Claude Code")) is None


# -- 2. the transcript view ----------------------------------------------------------------------
@pytest.mark.parametrize("fid", [f for f in FIXTURES if "-blocked-transcript-view-dialog" in f])
def test_a_dialog_hidden_by_the_transcript_view_is_blocked_with_no_set_answer(fid):
    v = view_of(fid)
    got = CLAUDE.evaluate(v)
    assert (got.state, got.rule) == ("blocked", "transcript-dialog-waiting"), got
    # keys typed now would go to the transcript view, not to the hidden dialog
    assert CLAUDE.dialog_answers(v) == ("transcript-dialog-waiting", {})


def test_the_transcript_view_with_nothing_running_is_idle():
    rows = ["● Done.", "─" * 40, "  Showing detailed transcript · ctrl+o to toggle · ? for shortcuts"]
    assert CLAUDE.evaluate(view(rows, "✳ Claude Code")).state == "idle"


# -- 3. reduce motion -----------------------------------------------------------------------------
@pytest.mark.parametrize("fid", [f for f in FIXTURES if "-working-reduced-motion" in f])
def test_the_reduced_motion_spinner_row_reads_working_by_itself(fid):
    assert rule("spinner-row").match(view_of(fid)).startswith("● ")


@pytest.mark.parametrize("row", ["● Waddling…", "● Coalescing… (0s · ↓ 3 tokens)",
                                 "● Dilly-dallying… (12s · thinking)"])
def test_reduced_motion_spinner_rows(row):
    rows = ["❯ fix the loader", row, "─" * 40, "❯ ", "─" * 40]
    assert rule("spinner-row").match(view(rows)) == row


@pytest.mark.parametrize("fid", [f for f in FIXTURES if "-idle-reply-ellipsis" in f])
def test_a_reply_ending_in_an_ellipsis_is_no_spinner_row(fid):
    v = view_of(fid)
    assert any(r.startswith("● ") and r.endswith("…") for r in v.rows)
    assert rule("spinner-row").match(v) is None
    assert CLAUDE.evaluate(v).state == "idle"


@pytest.mark.parametrize("row", ["● Working on it…", "● Let me look at the loader…",
                                 "● Next (see above)…"])
def test_a_reply_row_ending_in_an_ellipsis_alone_is_no_spinner_row(row):
    # even as the last row of the transcript (no completion line below it)
    rows = ["❯ fix the loader", row, "─" * 40, "❯ ", "─" * 40]
    assert rule("spinner-row").match(view(rows)) is None
