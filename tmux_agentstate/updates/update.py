"""`manifests update`: fetch the update catalog and the manifests it lists that are newer than
the ones in force, verify each, and write it atomically into the cache folder.

Every check is one line and refuses that manifest only; whatever is refused, the rules in
force stay as they are (nothing is written before a manifest passes every check):
- the index: reachable, at most MAX_INDEX bytes, within the deadline (see fetch.py: one for the
  whole request, redirects only to allowed schemes), valid, a known schema, sane versions;
- each manifest: an engine this code reads, newer than the bundled and cached ones but at most
  MAX_STEP versions past the one in force, at most
  MAX_MANIFEST bytes, the index's sha256, a manifest that loads (TOML, regexes, rules) with
  the name, version and engine the index says, and within the rule caps.
"""
from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..core.catalog import BUNDLED_DIR, Catalog
from ..core.manifest import ENGINE, Manifest, ManifestError, parse_manifest
from .fetch import FetchError, fetch
from .index import BadIndex, Entry, parse_index

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# this repository's manifests/ on its main branch
DEFAULT_URL = "https://raw.githubusercontent.com/tmux-agentstate/tmux-agentstate/main/manifests/"
MAX_INDEX = 64 * 1024
MAX_MANIFEST = 256 * 1024
MAX_RULES, MAX_PATTERNS, MAX_PATTERN_CHARS = 200, 1000, 2000
DEADLINE = 15.0  # seconds for one download, all of it: lookup, connect, headers, body, redirects
# how far past the one in force an update may take a manifest: versions count changes to one
# agent's rules (the busiest is at v3), so 100 is years of them; an index that claims far more
# (v10**18, say) would shadow every bundled manifest a release brings from then on
MAX_STEP = 100


@dataclass(frozen=True)
class InForce:
    version: int
    source: str  # bundled | cached | user


def shipped_in_force(cache: Path) -> dict[str, InForce]:
    """What an update competes with: per name, the newer of the bundled and the cached
    manifest (the user's own files aside: an update never replaces them)."""
    shipped = Catalog([BUNDLED_DIR, cache], cached=cache)
    return {n: InForce(shipped.get(n).version, shipped.source(n)) for n in shipped.names()}


def within_caps(m: Manifest) -> str | None:
    """Why a fetched manifest is too big to run on every row of every pane, or None."""
    patterns = [p for r in m.rules for p in r.any + r.all + r.not_ + r.not_below]
    patterns += [p for k in ("cmdline", "title", "screen") for p in getattr(m.identify, k)]
    if len(m.rules) > MAX_RULES:
        return f"{len(m.rules)} rules (at most {MAX_RULES})"
    if len(patterns) > MAX_PATTERNS:
        return f"{len(patterns)} patterns (at most {MAX_PATTERNS})"
    longest = max((len(p.pattern) for p in patterns), default=0)
    if longest > MAX_PATTERN_CHARS:
        return f"a pattern of {longest} characters (at most {MAX_PATTERN_CHARS})"
    return None


def write_atomically(folder: Path, name: str, data: bytes) -> Path:
    """`folder/name` holds `data` whole or is untouched: a private temporary file beside it,
    flushed to disk, then renamed over it (the sidecar's watcher ignores the temporary)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    dest = folder / name
    tmp = folder / f".{name}.{os.getpid()}.part"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest


def index_url(url: str) -> str:
    return url if url.endswith(".toml") else url.rstrip("/") + "/index.toml"


def update(url: str, cache: Path, in_force: dict[str, InForce],
           deadline: float = DEADLINE) -> tuple[list[str], bool]:
    """Lines to print (one per manifest, or one for the index), and whether nothing was
    refused. `in_force`: the version and source of each manifest the catalog runs now, the
    user's own overrides aside (an update never replaces those; it is cached under them)."""
    try:
        text = fetch(index_url(url), MAX_INDEX, deadline).decode("utf-8")
        entries, refused = parse_index(text)
    except (FetchError, BadIndex) as e:
        return [f"update refused: {e}; the manifests in force are unchanged"], False
    except UnicodeDecodeError:
        return ["update refused: the index is not UTF-8 text; the manifests in force are "
                "unchanged"], False
    lines = list(refused)
    ok = not refused
    base = index_url(url).rsplit("/", 1)[0] + "/"
    for entry in entries:
        line, good = _one(entry, base, cache, in_force.get(entry.name), deadline)
        lines.append(line)
        ok = ok and good
    return lines, ok


def _one(e: Entry, base: str, cache: Path, now: InForce | None, deadline: float) -> tuple[str, bool]:
    kept = f"kept the {now.source} v{now.version}" if now else "nothing written"
    if e.engine > ENGINE:
        return f"{e.name}: refused v{e.version}: needs engine {e.engine}, this tmux-agentstate " \
               f"reads {ENGINE} (upgrade it); {kept}", False
    if now is not None and e.version < now.version:
        return f"{e.name}: refused v{e.version}: older than the {now.source} v{now.version}; " \
               f"{kept}", False
    if now is not None and e.version > now.version + MAX_STEP:
        return f"{e.name}: refused v{e.version}: more than {MAX_STEP} versions past the " \
               f"{now.source} v{now.version} (a broken index? upgrade tmux-agentstate for " \
               f"a jump this far); {kept}", False
    if now is not None and e.version == now.version:
        return f"{e.name}: v{e.version} is in force already ({now.source})", True
    try:
        data = fetch(base + e.file, MAX_MANIFEST, deadline)
    except FetchError as err:
        return f"{e.name}: refused v{e.version}: {err}; {kept}", False
    digest = hashlib.sha256(data).hexdigest()
    if digest != e.sha256:
        return f"{e.name}: refused v{e.version}: sha256 {digest[:12]}… is not the index's " \
               f"{e.sha256[:12]}…; {kept}", False
    why = _check(e, data, cache)
    if why:
        return f"{e.name}: refused v{e.version}: {why}; {kept}", False
    write_atomically(cache, e.file, data)
    was = f"v{now.version} ({now.source})" if now else "not known before"
    return f"{e.name}: updated to v{e.version}, was {was}", True


def _check(e: Entry, data: bytes, cache: Path) -> str | None:
    try:
        m = parse_manifest(tomllib.loads(data.decode("utf-8")), cache / e.file)
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except tomllib.TOMLDecodeError as err:
        return f"invalid TOML: {err}"
    except (RecursionError, MemoryError):  # nesting deeper than the parser's stack
        return "invalid TOML: nested too deeply"
    except ManifestError as err:
        return str(err).replace(str(cache / e.file) + ": ", "")
    if (m.name, m.version, m.engine) != (e.name, e.version, e.engine):
        return (f"the file says name {m.name!r}, version {m.version}, engine {m.engine}; the "
                f"index says {e.name!r}, {e.version}, {e.engine}")
    return within_caps(m)
