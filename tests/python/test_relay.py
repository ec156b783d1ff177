"""The client itself as the person's channel: the official MCP Python SDK as a trusted relay.

A call that needs the person's yes reaches a client marked `trusted_relay = true` as an
elicitation: on the handshake era (`legacy`) as an `elicitation/create` request while the call
waits, on the stateless era (`auto` lands on 2026-07-28) as an `InputRequiredResult` the SDK
answers and retries by itself. The SDK's elicitation callback plays the person. No other channel
runs but the CLI's control socket (page and notifications off; nobody answers it), so only the
relay can decide. A client without `trusted_relay` is never asked, whatever it declares. Every decision is in the audit log with
the channel `client`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import ElicitRequestParams, ElicitResult

from test_clients import ARCHGATE_BIN, connect  # noqa: F401  (fixtures below)
from test_clients import anyio_backend, binary, http_server, xdg_env  # noqa: F401

CONFIG = """
[policy]
ask = ["system_status"]
[approval]
page = false
notifications = false
timeout_s = {timeout}
[clients.local]
trusted_relay = {trusted}
[clients.default]
trusted_relay = {trusted}
"""


def write_config(xdg_env: dict[str, str], trusted: bool, timeout: int = 30) -> None:
    d = Path(xdg_env["XDG_CONFIG_HOME"]) / "archgate"
    d.mkdir(mode=0o700, exist_ok=True)
    (d / "config.toml").write_text(CONFIG.format(trusted="true" if trusted else "false", timeout=timeout))


class Person:
    """Answers each elicitation with `decision`, and remembers what it was shown."""

    def __init__(self, action: str, decision: str | None) -> None:
        self.action = action
        self.decision = decision
        self.shown: list[ElicitRequestParams] = []

    async def __call__(self, context, params: ElicitRequestParams) -> ElicitResult:  # noqa: ANN001
        self.shown.append(params)
        content = {"decision": self.decision} if self.decision else None
        return ElicitResult(action=self.action, content=content)


def audit(xdg_env: dict[str, str], at_least: int) -> list[dict]:
    """The log's system_status records, once `at_least` are written (the writer is a thread)."""
    log = Path(xdg_env["XDG_STATE_HOME"]) / "archgate" / "activity.jsonl"
    for _ in range(100):
        lines = log.read_text().splitlines() if log.exists() else []
        records = [json.loads(x) for x in lines if x.strip()]
        # Call records only: events (`asking`, `started`) name their tool too.
        records = [r for r in records if r.get("tool") == "system_status" and "event" not in r]
        if len(records) >= at_least:
            return records
        time.sleep(0.05)
    return records


def relay_client(transport: str, mode: str, xdg_env, request, person: Person) -> Client:  # noqa: ANN001
    client = connect(transport, mode, xdg_env, request)
    client.elicitation_callback = person
    return client


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_trusted_relay_carries_the_persons_yes_and_no(
    transport: str, mode: str, xdg_env: dict[str, str], request: pytest.FixtureRequest
) -> None:
    write_config(xdg_env, trusted=True)
    yes = Person("accept", "allow")
    async with relay_client(transport, mode, xdg_env, request, yes) as client:
        result = await client.call_tool("system_status", {})
        assert result.is_error is False, result
        assert result.structured_content["cpus"] > 0
    assert len(yes.shown) == 1
    # The person was shown exactly what runs, and who asks.
    message = yes.shown[0].message
    assert "system_status" in message and ("local" in message or "default" in message), message

    no = Person("decline", None)
    async with relay_client(transport, mode, xdg_env, request, no) as client:
        result = await client.call_tool("system_status", {})
        assert result.is_error is True
        assert "declined" in json.dumps(result.model_dump()), result
    assert len(no.shown) == 1

    # The stateless era parks the question first (one record), then the retry decides (another).
    expected_asks = 2 if mode == "auto" else 0
    records = audit(xdg_env, 2 + expected_asks)
    final = [r for r in records if r["outcome"] != "input_required"]
    assert [r["outcome"] for r in final] == ["ok", "declined"], records
    assert all(r["approval"]["channel"] == "client" for r in final), final
    assert sum(r["outcome"] == "input_required" for r in records) == expected_asks, records


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_not_trusted_to_relay_is_never_asked(
    mode: str, xdg_env: dict[str, str], request: pytest.FixtureRequest
) -> None:
    write_config(xdg_env, trusted=False, timeout=5)
    eager = Person("accept", "allow")
    async with relay_client("stdio", mode, xdg_env, request, eager) as client:
        result = await client.call_tool("system_status", {})
        assert result.is_error is True
    assert eager.shown == []
    # The person's own channel (the CLI's control socket) was asked; silence is no.
    [record] = audit(xdg_env, 1)
    assert record["outcome"] == "timed_out", record
