"""A sweep with a pane listing (loop.py decides when: pace.py): who is in front of each pane,
which panes are adopted, relisted, dropped or gone, and which pipes another program took.
A function of the `Sidecar`, kept apart so the loop reads as the data flow."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .. import procs
from ..tmux import Batch
from .watch import NO_AGENT, mark_shown, relisted

if TYPE_CHECKING:
    from .loop import Sidecar


def list_and_sweep(s: "Sidecar") -> None:
    s.quiet = 0
    if s.manifests.reload():
        s.identities.forget_all()
        for w in s.panes.values():
            w.screen.dirty = True
    now = time.monotonic()
    captured = {i: i.listing_captures(now) for i in s.intakes}
    # no list-clients here: who looks at which pane comes from list-panes (below); the
    # clients themselves are listed only to tell them something
    panes, _, screens = s.tmux.listing([w.pane_id for ws in captured.values() for w in ws],
                                          with_clients=False)
    # the agents' own files: read when a pane printed (recheck) or changed state
    # (_classify), and a changed session file rings; only where a session folder could
    # not be watched are they read at each listing, once per interval however often the
    # sweep runs (the capture intake's ticks)
    now = time.monotonic()
    full = not s.rings.sessions.reliable and (
        s.intake.period >= s.config.interval or now >= s._next_full)
    if full:
        s._next_full = now + s.config.interval * 0.95
    batch = Batch()
    seen: set[str] = set()
    for info in panes:
        seen.add(info.pane_id)
        manifest, pgid = s.identities.identify(info)
        w = s.panes.get(info.pane_id)
        via = s.identities.via(info.pane_id)  # a tunnel: its agent inferred (watch.py)
        if via and w is not None and (w.via, w.pgid) == (via, pgid):
            relisted(w, info, screens, full)
            continue
        if manifest is None:
            if w is not None:
                s._drop(w, batch)
            if via:
                s._adopt(info, NO_AGENT, pgid, batch, via)
            elif w is None and (info.state_option or info.our_pipe):  # an earlier sidecar's
                s.publish.clean_leftovers(info, batch)
            continue
        if w is not None and w.manifest is not manifest and w.manifest.name == manifest.name:
            w.manifest = manifest  # its file was edited (reloaded): the new rules apply
            w.screen.dirty = True
        if w is None or w.manifest.name != manifest.name or w.pgid != pgid:
            if w is not None:
                s._drop(w, batch, unpublish=False)
            s._adopt(info, manifest, pgid, batch)
            continue
        relisted(w, info, screens, full)
    mark_shown(s.panes, panes, s.tmux.control_session, time.time())
    for intake, ws in captured.items():
        intake.after_listing(ws, screens, seen)
    for gone in set(s.panes) - seen:  # pane killed: tmux closed its pipe already
        w = s.panes.pop(gone)
        w.intake.forget(w)
    for gone in s.identities.listed(panes, seen):
        s.publish.forget(gone)
    s.rechecks.listed(*s.identities.panes())
    # a pane whose pipe another program's `pipe-pane` replaced or closed is never taken
    # back: the fallback intake reads its screen from tmux from now on
    s.fallback.take_lost_pipes(list(s.panes.values()), children_writing(s), batch)
    s.publish.apply(batch)  # pipes first: no byte is lost between a capture and a pipe
    s._next_listing = time.monotonic() + listing_every(s)
    s.rings.listed()
    s.to_publish.update(s.panes)  # what a listing tells may change any option
    s.publish.recount()
    s._settle()


def children_writing(s: "Sidecar") -> dict[str, int]:
    """What the tmux server's children write to (their stdout: a `pipe-pane`'s FIFO), read
    again only when the set of children changed (a readlink each)."""
    children = s.identities.children
    if children != s._lost_pipes_children:
        s._lost_pipes_children = children
        s._writing = procs.stdout_targets(children)
    return s._writing


def listing_every(s: "Sidecar") -> float:
    """The backstop between two listings: events tell the rest (listing_due). Without a
    doorbell (hook reports) or a control client (its notifications), sooner."""
    c = s.config
    if s.rings.bell.fileno() is None or s.tmux.control_session is None:
        return min(c.listing_every, c.listing_blind)
    return c.listing_every
