"""One test per real capture: the emulated screen, classified by the agent's manifest, is the truth."""
import pytest

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.core.fixtures import load_index, load_known_misses
from tmux_agentstate.core.screen import replay

FIXTURES = load_index()
CATALOG = Catalog([BUNDLED_DIR])
KNOWN = load_known_misses()  # captures whose screen does not show their state, and why


@pytest.mark.parametrize("fx", FIXTURES, ids=[f.id for f in FIXTURES])
def test_fixture(fx):
    """The truth; or, for a known miss, exactly the verdict listed (a rule change either way
    shows), never a false `blocked`."""
    manifest = CATALOG.get(fx.agent)
    assert manifest is not None, f"no manifest for {fx.agent}"
    screen = replay(fx.path.read_bytes(), fx.rows, fx.cols)
    match = manifest.evaluate(screen.view())
    want = KNOWN[fx.id].verdict if fx.id in KNOWN else fx.state
    assert match.state == want, (
        f"{fx.kind}: got {match.state} via {match.rule!r} on {match.line!r}\n" + "\n".join(screen.rows()))
    # the mark the index expects (absent: none): an error the turn is retrying or ended in,
    # and no mark on any other screen
    assert match.mark == (fx.mark or None), (
        f"{fx.kind}: mark {match.mark!r} on {match.mark_line!r}, index says {fx.mark or None!r}\n"
        + "\n".join(screen.rows()))


def test_known_misses_are_real_captures_and_never_a_false_blocked():
    ids = {fx.id: fx for fx in FIXTURES}
    for fid, miss in KNOWN.items():
        assert fid in ids, f"known miss {fid} is no fixture"
        assert miss.verdict != ids[fid].state, f"{fid} is right now: take it off the list"
        assert miss.verdict != "blocked" and miss.why.strip(), fid


def test_index_files_exist_and_states_are_valid():
    for fx in FIXTURES:
        assert fx.path.is_file(), fx.path
        assert fx.state in ("blocked", "working", "idle"), fx.id


WITH_TMUX_SCREEN = [f for f in FIXTURES if f.path.with_suffix(".screen.txt").is_file()]


@pytest.mark.parametrize("fx", WITH_TMUX_SCREEN, ids=[f.id for f in WITH_TMUX_SCREEN])
def test_emulated_screen_equals_tmux_screen(fx):
    """Our emulator against tmux's own: the harness saved `capture-pane -p` with each capture."""
    want = [line.rstrip() for line in fx.path.with_suffix(".screen.txt").read_text().split("\n")]
    want = (want + [""] * fx.rows)[: fx.rows]
    assert replay(fx.path.read_bytes(), fx.rows, fx.cols).rows() == want


def test_a_release_in_its_own_folder_is_read_beside_the_pinned_one(tmp_path):
    entry = ('[[fixture]]\nfile = "80x24-idle-start.raw"\nstate = "idle"\nkind = "start"\n'
             'agent_version = "{v}"\nsize = "24x80"\n')
    (tmp_path / "claude" / "2.0.77").mkdir(parents=True)
    (tmp_path / "claude" / "index.toml").write_text(entry.format(v="2.1.332"))
    (tmp_path / "claude" / "2.0.77" / "index.toml").write_text(entry.format(v="2.0.77"))
    got = {f.id: (f.agent, f.agent_version, f.path) for f in load_index(tmp_path)}
    assert got == {
        "claude/80x24-idle-start": ("claude", "2.1.332", tmp_path / "claude" / "80x24-idle-start.raw"),
        "claude/2.0.77/80x24-idle-start": ("claude", "2.0.77",
                                           tmp_path / "claude" / "2.0.77" / "80x24-idle-start.raw"),
    }
