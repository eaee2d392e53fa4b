"""Who is in front of each pane: the agent its tty's foreground process group runs (through
procs), or an SSH-like client whose far side's agent only the screen can tell (core/tunnels),
cached by that group until a look says it changed (`foreground_changed`, which rechecks.py
decides when to ask), and whether the process table says a pane came or went."""
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
        self._suspects: set[str] = set()  # panes whose foreground changed since identified
        self._children_text: bytes | None = None  # the server's children, as last read
        self.server_pid = 0
        self.children: frozenset | None = None  # the tmux server's child processes

    def identify(self, info: PaneInfo) -> tuple[Manifest | None, int]:
        """The manifest of the agent in front of the pane (None: no agent), and its process
        group. The last answer while nothing says it changed (a look found its foreground
        changed: `foreground_changed`; its process is another: respawned); else the process
        table is read."""
        if info.dead:
            self._via.pop(info.pane_id, None)
            return None, 0
        cached = self._identity.get(info.pane_id)
        known = self._foregrounds.get(info.pane_id)
        if (cached and info.pane_id not in self._suspects and known is not None
                and known[0] == info.pane_pid):
            return (self.catalog.get(cached[1]) if cached[1] else None), cached[0][0]
        self._suspects.discard(info.pane_id)
        key = procs.foreground_key(info.pane_pid) or (0, b"")
        self._foregrounds[info.pane_id] = (info.pane_pid, key)
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
        self._children_text = None
        self._foregrounds = {p: v for p, v in self._foregrounds.items() if p in seen}
        self._suspects &= seen
        return gone

    def children_changed(self) -> bool:
        """The process table says a pane came or went (the server's children: one read)."""
        if not self.server_pid:
            return False
        raw = procs.children_text(self.server_pid)
        if raw is not None and raw == self._children_text:
            return False  # the same text: no set of hundreds of pids made to compare
        self._children_text = raw
        return procs.child_pids(self.server_pid) != self.children

    def foreground_changed(self, pane_id: str) -> bool:
        """Whether another command is in front of the pane than at its last identification
        (two small reads of /proc); if so, the next `identify` reads it afresh."""
        known = self._foregrounds.get(pane_id)
        if known is None or pane_id in self._suspects:
            return pane_id in self._suspects
        if (procs.foreground_key(known[0]) or (0, b"")) == known[1]:
            return False
        self._suspects.add(pane_id)
        return True

    def panes(self) -> tuple[list[str], list[str]]:
        """(panes with an agent or an SSH-like client in front, the other panes), as of the
        last listing."""
        ours = [p for p, (_, agent) in self._identity.items()
                if agent is not None or p in self._via]
        mine = set(ours)
        return ours, [p for p in self._foregrounds if p not in mine]
