"""Writing text into the grid: runs of text, insert mode, text with CR/BS/HT between, blocks
of plain lines, REP. A part of `Cells` (grid.py), which holds the rows."""
from __future__ import annotations

import re
from collections import deque
from functools import lru_cache

from pyte import modes as mo
from wcwidth import wcwidth

_IRM, _DECAWM = mo.IRM, mo.DECAWM
_EDIT = re.compile(r"([\r\x08\t]+)")  # the controls `draw_edits` applies between text pieces


@lru_cache(maxsize=4096)
def _width(ch: str) -> int:
    return wcwidth(ch)


_NARROW_CACHED = 256  # runs up to this long are remembered (a TUI redraws the same rules,
                     # borders and spinner frames over and over); longer ones are checked anew


def _narrow(run: str) -> bool:
    """Every character of `run` takes exactly one cell: box drawing, braille spinners, most
    symbols. Such a run is written a row-slice at a time, as ASCII is."""
    if len(run) <= _NARROW_CACHED:
        return _narrow_cached(run)
    return all(" " <= ch <= "~" or _width(ch) == 1 for ch in run)


@lru_cache(maxsize=4096)
def _narrow_cached(run: str) -> bool:
    return all(" " <= ch <= "~" or _width(ch) == 1 for ch in run)


class Drawing:
    def _stop_x(self, x: int) -> int:
        """The cursor column after text that ended at x: with autowrap off a write that reaches
        the last column leaves the cursor on it (tmux: a BS then moves one left of it), with
        autowrap on the wrap stays pending (x == columns)."""
        return x if x < self.columns or _DECAWM in self.mode else self.columns - 1

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
        one_cell_each = data.isascii() or _narrow(data)
        if x + n <= cols and one_cell_each:
            # the common case: one cell per character (ASCII, box drawing) that fits the row,
            # one slice written in C
            y = cur.y
            line = self.buffer[y]
            if line is self._blank:
                line = self.buffer[y] = line[:]
            line[x:x + n] = data
            cur.x = self._stop_x(x + n)
            self._last_char = data[-1]
            self.dirty.add(y)
            return
        autowrap = _DECAWM in self.mode
        line = self._row(cur.y)
        if one_cell_each and autowrap:
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
        cur.x = self._stop_x(cur.x)
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
                x = self._stop_x(x + len(piece))
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

    def repeat_last(self, count: int | None = None) -> None:  # CSI b (REP)
        # at most to the end of the row, as tmux does: 8 bytes must not draw a whole screen
        cur, ch = self.cursor, self._last_char
        n = min(count or 1, max(self.columns - cur.x, 0))
        if n and " " <= ch <= "~" and _IRM not in self.mode:
            self._row(cur.y)[cur.x:cur.x + n] = [ch] * n
            cur.x = self._stop_x(cur.x + n)
            self.dirty.add(cur.y)
        else:
            self.draw(ch * n)


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
