"""The committed real-capture fixtures and their indexes: `fixtures/<agent>/index.toml` for the
pinned release of each agent, `fixtures/<agent>/<version>/index.toml` for the other releases."""
from __future__ import annotations

import re
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


# a suffix's rank against the final release (0): dev < alpha < beta < rc < final < post; any
# other word (nightly, canary, next…) is a pre-release ranked just before rc
_SUFFIX_RANK = {"dev": -5, "a": -4, "alpha": -4, "b": -3, "beta": -3, "pre": -1, "preview": -1,
                "c": -1, "rc": -1, "post": 1, "p": 1}


def release_key(version: str) -> tuple:
    """A release's sort key: '1.10.2' after '1.9.0' (numbers as numbers, '1.0' == '1.0.0'),
    '1.0.0rc1' / '1.0.0-beta.2' before '1.0.0', '1.0.0.post1' after it; any string compares
    with any other (no TypeError)."""
    v = str(version).strip().lower()
    v = v[1:] if v[:1] == "v" and v[1:2].isdigit() else v
    v = v.split("+", 1)[0]                      # build metadata does not order
    m = re.match(r"\d+(?:\.\d+)*", v)
    nums = [int(x) for x in m.group(0).split(".")] if m else []
    while nums and nums[-1] == 0:
        nums.pop()
    rest = v[m.end():] if m else v
    suffix = []
    for word, num in re.findall(r"([a-z]+)?[.\-_]?(\d+)?", rest):
        if not word and not num:
            continue
        rank = _SUFFIX_RANK.get(word, -2) if word else 0
        suffix.append((rank, word, int(num) if num else 0))
    # a final release sorts after its pre-releases and before its post-releases
    return (tuple(nums), tuple(suffix) if suffix else ((0, "", 0),))


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


def accuracy_markdown(rows, canary: dict | None = None) -> str:
    """One row per agent and release: right / captures for each state, and all; the last
    column, on each agent's newest captured release, is the release canary's newest registry
    release and its score (`canary`: load_canary's {agent: CanaryResult}; empty without)."""
    canary = canary or {}
    lines = ["| agent | release | blocked | working | idle | all | newest release (canary) |",
             "|---|---|---:|---:|---:|---:|---|"]
    groups: dict[tuple[str, str], dict[str, tuple[int, int]]] = {}
    for agent, version, state, n, ok in rows:
        groups.setdefault((agent, version), {})[state] = (ok, n)
    last = {agent: version for agent, version in groups}   # rows come sorted by release

    def cell(ok: int, n: int) -> str:
        return f"{ok}/{n}" if n else "–"
    for (agent, version), states in groups.items():
        ok = sum(v[0] for v in states.values())
        n = sum(v[1] for v in states.values())
        newest = canary_cell(canary.get(agent)) if last[agent] == version else ""
        lines.append(f"| {agent} | {version} | "
                     + " | ".join(cell(*states.get(s, (0, 0))) for s in ("blocked", "working", "idle"))
                     + f" | {cell(ok, n)} | {newest} |".replace("  |", " |"))
    total, right = sum(r[3] for r in rows), sum(r[4] for r in rows)
    lines.append(f"| **all** | | | | | **{right}/{total}** | |")
    return "\n".join(lines)


CANARY = "canary.toml"


@dataclass(frozen=True)
class CanaryResult:
    """The release canary's last run for one agent (`fixtures/canary.toml`, written by
    scripts/release_canary.py): its newest registry release and how the rules read it."""
    agent: str
    release: str
    registry: str = ""
    package: str = ""
    right: int = 0
    total: int = 0
    result: str = ""     # ok | misses | does-not-install | retired | failed
    note: str = ""
    quick: bool = False
    date: str = ""


def load_canary(path: Path = FIXTURES_DIR / CANARY) -> dict[str, CanaryResult]:
    """{agent: CanaryResult}; {} when there is no file; ValueError (one line) when it is not a
    canary file."""
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text())
        out = {}
        for e in data.get("agent", []):
            r = CanaryResult(str(e["agent"]), str(e.get("release", "")), str(e.get("registry", "")),
                             str(e.get("package", "")), int(e.get("right", 0)), int(e.get("total", 0)),
                             str(e.get("result", "")), str(e.get("note", "")), bool(e.get("quick", False)),
                             str(e.get("date", "")))
            out[r.agent] = r
        return out
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError, AttributeError, OSError) as e:
        shown = path.relative_to(FIXTURES_DIR.parent) if path.is_relative_to(FIXTURES_DIR.parent) else path
        why = f"{shown}: not a canary file ({type(e).__name__}: {e})".splitlines()[0]
        raise ValueError(why) from None


def canary_cell(r: CanaryResult | None) -> str:
    """The accuracy table's newest-release cell for one agent ("" without a canary run)."""
    if r is None:
        return ""
    if r.result == "retired":
        return f"{r.release}: retired (a stub), not run"
    if r.result == "does-not-install":
        return f"{r.release}: does not install"
    if r.result in ("ok", "misses") and r.total:
        when = ", ".join(x for x in ("one session" if r.quick else "", r.date) if x)
        return f"{r.release}: {r.right}/{r.total}" + (f" ({when})" if when else "")
    return f"{r.release}: not captured" if r.release else "not checked"
