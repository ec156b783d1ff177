// `archgate ui` and what the page shows, in real headless Chromium (issue 16, attacks 4–6):
// the browser opener is handed a login *file* (0600, in the runtime directory), never the link;
// opening that file logs the browser in once and the file goes. A waiting call whose arguments
// carry terminal escapes and bidi overrides is shown with them as visible escapes, and every
// argument whole.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync, readFileSync, existsSync, statSync, chmodSync, rmSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { BIN, privateHome, until, control as controlAt, newPage as newPageIn, stopAndRemove } from "./support.mjs";

const { root, env, socket } = privateHome("archgate-ui-", "");
const bin = join(root, "bin");
mkdirSync(bin);
const opened = join(root, "opened.txt");
// The browser opener archgate finds through [exec] search_dirs: it writes down what it was given.
writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$@" > ${opened}\n`);
chmodSync(join(bin, "xdg-open"), 0o755);
writeFileSync(join(root, "config/archgate/config.toml"), `
[policy]
ask = ["pkg_search"]
[approval]
timeout_s = 120
page_port = 0
notifications = false
[exec]
search_dirs = ["${bin}"]
require_root_owned = false
`);

let server, browser;
let nextId = 10;
const send = (msg) => server.stdin.write(JSON.stringify(msg) + "\n");
const control = (req) => controlAt(socket, req);

before(async () => {
  server = spawn(BIN, ["serve"], { env, stdio: ["pipe", "pipe", "pipe"] });
  server.stderr.on("data", () => {});
  server.stdout.on("data", () => {});
  send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ui-test", version: "1" } } });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await until("the control socket", () => control({ op: "hello" }).catch(() => null));
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  await browser?.close();
  server?.stdin.end();
  await stopAndRemove(server, root);
});

async function openedFile() {
  // The opener runs detached from `archgate ui`: the last call's file, still there, would be read
  // as this call's (a used login file, gone: CI saw ERR_FILE_NOT_FOUND once).
  rmSync(opened, { force: true });
  const r = spawnSync(BIN, ["ui"], { env, encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const lines = await until("the opener's argument", () => existsSync(opened) && readFileSync(opened, "utf8").trim().split("\n"));
  assert.equal(lines.length, 1, lines.join(" | "));
  assert.doesNotMatch(lines[0], /login\?t=/, "the opener was handed a link");
  return lines[0];
}

test("archgate ui hands the opener a private login file; opening it logs in once", async () => {
  const file = await openedFile();
  assert.ok(file.startsWith(join(root, "runtime/archgate/")), file);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const { ctx, page } = await newPageIn(browser, 1000, 700);
  await page.goto("file://" + file);
  await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  await page.waitForSelector("#conn.ok");
  const cookies = await ctx.cookies();
  assert.equal(cookies.length, 1);
  assert.equal(cookies[0].sameSite, "Strict");
  assert.equal(existsSync(file), false, "the used login file is removed");
  await ctx.close();
});

test("archgate ui --print shows a code, not a link; typed into the page's form it logs in once", async () => {
  const r = spawnSync(BIN, ["ui", "--print"], { env, encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout, /login\?t=/);
  const [, url, code] = r.stdout.match(/open (\S+) and type the code (\S+)/);
  const { ctx, page } = await newPageIn(browser, 1000, 700);
  await page.goto(url);
  await page.fill('input[name="code"]', code.toLowerCase().replace("-", " "));
  await page.click("button");
  await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  await page.waitForSelector("#conn.ok");
  await ctx.close();
  const again = await newPageIn(browser, 1000, 700);
  await again.page.goto(url);
  await again.page.fill('input[name="code"]', code);
  await again.page.click("button");
  await again.page.waitForLoadState();
  assert.match(await again.page.textContent("body"), /already used/);
  await again.ctx.close();
});

test("escapes and bidi overrides in a waiting call show as visible escapes, every argument whole", async () => {
  const file = await openedFile();
  const { ctx, page } = await newPageIn(browser, 1000, 700);
  await page.goto("file://" + file);
  await page.waitForSelector("#conn.ok");
  const query = "\u001b[1A\u001b[2K\rFAKE xdg-open \u202egnp.tac-ot-us " + "q".repeat(2048);
  send({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name: "pkg_search", arguments: { query } } });
  const card = page.locator("li.card");
  await card.waitFor();
  const text = await card.innerText();
  assert.ok(!/[\u202a-\u202e\u2066-\u2069\u200e\u200f\u001b\r]/.test(text), JSON.stringify(text.slice(0, 200)));
  // A long value is a text block: its one line whole, escaped.
  const line = await card.locator(".text-arg ol.lines li").first().textContent();
  assert.equal(line, "\\x1b[1A\\x1b[2K\\rFAKE xdg-open \\u{202e}gnp.tac-ot-us " + "q".repeat(2048));
  assert.equal(await card.locator(".text-arg ol.lines li").count(), 1);
  const pending = (await control({ op: "pending" })).pending;
  assert.equal(pending[0].args.query, query, "the question itself holds the exact text");
  await control({ op: "answer", id: pending[0].id, answer: "deny" });
  await ctx.close();
});
