"""`hosts`: each remote host in `@agentstate-hosts`, as the sidecar's link to it stands:
connected / stale / error / connecting, why, its last update, its round trip."""
from __future__ import annotations

import time

from .common import EXIT_FAIL, add_server, command, err, runtime_for, safe_json, say, tmux_for


def add(sub) -> None:
    h = command(sub, "hosts", "each remote host (@agentstate-hosts): connected, stale or error, "
                              "why, last update, round trip",
                "tmux-agentstate hosts", "tmux-agentstate hosts --json")
    add_server(h)
    h.add_argument("--json", action="store_true", help="one JSON object per host, per line")
    h.set_defaults(func=cmd_hosts)


def ago(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f}s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m ago"
    return f"{seconds / 3600:.0f}h ago"


def host_line(h: dict, now: float) -> str:
    """One host: destination, status, why, last update, round trip (all from hosts.json, so
    every field is checked: a field of another type shows as unknown)."""
    last = h.get("last_update")
    age = now - last if isinstance(last, (int, float)) and not isinstance(last, bool) else None
    rtt = h.get("rtt")
    trip = f"{rtt * 1000:.0f} ms" if isinstance(rtt, (int, float)) and not isinstance(rtt, bool) \
        else "-"
    rows = h.get("rows") if isinstance(h.get("rows"), list) else []
    why = h.get("why") if isinstance(h.get("why"), str) else ""
    return (f"{h['host']}  {h.get('status', '?')}  {len(rows)} pane(s)  last update {ago(age)}  "
            f"round trip {trip}" + (f"  ({why})" if why else ""))


def cmd_hosts(args) -> int:
    from ..sidecar.hosts import files
    tmux = tmux_for(args)
    runtime = runtime_for(tmux)
    pid = runtime.running_pid()
    hosts = files.read_hosts(runtime.dir) if pid else []
    if args.json:
        for h in hosts:
            say(safe_json({k: v for k, v in h.items() if k != "rows"}
                          | {"panes": len(h.get("rows") or [])}))
    if not pid:
        err("no sidecar runs for this tmux server, so no remote host is linked "
            f"(tmux-agentstate start -S {runtime.socket_path})")
        return EXIT_FAIL
    if args.json:
        return 0
    if not hosts:
        say("no remote hosts (set @agentstate-hosts)")
        return 0
    now = time.time()
    for h in hosts:
        say(host_line(h, now))
    return 0
