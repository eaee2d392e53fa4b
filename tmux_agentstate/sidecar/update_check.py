"""The opt-in periodic manifest update (`@agentstate-manifest-check daily|weekly|HOURS`, off by
default): a background thread runs `manifests update` when the last check is older than the
period. One check per period for all the user's tmux servers: the time of the last one is a
stamp file beside the cache, taken under a lock. What it writes lands in the cache folder,
which the catalog watches, so new rules run at the next listing; each line it prints goes to
the sidecar's log."""
from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from pathlib import Path

from ..core.catalog import cache_dir
from ..updates.update import DEFAULT_URL, shipped_in_force, update

log = logging.getLogger("tmux_agentstate.sidecar")


class UpdateCheck:
    def __init__(self, every: float, url: str = "", cache: Path | None = None):
        self.every = every  # seconds; 0: off
        self.url = url or DEFAULT_URL
        self.cache = cache or cache_dir()
        self.stamp = self.cache.parent / "last-check"
        self._stop = threading.Event()

    def start(self) -> None:
        if self.every > 0:
            threading.Thread(target=self._run, name="manifest-check", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def due_in(self) -> float:
        """Seconds until the next check is due (0: now)."""
        try:
            last = self.stamp.stat().st_mtime
        except OSError:
            return 0.0
        return max(0.0, last + self.every - time.time())

    def check_once(self) -> list[str] | None:
        """Run the update if it is due, under the lock; its lines (None: not due, or another
        sidecar holds the lock)."""
        self.stamp.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.stamp.parent / ".check.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW,
                     0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return None
            if self.due_in() > 0:
                return None
            lines, _ = update(self.url, self.cache, shipped_in_force(self.cache))
            self.stamp.touch()
            return lines
        finally:
            os.close(fd)

    def _run(self) -> None:
        while not self._stop.wait(self.due_in()):
            try:
                for line in self.check_once() or ():
                    log.info("manifest check: %s", line)
            except Exception as e:  # a check must never take the sidecar down
                log.error("manifest check failed: %s", e)
            self._stop.wait(60)  # at most one attempt a minute, whatever the stamp says
