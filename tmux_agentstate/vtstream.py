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

# One token at a time, tried in order. Text excludes C0/C1 controls and DEL.
_TOKEN = re.compile(
    r"(?P<text>[^\x00-\x1f\x7f-\x9f]+)"
    r"|\x1b\[(?P<cp>[<=>?]?)(?P<cargs>[0-9:;<=>?]*)(?P<ci>[ -/]*)(?P<cf>[@-~])"
    r"|\x1b\](?P<osc>[^\x07\x1b]*)(?:\x07|\x1b\\)"
    r"|\x1bP(?:[^\x1b]|\x1b[^\\])*\x1b\\"               # DCS: to ST, any other ESC inside is data
    r"|\x1b[_^X][^\x1b\x18\x1a]*(?=[\x1b\x18\x1a])"       # APC / PM / SOS: to the next ESC, CAN or SUB
    r"|\x1b(?P<ei>[ -/]*)(?P<ef>(?![\[\]P_^X])[0-~])"
    r"|(?P<ctl>[\x00-\x1a\x1c-\x1f\x7f-\x9f])",
    re.S,
)
# What an unfinished sequence at the end of a chunk can look like: wait for more bytes.
_PARTIAL = re.compile(
    r"\x1b(?:\[[0-9:;<=>?]*[ -/]*|\][^\x07\x1b]*\x1b?|P(?:[^\x1b]|\x1b[^\\])*\x1b?|[_^X][^\x1b\x18\x1a]*"
    r"|[ -/]*)?\Z",
    re.S,
)
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_G_TEXT, _G_CP, _G_CARGS, _G_CI, _G_CF, _G_OSC, _G_EI, _G_EF, _G_CTL = (
    _TOKEN.groupindex[g] for g in ("text", "cp", "cargs", "ci", "cf", "osc", "ei", "ef", "ctl"))
_NUMERIC = re.compile(r"[0-9:;]*\Z")
_MAX_PENDING = 64 * 1024  # a "sequence" longer than this is garbage: drop its ESC and go on

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
    def osc(self, code: str, payload: str) -> None: ...


class ByteStream:
    """Feeds raw pane bytes, in chunks of any size, to a screen."""

    def __init__(self, screen: ScreenEvents):
        self.screen = screen
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
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
        self._pending = ""

    def feed_text(self, text: str) -> None:
        if self._pending:
            text, self._pending = self._pending + text, ""
        if "m" in text and not ("\x1b^" in text or "\x1bX" in text or "\x1b_" in text):
            # SGR is a fifth of all tokens in real captures and changes no text: drop it in one
            # C-level pass (this also joins the text runs it split). Not where an APC/PM/SOS
            # string starts: an SGR's ESC ends such a string, as in tmux
            text = _SGR.sub("", text)
        draw, ctl, csi, osc = self.screen.draw, self._ctl, self._csi, self.screen.osc
        match = _TOKEN.match
        pos, end = 0, len(text)
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
                elif kind == _G_CTL:
                    fn = ctl.get(m.group(_G_CTL))
                    if fn is not None:
                        fn()
                elif kind == _G_CF:
                    csi(*m.group(_G_CP, _G_CARGS, _G_CI, _G_CF))
                elif kind == _G_OSC:
                    code, _, payload = m.group(_G_OSC).partition(";")
                    osc(code, payload)
                elif kind == _G_EF:
                    if not m.group(_G_EI) and m.group(_G_EF) in _ESC:
                        getattr(self.screen, _ESC[m.group(_G_EF)])()
                # DCS/APC/PM/SOS strings (no group) are skipped whole. tmux ends APC/PM/SOS at
                # any ESC (an `ESC ^` can be an ESC followed by a tty's echo of "^[…")
            except Exception:  # pyte raises on some out-of-range params; garbage must not crash us
                self.errors += 1

    def _csi(self, private: str, args: str, inter: str, final: str) -> None:
        fn = self._csi_fns.get(final)
        if fn is None or inter or (private and private != "?"):
            return  # kitty keyboard, modifyOtherKeys, cursor style, unknown finals: no effect
        if not args:
            params = ()
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
