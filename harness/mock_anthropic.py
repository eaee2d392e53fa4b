"""A scripted mock of the Anthropic Messages API, enough to drive the real Claude Code CLI.

    python harness/mock_anthropic.py [--port 0] [--log requests.jsonl]

Prints `PORT <n>` on stdout once listening (port 0 = pick a free one). Serves
`POST /v1/messages[?beta=true]` as SSE when the request says `"stream": true` (plain JSON
otherwise) and `POST /v1/messages/count_tokens`. Every request is appended to the log as one
JSON line (path, headers of interest, body), every reply summarised as well.

Replies are scripted by keywords in the text of the LAST human turn (the last user message
that has text that is not only `<system-reminder>` blocks; tool_result-only user messages are
steps of the same turn). Keywords (upper case, anywhere in the prompt):

    STREAMSLOW [secs]     a long reply streamed in many small deltas over ~secs (default 25)
    DELAYFIRST [secs]     wait secs (default 25) before the first byte, then a short reply
    RUNCMD <command>      a Bash tool_use running <command> (the rest of the line)
    WRITEFILE <path>      a Write tool_use creating <path> (relative to the cwd the CLI reports)
    EDITFILE <path> <old> <new>   a Read tool_use of <path>, then an Edit old -> new
    ASKQUESTION           an AskUserQuestion tool_use (one question, three options)
    ASKMULTI              an AskUserQuestion tool_use with two questions (one multi-select)
    READFILE <path>       a Read tool_use (outside the project it asks for permission)
    FETCHURL <url>        a WebFetch tool_use (asks for permission per domain)
    PLANEXIT              (in plan mode) a Write of the plan file, then ExitPlanMode
    ENDQUESTION           a reply ending with "Would you like me to add a regression test?"
    OVERLOAD [n]          the first n calls (default 4) get HTTP 529 overloaded: the CLI retries
    BADREQUEST            HTTP 400 invalid_request_error: the turn ends with an API error
    CONTEXTUSED <n>       the reply's usage says n input tokens (the context in use), so a test
                          knows the percentage the CLI's transcript will give
    ENDPROCEED            a reply that quotes dialog wording ("Do you want to proceed?", a
                          numbered "1. Yes" list, "Esc to cancel") as plain text: still idle

Errors a turn can end in (the block "turns that end in an error" below; every call of the turn
fails, so the CLI gives up once its retries are used: the capture driver caps them with
CLAUDE_CODE_MAX_RETRIES):

    RATELIMITED           HTTP 429 rate_limit_error (with `retry-after: 1`)
    SATURATED             HTTP 529 overloaded_error on every call (OVERLOAD n recovers)
    BADKEY                HTTP 401 authentication_error "invalid x-api-key"
    NOCREDIT              HTTP 400 invalid_request_error "Your credit balance is too low …"

Anything else gets a short text reply. After the scripted tool steps are used up (the last
message is a tool_result), the reply is a short final text. Requests that carry no tools
(title generation, topic checks, quota probes, haiku side calls) get a short text as well.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG_LOCK = threading.Lock()
LOG_PATH: str | None = None

SLOW_TEXT = (
    "Here is a walk through the module, section by section. First the parser reads the "
    "header and checks the magic number, then it loads the table of offsets and validates "
    "each entry against the file size. The second pass resolves the references between "
    "records, keeping a small cache so repeated lookups stay cheap. After that the writer "
    "serialises the records back in order, padding each one to the alignment the format "
    "asks for. Errors are collected rather than raised at once, so a single run reports "
    "every problem it finds. Finally the summary lists the counts per record type and the "
    "time spent in each phase, which is handy when profiling large inputs. "
)


def log(obj: dict) -> None:
    if not LOG_PATH:
        return
    obj = {"t": round(time.time(), 3), **obj}
    with LOG_LOCK, open(LOG_PATH, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(obj, ensure_ascii=False) + "\n")


def _texts(content) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    for block in content or []:
        if isinstance(block, dict) and block.get("type") == "text":
            out.append(block.get("text", ""))
    return out


def _strip_reminders(text: str) -> str:
    return re.sub(r"<system-reminder>.*?</system-reminder>", "", text, flags=re.S).strip()


def human_turn(messages: list[dict]) -> tuple[str, int, bool]:
    """(prompt text of the last human turn, assistant messages since it, last is tool_result)."""
    idx, prompt = -1, ""
    for i, m in enumerate(messages):
        if m.get("role") != "user":
            continue
        # the last real text block: after a failed turn (API error) the CLI sends the next
        # prompt in the same user message as the failed one, as a further text block
        texts = [t for t in (_strip_reminders(t) for t in _texts(m.get("content"))) if t.strip()]
        if texts:
            idx, prompt = i, texts[-1]
    steps = sum(1 for m in messages[idx + 1:] if m.get("role") == "assistant") if idx >= 0 else 0
    last = messages[-1] if messages else {}
    tool_result = isinstance(last.get("content"), list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in last["content"])
    return prompt, steps, tool_result


def _cwd(body: dict) -> str:
    blob = json.dumps(body, ensure_ascii=False)
    m = re.search(r"Primary working directory: ([^\s\\\"]+)", blob) or \
        re.search(r"[Ww]orking directory: ([^\s\\\"]+)", blob)
    return m.group(1) if m else os.getcwd()


def _plan_file(body: dict) -> str | None:
    blob = json.dumps(body, ensure_ascii=False)
    m = re.search(r"(/[^\s\"'`\\]*?/plans/[^\s\"'`\\]+?\.md)", blob)
    return m.group(1) if m else None


def _requires(body: dict, tool_name: str, field: str) -> bool:
    """The request's tool `tool_name` lists `field` as a required input (older releases of
    Claude Code differ: 1.0.x / 2.0.x ExitPlanMode takes a required `plan` string)."""
    for t in body.get("tools") or []:
        if isinstance(t, dict) and t.get("name") == tool_name:
            return field in ((t.get("input_schema") or {}).get("required") or [])
    return False


PLAN_TEXT = ("# Plan\n\n1. Add a retry wrapper around the fetch call.\n"
             "2. Cover it with two unit tests.\n3. Update the changelog.\n")


def _arg_after(prompt: str, kw: str) -> str:
    m = re.search(kw + r"[ \t]+([^\n]+)", prompt)
    return m.group(1).strip() if m else ""


def _num_after(prompt: str, kw: str, default: float) -> float:
    m = re.search(kw + r"[ \t]+(\d+(?:\.\d+)?)", prompt)
    return float(m.group(1)) if m else default


def text(t: str, **kw) -> dict:
    return {"kind": "text", "text": t, **kw}


def tool(name: str, inp: dict, preface: str = "") -> dict:
    return {"kind": "tool", "name": name, "input": inp, "preface": preface}


OVERLOAD_SEEN: dict[str, int] = {}


def scripted_error(body: dict) -> tuple[int, dict] | None:
    """OVERLOAD n: the first n calls of that turn get 529 overloaded (the CLI retries);
    BADREQUEST: a 400 invalid_request_error (the turn ends with an API error)."""
    if not body.get("tools"):
        return None
    prompt, step, _ = human_turn(body.get("messages", []))
    if "OVERLOAD" in prompt and step == 0:
        n = int(_num_after(prompt, "OVERLOAD", 4))
        with LOG_LOCK:
            OVERLOAD_SEEN[prompt] = OVERLOAD_SEEN.get(prompt, 0) + 1
            seen = OVERLOAD_SEEN[prompt]
        if seen <= n:
            return 529, {"type": "overloaded_error", "message": "Overloaded"}
    if "BADREQUEST" in prompt and step == 0:
        return 400, {"type": "invalid_request_error",
                     "message": "mock: messages.0: unsupported content block"}
    return None


# -- turns that end in an error (rate limit, overloaded, auth, credit) ----------------------------
# Every call of the turn fails the same way (the CLI's retries fail too), so the turn ends in the
# error once the retries are used up. Keywords do not overlap OVERLOAD / BADREQUEST above.
TURN_ERRORS = {
    "RATELIMITED": (429, {"type": "rate_limit_error",
                          "message": "mock: Number of request tokens has exceeded your "
                                     "per-minute rate limit"}),
    "SATURATED": (529, {"type": "overloaded_error", "message": "Overloaded"}),
    "BADKEY": (401, {"type": "authentication_error", "message": "invalid x-api-key"}),
    "NOCREDIT": (400, {"type": "invalid_request_error",
                       "message": "Your credit balance is too low to access the Anthropic API. "
                                  "Please go to Plans & Billing to upgrade or purchase credits."}),
}


def turn_error(body: dict) -> tuple[int, dict] | None:
    """RATELIMITED / SATURATED / BADKEY / NOCREDIT in the turn's prompt: every model call of that
    turn (step 0, tools offered) gets that HTTP error."""
    if not body.get("tools"):
        return None
    prompt, step, _ = human_turn(body.get("messages", []))
    if step != 0:
        return None
    for kw, err in TURN_ERRORS.items():
        if re.search(rf"\b{kw}\b", prompt):
            return err
    return None


def script(body: dict) -> dict:
    """Decide the reply for one request: a dict describing text or a tool call."""
    if not body.get("tools"):
        return text("Fixing the build", side=True)
    prompt, step, after_tool = human_turn(body.get("messages", []))
    cwd = _cwd(body)

    def absolute(p: str) -> str:
        return p if p.startswith("/") else os.path.join(cwd, p)

    if "STREAMSLOW" in prompt and step == 0:
        return text(SLOW_TEXT * 2, duration=_num_after(prompt, "STREAMSLOW", 25.0))
    if "DELAYFIRST" in prompt and step == 0:
        return text("All set: nothing needed to change.", delay=_num_after(prompt, "DELAYFIRST", 25.0))
    if "RUNCMD" in prompt and step == 0:
        cmd = _arg_after(prompt, "RUNCMD") or "mkdir -p build && touch build/out.txt"
        return tool("Bash", {"command": cmd, "description": "Run the requested command"},
                    preface="I'll run that for you.")
    if "WRITEFILE" in prompt and step == 0:
        path = _arg_after(prompt, "WRITEFILE").split()[0] if _arg_after(prompt, "WRITEFILE") else "notes.txt"
        content = "".join(f"line {i}: generated for {os.path.basename(path)}\n" for i in range(1, 9))
        return tool("Write", {"file_path": absolute(path), "content": content},
                    preface="Creating the file now.")
    if "EDITFILE" in prompt and step in (0, 1):
        parts = _arg_after(prompt, "EDITFILE").split()
        path = absolute(parts[0] if parts else "main.py")
        if step == 0:
            return tool("Read", {"file_path": path}, preface="Let me look at the file first.")
        old = parts[1] if len(parts) > 1 else "TODO"
        new = parts[2] if len(parts) > 2 else "DONE"
        return tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                    preface="Now the change.")
    if "READFILE" in prompt and step == 0:
        path = (_arg_after(prompt, "READFILE").split() or ["/etc/hostname"])[0]
        return tool("Read", {"file_path": absolute(path)}, preface="Reading it.")
    if "FETCHURL" in prompt and step == 0:
        url = (_arg_after(prompt, "FETCHURL").split() or ["https://example.com/"])[0]
        return tool("WebFetch", {"url": url, "prompt": "Summarise the page"},
                    preface="Fetching the page.")
    if "ASKMULTI" in prompt and step == 0:
        return tool("AskUserQuestion", {"questions": [
            {"question": "Which test runner should the project use?", "header": "Runner",
             "multiSelect": False,
             "options": [{"label": "pytest", "description": "Fixtures and plain asserts"},
                         {"label": "unittest", "description": "Standard library only"}]},
            {"question": "Which checks should run in CI?", "header": "Checks",
             "multiSelect": True,
             "options": [{"label": "Lint", "description": "ruff over the sources"},
                         {"label": "Types", "description": "mypy in strict mode"},
                         {"label": "Tests", "description": "the whole suite"}]}]})
    if "ASKQUESTION" in prompt and step == 0:
        return tool("AskUserQuestion", {"questions": [{
            "question": "Which storage backend should the cache use?",
            "header": "Backend",
            "multiSelect": False,
            "options": [
                {"label": "SQLite", "description": "A single local file, no server needed"},
                {"label": "Redis", "description": "Shared between processes, needs a server"},
                {"label": "In memory", "description": "Fastest, lost on restart"},
            ]}]})
    if "PLANEXIT" in prompt and step in (0, 1):
        plan = _plan_file(body)
        if step == 0 and plan:
            return tool("Write", {"file_path": plan, "content": PLAN_TEXT},
                        preface="Writing the plan.")
        # releases without a plan file take the plan as ExitPlanMode's required `plan` input
        inp = {"plan": PLAN_TEXT} if _requires(body, "ExitPlanMode", "plan") else {}
        return tool("ExitPlanMode", inp, preface="The plan is ready.")
    if "ENDPROCEED" in prompt and step == 0:
        return text("I can apply the schema migration now. It rewrites two tables and takes a "
                    "minute.\n\nDo you want to proceed?\n\n1. Yes\n2. No, show me the SQL first\n\n"
                    "Esc to cancel is not needed here: just answer in the prompt.")
    if "ENDELLIPSIS" in prompt and step == 0:  # a reply row that ends in "…" like a spinner row
        return text("Working on it…")
    if "ENDQUESTION" in prompt and step == 0:
        return text("I found the off-by-one in the loop bound and fixed it; the parser now "
                    "stops at the last record instead of reading past it.\n\n"
                    "Would you like me to add a regression test?")
    if after_tool:
        return text("Done. The step finished.")
    return text("Sure - done.")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def _read_body(self) -> dict:
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def _json(self, code: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        if code == 429:  # turn_error: a rate limit says when to come back
            self.send_header("retry-after", "1")
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        self._json(200, {"ok": True})

    def do_HEAD(self):
        log({"method": "HEAD", "path": self.path})
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        body = self._read_body()
        path = self.path.split("?")[0]
        hdrs = {k: v for k, v in self.headers.items()
                if k.lower() in ("anthropic-beta", "user-agent", "x-app", "anthropic-version")}
        log({"method": "POST", "path": self.path, "headers": hdrs, "body": body})
        if path.endswith("/count_tokens"):
            return self._json(200, {"input_tokens": 1200})
        if not path.endswith("/v1/messages"):
            return self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                               "message": "mock: no such path"}})
        err = scripted_error(body) or turn_error(body)
        if err:
            log({"reply": {"error": err[0]}})
            return self._json(err[0], {"type": "error", "error": err[1]})
        reply = script(body)
        prompt = human_turn(body.get("messages", []))[0]
        if "CONTEXTUSED" in prompt:
            reply["input_tokens"] = int(_num_after(prompt, "CONTEXTUSED", 50))
        log({"reply": {k: v for k, v in reply.items() if k != "text"},
             "text": reply.get("text", "")[:80]})
        model = body.get("model", "claude-mock")
        if body.get("stream"):
            self._stream(reply, model)
        else:
            self._whole(reply, model)

    # -- replies ------------------------------------------------------------------------------
    def _whole(self, reply: dict, model: str) -> None:
        if reply.get("delay"):
            time.sleep(reply["delay"])
        content, stop = [], "end_turn"
        if reply["kind"] == "text":
            content.append({"type": "text", "text": reply["text"]})
        else:
            if reply.get("preface"):
                content.append({"type": "text", "text": reply["preface"]})
            content.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24],
                            "name": reply["name"], "input": reply["input"]})
            stop = "tool_use"
        self._json(200, {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message",
                         "role": "assistant", "model": model, "content": content,
                         "stop_reason": stop, "stop_sequence": None,
                         "usage": {"input_tokens": reply.get("input_tokens", 50), "output_tokens": 20}})

    def _event(self, name: str, data: dict) -> None:
        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.flush()

    def _stream(self, reply: dict, model: str) -> None:
        if reply.get("delay"):
            time.sleep(reply["delay"])
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            self._event("message_start", {"type": "message_start", "message": {
                "id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
                "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": reply.get("input_tokens", 50), "output_tokens": 1,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
            self._event("ping", {"type": "ping"})
            index, stop = 0, "end_turn"
            if reply["kind"] == "text":
                self._text_block(index, reply["text"], reply.get("duration", 0.0))
            else:
                if reply.get("preface"):
                    self._text_block(index, reply["preface"], 0.0)
                    index += 1
                self._event("content_block_start", {
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24],
                                      "name": reply["name"], "input": {}}})
                js = json.dumps(reply["input"])
                for i in range(0, len(js), 40):
                    self._event("content_block_delta", {
                        "type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": js[i:i + 40]}})
                self._event("content_block_stop", {"type": "content_block_stop", "index": index})
                stop = "tool_use"
            self._event("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": stop, "stop_sequence": None},
                                          "usage": {"output_tokens": 40}})
            self._event("message_stop", {"type": "message_stop"})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            log({"note": "client closed the stream"})

    def _text_block(self, index: int, body: str, duration: float) -> None:
        self._event("content_block_start", {"type": "content_block_start", "index": index,
                                            "content_block": {"type": "text", "text": ""}})
        words = re.findall(r"\S+\s*", body)
        size = 3 if duration else 12
        chunks = ["".join(words[i:i + size]) for i in range(0, len(words), size)]
        pause = duration / max(len(chunks), 1) if duration else 0.0
        for c in chunks:
            self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "text_delta", "text": c}})
            if pause:
                time.sleep(pause)
        self._event("content_block_stop", {"type": "content_block_stop", "index": index})


def main(argv=None) -> int:
    global LOG_PATH
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("port_pos", nargs="?", type=int)
    ap.add_argument("--log", default=None, help="JSON-lines request log")
    a = ap.parse_args(argv)
    LOG_PATH = a.log
    port = a.port_pos if a.port_pos is not None else a.port
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    print(f"PORT {srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
