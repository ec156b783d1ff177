"""archgate against the official Python SDK's MCPServer, side by side in one run.

(a) cold start: spawn the server on stdio, initialize, then the time until the first tools/list
    answer (median of N runs each);
(b) tools/call over streamable HTTP on loopback, stateless era (2026-07-28, no session):
    throughput and p50/p99 latency with 1 and 16 concurrent clients (`hey`, a fixed number of
    requests per run, every answer checked 200, one answer checked for real content);
(c) RSS (/proc/PID/status VmRSS): idle after start, and right after the 16-client load (with
    VmHWM, the peak).

Prints a table with the ratios against the issue's targets (start >= 20x faster, throughput
>= 10x higher, idle RSS <= 1/4). Loopback only; every loop is bounded.

Environment: ARCHGATE_BIN (release build), BENCH_STARTS (default 10), BENCH_REQUESTS (default 2000).
"""

from __future__ import annotations

import json
import os
import shutil
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

HERE = Path(__file__).resolve().parent
ARCHGATE = os.environ["ARCHGATE_BIN"]
PYTHON = sys.executable
STARTS = int(os.environ.get("BENCH_STARTS", "10"))
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "2000"))
PATIENCE = 60.0

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
# The HTTP load speaks the stateless era (2026-07-28): no session, everything a request needs is in
# it. `hey` sends one fixed body, and only without a session may concurrent requests share an id.
MODERN = "2026-07-28"
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
    "name": "system_status", "arguments": {},
    "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}}}
CALL_HEADERS = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "system_status"}


class Target:
    def __init__(self, name: str, stdio: list[str], http: list[str], needs_token: bool) -> None:
        self.name, self.stdio, self.http, self.needs_token = name, stdio, http, needs_token


def read_line(f, deadline: float) -> bytes:
    line = f.readline()
    if not line or time.monotonic() > deadline:
        raise RuntimeError("server closed stdout or took too long")
    return line


def cold_start(t: Target, env: dict[str, str]) -> float:
    """Seconds from spawn to the tools/list answer over stdio (initialize first, as clients do)."""
    start = time.perf_counter()
    p = subprocess.Popen(t.stdio, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + PATIENCE
        p.stdin.write((json.dumps(INIT) + "\n").encode())
        p.stdin.flush()
        while json.loads(read_line(p.stdout, deadline)).get("id") != 1:
            pass
        p.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(LIST) + "\n").encode())
        p.stdin.flush()
        while True:
            msg = json.loads(read_line(p.stdout, deadline))
            if msg.get("id") == 2:
                break
        took = time.perf_counter() - start
        assert any(tool["name"] == "system_status" for tool in msg["result"]["tools"]), msg
        return took
    finally:
        p.stdin.close()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port: int, body: dict, headers: dict[str, str]) -> tuple[int, dict[str, str], str]:
    """One HTTP/1.1 POST on a fresh connection, read to EOF."""
    data = json.dumps(body).encode()
    head = [f"POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", f"Content-Length: {len(data)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as s:
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        raw = b""
        while chunk := s.recv(65536):
            raw += chunk
    header_blob, _, payload = raw.partition(b"\r\n\r\n")
    lines = header_blob.decode().split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    if hdrs.get("transfer-encoding") == "chunked":
        out, rest = b"", payload
        while rest:
            size_hex, _, rest = rest.partition(b"\r\n")
            size = int(size_hex.split(b";")[0] or b"0", 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        payload = out
    return status, hdrs, payload.decode(errors="replace")


def messages(hdrs: dict[str, str], body: str) -> list[dict]:
    if hdrs.get("content-type", "").startswith("text/event-stream"):
        found = []
        for line in body.splitlines():
            if line.startswith("data:"):
                try:
                    found.append(json.loads(line[5:].strip()))
                except ValueError:
                    pass
        return found
    return [json.loads(body)] if body.strip() else []


def rss_kib(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM"):
            out[k] = int(v.split()[0])
    return out


def http_run(t: Target, root: Path) -> dict:
    env = xdg_env(root)
    port = free_port()
    cmd = [a.replace("{port}", str(port)) for a in t.http]
    frames = open(root / "stdout", "wb")
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=frames, stderr=subprocess.DEVNULL)
    try:
        if t.name == "archgate":
            deadline = time.monotonic() + PATIENCE
            while '"listening"' not in (root / "stdout").read_text():
                if time.monotonic() > deadline or p.poll() is not None:
                    raise RuntimeError("archgate did not listen")
                time.sleep(0.05)
            port = json.loads((root / "stdout").read_text().splitlines()[0])["port"]
        # Wait until the port answers (uvicorn has no frame).
        deadline = time.monotonic() + PATIENCE
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or p.poll() is not None:
                    raise RuntimeError(f"{t.name} did not listen")
                time.sleep(0.05)
        time.sleep(1.0)
        idle = rss_kib(p.pid)

        headers = dict(CALL_HEADERS)
        if t.needs_token:
            headers["Authorization"] = "Bearer " + (root / "state" / "archgate" / "token").read_text().strip()
        # One checked call: the load below sends exactly this request.
        status, hdrs, body = post(port, CALL, headers)
        answer = [m for m in messages(hdrs, body) if m.get("id") == 3]
        assert status == 200 and answer and not answer[0]["result"].get("isError"), (status, body)
        cpus = answer[0]["result"]["structuredContent"]["cpus"]
        assert cpus == os.cpu_count(), answer

        one = hey(port, CALL, headers, 1, REQUESTS)
        sixteen = hey(port, CALL, headers, 16, REQUESTS)
        loaded = rss_kib(p.pid)
        return {"idle": idle, "loaded": loaded, "c1": one, "c16": sixteen}
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        frames.close()


def main() -> None:
    if not shutil.which("hey"):
        sys.exit("bench: `hey` is not installed (apt-get install hey)")
    targets = [
        Target("archgate", [ARCHGATE, "serve"], [ARCHGATE, "serve", "--http", "--port", "0"], True),
        Target("python-sdk", [PYTHON, str(HERE / "reference_server.py"), "stdio"],
               [PYTHON, str(HERE / "reference_server.py"), "http", "{port}"], False),
    ]
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        starts: dict[str, list[float]] = {t.name: [] for t in targets}
        env = {t.name: xdg_env(Path(tmp) / f"{t.name}-stdio") for t in targets}
        for t in targets:  # one warm-up each (page cache), not counted
            cold_start(t, env[t.name])
        for _ in range(STARTS):  # interleaved, so a busy moment hits both
            for t in targets:
                starts[t.name].append(cold_start(t, env[t.name]))
        for t in targets:
            root = Path(tmp) / f"{t.name}-http"
            root.mkdir()
            results[t.name] = http_run(t, root)
            results[t.name]["start_s"] = statistics.median(starts[t.name])
            results[t.name]["start_all"] = starts[t.name]

    a, py = results["archgate"], results["python-sdk"]
    rows = [
        ("cold start to tools/list (median, ms)", a["start_s"] * 1000, py["start_s"] * 1000,
         py["start_s"] / a["start_s"], "x faster", ">= 20x", py["start_s"] / a["start_s"] >= 20),
        ("tools/call req/s, 1 client", a["c1"]["rps"], py["c1"]["rps"], a["c1"]["rps"] / py["c1"]["rps"],
         "x higher", ">= 10x", a["c1"]["rps"] / py["c1"]["rps"] >= 10),
        ("tools/call req/s, 16 clients", a["c16"]["rps"], py["c16"]["rps"], a["c16"]["rps"] / py["c16"]["rps"],
         "x higher", ">= 10x", a["c16"]["rps"] / py["c16"]["rps"] >= 10),
        ("p50 latency, 1 client (ms)", a["c1"]["p50_ms"], py["c1"]["p50_ms"], py["c1"]["p50_ms"] / a["c1"]["p50_ms"],
         "x lower", "", None),
        ("p99 latency, 1 client (ms)", a["c1"]["p99_ms"], py["c1"]["p99_ms"], py["c1"]["p99_ms"] / a["c1"]["p99_ms"],
         "x lower", "", None),
        ("p50 latency, 16 clients (ms)", a["c16"]["p50_ms"], py["c16"]["p50_ms"],
         py["c16"]["p50_ms"] / a["c16"]["p50_ms"], "x lower", "", None),
        ("p99 latency, 16 clients (ms)", a["c16"]["p99_ms"], py["c16"]["p99_ms"],
         py["c16"]["p99_ms"] / a["c16"]["p99_ms"], "x lower", "", None),
        ("idle RSS (MiB)", a["idle"]["VmRSS"] / 1024, py["idle"]["VmRSS"] / 1024,
         a["idle"]["VmRSS"] / py["idle"]["VmRSS"], "of Python's", "<= 0.25", a["idle"]["VmRSS"] / py["idle"]["VmRSS"] <= 0.25),
        ("RSS after 16-client load (MiB)", a["loaded"]["VmRSS"] / 1024, py["loaded"]["VmRSS"] / 1024,
         a["loaded"]["VmRSS"] / py["loaded"]["VmRSS"], "of Python's", "", None),
        ("peak RSS, VmHWM (MiB)", a["loaded"]["VmHWM"] / 1024, py["loaded"]["VmHWM"] / 1024,
         a["loaded"]["VmHWM"] / py["loaded"]["VmHWM"], "of Python's", "", None),
    ]
    print(f"cold starts: {STARTS} each (after one warm-up); HTTP: {REQUESTS} tools/call per run via hey")
    print()
    print("| measure | archgate | Python SDK | ratio | target | met |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for name, av, pv, ratio, unit, target, met in rows:
        shown = f"{ratio:.2f} {unit}" if unit == "of Python's" else f"{ratio:.1f}{unit}"
        verdict = "" if met is None else ("yes" if met else "**no**")
        print(f"| {name} | {av:.2f} | {pv:.2f} | {shown} | {target} | {verdict} |")
    print()
    print("archgate starts (ms): " + ", ".join(f"{s * 1000:.1f}" for s in a["start_all"]))
    print("Python starts (ms):   " + ", ".join(f"{s * 1000:.0f}" for s in py["start_all"]))


if __name__ == "__main__":
    main()
