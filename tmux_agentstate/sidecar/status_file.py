"""The status file (`status.json` in the runtime folder) that `status` and `doctor` read: the
sidecar's pid, its counters, every pane it watches and what it made of it. Written whole or
not at all, as a heartbeat (install.py: at least every HEARTBEAT) and when the panes changed
(at most every STATUS_GAP); the panes' part is encoded again only when they changed."""
from __future__ import annotations

import errno
import json
import logging
import os
import time

from .runtime import Runtime
from .watch import PaneWatch

log = logging.getLogger("tmux_agentstate.sidecar")

STATUS_GAP = 1.0  # written at most this often for its panes' changes
# what the status segment says while the runtime folder cannot be written (short: it shares
# the segment with the panes' counts)
DISK_FAULTS = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk quota full",
               errno.EROFS: "disk read-only"}


class StatusFile:
    def __init__(self, runtime: Runtime, tmux):
        self.runtime = runtime
        self.tmux = tmux  # for the count of commands sent
        self.disk_fault: str | None = None  # why the runtime folder cannot be written now
        self._disk_fault_since = 0.0
        self._changed, self._written_at = True, 0.0
        self._panes: str | None = None  # the panes' part, as last encoded
        self._panes_n, self._panes_dirty = -1, True

    def panes_changed(self) -> None:
        self._changed = self._panes_dirty = True

    def due(self, now: float) -> bool:
        """Whether it is due for what it says of the panes (at most every STATUS_GAP while
        they change; install.status_due is its heartbeat)."""
        return self._changed and now - self._written_at >= STATUS_GAP

    def write(self, panes: list[PaneWatch], counters: dict, rule_faults: list[str]) -> None:
        """A disk that is full (or read-only, or over quota) does not stop the watching: it is
        said once in the log and in the status segment until the file can be written again."""
        self._changed, self._written_at = False, time.monotonic()
        try:
            self._write(panes, counters, rule_faults)
        except OSError as e:
            fault = DISK_FAULTS.get(e.errno, f"cannot write ({e.strerror or e})")
            if fault != self.disk_fault:
                log.error("cannot write %s: %s; watching on, the status segment says so until "
                          "it can be written", self.runtime.status_path, e.strerror or e)
                self.disk_fault, self._disk_fault_since = fault, time.time()
            return
        self.runtime.name_lock()  # if a full disk kept our pid out of the lock
        if self.disk_fault:
            log.info("%s is written again (it was not since %s: %s)", self.runtime.status_path,
                     time.strftime("%H:%M:%S", time.localtime(self._disk_fault_since)),
                     self.disk_fault)
            self.disk_fault = None

    def _write(self, panes: list[PaneWatch], counters: dict, rule_faults: list[str]) -> None:
        if self._panes is None or self._panes_n != len(panes) or self._panes_dirty:
            # a heartbeat that finds nothing new writes the small rest around the same text
            self._panes = json.dumps(
                [{"pane": w.pane_id, "address": w.info.address, "agent": w.manifest.name,
                  "mode": w.intake.name, "state": w.state.state if w.state else None}
                 for w in panes], separators=(",", ":"))
            self._panes_n, self._panes_dirty = len(panes), False
        head = json.dumps({
            "socket": self.runtime.socket_path, "pid": os.getpid(), "updated": time.time(),
            # `report` may ask for the panes' last bytes with SIGUSR1 (to a sidecar that does
            # not say so, an older one, that signal would be fatal)
            "recent_on_sigusr1": True,
            **counters,
            "tmux_commands": self.tmux.commands_sent,
            "rule_faults": rule_faults}, separators=(",", ":"))
        self.runtime.write_status_text(f'{head[:-1]},"panes":{self._panes}}}')
