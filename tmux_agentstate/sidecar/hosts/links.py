"""`Hosts`: the sidecar's links to every host in `@agentstate-hosts` (link.py, one thread and
one SSH session each), what they leave in hosts.json (files.py) and hosts.sock (serve.py).

Nothing here waits on a host in the caller's thread: `rows` and `take_transitions` read what
the links left; `configure` starts and stops threads and kills ssh process groups.
"""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from ...core import hostproto
from . import files
from .link import HostLink
from .serve import HostsServer
from .why import destination_problem

log = logging.getLogger("tmux_agentstate.sidecar")

# hosts.json at most twice a second, whatever the hosts do: a change waits at most this
# long more; each write is the whole file (10 hosts x 50 panes: 140 KB, about 0.5 ms of CPU;
# scripts/bench_hosts.py: at 0.25 s this writer was half of what 10 hosts cost the sidecar)
WRITE_GAP = 0.5
QUIET_WRITE = hostproto.HEARTBEAT  # a beat, a round trip alone: written at most this often


class Hosts:
    def __init__(self, runtime_dir: Path):
        self.dir = Path(runtime_dir)
        self.links: dict[str, HostLink] = {}
        self._how: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # (ssh, remote)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._loud = False       # rows or a status changed since the last write
        self._quiet = False      # a beat or a round trip only
        self._stop = threading.Event()
        self._writer: threading.Thread | None = None
        self._server = HostsServer(self.dir, self.relay)
        self._serving = False
        self._json: dict[str, tuple[HostLink, int, str]] = {}  # dest → (link, edits, its JSON)

    # -- the sidecar's side ----------------------------------------------------------------------
    def configure(self, hosts: list[str], ssh: list[str], remote_command: list[str]) -> None:
        """Links to exactly these hosts (in this order), each through `ssh` to
        `remote_command stream`: the links already right are kept as they are."""
        how = (tuple(ssh), tuple(remote_command))
        wanted = list(dict.fromkeys(hosts))
        with self._lock:
            old = dict(self.links)
            if how != self._how:
                keep = {}
            else:
                keep = {d: old[d] for d in wanted if d in old}
            self._how = how
            self.links = {d: keep.get(d) or self._new_link(d, ssh, remote_command)
                          for d in wanted}
        for dest, link in old.items():
            if self.links.get(dest) is not link:
                link.stop()
        for dest, link in self.links.items():
            if old.get(dest) is not link:
                link.start()
        if wanted or old:
            log.info("remote hosts: %s", " ".join(wanted) or "none")
        if wanted and not self._serving:
            self._serving = self._server.start()
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="hosts.json",
                                            daemon=True)
            self._writer.start()
        self._changed(True)

    def _new_link(self, dest: str, ssh: list[str], remote_command: list[str]) -> HostLink:
        problem = destination_problem(dest)
        if problem:
            log.warning("host %s: refused: %s", hostproto.clean_text(dest, 60), problem)
        return HostLink(dest, ssh, remote_command, self._changed,
                        refused=f"not a destination: {problem}; correct @agentstate-hosts"
                        if problem else "")

    def rows(self) -> list[dict]:
        """Every remote row: a hostproto row + host + stale (its link is not connected now).
        How old a host's rows are is its `last_update` in hosts.json. The rows are shared
        with the links' own (made again only when a host changes): read them, never change
        them."""
        return [row for link in list(self.links.values()) for row in link.current_rows()]

    def take_transitions(self) -> list[tuple[dict, str | None]]:
        """(row, its state before) for each remote row whose state changed since the last
        call."""
        return [t for link in list(self.links.values()) for t in link.take_transitions()]

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        links = list(self.links.values())
        for link in links:
            link.stop()
        for link in links:
            link.join()
        self._server.stop()
        if self._writer is not None:
            self._writer.join(2)
        try:  # nobody keeps it now: the commands must not show it as live
            (self.dir / files.HOSTS_FILE).unlink()
        except OSError:
            pass

    # -- the commands' side ------------------------------------------------------------------------
    def relay(self, request: dict) -> tuple[int, str]:
        """A request from hosts.sock, over its host's link; (code, one line)."""
        link = self.links.get(request["host"])
        if link is None:
            return 1, (f"{hostproto.clean_text(request['host'], 60)!r} is not in "
                       "@agentstate-hosts")
        return link.request(request["op"], request["pane"], request.get("choice"))

    # -- hosts.json --------------------------------------------------------------------------------
    def _changed(self, loud: bool) -> None:
        with self._lock:
            if loud:
                self._loud = True
            else:
                self._quiet = True
        self._wake.set()

    def _write_loop(self) -> None:
        last_write = 0.0
        while not self._stop.is_set():
            self._wake.wait(QUIET_WRITE)
            self._wake.clear()
            if self._stop.is_set():
                return
            with self._lock:
                due = self._loud or (self._quiet and time.monotonic() - last_write >= QUIET_WRITE)
                if not due:
                    continue
                self._loud = self._quiet = False
            self.write()
            last_write = time.monotonic()
            self._stop.wait(WRITE_GAP)

    def write(self) -> bool:
        """hosts.json now, as the links are: a host's JSON made again only when it changed
        (with 10 hosts of 50 panes, most writes change one or two)."""
        made = []
        for link in list(self.links.values()):
            kept = self._json.get(link.dest)
            if kept is None or kept[0] is not link or kept[1] != link.edits:
                edits = link.edits  # before the snapshot: a change during it is made again
                kept = self._json[link.dest] = (link, edits, link.part.make(link))
            made.append(kept[2])
        for dest in set(self._json) - set(self.links):
            del self._json[dest]
        return files.write_hosts_json(self.dir, made)
