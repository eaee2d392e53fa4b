#!/usr/bin/env python3
"""Benchmark: the rule engines on every fixture's screen, through its agent's bundled manifest.

    .venv/bin/python scripts/bench_rules.py [--rounds 20]

Engines: `re` (unbounded: what the rules ran on before), `regex` with the per-search time
bound (what they run on now), and `google-re2` (linear time) when it is installed. For each:
time per classification (every rule of the manifest, as the sidecar runs them), and whether
every verdict (state, rule, line) equals the `re` one: the rules' meaning kept.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmux_agentstate.core import manifest as mf  # noqa: E402
from tmux_agentstate.core.catalog import Catalog  # noqa: E402
from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.core.screen import replay  # noqa: E402


def all_patterns(catalog: Catalog):
    for name in catalog.names():
        m = catalog.get(name)
        for r in m.rules:
            yield from r.any + r.all + r.not_ + r.not_below


def engine_re(p):
    return re.compile(p.pattern, p.flags)


def engine_re2(p):
    import re2  # google-re2
    return re2.compile(("(?m)" if p.flags & re.M else "") + p.pattern)


def use(engine, catalog: Catalog) -> list[str]:
    """Swap every pattern's search onto `engine` (None: the product's own); the patterns an
    engine cannot compile are returned (their rules would change meaning)."""
    original = mf.Pattern.search
    if engine is None:
        mf.Pattern.search = original
        return []
    compiled, failed = {}, []
    for p in all_patterns(catalog):
        try:
            compiled[id(p)] = engine(p)
        except Exception:  # noqa: BLE001 - an engine's own error type
            failed.append(p.pattern)
            compiled[id(p)] = re.compile(p.pattern, p.flags)

    def search(self, text, pos=0, endpos=None):
        if self.literals and not any(lit in text for lit in self.literals):
            return None
        return compiled[id(self)].search(text, pos, len(text) if endpos is None else endpos)
    mf.Pattern.search = search
    return failed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    catalog = Catalog()
    cases = []
    for fx in load_index():
        m = catalog.get(fx.agent)
        if m is not None:
            cases.append((m, replay(fx.path.read_bytes(), fx.rows, fx.cols).view))
    original = mf.Pattern.search
    engines = [("re (unbounded)", engine_re), ("regex + time bound", None)]
    try:
        import re2  # noqa: F401
        engines.append(("google-re2", engine_re2))
    except ImportError:
        print("google-re2 is not installed: pip install google-re2 to compare it")
    baseline = None
    print(f"{len(cases)} fixture screens, {args.rounds} rounds each")
    for label, engine in engines:
        mf.Pattern.search = original
        failed = use(engine, catalog)
        verdicts, times = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            out = []
            for m, view_of in cases:
                v = view_of()
                out.append(m.evaluate(v))
            times.append((time.perf_counter() - t0) / len(cases))
            verdicts = out
        baseline = baseline or verdicts
        same = sum(a == b for a, b in zip(verdicts, baseline))
        print(f"{label:<20} {statistics.median(times) * 1e6:8.1f} µs a classification "
              f"(median of {args.rounds}); verdicts equal to re: {same}/{len(cases)}"
              + (f"; cannot compile {len(failed)}: {failed[:3]}" if failed else ""))
    mf.Pattern.search = original
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
