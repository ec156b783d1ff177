"""The benchmark's reference: an MCP server written with the official Python SDK (`mcp` 2.x,
its MCPServer API, formerly FastMCP) with one tool, `system_status`, that does the same reads
as archgate's: kernel, hostname, uptime, load, CPUs, memory, swap, disk use of / and /home,
failed systemd units (one `systemctl` run, only where systemd runs) and batteries.

Usage: reference_server.py stdio | reference_server.py http PORT
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("reference-python")


def _read(path: str) -> str:
    return Path(path).read_text().strip()


def _probe(fn):
    try:
        return fn()
    except Exception as e:  # one failing probe must not fail the others
        return {"error": {"kind": type(e).__name__, "message": str(e)}}


def _count_cpus() -> int:
    n = 0
    for part in _read("/sys/devices/system/cpu/online").split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def _meminfo() -> dict[str, int]:
    out = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        out[key] = int(rest.split()[0]) * 1024
    return out


def _usage(total: int, available: int) -> dict[str, int]:
    return {"total_bytes": total, "available_bytes": available, "used_bytes": total - available}


def _disk(path: str) -> dict[str, Any]:
    def f():
        st = os.statvfs(path)
        free = st.f_bfree * st.f_frsize
        total = st.f_blocks * st.f_frsize
        return {"path": path, "total_bytes": total, "available_bytes": st.f_bavail * st.f_frsize, "used_bytes": total - free}

    return _probe(f)


def _failed_units() -> Any:
    if not (Path("/run/systemd/system").is_dir() or _probe(lambda: _read("/proc/1/comm")) == "systemd"):
        return {"error": {"kind": "not_available", "message": "systemd is not running on this machine"}}
    out = subprocess.run(
        ["systemctl", "--failed", "--no-legend", "--plain", "--no-pager", "--output=json"],
        capture_output=True, text=True, timeout=5, stdin=subprocess.DEVNULL,
    )
    return json.loads(out.stdout or "[]")


def _batteries() -> list[dict[str, Any]]:
    root = Path("/sys/class/power_supply")
    found = []
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        if _probe(lambda: _read(str(d / "type"))) == "Battery":
            found.append({"name": d.name, "capacity_percent": _probe(lambda: int(_read(str(d / "capacity")))),
                          "status": _probe(lambda: _read(str(d / "status")))})
    return found


@mcp.tool()
def system_status() -> dict[str, Any]:
    """Kernel, uptime, load, memory, swap, disk use of / and /home, failed systemd units and battery."""
    mem = _probe(_meminfo)
    disks = [_disk("/")]
    if Path("/home").is_dir():
        disks.append(_disk("/home"))
    load = _probe(lambda: _read("/proc/loadavg").split())
    return {
        "kernel": _probe(lambda: {"name": _read("/proc/sys/kernel/ostype"), "release": _read("/proc/sys/kernel/osrelease")}),
        "hostname": _probe(lambda: _read("/proc/sys/kernel/hostname")),
        "uptime_seconds": _probe(lambda: int(float(_read("/proc/uptime").split()[0]))),
        "load": load if isinstance(load, dict) else {"one": float(load[0]), "five": float(load[1]), "fifteen": float(load[2])},
        "cpus": _probe(_count_cpus),
        "memory": _usage(mem["MemTotal"], mem["MemAvailable"]) if "MemTotal" in mem else mem,
        "swap": _usage(mem["SwapTotal"], mem["SwapFree"]) if "SwapTotal" in mem else mem,
        "disks": disks,
        "failed_units": _probe(_failed_units),
        "batteries": _probe(_batteries),
    }


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run("stdio")
