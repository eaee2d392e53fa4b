"""A pane's screen rebuilt from what tmux shows now: how the sidecar seeds a screen it starts
watching (or re-seeds after a flood or a resize), and how a fresh look (`explain`, `answer`),
`record` and `report` start from tmux's rendering."""
from __future__ import annotations

from ..core.screen import PaneScreen, redraw_bytes
from ..tmux import PaneView


def seeded_screen(view: PaneView) -> PaneScreen:
    """A screen rebuilt from what tmux shows now (`capture-pane -p -e` with its cursor, title
    and scroll region, read in the same moment)."""
    screen = PaneScreen(view.rows, view.cols)
    screen.feed(seed_bytes(view))
    screen.title = view.title
    screen.dirty = True
    return screen


def seed_bytes(view: PaneView) -> bytes:
    """Bytes that redraw `view` on an empty terminal of its size."""
    return redraw_bytes(view.text, view.rows, view.cursor_y, view.cursor_x, view.alternate_on,
                        view.title, (view.scroll_top, view.scroll_bottom))
