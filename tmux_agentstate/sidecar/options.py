"""Reading the user's `@agentstate-*` options, each against what it takes. Pure.

A value that cannot be used is never dropped in silence: the reader collects an
`OptionProblem` (the option, its value, what it takes, what is used instead) for each; option
names nobody reads are named with the closest known one. The defaults and the names live in
config.py.
"""
from __future__ import annotations

import difflib
import math
import re
import shlex
from dataclasses import dataclass

FLAGS = {"on": True, "1": True, "yes": True, "true": True,
         "off": False, "0": False, "no": False, "false": False}
UNITS = {"seconds": 1.0, "hours": 3600.0}
PREFIX = "@agentstate-"  # the user's options (ours, published, are @agentstate_*)

# tmux's style syntax (man tmux, STYLES), so a typo in a style option is named, not drawn as
# nothing: bare words, `no` + an attribute, and `key=value`
_STYLE_ATTRIBUTES = {"none", "acs", "bright", "bold", "dim", "underscore", "blink", "reverse",
                     "hidden", "italics", "overline", "strikethrough", "double-underscore",
                     "curly-underscore", "dotted-underscore", "dashed-underscore"}
_STYLE_WORDS = _STYLE_ATTRIBUTES | {f"no{a}" for a in _STYLE_ATTRIBUTES} | {
    "default", "push-default", "pop-default", "nolist", "norange", "noalign", "ignore",
    "noignore"}
_STYLE_COLOUR_KEYS = {"fg", "bg", "us", "fill"}
_STYLE_OTHER_KEYS = {"list", "range", "align", "width"}
# a colour: default, terminal, colour0-255, #rrggbb, or a name (the 16 and X11's names)
_COLOUR = re.compile(r"colou?r(25[0-5]|2[0-4]\d|1?\d{1,2})|#[0-9a-f]{6}|(?!colou?r\d)[a-z][a-z0-9]*",
                     re.IGNORECASE)


def style_problem(style: str) -> str | None:
    """Why `style` is not a tmux style (None: it is)."""
    if any(ch in style for ch in "[]") or not style.isprintable():
        return "it may not hold [, ] or control characters"
    for item in filter(None, re.split(r"[ ,]+", style.strip())):
        key, eq, value = item.partition("=")
        if not eq:
            if item.lower() not in _STYLE_WORDS:  # `#` too: only a colour may hold it
                return f"{item!r} is no style attribute"
        elif key.lower() in _STYLE_COLOUR_KEYS:
            if not _COLOUR.fullmatch(value):
                return f"{value!r} is no colour"
        elif key.lower() not in _STYLE_OTHER_KEYS or "#" in value:
            return f"{key!r}= is no style key"
    return None


@dataclass(frozen=True)
class OptionProblem:
    """An `@agentstate-*` option the sidecar could not use as set."""
    option: str
    value: str
    takes: str     # what the option takes, in words ("": no such option)
    used: str      # what the sidecar uses instead (the default, or the nearest bound)
    closest: str = ""  # no such option: the known name closest to it

    @property
    def shown_value(self) -> str:  # the user's value, cut short (it may be anything)
        return repr(self.value if len(self.value) <= 40 else self.value[:39] + "…")

    def line(self) -> str:
        if not self.takes:
            return f"{self.option} is no tmux-agentstate option" + (
                f" (did you mean {self.closest}?)" if self.closest else "")
        return f"{self.option} {self.shown_value}: takes {self.takes}; using {self.used}"

    def fix(self) -> str:
        if not self.takes:
            return f"unset it (set -gu {self.option})" + (
                f" and set {self.closest}" if self.closest else "")
        return f"set {self.option} to {self.takes}, or unset it (set -gu {self.option})"

    def short(self) -> str:
        """The few words a message line has room for."""
        if not self.takes:
            return f"{self.option}? " + (f"(did you mean {self.closest}?)" if self.closest
                                         else "(no such option)")
        return f"{self.option} {self.shown_value} (using {self.used})"


def unknown_options(options: dict[str, str], known) -> list[OptionProblem]:
    """`@agentstate-*` options no part of tmux-agentstate reads, each with the closest known
    name (a typo such as @agentstate-intervall)."""
    out = []
    for name in sorted(options):
        if not name.startswith(PREFIX) or name in known:
            continue
        # the words after the prefix: the prefix all share would make anything look close
        tails = {k[len(PREFIX):]: k for k in known}
        close = difflib.get_close_matches(name[len(PREFIX):], sorted(tails), n=1, cutoff=0.6)
        out.append(OptionProblem(name, options[name], "", "ignored",
                                 tails[close[0]] if close else ""))
    return out


class OptionReader:
    """Reads options, each against what it takes, collecting what it cannot use."""

    def __init__(self, options: dict[str, str]):
        self.options = options
        self.problems: list[OptionProblem] = []

    def _bad(self, name: str, takes: str, used) -> None:
        self.problems.append(OptionProblem(name, self.options[name], takes, str(used)))

    def number(self, name: str, default: float, low: float, high: float | None,
               unit: str = "seconds") -> float:
        if name not in self.options:
            return default
        takes = (f"a number of {unit} from {low:g} to {high:g}" if high is not None
                 else f"a number of {unit}, at least {low:g}")
        try:
            value = float(self.options[name])
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            self._bad(name, takes, f"{default:g}")
            return default
        bounded = max(value, low) if high is None else min(max(value, low), high)
        if bounded != value:
            self._bad(name, takes, f"{bounded:g}")
        return bounded

    def choice(self, name: str, default: str, choices) -> str:
        value = self.options.get(name, default).strip().lower()
        if value in choices:
            return value
        self._bad(name, "one of " + ", ".join(choices), default)
        return default

    def flag(self, name: str, default: bool) -> bool:
        if name not in self.options:
            return default
        value = FLAGS.get(self.options[name].strip().lower())
        if value is None:
            self._bad(name, "on or off", "on" if default else "off")
            return default
        return value

    def command(self, name: str) -> str:
        value = self.options.get(name, "")
        try:
            shlex.split(value)
        except ValueError:
            self._bad(name, "a command line with balanced quotes", "none")
            return ""
        return value

    def words(self, name: str, default: list[str], check=None, takes: str = "") -> list[str]:
        """A value split like a shell (quotes kept together); `default` when unset or empty.
        `check(word)`: why a word cannot be used ("": it can); such a word is named and left
        out."""
        value = self.options.get(name, "")
        try:
            words = shlex.split(value)
        except ValueError:
            self._bad(name, "words split like a shell, with balanced quotes", " ".join(default))
            return list(default)
        for word in list(words):
            why = check(word) if check else ""
            if why:
                self._bad(name, f"{takes} ({why})", f"the others, without {word[:40]!r}")
                words.remove(word)
        return words or list(default)

    def style(self, name: str, default: str) -> str:
        value = self.options.get(name, default)
        why = style_problem(value)
        if why:
            self._bad(name, f"a tmux style such as {default!r} ({why})", repr(default))
            return default
        return value

    def period(self, name: str, named: dict[str, float], unit: str, default: str) -> float:
        """A period in seconds: one of `named` (`default` when unset), or a number of `unit`
        (hours), at least one."""
        value = self.options.get(name, default).strip().lower()
        if value in named:
            return named[value]
        takes = f"{', '.join(named)} or a number of {unit} (at least 1)"
        try:
            count = float(value)
        except ValueError:
            count = math.nan
        if not math.isfinite(count) or count <= 0:
            self._bad(name, takes, default)
            return named[default]
        if count < 1:
            self._bad(name, takes, f"1 {unit.rstrip('s')}")
        return max(count, 1.0) * UNITS[unit]
