"""The committed real-capture fixtures and their index (`fixtures/<agent>/index.toml`)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES_DIR = Path(__file__).resolve().parent.parent / "fixtures"


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

    @property
    def id(self) -> str:
        return f"{self.agent}/{self.path.stem}"


def load_index(root: Path = FIXTURES_DIR) -> list[Fixture]:
    out = []
    for index in sorted(root.glob("*/index.toml")):
        data = tomllib.loads(index.read_text())
        for f in data.get("fixture", []):
            rows, _, cols = str(f["size"]).partition("x")
            out.append(Fixture(index.parent / f["file"], f.get("agent", index.parent.name),
                               f["state"], f.get("kind", ""), str(f.get("agent_version", "")),
                               int(rows), int(cols), f.get("renderer", ""), f.get("how", "")))
    return out
