"""The bundled agent manifests, one TOML file per agent.

This folder is the one source of the rules: the wheel ships it as the package data of
`tmux_agentstate.manifests` (pyproject.toml maps it there), and `catalog.bundled_dir()` finds it
with importlib.resources, in a checkout, an editable install and a wheel alike.
"""
