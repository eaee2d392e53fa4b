#!/usr/bin/env bash
# A new TPM user: real TPM (tmux-plugins/tpm), the plugin from a git remote (a bare clone of
# this checkout), their own prefix C-a with `bind a send-prefix`; an agent pane; then an update
# as prefix + U runs it (TPM's update_plugin_prompt_handler.sh all: git pull, then source-file
# of tmux.conf), with doctor before and after.
set -u
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"  # its committed state: what a fresh clone gets
TPM="${1:?usage: scripts/first_minutes_tpm.sh TPM_GIT_URL_OR_FOLDER (a clone of tmux-plugins/tpm)}"
W=${WORK:-/tmp/newuser}/tpm; rm -rf "$W"; mkdir -p "$W/home" "$W/sock"
export HOME="$W/home" TMUX_TMPDIR="$W/sock" XDG_RUNTIME_DIR="$W/run"
mkdir -p "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"; unset TMUX
git clone -q --bare "$REPO" "$W/tmux-agentstate.git"
mkdir -p "$HOME/.tmux/plugins"
git clone -q "$TPM" "$HOME/.tmux/plugins/tpm"
cat > "$HOME/.tmux.conf" <<CONF
set -g prefix C-a
bind a send-prefix
set -g status-right '#{agentstate} %H:%M'
set -g @plugin 'tmux-plugins/tpm'
set -g @plugin '$W/tmux-agentstate.git'
run '~/.tmux/plugins/tpm/tpm'
CONF
echo "--- ~/.tmux.conf"; cat "$HOME/.tmux.conf"
tmux new-session -d -s work -x 160 -y 40
echo "\$ ~/.tmux/plugins/tpm/bin/install_plugins   (what prefix + I runs)"
"$HOME/.tmux/plugins/tpm/bin/install_plugins"
tmux source-file "$HOME/.tmux.conf"
P="$HOME/.tmux/plugins/tmux-agentstate"
start=$SECONDS
until [ -x "$P/.venv/bin/tmux-agentstate" ] && [ ! -e "$P/.venv.installing" ] && "$P/.venv/bin/tmux-agentstate" status >/dev/null 2>&1; do
  sleep 1; [ $((SECONDS - start)) -gt 240 ] && { echo "install did not finish"; break; }
done
echo "first install ready after $((SECONDS - start)) s; segment: $(tmux show -gv @agentstate_summary)"
TA="$P/.venv/bin/tmux-agentstate"
tmux new-window -t work: -n agent "env AGENTSTATE_AGENT=claude $P/.venv/bin/python -m tmux_agentstate.demo.fake_agent --autopilot --seed 3"
sleep 8
echo "\$ $TA list"; "$TA" list
echo "\$ $TA doctor   # before the update (agent lines, manifest lines cut)"
"$TA" doctor | grep -v "^ok      manifest\|: not on PATH"; echo "exit $?"
old_pid=$("$TA" status | sed -n 's/.*pid \([0-9]*\).*/\1/p' | head -1)
echo "sidecar pid before: $old_pid"
# the plugin's next release: a commit on the remote
git clone -q "$W/tmux-agentstate.git" "$W/dev"
( cd "$W/dev" && echo "# next release" >> plugin.tmux && git -c user.email=a@b -c user.name=dev commit -qam "next release" && git push -q origin HEAD )
echo "\$ prefix + U, all: update_plugin_prompt_handler.sh all (git pull, then source-file ~/.tmux.conf)"
t0=$SECONDS
"$HOME/.tmux/plugins/tpm/scripts/update_plugin_prompt_handler.sh" all
sleep 2; echo "segment 2 s after: $(tmux show -gv @agentstate_summary)"
new_pid=""
until [ -n "$new_pid" ] && [ "$new_pid" != "$old_pid" ] && "$TA" list 2>/dev/null | grep -q claude; do
  sleep 1; new_pid=$("$TA" status 2>/dev/null | sed -n 's/.*pid \([0-9]*\).*/\1/p' | head -1)
  [ $((SECONDS - t0)) -gt 120 ] && { echo "no new sidecar in 120 s"; break; }
done
echo "new sidecar pid $new_pid watching after $((SECONDS - t0)) s; segment: $(tmux show -gv @agentstate_summary)"
for s in 0 2 5; do sleep $s; echo "old sidecar $old_pid after +${s}s: $(ps -o pid=,stat=,args= -p "$old_pid" | cut -c1-100 || echo gone)"; done
echo "stamp: $(cat "$P/.venv/.agentstate-stamp") = plugin HEAD $(git -C "$P" rev-parse HEAD)"
echo "\$ $TA list"; "$TA" list
echo "\$ $TA doctor   # after the update"
"$TA" doctor | grep -v "^ok      manifest\|: not on PATH"; echo "exit $?"
echo "\$ tmux list-keys -T prefix a"; tmux list-keys -T prefix a
tmux kill-server
