"""PaneScreen: the emulated screen of one pane, the only thing the classifier reads.

`vtstream.ByteStream` parses the bytes, `cells.Cells` holds the grid (text only). On top of
them this screen remembers the title (OSC 0/2), the agent's own reports (`OSC 7501;state=…`:
every one, in order, into a `StatusBoard` with the time its bytes came, which the intake gives:
no clock here), when output last arrived, and what changed since the last look.
CapturedScreen is the same interface over tmux's own rendering.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from .cells import Cells
from .status import MAX_PAYLOAD, StatusBoard
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


# deferred bytes parsed at once past this many, whoever reads the screen: a catch-up costs
# what the intake's own parse of one read may (milliseconds), never more
DEFER_MAX = 32768


class PaneScreen:
    """Raw pane bytes in, visible rows / cursor / title / last agent OSC out.

    Bytes may be fed now (`feed`) or later (`defer`): deferred ones are parsed in one go when
    anything reads the screen, which every reader below does first (`_catch_up`). Most of a
    parse's cost is per call, not per byte: a busy pane's 10 small writes a second parsed as
    they come cost twice what one parse of them all costs."""

    def __init__(self, rows: int = 32, cols: int = 120):
        self._cells = Cells(cols, rows)
        self._cells.osc = self._osc  # the stream reports OSCs to the screen
        self._stream = ByteStream(self._cells)
        self._title = ""
        # the agent's own reports (OSC 7501), and the payload of the last root one taken (e.g.
        # "state=blocked:app=codex"; "" once cleared): the `osc_state` region rules read
        self.status = StatusBoard()
        self.osc_state = ""
        self._bytes_at = 0.0     # unix time the bytes being fed came (the intake's clock)
        self._scan: OscScan | None = None  # a flood's bytes, only searched (note_bytes)
        self.last_output = 0.0   # time.monotonic() of the last non-empty feed
        self.dirty = True        # changed since the last `take_view()`
        self._seen_meta = ("", "")
        self._seen_rows: list[str] = []  # the rows at the last look
        self._deferred: list[bytes] = []   # bytes not parsed yet (`defer`), in order
        self._deferred_size = 0
        self._deferred_at = 0.0
        self._last_bytes = b""  # the end of the last bytes in: a report's start cut by a read
        # seconds spent parsing bytes since `take_parse_seconds`, deferred ones included
        # wherever they were caught up: what the intake's flood test counts
        self._parse_seconds = 0.0

    # -- input ------------------------------------------------------------------------------------
    def feed(self, data: bytes, at: float = 0.0) -> bool:
        """Bytes the pane printed at unix time `at`; True when they changed the agent's root
        report (a record taken, replaced or cleared)."""
        if not data:
            return False
        serial = self.status.serial  # before the catch-up: a report in it is news too
        self._catch_up()
        self._bytes_at = at
        self._last_bytes = _tail(self._last_bytes, data)
        started = time.perf_counter()
        self._stream.feed(data)
        self._parse_seconds += time.perf_counter() - started
        self.last_output = time.monotonic()
        self.dirty = True
        return self.status.serial != serial

    def defer(self, data: bytes, at: float = 0.0) -> bool:
        """Bytes whose parse can wait until the screen is next read (the intake decides: a
        working agent's bytes that hold no word of a prompt). Bytes that may hold the agent's
        own report are fed at once instead, so it is taken with the time it came: as `feed`."""
        if not data:
            return False
        if (_OSC_STATE in data or _OSC_STATE in self._last_bytes + data[:len(_OSC_STATE)]
                or (not self._deferred and self._stream.in_string)):  # a report's rest, maybe
            return self.feed(data, at)
        self._last_bytes = _tail(self._last_bytes, data)
        self._deferred.append(data)
        self._deferred_size += len(data)
        self._deferred_at = at
        self.last_output = time.monotonic()
        self.dirty = True
        if self._deferred_size > DEFER_MAX:
            self._catch_up()
        return False

    def _catch_up(self) -> None:
        """Parse the deferred bytes, before anything reads the screen or more bytes come."""
        if self._deferred:
            data = self._deferred[0] if len(self._deferred) == 1 else b"".join(self._deferred)
            self._deferred, self._deferred_size = [], 0
            self._bytes_at = self._deferred_at
            started = time.perf_counter()
            self._stream.feed(data)
            self._parse_seconds += time.perf_counter() - started

    def take_parse_seconds(self) -> float:
        """Seconds spent parsing since the last call: a look's catch-up counts as a feed does."""
        spent, self._parse_seconds = self._parse_seconds, 0.0
        return spent

    def note_bytes(self, data: bytes, at: float) -> bool:
        """Bytes not parsed (a flood, dropped): their reports still count, found by search."""
        if self._scan is None:
            self._scan = OscScan()
        return take_reports(self, self._scan.payloads(data), at)

    def carry_reports(self, other: "PaneScreen | CapturedScreen") -> None:
        """Go on with `other`'s reports: the same agent's screen, seeded again from tmux (a
        resize, a flood), which keeps no trace of them."""
        self.status, self.osc_state = other.status, other.osc_state

    def feed_text(self, text: str) -> None:
        """For seeding from `capture-pane -p -e`, which tmux already decoded."""
        self._catch_up()
        self._stream.feed_text(text)
        self.dirty = True

    def flush(self) -> None:
        """End of a capture: a truncated UTF-8 tail becomes U+FFFD."""
        self._catch_up()
        self._stream.flush()

    def _osc(self, code: str, payload: str) -> None:
        if code in ("0", "2"):
            self._title = payload
        elif code == "7501":
            take_reports(self, (payload,), self._bytes_at)

    def resize(self, rows: int, cols: int) -> None:
        if (rows, cols) != (self.lines, self.columns):
            self._catch_up()  # drawn at the old size
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
    def title(self) -> str:
        self._catch_up()
        return self._title

    @title.setter
    def title(self, title: str) -> None:
        self._catch_up()
        self._title = title

    @property
    def cursor(self) -> tuple[int, int]:
        self._catch_up()
        return self._cells.cursor.y, self._cells.cursor.x

    @property
    def on_alt_screen(self) -> bool:
        self._catch_up()
        return self._cells.on_alt_screen

    @property
    def invalid_utf8(self) -> int:
        self._catch_up()
        return self._stream.replacements

    @property
    def truncated_tail(self) -> bool:
        """The last flush found the input cut inside a UTF-8 sequence."""
        return self._stream.truncated_tail

    def rows(self) -> list[str]:
        self._catch_up()
        return self._cells.rows()

    def view(self) -> ScreenView:
        rows = self.rows()
        return ScreenView(rows, self._cells.cursor.y, self._title, self.osc_state)

    def take_view(self) -> ScreenView:
        """The view, marking the screen clean (the sweep classifies dirty screens only)."""
        self.dirty = False
        view = self.view()
        self._seen_rows = list(view.rows)
        self._seen_meta = (self._title, self.osc_state)
        return view

    def take_changed_text(self) -> str:
        """Only what changed since the last look: changed rows, and the title / agent OSC if
        they changed. A cheap pre-check (`Manifest.blocked_hint`) runs on this alone."""
        # a row whose text the last look saw on any row is not new: output that scrolls moves
        # every row, and a prompt's words scrolling by in a busy agent's transcript hit the
        # pre-check at every look (most of 50 busy panes' classifications)
        rows, seen = self.rows(), set(self._seen_rows)
        parts = [row for row in rows if row not in seen]
        self._seen_rows = rows
        meta = (self._title, self.osc_state)
        if meta != self._seen_meta:
            parts.extend(meta)
            self._seen_meta = meta
        return "\n".join(parts)


def take_reports(screen: "PaneScreen | CapturedScreen", payloads, at: float) -> bool:
    """`OSC 7501` payloads, in order, into the screen's board; True when the root report
    changed. `osc_state` follows the root record (children never decide)."""
    changed = False
    for payload in payloads:
        if screen.status.take(payload, at):
            changed = True
            screen.osc_state = payload if screen.status.root is not None else ""
    if changed:
        screen.dirty = True
    return changed


_OSC_STATE = b"\x1b]7501;"  # an agent's own state report; tmux keeps no trace of it

# where an OSC ends, as vtstream ends it: BEL or an ESC (ST, or the next sequence's start);
# CAN and SUB abandon it
_OSC_END = re.compile(rb"[\x07\x1b\x18\x1a]")


def _tail(before: bytes, data: bytes) -> bytes:
    """The last bytes in, as many as a report's start: a start cut over several short reads
    ("\x1b]75", "0", "1;state=…") is still seen whole."""
    n = len(_OSC_STATE)
    return data[-n:] if len(data) >= n else (before + data)[-n:]


class OscScan:
    """Every complete `OSC 7501` payload in raw bytes, in order, found by a search instead of
    a parse, across reads: one cut by a read waits for the rest while it is no longer than a
    payload may be (MAX_PAYLOAD, as vtstream keeps it), then it is dropped."""

    def __init__(self):
        self._tail = b""  # the start of a report cut by a read

    def payloads(self, data: bytes) -> list[str]:
        buf, self._tail, pos, found = self._tail + data, b"", 0, []
        while True:
            i = buf.find(_OSC_STATE, pos)
            if i < 0:
                # an ESC near the end may begin the next report's prefix
                j = buf.rfind(b"\x1b", max(pos, len(buf) - len(_OSC_STATE) + 1))
                if j >= 0 and _OSC_STATE.startswith(buf[j:]):
                    self._tail = buf[j:]
                return found
            start = i + len(_OSC_STATE)
            end = _OSC_END.search(buf, start)
            if end is None:  # cut by the read (no later report can be complete either)
                if len(buf) - start <= MAX_PAYLOAD:
                    self._tail = buf[i:]
                return found
            ender = end.group()
            if ender in (b"\x07", b"\x1b"):
                found.append(buf[start:end.start()].decode("utf-8", "replace"))
            pos = end.start() if ender == b"\x1b" else end.end()


class CapturedScreen:
    """A pane's screen as tmux itself rendered it (`capture-pane -p`): no emulation at all.

    tmux already emulates every pane, so reading its rendering costs a string split instead of
    a parse. The title comes from tmux's `#{pane_title}`. The OSC stream is gone from tmux's
    rendering; when the pane's bytes pass by anyway (the pipe intake), `note_bytes` picks out
    the agent's own reports (`OSC 7501`) with a byte search instead of a parse. The capture
    intake reads no bytes: it never sees a report (its board stays empty, `osc_state` "").
    Same interface as PaneScreen where the sidecar uses it.
    """

    def __init__(self, rows: int = 32, cols: int = 120):
        self.lines, self.columns = rows, cols
        self._rows = [""] * rows
        self._changed: set[int] = set()
        self.cursor_row = 0
        self.title = ""
        self.status = StatusBoard()  # the agent's own reports (OSC 7501), from `note_bytes`
        self.osc_state = ""
        self.dirty = True
        self._seen_meta = ("", "")
        self._text = None
        self._scan = OscScan()

    def note_bytes(self, data: bytes, at: float = 0.0) -> bool:
        """Bytes the pane printed at unix time `at` (not parsed): every complete `OSC 7501`
        report in them, in order. True when the root report changed."""
        return take_reports(self, self._scan.payloads(data), at)

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
