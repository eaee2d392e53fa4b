"""Desktop notifications through the user's own terminal, over SSH too: an OSC sequence written
to a client's terminal (its tty; over SSH that is the ssh session's, which carries it to the
desktop the user sits at, where `notify-send` on this machine would never arrive).

`@agentstate-notify-terminal` picks the sequence: `osc9` (iTerm2, WezTerm, Ghostty, Windows
Terminal), `osc777` (foot, urxvt, Ghostty, WezTerm), `osc99` (kitty), `off`, or `auto` (the
default): per client, from what tmux knows of its terminal, its TERM and its answer to
XTVERSION (`client_termname`, `client_termtype`); a terminal it cannot tell gets nothing,
since an unknown OSC is noise at best. A client whose terminal is itself a tmux (tmux in tmux,
often the remote one over SSH) gets the sequence wrapped in tmux's passthrough
(`ESC P tmux; … ESC \\`), which the outer tmux hands on to its terminal when its
`allow-passthrough` is on; `auto` cannot see past it, so that takes an explicit kind.

Pure: bytes in, bytes out. Title and body come from pane text, so every control character is
dropped and each field is cut short: nothing in them can end the sequence early or start
another.
"""
from __future__ import annotations

import itertools

KINDS = ("off", "auto", "osc9", "osc777", "osc99")
FIELD_MAX = 160
# what a terminal says it is (XTVERSION) or its TERM, lowercased → the sequence it shows
AUTO = (("kitty", "osc99"), ("iterm2", "osc9"), ("wezterm", "osc9"), ("ghostty", "osc9"),
        ("foot", "osc777"), ("rxvt", "osc777"))
NESTED = ("tmux", "screen")  # a terminal that is another multiplexer: passthrough
_ids = itertools.count(1)
BOX = " " + "".join(chr(c) for c in range(0x2500, 0x2580))  # a dialog's borders around its line


def clean(text: str, limit: int = FIELD_MAX) -> str:
    """One line of printable text: C0, DEL and C1 controls (ESC, BEL, the 8-bit ST…) gone, and
    the box borders a dialog draws around its line."""
    kept = "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(kept.split()).strip(BOX)[:limit].strip()


def choose(setting: str, termname: str, termtype: str) -> tuple[str | None, bool]:
    """(the sequence kind for this client or None, whether to wrap it for a nested tmux)."""
    setting = setting.strip().lower()
    if setting not in KINDS or setting == "off":
        return None, False
    name, kind_of_terminal = termname.lower(), termtype.lower()
    nested = name.startswith(NESTED) or kind_of_terminal.startswith(NESTED)
    if setting != "auto":
        return setting, nested
    if nested:
        return None, False
    for needle, kind in AUTO:
        if needle in kind_of_terminal or needle in name:
            return kind, False
    return None, False


def sequence(kind: str, title: str, body: str) -> bytes:
    """The notification as the terminal reads it."""
    title, body = clean(title), clean(body)
    if kind == "osc9":  # one text; "9;4;…" and other digit-led texts are ConEmu's other uses
        text = f"{title}: {body}" if body else title
        if text[:1].isdigit():
            text = "agent " + text
        return f"\x1b]9;{text}\x07".encode()
    if kind == "osc777":  # `;` separates the fields
        return f"\x1b]777;notify;{title.replace(';', ',')};{body}\x07".encode()
    if kind == "osc99":  # kitty: the title (d=0: more follows), then the body, under one id
        ident = f"agentstate-{next(_ids)}"
        out = f"\x1b]99;i={ident}:d=0:p=title;{title}\x1b\\"
        if body:
            out += f"\x1b]99;i={ident}:d=1:p=body;{body}\x1b\\"
        else:
            out = out.replace(":d=0:", ":d=1:")
        return out.encode()
    raise ValueError(f"unknown notification kind {kind!r}")


def passthrough(seq: bytes) -> bytes:
    """For a terminal that is a tmux: its passthrough, every ESC inside doubled."""
    return b"\x1bPtmux;" + seq.replace(b"\x1b", b"\x1b\x1b") + b"\x1b\\"


def for_client(setting: str, termname: str, termtype: str, title: str, body: str) -> bytes:
    """The bytes to write to one client's terminal (b"" for none)."""
    kind, nested = choose(setting, termname, termtype)
    if kind is None:
        return b""
    seq = sequence(kind, title, body)
    return passthrough(seq) if nested else seq
