"""The Program Status Protocol (OSC 7501): what an agent says of itself in its own bytes. Pure.

    ESC ] 7501 ; state=STATE [: app=NAME] [: id=ID] [: kind=KIND] [: msg=BASE64] … (BEL | ST)

STATE is idle | working | blocked | done | error | clear; KIND (blocked only) is permission |
question | auth; msg is one line of UTF-8 in base64 (a dialog's title, an error's first line,
a session name). A record without `id=` is the program's own (the root record); one with an
`id=` belongs to a child (a sub-agent) and never decides the pane's state: it is only counted.
`state=clear` ends a record. A payload of `?` is the support query, not a report.

Everything here comes from the pane, so it is untrusted: a payload longer than MAX_PAYLOAD is
refused whole, the message is decoded to at most MAX_MESSAGE bytes and loses its control
characters, names and ids are checked, and a pane keeps at most MAX_CHILDREN child records.
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

STATES = ("idle", "working", "blocked", "done", "error", "clear")
KINDS = ("permission", "question", "auth")
MAX_PAYLOAD = 4096   # bytes of one sequence's payload (a 2 KB message is ~2.7 KB of base64)
MAX_MESSAGE = 2048   # bytes of a decoded message kept (pi sends at most this)
MAX_CHILDREN = 64    # child records counted per pane; past it the oldest is forgotten

_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,64}")
# a record id: up to 8 segments joined by "/" (a sub-agent's own sub-agents), 128 bytes at most
_ID = re.compile(r"[A-Za-z0-9_.+-]{1,64}(?:/[A-Za-z0-9_.+-]{1,64}){0,7}")
MAX_ID = 128
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+")
# what an error's message says it was; no word of these: api-error
_ERROR_MARKS = (
    ("rate-limit", re.compile(r"rate.?limit|\b429\b|too many requests", re.I)),
    ("overloaded", re.compile(r"overloaded|\b529\b|\b503\b|unavailable", re.I)),
    ("auth", re.compile(r"\b401\b|\b403\b|unauthori[sz]ed|authenticat|api.?key|log ?in|sign.?in|"
                        r"credential|forbidden", re.I)),
    ("quota", re.compile(r"quota|billing|credit|insufficient.?(funds|balance)|usage limit", re.I)),
)


@dataclass(frozen=True)
class ProgramStatus:
    """One report, as parsed (not yet a record: see StatusBoard)."""
    state: str
    app: str = ""
    id: str = ""        # "" for the root record
    kind: str = ""      # blocked only: permission | question | auth ("" when not said)
    message: str = ""   # decoded, one line, control characters taken out

    @classmethod
    def parse(cls, payload: str) -> "ProgramStatus | None":
        """The status in an `OSC 7501` payload (what follows `7501;`), or None: the query, too
        long, no known state, a malformed field."""
        if len(payload.encode("utf-8", "surrogatepass")) > MAX_PAYLOAD or payload.startswith("?"):
            return None
        fields: dict[str, str] = {}
        for pair in payload.split(":"):
            key, sep, value = pair.partition("=")
            if sep and key not in fields:  # the first of a key counts (a repeat could smuggle)
                fields[key] = value
        state = fields.get("state", "")
        if state not in STATES:
            return None
        app = fields.get("app", "")
        ident = fields.get("id", "")
        if (app and not _NAME.fullmatch(app)) or (ident and not (len(ident) <= MAX_ID
                                                                 and _ID.fullmatch(ident))):
            return None
        kind = fields.get("kind", "")
        kind = kind if state == "blocked" and kind in KINDS else ""
        return cls(state, app, ident, kind, decode_message(fields.get("msg", "")))

    def error_mark(self) -> str:
        """An `error` report's mark: what its message says it was, else `api-error`."""
        for mark, pattern in _ERROR_MARKS:
            if pattern.search(self.message):
                return mark
        return "api-error"


def decode_message(text: str) -> str:
    """A `msg=` value: base64 of UTF-8, one line; "" when it is not valid base64."""
    if not text:
        return ""
    try:
        raw = base64.b64decode(text[:(MAX_MESSAGE * 4 // 3) + 8], validate=True)
    except (binascii.Error, ValueError):
        return ""
    message = raw[:MAX_MESSAGE].decode("utf-8", "replace")
    return _CONTROLS.sub(" ", message).strip()


@dataclass(frozen=True)
class StatusRecord:
    """The root record as it stands: its status, and when it was reported (the caller's
    clock: the screen is given the time its bytes came)."""
    status: ProgramStatus
    at: float


class StatusBoard:
    """One pane's records: the root one, and the states of its children (counted only)."""

    def __init__(self):
        self.root: StatusRecord | None = None
        self.children: dict[str, str] = {}  # id → state, oldest first
        self.serial = 0                     # +1 at every change of the root record

    def take(self, payload: str, at: float) -> bool:
        """One `OSC 7501` payload, reported at `at`; True when the root record changed (a
        repeat of the same status changes nothing: its time stays the first report's)."""
        status = ProgramStatus.parse(payload)
        if status is None:
            return False
        if status.id:
            self.children.pop(status.id, None)
            if status.state != "clear":
                if len(self.children) >= MAX_CHILDREN:
                    self.children.pop(next(iter(self.children)))
                self.children[status.id] = status.state
            return False
        if status.state == "clear":
            self.children.clear()  # the protocol: a clear without an id removes every record
            if self.root is None:
                return False
            self.root = None
        elif self.root is not None and self.root.status == status:
            return False
        else:
            self.root = StatusRecord(status, at)
        self.serial += 1
        return True

    def children_working(self) -> int:
        """Child records that say they are working or blocked (what a detail may count)."""
        return sum(1 for state in self.children.values() if state in ("working", "blocked"))

    def clear(self) -> None:
        """Forget every record (the program in front changed)."""
        if self.root is not None:
            self.serial += 1
        self.root = None
        self.children.clear()
