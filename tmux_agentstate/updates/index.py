"""The update catalog, `index.toml` beside the manifests it lists:

    schema = 1
    [[manifest]]
    name = "claude"          # the manifest's name; its file is <name>.toml beside the index
    version = 3              # the manifest's own `version`
    sha256 = "…"             # of the file's bytes
    engine = 1               # the least engine that reads it (core/manifest.py ENGINE)

Pure: it parses text and says what is wrong, one line each; nothing is fetched here.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from ..core.manifest import MAX_VERSION

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SCHEMA = 1
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
SHA256 = re.compile(r"[0-9a-f]{64}")
MAX_ENTRIES = 200


class BadIndex(ValueError):
    """The whole index is unusable: one line."""


@dataclass(frozen=True)
class Entry:
    name: str
    version: int
    sha256: str
    engine: int

    @property
    def file(self) -> str:
        return f"{self.name}.toml"


def _positive(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def parse_index(text: str) -> tuple[list[Entry], list[str]]:
    """The entries it lists, and one line per entry it refuses (the others still count)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise BadIndex(f"the index is not valid TOML: {e}") from None
    except (RecursionError, MemoryError):
        raise BadIndex("the index is not valid TOML: nested too deeply") from None
    schema = data.get("schema")
    if schema != SCHEMA:
        raise BadIndex(f"the index has schema {schema!r}; this tmux-agentstate reads schema "
                          f"{SCHEMA} (upgrade tmux-agentstate)")
    raw = data.get("manifest", [])
    if not isinstance(raw, list) or len(raw) > MAX_ENTRIES:
        raise BadIndex(f"the index's [[manifest]] must be a list of at most {MAX_ENTRIES}")
    entries, refused, seen = [], [], set()
    for i, e in enumerate(raw):
        name = e.get("name") if isinstance(e, dict) else None
        label = name if isinstance(name, str) and NAME.fullmatch(name) else f"entry #{i + 1}"
        if label != name:
            refused.append(f"{label}: refused: its name is not a manifest name")
        elif name in seen:
            refused.append(f"{name}: refused: listed twice")
        elif not _positive(e.get("version")):
            refused.append(f"{name}: refused: 'version' must be a positive integer")
        elif e["version"] > MAX_VERSION:
            refused.append(f"{name}: refused: version {e['version']} is past {MAX_VERSION}, "
                           "more than any manifest will reach")
        elif not _positive(e.get("engine", 1)):
            refused.append(f"{name}: refused: 'engine' must be a positive integer")
        elif not isinstance(e.get("sha256"), str) or not SHA256.fullmatch(e["sha256"]):
            refused.append(f"{name}: refused: 'sha256' must be 64 lowercase hex digits")
        else:
            seen.add(name)
            entries.append(Entry(name, e["version"], e["sha256"], e.get("engine", 1)))
    return entries, refused


def render_index(entries: list[Entry]) -> str:
    """The index for these entries (scripts/manifest_index.py writes the repository's)."""
    lines = ["# The manifest update catalog: `tmux-agentstate manifests update` reads it.",
             "# Written by scripts/manifest_index.py (do not edit by hand).",
             f"schema = {SCHEMA}", ""]
    for e in sorted(entries, key=lambda e: e.name):
        lines += ["[[manifest]]", f'name = "{e.name}"', f"version = {e.version}",
                  f'sha256 = "{e.sha256}"', f"engine = {e.engine}", ""]
    return "\n".join(lines)
