"""Issue 10, item 6: a bounded slice of scripts/fuzz_screen.py (the full run is in its note):
mutated real fixtures through the screen and the classifier raise nothing and never hang."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mutated_fixtures_raise_nothing_and_never_hang():
    spec = importlib.util.spec_from_file_location("fuzz_screen", ROOT / "scripts" / "fuzz_screen.py")
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    # a hang is an input still running at 10x the bound (SIGALRM): a fault, not a timing
    result = fuzz.run(inputs=400, seed=20261203, bound=2.0, quiet=True)
    assert result["exceptions"] == [], result["exceptions"][:2]
    assert result["hangs"] == 0, result["slowest"]


def test_string_sequences_left_open_cost_one_pass():
    """An unterminated DCS / OSC / APC, or a thousand of them, is read once, not once per
    sequence after it (that was quadratic: 52 s for 1 MB); the screen still agrees with a
    terminal about what follows a closed one."""
    from tmux_agentstate.core.screen import replay
    for data in (b"\x1bP" + b"x" * 200000, b"\x1bPx" * 70000, b"\x1b]0;" + b"y" * 200000,
                 b"\x1b_x" * 70000, b"\x1b[" + b"9" * 200000 + b"@"):
        replay(data + b"\x1b\\\r\nafter", 5, 40)  # must simply return
    screen = replay(b"\x1b]0;my title\x07\x1bPq#0;1\x1b\\shown\x1b_apc\x1b\\ too", 3, 40)
    assert screen.title == "my title" and screen.rows()[0].rstrip() == "shown too"
    split = replay(b"\x1bPpayload\x1b", 3, 40)  # ST cut between chunks
    from tmux_agentstate.core.screen import PaneScreen
    s = PaneScreen(3, 40)
    for chunk in (b"\x1bPpay", b"load\x1b", b"\\after"):
        s.feed(chunk)
    s.flush()
    assert s.rows()[0].rstrip() == "after" and split.rows()[0] == ""


def test_hostile_streams_grow_nothing_without_bound():
    """Sequences repeated or all distinct keep what the stream and screen hold bounded: the
    parsed-sequence cache refills at its size, a saved cursor is one slot (pyte's stack grew
    with every ESC 7), and the screen still ends where a terminal would."""
    from tmux_agentstate.core import vtstream
    from tmux_agentstate.core.screen import PaneScreen
    s = PaneScreen(24, 80)
    s.feed(b"".join(b"\x1b[%d;%dH" % (i % 24 + 1, i % 80 + 1) for i in range(20000)))
    s.feed(b"\x1b[5;10H" + b"\x1b7" * 20000 + b"\x1b[1;1Hx\x1b8y\x1b8z")
    s.feed(b"\x1b_apc\x1bX sos \x1b^pm\x1a" * 5000 + b"!")
    assert len(s._stream._calls) <= vtstream._MAX_CALLS
    assert s._cells.savepoints == []
    assert s.cursor == (4, 11)  # y, then z over it: both restores found the one saved place
    assert s.rows()[4] == " " * 9 + "z!" and s.rows()[0] == "x"
