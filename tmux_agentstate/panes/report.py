"""`report PANE`: a bundle that shows a miss, for an issue: what tmux shows in the pane (plain,
with escapes, and as bytes that replay to it), the pane's last bytes when the sidecar pipes it,
and what we made of it (agent, release, manifest, verdict, rule). `harness/from_report.py`
turns a bundle plus the true state into a fixture.

The bundle is the pane's own text: the command says so, and nothing is sent anywhere.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import tarfile
import time
from pathlib import Path

from .. import __version__, procs
from ..sidecar.runtime import Runtime
from ..tmux import Tmux, TmuxError
from ..sidecar.seed import seed_bytes
from .fresh import look

ISSUES = "https://github.com/tmux-agentstate/tmux-agentstate/issues/new"
RECENT_WAIT = 2.0  # seconds the sidecar has to write the pane's last bytes


def reports_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                             "state")
    return Path(base) / "tmux-agentstate" / "reports"


def recent_bytes(runtime: Runtime, pane_id: str) -> bytes | None:
    """Ask the running sidecar (SIGUSR1) for the pane's last bytes; None without a sidecar or
    when it does not pipe the pane."""
    pid = runtime.running_pid()
    status = runtime.read_status() or {}
    if not pid or status.get("pid") != pid or not status.get("recent_on_sigusr1"):
        return None
    path = runtime.recent_path(pane_id)
    asked = time.time()
    try:
        os.kill(pid, signal.SIGUSR1)
    except OSError:
        return None
    deadline = time.monotonic() + RECENT_WAIT
    while time.monotonic() < deadline:
        try:
            if path.lstat().st_mtime >= asked - 0.01:
                data = path.read_bytes()
                # pane text: in the bundle now, not left in the runtime folder
                path.unlink(missing_ok=True)
                return data
        except OSError:
            pass
        time.sleep(0.05)
    return None


def save_report(tmux: Tmux, target: str, runtime: Runtime | None,
                into: Path | None = None) -> tuple[Path, Path]:
    """Write the bundle (a private folder) and its .tar.gz; their paths."""
    lk = look(tmux, target)
    view = tmux.capture_views([lk.info.pane_id], escapes=True).get(lk.info.pane_id)
    if view is None:
        raise TmuxError(f"{lk.info.pane_id} ({lk.info.address}) is gone")
    plain = tmux.capture_views([lk.info.pane_id]).get(lk.info.pane_id)
    agent = lk.manifest.name if lk.manifest else "unknown"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = (into or reports_dir()) / f"{stamp}-{agent}-{lk.info.pane_id.lstrip('%')}"
    folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the folder the user named
    archive = folder.with_name(folder.name + ".tar.gz")
    # what we make there is new, ours and never reached through a link: a name that exists
    # already (a link planted in a shared folder, say) is refused, and its target untouched
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        raise ReportRefused(f"{folder} exists already ({_what(folder)}): nothing written") from None
    try:
        archive_fd = _create(archive)
    except OSError as e:
        folder.rmdir()
        if isinstance(e, FileExistsError):
            raise ReportRefused(f"{archive} exists already ({_what(archive)}): nothing "
                                "written") from None
        raise
    try:
        with os.fdopen(archive_fd, "wb") as out:
            _fill(folder, out, lk, view, plain, runtime, agent, stamp)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        archive.unlink(missing_ok=True)
        raise
    return folder, archive


class ReportRefused(OSError):
    """A name the bundle would take exists already: one line, nothing written."""


def _create(path: Path) -> int:
    """A new private file at `path`: never an existing one, never through a symbolic link."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)


def _what(path: Path) -> str:
    return f"a link to {os.readlink(path)}" if path.is_symlink() else "another file or folder"


def _fill(folder: Path, archive, lk, view, plain, runtime, agent: str, stamp: str) -> None:
    files = {"screen.ansi": view.text.encode("utf-8", "surrogateescape"),
             "screen.txt": (plain.text if plain else "").encode("utf-8", "surrogateescape"),
             "screen.raw": seed_bytes(view)}
    recent = recent_bytes(runtime, lk.info.pane_id) if runtime else None
    if recent:
        files["recent.raw"] = recent
    m, match = lk.manifest, lk.match
    facts = {
        "agent": agent, "agent_version": procs.agent_version(lk.fg),
        "manifest_version": m.version if m else None, "manifest_source": lk.source or None,
        "manifest_tested": list(m.tested) if m else [],
        "state": lk.state.state if lk.state else None,
        "via": lk.state.source if lk.state else None,
        "screen_verdict": match.state if match else None, "rule": match.rule if match else None,
        "line": match.line if match else None,
        "published": lk.info.state_option or None,
        "size": f"{view.rows}x{view.cols}", "title": view.title,
        "alternate_screen": view.alternate_on, "recent_bytes": len(recent or b""),
        "tmux_agentstate": __version__, "created": stamp,
    }
    files["report.json"] = (json.dumps(facts, indent=1, ensure_ascii=False) + "\n").encode()
    for name, data in files.items():
        with os.fdopen(_create(folder / name), "wb") as f:
            f.write(data)
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        tar.add(folder, arcname=folder.name)
