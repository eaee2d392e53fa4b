"""How the fake agent draws, as Claude Code does: rows placed with cursor moves (never a
`\\n`), finished output written once, the live part (spinner, input box, dialog) erased and
redrawn. A part of `FakeAgent` (fake_agent.py)."""
from __future__ import annotations

import os
import time

from .material import (BOXED, GLYPHS, OPTIONS, RESET, SGR, clip, clip_tail, pad, text_width,
                       words_at, wrap)


class Drawing:
    def _row(self, text: str, style: str | None) -> str:
        """Bytes that put `text` on the next row: CR, indent, down (or scroll), words by CSI G."""
        text = clip(text, max(1, self.cols - 1))
        out = []
        indent = len(text) - len(text.lstrip(" "))
        if self.fresh:
            self.fresh = False
            if indent:
                out.append(f"\x1b[{indent}C")
        else:
            out.append("\r")
            if indent:
                out.append(f"\x1b[{indent}C")
            if self.y < self.rows - 1:
                out.append("\x1b[1B")
                self.y += 1
            else:
                out.append("\x1b[1S")  # bottom row: scroll up one (the top row goes to history)
        words = words_at(text)
        if words:
            out.append(SGR.get(style, ""))
            for i, (col, word) in enumerate(words):
                out.append(word if i == 0 else f"\x1b[{col + 1}G{word}")
            if SGR.get(style):
                out.append(RESET)
        return "".join(out)

    def _erase(self) -> str:
        """Cursor-up to the first row of the live region + erase to the end of the screen."""
        if self.dyn_count <= 0:
            return ""
        up = min(self.dyn_count - 1, self.y)
        self.y -= up
        self.dyn_count = 0
        self.fresh = True
        return "\r" + (f"\x1b[{up}A" if up else "") + "\x1b[J"

    def _static_rows(self, text: str, style: str | None) -> list[str]:
        width = max(1, self.cols - 1)
        if style in BOXED or text_width(text) <= width:
            return [text]
        return wrap(text, width)

    def _live_rows(self) -> list[tuple[str, str | None, str | None]]:
        rows = self.dyn_builder() if self.dyn_builder else []
        limit = max(1, self.rows - 1)
        return rows[-limit:]

    def render(self, commit=(), builder=None, what="render", state=None) -> None:
        """Ink: erase the live region, write new static lines, draw the live region again."""
        out = [self._erase()]
        for text, style in commit:
            self.static.append((text, style))
            for r in self._static_rows(text, style):
                out.append(self._row(r, style))
        del self.static[:-1000]
        if builder is not None:
            self.dyn_builder = builder
        rows = self._live_rows()
        for text, style, _kind in rows:
            out.append(self._row(text, style))
        self.dyn_count = len(rows)
        self.emit("".join(out), what, state)

    def redraw_row(self, kind: str, what: str) -> None:
        """`\\r`-redraw one row of the live region in place (the spinner, the input line)."""
        rows = self._live_rows()
        idx = next((i for i, r in enumerate(rows) if r[2] == kind), None)
        if idx is None or len(rows) != self.dyn_count or self.fresh:
            self.render(what=what)
            return
        up = self.dyn_count - 1 - idx
        up = min(up, self.y)
        text, style, _ = rows[idx]
        saved_fresh, saved_y = self.fresh, self.y
        self.fresh = True  # write on the current row after the CR
        body = self._row(text, style)
        self.fresh, self.y = saved_fresh, saved_y
        out = (f"\x1b[{up}A" if up else "") + "\r\x1b[K" + body + (f"\x1b[{up}B" if up else "")
        self.emit(out, what)

    def full_redraw(self) -> None:
        """After a resize: clear, then the newest static rows and the live region at the new width."""
        self.y, self.fresh, self.dyn_count = 0, True, 0
        live = self._live_rows()
        room = max(0, self.rows - 1 - len(live))
        static_rows = []
        for text, style in self.static:
            static_rows += [(r, style) for r in self._static_rows(text, style)]
        out = ["\x1b[H\x1b[2J"]
        for text, style in static_rows[-room:] if room else []:
            out.append(self._row(text, style))
        for text, style, _ in live:
            out.append(self._row(text, style))
        self.dyn_count = len(live)
        self.emit("".join(out), "resize")

    # -- layouts (live regions) -----------------------------------------------------------------
    def box_width(self) -> int:
        return max(4, self.cols - 1)

    def rule(self, ch: str = "─") -> str:
        return ch * max(1, self.cols - 1)

    @property
    def bullet(self) -> str:
        return "⏺" if self.look == "classic" else "●"

    @property
    def prompt_mark(self) -> str:
        return ">" if self.look == "classic" else "❯"

    def input_box(self) -> list:
        if self.look == "classic":  # Claude Code 1.x: a bordered box, "? for shortcuts" always
            w = self.box_width()
            inner = max(1, w - 4)
            line = "> " + clip_tail(self.input, max(0, inner - 2))
            return [("╭" + "─" * (w - 2) + "╮", "box", None),
                    ("│ " + pad(line, inner) + " │", "box", "input"),
                    ("╰" + "─" * (w - 2) + "╯", "box", None),
                    ("  ? for shortcuts", "dim", None)]
        # Claude Code 2.1: rules above and below "❯ ", the footer says what esc does now
        footer = "esc to interrupt" if self.mode != "idle" else "? for shortcuts"
        line = "❯ " + clip_tail(self.input, max(0, self.cols - 4))
        return [(self.rule(), "box", None), (line, None, "input"), (self.rule(), "box", None),
                ("  ⏸ manual mode on · " + footer, "dim", None)]

    def spinner_text(self) -> str:
        glyph = GLYPHS[self.spin_frame % len(GLYPHS)]
        secs = int(max(0.0, time.monotonic() - self.spin_start))
        return f"{glyph} {self.verb}… ({secs}s · esc to interrupt)"

    def idle_layout(self) -> list:
        return self.input_box()

    def working_layout(self) -> list:
        rows = []
        width = max(1, self.cols - 1)
        if self.partial:
            para = wrap(f"{self.bullet} " + self.partial, width)
            rows += [(r, None, "partial" if i == len(para) - 1 else None) for i, r in enumerate(para)]
            rows.append(("", None, None))
        for text, style in self.tool_live:
            rows.append((text, style, None))
        if self.tool_live:
            rows.append(("", None, None))
        rows.append((self.spinner_text(), "accent", "spinner"))
        rows.append(("", None, None))
        return rows + self.input_box()

    def dialog_layout(self) -> list:
        a = self.ask
        body = [("Bash command", "bold"), ("", None)]
        if self.look == "classic":  # bordered, the command first, then its description
            w = self.box_width()
            inner = max(1, w - 4)
            body += [(r, None) for r in wrap("  " + a["cmd"], inner, "  ")]
            body += [(r, "dim") for r in wrap("  " + a["desc"], inner, "  ")]
            body += [("", None), ("Do you want to proceed?", None)]
            for i, opt in enumerate(OPTIONS):
                mark = "❯ " if i == a["sel"] else "  "
                body += [(r, None) for r in wrap(f"{mark}{i + 1}. {opt}", inner, "     ")]
            rows = [("╭" + "─" * (w - 2) + "╮", "blue", None)]
            rows += [("│ " + pad(text, inner) + " │", "blue", None) for text, _ in body]
            rows.append(("╰" + "─" * (w - 2) + "╯", "blue", None))
            rows.append(("   Esc to cancel · Tab to amend", "dim", None))
            return rows
        # 2.1: a rule on top, the command between dashed rules, no side borders
        width = max(1, self.cols - 2)
        rows = [(self.rule(), "blue", None), (" Bash command", "blue", None)]
        rows += [(" " + r, "dim", None) for r in wrap(a["desc"], width)]
        rows.append((self.rule("╌"), "dim", None))
        rows += [(" " + r, None, None) for r in wrap(a["cmd"], width)]
        rows.append((self.rule("╌"), "dim", None))
        rows.append((" Do you want to proceed?", None, None))
        for i, opt in enumerate(OPTIONS):
            mark = "❯ " if i == a["sel"] else "  "
            rows += [(" " + r, "blue" if i == a["sel"] else None, None)
                     for r in wrap(f"{mark}{i + 1}. {opt}", width, "     ")]
        rows.append((" Esc to cancel · Tab to amend", "dim", None))
        return rows

    def banner(self) -> list:
        cwd = os.getcwd()
        if self.look == "classic":
            w = min(53, self.box_width())
            rows = [("╭" + "─" * (w - 2) + "╮", "box")]
            for text in ("✻ Welcome to Claude Code!", "", "  /help for help, /status for your current setup",
                         "", "  cwd: " + clip_tail(cwd, max(1, w - 13))):
                rows.append(("│ " + pad(text, w - 4) + " │", "box"))
            return rows + [("╰" + "─" * (w - 2) + "╯", "box"), ("", None)]
        return [(" ▐▛███▛█   Claude Code v2.1.332 (fake agent)", "accent"),
                ("▝▜██████▀  tmux-agentstate demo · no model", "dim"),
                (" ▝▝   ▝▝   " + clip_tail(cwd, max(1, self.cols - 12)), "dim"), ("", None)]

    # -- turns ---------------------------------------------------------------------------------------
