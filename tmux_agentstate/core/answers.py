"""A manifest's answers: what `answer PANE yes|no|always` types into a dialog. Pure.

`[answers]` (the agent's default) and a blocked rule's own `answers` (engine 3: each dialog
kind maps its own keys) name, per choice, either a list of tmux key names or a `Pick`: an
option chosen by its label, for lists without numbers whose order differs between releases.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .patterns import Pattern

CHOICE_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
# a tmux key name ("Enter", "Escape", "Down", "C-c", "y", "1"): never an option ("-X") nor a
# command separator (";"), which `send-keys` would take as more than a key
KEY_NAME = re.compile(r"(?:[CMS]-)*(?:[A-Za-z0-9][A-Za-z0-9]*|[!-~])")
_PICK_KEYS = {"pick", "marker"}


@dataclass(frozen=True)
class Pick:
    """An answer chosen by its label: move the dialog's selection `marker` (e.g. "❯") with
    Up/Down to the option whose row matches `label`, then Enter. For lists without numbers,
    whose order differs between releases (Claude's folder trust: "No, exit" first in 2.1,
    "Yes, proceed" first in 2.0)."""
    label: Pattern
    marker: str


def parse_answers(value, engine: int, of_rule: bool, fail: Callable[[str], Exception],
                  label: Callable[[str, str], Pattern]) -> dict:
    """choice → a tuple of tmux key names, or (engine 3) a Pick from `{ pick = "label regex",
    marker = "❯" }`. `fail(reason)` makes the manifest's error, `label(name, regex)` compiles
    a label as the rules' patterns are (time-bounded)."""
    where = "'answers'" if of_rule else "[answers]"
    if not isinstance(value, dict):
        raise fail(f"{where} maps a choice to a list of tmux key names")
    if of_rule and engine < 3:
        raise fail("a rule's own 'answers' need 'engine = 3' (or later)")
    out: dict = {}
    for choice, keys in value.items():
        if not CHOICE_NAME.fullmatch(choice):
            raise fail(f"{where}: a choice is a short lowercase word, not {choice!r}")
        if isinstance(keys, dict):
            if engine < 3:
                raise fail(f"{where}: a {{ pick = … }} answer needs 'engine = 3' (or later)")
            marker = keys.get("marker")
            if (set(keys) != _PICK_KEYS or not isinstance(keys.get("pick"), str)
                    or not isinstance(marker, str) or not 0 < len(marker) <= 4 or not marker.strip()
                    or marker != marker.strip()):
                raise fail(f"{where}: {choice} = {{ pick = \"label regex\", marker = \"❯\" }} "
                           "(the selection's mark)")
            out[choice] = Pick(label(f"{choice}.pick", keys["pick"]), marker)
        elif (isinstance(keys, list) and keys
              and all(isinstance(k, str) and KEY_NAME.fullmatch(k) for k in keys)):
            out[choice] = tuple(keys)
        else:
            raise fail(f"{where}: {choice} must be a list of tmux key names "
                       "(e.g. [\"1\"], [\"Escape\"])")
    return out
