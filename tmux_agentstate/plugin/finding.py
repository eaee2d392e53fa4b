"""One line of `doctor`'s answer: `ok` and `note` inform, a `problem` carries its fix."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Finding:
    kind: str  # ok | note | problem
    text: str
    fix: str = ""

    def line(self) -> str:
        return f"{self.kind:<7} {self.text}" + (f"; fix: {self.fix}" if self.fix else "")
