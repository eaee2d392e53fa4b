"""The committed real-capture fixtures and their indexes: `fixtures/<agent>/index.toml` for the
pinned release of each agent, `fixtures/<agent>/<version>/index.toml` for the other releases."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES_DIR = Path(__file__).resolve().parents[2] / "fixtures"


@dataclass(frozen=True)
class Fixture:
    path: Path
    agent: str
    state: str
    kind: str
    agent_version: str
    rows: int
    cols: int
    renderer: str = ""
    how: str = ""
    mark: str = ""        # the [[marks]] mark the screen shows (an error the turn is in), "" none

    @property
    def id(self) -> str:
        """`agent/name`, or `agent/version/name` for a release in its own folder."""
        folder = self.path.parent.name
        return (f"{self.agent}/{self.path.stem}" if folder == self.agent
                else f"{self.agent}/{folder}/{self.path.stem}")


def load_index(root: Path = FIXTURES_DIR) -> list[Fixture]:
    out = []
    for index in sorted([*root.glob("*/index.toml"), *root.glob("*/*/index.toml")]):
        data = tomllib.loads(index.read_text())
        folder = index.parent if index.parent.parent == root else index.parent.parent
        for f in data.get("fixture", []):
            rows, _, cols = str(f["size"]).partition("x")
            out.append(Fixture(index.parent / f["file"], f.get("agent", folder.name),
                               f["state"], f.get("kind", ""), str(f.get("agent_version", "")),
                               int(rows), int(cols), f.get("renderer", ""), f.get("how", ""),
                               f.get("mark", "")))
    return out


KNOWN_MISSES = "known-misses.toml"


@dataclass(frozen=True)
class KnownMiss:
    """A capture whose screen does not tell its state (`fixtures/known-misses.toml`): the
    verdict our rules give instead, and why no rule can do better."""
    verdict: str
    why: str


def load_known_misses(root: Path = FIXTURES_DIR) -> dict[str, KnownMiss]:
    path = root / KNOWN_MISSES
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    return {m["id"]: KnownMiss(m["verdict"], m["why"]) for m in data.get("miss", [])}


def release_key(version: str) -> tuple:
    """'1.10.2' after '1.9.0': numbers compared as numbers."""
    return tuple(int(p) if p.isdigit() else p for p in version.replace("-", ".").split("."))


def accuracy_rows(fixtures: list[Fixture], catalog) -> list[tuple[str, str, str, int, int]]:
    """(agent, version, state, captures, right) for every agent/version/state, sorted."""
    from .screen import replay
    tally: dict[tuple[str, str, str], list[int]] = {}
    for f in fixtures:
        m = catalog.get(f.agent)
        got = m.evaluate(replay(f.path.read_bytes(), f.rows, f.cols).view()).state if m else None
        t = tally.setdefault((f.agent, f.agent_version, f.state), [0, 0])
        t[0] += 1
        t[1] += got == f.state
    order = {"blocked": 0, "working": 1, "idle": 2}
    return [(a, v, s, n, ok) for (a, v, s), (n, ok) in
            sorted(tally.items(), key=lambda kv: (kv[0][0], release_key(kv[0][1]),
                                                  order.get(kv[0][2], 9)))]


def accuracy_markdown(rows) -> str:
    """One row per agent and release: right / captures for each state, and all."""
    lines = ["| agent | release | blocked | working | idle | all |",
             "|---|---|---:|---:|---:|---:|"]
    groups: dict[tuple[str, str], dict[str, tuple[int, int]]] = {}
    for agent, version, state, n, ok in rows:
        groups.setdefault((agent, version), {})[state] = (ok, n)

    def cell(ok: int, n: int) -> str:
        return f"{ok}/{n}" if n else "–"
    for (agent, version), states in groups.items():
        ok = sum(v[0] for v in states.values())
        n = sum(v[1] for v in states.values())
        lines.append(f"| {agent} | {version} | "
                     + " | ".join(cell(*states.get(s, (0, 0))) for s in ("blocked", "working", "idle"))
                     + f" | {cell(ok, n)} |")
    total, right = sum(r[3] for r in rows), sum(r[4] for r in rows)
    lines.append(f"| **all** | | | | | **{right}/{total}** |")
    return "\n".join(lines)
