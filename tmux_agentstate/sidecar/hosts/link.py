"""One host's link: a thread that keeps one SSH session (session.py) open to that host's
`tmux-agentstate stream` (core/hostproto.py), reconnecting with backoff, and what it last said.

The thread never blocks the sidecar: it waits on its own descriptors with poll() and a
deadline (the next ping, the silence limit); the sidecar's loop only reads what it left.
"""
from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from typing import Callable

from ...core import hostproto
from ...core.hostproto import HostRows, ProtocolError, clean_text
from .session import SshSession, TooMuch
from .why import old_version_why

log = logging.getLogger("tmux_agentstate.sidecar")

BACKOFF = (1.0, 2.0, 4.0, 8.0, 15.0)   # seconds between tries; back to the first on a hello
HELLO_WITHIN = 10.0 + 20.0             # ConnectTimeout, then the host starting its sidecar
REQUEST_WAIT = 12.0                    # seconds a request waits for its reply
PENDING_MAX = 32                       # requests (and pings) in flight per host
TRANSITIONS_MAX = 2000                 # state changes kept until the sidecar takes them


def note_why(dest: str, message: dict) -> str:
    """A connected host's own word on what it cannot show (a beat's or rows' note: no tmux
    server runs there, its sidecar is stopped or starting), as `hosts` and `doctor` say it."""
    note = clean_text(message.get("note"), 200)
    return f"{dest}: {note}" if note else ""


class HostJson:
    """A host's part of hosts.json, each row's JSON kept while that row does not change (a
    host's message changes one or two of its rows; the file is written up to twice a second
    with every host's rows: bench_hosts.py)."""

    def __init__(self):
        self._rows: dict[str, tuple[dict, str]] = {}  # pane → (row, its JSON but the "}")

    def make(self, link: "HostLink") -> str:
        with link.lock:
            head = {"host": link.dest, "status": link.status, "why": link.why,
                    "last_update": link.last_update, "rtt": link.rtt, "version": link.version}
            rows = list(link.rows.rows.values())
            stale = link.status != "connected"
        tail = f',"host":{json.dumps(link.dest)},"stale":{"true" if stale else "false"}}}'
        made = {}
        for r in rows:  # a row object is replaced, never changed, when its pane changes
            kept = self._rows.get(r["pane"])
            if kept is None or kept[0] is not r:
                kept = (r, json.dumps(r, ensure_ascii=True, separators=(",", ":"))[:-1])
            made[r["pane"]] = kept
        self._rows = made
        return (json.dumps(head, ensure_ascii=True, separators=(",", ":"))[:-1] + ',"rows":['
                + ",".join(j + tail for _, j in made.values()) + "]}")


class HostLink:
    """One destination's link. `status`: connecting (no answer yet), connected, stale (it
    answered before, and is silent or unreachable now: its rows are old), error (it cannot
    serve: `why` says what to do). Rows stay with their last state while it is down."""

    def __init__(self, dest: str, ssh: list[str], remote_command: list[str],
                 changed: Callable[[bool], None], refused: str = ""):
        self.dest, self.ssh, self.remote_command = dest, list(ssh), list(remote_command)
        self.changed = changed                # changed(True): rows or status; False: a beat
        self.edits = 0                        # counts every change (hosts.json keeps its JSON)
        self._rows_made: tuple[int, list[dict]] = (-1, [])
        self.part = HostJson()  # its part of hosts.json: part.make(link)
        self.status, self.why = ("error", refused) if refused else ("connecting", "")
        self.last_update: float | None = None  # unix time the host last said anything
        self.rtt: float | None = None
        self.version: str | None = None
        self.rows = HostRows()
        self.transitions: list[tuple[dict, str | None]] = []
        self.lock = threading.RLock()  # snapshot holds it while it makes the rows
        self._stop = threading.Event()
        self._session_now: SshSession | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, list] = {}   # id → [Event, (code, text) or None]
        self._pings: dict[int, float] = {}    # id → monotonic time sent
        self._ever_connected = False
        self._snapshots = 0
        self._attempt = 0
        self._thread = None if refused else threading.Thread(
            target=self._run, name=f"host {dest}", daemon=True)

    def start(self) -> None:
        if self._thread is not None:
            self._thread.start()

    def stop(self) -> None:
        """End the link: its ssh's process group is killed now, the thread ends soon after."""
        self._stop.set()
        self._kill()

    def join(self, timeout: float = 2.0) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout)

    # -- what the commands see -----------------------------------------------------------------
    def snapshot(self) -> dict:
        with self.lock:
            return {"host": self.dest, "status": self.status, "why": self.why,
                    "last_update": self.last_update, "rtt": self.rtt, "version": self.version,
                    "rows": self.current_rows()}

    def current_rows(self) -> list[dict]:
        """Its rows, each with its host and whether it is stale: made again only after a
        change (the sidecar asks at every sweep). Shared: not to be changed by the caller."""
        with self.lock:
            if self._rows_made[0] != self.edits:
                stale = self.status != "connected"
                self._rows_made = (self.edits, [{**r, "host": self.dest, "stale": stale}
                                                for r in self.rows.rows.values()])
            return self._rows_made[1]

    def take_transitions(self) -> list[tuple[dict, str | None]]:
        with self.lock:
            out, self.transitions = self.transitions, []
        return out

    def request(self, op: str, pane: str, choice: str | None = None) -> tuple[int, str]:
        """Relay an answer or a focus to the host; its (code, text), or at once one line on
        why it cannot go (the link is down)."""
        with self.lock:
            if self.status != "connected" or self._session_now is None:
                return 1, f"{self.dest} is not connected ({self.status})" + (
                    f": {self.why}" if self.why else "")
            if len(self._pending) >= PENDING_MAX:
                return 1, f"{self.dest} has {PENDING_MAX} requests waiting already"
            rid = next(self._ids)
            slot = self._pending[rid] = [threading.Event(), None]
        message = {"op": op, "id": rid, "pane": pane, **({"choice": choice} if choice else {})}
        try:
            hostproto.decode_request(hostproto.encode(message))  # the host's own rules
        except ProtocolError as e:
            self._forget(rid)
            return 1, f"not sent to {self.dest}: {e}"
        if not self._send(message):
            self._forget(rid)
            return 1, f"could not write to {self.dest}'s link"
        if not slot[0].wait(REQUEST_WAIT):
            self._forget(rid)
            return 1, f"{self.dest} did not answer within {REQUEST_WAIT:.0f}s"
        return slot[1]

    def _forget(self, rid: int) -> None:
        with self.lock:
            self._pending.pop(rid, None)

    # -- the thread ------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            status, why = self._session()
            if self._stop.is_set():
                break
            if status == "stale" and not self._ever_connected:
                status = "error"  # never reached: nothing of it to call stale
            self._set(status, why)
            delay = BACKOFF[min(self._attempt, len(BACKOFF) - 1)]
            self._attempt += 1
            self._stop.wait(delay)

    def _set(self, status: str, why: str) -> None:
        with self.lock:
            same = (status, why) == (self.status, self.why)
            self.status, self.why = status, why
        if same:
            return
        if status == "connected":
            log.info("host %s: connected%s", self.dest, f" ({why})" if why else "")
        else:
            log.warning("host %s: %s: %s", self.dest, status, why)
        self._tell(True)

    def _session(self) -> tuple[str, str]:
        """One SSH session, from its start to its end: (status, why) it ended with."""
        session = SshSession(self.ssh, self.dest, self.remote_command)
        why = session.start()
        if why:
            return "error", why
        with self.lock:
            self._session_now = session
        try:
            return self._read(session)
        finally:
            with self.lock:
                self._session_now = None
                pending, self._pending, self._pings = self._pending, {}, {}
            session.close()
            for slot in pending.values():
                slot[1] = (1, f"the link to {self.dest} ended before its reply")
                slot[0].set()

    def _read(self, session: SshSession) -> tuple[str, str]:
        started = heard = time.monotonic()
        next_ping, hello = started + hostproto.HEARTBEAT, False
        while not self._stop.is_set():
            now = time.monotonic()
            limit = heard + hostproto.STALE_AFTER if hello else started + HELLO_WITHIN
            if now >= limit:
                if hello:
                    return "stale", (f"{self.dest} said nothing for "
                                     f"{hostproto.STALE_AFTER:.0f}s: reconnecting")
                return "stale", f"{self.dest} did not answer within {HELLO_WITHIN:.0f}s"
            if hello and now >= next_ping:
                self._ping()
                next_ping = now + hostproto.HEARTBEAT
            wake = min(limit, next_ping if hello else limit)  # `stop` kills ssh: EOF wakes it
            try:
                lines = session.read(wake - now)
                if lines is None:
                    return session.ended(self._ever_connected)
                for line in lines:
                    heard = time.monotonic()
                    if not line.strip():
                        continue
                    if not hello:
                        self._hello(line)
                        hello = True
                        next_ping = heard + 1.0  # a first round trip once it settled
                    else:
                        self._message(hostproto.decode(line))
            except (_Refused, TooMuch) as e:
                return "error", str(e)
            except ProtocolError as e:
                return "error", (f"{self.dest} sent a broken stream ({e}); its rows are "
                                 "kept as they were, reconnecting later")
        return "connecting", ""

    def _hello(self, line: bytes) -> None:
        old = old_version_why(self.dest, line)
        if old:
            raise _Refused(old)
        message = hostproto.decode(line)
        if message["t"] == "error":  # it cannot serve (no tmux it may reach, say)
            raise _Refused(f"{self.dest}: {clean_text(message.get('text'), 200)}")
        if message["t"] != "hello":
            raise ProtocolError(f"a {message['t']} message before its hello")
        version = clean_text(message.get("version"), 40) or None
        no_tmux = not clean_text(message.get("server"), 200)
        with self.lock:  # the last session's round trip is no measure of this one
            self.version, self.last_update, self.rtt = version, time.time(), None
        self._ever_connected, self._attempt = True, 0
        self._set("connected", f"{self.dest}: no tmux server runs on this host" if no_tmux else "")

    def _message(self, message: dict) -> None:
        kind, wall = message["t"], time.time()
        if kind == "error":
            raise _Refused(f"{self.dest}: {clean_text(message.get('text'), 200)}")
        if kind in ("beat", "rows"):  # what the host says of itself: no tmux, no sidecar
            self._set("connected", note_why(self.dest, message))
        if kind == "rows":
            with self.lock:
                before = {p: r["state"] for p, r in self.rows.rows.items()}
                changed = self.rows.apply(message)
                self.last_update = wall
                if self._snapshots or message.get("full") is not True:
                    # not from the first snapshot a link gets: that is what was so before we
                    # looked (the host's own sidecar told of it then)
                    self.transitions += changed_states(self.dest, before, self.rows.rows,
                                                       TRANSITIONS_MAX - len(self.transitions))
                if message.get("full") is True:
                    self._snapshots += 1
            self._tell(changed)
            return
        with self.lock:
            self.last_update = wall
            if kind == "reply":
                self._reply(message)
        self._tell(False)

    def _tell(self, loud: bool) -> None:
        with self.lock:
            self.edits += 1
        self.changed(loud)

    def _reply(self, message: dict) -> None:
        rid = message.get("id")
        if not isinstance(rid, int) or isinstance(rid, bool):
            return
        if rid in self._pings:
            self.rtt = round(time.monotonic() - self._pings.pop(rid), 4)
            return
        slot = self._pending.pop(rid, None)
        if slot is not None:
            slot[1] = reply_of(message)
            slot[0].set()

    def _ping(self) -> None:
        with self.lock:
            if len(self._pings) >= PENDING_MAX:
                self._pings.clear()  # a host that never replies: start counting again
            rid = next(self._ids)
            self._pings[rid] = time.monotonic()
        self._send({"op": "ping", "id": rid})

    def _send(self, message: dict) -> bool:
        with self.lock:
            session = self._session_now
            return session is not None and session.send(hostproto.encode(message))

    def _kill(self) -> None:
        session = self._session_now
        if session is not None:
            session.kill()


class _Refused(Exception):
    """The host said something that ends the link, in one line."""


def changed_states(dest: str, before: dict[str, str], rows: dict[str, dict],
                   room: int) -> list[tuple[dict, str | None]]:
    """(row, its state before) for the rows whose state changed, at most `room` of them."""
    out = [({**row, "host": dest, "stale": False}, before.get(pane))
           for pane, row in rows.items() if before.get(pane) != row["state"]]
    return out[:max(room, 0)]


def reply_of(message: dict) -> tuple[int, str]:
    """A reply's (code, text): a code that is no exit code is a failure (1)."""
    code = message.get("code")
    ok = isinstance(code, int) and not isinstance(code, bool) and -1 <= code <= 255
    return (code if ok else 1), clean_text(message.get("text"), 300)
