"""Moving the cursor: the cheap and frequent moves without pyte's per-call sorting and
copying, tab stops, the saved cursor. A part of `Cells` (grid.py)."""
from __future__ import annotations

import bisect

from pyte import modes as mo


class CursorMoves:
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
