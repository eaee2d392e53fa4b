"""What no event tells the sidecar, looked at rarely and spread over time: whether the command
in front of a pane changed (an agent started or left) or an agent pane's size did.

Events tell most of it, and cost nothing while nothing happens:
- a pane's own bytes: a pane that printed is looked at within BUSY_GAP (an agent that leaves
  has its shell draw a prompt; a resized agent redraws);
- the tmux server's child set (`Identities.children_changed`): a pane came or went;
- the control client's notifications (`Tmux.news`): a window added, closed or renamed (with
  automatic-rename a window's name follows its active pane's command), a client's focus, a
  layout changed in its own session.
What is left is looked at in rotations, a slice a sweep: each agent pane's size (one ioctl)
every SIZE_EVERY (a resize tmux tells no one of, of a program that does not redraw) and its
foreground every WATCHED_EVERY; each other pane's foreground every OTHER_EVERY (a shell where
the user may start an agent in a split, or with automatic-rename off). 200 waiting agents so
cost ~40 ioctls and ~7 small reads of /proc a second, where every pane at every sweep cost
~850 of them. (A format subscription that tells every window's layout costs tmux itself more:
0.2 % of a core at 200 windows, measured.)
"""
from __future__ import annotations

SIZE_EVERY = 5.0      # an agent pane with no bytes: its size, this often...
WATCHED_EVERY = 30.0  # ...and its foreground, this often
OTHER_EVERY = 3.0     # a pane with no agent in front (we get no bytes of it): this often
BUSY_GAP = 1.0        # a pane that printed is looked at no more often than this


class Rotation:
    """Keys visited each once per `period`, a slice per call (pure: the caller gives the time)."""

    def __init__(self, period: float):
        self.period = period
        self._keys: list[str] = []
        self._pos = 0
        self._owed = 0.0
        self._at: float | None = None

    def keep(self, keys) -> None:
        """The keys to visit from now on (the order of those already there is kept)."""
        if set(keys) != set(self._keys):
            self._keys = sorted(keys)
            self._pos = self._pos % len(self._keys) if self._keys else 0

    @property
    def keys(self) -> list[str]:
        return self._keys

    def take(self, now: float) -> list[str]:
        """The keys due since the last call (their share of the period that passed)."""
        last, self._at = self._at, now
        if last is None or not self._keys:
            return []
        self._owed = min(self._owed + len(self._keys) * max(0.0, now - last) / self.period,
                         float(len(self._keys)))
        n = int(self._owed)
        self._owed -= n
        out = [self._keys[(self._pos + i) % len(self._keys)] for i in range(n)]
        self._pos = (self._pos + n) % len(self._keys)
        return out


class Rechecks:
    """Which panes to look at in this sweep: those that printed (at most every BUSY_GAP),
    and the rotations' slices."""

    def __init__(self):
        self.sizes = Rotation(SIZE_EVERY)
        self.watched = Rotation(WATCHED_EVERY)
        self.other = Rotation(OTHER_EVERY)
        self._printed: set[str] = set()        # printed, not yet looked at
        self._looked: dict[str, float] = {}    # pane → when it was last looked at (printed)

    def listed(self, watched, other) -> None:
        """A listing is done: the panes there are now (watched by us, and the others)."""
        self.sizes.keep(watched)
        self.watched.keep(watched)
        self.other.keep(other)
        watching = set(self.watched.keys)
        self._looked = {p: t for p, t in self._looked.items() if p in watching}

    def printed(self, pane_ids) -> None:
        self._printed.update(pane_ids)

    def take(self, now: float) -> tuple[list[str], list[str], list[str]]:
        """What to look at now: (panes that printed: foreground and size, panes whose
        foreground only, panes whose size only)."""
        due = [p for p in self._printed if now - self._looked.get(p, 0.0) >= BUSY_GAP]
        for p in due:
            self._printed.discard(p)
            self._looked[p] = now
        return due, self.watched.take(now) + self.other.take(now), self.sizes.take(now)
