"""The loop's pace: when a sweep lists the panes from tmux, what it looks at in between
(rechecks.py), and how long to the next sweep. Functions of the `Sidecar` (loop.py), kept
apart so the loop reads as the data flow.

Cost follows change: a sweep where nothing happened reads no /proc file and sends tmux no
command for its panes, bar the rotations' slices (rechecks.py) and one read of the server's
child set; after a few such sweeps the sweeps themselves slow down (`period`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import procs
from .watch import read_agent_files

if TYPE_CHECKING:
    from .loop import Sidecar

AGENT_FILES_EVERY = 5.0  # a busy agent's files (context in use) are read this often
FILES_AGAIN = 2.0  # ...and again this long after its turn ended (loop.Sidecar._classify)
# after QUIET sweeps in a row with nothing to do, the sweep slows to IDLE_FACTOR times its
# period, at most IDLE_PERIOD (the default 0.7 s sweep: every 2 s)
QUIET, IDLE_FACTOR, IDLE_PERIOD = 3, 3.0, 2.0


def listing_due(s: "Sidecar", now: float) -> bool:
    """Whether this sweep must list the panes from tmux: tmux said something changed that a
    listing shows (the control client's notifications: a client may show another pane, a
    window came, went or was renamed), an intake reads its screens with it, the server's child
    set changed (a pane came or went), a look (`recheck`) found another command in front of a
    pane or an agent pane resized, or the backstop's time has come."""
    looked = recheck(s, now)  # every sweep: its slice is due whatever else happens
    if s.tmux.news() or looked or now >= s._next_listing:
        return True
    return any(i.wants_listing() for i in s.intakes) or s.identities.children_changed()


def recheck(s: "Sidecar", now: float) -> bool:
    """Look at the panes that printed and at this sweep's slice of the rest (rechecks.py):
    whether one has another command in front, or is an agent pane of another size. A watched
    pane that printed has its agent's files (context in use) read too, at most every
    `AGENT_FILES_EVERY`, and is published at this sweep."""
    for intake in s.intakes:
        s.rechecks.printed(intake.take_printed())
    changed = False
    printed, foregrounds, sizes = s.rechecks.take(now)
    for pane_id in printed + foregrounds:
        changed |= s.identities.foreground_changed(pane_id)
    for pane_id in printed + sizes:
        w = s.panes.get(pane_id)
        if w is not None:
            changed |= procs.tty_size(w.info.tty) not in (None, (w.screen.lines, w.screen.columns))
    due = [p for p, at in s.files_due.items() if at <= now]
    for pane_id in due:
        del s.files_due[pane_id]
    for w in filter(None, map(s.panes.get, printed + due)):
        if w.pane_id in due or now - w.files_read_at >= AGENT_FILES_EVERY:
            w.files_read_at = now
            read_agent_files(w)
            s.to_publish.add(w.pane_id)
    return changed


def hear_news(s: "Sidecar") -> None:
    """The intake's waits wake on the control client's output (tmux's notifications): its
    descriptor followed across reconnects."""
    fd = s.tmux.control_fd()
    # by the client's process too: a new client's output may get the number of the old one's,
    # which the kernel took out of our wait when it was closed
    key = (fd, id(s.tmux.control.proc) if fd is not None else None)
    if key != s.news_key:
        s.news_key = key
        s.intake.hear_news(fd)


def period(s: "Sidecar") -> float:
    """Seconds to the next sweep: the intake's period; longer (IDLE_FACTOR times, at most
    IDLE_PERIOD) once QUIET sweeps in a row found nothing to do and nothing needs the sweep's
    pace (see `may_slow`). Every wake of the loop is CPU with cold caches, so a sidecar whose agents
    all wait sweeps a third as often; what comes meanwhile (bytes, a ring, tmux's news)
    wakes it at once, and the first sweep after is at the old pace again."""
    s.quiet += 1
    if s.tmux.news_pending():
        return 0.0  # news read with a command's answer: the sweep lists now
    period = s.intake.period
    if s.quiet <= QUIET or not may_slow(s):
        return period
    return max(period, min(period * IDLE_FACTOR, IDLE_PERIOD))


def may_slow(s: "Sidecar") -> bool:
    """Nothing needs a sweep every period: tmux's news wakes the loop (a control client
    runs), no pane is read from tmux's screen at the sweep (the capture intake, or a pane
    another program pipes), no remote host is followed (their changes are told at the
    sweep), no agent is being inferred through an SSH-like client (time alone decides)."""
    return (s.intake.news_fd is not None and not s.intake.wants_listing()
            and not s.fallback.panes() and not s.remote.hosts.links
            and not any(w.via for w in s.panes.values()))
