"""What the fake agent does, turn by turn: tasks, streamed replies, silent tools, permission
dialogs, and the autopilot user who answers them. A part of `FakeAgent` (fake_agent.py)."""
from __future__ import annotations

import time

from .material import ASK_TOOLS, QUESTIONS, SENTENCES, SILENT_TOOLS, TASKS, VERBS, wrap


class Script:
    def start_task(self, prompt: str) -> None:
        self.tasks_started += 1
        self.input = ""
        self.mode = "task"
        self.verb = self.rng.choice(VERBS)
        self.spin_start = time.monotonic()
        self.spin_frame = 0
        self.partial, self.tool_live = "", []
        self.render([(f"{self.prompt_mark} " + prompt, "user"), ("", None)], self.working_layout,
                    "task", "working")
        self.task = self.task_body()
        self.spinning = True
        self.spin_next = time.monotonic() + self.spin_interval
        self.advance()

    def plan(self) -> list[str]:
        rng = self.rng
        steps = ["think"]
        for _ in range(rng.randint(1, 4)):
            steps.append(rng.choice(["think", "say", "tool", "tool", "ask"]))
        if "ask" not in steps and rng.random() < 0.35:
            steps.insert(rng.randint(1, len(steps)), "ask")
        return steps

    def task_body(self):
        """The script of one turn. Yields ('sleep', s, spin) or ('ask',); gets answers back."""
        rng = self.rng
        for step in self.plan():
            if step == "think":
                yield ("sleep", rng.uniform(1.0, 5.0), True)
            elif step == "say":
                text = " ".join(rng.sample(SENTENCES, rng.randint(1, 3)))
                yield from self.stream(text)
                self.partial = ""
                self.render([(f"{self.bullet} " + text, None), ("", None)], self.working_layout, "say")
            elif step == "tool":
                name, arg, result = rng.choice(SILENT_TOOLS)
                yield from self.silent_tool(f"{name}({arg})", result)
            elif step == "ask":
                cmd, desc, result = rng.choice(ASK_TOOLS)
                self.ask = {"cmd": cmd, "desc": desc, "sel": 0}
                answer = yield ("ask",)
                self.ask = None
                if answer == "no":
                    self.end_turn([(f"{self.bullet} Bash({cmd})", None),
                                   ("  ⎿  Interrupted by user", "err"), ("", None)])
                    return
                yield from self.silent_tool(f"Bash({cmd})", result)
        text = " ".join(rng.sample(SENTENCES, rng.randint(1, 3)))
        if rng.random() < 0.45:
            text += " " + rng.choice(QUESTIONS)
        yield from self.stream(text)
        self.partial = ""
        self.end_turn([(f"{self.bullet} " + text, None), ("", None)])

    def stream(self, text: str):
        words = text.split()
        i = 0
        while i < len(words):
            n = self.rng.randint(1, 3)
            before = len(wrap(f"{self.bullet} " + self.partial, max(1, self.cols - 1))) if self.partial else 0
            self.partial = " ".join(words[: i + n])
            i += n
            if before and len(wrap(f"{self.bullet} " + self.partial, max(1, self.cols - 1))) == before:
                self.redraw_row("partial", "stream")  # same rows: rewrite the last one in place
            else:
                self.render(what="stream")
            yield ("sleep", self.rng.uniform(0.04, 0.15), True)

    def silent_tool(self, call: str, result: str):
        """A tool that prints nothing while it runs: the last frame stays on screen, frozen."""
        self.tool_live = [(f"{self.bullet} " + call, None), ("  ⎿  Running…", "dim")]
        self.render(builder=self.working_layout, what="tool", state="working")
        yield ("sleep", self.rng.uniform(0.5, 6.0), False)
        self.tool_live = []
        self.render([(f"{self.bullet} " + call, None), ("  ⎿  " + result, "dim"), ("", None)],
                    self.working_layout, "tool-done")

    def end_turn(self, commit) -> None:
        self.task = None
        self.mode = "idle"
        self.spinning = False
        self.wake = None
        self.partial, self.tool_live = "", []
        self.render(commit, self.idle_layout, "idle", "idle")
        self.schedule_next_task()

    def advance(self, value=None) -> None:
        """Run the task script to its next wait."""
        gen = self.task
        if gen is None:
            return
        try:
            cmd = gen.send(value)
        except StopIteration:
            if self.task is gen:  # the script ended without ending the turn
                self.end_turn([])
            return
        if self.task is not gen:
            return
        if cmd[0] == "sleep":
            self.wake = time.monotonic() + self.d(cmd[1])
            was, self.spinning = self.spinning, bool(cmd[2])
            if self.spinning and not was:
                self.spin_next = time.monotonic() + self.spin_interval
        elif cmd[0] == "ask":
            self.mode = "ask"
            self.wake = None
            self.spinning = False
            self.render(builder=self.dialog_layout, what="ask", state="blocked")
            if self.autopilot:
                self.ap_at = time.monotonic() + self.d(self.user_rng.uniform(3.0, 8.0))

    def answer(self, choice: str) -> None:
        if self.mode != "ask":
            return
        self.mode = "task"
        self.ap_at = None
        self.spinning = True
        self.spin_next = time.monotonic() + self.spin_interval
        self.advance(choice)

    def interrupt(self) -> None:
        gen, self.task = self.task, None
        commit = []
        if self.partial:
            commit.append((f"{self.bullet} " + self.partial, None))
        commit += [("  ⎿  Interrupted by user", "err"), ("", None)]
        if gen is not None:
            gen.close()
        self.ask = None
        self.end_turn(commit)

    # -- autopilot --------------------------------------------------------------------------------
    def schedule_next_task(self, first: bool = False) -> None:
        if not self.autopilot:
            return
        delay = self.user_rng.uniform(1.0, 2.0) if first else self.user_rng.uniform(3.0, 10.0)
        self.ap_at = time.monotonic() + self.d(delay)
        self.ap_typing = None

    def autopilot_step(self, now: float) -> None:
        if self.ap_at is None or now < self.ap_at:
            return
        self.ap_at = None
        rng = self.user_rng
        if self.mode == "ask":
            r = rng.random()
            self.answer("no" if r < 0.15 else "always" if r < 0.3 else "yes")
        elif self.mode == "idle":
            if self.ap_typing is None:
                if self.max_tasks and self.tasks_started >= self.max_tasks:
                    self.quit = True
                    return
                self.ap_typing = rng.choice(TASKS)
                self.input = ""
            if len(self.input) < len(self.ap_typing):
                self.input = self.ap_typing[: len(self.input) + 1]
                self.redraw_row("input", "type")
                last = len(self.input) == len(self.ap_typing)
                self.ap_at = now + self.d(rng.uniform(0.25, 0.5) if last else rng.uniform(0.03, 0.12))
            else:
                task, self.ap_typing = self.input, None
                self.start_task(task)

    # -- keys -----------------------------------------------------------------------------------------
