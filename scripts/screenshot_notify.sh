#!/usr/bin/env bash
# A desktop notification from tmux-agentstate through a real terminal, photographed: a virtual
# X screen (Xvfb) with a notification daemon (dunst), kitty attached to a private tmux server,
# the sidecar watching an agent pane in another session. The pane draws a real Claude Code
# permission prompt; the sidecar writes OSC 99 (auto: kitty said what it is) to kitty's tty;
# kitty asks the desktop to show it; dunst draws it. Needs Debian's xvfb kitty dunst dbus-x11
# imagemagick.
#
#   scripts/screenshot_notify.sh [OUT.png]     (default docs/notify-kitty.png)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/notify-kitty.png}"
py=.venv/bin/python
sock="agentstate-shot-$$"
tmp="$(mktemp -d)"
display=":$((90 + $$ % 9))"
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  [ -n "${sidecar:-}" ] && kill "$sidecar" 2>/dev/null || true
  [ -n "${kitty:-}" ] && kill "$kitty" 2>/dev/null || true
  [ -n "${dunst:-}" ] && kill "$dunst" 2>/dev/null || true
  [ -n "${xvfb:-}" ] && kill "$xvfb" 2>/dev/null || true
  [ -n "${DBUS_SESSION_BUS_PID:-}" ] && kill "$DBUS_SESSION_BUS_PID" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
Xvfb "$display" -screen 0 1280x720x24 >/dev/null 2>&1 & xvfb=$!
export DISPLAY="$display" LIBGL_ALWAYS_SOFTWARE=1
sleep 1
eval "$(dbus-launch --sh-syntax)"
cat >"$tmp/dunstrc" <<'EOF'
[global]
    origin = top-right
    offset = 20x20
    width = 560
    font = Monospace 12
    frame_width = 2
    frame_color = "#fab387"
[urgency_normal]
    background = "#1e1e2e"
    foreground = "#cdd6f4"
    timeout = 0
EOF
dunst -config "$tmp/dunstrc" >/dev/null 2>&1 & dunst=$!
fixture="$("$py" -c "
from tmux_agentstate.core.fixtures import load_index
print(next(f.path for f in load_index() if f.agent == 'claude' and f.state == 'blocked'
           and f.kind == 'command-approval' and f.renderer == 'classic'))")"
tmux -L "$sock" -f /dev/null new-session -d -s main -x 100 -y 30 "bash --norc --noprofile"
tmux -L "$sock" set -g @agentstate-notify-terminal auto \; set -g status-right '#{@agentstate_summary}'
tmux -L "$sock" new-session -d -s work -x 110 -y 36 \
  "env AGENTSTATE_AGENT=claude sh -c 'stty -echo; while [ ! -e $tmp/go ]; do sleep 0.1; done; cat $fixture; exec sleep 600'"
kitty -o font_size=11 -o initial_window_width=1240 -o initial_window_height=640 -o remember_window_size=no \
  tmux -L "$sock" attach -t main >/dev/null 2>&1 & kitty=$!
env XDG_RUNTIME_DIR="$tmp" "$py" -m tmux_agentstate watch -L "$sock" >"$tmp/sidecar.log" 2>&1 & sidecar=$!
for _ in $(seq 100); do
  [ -n "$(tmux -L "$sock" list-clients -F '#{?client_control_mode,,#{client_termtype}}' | grep -v '^$')" ] && break
  sleep 0.1
done
tmux -L "$sock" send-keys -t main 'clear; tmux -L '"$sock"' list-clients -F "#{client_termname} #{client_termtype}"' Enter
sleep 2
touch "$tmp/go"
for _ in $(seq 100); do
  [ "$(tmux -L "$sock" display -p -t work: '#{@agentstate}')" = blocked ] && break
  sleep 0.1
done
sleep 2.5
import -window root "$out"
echo "saved $out (pane: $(tmux -L "$sock" display -p -t work: '#{@agentstate}'))"
