"""`prefix + a` (`@agentstate-next-key`): go to the pane that needs the user most, across
sessions, windows and hosts: the longest-blocked first, then the oldest turn that finished
unseen ("done"); a local pane before a remote one of the same age. Pressed again, the next one
after the pane the client shows; a message when none needs the user. It reads the options the
sidecar publishes and the hosts' rows it wrote (hosts.json), so it costs a few tmux commands
and never a look at a screen. A stale remote row (its host silent or unreachable) is not
visited: its state is only the last one known."""
from __future__ import annotations

from ..tmux import Tmux, TmuxError
from .remote import all_rows, client_view, reach, where


def _key(r: dict) -> tuple[str, str]:
    return r.get("host", ""), r["pane"]


def waiting(rows: list[dict]) -> list[dict]:
    """The panes that need the user, in the order the key visits them."""
    fresh = [r for r in rows if not r.get("stale")]
    blocked = [r for r in fresh if r["state"] == "blocked"]
    done = [r for r in fresh if r["state"] == "idle" and r.get("done")]
    oldest_first = lambda r: (r["since"] or 0, r.get("host", "") != "", r["pane"])  # noqa: E731
    return sorted(blocked, key=oldest_first) + sorted(done, key=oldest_first)


def after(order: list[dict], current) -> dict | None:
    """The one to go to: the first, or the one after the pane the client shows already
    (`current`: a local pane id, or (host, pane))."""
    if not order:
        return None
    if not isinstance(current, tuple):
        current = ("", current)
    ids = [_key(r) for r in order]
    return order[(ids.index(current) + 1) % len(order)] if current in ids else order[0]


def go_next(tmux: Tmux, client: str | None) -> str:
    """Show the next pane that needs the user in `client`; what happened, in one line."""
    order = waiting(all_rows(tmux))
    view = client_view(tmux, client) if client else None
    session = view[1] if view else None
    current = ((view[2], view[3]) if view[2] else ("", view[0])) if view else None
    target = after(order, current)
    if target is None:
        return "no agent needs you"
    what = "blocked" if target["state"] == "blocked" else "done"
    keys = [_key(r) for r in order]
    place = keys.index(_key(target)) + 1
    line = f"{target['agent']} in {where(target)}: {what} ({place} of {len(order)})"
    if _key(target) == current:
        return line + ", the only one"
    try:
        if target.get("host"):
            return f"{line}: {reach(tmux, target, client, session)}"
        tmux.jump_to(target["pane"], client)
    except TmuxError as e:
        return f"cannot go to {where(target)}: {e}"
    return line
