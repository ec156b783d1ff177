"""archgate against a bare rmcp server on the same stack, side by side in one run.

Both serve streamable HTTP on loopback; `hey` sends the same stateless (2026-07-28) `tools/call
system_status` to each, with 1 and with 16 concurrent clients over kept-alive connections, in
alternating rounds (archgate, bare, bare, archgate, ...) so a busy moment hits both. Per server
and client count: the median round's requests/s, p50 and p99; then archgate / bare.

The bare server (crates/archgate/benches/bare_rmcp.rs) answers a constant: archgate's own answer
to the checked call, so both serialize the same JSON. archgate does all a call does: the loopback
guards and the bearer token, the gate, the tool's reads of /proc and /sys, the audit record and
the call frame. Every answer must be HTTP 200; after each archgate round the activity log must
hold one `ok` record per call (the time until it does is the log's lag), and `/health` must show
no dropped record.

Environment: ARCHGATE_BIN, BARE_BIN, BENCH_REQUESTS (per round, default 3000), BENCH_ROUNDS
(default 3), BENCH_WARMUP (requests, default 1000). Loopback only; every loop is bounded.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARCHGATE = os.environ["ARCHGATE_BIN"]
BARE = os.environ["BARE_BIN"]
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "3000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "1000"))
PATIENCE = 60.0
TARGET = 0.80

MODERN = "2026-07-28"
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
    "name": "system_status", "arguments": {},
    "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}}}
HEADERS = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "system_status"}
# Budgets raised: the default (120 calls a minute) would refuse this load.
CONFIG = "[budgets]\nper_minute = 100000\nper_day = 10000000\n"


def xdg_env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    for k, d in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"),
                 ("XDG_RUNTIME_DIR", "runtime"), ("XDG_CACHE_HOME", "cache")):
        (root / d).mkdir(mode=0o700, parents=True, exist_ok=True)
        env[k] = str(root / d)
    env.pop("ARCHGATE_LOG", None)
    return env


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


def answer_of(port: int, headers: dict[str, str]) -> dict:
    status, body = post(port, CALL, headers)
    msg = json.loads(body)
    assert status == 200 and msg.get("id") == 3 and not msg["result"].get("isError"), (status, body)
    return msg["result"]


def hey(port: int, headers: dict[str, str], concurrency: int, n: int) -> dict[str, float]:
    n -= n % concurrency  # hey gives each worker n/c requests
    cmd = ["hey", "-n", str(n), "-c", str(concurrency), "-m", "POST", "-T", "application/json",
           "-H", "Accept: application/json, text/event-stream", "-disable-compression",
           "-d", json.dumps(CALL)]
    for k, v in headers.items():
        cmd += ["-H", f"{k}: {v}"]
    cmd.append(f"http://127.0.0.1:{port}/mcp")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout
    codes = dict(re.findall(r"\[(\d+)\]\s+(\d+) responses", out))
    if codes != {"200": str(n)} or "Error distribution" in out:
        raise RuntimeError(f"hey saw answers other than {n} x 200:\n{out}")

    def pct(p: str) -> float:
        m = re.search(rf"\s{p}% in ([\d.]+) secs", out)
        return float(m.group(1)) * 1000 if m else float("nan")

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return {"n": n, "rps": rps, "p50_ms": pct("50"), "p99_ms": pct("99")}


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


def median_round(runs: list[dict]) -> dict:
    """The round with the median requests/s (its p50 and p99 with it)."""
    return sorted(runs, key=lambda r: r["rps"])[len(runs) // 2]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = xdg_env(root / "archgate")
        (root / "archgate/config/archgate").mkdir(parents=True, exist_ok=True)
        (root / "archgate/config/archgate/config.toml").write_text(CONFIG)
        a_out = root / "archgate.stdout"
        a = subprocess.Popen([ARCHGATE, "serve", "--http", "--port", "0"], env=env,
                             stdin=subprocess.DEVNULL, stdout=open(a_out, "wb"), stderr=subprocess.DEVNULL)
        bares: list[subprocess.Popen] = []
        servers_ports: dict[str, int] = {}
        try:
            a_port = wait_port_frame(a_out, a, "archgate")
            token = (root / "archgate/state/archgate/token").read_text().strip()
            a_headers = dict(HEADERS, Authorization=f"Bearer {token}")
            log = root / "archgate/state/archgate/activity.jsonl"
            first = answer_of(a_port, a_headers)
            assert first["structuredContent"]["cpus"] == os.cpu_count(), first
            constant = root / "constant.json"
            constant.write_text(json.dumps(first["structuredContent"]))
            out = root / "bare.stdout"
            bp = subprocess.Popen([BARE, "--bench", str(constant)], stdin=subprocess.DEVNULL,
                                  stdout=open(out, "wb"), stderr=subprocess.DEVNULL)
            bares.append(bp)
            servers_ports["bare"] = wait_port_frame(out, bp, "bare rmcp")
            assert answer_of(servers_ports["bare"], HEADERS)["structuredContent"] == first["structuredContent"]

            servers = {"archgate": (a_port, a_headers)}
            servers.update({n: (p, HEADERS) for n, p in servers_ports.items()})
            expected = 1
            for name, (port, headers) in servers.items():  # warm-up, not counted
                hey(port, headers, 16, WARMUP)
                expected += (WARMUP - WARMUP % 16) if name == "archgate" else 0
            results: dict[tuple[str, int], list[dict]] = {}
            lags: list[float] = []
            names = list(servers)
            for c in (1, 16):
                for r in range(ROUNDS):
                    order = names if r % 2 == 0 else names[::-1]
                    for name in order:
                        port, headers = servers[name]
                        run = hey(port, headers, c, REQUESTS)
                        results.setdefault((name, c), []).append(run)
                        if name != "archgate":
                            continue
                        # The log must hold every call's record, and soon.
                        expected += run["n"]
                        t0 = time.monotonic()
                        while (held := calls_in_log(log)) < expected:
                            if time.monotonic() - t0 > 5:
                                raise RuntimeError(f"the log holds {held} of {expected} records after 5 s")
                            time.sleep(0.001)
                        lags.append(time.monotonic() - t0)
            audit = get_health(a_port)["audit"]
            assert audit["dropped"] == 0 and audit["write_failures"] == 0, audit
            records = log_records(log)
            outcomes = {r.get("outcome") for r in records}
            assert len(records) == expected and outcomes == {"ok"}, (len(records), expected, outcomes)
        finally:
            stop(a)
            for bp in bares:
                stop(bp)

    print(f"hey: {REQUESTS} stateless tools/call per round, {ROUNDS} rounds per server and client count, "
          f"alternating; the median round shown")
    print()
    print("| measure | archgate | bare rmcp | archgate / bare | target | met |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for c in (1, 16):
        ar, br = median_round(results[("archgate", c)]), median_round(results[("bare", c)])
        ratio = ar["rps"] / br["rps"]
        met = "yes" if ratio >= TARGET else "**no**"
        who = f"{c} client{'s' if c > 1 else ''}"
        print(f"| tools/call req/s, {who} | {ar['rps']:.0f} | {br['rps']:.0f} | {ratio * 100:.0f}% | "
              f">= {TARGET * 100:.0f}% | {met} |")
        for p in ("p50", "p99"):
            k = p + "_ms"
            print(f"| {p} latency, {who} (ms) | {ar[k]:.3f} | {br[k]:.3f} | {ar[k] / br[k]:.2f}x | | |")
    print()
    for c in (1, 16):
        for name in ("archgate", "bare"):
            print(f"{name}, {c} client(s), req/s per round: " +
                  ", ".join(f"{r['rps']:.0f}" for r in results[(name, c)]))
    print(f"activity log: {len(records)} records, one `ok` per archgate call, none dropped; after each round it "
          f"held them all within {max(lags) * 1000:.1f} ms (max; median {statistics.median(lags) * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
