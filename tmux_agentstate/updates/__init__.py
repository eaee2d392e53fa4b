"""Manifest updates without a release: `tmux-agentstate manifests update [--url URL]`.

    index.py    the update catalog (`index.toml`): what it lists, checked before any download
    update.py   fetch, verify (size, hash, engine, caps, the manifest itself), write atomically
                into the cache folder; one line per manifest, the last good rules kept

Nothing here runs unless the user asks (`manifests update`, or `@agentstate-manifest-check`).
"""
