"""Idle RSS of archgate as a person installs it, and where it goes.

Each sample: the binary written to a fresh path with `install -m755` (as scripts/install.sh does
with ARCHGATE_BIN; `cargo install` and pacman also write a new file), started as the README's main
command starts it (`archgate serve --http`, here on port 0 in a sandbox of its own: every XDG
directory under a per-run directory), and read 1 s after it prints `listening`, no call made.
Also each binary run in place (where cargo left it), and the installed file again after its pages
were dropped from the page cache (as after a reboot: read from disk), for comparison. Samples alternate between
the binaries so a busy moment hits all.

Printed per sample: VmRSS; from /proc/PID/smaps_rollup the anonymous and the file-backed part;
from /proc/PID/smaps the Rss of the binary's own mappings (its code, its read-only data and the
relocated `.data.rel.ro`, which is anonymous once written) and of the C library; the threads.

Environment: ARCHGATE_BIN (required), ARCHGATE_BEFORE_BIN (optional: an earlier build in the
same run), RSS_SAMPLES (default 5).
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from loopback import xdg_env  # noqa: E402

SAMPLES = int(os.environ.get("RSS_SAMPLES", "5"))
TARGET_MIB = 16.0
PATIENCE = 30.0


def kib_fields(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "kB":
            out[parts[0].rstrip(":")] = int(parts[1])
    return out


def by_mapping(pid: int, exe: str) -> dict[str, int]:
    """Rss (KiB) of the binary's mappings by permission, and of the C library's in total."""
    out: dict[str, int] = {}
    key = None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
            path = head[5] if len(head) >= 6 else ""
            if path == exe:
                key = f"exe {head[1]}"
            elif "/libc.so" in path or "/libc-" in path:
                key = "libc"
            elif path == "":
                key = "anon"
            elif path.startswith("["):
                key = path
            else:
                key = "other files"
        elif head[0] == "Rss:" and key:
            out[key] = out.get(key, 0) + int(head[1])
    return out


def sample(binary: str, root: Path) -> dict:
    env = xdg_env(root)
    (root / "config/archgate").mkdir(parents=True, exist_ok=True)
    out = root / "stdout"
    p = subprocess.Popen([binary, "serve", "--http", "--port", "0"], env=env, stdin=subprocess.DEVNULL,
                         stdout=open(out, "wb"), stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + PATIENCE
        while '"listening"' not in out.read_text():
            if time.monotonic() > deadline or p.poll() is not None:
                raise RuntimeError(f"{binary} did not listen")
            time.sleep(0.02)
        time.sleep(1.0)
        status = Path(f"/proc/{p.pid}/status").read_text()
        rss = kib_fields(status)["VmRSS"]
        threads = int(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:")))
        roll = kib_fields(Path(f"/proc/{p.pid}/smaps_rollup").read_text())
        maps = by_mapping(p.pid, os.path.realpath(binary))
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return {"rss": rss, "anon": roll.get("Anonymous", 0), "file": roll["Rss"] - roll.get("Anonymous", 0),
            "maps": maps, "threads": threads}


def mib(kib: float) -> str:
    return f"{kib / 1024:.1f}"


def main() -> None:
    builds = [("this build", os.environ["ARCHGATE_BIN"])]
    if os.environ.get("ARCHGATE_BEFORE_BIN"):
        builds.insert(0, ("before", os.environ["ARCHGATE_BEFORE_BIN"]))
    rows: dict[tuple[str, str], list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        n = 0
        for s in range(SAMPLES):
            for name, binary in (builds if s % 2 == 0 else builds[::-1]):
                n += 1
                installed = base / f"bin{n}" / "archgate"
                installed.parent.mkdir()
                subprocess.run(["install", "-m755", binary, str(installed)], check=True)
                for how, path in (("installed", str(installed)), ("in place", binary)):
                    rows.setdefault((name, how), []).append(sample(path, base / f"run{n}-{how.replace(' ', '')}"))
                # As after a reboot: the installed file's pages dropped from the page cache, so the
                # start reads them from disk (readahead decides the folios, not the writes).
                fd = os.open(installed, os.O_RDONLY)
                try:
                    os.fsync(fd)
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)
                rows.setdefault((name, "from disk"), []).append(sample(str(installed), base / f"run{n}-disk"))
                installed.unlink()
    print(f"idle RSS, {SAMPLES} samples each (MiB; 1 s after `listening`, no call; `serve --http`):")
    print()
    print("| build | run | VmRSS per sample | median | anonymous | file-backed | binary's code (r-xp) "
          "| binary's other mappings | libc | threads |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (name, how), ss in rows.items():
        med = statistics.median(x["rss"] for x in ss)

        def m(f):
            return mib(statistics.median(f(x) for x in ss))
        code = m(lambda x: x["maps"].get("exe r-xp", 0))
        other = m(lambda x: sum(v for k, v in x["maps"].items() if k.startswith("exe ") and k != "exe r-xp"))
        print(f"| {name} | {how} | {', '.join(mib(x['rss']) for x in ss)} | {mib(med)} | "
              f"{m(lambda x: x['anon'])} | {m(lambda x: x['file'])} | {code} | {other} | "
              f"{m(lambda x: x['maps'].get('libc', 0))} | {ss[0]['threads']} |")
    print()
    for (name, how), ss in rows.items():
        if how in ("installed", "from disk"):
            worst = max(x["rss"] for x in ss) / 1024
            print(f"{name}, {how}: largest sample {worst:.1f} MiB (target <= {TARGET_MIB:.0f} MiB: "
                  f"{'met' if worst <= TARGET_MIB else 'NOT met'}); mappings of the median sample: "
                  + json.dumps(sorted(ss, key=lambda x: x['rss'])[len(ss) // 2]["maps"]))


if __name__ == "__main__":
    main()
