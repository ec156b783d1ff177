'''A python-dbusmock template: the notification server Omarchy runs since it replaced mako
(basecamp/omarchy c10159128, "Replace mako with quickshell-backed notification daemon"), as
archgate meets it on the session bus. Quickshell is not packaged here, so this plays it.

Our own text, in the shape of what was read (not copied):
- Quickshell's `NotificationServer` (src/services/notifications/server.cpp, notification.cpp):
  GetServerInformation says ("quickshell", "quickshell", VERSION, "1.2"); GetCapabilities lists
  what Omarchy's Service.qml switches on (persistence, body, body-markup, body-hyperlinks,
  actions, icon-static); ids count up from 1 and are never reused; CloseNotification of a live
  notification emits NotificationClosed(id, 3), of anything else nothing; invoking an action
  emits ActionInvoked(id, action) and then, unless the `resident` hint was set, closes the
  notification as Dismissed (NotificationClosed(id, 2)).
- A notification the shell does not keep (`tracked = false` inside the new-notification handler)
  is closed as Dismissed *before* Notify returns: NotificationClosed(id, 2) reaches the bus ahead
  of the reply. Omarchy's Service.qml does that for everything in do-not-disturb except its own
  "omarchy-action" toasts and critical "notify-send" ones.
- Omarchy's card (Service.qml `invokePopupDefault`): a click invokes the action named "default"
  and dismisses the popup; the card's X dismisses it. No other action is shown on the card.

The test drives the person's side through the `org.archgate.Test.OmarchyShell` interface:
Click(id), CloseButton(id), SetDnd(b), Notified() (every Notify as JSON), Live().
'''

import json

import dbus
import dbus.service

BUS_NAME = 'org.freedesktop.Notifications'
MAIN_OBJ = '/org/freedesktop/Notifications'
MAIN_IFACE = 'org.freedesktop.Notifications'
SYSTEM_BUS = False

SHELL_IFACE = 'org.archgate.Test.OmarchyShell'

EXPIRED, DISMISSED, CLOSE_REQUESTED = 1, 2, 3


def load(mock, parameters):
    mock.next_id = 1
    mock.live = {}
    mock.notified = []
    mock.dnd = False


def _closed(self, nid, reason):
    self.EmitSignal(MAIN_IFACE, 'NotificationClosed', 'uu', [dbus.UInt32(nid), dbus.UInt32(reason)])


@dbus.service.method(MAIN_IFACE, in_signature='', out_signature='ssss')
def GetServerInformation(self):
    return ('quickshell', 'quickshell', '0.2.1', '1.2')


@dbus.service.method(MAIN_IFACE, in_signature='', out_signature='as')
def GetCapabilities(self):
    return ['persistence', 'body', 'body-markup', 'body-hyperlinks', 'actions', 'icon-static']


@dbus.service.method(MAIN_IFACE, in_signature='susssasa{sv}i', out_signature='u')
def Notify(self, app, replaces, icon, summary, body, actions, hints, expire):
    if replaces and replaces in self.live:
        nid = int(replaces)
    else:
        nid = self.next_id
        self.next_id += 1
    record = {
        'id': nid,
        'app': str(app),
        'summary': str(summary),
        'body': str(body),
        'actions': [str(a) for a in actions],
        'hints': {str(k): (bool(v) if isinstance(v, dbus.Boolean) else
                           int(v) if isinstance(v, (dbus.Byte, dbus.Int32, dbus.UInt32)) else str(v))
                  for k, v in hints.items()},
        'expire': int(expire),
    }
    self.notified.append(record)
    urgency = record['hints'].get('urgency', 1)
    bypass = record['app'] == 'omarchy-action' or (record['app'] == 'notify-send' and urgency == 2)
    if self.dnd and not bypass:
        # Untracked in the handler: closed as Dismissed before the reply goes out.
        _closed(self, nid, DISMISSED)
        return dbus.UInt32(nid)
    self.live[nid] = record
    return dbus.UInt32(nid)


@dbus.service.method(MAIN_IFACE, in_signature='u', out_signature='')
def CloseNotification(self, nid):
    if self.live.pop(int(nid), None) is not None:
        _closed(self, nid, CLOSE_REQUESTED)


@dbus.service.method(SHELL_IFACE, in_signature='u', out_signature='b')
def Click(self, nid):
    '''The person clicks the card: the "default" action if it has one, then the popup goes.'''
    record = self.live.get(int(nid))
    if record is None:
        return False
    acts = record['actions']
    if 'default' in acts[0::2]:
        self.EmitSignal(MAIN_IFACE, 'ActionInvoked', 'us', [dbus.UInt32(nid), 'default'])
        if record['hints'].get('resident'):
            return True
    self.live.pop(int(nid), None)
    _closed(self, nid, DISMISSED)
    return True


@dbus.service.method(SHELL_IFACE, in_signature='u', out_signature='b')
def CloseButton(self, nid):
    '''The person presses the card's X.'''
    if self.live.pop(int(nid), None) is None:
        return False
    _closed(self, nid, DISMISSED)
    return True


@dbus.service.method(SHELL_IFACE, in_signature='b', out_signature='')
def SetDnd(self, on):
    self.dnd = bool(on)


@dbus.service.method(SHELL_IFACE, in_signature='', out_signature='s')
def Notified(self):
    return json.dumps(self.notified)


@dbus.service.method(SHELL_IFACE, in_signature='', out_signature='au')
def Live(self):
    return [dbus.UInt32(n) for n in self.live]
