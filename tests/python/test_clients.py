"""The official MCP Python SDK (PyPI `mcp` 2.x) as an independent client of the real archgate binary.

Over stdio and over streamable HTTP, in both of the SDK's connect modes — `legacy` (the
initialize handshake) and `auto` (probe `server/discover`, fall back to initialize) — the client
connects, lists tools, calls `system_status` and checks the answer against what Python itself
reads from this machine. The binary under test is `$ARCHGATE_BIN`; each test gets private XDG
directories, and the HTTP server binds port 0 and is found through its listening frame.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

ARCHGATE_BIN = os.environ.get("ARCHGATE_BIN", "")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def binary() -> str:
    assert ARCHGATE_BIN and Path(ARCHGATE_BIN).is_file(), "set ARCHGATE_BIN to the archgate binary under test"
    return ARCHGATE_BIN


@pytest.fixture
def xdg_env(tmp_path: Path) -> dict[str, str]:
    # The tests' world (tests/world/no-polkit.c, preloaded by scripts/test.sh): carried into every
    # archgate started with this env, the SDK's stdio servers included (it passes on only a short
    # list of the caller's variables).
    env = {"LD_PRELOAD": os.environ["LD_PRELOAD"]} if os.environ.get("LD_PRELOAD") else {}
    for name in ("CONFIG", "STATE", "RUNTIME", "CACHE"):
        d = tmp_path / name.lower()
        d.mkdir(mode=0o700)
        env[f"XDG_{name}_HOME" if name != "RUNTIME" else "XDG_RUNTIME_DIR"] = str(d)
    return env


class HttpServer:
    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [ARCHGATE_BIN, "serve", "--http", "--port", "0"],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr: list[str] = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        first = self._first_frame()
        assert first.get("event") == "listening", f"first frame {first}; stderr: {''.join(self.stderr)}"
        self.port = int(first["port"])
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.token = (Path(env["XDG_STATE_HOME"]) / "archgate" / "token").read_text().strip()

    def _first_frame(self) -> dict:
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(30)
        assert box and box[0], f"no frame from archgate; stderr: {''.join(self.stderr)}"
        return json.loads(box[0])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def http_server(xdg_env: dict[str, str]) -> Iterator[HttpServer]:
    server = HttpServer(xdg_env)
    try:
        yield server
    finally:
        server.stop()


def connect(transport: str, mode: str, xdg_env: dict[str, str], request: pytest.FixtureRequest) -> Client:
    if transport == "stdio":
        params = StdioServerParameters(command=ARCHGATE_BIN, args=["serve"], env=xdg_env)
        return Client(params, mode=mode)
    server: HttpServer = request.getfixturevalue("http_server")
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=30)
    return Client(streamable_http_client(server.url, http_client=http), mode=mode)


def check_status(s: dict) -> None:
    """The tool's facts against Python's own view of this machine."""
    assert s["cpus"] == os.cpu_count()
    assert s["kernel"]["release"] == os.uname().release
    assert s["kernel"]["name"] == os.uname().sysname
    assert s["hostname"] == os.uname().nodename
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert abs(s["memory"]["total_bytes"] - pages) < 16 * 1024 * 1024
    assert s["uptime_seconds"] > 0
    assert any(d["path"] == "/" for d in s["disks"]), s["disks"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_initialize_list_and_call_system_status(
    transport: str, mode: str, xdg_env: dict[str, str], request: pytest.FixtureRequest
) -> None:
    async with connect(transport, mode, xdg_env, request) as client:
        assert client.server_info is not None
        assert client.server_info.name == "archgate"
        assert client.server_info.version.count(".") >= 2
        if mode == "legacy":
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        else:
            # archgate speaks the stateless era, so the probe must land there, not fall back.
            assert client.protocol_version in MODERN_PROTOCOL_VERSIONS

        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "system_status" in tools, sorted(tools)
        status_tool = tools["system_status"]
        assert status_tool.annotations is not None
        assert status_tool.annotations.read_only_hint is True
        assert status_tool.annotations.destructive_hint is not True
        assert status_tool.input_schema["type"] == "object"

        result = await client.call_tool("system_status", {})
        assert result.is_error is False, result
        check_status(result.structured_content)
        texts = [c.text for c in result.content if c.type == "text"]
        assert texts and json.loads(texts[0])["cpus"] == os.cpu_count()

        refused = await client.call_tool("system_status", {"unexpected": 1})
        assert refused.is_error is True


@pytest.mark.anyio
async def test_http_without_the_token_is_refused(http_server: HttpServer) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": "Bearer wrong"}, timeout=30)
    with pytest.raises(Exception):
        async with Client(streamable_http_client(http_server.url, http_client=http), mode="legacy"):
            pass


@pytest.mark.anyio
async def test_closing_an_http_session_is_a_clean_delete(
    http_server: HttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDK ends its session with DELETE /mcp on close: archgate answers 200 (not 202, which the
    SDK logs as "Session termination failed"), and the session is gone on the server."""
    caplog.set_level(logging.DEBUG, logger="mcp")
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {http_server.token}"}, timeout=30)
    async with Client(streamable_http_client(http_server.url, http_client=http), mode="legacy") as client:
        assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        assert (await client.list_tools()).tools
    failed = [r.getMessage() for r in caplog.records if "Session termination failed" in r.getMessage()]
    assert not failed, failed
    async with httpx2.AsyncClient(timeout=10) as plain:
        health = (await plain.get(f"http://127.0.0.1:{http_server.port}/health")).json()
    assert health["sessions"]["live"] == 0, health
    # Without a token, /health names no client.
    assert "by_client" not in health["calls"], health

