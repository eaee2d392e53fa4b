"""What the sidecar's host links share with the commands, in its runtime folder (0700):

- `hosts.json`: every host in `@agentstate-hosts`, written (atomically) when a link or a row
  changes: {"v": 1, "written": unix time, "hosts": [HOST, ...]}, HOST =
  {"host": destination, "status": "connecting|connected|stale|error", "why": one line,
   "last_update": unix time anything last came from it (None: never), "rtt": seconds (None),
   "version": its tmux-agentstate's (None), "rows": [ROW, ...]}
  ROW = a core/hostproto row + "host" (the destination) + "stale" (bool, the link's).
- `hosts.sock`: a Unix socket the sidecar serves; one request line
  {"op": "answer"|"focus", "host": destination, "pane": "%N", "choice": "..."} gets one reply
  line {"code": int, "text": one line} (code: the host's own exit code, or EXIT_FAIL).
"""
from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from ...core.safe_read import read_json
from ..runtime import replace_whole

HOSTS_FILE = "hosts.json"
HOSTS_SOCKET = "hosts.sock"
FILE_MAX = 8 << 20  # 10 hosts x 500 rows fit many times over
STATUSES = ("connecting", "connected", "stale", "error")
# a connected host's beats make the sidecar rewrite hosts.json at least every HEARTBEAT (5 s):
# a file older than this was left by a sidecar that no longer runs (killed, say), and what it
# says is connected is stale
WRITTEN_STALE = 20.0


def host_json(host: dict) -> str:
    """One HOST as it goes into hosts.json (for `write_hosts_json`: a writer may keep it while
    that host does not change)."""
    return json.dumps(host, ensure_ascii=True, separators=(",", ":"))


def write_hosts(folder: Path, hosts: list[dict]) -> bool:
    """Replace hosts.json whole (a reader never sees half of it); False when it could not be
    written (a full disk: the last good one stays)."""
    return write_hosts_json(folder, [host_json(h) for h in hosts])


def write_hosts_json(folder: Path, hosts: list[str]) -> bool:
    """`write_hosts` of hosts already made JSON (`host_json`)."""
    data = (f'{{"v":1,"written":{json.dumps(time.time())},"hosts":[' + ",".join(hosts)
            + "]}")
    return replace_whole(Path(folder) / HOSTS_FILE, data, ".hosts-")


def read_hosts(folder: Path, now: float | None = None) -> list[dict]:
    """Every host as the sidecar last wrote it ([] when it wrote none: no hosts, no sidecar);
    a host it said was connected is stale when the file is older than WRITTEN_STALE."""
    data = read_json(Path(folder) / HOSTS_FILE, FILE_MAX)
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, list):
        return []
    hosts = [h for h in hosts if isinstance(h, dict) and isinstance(h.get("host"), str)]
    written = data.get("written")
    age = ((now or time.time()) - written if isinstance(written, (int, float))
           and not isinstance(written, bool) else None)
    if age is None or age > WRITTEN_STALE:
        why = (f"no word from the sidecar for {age:.0f} s (is it running? tmux-agentstate doctor)"
               if age is not None else "the sidecar's hosts.json has no time")
        hosts = [{**h, "status": "stale", "why": why} if h.get("status") == "connected" else h
                 for h in hosts]
    return hosts


def remote_rows(hosts: list[dict]) -> list[dict]:
    """Every remote row of these hosts, each with its host and whether it is stale."""
    out = []
    for h in hosts:
        for row in h.get("rows") or ():
            if isinstance(row, dict):
                out.append({**row, "host": h["host"], "stale": h.get("status") != "connected"})
    return out


def ask(folder: Path, request: dict, timeout: float = 15.0) -> tuple[int, str]:
    """Send one request to the sidecar's host links; (code, one line). Never raises."""
    return _ask(Path(folder) / HOSTS_SOCKET, request, timeout)


def _ask(path: Path, request: dict, timeout: float) -> tuple[int, str]:
    fail = 1
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            s.sendall(json.dumps(request, ensure_ascii=True).encode() + b"\n")
            buf = b""
            while b"\n" not in buf and len(buf) < 1 << 16:
                chunk = s.recv(4096)
                if not chunk:
                    break
                buf += chunk
    except FileNotFoundError:
        return fail, "no sidecar serves remote hosts here (tmux-agentstate start)"
    except (OSError, socket.timeout) as e:
        return fail, f"the sidecar did not answer: {getattr(e, 'strerror', None) or e}"
    try:
        reply = json.loads(buf.split(b"\n", 1)[0])
        code, text = int(reply["code"]), str(reply["text"])
    except (ValueError, KeyError, TypeError):
        return fail, "the sidecar's answer was not understood"
    return code, " ".join(text.split())[:300]
