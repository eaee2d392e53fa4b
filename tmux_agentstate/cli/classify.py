"""`classify`: replay raw captured bytes into a screen and classify it (no tmux at all)."""
from __future__ import annotations

from pathlib import Path

from .common import EXIT_FAIL, command, err, safe_json, say, size


def add(sub) -> None:
    c = command(sub, "classify", "replay raw captured bytes into a screen and classify it",
                "tmux-agentstate classify --size 32x120 capture.raw",
                "tmux-agentstate classify --agent claude --json tests/fixtures/claude/*.raw")
    c.add_argument("--agent", help="manifest name (default: inferred from the screen)")
    c.add_argument("--size", type=size, default=(32, 120), metavar="ROWSxCOLS",
                   help="emulated screen size (default 32x120)")
    c.add_argument("--json", action="store_true", help="one JSON object per file")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.set_defaults(func=cmd_classify)


def cmd_classify(args) -> int:
    from ..core.catalog import Catalog
    from ..core.screen import replay

    catalog = Catalog()
    status = 0
    for e in catalog.errors:
        err(f"manifest error: {e}")
        status = EXIT_FAIL
    manifest = None
    if args.agent:
        manifest = catalog.get(args.agent)
        if manifest is None:
            err(f"unknown agent {args.agent!r} (known: {', '.join(catalog.names()) or 'none'})")
            return EXIT_FAIL
    rows, cols = args.size
    for name in args.files:
        path = Path(name)
        try:
            data = path.read_bytes()
        except OSError as e:
            err(f"{name}: cannot read: {e.strerror or e}")
            status = EXIT_FAIL
            continue
        if not data:
            err(f"{name}: empty capture, nothing to classify")
            status = EXIT_FAIL
            continue
        screen = replay(data, rows, cols)
        bad = screen.invalid_utf8
        if bad > 16 and bad * 50 > len(data):
            err(f"{name}: not terminal output ({bad} invalid UTF-8 sequences in {len(data)} bytes)")
            status = EXIT_FAIL
            continue
        if screen.truncated_tail:
            err(f"{name}: warning: capture ends inside a UTF-8 sequence (read as U+FFFD)")
            status = EXIT_FAIL
        view = screen.view()
        m = manifest or catalog.infer(view)
        if m is None:
            err(f"{name}: cannot tell which agent drew this screen; pass --agent "
                 f"({', '.join(catalog.names())})")
            status = EXIT_FAIL
            continue
        match = m.evaluate(view)
        from ..core.manifest import take_faults
        for fault in take_faults():
            err(f"{name}: manifest rule {fault}")
            status = EXIT_FAIL
        if args.json:
            say(safe_json({"file": name, "agent": m.name, "state": match.state,
                           "rule": match.rule, "line": match.line}))
        else:
            detail = f" [{match.rule}] {match.line.strip()}" if match.rule else " [no rule: fallback]"
            say(f"{name}: {m.name} {match.state}{detail}")
    return status
