"""Hot reload of the manifests: watchdog wakes the sidecar on a change; the reload itself runs
in the loop, at the next listing. A manifest folder that does not exist yet (the user's,
before they make it) is looked for at every sweep (a stat each), and watched and read from
the sweep that first sees it: not from the next listing, which an idle sidecar makes every
30 s."""
from __future__ import annotations

import logging
import threading

from ..core.catalog import Catalog
from .sessions import CHANGES

log = logging.getLogger("tmux_agentstate.sidecar")


class ManifestWatch:
    def __init__(self, catalog: Catalog, held=lambda: False):
        self.catalog = catalog
        # while held() is True, no reload: the files changing are our own install's, deleted
        # and rewritten by an update (an emptied catalog would drop every pane); the rules we
        # run stay until the new install's sidecar takes over
        self.held = held
        self._reload = threading.Event()
        self._observer = None
        self._handler = None
        self._watched: set = set()

    def start(self) -> None:
        """Say what did not load, then watch the manifest folders for changes."""
        for e in self.catalog.errors:
            log.error("manifest error: %s", e)
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:  # pragma: no cover
            return
        reload = self._reload

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                if event.event_type not in CHANGES:
                    return  # a read: every command that loads the catalog opens them
                if str(event.src_path).endswith(".toml") or event.is_directory:
                    reload.set()

        self._handler = Handler()
        observer = Observer()
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._watch_new_folders(initial=True)

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()

    def reload_soon(self) -> None:
        """At the next sweep (SIGHUP)."""
        self._reload.set()

    def reload_due(self) -> bool:
        """At every sweep: whether the manifests are to be read again (a file changed, or a
        manifest folder was made since the last sweep: then watched from now)."""
        self._watch_new_folders()
        return self._reload.is_set() and not self.held()

    def reload(self) -> bool:
        """At a listing: re-read the manifests if anything changed. True if they were
        re-read."""
        if not self.reload_due():
            return False
        self._reload.clear()
        for e in self.catalog.reload():
            log.error("manifest error (last good rules keep running): %s", e)
        return True

    def faults(self) -> list[str]:
        """Rules disabled for going over the search budget, every manifest's."""
        return [f for name in self.catalog.names() for f in self.catalog.get(name).faults()]

    def _watch_new_folders(self, initial: bool = False) -> None:
        if self._observer is None:
            return
        for d in self.catalog.dirs:
            if d not in self._watched and d.is_dir():
                self._observer.schedule(self._handler, str(d), recursive=False)
                self._watched.add(d)
                if not initial:
                    self._reload.set()  # a folder made after we started: read it now
