"""PaneScreen: the emulated screen of one pane, the only thing the classifier reads.

A pyte `Screen` holds the cells; `vtstream.ByteStream` parses the bytes. On top of stock pyte
this screen
- models the alternate screen (`CSI ? 1049/1047/47 h/l`): fullscreen TUIs draw there, and the
  shell's main screen must come back untouched when they exit;
- keeps drawing after zero-width characters (U+FE0F, U+200D): stock `draw` stops at the first
  one and silently drops the rest of the run;
- drops colours and attributes (the rules read text only), which makes drawing several times
  faster;
- remembers the title (OSC 0/2), the last agent-state OSC (`OSC 7501;state=…`, Codex), when
  output last arrived, and whether anything changed since the last classification.
"""
from __future__ import annotations

import itertools
import operator
import time
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

import pyte
from pyte import modes as mo
from pyte.screens import Char, StaticDefaultDict
from wcwidth import wcwidth

from .vtstream import ByteStream

_ALT_SAVE_CURSOR = 1049 << 5
_ALT_MODES = {1049 << 5, 1047 << 5, 47 << 5}
_IGNORED_MODES = {mo.DECCOLM}  # tmux has no 132-column mode; honouring it would resize us
_BLANK = Char(" ")
_BLANKS = itertools.repeat(_BLANK)
_DATA = operator.itemgetter(0)  # Char.data


class _CellCache(dict):
    """One shared, immutable cell per character (no attributes are kept)."""

    def __missing__(self, ch: str) -> Char:
        cell = self[ch] = Char(ch)
        return cell


_CELLS = _CellCache()
_cell = _CELLS.__getitem__


@lru_cache(maxsize=4096)
def _width(ch: str) -> int:
    return wcwidth(ch)


class _Cells(pyte.Screen):
    """pyte's screen with the fixes above; text only."""

    def __init__(self, columns: int, lines: int):
        self._alt_saved: tuple | None = None  # (main buffer, main cursor) while on the alt screen
        self._last_char = " "
        self._rows: list[str] = []  # text of each row, rebuilt from the dirty rows only
        self.changed: set[int] = set()  # rows whose text changed since `take_changed_text`
        super().__init__(columns, lines)

    # -- drawing --------------------------------------------------------------------------------
    def draw(self, data: str) -> None:
        cur = self.cursor
        cols = self.columns
        line = self.buffer[cur.y]
        autowrap = mo.DECAWM in self.mode
        insert = mo.IRM in self.mode
        if insert:
            self._draw_inserting(data)
            return
        if data.isascii() and autowrap:
            # fast path (most text): every char one cell, written a row-slice at a time in C
            pos, n = 0, len(data)
            while pos < n:
                if cur.x >= cols:
                    self.dirty.add(cur.y)
                    cur.x = 0
                    self.linefeed()
                    line = self.buffer[cur.y]
                take = min(n - pos, cols - cur.x)
                line.update(zip(range(cur.x, cur.x + take), map(_CELLS.__getitem__, data[pos:pos + take])))
                cur.x += take
                pos += take
            self._last_char = data[-1]
            self.dirty.add(cur.y)
            return
        for ch in data:
            w = 1 if " " <= ch <= "~" else _width(ch)
            if w <= 0:
                # zero-width (combining marks, U+FE0F/U+FE0E variation selectors, U+200D):
                # joins the previous cell, as tmux keeps it; unprintable: dropped. Either way
                # the rest of the run is drawn (stock pyte stops here and loses it)
                if w == 0 and cur.x:
                    x = min(cur.x, cols) - 1
                    if x and line[x].data == "":  # the stub after a wide character
                        x -= 1
                    prev = line[x]
                    line[x] = prev._replace(data=prev.data + ch)
                continue
            if cur.x + w > cols:
                if autowrap:
                    self.dirty.add(cur.y)
                    cur.x = 0
                    self.linefeed()
                    line = self.buffer[cur.y]
                else:
                    cur.x = max(0, cols - w)
            line[cur.x] = _cell(ch)
            if w == 2 and cur.x + 1 < cols:
                line[cur.x + 1] = _cell("")
            cur.x += w
            self._last_char = ch
        self.dirty.add(cur.y)

    def _draw_inserting(self, data: str) -> None:
        """Insert mode (IRM): the row right of the cursor moves once per row of the run, not
        once per character (that cost O(columns) per character)."""
        i, n, cols = 0, len(data), self.columns
        while i < n:
            cur = self.cursor
            w = max(_width(data[i]), 0)
            if w and cur.x + w > cols:  # wrap first, as draw would
                if mo.DECAWM in self.mode:
                    self.dirty.add(cur.y)
                    cur.x = 0
                    self.linefeed()
                else:
                    cur.x = max(0, cols - w)
            room, width, j = cols - self.cursor.x, 0, i
            while j < n:
                w = max(_width(data[j]), 0) if not " " <= data[j] <= "~" else 1
                if width + w > room:
                    break
                width, j = width + w, j + 1
            j = max(j, i + 1)
            if width:
                self.insert_characters(width)
            self.mode.discard(mo.IRM)
            try:
                self.draw(data[i:j])
            finally:
                self.mode.add(mo.IRM)
            i = j

    # -- row edits: cells are a sparse dict (a missing cell is blank), so each edit is one pass
    # over the cells the row holds, in comprehensions: pyte's loops ran over every column
    def insert_characters(self, count: int | None = None) -> None:  # CSI @
        self._shift_cells(min(count or 1, self.columns))

    def delete_characters(self, count: int | None = None) -> None:  # CSI P
        self._shift_cells(-min(count or 1, self.columns))

    def _shift_cells(self, n: int) -> None:
        """The cursor row's cells from the cursor on move n columns (right if positive);
        cells pushed past the row's end are gone, the columns left behind are blank."""
        y, x, cols = self.cursor.y, self.cursor.x, self.columns
        line = self.buffer[y]
        self.dirty.add(y)
        if line:
            kept = {k: v for k, v in line.items() if k < x}
            kept.update({k + n: v for k, v in line.items() if k >= x and x <= k + n < cols})
            line.clear()
            line.update(kept)

    def _blank(self, y: int, start: int, stop: int) -> None:
        line = self.buffer[y]
        self.dirty.add(y)
        if line:
            for k in [k for k in line if start <= k < stop]:
                del line[k]

    def erase_characters(self, count: int | None = None) -> None:  # CSI X
        x = self.cursor.x
        self._blank(self.cursor.y, x, x + (count or 1))

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:  # CSI K
        x = self.cursor.x
        start, stop = {0: (x, self.columns), 1: (0, x + 1)}.get(how, (0, self.columns))
        self._blank(self.cursor.y, start, stop)

    def erase_in_display(self, how: int = 0, *args, **kwargs) -> None:  # CSI J
        y = self.cursor.y
        rows = {0: range(y + 1, self.lines), 1: range(y)}.get(how, range(self.lines))
        for row in rows:
            self.buffer.pop(row, None)
        self.dirty.update(rows)
        if how in (0, 1):
            self.erase_in_line(how)

    def repeat_last(self, count: int | None = None) -> None:  # CSI b (REP)
        # at most to the end of the row, as tmux does: 8 bytes must not draw a whole screen
        self.draw(self._last_char * min(count or 1, max(self.columns - self.cursor.x, 0)))

    # -- rows: one rebuild of the row map per scroll or line edit, whatever the count (pyte
    # moved the rows one by one, and scrolled once per linefeed)
    def _shift_rows(self, start: int, stop: int, n: int) -> None:
        """Rows start..stop (inclusive) move by n (down if positive); rows pushed out of that
        span are gone, the rows left behind are blank; rows outside it stay."""
        buf = self.buffer
        moved = {(y + n if start <= y <= stop else y): row for y, row in buf.items()
                 if not start <= y <= stop or start <= y + n <= stop}
        buf.clear()
        buf.update(moved)
        self.dirty.update(range(start, stop + 1))

    def _region(self) -> tuple[int, int]:
        return tuple(self.margins) if self.margins else (0, self.lines - 1)

    def index(self) -> None:
        top, bottom = self._region()
        if self.cursor.y == bottom:
            self._shift_rows(top, bottom, -1)
        else:
            self.cursor_down()

    def reverse_index(self) -> None:
        top, bottom = self._region()
        if self.cursor.y == top:
            self._shift_rows(top, bottom, 1)
        else:
            self.cursor_up()

    def linefeeds(self, count: int) -> None:
        """`count` linefeeds in a row: the cursor goes down, the rest scrolls, at once."""
        top, bottom = self._region()
        y = self.cursor.y
        if y > bottom or y < top:
            self.cursor.y = min(y + count, self.lines - 1)
        else:
            down = min(count, bottom - y)
            self.cursor.y = y + down
            if count > down:
                self._shift_rows(top, bottom, -min(count - down, bottom - top + 1))
        if mo.LNM in self.mode:
            self.carriage_return()

    def draw_lines(self, lines: list[str]) -> None:
        """Printable ASCII lines, each followed by CR LF: as drawn one by one, but with one
        scroll for the whole block and only the lines that stay on screen written (a log of
        short lines cost one row-map rebuild per line)."""
        top, bottom = self._region()
        cols = self.columns
        if (mo.IRM in self.mode or mo.LNM in self.mode or not top <= self.cursor.y <= bottom
                or any(len(line) > cols for line in lines)):
            for line in lines:  # the general way: wraps, insert mode, outside the region
                if line:
                    self.draw(line)
                self.carriage_return()
                self.linefeed()
            return
        if lines[0]:
            self.draw(lines[0])  # from the cursor's column, maybe wrapping
        self.carriage_return()
        self.linefeed()
        rest, y = lines[1:], self.cursor.y
        k = len(rest)
        if not k:
            return
        scrolls = max(0, y + k - bottom)  # linefeeds that find the cursor on the bottom row
        if scrolls:
            self._shift_rows(top, bottom, -min(scrolls, bottom - top + 1))
        for i, line in enumerate(rest):
            # written at row min(y+i, bottom), then moved up by the scrolls after it
            row = min(y + i, bottom) - max(0, y + k - max(y + i, bottom))
            if row >= top and line:
                self.buffer[row].update(zip(range(len(line)), map(_CELLS.__getitem__, line)))
                self.dirty.add(row)
        self.cursor.x = 0
        self.cursor.y = min(y + k, bottom)
        self._last_char = next((line[-1] for line in reversed(lines) if line), self._last_char)

    def insert_lines(self, count: int | None = None) -> None:  # CSI L
        top, bottom = self._region()
        if top <= self.cursor.y <= bottom:
            self._shift_rows(self.cursor.y, bottom, min(count or 1, self.lines))
            self.carriage_return()

    def delete_lines(self, count: int | None = None) -> None:  # CSI M
        top, bottom = self._region()
        if top <= self.cursor.y <= bottom:
            self._shift_rows(self.cursor.y, bottom, -min(count or 1, self.lines))
            self.carriage_return()

    def select_graphic_rendition(self, *attrs: int) -> None:
        pass  # text only

    def scroll_up(self, count: int | None = None) -> None:  # CSI S
        y, x = self.cursor.y, self.cursor.x
        top, bottom = self.margins or (0, self.lines - 1)
        self.cursor.y = bottom
        for _ in range(min(count or 1, self.lines)):
            self.index()
        self.cursor.y, self.cursor.x = y, x

    def scroll_down(self, count: int | None = None) -> None:  # CSI T
        y, x = self.cursor.y, self.cursor.x
        top, bottom = self.margins or (0, self.lines - 1)
        self.cursor.y = top
        for _ in range(min(count or 1, self.lines)):
            self.reverse_index()
        self.cursor.y, self.cursor.x = y, x

    # -- modes: the alternate screen --------------------------------------------------------------
    def set_mode(self, *modes: int, **kwargs) -> None:
        if kwargs.get("private"):
            shifted = {m << 5 for m in modes}
            if shifted & _ALT_MODES and self._alt_saved is None:
                self._alt_saved = (self.buffer, self.cursor)
                if _ALT_SAVE_CURSOR in shifted:
                    self.cursor = pyte.screens.Cursor(self.cursor.x, self.cursor.y)
                self.buffer = defaultdict(lambda: StaticDefaultDict(self.default_char))
                self.dirty.update(range(self.lines))
            modes = tuple(m for m in modes if (m << 5) not in _ALT_MODES | _IGNORED_MODES)
        super().set_mode(*modes, **kwargs)

    def reset_mode(self, *modes: int, **kwargs) -> None:
        if kwargs.get("private"):
            shifted = {m << 5 for m in modes}
            if shifted & _ALT_MODES and self._alt_saved is not None:
                buffer, cursor = self._alt_saved
                self._alt_saved = None
                self.buffer = buffer
                if _ALT_SAVE_CURSOR in shifted:
                    self.cursor = cursor
                self.cursor.x = min(self.cursor.x, self.columns - 1)
                self.cursor.y = min(self.cursor.y, self.lines - 1)
                self.dirty.update(range(self.lines))
            modes = tuple(m for m in modes if (m << 5) not in _ALT_MODES | _IGNORED_MODES)
        super().reset_mode(*modes, **kwargs)

    @property
    def on_alt_screen(self) -> bool:
        return self._alt_saved is not None

    def resize(self, lines: int | None = None, columns: int | None = None) -> None:
        if self._alt_saved is not None and columns and columns < self.columns:
            for row in self._alt_saved[0].values():  # keep the hidden main screen in bounds too
                for x in range(columns, self.columns):
                    row.pop(x, None)
        super().resize(lines, columns)
        self.cursor.x = min(self.cursor.x, self.columns - 1)
        self.cursor.y = min(self.cursor.y, self.lines - 1)

    def rows(self) -> list[str]:
        """Visible rows as text, trailing blanks stripped. Only rows pyte marked dirty since the
        last call are rebuilt: a spinner redraws one row, not the whole screen."""
        cache = self._rows
        if len(cache) != self.lines:
            cache[:] = [""] * self.lines
            self.dirty.update(range(self.lines))
        cols = self.columns
        buf = self.buffer
        changed = self.changed
        for y in self.dirty:
            if 0 <= y < self.lines:
                line = buf.get(y)
                text = "".join(map(_DATA, map(line.get, range(cols), _BLANKS))).rstrip() if line else ""
                if text != cache[y]:
                    cache[y] = text
                    changed.add(y)
        self.dirty.clear()
        return list(cache)


@dataclass
class ScreenView:
    """What the classifier sees: a snapshot, no emulator inside."""
    rows: list[str]
    cursor_row: int
    title: str
    osc_state: str
    regions: dict = field(default_factory=dict, repr=False, compare=False)  # text per region

    @property
    def text(self) -> str:
        text = self.regions.get("text")
        if text is None:
            text = self.regions["text"] = "\n".join(self.rows)
        return text


class PaneScreen:
    """Raw pane bytes in, visible rows / cursor / title / last agent OSC out."""

    def __init__(self, rows: int = 32, cols: int = 120):
        self._cells = _Cells(cols, rows)
        self._cells.osc = self._osc  # the stream reports OSCs to the screen
        self._stream = ByteStream(self._cells)
        self.title = ""
        self.osc_state = ""      # payload of the last `OSC 7501;…` (e.g. "state=blocked:app=codex")
        self.last_output = 0.0   # time.monotonic() of the last non-empty feed
        self.dirty = True        # changed since the last `take_view()`
        self._seen_meta = ("", "")
        self.bytes_fed = 0

    # -- input ------------------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if not data:
            return
        self._stream.feed(data)
        self.bytes_fed += len(data)
        self.last_output = time.monotonic()
        self.dirty = True

    def feed_text(self, text: str) -> None:
        """For seeding from `capture-pane -p -e`, which tmux already decoded."""
        self._stream.feed_text(text)
        self.dirty = True

    def flush(self) -> None:
        """End of a capture: a truncated UTF-8 tail becomes U+FFFD."""
        self._stream.flush()

    def _osc(self, code: str, payload: str) -> None:
        if code in ("0", "2"):
            self.title = payload
        elif code == "7501":
            self.osc_state = payload

    def resize(self, rows: int, cols: int) -> None:
        if (rows, cols) != (self.lines, self.columns):
            self._cells.resize(rows, cols)
            self.dirty = True

    # -- output -----------------------------------------------------------------------------------
    @property
    def lines(self) -> int:
        return self._cells.lines

    @property
    def columns(self) -> int:
        return self._cells.columns

    @property
    def cursor(self) -> tuple[int, int]:
        return self._cells.cursor.y, self._cells.cursor.x

    @property
    def on_alt_screen(self) -> bool:
        return self._cells.on_alt_screen

    @property
    def invalid_utf8(self) -> int:
        return self._stream.replacements

    @property
    def truncated_tail(self) -> bool:
        """The last flush found the input cut inside a UTF-8 sequence."""
        return self._stream.truncated_tail

    def rows(self) -> list[str]:
        return self._cells.rows()

    def view(self) -> ScreenView:
        return ScreenView(self.rows(), self._cells.cursor.y, self.title, self.osc_state)

    def take_view(self) -> ScreenView:
        """The view, marking the screen clean (the sweep classifies dirty screens only)."""
        self.dirty = False
        view = self.view()
        self._cells.changed.clear()
        self._seen_meta = (self.title, self.osc_state)
        return view

    def take_changed_text(self) -> str:
        """Only what changed since the last look: changed rows, and the title / agent OSC if
        they changed. A cheap pre-check (`Manifest.blocked_hint`) runs on this alone."""
        rows = self._cells.rows()
        changed = self._cells.changed
        parts = [rows[y] for y in sorted(changed) if y < len(rows)]
        changed.clear()
        meta = (self.title, self.osc_state)
        if meta != self._seen_meta:
            parts.extend(meta)
            self._seen_meta = meta
        return "\n".join(parts)


_OSC_STATE = b"\x1b]7501;"  # Codex's own state report; tmux keeps no trace of it
_OSC_MAX = 1024             # an unterminated report is waited for this far, then dropped


def _osc_end(buf: bytes, start: int) -> int:
    """Where the OSC starting at `start` ends (BEL or ESC \\); -1 if not in `buf` (or start < 0)."""
    if start < 0:
        return -1
    ends = [j for j in (buf.find(b"\x07", start), buf.find(b"\x1b\\", start)) if j >= 0]
    return min(ends, default=-1)


class CapturedScreen:
    """A pane's screen as tmux itself rendered it (`capture-pane -p`): no emulation at all.

    tmux already emulates every pane, so reading its rendering costs a string split instead of
    a parse. The title comes from tmux's `#{pane_title}`. The OSC stream is gone from tmux's
    rendering; when the pane's bytes pass by anyway (the pipe intake), `note_bytes` picks out
    the one OSC the rules read, Codex's `OSC 7501` state, with a byte search instead of a parse
    (the capture intake has no bytes: rules on `osc_state` see an empty string there).
    Same interface as PaneScreen where the sidecar uses it.
    """

    def __init__(self, rows: int = 32, cols: int = 120):
        self.lines, self.columns = rows, cols
        self._rows = [""] * rows
        self._changed: set[int] = set()
        self.cursor_row = 0
        self.title = ""
        self.osc_state = ""
        self.dirty = True
        self._seen_meta = ("", "")
        self._text = None
        self._tail = b""  # bytes that may be the start of a report cut by a read

    def note_bytes(self, data: bytes) -> None:
        """Bytes the pane printed (not parsed): keep the last complete `OSC 7501` payload."""
        buf = self._tail + data
        keep = len(_OSC_STATE) - 1
        self._tail = buf[-keep:]
        i = buf.rfind(_OSC_STATE)
        end = _osc_end(buf, i)
        if i >= 0 and end < 0:  # cut by the read: wait for the rest, within bounds
            if len(buf) - i <= _OSC_MAX:
                self._tail = buf[i:]
            i = buf.rfind(_OSC_STATE, 0, i)  # an earlier complete one still counts
            end = _osc_end(buf, i)
        if i < 0 or end < 0:
            return
        payload = buf[i + len(_OSC_STATE):end].decode("utf-8", "replace")
        if payload != self.osc_state:
            self.osc_state = payload
            self.dirty = True

    def update(self, text: str, cursor_row: int, title: str) -> bool:
        """Take a fresh capture; True if anything the rules read changed."""
        if text == self._text and cursor_row == self.cursor_row and title == self.title:
            return False  # the common case at a tick: an idle pane, one string compare
        self._text = text
        rows = [line.rstrip() for line in text.split("\n")[: self.lines]]
        rows += [""] * (self.lines - len(rows))
        changed = {y for y, (a, b) in enumerate(zip(rows, self._rows)) if a != b}
        moved = cursor_row != self.cursor_row or title != self.title
        if changed or moved:
            self._rows = rows
            self._changed |= changed
            self.cursor_row, self.title = cursor_row, title
            self.dirty = True
        return bool(changed or moved)

    def resize(self, rows: int, cols: int) -> None:
        if (rows, cols) != (self.lines, self.columns):
            self.lines, self.columns = rows, cols
            self._rows = (self._rows + [""] * rows)[:rows]
            self._text = None
            self.dirty = True

    def rows(self) -> list[str]:
        return list(self._rows)

    def view(self) -> ScreenView:
        return ScreenView(list(self._rows), self.cursor_row, self.title, self.osc_state)

    def take_view(self) -> ScreenView:
        self.dirty = False
        self._changed.clear()
        self._seen_meta = (self.title, self.osc_state)
        return self.view()

    def take_changed_text(self) -> str:
        parts = [self._rows[y] for y in sorted(self._changed) if y < self.lines]
        self._changed.clear()
        meta = (self.title, self.osc_state)
        if meta != self._seen_meta:
            parts.extend(meta)
            self._seen_meta = meta
        return "\n".join(parts)


def redraw_bytes(capture: str, rows: int, cursor_y: int, cursor_x: int,
                 alternate_on: bool = False, title: str = "",
                 scroll: tuple[int, int] | None = None) -> bytes:
    """Bytes that draw a `capture-pane -p -e` capture on a blank terminal, cursor and scroll
    region (top, bottom rows from 0) included: the start of a recording (or a seeded screen)
    that replays to what tmux showed, and goes on as tmux does with the bytes that follow."""
    out = "\x1b[?1049h" if alternate_on else ""
    if title:
        out += f"\x1b]2;{title}\x07"
    out += "\x1b[H\x1b[2J" + "\r\n".join(capture.split("\n")[:rows]) + "\x1b[0m"
    if scroll is not None and scroll != (0, rows - 1) and 0 <= scroll[0] < scroll[1] < rows:
        out += f"\x1b[{scroll[0] + 1};{scroll[1] + 1}r"  # after the drawing: it homes the cursor
    out += f"\x1b[{cursor_y + 1};{cursor_x + 1}H"
    return out.encode("utf-8", "surrogateescape")


def replay(data: bytes, rows: int = 32, cols: int = 120) -> PaneScreen:
    """A whole capture into a fresh screen (fixtures, `classify`)."""
    screen = PaneScreen(rows, cols)
    screen.feed(data)
    screen.flush()
    return screen
