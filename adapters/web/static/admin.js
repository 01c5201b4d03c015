// The admin console: usage per day (a chart) and per person, platform and model status, recent
// failures; the tables with row counts, a paged row view, and the read-only SQL box. Every
// value is set with textContent; every table sorts by a click on its column, numbers as numbers.
"use strict";

const WORDS = window.BULLPEN_WORDS || { en: {}, zh: {} };
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
let csrf = "";
let lang = "en";
let paging = null; // { name, page, total, size }
let dashboard = null;

function t(key, values) {
  const table = WORDS[lang] || WORDS.en;
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

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
  };
  const resp = await fetch(path, { credentials: "same-origin", ...init });
  let data = {};
  try { data = await resp.json(); } catch (_) { /* not JSON */ }
  if (!resp.ok) throw new Error(data.error || `HTTP ${resp.status}`);
  return data;
}

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

// --- tables that sort by value -------------------------------------------------------------

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

function isNumber(v) { return typeof v === "number" || (typeof v === "string" && NUMBER.test(v.trim())); }

// a column is numeric when every value in it that is not NULL is a number
function numericColumns(columns, rows) {
  return columns.map((_, i) => {
    const seen = rows.map((r) => r[i]).filter((v) => v !== null && v !== "");
    return seen.length > 0 && seen.every(isNumber);
  });
}

function compare(a, b, numeric) {
  if (a === null || a === "") return b === null || b === "" ? 0 : 1; // NULLs last
  if (b === null || b === "") return -1;
  if (numeric) return Number(a) - Number(b);
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

// draws `rows` under `columns` into `table`; a click on a column sorts by it (again: reversed)
function drawGrid(table, columns, rows) {
  const numeric = numericColumns(columns, rows);
  let order = { col: -1, dir: 1 };
  const draw = () => {
    table.replaceChildren();
    const head = el("tr");
    columns.forEach((c, i) => {
      const th = el("th", numeric[i] ? "num" : "", c);
      th.scope = "col";
      if (order.col === i) th.setAttribute("aria-sort", order.dir > 0 ? "ascending" : "descending");
      th.addEventListener("click", () => {
        order = { col: i, dir: order.col === i ? -order.dir : 1 };
        draw();
      });
      head.append(th);
    });
    table.append(head);
    const sorted = order.col < 0 ? rows : [...rows].sort(
      (a, b) => order.dir * compare(a[order.col], b[order.col], numeric[order.col]));
    for (const row of sorted) {
      const tr = el("tr");
      row.forEach((v, i) => {
        const td = el("td", v === null ? "null" : (numeric[i] ? "num" : ""),
          v === null ? "NULL" : String(v));
        tr.append(td);
      });
      table.append(tr);
    }
  };
  draw();
}

function showTable(result, caption) {
  drawGrid($("result"), result.columns, result.rows);
  const cut = result.note || t("truncated");
  $("caption").textContent = caption + (result.truncated ? ` (${cut})` : "");
}

// --- the dashboard -------------------------------------------------------------------------

function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

// questions (dark) and model calls (light) per day, as bars
function drawChart(days) {
  const width = 28 * days.length + 40;
  const height = 150;
  const top = Math.max(1, ...days.map((d) => Math.max(d.questions, d.calls)));
  const chart = svg("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, width: "100%",
    role: "img", "aria-label": t("usage_by_day") });
  chart.append(svg("text", { x: 0, y: 10 }, String(top)));
  days.forEach((d, i) => {
    const x = 30 + i * 28;
    const hq = Math.round((d.questions / top) * 110);
    const hc = Math.round((d.calls / top) * 110);
    const q = svg("rect", { class: "q", x, y: 125 - hq, width: 11, height: hq });
    q.append(svg("title", {}, `${d.day}: ${t("col_messages")} ${d.questions}`));
    const c = svg("rect", { class: "c", x: x + 12, y: 125 - hc, width: 11, height: hc });
    c.append(svg("title", {}, `${d.day}: ${t("col_calls")} ${d.calls}`));
    chart.append(q, c);
    if (i % 2 === 0 || days.length < 8) chart.append(svg("text", { x, y: 140 }, d.day.slice(5)));
  });
  $("usage-chart").replaceChildren(chart);
  $("usage-chart").dataset.days = String(days.length);
}

function drawDashboard(d) {
  $("usage-title").textContent = t("usage", { days: d.days.length });
  drawChart(d.days);
  drawGrid($("people"), [t("col_person"), t("col_messages"), t("col_calls"), t("col_tokens"), t("col_cost")],
    d.people.map((p) => [p.name, p.questions, p.calls, p.tokens, Number(p.cost_usd).toFixed(4)]));
  $("platforms").replaceChildren(...d.platforms.map((p) => {
    const li = el("li");
    li.append(el("strong", "", p), " · ", el("span", "ok", t("platform_on")));
    return li;
  }));
  const model = $("model");
  model.replaceChildren();
  if (!d.model) model.append(t("model_none"));
  else {
    model.append(el("strong", "", d.model), " · ",
      d.last_call_at ? t("model_last", { at: when(d.last_call_at) }) : t("model_never"));
    if (d.model_problem) model.append(el("div", "error", d.model_problem));
  }
  const ul = $("failures");
  ul.replaceChildren();
  if (!d.failures.length) ul.append(el("li", "note", t("no_failures")));
  for (const f of d.failures) {
    const li = el("li");
    li.append(el("span", "note", `${when(f.at)} · ${f.what}: `), f.detail);
    ul.append(li);
  }
}

// --- tables and the SQL box ------------------------------------------------------------------

async function loadTables() {
  const { tables } = await api("/api/admin/tables");
  const ul = $("tables");
  ul.replaceChildren();
  for (const tb of tables) {
    const li = el("li");
    const b = el("button", "link", `${tb.name} (${tb.rows})`);
    b.addEventListener("click", () => { paging = { name: tb.name, page: 1 }; loadRows(); });
    li.append(b);
    ul.append(li);
  }
}

async function loadRows() {
  try {
    const r = await api(`/api/admin/tables/${encodeURIComponent(paging.name)}?page=${paging.page}`);
    paging.total = r.total;
    paging.size = r.page_size;
    showError("");
    const pages = Math.max(1, Math.ceil((r.total || 0) / r.page_size));
    showTable(r, `${paging.name}: ${t("rows", { n: r.total })}`);
    $("pager").hidden = false;
    $("pageno").textContent = `${paging.page} / ${pages}`;
    $("prev").disabled = paging.page <= 1;
    $("next").disabled = paging.page >= pages;
  } catch (e) { showError(e.message); }
}

async function run(e) {
  e.preventDefault();
  $("pager").hidden = true;
  try {
    const r = await api("/api/admin/query", { sql: $("sql").value });
    showError("");
    showTable(r, t("rows", { n: r.rows.length }));
  } catch (err) {
    $("result").replaceChildren();
    $("caption").textContent = "";
    showError(err.message);
  }
}

function applyLang() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.querySelectorAll("[data-t]").forEach((n) => { n.textContent = t(n.dataset.t); });
  $("lang").textContent = lang === "zh" ? "English" : "中文";
  if (dashboard) drawDashboard(dashboard);
}

async function main() {
  const me = await api("/api/me");
  csrf = me.csrf;
  lang = localStorage.getItem("bullpen.lang") || (me.lang === "zh" ? "zh" : "en");
  applyLang();
  $("lang").addEventListener("click", () => {
    lang = lang === "zh" ? "en" : "zh";
    localStorage.setItem("bullpen.lang", lang);
    applyLang();
  });
  dashboard = await api("/api/admin/dashboard");
  drawDashboard(dashboard);
  document.body.dataset.ready = "1";
  const status = await api("/api/admin/status");
  if (!status.on) { // no login as its own role: off, and no stronger role stands in
    $("off").textContent = status.reason;
    $("off").hidden = false;
    $("query").hidden = true;
    return;
  }
  $("query").addEventListener("submit", run);
  $("prev").addEventListener("click", () => { paging.page -= 1; loadRows(); });
  $("next").addEventListener("click", () => { paging.page += 1; loadRows(); });
  await loadTables();
}

document.addEventListener("DOMContentLoaded", () => { main().catch((e) => showError(e.message)); });
