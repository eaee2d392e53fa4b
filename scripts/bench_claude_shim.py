#!/usr/bin/env python3
"""What `launch --status-shim claude` gains and costs (hooks/status_shim.py).

    .venv/bin/python scripts/bench_claude_shim.py [--part session|relay|all] [--keys 200]

session: the real Claude Code 2.1.332 against harness/mock_anthropic.py, in a private tmux
  server, once without the shim (the baseline) and once with it, through one script: start,
  a command that needs approval (blocked, approve, done), a turn ending in HTTP 400 and one in
  HTTP 401. The pane's bytes are stamped as tmux pipes them (pipe-pane -O); the screen is read
  every 10 ms with capture-pane. Printed: every OSC 7501 record and when, each screen state and
  how far the record led it, and the shim's CPU time, bytes forwarded and RSS at the end.
relay: the shim alone on a pty of ours (no tmux): a stand-in agent stamps each key it reads and
  each chunk it writes (CLOCK_MONOTONIC is one clock for all processes): added latency per
  keystroke and per output chunk against the same stand-in without the shim, and the shim's
  CPU per MB forwarded (a 64 MB flood).

Numbers vary with the machine; nothing here is asserted (tests/test_status_shim.py checks
behaviour). Never a real API: the mock listens on 127.0.0.1.
"""
from __future__ import annotations

import argparse
import os
import re
import select
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "harness"))
sys.path.insert(0, str(ROOT))

OSC = re.compile(rb"\x1b\]7501;([^\x07\x1b]*)(?:\x07|\x1b\\)")
TICK = os.sysconf("SC_CLK_TCK")
_RUNS = __import__("itertools").count()
DIALOG = "Do you want to proceed?"
STAMPER = r'''
import os, struct, sys, time
out = open(sys.argv[1], "wb", buffering=0)
while True:
    data = os.read(0, 65536)
    if not data:
        break
    out.write(struct.pack("<dI", time.monotonic(), len(data)) + data)
'''


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_kb(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pss_kb(pid: int) -> int:
    """Proportional set size: pages shared with another process (the keeper is a fork of the
    shim) count in part."""
    for line in open(f"/proc/{pid}/smaps_rollup"):
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def read_stamped(path: Path) -> tuple[bytes, list[tuple[int, float]]]:
    """(all bytes, [(offset where a chunk ends, its time)])."""
    import struct
    raw, data, index = path.read_bytes(), bytearray(), []
    i = 0
    while i + 12 <= len(raw):
        t, n = struct.unpack_from("<dI", raw, i)
        data += raw[i + 12:i + 12 + n]
        index.append((len(data), t))
        i += 12 + n
    return bytes(data), index


def time_at(index, offset: int) -> float:
    for end, t in index:
        if end > offset:
            return t
    return index[-1][1] if index else 0.0


# -- session: the real Claude Code -----------------------------------------------------------------
class Pane:
    def __init__(self, sock: str, name: str, cmd: str, cwd: Path, stamp: Path):
        self.sock, self.name, self.stamp = sock, name, stamp
        self.pane = self.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "36", "-c",
                              str(cwd), "-P", "-F", "#{pane_id} #{pane_pid}", cmd).split()
        self.pane, self.pid = self.pane[0], int(self.pane[1])
        self.tmux("pipe-pane", "-O", "-t", self.pane,
                  f"exec {shlex.quote(sys.executable)} -c {shlex.quote(STAMPER)} {shlex.quote(str(stamp))}")
        self.seen: dict[str, float] = {}   # screen marker -> first time seen (after a reset)
        self.screens: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    def screen(self) -> str:
        try:
            return self.tmux("capture-pane", "-p", "-t", self.pane)
        except subprocess.CalledProcessError:
            return ""

    def _watch(self) -> None:
        last = None
        while not self._stop.is_set():
            scr, t = self.screen(), time.monotonic()
            state = screen_state(scr)
            if state != last:
                self.screens.append((t, state))
                last = state
            time.sleep(0.01)

    def wait(self, pred, what: str, timeout: float = 60) -> None:
        end = time.time() + timeout
        while time.time() < end:
            if pred(self.screen()):
                return
            time.sleep(0.05)
        raise TimeoutError(f"never saw {what}:\n{self.screen()}")

    def type(self, text: str) -> None:
        for ch in text:
            self.tmux("send-keys", "-t", self.pane, "-l", "\\;" if ch == ";" else ch)
            time.sleep(0.005)
        time.sleep(0.4)
        self.tmux("send-keys", "-t", self.pane, "Enter")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def screen_state(scr: str) -> str:
    if DIALOG in scr:
        return "blocked"
    if "esc to interrupt" in scr:
        return "working"
    if "? for shortcuts" in scr:
        return "idle(error)" if "API Error" in scr else "idle"
    return "other"


def idle(scr: str) -> bool:
    return "? for shortcuts" in scr and "esc to interrupt" not in scr and DIALOG not in scr


def run_session(shim: bool, mock, base: Path, sock: str) -> dict:
    tag = "shim" if shim else "plain"
    env, proj = claude_home(base, tag, mock)
    cmd = launch_command(env, shim)
    stamp = base / f"{tag}.stamped"
    t0 = time.monotonic()
    pane = Pane(sock, tag, cmd, proj, stamp)
    return drive(pane, shim, t0)


def claude_home(base: Path, tag: str, mock) -> tuple[dict, Path]:
    import claude as hclaude
    proj = base / f"proj-{tag}"
    path = f"{hclaude.BIN.parent}:{os.path.dirname(sys.executable)}:/usr/bin:/bin"
    return hclaude.ready_home(base / f"home-{tag}", proj, mock.port, path), proj


def launch_command(env: dict, shim: bool) -> str:
    argv = [sys.executable, "-m", "tmux_agentstate", "launch"] + (["--status-shim"] if shim else []) \
        + ["claude", "--permission-mode", "manual"]
    return "exec env " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + shlex.join(argv)


def drive(pane: Pane, shim: bool, t0: float) -> dict:
    stamp = Path(pane.stamp)
    marks = {"start": t0}
    pane.wait(idle, "the input box", 90)
    marks["ready"] = time.monotonic()
    time.sleep(1.0)
    cpu_ready = cpu_seconds(pane.pid)  # the launch's own CPU before it became the shim is in it
    identity = None
    if shim:
        from tmux_agentstate import procs
        fg = procs.foreground(pane.pid)
        identity = fg and {"name": fg.name, "hint": fg.hint, "pids": fg.pids}
    marks["prompt1"] = time.monotonic()
    pane.type("set up the build output RUNCMD mkdir -p build && python3 -c 'import time, sys' "
              "&& touch build/out.txt")
    pane.wait(lambda s: DIALOG in s, "the dialog", 60)
    time.sleep(0.5)
    marks["approve"] = time.monotonic()
    pane.tmux("send-keys", "-t", pane.pane, "Enter")
    pane.wait(lambda s: "esc to interrupt" in s, "working", 20)
    pane.wait(idle, "idle after the command", 60)
    time.sleep(1.0)
    for kw in ("BADREQUEST", "BADKEY"):
        marks[kw] = time.monotonic()
        pane.type(f"please check the build {kw}")
        pane.wait(lambda s: "API Error" in s or "rror" in s and idle(s), f"{kw}'s error", 60)
        pane.wait(idle, f"idle after {kw}", 60)
        time.sleep(1.5)
    marks["end"] = time.monotonic()
    cost = {}
    if shim:
        keeper = [int(p) for p in open(f"/proc/{pane.pid}/task/{pane.pid}/children").read().split()]
        cost = {"shim_cpu_s (launch's python included)": cpu_seconds(pane.pid),
                "shim_cpu_s from the input box to the end": cpu_seconds(pane.pid) - cpu_ready,
                "shim_rss_kb": rss_kb(pane.pid),
                "keeper_rss_kb": sum(rss_kb(k) for k in keeper),
                "shim_pss_kb": pss_kb(pane.pid), "keeper_pss_kb": sum(pss_kb(k) for k in keeper)}
    agent_pid = int(pane.tmux("display-message", "-p", "-t", pane.pane, "#{pane_pid}"))
    cost["claude_cpu_s"] = _agent_cpu(agent_pid, shim)
    cost["launch_record"] = pane.tmux("display-message", "-p", "-t", pane.pane, "#{@agentstate_launch}")
    cost["last_hook_report"] = pane.tmux("display-message", "-p", "-t", pane.pane, "#{@agentstate_report}")
    cost["wall_s"] = marks["end"] - t0
    pane.stop()
    data, index = read_stamped(stamp)
    cost["bytes"] = len(data)
    oscs = [(time_at(index, m.start()), m.group(1).decode("utf-8", "replace")) for m in OSC.finditer(data)]
    return {"marks": marks, "oscs": oscs, "screens": pane.screens, "cost": cost,
            "identity": identity, "pane": pane}


def _agent_cpu(pane_pid: int, shim: bool) -> float:
    """Claude's own CPU time (behind the shim: the keeper's child)."""
    pid = pane_pid
    if shim:
        keeper = int(open(f"/proc/{pane_pid}/task/{pane_pid}/children").read().split()[0])
        pid = int(open(f"/proc/{keeper}/task/{keeper}/children").read().split()[0])
    return cpu_seconds(pid)


def time_to_input_box(shim: bool, mock, base: Path, sock: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        tag = f"start{next(_RUNS)}"
        env, proj = claude_home(base, tag, mock)
        cmd = launch_command(env, shim)
        t0 = time.monotonic()
        pane = Pane(sock, tag, cmd, proj, base / f"{tag}.stamped")
        pane.wait(idle, "the input box", 90)
        out.append(time.monotonic() - t0)
        pane.stop()
        pane.tmux("kill-session", "-t", pane.name)
    return out


def report_session(tag: str, r: dict) -> None:
    t0 = r["marks"]["start"]
    print(f"\n== {tag}: {len(r['oscs'])} OSC 7501 records, {r['cost']['bytes']} bytes from the pane")
    if r["identity"]:
        print(f"   procs.foreground through the shim: {r['identity']}")
    events = [(t, "osc", p) for t, p in r["oscs"]] + [(t, "screen", s) for t, s in r["screens"]] \
        + [(t, "mark", m) for m, t in r["marks"].items()]
    for t, kind, what in sorted(events):
        if kind == "osc":
            what = re.sub(r"msg=([A-Za-z0-9+/=]+)", lambda m: "msg=" + repr(_b64(m.group(1))), what)
        print(f"   {t - t0:8.3f}s  {kind:6} {what}")
    # how far each change of the OSC state led the screen's change to the same state (the
    # nearest one in time, within 2 s; a repeat of a state with a new msg is not a change)
    last = None
    for t, payload in r["oscs"]:
        state = payload.split(":")[0].removeprefix("state=")
        if state == last or payload == "?":
            continue
        last = state
        want = {"blocked": "blocked", "working": "working", "idle": "idle", "done": "idle",
                "error": "idle(error)"}.get(state)
        near = [ts for ts, scr in r["screens"] if scr == want and abs(ts - t) < 2.0]
        kind = re.search(r"kind=(\w+)", payload)
        name = state + (f"({kind.group(1)})" if kind else "")
        if near:
            ms = (min(near, key=lambda ts: abs(ts - t)) - t) * 1000
            print(f"   OSC {name:18} led the screen's {want:11} by {ms:7.1f} ms")
        else:
            print(f"   OSC {name:18} has no screen state of its own (the screen shows "
                  f"{[scr for ts, scr in r['screens'] if ts <= t + 0.5][-1:]})")
    print(f"   cost: {r['cost']}")


def _b64(text: str) -> str:
    import base64
    try:
        return base64.b64decode(text).decode("utf-8", "replace")
    except ValueError:
        return "?"


def part_session(starts: int) -> None:
    import claude as hclaude
    if not hclaude.BIN.exists():
        print(f"Claude Code is not installed at {hclaude.BIN}: scripts/install-agents")
        return
    base = Path(tempfile.mkdtemp(prefix="shimbench-"))
    sock = f"shimbench-{os.getpid()}"
    mock = hclaude.Mock(base / "requests.jsonl")
    try:
        for shim in (False, True):
            r = run_session(shim, mock, base, sock)
            report_session("with the shim" if shim else "baseline (no shim)", r)
        if starts:
            times = {shim: [] for shim in (False, True)}
            for _ in range(starts):  # alternated: the machine's load falls on both alike
                for shim in (False, True):
                    times[shim] += time_to_input_box(shim, mock, base, sock, 1)
            print(f"\n== start-up to the input box, {starts} runs each (median, max)")
            for shim, ts in times.items():
                print(f"   {'shim' if shim else 'plain':6}: {statistics.median(ts):.3f} s, {max(ts):.3f} s")
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
        mock.close()
        import common
        common.kill_pids(common.pids_naming(str(base)))


# -- relay: the shim alone on a pty of ours ----------------------------------------------------------
STANDIN = r'''
import os, sys, time, tty
tty.setraw(0)
os.write(1, b"ready\n")
while True:
    data = os.read(0, 64)
    got = time.monotonic_ns()
    if not data or b"q" in data:
        break
    if data.startswith(b"F"):  # flood: N MB in 64 KB writes
        block = b"x" * 65535 + b"\n"
        for _ in range(int(data[1:]) * 16):
            os.write(1, block)
        os.write(1, b"flooded\n")
        continue
    os.write(1, b"%d %d\n" % (got, time.monotonic_ns()))
'''


def relay_run(shim: bool, keys: int, flood_mb: int) -> dict:
    import pty
    argv = [sys.executable, "-c", STANDIN]
    if shim:
        argv = [sys.executable, "-m", "tmux_agentstate.hooks.status_shim", sys.executable] + argv
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["PYTHONPATH"] = str(ROOT)
        os.execvp(argv[0], argv)
    buf = b""

    def read_until(marker: bytes, timeout: float = 30.0) -> bytes:
        nonlocal buf
        end = time.monotonic() + timeout
        while marker not in buf:
            if not select.select([fd], [], [], max(0.0, end - time.monotonic()))[0]:
                raise TimeoutError(marker)
            buf = buf[-len(marker):] + os.read(fd, 1 << 16)  # a flood is not kept
        out, _, buf = buf.partition(marker)
        return out

    read_until(b"ready\n")
    ins, outs = [], []
    for _ in range(keys):
        sent = time.monotonic_ns()
        os.write(fd, b"k")
        line = read_until(b"\n")
        arrived = time.monotonic_ns()
        got, wrote = (int(x) for x in line.split()[-2:])
        ins.append((got - sent) / 1e6)
        outs.append((arrived - wrote) / 1e6)
        time.sleep(0.005)
    cpu0 = cpu_seconds(pid)
    t = time.monotonic()
    os.write(fd, b"F%d" % flood_mb)
    read_until(b"flooded\n", 120)
    flood_s = time.monotonic() - t
    cpu = cpu_seconds(pid) - cpu0  # the shim's own (its children are not counted till reaped)
    rss = rss_kb(pid)
    os.write(fd, b"q")
    os.waitpid(pid, 0)
    os.close(fd)
    return {"in": ins, "out": outs, "flood_s": flood_s, "cpu": cpu, "rss": rss}


def part_relay(keys: int, flood_mb: int) -> None:
    print(f"\n== relay: {keys} keystrokes, then {flood_mb} MB of output (no tmux)")
    base = {}
    for shim in (False, True):
        r = relay_run(shim, keys, flood_mb)
        tag = "shim" if shim else "direct"
        base[tag] = r
        print(f"   {tag:6}: key→agent median {statistics.median(r['in']):.3f} ms max "
              f"{max(r['in']):.3f} | chunk→reader median {statistics.median(r['out']):.3f} ms max "
              f"{max(r['out']):.3f} | flood {flood_mb / r['flood_s']:.0f} MB/s")
    s, d = base["shim"], base["direct"]
    print(f"   added by the shim: per keystroke median "
          f"{statistics.median(s['in']) - statistics.median(d['in']):+.3f} ms, per output chunk "
          f"median {statistics.median(s['out']) - statistics.median(d['out']):+.3f} ms")
    print(f"   shim CPU {s['cpu'] / flood_mb * 1000:.1f} ms per MB forwarded; shim RSS {s['rss']} kB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("session", "relay", "all"), default="all")
    ap.add_argument("--keys", type=int, default=200)
    ap.add_argument("--flood-mb", type=int, default=64)
    ap.add_argument("--starts", type=int, default=5, help="start-ups timed per mode")
    a = ap.parse_args()
    if a.part in ("relay", "all"):
        part_relay(a.keys, a.flood_mb)
    if a.part in ("session", "all"):
        part_session(a.starts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
