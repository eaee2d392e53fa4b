"""Manifest loading, validation and evaluation; the catalog's override and last-good rules."""
import os
import time
from pathlib import Path

import pytest

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.core.manifest import Manifest, ManifestError, load_manifest, parse_manifest
from tmux_agentstate.core.patterns import required_literals
from tmux_agentstate.core.screen import ScreenView

GOOD = '''
name = "demo"
fallback = "idle"
[identify]
commands = ["demo"]
title = ['Demo Agent']
screen = ['demo> ']
[[rules]]
id = "dialog"
state = "blocked"
any = ['Allow this\\?', 'Enter to confirm']
not = ['\\(answered\\)']
[[rules]]
id = "spinner"
state = "working"
region = "bottom"
rows = 2
any = ['esc to interrupt']
[[rules]]
id = "codex-osc"
state = "working"
region = "osc_state"
any = ['^state=working']
[[rules]]
id = "cursor-prompt"
state = "idle"
region = "cursor_row"
all = ['^demo> ']
'''


def view(rows, cursor_row=0, title="", osc=""):
    return ScreenView(list(rows), cursor_row, title, osc)


def write(tmp_path, name, text):
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return p


def test_first_match_wins_blocked_before_working(tmp_path):
    m = load_manifest(write(tmp_path, "demo", GOOD))
    v = view(["  Allow this?", "", "working… (esc to interrupt)"])
    assert m.evaluate(v) == m.evaluate(v).__class__("blocked", "dialog", "  Allow this?")


def test_not_patterns_veto_a_rule(tmp_path):
    m = load_manifest(write(tmp_path, "demo", GOOD))
    assert m.evaluate(view(["Allow this? (answered)"])).state == "idle"


def test_bottom_region_sees_only_last_nonempty_rows(tmp_path):
    m = load_manifest(write(tmp_path, "demo", GOOD))
    assert m.evaluate(view(["esc to interrupt", "a", "", "b", ""])).rule is None
    assert m.evaluate(view(["x", "esc to interrupt", "", "b", ""])).rule == "spinner"


def test_cursor_row_and_osc_regions(tmp_path):
    m = load_manifest(write(tmp_path, "demo", GOOD))
    assert m.evaluate(view(["demo> old question", "output"], cursor_row=1)).rule is None
    assert m.evaluate(view(["output", "demo> "], cursor_row=1)).rule == "cursor-prompt"
    assert m.evaluate(view(["demo> "], osc="state=working:app=x")).rule == "codex-osc"


def test_no_match_is_fallback_never_blocked(tmp_path):
    m = load_manifest(write(tmp_path, "demo", GOOD.replace('fallback = "idle"', 'fallback = "working"')))
    assert m.evaluate(view(["nothing here"])) == m.evaluate(view([])).__class__("working")


@pytest.mark.parametrize("edit, reason", [
    (('state = "blocked"', 'state = "waiting"'), "'state' must be one of"),
    (("any = ['Allow this\\?',", "any = ['Allow (this',"), "bad regex in 'any'"),
    (('fallback = "idle"', 'fallback = "blocked"'), "'fallback' must be one of"),
    (('id = "spinner"', 'id = "dialog"'), "duplicate rule id"),
    (('rows = 2', 'rows = 0'), "needs 'rows'"),
    (('region = "bottom"', 'region = "somewhere"'), "'region' must be one of"),
    (('name = "demo"', 'name = "other"'), "must agree"),
    (('[[rules]]\nid = "dialog"', '[[rules]]\nid = "dialog"\nany_of = ["x"]'), "unknown key"),
    (('name = "demo"', 'name = "demo"\nname = "again"'), "invalid TOML"),
])
def test_invalid_manifest_is_reported_with_file_rule_reason(tmp_path, edit, reason):
    text = GOOD.replace(*edit)
    assert text != GOOD
    p = write(tmp_path, "demo", text)
    with pytest.raises(ManifestError) as info:
        load_manifest(p)
    msg = str(info.value)
    assert reason in msg and str(p) in msg and "\n" not in msg


STALE = GOOD.replace('name = "demo"', 'name = "demo"\nengine = 5') + """
[[rules]]
id = "spin-row"
state = "working"
any = ['^\\* \\w+…']
not_below = ['^\\* \\w+ for \\d+s', '^● ']
"""


def test_not_below_a_row_counts_only_with_no_finished_turn_under_it(tmp_path):
    m = load_manifest(write(tmp_path, "demo", STALE))
    # the live row: a previous turn's completion line and reply sit above it, never below
    assert m.evaluate(view(["● old reply", "* Baked for 3s", "> new prompt",
                            "* Pondering… (2s)", "demo> "])).rule == "spin-row"
    # a row left above a finished turn (its completion line, or a reply row, below it)
    assert m.evaluate(view(["* Pondering… (2s)", "● Done.", "* Baked for 7s", "demo> "])).state == "idle"
    assert m.evaluate(view(["* Pondering… (2s)", "● Done.", "demo> "])).state == "idle"
    # a stale row above and a live one below the finished turn: the live one counts
    assert m.evaluate(view(["* Pondering… (2s)", "* Baked for 7s", "* Musing… (1s)"])).rule == "spin-row"


def test_not_below_needs_engine_5(tmp_path):
    with pytest.raises(ManifestError) as info:
        load_manifest(write(tmp_path, "demo", STALE.replace("engine = 5", "engine = 3")))
    assert "'not_below' needs 'engine = 5'" in str(info.value)


MARKS = GOOD.replace('name = "demo"', 'name = "demo"\nengine = 2') + '''
[[marks]]
id = "rate-limited"
mark = "rate-limit"
region = "bottom"
rows = 3
any = ['API Error: 429']
not = ['retrying']
[[marks]]
id = "other-error"
mark = "api-error"
any = ['API Error: \\d+']
'''


def test_a_mark_goes_beside_the_state_never_instead_of_it(tmp_path):
    m = load_manifest(write(tmp_path, "demo", MARKS))
    hit = m.evaluate(view(["API Error: 429 rate_limit_error", "demo> "], cursor_row=1))
    assert (hit.state, hit.rule, hit.mark, hit.mark_line) == ("idle", "cursor-prompt", "rate-limit",
                                                              "API Error: 429 rate_limit_error")
    hit = m.evaluate(view(["  Allow this?", "API Error: 429"]))  # a prompt: still blocked
    assert (hit.state, hit.mark) == ("blocked", "rate-limit")
    assert m.evaluate(view(["API Error: 429 (retrying)"])).mark == "api-error"  # first mark that matches
    assert m.evaluate(view(["API Error: 429", "a", "b", "c"])).mark == "api-error"  # out of its region
    assert m.evaluate(view(["all fine", "demo> "], cursor_row=1)).mark is None


@pytest.mark.parametrize("edit, reason", [
    (('mark = "rate-limit"', 'mark = "Rate Limit!"'), "'mark' must be a short lowercase word"),
    (('mark = "rate-limit"', 'state = "blocked"'), "unknown key"),
    (('id = "other-error"', 'id = "dialog"'), "duplicate rule id"),
    (("any = ['API Error: 429']", "any = ['API Error: (429']"), "bad regex in 'any'"),
    (('engine = 2', 'engine = 1'), "need 'engine = 2'"),
])
def test_a_bad_mark_is_reported_with_file_rule_reason(tmp_path, edit, reason):
    text = MARKS.replace(*edit)
    assert text != MARKS
    with pytest.raises(ManifestError) as info:
        load_manifest(write(tmp_path, "demo", text))
    assert reason in str(info.value)


def test_bundled_manifests_all_load():
    files = sorted(p for p in BUNDLED_DIR.glob("*.toml") if p.name != "index.toml")
    assert {"claude", "codex"} <= {f.stem for f in files}
    for f in files:
        m = load_manifest(f)
        assert m.rules and m.fallback in ("idle", "working")
        # blocked rules come first: a working footer can be on screen under a prompt
        states = [r.state for r in m.rules]
        first_other = next((i for i, s in enumerate(states) if s != "blocked"), len(states))
        assert "blocked" not in states[first_other:], f"{f.name}: a blocked rule after {states}"


def test_user_manifest_overrides_bundled_and_broken_one_keeps_last_good(tmp_path):
    bundled, user = tmp_path / "bundled", tmp_path / "user"
    bundled.mkdir(), user.mkdir()
    write(bundled, "demo", GOOD)
    cat = Catalog([bundled, user])
    assert cat.get("demo").path.startswith(str(bundled))
    p = write(user, "demo", GOOD.replace("Allow this", "Permit this"))
    cat.reload()
    assert cat.get("demo").path == str(p)
    assert cat.get("demo").evaluate(view(["Permit this?"])).state == "blocked"
    time.sleep(0.01)
    p.write_text(GOOD.replace('state = "blocked"', 'state = "nope"') + "\n# broken")
    os.utime(p, None)
    errors = cat.reload()
    assert len(errors) == 1 and "'state' must be one of" in str(errors[0])
    assert cat.get("demo").evaluate(view(["Permit this?"])).state == "blocked"  # last good runs
    assert cat.reload() == []  # the same error is not reported again
    p.unlink()
    cat.reload()
    assert cat.get("demo").path.startswith(str(bundled))


def test_infer_agent_from_title_and_screen(tmp_path):
    write(tmp_path, "demo", GOOD)
    cat = Catalog([tmp_path])
    assert cat.infer(view(["demo> "])).name == "demo"
    assert cat.infer(view(["x"], title="Demo Agent")).name == "demo"
    assert cat.infer(view(["$ ls"])) is None


def test_for_process_hint_and_patterns(tmp_path):
    write(tmp_path, "demo", GOOD)
    cat = Catalog([tmp_path])
    assert cat.for_process("bash", ["bash"], hint="demo").name == "demo"
    assert cat.for_process("demo", ["/usr/bin/demo", "--x"]).name == "demo"
    assert cat.for_process("bash", ["bash"]) is None


def test_blocked_hint_covers_every_blocked_pattern(tmp_path):
    text = GOOD.replace("any = ['Allow this\\?', 'Enter to confirm']", "any = ['(?i)allow this\\?', 'Enter to confirm']")
    assert text != GOOD
    m = load_manifest(write(tmp_path, "demo", text))
    hint = m.blocked_hint
    assert hint.search("please ALLOW THIS?") and hint.search("x\n  Enter to confirm")
    assert not hint.search("working… (esc to interrupt)\ndemo> ")


@pytest.mark.parametrize("pattern, literals", [
    (r"^[\s│]*(● )?\d\. Allow once\s*│?\s*$", (". Allow once",)),
    (r"\bAllow once\s+Allow always\s+Reject\b", ("Allow always",)),
    (r"(?i)allow this\?", ()),                  # case-insensitive: no prefilter
    (r"(?i:Allow) this file", (" this file",)),
    (r"Do you want (to proceed|to make this edit)\?", ("Do you want ",)),
    (r"^\s*(Yes, allow|No, deny)\b", ("Yes, allow", "No, deny")),
    (r"Yes|No", ("Yes", "No")),
    (r"Yes|\d+", ()),                           # a branch with no text: nothing required
    (r"(esc to interrupt)?\s+tokens", ("tokens",)),
    (r"[✻✽] \w+ \.", ()),                       # one "." filters nothing...
    (r"^\s*┃?\s*△ \S", ("△ ",)),                # ...one "△" does
])
def test_required_literals(pattern, literals):
    import re
    assert required_literals(re.compile(pattern, re.M)) == literals


def test_prefiltered_patterns_agree_with_their_regex_on_every_fixture_screen():
    """The literal prefilter only skips work: on every fixture's screen (and each of its rows),
    every manifest pattern finds a match exactly when its plain regex does."""
    from tmux_agentstate.core.catalog import Catalog
    from tmux_agentstate.core.fixtures import load_index
    from tmux_agentstate.core.screen import replay
    catalog = Catalog()
    patterns = [p for m in catalog.by_name.values()
                for rule in m.rules for p in rule.any + rule.all + rule.not_]
    assert sum(1 for p in patterns if p.literals) > len(patterns) * 3 // 4  # most have some
    for fx in load_index()[::3]:
        view = replay(fx.path.read_bytes(), fx.rows, fx.cols).view()
        for text in (view.text, *view.rows[-6:], view.title):
            for p in patterns:
                assert (p.search(text) is None) == (p.regex.search(text) is None), (fx.id, p)


def test_each_manifest_names_exactly_the_agent_releases_its_fixtures_cover():
    """`tested` ships with the package (doctor compares the agent on PATH with it); the
    fixtures do not, so the two must agree here."""
    from tmux_agentstate.core.fixtures import load_index
    covered: dict = {}
    for f in load_index():
        covered.setdefault(f.agent, set()).add(f.agent_version)
    catalog = Catalog([BUNDLED_DIR])
    assert {name: set(catalog.get(name).tested) for name in catalog.names()} == covered


SLOW = '''
name = "slow"
[identify]
commands = ["slow"]
cmdline = ['(x|xx)+y']
[[rules]]
id = "nested-repeat"
state = "blocked"
any = ['(a|aa)+$']
[[rules]]
id = "vetoed"
state = "blocked"
any = ['Allow\\?']
not = ['(a|aa)+$']
[[rules]]
id = "busy"
state = "working"
any = ['WORKING']
'''


def test_a_rule_over_the_search_budget_is_disabled_and_the_rest_still_run(tmp_path):
    """Issue 10, item 5: `(a|aa)+$` on rows of a's is exponential (minutes in `re`); each search
    is bounded, the rule is disabled with one line naming file and rule, later rules run, and a
    `not` that gave up never lets its rule match (a false blocked)."""
    from tmux_agentstate.core.manifest import SEARCH_BUDGET, take_faults
    take_faults()
    m = load_manifest(write(tmp_path, "slow", SLOW))
    rows = ["a" * 60 + "!"] * 20 + ["Allow?", "WORKING"]
    t = time.monotonic()
    first = m.evaluate(view(rows))
    elapsed = time.monotonic() - t
    assert first.state == "working" and first.rule == "busy"
    assert elapsed < SEARCH_BUDGET * 20  # two budgets, not minutes (a bound, not a timing)
    faults = take_faults()
    assert len(faults) == 2 and all(str(tmp_path / "slow.toml") in f for f in faults)
    assert any("'nested-repeat'" in f for f in faults) and any("'vetoed'" in f for f in faults)
    assert m.evaluate(view(rows)).rule == "busy" and take_faults() == []  # said once, not retried
    assert sorted(m.faults()) == sorted(faults)
    # identity patterns are bounded too: a hostile command line cannot hang identification
    assert not m.identify.matches_process("node", ["x" * 40 + "z"])
    assert len(take_faults()) == 1
    # a fresh load (the file saved again) enables the rules again
    assert not load_manifest(write(tmp_path, "slow", SLOW)).faults()


def test_classify_names_each_disabled_rule_in_one_line(tmp_path, isolated_config):
    import subprocess
    import sys
    user = isolated_config / "tmux-agentstate" / "manifests"
    user.mkdir(parents=True)
    write(user, "slow", SLOW)
    cap = tmp_path / "cap.raw"
    cap.write_bytes(("a" * 60 + "!\r\n").encode() * 20 + b"WORKING")
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "classify", "--agent", "slow",
                          str(cap)], capture_output=True, text=True, timeout=60)
    assert "slow working [busy]" in out.stdout
    lines = out.stderr.strip().splitlines()  # one line per disabled rule, nothing else
    assert len(lines) == 2 and "Traceback" not in out.stderr
    assert "'nested-repeat': disabled" in lines[0] and "'vetoed': disabled" in lines[1]
