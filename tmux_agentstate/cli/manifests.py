"""`manifests list` (each agent's rules in force: version, source, releases tested) and
`manifests update [--url URL]` (newer rules without a release, into the cache folder)."""
from __future__ import annotations

import json

from .common import EXIT_FAIL, command, err, say


def add(sub) -> None:
    m = command(sub, "manifests", "the per-agent rules: list them, or update them",
                "tmux-agentstate manifests list", "tmux-agentstate manifests update")
    msub = m.add_subparsers(dest="manifests_command", required=True, metavar="ACTION")
    ls = command(msub, "list", "each agent's manifest in force: version, source, tested",
                 "tmux-agentstate manifests list", "tmux-agentstate manifests list --json")
    ls.add_argument("--json", action="store_true", help="one JSON object per agent, in a list")
    ls.set_defaults(func=cmd_list)
    up = command(msub, "update", "fetch newer manifests into the cache (network: only now)",
                 "tmux-agentstate manifests update",
                 "tmux-agentstate manifests update --url https://example.org/my-manifests/")
    up.add_argument("--url", help="the folder of index.toml and the manifests "
                                  "(default: this project's manifests/ on its main branch)")
    up.set_defaults(func=cmd_update)


def cmd_list(args) -> int:
    from ..core.catalog import Catalog
    catalog = Catalog()
    rows = [{"name": n, "version": m.version, "source": catalog.source(n), "engine": m.engine,
             "tested": list(m.tested), "identity_only": m.identity_only, "path": m.path}
            for n in catalog.names() for m in [catalog.get(n)]]
    if args.json:
        say(json.dumps(rows, indent=2))  # ASCII: every control escaped
    else:
        for r in rows:
            tested = ("identity only (the agent reports itself)" if r["identity_only"] else
                      "tested on " + (", ".join(r["tested"]) or "no release"))
            say(f"{r['name']:10s} v{r['version']:<3d} {r['source']:8s} {tested}  {r['path']}")
    for e in catalog.errors:
        err(f"manifest error (last good rules keep running): {e}")
    return EXIT_FAIL if catalog.errors else 0


def cmd_update(args) -> int:
    from ..core.catalog import Catalog, cache_dir
    from ..updates.update import DEFAULT_URL, shipped_in_force, update
    cache = cache_dir()
    lines, ok = update(args.url or DEFAULT_URL, cache, shipped_in_force(cache))
    for line in lines:
        say(line)
    everything = Catalog()
    overridden = [n for n in everything.names() if everything.source(n) == "user"]
    if overridden:
        say(f"your own manifests still override: {', '.join(overridden)}")
    return 0 if ok else EXIT_FAIL
