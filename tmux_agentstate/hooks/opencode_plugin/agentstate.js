// tmux-agentstate's reporter for opencode and Kilo Code CLI (Kilo is an opencode fork with the
// same plugin loader). `tmux-agentstate launch opencode|kilo` loads it for that run only, through
// OPENCODE_CONFIG_CONTENT / KILO_CONFIG_CONTENT, which both CLIs merge over the user's own
// config (their plugins still load); no file of the user's is written.
//
// For each event that tells the state it runs, with the event as JSON on stdin:
//   "$AGENTSTATE_HOOK_PYTHON" -m tmux_agentstate.hook "$AGENTSTATE_AGENT" EVENT
// and hooks/report.py maps it. Without AGENTSTATE_HOOK_PYTHON (set by launch) it does nothing.
// The launch's proof of origin (AGENTSTATE_TOKEN, AGENTSTATE_LAUNCH_PID) goes to the hook with the
// rest of the environment, and AGENTSTATE_HOST_PID says which process the plugin runs in. An
// opencode started inside a tool call of the launched one inherits that environment, this plugin
// included: only the launched process itself (or the native binary its npm wrapper started)
// reports, so a nested one never overwrites the pane's report.
// It never throws into the host: a broken report must not break the agent.
// Events checked with opencode 1.18.33 and Kilo 7.7.7 (harness/NOTES-kilo.md).
import { spawn } from "node:child_process"

// bus events that tell the state; the rest (message.part.delta per token, …) are not sent
const FORWARD = new Set([
  "session.status", "session.idle", "session.error",
  "permission.asked", "permission.replied",
  "question.asked", "question.replied", "question.rejected",
])
const QUEUE_MAX = 50
const HOOK_TIMEOUT_MS = 5000

// One report at a time, in event order: two racing processes could record a turn's "busy" after
// its "idle". A stuck one is killed after 5 s; a backlog drops its oldest.
const queue = []
let current = null // the report process running now
let closed = false

function pump() {
  if (current || closed && queue.length === 0) return
  const job = queue.shift()
  if (!job) return
  let child = null
  const next = () => {
    if (current !== child) return
    current = null
    pump()
  }
  try {
    child = spawn(job.python, ["-m", "tmux_agentstate.hook", job.agent, job.event], {
      stdio: ["pipe", "ignore", "ignore"],
      env: { ...process.env, AGENTSTATE_HOST_PID: String(process.pid) },
      detached: true, // its own process group: quitting the TUI does not cut a report short
    })
    current = child
    const timer = setTimeout(() => { try { child.kill("SIGKILL") } catch {} next() }, HOOK_TIMEOUT_MS)
    timer.unref?.()
    child.on("error", () => { clearTimeout(timer); next() })
    child.on("exit", () => { clearTimeout(timer); next() })
    child.stdin.on("error", () => {})
    child.stdin.end(job.body)
  } catch {
    current = null
  }
}

// Whether this process is the agent `launch` started (or its npm wrapper's child): a launch token
// without that is an inherited one. No token at all: the hook decides (it reports onto a pane
// no launched agent owns, where the sidecar says why it is ignored).
function launchedHere() {
  const token = process.env.AGENTSTATE_TOKEN
  if (!token) return true
  const launched = Number(process.env.AGENTSTATE_LAUNCH_PID)
  return launched > 0 && (process.pid === launched || process.ppid === launched)
}

function report(agent, event, payload, last = false) {
  try {
    const python = process.env.AGENTSTATE_HOOK_PYTHON
    if (!python || closed || !launchedHere()) return
    const job = { python, agent, event, body: JSON.stringify(payload ?? {}) }
    if (last) {
      // the host exits without waiting for the queue: what is pending or running must not
      // land after this one
      closed = true
      queue.length = 0
      try { if (current && current.exitCode === null) current.kill("SIGKILL") } catch {}
      current = null
    } else if (queue.length >= QUEUE_MAX) {
      queue.shift()
    }
    queue.push(job)
    pump()
  } catch {}
}

export const AgentstatePlugin = async () => {
  const agent = process.env.AGENTSTATE_AGENT || "opencode"
  const children = new Set() // sub-agent sessions (task tool)
  const lastStatus = new Map() // sessionID → the last session.status type sent
  return {
    event: async (arg) => {
      try {
        const event = arg && arg.event
        const type = event && event.type
        if (typeof type !== "string") return
        const props = event.properties ?? {}
        if (type === "session.created" || type === "session.updated") {
          const info = props.info ?? {}
          if (info.parentID && info.id) children.add(info.id)
          return
        }
        if (!FORWARD.has(type)) return
        // a sub-agent's turn ending is not the pane's; its permission or question is: the
        // dialog is on the pane's screen all the same
        if (type.startsWith("session.") && children.has(props.sessionID)) return
        if (type === "session.status") {
          const status = props.status && props.status.type
          if (lastStatus.get(props.sessionID) === status) return // busy → busy per step
          lastStatus.set(props.sessionID, status)
        }
        report(agent, type, { type, ...props })
      } catch {}
    },
    // the user's prompt reached the agent: its turn starts
    "chat.message": async (input) => {
      try {
        report(agent, "chat.message", { type: "chat.message", sessionID: input?.sessionID })
      } catch {}
    },
    // the only signal that the TUI is quitting (no session.deleted comes)
    dispose: async () => {
      try {
        report(agent, "dispose", { type: "dispose" }, true)
      } catch {}
    },
  }
}

export default AgentstatePlugin
