"""What the loopback benches share: a private XDG sandbox for a server under test, and one `hey`
run of a JSON-RPC POST to its `/mcp`, checked to be all HTTP 200.

bench/issue2/bench.py and bench/rmcp/bench.py import it (their own directory's parent is put on
`sys.path`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path


def xdg_env(root: Path) -> dict[str, str]:
    """The process environment with every XDG directory under `root` (0700), archgate's log
    level left to its default."""
    env = dict(os.environ)
    for k, d in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"),
                 ("XDG_RUNTIME_DIR", "runtime"), ("XDG_CACHE_HOME", "cache")):
        (root / d).mkdir(mode=0o700, parents=True, exist_ok=True)
        env[k] = str(root / d)
    env.pop("ARCHGATE_LOG", None)
    return env


def hey(port: int, body: dict, headers: dict[str, str], concurrency: int, n: int) -> dict[str, float]:
    """`n` POSTs of `body` (rounded down to a multiple of `concurrency`, as hey splits them) over
    kept-alive connections; requests/s, p50 and p99 in ms. Anything but n x 200 raises."""
    n -= n % concurrency  # hey gives each worker n/c requests
    cmd = ["hey", "-n", str(n), "-c", str(concurrency), "-m", "POST", "-T", "application/json",
           "-H", "Accept: application/json, text/event-stream", "-disable-compression",
           "-d", json.dumps(body)]
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
