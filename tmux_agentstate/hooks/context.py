"""Context usage: the percent of the model's context window a Claude Code or Codex pane has in
use (`@agentstate_context`), read only from the files those agents write anyway, never asked
of them and never from the screen.

- Claude Code: `~/.claude/sessions/<pid>.json` names the session and its folder; the
  transcript `~/.claude/projects/<folder, non-alphanumerics as ->/<session>.jsonl` has each
  reply's `usage`. In use: the last main-thread reply's input + cache-creation + cache-read +
  output tokens (what the next request carries). The window: the transcript's own
  `modelUsage[model].contextWindow` when a release writes it, else 1,000,000 for a `[1m]`
  model and 200,000 for the rest.
- Codex: its rollout `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl` has `token_count`
  events: `last_token_usage.total_tokens` of `model_context_window`. Which rollout: the one
  the agent's processes hold open; since 0.1xx a daemon shared by every Codex holds them, so
  else the newest rollout written since the agent started whose `session_meta` names the
  agent's folder (two Codex panes in one folder may then read each other's).

Undocumented formats, read-only, and bounded: only the last 256 KB of a regular file is read
(safe_read: never a FIFO or a device, never an error out), and any shape we do not know gives
no figure rather than a wrong one.
"""
from __future__ import annotations

import glob
import os
import re

from .. import procs
from ..core.safe_read import loads_json, read_head, read_tail

TAIL = 256 * 1024
CLAUDE_WINDOW, CLAUDE_WINDOW_1M = 200_000, 1_000_000
ROLLOUT = re.compile(r"/sessions/.*rollout-[^/]*\.jsonl$")


def _tail_lines(path: str) -> list[dict]:
    """The JSON objects of a file's last TAIL bytes, newest last (a cut first line dropped)."""
    tail = read_tail(path, TAIL)  # a regular file only, bounded: a FIFO or device gives None
    if tail is None:
        return []
    data, cut = tail
    lines = data.split(b"\n")
    if cut:
        lines = lines[1:]
    out = []
    for line in lines:
        obj = loads_json(line)
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _used(usage: dict) -> int:
    """What a Claude reply's request carried, and the reply: the context it leaves in use."""
    return sum(_int(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens",
                                            "cache_read_input_tokens", "output_tokens"))


def percent(used: int, window: int) -> int | None:
    if window <= 0 or used <= 0:
        return None
    return max(0, min(100, round(100 * used / window)))


# -- Claude Code ----------------------------------------------------------------------------------
def claude_transcript(home: str, session: dict) -> str | None:
    sid, cwd = session.get("sessionId"), session.get("cwd")
    if not isinstance(sid, str) or not re.fullmatch(r"[0-9a-fA-F-]{8,64}", sid):
        return None
    if isinstance(cwd, str):
        path = os.path.join(home, ".claude", "projects", re.sub(r"[^A-Za-z0-9]", "-", cwd), f"{sid}.jsonl")
        if os.path.exists(path):
            return path
    found = glob.glob(os.path.join(glob.escape(home), ".claude", "projects", "*", f"{sid}.jsonl"))
    return found[0] if found else None  # long folders are shortened in the name: by the id


def claude_context(lines: list[dict]) -> int | None:
    usage = model = None
    window = 0
    for obj in reversed(lines):
        if usage is None and obj.get("type") == "assistant" and not obj.get("isSidechain"):
            message = obj.get("message")
            # a turn that ended in an API error writes a `<synthetic>` reply with no usage:
            # the context in use is still the last real reply's
            if (isinstance(message, dict) and isinstance(message.get("usage"), dict)
                    and message.get("model") != "<synthetic>" and _used(message["usage"])):
                usage = message["usage"]
                model = str(obj.get("requestedModel") or message.get("model") or "")
        if not window and obj.get("type") == "cost-state" and isinstance(obj.get("modelUsage"), dict):
            for name, mu in obj["modelUsage"].items():
                if isinstance(mu, dict) and _int(mu.get("contextWindow")) and (model is None or name in (model or "")):
                    window = _int(mu["contextWindow"])
        if usage is not None and window:
            break
    if usage is None:
        return None
    used = _used(usage)
    if not window:
        window = CLAUDE_WINDOW_1M if "[1m]" in (model or "").lower() else CLAUDE_WINDOW
    return percent(used, window)


# -- Codex ---------------------------------------------------------------------------------------
def codex_rollout(fg: procs.Foreground) -> str | None:
    held = procs.open_files(fg.pids, ROLLOUT)
    if held:
        return held[0]
    home = fg.codex_home or os.path.join(fg.home or os.path.expanduser("~"), ".codex")
    since = procs.started_at(fg.pgid)
    if since is None or fg.cwd is None:
        return None
    newest, newest_mtime = None, since - 1
    for path in glob.glob(os.path.join(glob.escape(home), "sessions", "*", "*", "*", "rollout-*.jsonl")):
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        if mtime <= newest_mtime:
            continue
        if _rollout_cwd(path) == fg.cwd:
            newest, newest_mtime = path, mtime
    return newest


def _rollout_cwd(path: str) -> str | None:
    first = loads_json((read_head(path) or b"").split(b"\n", 1)[0])
    payload = first.get("payload") if isinstance(first, dict) else None
    return payload.get("cwd") if isinstance(payload, dict) and first.get("type") == "session_meta" else None


def codex_context(lines: list[dict]) -> int | None:
    for obj in reversed(lines):
        payload = obj.get("payload")
        if obj.get("type") != "event_msg" or not isinstance(payload, dict) or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        if not isinstance(info, dict):
            continue
        last = info.get("last_token_usage")
        if isinstance(last, dict):
            used = _int(last.get("total_tokens")) or _int(last.get("input_tokens")) + _int(last.get("output_tokens"))
            return percent(used, _int(info.get("model_context_window")))
    return None


# -- one pane ------------------------------------------------------------------------------------
def context_file(agent: str, fg: procs.Foreground | None) -> str | None:
    """The file this agent writes its usage to, or None."""
    if fg is None:
        return None
    if agent == "claude":
        found = procs.claude_session(fg)
        return claude_transcript(fg.home or os.path.expanduser("~"), found[0]) if found else None
    if agent == "codex":
        return codex_rollout(fg)
    return None


def context_percent(agent: str, path: str) -> int | None:
    lines = _tail_lines(path)
    return claude_context(lines) if agent == "claude" else codex_context(lines) if agent == "codex" else None
