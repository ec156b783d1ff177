import QtQuick
import Quickshell
import Quickshell.Io
import qs.Ui

// archgate in the bar, one per monitor: a view of the service. Serving, stopped or failed; the
// number of approvals waiting; developer mode; a config.toml that is not applied. A click opens
// the plugin's panel (start, stop, restart, approvals); without the shell's panel host, the
// approval page.
//
// The widget is built before the service exists (serviceFor is null on the first evaluation at
// every start), so until it resolves the widget reads the state file the service and archgate
// keep in $XDG_RUNTIME_DIR/archgate/state.json. It only reads; it never writes anything.
// No IpcHandler here: widgets are created per monitor, the service owns the IPC target.
BarWidget {
  id: root
  moduleName: "archgate.mcp"

  readonly property var host: bar
  readonly property var service: host && host.shell && typeof host.shell.serviceFor === "function"
    ? host.shell.serviceFor(moduleName) : null

  readonly property string runtimeDir: Quickshell.env("XDG_RUNTIME_DIR")
    ? Quickshell.env("XDG_RUNTIME_DIR") + "/archgate"
    : (Quickshell.env("XDG_STATE_HOME") || (Quickshell.env("HOME") + "/.local/state")) + "/archgate/run"
  property var fileState: ({})

  readonly property string status: service ? service.status : String(fileState.status || "starting")
  readonly property int pending: service ? service.pendingApprovals : (Number(fileState.pending_approvals) || 0)
  readonly property bool devMode: service ? service.developerMode : fileState.developer_mode === true
  readonly property string reason: service ? service.reason : String(fileState.reason || "")
  readonly property bool configOk: service ? service.configOk : fileState.config_ok !== false
  readonly property var configProblems: service ? service.configProblems : []
  readonly property bool logOk: service ? service.logOk : fileState.log_ok !== false
  readonly property bool serving: status === "serving"

  readonly property string label: {
    var t = "AG"
    if (devMode) t += " dev"
    if (pending > 0) t += " " + pending
    if (!configOk) t += " cfg!"
    if (!logOk) t += " log!"
    if (!serving) t += status === "stopped" ? " off" : (status === "starting" ? " …" : " !")
    return t
  }

  readonly property string tooltip: {
    var t = "archgate is stopped"
    if (serving) t = "archgate is serving"
    else if (status === "starting") t = "archgate is starting"
    else if (status === "unresponsive") t = "archgate runs but does not answer"
    else if (status === "missing") t = "archgate is not installed"
    else if (status === "failed") t = "archgate failed"
    if (reason !== "") t += "\n" + reason
    t += "\n" + (pending === 1 ? "1 approval waiting" : pending + " approvals waiting")
    if (devMode) t += "\nDeveloper mode is ON: calls are approved without asking"
    if (!configOk) {
      t += "\nconfig.toml is broken; the previous config stays in force (archgate config check)"
      for (var i = 0; i < configProblems.length && i < 3; i++) t += "\n  " + configProblems[i]
    }
    if (!logOk) t += "\nThe activity log cannot be written: no call is answered until it can (check the disk; archgate doctor)"
    return t + "\nClick: the archgate panel"
  }

  function readFile() {
    try { root.fileState = JSON.parse(stateFile.text()) || ({}) } catch (e) { root.fileState = ({}) }
  }

  function open() {
    if (host && host.shell && typeof host.shell.toggle === "function") host.shell.toggle(moduleName, "")
    else if (root.service) root.service.openApprovals()
    else Quickshell.execDetached(["archgate", "ui"])
  }

  implicitWidth: button.implicitWidth
  implicitHeight: button.implicitHeight

  FileView {
    id: stateFile
    path: root.runtimeDir + "/state.json"
    watchChanges: true
    printErrors: false
    onFileChanged: reload()
    onLoaded: root.readFile()
  }

  WidgetButton {
    id: button
    anchors.fill: parent
    bar: root.bar
    text: root.label
    active: root.pending > 0 || root.devMode || !root.configOk || !root.logOk
    blinking: root.pending > 0
    dimmed: !root.serving
    tooltipText: root.tooltip
    onPressed: function(b) { root.open() }
  }
}
