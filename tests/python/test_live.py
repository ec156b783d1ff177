"""Live configuration, resources and prompts, seen by the official MCP Python SDK client.

- An edit of config.toml that disables a tool sends exactly one `notifications/tools/list_changed`
  to a connected client, and the tool is gone from its next tools/list; an edit that only changes
  policy sends none.
- Resources and prompts are read through the SDK, and every resource read leaves an audit record,
  like a tool call.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from test_clients import ARCHGATE_BIN, anyio_backend, binary, xdg_env  # noqa: F401  (fixtures)


def method_of(message: object) -> str | None:
    for obj in (message, getattr(message, "root", None)):
        m = getattr(obj, "method", None)
        if isinstance(m, str):
            return m
    return None


def config_file(env: dict[str, str]) -> Path:
    d = Path(env["XDG_CONFIG_HOME"]) / "archgate"
    d.mkdir(parents=True, exist_ok=True)
    return d / "config.toml"


def audit_records(env: dict[str, str]) -> list[dict]:
    path = Path(env["XDG_STATE_HOME"]) / "archgate" / "activity.jsonl"
    if not path.exists():
        return []
    # Call records only: events (an act call's `started` line names its tool too) are left out.
    return [r for r in (json.loads(line) for line in path.read_text().splitlines() if line.strip())
            if "tool" in r and "event" not in r]


@pytest.mark.anyio
async def test_tool_list_changed_only_when_the_visible_set_changes(xdg_env: dict[str, str]) -> None:
    cfg = config_file(xdg_env)
    cfg.write_text("")
    seen: list[str] = []

    async def on_message(message: object) -> None:
        m = method_of(message)
        if m:
            seen.append(m)

    params = StdioServerParameters(command=ARCHGATE_BIN, args=["serve"], env=xdg_env)
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        before = {t.name for t in (await client.list_tools()).tools}
        assert "system_status" in before

        # A policy-only edit: the visible tools do not change, so nothing is sent.
        cfg.write_text('[policy]\ndeny = ["pkg_search"]\n')
        await anyio.sleep(5)  # the config is polled every 2 s
        assert "notifications/tools/list_changed" not in seen, seen

        # Disabling a tool changes what this client sees: exactly one notification.
        cfg.write_text('[policy]\ndeny = ["pkg_search"]\n[tools]\ndisabled = ["system_status"]\n')
        deadline = time.monotonic() + 15
        while "notifications/tools/list_changed" not in seen and time.monotonic() < deadline:
            await anyio.sleep(0.2)
        await anyio.sleep(4.5)  # two more polls: nothing else may follow
        assert seen.count("notifications/tools/list_changed") == 1, seen
        after = {t.name for t in (await client.list_tools()).tools}
        assert after == before - {"system_status"}

        # The disabled tool is refused by name too.
        refused = await client.call_tool("system_status", {})
        assert refused.is_error is True


@pytest.mark.anyio
async def test_resources_and_prompts_through_the_sdk_are_audited(xdg_env: dict[str, str]) -> None:
    params = StdioServerParameters(command=ARCHGATE_BIN, args=["serve"], env=xdg_env)
    async with Client(params, mode="legacy") as client:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"archgate://policy", "archgate://activity/recent"} <= uris, uris
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert "pacman://package/{name}" in templates and "archwiki://page/{title}" in templates, templates

        policy = await client.read_resource("archgate://policy")
        body = json.loads(policy.contents[0].text)
        assert body["rules"] == {"deny": [], "ask": [], "allow": []}
        assert any(d["route"] == "system_status" and d["decision"] == "allow" for d in body["decisions"])

        await client.call_tool("system_status", {})
        recent = await client.read_resource("archgate://activity/recent")
        records = json.loads(recent.contents[0].text)["records"]
        assert any(r["tool"] == "system_status" for r in records), records

        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert prompts == {"troubleshoot", "audit_aur_package", "safe_system_update", "explain_package"}
        got = await client.get_prompt("troubleshoot", {"symptom": "no sound after update"})
        text = got.messages[0].content.text
        assert "no sound after update" in text and "wiki_search" in text

    # Each resource read left exactly one record, through the gate, like a tool call.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        tools = [r["tool"] for r in audit_records(xdg_env)]
        if tools.count("archgate_activity") == 1:
            break
        time.sleep(0.1)
    tools = [r["tool"] for r in audit_records(xdg_env)]
    assert tools.count("archgate_policy") == 1, tools
    assert tools.count("archgate_activity") == 1, tools
