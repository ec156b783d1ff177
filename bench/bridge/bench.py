"""Bridged stdio against in-process stdio: `tools/call system_status` latency, side by side.

One daemon (`archgate serve --http --port 0`) in private XDG directories; one stdio client of
`archgate serve --in-process` (its own gate) and one of `archgate serve` (the bridge to that
daemon), both spoken to with raw JSON-RPC lines. Calls alternate in rounds between the two, so
both see the same machine load. Prints p50 and p99 of each and the bridged/in-process ratios
(issue 18's target: at most 2x). Figures, not a test.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = os.environ.get("ARCHGATE_BIN") or sys.argv[1]
CALLS = int(os.environ.get("BENCH_CALLS", "400"))
ROUND = 20


class Stdio:
    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.p = subprocess.Popen(
            [BIN, *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1,
        )
        self.n = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict) -> None:
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit(f"{method}: the server closed stdout")
            msg = json.loads(line)
            if msg.get("id") == self.n:
                return msg

    def call(self) -> float:
        t = time.perf_counter()
        r = self.request("tools/call", {"name": "system_status", "arguments": {}})
        took = time.perf_counter() - t
        res = r.get("result", {})
        if res.get("isError") or res.get("structuredContent", {}).get("cpus") != os.cpu_count():
            raise SystemExit(f"a call failed: {json.dumps(r)[:300]}")
        return took

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(10)


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] * 1000


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="archgate-bridge-bench-"))
    env = dict(os.environ)
    for k, d in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"),
                 ("XDG_RUNTIME_DIR", "runtime"), ("XDG_CACHE_HOME", "cache")):
        (root / d).mkdir(mode=0o700)
        env[k] = str(root / d)
    env.pop("ARCHGATE_CONFIG", None)
    (root / "config" / "archgate").mkdir()
    (root / "config" / "archgate" / "config.toml").write_text(
        "[approval]\npage = false\nnotifications = false\n"
        "[budgets]\nper_minute = 100000\nper_day = 1000000\n"
    )
    daemon = subprocess.Popen([BIN, "serve", "--http", "--port", "0"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = json.loads(daemon.stdout.readline())
        assert first.get("event") == "listening", first
        # Its call frames are read away, so a full pipe never holds the daemon up.
        import threading
        threading.Thread(target=lambda: [None for _ in daemon.stdout], daemon=True).start()
        inproc = Stdio(["serve", "--in-process"], env)
        bridged = Stdio(["serve"], env)
        for c in (inproc, bridged):  # warm up
            for _ in range(10):
                c.call()
        a: list[float] = []
        b: list[float] = []
        while len(a) < CALLS:
            for _ in range(ROUND):
                a.append(inproc.call())
            for _ in range(ROUND):
                b.append(bridged.call())
        inproc.close()
        bridged.close()
    finally:
        daemon.terminate()
        daemon.wait(10)
    p50a, p99a, p50b, p99b = pct(a, 0.5), pct(a, 0.99), pct(b, 0.5), pct(b, 0.99)
    print(f"tools/call system_status over stdio, {len(a)} calls each, alternating rounds of {ROUND}")
    print(f"{'':12} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    print(f"{'in-process':12} {p50a:8.3f} {p99a:8.3f} {statistics.mean(a) * 1000:8.3f}")
    print(f"{'bridged':12} {p50b:8.3f} {p99b:8.3f} {statistics.mean(b) * 1000:8.3f}")
    print(f"ratio bridged/in-process: p50 {p50b / p50a:.2f}x, p99 {p99b / p99a:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
