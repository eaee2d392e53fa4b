"""The text in a chunk of raw pane bytes, found by search instead of a parse: what the pipe
intake pre-checks for a prompt (`Manifest.blocked_hint`) while it does not read a busy pane's
screen. Pure, and cheap: three C-level regex passes, no state across chunks.

Escape sequences go; a move along the row (CHA `ESC[nG`, CUF `ESC[nC`: Ink writes the words of
a dialog each at its column) becomes a space, any other move (a new row: CUP, VPA, CR, LF…)
a newline, so a dialog's words read as the row they are on; a title (OSC 0/1/2) is a row of
its own (an agent may say it waits there: Codex's "Action Required"). It is a hint, never a verdict:
text a renderer draws in pieces (a cell-diffing TUI writes only the cells that changed) is
missed here and found when the pane's screen is read (quiet, or a backstop)."""
from __future__ import annotations

import re

_ALONG_ROW = re.compile(rb"\x1b\[[0-9]*[CG]")
_TITLE = re.compile(rb"\x1b\][012];([^\x07\x1b]*)")  # a title: a row of its own (a rule may read it)
_NEW_ROW = re.compile(rb"\x1b\[[0-9;?]*[HfABDEFd]|\r\n|\r|\n")
_SEQUENCE = re.compile(
    rb"\x1b\[[0-9;?<>=!:]*[ -/]*[@-~]"          # CSI
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"      # OSC (a title: not what a dialog shows)
    rb"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"           # DCS, SOS, PM, APC
    rb"|\x1b[ -/]*[0-~]"                         # any other escape
    rb"|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")      # controls (BEL, BS…)


def visible_text(data: bytes) -> str:
    """The text `data` draws, rows apart (see the module doc)."""
    data = _TITLE.sub(b"\n\\1\n\x1b]", data)  # the payload kept; the sequence's end goes below
    data = _ALONG_ROW.sub(b" ", data)
    data = _NEW_ROW.sub(b"\n", data)
    return _SEQUENCE.sub(b"", data).decode("utf-8", "replace")
