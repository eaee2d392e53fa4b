#!/usr/bin/env python3
"""A scripted mock of the Gemini API (generativelanguage v1beta) for driving Gemini CLI offline.

    python harness/mock_gemini.py [PORT] [--log FILE] [--slow-seconds S] [--delay-seconds S]

PORT 0 (the default) picks a free port; the server prints `PORT <n>` once it listens on
127.0.0.1. Point Gemini CLI at it with `GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT` and any
`GEMINI_API_KEY`. Endpoints (any API version prefix, any model name):

- `POST …/models/<m>:streamGenerateContent?alt=sse`  the agent turn: SSE `data: {candidates…}`
- `POST …/models/<m>:generateContent`                one JSON reply; with a response schema
                                                     (`responseJsonSchema` / `responseSchema`) it
                                                     fills the schema (model router, next-speaker
                                                     check, loop detection…)
- `POST …/models/<m>:countTokens`, `GET …/models`    small canned answers

Every request is logged as one JSON line (`--log`, default stderr).

Replies are scripted by keywords in the LAST user text, with the same scenario table as
harness/mock_openai.py (`choose()` is imported from there, so the two mocks agree):
a command in backticks -> `run_shell_command`; create/edit/write/add + a file name ->
`write_file` (or `replace` when the message says "replace"); ask me / which option / choose
between -> `ask_user`; think / take your time -> a long wait before the first token;
slowly / in detail / walk me through -> a slow stream; bug / fix -> a reply ending "Would you
like me to add a regression test?"; "fetch" + an http(s) URL -> `web_fetch`; a function
response -> a short final text.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mock_openai import chunks, choose, final_text, title_for  # noqa: E402

LOG_LOCK = threading.Lock()
LOG_FILE = sys.stderr
COUNTER = itertools.count(1)
SLOW_SECONDS = 25.0
DELAY_SECONDS = 40.0


def log(entry: dict) -> None:
    entry = {"t": round(time.time(), 3), **entry}
    with LOG_LOCK:
        LOG_FILE.write(json.dumps(entry, ensure_ascii=False) + "\n")
        LOG_FILE.flush()


# ----------------------------------------------------------------------------------------------
def last_user(body: dict) -> tuple[str, bool, str]:
    """(last user text, the last content is a functionResponse, that response as text)."""
    contents = body.get("contents") or []
    text = ""
    for c in contents:
        if c.get("role", "user") != "user":
            continue
        # the first user content also carries a <session_context> part (date, directory tree):
        # only the last plain text part is what the user typed
        texts = [p["text"] for p in c.get("parts") or [] if isinstance(p, dict) and "text" in p
                 and not p.get("thought") and not p["text"].lstrip().startswith("<session_context>")]
        if texts and texts[-1].strip():
            text = texts[-1]
    if contents:
        parts = contents[-1].get("parts") or []
        frs = [p["functionResponse"] for p in parts if isinstance(p, dict) and "functionResponse" in p]
        if frs:
            return text, True, json.dumps(frs[-1].get("response"))[:400]
    return text, False, ""


def tool_names(body: dict) -> set[str]:
    out = set()
    for t in body.get("tools") or []:
        for fd in t.get("functionDeclarations") or []:
            out.add(fd.get("name"))
    return out


def fill_schema(schema: dict, text: str, depth: int = 0):
    """A plausible value for a JSON schema (routing / next-speaker / loop-check side calls)."""
    if depth > 6 or not isinstance(schema, dict):
        return None
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    t = (t or "").lower()
    if "enum" in schema:
        enum = schema["enum"]
        for pref in ("user", "flash", "low", "false"):   # next_speaker=user ends the turn
            if pref in enum:
                return pref
        return enum[0]
    if t == "object" or "properties" in schema:
        out = {}
        for k, v in (schema.get("properties") or {}).items():
            if k in ("is_stuck", "isStuck", "loop_detected"):
                out[k] = False
            elif k == "next_speaker":
                out[k] = "user"
            else:
                out[k] = fill_schema(v, text, depth + 1)
        return out
    if t == "array":
        return []
    if t in ("number", "integer"):
        return 0
    if t == "boolean":
        return False
    return title_for(text) if text else "mock"


def declaration(body: dict, name: str) -> dict:
    for t in body.get("tools") or []:
        for fd in t.get("functionDeclarations") or []:
            if fd.get("name") == name:
                return fd
    return {}


CWD_RES = (re.compile(r"I'm currently working in the directory: (/[^\n]+)"),
           re.compile(r"Workspace Directories:\**\n\s*- (/[^\n]+)"))


def file_arg(body: dict | None, tool: str, path: str) -> str:
    """The file_path to send: relative as the scenario names it, unless this release's tool
    declaration wants an absolute path (0.12.0: 'The absolute path to the file…', it rejects a
    relative one before any dialog); then under the working directory the request names."""
    if body is None or path.startswith("/"):
        return path
    fd = declaration(body, tool)
    params = fd.get("parameters") or fd.get("parametersJsonSchema") or {}
    desc = str(((params.get("properties") or {}).get("file_path") or {}).get("description", ""))
    if "absolute path" not in desc.lower():
        return path
    for c in body.get("contents") or []:
        for part in c.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                for rx in CWD_RES:
                    m = rx.search(part["text"])
                    if m:
                        return m.group(1).strip().rstrip("/") + "/" + path
    return path


def function_call(sc: dict, tools: set[str], body: dict | None = None) -> dict | None:
    kind = sc["kind"]
    if kind == "command" and "run_shell_command" in tools:
        return {"name": "run_shell_command",
                "args": {"command": sc["command"], "description": f"Runs {sc['command'].split()[0]} as asked."}}
    if kind == "patch":
        if "replace" in tools and sc.get("replace"):
            return {"name": "replace", "args": {"file_path": file_arg(body, "replace", sc["file"]), "old_string": "print(i)",
                                                "new_string": "print(i + 1)",
                                                "instruction": "Fix the printed value."}}
        if "write_file" in tools:
            return {"name": "write_file", "args": {
                "file_path": file_arg(body, "write_file", sc["file"]),
                "content": "# Generated by the mock model\ndef answer():\n    return 42\n"}}
    if kind == "fetch" and "web_fetch" in tools:
        return {"name": "web_fetch", "args": {"prompt": f"Summarize the page at {sc['url']}"}}
    if kind == "ask" and "ask_user" in tools:
        return {"name": "ask_user", "args": {"questions": [{
            "question": "Which approach should I take for this change?",
            "header": "Approach", "type": "choice",
            "options": [{"label": "Minimal fix", "description": "Touch only the failing code path."},
                        {"label": "Refactor module", "description": "Restructure the module while fixing it."}]}]}}
    return None


def usage() -> dict:
    return {"promptTokenCount": 1200, "candidatesTokenCount": 80, "totalTokenCount": 1280}


def candidate(parts: list, finish: str | None = None) -> dict:
    c: dict = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        c["finishReason"] = finish
    return {"candidates": [c], "usageMetadata": usage(), "modelVersion": "gemini-mock"}


# ----------------------------------------------------------------------------------------------
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-gemini/1"

    def log_message(self, fmt, *args):
        pass

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"_raw": raw[:2000].decode(errors="replace")}

    def _json(self, obj, code: int = 200) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _headers(self) -> dict:
        out = {}
        for k, v in self.headers.items():
            lk = k.lower()
            if lk in ("user-agent", "content-type") or lk.startswith("x-"):
                out[k] = v[:8] + "..." if "key" in lk else v
        return out

    def do_GET(self):
        rid = next(COUNTER)
        log({"id": rid, "method": "GET", "path": self.path, "headers": self._headers()})
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self._json({"models": [{"name": "models/gemini-2.5-pro"}, {"name": "models/gemini-2.5-flash"}]})
        else:
            self._json({"error": {"code": 404, "message": f"not found: {self.path}"}}, 404)

    def do_POST(self):
        rid = next(COUNTER)
        body = self._body()
        path = self.path.split("?")[0]
        slim = {k: v for k, v in body.items() if k not in ("tools", "systemInstruction")}
        log({"id": rid, "method": "POST", "path": self.path, "headers": self._headers(),
             "tools": sorted(tool_names(body)), "body": slim})
        self.close_connection = True
        try:
            if path.endswith(":streamGenerateContent"):
                self.stream(body, rid)
            elif path.endswith(":generateContent"):
                self.generate(body, rid)
            elif path.endswith(":countTokens"):
                self._json({"totalTokens": 1200})
            else:
                self._json({"error": {"code": 404, "message": f"not found: {self.path}"}}, 404)
        except (BrokenPipeError, ConnectionResetError):
            log({"id": rid, "client_gone": True})

    # a non-streamed call: routing / JSON side calls, or a whole turn in one piece
    def generate(self, body: dict, rid: int) -> None:
        text, fr, fr_out = last_user(body)
        cfg = body.get("generationConfig") or {}
        schema = cfg.get("responseJsonSchema") or cfg.get("responseSchema")
        if schema or cfg.get("responseMimeType") == "application/json":
            value = fill_schema(schema or {"type": "object"}, text)
            log({"id": rid, "scenario": "json", "reply": value})
            self._json(candidate([{"text": json.dumps(value)}], "STOP"))
            return
        sc = choose(text, fr)
        call = function_call(sc, tool_names(body))
        log({"id": rid, "scenario": sc, "call": call, "last_user": text[-300:]})
        parts = [{"functionCall": call}] if call else [{"text": final_text(sc, fr_out)}]
        self._json(candidate(parts, "STOP"))

    def stream(self, body: dict, rid: int) -> None:
        text, fr, fr_out = last_user(body)
        sc = choose(text, fr)
        url = re.search(r"https?://[^\s`'\"]+", text)
        if not fr and url and re.search(r"\bfetch\b", text, re.I):
            sc = {"kind": "fetch", "url": url.group(0)}
        if sc["kind"] == "patch" and re.search(r"\breplace\b", text, re.I):
            sc["replace"] = True
        tools = tool_names(body)
        call = function_call(sc, tools, body)
        log({"id": rid, "scenario": sc, "call": call, "last_user": text[-300:]})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        gone = False

        def send(obj) -> bool:
            nonlocal gone
            if gone:
                return False
            try:
                self.wfile.write(f"data: {json.dumps(obj)}\r\n\r\n".encode())
                self.wfile.flush()
                return True
            except (BrokenPipeError, ConnectionResetError, OSError):
                gone = True
                return False

        kind = sc["kind"]
        if kind == "delay":
            time.sleep(DELAY_SECONDS)       # headers sent, no token yet
        if call:
            pre = {"command": f"I'll run `{sc.get('command')}`.",
                   "patch": f"I'll write {sc.get('file')}.",
                   "ask": "Before I start, one choice.",
                   "fetch": "Let me fetch that page."}.get(kind, "")
            ok = send(candidate([{"text": pre}]))
            time.sleep(0.2)
            ok = ok and send(candidate([{"functionCall": call}], "STOP"))
        else:
            reply = final_text(sc, fr_out)
            if kind == "slow":
                n = max(20, int(SLOW_SECONDS / 0.25))
                pieces = chunks(reply, n)
                pause = SLOW_SECONDS / max(1, len(pieces))
            else:
                pieces, pause = chunks(reply, 6), 0.04
            ok = True
            for i, piece in enumerate(pieces):
                last = i == len(pieces) - 1
                ok = send(candidate([{"text": piece}], "STOP" if last else None))
                if not ok:
                    break
                if pause and not last:
                    time.sleep(pause)
        log({"id": rid, "done": ok, "client_gone": gone})


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
