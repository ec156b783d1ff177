#!/usr/bin/env python3
"""A soak of the real archgate HTTP daemon: many concurrent clients, mixed calls, a scripted person.

    soak.py [--clients 100] [--duration 600] [--warmup S] [--seed 1] [--bin PATH]

Starts `archgate serve --http --port 0` with private XDG directories, a small pacman world
(bench/pacman/generate.py) and a policy that denies one route and asks the person for another.
Then CLIENTS asyncio tasks, each on its own kept-alive HTTP/1.1 connection to 127.0.0.1, send
stateless-era (2026-07-28) `tools/call` requests for DURATION seconds, drawn from a fixed mix:

  read      system_status, pkg_search (the pacman world), pkgbuild_audit    → ok
  denied    pacman_log (in [policy] deny)                                   → refused
  badargs   system_status {"bogus": 1}                                      → invalid_arguments
  blocked   launch {"app": "sudo"} (privilege elevation)                    → refused
  approval  pacman_conf (in [policy] ask), parked until a scripted person answers through the CLI
            (`archgate approvals --json`, then `archgate approve ID` / `archgate deny ID`,
            alternating)                                                    → ok / declined, or
            unsupported when the nag guard will not ask again yet (at most 12 questions per 10
            minutes across all clients, and a back-off after each "no": both by design)

Every answer is checked against what that call must give. At the end it asserts:
  - zero failed calls (transport errors, non-200 answers, or an outcome other than the expected);
  - audit records (lines of activity.jsonl and its rotations that are calls) == calls sent, and
    their outcomes match the answers; every call the person approved is `ok` with approval
    `accepted` via `cli`, every call denied is `declined`;
  - /health's call counters == calls sent; no audit record dropped, no write failure;
  - RSS (VmRSS) at the end at most 10% above RSS at the end of the warm-up;
  - open file descriptors (/proc/PID/fd) after every client left == before any came.
Prints a table; exit status 0 when every check holds, 1 otherwise. Loopback only; bounded.

Environment: ARCHGATE_BIN (default: target/debug/archgate beside this checkout).
Only the Python standard library is used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = HERE.parent
MODERN = "2026-07-28"
# A bound against hangs, not a measurement: the approval deadline plus slack.
APPROVAL_TIMEOUT_S = 60
CALL_PATIENCE_S = APPROVAL_TIMEOUT_S + 60

PKGBUILD = """pkgname=soak-demo
pkgver=1.0
pkgrel=1
pkgdesc='a package for the soak'
arch=('x86_64')
url='https://example.invalid'
license=('MIT')
source=("https://example.invalid/soak-demo-$pkgver.tar.gz")
sha256sums=('SKIP')
build() {
  cd "$srcdir/soak-demo-$pkgver"
  make
}
package() {
  install -Dm755 soak-demo "$pkgdir/usr/bin/soak-demo"
}
"""

# kind: (tool, arguments, expected outcomes, weight)
MIX = {
    "status": ("system_status", {}, {"ok"}, 30),
    "search": ("pkg_search", {"query": "audio", "limit": 20}, {"ok"}, 25),
    "audit": ("pkgbuild_audit", {"pkgbuild": PKGBUILD}, {"ok"}, 15),
    "denied": ("pacman_log", {}, {"refused"}, 10),
    "badargs": ("system_status", {"bogus": 1}, {"invalid_arguments"}, 10),
    "blocked": ("launch", {"app": "sudo"}, {"refused"}, 8),
    "approval": ("pacman_conf", {}, {"ok", "declined", "unsupported"}, 2),
}


def log(msg: str) -> None:
    print(f"soak: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The daemon under test
# ---------------------------------------------------------------------------------------------

class Daemon:
    def __init__(self, binary: str, root: Path) -> None:
        self.binary, self.root = binary, root
        self.env = dict(os.environ)
        for key, d in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"),
                       ("XDG_RUNTIME_DIR", "runtime"), ("XDG_CACHE_HOME", "cache")):
            (root / d).mkdir(mode=0o700, parents=True, exist_ok=True)
            self.env[key] = str(root / d)
        for k in ("ARCHGATE_CONFIG", "ARCHGATE_LOG", "DBUS_SESSION_BUS_ADDRESS"):
            self.env.pop(k, None)
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.frames: list[dict] = []
        self.stderr_path = root / "serve.stderr"

    @property
    def state_dir(self) -> Path:
        return self.root / "state" / "archgate"

    def write_config(self, pacman_conf: Path) -> None:
        conf = self.root / "config" / "archgate" / "config.toml"
        conf.parent.mkdir(parents=True, exist_ok=True)
        conf.write_text(f"""
[policy]
deny = ["pacman_log"]
ask = ["pacman_conf"]

[approval]
timeout_s = {APPROVAL_TIMEOUT_S}
page = false
notifications = false

[budgets]
per_minute = 100000
per_day = 10000000
questions_per_hour = 10000

[audit]
max_bytes = 4294967296

[arch]
pacman_conf = "{pacman_conf}"
""")

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([self.binary, *args], env=self.env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise RuntimeError(f"archgate {' '.join(args)} failed ({p.returncode}): {p.stderr}")
        return p

    def start(self) -> None:
        self.proc = subprocess.Popen([self.binary, "serve", "--http", "--port", "0"], env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=open(self.stderr_path, "wb"))
        first = self.proc.stdout.readline()
        frame = json.loads(first) if first else {}
        if frame.get("event") != "listening":
            raise RuntimeError(f"archgate did not listen: {first!r}; stderr: {self.stderr_path.read_text()}")
        self.port = int(frame["port"])
        # Frames (one per call) must be drained or the daemon's stdout would block.
        self.drainer = threading.Thread(target=self._drain, daemon=True)
        self.drainer.start()

    def _drain(self) -> None:
        assert self.proc is not None
        for line in self.proc.stdout:
            try:
                self.frames.append(json.loads(line))
            except ValueError:
                self.frames.append({"event": "not_json", "line": line.decode(errors="replace")})

    def rss_kib(self) -> int:
        return proc_status(self.proc.pid, "VmRSS")

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def fd_targets(self) -> list[str]:
        """What each open descriptor is (a path, a pipe, a socket with its kind and address from
        /proc/PID/net), to name a leak."""
        sockets = socket_names(self.proc.pid)
        out = []
        for fd in os.listdir(f"/proc/{self.proc.pid}/fd"):
            try:
                target = os.readlink(f"/proc/{self.proc.pid}/fd/{fd}")
            except OSError:
                continue
            m = re.fullmatch(r"socket:\[(\d+)\]", target)
            out.append(f"{target} {sockets.get(m.group(1), '?')}" if m else target)
        return sorted(out)

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = -9
        self.drainer.join(10)  # every frame read
        return code

    def audit_entries(self) -> tuple[list[dict], list[dict], int]:
        """(call records, events, lines that were not JSON) over the log and its rotations."""
        calls, events, torn = [], [], 0
        for f in sorted(self.state_dir.glob("activity.jsonl*")):
            for line in f.read_text(errors="replace").splitlines():
                if not line.strip():
                    continue
                try:
                    v = json.loads(line)
                except ValueError:
                    torn += 1
                    continue
                (events if "event" in v else calls).append(v)
        return calls, events, torn


def proc_status(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


# ---------------------------------------------------------------------------------------------
# A minimal HTTP/1.1 client on asyncio streams (kept-alive, Content-Length or chunked answers)
# ---------------------------------------------------------------------------------------------

class Conn:
    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.reconnects = -1

    async def ensure(self) -> None:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            self.reconnects += 1

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
            self.writer = self.reader = None

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict, bytes]:
        await self.ensure()
        head = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}",
                "Content-Type: application/json", "Accept: application/json, text/event-stream",
                f"Content-Length: {len(body)}"] + [f"{k}: {v}" for k, v in headers.items()]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("connection closed before an answer")
        status = int(status_line.split()[1])
        hdrs: dict[str, str] = {}
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            k, _, v = line.decode().partition(":")
            hdrs[k.strip().lower()] = v.strip()
        if hdrs.get("transfer-encoding", "").lower() == "chunked":
            payload = b""
            while True:
                size = int((await self.reader.readline()).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (await self.reader.readline()) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                payload += await self.reader.readexactly(size)
                await self.reader.readexactly(2)
        else:
            payload = await self.reader.readexactly(int(hdrs.get("content-length", "0")))
        if hdrs.get("connection", "").lower() == "close":
            await self.close()
        return status, hdrs, payload


def jsonrpc_messages(hdrs: dict, body: bytes) -> list[dict]:
    text = body.decode(errors="replace")
    if hdrs.get("content-type", "").startswith("text/event-stream"):
        out = []
        for line in text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                try:
                    out.append(json.loads(line[5:]))
                except ValueError:
                    pass
        return out
    return [json.loads(text)] if text.strip() else []


# ---------------------------------------------------------------------------------------------
# The load
# ---------------------------------------------------------------------------------------------

class Stats:
    def __init__(self) -> None:
        self.calls: dict[str, int] = {k: 0 for k in MIX}
        self.good: dict[str, int] = {k: 0 for k in MIX}
        self.lat: dict[str, list[float]] = {k: [] for k in MIX}
        self.outcomes: dict[str, int] = {}
        self.failures: list[str] = []
        self.approval_outcomes: dict[str, int] = {}

    def failed(self, what: str) -> None:
        if len(self.failures) < 50:
            self.failures.append(what)
        else:
            self.failures.append("")  # counted, not printed


def call_outcome(msg: dict) -> tuple[str, str]:
    """(outcome, error message) of a tools/call answer, as the client sees it."""
    if "error" in msg:
        return "protocol_error", json.dumps(msg["error"])[:300]
    res = msg.get("result", {})
    if not res.get("isError"):
        return "ok", ""
    sc = res.get("structuredContent") or {}
    err = sc.get("error") or {}
    return sc.get("outcome", "unknown"), str(err.get("message", ""))


async def one_call(conn: Conn, token: str, kind: str, n: int, stats: Stats) -> None:
    tool, args, expected, _ = MIX[kind]
    body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
        "name": tool, "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    headers = {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": MODERN,
               "Mcp-Method": "tools/call", "Mcp-Name": tool}
    stats.calls[kind] += 1
    start = time.perf_counter()
    try:
        status, hdrs, payload = await asyncio.wait_for(conn.post("/mcp", body, headers),
                                                       CALL_PATIENCE_S)
    except (OSError, ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as e:
        await conn.close()
        stats.failed(f"{kind}: transport: {type(e).__name__}: {e}")
        return
    stats.lat[kind].append(time.perf_counter() - start)
    if status != 200:
        stats.failed(f"{kind}: HTTP {status}: {payload[:200]!r}")
        return
    msgs = [m for m in jsonrpc_messages(hdrs, payload) if m.get("id") == n]
    if len(msgs) != 1:
        stats.failed(f"{kind}: {len(msgs)} answers with id {n}: {payload[:200]!r}")
        return
    outcome, message = call_outcome(msgs[0])
    stats.outcomes[outcome] = stats.outcomes.get(outcome, 0) + 1
    if kind == "approval":
        stats.approval_outcomes[outcome] = stats.approval_outcomes.get(outcome, 0) + 1
        if outcome == "unsupported" and "will not ask again" not in message:
            stats.failed(f"approval: unsupported for another reason than the nag guard: {message}")
            return
    if outcome not in expected:
        stats.failed(f"{kind}: expected {sorted(expected)}, got {outcome}: {message[:200]}")
        return
    stats.good[kind] += 1


async def client(idx: int, port: int, token: str, until: float, seed: int, stats: Stats,
                 ids: list[int]) -> int:
    rnd = random.Random(seed * 100_003 + idx)
    kinds = list(MIX)
    weights = [MIX[k][3] for k in kinds]
    conn = Conn(port)
    try:
        while time.monotonic() < until:
            kind = rnd.choices(kinds, weights)[0]
            ids[0] += 1
            await one_call(conn, token, kind, ids[0], stats)
    finally:
        await conn.close()
    return max(conn.reconnects, 0)


class Person:
    """Answers parked calls through the CLI, alternating yes and no."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.decisions: dict[str, str] = {}
        self.errors: list[str] = []
        self.polls = 0

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.poll_once()
            try:
                await asyncio.wait_for(stop.wait(), 0.25)
            except asyncio.TimeoutError:
                pass
        await self.poll_once()  # calls parked at the very end are answered too

    async def poll_once(self) -> None:
        self.polls += 1
        out = await self._cli("approvals", "--json")
        if out is None:
            return
        try:
            pending = json.loads(out)
        except ValueError:
            self.errors.append(f"approvals --json is not JSON: {out[:200]}")
            return
        for q in pending:
            qid = q["id"]
            if qid in self.decisions:
                continue
            verb = "approve" if len(self.decisions) % 2 == 0 else "deny"
            if await self._cli(verb, qid) is not None:
                self.decisions[qid] = verb

    async def _cli(self, *args: str) -> str | None:
        p = await asyncio.create_subprocess_exec(
            self.daemon.binary, *args, env=self.daemon.env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await p.communicate()
        if p.returncode != 0:
            self.errors.append(f"archgate {' '.join(args)}: exit {p.returncode}: {err.decode()[:200]}")
            return None
        return out.decode()


class Sampler:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.samples: list[tuple[float, int]] = []

    async def run(self, stop: asyncio.Event, t0: float) -> None:
        while not stop.is_set():
            self.samples.append((time.monotonic() - t0, self.daemon.rss_kib()))
            try:
                await asyncio.wait_for(stop.wait(), 2.0)
            except asyncio.TimeoutError:
                pass


async def health(port: int) -> dict:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    raw = await reader.read()
    writer.close()
    return json.loads(raw.partition(b"\r\n\r\n")[2])



def socket_names(pid: int) -> dict[str, str]:
    """Socket inode → "unix PATH" / "tcp LOCAL→REMOTE st=STATE" / "netlink proto=N", read from
    /proc/PID/net (the formats of proc_net(5): one header line, then a socket a line)."""
    # Each table: where its inode column is, and how a line names its socket.
    tables = {
        "unix": (6, lambda p: "unix " + (p[7] if len(p) > 7 else "(unnamed)")),
        "netlink": (9, lambda p: f"netlink proto={p[1]}"),
        **{k: (9, lambda p, k=k: f"{k} {p[1]}→{p[2]} st={p[3]}")
           for k in ("tcp", "tcp6", "udp", "udp6")},
    }
    names: dict[str, str] = {}
    for table, (inode, name) in tables.items():
        try:
            with open(f"/proc/{pid}/net/{table}") as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if len(parts) > inode:
                        names[parts[inode]] = name(parts)
        except (OSError, StopIteration):
            pass
    return names


async def settle_fds(daemon: Daemon, baseline: int, patience: float = 15.0) -> int:
    """The descriptor count once it is back at the baseline, or the last count after `patience`."""
    end = time.monotonic() + patience
    n = daemon.fds()
    while n > baseline and time.monotonic() < end:
        await asyncio.sleep(0.2)
        n = daemon.fds()
    return n


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


async def soak(args: argparse.Namespace, daemon: Daemon) -> tuple[list[tuple[str, bool, str]], list[str]]:
    token = (daemon.state_dir / "token").read_text().strip()
    stats = Stats()
    ids = [0]
    # One call of each read kind before measuring: the audit log and the pacman world are open.
    warm = Conn(daemon.port)
    for kind in ("status", "search", "audit"):
        ids[0] += 1
        await one_call(warm, token, kind, ids[0], stats)
    await warm.close()
    daemon.cli("approvals", "--json")
    await asyncio.sleep(1.0)
    fds_before = daemon.fds()
    fd_kinds_before = daemon.fd_targets()
    rss_start = daemon.rss_kib()

    stop = asyncio.Event()
    person = Person(daemon)
    sampler = Sampler(daemon)
    t0 = time.monotonic()
    until = t0 + args.duration
    person_task = asyncio.create_task(person.run(stop))
    sampler_task = asyncio.create_task(sampler.run(stop, t0))
    log(f"{args.clients} clients for {args.duration} s against port {daemon.port} "
        f"(pid {daemon.proc.pid})")
    clients = [asyncio.create_task(client(i, daemon.port, token, until, args.seed, stats, ids))
               for i in range(args.clients)]
    # The RSS baseline: the end of the warm-up.
    await asyncio.sleep(min(args.warmup, args.duration))
    rss_warm = daemon.rss_kib()
    reconnects = sum(await asyncio.gather(*clients))
    elapsed = time.monotonic() - t0
    rss_end = daemon.rss_kib()
    hwm = proc_status(daemon.proc.pid, "VmHWM")
    stop.set()
    await person_task
    await sampler_task
    fds_after = await settle_fds(daemon, fds_before)
    fd_kinds_after = daemon.fd_targets()
    h = await health(daemon.port)
    total = sum(stats.calls.values())

    exit_code = daemon.stop()
    records, events, torn = daemon.audit_entries()
    call_frames = sum(1 for f in daemon.frames if f.get("event") == "call")

    # --- checks ---
    checks: list[tuple[str, bool, str]] = []
    failed = len(stats.failures)
    checks.append(("zero failed calls", failed == 0, f"{failed} of {total}"))
    checks.append(("audit records == calls", len(records) == total,
                   f"{len(records)} records, {total} calls, {torn} torn lines"))
    audit_outcomes: dict[str, int] = {}
    for r in records:
        audit_outcomes[r["outcome"]] = audit_outcomes.get(r["outcome"], 0) + 1
    checks.append(("audit outcomes == answers", audit_outcomes == stats.outcomes,
                   f"audit {dict(sorted(audit_outcomes.items()))}"))
    dropped = sum(int(e.get("n", 0)) for e in events if e.get("event") == "dropped")
    checks.append(("no audit record dropped or failed",
                   dropped == 0 and h["audit"]["dropped"] == 0 and h["audit"]["write_failures"] == 0,
                   f"dropped {dropped}/{h['audit']['dropped']}, write failures {h['audit']['write_failures']}"))
    checks.append(("/health counted every call", h["calls"]["total"] == total,
                   f"{h['calls']['total']} counted"))
    checks.append(("one frame per call", call_frames == total, f"{call_frames} frames"))
    by_id = {r["id"]: r for r in records}
    wrong = []
    for qid, verb in person.decisions.items():
        r = by_id.get(qid)
        want = ("ok", "accepted") if verb == "approve" else ("declined", "declined")
        got = (r["outcome"], (r.get("approval") or {}).get("outcome")) if r else None
        ch = (r.get("approval") or {}).get("channel") if r else None
        if got != want or ch != "cli":
            wrong.append(f"{qid}: {verb} → {got} via {ch}")
    n_yes = sum(1 for v in person.decisions.values() if v == "approve")
    checks.append(("person's answers decided their calls", not wrong and not person.errors,
                   f"{n_yes} approved, {len(person.decisions) - n_yes} denied"
                   + (f"; {wrong[:3]}" if wrong else "") + (f"; {person.errors[:3]}" if person.errors else "")))
    asked = stats.approval_outcomes.get("ok", 0) + stats.approval_outcomes.get("declined", 0)
    checks.append(("parked calls answered as the person said", asked == len(person.decisions)
                   and stats.approval_outcomes.get("ok", 0) == n_yes,
                   f"client saw {dict(sorted(stats.approval_outcomes.items()))}"))
    growth = (rss_end - rss_warm) / rss_warm * 100 if rss_warm else 0.0
    checks.append(("RSS growth after warm-up < 10%", growth < 10.0,
                   f"{rss_start} → {rss_warm} (warm) → {rss_end} KiB (end), {growth:+.1f}%; peak {hwm} KiB"))
    new = [t for t in fd_kinds_after if t not in fd_kinds_before][:5]
    checks.append(("no leaked file descriptors", fds_after <= fds_before,
                   f"{fds_before} before, {fds_after} after" + (f"; new: {new}" if fds_after > fds_before else "")))
    checks.append(("daemon stopped cleanly", exit_code == 0, f"exit {exit_code}"))

    # --- the table ---
    rows = [f"| kind | tool | calls | as expected | p50 ms | p99 ms |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    for k, (tool, _, _, _) in MIX.items():
        rows.append(f"| {k} | {tool} | {stats.calls[k]} | {stats.good[k]} | "
                    f"{pct(stats.lat[k], 50) * 1000:.1f} | {pct(stats.lat[k], 99) * 1000:.1f} |")
    rows.append(f"| **all** | | {total} | {sum(stats.good.values())} | | |")
    rows.append("")
    rows.append(f"{args.clients} clients, {elapsed:.0f} s ({args.warmup:.0f} s warm-up), "
                f"{total / elapsed:.0f} calls/s, {reconnects} reconnects, "
                f"{person.polls} polls by the person")
    rows.append("")
    rows.append("| check | result | detail |")
    rows.append("| --- | --- | --- |")
    for name, ok, detail in checks:
        rows.append(f"| {name} | {'PASS' if ok else 'FAIL'} | {detail} |")
    if stats.failures:
        rows.append("")
        rows.append("First failures:")
        rows += [f"  {f}" for f in stats.failures[:20] if f]
    return checks, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--duration", type=float, default=600)
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds before the RSS baseline (default: a tenth of the run, 10..60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default=os.environ.get("ARCHGATE_BIN",
                                                   str(TOP / "target" / "debug" / "archgate")))
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    if args.warmup is None:
        args.warmup = min(60.0, max(10.0, args.duration / 10))
    if not os.access(args.bin, os.X_OK):
        log(f"no archgate binary at {args.bin} (set ARCHGATE_BIN or --bin)")
        return 2
    root = Path(tempfile.mkdtemp(prefix="archgate-soak-"))
    try:
        world = root / "pacman"
        subprocess.run([sys.executable, str(TOP / "bench" / "pacman" / "generate.py"), str(world),
                        "--packages", "600", "--installed", "60"], check=True,
                       stdout=subprocess.DEVNULL)
        daemon = Daemon(args.bin, root)
        daemon.write_config(world / "pacman.conf")
        daemon.start()
        try:
            checks, rows = asyncio.run(soak(args, daemon))
        finally:
            if daemon.proc and daemon.proc.poll() is None:
                daemon.proc.kill()
                daemon.proc.wait()
        print("\n".join(rows), flush=True)
        ok = all(c[1] for c in checks)
        if not ok:
            log(f"FAILED; daemon stderr tail:\n{daemon.stderr_path.read_text(errors='replace')[-3000:]}")
        return 0 if ok else 1
    finally:
        if args.keep:
            log(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
