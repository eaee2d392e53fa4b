"""The set of manifests in force, by name: the user's own file first; else the newer (by its
`version`) of the bundled one and the one `manifests update` cached; the bundled one on a tie.

A file that stops loading keeps its last good version running; the error is returned once per
change so the caller can report it (file, rule, reason) without spamming. `index.toml` (the
update catalog, beside the bundled manifests) is not a manifest.
"""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from .manifest import Manifest, ManifestError, load_manifest
from .screen import ScreenView



def bundled_dir() -> Path:
    """The manifests shipped with the package (the repository's top-level `manifests/`, which
    pyproject.toml installs as the package `tmux_agentstate.manifests`), or, for the package
    run straight from a checkout that was never installed, that folder itself."""
    try:
        return Path(str(resources.files("tmux_agentstate.manifests")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "manifests"


BUNDLED_DIR = bundled_dir()


INDEX = "index.toml"


def user_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "tmux-agentstate" / "manifests"


def cache_dir() -> Path:
    """Where `manifests update` writes the manifests it fetched."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tmux-agentstate" / "manifests"


class Catalog:
    def __init__(self, dirs: list[Path] | None = None, cached: Path | None = None):
        """`dirs`: folders in rising precedence (a later one overrides by name); `cached`: the
        update cache, which overrides the folders before it only with a higher `version`.
        Default: bundled, the update cache, the user's folder."""
        if dirs is None:
            cached = cache_dir() if cached is None else cached
            dirs = [BUNDLED_DIR, cached, user_dir()]
        self.dirs = [Path(d) for d in dirs]
        self.cached = Path(cached) if cached is not None else None
        self._good: dict[Path, Manifest] = {}     # last good manifest per file
        self._stamp: dict[Path, tuple] = {}       # (mtime, size) when last read
        self._errors: dict[Path, str] = {}        # current error per file
        self.by_name: dict[str, Manifest] = {}
        self.reload()

    def reload(self) -> list[ManifestError]:
        """Re-read changed files. Returns errors that are new since the last reload."""
        new_errors: list[ManifestError] = []
        present: set[Path] = set()
        for d in self.dirs:
            if not d.is_dir():
                continue
            for path in sorted(d.glob("*.toml")):
                if path.name == INDEX:
                    continue
                present.add(path)
                try:
                    st = path.stat()
                except OSError:
                    continue
                stamp = (st.st_mtime_ns, st.st_size)
                if self._stamp.get(path) == stamp:
                    continue
                self._stamp[path] = stamp
                try:
                    self._good[path] = load_manifest(path)
                    self._errors.pop(path, None)
                except ManifestError as e:
                    if self._errors.get(path) != str(e):
                        new_errors.append(e)
                    self._errors[path] = str(e)
        for gone in set(self._good) - present:  # a deleted file stops counting
            del self._good[gone]
        for gone in set(self._stamp) - present:
            self._stamp.pop(gone, None)
            self._errors.pop(gone, None)
        by_name: dict[str, Manifest] = {}
        for d in self.dirs:  # later folders override earlier ones by name
            for path, m in sorted(self._good.items()):
                if path.parent != d:
                    continue
                if d == self.cached and m.name in by_name and m.version <= by_name[m.name].version:
                    continue  # an update only counts while it is newer than what ships
                by_name[m.name] = m
        self.by_name = by_name
        return new_errors

    @property
    def errors(self) -> list[str]:
        return list(self._errors.values())

    def source(self, name: str) -> str:
        """Where the manifest in force for this name comes from: 'bundled', 'cached' (an
        update) or 'user'."""
        m = self.by_name.get(name)
        if m is None or Path(m.path).parent == BUNDLED_DIR:
            return "bundled"
        return "cached" if self.cached is not None and Path(m.path).parent == self.cached else "user"

    def names(self) -> list[str]:
        return sorted(self.by_name)

    def get(self, name: str) -> Manifest | None:
        return self.by_name.get(name)

    def infer(self, view: ScreenView) -> Manifest | None:
        """The agent whose title/screen patterns fit this screen best; None if none fit."""
        scored = [(m.identify.screen_score(view), m.name, m) for m in self.by_name.values()]
        scored = [s for s in scored if s[0] > 0]
        return max(scored, key=lambda s: (s[0], s[1]))[2] if scored else None

    def for_process(self, name: str, cmdline: list[str], hint: str | None = None) -> Manifest | None:
        """The agent a foreground process is: the AGENTSTATE_AGENT hint first, then patterns."""
        if hint and hint in self.by_name:
            return self.by_name[hint]
        for m in self.by_name.values():
            if m.identify.matches_process(name, cmdline):
                return m
        return None

    def for_foreground(self, fg) -> Manifest | None:
        """The agent of a pane's foreground process group (procs.Foreground): its leader, or
        one level down for wrappers (`npx`, `node …/codex.js`, a shell script)."""
        if fg is None:
            return None
        manifest = self.for_process(fg.name, list(fg.cmdline), fg.hint)
        for name, cmdline in fg.children:
            manifest = manifest or self.for_process(name, list(cmdline))
        return manifest
