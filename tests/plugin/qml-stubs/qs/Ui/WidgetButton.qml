import QtQuick

// Omarchy's text button for the bar.
Item {
    property var bar: null
    property string text: ""
    property bool active: false
    property bool blinking: false
    property bool dimmed: false
    property string tooltipText: ""
    signal pressed(int button)
}
