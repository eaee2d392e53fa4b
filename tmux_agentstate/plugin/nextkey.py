"""`prefix + a` (`@agentstate-next-key`): go to the pane that needs the user most, across
sessions and windows: the longest-blocked first, then the oldest turn that finished unseen
("done"). Pressed again, the next one after the pane the client shows; a message when none
needs the user. It reads the options the sidecar publishes, so it costs two tmux commands and
never a look at a screen."""
from __future__ import annotations

from ..tmux import Tmux, TmuxError


def waiting(rows: list[dict]) -> list[dict]:
    """The panes that need the user, in the order the key visits them."""
    blocked = [r for r in rows if r["state"] == "blocked"]
    done = [r for r in rows if r["state"] == "idle" and r.get("done")]
    oldest_first = lambda r: (r["since"] or 0, r["pane"])  # noqa: E731
    return sorted(blocked, key=oldest_first) + sorted(done, key=oldest_first)


def after(order: list[dict], current: str | None) -> dict | None:
    """The one to go to: the first, or the one after the pane the client shows already."""
    if not order:
        return None
    ids = [r["pane"] for r in order]
    return order[(ids.index(current) + 1) % len(order)] if current in ids else order[0]


def go_next(tmux: Tmux, client: str | None) -> str:
    """Show the next pane that needs the user in `client`; what happened, in one line."""
    order = waiting(tmux.agent_panes())
    current = tmux.client_pane(client) if client else None
    target = after(order, current)
    if target is None:
        return "no agent needs you"
    what = "blocked" if target["state"] == "blocked" else "done"
    place = len(order) if target["pane"] == current else [r["pane"] for r in order].index(target["pane"]) + 1
    line = f"{target['agent']} in {target['target']}: {what} ({place} of {len(order)})"
    if target["pane"] == current:
        return line + ", the only one"
    try:
        tmux.jump_to(target["pane"], client)
    except TmuxError as e:
        return f"cannot go to {target['target']}: {e}"
    return line
