"""Cells: the emulated terminal grid behind PaneScreen, text only.

pyte's `Screen` supplies the cursor, modes, margins and tab logic; the cells are kept here in
a shape where every edit is a few C-level list operations, whatever its size:
- the grid is a list of rows, each row a list of one string per column (a wide character's
  second column is "", a combining mark joins its base character's string);
- a blank row is one shared list, `self._blank`, until something writes to it (`_row` copies
  it then): clearing the screen, scrolling in new rows, and erasing lines store references;
- scrolling, inserting and deleting lines are one `del` and one slice insert on the row list;
  inserting, deleting and erasing characters are slice edits on the row.
So 1 MB of any row or line edit costs one dispatch per sequence, never a loop over columns or
rows in Python (pyte's own grid, a dict of dicts, looped over both).

On top of stock pyte the grid
- models the alternate screen (`CSI ? 1049/1047/47 h/l`): fullscreen TUIs draw there, and the
  shell's main screen must come back untouched when they exit;
- keeps drawing after zero-width characters (U+FE0F, U+200D): stock `draw` stops at the first
  one and silently drops the rest of the run;
- draws blocks of plain lines at once (`draw_lines`): one scroll for the block, only the lines
  that stay on screen written.
"""
from __future__ import annotations

import bisect
import re
from collections import deque
from functools import lru_cache

import pyte
from pyte import modes as mo
from wcwidth import wcwidth

_ALT_SAVE_CURSOR = 1049 << 5
_ALT_MODES = {1049 << 5, 1047 << 5, 47 << 5}
# no text effect here: tmux has no 132-column mode (honouring it would resize us); reverse
# video changes colours only
_IGNORED_MODES = {mo.DECCOLM, mo.DECSCNM}
_IRM, _DECAWM = mo.IRM, mo.DECAWM
_EDIT = re.compile(r"([\r\x08\t]+)")  # the controls `draw_edits` applies between text pieces


@lru_cache(maxsize=4096)
def _width(ch: str) -> int:
    return wcwidth(ch)


class Cells(pyte.Screen):
    """pyte's screen with a list grid and the fixes above; text only."""

    def __init__(self, columns: int, lines: int):
        self._alt_saved: tuple | None = None  # (main grid, main cursor) while on the alt screen
        self._last_char = " "
        self._blank = [" "] * columns
        self._text: list[str] = [""] * lines  # text of each row, rebuilt from the dirty rows
        self._stale = True  # rows moved: rebuild every row's text at the next look
        self._tab_list: list[int] | None = None  # the tab stops, sorted (None: to be sorted)
        self._saved: tuple | None = None  # the cursor saved by ESC 7
        super().__init__(columns, lines)

    def reset(self) -> None:
        super().reset()
        self.buffer = [self._blank] * self.lines
        self._stale = True
        self._tab_list = None
        self._saved = None

    def _row(self, y: int) -> list[str]:
        """Row y, ready to be written (a shared blank row is copied first)."""
        line = self.buffer[y]
        if line is self._blank:
            line = self.buffer[y] = line[:]
        return line

    # -- drawing --------------------------------------------------------------------------------
    def draw(self, data: str) -> None:
        if not data:
            return
        if _IRM in self.mode:
            self._draw_inserting(data)
            return
        cur, cols = self.cursor, self.columns
        if cur.x >= cols and " " <= data[0] <= "~" and _DECAWM in self.mode:
            cur.x = 0  # the wrap the last draw left pending (a combining mark would not wrap)
            self.index()
        x, n = cur.x, len(data)
        if x + n <= cols and data.isascii():
            # the common case: ASCII that fits the row, one slice written in C
            y = cur.y
            line = self.buffer[y]
            if line is self._blank:
                line = self.buffer[y] = line[:]
            line[x:x + n] = data
            cur.x = x + n
            self._last_char = data[-1]
            self.dirty.add(y)
            return
        autowrap = _DECAWM in self.mode
        line = self._row(cur.y)
        if data.isascii() and autowrap:
            # every char one cell, a row-slice at a time
            pos = 0
            while pos < n:
                if cur.x >= cols:
                    self.dirty.add(cur.y)
                    cur.x = 0
                    self.index()
                    line = self._row(cur.y)
                take = min(n - pos, cols - cur.x)
                line[cur.x:cur.x + take] = data[pos:pos + take]
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
                    if x and line[x] == "":  # the stub after a wide character
                        x -= 1
                    line[x] += ch
                continue
            if cur.x + w > cols:
                if autowrap:
                    self.dirty.add(cur.y)
                    cur.x = 0
                    self.index()
                    line = self._row(cur.y)
                else:
                    cur.x = max(0, cols - w)
            line[cur.x] = ch
            if w == 2 and cur.x + 1 < cols:
                line[cur.x + 1] = ""
            cur.x += w
            self._last_char = ch
        self.dirty.add(cur.y)

    def _draw_inserting(self, data: str) -> None:
        """Insert mode (IRM): the row right of the cursor moves once per row of the run, not
        once per character."""
        i, n, cols = 0, len(data), self.columns
        while i < n:
            cur = self.cursor
            w = 1 if " " <= data[i] <= "~" else max(_width(data[i]), 0)
            if w and cur.x + w > cols:  # wrap first, as draw would
                if mo.DECAWM in self.mode:
                    self.dirty.add(cur.y)
                    cur.x = 0
                    self.index()
                else:
                    cur.x = max(0, cols - w)
            room, width, j = cols - self.cursor.x, 0, i
            while j < n:
                w = 1 if " " <= data[j] <= "~" else max(_width(data[j]), 0)
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

    def draw_edits(self, run: str) -> None:
        """Text with CR, BS and HT between (a progress line redrawn in place, overstrikes,
        tabbed columns): the controls move the cursor inline, not one dispatch each; ASCII
        that fits the row is written inline too, the rest (wide, wrapping, insert mode) goes
        through `draw`."""
        cur, cols = self.cursor, self.columns
        if len(run) == 1:  # a lone control
            x = cur.x
            cur.x = (0 if run == "\r" else self._next_tab(x) if run == "\t"
                     else max(0, min(x, cols) - 1))
            return
        inline = _IRM not in self.mode
        line, y, x = self._row(cur.y), cur.y, cur.x
        parts = _EDIT.split(run)  # text, controls, text, controls, ..., text
        parts.append("")
        pairs = iter(parts)
        for piece, controls in zip(pairs, pairs):
            if not piece:
                pass
            elif inline and x + len(piece) <= cols and piece.isascii():
                line[x:x + len(piece)] = piece
                x += len(piece)
                self._last_char = piece[-1]
                self.dirty.add(y)
            else:
                cur.x = x
                self.draw(piece)
                y, x = cur.y, cur.x
                line = self._row(y)
            if controls == "\r":
                x = 0
            elif controls == "\x08":
                x = max(0, min(x, cols) - 1)
            else:
                for c in controls:
                    if c == "\r":
                        x = 0
                    elif c == "\t":
                        x = self._next_tab(x)
                    else:
                        x = max(0, min(x, cols) - 1)
        cur.x = x

    # -- cursor: the cheap and frequent moves, without pyte's per-call sorting and copying
    def _next_tab(self, x: int) -> int:
        if x >= self.columns - 1:
            return x  # on the last column, or a wrap pending: a tab does nothing (tmux)
        stops = self._tab_list
        if stops is None:
            stops = self._tab_list = sorted(self.tabstops)
        i = bisect.bisect_right(stops, x)
        return stops[i] if i < len(stops) else self.columns - 1

    def tab(self) -> None:
        self.cursor.x = self._next_tab(self.cursor.x)

    def set_tab_stop(self) -> None:
        super().set_tab_stop()
        self._tab_list = None

    def clear_tab_stop(self, how: int = 0) -> None:
        super().clear_tab_stop(how)
        self._tab_list = None

    def cursor_position(self, line: int | None = None, column: int | None = None) -> None:
        if self.margins is not None and mo.DECOM in self.mode:
            super().cursor_position(line, column)  # relative to the region
            return
        cur = self.cursor
        cur.x = min((column or 1) - 1, self.columns - 1)
        cur.y = min((line or 1) - 1, self.lines - 1)

    def cursor_up(self, count: int | None = None) -> None:  # stops at the top margin
        top = self.margins.top if self.margins else 0
        self.cursor.y = max(self.cursor.y - (count or 1), top)

    def cursor_down(self, count: int | None = None) -> None:  # stops at the bottom margin
        bottom = self.margins.bottom if self.margins else self.lines - 1
        self.cursor.y = min(self.cursor.y + (count or 1), bottom)

    def cursor_forward(self, count: int | None = None) -> None:
        self.cursor.x = min(self.cursor.x + (count or 1), self.columns - 1)

    def cursor_back(self, count: int | None = None) -> None:
        x = self.cursor.x
        self.cursor.x = max(0, min(x, self.columns) - (count or 1))

    def backspace(self) -> None:
        x = self.cursor.x
        self.cursor.x = max(0, min(x, self.columns) - 1)

    def save_cursor(self) -> None:  # ESC 7, CSI s
        # one saved cursor, as in tmux and xterm: pyte kept a stack, which ESC 7 repeated grew
        # without bound, and a restore consumed it
        self._saved = (self.cursor.x, self.cursor.y, self.g0_charset, self.g1_charset,
                       self.charset, mo.DECOM in self.mode, mo.DECAWM in self.mode)

    def restore_cursor(self) -> None:  # ESC 8, CSI u
        if self._saved is None:
            self.mode.discard(mo.DECOM)  # nothing saved: home, origin mode off
            self.cursor_position()
            return
        x, y, self.g0_charset, self.g1_charset, self.charset, origin, wrap = self._saved
        if origin:
            self.mode.add(mo.DECOM)
        if wrap:
            self.mode.add(mo.DECAWM)
        top, bottom = self._region()
        self.cursor.x, self.cursor.y = min(x, self.columns - 1), min(max(y, top), bottom)

    # -- row edits: slice edits on the cursor's row --------------------------------------------
    def insert_characters(self, count: int | None = None) -> None:  # CSI @
        self._shift_cells(min(count or 1, self.columns))

    def delete_characters(self, count: int | None = None) -> None:  # CSI P
        self._shift_cells(-min(count or 1, self.columns))

    def _shift_cells(self, n: int) -> None:
        """The cursor row's cells from the cursor on move n columns (right if positive);
        cells pushed past the row's end are gone, the columns left behind are blank."""
        y, x, cols = self.cursor.y, min(self.cursor.x, self.columns), self.columns
        if self.buffer[y] is self._blank:
            return
        line = self._row(y)
        self.dirty.add(y)
        if n > 0:
            line[x:x] = [" "] * n
            del line[cols:]
        else:
            del line[x:x - n]
            line.extend([" "] * (cols - len(line)))

    def _erase(self, y: int, start: int, stop: int) -> None:
        if self.buffer[y] is self._blank:
            return
        line = self._row(y)
        start, stop = max(start, 0), min(stop, self.columns)
        if start < stop:
            line[start:stop] = self._blank[start:stop]
            self.dirty.add(y)

    def erase_characters(self, count: int | None = None) -> None:  # CSI X
        x = self.cursor.x
        self._erase(self.cursor.y, x, x + (count or 1))

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:  # CSI K
        x = self.cursor.x
        if how == 0:
            self._erase(self.cursor.y, x, self.columns)
        else:
            self._erase(self.cursor.y, 0, x + 1 if how == 1 else self.columns)

    def erase_in_display(self, how: int = 0, *args, **kwargs) -> None:  # CSI J
        y = self.cursor.y
        start, stop = {0: (y + 1, self.lines), 1: (0, y)}.get(how, (0, self.lines))
        if start < stop:
            self.buffer[start:stop] = [self._blank] * (stop - start)
            self._stale = True
        if how in (0, 1):
            self.erase_in_line(how)

    def repeat_last(self, count: int | None = None) -> None:  # CSI b (REP)
        # at most to the end of the row, as tmux does: 8 bytes must not draw a whole screen
        cur, ch = self.cursor, self._last_char
        n = min(count or 1, max(self.columns - cur.x, 0))
        if n and " " <= ch <= "~" and _IRM not in self.mode:
            self._row(cur.y)[cur.x:cur.x + n] = [ch] * n
            cur.x += n
            self.dirty.add(cur.y)
        else:
            self.draw(ch * n)

    # -- rows: scrolls and line edits are one `del` and one insert on the row list, whatever
    # the count (pyte moved the rows one by one, and scrolled once per linefeed)
    def _shift_rows(self, start: int, stop: int, n: int) -> None:
        """Rows start..stop (inclusive) move by n (down if positive); rows pushed out of that
        span are gone, the rows left behind are blank; rows outside it stay."""
        buf = self.buffer
        self._stale = True
        if n == 1:  # the usual count: no slices
            del buf[stop]
            buf.insert(start, self._blank)
            return
        if n == -1:
            del buf[start]
            buf.insert(stop, self._blank)
            return
        k = min(abs(n), stop - start + 1)
        if n < 0:
            del buf[start:start + k]
            buf[stop - k + 1:stop - k + 1] = [self._blank] * k
        else:
            del buf[stop - k + 1:stop + 1]
            buf[start:start] = [self._blank] * k

    def _region(self) -> tuple[int, int]:
        margins = self.margins
        return (margins.top, margins.bottom) if margins else (0, self.lines - 1)

    def index(self) -> None:
        # as tmux: the region scrolls when the cursor is on its bottom row; anywhere else the
        # cursor goes down, below the region too (pyte stopped it at the region's bottom)
        cur, margins = self.cursor, self.margins
        bottom = margins.bottom if margins else self.lines - 1
        if cur.y == bottom:
            buf = self.buffer
            del buf[margins.top if margins else 0]
            buf.insert(bottom, self._blank)
            self._stale = True
        elif cur.y < self.lines - 1:
            cur.y += 1

    def reverse_index(self) -> None:
        cur, margins = self.cursor, self.margins
        top = margins.top if margins else 0
        if cur.y == top:
            self._shift_rows(top, margins.bottom if margins else self.lines - 1, 1)
        elif cur.y > 0:
            cur.y -= 1

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
                self._shift_rows(top, bottom, -(count - down))
        if mo.LNM in self.mode:
            self.carriage_return()

    def draw_lines(self, block: str) -> None:
        """Printable ASCII lines, each ended by LF or CR LF: as drawn one by one (wrapping
        included), but with one scroll for the whole block and only the lines that stay on
        screen written (a log of short lines cost a scroll per line)."""
        top, bottom = self._region()
        y0, cols = self.cursor.y, self.columns
        parts = block.split("\n")
        parts.pop()  # the block ends with LF
        if (mo.IRM in self.mode or mo.LNM in self.mode or mo.DECAWM not in self.mode
                or not top <= y0 <= bottom):
            for part in parts:  # the general way: insert mode, no autowrap, outside the region
                text = part[:-1] if part.endswith("\r") else part
                if text:
                    self.draw(text)
                if text is not part:
                    self.carriage_return()
                self.linefeed()
            return
        # Where each line lands, in rows counted from the cursor's (v): a wrap or an LF is the
        # next row. Each write lands on a row of its own, so the last span of them holds every
        # one that can still be on screen.
        writes: deque = deque(maxlen=bottom - top + 1)
        x, v, last = self.cursor.x, 0, ""
        for part in parts:
            cr = part.endswith("\r")
            text = part[:-1] if cr else part
            if text:
                last = text
                if x >= cols:  # a wrap left pending by the line before
                    v, x = v + 1, 0
                end = x + len(text)
                if end <= cols:
                    writes.append((v, x, text))
                    x = end
                else:
                    first = cols - x
                    writes.append((v, x, text[:first]))
                    for p in range(first, len(text), cols):
                        v += 1
                        writes.append((v, 0, text[p:p + cols]))
                    x = (len(text) - first - 1) % cols + 1
            if cr:
                x = 0
            v += 1
        scrolls = max(0, y0 + v - bottom)
        if scrolls:
            self._shift_rows(top, bottom, -scrolls)
        for wv, wx, text in writes:
            row = y0 + wv - scrolls
            if row >= top:
                self._row(row)[wx:wx + len(text)] = text
                self.dirty.add(row)
        self.cursor.x, self.cursor.y = x, y0 + v - scrolls
        if last:
            self._last_char = last[-1]

    def insert_lines(self, count: int | None = None) -> None:  # CSI L
        top, bottom = self._region()
        cur = self.cursor
        if top <= cur.y <= bottom:
            self._shift_rows(cur.y, bottom, count or 1)
            cur.x = 0

    def delete_lines(self, count: int | None = None) -> None:  # CSI M
        top, bottom = self._region()
        cur = self.cursor
        if top <= cur.y <= bottom:
            self._shift_rows(cur.y, bottom, -(count or 1))
            cur.x = 0

    def select_graphic_rendition(self, *attrs: int) -> None:
        pass  # text only

    def scroll_up(self, count: int | None = None) -> None:  # CSI S
        top, bottom = self._region()
        self._shift_rows(top, bottom, -min(count or 1, self.lines))

    def scroll_down(self, count: int | None = None) -> None:  # CSI T
        top, bottom = self._region()
        self._shift_rows(top, bottom, min(count or 1, self.lines))

    def alignment_display(self) -> None:  # ESC # 8
        self.buffer = [["E"] * self.columns for _ in range(self.lines)]
        self._stale = True

    # -- modes: the alternate screen --------------------------------------------------------------
    def set_mode(self, *modes: int, **kwargs) -> None:
        if kwargs.get("private"):
            shifted = {m << 5 for m in modes}
            if shifted & _ALT_MODES and self._alt_saved is None:
                self._alt_saved = (self.buffer, self.cursor)
                if _ALT_SAVE_CURSOR in shifted:
                    self.cursor = pyte.screens.Cursor(self.cursor.x, self.cursor.y)
                self.buffer = [self._blank] * self.lines
                self._stale = True
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
                self._stale = True
            modes = tuple(m for m in modes if (m << 5) not in _ALT_MODES | _IGNORED_MODES)
        super().reset_mode(*modes, **kwargs)

    @property
    def on_alt_screen(self) -> bool:
        return self._alt_saved is not None

    def resize(self, lines: int | None = None, columns: int | None = None) -> None:
        lines, columns = lines or self.lines, columns or self.columns
        if (lines, columns) == (self.lines, self.columns):
            return
        old = self._blank
        blank = self._blank = [" "] * columns

        def fit(grid: list) -> list:
            if lines < len(grid):
                grid = grid[len(grid) - lines:]  # dropped from the top, as pyte does
            grid = [blank if row is old else (row + blank)[:columns] for row in grid]
            return grid + [blank] * (lines - len(grid))

        self.buffer = fit(self.buffer)
        if self._alt_saved is not None:  # the hidden main screen too
            self._alt_saved = (fit(self._alt_saved[0]), self._alt_saved[1])
        self.lines, self.columns = lines, columns
        self.set_margins()
        self.tabstops = set(range(8, columns, 8))  # as tmux resets them
        self._tab_list = None
        self.cursor.x = min(self.cursor.x, self.columns - 1)
        self.cursor.y = min(self.cursor.y, self.lines - 1)
        self._stale = True

    def rows(self) -> list[str]:
        """Visible rows as text, trailing blanks stripped. Only rows written since the last
        call are rebuilt (a spinner redraws one row, not the whole screen), all of them after
        rows moved."""
        text, buf, blank = self._text, self.buffer, self._blank
        if self._stale or len(text) != self.lines:
            text[:] = ["" if row is blank else "".join(row).rstrip() for row in buf]
            self._stale = False
        else:
            for y in self.dirty:
                if 0 <= y < self.lines:
                    row = buf[y]
                    text[y] = "" if row is blank else "".join(row).rstrip()
        self.dirty.clear()
        return list(text)
