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
from functools import partial
from typing import Callable, Protocol

from .status import MAX_PAYLOAD

_PRINTABLE = r"[^\x00-\x1f\x7f-\x9f]"
_CSI_SEQ = r"\x1b\[(?P<cp>[<=>?]?)(?P<cargs>[0-9:;<=>?]*)(?P<ci>[ -/]*)(?P<cf>[@-~])"
_ESC_SEQ = r"\x1b(?P<ei>[ -/]*)(?P<ef>(?![\[\]P_^X])[0-~])"
_CONTROL = r"(?P<ctl>[\x08\x09\x0b-\x0d])"  # the ones that move the cursor (LF: `lfs`)
# One token at a time, tried in order; each is handed to the screen in one call, or its
# pieces in a loop without the tokenizer in between. A string sequence (OSC, DCS, APC, PM,
# SOS) is only opened here; its body is found by `_string_body`.
_TOKEN = re.compile(
    r"(?P<lfs>\n+)"
    r"|(?P<lines>(?:[ -~]*\r?\n){2,})"  # plain lines (LF or a tty's CR LF)
    # text with CR, BS or HT between (progress lines, overstrikes, tabbed columns)
    rf"|(?P<edits>{_PRINTABLE}*(?:[\r\x08\t]{_PRINTABLE}*)+)"
    rf"|(?P<text>{_PRINTABLE}+)"
    # text with controls that do nothing here (BEL, NUL, SO/SI, CAN, SUB, DEL, C1...) in it:
    # one draw once they are removed
    r"|(?P<quiet>[^\x08-\x0d\x1b]+)"
    # APC, PM and SOS strings that end in this chunk (at an ESC, CAN or SUB, as tmux ends
    # them): a run of them is skipped at once; one still open is a `str`
    r"|(?P<skip>(?:\x1b[_^X][^\x1b\x18\x1a]*(?:[\x18\x1a]|(?=\x1b)))+)"
    r"|\x1b(?P<str>[\]P_^X])"
    # a run of escape sequences and cursor controls (a TUI's redraw is mostly these)
    r"|(?P<seqs>(?:\x1b\[[<=>?]?[0-9:;<=>?]*[ -/]*[@-~]|\x1b[ -/]*(?![\[\]P_^X])[0-~]"
    r"|[\x08\x09\x0b-\x0d])+)",
    re.S,
)
# One sequence of a `seqs` run: its pieces, to parse it into a call (once per distinct one).
_SEQ = re.compile(rf"{_CSI_SEQ}|{_ESC_SEQ}|{_CONTROL}", re.S)
_SEQ_SPLIT = re.compile(r"\x1b\[[^@-~]*[@-~]|\x1b[ -/]*.|.", re.S)
_QUIET = re.compile(r"[\x00-\x07\x0e-\x1a\x1c-\x1f\x7f-\x9f]+")
# What an unfinished sequence at the end of a chunk can look like: wait for more bytes.
_PARTIAL = re.compile(r"\x1b(?:\[[0-9:;<=>?]*[ -/]*|[ -/]*)?\Z", re.S)
# Where each kind of string ends (CAN and SUB abort any): an OSC at BEL or an ESC (ST, or
# the start of the next sequence); a DCS at ST alone (tmux passthrough doubles the ESCs of
# its payload); APC, PM and SOS at any ESC, as tmux ends them.
_STRING_END = {"]": re.compile(r"[\x07\x1b\x18\x1a]"), "P": re.compile(r"\x1b\\|[\x18\x1a]"),
               "_": re.compile(r"[\x1b\x18\x1a]"), "^": re.compile(r"[\x1b\x18\x1a]"),
               "X": re.compile(r"[\x1b\x18\x1a]")}
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_G_LFS, _G_LINES, _G_EDITS, _G_TEXT, _G_QUIET, _G_SKIP, _G_STR, _G_SEQS = (
    _TOKEN.groupindex[g] for g in ("lfs", "lines", "edits", "text", "quiet", "skip", "str",
                                   "seqs"))
_S_CP, _S_CARGS, _S_CI, _S_CF, _S_EI, _S_EF, _S_CTL = (
    _SEQ.groupindex[g] for g in ("cp", "cargs", "ci", "cf", "ei", "ef", "ctl"))
_NUMERIC = re.compile(r"[0-9:;]*\Z")
_PLAIN_ARGS = re.compile(r"\d{1,4}(?:;\d{1,4})*\Z")
_MAX_PENDING = 4096  # a CSI or ESC sequence longer than this is garbage: drop its ESC, go on
_MAX_ARGS = 64       # CSI parameters longer than this (ESC[99999999…@) are ignored whole
# an OSC's body kept (its code, `;`, its payload: a title, a state); one longer is read to its
# end and dropped whole, never dispatched cut. Room for every OSC 7501 payload core/status.py
# takes (MAX_PAYLOAD bytes are at most as many characters), so both refuse the same ones
_OSC_MAX = MAX_PAYLOAD + 16
_MAX_CALLS = 1024    # parsed sequences kept per pane (a hostile stream of distinct ones
                     # refills it: each costs its parse, as without the cache)
_ESC_RUN = re.compile(r"\x1b(?:\x1b+(?=\x1b))?")

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
    def draw_lines(self, block: str) -> None: ...
    def draw_edits(self, run: str) -> None: ...
    def osc(self, code: str, payload: str) -> None: ...


class ByteStream:
    """Feeds raw pane bytes, in chunks of any size, to a screen."""

    def __init__(self, screen: ScreenEvents):
        self.screen = screen
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
        # an open string sequence: [kind, payload pieces, payload size, ESC last (DCS), cut
        # (an OSC longer than _OSC_MAX)]
        self._string: list | None = None
        self.errors = 0          # sequences a screen method refused; counted, never raised
        self.replacements = 0    # U+FFFD produced by decoding (invalid UTF-8)
        self.truncated_tail = False
        # bound methods, looked up once: dispatch is the hot path
        self._ctl = {ch: getattr(screen, name) for ch, name in _CTL.items()}
        self._csi_fns = {final: getattr(screen, name) for final, name in _CSI.items()}
        self._esc = {final: getattr(screen, name) for final, name in _ESC.items()}
        self._calls: dict[str, Callable | None] = {}

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        if "\ufffd" in text:
            self.replacements += text.count("\ufffd")
        self.feed_text(text)

    @property
    def in_string(self) -> bool:
        """Inside a string sequence (an OSC, a DCS…) whose end has not come yet."""
        return self._string is not None

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
        screen, calls = self.screen, self._calls
        draw, split = screen.draw, _SEQ_SPLIT.findall
        match = _TOKEN.match
        while pos < end:
            m = match(text, pos)
            if m is None:
                # Only an ESC can fail to match: either a sequence cut by the chunk boundary...
                if len(text) - pos < _MAX_PENDING and _PARTIAL.match(text, pos):
                    self._pending = text[pos:]
                    return
                # ...or garbage after an ESC: drop the ESC (all but the last of a run of
                # them), keep the rest as text
                run = _ESC_RUN.match(text, pos)
                pos = run.end() if run else pos + 1
                continue
            pos = m.end()
            kind = m.lastindex
            if kind == _G_SEQS:
                # a pane repeats a few sequences (cursor moves, erases) over and over: each
                # distinct one is parsed once into a ready call
                for seq in split(m.group(_G_SEQS)):
                    call = calls.get(seq, False)
                    if call is False:
                        if len(calls) >= _MAX_CALLS:
                            calls.clear()
                        call = calls[seq] = self._call(seq)
                    if call is not None:
                        try:
                            call()
                        except Exception:  # pyte raises on some out-of-range params; garbage
                            self.errors += 1  # must not crash us
                continue
            try:
                if kind == _G_TEXT:
                    draw(m.group(_G_TEXT))
                elif kind == _G_EDITS:
                    screen.draw_edits(m.group(_G_EDITS))
                elif kind == _G_LINES:
                    screen.draw_lines(m.group(_G_LINES))
                elif kind == _G_LFS:  # a run of linefeeds: one scroll, not one each
                    screen.linefeeds(m.end() - m.start())
                elif kind == _G_QUIET:
                    quiet = _QUIET.sub("", m.group(_G_QUIET))
                    if quiet:
                        draw(quiet)
                elif kind == _G_SKIP:
                    pass
                elif kind == _G_STR:
                    self._string = [m.group(_G_STR), [], 0, False, False]
                    pos = self._string_body(text, pos)
            except Exception:  # as above
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
        if kind == "]" and not st[4]:
            if st[2] + stop - pos > _OSC_MAX:
                st[1], st[4] = [], True  # too long: dropped whole, read on to its end
            else:
                st[1].append(text[pos:stop])
                st[2] += stop - pos
        if m is None:
            st[3] = text.endswith("\x1b")
            return len(text)
        self._string = None
        ender = m.group()
        if ender in "\x18\x1a":
            return m.end()  # CAN / SUB: the string is abandoned
        if kind == "]" and not st[4]:
            code, _, payload = "".join(st[1]).partition(";")
            self.screen.osc(code, payload)
        # BEL and a DCS's ST are part of the string; any other ESC starts what follows
        return m.end() if ender == "\x07" or kind == "P" else m.start()

    def _call(self, seq: str) -> Callable | None:
        """The screen call a control, ESC or CSI sequence makes, parameters bound; None if it
        has no effect here."""
        m = _SEQ.match(seq)
        kind = m.lastindex
        if kind == _S_CTL:
            return self._ctl.get(m.group(_S_CTL))
        if kind == _S_EF:
            return None if m.group(_S_EI) else self._esc.get(m.group(_S_EF))
        private, args, inter, final = m.group(_S_CP, _S_CARGS, _S_CI, _S_CF)
        fn = self._csi_fns.get(final)
        if fn is None or inter or (private and private != "?"):
            return None  # kitty keyboard, modifyOtherKeys, cursor style, unknown finals
        if not args:
            params = ()
        elif len(args) > _MAX_ARGS:
            return None
        elif args.isdigit():
            params = (min(int(args), 9999),)
        elif _PLAIN_ARGS.match(args):
            params = tuple(map(int, args.split(";")))
        elif _NUMERIC.match(args):
            params = tuple(min(int(p.partition(":")[0] or 0), 9999) for p in args.split(";"))
        else:
            return None
        if private:
            if final in "hl":
                return partial(fn, *params, private=True)
            return partial(fn, *params) if final in "JK" else None
        return partial(fn, *params)
