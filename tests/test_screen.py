"""PaneScreen: the emulated screen, including the stock-pyte faults it must not have."""
import random

import pytest

from conftest import wait_for

from tmux_agentstate.core.screen import CapturedScreen, PaneScreen, replay


def feed_all(data: bytes, rows=5, cols=40, chunk=None) -> PaneScreen:
    s = PaneScreen(rows, cols)
    step = chunk or len(data) or 1
    for i in range(0, len(data), step):
        s.feed(data[i:i + step])
    return s


def test_words_placed_with_cursor_moves_read_with_spaces():
    # Claude Code: rows start with CR + cursor-down, words placed with CSI n G, no \n at all.
    data = b"\r\x1b[1C\x1b[1B\x1b[39mDo\x1b[5Gyou\x1b[9Gwant\x1b[14Gto\x1b[17Gproceed? "
    assert feed_all(data).rows()[1] == " Do you want to proceed?"


@pytest.mark.parametrize("joiner", ["\ufe0f", "\u200d"])
def test_text_after_zero_width_character_is_kept(joiner):
    # stock pyte's draw() stops at the first zero-width char and drops the rest of the run
    s = feed_all(f"a\u2764{joiner}b Do you want to proceed?".encode())
    assert "Do you want to proceed?" in s.rows()[0]


def test_gemini_modify_other_keys_sequence_is_harmless():
    s = feed_all(b"\x1b[>4;0mready\x1b[>4;2m ok")
    assert s.rows()[0] == "ready ok"


def test_kitty_keyboard_and_dcs_print_no_stray_text():
    data = b"x\x1b[>5u\x1b[<u\x1b[?u\x1bPtmux;\x1b\x1b]0;hi\x07\x1b\\y\x1b_apc\x1b\\z"
    assert feed_all(data).rows()[0] == "xyz"


# Strings ended as tmux ends them. The first is what a recording held when a tty echoed tmux's
# answer to a terminal query right after an ESC the agent printed: "ESC ^" starts a PM there.
STRINGS = [
    b"ab\x1b^[P>|tmux 3.3a^[\\^[[?1;2c[38;5;246m\xe2\x94\x80\xe2\x94\x80\x1b[39m\r\ncd",
    b"ab\x1bXsos text\x1b\\cd\r\nef",
    b"ab\x1b_apc \x1b[1mX\x1b[0m\r\ncd",
    b"ab\x1bPtmux;\x1b\x1b[1mX\x1b[0m\x1b\\cd\r\nef",
    b"ab\x1b^pm\x18cd\x1b^pm\x1acd",
]


@pytest.mark.parametrize("data", STRINGS, ids=["echo-after-esc", "sos", "apc", "dcs", "can-sub"])
def test_apc_pm_sos_and_dcs_strings_end_where_tmux_ends_them(tmux_server, tmp_path, data):
    assert_screen_like_tmux(tmux_server, tmp_path, data)


def assert_screen_like_tmux(tmux_server, tmp_path, data, rows=5, cols=40):
    """`data` replayed in a real tmux pane and in our screen (whole, byte by byte, in 3-byte
    chunks) shows the same rows."""
    path = tmp_path / "bytes"
    path.write_bytes(data)
    pane = tmux_server.new_pane(f"sh -c 'stty raw -echo; cat {path}; exec sleep 600'", rows=rows, cols=cols)
    wait_for(lambda: tmux_server.option(pane, "pane_current_command") == "sleep", message="printed")
    want = [r.rstrip() for r in tmux_server.tmux.capture_one(pane, escapes=False)[pane].split("\n")]
    for chunk in (None, 1, 3):
        got = feed_all(data, rows, cols, chunk).rows()
        assert got[:len(want)] == want, (chunk, got, want)


def test_colon_subparameters_print_no_stray_text():
    assert feed_all(b"\x1b[38:2::10:20:30mA\x1b[4:3mB\x1b[0m").rows()[0] == "AB"


def test_alternate_screen_replaces_view_and_main_comes_back():
    s = feed_all(b"$ claude\r\n\x1b[?1049h\x1b[H\x1b[2JFULLSCREEN UI")
    assert s.on_alt_screen and s.rows()[0] == "FULLSCREEN UI" and "$ claude" not in s.rows()
    s.feed(b"\x1b[?1049l")
    assert not s.on_alt_screen
    assert s.rows()[0] == "$ claude" and "FULLSCREEN UI" not in "\n".join(s.rows())
    assert s.cursor == (1, 0)


def test_title_and_agent_state_osc():
    s = feed_all(b"\x1b]0;\xe2\x9c\xb3 Claude Code\x07\x1b]7501;state=working:app=codex\x1b\\")
    assert s.title == "\u2733 Claude Code"
    assert s.osc_state == "state=working:app=codex"
    s.feed(b"\x1b]2;Action Required\x1b\\\x1b]7501;state=blocked:app=codex\x07")
    assert (s.title, s.osc_state) == ("Action Required", "state=blocked:app=codex")


def test_utf8_split_across_chunks_decodes_right():
    data = "\u276f 1. Yes \u2014 \U0001F600 caf\u00e9".encode()
    whole = feed_all(data).rows()
    for n in (1, 2, 3):
        assert feed_all(data, chunk=n).rows() == whole
    assert whole[0].startswith("\u276f 1. Yes")


def test_escape_split_across_chunks():
    data = b"ab\x1b]0;title\x07\x1b[2;5Hcd\x1b[?1049hEF"
    ref = feed_all(data)
    for n in range(1, 8):
        s = feed_all(data, chunk=n)
        assert (s.rows(), s.cursor, s.title) == (ref.rows(), ref.cursor, ref.title)
    assert ref.rows()[1] == "      EF" and ref.title == "title"  # alt screen keeps the cursor


def test_invalid_bytes_become_replacement_character():
    s = replay(b"ok \xff\xfe done", 3, 20)
    assert s.rows()[0] == "ok \ufffd\ufffd done"
    assert s.invalid_utf8 == 2


def test_truncated_utf8_at_end_is_flagged():
    s = replay(b"ok \xe2\x9d", 3, 20)
    assert s.truncated_tail and s.rows()[0] == "ok \ufffd"


def test_cursor_row_and_resize():
    s = feed_all(b"one\r\ntwo\r\nthree", rows=5, cols=40)
    assert s.cursor == (2, 5)
    s.resize(10, 80)
    assert (s.lines, s.columns) == (10, 80) and s.rows()[2] == "three"
    s.feed(b"\x1b[10;70Hedge")
    assert s.rows()[9] == " " * 69 + "edge"


def test_dirty_flag_tracks_changes():
    s = PaneScreen(3, 10)
    s.take_view()
    assert not s.dirty
    s.feed(b"x")
    assert s.dirty
    s.take_view()
    assert not s.dirty


def test_garbage_never_raises():
    rng = random.Random(1234)
    pieces = [b"\x1b[", b"\x1b]", b"\x1bP", b"\x1b", b";", b"?", b">", b"9999", b"h", b"l", b"m",
              b"\r", b"\n", b"\x07", b"\xff", b"\xe2", b"A", b"1049", b"J", b"r", b"@", b"b"]
    s = PaneScreen(6, 20)
    for _ in range(3000):
        s.feed(b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))))
        s.feed(rng.randbytes(rng.randint(0, 32)))
    s.flush()
    rows = s.rows()
    assert len(rows) == 6 and all(len(r) <= 20 for r in rows)


def test_captured_screen_keeps_codex_state_report_from_bytes_cut_anywhere():
    """The pipe intake does not parse bytes, but Codex's `OSC 7501` state must still reach the
    rules: picked out by a byte search, whichever read boundary cuts it."""
    data = (b"\x1b[2J text \x1b]7501;state=working\x07 spinner \x1b]0;title\x07"
            b"\x1b]7501;state=blocked:app=codex\x1b\\ more text")
    for cut in range(1, len(data)):
        for split in (cut, max(1, cut // 2)):
            screen = CapturedScreen()
            for part in (data[:split], data[split:cut], data[cut:]):
                screen.note_bytes(part)
            assert screen.osc_state == "state=blocked:app=codex", (split, cut)
    screen = CapturedScreen()
    screen.note_bytes(b"\x1b]7501;state=idle" + b"x" * 5000)  # never terminated: dropped
    screen.note_bytes(b"\x07")
    assert screen.osc_state == ""
    screen.note_bytes(b"\x1b]7501;state=done\x07")
    assert screen.osc_state == "state=done" and "state=done" in screen.take_changed_text()


def test_rows_that_only_scrolled_are_not_new_text():
    """The pre-check reads what changed since the last look: a prompt's words that scroll up
    a busy transcript are not new (they hit the pre-check at every look); a row drawn anew is,
    and so is the same text again once it had left the screen."""
    screen = PaneScreen(5, 40)
    screen.feed(b"Do you want to proceed?\r\nline 1\r\nline 2")
    assert "Do you want to proceed?" in screen.take_changed_text()
    screen.feed(b"\r\nline 3\r\nline 4")
    assert screen.take_changed_text() == "line 3\nline 4"
    screen.feed(b"\r\nline 5")  # the question leaves the screen at the top
    assert screen.take_changed_text() == "line 5"
    screen.feed(b"\r\nDo you want to proceed?")
    assert screen.take_changed_text() == "Do you want to proceed?"


def test_one_cell_characters_written_at_once_equal_written_one_by_one(monkeypatch):
    """Box drawing, braille spinners and other one-cell characters take the row-slice path
    ASCII takes; with wide and zero-width characters in the run, the per-character one. Both
    give the rows and cursor the per-character path gives, wrapping at the edge included."""
    from tmux_agentstate.core.cells import draw

    runs = ["─" * 60, "╭" + "─" * 38 + "╮", "⠋ Thinking…", "│ ❯ 1. Yes │", "日本語 wide",
            "e\u0301 combining", "✻" * 45, "plain ascii " * 5]
    data = "\r\n".join(runs).encode() + b"\x1b[3;37H" + "─┼─".encode() + b"\x1b[?7l" + \
        ("─" * 50).encode()

    def screen_of():
        s = PaneScreen(12, 40)
        s.feed(data)
        return s.rows(), s.cursor

    at_once = screen_of()
    monkeypatch.setattr(draw, "_narrow", lambda run: False)
    assert screen_of() == at_once
    assert at_once[0][0] == "─" * 40 and at_once[0][1] == "─" * 20


# Row and line edits, each done at once (not cell by cell, row by row or linefeed by linefeed):
# the screen must still be what tmux shows.
EDITS = [
    b"0123456789abcdefghij\r\x1b[5C\x1b[4hINSERTED-TEXT-LONGER-THAN-THE-ROW\x1b[4l!",
    b"0123456789\r\x1b[3C\x1b[4@\x1b[2P\x1b[6C\x1b[X\x1b[1K\r\nrow2 text\x1b[3D\x1b[K",
    b"a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng" + b"\n" * 3 + b"h\x1b[2;4r\x1b[3H\x1b[L\x1b[2M\x1b[4H\n\n\nz\x1b[r",
    b"one\r\ntwo\r\nthree\x1b[H\x1bM\x1bMtop\x1b[5;1H" + b"\n" * 40 + b"end",
    b"\x1b[1;38Hxy\x1b[9999b\r\nab\x1b[3b|\x1b[2;1H\x1b[4h\xe7\x95\x8c\xe7\x95\x8cwide",
    b"fill the row with text and more\r\x1b[2C\x1b[4h" + b"i" * 45 + b"\x1b[4l\r\n\x1b[2J\x1b[3;3Hafter clear",
    b"a long first row that stays\r\nb\x1b[2;2H" + b"".join(b"line %d\r\n" % i for i in range(9))
    + b"\r\n\r\nx" * 2 + b"\x1b[2;4r\x1b[3;5H" + b"".join(b"r%d\r\n" % i for i in range(6)) + b"\x1b[r",
    b"\x1b[5;1H" + b"".join(b"%d\r\n" % i for i in range(1000)) + b"\x1b[1;1Hover\r\n" + b"y" * 45 + b"\r\nz\r\n",
    # lines ended by LF alone: the column goes on, long lines wrap, a full row leaves a wrap
    # pending; then in a scroll region
    b"top\r\nab\ncd\n" + b"x" * 40 + b"\nq\n" + b"long line " * 9 + b"\ne\r\nf\n"
    + b"\x1b[2;4r\x1b[4;30H" + b"".join(b"w%d\n" % i for i in range(7)) + b"\x1b[r",
    # controls that do nothing, inside text: the text around them is drawn as one
    b"be\x07ll\x00s\x0e \x0fa\x7fnd\x1c w\xc2\x9bhistles\x07\x07\r\n\x07\x07x\x07",
    # text with CR, BS and HT between: progress redrawn in place, overstrikes, tabs, a wide
    # character backed over, BS from a pending wrap, a tab past the last stop
    b"progress 10%\rprogress 20%\rdone\r\nab\x08\x08XY\tcol\t\tcol3\r\n"
    + "界\x08x界\tz".encode() + b"\r\n" + b"y" * 40 + b"\x08\x08Z\r\n" + b"x" * 38 + b"\tT\t\tU"
    + b"\r\n" + b"w" * 40 + b"\x1b[2DC",  # CUB from a pending wrap
    # the saved cursor is one slot, kept by a restore; index and linefeed below the region
    b"\x1b[2;5Hsaved\x1b7\x1b[4;1Hother\x1b8A\x1b8B\x1b[1;1H\x1b7\x1b[3;3H\x1b8C"
    b"\x1b[1;3r\x1b[4;1Hbelow\x1bDx\x1bD\x1bDy\ny\x1bMr\x1b[r",
    # autowrap off (DECAWM, CSI ?7l): text reaching the last column leaves the cursor on it,
    # no wrap pending, so a BS, a CUB or more text lands one column further left than with
    # autowrap on (Copilot CLI draws its dialog's box corner so, then backs up over it)
    b"\x1b[?7l" + b"a" * 40 + b"\x1b[?7h\x08X\r\n\x1b[?7l" + b"b" * 40 + b"\x08Y\r\n"
    + b"c" * 40 + b"\x1b[2DZ\r\n" + "界".encode() * 20 + b"\x08W\x1b[?7h\r\n" + b"d" * 40 + b"\x08V",
    # runs of sequences back to back, as a TUI redraws
    b"one\r\ntwo\r\nthree\x1b[H\x1b[3;3H\x1b[Kt\x1b[1;1H\x1b[2K\x1b[5Cmid\x1b[J\x1b[2;2H\x1b[1P\x1b[2@+",
]


@pytest.mark.parametrize("data", EDITS, ids=["insert-mode", "ich-dch-ech-el", "il-dl-region",
                                             "scroll-runs", "rep-wide-insert", "insert-wrap",
                                             "line-blocks", "line-blocks-scrolled", "lf-lines",
                                             "quiet-controls", "edits", "saved-cursor-index",
                                             "no-autowrap", "sequence-runs"])
def test_row_and_line_edits_match_tmux(tmux_server, tmp_path, data):
    assert_screen_like_tmux(tmux_server, tmp_path, data)


def test_line_blocks_drawn_at_once_equal_drawn_one_by_one(monkeypatch):
    """The batch of plain lines (CR LF, LF, wider than the screen) gives the screen the same rows
    and cursor as drawing them one by one, on every real fixture and on mutated ones."""
    import random

    from tmux_agentstate.core import cells
    from tmux_agentstate.core import screen as sc
    from tmux_agentstate.core.fixtures import load_index

    def one_by_one(self, block):
        for part in block.split("\n")[:-1]:
            text = part.removesuffix("\r")
            if text:
                self.draw(text)
            if text != part:
                self.carriage_return()
            self.linefeed()

    rng = random.Random(5)
    inputs = []
    for fx in load_index():
        data = fx.path.read_bytes()
        inputs.append((fx.id, data, fx.rows, fx.cols))
        cut = rng.randrange(len(data))
        lines = b"".join(b"log line %d%s\n" % (i, rng.choice([b"\r", b"", b" " * 150]))
                         for i in range(rng.randrange(1, 80)))
        inputs.append((fx.id + "+lines", data[:cut] + lines + data[cut:], fx.rows, fx.cols))
    batched = {i: (s.rows(), s.cursor) for i, d, r, c in inputs for s in [sc.replay(d, r, c)]}
    monkeypatch.setattr(cells.Cells, "draw_lines", one_by_one)
    for i, d, r, c in inputs:
        s = sc.replay(d, r, c)
        assert (s.rows(), s.cursor) == batched[i], i


def test_deferred_bytes_give_the_screen_fed_bytes_give():
    """A working pane's bytes may be parsed later, in one go (`defer`): whatever reads the
    screen (rows, cursor, title, the changed text, a resize) first parses what waits, so the
    screen is the one feeding every read as it came gives. Real busy captures, cut at random,
    each part fed or deferred at random, with reads between."""
    from tmux_agentstate.core.fixtures import load_index

    rng = random.Random(29)
    fixtures = [f for f in load_index() if f.path.stat().st_size > 20_000]
    for fx in rng.sample(fixtures, min(12, len(fixtures))):
        data = fx.path.read_bytes()
        fed, mixed = PaneScreen(fx.rows, fx.cols), PaneScreen(fx.rows, fx.cols)
        pos = 0
        while pos < len(data):
            part = data[pos:pos + rng.randint(1, 900)]
            pos += len(part)
            fed.feed(part)
            (mixed.defer if rng.random() < 0.8 else mixed.feed)(part)
            if rng.random() < 0.05:
                assert mixed.take_changed_text() == fed.take_changed_text(), fx.path
        assert (mixed.rows(), mixed.cursor, mixed.title) == (fed.rows(), fed.cursor, fed.title), fx.path
    screen = PaneScreen(5, 20)
    screen.defer(b"\x1b[2J\x1b[5;1H" + b"0123456789" * 3)  # drawn at 20 columns: it wrapped
    screen.resize(5, 40)
    assert screen.rows()[3:] == ["01234567890123456789", "0123456789"]


def test_deferred_bytes_never_hold_back_the_agents_own_report():
    """Bytes that may carry an `OSC 7501` report are parsed at once, with the time they came,
    even when the report's start was cut off by the read before: the report is news."""
    report = b"\x1b]7501;state=blocked:app=codex\x07"
    for cut in range(len(report) + 1):
        screen = PaneScreen(5, 40)
        first = b"spinner " + report[:cut]
        took_first = screen.defer(first, at=100.0)
        took_second = screen.defer(report[cut:] + b" more", at=200.0)
        assert screen.status.root is not None, cut
        assert took_first or took_second, cut
        assert screen.status.root.at == (100.0 if cut == len(report) else 200.0), cut
    marker = len(b"\x1b]7501;")
    for i in range(1, marker):  # its start cut over three reads, the middle ones short
        for j in range(i + 1, marker + 1):
            screen = PaneScreen(5, 40)
            for at, part in enumerate((b"spinner " + report[:i], report[i:j], report[j:] + b" more")):
                screen.defer(part, at=float(at))
            assert screen.status.root is not None and screen.status.root.at == 2.0, (i, j)
    screen = PaneScreen(5, 40)
    screen.defer(b"x" * 40000)  # past DEFER_MAX: parsed at once, whoever reads
    assert not screen._deferred


def test_parse_time_counts_wherever_deferred_bytes_are_caught_up():
    """The intake's flood test (`flood_seconds`) counts parsing time: deferred bytes parsed
    at a look, by whatever reads the screen, count as bytes parsed when they come do."""
    screen = PaneScreen(24, 80)
    screen.defer(b"\x1b[4h" + b"x\x1b[1;1H" * 2000)  # insert mode: costly per byte
    assert screen.take_parse_seconds() == 0.0  # not parsed yet
    screen.rows()
    assert screen.take_parse_seconds() > 0.0 and screen.take_parse_seconds() == 0.0
    screen.feed(b"more")
    assert screen.take_parse_seconds() > 0.0
