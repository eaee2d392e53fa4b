#!/usr/bin/env python3
"""The agent's own word against its screen, transition by transition (issue 27, "Must show").

    .venv/bin/python scripts/osc_vs_screen.py [--agents codex,pi] [--keep DIR]
    .venv/bin/python scripts/osc_vs_screen.py --replay DIR     # the recordings --keep kept

Runs a REAL Codex (harness/codex.py's pinned release) and a REAL pi 1.x (harness/pi.py's pinned
release, with PI_PROGRAM_STATUS=1 as `launch pi` sets it) in private tmux servers against the
harness's mock model servers on 127.0.0.1, driven by the harness drivers: a turn whose command
needs approval (a dialog that blocks and is answered), a slow streamed reply, a plain finished
turn (pi also: its question picker answered with Esc, and `/new`'s confirm dialog). The pane's
bytes are recorded with each chunk's arrival time (`pipe-pane` into harness/stamppipe.py).

Then the recording is replayed chunk by chunk: after each chunk, the agent's own OSC 7501 root
record (core/status.py's StatusBoard, fed the payloads in order) and the screen's verdict (the
bytes emulated by core/screen.py's PaneScreen, classified by the agent's manifest with the OSC
hidden from it: the screen alone). Both timelines are printed; each OSC transition is paired
with the screen's first move to the same state within PAIR_WINDOW (done and error count as
idle); the lead is screen time - OSC time (positive: the OSC report came first). A screen state
or OSC state that lasts less than FLICKER seconds (a frame drawn between two redraws, Codex's
start-up idle/working/idle) is not a transition, on either side.

Summary per agent: transitions agreed / not, median lead, the share of the session's time both
say the same state. Takes ~2 minutes. Nothing is asserted: numbers, for the issue's closing
note.
"""
from __future__ import annotations

import argparse
import bisect
import dataclasses
import os
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "harness"))

import common  # noqa: E402  (harness/)
import stamppipe  # noqa: E402
from tmuxrec import Recording  # noqa: E402

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog  # noqa: E402
from tmux_agentstate.core.screen import PaneScreen  # noqa: E402
from tmux_agentstate.core.status import StatusBoard  # noqa: E402

OSC_7501 = b"\x1b]7501;"
AS_STATE = {"working": "working", "blocked": "blocked", "done": "idle", "error": "idle", "idle": "idle"}
PAIR_WINDOW = 5.0   # s: an OSC transition and the screen's move to the same state this far apart pair
FLICKER = 0.15      # s: a screen state shorter than this is a frame in passing, not a transition
ROWS, COLS = 30, 100


# -- the live sessions ---------------------------------------------------------------------------
def run_codex(work: Path) -> tuple[Recording, list[str]]:
    import codex
    mock = common.Mock("mock_openai.py", work / "codex-mock.jsonl", slow=5, delay=4)
    sess = codex.Session("osc-vs-screen", ROWS, COLS)
    home, proj = work / "codex-home", work / "codex-proj"
    codex.make_home(sess, home, proj, mock.port)
    env = {"CODEX_HOME": str(home), "MOCK_API_KEY": "sk-mock-not-a-real-key", **common.tmux_env()}
    if not codex.CODEX_BIN.exists():
        codex.install()
    rec = Recording(work / "codex-rec", [str(codex.CODEX_BIN)], rows=ROWS, cols=COLS, env=env,
                    cwd=proj, stamped=True)
    steps: list[str] = []
    c = codex.Ctx(sess, rec, "(no shots)", {})
    c.mock_log = mock.log
    try:
        c.wait_ready()
        steps.append("prompt: a command that needs approval; answered y")
        c.prompt("could you run `mkdir -p dist && cp main.py dist/` for me")
        c.wait_text("Would you like to run the following command")
        time.sleep(1.0)
        rec.send("y")
        c.wait_text("You approved")
        c.wait_idle()
        time.sleep(1.0)
        steps.append("prompt: a slow streamed reply (~5 s)")
        c.prompt("walk me through the startup code slowly")
        c.wait_idle()
        time.sleep(1.0)
        steps.append("prompt: a short reply (a finished turn)")
        c.prompt("there is an off-by-one bug in main.py, can you fix it")
        c.wait_text("regression test?")
        c.wait_idle()
        time.sleep(1.5)
    finally:
        rec.close()
        mock.close()
        common.reap(home)
    return rec, steps


def run_pi(work: Path) -> tuple[Recording, list[str]]:
    import pi
    if not pi.PI_BIN.exists():
        pi.install()
    mock = common.Mock("mock_pi.py", work / "pi-mock.jsonl", slow=5, delay=4)
    sess = pi.Session("osc-vs-screen", ROWS, COLS, project="queue_worker",
                      extensions=("permission-gate.ts", "question.ts", "confirm-destructive.ts"))
    home, proj = work / "pi-home", work / "queue_worker"
    pi.make_home(home, proj, mock.port)
    env = {"HOME": str(home), "PI_OFFLINE": "1", **common.tmux_env(), **pi.agent_env()}
    cmd = [str(pi.PI_BIN), "--provider", "mock", "--model", "mock-model",
           *pi.extension_args(sess.extensions)]
    rec = Recording(work / "pi-rec", cmd, rows=ROWS, cols=COLS, env=env, cwd=proj, stamped=True)
    steps: list[str] = []
    c = pi.Ctx(sess, rec, "(no shots)", {})
    try:
        c.wait_text("mock-model")
        rec.settle(1.0)
        steps.append("prompt: a `sudo` command, permission-gate.ts asks; answered Enter (Yes)")
        c.prompt("go ahead and run `sudo chown -R www-data:www-data /srv/app` on the box")
        c.wait_text(pi.GATE_HINT)
        time.sleep(1.0)
        rec.send("Enter")
        c.wait_text("Done. The tool finished")
        c.wait_idle()
        time.sleep(1.0)
        steps.append("prompt: the question tool's picker (ctx.ui.custom); Esc")
        c.prompt("which option should we use for retries? ask me")
        c.wait_question()
        time.sleep(1.0)
        rec.send("Escape")
        c.wait_idle()
        time.sleep(1.0)
        steps.append("prompt: a slow streamed reply (~5 s)")
        c.prompt("walk me through the startup code slowly")
        c.wait_text("careful walk-through")
        c.wait_idle()
        time.sleep(1.0)
        steps.append("prompt: a short reply (a finished turn)")
        c.prompt("there is an off-by-one bug in main.py, can you fix it")
        c.wait_text("regression test?")
        c.wait_idle()
        time.sleep(1.0)
        steps.append(f"{pi.new_command()}: confirm-destructive.ts asks 'Clear session?' (no turn); Esc")
        c.type_new()
        c.wait_text("Clear session?")
        time.sleep(1.0)
        rec.send("Escape")
        c.wait(lambda s: "Clear session?" not in s, "confirm gone")
        time.sleep(1.5)
    finally:
        rec.close()
        mock.close()
        common.reap(home)
    return rec, steps


# -- the replay ----------------------------------------------------------------------------------
class OscScanner:
    """The complete `OSC 7501` payloads in a byte stream fed in chunks (a sequence may straddle
    two chunks)."""

    def __init__(self):
        self.tail = b""

    def feed(self, data: bytes) -> list[str]:
        buf, out = self.tail + data, []
        i = buf.find(OSC_7501)
        while i >= 0:
            ends = [e for e in (buf.find(b"\x07", i), buf.find(b"\x1b\\", i + 1)) if e >= 0]
            if not ends:
                break
            end = min(ends)
            out.append(buf[i + len(OSC_7501):end].decode("utf-8", "replace"))
            i = buf.find(OSC_7501, end)
        keep = buf[i:] if i >= 0 else buf[-(len(OSC_7501) - 1):]
        self.tail = keep[-8192:]
        return out


@dataclasses.dataclass
class Step:
    at: float
    state: str
    detail: str


def replay(agent: str, chunks: list[tuple[float, bytes]]) -> tuple[list[Step], list[Step], float, float]:
    """(OSC timeline, screen timeline, start, end): a step each time the state changes."""
    manifest = Catalog([BUNDLED_DIR]).get(agent)
    screen, board, scan = PaneScreen(ROWS, COLS), StatusBoard(), OscScanner()
    osc: list[Step] = []
    raw_screen: list[Step] = []
    for at, data in chunks:
        for payload in scan.feed(data):
            if board.take(payload, at) and board.root is not None:
                st = board.root.status
                state = AS_STATE.get(st.state, st.state)
                detail = st.state + (f" kind={st.kind}" if st.kind else "") + (
                    f" msg={st.message[:40]!r}" if st.message else "")
                if not osc or osc[-1].state != state or st.state != osc[-1].detail.split()[0]:
                    osc.append(Step(at, state, detail))
        screen.feed(data)
        view = dataclasses.replace(screen.view(), osc_state="")  # the screen alone
        match = manifest.evaluate(view)
        if not raw_screen or raw_screen[-1].state != match.state:
            raw_screen.append(Step(at, match.state, f"[{match.rule or 'fallback'}]"))
    end = chunks[-1][0] if chunks else 0.0
    return steady(osc, end), steady(raw_screen, end), chunks[0][0] if chunks else 0.0, end


def steady(steps: list[Step], end: float) -> list[Step]:
    """Leave out states that lasted less than FLICKER (merging the neighbours they split)."""
    out: list[Step] = []
    for i, s in enumerate(steps):
        until = steps[i + 1].at if i + 1 < len(steps) else end
        if until - s.at < FLICKER and i + 1 < len(steps):
            continue
        if out and out[-1].state == s.state:
            continue
        out.append(s)
    return out


def state_at(steps: list[Step], t: float) -> str | None:
    now = None
    for s in steps:
        if s.at > t:
            break
        now = s.state
    return now


def pair(osc: list[Step], scr: list[Step]) -> list[tuple[Step | None, Step | None]]:
    """Align the two timelines in order (pairs never cross): the most transitions paired, each
    with the screen's move to the same state within PAIR_WINDOW of it and no other move of
    either timeline in between, and of those alignments the one whose leads add up least.
    Unpaired moves of either side stand alone."""
    n, m = len(osc), len(scr)
    so, ss = [o.at for o in osc], [x.at for x in scr]

    def between(times: list[float], lo: float, hi: float) -> int:
        return max(0, bisect.bisect_left(times, hi) - bisect.bisect_right(times, lo))

    def can(i: int, j: int) -> bool:
        """Same state, near enough, and nothing else moved in between (a screen move to
        `working` after the screen showed `blocked` meanwhile answers a later change)."""
        lo, hi = sorted((osc[i].at, scr[j].at))
        return (osc[i].state == scr[j].state and hi - lo <= PAIR_WINDOW
                and between(so, lo, hi) == 0 and between(ss, lo, hi) == 0)

    # best[i][j]: (pairs, -total |lead|) aligning osc[i:] with scr[j:]
    best = [[(0, 0.0)] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            options = [best[i + 1][j], best[i][j + 1]]
            if can(i, j):
                p, cost = best[i + 1][j + 1]
                options.append((p + 1, cost - abs(scr[j].at - osc[i].at)))
            best[i][j] = max(options)
    pairs: list[tuple[Step | None, Step | None]] = []
    i = j = 0
    while i < n and j < m:
        if (can(i, j) and best[i][j] == (best[i + 1][j + 1][0] + 1,
                                   best[i + 1][j + 1][1] - abs(scr[j].at - osc[i].at))):
            pairs.append((osc[i], scr[j]))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            pairs.append((osc[i], None))
            i += 1
        else:
            pairs.append((None, scr[j]))
            j += 1
    pairs += [(o, None) for o in osc[i:]] + [(None, x) for x in scr[j:]]
    return sorted(pairs, key=lambda p: (p[0] or p[1]).at)


def report(agent: str, version: str, steps: list[str], chunks) -> dict:
    osc, scr, t0, end = replay(agent, chunks)
    print(f"\n=== {agent} {version}: {len(chunks)} chunks, {sum(len(d) for _, d in chunks)} bytes, "
          f"{end - t0:.1f} s")
    for s in steps:
        print(f"    scenario: {s}")
    print(f"  {'t (s)':>7}  {'OSC 7501 root record':34}  {'screen verdict':30}  agree  lead (ms)")
    leads, agreed, missed = [], 0, 0
    for o, s in pair(osc, scr):
        left = f"{o.state:8} {o.detail}"[:34] if o else "-"
        right = f"{s.state:8} {s.detail}"[:30] if s else "-"
        at = (o or s).at - t0
        if o is osc[0] and s is scr[0]:  # where each starts: no transition, no lead
            print(f"  {at:7.2f}  {left:34}  {right:30}  yes    (start)")
            agreed += 1
        elif o and s:
            lead = (s.at - o.at) * 1000
            leads.append(lead)
            agreed += 1
            who = "OSC first" if lead > 0 else "screen first" if lead < 0 else "same chunk"
            print(f"  {at:7.2f}  {left:34}  {right:30}  yes    {lead:+8.0f}  {who}")
        else:
            missed += 1
            other = state_at(scr, o.at + 0.5) if o else state_at(osc, s.at)
            side = (f"screen says {other} 0.5 s on" if o else f"OSC says {other}")
            print(f"  {at:7.2f}  {left:34}  {right:30}  NO     ({side})")
    # time both say the same (from the first OSC report on)
    start = osc[0].at if osc else t0
    grid = [start + i * 0.01 for i in range(int((end - start) / 0.01))]
    same = sum(1 for t in grid if state_at(osc, t) == state_at(scr, t))
    share = same / len(grid) if grid else 0.0
    med = statistics.median(leads) if leads else float("nan")
    print(f"  -- {agent}: {agreed} transitions agree, {missed} do not; median lead {med:+.0f} ms "
          f"(positive: OSC first); same state {share:.1%} of the time")
    return {"agent": agent, "agreed": agreed, "missed": missed, "leads": leads, "share": share}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", default="codex,pi", help="which: codex, pi (comma-separated)")
    ap.add_argument("--keep", type=Path, help="keep the recordings here (default: thrown away)")
    ap.add_argument("--replay", type=Path, help="no sessions: replay the recordings a --keep kept")
    a = ap.parse_args()
    if a.replay:
        results = [report(agent, "(replayed)", [], stamppipe.chunks(rec / "pane.raw", rec / "pane.times"))
                   for agent in a.agents.split(",") if (rec := a.replay / f"{agent}-rec").is_dir()]
        return summary(results)
    work = (a.keep or common.AGENTS / f"osc-vs-screen-{os.getpid()}").resolve()
    work.mkdir(parents=True, exist_ok=True)
    runs = {"codex": run_codex, "pi": run_pi}
    results = []
    try:
        for agent in a.agents.split(","):
            began = time.time()
            rec, steps = runs[agent](work)
            version = (__import__("codex").VERSION if agent == "codex" else __import__("pi").VERSION)
            print(f"[{agent} session ran in {time.time() - began:.0f} s]", flush=True)
            results.append(report(agent, version, steps, stamppipe.chunks(rec.raw, rec.times)))
    finally:
        if a.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return summary(results)


def summary(results: list[dict]) -> int:
    leads = [x for r in results for x in r["leads"]]
    print("\n=== summary")
    for r in results:
        med = statistics.median(r["leads"]) if r["leads"] else float("nan")
        print(f"  {r['agent']:6} agree {r['agreed']:2}  disagree {r['missed']:2}  median lead {med:+6.0f} ms"
              f"  same state {r['share']:.1%} of the time")
    if leads:
        print(f"  all    agree {sum(r['agreed'] for r in results):2}  disagree "
              f"{sum(r['missed'] for r in results):2}  median lead {statistics.median(leads):+6.0f} ms "
              f"(positive: the OSC report came first)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
