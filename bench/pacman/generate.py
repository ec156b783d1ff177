#!/usr/bin/env python3
"""Generates a large pacman world in the real on-disk formats, for benchmarks.

    generate.py OUTDIR [--packages 15000] [--installed 1500] [--seed 1]

Writes, all inside OUTDIR:
  db/sync/{genbase,gencore,genextra}.db   gzip'd tar sync databases (desc entries), 15,000 packages
  db/local/<name>-<ver>/{desc,files}      a local database of 1,500 installed packages
  root/                                   empty root (files are only listed, never extracted)
  pacman.conf                             RootDir/DBPath/... inside OUTDIR, SigLevel = Never

The desc format is written here independently of archgate's reader, and real pacman reads the
result (the benchmark compares both on it). Deterministic for a given seed.
"""
import argparse
import gzip
import io
import os
import random
import shutil
import tarfile
import time

WORDS = ("audio video image text font python perl ruby rust go java lua qt gtk kde gnome xfce "
         "network wifi bluetooth printer scanner camera codec stream player editor viewer "
         "terminal shell compiler debugger profiler library toolkit framework daemon service "
         "manager monitor backup sync crypto tls ssh vpn firewall dns mail chat game emulator "
         "math science plot data base web browser server client driver firmware kernel").split()
REPOS = ("genbase", "gencore", "genextra")


def desc_text(fields):
    out = []
    for key, values in fields:
        if values is None or values == []:
            continue
        if not isinstance(values, list):
            values = [values]
        out.append("%{}%\n{}\n".format(key, "\n".join(str(v) for v in values)))
    return "\n".join(out) + "\n"


def add(tar, path, text):
    data = text.encode()
    info = tarfile.TarInfo(path)
    info.size = len(data)
    info.mtime = 1700000000
    tar.addfile(info, io.BytesIO(data))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--packages", type=int, default=15000)
    ap.add_argument("--installed", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    out = os.path.abspath(args.outdir)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "db", "sync"))
    os.makedirs(os.path.join(out, "db", "local"))
    os.makedirs(os.path.join(out, "root"))
    os.makedirs(os.path.join(out, "cache"))

    pkgs = []
    for i in range(args.packages):
        a, b = rnd.sample(WORDS, 2)
        name = f"{a}-{b}-{i}"
        ver = f"{rnd.randint(0, 30)}.{rnd.randint(0, 99)}.{rnd.randint(0, 9)}-{rnd.randint(1, 4)}"
        if rnd.random() < 0.05:
            ver = f"{rnd.randint(1, 3)}:{ver}"
        deps = sorted({pkgs[rnd.randrange(len(pkgs))]["name"] for _ in range(rnd.randint(0, 5))}) if pkgs else []
        provides = [f"lib{a}{i}.so=1-64"] if rnd.random() < 0.2 else []
        if rnd.random() < 0.1:
            provides.append(f"{a}-provider")
        words = rnd.sample(WORDS, 6)
        pkgs.append({
            "name": name, "version": ver, "repo": REPOS[i % len(REPOS)],
            "desc": f"The {words[0]} {words[1]} for {words[2]} with {words[3]} and {words[4]} {words[5]}",
            "depends": deps, "provides": provides,
            "optdepends": [f"{pkgs[rnd.randrange(len(pkgs))]['name']}: for {rnd.choice(WORDS)} support"]
            if pkgs and rnd.random() < 0.3 else [],
            "groups": [f"{b}-group"] if rnd.random() < 0.1 else [],
            "csize": rnd.randint(1000, 50_000_000), "isize": rnd.randint(2000, 200_000_000),
            "builddate": 1700000000 + rnd.randint(0, 30_000_000),
        })

    for repo in REPOS:
        path = os.path.join(out, "db", "sync", f"{repo}.db")
        with gzip.open(path, "wb", compresslevel=6) as gz:
            with tarfile.open(fileobj=gz, mode="w|", format=tarfile.USTAR_FORMAT) as tar:
                for p in pkgs:
                    if p["repo"] != repo:
                        continue
                    fname = f"{p['name']}-{p['version'].replace(':', '%3A')}-x86_64.pkg.tar.zst"
                    add(tar, f"{p['name']}-{p['version']}/desc", desc_text([
                        ("FILENAME", fname), ("NAME", p["name"]), ("BASE", p["name"]),
                        ("VERSION", p["version"]), ("DESC", p["desc"]), ("GROUPS", p["groups"]),
                        ("CSIZE", p["csize"]), ("ISIZE", p["isize"]),
                        ("SHA256SUM", "%064x" % rnd.getrandbits(256)),
                        ("URL", f"https://example.invalid/{p['name']}"), ("LICENSE", "MIT"),
                        ("ARCH", "x86_64"), ("BUILDDATE", p["builddate"]),
                        ("PACKAGER", "Bench Generator <bench@example.invalid>"),
                        ("PROVIDES", p["provides"]), ("DEPENDS", p["depends"]),
                        ("OPTDEPENDS", p["optdepends"]),
                    ]))

    local = os.path.join(out, "db", "local")
    with open(os.path.join(local, "ALPM_DB_VERSION"), "w") as f:
        f.write("9\n")
    installed = rnd.sample(pkgs, args.installed)
    now = int(time.time())
    for n, p in enumerate(installed):
        entry = os.path.join(local, f"{p['name']}-{p['version']}")
        os.makedirs(entry)
        with open(os.path.join(entry, "desc"), "w") as f:
            f.write(desc_text([
                ("NAME", p["name"]), ("VERSION", p["version"]), ("BASE", p["name"]),
                ("DESC", p["desc"]), ("URL", f"https://example.invalid/{p['name']}"),
                ("ARCH", "x86_64"), ("BUILDDATE", p["builddate"]), ("INSTALLDATE", now),
                ("PACKAGER", "Bench Generator <bench@example.invalid>"), ("SIZE", p["isize"]),
                ("GROUPS", p["groups"]), ("REASON", 1 if n % 3 else None), ("LICENSE", "MIT"),
                ("VALIDATION", "sha256"), ("DEPENDS", p["depends"]),
                ("OPTDEPENDS", p["optdepends"]), ("PROVIDES", p["provides"]),
            ]))
        files = []
        base = p["name"]
        dirs = ["usr/", "usr/bin/", "usr/lib/", "usr/share/", f"usr/share/{base}/",
                "usr/share/doc/", f"usr/share/doc/{base}/"]
        files.extend(dirs)
        files.append(f"usr/bin/{base}")
        for k in range(rnd.randint(10, 120)):
            files.append(f"usr/share/{base}/data-{k}.dat")
        files.append(f"usr/lib/lib{base}.so")
        files.append(f"usr/share/doc/{base}/README")
        with open(os.path.join(entry, "files"), "w") as f:
            f.write("%FILES%\n" + "\n".join(sorted(files)) + "\n\n")

    with open(os.path.join(out, "pacman.conf"), "w") as f:
        f.write(f"""[options]
RootDir = {out}/root
DBPath = {out}/db
CacheDir = {out}/cache
LogFile = {out}/pacman.log
GPGDir = {out}/gnupg
HookDir = {out}/hooks
Architecture = x86_64
SigLevel = Never
""")
        for repo in REPOS:
            f.write(f"\n[{repo}]\nServer = file://{out}/repos/$repo\n")
    print(f"{args.packages} sync packages in {len(REPOS)} repos, {args.installed} installed: {out}")


if __name__ == "__main__":
    main()
