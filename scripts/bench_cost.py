"""What the sidecar costs as the user pays it: `bench_sidecar.py cost` (not a test: figures).

Each run makes a private tmux server with N agent panes, measures the tmux server alone for
`--seconds`, then starts the sidecar on the same panes (the cold start: until every pane has
`@agentstate`) and measures again, then stops it and measures tmux alone once more (the mean
of the two is "tmux alone": what replayed panes make tmux do drifts from minute to minute):

- sidecar: its own CPU, the tmux clients it ran and its control-mode client;
- tmux alone / tmux with: the server's CPU, and with the sidecar also its `pipe-pane`
  children (the `cat` per piped pane that was not handed over: work we make the server start;
  "(pipes)" is their part);
- added: sidecar + (tmux with - tmux alone); ratio: added / tmux alone;
- RSS: the sidecar's largest resident set while measured.

A twin server runs beside it all along: the same panes, the same replays from the same seeds,
never a sidecar. Its CPU in the same seconds is the other baseline ("twin" columns): added =
sidecar + (tmux with - twin then) - (tmux alone - twin, before and after): the two servers'
difference with the sidecar less their difference without it. Before and after only bracket the
sidecar's window; the twin is measured in it. (What tmux spends on the same replays falls by
a third over the first minutes, on this machine even with no history kept; single runs of the
before/after figure scattered by 1.5 % of a core.)

Scenarios: `idle:N` (each pane shows a real idle capture, then nothing: an agent that waits),
`busy:N` (each pane replays real captures at ~0.75 KB/s, bursts to 10 KB/s, looped: state
changes every few seconds, never a long pause) and `agents:N` (the fake Claude-like agent on
autopilot, `demo.fake_agent`: turns of working with a spinner, silent tool calls, dialogs
answered after 3-8 s, idle spells: closer to what a user runs).
"""
from __future__ import annotations

import os
import random
import shlex
import statistics
import subprocess
import time
from contextlib import contextmanager

import psutil

from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.screen import PaneScreen
from tmux_agentstate.demo.replay import TICK, writes


def _cpu(proc: psutil.Process, reaped: bool = False) -> float:
    """CPU seconds: from the scheduler's own count in nanoseconds (/proc/PID/task/*/schedstat)
    where there is one (the clock-tick counts psutil reads are 10 ms steps: 50 `cat`s that
    each ran 5 ms read as nothing), plus the children it reaped if asked."""
    try:
        t = proc.cpu_times()
    except psutil.Error:
        return 0.0
    try:
        tasks = os.listdir(f"/proc/{proc.pid}/task")
        own = sum(int(open(f"/proc/{proc.pid}/task/{task}/schedstat").read().split()[0])
                  for task in tasks) / 1e9
    except (OSError, ValueError, IndexError):
        own = t.user + t.system
    return own + ((t.children_user + t.children_system) if reaped else 0.0)


class Sample:
    """CPU seconds of a set of processes, followed while some come and go."""

    def __init__(self, procs):
        self.start = {p.pid: _cpu(p) for p in procs}
        self.procs = {p.pid: p for p in procs}

    def add(self, procs) -> None:
        for p in procs:
            if p.pid not in self.procs:
                self.procs[p.pid], self.start[p.pid] = p, _cpu(p)

    def seconds(self) -> float:
        return sum(max(0.0, _cpu(p) - self.start[pid]) for pid, p in self.procs.items())


def pane_pids(bench) -> set[int]:
    return {int(x) for x in bench.tmux("list-panes", "-a", "-F", "#{pane_pid}").split()}


def server_helpers(server: psutil.Process, panes: set[int]) -> list[psutil.Process]:
    """The server's children that are not panes: `pipe-pane` commands."""
    try:
        return [c for c in server.children() if c.pid not in panes]
    except psutil.Error:
        return []


def make_panes(bench, scenario: str, n: int, python: str) -> None:
    fixtures = load_index()
    if scenario == "idle":
        chosen = [f for f in fixtures if f.state == "idle" and f.agent == "claude"
                  and f.path.stat().st_size > 2000]
    else:
        chosen = [f for f in fixtures if f.path.stat().st_size > 20_000]
    if scenario == "agents":  # fake agents on autopilot: minutes of work with a spinner,
        # tool calls that print nothing, a dialog answered after 3-8 s: what a user runs
        for i in range(n):
            bench.pane(f"env AGENTSTATE_AGENT=claude {shlex.quote(python)} -m "
                       f"tmux_agentstate.demo.fake_agent --autopilot --seed {i + 7}")
        return
    for i in range(n):
        fx = chosen[i % len(chosen)]
        if scenario == "idle":
            cmd = (f"env AGENTSTATE_AGENT={fx.agent} sh -c "
                   f"{shlex.quote('cat ' + shlex.quote(str(fx.path)) + '; exec sleep 86400')}")
        else:
            cmd = (f"env AGENTSTATE_AGENT={fx.agent} {shlex.quote(python)} -m "
                   f"tmux_agentstate.demo.replay --rate 750 --loop --from-anywhere --seed {i} "
                   f"{shlex.quote(str(fx.path))}")
        bench.pane(cmd, fx.rows, fx.cols)


def stateful(bench) -> tuple[int, int]:
    states = bench.tmux("list-panes", "-a", "-F", "#{pane_pid} #{@agentstate}").splitlines()
    return sum(1 for s in states if len(s.split()) > 1), len(states)


@contextmanager
def twin_pair(bench_cls, name: str, scenario: str, n: int, python: str):
    """Two private servers with the same panes (the same replays from the same seeds): one
    for what is measured, its twin left alone, measured in the same seconds."""
    made = []
    try:
        for prefix in ("", "twin-"):
            made.append(bench_cls(prefix + name))
            make_panes(made[-1], scenario, n, python)
            made[-1].tmux("kill-session", "-t", "bench")  # only the agent panes
        yield made[0], made[1]
    finally:
        for bench in made:
            bench.close()


def side_by_side(one: list, other: list, seconds: float) -> tuple[float, float]:
    """Two sets of processes' CPU over the same `seconds`, each in cores."""
    a, b = Sample(one), Sample(other)
    time.sleep(seconds)
    return a.seconds() / seconds, b.seconds() / seconds


def one_run(bench_cls, scenario: str, n: int, intake: str, seconds: float, python: str,
            interval: float, run: int) -> dict:
    with twin_pair(bench_cls, f"cost-{scenario}{n}-{intake}-{run}", scenario, n,
                   python) as (b, twin_bench):
        time.sleep(3 if scenario == "idle" else 5)  # the panes' own start is not measured
        server, twin = psutil.Process(b.server_pid), psutil.Process(twin_bench.server_pid)
        tmux_alone, twin_alone = side_by_side([server], [twin], seconds)
        apart = tmux_alone - twin_alone  # the servers' own difference
        panes = pane_pids(b)
        t0 = time.monotonic()
        sc = b.sidecar(interval, intake)
        cold = None
        while time.monotonic() - t0 < 60:
            done, total = stateful(b)
            if done >= total:
                cold = time.monotonic() - t0
                break
            time.sleep(0.1)
        time.sleep(3)  # seeded, piped
        me = psutil.Process(sc.pid)
        side = Sample([me, *me.children(recursive=True)])
        side_reaped = _cpu(me, reaped=True) - _cpu(me)
        tmux, pipes = Sample([server]), Sample(server_helpers(server, panes))
        twin_with = Sample([twin])
        rss = []
        t1 = time.monotonic()
        while time.monotonic() - t1 < seconds:
            time.sleep(1)
            try:
                rss.append(me.memory_info().rss)
                side.add(me.children(recursive=True))
            except psutil.Error:
                break
            pipes.add(server_helpers(server, panes))
        dt = time.monotonic() - t1
        sidecar = (side.seconds() + (_cpu(me, reaped=True) - _cpu(me) - side_reaped)) / dt
        tmux_with = (tmux.seconds() + pipes.seconds()) / dt
        twin_then = twin_with.seconds() / dt
        # tmux alone again once the sidecar is gone (its pipes closed): what the replays make
        # tmux do drifts over a minute, and the mean of before and after is the fairer match
        # for the window between them
        alive = sc.poll() is None
        pipes_part = pipes.seconds() / dt  # before the sidecar stops: its pipes go with it
        sc.terminate()
        sc.wait(10)
        time.sleep(3)
        after, twin_after = side_by_side([server], [twin], seconds)
        apart = (apart + after - twin_after) / 2
        tmux_alone = (tmux_alone + after) / 2
        added = sidecar + tmux_with - tmux_alone
        twin_added = sidecar + tmux_with - twin_then - apart
        return {"sidecar": 100 * sidecar, "tmux_alone": 100 * tmux_alone,
                "tmux_with": 100 * tmux_with, "pipes": 100 * pipes_part,
                "added": 100 * added,
                "ratio": added / tmux_alone if tmux_alone > 0 else float("inf"),
                "twin": 100 * twin_then, "twin_added": 100 * twin_added,
                "twin_ratio": twin_added / twin_then if twin_then > 0 else float("inf"),
                "rss": max(rss, default=0) / 2**20, "cold": cold, "alive": alive}


def cmd_cost(args, bench_cls, python: str) -> None:
    print(f"{args.seconds:.0f} s measured per phase; CPU in % of one core; ratio = added / "
          f"tmux alone")
    print("twin: a server with the same panes and no sidecar, measured in the same seconds")
    print(f"{'scenario':<9} {'intake':<8} {'run':>3} {'sidecar':>8} {'tmux alone':>10} "
          f"{'tmux with':>9} {'(pipes)':>8} {'added':>7} {'ratio':>6} {'twin':>6} "
          f"{'added':>6} {'ratio':>6} {'RSS MB':>7} {'cold s':>7}")
    for spec in args.scenarios.split(","):
        scenario, _, count = spec.partition(":")
        for intake in args.intakes.split(","):
            rows = []
            for run in range(1, args.runs + 1):
                r = one_run(bench_cls, scenario, int(count), intake, args.seconds, python,
                            args.interval, run)
                rows.append(r)
                cold = f"{r['cold']:.2f}" if r["cold"] is not None else "never"
                print(f"{spec:<9} {intake:<8} {run:>3} {r['sidecar']:>8.2f} "
                      f"{r['tmux_alone']:>10.2f} {r['tmux_with']:>9.2f} {r['pipes']:>8.2f} "
                      f"{r['added']:>7.2f} {r['ratio']:>6.2f} {r['twin']:>6.2f} "
                      f"{r['twin_added']:>6.2f} {r['twin_ratio']:>6.2f} {r['rss']:>7.1f} {cold:>7}"
                      f"{'' if r['alive'] else '  (sidecar DIED)'}", flush=True)
            if len(rows) > 1:
                med = {k: statistics.median(r[k] for r in rows) for k in
                       ("sidecar", "tmux_alone", "tmux_with", "pipes", "added", "ratio", "twin",
                        "twin_added", "twin_ratio", "rss")}
                print(f"{spec:<9} {intake:<8} {'med':>3} {med['sidecar']:>8.2f} "
                      f"{med['tmux_alone']:>10.2f} {med['tmux_with']:>9.2f} {med['pipes']:>8.2f} "
                      f"{med['added']:>7.2f} {med['ratio']:>6.2f} {med['twin']:>6.2f} "
                      f"{med['twin_added']:>6.2f} {med['twin_ratio']:>6.2f} {med['rss']:>7.1f}",
                      flush=True)


# the least a Python reader of N panes' FIFOs can do: wait on them all, drain what each
# holds, sleep as the sidecar does after a wake (intakes/base.py COALESCE); reads counted
BARE_READER = r"""
import os, selectors, signal, sys, time
sel, held, reads = selectors.DefaultSelector(), [], [0]
for path in sys.argv[2:]:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    held.append(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # never EOF between writers
    sel.register(fd, selectors.EVENT_READ)
def done(*_):
    print(reads[0], flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, done)
print("ready", flush=True)
while True:
    for key, _ in sel.select():
        while True:
            try:
                reads[0] += 1
                if len(os.read(key.fd, 65536)) < 65536:
                    break
            except BlockingIOError:
                break
    time.sleep(float(sys.argv[1]))
"""


def bare_reader(bench, panes: list[str], python: str, seconds: float) -> tuple[float, float]:
    """The panes piped (a `cat` each) into FIFOs that a bare Python loop reads (BARE_READER):
    its CPU in cores over `seconds`, and its reads a second over its life."""
    from tmux_agentstate.sidecar.intakes.base import COALESCE
    fifos = []
    for pane in panes:
        fifos.append(str(bench.tmp / f"bare-{pane.lstrip('%')}.fifo"))
        os.mkfifo(fifos[-1], 0o600)
    reader = subprocess.Popen([python, "-c", BARE_READER, str(COALESCE), *fifos],
                              stdout=subprocess.PIPE, text=True)
    try:
        reader.stdout.readline()  # every FIFO open
        started = time.monotonic()
        for pane, fifo in zip(panes, fifos):
            bench.tmux("pipe-pane", "-O", "-t", pane, f"exec cat > {shlex.quote(fifo)}")
        time.sleep(3)
        me = psutil.Process(reader.pid)
        before, t0 = _cpu(me), time.monotonic()
        time.sleep(seconds)
        spent, dt = _cpu(me) - before, time.monotonic() - t0
        reader.terminate()
        reads = int(reader.stdout.readline() or 0)
    finally:
        if reader.poll() is None:
            reader.kill()
        reader.wait()
    return spent / dt, reads / (time.monotonic() - started)


def cmd_floor(args, bench_cls, python: str) -> None:
    """The floor of any intake that streams a pane's bytes: N busy panes, tmux alone, then
    each pane piped into `cat > /dev/null` (no sidecar): the server's added CPU, the cats'.
    A twin server with the same panes, never piped, is measured in the same seconds (tmux
    alone drifts from minute to minute: see the module's docstring). Then the same bytes
    read by the least a Python reader does (BARE_READER): what any sidecar in Python pays
    before it parses a byte."""
    print(f"{args.panes} busy panes, {args.seconds:.0f} s a phase; % of one core; "
          f"twin: the same panes on a server never piped, the same seconds")
    for run in range(1, args.runs + 1):
        with twin_pair(bench_cls, f"floor-{run}", "busy", args.panes, python) as (b, twin_bench):
            time.sleep(5)
            server, twin = psutil.Process(b.server_pid), psutil.Process(twin_bench.server_pid)
            tmux_alone, twin_alone = side_by_side([server], [twin], args.seconds)
            apart = tmux_alone - twin_alone
            panes = pane_pids(b)
            for pane in b.tmux("list-panes", "-a", "-F", "#{pane_id}").split():
                b.tmux("pipe-pane", "-O", "-t", pane, "exec cat > /dev/null")
            time.sleep(3)
            piped, cats = Sample([server]), Sample(server_helpers(server, panes))
            twin_then = Sample([twin])
            time.sleep(args.seconds)
            twin_cpu = twin_then.seconds() / args.seconds
            server_added = piped.seconds() / args.seconds - twin_cpu - apart
            cat_cpu = cats.seconds() / args.seconds
            added = server_added + cat_cpu
            print(f"run {run}: tmux alone {100 * tmux_alone:.2f} (twin then {100 * twin_cpu:.2f})"
                  f", piped: server {100 * server_added:+.2f}, cats {100 * cat_cpu:.2f}; added "
                  f"{100 * added:.2f} = {added / twin_cpu if twin_cpu else float('inf'):.2f}x "
                  f"the twin's tmux", flush=True)
            bare, reads = bare_reader(b, b.tmux("list-panes", "-a", "-F", "#{pane_id}").split(),
                                      python, args.seconds)
            print(f"run {run}: a bare Python reader of the same bytes (wait on all, drain, "
                  f"sleep as the sidecar): {100 * bare:.2f} % ({reads:.0f} reads/s)", flush=True)
    parse_floor(args.panes)


def parse_floor(n: int, simulated: float = 30.0, reads=(0.1, 0.5, 2.0)) -> None:
    """What our screen's parse of the same load costs with no tmux, no FIFO, no sidecar: the
    busy panes' replayed bytes (the same captures, shape and seeds), fed to one screen per
    pane in one read per pane every `reads` seconds; CPU per second of the load."""
    chosen = [f for f in load_index() if f.path.stat().st_size > 20_000]
    ticks = round(simulated / TICK)
    panes = []  # per pane: its bytes at each tick, and its screen's size
    for i in range(n):
        fx = chosen[i % len(chosen)]
        # as `make_panes` replays it (looped, from anywhere, seed i), less the start it writes
        # at once
        paced = (data for data, tick in writes([fx.path.read_bytes()], random.Random(i),
                                               750, 10_000, True, True) if tick)
        chunks = [next(paced) for _ in range(ticks)]
        panes.append((chunks, fx.rows, fx.cols))
    for every in reads:
        per_read = max(1, round(every / TICK))
        screens = [PaneScreen(rows, cols) for _, rows, cols in panes]
        reads_of = [[b"".join(chunks[t:t + per_read]) for t in range(0, ticks, per_read)]
                    for chunks, _, _ in panes]
        started = time.process_time()
        for k in range(len(reads_of[0])):
            for screen, read in zip(screens, reads_of):
                screen.feed(read[k])
        spent = time.process_time() - started
        print(f"our parse alone, a read per pane every {every:g} s: "
              f"{100 * spent / simulated:.2f} % of a core", flush=True)
