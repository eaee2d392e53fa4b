"""Patterns: the regexes of rules and identities, each search time-bounded.

A rule's regex runs on every changed row of every agent pane, so it must never hold the
sidecar: `Pattern` searches with the `regex` module's timeout and a `Guard` disables the rule
for good on the first search over SEARCH_BUDGET. `Hint` is the cheap pre-check made of the
blocked rules' patterns, with plain-text prefilters read from each regex.
"""
from __future__ import annotations

import re
import sys

import regex  # re's syntax and meaning, plus a time bound on each search (see Pattern)

if sys.version_info >= (3, 11):
    import re._constants as _sre
    import re._parser as _sre_parse
else:  # pragma: no cover
    import sre_constants as _sre
    import sre_parse as _sre_parse

SEARCH_BUDGET = 0.05  # seconds one search may take; bundled rules take microseconds
_FAULTS: list[str] = []  # rules disabled since the last take_faults(), one line each


def take_faults() -> list[str]:
    """Rules disabled for going over the search budget since the last call (one line each)."""
    out = _FAULTS[:]
    del _FAULTS[:]
    return out


class Guard:
    """One rule's (or one identity key's) health: the first search over the budget disables
    it for good (until its file is loaded again), with one line naming file and rule. A user's
    `(a+)+$` on a row of a's would otherwise hold the sidecar, and every pane, for minutes."""

    __slots__ = ("where", "fault")

    def __init__(self, where: str):
        self.where, self.fault = where, None

    def trip(self, pattern: str) -> None:
        if self.fault is None:
            self.fault = (f"{self.where}: disabled: a search took over "
                          f"{SEARCH_BUDGET * 1000:.0f} ms (pattern {pattern!r})")
            _FAULTS.append(self.fault)


class Pattern:
    """A compiled regex and pieces of plain text one of which every match contains. Most rows
    hold none of them, and `literal in text` is far cheaper than a regex that starts with
    `^\\s*` (tried at every position of a screen: ~30 µs each, ~0.5 µs with the test).
    Every search is bounded by SEARCH_BUDGET; one over it trips the guard (no match, ever)."""

    __slots__ = ("regex", "literals", "pattern", "flags", "guard")

    def __init__(self, source: str, flags: int = 0, guard: Guard | None = None):
        self.regex = regex.compile(source, flags | regex.VERSION0)
        self.pattern, self.flags = source, flags
        self.guard = guard or Guard("pattern")
        self.literals = required_literals(re.compile(source, flags))

    def search(self, text: str, pos: int = 0, endpos: int | None = None):
        if self.guard.fault is not None:
            return None
        if self.literals and not any(lit in text for lit in self.literals):
            return None
        try:
            return self.regex.search(text, pos, len(text) if endpos is None else endpos,
                                     timeout=SEARCH_BUDGET)
        except TimeoutError:
            self.guard.trip(self.pattern)
            return None

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r})"


def required_literals(regex: re.Pattern) -> tuple[str, ...]:
    """Plain text every match must contain, one of these pieces (() if nothing useful): read
    from the regex's own parse tree; a run of literal characters, or one run per branch of an
    alternation; case-sensitive patterns only."""
    def best(items) -> tuple[str, ...]:
        candidates, run = [()], []
        for op, av in items:
            if op is _sre.LITERAL:
                run.append(chr(av))
                continue
            candidates.append(("".join(run),))
            run = []
            if op is _sre.SUBPATTERN and not (av[1] & re.IGNORECASE):
                candidates.append(best(av[3]))  # a group that must match
            elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and av[0] >= 1:
                candidates.append(best(av[2]))  # repeated at least once
            elif op is _sre.BRANCH:
                alts = [best(b) for b in av[1]]
                if all(alts):  # every branch has text: one of them is there
                    candidates.append(tuple(x for a in alts for x in a))
        candidates.append(("".join(run),))
        return max(candidates, key=_rarity)

    try:  # a private module: any surprise means no prefilter
        parsed = _sre_parse.parse(regex.pattern, regex.flags)
        if (parsed.state.flags | regex.flags) & re.IGNORECASE:
            return ()
        found = best(parsed)
    except Exception:  # noqa: BLE001
        return ()
    return found if _rarity(found) >= 2 else ()


def _rarity(pieces: tuple[str, ...]) -> int:
    """How well pieces filter: the weakest piece's non-blank characters, a non-ASCII one
    (a dialog's "△" or "│") counting triple; a lone space or "." filters nothing."""
    return min((sum(3 if ord(c) > 127 else 1 for c in p if not c.isspace()) for p in pieces),
               default=0)


class Hint:
    """Any of several patterns (see `Manifest.blocked_hint`): separate patterns keep their
    own literal prefilters, which one big alternation would lose."""

    __slots__ = ("patterns", "_needles", "_any_literal", "_bare")

    def __init__(self, patterns):
        self.patterns = tuple(patterns)
        self._needles: tuple[bytes, ...] | None = None
        # every pattern's plain-text pieces in one alternation: one scan of the text in C
        # tells whether any pattern that has pieces can match (most changed rows: none)
        with_pieces = [p for p in self.patterns if p.literals]
        self._bare = tuple(p for p in self.patterns if not p.literals)
        pieces = sorted({lit for p in with_pieces for lit in p.literals}, key=len, reverse=True)
        self._any_literal = re.compile("|".join(map(re.escape, pieces))) if pieces else None

    def may_be_in(self, data: bytes) -> bool:
        """Whether raw pane bytes may draw text one of the patterns matches: each pattern's
        plain-text pieces, cut to their longest word (a renderer moves the cursor between
        words, never inside one), searched in the bytes as they are. False only when no
        pattern can match; a pattern with no such piece makes it True."""
        if self._needles is None:
            needles = []
            for p in self.patterns:
                if not p.literals:
                    self._needles = ()
                    return True
                needles += [max(lit.split(), key=len, default=lit).encode() for lit in p.literals]
            self._needles = tuple(n for n in dict.fromkeys(needles) if n)
        return not self._needles or any(n in data for n in self._needles)

    def search(self, text: str):
        if self._any_literal is not None and self._any_literal.search(text) is None:
            patterns = self._bare  # no piece of any other pattern is there: only these can
        else:
            patterns = self.patterns
        for p in patterns:
            m = p.search(text)
            if m is not None:
                return m
        return None
