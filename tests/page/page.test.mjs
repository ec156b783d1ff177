// The approval page in real headless Chromium. Starts the real archgate binary (stdio MCP) with
// private XDG directories, parks calls that need approval, and answers them on the page; checks
// the page's defences (no cookie → 401, no CSRF token → refused, one-time login link, foreign
// Origin refused). Screenshots at laptop and phone width go to tests/page/screenshots/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { BIN, PATIENCE, privateHome, until, control as controlAt, readAudit, rawRequest, newPage as newPageIn, stopAndRemove } from "./support.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const { root, env, socket: SOCKET, auditFile } = privateHome("archgate-page-", `
[policy]
ask = ["system_status", "pkg_search", "pkg_info", "pacman_conf"]
[approval]
timeout_s = 120
page_port = 0
notifications = false
`);
mkdirSync(join(HERE, "screenshots"), { recursive: true });

// ---- archgate over stdio
let server, browser, base;
const responses = new Map();
const waiters = new Map();

function send(msg) { server.stdin.write(JSON.stringify(msg) + "\n"); }
function response(id) {
  if (responses.has(id)) return Promise.resolve(responses.get(id));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("no response to " + id)), PATIENCE);
    waiters.set(id, (v) => { clearTimeout(t); resolve(v); });
  });
}
let nextId = 10;
function call(tool, args) {
  const id = nextId++;
  send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: args } });
  return id;
}


// ---- the control socket, as `archgate` itself speaks it
const control = (req) => controlAt(SOCKET, req);
const pending = async () => (await control({ op: "pending" })).pending;
const onePending = () => until("a pending approval", async () => { const p = await pending(); return p.length === 1 && p[0]; });
async function loginLink() {
  const r = await control({ op: "login_link" });
  assert.equal(r.ok, true, JSON.stringify(r));
  return r.link;
}

const audit = () => readAudit(auditFile);
const auditOf = (id) => until("audit record " + id, () => audit().find((r) => r.id === id && !r.event));
const isError = (r) => r.result?.isError === true || !!r.error;
const text = (r) => (r.result?.content || []).map((c) => c.text || "").join("\n");

// A raw HTTP request to the page, so headers such as Origin are exactly what we say.
const raw = (method, path, headers = {}, body) => rawRequest(Number(new URL(base).port), method, path, headers, body);

const newPage = (width, height) => newPageIn(browser, width, height);

async function loggedIn(width = 1280, height = 860) {
  const { ctx, page } = await newPage(width, height);
  const res = await page.goto(await loginLink());
  assert.equal(res.status(), 200);
  assert.equal(new URL(page.url()).pathname, "/");
  await page.waitForSelector("#conn.ok");
  return { ctx, page };
}

before(async () => {
  server = spawn(BIN, ["serve"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  server.stdout.on("data", (d) => {
    out += d;
    let i;
    while ((i = out.indexOf("\n")) >= 0) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      const msg = JSON.parse(line);
      if (msg.id === undefined) continue;
      responses.set(msg.id, msg);
      waiters.get(msg.id)?.(msg);
    }
  });
  let err = "";
  server.stderr.on("data", (d) => (err += d));
  server.on("exit", (code) => { if (code) console.error("archgate exited", code, err); });
  send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page-test", version: "1" } } });
  await response(1);
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const hello = await until("the control socket", () => control({ op: "hello" }).catch(() => null));
  base = hello.page_url;
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  // playwright-core gives every launch a fresh temporary profile (its own --user-data-dir).
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

test("without the session cookie every page and API answers 401", async () => {
  for (const path of ["/", "/app.js", "/style.css", "/api/state", "/events"]) {
    const r = await raw("GET", path);
    assert.equal(r.status, 401, path);
  }
  for (const path of ["/api/answer", "/api/dev-mode", "/api/rules/revoke", "/api/rules/revoke-all"]) {
    const r = await raw("POST", path, { "content-type": "application/json" }, "{}");
    assert.equal(r.status, 401, path);
  }
  // A browser without the cookie too.
  const { ctx, page } = await newPage(800, 600);
  const res = await page.goto(base);
  assert.equal(res.status(), 401);
  await ctx.close();
});

test("a login link works once and sets an HttpOnly, SameSite=Strict cookie", async () => {
  const link = await loginLink();
  const { ctx, page } = await newPage(800, 600);
  const res = await page.goto(link);
  assert.equal(res.status(), 200);
  await page.waitForSelector("#conn.ok");
  const cookies = await ctx.cookies();
  assert.equal(cookies.length, 1);
  assert.equal(cookies[0].httpOnly, true);
  assert.equal(cookies[0].sameSite, "Strict");
  assert.equal(await page.evaluate(() => document.cookie), "", "scripts cannot read the session");
  // The same link again, in a fresh browser context: refused.
  const other = await newPage(800, 600);
  const again = await other.page.goto(link);
  assert.equal(again.status(), 401);
  assert.equal((await raw("GET", "/api/state")).status, 401);
  await other.ctx.close();
  await ctx.close();
  // A made-up link: refused.
  assert.equal((await raw("GET", "/login?t=" + "0".repeat(64))).status, 401);
});

test("the page shows the exact resolved command; Allow runs it, Deny refuses it", async () => {
  const { ctx, page } = await loggedIn();
  let id = call("system_status", {});
  let q = await onePending();
  const card = page.locator(`li.card[data-id="${q.id}"]`);
  await card.waitFor();
  assert.equal(await card.locator("pre.cmd code").textContent(), q.summary);
  assert.match(await card.locator(".tool").textContent(), /system_status/);
  assert.equal(await card.locator(".tier").textContent(), q.tier);
  assert.match(await card.locator(".client").textContent(), /local/);
  assert.match(await card.locator(".left").textContent(), /^\d+:\d\d left, then declined$/);
  await page.screenshot({ path: join(HERE, "screenshots/laptop.png"), fullPage: true });
  await card.getByRole("button", { name: "Allow once" }).click();
  let r = await response(id);
  assert.equal(isError(r), false, text(r));
  let rec = await auditOf(q.id);
  assert.equal(rec.outcome, "ok");
  assert.equal(rec.approval.channel, "page");
  await card.waitFor({ state: "detached" });

  id = call("system_status", {});
  q = await onePending();
  // By keyboard: Tab to the card's Deny button and press Enter.
  const deny = page.locator(`li.card[data-id="${q.id}"]`).getByRole("button", { name: "Deny" });
  await deny.waitFor();
  await deny.focus();
  await page.keyboard.press("Enter");
  r = await response(id);
  assert.equal(isError(r), true);
  assert.match(text(r), /^declined/);
  rec = await auditOf(q.id);
  assert.equal(rec.outcome, "declined");
  assert.equal(rec.approval.channel, "page");
  await ctx.close();
});

test("Always… creates a rule for the identical call only; revoke-all ends it", async () => {
  const { ctx, page } = await loggedIn();
  let id = call("pkg_search", { query: "vim" });
  let q = await onePending();
  const card = page.locator(`li.card[data-id="${q.id}"]`);
  await card.getByRole("button", { name: "Always…" }).click();
  const dialog = page.locator("dialog#always");
  await dialog.waitFor();
  assert.equal(await page.locator("#always-summary").textContent(), q.summary);
  await page.getByRole("button", { name: "Allow and create rule" }).click();
  await response(id);
  const rec = await auditOf(q.id);
  assert.equal(rec.approval.outcome, "accepted");
  assert.equal(rec.approval.channel, "page");
  const ruleId = rec.approval.rule_id;
  assert.ok(ruleId, "the audit names the new rule");
  await page.locator("#rules li").filter({ hasText: ruleId }).waitFor();

  // The identical call: approved by the rule, no question.
  id = call("pkg_search", { query: "vim" });
  await response(id);
  // Its record is written by the audit writer thread, possibly just after the answer.
  const ruled = await until("the ruled call's record", () => {
    const recs = audit().filter((r) => r.tool === "pkg_search" && !r.event);
    return recs.length === 2 && recs[1];
  });
  assert.equal(ruled.approval.channel, "standing_rule");
  assert.equal(ruled.approval.rule_id, ruleId);
  assert.equal((await pending()).length, 0);

  // A different call: asked. (Allowed once: a declined route would back off before the next
  // question, see the nag guard.)
  id = call("pkg_search", { query: "emacs" });
  q = await onePending();
  assert.deepEqual(q.args, { query: "emacs" });
  await page.locator(`li.card[data-id="${q.id}"]`).getByRole("button", { name: "Allow once" }).click();
  await response(id);
  assert.equal((await auditOf(q.id)).approval.channel, "page");

  // Revoke all on the page: the identical call is asked again.
  await page.getByRole("button", { name: "Revoke all rules" }).click();
  await page.locator("#rules-empty").waitFor({ state: "visible" });
  id = call("pkg_search", { query: "vim" });
  q = await onePending();
  assert.deepEqual(q.args, { query: "vim" });
  await page.locator(`li.card[data-id="${q.id}"]`).getByRole("button", { name: "Deny" }).click();
  await response(id);
  assert.ok(audit().some((e) => e.event === "standing_rules_revoked_all" && e.channel === "page"));
  await ctx.close();
});

test("a state change without the CSRF token is refused, and so is a foreign Origin", async () => {
  const { ctx, page } = await loggedIn();
  const id = call("pkg_info", { name: "vim" });
  const q = await onePending();
  // From the logged-in page itself, without the token and with a wrong one.
  const statuses = await page.evaluate(async (qid) => {
    const body = JSON.stringify({ id: qid, answer: "allow" });
    const h = { "content-type": "application/json" };
    const a = await fetch("/api/answer", { method: "POST", headers: h, body });
    const b = await fetch("/api/answer", { method: "POST", headers: { ...h, "x-csrf-token": "f".repeat(64) }, body });
    return [a.status, b.status];
  }, q.id);
  assert.deepEqual(statuses, [403, 403]);
  assert.equal((await pending()).length, 1, "still waiting");

  // With the real cookie and the real token, but from another origin: refused.
  const cookie = (await ctx.cookies())[0];
  const csrf = await page.locator('meta[name="csrf-token"]').getAttribute("content");
  const headers = {
    "content-type": "application/json",
    cookie: `${cookie.name}=${cookie.value}`,
    "x-csrf-token": csrf,
  };
  const body = JSON.stringify({ id: q.id, answer: "allow" });
  for (const origin of ["http://evil.example", "http://127.0.0.1:1", "null"]) {
    const r = await raw("POST", "/api/answer", { ...headers, origin }, body);
    assert.equal(r.status, 403, origin);
  }
  const wrongHost = await raw("GET", "/api/state", { cookie: headers.cookie, host: "evil.example" });
  assert.equal(wrongHost.status, 421);
  assert.equal((await pending()).length, 1, "still waiting");

  // The same request from this page's own origin works: the refusals above were the checks.
  const own = await raw("POST", "/api/answer", { ...headers, origin: base.replace(/\/$/, "") },
    JSON.stringify({ id: q.id, answer: "deny" }));
  assert.equal(own.status, 200, own.body);
  assert.match(text(await response(id)), /^declined/);
  await ctx.close();
});

test("developer mode from the page, and the page at phone width", async () => {
  const { ctx, page } = await loggedIn(390, 844);
  const id = call("pacman_conf", {});
  const q = await onePending();
  await page.locator(`li.card[data-id="${q.id}"]`).waitFor();
  await page.screenshot({ path: join(HERE, "screenshots/phone.png"), fullPage: true });
  // Buttons stay within the viewport.
  for (const b of await page.locator(`li.card[data-id="${q.id}"] button:visible`).all()) {
    const box = await b.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 390, "button fits the phone width");
  }
  await page.locator(`li.card[data-id="${q.id}"]`).getByRole("button", { name: "Allow once" }).click();
  await response(id);
  assert.equal((await auditOf(q.id)).approval.channel, "page");

  // Developer mode is off the approvals screen: its own dialog.
  assert.equal(await page.locator("#dev-hours").isVisible(), false);
  await page.getByRole("button", { name: "Developer mode…" }).click();
  await page.selectOption("#dev-hours", "60");
  await page.getByRole("button", { name: "Turn on" }).click();
  await page.locator("#devbadge").waitFor({ state: "visible" });
  const status = await control({ op: "dev_mode_status" });
  assert.equal(status.developer_mode.on, true);
  assert.ok(status.developer_mode.until - Math.floor(Date.now() / 1000) <= 3600);
  const statusRecords = () => audit().filter((x) => x.tool === "system_status" && !x.event);
  const before = statusRecords().length;
  const ran = call("system_status", {});
  const r = await response(ran);
  assert.equal(isError(r), false, text(r));
  // The writer thread may record the call just after its answer: wait for the record.
  const records = await until("the developer-mode call's record", () => { const x = statusRecords(); return x.length > before && x; });
  assert.equal(records.at(-1).approval.channel, "developer_mode");
  await page.screenshot({ path: join(HERE, "screenshots/phone-devmode.png"), fullPage: true });
  await page.getByRole("button", { name: "Turn off" }).click();
  await page.locator("#devbadge").waitFor({ state: "hidden" });
  assert.equal((await control({ op: "dev_mode_status" })).developer_mode.on, false);
  await ctx.close();
});
