"""The capture intake: no pipes; every `capture_interval` one round trip lists the panes and
reads every agent pane's rendering. Also where a pane goes whose pipe another program holds
(in a sidecar with a FIFO intake): its screen is read with every listing."""
from __future__ import annotations

import logging

from ...tmux import Batch
from ..watch import PaneWatch, could_be_blocked
from .base import Intake

log = logging.getLogger("tmux_agentstate.sidecar")


class CaptureIntake(Intake):
    name = "capture"

    def __init__(self, *args, chosen: bool = True):
        super().__init__(*args)
        self.chosen = chosen  # the user's intake (it sets the sweep's pace), or the fallback

    @property
    def period(self) -> float:
        return self.config.capture_interval if self.chosen else self.config.interval

    def wants_listing(self) -> bool:
        return self.chosen or bool(self.panes())

    def listing_captures(self, now: float) -> list[PaneWatch]:
        return self.panes()

    def worth_classifying(self, w: PaneWatch, now: float) -> bool:
        """The chosen capture intake sweeps every tick: there a changed screen gets the cheap
        blocked pre-check, and a full classification only on a hit or once per `interval`,
        to the nearest tick: the time between two classifications varies with the listing's
        round trip, and a threshold a millisecond short of it cost a whole tick of latency."""
        if not self.chosen or now - w.last_classified >= self.config.interval - self.period / 2:
            return True
        return could_be_blocked(w)

    def take_lost_pipes(self, panes: list[PaneWatch], writing: set[str], batch: Batch) -> None:
        """Take every pane whose pipe another program's `pipe-pane` replaced or closed (a `-o`
        toggle included); its intake lets it go. `writing`: what the server's children write."""
        for w in panes:
            how = w.intake.lost_pipe(w, writing)
            if how:
                log.info("%s (%s): our pipe %s; reading tmux's screen instead", w.pane_id,
                         w.info.address, how)
                w.intake.release(w, batch)
                self.take(w)
