"""Codex dialogs read from the screen alone (issue 28): real 0.171.0 captures, classified with
the OSC 7501 and title rules taken out, since a pane whose reports are lost (an older release, a
report the sidecar missed) has only its screen."""
import dataclasses

import pytest

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.screen import replay
from tmux_agentstate.panes.fresh import options

CODEX = Catalog([BUNDLED_DIR]).get("codex")
SCREEN_ONLY = dataclasses.replace(
    CODEX, rules=tuple(r for r in CODEX.rules if r.region not in ("osc_state", "title")))
FIXTURES = {fx.id: fx for fx in load_index() if fx.agent == "codex"}


def view(fid):
    fx = FIXTURES[fid]
    return replay(fx.path.read_bytes(), fx.rows, fx.cols).view()


MCP_FORMS = [f for f in FIXTURES if FIXTURES[f].kind == "mcp-approval"]


def test_there_are_mcp_form_captures_at_two_sizes():
    assert {FIXTURES[f].cols for f in MCP_FORMS} >= {80, 160}


@pytest.mark.parametrize("fid", MCP_FORMS)
def test_the_mcp_approval_form_is_blocked_by_its_screen_alone(fid):
    match = SCREEN_ONLY.evaluate(view(fid))
    assert (match.state, match.rule) == ("blocked", "form-overlay"), match


@pytest.mark.parametrize("fid", MCP_FORMS)
def test_the_mcp_approval_form_answers_pick_its_own_options(fid):
    """`yes` is "1. Allow" (not "2. Allow for this session"), `always` "3. Always allow", `no`
    Esc (its footer: esc to cancel); never the command dialog's `y`, which the form would not take."""
    v = view(fid)
    rule, answers = CODEX.dialog_answers(v)
    assert rule == "form-overlay" and list(answers["no"]) == ["Escape"]
    labels, selected = options(v.rows, answers["yes"].marker)
    yes = [x for x in labels if answers["yes"].label.search(x)]
    always = [x for x in labels if answers["always"].label.search(x)]
    assert len(yes) == 1 and yes[0].startswith("1. Allow ") and labels.index(yes[0]) == selected
    assert len(always) == 1 and always[0].startswith("3. Always allow")


@pytest.mark.parametrize("fid", [f for f in FIXTURES if FIXTURES[f].state != "blocked"])
def test_no_codex_capture_that_is_not_blocked_reads_blocked_from_its_screen(fid):
    assert SCREEN_ONLY.evaluate(view(fid)).state != "blocked"


def test_paragraphs_rejoins_a_wrapped_sentence_but_not_list_items():
    from tmux_agentstate.core.manifest import paragraphs
    rows = ["  Do you trust the contents of this", "  directory? Working with untrusted",
            "", "› 1. Yes, continue", "  2. No, quit", "  3. Maybe", "    later"]
    assert paragraphs(rows) == ["  Do you trust the contents of this directory? Working with untrusted",
                                "", "› 1. Yes, continue", "  2. No, quit", "  3. Maybe", "    later"]


NARROW_TRUST = [f for f in FIXTURES if FIXTURES[f].kind == "trust-folder" and FIXTURES[f].cols < 80]


def test_there_are_narrow_trust_captures_with_the_question_wrapped():
    wrapped = [f for f in NARROW_TRUST
               if "Do you trust the contents of this" in "\n".join(view(f).rows)
               and "Do you trust the contents of this directory" not in "\n".join(view(f).rows)]
    assert wrapped and {FIXTURES[f].cols for f in NARROW_TRUST} >= {44, 60}


@pytest.mark.parametrize("fid", NARROW_TRUST)
def test_a_trust_question_wrapped_on_a_narrow_pane_is_blocked_by_its_screen(fid):
    match = SCREEN_ONLY.evaluate(view(fid))
    assert (match.state, match.rule) == ("blocked", "trust-folder"), match
