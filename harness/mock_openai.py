#!/usr/bin/env python3
"""A scripted mock of the OpenAI API for driving real agent CLIs offline.

    python harness/mock_openai.py [PORT] [--log FILE] [--slow-seconds S] [--delay-seconds S]

PORT 0 (the default) picks a free port; the server prints `PORT <n>` on stdout once it listens
on 127.0.0.1. Endpoints:

- `POST /v1/responses`           Responses API, SSE (what Codex uses with `wire_api = "responses"`)
- `POST /v1/chat/completions`    Chat Completions, streaming SSE or plain JSON, with tool calls
                                 (for Aider / pi / opencode / Qwen)
- `GET  /v1/models`              a small model list (OpenAI shape, plus Codex's `models` shape)

Every request is logged as one JSON line (`--log`, default stderr): method, path, headers of
interest, the parsed body, and which scenario the mock chose.

Replies are scripted by keywords in the LAST user message (case-insensitive), first match wins:

| trigger                                   | reply                                                     |
|-------------------------------------------|-----------------------------------------------------------|
| the last input is a tool result           | a short final text that mentions the tool output          |
| a command in backticks, e.g. `ls -la`     | a shell tool call running that command; escalated         |
|                                           | (`sandbox_permissions: "require_escalated"` + a           |
|                                           | justification) unless the message says "sandbox"          |
| look at|which file|where is + a file name | a short reply naming that file (Aider then offers to add  |
|                                           | it to the chat)                                           |
| create|edit|patch|write|add + a file name | an `apply_patch` edit adding that file                    |
| think|ponder|take your time|deliberate    | a delay (--delay-seconds, 40) before the first token      |
| line by line                              | the same slow stream, one sentence per paragraph (older   |
|                                           | Codex releases show a reply only a whole line at a time)  |
| slowly|in detail|essay|walk me through    | a slow stream: many small deltas over --slow-seconds (25) |
| ask me|which option|choose between       | a `request_user_input` question tool call (Codex: Plan    |
|                                           | mode only; opencode: its `question` tool)                 |
| mcp tool                                  | a call of the first MCP tool offered (`mcp__<server>__…`) |
| bug|fix|regression|off-by-one            | a short reply ending "Would you like me to add a          |
|                                           | regression test?"                                         |
| anything else                             | a short one-line reply                                    |

`CONTEXTUSED n` anywhere in the message: the reply's usage says n input tokens (Responses
API), so a test knows the context figure the CLI writes in its rollout.

Aider appends its edit-format rules ("# *SEARCH/REPLACE block* Rules: …") to the last user
message; they are cut off before choosing (they contain backticks and file names).

Side calls (a request with no user message, title / summary generation, compaction, Aider's
commit-message request) get a short plain reply so nothing hangs.

Tools are found by their names in each CLI (Factory Droid's are capitalised: Execute, Create,
AskUser, whose `questionnaire` is one plain-text form; its Execute also requires a summary and a
risk level, filled in here). Letta Code's (Bash, Write, AskUserQuestion, offered with its own
`memory` tool) get a block of their own, `letta_tool_call`. Kimi CLI's are Shell, WriteFile and
AskUserQuestion, by exact name (after every other CLI's names).

Turns that end in an error (the block "turns that end in an error" below): an UPPER-CASE keyword
in the last user message of a Responses request that offers tools makes every such call fail
(the CLI's own retries fail too): RATELIMITED (429 rate_limit_exceeded), NOQUOTA (429
insufficient_quota), USAGELIMIT (429 usage_limit_reached), SATURATED (503
server_is_overloaded), BADKEY (401 invalid_api_key).
"""
from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG_LOCK = threading.Lock()
LOG_FILE = sys.stderr
COUNTER = itertools.count(1)
SLOW_SECONDS = 25.0
DELAY_SECONDS = 40.0

SLOW_TEXT = (
    "Here is a careful walk-through. First, the program reads its configuration and builds "
    "the list of inputs it has to handle. Second, each input is parsed into a small record, "
    "and records that fail validation are reported with their line numbers instead of being "
    "dropped silently. Third, the valid records are grouped by key so that related entries "
    "are processed together, which keeps the memory footprint predictable. Fourth, every "
    "group is written out in a stable order, so two runs over the same data produce the same "
    "bytes. Finally, a short summary lists how many records were read, skipped and written, "
    "which makes regressions easy to spot when the input changes."
)
# SLOW_TEXT one sentence per paragraph: Codex 0.153.4 and older draw streamed text only once a
# line is complete, so a one-paragraph reply shows nothing until it ends
SLOW_LINES_TEXT = re.sub(r"(?<=\.) (?=[A-Z])", "\n\n", SLOW_TEXT)
QUESTION_TEXT = (
    "I found the problem: the loop stops one element early because the upper bound is "
    "exclusive twice. Changing `range(n - 1)` to `range(n)` fixes it, and the existing tests "
    "still pass.\n\nWould you like me to add a regression test?"
)
FILE_RE = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.[A-Za-z0-9]{1,6})(?![\w.])")
# an absolute file path in the prompt (Qwen Code's write_file wants one); only the patch scenario
ABS_FILE_RE = re.compile(r"(?<![\w/.-])(/(?:[\w.-]+/)+[\w-]+\.[A-Za-z0-9]{1,6})(?![\w.])")


def log(entry: dict) -> None:
    entry = {"t": round(time.time(), 3), **entry}
    with LOG_LOCK:
        LOG_FILE.write(json.dumps(entry, ensure_ascii=False) + "\n")
        LOG_FILE.flush()


# ----------------------------------------------------------------------------------------------
# scenario choice (shared by both wire formats)

def choose(text: str, tool_result: bool) -> dict:
    """Pick a scenario from the last user message text."""
    low = text.lower()
    if tool_result:
        return {"kind": "after_tool"}
    m = re.search(r"`([^`]+)`", text)
    if m:
        return {"kind": "command", "command": m.group(1).strip(),
                "escalate": "sandbox" not in low}
    if re.search(r"\bmcp tool\b", low):
        return {"kind": "mcp"}
    if re.search(r"\b(ask me|which option|choose between|let me choose)\b", low):
        return {"kind": "ask"}
    if re.search(r"\b(look at|which file|where is)\b", low):
        fm = FILE_RE.search(text)
        if fm:
            return {"kind": "mention", "file": fm.group(1)}
    if re.search(r"\b(create|edit|patch|write|add)\b", low):
        fm = ABS_FILE_RE.search(text) or FILE_RE.search(text)
        if fm:
            return {"kind": "patch", "file": fm.group(1)}
    if re.search(r"\b(think|ponder|take your time|deliberate)\b", low):
        return {"kind": "delay"}
    if re.search(r"\bline by line\b", low):
        return {"kind": "slow_lines"}
    if re.search(r"\b(slowly|in detail|essay|walk me through)\b", low):
        return {"kind": "slow"}
    if re.search(r"\b(bug|fix|regression|off-by-one)\b", low):
        return {"kind": "question"}
    if not text.strip():
        return {"kind": "side"}
    return {"kind": "short"}


def final_text(sc: dict, tool_output: str = "") -> str:
    kind = sc["kind"]
    if kind == "after_tool":
        out = " ".join(tool_output.split())[:120]
        return f"Done. The tool finished; its output was: {out or '(empty)'}"
    if kind == "question":
        return QUESTION_TEXT
    if kind == "slow":
        return SLOW_TEXT
    if kind == "slow_lines":
        return SLOW_LINES_TEXT
    if kind == "delay":
        return "After thinking it over: the approach is sound, no changes needed."
    if kind == "side":
        return "Mock session"
    if kind == "mention":
        return f"The code you mean lives in {sc['file']}. I need to see that file before I change it."
    return "Noted. Nothing else to do here."


def title_for(text: str) -> str:
    """A short title from the prompt, like a model would make (the thread-title side call)."""
    # the prompt after opencode's "User prompt:" or Kilo's "User messages, oldest to newest:"
    words = re.findall(r"[A-Za-z][\w'-]*", re.split(r"User prompt:|User messages[^:\n]*:", text)[-1])[:4]
    return (" ".join(words) or "Mock task").capitalize()[:36]


def schema_reply(schema: dict, text: str) -> dict:
    """Fill a JSON-schema'd side call (Codex asks for {"title": ...} to name the thread)."""
    out = {}
    for k, v in (schema.get("properties") or {}).items():
        t = v.get("type")
        out[k] = (title_for(text) if t == "string" else 0 if t in ("number", "integer")
                  else False if t == "boolean" else [] if t == "array" else {})
    return out


def chunks(text: str, n: int) -> list[str]:
    """Split text into about n pieces on word boundaries."""
    words = re.findall(r"\S+\s*", text)
    per = max(1, len(words) // max(1, n))
    return ["".join(words[i:i + per]) for i in range(0, len(words), per)]


def patch_for(path: str) -> str:
    return ("*** Begin Patch\n"
            f"*** Add File: {path}\n"
            "+# Generated by the mock model\n"
            "+def answer():\n"
            "+    return 42\n"
            "*** End Patch\n")


# ----------------------------------------------------------------------------------------------
# Responses API helpers

def responses_last_user(body: dict) -> tuple[str, bool, str]:
    """(last user text, last input item is a tool result, that tool output)."""
    items = body.get("input")
    if isinstance(items, str):
        return items, False, ""
    items = items or []
    last_user = ""
    for it in items:
        if it.get("type", "message") == "message" and it.get("role") == "user":
            content = it.get("content")
            if isinstance(content, str):
                last_user = content
            else:
                last_user = "".join(c.get("text", "") for c in content or []
                                    if c.get("type") in ("input_text", "text"))
    if items and items[-1].get("type") in ("function_call_output", "custom_tool_call_output",
                                           "local_shell_call_output"):
        out = items[-1].get("output")
        if isinstance(out, dict):
            out = out.get("content") or json.dumps(out)
        elif isinstance(out, list):
            out = " ".join(o.get("text", "") for o in out if isinstance(o, dict))
        return last_user, True, str(out or "")
    return last_user, False, ""


def find_tool(tools: list, *names: str, pattern: str | None = None) -> dict | None:
    by = {}
    for t in tools or []:
        name = t.get("name") or (t.get("function") or {}).get("name")
        if name:
            by[name] = t
    for n in names:
        if n in by:
            return by[n]
    if pattern:
        for n, t in by.items():
            if re.search(pattern, n):
                return t
    return None


def mcp_tool(tools: list, prompt: str) -> tuple[str | None, dict] | None:
    """(namespace, tool) of the MCP tool the prompt names (else the first one): Codex offers an
    MCP server's tools as a `namespace` tool `mcp__<server>` holding function tools."""
    found = []
    for t in tools or []:
        name = t.get("name") or ""
        if t.get("type") == "namespace" and name.startswith("mcp__"):
            found += [(name, f) for f in t.get("tools") or []]
        elif name.startswith("mcp__"):
            found.append((None, t))
    named = [x for x in found if x[1].get("name") and x[1]["name"] in prompt]
    return (named or found or [None])[0]


def tool_params(tool: dict) -> dict:
    params = tool.get("parameters") or (tool.get("function") or {}).get("parameters") or {}
    return params.get("properties") or {}


def tool_required(tool: dict) -> list:
    params = tool.get("parameters") or (tool.get("function") or {}).get("parameters") or {}
    return params.get("required") or []


def command_args(tool: dict, command: str, escalate: bool) -> dict:
    props = tool_params(tool)
    args: dict = {}
    if "cmd" in props:
        args["cmd"] = command
    elif (props.get("command") or {}).get("type") == "array":
        args["command"] = ["bash", "-lc", command]
    elif (props.get("commands") or {}).get("type") == "array":   # Cline's run_commands
        args["commands"] = [command]
    else:
        args["command"] = command
    if "workdir" in props:
        pass  # default: the session cwd
    if escalate and "with_escalated_permissions" in props:
        # older Codex releases (e.g. 0.64.0): the `shell` tool's boolean escalation flag
        args["with_escalated_permissions"] = True
        args["justification"] = f"Running `{command}` needs to write outside the read-only sandbox."
    elif escalate and ("sandbox_permissions" in props or not props):
        args["sandbox_permissions"] = "require_escalated"
        args["justification"] = f"Running `{command}` needs to write outside the read-only sandbox."
    if "description" in props:
        args["description"] = f"Run {command}"
    if {"summary", "riskLevel"} <= set(props):
        # Factory Droid's Execute: a 3-8 word sentence-case summary and a declared risk level
        args["summary"] = "Run the requested shell command"
        args["riskLevel"] = "medium"
        args["riskLevelReason"] = "This command runs in the project folder and may change files there."
    if "is_background" in tool_required(tool):
        # older Qwen Code releases (e.g. 0.1.4): run_shell_command requires `is_background`
        # (else "params must have required property 'is_background'"); only when required
        args["is_background"] = False
    return args


class Sse:
    """Write SSE events to a handler; swallow a client that went away."""

    def __init__(self, handler: BaseHTTPRequestHandler):
        self.h = handler
        self.gone = False

    def start(self) -> None:
        self.h.send_response(200)
        self.h.send_header("Content-Type", "text/event-stream")
        self.h.send_header("Cache-Control", "no-cache")
        self.h.send_header("Connection", "close")
        self.h.end_headers()

    def raw(self, data: str) -> bool:
        if self.gone:
            return False
        try:
            self.h.wfile.write(data.encode())
            self.h.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.gone = True
            return False

    def event(self, name: str | None, obj) -> bool:
        payload = obj if isinstance(obj, str) else json.dumps(obj)
        return self.raw((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")


def usage(prompt: str = "") -> dict:
    """The reply's token usage: 1200 in, 80 out; `CONTEXTUSED n` in the prompt makes it n in
    (a test then knows the context figure the CLI writes)."""
    m = re.search(r"CONTEXTUSED[ \t]+(\d+)", prompt)
    used = int(m.group(1)) if m else 1200
    return {"input_tokens": used, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 80, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": used + 80}


def serve_responses(h: BaseHTTPRequestHandler, body: dict, rid: int) -> None:
    text, tool_result, tool_out = responses_last_user(body)
    sc = choose(text, tool_result)
    tools = body.get("tools") or []
    # A side call (title, summary...) carries no tools or different instructions: keep it short.
    if not tools and sc["kind"] not in ("after_tool",):
        sc = {"kind": "side", "was": sc["kind"]}
    log({"id": rid, "scenario": sc, "last_user": text[-300:]})
    resp_id = f"resp_mock_{rid}"
    model = body.get("model", "mock")
    sse = Sse(h)
    sse.start()
    base = {"id": resp_id, "object": "response", "created_at": int(time.time()), "model": model,
            "status": "in_progress", "output": []}
    seq = itertools.count(0)

    def ev(name: str, **fields) -> bool:
        return sse.event(name, {"type": name, "sequence_number": next(seq), **fields})

    ev("response.created", response=base)
    ev("response.in_progress", response=base)
    output: list[dict] = []

    def text_item(text: str, pieces: int, pause: float, first_delay: float = 0.0) -> bool:
        idx = len(output)
        mid = f"msg_mock_{rid}_{idx}"
        item = {"type": "message", "id": mid, "role": "assistant", "status": "in_progress",
                "content": []}
        if first_delay:
            end = time.time() + first_delay
            while time.time() < end:  # notice a client that went away (Esc) early
                time.sleep(0.25)
                if not sse.raw(": keep-alive\n\n"):
                    return False
        ev("response.output_item.added", output_index=idx, item=item)
        ev("response.content_part.added", item_id=mid, output_index=idx, content_index=0,
           part={"type": "output_text", "text": "", "annotations": []})
        for piece in chunks(text, pieces):
            if not ev("response.output_text.delta", item_id=mid, output_index=idx,
                      content_index=0, delta=piece):
                return False
            if pause:
                time.sleep(pause)
        part = {"type": "output_text", "text": text, "annotations": []}
        ev("response.output_text.done", item_id=mid, output_index=idx, content_index=0, text=text)
        ev("response.content_part.done", item_id=mid, output_index=idx, content_index=0, part=part)
        done = {**item, "status": "completed", "content": [part]}
        output.append(done)
        return ev("response.output_item.done", output_index=idx, item=done)

    ok = True
    kind = sc["kind"]
    if kind == "command":
        tool = find_tool(tools, "exec_command", "shell", "shell_command", "local_shell",
                         pattern=r"shell|exec|command|bash")
        if tool is None:
            ok = text_item("No shell tool is available.", 1, 0)
        else:
            name = tool.get("name") or tool["function"]["name"]
            args = command_args(tool, sc["command"], sc["escalate"])
            ok = text_item(f"I'll run `{sc['command']}`.", 3, 0.05)
            idx = len(output)
            item = {"type": "function_call", "id": f"fc_mock_{rid}", "call_id": f"call_mock_{rid}",
                    "name": name, "arguments": json.dumps(args), "status": "completed"}
            ev("response.output_item.added", output_index=idx, item={**item, "arguments": "",
                                                                       "status": "in_progress"})
            ev("response.function_call_arguments.done", item_id=item["id"], output_index=idx,
               arguments=item["arguments"])
            output.append(item)
            ok = ev("response.output_item.done", output_index=idx, item=item)
    elif kind == "patch":
        tool = find_tool(tools, "apply_patch", pattern=r"patch|edit")
        patch = patch_for(sc["file"])
        ok = text_item(f"I'll create `{sc['file']}`.", 3, 0.05)
        idx = len(output)
        if tool is not None and tool.get("type") == "custom":
            item = {"type": "custom_tool_call", "id": f"ctc_mock_{rid}", "call_id": f"call_mock_{rid}",
                    "name": tool["name"], "input": patch, "status": "completed"}
        elif tool is not None:
            item = {"type": "function_call", "id": f"fc_mock_{rid}", "call_id": f"call_mock_{rid}",
                    "name": tool.get("name") or tool["function"]["name"],
                    "arguments": json.dumps({"input": patch}), "status": "completed"}
        else:  # no apply_patch tool offered: go through the shell tool
            sh = find_tool(tools, "exec_command", "shell", pattern=r"shell|exec")
            cmd = "apply_patch <<'EOF'\n" + patch + "EOF\n"
            item = {"type": "function_call", "id": f"fc_mock_{rid}", "call_id": f"call_mock_{rid}",
                    "name": (sh or {}).get("name", "shell"),
                    "arguments": json.dumps(command_args(sh or {}, cmd, False)), "status": "completed"}
        ev("response.output_item.added", output_index=idx, item=item)
        output.append(item)
        ok = ev("response.output_item.done", output_index=idx, item=item)
    elif kind == "ask" and find_tool(tools, "request_user_input", pattern=r"user_input|question"):
        tool = find_tool(tools, "request_user_input", pattern=r"user_input|question")
        args = {"questions": [{
            "id": "approach", "header": "Approach",
            "question": "Which approach should I take for this change?",
            "options": [
                {"label": "Minimal fix (Recommended)", "description": "Touch only the failing code path."},
                {"label": "Refactor module", "description": "Restructure the module while fixing it."}]}]}
        ok = text_item("Before I start, one choice.", 2, 0.05)
        idx = len(output)
        item = {"type": "function_call", "id": f"fc_mock_{rid}", "call_id": f"call_mock_{rid}",
                "name": tool.get("name"), "arguments": json.dumps(args), "status": "completed"}
        ev("response.output_item.added", output_index=idx, item=item)
        output.append(item)
        ok = ev("response.output_item.done", output_index=idx, item=item)
    elif kind == "mcp" and mcp_tool(tools, text):
        ns, tool = mcp_tool(tools, text)
        props = tool_params(tool)
        args = {k: "feature/preview" for k, v in props.items() if v.get("type") == "string"}
        ok = text_item("I'll call the MCP tool.", 2, 0.05)
        idx = len(output)
        item = {"type": "function_call", "id": f"fc_mock_{rid}", "call_id": f"call_mock_{rid}",
                "name": tool.get("name"), "arguments": json.dumps(args), "status": "completed"}
        if ns:
            item["namespace"] = ns
        ev("response.output_item.added", output_index=idx, item=item)
        output.append(item)
        ok = ev("response.output_item.done", output_index=idx, item=item)
    elif kind in ("slow", "slow_lines"):
        n = max(20, int(SLOW_SECONDS / 0.2))
        pieces = chunks(final_text(sc), n)
        ok = text_item(final_text(sc), n, SLOW_SECONDS / max(1, len(pieces)))
    elif kind == "delay":
        ok = text_item(final_text(sc), 8, 0.05, first_delay=DELAY_SECONDS)
    elif kind == "side" and ((body.get("text") or {}).get("format") or {}).get("type") == "json_schema":
        ok = text_item(json.dumps(schema_reply(body["text"]["format"].get("schema") or {}, text)), 2, 0)
    else:
        ok = text_item(final_text(sc, tool_out), 8, 0.03)
    if ok:
        ev("response.completed", response={**base, "status": "completed", "output": output,
                                           "usage": usage(text)})
    log({"id": rid, "done": ok, "client_gone": sse.gone})


# ----------------------------------------------------------------------------------------------
# Chat Completions

AIDER_REMINDER = re.compile(r"\n+# \*SEARCH/REPLACE block\* Rules:|\n+To suggest changes to a file you MUST")
# Qwen Code prefixes the user's text with <system-reminder> blocks (skills list, date) full of
# backticks and file names; they are cut out before choosing
SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>\s*", re.S)


def chat_last_user(body: dict) -> tuple[str, bool, str]:
    msgs = body.get("messages") or []
    last_user = ""
    for m in msgs:
        if m.get("role") == "user":
            c = m.get("content")
            last_user = c if isinstance(c, str) else "".join(
                p.get("text", "") for p in c or [] if isinstance(p, dict))
    last_user = SYSTEM_REMINDER.sub("", AIDER_REMINDER.split(last_user, 1)[0])
    if msgs and msgs[-1].get("role") == "tool":
        c = msgs[-1].get("content")
        return last_user, True, c if isinstance(c, str) else json.dumps(c)
    return last_user, False, ""


def openhands_call(tools: list, sc: dict) -> tuple[str, dict] | None:
    """OpenHands CLI's tools (`terminal`, `file_editor`) each require a `security_risk` (only
    OpenHands sends that); its file_editor also takes a sub-`command` (create)."""
    name = {"command": "terminal", "patch": "file_editor"}.get(sc["kind"])
    t = find_tool(tools, name) if name else None
    if t is None or "security_risk" not in tool_params(t):
        return None
    if sc["kind"] == "command":
        return name, {"command": sc["command"], "security_risk": "MEDIUM",
                      "summary": "Run the requested shell command"}
    return name, {"command": "create", "path": sc["file"], "file_text": "def answer():\n    return 42\n",
                  "security_risk": "MEDIUM", "summary": "Create the requested file"}


def openhands_wait(body: dict, sc: dict) -> None:
    """OpenHands CLI asks without streaming: hold a `delay` (and a `slow`) reply before the JSON."""
    if any("security_risk" in tool_params(t) for t in body.get("tools") or []):
        time.sleep({"delay": DELAY_SECONDS, "slow": SLOW_SECONDS}.get(sc["kind"], 0))


def letta_tool_call(tools: list, sc: dict) -> tuple[str, dict] | None:
    """Letta Code (local backend): Bash (command, description), Write (file_path, content),
    AskUserQuestion (questions: question, header, options of label + description, multiSelect)."""
    if sc["kind"] == "command":
        return "Bash", {"command": sc["command"], "description": f"Run {sc['command']}"}
    if sc["kind"] == "patch":
        return "Write", {"file_path": sc["file"], "content": "def answer():\n    return 42\n"}
    if sc["kind"] == "ask":
        return "AskUserQuestion", {"questions": [{
            "question": "Which approach should I take for this change?", "header": "Approach",
            "multiSelect": False, "options": [
                {"label": "Minimal fix", "description": "Touch only the failing code path."},
                {"label": "Refactor module", "description": "Restructure the module while fixing it."}]}]}
    return None


def chat_tool_call(tools: list, sc: dict) -> tuple[str, dict] | None:
    names = {(t.get("function") or {}).get("name") for t in tools}
    if {"Bash", "Write", "AskUserQuestion", "memory"} <= names:   # only Letta Code offers these
        return letta_tool_call(tools, sc)
    oh = openhands_call(tools, sc) if sc["kind"] in ("command", "patch") else None
    if oh:
        return oh
    if sc["kind"] == "command":
        t = find_tool(tools, "bash", "shell", "exec_command", "run_shell_command", "run_command",
                      "execute_command", "Execute", "Shell", pattern=r"bash|shell|exec|command")
        if t is None:
            return None
        return t["function"]["name"], command_args(t, sc["command"], sc["escalate"])
    if sc["kind"] == "patch":
        # Copilot CLI's `create` (path, file_text) makes a new file; its `edit` needs one
        t = (next((x for x in tools if x.get("function", {}).get("name") == "create"
                   and "file_text" in tool_params(x)), None)
             or find_tool(tools, "write", "write_file", "create_file", "edit", "apply_patch",
                          "Create", "WriteFile", pattern=r"write|edit|patch|create"))
        if t is None:
            return None
        props = tool_params(t)
        args: dict = {}
        content = "def answer():\n    return 42\n"
        for k in props:
            lk = k.lower()
            if "path" in lk or lk in ("file", "filename"):
                args[k] = sc["file"]
            elif lk in ("content", "contents", "text", "new_string", "newstring", "file_text",
                        "new_text"):
                args[k] = content
            elif lk in ("old_string", "oldstring"):
                args[k] = ""
            elif lk == "input":
                args[k] = patch_for(sc["file"])
        return t["function"]["name"], args
    if sc["kind"] == "ask":   # opencode's `question` tool takes the same shape as request_user_input
        t = find_tool(tools, "question", "request_user_input", "ask_user", "askuserquestion",
                      "AskUser", "AskUserQuestion", pattern=r"question|user_input")
        if t is None:
            return None
        if "requestedSchema" in tool_params(t):   # Copilot CLI's ask_user: an elicitation form
            return t["function"]["name"], {
                "message": "Which approach should I take for this change?",
                "requestedSchema": {"type": "object", "required": ["approach"], "properties": {
                    "approach": {"type": "string", "title": "Approach",
                                 "enum": ["Minimal fix", "Refactor module"]}}}}
        if "questionnaire" in tool_params(t):   # Factory Droid's AskUser: one plain-text form
            return t["function"]["name"], {"questionnaire": (
                "1. [question] Which approach should I take for this change?\n[topic] Approach\n"
                "[option] Minimal fix\n[option] Refactor module\n")}
        if "footerNote" in tool_params(t):   # Mistral Vibe's ask_user_question: no extra keys
            return t["function"]["name"], {"questions": [{
                "question": "Which approach should I take for this change?", "header": "Approach",
                "options": [{"label": "Minimal fix", "description": "Touch only the failing code path."},
                            {"label": "Refactor module",
                             "description": "Restructure the module while fixing it."}]}]}
        if {"question", "options"} <= set(tool_params(t)):   # Cline's ask_question: one question
            return t["function"]["name"], {"question": "Which approach should I take for this change?",
                                           "options": ["Minimal fix", "Refactor module"]}
        return t["function"]["name"], {"questions": [{
            "id": "approach", "header": "Approach",
            "question": "Which approach should I take for this change?",
            "options": [
                {"label": "Minimal fix", "description": "Touch only the failing code path."},
                {"label": "Refactor module", "description": "Restructure the module while fixing it."}]}]}
    return None


def hermes_tool_call(tools: list, sc: dict) -> tuple[str, dict] | None:
    """Hermes Agent (it alone offers both `terminal` and `clarify`): a command goes to its
    `terminal` tool (not `execute_code`, which the generic pattern picks), a question to
    `clarify` (question + up to 4 choices). None for anyone else, or another scenario."""
    names = {(t.get("function") or {}).get("name") for t in tools or []}
    if not {"terminal", "clarify"} <= names:
        return None
    if sc["kind"] == "command":
        return "terminal", {"command": sc["command"]}
    if sc["kind"] == "ask":
        return "clarify", {"question": "Which approach should I take for this change?",
                           "choices": ["Minimal fix", "Refactor module"]}
    return None


def serve_chat(h: BaseHTTPRequestHandler, body: dict, rid: int) -> None:
    text, tool_result, tool_out = chat_last_user(body)
    sc = choose(text, tool_result)
    tools = body.get("tools") or []
    if not tools and any(m.get("role") == "system" and isinstance(m.get("content"), str)
                         and "commit message" in m["content"] for m in body.get("messages") or []):
        sc = {"kind": "side", "was": sc["kind"]}   # Aider's commit-message side call
    title_call = not tools and any(
        isinstance(m.get("content"), str)
        and ("title generator" in m["content"] or "concise session titles" in m["content"]
             or "You name coding-agent sessions" in m["content"]   # Mistral Vibe's
             or "descriptive title" in m["content"])   # Hermes Agent's
        for m in body.get("messages") or [] if m.get("role") == "system")
    if title_call:                  # opencode's / Factory Droid's session-title side call
        sc = {"kind": "side", "was": sc["kind"]}
    call = ((hermes_tool_call(tools, sc) or chat_tool_call(tools, sc))
            if sc["kind"] in ("command", "patch", "ask") else None)
    if sc["kind"] in ("command", "patch") and call is None:
        # no tools (e.g. Aider): answer in text; Aider-style edit blocks are the caller's business
        reply = (f"Run this:\n\n```bash\n{sc['command']}\n```\n" if sc["kind"] == "command"
                 else f"{sc['file']}\n```python\n<<<<<<< SEARCH\n=======\ndef answer():\n    return 42\n>>>>>>> REPLACE\n```\n")
    elif title_call:
        reply = title_for(text)
    else:
        reply = final_text(sc, tool_out)
    log({"id": rid, "scenario": sc, "tool_call": call, "last_user": text[-300:]})
    model = body.get("model", "mock")
    cid = f"chatcmpl-mock-{rid}"
    created = int(time.time())
    pre = f"I'll run `{sc.get('command')}`." if call and sc["kind"] == "command" else (
        "Before I start, one choice." if call and sc["kind"] == "ask" else
        f"I'll create {sc.get('file')}." if call else "")
    use = {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280}
    if not body.get("stream"):
        openhands_wait(body, sc)
        msg: dict = {"role": "assistant", "content": pre or reply}
        if call:
            msg["tool_calls"] = [{"id": f"call_mock_{rid}", "type": "function",
                                  "function": {"name": call[0], "arguments": json.dumps(call[1])}}]
        obj = {"id": cid, "object": "chat.completion", "created": created, "model": model,
               "choices": [{"index": 0, "message": msg,
                            "finish_reason": "tool_calls" if call else "stop"}], "usage": use}
        data = json.dumps(obj).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        return
    sse = Sse(h)
    sse.start()

    def chunk(delta: dict, finish=None, **extra) -> bool:
        return sse.event(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                                "model": model, "choices": [{"index": 0, "delta": delta,
                                                             "finish_reason": finish}], **extra})

    chunk({"role": "assistant", "content": ""})
    ok = True
    if sc["kind"] == "delay":
        end = time.time() + DELAY_SECONDS
        while ok and time.time() < end:
            time.sleep(0.25)
            ok = sse.raw(": keep-alive\n\n")
    if call:
        for piece in chunks(pre, 3):
            ok = ok and chunk({"content": piece})
        args = json.dumps(call[1])
        ok = ok and chunk({"tool_calls": [{"index": 0, "id": f"call_mock_{rid}", "type": "function",
                                           "function": {"name": call[0], "arguments": ""}}]})
        for i in range(0, len(args), 40):
            ok = ok and chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + 40]}}]})
        ok = ok and chunk({}, "tool_calls")
    else:
        if sc["kind"] in ("slow", "slow_lines"):
            n = max(20, int(SLOW_SECONDS / 0.2))
            pieces, pause = chunks(reply, n), SLOW_SECONDS / n
        else:
            pieces, pause = chunks(reply, 8), 0.03
        for piece in pieces:
            ok = ok and chunk({"content": piece})
            if ok and pause:
                time.sleep(pause)
        ok = ok and chunk({}, "stop")
    if ok and (body.get("stream_options") or {}).get("include_usage"):
        sse.event(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                         "model": model, "choices": [], "usage": use})
    if ok:
        sse.raw("data: [DONE]\n\n")
    log({"id": rid, "done": ok, "client_gone": sse.gone})


# ----------------------------------------------------------------------------------------------
# turns that end in an error (Codex error captures): an UPPER-CASE keyword in the last user
# message; only requests that offer tools (the turn itself, not the title side call). Every call
# fails the same way, so the CLI gives up once its retries are used (the driver caps them with
# the provider's request_max_retries / stream_max_retries).
TURN_ERRORS = {
    "RATELIMITED": (429, {"message": "Rate limit reached for gpt-5-mock in organization org-mock "
                                     "on tokens per min (TPM): Limit 30000, Used 30000, Requested "
                                     "1200. Please try again in 1s.",
                          "type": "tokens", "param": None, "code": "rate_limit_exceeded"}),
    "NOQUOTA": (429, {"message": "You exceeded your current quota, please check your plan and "
                                 "billing details.",
                      "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}),
    "USAGELIMIT": (429, {"message": "The usage limit has been reached", "type": "usage_limit_reached",
                         "plan_type": "plus", "resets_in_seconds": 3600}),
    "SATURATED": (503, {"message": "The server is overloaded, please try again later.",
                        "type": "server_error", "param": None, "code": "server_is_overloaded"}),
    "BADKEY": (401, {"message": "Incorrect API key provided: sk-mock-***-key. You can find your "
                                "API key at https://platform.openai.com/account/api-keys.",
                     "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}),
}


def turn_error(body: dict) -> tuple[int, dict] | None:
    if not body.get("tools"):
        return None
    text, tool_result, _ = responses_last_user(body)
    if tool_result:
        return None
    for kw, err in TURN_ERRORS.items():
        if re.search(rf"\b{kw}\b", text):
            return err
    return None


# ----------------------------------------------------------------------------------------------

MODELS = ["gpt-5-mock", "mock-model"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-openai/1"

    def log_message(self, fmt, *args):  # quiet; we log JSON ourselves
        pass

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding") == "zstd":
            return {"_undecoded_zstd": len(raw)}
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"_raw": raw[:2000].decode(errors="replace")}

    def _headers(self) -> dict:
        keep = ("user-agent", "authorization", "originator", "session_id", "conversation_id",
                "openai-beta", "version", "x-openai-subagent", "content-encoding", "accept")
        out = {}
        for k, v in self.headers.items():
            lk = k.lower()
            if lk in keep or lk.startswith("x-"):
                out[k] = v[:12] + "..." if lk == "authorization" else v
        return out

    def _json(self, obj, code: int = 200) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        rid = next(COUNTER)
        log({"id": rid, "method": "GET", "path": self.path, "headers": self._headers()})
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/models"):
            self._json({"object": "list",
                        "data": [{"id": m, "object": "model", "created": 0, "owned_by": "mock"}
                                 for m in MODELS],
                        "models": []})
        else:
            self._json({"error": {"message": f"not found: {self.path}"}}, 404)

    def do_POST(self):
        rid = next(COUNTER)
        body = self._body()
        log({"id": rid, "method": "POST", "path": self.path, "headers": self._headers(),
             "body": body})
        path = self.path.split("?")[0].rstrip("/")
        self.close_connection = True
        try:
            err = turn_error(body) if path.endswith("/responses") else None
            if err:  # turns that end in an error (TURN_ERRORS)
                log({"id": rid, "error": err[0], "done": True})
                self._json({"error": err[1]}, err[0])
            elif path.endswith("/responses"):
                serve_responses(self, body, rid)
            elif path.endswith("/chat/completions"):
                serve_chat(self, body, rid)
            else:
                self._json({"error": {"message": f"not found: {self.path}"}}, 404)
        except (BrokenPipeError, ConnectionResetError):
            log({"id": rid, "client_gone": True})


def main(argv: list[str] | None = None) -> None:
    global LOG_FILE, SLOW_SECONDS, DELAY_SECONDS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("port", nargs="?", type=int, default=0)
    ap.add_argument("--log", help="JSON-lines request log (default: stderr)")
    ap.add_argument("--slow-seconds", type=float, default=SLOW_SECONDS)
    ap.add_argument("--delay-seconds", type=float, default=DELAY_SECONDS)
    a = ap.parse_args(argv)
    SLOW_SECONDS, DELAY_SECONDS = a.slow_seconds, a.delay_seconds
    if a.log:
        LOG_FILE = open(a.log, "a", encoding="utf-8")
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    print(f"PORT {srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
