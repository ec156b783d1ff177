"""Assertions of tests/run-units.sh, run as the test user (see there).

`check_units.py --export` prints the journal export-format input the suite turns into journal
files (our own entries, in the format of systemd's Journal Export Format document).
`check_units.py WORK` runs `WORK/archgate call …` and compares with systemctl and journalctl.
"""

import json
import os
import pathlib
import subprocess
import sys

BOOT_A = "1a" * 16
BOOT_B = "1b" * 16
SECRET = "secret-journal-message-7f3a"


def export():
    t = 1764500000000000
    out = []
    for n, boot in enumerate([BOOT_A, BOOT_B]):
        for i in range(8):
            t += 1000000
            unit = "web.service" if i % 2 else "db.service"
            out.append(
                f"__REALTIME_TIMESTAMP={t}\n__MONOTONIC_TIMESTAMP={i * 1000000 + 3}\n"
                f"_BOOT_ID={boot}\n_SYSTEMD_UNIT={unit}\nPRIORITY={i % 8}\n_PID={300 + i}\n"
                f"MESSAGE={SECRET} boot{n} line{i} sudo su $(id)\n"
            )
    return "\n".join(out) + "\n\n"


def main(work):
    work = pathlib.Path(work)
    home = work / "home"
    archgate = str(work / "archgate")
    config = home / ".config/archgate/config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)

    def set_journal(d):
        config.write_text(f'[diagnostics]\njournal_dir = "{d}"\n')
        config.chmod(0o600)

    def call(tool, args):
        p = subprocess.run(
            [archgate, "call", tool, json.dumps(args)], capture_output=True, text=True, timeout=60
        )
        try:
            r = json.loads(p.stdout)
        except ValueError:
            raise AssertionError(f"{tool} {args}: {p.stdout!r} {p.stderr!r}")
        return r.get("structuredContent"), bool(r.get("isError"))

    def ok(tool, args):
        v, err = call(tool, args)
        assert not err, f"{tool} {args}: {v}"
        return v

    def refused(tool, args, kind):
        v, err = call(tool, args)
        assert err, f"{tool} {args} should fail: {v}"
        assert v["error"]["kind"] == kind, f"{tool} {args}: {v}"
        return v["error"]

    def systemctl(*a):
        p = subprocess.run(["systemctl", "--user", "--no-pager", *a], capture_output=True, text=True)
        return p.stdout

    set_journal(work / "journal")

    # --- units: lists, against systemctl's own JSON
    for state in ["failed", "active"]:
        args = {"user": True} if state == "failed" else {"user": True, "state": state}
        ours = ok("units", args)["units"]
        theirs = json.loads(systemctl("list-units", f"--state={state}", "--output=json"))
        assert sorted(u["unit"] for u in ours) == sorted(u["unit"] for u in theirs), (ours, theirs)
        by = {u["unit"]: u for u in theirs}
        for u in ours:
            for f in ["load", "active", "sub", "description"]:
                assert u[f] == by[u["unit"]][f], (u, by[u["unit"]])
    failed = [u["unit"] for u in ok("units", {"user": True})["units"]]
    assert "ag-broken.service" in failed, failed
    assert "ag-ok.service" in [u["unit"] for u in ok("units", {"user": True, "state": "active"})["units"]]
    timers = ok("units", {"user": True, "state": "timers"})["timers"]
    theirs = json.loads(systemctl("list-timers", "--output=json"))
    assert [t["unit"] for t in timers] == [t["unit"] for t in theirs], (timers, theirs)
    tick = next(t for t in timers if t["unit"] == "ag-tick.timer")
    assert tick["activates"] == "ag-tick.service" and "next" in tick and "last" not in tick, tick

    # --- one unit's status, against systemctl show
    def show(unit, prop):
        return systemctl("show", "--value", f"--property={prop}", "--", unit).strip()

    broken = ok("units", {"user": True, "unit": "ag-broken"})
    assert broken["unit"] == "ag-broken.service", broken
    assert (broken["load"], broken["active"], broken["sub"]) == ("loaded", "failed", "failed"), broken
    assert broken["result"] == "exit-code" and broken["last_exit"] == {"code": "exited", "status": 3}, broken
    assert broken["file"]["path"] == show("ag-broken.service", "FragmentPath"), broken
    assert broken["file"]["text"] == pathlib.Path(broken["file"]["path"]).read_text()
    assert "main_pid" not in broken, broken
    # The journal (journal_dir) never heard of the unit: no lines, not an error.
    assert broken["journal"] == [], broken

    running = ok("units", {"user": True, "unit": "ag-ok.service"})
    assert (running["active"], running["sub"]) == ("active", "running"), running
    assert running["main_pid"] == int(show("ag-ok.service", "MainPID")), running
    assert running["restarts"] == int(show("ag-ok.service", "NRestarts"))
    since = systemctl("show", "--timestamp=unix", "--value", "--property=StateChangeTimestamp", "--", "ag-ok.service").strip()
    import datetime
    want = datetime.datetime.fromtimestamp(int(since.lstrip("@")), datetime.timezone.utc)
    assert running["since"] == want.strftime("%Y-%m-%dT%H:%M:%SZ"), (running["since"], since)
    [drop] = running["drop_ins"]
    assert drop["path"] == show("ag-ok.service", "DropInPaths") and "AG_TEST=1" in drop["text"], drop

    # --- a transient unit (attack 14 F3): systemd-run's default description is its command line,
    # and its unit file holds every argument and each --setenv; neither reaches an answer
    tsecret = "S3cretTransient-9d2e"
    r = subprocess.run(
        ["systemd-run", "--user", "--unit=ag-transient", f"--setenv=PGPASSWORD={tsecret}",
         "sh", "-c", "sleep 600", f"--password={tsecret}"],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    try:
        real = show("ag-transient.service", "Description")
        frag = show("ag-transient.service", "FragmentPath")
        assert tsecret in real and tsecret in pathlib.Path(frag).read_text(), (real, frag)
        assert show("ag-transient.service", "Transient") == "yes"
        listed = ok("units", {"user": True, "state": "active"})
        status = ok("units", {"user": True, "unit": "ag-transient.service"})
        for answer in [listed, status]:
            assert tsecret not in json.dumps(answer), answer
        row = next(u for u in listed["units"] if u["unit"] == "ag-transient.service")
        assert row["description"] == real.split()[0] + " [arguments withheld: a command line may hold secrets]", row
        assert status["description"] == row["description"], status
        assert status["file"]["path"] == frag, status
        assert "ExecStart=" in status["file"]["text"] and "Environment=[variables withheld" in status["file"]["text"], status
    finally:
        systemctl("stop", "ag-transient.service")

    # --- bad input: unknown units with near names; hostile names reach systemctl literally
    e = refused("units", {"user": True, "unit": "ag-brokne.service"}, "not_found")
    assert "ag-broken.service" in e["details"]["near"], e
    pwned = work / "pwned"
    for name in [f"ag-ok.service; touch {pwned}", f"$(touch {pwned})", "-H", "--all", "`id`"]:
        e = refused("units", {"user": True, "unit": name}, "not_found")
    assert not pwned.exists()
    for bad in ["a\u0000b", "x" * 300, "a\nb"]:
        refused("units", {"user": True, "unit": bad}, "invalid_arguments")
    refused("units", {"user": True, "unit": "y" * 70000}, "too_large")
    # No systemd as PID 1 here: the system manager is not available, and says so.
    e = refused("units", {}, "not_available")
    assert "systemd is not running" in e["message"], e

    # --- the journal through [diagnostics] journal_dir, as journalctl reads it
    page = ok("journal", {"limit": 3})
    theirs = subprocess.run(
        ["journalctl", f"--directory={work / 'journal'}", "-o", "json", "-r", "-n", "3", "-q"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    assert [e["message"] for e in page["entries"]] == [json.loads(l)["MESSAGE"] for l in theirs], page
    assert page["next"], page
    more = ok("journal", {"limit": 3, "cursor": page["next"]})
    assert more["entries"][0]["message"].endswith("line4 sudo su $(id)"), more
    # A pattern naming sudo is a search, not an elevation.
    hits = ok("journal", {"grep": "sudo su", "unit": "web.service", "priority": "warning"})["entries"]
    assert hits and all(e["unit"] == "web.service" and e["priority"] in ("emerg", "alert", "crit", "err", "warning") for e in hits), hits
    e = refused("journal", {"boot": -3}, "out_of_range")
    assert e["details"]["boots"] == [-1, 0], e
    refused("journal", {"cursor": "s=1;i=2;`id`"}, "invalid_cursor")
    e = refused("journal", {"unit": "wbe.service"}, "not_found")
    assert e["details"]["near"][0] == "web.service", e
    refused("journal", {"grep": "a\u0000b"}, "invalid_arguments")
    boots = ok("boots", {})["boots"]
    assert [b["index"] for b in boots] == [0, -1] and boots[0]["id"] == BOOT_B, boots
    assert ok("boots", {"crashes": True})["crashes"] == []

    # --- a journal this account may not read: could not look, never an empty page
    set_journal(work / "closed")
    for tool, args in [("journal", {}), ("journal", {"unit": "web.service"}), ("boots", {})]:
        e = refused(tool, args, "not_readable")
        assert "nobody" in e["message"], e

    # --- the activity log: one record per call, no output
    state = home / ".local/state/archgate"
    logs = [p for p in state.rglob("*") if p.is_file() and p.name.startswith("activity")]
    assert logs, list(state.rglob("*"))
    text = "".join(p.read_text(errors="replace") for p in logs)
    for leaked in [SECRET + " boot1", "AG_TEST=1", "archgate test: a service that fails", "ExecStart", tsecret]:
        assert leaked not in text, f"{leaked!r} reached the activity log"
    assert text.count('"tool":"units"') >= 10 and '"tool":"journal"' in text, text[:2000]
    print("check_units: ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--export"]:
        sys.stdout.write(export())
    else:
        main(sys.argv[1])
