"""PaneScreen: the emulated screen of one pane, the only thing the classifier reads.

`vtstream.ByteStream` parses the bytes, `cells.Cells` holds the grid (text only). On top of
them this screen remembers the title (OSC 0/2), the last agent-state OSC (`OSC 7501;state=…`,
Codex), when output last arrived, and what changed since the last look.
CapturedScreen is the same interface over tmux's own rendering.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .cells import Cells
from .vtstream import ByteStream


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
        self._cells = Cells(cols, rows)
        self._cells.osc = self._osc  # the stream reports OSCs to the screen
        self._stream = ByteStream(self._cells)
        self.title = ""
        self.osc_state = ""      # payload of the last `OSC 7501;…` (e.g. "state=blocked:app=codex")
        self.last_output = 0.0   # time.monotonic() of the last non-empty feed
        self.dirty = True        # changed since the last `take_view()`
        self._seen_meta = ("", "")
        self._seen_rows: list[str] = []  # the rows at the last look
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
        self._seen_rows = list(view.rows)
        self._seen_meta = (self.title, self.osc_state)
        return view

    def take_changed_text(self) -> str:
        """Only what changed since the last look: changed rows, and the title / agent OSC if
        they changed. A cheap pre-check (`Manifest.blocked_hint`) runs on this alone."""
        rows, seen = self._cells.rows(), self._seen_rows
        parts = [row for y, row in enumerate(rows) if y >= len(seen) or row != seen[y]]
        self._seen_rows = rows
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
