pragma ComponentBehavior: Bound

import QtQuick
import Quickshell

// The archgate panel, summoned by a click on the widget or `omarchy-shell shell summon
// archgate.mcp '{}'`: whether archgate serves (or why not), the approvals waiting, whether
// config.toml is healthy, and start / stop / restart. A view of the service (handed over by the
// shell as `service`); it runs nothing itself except through the service, and writes nothing.
Item {
  id: root

  // Set by the shell's panel loader.
  property var shell: null
  property var manifest: null
  property var service: null

  property bool opened: false
  property string lastAnswer: ""

  readonly property bool ready: root.service !== null
  readonly property string status: root.ready ? root.service.status : "starting"
  readonly property bool serving: root.status === "serving"
  readonly property int pending: root.ready ? root.service.pendingApprovals : 0
  readonly property bool configOk: root.ready ? root.service.configOk : true
  readonly property var configProblems: root.ready ? root.service.configProblems : []

  readonly property string headline: {
    if (!root.ready) return "archgate: the service is not loaded yet"
    if (root.serving) return "archgate is serving on port " + root.service.port
    if (root.status === "stopped") return "archgate is stopped"
    if (root.status === "starting") return "archgate is starting"
    if (root.status === "unresponsive") return "archgate runs but does not answer"
    if (root.status === "missing") return "archgate is not installed"
    return "archgate failed"
  }

  readonly property string configText: {
    if (root.configOk) return "config.toml: ok"
    var t = "config.toml is not applied; the last good copy stays in force"
    for (var i = 0; i < root.configProblems.length && i < 5; i++) t += "\n  " + root.configProblems[i]
    return t + "\nRun: archgate config check"
  }

  function open(payload) {
    // The service may load after the panel (keepLoaded mounts both at start): ask again.
    if (!root.service && root.shell && typeof root.shell.serviceFor === "function")
      root.service = root.shell.serviceFor("archgate.mcp")
    root.lastAnswer = ""
    root.opened = true
  }

  function close() {
    root.opened = false
  }

  function act(what) {
    if (!root.ready) return
    if (what === "start") root.lastAnswer = root.service.startDaemon()
    else if (what === "stop") root.lastAnswer = root.service.stopDaemon()
    else if (what === "restart") root.lastAnswer = root.service.restartDaemon()
    else if (what === "approvals") root.service.openApprovals()
  }

  FloatingWindow {
    id: window
    visible: root.opened
    title: "archgate"
    implicitWidth: 420
    implicitHeight: column.implicitHeight + 32
    onVisibleChanged: if (!window.visible) root.opened = false

    Rectangle {
      width: window.implicitWidth
      height: window.implicitHeight
      color: "#1e1e2e"
    }

    Column {
      id: column
      x: 16
      y: 16
      width: 388
      spacing: 10

      Text {
        width: column.width
        text: root.headline
        color: root.serving ? "#a6e3a1" : "#f38ba8"
        font.pixelSize: 16
        font.bold: true
        wrapMode: Text.Wrap
      }
      Text {
        width: column.width
        visible: root.ready && root.service.reason !== ""
        text: root.ready ? root.service.reason : ""
        color: "#cdd6f4"
        wrapMode: Text.Wrap
      }
      Text {
        width: column.width
        text: root.pending === 1 ? "1 approval waiting" : root.pending + " approvals waiting"
        color: root.pending > 0 ? "#f9e2af" : "#cdd6f4"
      }
      Text {
        width: column.width
        visible: root.ready && root.service.developerMode
        text: "Developer mode is ON: calls are approved without asking"
        color: "#f9e2af"
        wrapMode: Text.Wrap
      }
      Text {
        width: column.width
        text: root.configText
        color: root.configOk ? "#cdd6f4" : "#f38ba8"
        wrapMode: Text.Wrap
      }
      Row {
        spacing: 8
        Repeater {
          model: [
            { key: "start", label: "Start", enabled: !root.serving },
            { key: "stop", label: "Stop", enabled: root.status !== "stopped" },
            { key: "restart", label: "Restart", enabled: true },
            { key: "approvals", label: "Approvals", enabled: true }
          ]
          delegate: Rectangle {
            id: button
            required property var modelData
            width: label.implicitWidth + 20
            height: label.implicitHeight + 12
            radius: 4
            color: mouse.containsMouse && button.modelData.enabled ? "#45475a" : "#313244"
            opacity: button.modelData.enabled ? 1.0 : 0.5
            Text {
              id: label
              anchors.centerIn: parent
              text: button.modelData.label
              color: "#cdd6f4"
            }
            MouseArea {
              id: mouse
              anchors.fill: parent
              hoverEnabled: true
              enabled: button.modelData.enabled
              onClicked: root.act(button.modelData.key)
            }
          }
        }
      }
      Text {
        width: column.width
        visible: root.lastAnswer !== ""
        text: root.lastAnswer
        color: "#bac2de"
        wrapMode: Text.Wrap
      }
    }
  }
}
