#!/usr/bin/env python3
"""harness/mock_openai.py plus a question-tool scenario for chat completions (used for pi).

    python harness/mock_pi.py [PORT] [--log FILE] [--slow-seconds S] [--delay-seconds S]

Everything is served by mock_openai (same scenarios, same log format), except: when the last
user message asks for a choice ("ask me", "which option", "choose between", "let me choose")
and the request offers a tool named `question` (pi's bundled examples/extensions/question.ts)
or `questionnaire`, the reply is a streamed tool call to it (options as objects, or as plain
labels when the tool's schema says `options: string[]`, as older pi releases' question tool). mock_openai's chat path has no
question scenario and is owned by someone else, so this module wraps it instead of editing it.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mock_openai as base  # noqa: E402

QUESTION = "Which approach should I take for this change?"
OPTIONS = [{"label": "Minimal fix", "description": "Touch only the failing code path."},
           {"label": "Refactor module", "description": "Restructure the module while fixing it."}]


def question_call(tools: list) -> tuple[str, dict] | None:
    t = base.find_tool(tools, "question", "questionnaire", "ask_user")
    if t is None:
        return None
    name = t["function"]["name"] if "function" in t else t.get("name")
    props = base.tool_params(t)
    if "questions" in props:
        return name, {"questions": [{"id": "approach", "label": "Approach", "prompt": QUESTION,
                                     "question": QUESTION, "options": [
                                         {"value": o["label"].lower().replace(" ", "-"), **o}
                                         for o in OPTIONS]}]}
    if ((props.get("options") or {}).get("items") or {}).get("type") == "string":
        # pi 0.27.9's examples/custom-tools/question: `options: string[]` (pi.ui.select)
        return name, {"question": QUESTION, "options": [o["label"] for o in OPTIONS]}
    return name, {"question": QUESTION, "options": OPTIONS}


def serve_question(h, body: dict, rid: int, call: tuple[str, dict]) -> None:
    base.log({"id": rid, "scenario": {"kind": "ask"}, "tool_call": call})
    model, cid, created = body.get("model", "mock"), f"chatcmpl-mock-{rid}", int(time.time())
    sse = base.Sse(h)
    sse.start()

    def chunk(delta: dict, finish=None) -> bool:
        return sse.event(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                                "model": model, "choices": [{"index": 0, "delta": delta,
                                                             "finish_reason": finish}]})

    ok = chunk({"role": "assistant", "content": ""}) and chunk({"content": "Before I start, one choice."})
    args = json.dumps(call[1])
    ok = ok and chunk({"tool_calls": [{"index": 0, "id": f"call_mock_{rid}", "type": "function",
                                       "function": {"name": call[0], "arguments": ""}}]})
    for i in range(0, len(args), 40):
        ok = ok and chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + 40]}}]})
    ok = ok and chunk({}, "tool_calls")
    if ok:
        sse.raw("data: [DONE]\n\n")
    base.log({"id": rid, "done": ok, "client_gone": sse.gone})


class Handler(base.Handler):
    server_version = "mock-pi/1"

    def do_POST(self):
        if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            return super().do_POST()
        rid = next(base.COUNTER)
        body = self._body()
        base.log({"id": rid, "method": "POST", "path": self.path, "headers": self._headers(),
                  "body": body})
        self.close_connection = True
        text, tool_result, _ = base.chat_last_user(body)
        sc = base.choose(text, tool_result)
        call = question_call(body.get("tools") or []) if sc["kind"] == "ask" else None
        try:
            if call:
                serve_question(self, body, rid, call)
            else:
                base.serve_chat(self, body, rid)
        except (BrokenPipeError, ConnectionResetError):
            base.log({"id": rid, "client_gone": True})


def main(argv: list[str] | None = None) -> None:
    base.Handler = Handler          # base.main() builds its server from base.Handler
    base.main(argv)


if __name__ == "__main__":
    main()
