"""Hand-offs against real parts (run by tests/run-handoff.sh as root, in a private mount
namespace with a test user whose sudoers rule needs a password, and a local pacman repository).

The agent is an MCP client over stdio (`archgate serve --in-process`), running as the test user
in a headless Sway session of that user (scripts/desktop-session.sh). The person is played by
`wtype`, the compositor's virtual keyboard, typing into the focused terminal as the same user —
which is exactly what any other program of that user could do, so what protects a hand-off is
sudo's password — and, for the password itself, by this process (root) putting it into the
terminal's input (TIOCSTI), which the virtual keyboard garbled under load. Otherwise this
process only starts things and looks: pacman's database in the test root, the terminal's mode
(through /proc/PID/fd/0), sudo's log, archgate's activity log.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import re
import shutil
import subprocess
import termios
import threading
import time
from pathlib import Path

import pytest

ARCHGATE_BIN = os.environ["ARCHGATE_BIN"]
UID = int(os.environ["HANDOFF_UID"])
GID = int(os.environ["HANDOFF_GID"])
USER = os.environ["HANDOFF_USER"]
PASSWORD = os.environ["HANDOFF_PASSWORD"]
WORK = Path(os.environ["HANDOFF_WORK"])
# run-handoff.sh's stand-in Omarchy, root's alone (a route's script is handed off only then).
OMARCHY = Path(os.environ["HANDOFF_OMARCHY"])
CONF = os.environ["HANDOFF_PACMAN_CONF"]
DB = Path(os.environ["HANDOFF_DB"])
SESSION_SCRIPT = os.environ["HANDOFF_SESSION_SCRIPT"]
PATIENCE = 90.0
SUDO_LOG = WORK / "sudo.log"
SUDOERS = Path("/etc/sudoers.d/archgate-handoff-test")
HOME = WORK / "userhome"


def as_user(**kw):
    return dict(user=UID, group=GID, extra_groups=[], **kw)


def until(what: str, check, patience: float = PATIENCE):
    end = time.monotonic() + patience
    while time.monotonic() < end:
        v = check()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def sudoers(rule: str, tries: int = 1) -> None:
    SUDOERS.write_text(
        f"Defaults:{USER} passwd_tries={tries}, logfile={SUDO_LOG}\n{USER} ALL=(root) {rule}\n"
    )
    SUDOERS.chmod(0o440)


def installed() -> list[str]:
    out = subprocess.run(
        ["pacman", "--config", CONF, "-Qq"], capture_output=True, text=True
    ).stdout
    return sorted(out.split())


def sudo_log() -> str:
    return SUDO_LOG.read_text() if SUDO_LOG.exists() else ""


def sudo_ran() -> str:
    """sudo's log without the helper's probes: each probe (`sudo -n -D /nonexistent/…` of the
    exact command, to see whether sudo asks) is an entry saying "a password is required"."""
    entries = re.split(r"(?m)^(?=\w{3} [ \d]\d \d\d:\d\d:\d\d : )", sudo_log())
    return "".join(e for e in entries if "a password is required" not in e)


def pacman_running() -> bool:
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                # This run's pacman: into its own test root (another run's, or the machine's
                # own, is not ours).
                if ((p / "comm").read_text().strip() == "pacman" and p.stat().st_uid == 0
                        and CONF.encode() in (p / "cmdline").read_bytes()):
                    return True
            except OSError:
                pass
    return False


@pytest.fixture(scope="module")
def session():
    d = WORK / "session"
    d.mkdir()
    os.chown(d, UID, GID)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(HOME)}
    subprocess.run(
        [SESSION_SCRIPT, "start", str(d), str(os.getpid())], check=True, **as_user(env=env, cwd=WORK)
    )
    out = subprocess.run(
        [SESSION_SCRIPT, "env", str(d)], check=True, capture_output=True, text=True, **as_user(env=env, cwd=WORK)
    ).stdout
    senv = {}
    for line in out.splitlines():
        line = line.removeprefix("export ").strip()
        if "=" in line:
            k, v = line.split("=", 1)
            senv[k] = v.strip("'\"")
    yield senv
    subprocess.run([SESSION_SCRIPT, "stop", str(d)], **as_user(env=env, cwd=WORK))


def user_env(senv: dict) -> dict:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(HOME),
        "USER": USER,
        "LOGNAME": USER,
        "XDG_CONFIG_HOME": str(HOME / "config"),
        "XDG_STATE_HOME": str(HOME / "state"),
        "XDG_CACHE_HOME": str(HOME / "cache"),
        "LANG": "C.UTF-8",
        "OMARCHY_PATH": str(OMARCHY),
    }
    for k in ("XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "SWAYSOCK", "DBUS_SESSION_BUS_ADDRESS"):
        if k in senv:
            env[k] = senv[k]
    return env



def ours(argv: list[bytes]) -> bool:
    """Whether a process is this run's: the helper runs this run's copy of archgate (another
    run's tests, at the same time, run theirs)."""
    return bool(argv) and os.path.realpath(argv[0].decode(errors="replace")) == os.path.realpath(ARCHGATE_BIN)

class Agent:
    """An MCP client over stdio: `archgate serve --in-process` as the test user."""

    def __init__(self, env: dict) -> None:
        self.env = env
        self.p = subprocess.Popen(
            [ARCHGATE_BIN, "serve", "--in-process", "--client", "local"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(WORK / "serve.log", "ab"),
            **as_user(env=env, cwd=HOME),
        )
        self.answers: dict[int, queue.Queue] = {}
        self.next = 1
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        r = self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "handoff-test", "version": "1"},
        }).get(timeout=PATIENCE)
        assert "result" in r, r
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        for line in self.p.stdout:
            msg = json.loads(line)
            if "id" in msg and msg["id"] in self.answers:
                self.answers[msg["id"]].put(msg)

    def _send(self, msg: dict) -> None:
        with self.lock:
            self.p.stdin.write((json.dumps(msg) + "\n").encode())
            self.p.stdin.flush()

    def request(self, method: str, params: dict) -> queue.Queue:
        q: queue.Queue = queue.Queue()
        with self.lock:
            i = self.next
            self.next += 1
            self.answers[i] = q
        self._send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        return q

    def handoff(self, packages: list[str], reason: str = "the person asked for it") -> queue.Queue:
        return self.request("tools/call", {
            "name": "handoff",
            "arguments": {"op": "install", "packages": packages, "reason": reason},
        })

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=30)


def result(q: queue.Queue) -> dict:
    """A call's answer: its structured content, or for a refusal the refusal (kind, message,
    details) with `error` set."""
    msg = q.get(timeout=PATIENCE)
    r = msg["result"]
    sc = r.get("structuredContent") or {}
    if r.get("isError"):
        return {**sc.get("error", {}), "error": True}
    return {**sc, "error": False}


@pytest.fixture(scope="module")
def agent(session):
    env = user_env(session)
    cfg = HOME / "config" / "archgate"
    for d in (HOME / "config", cfg, HOME / "state", HOME / "cache"):
        d.mkdir(parents=True, exist_ok=True)
        os.chown(d, UID, GID)
        d.chmod(0o700)
    conf = cfg / "config.toml"
    conf.write_text(
        f'[arch]\npacman_conf = "{CONF}"\n\n[policy]\nallow = ["handoff install", "handoff install_file", "handoff pacnew discard", "handoff omarchy pkg add", "handoff omarchy refresh marker"]\n\n'
        '[approval]\npage = false\nnotifications = false\n\n[tools]\ntimeouts = { handoff = 120 }\n'
    )
    os.chown(conf, UID, GID)
    conf.chmod(0o600)
    sudoers("/usr/bin/pacman")
    a = Agent(env)
    yield a
    a.close()


def our_helpers() -> list[int]:
    """The pids of this run's hand-off helpers (`archgate handoff-run`) still running."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            argv = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) > 2 and argv[1] == b"handoff-run" and ours(argv):
            found.append(int(p.name))
    return found


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


@pytest.fixture(autouse=True)
def no_terminal_left_behind():
    """A test that fails before it closes its hand-off's terminal must not fail every later one
    ("another hand-off's terminal is open", CI on 52c0df0: one test's rejected password left its
    terminal, and the twenty after it were refused). After each test, a helper of this run still
    running is ended with its terminal — by pid, never by name; a test that passed has closed its
    own, so this ends only what a failure left."""
    yield
    for pid in our_helpers():
        try:
            terminal = parent_of(pid)
            exe = os.path.basename(os.readlink(f"/proc/{terminal}/exe"))
        except OSError:
            continue
        for victim in ([terminal] if exe == "foot" else []) + [pid]:
            try:
                os.kill(victim, 15)
            except ProcessLookupError:
                pass
        until("a left terminal to close", lambda: not Path(f"/proc/{pid}").exists())


class Person:
    """Looks at the hand-off's terminal and types into it with wtype, as the test user."""

    def __init__(self, env: dict) -> None:
        self.env = env

    def helper(self, q: queue.Queue | None = None) -> int:
        def find():
            if q is not None and not q.empty():
                raise AssertionError(f"the call answered before a terminal opened: {q.queue[0]}")
            helpers = our_helpers()
            return helpers[0] if helpers else None

        return until("the hand-off's terminal and helper", find)

    def lflag(self, pid: int) -> int:
        fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            return termios.tcgetattr(fd)[3]
        finally:
            os.close(fd)

    def focused(self, pid: int) -> bool:
        """Whether the helper's terminal window (foot: its parent, or an ancestor when a
        program such as `script` stands between) has the keyboard's focus."""
        ancestors = set()
        p = pid
        for _ in range(4):
            if p <= 1:
                break
            stat = Path(f"/proc/{p}/stat").read_text()
            p = int(stat[stat.rindex(")") + 2 :].split()[1])
            ancestors.add(p)
        tree = subprocess.run(
            ["swaymsg", "-s", self.env["SWAYSOCK"], "-t", "get_tree", "-r"],
            capture_output=True, text=True, **as_user(env=self.env, cwd=HOME),
        ).stdout

        def walk(n):
            if n.get("focused") and n.get("pid") in ancestors:
                return True
            return any(walk(c) for c in n.get("nodes", []) + n.get("floating_nodes", []))

        return bool(tree) and walk(json.loads(tree))

    def wait_prompt(self, pid: int) -> None:
        """The helper waits for one key (its terminal in raw mode), in the focused window."""
        until("the helper's prompt", lambda: not self.lflag(pid) & termios.ICANON)
        until("the terminal to have the focus", lambda: self.focused(pid))

    def wait_password_prompt(self, pid: int) -> None:
        """sudo reads a password: line mode without echo."""
        until(
            "sudo's password prompt",
            lambda: (lambda f: f & termios.ICANON and not f & termios.ECHO)(self.lflag(pid)),
        )

    def answer_prompt(self, pid: int, key: str) -> None:
        """Presses `key` at the helper's prompt. A key sent just as the virtual keyboard's keymap
        changes can be lost on its way (seen here once in a few runs), so it is pressed again
        while the helper still waits for one — never after it read one."""
        def read_one() -> bool:
            # The helper left raw mode, or ended (`archgate handoff` does not linger).
            try:
                return bool(self.lflag(pid) & termios.ICANON)
            except OSError:
                return True

        end = time.monotonic() + PATIENCE
        while not read_one():
            assert time.monotonic() < end, f"the helper never read {key}"
            self.type("-k", key)
            for _ in range(20):
                if read_one():
                    return
                time.sleep(0.1)

    def type_at_terminal(self, pid: int, text: str) -> None:
        """`text` as input of the helper's terminal itself (TIOCSTI on its tty, as root)."""
        fd = os.open(f"/proc/{pid}/fd/0", os.O_RDWR | os.O_NOCTTY)
        try:
            for b in text.encode():
                fcntl.ioctl(fd, termios.TIOCSTI, bytes([b]))
        finally:
            os.close(fd)

    def type(self, *args: str) -> None:
        # A pause between keystrokes: typed at once, a repeated character was seen lost.
        subprocess.run(["wtype", "-d", "15", *args], check=True, **as_user(env=self.env, cwd=HOME))

    def close_terminal(self, pid: int) -> None:
        """The terminal stays until the person closes it: a key ends the helper."""
        def gone() -> bool:
            return not Path(f"/proc/{pid}").exists()

        until("the helper to linger", lambda: gone() or self.lflag(pid) & termios.ICANON)
        until("the terminal to have the focus", lambda: gone() or self.focused(pid))
        # A terminal that has just opened may not have the keyboard's focus yet: type again
        # until the helper has read a key.
        end = time.monotonic() + PATIENCE
        while Path(f"/proc/{pid}").exists():
            assert time.monotonic() < end, "timed out waiting for the terminal to close"
            self.type("-k", "Return")
            for _ in range(20):
                if not Path(f"/proc/{pid}").exists():
                    break
                time.sleep(0.1)


@pytest.fixture(scope="module")
def person(session):
    return Person(user_env(session))


def test_nothing_runs_before_enter_and_escape_cancels(agent, person):
    q = agent.handoff(["handoff-hello"])
    pid = person.helper()
    person.wait_prompt(pid)
    assert q.empty(), "the call answered before the person did anything"
    assert installed() == []
    assert "pacman" not in sudo_ran()
    person.answer_prompt(pid, "Escape")
    r = result(q)
    assert r["error"] and r["kind"] == "cancelled", r
    assert installed() == []
    person.close_terminal(pid)


def test_an_enter_from_another_program_reaches_only_sudos_prompt_and_a_wrong_password_runs_nothing(agent, person):
    q = agent.handoff(["handoff-hello"])
    pid = person.helper()
    person.wait_prompt(pid)
    # Any program of the user can type Enter into the focused window: it reaches sudo's prompt.
    person.answer_prompt(pid, "Return")
    person.wait_password_prompt(pid)
    assert not pacman_running() and installed() == []
    person.type("not-the-password", "-k", "Return")
    r = result(q)
    assert r["error"] and r["kind"] == "command_failed", r
    assert r["details"]["outcome"] == "ran" and r["details"]["exit_code"] != 0, r
    assert installed() == []
    assert "incorrect password" in sudo_log()
    person.close_terminal(pid)


def test_the_agents_own_means_cannot_confirm_and_a_second_hand_off_is_busy(agent, person):
    q = agent.handoff(["handoff-hello"])
    pid = person.helper()
    person.wait_prompt(pid)
    hid = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[2].decode()
    env = agent.env
    # The agent's shell: `archgate approve` knows no such question; `archgate handoff` finds it
    # taken by the terminal (and has no terminal of its own).
    ap = subprocess.run([ARCHGATE_BIN, "approve", hid], capture_output=True, text=True,
                        stdin=subprocess.DEVNULL, **as_user(env=env, cwd=HOME))
    assert ap.returncode != 0, ap
    ho = subprocess.run([ARCHGATE_BIN, "handoff", hid], capture_output=True, text=True,
                        stdin=subprocess.DEVNULL, **as_user(env=env, cwd=HOME), timeout=60)
    # Only the terminal archgate opened (its descendants) may claim it (attack 5b, F2).
    assert ho.returncode != 0 and "only in the terminal archgate opened" in ho.stdout, ho
    # A second hand-off while one waits: refused at once, naming the first.
    second = result(agent.handoff(["handoff-other"]))
    assert second["error"] and second["kind"] == "busy" and hid in second["message"], second
    assert q.empty() and installed() == []
    person.answer_prompt(pid, "Escape")
    assert result(q)["kind"] == "cancelled"
    person.close_terminal(pid)


def confirm_with_password(person: Person, q: queue.Queue, pacman_asks: bool) -> int:
    """The person presses Enter in the hand-off's terminal, types their password for sudo and,
    when pacman asks its question, answers it. The helper's pid."""
    pid = person.helper(q)
    person.wait_prompt(pid)
    person.answer_prompt(pid, "Return")
    # The person types their password at the terminal: as the terminal's own input (TIOCSTI on
    # its tty, which only root may do to another's terminal), not through the compositor's
    # virtual keyboard — under load that one delivered whole passwords wrong five tries running
    # (CI, twice: sudo's `exit 1` after ~24 s), a keymap taken for the last `wtype`'s. What any
    # program of the user can type is the Enter tests above, through the virtual keyboard. As a
    # person may, they type it again if sudo says it was wrong.
    end = time.monotonic() + PATIENCE
    while not (pacman_asks and pacman_running()) and q.empty():
        assert time.monotonic() < end, "sudo never took the password"
        person.wait_password_prompt(pid)
        person.type_at_terminal(pid, PASSWORD + "\n")
        for _ in range(50):
            if (pacman_asks and pacman_running()) or not q.empty():
                break
            time.sleep(0.1)
    # pacman discards what was typed before its question shows: Return until it has answered.
    end = time.monotonic() + PATIENCE
    while pacman_asks and q.empty():
        assert time.monotonic() < end, "pacman never took the answer"
        if pacman_running():
            person.type("-k", "Return")
        time.sleep(2)
    return pid


def test_the_right_password_installs_exactly_the_planned_packages_and_the_record_holds_the_command(agent, person):
    sudoers("/usr/bin/pacman", tries=5)
    q = agent.handoff(["handoff-hello"], reason="install \x1b[2Jhello for the person")
    pid = confirm_with_password(person, q, pacman_asks=False)
    r = result(q)
    # sudo's own log says why, when it did not run (the answer's tail redacts its words).
    assert not r["error"], (r, sudo_log()[-1500:])
    assert r["outcome"] == "ran" and r["exit_code"] == 0 and r["channel"] == "terminal", r
    assert r["verified"] is True, r
    # sudo and pacman by the absolute paths checked; pacman asks nothing more (F1, F13).
    assert r["command"] == ["/usr/bin/sudo", "-k", "--", "/usr/bin/pacman", "--config", CONF, "--noconfirm",
                            "-S", "--", "handoff-hello"]
    assert installed() == ["handoff-hello"]
    log = (HOME / "state" / "archgate" / "activity.jsonl").read_text().splitlines()
    events = [json.loads(l) for l in log if '"handoff"' in l]
    ran = [e for e in events if e.get("event") == "handoff" and e.get("outcome") == "ran" and e.get("exit_code") == 0]
    assert len(ran) == 1, events
    assert ran[0]["command"] == r["command"] and ran[0]["channel"] == "terminal" and ran[0]["verified"] is True
    sudoers("/usr/bin/pacman")
    calls = [e for e in events if e.get("tool") == "handoff" and e.get("outcome") == "ok"]
    assert len(calls) == 1 and "/usr/bin/pacman" in calls[0]["target"], calls
    person.close_terminal(pid)


def test_a_cached_package_file_is_installed_with_pacman_u_and_one_outside_the_cache_is_refused(agent, person):
    pkg = next((WORK / "repo").glob("handoff-other-*.pkg.tar.zst"))
    outside = result(agent.request("tools/call", {"name": "handoff", "arguments": {
        "op": "install_file", "path": str(pkg), "reason": "a downgrade"}}))
    assert outside["error"] and outside["kind"] == "invalid_target", outside
    cached = DB.parent / "cache" / pkg.name
    cached.write_bytes(pkg.read_bytes())
    sudoers("/usr/bin/pacman", tries=5)
    try:
        q = agent.request("tools/call", {"name": "handoff", "arguments": {
            "op": "install_file", "path": str(cached), "reason": "the cached version"}})
        pid = confirm_with_password(person, q, pacman_asks=False)
        r = result(q)
        assert not r["error"] and r["exit_code"] == 0, (r, sudo_log()[-1500:])
        assert r["command"][-4:] == ["--noconfirm", "-U", "--", str(cached)], r
        assert installed() == ["handoff-hello", "handoff-other"]
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")


def test_a_waiting_pacnew_is_discarded_and_a_file_that_is_none_is_refused(agent, person):
    etc = DB.parent / "root" / "etc"
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "handoff.conf").write_text("mine\n")
    pacnew = etc / "handoff.conf.pacnew"
    pacnew.write_text("theirs\n")
    other = etc / "passwd"
    other.write_text("x\n")
    refused = result(agent.request("tools/call", {"name": "handoff", "arguments": {
        "op": "pacnew_discard", "path": str(other), "reason": "cleanup"}}))
    assert refused["error"] and refused["kind"] == "invalid_argument", refused
    sudoers("/usr/bin/pacman, /usr/bin/rm, /usr/bin/mv", tries=5)
    try:
        q = agent.request("tools/call", {"name": "handoff", "arguments": {
            "op": "pacnew_discard", "path": str(pacnew), "reason": "the person keeps their file"}})
        pid = confirm_with_password(person, q, pacman_asks=False)
        r = result(q)
        assert not r["error"] and r["exit_code"] == 0, r
        assert r["command"] == ["/usr/bin/sudo", "-k", "--", "/usr/bin/rm", "-f", "--", str(pacnew)], r
        assert not pacnew.exists() and (etc / "handoff.conf").read_text() == "mine\n"
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")


def test_pacmans_lock_held_refuses_before_enter(agent, person):
    lock = DB / "db.lck"
    lock.write_text("")
    before = installed()
    try:
        q = agent.handoff(["handoff-other"])
        pid = person.helper()
        r = result(q)
        assert r["error"] and r["kind"] == "refused" and "db.lck" in r["message"], r
        assert installed() == before
        person.close_terminal(pid)
    finally:
        lock.unlink()


def test_a_nopasswd_rule_refuses_the_hand_off(agent, person):
    sudoers("NOPASSWD: /usr/bin/pacman")
    before = installed()
    try:
        q = agent.handoff(["handoff-other"])
        pid = person.helper()
        r = result(q)
        assert r["error"] and r["kind"] == "refused" and "NOPASSWD" in r["message"], r
        assert installed() == before
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")


def test_a_pam_line_that_lets_sudo_through_without_a_password_refuses_the_hand_off(agent, person):
    # sudoers still says "a password is required" (sudo -n's probes); PAM then decides. A line
    # that grants on a condition alone (here pam_succeed_if on the user's name, as the
    # passwordless recipes do with a group) lets a keystroke run pacman as root: refused, and
    # the answer names the line (attack 11 F4).
    pam = Path("/etc/pam.d/sudo")
    original = pam.read_text()
    before, ran_before = installed(), sudo_ran()
    try:
        pam.write_text(f"auth sufficient pam_succeed_if.so user = {USER}\n{original}")
        q = agent.handoff(["handoff-other"])
        pid = person.helper()
        r = result(q)
        assert r["error"] and r["kind"] == "refused", r
        assert "pam_succeed_if" in r["message"] and "/etc/pam.d/sudo:1" in r["message"], r
        assert installed() == before
        assert sudo_ran() == ran_before
        person.close_terminal(pid)
    finally:
        pam.write_text(original)


# sudo's PAM files spelled so that libpam, not a simpler reader, lets sudo through with no
# password (attack 16 F1: a `\` then a blank, `\#`, two `default=`, a typo'd type between a
# jump and its target, a bracketed argument, CRLF), a key module's argument that grants (F2:
# pam_u2f `alwaysok`, libpam-u2f installed on the CI machine), and a one-time code whose secret
# is in the person's home (F6: pam_google_authenticator's default `~/.google_authenticator`).
# Each was a way through for the agent's own Enter with this machine's sudo and Linux-PAM.
LIBPAM_SPELLINGS = {
    "backslash_then_blank": "auth optional pam_permit.so \\ \nauth required pam_unix.so\n",
    "backslash_hash": "auth optional pam_env.so \\#\nauth sufficient pam_permit.so\nauth required pam_unix.so\n",
    "two_defaults": "auth required pam_permit.so\nauth [default=ignore default=bad] pam_unix.so\n",
    "typo_type_in_a_jump": (f"auth [success=1 default=2] pam_succeed_if.so user = {USER}\naut required pam_deny.so\n"
                            "auth sufficient pam_permit.so\nauth requisite pam_deny.so\nauth required pam_unix.so\n"),
    "bracketed_argument": f"auth sufficient pam_wheel.so [trust] use_uid group={USER}\nauth required pam_unix.so\n",
    "crlf": "auth optional pam_env.so \\\r\nauth sufficient pam_permit.so x\r\nauth required pam_unix.so nullok\r\n",
    "u2f_alwaysok": "auth sufficient pam_u2f.so cue alwaysok authfile=/etc/pam.d/sudo\nauth required pam_unix.so\n",
    "google_authenticator_secret_in_home": "auth sufficient pam_google_authenticator.so\nauth required pam_unix.so\n",
}


@pytest.mark.parametrize("spelling", sorted(LIBPAM_SPELLINGS))
def test_sudos_pam_file_is_judged_as_libpam_reads_it_and_a_way_through_refuses(agent, person, spelling):
    pam = Path("/etc/pam.d/sudo")
    original = pam.read_text()
    before, ran_before = installed(), sudo_ran()
    try:
        pam.write_text(LIBPAM_SPELLINGS[spelling] + "account required pam_permit.so\nsession required pam_permit.so\n")
        q = agent.handoff(["handoff-other"])
        pid = person.helper()
        r = result(q)
        assert r["error"] and r["kind"] == "refused", r
        assert "/etc/pam.d/sudo:" in r["message"], r
        assert installed() == before
        assert sudo_ran() == ran_before
        person.close_terminal(pid)
    finally:
        pam.write_text(original)


@pytest.mark.parametrize("deciding", ["pam_service=chfn", "rootpw", "targetpw"])
def test_sudoers_defaults_that_change_whose_password_or_which_pam_stack_refuse_where_sudo_shows_them(agent, person, deciding):
    # Attack 16 F3/F3b: `pam_service` makes sudo authenticate through another PAM file than
    # the one archgate judges; `rootpw`/`targetpw` make it ask root's password, whose status
    # the person cannot read (root's may be empty). sudo's listing shows them when it lists
    # without a password (`listpw=never` here): refused, naming the default.
    before, ran_before = installed(), sudo_ran()
    SUDOERS.write_text(
        f"Defaults:{USER} passwd_tries=1, logfile={SUDO_LOG}, listpw=never, {deciding}\n"
        f"{USER} ALL=(root) /usr/bin/pacman\n")
    SUDOERS.chmod(0o440)
    try:
        q = agent.handoff(["handoff-other"])
        pid = person.helper()
        r = result(q)
        assert r["error"] and r["kind"] == "refused", r
        assert deciding in r["message"], r
        assert installed() == before
        assert sudo_ran() == ran_before
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")


def test_a_terminal_closed_mid_run_is_unknown_with_how_to_check(agent, person):
    sudoers("/usr/bin/pacman", tries=5)
    before = installed()
    try:
        q = agent.handoff(["handoff-hello"], reason="reinstall")
        pid = person.helper(q)
        person.wait_prompt(pid)
        person.answer_prompt(pid, "Return")
        person.wait_password_prompt(pid)
        # The person closes the window while sudo waits: the helper had said the command started.
        subprocess.run(["swaymsg", "-s", person.env["SWAYSOCK"], "kill"], check=True,
                       capture_output=True, **as_user(env=person.env, cwd=HOME))
        r = result(q)
        assert r["error"] and r["kind"] == "outcome_unknown", r
        assert "pacman.log" in r["message"] and "db.lck" in r["message"], r
        assert installed() == before
        until("the terminal to go", lambda: not Path(f"/proc/{pid}").exists())
    finally:
        sudoers("/usr/bin/pacman")


def test_without_a_desktop_the_answer_gives_the_command_and_archgate_handoff_runs_it(agent, person, session):
    # An ssh session of the same person: no Wayland display, a runtime directory without the
    # desktop's sockets.
    run = HOME / "headless-run"
    run.mkdir(exist_ok=True)
    os.chown(run, UID, GID)
    run.chmod(0o700)
    env = {k: v for k, v in user_env(session).items() if k not in ("WAYLAND_DISPLAY", "DISPLAY", "SWAYSOCK")}
    env["XDG_RUNTIME_DIR"] = str(run)
    headless = Agent(env)
    try:
        r = result(headless.handoff(["handoff-other"], reason="from ssh"))
        assert r["error"] and r["kind"] == "not_available", r
        hid = r["details"]["id"]
        assert r["details"]["run_in_own_terminal"] == f"archgate handoff {hid}", r
        assert r["details"]["command"][:4] == ["/usr/bin/sudo", "-k", "--", "/usr/bin/pacman"], r
        # The person, in a terminal of their own, runs it: the same helper, the same question
        # (what the terminal shows kept by `script`).
        screen = HOME / "own-terminal.typescript"
        own = subprocess.Popen(["foot", "script", "-q", "-c",
                                f"env XDG_RUNTIME_DIR={run} {ARCHGATE_BIN} handoff {hid}", str(screen)],
                               **as_user(env=person.env, cwd=HOME))
        try:
            def helper():
                for p in Path("/proc").iterdir():
                    try:
                        argv = (p / "cmdline").read_bytes().split(b"\0")
                    except OSError:
                        continue
                    if len(argv) > 2 and argv[1] == b"handoff" and argv[2] == hid.encode():
                        return int(p.name)
                return None

            pid = until("archgate handoff in the person's terminal", helper)
            person.wait_prompt(pid)
            person.answer_prompt(pid, "Escape")
            until("the helper to end", lambda: not Path(f"/proc/{pid}").exists())
        finally:
            own.wait(timeout=PATIENCE)
        log = (HOME / "state" / "archgate" / "activity.jsonl").read_text().splitlines()
        ev = [json.loads(l) for l in log if '"event":"handoff"' in l.replace(" ", "")]
        mine = [e for e in ev if e.get("id") == hid]
        assert len(mine) == 1 and mine[0]["channel"] == "own_terminal", ev
        # archgate did not see who answered outside its terminal: not the person's, verified.
        assert mine[0]["verified"] is False, mine
        assert mine[0]["outcome"] == "cancelled", mine
        # What it changes is the transaction the helper computed itself from the sync databases
        # (attack 9 F4: the helper's own command showed only "the dependencies pacman pulls in").
        shown = screen.read_text(errors="replace")
        assert "What it changes: installs handoff-other 1.0-1" in shown, shown
    finally:
        headless.close()


def test_doctor_says_whether_a_hand_off_can_open_a_terminal_here_and_which(agent, session):
    def doctor(env: dict) -> str:
        r = subprocess.run([ARCHGATE_BIN, "doctor"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, **as_user(env=env, cwd=HOME), timeout=120)
        line = [l for l in r.stdout.splitlines() if "hand-offs" in l]
        assert line, r.stdout
        return "\n".join(line)

    # Omarchy's launcher (run-handoff.sh's stand-in) is not among root's own directories, where a
    # hand-off takes the terminal that shows the password prompt from (attack 5b F1): Sway's
    # configured `$term`, read from the config the real Sway loaded (`set $term foot`,
    # desktop-session.sh), by its absolute path.
    said = doctor(user_env(session))
    assert "opens foot (/usr/bin/foot)" in said and "$term" in said, said
    # What the person's account cannot see of sudoers is said (attack 16 F3, F3b).
    assert "pam_service" in said and "rootpw" in said and "root's password is empty" in said, said
    assert "omarchy-launch-terminal" not in said, said
    # An Omarchy route that needs root: archgate's asking sudo, linked to this archgate
    # (run-handoff.sh installs it as the package does).
    assert "ok       route hand-offs" in said and "/usr/lib/archgate/sudo-asks/sudo" in said, said
    env = {k: v for k, v in user_env(session).items() if k not in ("WAYLAND_DISPLAY", "DISPLAY")}
    # The runtime directory still holds the Wayland socket, which doctor finds: say so when it
    # is gone too.
    env["XDG_RUNTIME_DIR"] = str(HOME)
    assert "no desktop session" in doctor(env)


def route_handoff(agent: Agent, route: str, args: list[str], reason: str = "the person asked for it") -> queue.Queue:
    return agent.request("tools/call", {"name": "handoff", "arguments": {
        "op": "omarchy", "route": route, "args": args, "reason": reason}})


def test_an_omarchy_route_that_needs_root_runs_its_own_script_after_enter_and_sudo_inside_asks_the_password(agent, person):
    script = str(OMARCHY / "bin" / "omarchy-pkg-add")
    sudoers("/usr/bin/pacman", tries=5)
    try:
        q = route_handoff(agent, "pkg add", ["handoff-route"])
        pid = person.helper(q)
        person.wait_prompt(pid)
        # Before Enter: nothing ran, sudo was not even asked.
        assert "handoff-route" not in installed() and "handoff-route" not in sudo_log()
        pid = confirm_with_password(person, q, pacman_asks=False)
        r = result(q)
        assert not r["error"], r
        assert r["outcome"] == "ran" and r["exit_code"] == 0 and r["channel"] == "terminal", r
        # The command shown and run: the route's own script, by its path, with its argument.
        assert r["command"] == [script, "handoff-route"], r
        assert "handoff-route" in installed()
        # sudo ran pacman inside the script, on the person's password.
        assert "COMMAND=/usr/bin/pacman" in sudo_log() and "handoff-route" in sudo_log()
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")


def test_a_routes_script_acts_for_the_persons_account_whatever_the_client_says(agent, person):
    # Attack 7 F1: Omarchy's sudo scripts put $USER into root's commands (`usermod -aG input
    # "$USER"`); a client that starts archgate with USER=someone-else must not choose it.
    other = Agent({**agent.env, "USER": "handoff-intruder", "LOGNAME": "handoff-intruder"})
    sudoers("/usr/bin/pacman", tries=5)
    try:
        q = route_handoff(other, "pkg add", ["handoff-route"])
        pid = confirm_with_password(person, q, pacman_asks=False)
        r = result(q)
        assert not r["error"] and r["outcome"] == "ran" and r["exit_code"] == 0, r
        # The account is the user database's; the home is no one's (attack 11 F2: the person's
        # hooks and configuration are the agent's to write, and would run where they type
        # their password).
        assert f"route-env USER={USER} LOGNAME={USER} HOME=/nonexistent" in r["output_tail"], r
        assert "intruder" not in r["output_tail"], r
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")
        other.close()


def test_the_persons_hook_is_never_run_by_a_routes_script_and_no_credential_is_left(agent, person):
    # Attack 8 F3, F4 and attack 11 F2: the route's script runs the person's hook after its
    # first sudo; the hook is the agent's to write. Its sudo -n found sudo's credential for the
    # terminal (F3), a global timestamp served the agent's shell (F4), and, with the asking sudo,
    # the hook printed the asking sudo's line for the next step and asked the password for its
    # own command (attack 11 F2). The script now runs with a home that is no one's: the hook is
    # not found, and nothing of the password is left for anyone.
    marker = Path(os.environ["HANDOFF_MARKER"])
    hooks = HOME / ".config" / "omarchy" / "hooks"
    proof = HOME / "hook-proof"
    agent_shell = as_user(env=agent.env, cwd=HOME)
    subprocess.run(["mkdir", "-p", str(hooks)], check=True, **agent_shell)
    hook = hooks / "post-refresh-marker"
    subprocess.run(["tee", str(hook)], input=(
        f'echo "hook uid=$(id -u)" > {proof}\n'
        f'sudo -n /usr/bin/id -u >> {proof} 2>&1; echo "by-name=$?" >> {proof}\n'
        f'/usr/bin/sudo -n /usr/bin/id -u >> {proof} 2>&1; echo "by-path=$?" >> {proof}\n'
    ), text=True, capture_output=True, check=True, **agent_shell)
    SUDOERS.write_text(f"Defaults:{USER} passwd_tries=5, logfile={SUDO_LOG}, timestamp_type=global\n"
                       f"{USER} ALL=(root) ALL\n")
    SUDOERS.chmod(0o440)
    try:
        q = route_handoff(agent, "refresh marker", [])
        pid = confirm_with_password(person, q, pacman_asks=False)
        r = result(q)
        assert not r["error"] and r["outcome"] == "ran" and r["exit_code"] == 0, r
        assert marker.read_text() == "written by the route\n"
        assert not proof.exists(), proof.read_text()
        assert "COMMAND=/usr/bin/id" not in sudo_ran(), sudo_ran()
        # Nothing of the password stays for the agent: sudo asks again outside the terminal.
        again = subprocess.run(["/usr/bin/setsid", "--wait", "/usr/bin/sudo", "-n", "-v"],
                               capture_output=True, text=True, stdin=subprocess.DEVNULL,
                               **agent_shell, timeout=PATIENCE)
        assert again.returncode != 0 and "a password is required" in again.stderr, again
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")
        hook.unlink(missing_ok=True)
        marker.unlink(missing_ok=True)


def test_a_route_is_refused_where_sudo_would_not_ask_for_a_program_its_script_gives_it(agent, person):
    # Attack 7 F6: sudo's listing hides a command's own `Defaults!CMD !authenticate`; the
    # route's `sudo tee` wrote root's file on an Enter alone. Each program is asked about.
    marker = Path(os.environ["HANDOFF_MARKER"])
    SUDOERS.write_text(f"Defaults:{USER} logfile={SUDO_LOG}\nDefaults!/usr/bin/tee !authenticate\n"
                       f"{USER} ALL=(root) /usr/bin/pacman, /usr/bin/tee\n")
    SUDOERS.chmod(0o440)
    try:
        q = route_handoff(agent, "refresh marker", [])
        pid = person.helper()
        r = result(q)
        assert r["error"] and r["kind"] == "refused" and "/usr/bin/tee" in r["message"], r
        assert "would not ask" in r["message"], r
        assert not marker.exists()
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")


def test_a_nopasswd_rule_for_a_program_the_script_gives_sudo_refuses_the_route_and_one_for_another_does_not(agent, person):
    # The script's sudo programs are all named (pkg add gives sudo pacman): a NOPASSWD entry for
    # pacman refuses it; one for another command (Omarchy 4 ships `%wheel … NOPASSWD:
    # /usr/bin/tzupdate, …`, which refused every route) leaves pacman asking.
    sudoers("/usr/bin/pacman, NOPASSWD: /usr/bin/true", tries=5)
    try:
        q = route_handoff(agent, "pkg add", ["handoff-route"])
        pid = confirm_with_password(person, q, pacman_asks=False)
        r = result(q)
        assert not r["error"] and r["outcome"] == "ran" and r["exit_code"] == 0, r
        person.close_terminal(pid)
        sudoers("NOPASSWD: /usr/bin/pacman")
        before = installed()
        q = route_handoff(agent, "pkg add", ["handoff-other"])
        pid = person.helper()
        r = result(q)
        assert r["error"] and r["kind"] == "refused" and "NOPASSWD" in r["message"], r
        assert installed() == before
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")


# ---- attack 5b: what crosses privilege, who may claim, how many at once, what sudo does ----

def helper_id(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[2].decode()


def no_helper_running() -> bool:
    for p in Path("/proc").iterdir():
        try:
            argv = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"handoff-run" in argv and ours(argv):
            return False
    return True


def agent_with_config(session, name: str, pacman_conf: str, allow: tuple = ("handoff install",), **env) -> Agent:
    """Another stdio server of the same person, with its own config file."""
    root = HOME / name
    cfg = root / "archgate"
    cfg.mkdir(parents=True, exist_ok=True)
    for d in (root, cfg):
        os.chown(d, UID, GID)
        d.chmod(0o700)
    conf = cfg / "config.toml"
    conf.write_text(
        f'[arch]\npacman_conf = "{pacman_conf}"\n\n[policy]\nallow = {json.dumps(list(allow))}\n\n'
        '[approval]\npage = false\nnotifications = false\n\n[tools]\ntimeouts = { handoff = 120 }\n'
    )
    os.chown(conf, UID, GID)
    conf.chmod(0o600)
    return Agent({**user_env(session), "XDG_CONFIG_HOME": str(root), **env})


def test_sudo_pacman_and_the_terminal_are_roots_whatever_the_agent_plants_in_omarchy_path(person, session):
    # F1: a git install of Omarchy is the person's; the agent (same uid) plants programs in it.
    om = HOME / ".local" / "share" / "omarchy"
    bindir = om / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    for d in (HOME / ".local", HOME / ".local" / "share", om, bindir):
        os.chown(d, UID, GID)
    real = {"sudo": "/usr/bin/sudo", "pacman": "/usr/bin/pacman", "foot": "/usr/bin/foot",
            "xdg-terminal-exec": "/usr/bin/foot"}
    for name, target in real.items():
        f = bindir / name
        f.write_text(f'#!/bin/sh\ntouch "{HOME}/PLANTED-{name}"\nexec {target} "$@"\n')
        f.chmod(0o755)
        os.chown(f, UID, GID)
    a = Agent({**user_env(session), "OMARCHY_PATH": str(om)})
    try:
        q = a.handoff(["handoff-other"])
        pid = person.helper(q)
        person.wait_prompt(pid)
        assert os.readlink(f"/proc/{parent_of(pid)}/exe") == "/usr/bin/foot"
        person.answer_prompt(pid, "Escape")
        r = result(q)
        assert r["error"] and r["kind"] == "cancelled", r
        assert r["details"]["command"][:4] == ["/usr/bin/sudo", "-k", "--", "/usr/bin/pacman"], r
        assert sorted(p.name for p in HOME.glob("PLANTED-*")) == []
        person.close_terminal(pid)
    finally:
        a.close()


def test_a_pacman_conf_the_person_can_write_refuses_the_hand_off(session):
    # F4: pacman's configuration decides what runs as root (XferCommand, hooks, repositories).
    theirs = HOME / "f4-own"
    theirs.mkdir(exist_ok=True)
    os.chown(theirs, UID, GID)
    persons = theirs / "pacman.conf"
    persons.write_text(Path(CONF).read_text())
    os.chown(persons, UID, GID)
    in_their_dir = HOME / "f4-dir"
    in_their_dir.mkdir(exist_ok=True)
    os.chown(in_their_dir, UID, GID)
    roots_file = in_their_dir / "pacman.conf"
    roots_file.write_text(Path(CONF).read_text())  # root's file, in a directory of the person's
    for i, (conf, where) in enumerate([(persons, persons), (roots_file, in_their_dir)]):
        a = agent_with_config(session, f"config-f4-{i}", str(conf))
        try:
            r = result(a.handoff(["handoff-other"]))
            assert r["error"] and r["kind"] == "refused", r
            assert "pacman's configuration" in r["message"] and str(where) in r["message"], r
            assert no_helper_running()
        finally:
            a.close()


def test_a_repository_the_person_can_write_refuses_the_hand_off(session):
    # Attack 12 F1: root's pacman.conf naming a local repository of the person's (aurutils'
    # documented set-up) — the agent's to write — and the handed-off update installed its package.
    repo = HOME / "own-repo"
    repo.mkdir(exist_ok=True)
    os.chown(repo, UID, GID)
    roots = WORK / "conf-own-repo"
    roots.mkdir(exist_ok=True)
    conf = roots / "pacman.conf"
    conf.write_text(Path(CONF).read_text() + f"\n[own]\nSigLevel = Optional TrustAll\nServer = file://{repo}\n")
    a = agent_with_config(session, "config-own-repo", str(conf))
    try:
        r = result(a.handoff(["handoff-other"]))
        assert r["error"] and r["kind"] == "refused", r
        assert "pacman's configuration" in r["message"] and str(repo) in r["message"], r
        assert no_helper_running()
    finally:
        a.close()


@pytest.mark.parametrize("rules", [
    ["Defaults!/usr/bin/pacman !authenticate", f"{USER} ALL=(root) /usr/bin/pacman"],
    ["Defaults listpw=always", f"{USER} ALL=(root) NOPASSWD: /usr/bin/pacman"],
])
def test_sudo_that_would_not_ask_for_this_very_command_refuses(agent, person, rules):
    # F3: `sudo -l` says "a password is required" for both, yet `sudo pacman` asks nothing.
    SUDOERS.write_text(f"Defaults:{USER} logfile={SUDO_LOG}\n" + "\n".join(rules) + "\n")
    SUDOERS.chmod(0o440)
    before = installed()
    try:
        q = agent.handoff(["handoff-other"])
        pid = person.helper()
        r = result(q)
        assert r["error"] and r["kind"] == "refused" and "would not ask" in r["message"], r
        assert installed() == before
        person.close_terminal(pid)
    finally:
        sudoers("/usr/bin/pacman")


def test_sudos_words_are_judged_in_the_c_locale_whatever_the_persons_language(person, session):
    # F9: a German session and a NOPASSWD rule for pacman.
    de = os.environ.get("HANDOFF_DE_LOCALE")
    if not de:
        pytest.skip("no German locale could be compiled here (localedef)")
    env = {**user_env(session), "LANG": de, "LANGUAGE": "de"}
    sudoers("NOPASSWD: /usr/bin/pacman")
    try:
        listing = subprocess.run(["/usr/bin/sudo", "-n", "-k", "-l"], capture_output=True, text=True,
                                 stdin=subprocess.DEVNULL, **as_user(env=env, cwd=HOME))
        assert "Befehle" in listing.stdout, listing  # the person's sudo does speak German here
        a = Agent(env)
        try:
            before = installed()
            q = a.handoff(["handoff-other"])
            pid = person.helper()
            r = result(q)
            assert r["error"] and r["kind"] == "refused" and "would not ask" in r["message"], r
            assert installed() == before
            person.close_terminal(pid)
        finally:
            a.close()
    finally:
        sudoers("/usr/bin/pacman")


CLAIMER = r'''
import json, os, socket, sys, time
from pathlib import Path
rt = Path(os.environ["XDG_RUNTIME_DIR"]) / "archgate"
def ids():
    for p in Path("/proc").iterdir():
        try:
            argv = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"handoff-run" in argv and argv.index(b"handoff-run") + 1 < len(argv):
            yield argv[argv.index(b"handoff-run") + 1].decode()
def claim(sock, hid):
    s = socket.socket(socket.AF_UNIX)
    s.connect(str(sock))
    f = s.makefile("rwb")
    def step(v):
        f.write((json.dumps(v) + "\n").encode()); f.flush()
        return json.loads(f.readline())
    r = step({"op": "handoff_claim", "id": hid, "channel": "terminal"})
    if r.get("ok"):
        step({"op": "started"})
        step({"op": "done", "outcome": {"outcome": "ran", "exit_code": 0, "signal": None,
              "duration_ms": 1, "tail": "made up"}})
    s.close()
    return r
end = time.time() + 60
refusals = []
while time.time() < end and len(refusals) < 100:
    for hid in set(ids()):
        for sock in rt.glob("control*.sock"):
            try:
                r = claim(sock, hid)
            except OSError:
                continue
            if r.get("ok"):
                print("CLAIMED", hid)
                sys.exit(0)
            refusals.append(r.get("reason", ""))
    time.sleep(0.001)
print(json.dumps(refusals))
'''


def test_a_claim_from_outside_the_terminal_archgate_opened_is_refused_from_the_first_moment(agent, person):
    # F2: the id is on the terminal's argv for any process of the uid to read; the agent claims
    # in a tight loop from the moment it calls, before the helper can.
    claimer = subprocess.Popen(["/usr/bin/python3", "-c", CLAIMER], stdout=subprocess.PIPE, text=True,
                               **as_user(env=agent.env, cwd=HOME))
    q = agent.handoff(["handoff-other"])
    try:
        out, _ = claimer.communicate(timeout=PATIENCE)
    finally:
        claimer.kill()
    assert "CLAIMED" not in out, out
    assert "only in the terminal archgate opened" in out, out
    pid = person.helper(q)
    hid = helper_id(pid)
    person.wait_prompt(pid)
    person.answer_prompt(pid, "Escape")
    r = result(q)
    assert r["error"] and r["kind"] == "cancelled", r
    assert r["details"]["channel"] == "terminal" and r["details"]["verified"] is True, r
    log = (HOME / "state" / "archgate" / "activity.jsonl").read_text().splitlines()
    mine = [json.loads(l) for l in log if hid in l and '"event":"handoff"' in l.replace(" ", "")]
    assert len(mine) == 1 and mine[0]["outcome"] == "cancelled" and mine[0]["verified"] is True, mine
    assert len(hid) == 32 and int(hid, 16) >= 0
    person.close_terminal(pid)


FOOT_WINDOW_CLAIMER = r'''#!/usr/bin/python3
# The shell the agent's foot.ini names for every new foot window: started by foot's own
# new-terminal key inside the hand-off's terminal, it is a child of that terminal's window but
# not the helper archgate asked it to run. It tries to claim the hand-off on every control
# socket, reports a run that never happened when a claim is taken, and writes what it was told.
import json, socket, sys
from pathlib import Path
hid = Path(sys.argv[1]).read_text().strip()
told = []
for sock in sorted(Path(sys.argv[2]).glob("control*.sock")):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(sock))
        f = s.makefile("rwb")
        def step(v):
            f.write((json.dumps(v) + "\n").encode())
            f.flush()
            return json.loads(f.readline())
        r = step({"op": "handoff_claim", "id": hid, "channel": "terminal"})
        if r.get("ok"):
            step({"op": "started"})
            step({"op": "done", "outcome": {"outcome": "ran", "exit_code": 0, "signal": None,
                                            "duration_ms": 1, "tail": "made up"}})
        told.append(r)
    except OSError as e:
        told.append({"oserror": str(e)})
Path(sys.argv[3]).write_text(json.dumps(told))
'''


def test_a_program_the_hand_off_terminal_starts_on_its_own_cannot_claim_it(person, session):
    # Attack 22 F1: foot's new-terminal key (Ctrl+Shift+N) starts a new foot, which reads the
    # person's foot.ini - the agent's to write - and runs its `shell=`: a descendant of the
    # hand-off's terminal. With archgate's control socket moved aside for a moment, the real
    # helper found nothing to claim; the agent's program claimed instead and reported "ran, exit
    # 0", recorded as verified. Only the terminal's own child running archgate as
    # `handoff-run ID` may claim now.
    a = Agent(user_env(session))
    rd = Path(a.env["XDG_RUNTIME_DIR"]) / "archgate"
    claimer, idfile, told = HOME / "foot-window.py", HOME / "foot-window.id", HOME / "foot-window.json"
    # Where the new foot looks, whichever environment the hand-off's terminal passed on.
    foot_inis = [HOME / "config" / "foot" / "foot.ini", HOME / ".config" / "foot" / "foot.ini"]
    pid = None
    try:
        claimer.write_text(FOOT_WINDOW_CLAIMER)
        claimer.chmod(0o755)
        os.chown(claimer, UID, GID)
        for foot_ini in foot_inis:
            for d in (foot_ini.parent.parent, foot_ini.parent):
                d.mkdir(exist_ok=True)
                os.chown(d, UID, GID)
            foot_ini.write_text(f"[main]\nshell={claimer} {idfile} {rd} {told}\n")
            os.chown(foot_ini, UID, GID)
        socks = [p.name for p in rd.iterdir() if p.name.startswith("control")]
        assert socks, list(rd.iterdir())
        for n in socks:  # the agent's own runtime directory: it may move what is there
            subprocess.run(["mv", str(rd / n), str(rd / ("aside-" + n))], check=True, **as_user(env=a.env, cwd=HOME))
        q = a.handoff(["handoff-other"])
        pid = person.helper(q)
        until("the helper to find nothing and linger", lambda: person.lflag(pid) & termios.ICANON)
        for n in socks:
            subprocess.run(["mv", str(rd / ("aside-" + n)), str(rd / n)], check=True, **as_user(env=a.env, cwd=HOME))
        idfile.write_text(helper_id(pid))
        os.chown(idfile, UID, GID)
        until("the terminal to have the focus", lambda: person.focused(pid))
        for _ in range(10):  # the virtual keyboard loses a key now and then
            person.type("-M", "ctrl", "-M", "shift", "-k", "n", "-m", "shift", "-m", "ctrl")
            try:
                until("the new window's program", told.exists, 3)
                break
            except AssertionError:
                pass
        answers = json.loads(until("the new window's program to say what it was told",
                                   lambda: told.exists() and told.read_text()))
        assert not any(r.get("ok") for r in answers), answers
        assert any("not that helper" in r.get("reason", "") for r in answers), answers
        assert q.empty(), q.queue[0]
    finally:
        for f in (*foot_inis, claimer, idfile, told):
            f.unlink(missing_ok=True)
        if pid is not None:
            person.close_terminal(pid)
        a.close()


AGENT_FONTS_CONF = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig><selectfont><rejectfont><glob>/usr/share/fonts/*</glob></rejectfont></selectfont></fontconfig>
"""


def test_the_hand_off_terminal_draws_the_command_with_roots_fonts_only(agent, person):
    # Attack 22 F3 / 25 F5: the terminal's fontconfig read the person's fonts.conf and font
    # directories - the agent's to write - and the agent's font drew S as R in the command the
    # person reads. The agent here rejects every system font and leaves its own in the person's
    # font directory, so a terminal reading the person's files could draw only with it.
    system = sorted(p for p in Path("/usr/share/fonts").rglob("*") if p.suffix in (".ttf", ".otf"))
    assert system, "no system font"
    planted = [HOME / ".local" / "share" / "fonts" / ("agent-font" + system[0].suffix)]
    confs = [HOME / "config" / "fontconfig" / "fonts.conf", HOME / ".config" / "fontconfig" / "fonts.conf"]
    made = []
    pid = None
    try:
        for f in (*planted, *confs):
            for d in reversed(f.parents):
                if HOME in d.parents and not d.exists():
                    d.mkdir()
                    os.chown(d, UID, GID)
                    made.append(d)
        for f in planted:
            shutil.copyfile(system[0], f)
            os.chown(f, UID, GID)
        for f in confs:
            f.write_text(AGENT_FONTS_CONF)
            os.chown(f, UID, GID)
        q = agent.handoff(["handoff-other"])
        pid = person.helper(q)
        person.wait_prompt(pid)
        term = parent_of(pid)
        maps = Path(f"/proc/{term}/maps").read_text()
        assert "agent-font" not in maps, "the terminal draws with the agent's font"
        assert "/usr/share/fonts/" in maps, "the terminal draws with no system font"
        environ = Path(f"/proc/{term}/environ").read_bytes().split(b"\0")
        assert b"FONTCONFIG_FILE=/usr/lib/archgate/fonts.conf" in environ, environ
        person.answer_prompt(pid, "Escape")
        r = result(q)
        assert r["error"] and r["kind"] == "cancelled", r
    finally:
        for f in (*planted, *confs):
            f.unlink(missing_ok=True)
        shutil.rmtree(HOME / "cache" / "fontconfig", ignore_errors=True)
        shutil.rmtree(HOME / ".cache" / "fontconfig", ignore_errors=True)
        for d in reversed(made):
            shutil.rmtree(d, ignore_errors=True)
        if pid is not None:
            person.close_terminal(pid)


def test_one_hand_off_at_a_time_across_the_persons_archgate_processes(agent, person, session):
    # F8: two stdio servers, two terminals asking for a password at once.
    q = agent.handoff(["handoff-other"])
    pid = person.helper(q)
    person.wait_prompt(pid)
    hid = helper_id(pid)
    second = Agent(user_env(session))
    try:
        r = result(second.handoff(["handoff-other"]))
        assert r["error"] and r["kind"] == "busy" and hid in r["message"], r
    finally:
        second.close()
    person.answer_prompt(pid, "Escape")
    assert result(q)["kind"] == "cancelled"
    person.close_terminal(pid)


def test_a_lock_the_agent_removed_still_leaves_one_terminal_asking_at_a_time(agent, person, session):
    # Attack 9 F3: the lock file lives in a directory the agent can write; it unlinked it while
    # the person's hand-off waited, and its own archgate's terminal opened over the person's and
    # took the password they typed. The helper itself looks for another hand-off's terminal in
    # the kernel's process list and refuses to ask while one is open.
    before = installed()
    q = agent.handoff(["handoff-other"])
    pid = person.helper(q)
    person.wait_prompt(pid)
    runtime = Path(user_env(session)["XDG_RUNTIME_DIR"]) / "archgate"
    subprocess.run(["rm", "-f", str(runtime / "handoff.lock")], check=True,
                   **as_user(env=agent.env, cwd=HOME))
    second = Agent(user_env(session))
    try:
        r = result(second.handoff(["handoff-other"]))
        assert r["error"] and r["kind"] == "refused", r
        assert "another hand-off's terminal is open" in r["message"], r
        assert installed() == before
    finally:
        second.close()

    def other_helper():
        for p in Path("/proc").iterdir():
            try:
                argv = (p / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if len(argv) > 2 and argv[1] == b"handoff-run" and ours(argv) and int(p.name) != pid:
                return int(p.name)
        return None

    # The second terminal asked nothing and lingers: the person closes it, then cancels theirs.
    person.close_terminal(until("the second hand-off's terminal", other_helper))
    person.answer_prompt(pid, "Escape")
    assert result(q)["kind"] == "cancelled"
    person.close_terminal(pid)


def test_an_install_that_would_remove_a_package_is_refused_before_any_terminal(agent):
    # F13: pacman would ask "Remove handoff-hello? [y/N]" after the password, where any program
    # of the uid can type y. The transaction is computed beforehand and this one is refused.
    assert "handoff-hello" in installed()
    before = installed()
    r = result(agent.handoff(["handoff-conflict"]))
    assert r["error"] and r["kind"] == "refused" and "handoff-hello" in r["message"], r
    assert installed() == before
    assert no_helper_running()


def test_an_omarchy_route_whose_script_the_person_can_write_is_not_handed_off(session):
    # A git install of Omarchy in the person's home is theirs to write, and the agent's (same
    # uid): its scripts run sudo with the person's password, so they cross privilege (F1's class).
    om = HOME / "om-git"
    shutil.copytree(OMARCHY, om, dirs_exist_ok=True)
    for p in [om, *om.rglob("*")]:
        os.chown(p, UID, GID)
    a = Agent({**user_env(session), "OMARCHY_PATH": str(om)})
    before = installed()
    try:
        q = a.request("tools/call", {"name": "handoff", "arguments": {
            "op": "omarchy", "route": "pkg add", "args": ["handoff-conflict"], "reason": "r"}})
        r = result(q)
        assert r["error"] and r["kind"] == "refused" and "not root's alone" in r["message"], r
        assert installed() == before
        assert no_helper_running()
    finally:
        a.close()


# ---- attack 12 F2, attack 13 F1, F2: what a route's script gives sudo, judged as it runs ----

def test_a_routes_pacman_is_judged_by_the_file_it_reads_not_by_archgates_setting(session, person):
    # Attack 13 F2: the agent pointed `[arch] pacman_conf` at a harmless root's file; the route's
    # pacman read another (here the script's own --config; on Omarchy /etc/pacman.conf) naming
    # a repository of the person's, and installed the agent's package on the person's password.
    clean = WORK / "conf-clean"
    clean.mkdir(exist_ok=True)
    (clean / "pacman.conf").write_text(Path(CONF).read_text())
    repo = HOME / "own-repo-route"
    repo.mkdir(exist_ok=True)
    os.chown(repo, UID, GID)
    original = Path(CONF).read_text()
    Path(CONF).write_text(original + f"\n[own]\nSigLevel = Optional TrustAll\nServer = file://{repo}\n")
    a = agent_with_config(session, "config-route-conf", str(clean / "pacman.conf"),
                          allow=("handoff omarchy pkg add",))
    before = installed()
    sudoers("/usr/bin/pacman", tries=5)
    log_before = sudo_log()
    pid = 0
    try:
        q = route_handoff(a, "pkg add", ["handoff-route"])
        pid = person.helper(q)
        person.wait_prompt(pid)
        person.answer_prompt(pid, "Return")
        r = result(q)
        # Nothing ran as root, and sudo never asked for the password.
        d = r.get("details", r)
        assert d["outcome"] == "ran" and d["exit_code"] != 0, r
        assert "nothing ran as root" in d["output_tail"] and str(repo) in d["output_tail"], r
        assert installed() == before
        # sudo was never asked to run the route's pacman (this test's part of sudo's log).
        assert "handoff-route" not in sudo_log()[len(log_before):]
    finally:
        if pid:
            person.close_terminal(pid)
        Path(CONF).write_text(original)
        sudoers("/usr/bin/pacman")
        a.close()


def test_a_command_specific_defaults_with_arguments_is_seen_by_the_probe_of_the_exact_line(agent, person):
    # Attack 12 F2: `Defaults!ALIAS !authenticate` whose alias carries the script's arguments is
    # invisible to the listing and to the probes of each program without arguments; the agent's
    # Enter alone ran the route's sudo pacman. The asking sudo asks sudo about the exact line.
    SUDOERS.write_text(
        f"Defaults:{USER} logfile={SUDO_LOG}\n"
        f"Cmnd_Alias HOPKG = /usr/bin/pacman --config {CONF} -S --noconfirm --needed handoff-route\n"
        f"Defaults!HOPKG !authenticate\n{USER} ALL=(root) /usr/bin/pacman\n")
    SUDOERS.chmod(0o440)
    before = installed()
    pid = 0
    try:
        q = route_handoff(agent, "pkg add", ["handoff-route"])
        pid = person.helper(q)
        person.wait_prompt(pid)
        person.answer_prompt(pid, "Return")  # played by any program of the person's uid
        r = result(q)
        d = r.get("details", r)
        assert d["outcome"] == "ran" and d["exit_code"] != 0, r
        assert "sudo would run this very command without asking you" in d["output_tail"], r
        assert installed() == before
    finally:
        if pid:
            person.close_terminal(pid)
        sudoers("/usr/bin/pacman")


def test_a_nopasswd_entry_naming_pacman_by_another_path_refuses_the_route(agent, person):
    # Attack 13 F1: `/bin/pacman` is `/usr/bin/pacman` for sudo on a merged-/usr system (same
    # base name, same file); judged "another command", the agent's Enter alone ran the route.
    spelt = "/bin/pacman"
    if not (os.path.exists(spelt) and os.path.samefile(spelt, "/usr/bin/pacman")):
        pytest.skip("/bin/pacman is not /usr/bin/pacman here")
    sudoers(f"/usr/bin/pacman\n{USER} ALL=(root) NOPASSWD: {spelt} --config {CONF} -S *")
    before = installed()
    pid = 0
    try:
        q = route_handoff(agent, "pkg add", ["handoff-route"])
        pid = person.helper()
        r = result(q)
        assert r["error"] and r["kind"] == "refused" and "NOPASSWD" in r["message"], r
        assert installed() == before
    finally:
        if pid:
            person.close_terminal(pid)
        sudoers("/usr/bin/pacman")
