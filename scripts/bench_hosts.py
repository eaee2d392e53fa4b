#!/usr/bin/env python3
"""Benchmark: what remote hosts cost the local sidecar, and how fast a host's change shows.

    .venv/bin/python scripts/bench_hosts.py [--hosts 10] [--panes 50] [--seconds 60]

A real sshd on 127.0.0.1 (keys made here, tests/sshd.py), `--hosts` ssh_config aliases, each
reaching its own "remote" tmux server (its own TMUX_TMPDIR) where the real
`tmux-agentstate stream` runs over a real SSH session. On each host, `--panes` agent panes
change state at real agents' rate: each pane works 5-60 s, waits on a prompt 3-30 s (one turn in
three), sits idle 10-90 s, the rows written to the host's panes.json as the host's own sidecar
writes them (a stand-in holds its lock and writes the rows: the host's sidecar is the host's
cost, not the local one's; test_stream.py covers the real one).

Measured on the local machine (CPU seconds from /proc, as a share of one core):
  phase A: the local sidecar with no hosts set (the same local tmux server, no panes);
  phase B: the same sidecar after `set -g @agentstate-hosts` names every host.
The added cost is B - A for the sidecar, plus its ssh clients (they decrypt the streams), and
the local tmux server's. The latency is from the moment a host's panes.json is replaced to the
moment the local hosts.json (what `list --json` reads) has the row's new state, for every
change in phase B: median, 90th percentile, max.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from sshd import REMOTE_COMMAND, RemoteTmux, Sshd  # noqa: E402
from tmux_agentstate.sidecar.hosts.files import read_hosts  # noqa: E402
from tmux_agentstate.sidecar.pane_rows import PANE_ROWS  # noqa: E402
from tmux_agentstate.sidecar.runtime import Runtime  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK
    except (OSError, IndexError, ValueError):
        return 0.0


def children(pid: int) -> list[int]:
    """Every thread's children (the sidecar starts each host's ssh from that link's thread:
    /proc/PID/task/PID/children lists the main thread's only)."""
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return out


class StandIn:
    """The hosts' sidecars, as far as their rows go: panes.json per host, rows changing at
    real agents' rate. Every change is logged (write time, host, pane, state)."""

    def __init__(self, hosts: dict[str, RemoteTmux], panes: int, seed: int = 1):
        self.rng = random.Random(seed)
        self.hosts = hosts
        self.runtimes = {}
        for alias, remote in hosts.items():
            rt = Runtime(remote.socket).ensure()
            assert rt.acquire(), f"{alias}: a sidecar runs there already"
            self.runtimes[alias] = rt
        now = time.time()
        self.rows = {alias: {f"%{i}": self._row(i, "idle", now) for i in range(panes)}
                     for alias in hosts}
        self.next_change = {(a, p): now + self.rng.uniform(0, 60)
                            for a in hosts for p in self.rows[a]}
        self.log: list[tuple[float, str, str, str]] = []
        self.recording = False
        self._stop = threading.Event()

    def _row(self, i: int, state: str, now: float) -> dict:
        return {"pane": f"%{i}", "target": f"main:{i}.0", "session": "main", "window": str(i),
                "window_name": "", "state": state, "agent": "claude", "since": int(now),
                "source": "screen", "agent_version": "2.1.332", "done": False, "error": None,
                "context": 40, "detail": "Do you want to proceed?" if state == "blocked" else ""}

    def _next(self, state: str) -> tuple[str, float]:
        if state == "working":
            return ("blocked", self.rng.uniform(3, 30)) if self.rng.random() < 1 / 3 \
                else ("idle", self.rng.uniform(10, 90))
        return "working", self.rng.uniform(5, 60)

    def write(self, alias: str) -> float:
        path = self.runtimes[alias].dir / PANE_ROWS
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"v": 1, "written": time.time(),
                                   "rows": list(self.rows[alias].values())}))
        os.replace(tmp, path)
        return time.time()

    def run(self) -> None:
        for alias in self.hosts:
            self.write(alias)
        while not self._stop.wait(0.05):
            now = time.time()
            changed: dict[str, list[tuple[str, str]]] = {}
            for (alias, pane), due in self.next_change.items():
                if due <= now:
                    state, hold = self._next(self.rows[alias][pane]["state"])
                    self.rows[alias][pane] = self._row(int(pane[1:]), state, now)
                    self.next_change[(alias, pane)] = now + hold
                    changed.setdefault(alias, []).append((pane, state))
            for alias, panes in changed.items():
                at = self.write(alias)
                if self.recording:
                    self.log += [(at, alias, p, s) for p, s in panes]

    def stop(self) -> None:
        self._stop.set()
        for rt in self.runtimes.values():
            rt.release()


class Watcher:
    """When each (host, pane, state) first shows in the local hosts.json."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.seen: dict[tuple[str, str], tuple[str, float]] = {}
        self.first: dict[tuple[str, str, str, int], float] = {}
        self._stop = threading.Event()

    def run(self) -> None:
        stamp = None
        while not self._stop.wait(0.01):
            try:
                st = os.stat(self.folder / "hosts.json")
            except OSError:
                continue
            if (st.st_ino, st.st_mtime_ns) == stamp:
                continue
            stamp = (st.st_ino, st.st_mtime_ns)
            now = time.time()
            for h in read_hosts(self.folder):
                for row in h.get("rows") or ():
                    key = (h["host"], row["pane"])
                    if self.seen.get(key, ("",))[0] != row["state"]:
                        self.seen[key] = (row["state"], now)
                        self.first.setdefault((h["host"], row["pane"], row["state"],
                                               row.get("since") or 0), now)


def measure(pids_fn, seconds: float) -> dict[str, float]:
    start = {name: sum(cpu_seconds(p) for p in pids) for name, pids in pids_fn().items()}
    t0 = time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - t0
    end = {name: sum(cpu_seconds(p) for p in pids) for name, pids in pids_fn().items()}
    return {name: 100.0 * (end[name] - start.get(name, 0.0)) / wall for name in end}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=10)
    ap.add_argument("--panes", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--warmup", type=float, default=15.0)
    a = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-hosts-"))
    sshd = Sshd(base / "sshd")
    remotes = {}
    local = f"bench-hosts-{os.getpid()}"
    env = dict(os.environ, XDG_RUNTIME_DIR=str(base / "xdg"))
    env.pop("TMUX", None)
    (base / "xdg").mkdir(mode=0o700)
    stand_in = watcher = None
    try:
        for i in range(a.hosts):
            alias = f"h{i}"
            remotes[alias] = RemoteTmux(base / f"r{i}")
            sshd.host(alias, tmpdir=remotes[alias].tmpdir)
        stand_in = StandIn(remotes, a.panes)
        threading.Thread(target=stand_in.run, daemon=True).start()
        subprocess.run(["tmux", "-L", local, "-f", "/dev/null", "new-session", "-d"], env=env, check=True)
        tmux = lambda *args: subprocess.run(["tmux", "-L", local, *args], env=env, check=True,
                                            capture_output=True, text=True).stdout.strip()
        tmux("set", "-g", "@agentstate-ssh", sshd.ssh)
        tmux("set", "-g", "@agentstate-remote-command", REMOTE_COMMAND)
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "start", "-L", local], env=env,
                       check=True, capture_output=True)
        runtime = Runtime(tmux("display-message", "-p", "#{socket_path}"))
        sidecar = runtime.running_pid()
        server = int(tmux("display-message", "-p", "#{pid}"))
        ssh_pids = lambda: [p for p in children(sidecar) if Path(f"/proc/{p}/comm").exists()
                            and Path(f"/proc/{p}/comm").read_text().strip() == "ssh"]
        host_side = lambda: [p for s in sshd.session_pids() for p in [s, *children(s)]]
        pids = lambda: {"sidecar": [sidecar], "ssh clients": ssh_pids(), "tmux server": [server],
                        "hosts: sshd + stream": host_side()}
        time.sleep(a.warmup)
        alone = measure(pids, a.seconds)
        watcher = Watcher(runtime.dir)
        threading.Thread(target=watcher.run, daemon=True).start()
        tmux("set", "-g", "@agentstate-hosts", " ".join(remotes))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            hosts = read_hosts(runtime.dir)
            if len(hosts) == a.hosts and all(h.get("status") == "connected" for h in hosts):
                break
            time.sleep(0.2)
        else:
            print("hosts did not all connect:", [(h["host"], h.get("status"), h.get("why"))
                                                 for h in read_hosts(runtime.dir)])
            return 1
        time.sleep(a.warmup)
        stand_in.recording = True
        linked = measure(pids, a.seconds)
        stand_in.recording = False
        time.sleep(2)
        lat = []
        for at, alias, pane, state in stand_in.log:
            got = [t for (h, p, s, _), t in watcher.first.items() if (h, p) == (alias, pane)
                   and s == state and t >= at - 0.001]
            if got:
                lat.append(min(got) - at)
        rows = sum(len(h.get("rows") or ()) for h in read_hosts(runtime.dir))
        print(f"{a.hosts} hosts x {a.panes} panes over ssh on loopback; {a.seconds:.0f} s per phase; "
              f"{len(stand_in.log)} state changes on the hosts in phase B "
              f"({len(stand_in.log) / a.seconds:.1f}/s); local rows {rows}")
        print(f"{'process':<22} {'A: no hosts':>12} {'B: hosts':>10} {'added':>8}  (% of one core)")
        for name in alone:
            print(f"{name:<22} {alone[name]:>11.2f}% {linked[name]:>9.2f}% "
                  f"{linked[name] - alone[name]:>7.2f}%")
        local_added = sum(linked[n] - alone[n] for n in ("sidecar", "ssh clients", "tmux server"))
        print(f"local added (sidecar + ssh clients + tmux server): {local_added:.2f}% of one core")
        if lat:
            lat.sort()
            print(f"host change -> local hosts.json: n={len(lat)} of {len(stand_in.log)}, median "
                  f"{statistics.median(lat) * 1000:.0f} ms, p90 {lat[int(0.9 * len(lat))] * 1000:.0f} ms, "
                  f"max {lat[-1] * 1000:.0f} ms")
        return 0
    finally:
        if stand_in:
            stand_in.stop()
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "stop", "-L", local], env=env,
                       capture_output=True)
        subprocess.run(["tmux", "-L", local, "kill-server"], capture_output=True)
        for r in remotes.values():
            subprocess.run(["tmux", "kill-server"], env=r.env, capture_output=True)
        sshd.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
