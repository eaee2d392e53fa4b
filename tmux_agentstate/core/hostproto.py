"""The stream between a local sidecar and a host's `tmux-agentstate stream`, over one SSH
session: one JSON object per line, UTF-8, each with the schema version `v`. Pure.

host → local (`t`):
    hello  {version, heartbeat, server}   first; `server` is "" when the host runs no tmux
    rows   {full, rows, gone, note}       full: a snapshot that replaces every row; else the
                                          rows that changed (by `pane`) and the panes gone
    beat   {note}                         at least every `heartbeat` seconds
    reply  {id, code, text}               the answer to a request, by its id
    error  {text}                         the host cannot serve (then it ends the stream)
local → host (`op`): ping {id}; answer {id, pane, choice}; focus {id, pane}

Everything a host sends is untrusted: a line longer than MAX_LINE, another schema, an unknown
kind or a malformed row is refused with one line (ProtocolError) or dropped (a row); text is
cut to its limit and loses its control characters here, before anything shows it; a host
holds at most MAX_ROWS rows.
"""
from __future__ import annotations

import json
import re

SCHEMA = 1
MAX_LINE = 1 << 18          # bytes per message: a snapshot of MAX_ROWS rows fits
MAX_ROWS = 1000             # rows kept per host
HEARTBEAT = 5.0             # a host says something at least this often...
STALE_AFTER = 3 * HEARTBEAT  # ...so one silent this long is stale
STATES = ("working", "idle", "blocked")
KINDS = ("hello", "rows", "beat", "reply", "error")
OPS = ("ping", "answer", "focus")

_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_PANE = re.compile(r"%\d{1,9}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}")
# a row's fields: (kind, limit); text is cleaned and cut, numbers bounded
TEXT_FIELDS = {"target": 200, "session": 100, "window": 20, "window_name": 100, "source": 20,
               "agent_version": 40, "error": 40, "detail": 200}


class ProtocolError(ValueError):
    """A message that breaks the protocol: one line says how."""


def clean_text(value, limit: int) -> str:
    """Text from a host as we may show it: a string, no control characters, at most `limit`."""
    if not isinstance(value, str):
        return ""
    return _CONTROLS.sub("", value)[:limit]


def _number(value, low: int, high: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if value != value or not low <= value <= high:  # NaN, or out of bounds
        return None
    return int(value)


def clean_row(obj) -> dict | None:
    """A row as a host sent it, checked and cleaned; None if it cannot be one (no pane id, no
    known state, no agent name)."""
    if not isinstance(obj, dict):
        return None
    pane, state, agent = obj.get("pane"), obj.get("state"), obj.get("agent")
    if not (isinstance(pane, str) and _PANE.fullmatch(pane)) or state not in STATES:
        return None
    if not (isinstance(agent, str) and _NAME.fullmatch(agent)):
        return None
    row = {"pane": pane, "state": state, "agent": agent}
    for name, limit in TEXT_FIELDS.items():
        row[name] = clean_text(obj.get(name), limit)
    row["agent_version"] = row["agent_version"] or None
    row["error"] = row["error"] or None
    row["since"] = _number(obj.get("since"), 0, 1 << 40)
    row["context"] = _number(obj.get("context"), 0, 100)
    row["done"] = obj.get("done") is True
    return row


def encode(message: dict) -> bytes:
    """One message as its line (ASCII: every other character escaped)."""
    return (json.dumps({"v": SCHEMA, **message}, ensure_ascii=True, separators=(",", ":"))
            + "\n").encode("ascii")


def decode(line: bytes) -> dict:
    """One line from a host as a message with a known kind `t`, or ProtocolError."""
    if len(line) > MAX_LINE:
        raise ProtocolError(f"a message of {len(line)} bytes (at most {MAX_LINE})")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        raise ProtocolError("a line that is not JSON") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message that is not an object")
    if message.get("v") != SCHEMA:
        raise ProtocolError(f"schema {clean_text(repr(message.get('v')), 20)} (this side "
                            f"reads {SCHEMA})")
    if message.get("t") not in KINDS:
        raise ProtocolError(f"an unknown message kind {clean_text(repr(message.get('t')), 20)}")
    return message


def decode_request(line: bytes) -> dict:
    """One request line from the local side, or ProtocolError."""
    if len(line) > MAX_LINE:
        raise ProtocolError("a request too long")
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        raise ProtocolError("a request that is not JSON") from None
    if not isinstance(request, dict) or request.get("v") != SCHEMA:
        raise ProtocolError("a request of another schema")
    if request.get("op") not in OPS or _number(request.get("id"), 0, 1 << 53) is None:
        raise ProtocolError("an unknown request")
    if request["op"] != "ping" and not (isinstance(request.get("pane"), str)
                                        and _PANE.fullmatch(request["pane"])):
        raise ProtocolError("a request without a pane id")
    if request["op"] == "answer" and not (isinstance(request.get("choice"), str)
                                          and _NAME.fullmatch(request["choice"])):
        raise ProtocolError("an answer without a choice")
    return request


def request_id(line: bytes) -> int:
    """The id of a request that was refused, so its reply finds it (-1: none to be read)."""
    try:
        rid = json.loads(line).get("id") if len(line) <= MAX_LINE else None
    except (ValueError, RecursionError, AttributeError):
        return -1
    return rid if _number(rid, 0, 1 << 53) is not None and isinstance(rid, int) else -1


class HostRows:
    """The rows of one host, as its `rows` messages leave them."""

    def __init__(self):
        self.rows: dict[str, dict] = {}
        self.note = ""
        self.dropped = 0  # rows refused (malformed, or past MAX_ROWS), for the log

    def apply(self, message: dict) -> bool:
        """Apply a `rows` message; whether any row changed."""
        before = dict(self.rows)
        if message.get("full") is True:
            self.rows = {}
        gone = message.get("gone")
        for pane in gone if isinstance(gone, list) else ():
            if isinstance(pane, str):
                self.rows.pop(pane, None)
        rows = message.get("rows")
        for obj in rows if isinstance(rows, list) else ():
            row = clean_row(obj)
            if row is None or (row["pane"] not in self.rows and len(self.rows) >= MAX_ROWS):
                self.dropped += 1
                continue
            self.rows[row["pane"]] = row
        self.note = clean_text(message.get("note"), 200)
        return self.rows != before
