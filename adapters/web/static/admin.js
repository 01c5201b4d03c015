// The admin console: tables with row counts, a paged row view, and a read-only SQL box.
// Every value is set with textContent.
"use strict";

const $ = (id) => document.getElementById(id);
let csrf = "";
let paging = null; // { name, page, total, size }

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

function showTable(result, caption) {
  const table = $("result");
  table.replaceChildren();
  const head = document.createElement("tr");
  for (const c of result.columns) {
    const th = document.createElement("th");
    th.textContent = c;
    head.append(th);
  }
  table.append(head);
  for (const row of result.rows) {
    const tr = document.createElement("tr");
    for (const v of row) {
      const td = document.createElement("td");
      td.textContent = v === null ? "NULL" : v;
      if (v === null) td.className = "null";
      tr.append(td);
    }
    table.append(tr);
  }
  const cut = result.note || "truncated · 已截断";
  $("caption").textContent = caption + (result.truncated ? ` (${cut})` : "");
}

async function loadTables() {
  const { tables } = await api("/api/admin/tables");
  const ul = $("tables");
  ul.replaceChildren();
  for (const t of tables) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.className = "link";
    b.textContent = `${t.name} (${t.rows})`;
    b.addEventListener("click", () => { paging = { name: t.name, page: 1 }; loadRows(); });
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
    showTable(r, `${paging.name}: ${r.total} rows`);
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
    showTable(r, `${r.rows.length} rows`);
  } catch (err) {
    $("result").replaceChildren();
    $("caption").textContent = "";
    showError(err.message);
  }
}

async function main() {
  csrf = (await api("/api/me")).csrf;
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
