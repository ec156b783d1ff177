// Managing HTTP clients from the approval page, in real headless Chromium, against the real
// archgate binary serving MCP over HTTP (`serve --http --port 0`) with private XDG directories:
// a client added on the page gets a token that works on /mcp with exactly its preset's tools and
// is written nowhere; a rename keeps the token and changes the name in audit records; a revoke
// refuses the token at once and ends its session; the new endpoints refuse requests without the
// session cookie, the CSRF token or the page's own Origin.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import http from "node:http";
import { chromium } from "playwright-core";
import { BIN, PATIENCE, privateHome, until, control as controlAt, auditText as auditTextOf, readAudit, rawRequest, newPage as newPageIn, stopAndRemove } from "./support.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const { root, env, socket: SOCKET, auditFile: AUDIT } = privateHome("archgate-page-clients-", `
[approval]
page_port = 0
notifications = false
`);
const CLIENTS = join(root, "state/archgate/clients.json");
mkdirSync(join(HERE, "screenshots"), { recursive: true });

let server, browser, base, mcpPort;
let chat; // the client added on the page: { token, session, full }
let serverLog = "";



const control = (req) => controlAt(SOCKET, req);
const auditText = () => auditTextOf(AUDIT);
const audit = () => readAudit(AUDIT);
const clientsFile = () => (existsSync(CLIENTS) ? readFileSync(CLIENTS, "utf8") : "");

function archgate(args) {
  const r = spawnSync(BIN, args, { env, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

const raw = rawRequest;
const pagePort = () => Number(new URL(base).port);

// ---- MCP over streamable HTTP, as a client with a bearer token
class Mcp {
  constructor(token) { this.token = token; this.session = null; this.next = 1; }

  async post(msg) {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: "Bearer " + this.token,
      "mcp-protocol-version": "2025-06-18",
    };
    if (this.session) headers["mcp-session-id"] = this.session;
    const res = await raw(mcpPort, "POST", "/mcp", headers, JSON.stringify(msg));
    if (res.headers["mcp-session-id"]) this.session = res.headers["mcp-session-id"];
    let message = null;
    if (res.status === 200 && msg.id !== undefined) {
      const ct = res.headers["content-type"] || "";
      const texts = ct.includes("text/event-stream")
        ? res.body.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).filter(Boolean)
        : [res.body];
      message = texts.map((t) => JSON.parse(t)).find((m) => m.id === msg.id) || null;
    }
    return { status: res.status, message, body: res.body };
  }

  async request(method, params = {}) {
    const r = await this.post({ jsonrpc: "2.0", id: this.next++, method, params });
    assert.equal(r.status, 200, method + ": " + r.body);
    assert.ok(r.message && r.message.result, method + ": " + r.body);
    return r.message.result;
  }

  async initialize() {
    await this.request("initialize", {
      protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page-clients-test", version: "1" },
    });
    const r = await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    assert.ok(r.status === 202 || r.status === 200, "initialized: " + r.status);
    return this;
  }

  async toolNames() {
    return (await this.request("tools/list")).tools.map((t) => t.name).sort();
  }

  // The session's standalone server-to-client stream; resolves when the server ends it.
  openStream() {
    return new Promise((resolve, reject) => {
      const req = http.request({
        host: "127.0.0.1", port: mcpPort, path: "/mcp", method: "GET",
        headers: {
          accept: "text/event-stream", authorization: "Bearer " + this.token,
          "mcp-session-id": this.session, "mcp-protocol-version": "2025-06-18",
        },
      }, (res) => {
        assert.equal(res.statusCode, 200, "the session's stream opens");
        const ended = new Promise((done) => { res.on("end", done); res.on("close", done); res.resume(); });
        resolve({ ended });
      });
      req.on("error", reject);
      req.end();
    });
  }
}

const newPage = (width, height) => newPageIn(browser, width, height);

async function loggedIn(width = 1280, height = 900) {
  const { ctx, page } = await newPage(width, height);
  const r = await control({ op: "login_link" });
  assert.equal(r.ok, true, JSON.stringify(r));
  const res = await page.goto(r.link);
  assert.equal(res.status(), 200);
  await page.waitForSelector("#conn.ok");
  return { ctx, page };
}

async function sessionHeaders(ctx, page) {
  const cookie = (await ctx.cookies())[0];
  const csrf = await page.locator('meta[name="csrf-token"]').getAttribute("content");
  return {
    "content-type": "application/json",
    cookie: `${cookie.name}=${cookie.value}`,
    "x-csrf-token": csrf,
    origin: base.replace(/\/$/, ""),
  };
}

// What `archgate tools --json` says a preset grants: the enabled tools of its tiers.
function presetTools(tiers) {
  return JSON.parse(archgate(["tools", "--json"]))
    .filter((t) => t.enabled && tiers.includes(t.tier))
    .map((t) => t.name)
    .sort();
}

before(async () => {
  server = spawn(BIN, ["serve", "--http", "--port", "0"], { env, stdio: ["ignore", "pipe", "pipe"] });
  server.stderr.on("data", (d) => (serverLog += d));
  let out = "";
  mcpPort = await new Promise((resolve, reject) => {
    server.stdout.on("data", (d) => {
      out += d;
      const i = out.indexOf("\n");
      if (i < 0) return;
      const frame = JSON.parse(out.slice(0, i));
      if (frame.event === "listening") resolve(frame.port);
      else reject(new Error("archgate did not listen: " + out));
    });
    server.on("exit", (code) => reject(new Error("archgate exited " + code + ": " + serverLog)));
  });
  const hello = await until("the control socket", () => control({ op: "hello" }).catch(() => null));
  base = hello.page_url;
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  await browser?.close();
  await stopAndRemove(server, root);
});

const ENDPOINTS = [
  ["/api/clients/add", { name: "sneaky", preset: "full" }],
  ["/api/clients/revoke", { name: "default" }],
  ["/api/clients/rename", { from: "sneaky", to: "sneakier" }],
];

test("the client endpoints refuse a request without the cookie, the CSRF token or the page's Origin", async () => {
  const tokenBefore = readFileSync(join(root, "state/archgate/token"), "utf8");
  for (const [path, body] of ENDPOINTS) {
    const r = await raw(pagePort(), "POST", path, { "content-type": "application/json" }, JSON.stringify(body));
    assert.equal(r.status, 401, path + " without the cookie");
  }
  const { ctx, page } = await loggedIn();
  const good = await sessionHeaders(ctx, page);
  for (const [path, body] of ENDPOINTS) {
    const { "x-csrf-token": _, ...noCsrf } = good;
    let r = await raw(pagePort(), "POST", path, noCsrf, JSON.stringify(body));
    assert.equal(r.status, 403, path + " without the CSRF token");
    r = await raw(pagePort(), "POST", path, { ...good, "x-csrf-token": "0".repeat(64) }, JSON.stringify(body));
    assert.equal(r.status, 403, path + " with a wrong CSRF token");
    r = await raw(pagePort(), "POST", path, { ...good, origin: "http://evil.example" }, JSON.stringify(body));
    assert.equal(r.status, 403, path + " from another origin");
  }
  // From the logged-in page's own script, without the token: refused too.
  const statuses = await page.evaluate(async (eps) => {
    const out = [];
    for (const [path, body] of eps) {
      const r = await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      out.push(r.status);
    }
    return out;
  }, ENDPOINTS);
  assert.deepEqual(statuses, [403, 403, 403]);
  // Nothing changed: no client added, the default token not rotated.
  assert.ok(!clientsFile().includes("sneaky"));
  assert.equal(readFileSync(join(root, "state/archgate/token"), "utf8"), tokenBefore);
  assert.ok(!audit().some((e) => e.event && e.event.startsWith("client_")));
  // The refusals above were the checks: the same request with all three is served.
  const ok = await raw(pagePort(), "POST", "/api/clients/rename", good, JSON.stringify({ from: "nobody", to: "x" }));
  assert.equal(ok.status, 404, ok.body);
  assert.equal(JSON.parse(ok.body).error, "not_found");
  await ctx.close();
});

test("add a client on the page: its token works on /mcp with exactly its preset's tools, and is written nowhere", async () => {
  const { ctx, page } = await loggedIn();
  // The store's own validation, shown on the page.
  await page.locator("#add-name").fill("bad name");
  await page.getByRole("button", { name: "Add client" }).click();
  await page.locator("#add-error").waitFor({ state: "visible" });
  assert.match(await page.locator("#add-error").textContent(), /"bad name" is not a valid client name/);
  await page.locator("#add-name").fill("reader");
  await page.locator("#add-tools").fill("pkg_search, no_such_tool");
  await page.getByRole("button", { name: "Add client" }).click();
  await until("the unknown-tool error", async () => /no tool named "no_such_tool"/.test(await page.locator("#add-error").textContent()));
  assert.ok(!clientsFile().includes("reader"), "nothing stored for refused adds");

  // By keyboard: type the name, Enter submits (preset read-only is the default).
  await page.locator("#add-tools").fill("");
  await page.locator("#add-name").fill("");
  await page.locator("#add-name").focus();
  await page.keyboard.type("chat");
  await page.keyboard.press("Enter");
  const dialog = page.locator("dialog#token-dialog");
  await dialog.waitFor();
  assert.equal(await page.locator("#token-name").textContent(), "chat");
  const token = await page.locator("#token-value").textContent();
  assert.match(token, /^[0-9a-f]{64}$/);
  // The snippet names this server's /mcp and carries the token in a config file's block, never
  // in a command line (issue 33); it is the one the CLI prints.
  const snippet = await page.locator("#snippet-text").textContent();
  const block = JSON.parse(snippet);
  assert.deepEqual(block, {
    mcpServers: {
      "archgate-http": {
        headers: { Authorization: `Bearer ${token}` },
        type: "http",
        url: `http://127.0.0.1:${mcpPort}/mcp`,
      },
    },
  });
  assert.ok(!/claude mcp add/.test(snippet), "no command line carries the token");
  const cli = archgate(["clients", "add", "cli-reader", "--preset", "read-only"]);
  const cliToken = cli.split(/\s+/).find((w) => /^[0-9a-f]{64}$/.test(w));
  const cliBlock = cli.slice(cli.indexOf("{"), cli.lastIndexOf("}") + 1);
  const shape = (s, t) => s.replace(t, "TOKEN").replace(/127\.0\.0\.1:\d+/, "HOST");
  assert.equal(shape(snippet, token), shape(cliBlock, cliToken), "the page and the CLI print the same snippet");
  const kinds = await page.locator("#snippet-kind option").allTextContents();
  assert.deepEqual(kinds, ["Claude Code", "Claude Desktop", "Cursor", "VS Code"]);
  await page.selectOption("#snippet-kind", { label: "VS Code" });
  const vscode = JSON.parse(await page.locator("#snippet-text").textContent());
  // VS Code asks for the token through its password input: the snippet holds none.
  assert.deepEqual(vscode.servers["archgate-http"], {
    type: "http", url: `http://127.0.0.1:${mcpPort}/mcp`, headers: { Authorization: "Bearer ${input:archgate-token}" },
  });
  assert.ok(!JSON.stringify(vscode).includes(token), "the VS Code snippet holds no token");
  await page.screenshot({ path: join(HERE, "screenshots/client-added.png") });
  await page.getByRole("button", { name: "Done" }).click();
  await dialog.waitFor({ state: "hidden" });
  // The dialog's close handler clears the token; it may run a moment after the dialog hides.
  await until("the token to leave the page with the dialog",
    async () => (await page.locator("#token-value").textContent()) === "");

  // The token works, and shows exactly the read-only preset's tools.
  const mcp = await new Mcp(token).initialize();
  const names = await mcp.toolNames();
  assert.deepEqual(names, presetTools(["read"]));
  const full = await new Mcp(readFileSync(join(root, "state/archgate/token"), "utf8").trim()).initialize();
  assert.ok((await full.toolNames()).length > names.length, "default (full) sees more");
  const res = await mcp.request("tools/call", { name: "system_status", arguments: {} });
  assert.notEqual(res.isError, true, JSON.stringify(res));
  await until("the call's record", () => audit().find((r) => r.tool === "system_status" && r.client === "chat"));

  // The page lists it with its grant, its live session and its budget counters.
  const row = page.locator('#clients li[data-name="chat"]');
  // (Counts since start never reset; the budget windows might, between the call and the look.)
  await until("the row's counters", async () => /since start: 1 ok/.test(await row.textContent()));
  const rowText = await row.textContent();
  assert.match(rowText, /read-only/);
  assert.match(rowText, new RegExp(`${names.length} tools`));
  assert.match(rowText, /1 live session/);
  assert.match(rowText, /calls this minute [01]\/120/);
  assert.match(rowText, /today [01]\/2000/);
  assert.match(rowText, /questions this hour 0\/\d+/);
  assert.match(rowText, /last request/);
  assert.match(await page.locator('#clients li[data-name="local"]').textContent(), /stdio/);
  await page.screenshot({ path: join(HERE, "screenshots/clients-laptop.png"), fullPage: true });

  // Written nowhere: not the audit log, not the clients file, not the server's log.
  // Audit records are written by the writer thread, possibly just after the answer.
  const added = await until("the client_added event", () => audit().find((e) => e.event === "client_added" && e.client === "chat"));
  assert.equal(added.channel, "page");
  assert.equal(added.preset, "read-only");
  assert.ok(!auditText().includes(token), "the token is not in the audit log");
  assert.ok(!clientsFile().includes(token), "only its hash is stored");
  assert.ok(!serverLog.includes(token), "the token is not in the server's log");
  chat = { token, session: mcp, full };
  await ctx.close();
});

test("rename on the page: the same token works and records carry the new name", async () => {
  const { token, session } = chat;
  const { ctx, page } = await loggedIn();
  await page.getByRole("button", { name: "Rename client chat" }).click();
  const dialog = page.locator("dialog#rename-dialog");
  await dialog.waitFor();
  await page.locator("#rename-to").fill("cli-reader");
  await page.keyboard.press("Enter");
  await until("the name-taken error", async () => /exists already/.test(await page.locator("#rename-error").textContent()));
  await page.locator("#rename-to").fill("chat-2");
  await page.keyboard.press("Enter");
  await dialog.waitFor({ state: "hidden" });
  await page.locator('#clients li[data-name="chat-2"]').waitFor();
  assert.equal(await page.locator('#clients li[data-name="chat"]').count(), 0);
  const renamed = await until("the client_renamed event", () => audit().find((e) => e.event === "client_renamed"));
  assert.deepEqual([renamed.from, renamed.to, renamed.channel], ["chat", "chat-2", "page"]);

  // The same token, in the same session: works, and is recorded as chat-2.
  const res = await session.request("tools/call", { name: "system_status", arguments: {} });
  assert.notEqual(res.isError, true, JSON.stringify(res));
  const rec = await until("a record from chat-2", () => audit().find((r) => r.tool === "system_status" && r.client === "chat-2"));
  assert.equal(rec.outcome, "ok");
  // A new session with it too.
  const again = await new Mcp(token).initialize();
  assert.deepEqual(await again.toolNames(), presetTools(["read"]));
  assert.ok(!auditText().includes(token));
  await ctx.close();
});

test("revoke on the page, after a confirm step: the token gets 401 at once and its session ends", async () => {
  const { token, session, full } = chat;
  const stream = await session.openStream();
  const { ctx, page } = await loggedIn(390, 844);
  const row = page.locator('#clients li[data-name="chat-2"]');
  await row.waitFor();
  await page.screenshot({ path: join(HERE, "screenshots/clients-phone.png"), fullPage: true });
  for (const b of await page.locator("#clients button, #add-client button, #add-client input").all()) {
    const box = await b.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 390, "fits the phone width");
  }
  // Cancel first: nothing happens.
  await page.getByRole("button", { name: "Revoke client chat-2" }).click();
  await page.locator("dialog#revoke-dialog").waitFor();
  assert.match(await page.locator("#revoke-what").textContent(), /stops working at once/);
  await page.getByRole("button", { name: "Cancel" }).click();
  await page.locator("dialog#revoke-dialog").waitFor({ state: "hidden" });
  assert.equal((await session.post({ jsonrpc: "2.0", id: 900, method: "tools/list" })).status, 200);

  // Confirm: refused on the very next request.
  await page.getByRole("button", { name: "Revoke client chat-2" }).click();
  await page.locator("#revoke-confirm").click();
  await row.waitFor({ state: "detached" });
  const refused = await session.post({ jsonrpc: "2.0", id: 901, method: "tools/list" });
  assert.equal(refused.status, 401, refused.body);
  assert.equal((await new Mcp(token).post({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} })).status, 401);
  await stream.ended; // the session's open stream is closed by the server
  const revoked = await until("the client_revoked event", () => audit().find((e) => e.event === "client_revoked" && e.client === "chat-2"));
  assert.equal(revoked.channel, "page");
  // Another client is untouched.
  assert.ok((await full.toolNames()).length > 0);
  assert.ok(!auditText().includes(token));
  assert.ok(!serverLog.includes(token));
  // The CLI agrees.
  const listed = archgate(["clients", "list"]);
  assert.ok(!listed.includes("chat-2") && listed.includes("cli-reader"), listed);
  await ctx.close();
});
