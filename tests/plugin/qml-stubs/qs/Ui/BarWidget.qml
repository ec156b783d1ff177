import QtQuick

// Omarchy's base for bar widgets: what the bar host injects into each slot.
Item {
    property QtObject bar: null
    property string moduleName: ""
    property var settings: ({})
    readonly property bool vertical: false
    readonly property int barSize: 30
    function setting(name: string, fallback: var): var { return fallback }
}
