"""The sidecar's part of remote hosts: one `Hosts`, configured from the three options when the
sidecar starts and again whenever one of them changes.

The changes come as control-mode subscriptions (`refresh-client -B`, tmux 3.2+): tmux itself
says when an option's value changes, sent once per connect, so no command runs per sweep
(each command the sidecar sends stays in the user's show-messages). Where tmux has no
subscriptions (older than 3.2) or no control client, the options are read again every
`REREAD` seconds (a command each time, as the pane listing).
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

from ...tmux import Tmux, TmuxError
from ..config import REMOTE_OPTIONS, Config, read_remote
from ..options import OptionReader
from .links import Hosts

log = logging.getLogger("tmux_agentstate.sidecar")

REREAD = 5.0


def subscription(option: str) -> str:
    """The subscription's name for an option ("@agentstate-hosts" → "agentstate-hosts")."""
    return option.lstrip("@")


class RemoteHosts:
    def __init__(self, tmux: Tmux, runtime_dir: Path, config: Config, publish):
        self.tmux = tmux
        self.hosts = Hosts(runtime_dir)
        self.values = {name: "" for name in REMOTE_OPTIONS}  # as tmux last said them
        self.remote = config.remote()
        self.publish = publish
        publish.remote_rows = self.hosts.rows
        self._subscribed = False
        self._reread_at = 0.0

    def start(self) -> None:
        self.hosts.configure(*self.remote)
        for option in REMOTE_OPTIONS:
            self._subscribed = self.tmux.subscribe(subscription(option), f"#{{{option}}}")

    def settle(self) -> None:
        """The end of each sweep: follow the options, hand the state changes on."""
        said = self.tmux.subscribed() if self._subscribed else None
        if said is None:
            said = self._reread()
        if said:
            for option in REMOTE_OPTIONS:
                if subscription(option) in said:
                    self.values[option] = said[subscription(option)]
            self._follow()
        self.publish.remote_changes(self.hosts.take_transitions())

    def _reread(self) -> dict[str, str]:
        """No subscriptions: the options again, at most every REREAD seconds."""
        now = time.monotonic()
        if now < self._reread_at:
            return {}
        self._reread_at = now + REREAD
        try:
            options = self.tmux.global_options()
        except TmuxError:
            return {}
        return {subscription(o): options.get(o, "") for o in REMOTE_OPTIONS}

    def _follow(self) -> None:
        read = OptionReader({o: v for o, v in self.values.items() if v})
        remote = read_remote(read, Config())
        if remote == self.remote:
            return
        for problem in read.problems:
            log.error("option %s", problem.line())
        self.remote = remote
        self.hosts.configure(*remote)

    def stop(self) -> None:
        self.hosts.stop()
