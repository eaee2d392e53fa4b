#!/usr/bin/env bash
# tmux-agentstate: the TPM entry point. Only wires tmux: the status segment and window badge
# placeholders, the popup key and our hooks; then `plugin/ensure` (in the background) builds the
# plugin's Python environment if it is missing and starts the sidecar. Icons, styles and every
# other option's default live in the Python package (tmux_agentstate/sidecar/config.py), which publishes
# the badge format; this file reads only the options it needs to bind keys and hooks.
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOOK_INDEX=4242   # our hooks live at this index so the user's own hooks stay untouched

opt() { local v; v="$(tmux show-option -gqv "$1")"; printf '%s' "${v:-$2}"; }

socket="$(tmux display-message -p '#{socket_path}')"
ensure="$(printf '%q' "$PLUGIN_DIR/plugin/ensure") -S $(printf '%q' "$socket")"

# -- placeholders: pure formats over our options, no #() process per status redraw -------------
# #{agentstate} is the summary the sidecar renders; #{agentstate_window} expands the badge
# format it publishes (#{E:...} evaluates it in each window's own context).
for name in status-left status-right window-status-format window-status-current-format; do
  value="$(tmux show-option -gqv "$name")"
  case "$value" in *'#{agentstate}'*|*'#{agentstate_window}'*) ;; *) continue;; esac
  value="${value//\#\{agentstate\}/#\{@agentstate_summary\}}"
  value="${value//\#\{agentstate_window\}/#\{E:@agentstate_badge\}}"
  tmux set-option -gq "$name" "$value"
done

# -- popup and next keys (defaults as in tmux_agentstate/plugin/wiring.py KEYS) and hooks: each
# runs `ensure`, which is silent while the environment is not ready
# (no run-shell error view in any pane) and says what is wrong in the status segment instead
tmux bind-key "$(opt @agentstate-key A)" run-shell -b "$ensure --popup '#{client_name}'"
tmux bind-key "$(opt @agentstate-next-key a)" run-shell -b "$ensure --next '#{client_name}'"
# a client attaching, a session created: start the sidecar if it is not running; a client leaving
# (the sidecar's own control client included, when the sidecar dies): bring it back
for hook in client-attached session-created client-detached; do
  tmux set-hook -g "$hook[$HOOK_INDEX]" "run-shell -b '$ensure --auto'"
done

# -- build the environment once (or after an update), then start the sidecar -------------------
eval "$ensure --load" </dev/null >/dev/null 2>&1 &
exit 0
