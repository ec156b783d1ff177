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

// A state change: the session cookie goes along by itself, the CSRF token in a header.
async function send(path, body) {
  const res = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", "x-csrf-token": csrf },
    body: JSON.stringify(body || {}),
  });
  let data = {};
  try { data = await res.json(); } catch (_) { /* not JSON */ }
  return { ok: res.ok, data, reason: data.reason || ("failed: HTTP " + res.status) };
}

async function post(path, body) {
  const r = await send(path, body);
  if (!r.ok) {
    toast(r.reason);
    throw new Error(r.data.error || "failed");
  }
  await refresh();
  return r.data;
}

function now() { return Date.now() / 1000 + skew; }

// "1:32 left, then declined": what happens at zero is part of the question.
function fmtLeft(s) {
  s = Math.max(0, Math.round(s));
  if (s === 0) return "time is up: declined";
  return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0") + " left, then declined";
}

function fmtUntil(t) {
  const d = new Date(t * 1000);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// ---- pending approvals: one card per id, kept across updates so focus stays put, in the
// server's order (the one that ends first comes first).
const cards = new Map();
const FOLD_AT = 12; // a text of more lines shows its first and last lines, the middle folded
const KEEP = 4; // lines kept visible at each end of a folded text

// The sentence: parts the server built escaped; the ones an agent or resolution chose in bold.
function sentence(q) {
  const p = el("p", "sentence");
  const parts = (q.sentence && q.sentence.parts) || [];
  if (!parts.length) p.textContent = q.client + " wants to use " + q.tool;
  for (const part of parts) p.append(part.strong ? el("strong", null, part.text) : document.createTextNode(part.text));
  return p;
}

// Numbered lines of a text: all of them, or the first and last KEEP with the middle folded
// behind a button that shows the whole text.
function textBlock(a, replaces) {
  const box = el("div", "text-arg");
  const head = el("div", "text-head small");
  head.append(el("span", "arg-key", a.key), el("span", "muted", " · " + a.size + (a.final_newline ? ", ending in a newline" : "")));
  if (replaces) head.append(el("span", "replaces", " · " + replaces));
  const ol = el("ol", "lines");
  const line = (i) => {
    const li = el("li", null, a.lines[i]);
    li.value = i + 1;
    return li;
  };
  const n = a.lines.length;
  if (n <= FOLD_AT) {
    for (let i = 0; i < n; i++) ol.append(line(i));
  } else {
    for (let i = 0; i < KEEP; i++) ol.append(line(i));
    const fold = el("li", "fold");
    const more = el("button", "btn small", "Show " + (n - 2 * KEEP) + " more lines");
    more.type = "button";
    more.addEventListener("click", () => {
      const rest = [];
      for (let i = KEEP; i < n - KEEP; i++) rest.push(line(i));
      fold.replaceWith(...rest);
    });
    fold.append(more);
    ol.append(fold);
    for (let i = n - KEEP; i < n; i++) ol.append(line(i));
  }
  box.append(head, ol);
  return box;
}

// A value the command already shows in full needs no second line: its quoted text, unquoted.
function inCommand(a, summary) {
  if (a.kind !== "value" || !a.text.startsWith('"')) return false;
  const inner = a.text.slice(1, -1).replace(/\\"/g, '"');
  return inner.length >= 3 && summary.includes(inner);
}

function argumentsView(q) {
  const box = el("div", "arguments");
  const all = q.arguments || [];
  const replaces = q.sentence && q.sentence.replaces;
  const shown = all.filter((a) => !inCommand(a, q.summary));
  const dl = el("dl", "kv");
  for (const a of shown) {
    if (a.kind === "text") {
      box.append(textBlock(a, replaces));
    } else if (a.kind === "rows") {
      const dd = el("dd");
      const inner = el("dl", "kv inner");
      for (const [k, v] of a.rows) inner.append(el("dt", null, k), el("dd", "val", v));
      dd.append(inner);
      dl.append(el("dt", null, a.key), dd);
    } else {
      dl.append(el("dt", null, a.key), el("dd", "val", a.text));
    }
  }
  if (dl.children.length) box.append(dl);
  if (all.length > shown.length) {
    box.append(el("p", "muted small", (all.length - shown.length === 1 ? "1 argument is" : (all.length - shown.length) + " arguments are") + " shown in the command below."));
  }
  return box;
}

// The screens as the compositor lays them out, drawn to scale, with the captured area outlined.
const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

function screensMap(p) {
  const fig = el("figure", "map");
  const xs = p.screens.flatMap((s) => [s.x, s.x + s.width]);
  const ys = p.screens.flatMap((s) => [s.y, s.y + s.height]);
  const x0 = Math.min(...xs), y0 = Math.min(...ys);
  const w = Math.max(...xs) - x0, h = Math.max(...ys) - y0;
  const pic = svg("svg", { viewBox: `${x0} ${y0} ${w} ${h}`, role: "img", preserveAspectRatio: "xMidYMid meet" });
  const label = "Your screens" + (p.area ? ", with the area that will be captured outlined" : "; all of them will be captured");
  pic.setAttribute("aria-label", label);
  const unit = Math.max(w, h) / 100;
  for (const s of p.screens) {
    const r = svg("rect", { class: "screen", x: s.x, y: s.y, width: s.width, height: s.height, "stroke-width": unit / 2 });
    r.dataset.name = s.name;
    pic.append(r);
    const t = svg("text", { x: s.x + unit * 2, y: s.y + unit * 5, "font-size": unit * 3.5, class: "screen-name" });
    t.textContent = s.name;
    const size = svg("text", { x: s.x + unit * 2, y: s.y + unit * 9.5, "font-size": unit * 3, class: "screen-name" });
    size.textContent = s.width + "×" + s.height;
    pic.append(t, size);
  }
  if (p.area) {
    const a = p.area;
    pic.append(svg("rect", { class: "area", x: a.x, y: a.y, width: a.width, height: a.height, "stroke-width": unit }));
  } else {
    pic.classList.add("all");
  }
  fig.append(pic, el("figcaption", "muted small", label + "."));
  return fig;
}

// An image archgate serves from this page's own origin (a new background, a theme's preview).
function imagePicture(q, p) {
  const fig = el("figure", "thumb");
  const img = el("img");
  img.alt = p.what;
  img.src = "/api/picture?id=" + encodeURIComponent(q.id);
  img.addEventListener("error", () => { img.replaceWith(el("span", "muted small", "(the image cannot be shown)")); });
  fig.append(img, el("figcaption", "muted small", p.what + ", as the file is now"));
  return fig;
}

// A file the call writes with contents archgate knows (a .pacnew adopted): the change as the
// question carries it (bounded, every line visible-only), drawn as text.
function diffPicture(p) {
  const fig = el("figure", "diff");
  const head = p.note
    ? "Replaces " + p.path + " with " + p.from + "; the change cannot be shown (" + p.note + ")."
    : "Replaces " + p.path + " with " + p.from + ": " + p.added + " lines added, " + p.removed + " removed, as the files are now.";
  const ol = el("ol", "diff-lines");
  const mark = { added: "+", removed: "−", same: " ", hunk: "" };
  for (const l of p.lines) {
    const li = el("li", "d-" + l.op);
    li.append(el("span", "d-mark", mark[l.op] ?? " "), el("span", "d-text", l.text));
    ol.append(li);
  }
  fig.append(el("figcaption", "small", head), ol);
  if (p.cut) fig.append(el("p", "muted small", "The change is longer than what is shown here."));
  return fig;
}

// "See exactly what the agent will receive": the call runs once, now, and its output is held with
// the waiting call; this image is those bytes, and a yes gives the agent the same ones (it does
// not capture again). A no or the deadline drops them.
function capturePreview(q) {
  const box = el("div", "capture");
  const btn = el("button", "btn", "See exactly what the agent will receive");
  btn.type = "button";
  btn.title = "Takes the screenshot now and shows it to you only; Allow gives the agent this same image";
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    try {
      const d = await post("/api/capture", { id: q.id });
      const fig = el("figure", "thumb capture-shot");
      const img = el("img");
      img.alt = "The screenshot the agent will receive if you allow";
      img.src = "/api/capture?id=" + encodeURIComponent(q.id);
      const kb = (d.bytes / 1024).toFixed(1);
      fig.append(img, el("figcaption", "muted small",
        "Taken once at " + new Date().toLocaleTimeString() + " (" + d.mime + ", " + kb + " KB). Allow gives the agent exactly this image; it is not taken again. Deny drops it."));
      box.replaceChildren(fig);
    } catch (_) {
      btn.disabled = false;
    }
  });
  box.append(btn);
  return box;
}

function picture(q) {
  const p = q.picture;
  if (p && p.kind === "diff") return diffPicture(p);
  if (p && p.kind === "screens" && p.screens.length) return screensMap(p);
  if (p && p.kind === "image") return imagePicture(q, p);
  return null;
}

function card(q) {
  const li = el("li", "card tier-" + q.tier);
  li.dataset.id = q.id;
  li.tabIndex = 0;
  li.setAttribute("aria-label", q.sentence ? q.sentence.parts.map((p) => p.text).join("") : q.tool + " from " + q.client);
  const top = el("div", "headline");
  const left = el("span", "left");
  top.append(sentence(q), left);
  const meta = el("div", "meta small");
  meta.append(el("span", "tool", q.tool), el("span", "tier", q.tier),
    // The grant's name (the identity) first; the agent's own clientInfo only as what it says it
    // is (attack 4 F3: a forged clientInfo never reads as another client).
    el("span", "client", "from " + q.client + (q.agent ? " (says it is " + q.agent + ")" : "")),
    el("span", "qid muted", q.id));
  // What the agent read just before (text archgate did not write): a rule or developer mode
  // did not approve this; the person decides knowing it.
  const follows = q.follows ? el("p", "follows", "After untrusted text: " + q.follows.sentence) : null;
  const pic = picture(q);
  // The exact command, once: what runs is what the person reads.
  const cmdBox = el("div", "detail");
  cmdBox.append(el("span", "muted small", "Exactly"));
  const cmd = el("pre", "cmd");
  cmd.append(el("code", null, q.summary));
  cmdBox.append(cmd);
  const bar = el("div", "bar");
  const fill = el("span");
  bar.append(fill);
  const actions = el("div", "actions");
  const allow = el("button", "btn primary", "Allow once");
  allow.addEventListener("click", () => answer(q.id, "allow"));
  allow.title = "A";
  actions.append(allow);
  if (q.rule_allowed) {
    const always = el("button", "btn", "Always…");
    always.addEventListener("click", () => openAlways(q));
    always.title = "Shift+A";
    actions.append(always);
  }
  const deny = el("button", "btn danger", "Deny");
  deny.addEventListener("click", () => answer(q.id, "deny"));
  deny.title = "D";
  actions.append(deny);
  const denyAll = el("button", "btn danger deny-all");
  denyAll.addEventListener("click", () => post("/api/deny-all", { client: q.client })
    .then((d) => toast("Denied " + d.denied + " from " + q.client + ".")).catch(() => {}));
  denyAll.hidden = true;
  actions.append(denyAll);
  li.append(top, meta);
  if (follows) li.append(follows);
  if (pic) li.append(pic);
  if (q.preview) li.append(capturePreview(q));
  li.append(argumentsView(q), cmdBox, bar, actions);
  if (q.password_once) li.append(el("p", "muted small", "Allowing may ask for your password."));
  li._q = q;
  li._denyAll = denyAll;
  // The person's own pointer or a move away and back: keys answer this card again.
  li.addEventListener("pointerdown", () => { li._fromLink = false; });
  li.addEventListener("focusout", (ev) => { if (!li.contains(ev.relatedTarget)) li._fromLink = false; });
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

// The rule an "Always…" makes, honestly: the exact arguments it will match (a long text as its
// first lines and a digest), the client it is for, when it ends, and that a password may be asked.
function openAlways(q) {
  alwaysFor = q;
  $("always-client").textContent = q.client;
  $("always-tool").textContent = q.tool;
  $("always-summary").textContent = q.summary;
  const args = $("always-args");
  args.replaceChildren();
  for (const a of q.arguments || []) {
    if (a.kind === "text") {
      const head = a.lines.slice(0, 3).join("\n") + (a.lines.length > 3 ? "\n… " + (a.lines.length - 3) + " more lines" : "");
      args.append(el("dt", null, a.key + " (" + a.size + ")"), el("dd", null, head));
    } else if (a.kind === "rows") {
      args.append(el("dt", null, a.key), el("dd", null, a.rows.map(([k, v]) => k + ": " + v).join(", ")));
    } else {
      args.append(el("dt", null, a.key), el("dd", null, a.text));
    }
  }
  if (!args.children.length) args.append(el("dt", null, "arguments"), el("dd", null, "none"));
  const al = q.always || {};
  $("always-digest").textContent = al.digest || "";
  $("always-limits").textContent = "It ends after " + (al.hours || 24) + " hours, or after " + (al.uses_per_day || 20)
    + " uses in a day. You can revoke it at any time under Standing rules.";
  $("always-password").hidden = !al.password;
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
  const perClient = new Map();
  for (const q of list) perClient.set(q.client, (perClient.get(q.client) || 0) + 1);
  list.forEach((q, i) => {
    let li = cards.get(q.id);
    if (!li) {
      li = card(q);
      cards.set(q.id, li);
    }
    const n = perClient.get(q.client);
    li._denyAll.hidden = n < 2;
    li._denyAll.textContent = "Deny all " + n + " from " + q.client;
    // In the server's order, moving only what is out of place (a moved node loses focus).
    if (ol.children[i] !== li) ol.insertBefore(li, ol.children[i] || null);
  });
  ol.classList.toggle("compact", list.length > 1);
  $("pending-count").textContent = list.length;
  $("pending-empty").hidden = list.length > 0;
  $("keys").hidden = list.length === 0;
  document.title = (list.length ? "(" + list.length + ") " : "") + "archgate — approvals";
  if (alwaysFor && !ids.has(alwaysFor.id)) $("always").close("gone");
  goToWanted();
}

// ---- #call=ID (the notification's click opens the page there): that call's card is scrolled
// into view and focused, once per fragment. A link (any program of this user can open one) put
// the focus there, not the person: A and D on that card are held until the person clicks it or
// moves with J/K, so keys typed elsewhere as the browser came up answer nothing.
let wantedCall = null;
function readWanted() {
  const m = /^#call=([A-Za-z0-9_.-]{1,200})$/.exec(location.hash);
  wantedCall = m ? m[1] : null;
}
readWanted();
window.addEventListener("hashchange", () => { readWanted(); goToWanted(); });
let rendered = false;
function goToWanted() {
  const first = !rendered;
  rendered = true;
  if (!wantedCall) return;
  const id = wantedCall;
  const li = cards.get(id);
  if (!li) {
    // Only on the first picture of what waits: later, the call may simply not be asked yet.
    if (first) {
      wantedCall = null;
      toast("That call is no longer waiting: it was answered, withdrawn or ran out.");
    }
    return;
  }
  wantedCall = null;
  li._fromLink = true;
  li.classList.add("wanted");
  li.scrollIntoView({ block: "center" });
  li.focus({ preventScroll: true });
}

// ---- keyboard: on the focused card, A allows once, Shift+A opens Always…, D denies; J and K
// move between cards. Never while typing or while a dialog is open.
document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.altKey || ev.metaKey || ev.repeat) return;
  const t = ev.target;
  if (t.closest && (t.closest("input, select, textarea, dialog") || document.querySelector("dialog[open]"))) return;
  const list = [...$("pending").children];
  const at = t.closest ? t.closest("li.card") : null;
  const key = ev.key.toLowerCase();
  if (key === "j" || key === "k") {
    if (!list.length) return;
    const i = at ? list.indexOf(at) : -1;
    const next = key === "j" ? Math.min(list.length - 1, i + 1) : Math.max(0, i - 1);
    for (const li of list) li._fromLink = false;
    list[next].focus();
    ev.preventDefault();
    return;
  }
  if (!at || !at._q) return;
  if (at._fromLink && (key === "a" || key === "d")) {
    toast("A link put the focus on this call: click it (or move with J/K) before answering with a key.");
    ev.preventDefault();
    return;
  }
  if (key === "a" && ev.shiftKey) {
    if (at._q.rule_allowed) { openAlways(at._q); ev.preventDefault(); }
  } else if (key === "a") {
    answer(at._q.id, "allow");
    ev.preventDefault();
  } else if (key === "d") {
    answer(at._q.id, "deny");
    ev.preventDefault();
  }
});

// ---- developer mode
function renderDev(d) {
  $("devbadge").hidden = !d.on;
  $("dev-on").hidden = d.on;
  $("dev-off").hidden = !d.on;
  $("dev-hours").disabled = d.on;
  $("dev-state").textContent = d.on
    ? "On until " + fmtUntil(d.until) + ": every call except destructive and blocked ones is approved and audited."
    : "Off. Calls that need approval ask you.";
}

$("dev-on").addEventListener("click", () => post("/api/dev-mode", { minutes: Number($("dev-hours").value) }).catch(() => {}));
$("dev-off").addEventListener("click", () => post("/api/dev-mode", { minutes: null }).catch(() => {}));
$("dev-open").addEventListener("click", () => $("dev-dialog").showModal());

// ---- standing rules
function renderRules(rules) {
  const ul = $("rules");
  ul.replaceChildren();
  for (const r of rules) {
    const li = el("li", "item");
    const text = el("div", "grow");
    const head = el("div");
    head.append(el("strong", null, r.tool), el("span", "muted", " from " + r.client + " · " + r.id));
    const args = el("code", "small", r.shown_args !== undefined ? r.shown_args : JSON.stringify(r.args));
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

// ---- clients: one row per name, kept across updates so focus stays on its buttons.
const clientRows = new Map();

function fmtWhen(t) {
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

function meter(label, n, limit, resets) {
  const m = el("span", "meter", label + " " + n + "/" + limit);
  m.title = "resets at " + fmtUntil(resets);
  if (n >= limit) m.classList.add("full");
  else if (n >= 0.8 * limit) m.classList.add("near");
  return m;
}

function clientText(c) {
  const box = el("div", "grow");
  const head = el("div", "head");
  head.append(el("strong", "name", c.name), el("span", "tag", c.preset));
  const live = c.live_sessions === 1 ? "1 live session" : c.live_sessions + " live sessions";
  head.append(el("span", "muted small", c.transport + (c.transport === "http" ? " · " + live : "")));
  const grant = [c.visible_tools + " tools"];
  if (c.tools) grant.push("only " + c.tools.join(", "));
  if (c.grant_from_config) grant.push("grant from config.toml");
  if (c.transport === "http") {
    grant.push(c.created ? "added " + fmtWhen(c.created) : "made on first run");
    grant.push(c.last_request ? "last request " + fmtWhen(c.last_request * 1000) : "no request since start");
  }
  const b = c.budget;
  const meters = el("div", "meters small");
  meters.append(
    meter("calls this minute", b.calls_this_minute, b.per_minute, b.minute_resets_at),
    meter("today", b.calls_today, b.per_day, b.day_resets_at),
    meter("questions this hour", b.questions_this_hour, b.questions_per_hour, b.hour_resets_at));
  const outcomes = Object.entries(c.calls || {}).map(([k, n]) => n + " " + k.replace("_", " "));
  if (outcomes.length) meters.append(el("span", "muted", "since start: " + outcomes.join(", ")));
  box.append(head, el("div", "muted small", grant.join(" · ")), meters);
  return box;
}

function clientRow(c) {
  const li = el("li", "item client");
  li.dataset.name = c.name;
  const actions = el("div", "actions");
  if (c.name !== "local") {
    if (!c.builtin) {
      const rn = el("button", "btn small", "Rename…");
      rn.setAttribute("aria-label", "Rename client " + c.name);
      rn.addEventListener("click", () => openRename(c.name));
      actions.append(rn);
    }
    const rv = el("button", "btn small danger", c.builtin ? "New token…" : "Revoke…");
    rv.setAttribute("aria-label", (c.builtin ? "Give a new token to client " : "Revoke client ") + c.name);
    rv.addEventListener("click", () => openRevoke(c.name, c.builtin));
    actions.append(rv);
  }
  li.append(clientText(c), actions);
  return li;
}

function renderClients(list) {
  const ul = $("clients");
  const names = new Set(list.map((c) => c.name));
  for (const [name, li] of clientRows) {
    if (!names.has(name)) { li.remove(); clientRows.delete(name); }
  }
  list.forEach((c, i) => {
    let li = clientRows.get(c.name);
    if (!li) {
      li = clientRow(c);
      clientRows.set(c.name, li);
    } else {
      li.firstChild.replaceWith(clientText(c));
    }
    // In the server's order, moving only what is out of place (a moved node loses focus).
    if (ul.children[i] !== li) ul.insertBefore(li, ul.children[i] || null);
  });
  $("clients-count").textContent = list.length;
}

function fieldError(id, msg) {
  const e = $(id);
  e.textContent = msg || "";
  e.hidden = !msg;
}

$("add-client").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const tools = $("add-tools").value.split(",").map((t) => t.trim()).filter(Boolean);
  const body = { name: $("add-name").value.trim(), preset: $("add-preset").value };
  if (tools.length) body.tools = tools;
  $("add-submit").disabled = true;
  const r = await send("/api/clients/add", body).finally(() => { $("add-submit").disabled = false; });
  if (!r.ok) {
    fieldError("add-error", r.reason);
    $("add-name").focus();
    return;
  }
  fieldError("add-error", null);
  $("add-name").value = "";
  $("add-tools").value = "";
  showToken(r.data);
  refresh().catch(() => {});
});

// The token lives only in this dialog, and only until it closes.
let shownSnippets = [];
function showToken(d) {
  $("token-name").textContent = d.name;
  $("token-value").textContent = d.token;
  shownSnippets = d.snippets || [];
  const sel = $("snippet-kind");
  sel.replaceChildren(...shownSnippets.map((s, i) => {
    const o = el("option", null, s.label);
    o.value = String(i);
    return o;
  }));
  showSnippet();
  $("token-dialog").showModal();
  $("token-copy").focus();
}

function showSnippet() {
  const s = shownSnippets[Number($("snippet-kind").value) || 0];
  $("snippet-text").textContent = s ? s.text : "";
}

$("snippet-kind").addEventListener("change", showSnippet);

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    toast(what + " copied.");
  } catch (_) {
    toast("Could not copy; select the text and copy it by hand.");
  }
}

$("token-copy").addEventListener("click", () => copy($("token-value").textContent, "Token"));
$("snippet-copy").addEventListener("click", () => copy($("snippet-text").textContent, "Snippet"));
$("token-dialog").addEventListener("close", () => {
  $("token-value").textContent = "";
  $("snippet-text").textContent = "";
  shownSnippets = [];
  $("snippet-kind").replaceChildren();
  $("add-name").focus();
});

let revoking = null;
function openRevoke(name, builtin) {
  revoking = name;
  $("revoke-name").textContent = name;
  $("revoke-what").textContent = builtin
    ? "It gets a new token at once: the old one stops working and its live sessions end. "
      + "`archgate client-config --http` prints the new one."
    : "Its token stops working at once and its live sessions end. To connect that agent again, add a new client.";
  $("revoke-confirm").textContent = builtin ? "Give a new token" : "Revoke";
  $("revoke-dialog").showModal();
}

$("revoke-dialog").addEventListener("close", () => {
  const name = revoking;
  revoking = null;
  if (name && $("revoke-dialog").returnValue === "confirm") {
    post("/api/clients/revoke", { name }).then(() => toast("Client " + name + " revoked.")).catch(() => {});
  }
});

let renaming = null;
function openRename(name) {
  renaming = name;
  $("rename-from").textContent = name;
  $("rename-to").value = name;
  fieldError("rename-error", null);
  $("rename-dialog").showModal();
  $("rename-to").select();
}

$("rename-cancel").addEventListener("click", () => $("rename-dialog").close());
$("rename-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const to = $("rename-to").value.trim();
  const r = await send("/api/clients/rename", { from: renaming, to });
  if (!r.ok) {
    fieldError("rename-error", r.reason);
    $("rename-to").focus();
    return;
  }
  $("rename-dialog").close();
  toast("Client " + renaming + " is now " + to + ".");
  refresh().catch(() => {});
});

function render(v) {
  view = v;
  skew = v.now - Date.now() / 1000;
  renderPending(v.pending);
  renderDev(v.developer_mode);
  renderRules(v.rules);
  renderClients(v.clients || []);
  renderActivity(v.activity);
  renderConfig(v.config);
}

// A config.toml that is not applied leaves the last good copy in force; say so (the file, why) until it applies.
function renderConfig(c) {
  const el = $("config-broken");
  if (!c || c.ok) {
    el.hidden = true;
    return;
  }
  el.textContent = "config.toml is not applied; using " + (c.using || "the previous config") + ": " + (c.problems || []).join("; ");
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
