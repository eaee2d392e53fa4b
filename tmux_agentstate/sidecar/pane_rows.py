"""`panes.json` in the runtime folder: the agent panes this sidecar publishes, as rows (what
`list --json` shows of each), rewritten whole when one changes. `tmux-agentstate stream`
reads it on a host and sends the changes to the sidecars that link to that host, so a
remote view costs this server no tmux command."""
from __future__ import annotations

import json
import time
from pathlib import Path

from .runtime import replace_whole
from .watch import PaneWatch, shown_state

PANE_ROWS = "panes.json"


def pane_row(w: PaneWatch) -> dict:
    st, info = w.state, w.info
    # a prompt's line while blocked, else the row of the error the turn ended in (publish.py)
    detail = st.detail if st.state == "blocked" else st.mark_line
    return {"pane": w.pane_id, "target": info.address, "session": info.session,
            "window": info.window_index, "window_name": "", "state": st.state,
            "agent": w.manifest.name, "since": int(w.since) if w.since else None,
            "source": st.source, "agent_version": w.version or None,
            "done": shown_state(w) == "done", "error": st.mark or None,
            "context": w.context, "detail": " ".join((detail or "").split())[:200]}


# rewritten at most this often while panes keep changing (a new prompt: at once). Each write
# encodes every row: at 0.3 s, ~7 % of what 50 busy panes cost the sidecar (py-spy)
ROWS_GAP = 1.0


class PaneRows:
    def __init__(self, folder: Path):
        self.path = Path(folder) / PANE_ROWS
        self._written: str | None = None
        self._blocked: frozenset = frozenset()  # the panes blocked in the file
        self._at = -ROWS_GAP
        self.held = False  # a change is held back (ROWS_GAP): the next update writes it

    def update(self, panes: list[PaneWatch], now: float) -> None:
        """Rewrite the file if a row changed (a full disk: tried again at the next change), at
        most every ROWS_GAP unless a pane is newly blocked (what a remote view waits for)."""
        blocked = frozenset(w.pane_id for w in panes if w.state and w.state.state == "blocked")
        if now - self._at < ROWS_GAP and blocked <= self._blocked:
            self.held = True
            return
        self.held = False
        self._at, self._blocked = now, blocked
        rows = [pane_row(w) for w in panes if w.state is not None]
        data = json.dumps(rows, ensure_ascii=True, separators=(",", ":"))
        if data == self._written:
            return
        # the rows are encoded once: the file is them inside {"v":1,"written":…,"rows":…}
        text = f'{{"v":1,"written":{json.dumps(time.time())},"rows":{data}}}'
        if replace_whole(self.path, text, ".panes-"):
            self._written = data
