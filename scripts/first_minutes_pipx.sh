#!/usr/bin/env bash
# A new user: fresh clone, pipx install, tmux-init in their tmux.conf (with their own prefix C-a
# and `bind a send-prefix`), an agent pane; doctor before the agent and after.
set -u
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"  # its committed state: what a fresh clone gets
W=${WORK:-/tmp/newuser}/pipx; rm -rf "$W"; mkdir -p "$W/home"
export HOME="$W/home" PIPX_HOME="$W/pipx" PIPX_BIN_DIR="$W/home/.local/bin" XDG_RUNTIME_DIR="$W/run"
mkdir -p "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
export PATH="$PIPX_BIN_DIR:$PATH"
unset TMUX
git clone -q "$REPO" "$W/tmux-agentstate"
python3 -m venv "$W/pipx-venv" && "$W/pipx-venv/bin/pip" install -q pipx 2>/dev/null
echo "\$ pipx install $W/tmux-agentstate"
"$W/pipx-venv/bin/pipx" install "$W/tmux-agentstate" 2>&1 | tail -2
echo "\$ which tmux-agentstate; tmux-agentstate --version"
which tmux-agentstate; tmux-agentstate --version
echo "\$ tmux-agentstate list   # outside tmux, no server"
tmux-agentstate list; echo "exit $?"
cat > "$HOME/.tmux.conf" <<CONF
set -g prefix C-a
bind a send-prefix
set -g status-right '%H:%M'
run-shell 'tmux-agentstate tmux-init'
CONF
echo "--- ~/.tmux.conf"; cat "$HOME/.tmux.conf"
tmux -L newuser kill-server 2>/dev/null
tmux -L newuser -f "$HOME/.tmux.conf" new-session -d -s work -x 120 -y 32
sleep 4
echo "\$ tmux-agentstate doctor -L newuser   # no agent yet"
tmux-agentstate doctor -L newuser; echo "exit $?"
echo "\$ tmux list-keys -T prefix a / A"
tmux -L newuser list-keys -T prefix a; tmux -L newuser list-keys -T prefix A
echo "\$ status-right: $(tmux -L newuser show -gv status-right)"
tmux -L newuser new-window -t work: "env AGENTSTATE_AGENT=claude $PIPX_HOME/venvs/tmux-agentstate/bin/python -m tmux_agentstate.demo.fake_agent --autopilot --seed 3"
sleep 6
echo "\$ tmux-agentstate list -L newuser"
tmux-agentstate list -L newuser
echo "\$ tmux-agentstate doctor -L newuser   # an agent pane"
tmux-agentstate doctor -L newuser; echo "exit $?"
echo "\$ tmux-agentstate stop --clean -L newuser"
tmux-agentstate stop --clean -L newuser
echo "\$ tmux list-keys -T prefix a (after stop --clean)"; tmux -L newuser list-keys -T prefix a
tmux -L newuser kill-server
