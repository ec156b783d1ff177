"""One daemon per desktop: stdio clients started by the official Python SDK reach it through
`archgate serve` (the bridge), beside an HTTP client, and share its broker, budgets, nag guard
and activity log; the person's CLI sees every pending call; a daemon killed mid-call leaves the
agent an answer and the log one record, and the next call reaches the restarted daemon.

Each test has its own daemon (`serve --http --port 0`) in private XDG directories.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from test_clients import ARCHGATE_BIN, HttpServer, anyio_backend, binary, xdg_env  # noqa: F401  (fixtures)
from test_live import audit_records, config_file

# A call that asks the person (act tier) and runs nothing before the yes.
ASKS = "clipboard_write"


def health(server: HttpServer) -> dict:
    return httpx2.get(f"http://127.0.0.1:{server.port}/health", timeout=10).json()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [ARCHGATE_BIN, *args], env={**os.environ, **env}, capture_output=True, text=True, timeout=60
    )


def pending(env: dict[str, str]) -> list[dict]:
    out = cli(env, "approvals", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def stdio(env: dict[str, str], client: str | None = None) -> Client:
    args = ["serve"] if client is None else ["serve", "--client", client]
    return Client(StdioServerParameters(command=ARCHGATE_BIN, args=args, env=env), mode="legacy")


def http(server: HttpServer) -> Client:
    h = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=120)
    return Client(streamable_http_client(server.url, http_client=h), mode="legacy")


async def wait_until(what, within: float = 30.0):
    deadline = time.monotonic() + within
    while True:
        v = await anyio.to_thread.run_sync(what)
        if v or time.monotonic() > deadline:
            return v
        await anyio.sleep(0.05)


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def write_config(env: dict[str, str], approval: str = "", extra: str = "", page: bool = False) -> None:
    """A config whose page (when on) listens on a free port, without desktop notifications, and
    whose configured server port nothing listens on (bound and released): the daemon is started
    with --port 0, and `status` judges the configured port — on a machine where another user's
    archgate holds 8765 it would rightly warn (the port held by another uid)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    page_line = "page = true\npage_port = 0\n" if page else "page = false\n"
    config_file(env).write_text(
        f"[server]\nport = {free}\n[approval]\n{page_line}notifications = false\n{approval}{extra}"
    )


@pytest.mark.anyio
async def test_two_stdio_clients_and_an_http_client_share_one_pending_list(xdg_env: dict[str, str]) -> None:
    write_config(xdg_env, "timeout_s = 60\n", page=True)
    server = HttpServer(xdg_env)
    results: dict[str, object] = {}
    try:
        async with stdio(xdg_env, "cursor") as named, stdio(xdg_env) as local, http(server) as remote:

            async def ask(name: str, client: Client) -> None:
                results[name] = await client.call_tool(ASKS, {"text": f"from {name}"})

            async with anyio.create_task_group() as tg:
                for name, c in (("cursor", named), ("local", local), ("default", remote)):
                    tg.start_soon(ask, name, c)
                # One pending list: /health counts all three, the person's CLI lists all three.
                assert await wait_until(lambda: health(server)["pending_approvals"] == 3), health(server)
                listed = pending(xdg_env)
                assert sorted(q["client"] for q in listed) == ["cursor", "default", "local"], listed
                # Call ids are unique (the daemon's).
                assert len({q["id"] for q in listed}) == 3
                # The bar counts all three.
                def bar() -> dict:
                    out = cli(xdg_env, "status", "--waybar")
                    return json.loads(out.stdout)

                assert await wait_until(lambda: bar()["text"] == "3"), bar()
                # The page lists them too (its own view of the same broker).
                page = page_pending(xdg_env)
                assert sorted(q["client"] for q in page) == ["cursor", "default", "local"], page
                for q in listed:
                    out = cli(xdg_env, "deny", q["id"])
                    assert out.returncode == 0, out.stderr
        for name in ("cursor", "local", "default"):
            r = results[name]
            assert r.is_error, r
            assert "declined" in text_of(r), text_of(r)
        # One activity log with every record, each under its client's name.
        recs = await wait_until(lambda: [r for r in audit_records(xdg_env) if r["tool"] == ASKS] if len(
            [r for r in audit_records(xdg_env) if r["tool"] == ASKS]) >= 3 else None)
        assert sorted(r["client"] for r in recs) == ["cursor", "default", "local"], recs
        assert all(r["approval"]["channel"] == "cli" for r in recs), recs
    finally:
        server.stop()


def page_pending(env: dict[str, str]) -> list[dict]:
    """The approval page's pending list, logged in with the code `archgate ui --print` gives."""
    out = cli(env, "ui", "--print")
    assert out.returncode == 0, out.stdout + out.stderr
    words = out.stdout.split()
    url = next(w for w in words if w.startswith("http://127.0.0.1:"))
    code = words[words.index("code") + 1]
    base = url.rsplit("/login", 1)[0]
    with httpx2.Client(base_url=base, timeout=10, follow_redirects=False) as c:
        r = c.post("/login", content=f"code={code}", headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 303, (r.status_code, r.text)
        state = c.get("/api/state")
        assert state.status_code == 200, state.text
        return state.json()["pending"]


@pytest.mark.anyio
async def test_one_budget_per_client_name_across_its_sessions(xdg_env: dict[str, str]) -> None:
    write_config(xdg_env, extra="[budgets]\nper_minute = 3\n")
    server = HttpServer(xdg_env)
    try:
        async with stdio(xdg_env) as a, stdio(xdg_env) as b:
            for c in (a, b, a):
                r = await c.call_tool("system_status", {})
                assert not r.is_error, text_of(r)
            fourth = await b.call_tool("system_status", {})
            assert fourth.is_error, fourth
            assert "budget" in text_of(fourth), text_of(fourth)
            # Another client name has its own budget.
            async with stdio(xdg_env, "cursor") as other:
                r = await other.call_tool("system_status", {})
                assert not r.is_error, text_of(r)
    finally:
        server.stop()


@pytest.mark.anyio
async def test_one_nag_guard_for_every_client(xdg_env: dict[str, str]) -> None:
    write_config(xdg_env, "timeout_s = 60\nmax_questions = 2\n")
    server = HttpServer(xdg_env)
    results: dict[str, object] = {}
    try:
        async with stdio(xdg_env, "cursor") as named, stdio(xdg_env) as local, http(server) as remote:

            async def ask(name: str, client: Client) -> None:
                results[name] = await client.call_tool(ASKS, {"text": name})

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask, "cursor", named)
                assert await wait_until(lambda: health(server)["pending_approvals"] == 1)
                tg.start_soon(ask, "local", local)
                assert await wait_until(lambda: health(server)["pending_approvals"] == 2)
                # The third question, from a third client, is past the one cap of 2.
                third = await remote.call_tool(ASKS, {"text": "default"})
                assert third.is_error and "already been asked" in text_of(third), text_of(third)
                for q in pending(xdg_env):
                    cli(xdg_env, "deny", q["id"])
    finally:
        server.stop()


@pytest.mark.anyio
async def test_a_stripped_stdio_client_reaches_the_daemon_and_the_person_approves(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    person = {
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_RUNTIME_DIR": str(run),
    }
    (home / ".config" / "archgate").mkdir(parents=True)
    # A stripped client finds the daemon where the session puts it, never through a pointer file
    # (issue 33): here the runtime directory the person's config names, which both read. (Its
    # /run/user/UID fallback is test_session.py's, which needs root.)
    (home / ".config" / "archgate" / "config.toml").write_text(
        f"[paths]\nruntime_dir = \"{run / 'archgate'}\"\n"
        "[approval]\ntimeout_s = 60\npage = false\nnotifications = false\n"
    )
    server = HttpServer(person)
    stripped = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if os.environ.get("LD_PRELOAD"):  # the tests' world (tests/world/no-polkit.c)
        stripped["LD_PRELOAD"] = os.environ["LD_PRELOAD"]
    params = StdioServerParameters(command=ARCHGATE_BIN, args=["serve"], env=stripped)
    result: dict[str, object] = {}
    try:
        async with Client(params, mode="legacy") as client:

            async def ask() -> None:
                result["r"] = await client.call_tool(ASKS, {"text": "stripped"})

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                listed = await wait_until(lambda: pending(person))
                assert len(listed) == 1 and listed[0]["client"] == "local", listed
                assert health(server)["pending_approvals"] == 1
                out = cli(person, "approve", listed[0]["id"])
                assert out.returncode == 0, out.stderr + out.stdout
        recs = await wait_until(lambda: [r for r in audit_records(person) if r["tool"] == ASKS])
        assert len(recs) == 1, recs
        assert recs[0]["approval"]["channel"] == "cli", recs[0]
        assert recs[0]["approval"]["outcome"] == "accepted", recs[0]
        # The daemon ran it (its call id), not an archgate of the client's own.
        assert f"-{server.proc.pid}-" in recs[0]["id"], recs[0]
        assert "r" in result
    finally:
        server.stop()


@pytest.mark.anyio
async def test_a_killed_daemon_leaves_an_answer_one_record_and_the_next_call_works(xdg_env: dict[str, str]) -> None:
    write_config(xdg_env, "timeout_s = 60\n")
    server = HttpServer(xdg_env)
    restarted: HttpServer | None = None
    try:
        async with stdio(xdg_env, "cursor") as client:
            first = await client.call_tool("system_status", {})
            assert not first.is_error
            got: dict[str, object] = {}

            async def ask() -> None:
                got["r"] = await client.call_tool(ASKS, {"text": "parked"})

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                assert await wait_until(lambda: health(server)["pending_approvals"] == 1)
                os.kill(server.proc.pid, signal.SIGKILL)
                server.proc.wait(10)
            r = got["r"]
            assert r.is_error, r
            assert text_of(r).startswith("unreachable:"), text_of(r)
            recs = await wait_until(lambda: [x for x in audit_records(xdg_env) if x["tool"] == ASKS])
            await anyio.sleep(0.5)
            recs = [x for x in audit_records(xdg_env) if x["tool"] == ASKS]
            assert len(recs) == 1, recs
            assert recs[0]["outcome"] == "unreachable" and recs[0]["client"] == "cursor", recs[0]
            # The daemon comes back (as the unit's Restart= would); the same session goes on.
            restarted = HttpServer(xdg_env)
            again = await client.call_tool("system_status", {})
            assert not again.is_error, text_of(again)
        recs = await wait_until(
            lambda: [x for x in audit_records(xdg_env) if x["tool"] == "system_status" and f"-{restarted.proc.pid}-" in x["id"]]
        )
        assert len(recs) == 1, audit_records(xdg_env)
        assert len([x for x in audit_records(xdg_env) if x["tool"] == ASKS]) == 1
    finally:
        server.stop()
        if restarted:
            restarted.stop()
