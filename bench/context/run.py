#!/usr/bin/env python3
"""The context footprint of archgate's tool list, per client preset: the complete tools/list as
each preset's client receives it over HTTP, in JSON bytes and in tokens counted by Claude's BPE
tokenizer (tests/clients/count-tokens.mjs, @anthropic-ai/tokenizer from npm; `npm ci` in
tests/clients first). The target for the `full` preset is 6,000 tokens, checked by
tests/run-ts-client.sh. Usage: bench/context/run.py [path/to/archgate]"""

import json
import os
import subprocess
import sys
import tempfile
import urllib.request

COUNTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "clients", "count-tokens.mjs")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ARCHGATE_BIN", "target/release/archgate")


def post(port: int, token: str, body: dict, session: str | None) -> tuple[dict, str | None]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
            **({"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"} if session else {}),
        },
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read().decode()
        sid = r.headers.get("mcp-session-id") or session
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            msg = json.loads(line[5:])
            if msg.get("id") == body.get("id"):
                return msg, sid
    return (json.loads(text) if text.strip().startswith("{") else {}), sid


def tokens(text: str) -> int:
    out = subprocess.run(["node", COUNTER], input=text, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        env = {**os.environ}
        for k in ("CONFIG", "STATE", "CACHE"):
            env[f"XDG_{k}_HOME"] = os.path.join(d, k.lower())
        env["XDG_RUNTIME_DIR"] = os.path.join(d, "run")
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
        bearer = {}
        for preset in ("read-only", "desktop", "full"):
            out = subprocess.run([BIN, "clients", "add", f"bench-{preset}", "--preset", preset],
                                 env=env, capture_output=True, text=True, check=True).stdout
            bearer[preset] = next(w for w in out.split() if len(w) == 64 and all(c in "0123456789abcdef" for c in w))
        srv = subprocess.Popen([BIN, "serve", "--http", "--port", "0"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            port = json.loads(srv.stdout.readline())["port"]
            print(f"{'preset':<10} {'tools':>5} {'bytes':>7} {'tokens':>7}  target (full) 6,000")
            for preset, tok in bearer.items():
                init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
                _, sid = post(port, tok, init, None)
                post(port, tok, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
                msg, _ = post(port, tok, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, sid)
                tools = msg["result"]["tools"]
                text = json.dumps({"tools": tools}, separators=(",", ":"))
                print(f"{preset:<10} {len(tools):>5} {len(text):>7} {tokens(text):>7}")
        finally:
            srv.terminate()
            srv.wait(10)


if __name__ == "__main__":
    main()
