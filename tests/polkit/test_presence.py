"""Person presence against the real polkitd and pkttyagent (run by tests/run-polkit.sh as root, in
a private mount namespace with a private system bus, archgate's polkit actions and a test user
whose password is known).

The archgate daemon, the CLI and the polkit agent all run as the unprivileged test user, as on a
desktop; this process (root) only starts them and reads their files. A call is made to ask
(`[policy] ask = ["system_status"]`, so that an approved call visibly runs: its result is the
system status) over stdio, and answered with `archgate approve`/`deny`.

The CLI is the polkit subject for its own answers. To register a polkit agent for it before it
asks, the CLI is started as `sh -c 'read _; exec archgate …'`: `exec` keeps the pid and the start
time, so the agent is registered for exactly the process that will connect to the control socket.
"""

from __future__ import annotations

import fcntl
import http.client
import json
import re
import socket
import os
import pty
import queue
import select
import subprocess
import termios
import threading
import time
from pathlib import Path

import pytest

ARCHGATE_BIN = os.environ["ARCHGATE_BIN"]
UID = int(os.environ["PRESENCE_UID"])
GID = int(os.environ["PRESENCE_GID"])
PASSWORD = os.environ["PRESENCE_PASSWORD"]
WORK = Path(os.environ["PRESENCE_WORK"])
POLKITD = os.environ.get("PRESENCE_POLKITD", "/usr/lib/polkit-1/polkitd")


def start_time(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[19])


def as_user(**kw):
    return dict(user=UID, group=GID, extra_groups=[], **kw)


class Home:
    """A private home of the test user: config, state, runtime."""

    def __init__(self, name: str, presence: str | None, page_port: int | None = None) -> None:
        self.root = WORK / name
        self.env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.root),
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "XDG_STATE_HOME": str(self.root / "state"),
            "XDG_CACHE_HOME": str(self.root / "cache"),
            "XDG_RUNTIME_DIR": str(self.root / "run"),
            "RUST_LOG": "info",
        }
        for d in ["", "config", "config/archgate", "state", "cache", "run"]:
            p = self.root / d
            p.mkdir(mode=0o700, exist_ok=True)
            os.chown(p, UID, GID)
        line = f'presence = "{presence}"\n' if presence else ""
        cfg = self.root / "config" / "archgate" / "config.toml"
        page = f"page = true\npage_port = {page_port}\n" if page_port else "page = false\n"
        cfg.write_text(
            '[policy]\nask = ["system_status"]\n'
            f"[approval]\n{page}notifications = false\ntimeout_s = 60\n{line}"
        )
        os.chown(cfg, UID, GID)
        os.chmod(cfg, 0o600)

    def cli(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(
            [ARCHGATE_BIN, *args], env=self.env, capture_output=True, text=True, timeout=timeout, **as_user()
        )

    def events(self) -> list[dict]:
        path = self.root / "state" / "archgate" / "activity.jsonl"
        if not path.exists():
            return []
        return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


class Server:
    """`archgate serve` over stdio, as the test user, with one call waiting for the person."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.stderr = open(home.root / "serve.log", "w")
        self.proc = subprocess.Popen(
            [ARCHGATE_BIN, "serve"],
            env=home.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            **as_user(),
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "presence-test", "version": "1"}}})
        self.reply(1)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, msg: dict) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def reply(self, rid: int, timeout: float = 30) -> dict:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                m = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if m.get("id") == rid:
                return m
        raise AssertionError(f"no reply to request {rid} within {timeout} s")

    def ask(self, rid: int = 2) -> str:
        """Calls system_status (which asks) and returns the pending question's id."""
        self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                   "params": {"name": "system_status", "arguments": {}}})
        end = time.monotonic() + 20
        while time.monotonic() < end:
            r = self.home.cli("approvals", "--json")
            if r.returncode == 0 and r.stdout.strip():
                pending = json.loads(r.stdout)
                if pending:
                    return pending[0]["id"]
            time.sleep(0.3)
        raise AssertionError("the call never became a pending question")

    def pending_ids(self) -> list[str]:
        r = self.home.cli("approvals", "--json")
        return [q["id"] for q in json.loads(r.stdout or "[]")]

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


class Held:
    """A process started as `sh -c 'read _; exec …'`: known pid, runs once released."""

    def __init__(self, home: Home, *args: str) -> None:
        quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in [ARCHGATE_BIN, *args])
        self.proc = subprocess.Popen(
            ["/bin/sh", "-c", f"read _; exec {quoted}"],
            env=home.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            **as_user(),
        )
        time.sleep(0.2)
        self.subject = f"{self.proc.pid},{start_time(self.proc.pid)},{UID}"

    def release(self) -> None:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def result(self, timeout: float = 60) -> tuple[int, str]:
        out, _ = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out


def _controlling_tty() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Agent:
    """pkttyagent for one subject process, on a pty that is its controlling terminal; types
    `password` when polkit asks."""

    def __init__(self, subject: str, password: str | None) -> None:
        self.master, slave = pty.openpty()
        # pkttyagent closes --notify-fd once polkitd has registered it.
        registered, notify = os.pipe()
        self.proc = subprocess.Popen(
            ["pkttyagent", "--notify-fd", str(notify), "--process", subject],
            stdin=slave, stdout=slave, stderr=slave, pass_fds=(notify,),
            start_new_session=True, preexec_fn=_controlling_tty, **as_user(),
        )
        os.close(slave)
        os.close(notify)
        ready, _, _ = select.select([registered], [], [], 15)
        assert ready and os.read(registered, 1) == b"", "pkttyagent did not register"
        os.close(registered)
        self.password = password
        self.seen = b""
        self.prompts = 0
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        buf = b""
        while not self._stop:
            r, _, _ = select.select([self.master], [], [], 0.2)
            if not r:
                continue
            try:
                d = os.read(self.master, 4096)
            except OSError:
                return
            if not d:
                return
            self.seen += d
            buf += d
            if b"Password:" in buf:
                self.prompts += 1
                if self.password is not None:
                    # pkttyagent turns echo off (flushing input) after the prompt: typing
                    # before that would be lost, as it would be for a person typing too early.
                    end = time.monotonic() + 5
                    while termios.tcgetattr(self.master)[3] & termios.ECHO and time.monotonic() < end:
                        time.sleep(0.02)
                    time.sleep(0.05)
                    os.write(self.master, (self.password + "\n").encode())
                buf = b""

    def stop(self) -> None:
        self._stop = True
        self.proc.kill()
        self.proc.wait()
        self.thread.join(timeout=2)
        os.close(self.master)


def approve_with_agent(home: Home, password: str | None, *args: str) -> tuple[int, str, Agent | None]:
    held = Held(home, *args)
    agent = Agent(held.subject, password) if password is not None else None
    held.release()
    try:
        rc, out = held.result()
    except subprocess.TimeoutExpired:
        held.proc.kill()
        raise AssertionError(f"no answer; the agent saw {agent.seen if agent else None!r}")
    finally:
        if agent:
            agent.stop()
    return rc, out, agent


@pytest.fixture
def polkit_up():
    """polkitd must be on the private bus (run-polkit.sh started it)."""
    r = subprocess.run(["busctl", "--system", "status", "org.freedesktop.PolicyKit1"], capture_output=True)
    assert r.returncode == 0, "polkitd is not on the system bus"


def test_the_right_password_approves_and_the_call_runs(polkit_up) -> None:
    home = Home("right", "polkit")
    srv = Server(home)
    try:
        qid = srv.ask()
        rc, out, agent = approve_with_agent(home, PASSWORD, "approve", qid)
        assert rc == 0, out
        assert f"approved {qid}" in out
        assert agent.prompts == 1 and b"AUTHENTICATION COMPLETE" in agent.seen, agent.seen
        result = srv.reply(2)["result"]
        assert result.get("isError") is not True, result
        assert "memory" in json.dumps(result).lower(), result  # system_status ran
    finally:
        srv.close()


def test_a_wrong_password_refuses_and_the_call_does_not_run(polkit_up) -> None:
    home = Home("wrong", "polkit")
    srv = Server(home)
    try:
        qid = srv.ask()
        rc, out, agent = approve_with_agent(home, "not-the-password", "approve", qid)
        assert rc == 1, out
        assert "presence_refused" in out and "polkit did not confirm" in out, out
        assert agent.prompts >= 1
        # Fail closed, and the question stays with the person: still pending, nothing ran.
        assert qid in srv.pending_ids()
        assert srv.lines.empty()
        refused = [e for e in home.events() if e.get("event") == "presence_refused"]
        assert refused and refused[0]["id"] == qid and refused[0]["channel"] == "cli"
        # The person can still say no, without polkit.
        r = home.cli("deny", qid)
        assert r.returncode == 0, r.stdout + r.stderr
        result = srv.reply(2)["result"]
        assert result.get("isError") is True and "memory" not in json.dumps(result).lower()
    finally:
        srv.close()


def test_a_same_user_process_without_the_password_cannot_approve(polkit_up) -> None:
    """An agent's shell runs `archgate approve ID` and `archgate dev-mode on`: no terminal, no
    agent of its own, no password. Nothing is approved and developer mode stays off."""
    home = Home("sameuser", "polkit")
    srv = Server(home)
    try:
        qid = srv.ask()
        r = home.cli("approve", qid, timeout=60)
        assert r.returncode == 1
        assert "presence_no_agent" in r.stdout, r.stdout
        r = home.cli("approve", "--always", qid, timeout=60)
        assert r.returncode == 1 and "presence_" in r.stdout, r.stdout
        assert qid in srv.pending_ids()
        r = home.cli("dev-mode", "on", "--for", "8h", timeout=60)
        assert r.returncode == 1 and "presence_" in r.stdout, r.stdout
        r = home.cli("dev-mode", "status")
        assert "off" in r.stdout, r.stdout
        # Even with a polkit agent of its own, it would need the password.
        rc, out, _ = approve_with_agent(home, "guess", "dev-mode", "on", "--for", "1h")
        assert rc == 1 and "presence_refused" in out, out
        assert "off" in home.cli("dev-mode", "status").stdout
        # The person's own dev-mode on, with the password, works.
        rc, out, _ = approve_with_agent(home, PASSWORD, "dev-mode", "on", "--for", "10m")
        assert rc == 0 and "ON" in out, out
        assert home.cli("dev-mode", "off").returncode == 0
        assert home.cli("deny", qid).returncode == 0
    finally:
        srv.close()


def test_one_polkit_dialog_at_a_time(polkit_up) -> None:
    """While the person has a dialog open, another `archgate approve` (an agent's shell repeating
    it) gets no second dialog: refused at once."""
    home = Home("busy", "polkit")
    srv = Server(home)
    try:
        qid = srv.ask()
        held = Held(home, "approve", qid)
        agent = Agent(held.subject, None)  # shows the prompt; nobody types
        held.release()
        end = time.monotonic() + 15
        while b"Password:" not in agent.seen and time.monotonic() < end:
            time.sleep(0.1)
        assert b"Password:" in agent.seen, agent.seen
        r = home.cli("approve", qid, timeout=30)
        assert r.returncode == 1 and "presence_busy" in r.stdout, r.stdout
        agent.stop()  # the dialog goes away unanswered
        rc, out = held.result()
        assert rc == 1 and "presence_" in out, out
        assert qid in srv.pending_ids()
        assert home.cli("deny", qid).returncode == 0
    finally:
        srv.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# http.client encodes host names through the `idna` codec, imported on first use: import it
# here, since the child that runs as the test user may not read root's Python library.
"127.0.0.1".encode("idna")


def as_person(fn):
    """Runs `fn` in a child process as the test user and returns its (JSON) result: the page
    closes every other uid's connection before reading a byte (SECURITY.md, "Nothing
    unauthenticated is read or held"), and this test runs as root."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            os.setgroups([])
            os.setuid(UID)
            os.write(w, json.dumps(fn()).encode())
        except BaseException as e:  # noqa: BLE001 — reported to the parent
            os.write(w, json.dumps({"error": repr(e)}).encode())
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    out = json.loads(data)
    assert status == 0, out
    return out


class Page:
    """The approval page, logged in with the one-time code an agent's shell can get too
    (`archgate ui --print` prints the login form's address and a code to type there)."""

    def __init__(self, home: Home, port: int) -> None:
        self.port = port
        r = home.cli("ui", "--print")
        assert r.returncode == 0, r.stdout + r.stderr
        code = re.search(r"type the code (\S+)", r.stdout).group(1)
        port = self.port

        def login():
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            c.request(
                "POST",
                "/login",
                body=f"code={code}",
                headers={
                    "Origin": f"http://127.0.0.1:{port}",
                    "Content-Type": "application/x-www-form-urlencoded",
                },
            )
            resp = c.getresponse()
            resp.read()
            return [resp.status, resp.getheader("set-cookie")]

        status, cookie = as_person(login)
        assert status == 303, status
        self.cookie = cookie.split(";", 1)[0]
        _, _, html = self.request("GET", "/")
        self.csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', html).group(1)

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict, str]:
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Origin": f"http://127.0.0.1:{self.port}"}
        if getattr(self, "cookie", None):
            headers["Cookie"] = self.cookie
        if getattr(self, "csrf", None):
            headers["X-CSRF-Token"] = self.csrf
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        def send():
            c.request(method, path, body=data, headers=headers)
            r = c.getresponse()
            text = r.read().decode()
            return [r.status, {k.lower(): v for k, v in r.getheaders()}, text]

        status, got, text = as_person(send)
        return status, got, text


def test_the_page_needs_the_password_too(polkit_up) -> None:
    """The page's yes is confirmed for the daemon itself. Logged in (as any same-user process
    can be), Allow without the password is refused; with it, the call runs. Developer mode on
    from the page likewise."""
    port = free_port()
    home = Home("page", "polkit", page_port=port)
    srv = Server(home)
    try:
        qid = srv.ask()
        page = Page(home, port)
        status, _, body = page.request("POST", "/api/answer", {"id": qid, "answer": "allow"})
        assert status == 403 and "presence_no_agent" in body, (status, body)
        status, _, body = page.request("POST", "/api/dev-mode", {"minutes": 60})
        assert status == 403 and "presence_" in body, (status, body)
        assert "off" in home.cli("dev-mode", "status").stdout
        assert qid in srv.pending_ids()
        daemon = f"{srv.proc.pid},{start_time(srv.proc.pid)},{UID}"
        agent = Agent(daemon, PASSWORD)
        try:
            status, _, body = page.request("POST", "/api/answer", {"id": qid, "answer": "allow"})
        finally:
            agent.stop()
        assert status == 200, (status, body)
        assert agent.prompts == 1
        assert "memory" in json.dumps(srv.reply(2)["result"]).lower()
    finally:
        srv.close()


def test_doctor_says_presence_is_available(polkit_up) -> None:
    home = Home("doctor", "polkit")
    out = home.cli("doctor", timeout=60).stdout
    assert re.search(r"ok +person presence \(polkit, presence = polkit\)", out), out


def test_deny_never_needs_presence(polkit_up) -> None:
    home = Home("deny", "polkit")
    srv = Server(home)
    try:
        qid = srv.ask()
        r = home.cli("deny", qid)
        assert r.returncode == 0 and f"denied {qid}" in r.stdout, r.stdout + r.stderr
        assert srv.reply(2)["result"].get("isError") is True
    finally:
        srv.close()


def test_presence_off_approves_without_polkit(polkit_up) -> None:
    """The `off` setting is what it says: the same-user CLI approves (this is the hole that
    presence closes)."""
    home = Home("off", "off")
    srv = Server(home)
    try:
        qid = srv.ask()
        r = home.cli("approve", qid)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "memory" in json.dumps(srv.reply(2)["result"]).lower()
    finally:
        srv.close()


def test_auto_asks_for_always_but_not_for_an_act_allow(polkit_up) -> None:
    home = Home("auto", None)  # the default
    srv = Server(home)
    try:
        qid = srv.ask()
        # Always creates a standing rule: presence is needed, and nobody authenticates.
        r = home.cli("approve", "--always", qid, timeout=60)
        assert r.returncode == 1 and "presence_no_agent" in r.stdout, r.stdout
        # A read-tier Allow under auto goes through without polkit.
        r = home.cli("approve", qid)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "memory" in json.dumps(srv.reply(2)["result"]).lower()
        assert home.cli("rules", "list", "--json").stdout.strip() in ("[]", "")
    finally:
        srv.close()


def stop_polkitd() -> None:
    pid = int((WORK / "polkitd.pid").read_text())
    os.kill(pid, 15)
    for _ in range(50):
        if not Path(f"/proc/{pid}").exists():
            break
        time.sleep(0.1)
    subprocess.run(["busctl", "--system", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                    "org.freedesktop.DBus", "ListNames"], capture_output=True)


def test_zz_without_polkit_every_yes_is_refused_clearly() -> None:
    """Runs last: stops polkitd. archgate's actions stay installed (root's files), so presence
    applies: under `polkit` and under `auto` alike, polkit out of reach refuses every yes that
    needs it, and says so (issue 33: never read as "presence not available"); deny works."""
    stop_polkitd()
    home = Home("nopolkit", "polkit")
    srv = Server(home)
    try:
        qid = srv.ask()
        r = home.cli("approve", qid, timeout=60)
        assert r.returncode == 1
        assert "presence_unreachable" in r.stdout and "could not be reached" in r.stdout, r.stdout
        r = home.cli("dev-mode", "on", "--for", "1h", timeout=60)
        assert r.returncode == 1 and "presence_unreachable" in r.stdout, r.stdout
        assert qid in srv.pending_ids()
        assert home.cli("deny", qid).returncode == 0
        assert srv.reply(2)["result"].get("isError") is True
        doctor = home.cli("doctor", timeout=60).stdout
        assert "cannot be reached now" in doctor, doctor
    finally:
        srv.close()
    auto = Home("nopolkit-auto", "auto")
    srv = Server(auto)
    try:
        qid = srv.ask()
        r = auto.cli("approve", "--always", qid, timeout=60)
        assert r.returncode == 1 and "presence_unreachable" in r.stdout, r.stdout + r.stderr
        assert qid in srv.pending_ids(), "refused, the question stays for the person"
        assert auto.cli("deny", qid).returncode == 0
    finally:
        srv.close()
