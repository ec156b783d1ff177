"""Per-call system calls and context switches: archgate against the bare rmcp server, side by side.

Wall-clock requests/s on a shared machine moves by ±25% from one round to the next; what a
call costs the kernel does not. For each server (archgate, the bare server on the system
allocator and on mimalloc, an earlier archgate with ARCHGATE_BEFORE_BIN) this sends the same
stateless `tools/call` with `hey` (1 client, then 16: PERCALL_CLIENTS) and counts, over the
server's every thread, during the run only:

- system calls a call (`perf stat -e raw_syscalls:sys_enter -p PID`), and those of a few kinds
  (its `syscalls:sys_enter_*` tracepoints; with PERCALL_STRACE=1 also `strace -c -f` over a
  run of its own, which slows the server and shifts its wake-ups);
- context switches a call, voluntary and not (the sum over /proc/PID/task/*/status before and
  after), and the threads the process has.

Environment as bench.py (ARCHGATE_BIN, BARE_BIN, BARE_MIMALLOC_BIN, ARCHGATE_BEFORE_BIN);
PERCALL_REQUESTS (default 4000), PERCALL_CLIENTS ("1,16"), PERCALL_STRACE (1: also strace).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import bench  # noqa: E402  (this directory is on sys.path when run as a script)
from bench import Archgate, answer_of, call_of, headers_of, hey, stop, wait_port_frame, load

REQUESTS = int(os.environ.get("PERCALL_REQUESTS", "4000"))
CLIENTS = tuple(int(c) for c in os.environ.get("PERCALL_CLIENTS", "1,16").split(","))
STRACE = os.environ.get("PERCALL_STRACE", "0") == "1"
TOOL = "pacman_conf"
# The system calls counted one by one (`perf stat` tracepoints).
KINDS = ("recvfrom", "writev", "write", "statx", "futex", "epoll_wait")


def switches(pid: int) -> tuple[int, int, int]:
    """Voluntary and involuntary context switches over every thread now; the thread count."""
    vol = invol = threads = 0
    for st in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            text = st.read_text()
        except OSError:
            continue  # a thread that ended meanwhile
        threads += 1
        vol += int(re.search(r"voluntary_ctxt_switches:\s+(\d+)", text).group(1))
        invol += int(re.search(r"nonvoluntary_ctxt_switches:\s+(\d+)", text).group(1))
    return vol, invol, threads


def counted_run(pid: int, port: int, extra: dict[str, str], c: int) -> dict[str, float]:
    """One hey run under `perf stat`: syscalls and switches a call."""
    v0, i0, _ = switches(pid)
    events = ",".join(["raw_syscalls:sys_enter"] + [f"syscalls:sys_enter_{k}" for k in KINDS])
    perf = subprocess.Popen(["perf", "stat", "-x,", "-e", events, "-p", str(pid)],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(0.2)
    run = hey(port, call_of(TOOL), dict(headers_of(TOOL), **extra), c, REQUESTS)
    perf.send_signal(2)
    err = perf.communicate(timeout=30)[1]
    v1, i1, threads = switches(pid)
    counts = {l.split(",")[2].split(":")[-1].removeprefix("sys_enter_"): int(l.split(",")[0])
              for l in err.splitlines() if l.count(",") >= 2 and l.split(",")[0].isdigit()}
    n = run["n"]
    return {"n": n, "syscalls": counts["sys_enter"] / n, "vol": (v1 - v0) / n, "invol": (i1 - i0) / n,
            "threads": threads, "rps": run["rps"], "kinds": {k: counts.get(k, 0) / n for k in KINDS}}


def strace_run(pid: int, port: int, extra: dict[str, str], c: int) -> dict[str, float]:
    """Which system calls, a call: `strace -c -f` attached during one hey run."""
    out = Path(tempfile.mktemp(prefix="percall-strace-"))
    st = subprocess.Popen(["strace", "-c", "-f", "-o", str(out), "-p", str(pid)],
                          stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    run = hey(port, call_of(TOOL), dict(headers_of(TOOL), **extra), c, REQUESTS // 4)
    st.send_signal(2)
    st.wait(30)
    calls: dict[str, float] = {}
    for line in out.read_text().splitlines():
        f = line.split()
        if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
            calls[f[-1]] = int(f[3]) / run["n"]
    out.unlink()
    return calls


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pacman.conf").write_text(bench.PACMAN_CONF.format(root=root))
        procs: list = []
        try:
            servers: dict[str, tuple[int, int, dict[str, str]]] = {}
            ags = {"archgate": Archgate("archgate", bench.ARCHGATE, root)}
            if bench.BEFORE:
                ags["archgate_before"] = Archgate("archgate_before", bench.BEFORE, root)
            for name, a in ags.items():
                procs.append(a.p)
                servers[name] = (a.p.pid, a.port, a.auth())
            a = ags["archgate"]
            answer = answer_of(a.port, TOOL, dict(headers_of(TOOL), **a.auth()))["structuredContent"]
            (root / "answer.json").write_text(json.dumps(answer))
            for name, binary in (("bare", bench.BARE), ("bare_mimalloc", bench.BARE_MIMALLOC)):
                out = root / f"{name}.stdout"
                bp = subprocess.Popen([binary, "--bench", f"{TOOL}={root / 'answer.json'}"],
                                      stdin=subprocess.DEVNULL, stdout=open(out, "wb"),
                                      stderr=subprocess.DEVNULL)
                procs.append(bp)
                port = wait_port_frame(out, bp, name)
                assert answer_of(port, TOOL, headers_of(TOOL))["structuredContent"] == answer
                servers[name] = (bp.pid, port, {})
            print(f"- {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {load()}; "
                  f"{REQUESTS} stateless tools/call {TOOL} a run, perf stat and /proc counts")
            for pid, port, extra in servers.values():  # warm-up
                hey(port, call_of(TOOL), dict(headers_of(TOOL), **extra), 16, 1000)
            print()
            print("| server | clients | syscalls a call | " + " | ".join(KINDS)
                  + " | voluntary switches a call | involuntary a call | threads | req/s (perf attached) |")
            print("| --- | ---: | ---: | " + " | ".join("---:" for _ in KINDS) + " | ---: | ---: | ---: | ---: |")
            for c in CLIENTS:
                for name, (pid, port, extra) in servers.items():
                    r = counted_run(pid, port, extra, c)
                    kinds = " | ".join(f"{r['kinds'][k]:.2f}" for k in KINDS)
                    print(f"| {name} | {c} | {r['syscalls']:.2f} | {kinds} | {r['vol']:.2f} | {r['invol']:.2f} "
                          f"| {r['threads']} | {r['rps']:.0f} |")
            if STRACE:
                for c in CLIENTS:
                    print(f"\nstrace -c -f, {c} client(s), system calls a call:")
                    for name, (pid, port, extra) in servers.items():
                        calls = strace_run(pid, port, extra, c)
                        top = sorted(calls.items(), key=lambda kv: -kv[1])
                        print(f"  {name}: " + ", ".join(f"{k} {v:.2f}" for k, v in top if v >= 0.01))
            print(f"\nload average at the end: {load()}")
        finally:
            for p in procs:
                stop(p)


if __name__ == "__main__":
    main()
