"""archgate against a bare rmcp server on the same stack, side by side in one run.

Both serve streamable HTTP on loopback; `hey` sends the same stateless (2026-07-28) `tools/call`
to each, with 1, 16 and 64 concurrent clients (BENCH_CLIENTS) over kept-alive connections, in
alternating rounds (archgate, bare, bare, archgate, ...) so a busy moment hits both. Target
(issue 34): archgate at least 90% of the bare server with 1 and with 16 clients; 64 is shown.
With ARCHGATE_BEFORE_BIN, an earlier archgate build takes part in the same rounds (its own
sandbox, the same pacman.conf, so the same answer bytes): before and after under one load. Per tool, server and client
count: the median round's requests/s, p50 and p99; then archgate / bare.

Two tools, one table row each (BENCH_TOOLS):
- `pacman_conf` (the headline, issue 23's "what archgate's own stack allows"): archgate's
  cheapest real tool with a small answer (~700 bytes) — pacman.conf (a small one the bench
  writes, pointed to by `[arch] pacman_conf`), parsed once and kept, checked for changes by a few
  `stat`s on a blocking thread. What separates archgate from the bare server is then the pipeline
  a call takes: the connection limits, the loopback guards and the bearer token, the session and
  grant, the budget, policy, the gate, the audit record on disk and the call frame.
- `system_status`, for transparency: the same pipeline plus the tool's real work (about 35 reads
  of /proc and /sys and statvfs a call), which the bare server does not do.

The bare server (crates/archgate/benches/bare_rmcp.rs) answers each tool with a constant:
archgate's own answer to a checked call of it, so both serialize the same JSON. It runs twice:
on the system allocator, as the SDK comes (the reference the target is judged against), and on
mimalloc, the allocator archgate's binary uses (`bare_rmcp_mimalloc`): the second ratio shows
what archgate's pipeline costs once the allocator is the same on both sides. Every answer must
be HTTP 200 with no `isError`; after each archgate round the activity log must hold one `ok`
record per call (the time until it does is the log's lag), and `/health` must show no dropped
record.

Environment: ARCHGATE_BIN, BARE_BIN, BARE_MIMALLOC_BIN, BENCH_REQUESTS (per round, default 3000), BENCH_ROUNDS
(default 3), BENCH_WARMUP (requests, default 1000), BENCH_TOOLS (default
"pacman_conf,system_status"). Loopback only; every loop is bounded.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from loopback import hey, xdg_env  # noqa: E402

ARCHGATE = os.environ["ARCHGATE_BIN"]
BARE = os.environ["BARE_BIN"]
BARE_MIMALLOC = os.environ["BARE_MIMALLOC_BIN"]
# Optional: an earlier archgate build, run in the same rounds (before / after a change, same load).
BEFORE = os.environ.get("ARCHGATE_BEFORE_BIN")
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "3000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "1000"))
PATIENCE = 60.0
TARGET = 0.90
# Client counts: one agent, a desktop with several, and a crowd (reported, not the target).
CLIENTS = tuple(int(c) for c in os.environ.get("BENCH_CLIENTS", "1,16,64").split(","))
TARGET_CLIENTS = (1, 16)
IDLE_RSS_MIB = 16.0

TOOLS = os.environ.get("BENCH_TOOLS", "pacman_conf,system_status").split(",")
# What each row measures, printed under the table.
MEANS = {
    "pacman_conf": "archgate's cheapest real tool with a small answer (pacman.conf parsed once, a few "
                   "stats a call): the pipeline's own cost",
    "system_status": "the pipeline plus the tool's real work (~35 reads of /proc, /sys, statvfs), which "
                     "the bare server does not do",
}

MODERN = "2026-07-28"


def call_of(tool: str) -> dict:
    return {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": tool, "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": {}}}}


def headers_of(tool: str) -> dict[str, str]:
    return {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": tool}

# Budgets raised: the default (120 calls a minute) would refuse this load; the log kept in one file
# (the default rotates at 16 MiB, ~38,000 records), so every record can be counted.
CONFIG = ("[budgets]\nper_minute = 100000\nper_day = 10000000\n[audit]\nmax_bytes = 1073741824\n"
          "[arch]\npacman_conf = \"{root}/pacman.conf\"\n")
# pacman.conf(5)'s shape, our own words: two repositories, no databases on disk (none are read).
PACMAN_CONF = """[options]
RootDir = {root}/arch
DBPath = {root}/arch/var/lib/pacman/
Architecture = x86_64
HoldPkg = pacman glibc
SigLevel = Required DatabaseOptional

[core]
Server = https://geo.mirror.pkgbuild.com/$repo/os/$arch

[extra]
Server = https://geo.mirror.pkgbuild.com/$repo/os/$arch
"""


def post(port: int, body: dict, headers: dict[str, str]) -> tuple[int, str]:
    """One HTTP/1.1 POST on a fresh connection, read to EOF; the JSON-RPC answer's text."""
    data = json.dumps(body).encode()
    head = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", f"Content-Length: {len(data)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as s:
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        raw = b""
        while chunk := s.recv(65536):
            raw += chunk
    header_blob, _, payload = raw.partition(b"\r\n\r\n")
    status = int(header_blob.split(b"\r\n")[0].split()[1])
    if b"transfer-encoding: chunked" in header_blob.lower():
        out, rest = b"", payload
        while rest:
            size_hex, _, rest = rest.partition(b"\r\n")
            size = int(size_hex.split(b";")[0] or b"0", 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        payload = out
    text = payload.decode(errors="replace")
    for line in text.splitlines():  # an SSE answer: its data line
        if line.startswith("data:") and line[5:].strip().startswith("{"):
            return status, line[5:].strip()
    return status, text


def answer_of(port: int, tool: str, headers: dict[str, str]) -> dict:
    status, body = post(port, call_of(tool), headers)
    msg = json.loads(body)
    assert status == 200 and msg.get("id") == 3 and not msg["result"].get("isError"), (status, body)
    return msg["result"]


def wait_port_frame(stdout: Path, p: subprocess.Popen, name: str) -> int:
    deadline = time.monotonic() + PATIENCE
    while True:
        for line in stdout.read_text().splitlines():
            if '"listening"' in line:
                return json.loads(line)["port"]
        if time.monotonic() > deadline or p.poll() is not None:
            raise RuntimeError(f"{name} did not listen")
        time.sleep(0.05)


def get_health(port: int) -> dict:
    with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as s:
        s.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        raw = b""
        while chunk := s.recv(65536):
            raw += chunk
    return json.loads(raw.partition(b"\r\n\r\n")[2])


def calls_in_log(path: Path) -> int:
    """Call records (not events) in the log so far: each has one args_sha256."""
    try:
        return path.read_bytes().count(b'"args_sha256":')
    except FileNotFoundError:
        return 0


def log_records(path: Path) -> list[dict]:
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                v = json.loads(line)
            except ValueError:
                continue
            if "event" not in v:
                out.append(v)
    return out


def stop(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def rss_mib(pid: int, key: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def median_round(runs: list[dict]) -> dict:
    """The round with the median requests/s (its p50 and p99 with it)."""
    return sorted(runs, key=lambda r: r["rps"])[len(runs) // 2]


class Archgate:
    """One archgate under test: its own XDG sandbox, config and pacman.conf; what it logged."""

    def __init__(self, name: str, binary: str, root: Path) -> None:
        self.name, self.root = name, root / name
        env = xdg_env(self.root)
        (self.root / "config/archgate").mkdir(parents=True, exist_ok=True)
        # One pacman.conf for every archgate (`root`'s): their answers are the same bytes.
        (self.root / "config/archgate/config.toml").write_text(CONFIG.format(root=root))
        out = self.root / "stdout"
        self.p = subprocess.Popen([binary, "serve", "--http", "--port", "0"], env=env,
                                  stdin=subprocess.DEVNULL, stdout=open(out, "wb"), stderr=subprocess.DEVNULL)
        self.port = wait_port_frame(out, self.p, name)
        self.log = self.root / "state/archgate/activity.jsonl"
        self.expected = 0
        self.lags: list[float] = []

    def auth(self) -> dict[str, str]:
        token = (self.root / "state/archgate/token").read_text().strip()
        return {"Authorization": f"Bearer {token}"}

    def wait_log(self) -> None:
        """The log must hold every call's record, and soon (the time it takes is the lag)."""
        t0 = time.monotonic()
        while (held := calls_in_log(self.log)) < self.expected:
            if time.monotonic() - t0 > 5:
                raise RuntimeError(f"{self.name}: the log holds {held} of {self.expected} records after 5 s")
            time.sleep(0.001)
        self.lags.append(time.monotonic() - t0)

    def check(self) -> tuple[int, dict[str, int]]:
        audit = get_health(self.port)["audit"]
        assert audit["dropped"] == 0 and audit["write_failures"] == 0, (self.name, audit)
        records = log_records(self.log)
        outcomes = {r.get("outcome") for r in records}
        assert len(records) == self.expected and outcomes == {"ok"}, (self.name, len(records), self.expected, outcomes)
        return len(records), {t: sum(1 for r in records if r.get("tool") == t) for t in TOOLS}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pacman.conf").write_text(PACMAN_CONF.format(root=root))
        bares: list[subprocess.Popen] = []
        ports: dict[str, int] = {}
        ags: dict[str, Archgate] = {}
        try:
            # Idle RSS: each archgate alone, listening, no call made yet (as bench/issue2 does).
            idle_rss: dict[str, float] = {}
            for name, binary in (("archgate", ARCHGATE),) + ((("archgate_before", BEFORE),) if BEFORE else ()):
                ags[name] = Archgate(name, binary, root)
                time.sleep(1.0)
                idle_rss[name] = rss_mib(ags[name].p.pid)
            load_start = load()
            a = ags["archgate"]
            auth = a.auth()
            # archgate's own answer to each tool, checked, is the bare server's constant for it.
            answers = {t: answer_of(a.port, t, dict(headers_of(t), **auth))["structuredContent"] for t in TOOLS}
            a.expected += len(TOOLS)
            if "system_status" in answers:
                assert answers["system_status"]["cpus"] == os.cpu_count(), answers["system_status"]
            if "pacman_conf" in answers:
                assert [r["name"] for r in answers["pacman_conf"]["repos"]] == ["core", "extra"], answers["pacman_conf"]
            if BEFORE:  # the same bytes, or the comparison says nothing
                b = ags["archgate_before"]
                for t in TOOLS:
                    got = answer_of(b.port, t, dict(headers_of(t), **b.auth()))["structuredContent"]
                    assert got == answers[t] or t == "system_status", (t, got)
                b.expected += len(TOOLS)
            args = []
            for t, v in answers.items():
                (root / f"{t}.json").write_text(json.dumps(v))
                args.append(f"{t}={root / f'{t}.json'}")
            for name, binary in (("bare", BARE), ("bare_mimalloc", BARE_MIMALLOC)):
                out = root / f"{name}.stdout"
                bp = subprocess.Popen([binary, "--bench", *args], stdin=subprocess.DEVNULL,
                                      stdout=open(out, "wb"), stderr=subprocess.DEVNULL)
                bares.append(bp)
                port = wait_port_frame(out, bp, name)
                for t in TOOLS:
                    assert answer_of(port, t, headers_of(t))["structuredContent"] == answers[t], (name, t)
                ports[name] = port
            servers = {n: (g.port, g.auth()) for n, g in ags.items()}
            servers.update({"bare": (ports["bare"], {}), "bare_mimalloc": (ports["bare_mimalloc"], {})})
            for t in TOOLS:  # warm-up, not counted
                for name, (port, extra) in servers.items():
                    run = hey(port, call_of(t), dict(headers_of(t), **extra), 16, WARMUP)
                    if name in ags:
                        ags[name].expected += run["n"]
            results: dict[tuple[str, str, int], list[dict]] = {}
            loads: dict[tuple[str, int], list[str]] = {}
            names = list(servers)
            for t in TOOLS:
                for c in CLIENTS:
                    loads[(t, c)] = [load()]
                    for r in range(ROUNDS):
                        order = names if r % 2 == 0 else names[::-1]  # a busy moment hits all
                        for name in order:
                            port, extra = servers[name]
                            run = hey(port, call_of(t), dict(headers_of(t), **extra), c, REQUESTS)
                            results.setdefault((t, name, c), []).append(run)
                            if name in ags:
                                ags[name].expected += run["n"]
                                ags[name].wait_log()
                    loads[(t, c)].append(load())
            counted = {n: g.check() for n, g in ags.items()}
            _, by_tool = counted["archgate"]
            expected = a.expected
            lags = a.lags
            loaded_rss, peak_rss = rss_mib(a.p.pid), rss_mib(a.p.pid, "VmHWM")
            idle_rss_before = idle_rss.get("archgate_before")
            idle_rss = idle_rss["archgate"]
            records = log_records(a.log)
        finally:
            for g in ags.values():
                stop(g.p)
            for bp in bares:
                stop(bp)

    print(f"hey: {REQUESTS} stateless tools/call per round, {ROUNDS} rounds per tool, server and client count, "
          f"alternating; the median round shown")
    print()
    print("| tools/call | clients | archgate req/s | bare rmcp req/s | archgate / bare | target | met "
          "| bare rmcp on mimalloc req/s | archgate / bare on mimalloc "
          "| p50 ms archgate / bare | p99 ms archgate / bare |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: |")
    for t in TOOLS:
        for c in CLIENTS:
            ar, br = median_round(results[(t, "archgate", c)]), median_round(results[(t, "bare", c)])
            mr = median_round(results[(t, "bare_mimalloc", c)])
            ratio = ar["rps"] / br["rps"]
            headline = t == TOOLS[0] and c in TARGET_CLIENTS
            met = ("yes" if ratio >= TARGET else "**no**") if headline else "(shown, not the target)"
            print(f"| `{t}` | {c} | {ar['rps']:.0f} | {br['rps']:.0f} | {ratio * 100:.0f}% | "
                  f"{f'>= {TARGET * 100:.0f}%' if headline else ''} | {met} | "
                  f"{mr['rps']:.0f} | {ar['rps'] / mr['rps'] * 100:.0f}% | "
                  f"{ar['p50_ms']:.3f} / {br['p50_ms']:.3f} | {ar['p99_ms']:.3f} / {br['p99_ms']:.3f} |")
    if BEFORE:
        print()
        print("The same rounds, an earlier build (`ARCHGATE_BEFORE_BIN`) beside this one:")
        print()
        print("| tools/call | clients | before req/s | after req/s | after / before | before / bare | after / bare "
              "| p99 ms before / after |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for t in TOOLS:
            for c in CLIENTS:
                ar, pr = median_round(results[(t, "archgate", c)]), median_round(results[(t, "archgate_before", c)])
                br = median_round(results[(t, "bare", c)])
                print(f"| `{t}` | {c} | {pr['rps']:.0f} | {ar['rps']:.0f} | {ar['rps'] / pr['rps'] * 100:.0f}% | "
                      f"{pr['rps'] / br['rps'] * 100:.0f}% | {ar['rps'] / br['rps'] * 100:.0f}% | "
                      f"{pr['p99_ms']:.3f} / {ar['p99_ms']:.3f} |")
    print()
    for t in TOOLS:
        print(f"- `{t}`: {MEANS.get(t, 'a tool of archgate; the bare server answers its bytes as a constant')}")
    print()
    for t in TOOLS:
        for c in CLIENTS:
            print(f"{t}, {c} client(s): load average before and after each round set: {' -> '.join(loads[(t, c)])}")
            for name in ("archgate", "bare", "bare_mimalloc") + (("archgate_before",) if BEFORE else ()):
                print(f"{t}, {name}, {c} client(s), req/s per round: " +
                      ", ".join(f"{r['rps']:.0f}" for r in results[(t, name, c)]))
    print(f"activity log: {len(records)} records ({', '.join(f'{t} {n}' for t, n in by_tool.items())}), "
          f"one `ok` per archgate call, none dropped; after each round it held them all within "
          f"{max(lags) * 1000:.1f} ms (max; median {statistics.median(lags) * 1000:.1f} ms); "
          f"the record count equals the calls ({len(records)} = {expected})")
    print(f"archgate RSS: idle {idle_rss:.1f} MiB (1 s after listening, no call yet; target <= {IDLE_RSS_MIB:.0f} MiB: "
          f"{'met' if idle_rss <= IDLE_RSS_MIB else 'NOT met'}), after the load {loaded_rss:.1f} MiB, peak {peak_rss:.1f} MiB"
          + (f"; the earlier build idle {idle_rss_before:.1f} MiB" if idle_rss_before is not None else ""))
    if BEFORE:
        print(f"the earlier build's log: {counted['archgate_before'][0]} records, one `ok` per call, none dropped")
    print(f"load average: {load_start} at the start, {load()} at the end")


if __name__ == "__main__":
    main()
