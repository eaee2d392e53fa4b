#!/usr/bin/env python3
"""A tiny stdio MCP server for the capture drivers: one tool, `deploy_preview`, marked
destructive and open-world (so a CLI that asks before such MCP calls shows its approval form).

    python harness/mcp_stub.py        # speaks MCP (JSON-RPC 2.0, one message per line) on stdio

It answers initialize, tools/list and tools/call (a fixed text result); notifications get no
reply, anything else an error. Nothing here touches the network or the disk.
"""
from __future__ import annotations

import json
import sys

TOOL = {
    "name": "deploy_preview",
    "description": "Deploy the current branch to a preview environment.",
    "inputSchema": {"type": "object", "properties": {"branch": {"type": "string"}},
                    "required": ["branch"]},
    "annotations": {"title": "Deploy preview", "readOnlyHint": False,
                    "destructiveHint": True, "openWorldHint": True},
}


def reply(rid, result=None, error=None) -> None:
    msg = {"jsonrpc": "2.0", "id": rid}
    msg.update({"error": error} if error else {"result": result})
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def handle(msg: dict) -> None:
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:          # a notification (initialized, cancelled…)
        return
    if method == "initialize":
        want = (msg.get("params") or {}).get("protocolVersion") or "2025-06-18"
        reply(rid, {"protocolVersion": want, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "stub", "version": "1.0.0"}})
    elif method == "tools/list":
        reply(rid, {"tools": [TOOL]})
    elif method == "tools/call":
        branch = ((msg.get("params") or {}).get("arguments") or {}).get("branch", "main")
        reply(rid, {"content": [{"type": "text", "text": f"preview of {branch} deployed"}],
                    "isError": False})
    elif method == "ping":
        reply(rid, {})
    else:
        reply(rid, error={"code": -32601, "message": f"method not found: {method}"})


def main() -> None:
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            handle(json.loads(line))
        except (ValueError, AttributeError):
            continue


if __name__ == "__main__":
    main()
