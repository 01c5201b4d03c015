// The Bullpen chat page. No build step, no dependencies. Text is only ever set with
// textContent; the one exception is `html` fields, which the server renders with raw HTML
// escaped (markdown-it-py, html=False). The words come from the catalogue (/static/words.js).
// Its marks (✓ ⚠ ⋯ ▤ ✕) are in the plain fonts every system has, not emoji a machine may
// lack (they were drawn as boxes).
"use strict";

const WORDS = window.BULLPEN_WORDS || { en: {}, zh: {} };
const SUGGESTIONS = ["suggest_1", "suggest_2", "suggest_3", "suggest_4"];
// what a tool's `{symbol}` is filled from, in the tool's own arguments
const SYMBOL_ARGS = ["symbol", "code", "ticker", "query", "name"];

const $ = (id) => document.getElementById(id);
const state = { me: null, lang: "en", csrf: "", chat: null, viewing: null, es: null,
  pending: false, query: "", coverage: {}, renaming: false };
const progress = new Map(); // ref -> progress element
// ref -> the answer's text as streamed so far: shown as it comes (token by token), until the
// final rendering arrives; the renderer's throttled progress edits are not needed meanwhile
const streams = new Map();
const running = new Set(); // refs of answers being written
const calls = new Map(); // tool call id -> its friendly label

function t(key, values) {
  const table = WORDS[state.lang] || WORDS.en;
  let text = table[key] !== undefined ? table[key] : (WORDS.en[key] !== undefined ? WORDS.en[key] : key);
  if (values) text = text.replace(/\{(\w+)\}/g, (m, name) => (name in values ? String(values[name]) : m));
  return text;
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function applyLang() {
  document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
  document.querySelectorAll("[data-t]").forEach((n) => { n.textContent = t(n.dataset.t); });
  document.querySelectorAll("[data-tp]").forEach((n) => { n.placeholder = t(n.dataset.tp); });
  document.querySelectorAll("[data-ta]").forEach((n) => {
    n.setAttribute("aria-label", t(n.dataset.ta));
    n.title = t(n.dataset.ta);
  });
  $("text").placeholder = t("placeholder");
  $("lang").textContent = state.lang === "zh" ? "English" : "中文";
  drawSuggestions();
  updateEmpty();
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
  };
  const resp = await fetch(path, { credentials: "same-origin", ...init });
  let data = {};
  try { data = await resp.json(); } catch (_) { /* not JSON */ }
  if (resp.status === 401) { location.reload(); }
  if (!resp.ok) throw new Error(data.error || `HTTP ${resp.status}`);
  return data;
}

function notice(text) {
  const n = $("notice");
  n.textContent = text;
  n.hidden = !text;
}

function when(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

// --- copying -------------------------------------------------------------------------------

function copyButton(label, text) {
  const b = el("button", "copy", t(label));
  b.type = "button";
  b.dataset.label = label;
  b.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(typeof text === "function" ? text() : text);
      b.textContent = t("copied");
      setTimeout(() => { b.textContent = t(label); }, 1500);
    } catch (e) { notice(e.message); }
  });
  return b;
}

function tableText(table) {
  return [...table.rows].map((r) => [...r.cells].map((c) => c.textContent.trim()).join("\t"))
    .join("\n");
}

// copy buttons on an answer's tables and code blocks, and on the answer itself
function addCopies(node, text) {
  node.querySelectorAll(".md .table-wrap").forEach((wrap) => {
    const table = wrap.querySelector("table");
    if (table) wrap.after(copyButton("copy_table", () => tableText(table)));
  });
  node.querySelectorAll(".md pre").forEach((pre) => {
    pre.after(copyButton("copy_code", () => pre.textContent));
  });
  if (text) {
    const row = el("div", "actions");
    row.append(copyButton("copy", text));
    node.append(row);
  }
}

// --- drawing messages ----------------------------------------------------------------------

function fileBlock(file) {
  const box = el("div", "filebox");
  if (file.kind === "image") {
    const img = el("img", "chart");
    img.src = file.url;
    img.alt = file.filename;
    img.loading = "lazy";
    img.addEventListener("click", () => {
      $("lightbox-img").src = file.url;
      $("lightbox-img").alt = file.filename;
      $("lightbox").showModal();
    });
    box.append(img);
  } else {
    const a = el("a", "download", `▤ ${file.filename}`);
    a.href = file.url;
    a.setAttribute("download", "");
    box.append(a);
  }
  return box;
}

function drawItem(item) {
  const node = el("div", `msg ${item.role}`);
  node.dataset.id = item.id || "";
  if (item.role === "file" && item.file) {
    node.append(fileBlock(item.file));
    if (item.html) { const cap = el("div", "md"); cap.innerHTML = item.html; node.append(cap); }
  } else {
    const body = el("div", "md");
    body.innerHTML = item.html || "";
    node.append(body);
    if (item.role === "assistant") addCopies(node, item.text);
  }
  return node;
}

function drawStream(ref) {
  const msg = $("log").querySelector(`[data-id="${CSS.escape(ref)}"] .md`);
  if (!msg) return;
  const p = el("p", "plain", streams.get(ref));
  msg.replaceChildren(p);
  scrollDown();
}

function upsert(item) {
  const log = $("log");
  const old = log.querySelector(`[data-id="${CSS.escape(item.id)}"]`);
  // while an answer runs, the bot's plain edits of it are its progress in the bot's words
  // (tool labels): the page says "working" in its own language and shows the steps below
  const progressEdit = item.role === "assistant" && item.markup === "plain" &&
    (running.has(item.id) || streams.has(item.id));
  if (old && progressEdit) return;
  const node = drawItem(progressEdit ? { ...item, text: "", html: "" } : item);
  if (progressEdit) node.querySelector(".md").append(el("p", "plain", `⋯ ${t("working")}`));
  if (old) old.replaceWith(node); else log.append(node);
  const lines = progress.get(item.id);
  if (lines && node.nextSibling !== lines) node.after(lines);
  if (streams.has(item.id) && item.markup === "plain") drawStream(item.id);
  updateEmpty();
  scrollDown();
}

function scrollDown() {
  const log = $("log");
  log.scrollTop = log.scrollHeight;
}

// --- the empty chat: suggested questions and what the data covers ---------------------------

function drawSuggestions() {
  const box = $("suggestions");
  box.replaceChildren(...SUGGESTIONS.map((key) => {
    const b = el("button", "suggestion", t(key));
    b.type = "button";
    b.addEventListener("click", () => send(t(key)));
    return b;
  }));
}

async function loadCoverage() {
  const lang = state.lang;
  if (state.coverage[lang] === undefined) {
    const { coverage_html: html } = await api(`/api/welcome?lang=${lang}`);
    state.coverage[lang] = html;
  }
  if (lang === state.lang) $("coverage-body").innerHTML = state.coverage[lang];
}

function updateEmpty() {
  // empty: nothing asked yet in this conversation (a New chat's greeting does not count)
  const empty = !state.viewing && !$("log").querySelector(".msg.user, .msg.file");
  $("empty").hidden = !empty;
  $("log").hidden = empty || Boolean(state.viewing);
  if (empty && state.me) loadCoverage().catch((e) => notice(e.message));
}

// --- progress lines: friendly labels, never tool names --------------------------------------

function setRunning(ref, on) {
  if (ref) { if (on) running.add(ref); else running.delete(ref); }
  $("stop").hidden = !(running.size || state.pending);
}

function toolLabel(name, args) {
  const key = `tool_${name}`;
  const known = (WORDS.en || {})[key] !== undefined;
  const template = known ? t(key) : t("tool_other");
  if (!template.includes("{symbol}")) return template;
  const symbol = SYMBOL_ARGS.map((a) => (args || {})[a]).find((v) => typeof v === "string" && v);
  return symbol ? t(key, { symbol }) : t("tool_other");
}

function linesFor(ref) {
  let box = progress.get(ref);
  if (!box) {
    box = el("div", "progress running");
    box.dataset.ref = ref;
    progress.set(ref, box);
    const msg = $("log").querySelector(`[data-id="${CSS.escape(ref)}"]`);
    if (msg) msg.after(box); else $("log").append(box);
  }
  return box;
}

function progressLine(ev) {
  if (!ev.ref) return;
  setRunning(ev.ref, true);
  const box = linesFor(ev.ref);
  if (ev.type === "thinking") {
    let d = box.querySelector("details.thinking");
    if (!d) {
      d = el("details", "thinking");
      d.append(el("summary", "", t("thinking")), el("pre", ""));
      box.append(d);
    }
    d.querySelector("pre").textContent += ev.text;
  } else if (ev.type === "status") {
    // the bot's own words (English tool labels): the answer's bubble says "working" instead
  } else if (ev.type === "tool_started") {
    const label = toolLabel(ev.name, ev.arguments);
    calls.set(ev.call_id, label);
    const line = el("div", "tool", `⋯ ${label}`);
    line.dataset.call = ev.call_id;
    box.append(line);
  } else if (ev.type === "tool_finished") {
    const line = box.querySelector(`[data-call="${CSS.escape(ev.call_id)}"]`) ||
      box.appendChild(el("div", "tool"));
    const label = calls.get(ev.call_id) || toolLabel(ev.name, {});
    line.textContent = `${ev.ok ? "✓" : "⚠"} ${label} · ${t(ev.ok ? "step_done" : "step_failed")}` +
      ` (${(ev.elapsed_s || 0).toFixed(1)} s)`;
  } else if (ev.type === "file") {
    box.append(el("div", "tool", `↓ ${t("file_ready", { name: ev.file.filename })}`));
  }
  scrollDown();
}

function finish(ref) {
  setRunning(ref, false);
  const box = progress.get(ref);
  if (!box) return;
  box.classList.remove("running");
  if (!box.childElementCount) { box.remove(); progress.delete(ref); }
}

// --- the chat and its stream ---------------------------------------------------------------

function clearLog() {
  $("log").replaceChildren();
  progress.clear();
  streams.clear();
  running.clear();
  setRunning(null, false);
}

async function drawSnapshot(snap) {
  const chat = await api("/api/chat");
  state.chat = chat.conversation;
  const log = $("log");
  clearLog();
  const since = snap.since ? Date.parse(snap.since) : Infinity;
  for (const entry of chat.entries) {
    if (Date.parse(entry.at) >= since) continue; // the snapshot has it as it stands now
    log.append(drawItem({ ...entry, id: "" }));
  }
  for (const run of snap.running) {
    if (run.text) streams.set(run.ref, run.text);
    setRunning(run.ref, true);
  }
  for (const item of snap.items) upsert(item);
  for (const run of snap.running) {
    for (const line of run.lines) progressLine({ ...line, ref: run.ref });
  }
  if (state.chat) $("mode").value = state.chat.mode || "";
  updateEmpty();
  scrollDown();
  refreshLists();
  document.body.dataset.ready = "1";
}

function onEvent(ev) {
  switch (ev.type) {
    case "snapshot": drawSnapshot(ev).catch((e) => notice(e.message)); break;
    case "message_sent": case "message_edited":
      state.pending = false; setRunning(null, false); upsert(ev.item); break;
    case "user_message": case "file_sent":
      upsert(ev.item); break;
    case "status": case "thinking": case "tool_started": case "tool_finished": case "file":
      progressLine(ev); break;
    case "text_delta":
      if (ev.ref) {
        setRunning(ev.ref, true);
        streams.set(ev.ref, (streams.get(ev.ref) || "") + ev.text);
        drawStream(ev.ref);
      }
      break;
    case "done": case "failed":
      state.pending = false; streams.delete(ev.ref); finish(ev.ref); refreshLists(); break;
    case "cleared":
      state.chat = null; clearLog(); updateEmpty(); refreshLists(); break;
    case "error": state.pending = false; setRunning(null, false); notice(ev.text); break;
    default: break;
  }
}

function connect() {
  if (state.es) state.es.close();
  const es = new EventSource("/api/events");
  state.es = es;
  es.onmessage = (m) => { notice(""); onEvent(JSON.parse(m.data)); };
  es.onerror = () => notice(t("reconnecting"));
}

async function send(text) {
  if (state.viewing) showLive();
  try {
    const id = (crypto.randomUUID ? crypto.randomUUID() : String(Date.now() + Math.random()))
      .replace(/[^A-Za-z0-9-]/g, "");
    state.pending = !text.startsWith("/");
    setRunning(null, false);
    await api("/api/messages", { text, client_id: id });
  } catch (e) {
    state.pending = false;
    setRunning(null, false);
    notice(t("failed") + e.message);
  }
}

// --- the drawer: conversations and files ----------------------------------------------------

function openDrawer(open) {
  document.body.classList.toggle("drawer-open", open);
  $("scrim").hidden = !open;
  $("menu").setAttribute("aria-expanded", String(open));
}

function closeDrawerOnPhone() {
  if (document.body.classList.contains("drawer-open")) openDrawer(false);
}

let refreshTimer = 0;
function refreshLists() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => {
    loadConversations().catch((e) => notice(e.message));
    loadFiles().catch((e) => notice(e.message));
  }, 300);
}

function titleOf(c) {
  return c.title || (c.platform === "web" ? t("web_chat") : t("untitled"));
}

function startRename(li, c) {
  const input = el("input");
  input.value = c.title || "";
  input.maxLength = 120;
  input.className = "rename";
  const row = li.querySelector(".conv");
  row.replaceChildren(input);
  input.focus();
  // the list is not redrawn under the person's typing (an answer finishing refreshes it)
  state.renaming = true;
  let done = false;
  const finishRename = async (save) => {
    if (done) return;
    done = true;
    const title = input.value.trim();
    if (save && title && title !== c.title) {
      try {
        await api(`/api/conversations/${encodeURIComponent(c.id)}/rename`, { title });
      } catch (e) { notice(e.message); }
    }
    state.renaming = false;
    loadConversations().catch((e) => notice(e.message));
  };
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); finishRename(true); }
    if (e.key === "Escape") { e.preventDefault(); finishRename(false); }
  });
  input.addEventListener("blur", () => finishRename(true));
}

async function removeConversation(c) {
  if (!window.confirm(t("delete_confirm", { title: titleOf(c) }))) return;
  try {
    await api(`/api/conversations/${encodeURIComponent(c.id)}/delete`, {});
    if (state.viewing && state.viewing.id === c.id) showLive();
  } catch (e) { notice(e.message); }
  refreshLists();
}

async function loadConversations() {
  if (state.renaming) return; // drawn when the rename ends
  const q = state.query;
  const path = q ? `/api/conversations?q=${encodeURIComponent(q)}` : "/api/conversations";
  const { conversations } = await api(path);
  if (q !== state.query || state.renaming) return; // a later search is on its way, or a rename
  const ul = $("convs");
  ul.replaceChildren();
  ul.dataset.query = q; // what the list shows: a search's results, or (empty) every conversation
  if (!conversations.length && q) ul.append(el("li", "note", t("no_results")));
  for (const c of conversations) {
    const li = el("li");
    li.dataset.id = c.id;
    const row = el("div", "conv");
    const open = el("button", "link open");
    open.append(el("span", "title", titleOf(c)),
      el("span", "sub", `${c.platform} · ${when(c.updated_at)}`));
    open.addEventListener("click", () => { openConversation(c); closeDrawerOnPhone(); });
    const rename = el("button", "act rename", "✎");
    rename.type = "button";
    rename.title = t("rename");
    rename.setAttribute("aria-label", t("rename"));
    rename.addEventListener("click", () => startRename(li, c));
    const del = el("button", "act delete", "✕");
    del.type = "button";
    del.title = t("delete");
    del.setAttribute("aria-label", t("delete"));
    del.addEventListener("click", () => removeConversation(c));
    if ((state.viewing && state.viewing.id === c.id) ||
        (!state.viewing && c.writable && c.is_active)) row.classList.add("current");
    row.append(open, rename, del);
    li.append(row);
    ul.append(li);
  }
}

async function loadFiles() {
  const { files } = await api("/api/files");
  const ul = $("files");
  ul.replaceChildren();
  if (!files.length) ul.append(el("li", "note", t("no_files")));
  for (const f of files) {
    const li = el("li", "file");
    const a = el("a");
    a.href = f.url;
    if (f.kind === "image") {
      const img = el("img", "thumb");
      img.src = f.url;
      img.alt = "";
      img.loading = "lazy";
      a.append(img);
      a.target = "_blank";
      a.rel = "noopener";
    } else {
      a.append(el("span", "doc", "▤"));
      a.setAttribute("download", "");
    }
    const text = el("span");
    text.append(el("span", "name", f.filename), el("span", "sub", when(f.created_at)));
    a.append(text);
    li.append(a);
    ul.append(li);
  }
}

async function openConversation(conv) {
  if (state.chat && conv.id === state.chat.id) { showLive(); return; }
  const data = await api(`/api/conversations/${encodeURIComponent(conv.id)}`);
  const view = $("view");
  view.replaceChildren(...data.entries.map((e) => drawItem({ ...e, id: "" })));
  state.viewing = data.conversation;
  view.hidden = false;
  $("log").hidden = true;
  $("empty").hidden = true;
  $("viewing").hidden = data.conversation.writable;
  $("composer").hidden = !data.conversation.writable;
  loadConversations().catch((e) => notice(e.message));
}

function showLive() {
  state.viewing = null;
  $("view").hidden = true;
  $("viewing").hidden = true;
  $("composer").hidden = false;
  updateEmpty();
  scrollDown();
}

function sharedTarget() {
  return state.viewing ? state.viewing.id : (state.chat ? state.chat.id : undefined);
}

async function share() {
  try {
    const body = {};
    const id = sharedTarget();
    if (id) body.conversation_id = id;
    const res = await api("/api/share", body);
    $("share-link").href = res.url;
    $("share-link").textContent = res.url;
    $("share-link").dataset.conversation = res.conversation_id;
    $("shared").hidden = false;
  } catch (e) { notice(e.message); }
}

async function unshare() {
  try {
    await api("/api/unshare", { conversation_id: $("share-link").dataset.conversation });
    $("shared").hidden = true;
    notice(t("revoked"));
  } catch (e) { notice(e.message); }
}

// --- start ---------------------------------------------------------------------------------

// On a phone the account's buttons (admin, language, sign out) live at the foot of the drawer,
// so the header keeps to one row at 390 px; the same nodes move, with their handlers.
const phone = window.matchMedia("(max-width: 720px)");
function placeAccount() {
  const home = phone.matches ? $("drawer-foot") : document.querySelector("header.bar");
  if ($("account").parentElement !== home) home.appendChild($("account"));
}

async function main() {
  placeAccount();
  phone.addEventListener("change", placeAccount);
  state.me = await api("/api/me");
  state.csrf = state.me.csrf;
  state.lang = localStorage.getItem("bullpen.lang") || (state.me.lang === "zh" ? "zh" : "en");
  $("admin").hidden = !state.me.is_admin;
  applyLang();
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("text").value.trim();
    if (!text) return;
    $("text").value = "";
    send(text);
  });
  $("text").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("stop").addEventListener("click", () => api("/api/stop", {}).catch((e) => notice(e.message)));
  $("mode").addEventListener("change", () => { if ($("mode").value) send(`/mode ${$("mode").value}`); });
  $("lang").addEventListener("click", () => {
    state.lang = state.lang === "zh" ? "en" : "zh";
    localStorage.setItem("bullpen.lang", state.lang);
    applyLang();
    refreshLists();
  });
  $("logout").addEventListener("click", async () => {
    await api("/logout", {}).catch(() => null);
    location.href = "/";
  });
  $("new-chat").addEventListener("click", () => {
    closeDrawerOnPhone();
    showLive();
    api("/api/new", {}).catch((e) => notice(e.message));
  });
  let searchTimer = 0;
  $("search").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      state.query = $("search").value.trim();
      loadConversations().catch((e) => notice(e.message));
    }, 250);
  });
  $("menu").addEventListener("click", () => openDrawer(true));
  $("close-drawer").addEventListener("click", () => openDrawer(false));
  $("scrim").addEventListener("click", () => openDrawer(false));
  $("share").addEventListener("click", share);
  $("unshare").addEventListener("click", unshare);
  $("back").addEventListener("click", showLive);
  connect();
  loadConversations().catch((e) => notice(e.message));
  loadFiles().catch((e) => notice(e.message));
}

document.addEventListener("DOMContentLoaded", () => { main().catch((e) => notice(e.message)); });
