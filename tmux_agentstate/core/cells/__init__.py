"""Cells: the emulated terminal grid behind PaneScreen, text only.

grid.py holds the grid (rows, the alternate screen, resizing); draw.py writes text into it,
edits.py moves rows and cells, cursor.py moves the cursor. Each of the three is a part of
the one `Cells` class, with the grid's state.

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
from .grid import Cells

__all__ = ["Cells"]
