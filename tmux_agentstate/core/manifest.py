"""Manifests: per-agent identity patterns and ordered screen rules, loaded from TOML.

Pure data and regexes: no tmux, no processes. `Manifest.evaluate(view)` is the classifier.
The schema is documented in `manifests/SCHEMA.md`.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import regex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .answers import Pick, parse_answers
from .safe_read import read_head
from .patterns import SEARCH_BUDGET, Guard, Hint, Pattern, take_faults
from .rows import below_last, find_line as _find_line, paragraphs
from .screen import ScreenView

__all__ = ["ENGINE", "SEARCH_BUDGET", "Guard", "Hint", "Identity", "Manifest", "ManifestError",
           "Match", "Pattern", "Pick", "Rule", "load_manifest", "parse_manifest", "take_faults"]

STATES = ("blocked", "working", "idle")
FALLBACKS = ("idle", "working")  # never blocked: a false "needs you" costs more than a late one
ROW_REGIONS = ("screen", "cursor_row", "bottom", "top", "paragraphs")
REGIONS = ROW_REGIONS + ("title", "osc_state")
_TOP_KEYS = {"name", "display", "version", "engine", "tested", "fallback", "identify", "rules",
             "marks", "answers"}
# The manifest schema this code reads. A manifest that needs more (`engine = N`, a new rule
# kind) is refused with one line and the last good one keeps running; `manifests update`
# checks it before it writes anything.
ENGINE = 5  # 2: [[marks]]; 3: a blocked rule's own `answers`, `{ pick = … }` answers;
# 4: identity only (no [[rules]]: an agent that reports its state itself, OSC 7501 or hooks);
# 5: `not_below` (a row counts only when no row below it shows what follows it, e.g. a finished
# turn), and the `paragraphs` region (wrapped rows rejoined);
# a manifest's `version` counts changes to its rules (the busiest is at 3): ten thousand is
# centuries of them. Bounded so a file that claims 10**18 cannot take precedence over every
# manifest a future release bundles (the newer of bundled and cached runs)
MAX_VERSION = 10_000
_IDENTIFY_KEYS = {"commands", "cmdline", "title", "screen"}
_RULE_KEYS = {"id", "state", "region", "rows", "any", "all", "not", "not_below", "comment",
              "answers"}
_MARK_KEYS = (_RULE_KEYS - {"state", "answers"}) | {"mark"}
MARK_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
class ManifestError(ValueError):
    """One clear line: file, rule, reason."""

    def __init__(self, path: Path | str, reason: str, rule: str | None = None):
        self.path, self.rule, self.reason = str(path), rule, reason
        where = f"{self.path}: rule {rule!r}" if rule else self.path
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class Match:
    """The verdict on one screen. `rule` is None when no rule matched (the fallback state).
    `mark`: the first `[[marks]]` rule that matched (e.g. an error the turn ended in), beside
    the state, never instead of it; `mark_line` its row."""
    state: str
    rule: str | None = None
    line: str | None = None
    mark: str | None = None
    mark_line: str | None = None


@dataclass(frozen=True)
class Rule:
    id: str
    state: str          # the state it says; for a `[[marks]]` rule, the mark (e.g. "rate-limit")
    region: str = "screen"
    rows: int = 0
    any: tuple[Pattern, ...] = ()
    all: tuple[Pattern, ...] = ()
    not_: tuple[Pattern, ...] = ()
    guard: Guard = field(default_factory=lambda: Guard("rule"), compare=False)
    # a blocked rule's own dialog: choice → keys (tuple) or Pick; None: the manifest's
    # [answers]; {}: this dialog takes no canned answer (a question to answer in the pane)
    answers: dict | None = field(default=None, hash=False)
    # engine 5: an `any` / `all` row counts only when no row below it (in the region) matches
    # one of these: a row the screen has moved past (a spinner left above a finished turn)
    not_below: tuple[Pattern, ...] = ()

    def region_text(self, view: ScreenView) -> str:
        """The region's rows joined by newlines; cached on the view, since most rules of a
        manifest read the same few regions."""
        key = (self.region, self.rows)
        text = view.regions.get(key)
        if text is None:
            if self.region == "screen":
                text = view.text
            elif self.region == "cursor_row":
                text = view.rows[view.cursor_row] if 0 <= view.cursor_row < len(view.rows) else ""
            elif self.region == "title":
                text = view.title
            elif self.region == "osc_state":
                text = view.osc_state
            elif self.region == "paragraphs":
                text = "\n".join(paragraphs(view.rows))
            else:
                filled = [r for r in view.rows if r.strip()]
                text = "\n".join(filled[-self.rows:] if self.region == "bottom" else filled[: self.rows])
            view.regions[key] = text
        return text

    def match(self, view: ScreenView) -> str | None:
        """The line that matched, or None (always None once the rule is disabled: a `not`
        pattern that gave up must not let the rule match)."""
        if self.guard.fault is not None:
            return None
        hit = self._match(view)
        return hit if self.guard.fault is None else None

    def _match(self, view: ScreenView) -> str | None:
        text = self.region_text(view)
        if self.not_ and any(_find_line(p, text) is not None for p in self.not_):
            return None
        if self.not_below:
            text = below_last(self.not_below, text)
        find = _find_line
        hit = None
        for pat in self.all:
            found = find(pat, text)
            if found is None:
                return None
            hit = hit if hit is not None else found
        if self.any:
            found = next((l for l in (find(p, text) for p in self.any) if l is not None), None)
            if found is None:
                return None
            hit = found if hit is None else hit  # the first `all` row names the dialog best
        return hit


@dataclass(frozen=True)
class Identity:
    commands: tuple[str, ...] = ()
    cmdline: tuple[Pattern, ...] = ()
    title: tuple[Pattern, ...] = ()
    screen: tuple[Pattern, ...] = ()

    def matches_process(self, name: str, cmdline: Iterable[str]) -> bool:
        args = list(cmdline)
        names = {name, Path(args[0]).name if args else ""}
        if names & set(self.commands):
            return True
        joined = " ".join(args)
        return any(p.search(joined) for p in self.cmdline)

    def screen_score(self, view: ScreenView) -> int:
        """How strongly a screen looks like this agent's (to infer a capture's agent)."""
        text = view.text
        return (3 * sum(1 for p in self.title if p.search(view.title))
                + sum(1 for p in self.screen if p.search(text)))


@dataclass(frozen=True)
class Manifest:
    name: str
    path: str
    display: str = ""
    fallback: str = "idle"
    identify: Identity = field(default_factory=Identity)
    rules: tuple[Rule, ...] = ()
    marks: tuple[Rule, ...] = ()       # details beside the state: an error a turn ended in
    answers: dict = field(default_factory=dict)
    # every pattern a blocked rule could match with (None: no blocked rule)
    blocked_hint: Hint | None = None
    version: int = 1                   # the manifest's own revision
    tested: tuple[str, ...] = ()       # agent releases its rules were checked against
    engine: int = 1                    # the least ENGINE that reads it

    @property
    def identity_only(self) -> bool:
        """No screen rules (engine 4): the agent reports its state itself (OSC 7501, hooks);
        its panes are idle unless a report says otherwise."""
        return not self.rules

    def faults(self) -> list[str]:
        """Its rules (and identity patterns) disabled for going over the search budget."""
        patterns = [p for r in self.rules + self.marks for p in r.any + r.all + r.not_ + r.not_below]
        patterns += [p for k in ("cmdline", "title", "screen") for p in getattr(self.identify, k)]
        return list(dict.fromkeys(p.guard.fault for p in patterns if p.guard.fault))

    def dialog_answers(self, view: ScreenView) -> tuple[str | None, dict]:
        """The answers of the dialog on screen: those of the first blocked rule that matches
        `view` and carries its own (a generic rule, e.g. a title or OSC one, may come first
        and decide the state), else the manifest's [answers]. (rule id or None, answers)."""
        for rule in self.rules:
            if rule.state == "blocked" and rule.answers is not None and rule.match(view) is not None:
                return rule.id, rule.answers
        return None, self.answers

    def evaluate(self, view: ScreenView) -> Match:
        """First rule that matches wins; no match is the fallback state (never blocked).
        The first mark that matches goes with it, whatever the state."""
        mark = mark_line = None
        for rule in self.marks:
            mark_line = rule.match(view)
            if mark_line is not None:
                mark = rule.state
                break
        for rule in self.rules:
            line = rule.match(view)
            if line is not None:
                return Match(rule.state, rule.id, line, mark, mark_line)
        return Match(self.fallback, None, None, mark, mark_line)


# -- loading ---------------------------------------------------------------------------------------
def _patterns(path, rule_id, key, value, flags: int = 0, guard: Guard | None = None
              ) -> tuple[Pattern, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(path, f"{key!r} must be a list of regex strings", rule_id)
    guard = guard or Guard(f"{path}: {key}")
    out = []
    for v in value:
        try:
            out.append(Pattern(v, flags, guard))
        except (re.error, regex.error) as e:
            raise ManifestError(path, f"bad regex in {key!r}: {v!r}: {e}", rule_id) from None
    return tuple(out)


def parse_manifest(data: dict, path: Path | str) -> Manifest:
    path = Path(path)
    # first: a manifest for a newer engine may use keys and rule kinds this one does not know
    engine = data.get("engine", 1)
    if not isinstance(engine, int) or isinstance(engine, bool) or engine < 1:
        raise ManifestError(path, "'engine' must be a positive integer")
    if engine > ENGINE:
        raise ManifestError(path, f"needs engine {engine}; this tmux-agentstate reads engine "
                                  f"{ENGINE} (upgrade tmux-agentstate)")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ManifestError(path, f"unknown key(s) {sorted(unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name):
        raise ManifestError(path, "'name' must be a lowercase word")
    if path.suffix == ".toml" and name != path.stem:
        raise ManifestError(path, f"'name' is {name!r} but the file is {path.name}: they must agree")
    fallback = data.get("fallback", "idle")
    if fallback not in FALLBACKS:
        raise ManifestError(path, f"'fallback' must be one of {FALLBACKS}, not {fallback!r}")

    ident = data.get("identify", {})
    if not isinstance(ident, dict) or set(ident) - _IDENTIFY_KEYS:
        raise ManifestError(path, f"[identify] takes only {sorted(_IDENTIFY_KEYS)}")
    commands = ident.get("commands", [])
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        raise ManifestError(path, "identify.commands must be a list of strings")
    # re.M as in rules: '^' / '$' are a row's ends (the screen is its rows joined by newlines)
    identity = Identity(tuple(commands), *(_patterns(path, None, f"identify.{k}", ident.get(k, []), re.M)
                                           for k in ("cmdline", "title", "screen")))

    raw_rules = data.get("rules", [])
    if not isinstance(raw_rules, list):
        raise ManifestError(path, "'rules' must be a list of [[rules]] tables")
    if not raw_rules:
        # identity only: the agent reports its state itself; idle unless a report says else
        if engine < 4:
            raise ManifestError(path, "needs at least one [[rules]] entry (or, identity only "
                                      "for an agent that reports itself, 'engine = 4')")
        if not (identity.commands or identity.cmdline):
            raise ManifestError(path, "an identity-only manifest needs identify.commands or "
                                      "identify.cmdline (its process is all that tells it)")
        if fallback != "idle":
            raise ManifestError(path, "an identity-only manifest's fallback is 'idle'")
    seen: set[str] = set()
    rules = [_parse_rule(path, r, i, seen, engine=engine) for i, r in enumerate(raw_rules)]
    raw_marks = data.get("marks", [])
    if not isinstance(raw_marks, list):
        raise ManifestError(path, "'marks' must be a list of [[marks]] tables")
    if raw_marks and engine < 2:  # so an older engine refuses it by its engine, before its keys
        raise ManifestError(path, "[[marks]] need 'engine = 2' (or later)")
    marks = [_parse_rule(path, r, i, seen, mark=True) for i, r in enumerate(raw_marks)]

    answers = _answers(path, None, data.get("answers", {}), engine)
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) \
            or not 1 <= version <= MAX_VERSION:
        raise ManifestError(path, f"'version' must be an integer from 1 to {MAX_VERSION}")
    tested = data.get("tested", [])
    if not isinstance(tested, list) or not all(isinstance(v, str) for v in tested):
        raise ManifestError(path, "'tested' must be a list of version strings")
    return Manifest(name, str(path), str(data.get("display", name)), fallback, identity,
                    tuple(rules), tuple(marks), answers, _blocked_hint(rules), version,
                    tuple(tested), engine)


def _answers(path: Path, rule_id: str | None, value, engine: int) -> dict:
    """[answers] (rule_id None) or a blocked rule's `answers` (core/answers.py)."""
    def fail(reason: str) -> ManifestError:
        return ManifestError(path, reason, rule_id)
    return parse_answers(value, engine, rule_id is not None, fail,
                         lambda name, regex: _patterns(path, rule_id, name, regex)[0])


def _parse_rule(path: Path, r, i: int, seen: set[str], mark: bool = False,
                engine: int = 1) -> Rule:
    """One `[[rules]]` table (its `state`), or one `[[marks]]` table (its `mark`)."""
    table = "marks" if mark else "rules"
    rid = r.get("id") if isinstance(r, dict) else None
    if not isinstance(rid, str) or not rid:
        raise ManifestError(path, f"{table} #{i + 1} has no 'id'")
    if rid in seen:
        raise ManifestError(path, "duplicate rule id", rid)
    seen.add(rid)
    keys = _MARK_KEYS if mark else _RULE_KEYS
    if set(r) - keys:
        raise ManifestError(path, f"unknown key(s) {sorted(set(r) - keys)}", rid)
    if mark:
        state = r.get("mark")
        if not isinstance(state, str) or not MARK_NAME.fullmatch(state):
            raise ManifestError(path, f"'mark' must be a short lowercase word, not {state!r}", rid)
    else:
        state = r.get("state")
        if state not in STATES:
            raise ManifestError(path, f"'state' must be one of {STATES}, not {state!r}", rid)
    region = r.get("region", "screen")
    if region not in REGIONS:
        raise ManifestError(path, f"'region' must be one of {REGIONS}, not {region!r}", rid)
    if region == "paragraphs" and engine < 5:  # an older engine refuses it by its engine
        raise ManifestError(path, "region 'paragraphs' needs 'engine = 5' (or later)", rid)
    rows = r.get("rows", 0)
    if region in ("bottom", "top"):
        if not isinstance(rows, int) or isinstance(rows, bool) or rows < 1:
            raise ManifestError(path, f"region {region!r} needs 'rows' = a positive integer", rid)
    elif "rows" in r:
        raise ManifestError(path, "'rows' only applies to regions 'bottom' and 'top'", rid)
    answers = None
    if "answers" in r:
        if state != "blocked":
            raise ManifestError(path, "only a blocked rule takes 'answers'", rid)
        answers = _answers(path, rid, r["answers"], engine)
    guard = Guard(f"{path}: rule {rid!r}")
    if "not_below" in r and engine < 5:  # so an older engine refuses it by its engine
        raise ManifestError(path, "'not_below' needs 'engine = 5' (or later)", rid)
    rule = Rule(rid, state, region, rows, *(_patterns(path, rid, k, r.get(k, []), re.M, guard)
                                            for k in ("any", "all", "not")), guard=guard,
                answers=answers,
                not_below=_patterns(path, rid, "not_below", r.get("not_below", []), re.M, guard))
    if not rule.any and not rule.all:
        raise ManifestError(path, "needs 'any' or 'all' patterns", rid)
    return rule


def _blocked_hint(rules: list[Rule]) -> Hint | None:
    """The blocked rules' positive patterns. If none of them matches the rows that changed, no
    blocked rule can have started to match (bar a `not` row vanishing, which the sweep
    catches), so a busy pane needs no full classification between sweeps."""
    parts = [p for rule in rules if rule.state == "blocked" for p in rule.any + rule.all]
    return Hint(parts) if parts else None


MANIFEST_BYTES = 1 << 20  # a manifest is a few KB; a bigger file is no manifest


def load_manifest(path: Path | str) -> Manifest:
    """A manifest file; ManifestError for anything else: a FIFO or device (never opened for
    long: safe_read), a file too big, not UTF-8, or nested too deep for the TOML parser."""
    path = Path(path)
    try:
        path.stat()
    except OSError as e:
        raise ManifestError(path, e.strerror or str(e)) from None
    raw = read_head(str(path), MANIFEST_BYTES + 1)
    if raw is None:
        raise ManifestError(path, "not a regular file that can be read")
    if len(raw) > MANIFEST_BYTES:
        raise ManifestError(path, f"larger than {MANIFEST_BYTES >> 10} KB")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ManifestError(path, "invalid TOML: not UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(path, f"invalid TOML: {e}") from None
    except (RecursionError, MemoryError):
        raise ManifestError(path, "invalid TOML: nested too deeply") from None
    return parse_manifest(data, path)
