#!/usr/bin/env python3
"""manifests/index.toml, the catalog `tmux-agentstate manifests update` reads: per manifest
its name, version, sha256 and engine, from the files themselves.

    .venv/bin/python scripts/manifest_index.py           # print it
    .venv/bin/python scripts/manifest_index.py --write   # write manifests/index.toml

tests/test_manifest_update.py fails when the committed index is stale: bump a manifest's
`version` when its rules change, then write the index again.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmux_agentstate.core.manifest import load_manifest  # noqa: E402
from tmux_agentstate.updates.index import Entry, render_index  # noqa: E402

MANIFESTS = ROOT / "manifests"


def generated(folder: Path = MANIFESTS) -> str:
    entries = []
    for path in sorted(folder.glob("*.toml")):
        if path.name == "index.toml":
            continue
        m = load_manifest(path)
        entries.append(Entry(m.name, m.version, hashlib.sha256(path.read_bytes()).hexdigest(),
                             m.engine))
    return render_index(entries)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    text = generated()
    if a.write:
        (MANIFESTS / "index.toml").write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
