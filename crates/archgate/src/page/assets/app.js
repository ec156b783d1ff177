// archgate approval page. Every string from the server is put into the page with textContent,
// never as HTML: a pending call's command line is written by an agent.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const $ = (id) => document.getElementById(id);
let skew = 0; // server clock minus ours, in seconds
let view = null;
let alwaysFor = null;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function toast(msg) {
  const t = $("toast");
  t.textContent = msg;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 5000);
}

async function post(path, body) {
  const res = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", "x-csrf-token": csrf },
    body: JSON.stringify(body || {}),
  });
  let data = {};
  try { data = await res.json(); } catch (_) { /* not JSON */ }
  if (!res.ok) {
    toast(data.reason || ("failed: HTTP " + res.status));
    throw new Error(data.error || String(res.status));
  }
  await refresh();
  return data;
}

function now() { return Date.now() / 1000 + skew; }

function fmtLeft(s) {
  s = Math.max(0, Math.round(s));
  return s >= 60 ? Math.floor(s / 60) + " min " + (s % 60) + " s left" : s + " s left";
}

function fmtUntil(t) {
  const d = new Date(t * 1000);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// ---- pending approvals: one card per id, kept across updates so focus stays put.
const cards = new Map();

function card(q) {
  const li = el("li", "card tier-" + q.tier);
  li.dataset.id = q.id;
  li.setAttribute("aria-label", q.tool + " from " + q.client);
  const meta = el("div", "meta");
  meta.append(el("span", "tool", q.tool), el("span", "tier", q.tier),
    el("span", "client", "from " + q.client));
  const left = el("span", "left");
  meta.append(left);
  const cmd = el("pre", "cmd");
  cmd.append(el("code", null, q.summary));
  const details = el("details");
  details.append(el("summary", null, "Arguments"), el("pre", "args", JSON.stringify(q.args, null, 2)));
  const bar = el("div", "bar");
  const fill = el("span");
  bar.append(fill);
  const actions = el("div", "actions");
  const allow = el("button", "btn primary", "Allow once");
  allow.addEventListener("click", () => answer(q.id, "allow"));
  actions.append(allow);
  if (q.rule_allowed) {
    const always = el("button", "btn", "Always…");
    always.addEventListener("click", () => openAlways(q));
    actions.append(always);
  }
  const deny = el("button", "btn danger", "Deny");
  deny.addEventListener("click", () => answer(q.id, "deny"));
  actions.append(deny);
  li.append(meta, cmd, details, bar, actions);
  li._tick = () => {
    const total = Math.max(1, q.deadline - q.created);
    const rest = q.deadline - now();
    left.textContent = fmtLeft(rest);
    fill.style.width = Math.max(0, Math.min(100, (100 * rest) / total)) + "%";
    li.classList.toggle("urgent", rest < 10);
  };
  li._tick();
  return li;
}

async function answer(id, choice) {
  try {
    await post("/api/answer", { id, answer: choice });
    toast(choice === "deny" ? "Denied." : "Allowed.");
  } catch (_) { /* toast shown */ }
}

function openAlways(q) {
  alwaysFor = q;
  $("always-client").textContent = q.client;
  $("always-tool").textContent = q.tool;
  $("always-summary").textContent = q.summary;
  $("always").showModal();
}

$("always").addEventListener("close", () => {
  const q = alwaysFor;
  alwaysFor = null;
  if (q && $("always").returnValue === "confirm") answer(q.id, "allow_always");
});

function renderPending(list) {
  const ol = $("pending");
  const ids = new Set(list.map((q) => q.id));
  for (const [id, li] of cards) {
    if (!ids.has(id)) { li.remove(); cards.delete(id); }
  }
  for (const q of list) {
    if (!cards.has(q.id)) {
      const li = card(q);
      cards.set(q.id, li);
      ol.append(li);
    }
  }
  $("pending-count").textContent = list.length;
  $("pending-empty").hidden = list.length > 0;
  document.title = (list.length ? "(" + list.length + ") " : "") + "archgate — approvals";
  if (alwaysFor && !ids.has(alwaysFor.id)) $("always").close("gone");
}

// ---- developer mode
function renderDev(d) {
  $("devbadge").hidden = !d.on;
  $("dev-on").hidden = d.on;
  $("dev-off").hidden = !d.on;
  $("dev-hours").disabled = d.on;
  $("dev-state").textContent = d.on
    ? "On until " + fmtUntil(d.until) + ": every call except blocked ones is approved and audited."
    : "Off. Calls that need approval ask you.";
}

$("dev-on").addEventListener("click", () => post("/api/dev-mode", { minutes: Number($("dev-hours").value) }).catch(() => {}));
$("dev-off").addEventListener("click", () => post("/api/dev-mode", { minutes: null }).catch(() => {}));

// ---- standing rules
function renderRules(rules) {
  const ul = $("rules");
  ul.replaceChildren();
  for (const r of rules) {
    const li = el("li", "item");
    const text = el("div", "grow");
    const head = el("div");
    head.append(el("strong", null, r.tool), el("span", "muted", " from " + r.client + " · " + r.id));
    const args = el("code", "small", JSON.stringify(r.args));
    const caps = el("div", "muted small",
      "until " + fmtUntil(r.expires) + " · " + (r.uses || []).length + "/" + r.max_uses_per_day + " uses today");
    text.append(head, args, caps);
    const b = el("button", "btn small", "Revoke");
    b.setAttribute("aria-label", "Revoke rule " + r.id);
    b.addEventListener("click", () => post("/api/rules/revoke", { id: r.id }).then(() => toast("Rule revoked.")).catch(() => {}));
    li.append(text, b);
    ul.append(li);
  }
  $("rules-count").textContent = rules.length;
  $("rules-empty").hidden = rules.length > 0;
  $("revoke-all").hidden = rules.length === 0;
}

$("revoke-all").addEventListener("click", () => post("/api/rules/revoke-all").then(() => toast("All rules revoked.")).catch(() => {}));

// ---- activity
function renderActivity(items) {
  const ul = $("activity");
  ul.replaceChildren();
  for (const a of items) {
    const li = el("li", "item");
    const when = el("time", "muted small", a.time.slice(11, 19));
    when.dateTime = a.time;
    const what = el("div", "grow");
    const head = el("div");
    head.append(el("strong", null, a.tool), el("span", "muted", " from " + a.client));
    what.append(head);
    if (a.target) what.append(el("code", "small", a.target));
    let how = a.outcome;
    if (a.approval) {
      const by = a.approval === "auto"
        ? (a.channel === "standing_rule" ? "by rule" : "by " + (a.channel || "policy").replace("_", " "))
        : a.approval + (a.channel ? " via " + a.channel : "");
      how = a.approval === a.outcome ? by : a.outcome + " · " + by;
    }
    if (a.rule_id) how += " " + a.rule_id;
    if (a.dev_mode && a.channel !== "developer_mode") how += " · developer mode";
    const tag = el("span", "tag " + (a.outcome === "ok" ? "ok" : "bad"), how);
    li.append(when, what, tag);
    ul.append(li);
  }
  $("activity-empty").hidden = items.length > 0;
}

function render(v) {
  view = v;
  skew = v.now - Date.now() / 1000;
  renderPending(v.pending);
  renderDev(v.developer_mode);
  renderRules(v.rules);
  renderActivity(v.activity);
  renderConfig(v.config);
}

// A config.toml that does not parse leaves the previous config in force; say so until it does.
function renderConfig(c) {
  const el = $("config-broken");
  if (!c || c.ok) {
    el.hidden = true;
    return;
  }
  el.textContent = "config.toml does not parse; the previous config stays in force: " + (c.problems || []).join("; ");
  el.hidden = false;
}

async function refresh() {
  const res = await fetch("/api/state", { credentials: "same-origin" });
  if (res.ok) render(await res.json());
}

function connect() {
  const es = new EventSource("/events");
  es.addEventListener("state", (e) => {
    $("conn").textContent = "live";
    $("conn").className = "pill ok";
    render(JSON.parse(e.data));
  });
  es.addEventListener("error", () => {
    $("conn").textContent = "reconnecting…";
    $("conn").className = "pill warn";
  });
}

setInterval(() => { for (const li of cards.values()) li._tick(); }, 1000);
refresh().catch(() => {});
connect();
