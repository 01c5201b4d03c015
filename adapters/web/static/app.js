// The Bullpen chat page. No build step, no dependencies. Text is only ever set with
// textContent; the one exception is `html` fields, which the server renders with raw HTML
// escaped (markdown-it-py, html=False).
"use strict";

const T = {
  en: {
    mode: "Mode", mode_normal: "normal", mode_fast: "fast", mode_debate: "debate",
    share: "Share", unshare: "Unshare", admin: "Admin", logout: "Sign out",
    conversations: "Conversations", files: "Files", send: "Send", stop: "Stop",
    readonly: "Read-only: a conversation from another chat.", back: "Back to the web chat",
    placeholder: "Ask about a stock, or type a /command", close: "Close", thinking: "Thinking",
    revoked: "The share link is revoked.", shared_as: "Shared: ", web_chat: "Web chat",
    no_files: "No files yet.", failed: "Could not send: ", reconnecting: "Reconnecting…",
    you: "You", done: "done", running: "running",
  },
  zh: {
    mode: "模式", mode_normal: "标准", mode_fast: "快速", mode_debate: "辩论",
    share: "分享", unshare: "取消分享", admin: "管理", logout: "退出登录",
    conversations: "对话", files: "文件", send: "发送", stop: "停止",
    readonly: "只读：来自其他聊天的对话。", back: "返回网页聊天",
    placeholder: "询问股票，或输入 /命令", close: "关闭", thinking: "思考过程",
    revoked: "分享链接已撤销。", shared_as: "已分享：", web_chat: "网页聊天",
    no_files: "暂无文件。", failed: "发送失败：", reconnecting: "正在重新连接…",
    you: "你", done: "完成", running: "进行中",
  },
};

const $ = (id) => document.getElementById(id);
const state = { me: null, lang: "en", csrf: "", chat: null, viewing: null, es: null };
const progress = new Map(); // ref -> progress element
// ref -> the answer's text as streamed so far: shown as it comes (token by token), until the
// final rendering arrives; the renderer's throttled progress edits are not needed meanwhile
const streams = new Map();

function t(key) { return (T[state.lang] || T.en)[key] || T.en[key] || key; }

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function applyLang() {
  document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
  document.querySelectorAll("[data-t]").forEach((n) => { n.textContent = t(n.dataset.t); });
  $("text").placeholder = t("placeholder");
  $("lang").textContent = state.lang === "zh" ? "English" : "中文";
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
    const a = el("a", "download", `📄 ${file.filename}`);
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
  if (old && streams.has(item.id) && item.markup === "plain") return; // a progress edit
  const node = drawItem(item);
  if (old) old.replaceWith(node); else log.append(node);
  const lines = progress.get(item.id);
  if (lines && node.nextSibling !== lines) node.after(lines);
  if (streams.has(item.id) && item.markup === "plain") drawStream(item.id);
  scrollDown();
}

function scrollDown() {
  const log = $("log");
  log.scrollTop = log.scrollHeight;
}

// --- progress lines: status, tools, thinking -----------------------------------------------

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
    let s = box.querySelector(".status");
    if (!s) { s = el("div", "status"); box.prepend(s); }
    s.textContent = `⏳ ${ev.text}`;
  } else if (ev.type === "tool_started") {
    const line = el("div", "tool", `🔧 ${ev.label || ev.name}`);
    line.dataset.call = ev.call_id;
    box.append(line);
  } else if (ev.type === "tool_finished") {
    const line = box.querySelector(`[data-call="${CSS.escape(ev.call_id)}"]`) ||
      box.appendChild(el("div", "tool"));
    line.textContent = `${ev.ok ? "✅" : "⚠️"} ${ev.name} ${ev.summary || ""} ` +
      `(${(ev.elapsed_s || 0).toFixed(1)} s)`;
  } else if (ev.type === "file") {
    box.append(el("div", "tool", `📎 ${ev.file.filename}`));
  }
  scrollDown();
}

function finish(ref) {
  const box = progress.get(ref);
  if (!box) return;
  box.classList.remove("running");
  const s = box.querySelector(".status");
  if (s) s.remove();
  if (!box.childElementCount) { box.remove(); progress.delete(ref); }
}

// --- the chat and its stream ---------------------------------------------------------------

async function drawSnapshot(snap) {
  const chat = await api("/api/chat");
  state.chat = chat.conversation;
  const log = $("log");
  log.replaceChildren();
  progress.clear();
  streams.clear();
  const since = snap.since ? Date.parse(snap.since) : Infinity;
  for (const entry of chat.entries) {
    if (Date.parse(entry.at) >= since) continue; // the snapshot has it as it stands now
    log.append(drawItem({ ...entry, id: "" }));
  }
  for (const run of snap.running) if (run.text) streams.set(run.ref, run.text);
  for (const item of snap.items) upsert(item);
  for (const run of snap.running) {
    for (const line of run.lines) progressLine({ ...line, ref: run.ref });
  }
  if (state.chat) $("mode").value = state.chat.mode || "";
  scrollDown();
  refreshLists();
  document.body.dataset.ready = "1";
}

function onEvent(ev) {
  switch (ev.type) {
    case "snapshot": drawSnapshot(ev).catch((e) => notice(e.message)); break;
    case "user_message": case "message_sent": case "message_edited": case "file_sent":
      upsert(ev.item); break;
    case "status": case "thinking": case "tool_started": case "tool_finished": case "file":
      progressLine(ev); break;
    case "text_delta":
      if (ev.ref) { streams.set(ev.ref, (streams.get(ev.ref) || "") + ev.text); drawStream(ev.ref); }
      break;
    case "done": case "failed":
      streams.delete(ev.ref); finish(ev.ref); refreshLists(); break;
    case "error": notice(ev.text); break;
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
  try {
    const id = (crypto.randomUUID ? crypto.randomUUID() : String(Date.now() + Math.random()))
      .replace(/[^A-Za-z0-9-]/g, "");
    await api("/api/messages", { text, client_id: id });
  } catch (e) {
    notice(t("failed") + e.message);
  }
}

// --- conversations, files, sharing ---------------------------------------------------------

let refreshTimer = 0;
function refreshLists() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => { loadConversations(); loadFiles(); }, 300);
}

async function loadConversations() {
  const { conversations } = await api("/api/conversations");
  const ul = $("convs");
  ul.replaceChildren();
  for (const c of conversations) {
    const li = el("li");
    const b = el("button", "link");
    const date = (c.updated_at || "").slice(0, 10);
    const title = c.title || (c.platform === "web" ? t("web_chat") : c.platform);
    b.textContent = `${title} · ${c.platform} · ${date}`;
    if (c.writable && c.is_active) b.classList.add("current");
    b.addEventListener("click", () => open(c));
    li.append(b);
    ul.append(li);
  }
}

async function loadFiles() {
  const { files } = await api("/api/files");
  const ul = $("files");
  ul.replaceChildren();
  if (!files.length) ul.append(el("li", "note", t("no_files")));
  for (const f of files) {
    const li = el("li");
    const a = el("a", "", `${f.kind === "image" ? "🖼" : "📄"} ${f.filename}`);
    a.href = f.url;
    if (f.kind === "image") { a.target = "_blank"; a.rel = "noopener"; }
    else a.setAttribute("download", "");
    li.append(a);
    ul.append(li);
  }
}

async function open(conv) {
  if (state.chat && conv.id === state.chat.id) { showLive(); return; }
  const data = await api(`/api/conversations/${encodeURIComponent(conv.id)}`);
  const view = $("view");
  view.replaceChildren(...data.entries.map((e) => drawItem({ ...e, id: "" })));
  state.viewing = data.conversation;
  view.hidden = false;
  $("log").hidden = true;
  $("viewing").hidden = data.conversation.writable;
  $("composer").hidden = !data.conversation.writable;
}

function showLive() {
  state.viewing = null;
  $("view").hidden = true;
  $("log").hidden = false;
  $("viewing").hidden = true;
  $("composer").hidden = false;
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

async function main() {
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
  });
  $("logout").addEventListener("click", async () => {
    await api("/logout", {}).catch(() => null);
    location.href = "/";
  });
  $("share").addEventListener("click", share);
  $("unshare").addEventListener("click", unshare);
  $("back").addEventListener("click", showLive);
  connect();
  loadConversations().catch((e) => notice(e.message));
  loadFiles().catch((e) => notice(e.message));
}

document.addEventListener("DOMContentLoaded", () => { main().catch((e) => notice(e.message)); });
