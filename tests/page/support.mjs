// What both page tests need: the binary under test, a private home with XDG directories and a
// config, waiting for a condition, the control socket as `archgate` speaks it, the audit log, and
// raw HTTP requests whose headers (Origin, Cookie) are exactly what the test says.
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import net from "node:net";
import http from "node:http";

export const BIN = process.env.ARCHGATE_BIN;
assert.ok(BIN, "set ARCHGATE_BIN");
export const PATIENCE = 30_000;

/// A temporary home with private XDG directories and `config` as archgate's config.toml.
export function privateHome(prefix, config) {
  const root = mkdtempSync(join(tmpdir(), prefix));
  for (const d of ["config/archgate", "state", "runtime", "cache"]) mkdirSync(join(root, d), { recursive: true });
  chmodSync(join(root, "runtime"), 0o700);
  writeFileSync(join(root, "config/archgate/config.toml"), config);
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_STATE_HOME: join(root, "state"),
    XDG_RUNTIME_DIR: join(root, "runtime"),
    XDG_CACHE_HOME: join(root, "cache"),
    ARCHGATE_LOG: "info",
    // The tests' world (tests/world/no-polkit.c, preloaded by scripts/test.sh): no polkit.
    ...(process.env.LD_PRELOAD ? { LD_PRELOAD: process.env.LD_PRELOAD } : {}),
  };
  return {
    root,
    env,
    socket: join(root, "runtime/archgate/control.sock"),
    auditFile: join(root, "state/archgate/activity.jsonl"),
  };
}

export async function until(what, f) {
  const start = Date.now();
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() - start > PATIENCE) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/// One request over the control socket, one JSON line back.
export function control(socket, req) {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socket);
    let buf = "";
    s.on("connect", () => s.write(JSON.stringify(req) + "\n"));
    s.on("data", (d) => {
      buf += d;
      const i = buf.indexOf("\n");
      if (i >= 0) { s.end(); resolve(JSON.parse(buf.slice(0, i))); }
    });
    s.on("error", reject);
  });
}

export function auditText(file) {
  try { return readFileSync(file, "utf8"); } catch { return ""; }
}
export const readAudit = (file) => auditText(file).split("\n").filter(Boolean).map((l) => JSON.parse(l));

/// A raw HTTP request to 127.0.0.1:`port`.
export function rawRequest(port, method, path, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
      let data = "";
      res.on("data", (d) => (data += d));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export async function newPage(browser, width, height) {
  const ctx = await browser.newContext({ viewport: { width, height } });
  return { ctx, page: await ctx.newPage() };
}

/// Stops the server and waits for it to exit (it removes its socket and instance files as it
/// goes), then removes the private home.
export async function stopAndRemove(server, root) {
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, PATIENCE))]);
  }
  rmSync(root, { recursive: true, force: true });
}
