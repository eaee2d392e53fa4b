#!/usr/bin/env python3
"""Turn a miss report (`tmux-agentstate report PANE`, or `r` in the popup) into a fixture.

    python harness/from_report.py BUNDLE --state blocked --kind plan-approval [--out DIR]

BUNDLE is the report's folder (or its .tar.gz). The fixture is the report's `screen.raw`
(bytes that replay to what tmux showed) and `screen.txt` (tmux's own rendering), checked to
agree before anything is written; `--state` is what the pane really was in (the report holds
what we said). It goes beside the other captures of that release: `fixtures/<agent>/` for the
driver's pinned release, `fixtures/<agent>/<version>/` for another, and into its index.toml.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import REPO  # noqa: E402

sys.path.insert(0, str(REPO))
from tmux_agentstate.core.screen import replay  # noqa: E402

STATES = ("blocked", "working", "idle")


def pinned(agent: str) -> str | None:
    driver = common.HERE / f"{agent}.py"
    m = re.search(r'^VERSION = "([^"]+)"', driver.read_text(), re.M) if driver.exists() else None
    return m.group(1) if m else None


def open_bundle(path: Path, scratch: Path) -> Path:
    if path.is_dir():
        return path
    with tarfile.open(path) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and "/" in m.name
                   and ".." not in m.name.split("/") and not m.name.startswith("/")]
        tar.extractall(scratch, members=members)  # plain files only, inside scratch
    return next(p for p in scratch.iterdir() if p.is_dir())


def to_fixture(bundle: Path, state: str, kind: str, out_root: Path = REPO / "fixtures") -> Path:
    facts = json.loads((bundle / "report.json").read_text())
    agent, version = facts["agent"], facts.get("agent_version") or ""
    if agent == "unknown":
        raise SystemExit("the report names no agent: nothing to make a fixture for")
    rows, _, cols = facts["size"].partition("x")
    rows, cols = int(rows), int(cols)
    raw = (bundle / "screen.raw").read_bytes()
    tmux_text = (bundle / "screen.txt").read_text()
    ours = [r.rstrip() for r in replay(raw, rows, cols).view().rows]
    theirs = [r.rstrip() for r in tmux_text.split("\n")[:rows]]
    theirs += [""] * (rows - len(theirs))
    if ours != theirs:
        raise SystemExit("screen.raw does not replay to screen.txt: not a usable fixture")
    out = out_root / agent if not version or version == pinned(agent) else out_root / agent / version
    out.mkdir(parents=True, exist_ok=True)
    name = f"{cols}x{rows}-{state}-{kind}"
    n = 2
    while (out / f"{name}.raw").exists():
        name, n = f"{cols}x{rows}-{state}-{kind}-{n}", n + 1
    (out / f"{name}.raw").write_bytes(raw)
    (out / f"{name}.screen.txt").write_text(tmux_text)
    said = facts.get("screen_verdict") or "no agent state"
    entry = {"file": f"{name}.raw", "state": state, "kind": kind, "agent": agent,
             "agent_version": version, "size": f"{rows}x{cols}",
             "how": f"from a miss report ({facts.get('created')}): the screen rules said "
                    f"{said} (rule {facts.get('rule')}); the pane was {state}"}
    index = out / "index.toml"
    # appended: the drivers' own entries (and keys such as claude's `renderer`) stay as they are
    text = index.read_text() if index.exists() else f"# {agent} fixtures\n{common.SIZE_NOTE}\n"
    text = text.rstrip("\n") + "\n\n[[fixture]]\n" + "".join(
        f"{k} = {common.q(v)}\n" for k, v in entry.items())
    index.write_text(text)
    return out / f"{name}.raw"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--state", required=True, choices=STATES, help="what the pane really was")
    ap.add_argument("--kind", required=True, help="a short name of the situation, e.g. plan-approval")
    ap.add_argument("--out", type=Path, default=REPO / "fixtures", help="the fixtures folder")
    a = ap.parse_args()
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,40}", a.kind):
        ap.error("--kind: lowercase letters, digits and dashes")
    with tempfile.TemporaryDirectory() as scratch:
        made = to_fixture(open_bundle(a.bundle, Path(scratch)), a.state, a.kind, a.out)
    print(f"wrote {made} (+ .screen.txt) and its index entry")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
