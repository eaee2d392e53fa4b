"""The grid: a list of rows, each a list of one string per column; the alternate screen;
resizing; the rows as text. `Cells` is this grid with its three parts: drawing (draw.py),
edits (edits.py), cursor moves (cursor.py); pyte's `Screen` supplies modes, margins and the
rest of the cursor logic."""
from __future__ import annotations

import pyte
from pyte import modes as mo

from .cursor import CursorMoves
from .draw import Drawing
from .edits import Edits

_ALT_SAVE_CURSOR = 1049 << 5
_ALT_MODES = {1049 << 5, 1047 << 5, 47 << 5}
# no text effect here: tmux has no 132-column mode (honouring it would resize us); reverse
# video changes colours only
_IGNORED_MODES = {mo.DECCOLM, mo.DECSCNM}


class Cells(Drawing, Edits, CursorMoves, pyte.Screen):
    """pyte's screen with a list grid; text only."""

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

    def select_graphic_rendition(self, *attrs: int) -> None:
        pass  # text only

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
