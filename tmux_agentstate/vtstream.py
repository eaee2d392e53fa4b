"""Bytes → terminal events, dispatched to a pyte-style screen.

pyte's own `Stream` parses one character at a time through a generator and mis-reads several
sequences real agent CLIs send (kitty keyboard `CSI < u` / `CSI > 5 u`, DCS strings such as
tmux passthrough, colon sub-parameters `CSI 38:2::r:g:b m`, OSC codes longer than one digit
such as Codex's `OSC 7501`): it prints their tails as stray text. This stream tokenizes whole
sequences with one regex, so text runs are handed to `draw` in one call, sequences it does not
model are skipped whole, and a sequence split across chunks waits for the next chunk.

It keeps pyte's split: this module parses and dispatches, the screen holds cells.
"""
from __future__ import annotations

import codecs
import re
from typing import Protocol

# One token at a time, tried in order. Text excludes C0/C1 controls and DEL. A string
# sequence (OSC, DCS, APC, PM, SOS) is only opened here; its body is found by `_string`.
_TOKEN = re.compile(
    r"(?P<lines>(?:[ -~]*\r\n){2,})"  # plain lines, as a tty's ONLCR delivers them: one batch
    r"|(?P<text>[^\x00-\x1f\x7f-\x9f]+)"
    r"|\x1b\[(?P<cp>[<=>?]?)(?P<cargs>[0-9:;<=>?]*)(?P<ci>[ -/]*)(?P<cf>[@-~])"
    r"|\x1b(?P<str>[\]P_^X])"
    r"|\x1b(?P<ei>[ -/]*)(?P<ef>(?![\[\]P_^X])[0-~])"
    r"|(?P<lfs>\n\n+)"
    r"|(?P<ctl>[\x00-\x1a\x1c-\x1f\x7f-\x9f])",
    re.S,
)
# What an unfinished sequence at the end of a chunk can look like: wait for more bytes.
_PARTIAL = re.compile(r"\x1b(?:\[[0-9:;<=>?]*[ -/]*|[ -/]*)?\Z", re.S)
# Where each kind of string ends (CAN and SUB abort any): an OSC at BEL or an ESC (ST, or
# the start of the next sequence); a DCS at ST alone (tmux passthrough doubles the ESCs of
# its payload); APC, PM and SOS at any ESC, as tmux ends them.
_STRING_END = {"]": re.compile(r"[\x07\x1b\x18\x1a]"), "P": re.compile(r"\x1b\\|[\x18\x1a]"),
               "_": re.compile(r"[\x1b\x18\x1a]"), "^": re.compile(r"[\x1b\x18\x1a]"),
               "X": re.compile(r"[\x1b\x18\x1a]")}
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_G_LINES, _G_TEXT, _G_CP, _G_CARGS, _G_CI, _G_CF, _G_STR, _G_EI, _G_EF, _G_LFS, _G_CTL = (
    _TOKEN.groupindex[g] for g in ("lines", "text", "cp", "cargs", "ci", "cf", "str", "ei", "ef",
                                   "lfs", "ctl"))
_NUMERIC = re.compile(r"[0-9:;]*\Z")
_MAX_PENDING = 4096  # a CSI or ESC sequence longer than this is garbage: drop its ESC, go on
_MAX_ARGS = 64       # CSI parameters longer than this (ESC[99999999…@) are ignored whole
_OSC_MAX = 4096      # an OSC's payload kept (a title, a state); the rest is read and dropped

_CSI = {
    "@": "insert_characters", "A": "cursor_up", "B": "cursor_down", "C": "cursor_forward",
    "D": "cursor_back", "E": "cursor_down1", "F": "cursor_up1", "G": "cursor_to_column",
    "H": "cursor_position", "J": "erase_in_display", "K": "erase_in_line", "L": "insert_lines",
    "M": "delete_lines", "P": "delete_characters", "X": "erase_characters", "a": "cursor_forward",
    "d": "cursor_to_line", "e": "cursor_down", "f": "cursor_position", "g": "clear_tab_stop",
    "h": "set_mode", "l": "reset_mode", "r": "set_margins", "`": "cursor_to_column",
    "S": "scroll_up", "T": "scroll_down", "s": "save_cursor", "u": "restore_cursor",
    "b": "repeat_last",
}  # "m" (SGR) is left out on purpose
_ESC = {"7": "save_cursor", "8": "restore_cursor", "D": "index", "E": "linefeed",
        "M": "reverse_index", "c": "reset", "H": "set_tab_stop"}
_CTL = {"\r": "carriage_return", "\n": "linefeed", "\x0b": "linefeed", "\x0c": "linefeed",
        "\x08": "backspace", "\t": "tab", "\x07": "bell"}


class ScreenEvents(Protocol):
    def draw(self, text: str) -> None: ...
    def linefeeds(self, count: int) -> None: ...
    def draw_lines(self, lines: list[str]) -> None: ...
    def osc(self, code: str, payload: str) -> None: ...


class ByteStream:
    """Feeds raw pane bytes, in chunks of any size, to a screen."""

    def __init__(self, screen: ScreenEvents):
        self.screen = screen
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
        # an open string sequence: [kind, payload pieces, payload size, ESC last (DCS)]
        self._string: list | None = None
        self.errors = 0          # sequences a screen method refused; counted, never raised
        self.replacements = 0    # U+FFFD produced by decoding (invalid UTF-8)
        self.truncated_tail = False
        # bound methods, looked up once: dispatch is the hot path
        self._ctl = {ch: getattr(screen, name) for ch, name in _CTL.items()}
        self._csi_fns = {final: getattr(screen, name) for final, name in _CSI.items()}

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        if "\ufffd" in text:
            self.replacements += text.count("\ufffd")
        self.feed_text(text)

    def flush(self) -> None:
        """End of input: a truncated UTF-8 sequence becomes U+FFFD, a cut-off escape is dropped."""
        self.truncated_tail = bool(self._decoder.getstate()[0])
        self.feed(b"", final=True)
        self._pending, self._string = "", None

    def feed_text(self, text: str) -> None:
        """Every character is looked at a bounded number of times, whatever the input: a
        string sequence is searched for its end once (C speed), across chunks if need be."""
        if self._pending:
            text, self._pending = self._pending + text, ""
        pos, end = 0, len(text)
        if self._string is not None:
            try:
                pos = self._string_body(text, 0)
            except Exception:  # noqa: BLE001 - as below: garbage must not crash us
                self._string, pos = None, 0
                self.errors += 1
        if ("m" in text and self._string is None
                and not ("\x1b^" in text or "\x1bX" in text or "\x1b_" in text)):
            # SGR is a fifth of all tokens in real captures and changes no text: drop it in one
            # C-level pass (this also joins the text runs it split). Not where an APC/PM/SOS
            # string starts: an SGR's ESC ends such a string, as in tmux
            text = text[:pos] + _SGR.sub("", text[pos:])
            end = len(text)
        draw, ctl, csi = self.screen.draw, self._ctl, self._csi
        match = _TOKEN.match
        while pos < end:
            m = match(text, pos)
            if m is None:
                # Only an ESC can fail to match: either a sequence cut by the chunk boundary...
                if len(text) - pos < _MAX_PENDING and _PARTIAL.match(text, pos):
                    self._pending = text[pos:]
                    return
                pos += 1  # ...or garbage after an ESC: drop the ESC, keep the rest as text
                continue
            pos = m.end()
            kind = m.lastindex
            try:
                if kind == _G_TEXT:
                    draw(m.group(_G_TEXT))
                elif kind == _G_LINES:
                    self.screen.draw_lines(m.group(_G_LINES)[:-2].split("\r\n"))
                elif kind == _G_CTL:
                    fn = ctl.get(m.group(_G_CTL))
                    if fn is not None:
                        fn()
                elif kind == _G_CF:
                    csi(*m.group(_G_CP, _G_CARGS, _G_CI, _G_CF))
                elif kind == _G_LFS:  # a run of linefeeds: one scroll, not one each
                    self.screen.linefeeds(m.end() - m.start())
                elif kind == _G_STR:
                    self._string = [m.group(_G_STR), [], 0, False]
                    pos = self._string_body(text, pos)
                elif kind == _G_EF:
                    if not m.group(_G_EI) and m.group(_G_EF) in _ESC:
                        getattr(self.screen, _ESC[m.group(_G_EF)])()
            except Exception:  # pyte raises on some out-of-range params; garbage must not crash us
                self.errors += 1

    def _string_body(self, text: str, pos: int) -> int:
        """Go on with the open string sequence from `pos`: where the text after it starts
        (len(text) if it is still open: its body so far is kept, an OSC's up to _OSC_MAX)."""
        st = self._string
        kind = st[0]
        if kind == "P" and st[3] and text.startswith("\\", pos):  # ST cut between chunks
            self._string = None
            return pos + 1
        m = _STRING_END[kind].search(text, pos)
        stop = m.start() if m else len(text)
        if kind == "]" and st[2] < _OSC_MAX:
            piece = text[pos:min(stop, pos + _OSC_MAX - st[2])]
            st[1].append(piece)
            st[2] += len(piece)
        if m is None:
            st[3] = text.endswith("\x1b")
            return len(text)
        self._string = None
        ender = m.group()
        if ender in "\x18\x1a":
            return m.end()  # CAN / SUB: the string is abandoned
        if kind == "]":
            code, _, payload = "".join(st[1]).partition(";")
            self.screen.osc(code, payload)
        # BEL and a DCS's ST are part of the string; any other ESC starts what follows
        return m.end() if ender == "\x07" or kind == "P" else m.start()

    def _csi(self, private: str, args: str, inter: str, final: str) -> None:
        fn = self._csi_fns.get(final)
        if fn is None or inter or (private and private != "?"):
            return  # kitty keyboard, modifyOtherKeys, cursor style, unknown finals: no effect
        if not args:
            params = ()
        elif len(args) > _MAX_ARGS:
            return
        elif args.isdigit():
            params = (min(int(args), 9999),)
        elif _NUMERIC.match(args):
            params = tuple(min(int(p.partition(":")[0] or 0), 9999) for p in args.split(";"))
        else:
            return
        if private:
            if final in "hl":
                fn(*params, private=True)
            elif final in "JK":
                fn(*params)
            return
        fn(*params)
