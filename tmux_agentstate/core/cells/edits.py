"""Row and line edits: cells inserted, deleted, erased on the cursor's row; rows scrolled,
inserted, deleted, erased. Each a few C-level list operations whatever its count (a blank row
is the grid's shared `_blank` until written). A part of `Cells` (grid.py)."""
from __future__ import annotations

from pyte import modes as mo


class Edits:
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

    def scroll_up(self, count: int | None = None) -> None:  # CSI S
        top, bottom = self._region()
        self._shift_rows(top, bottom, -min(count or 1, self.lines))

    def scroll_down(self, count: int | None = None) -> None:  # CSI T
        top, bottom = self._region()
        self._shift_rows(top, bottom, min(count or 1, self.lines))

    def alignment_display(self) -> None:  # ESC # 8
        self.buffer = [["E"] * self.columns for _ in range(self.lines)]
        self._stale = True
