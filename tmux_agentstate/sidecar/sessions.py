"""Claude Code's session files (`~/.claude/sessions/<pid>.json`, procs.claude_session), watched:
a change rings the doorbell (doorbell.py) for the pane whose agent has that pid, and the loop
reads that file again at once, instead of at its next pane listing (issue 27).

watchdog (inotify on Linux) wakes a thread of its own; the thread does nothing but ring. It is
already what the manifest hot reload runs on (manifests.py), so no new dependency; polling the
files' mtimes instead would cost a stat per pane many times a second to get the same quarter
second. The folders are followed from each listing: one watch per folder (per HOME), made once
the folder exists (Claude makes it at its first start), never recursive.
"""
from __future__ import annotations

import logging
import os
from typing import Callable, Iterable

from .. import procs
from .watch import PaneWatch

log = logging.getLogger("tmux_agentstate.sidecar")
# watchdog's events that change a file; it also tells every open and close of one for reading,
# and the sidecar reading a session file after a ring must not ring again (it looped: 2 % of a
# core for one idle Claude pane)
CHANGES = frozenset({"created", "modified", "deleted", "moved", "closed"})


class SessionFiles:
    def __init__(self, ring: Callable[[str], None]):
        self._ring = ring                    # a pane id: its session file changed
        self._by_path: dict[str, str] = {}   # a session file's path → its pane (replaced whole:
                                             # the watch thread reads it without a lock)
        self._observer = None
        self._handler = None
        self._watched: set[str] = set()
        self._said = False

    @property
    def reliable(self) -> bool:
        """Every folder could be watched so far: a change of a session file rings."""
        return not self._said

    def follow(self, panes: Iterable[PaneWatch]) -> None:
        """The session files of the Claude panes watched now (at each listing)."""
        by_path = {}
        for w in panes:
            if w.manifest.name == "claude" and w.fg is not None and w.via is None:
                for path in procs.claude_session_files(w.fg):
                    by_path[path] = w.pane_id
        self._by_path = by_path
        for folder in {os.path.dirname(p) for p in by_path} - self._watched:
            if os.path.isdir(folder):
                self._watch(folder)

    def _watch(self, folder: str) -> None:
        try:
            if self._observer is None:
                self._start()
            self._observer.schedule(self._handler, folder, recursive=False)
        except Exception as e:  # watchdog's own (inotify limits: OSError, or its errors)
            if not self._said:
                self._said = True
                log.warning("cannot watch %s (%s): Claude's session file is read at the pane "
                            "listing only", folder, e)
            return
        self._watched.add(folder)

    def _start(self) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
        files = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                if event.is_directory or event.event_type not in CHANGES:
                    return  # a read (ours, answering a ring) is no change: no ring for it
                for path in (event.src_path, getattr(event, "dest_path", "")):
                    pane = files._by_path.get(os.fsdecode(path)) if path else None
                    if pane is not None:
                        files._ring(pane)

        self._handler = Handler()
        observer = Observer()
        observer.daemon = True
        observer.start()
        self._observer = observer

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
            self._watched.clear()
