import QtQuick
import Quickshell
import Quickshell.Io

// archgate's supervisor inside omarchy-shell (one per shell, a `service` plugin).
//
// It starts `archgate serve --http` (the `archgate` on PATH: plugins run no build step), reads
// its JSON frames on stdout, probes GET /health every 10 s to tell *serving* from merely
// *running*, restarts it with backoff, and writes $XDG_RUNTIME_DIR/archgate/state.json whenever
// archgate is not serving (while it serves, archgate keeps that file current itself). Being a
// child of the shell is what gives archgate the live session's WAYLAND_DISPLAY,
// HYPRLAND_INSTANCE_SIGNATURE and DBUS_SESSION_BUS_ADDRESS.
//
// It never writes inside its own directory: Omarchy reloads the shell on any write under
// ~/.config/omarchy/plugins/. Everything it writes lives under runtimeDir and stateDir.
Item {
  id: root
  visible: false

  // Injected by the shell's service loader.
  property var shell: null
  property var manifest: null

  readonly property string pluginId: "archgate.mcp"
  readonly property string bin: "archgate"
  readonly property string home: Quickshell.env("HOME") || ""
  readonly property string stateHome: Quickshell.env("XDG_STATE_HOME") || (root.home + "/.local/state")
  readonly property string stateDir: root.stateHome + "/archgate"
  // The same fallback as archgate's: without XDG_RUNTIME_DIR, inside the private state directory.
  readonly property string runtimeDir: Quickshell.env("XDG_RUNTIME_DIR") ? Quickshell.env("XDG_RUNTIME_DIR") + "/archgate" : root.stateDir + "/run"
  readonly property string stateFile: root.runtimeDir + "/state.json"
  // Whether a Stop survives a shell restart.
  readonly property string stopFlagFile: root.stateDir + "/plugin-stopped"

  readonly property int probeIntervalMs: 10000
  readonly property int probeTimeoutMs: 3000
  readonly property int missesBeforeRestart: 3

  // starting | serving | unresponsive | stopped | failed | missing
  property string status: "starting"
  property string reason: ""
  property string version: ""
  property int port: 0
  property int pid: 0
  property int pendingApprovals: 0
  property bool developerMode: false
  property bool configOk: true
  // False while archgate cannot write its activity log: it answers no call until it can.
  property bool logOk: true
  // What is wrong with config.toml, one line per problem (from /health), when it is not ok.
  property var configProblems: []
  property string lastCall: ""
  property double lastCallAt: 0
  property int restarts: 0
  property int missedProbes: 0
  property bool wantRunning: true
  property bool restartNow: false
  property bool sawStart: false
  property int probeSeq: 0
  property var activeProbe: null
  readonly property bool serving: root.status === "serving"

  function frame(line) {
    var f
    try { f = JSON.parse(line) } catch (e) { return }
    if (!f || typeof f.event !== "string") return
    if (f.event === "listening") {
      root.port = Number(f.port) || 0
      root.reason = ""
      root.probe()
    } else if (f.event === "failed") {
      root.reason = String(f.reason || "archgate could not start")
      root.setStatus("failed")
    } else if (f.event === "call") {
      root.lastCall = String(f.tool || "") + " " + String(f.outcome || "")
      root.lastCallAt = Date.now()
      stateView.reload()
    }
  }

  function setStatus(s) {
    if (root.status === s) return
    root.status = s
    if (s !== "serving") root.writeState()
  }

  // The bar's file while archgate is not serving. Counts and flags only.
  function writeState() {
    stateView.setText(JSON.stringify({
      status: root.status,
      writer: "plugin",
      pid: root.pid > 0 ? root.pid : null,
      port: root.port > 0 ? root.port : null,
      version: root.version || null,
      pending_approvals: 0,
      developer_mode: false,
      config_ok: root.configOk,
      log_ok: root.logOk,
      reason: root.reason || null,
      updated_at: Math.floor(Date.now() / 1000)
    }, null, 2) + "\n")
  }

  // archgate writes the file while it serves: live approval and developer-mode changes.
  function readState() {
    var s
    try { s = JSON.parse(stateView.text()) } catch (e) { return }
    if (!s || s.writer !== "archgate" || s.status !== "serving") return
    if (root.pid > 0 && Number(s.pid) !== root.pid) return
    root.pendingApprovals = Number(s.pending_approvals) || 0
    root.developerMode = s.developer_mode === true
    root.configOk = s.config_ok !== false
    root.logOk = s.log_ok !== false
  }

  function probe() {
    if (root.port <= 0 || !daemon.running) return
    if (root.activeProbe) root.activeProbe.abort()
    var seq = ++root.probeSeq
    var xhr = new XMLHttpRequest()
    root.activeProbe = xhr
    xhr.onreadystatechange = function() {
      if (xhr.readyState !== XMLHttpRequest.DONE || seq !== root.probeSeq) return
      root.activeProbe = null
      probeTimeout.stop()
      var health = null
      if (xhr.status === 200) {
        try { health = JSON.parse(xhr.responseText) } catch (e) { health = null }
      }
      root.probed(health)
    }
    xhr.open("GET", "http://127.0.0.1:" + root.port + "/health")
    xhr.send()
    probeTimeout.restart()
  }

  function probed(health) {
    if (health && health.name === "archgate" && health.status === "serving") {
      root.missedProbes = 0
      root.version = String(health.version || root.version)
      root.pendingApprovals = Number(health.pending_approvals) || 0
      root.developerMode = health.developer_mode === true
      root.configOk = !health.config || health.config.ok !== false
      root.configProblems = health.config && Array.isArray(health.config.problems) ? health.config.problems.map(String) : []
      root.logOk = !health.audit || health.audit.writable !== false
      root.reason = ""
      root.setStatus("serving")
      if (!stableTimer.running) stableTimer.restart()
      return
    }
    root.missedProbes++
    if (root.status === "serving" || root.missedProbes >= root.missesBeforeRestart) {
      root.reason = "archgate (pid " + root.pid + ") runs but GET /health on port " + root.port + " did not answer"
      root.setStatus("unresponsive")
    }
    if (root.missedProbes >= root.missesBeforeRestart && daemon.running) {
      console.warn("archgate: /health missed " + root.missedProbes + " times; restarting it")
      root.restartNow = true
      root.terminate()
    }
  }

  function launch() {
    if (daemon.running || versionCheck.running) return
    root.sawStart = false
    root.missedProbes = 0
    root.port = 0
    root.setStatus("starting")
    versionCheck.running = true
  }

  function terminate() {
    if (!daemon.running) return
    daemon.signal(15)
    killTimer.restart()
  }

  function exited(code) {
    killTimer.stop()
    stableTimer.stop()
    root.pid = 0
    if (root.activeProbe) root.activeProbe.abort()
    if (!root.wantRunning) {
      root.reason = "stopped from the plugin (omarchy-shell " + root.pluginId + " start)"
      root.setStatus("stopped")
      return
    }
    if (root.restartNow) {
      root.restartNow = false
      root.launch()
      return
    }
    if (root.status !== "failed") {
      root.reason = "archgate exited with status " + code + (root.reason ? ": " + root.reason : "")
      root.setStatus("failed")
    }
    var delay = Math.min(60000, 1000 * Math.pow(2, root.restarts))
    root.restarts++
    root.reason += " (restarting in " + Math.round(delay / 1000) + " s)"
    root.writeState()
    backoff.interval = delay
    backoff.restart()
  }

  function describe() {
    var text = ""
    if (root.status === "serving") {
      text = "archgate " + root.version + ": serving at http://127.0.0.1:" + root.port + "/mcp (pid " + root.pid + ")"
    } else if (root.status === "missing") {
      text = "archgate: " + root.reason
    } else {
      text = "archgate: " + root.status + (root.reason ? " — " + root.reason : "")
    }
    text += "\napprovals waiting: " + root.pendingApprovals + (root.pendingApprovals > 0 ? " (archgate ui opens the approval page)" : "")
    text += "\ndeveloper mode: " + (root.developerMode ? "ON (archgate dev-mode off ends it)" : "off")
    text += "\nconfig: " + (root.configOk ? "ok" : "not applied; the last good copy stays in force (archgate config check)")
    if (!root.logOk) text += "\nactivity log: NOT WRITABLE — no call is answered until it is; check the disk and `archgate doctor`"
    if (root.lastCall !== "") {
      text += "\nlast call: " + root.lastCall + ", " + Math.round((Date.now() - root.lastCallAt) / 1000) + " s ago"
    }
    if (root.restarts > 0) text += "\nrestarts since it last served a minute: " + root.restarts
    return text
  }

  // Start, stop and restart: what the IPC functions and the panel's buttons do. Each returns a
  // sentence for the person.
  function startDaemon() {
    root.wantRunning = true
    stopFlag.setText("")
    backoff.stop()
    if (daemon.running) return "archgate is already running (pid " + root.pid + ", " + root.status + ")"
    root.restarts = 0
    root.launch()
    return "starting archgate; `omarchy-shell " + root.pluginId + " status` shows when it serves"
  }

  function stopDaemon() {
    root.wantRunning = false
    stopFlag.setText("stopped\n")
    backoff.stop()
    if (!daemon.running) {
      root.reason = "stopped from the plugin; omarchy-shell " + root.pluginId + " start starts it"
      root.setStatus("stopped")
      return "archgate was not running; it stays stopped (also after a shell restart)"
    }
    root.terminate()
    return "stopping archgate (pid " + root.pid + "); it stays stopped until `omarchy-shell " + root.pluginId + " start`"
  }

  function restartDaemon() {
    root.wantRunning = true
    stopFlag.setText("")
    backoff.stop()
    root.restarts = 0
    if (daemon.running) {
      root.restartNow = true
      root.terminate()
      return "restarting archgate (pid " + root.pid + ")"
    }
    root.launch()
    return "starting archgate"
  }

  // Opens the approval page in the browser, logged in with a one-time link.
  function openApprovals() {
    Quickshell.execDetached([root.bin, "ui"])
  }

  Process {
    id: versionCheck
    command: [root.bin, "--version"]
    stdout: StdioCollector {
      id: versionOut
      waitForEnd: true
    }
    onStarted: root.sawStart = true
    onRunningChanged: {
      if (running) return
      if (!root.sawStart) {
        root.reason = "`archgate` is not on PATH. Install the archgate package (it puts archgate in /usr/bin), then: omarchy-shell " + root.pluginId + " start"
        root.setStatus("missing")
      }
    }
    onExited: function(exitCode, exitStatus) {
      if (exitCode !== 0) {
        root.reason = "`archgate --version` exited with status " + exitCode
        root.setStatus("failed")
        return
      }
      root.version = String(versionOut.text).trim().replace(/^archgate\s+/, "")
      if (root.wantRunning) daemon.running = true
    }
  }

  // setpriv --pdeathsig: the kernel ends archgate whenever the shell exits, however it exits;
  // an orphan would keep the port and make the next shell's archgate fail to bind.
  // Its environment is the shell's, which the compositor started: the person's session, never an
  // MCP client's. The programs archgate runs get only the session variables of its allowlist
  // (archgate_exec::env::TABLE) from it, with PATH rebuilt from trusted directories.
  Process {
    id: daemon
    command: ["setpriv", "--pdeathsig", "TERM", root.bin, "serve", "--http"]
    stdout: SplitParser {
      onRead: function(line) { root.frame(line) }
    }
    // archgate logs to stderr: forwarded to the shell's journal.
    stderr: SplitParser {
      onRead: function(line) { console.info("archgate: " + line) }
    }
    onStarted: root.pid = daemon.processId
    onExited: function(exitCode, exitStatus) { root.exited(exitCode) }
  }

  FileView {
    id: stateView
    path: root.stateFile
    watchChanges: true
    printErrors: false
    onFileChanged: reload()
    onLoaded: root.readState()
  }

  FileView {
    id: stopFlag
    path: root.stopFlagFile
    blockLoading: true
    printErrors: false
  }

  // The runtime and state directories are archgate's (0700); they may not exist before its
  // first start, and the plugin writes its two files only there.
  Process {
    id: prepareDirs
    command: ["mkdir", "-p", "-m", "0700", root.runtimeDir, root.stateDir]
    onExited: function(exitCode, exitStatus) {
      root.wantRunning = String(stopFlag.text()).trim() !== "stopped"
      if (root.wantRunning) {
        root.launch()
      } else {
        root.reason = "stopped from the plugin; omarchy-shell " + root.pluginId + " start starts it"
        root.setStatus("stopped")
      }
    }
  }

  Timer {
    id: healthTimer
    interval: root.probeIntervalMs
    repeat: true
    running: daemon.running
    onTriggered: {
      root.probe()
      stateView.reload()
    }
  }

  Timer {
    id: probeTimeout
    interval: root.probeTimeoutMs
    onTriggered: if (root.activeProbe) root.activeProbe.abort()
  }

  // A daemon that served for a minute has recovered: the backoff starts over.
  Timer {
    id: stableTimer
    interval: 60000
    onTriggered: if (root.serving) root.restarts = 0
  }

  Timer {
    id: backoff
    onTriggered: if (root.wantRunning) root.launch()
  }

  // SIGTERM first; archgate stops within seconds. SIGKILL after 8 s.
  Timer {
    id: killTimer
    interval: 8000
    onTriggered: if (daemon.running) daemon.signal(9)
  }

  // `omarchy-shell archgate.mcp <function>`; `qs ipc show` lists them with signatures.
  IpcHandler {
    target: "archgate.mcp"

    function status(): string {
      return root.describe()
    }

    function start(): string {
      return root.startDaemon()
    }

    function stop(): string {
      return root.stopDaemon()
    }

    function restart(): string {
      return root.restartDaemon()
    }

    function reloadConfig(): string {
      if (!daemon.running) return "archgate is not running; config.toml applies when it starts"
      daemon.signal(1)
      return "asked archgate (pid " + root.pid + ") to re-read config.toml; `archgate config check` lists problems"
    }

    function clientConfig(client: string): string {
      var known = { "claude-code": true, "claude-desktop": true, "cursor": true, "vscode": true }
      if (known[client] !== true) return "unknown client \"" + client + "\"; one of: claude-code, claude-desktop, cursor, vscode"
      var where = root.port > 0 ? "http://127.0.0.1:" + root.port + "/mcp" : "http://127.0.0.1:<port>/mcp (archgate is " + root.status + ")"
      return "archgate serves MCP at " + where + "\n"
        + "Run: archgate client-config " + client + " --http\n"
        + "It prints the exact " + (client === "claude-code" ? "command" : "JSON") + " with your bearer token (keep it private)."
    }
  }

  Component.onCompleted: prepareDirs.running = true
  Component.onDestruction: {
    root.wantRunning = false
    if (daemon.running) daemon.signal(15)
  }
}
