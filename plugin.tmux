#!/usr/bin/env bash
# tmux-agentstate: TPM entry point. Reads @agentstate-* options, wires the status segment, the
# window badge, the popup key and hooks, and starts the sidecar. Logic lives in the Python
# package; this file only talks to tmux. TPM discards our output, so every message the user
# must see goes through `tmux display-message`.
#
# Options (set before TPM runs):
#   @agentstate-key        popup key after the prefix            (default: A)
#   @agentstate-interval   sweep interval, seconds               (default: 0.7)
#   @agentstate-intake     pipe | emulate | capture (see README) (default: pipe)
#   @agentstate-icon-blocked / -working / -idle   badge icons    (default: ! * -)
#   @agentstate-style-blocked / -working / -idle  tmux styles    (default: fg=red,bold fg=yellow fg=green)
#   @agentstate-python     python used to create the plugin venv (default: python3)
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOOK_INDEX=4242   # our hooks live at this index so the user's own hooks stay untouched

opt() { local v; v="$(tmux show-option -gqv "$1")"; printf '%s' "${v:-$2}"; }
say() { tmux display-message "tmux-agentstate: $*"; }

# Inside a #{?...} conditional ',' and '}' must be escaped; in icon text '#' as well.
style_escape() { local s="${1//,/#,}"; printf '%s' "${s//\}/#\}}"; }
text_escape() { style_escape "${1//\#/##}"; }

key="$(opt @agentstate-key A)"
venv="$PLUGIN_DIR/.venv"
py="$venv/bin/python"
socket="$(tmux display-message -p '#{socket_path}')"
q_py="$(printf '%q' "$py")"
q_socket="$(printf '%q' "$socket")"
run="$q_py -m tmux_agentstate"

# -- status segment and window badge: pure formats over our options, no #() per redraw ---------
summary='#{@agentstate_summary}'
badge=''
for state in blocked working idle; do
  case "$state" in
    blocked) icon="$(opt @agentstate-icon-blocked '!')"; style="$(opt @agentstate-style-blocked 'fg=red,bold')";;
    working) icon="$(opt @agentstate-icon-working '*')"; style="$(opt @agentstate-style-working 'fg=yellow')";;
    idle)    icon="$(opt @agentstate-icon-idle '-')";    style="$(opt @agentstate-style-idle 'fg=green')";;
  esac
  badge+="#{?#{==:#{@agentstate_window},$state},#[$(style_escape "$style")]$(text_escape "$icon")#[default] ,"
done
badge+='}}}'

interpolate() {
  local name="$1" value
  value="$(tmux show-option -gqv "$name")"
  case "$value" in *'#{agentstate}'*|*'#{agentstate_window}'*) ;; *) return;; esac
  value="${value//\#\{agentstate\}/$summary}"
  value="${value//\#\{agentstate_window\}/$badge}"
  tmux set-option -gq "$name" "$value"
}
for name in status-left status-right window-status-format window-status-current-format; do
  interpolate "$name"
done

# -- popup key and hooks -------------------------------------------------------------------------
tmux bind-key "$key" display-popup -E -w 90% -h 60% -T ' agents ' \
  "$run popup -S $q_socket --client '#{client_name}'"
tmux set-hook -g "client-attached[$HOOK_INDEX]" "run-shell -b '$run start -S $q_socket >/dev/null 2>&1'"
tmux set-hook -g "session-created[$HOOK_INDEX]" "run-shell -b '$run start -S $q_socket >/dev/null 2>&1'"

# -- bootstrap the Python environment (once), then start the sidecar -----------------------------
bootstrap() {
  if ! "$py" -c 'import tmux_agentstate' >/dev/null 2>&1; then
    say "first run: installing into $venv (about a minute)…"
    local base log="$PLUGIN_DIR/.install.log"
    base="$(opt @agentstate-python python3)"
    if ! { "$base" -m venv "$venv" && "$py" -m pip install -q -e "$PLUGIN_DIR"; } >"$log" 2>&1; then
      say "install failed: $(tail -n 1 "$log" | cut -c1-150) (full log: $log)"
      return 1
    fi
    say "installed."
  fi
  "$py" -m tmux_agentstate start -S "$socket" >/dev/null 2>"$PLUGIN_DIR/.start.err" \
    || say "could not start the sidecar: $(tail -n 1 "$PLUGIN_DIR/.start.err" | cut -c1-150)"
}
bootstrap </dev/null >/dev/null 2>&1 &
exit 0
