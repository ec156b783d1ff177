"""A stdio archgate started with a stripped environment still finds the person's session.

The TypeScript SDK, MCP Inspector, fastmcp and the official Python SDK start a stdio server with
little more than HOME and PATH: no XDG_RUNTIME_DIR. archgate then falls back to /run/user/UID when
that directory is the person's own (0700), so its control socket lands where the person's
`archgate approvals` (run with their normal environment, XDG_RUNTIME_DIR set) looks.

So as not to touch the /run/user directory of anyone on this machine (a running archgate), the
test makes its own person: a system user `archgate-sess` with its own /run/user/UID, and runs both
the server (through `setpriv`, environment untouched) and the CLI as that user. It needs root.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from test_clients import ARCHGATE_BIN, anyio_backend, binary  # noqa: F401  (fixtures)

USER = "archgate-sess"
PATH = "/usr/local/bin:/usr/bin:/bin"


def ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=True,
        )
        return pwd.getpwnam(USER)


def as_user(u: pwd.struct_passwd, argv: list[str]) -> list[str]:
    return ["setpriv", f"--reuid={u.pw_uid}", f"--regid={u.pw_gid}", "--clear-groups", *argv]


@pytest.fixture
def person(tmp_path: Path):
    if os.geteuid() != 0:
        pytest.skip("needs root (it makes a test user and its /run/user directory)")
    u = ensure_user()
    run_user = Path(f"/run/user/{u.pw_uid}")
    made = not run_user.exists()
    run_user.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chown(run_user, u.pw_uid, u.pw_gid)
    run_user.chmod(0o700)
    # A leftover of an earlier run (this user runs nothing else) would list stale instances.
    shutil.rmtree(run_user / "archgate", ignore_errors=True)
    base = Path(tempfile.mkdtemp(prefix="archgate-sess-", dir="/var/tmp"))
    base.chmod(0o755)
    home = base / "home"
    (home / ".config" / "archgate").mkdir(parents=True)
    (home / ".config" / "archgate" / "config.toml").write_text(
        "[approval]\ntimeout_s = 60\npage = false\nnotifications = false\n"
    )
    for root, dirs, files in os.walk(home):
        for name in [root, *(os.path.join(root, d) for d in dirs), *(os.path.join(root, f) for f in files)]:
            os.chown(name, u.pw_uid, u.pw_gid)
    home.chmod(0o700)
    # The binary must be reachable by the test user; copy it when its directory is not.
    binary = ARCHGATE_BIN
    if subprocess.run(as_user(u, ["test", "-x", binary])).returncode != 0:
        binary = str(base / "archgate")
        shutil.copy2(ARCHGATE_BIN, binary)
        os.chmod(binary, 0o755)
    try:
        yield u, home, run_user, binary
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(run_user / "archgate", ignore_errors=True)
        if made:
            shutil.rmtree(run_user, ignore_errors=True)


def approvals(u: pwd.struct_passwd, home: Path, run_user: Path, binary: str) -> list[dict]:
    """`archgate approvals --json` as the person in their normal environment."""
    env = {"HOME": str(home), "PATH": PATH, "XDG_RUNTIME_DIR": str(run_user)}
    out = subprocess.run(
        as_user(u, [binary, "approvals", "--json"]), env=env, capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def deny(u: pwd.struct_passwd, home: Path, run_user: Path, binary: str, call_id: str) -> None:
    env = {"HOME": str(home), "PATH": PATH, "XDG_RUNTIME_DIR": str(run_user)}
    out = subprocess.run(as_user(u, [binary, "deny", call_id]), env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr


@pytest.mark.anyio
async def test_a_stripped_stdio_server_is_found_by_the_persons_approvals(person) -> None:
    u, home, run_user, binary = person
    # Exactly what such clients pass: HOME and PATH (the SDK adds its own short list of
    # LOGNAME, SHELL, TERM, USER from this process); no XDG variable at all.
    params = StdioServerParameters(
        command="/usr/bin/setpriv",
        args=[f"--reuid={u.pw_uid}", f"--regid={u.pw_gid}", "--clear-groups", binary, "serve"],
        env={"HOME": str(home), "PATH": PATH},
    )
    async with Client(params, mode="legacy") as client:
        # The server put its control socket in the person's runtime directory, not ~/.local/state.
        result: dict = {}

        async def call() -> None:
            result["r"] = await client.call_tool("notify", {"title": "archgate session test"})

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            deadline = time.monotonic() + 30
            pending: list[dict] = []
            while time.monotonic() < deadline:
                pending = await anyio.to_thread.run_sync(approvals, u, home, run_user, binary)
                if pending or "r" in result:
                    break
                await anyio.sleep(0.2)
            assert len(pending) == 1, f"the person's approvals listed {pending}; the call: {result}"
            assert pending[0]["tool"] == "notify", pending
            assert (run_user / "archgate" / "control.sock").is_socket()
            assert not (home / ".local" / "state" / "archgate" / "run").exists()
            await anyio.to_thread.run_sync(deny, u, home, run_user, binary, pending[0]["id"])
        assert result["r"].is_error is True
        assert "declined" in json.dumps(result["r"].model_dump()), result["r"]
