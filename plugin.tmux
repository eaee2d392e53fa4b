#!/usr/bin/env bash
# tmux-agentstate: the TPM entry point. Wires tmux (tmux_agentstate/plugin/wire: placeholders, a
# default segment, the popup and next keys, our hooks; the same wiring `tmux-agentstate
# tmux-init` does for a pip/pipx install), whose keys and hooks run `plugin/ensure`; then
# `plugin/ensure` (in the background) builds the plugin's Python environment if it is missing
# and starts the sidecar. Icons, styles and every other option's default live in the Python
# package (tmux_agentstate/sidecar/config.py), which publishes the badge format.
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

socket="$(tmux display-message -p '#{socket_path}')"
# each key and hook runs `ensure`, which is silent while the environment is not ready (no
# run-shell error view in any pane) and says what is wrong in the status segment instead
bash "$PLUGIN_DIR/tmux_agentstate/plugin/wire" "$socket" "$PLUGIN_DIR/plugin/ensure"

# -- build the environment once (or after an update), then start the sidecar -------------------
"$PLUGIN_DIR/plugin/ensure" -S "$socket" --load </dev/null >/dev/null 2>&1 &
exit 0
