"""Who is in front of each pane: the agent its tty's foreground process group runs (through
procs), or an SSH-like client whose far side's agent only the screen can tell (core/tunnels),
cached by that group, and whether the process table says something changed since the last
listing (a pane came or went, an agent started or left)."""
from __future__ import annotations

from .. import procs
from ..core.catalog import Catalog
from ..core.manifest import Manifest
from ..core.tunnels import foreground_tunnel
from ..tmux import PaneInfo


class Identities:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self._identity: dict[str, tuple[tuple, str | None]] = {}  # pane → (foreground key, agent)
        self._via: dict[str, str] = {}  # pane → the tunnel kind in front (no agent process)
        self._fg: dict[str, procs.Foreground | None] = {}
        self._foregrounds: dict[str, tuple[int, tuple]] = {}  # pane → (pane pid, foreground key)
        self.server_pid = 0
        self.children: frozenset | None = None  # the tmux server's child processes

    def identify(self, info: PaneInfo, reread: bool = True) -> tuple[Manifest | None, int]:
        """The manifest of the agent in front of the pane (None: no agent), and its process
        group. Without `reread`, the last answer (between two reads of the process table)."""
        if info.dead:
            self._via.pop(info.pane_id, None)
            return None, 0
        cached = self._identity.get(info.pane_id)
        if cached and not reread:
            return (self.catalog.get(cached[1]) if cached[1] else None), cached[0][0]
        key = procs.foreground_key(info.pane_pid) or (0, b"")
        if cached and cached[0] == key:
            return (self.catalog.get(cached[1]) if cached[1] else None), key[0]
        fg = procs.foreground(info.pane_pid)
        self._fg[info.pane_id] = fg
        manifest = self.catalog.for_foreground(fg)
        self._identity[info.pane_id] = (key, manifest.name if manifest else None)
        via = foreground_tunnel(fg) if manifest is None else None
        if via:
            self._via[info.pane_id] = via
        else:
            self._via.pop(info.pane_id, None)
        return manifest, key[0]

    def via(self, pane_id: str) -> str | None:
        """The SSH-like client in front of the pane ("ssh", "mosh", …; core/tunnels.py), as of
        its last identification; None when an agent or anything else is."""
        return self._via.get(pane_id)

    def foreground(self, pane_id: str) -> procs.Foreground | None:
        return self._fg.get(pane_id)

    def forget_all(self) -> None:
        """The manifests changed: identify every pane again."""
        self._identity.clear()

    def listed(self, panes: list[PaneInfo], seen: set[str]) -> list[str]:
        """A listing is done: remember what it saw; the panes that are gone are returned."""
        gone = list(set(self._identity) - seen)
        for pane_id in gone:
            del self._identity[pane_id]
            self._fg.pop(pane_id, None)
            self._via.pop(pane_id, None)
        self.children = procs.child_pids(self.server_pid) if self.server_pid else None
        self._foregrounds = {info.pane_id: (info.pane_pid, self._identity[info.pane_id][0])
                             for info in panes if info.pane_id in self._identity}
        return gone

    def changed(self) -> bool:
        """The process table says a pane came or went (the server's children), or an agent
        started or left a pane (its tty's foreground)."""
        if self.server_pid and procs.child_pids(self.server_pid) != self.children:
            return True
        return any((procs.foreground_key(pane_pid) or (0, b"")) != key
                   for pane_pid, key in self._foregrounds.values())
