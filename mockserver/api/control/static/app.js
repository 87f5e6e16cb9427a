// The dashboard: one SSE connection (/_mock/events) feeds every view; the controls send the same
// PATCH /_mock/config and POST /_mock/reset a test would. Everything the server sends is shown with
// textContent, never parsed as HTML.
"use strict";

const MAX_ENTRIES = 1000; // journal rows the page keeps
const $ = (selector) => document.querySelector(selector);
const state = { entries: new Map(), config: null, open: null };
const chart = new TokenChart($("#chart"));

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const td = (value, cls) => el("td", cls ? { class: cls } : null, value === null || value === undefined ? "–" : value);
const tierCell = (tier) => td(tier, `tier tier-${tier}`);
const fmt = (n, digits = 1) => (n === null || n === undefined ? "–" : Number(n).toFixed(digits));

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const reply = await fetch(path, init);
  const data = await reply.json().catch(() => null);
  if (!reply.ok) {
    const message = data && data.error ? data.error.message : `HTTP ${reply.status}`;
    throw new Error(message);
  }
  return data;
}

// -- live updates ------------------------------------------------------------------------------

function connect() {
  const source = new EventSource("/_mock/events");
  source.addEventListener("open", () => { $("#status").textContent = "live"; $("#status").className = "status live"; });
  source.addEventListener("error", () => { $("#status").textContent = "reconnecting…"; $("#status").className = "status"; });
  source.addEventListener("update", (event) => apply(JSON.parse(event.data)));
}

function apply(update) {
  if (update.server) {
    $("#server").textContent = `process ${update.server.process}${update.server.shared ? ", shared state (every worker shown)" : ""}`;
  }
  if (update.config) showConfig(update.config);
  if (update.streams) showStreams(update.at, update.streams);
  if (update.journal) addEntries(update.journal);
  if (update.usage) showUsage(update.usage);
  if (update.accounts) showAccounts(update.accounts);
  if ("speed_check" in update) showSpeedCheck(update.speed_check);
}

// -- streams -----------------------------------------------------------------------------------

function showStreams(at, rows) {
  const body = $("#streams tbody");
  body.replaceChildren(
    ...rows.map((r) => {
      const share = r.tokens_planned ? Math.min(100, (100 * r.tokens_sent) / r.tokens_planned) : 0;
      const fill = el("span");
      fill.style.width = `${share.toFixed(0)}%`; // CSSOM, which the page's CSP allows (a style attribute it would not)
      const bar = el("span", { class: "bar" }, fill);
      return el(
        "tr", { dataset: { id: r.id, tier: r.tier } },
        td(r.model), tierCell(r.tier), td(r.key), td(r.test_id),
        td(fmt(r.target_rate), "num target"), td(fmt(r.achieved_rate), "num achieved"),
        el("td", { class: "num tokens" }, bar, `${r.tokens_sent} / ${r.tokens_planned}`),
        td(fmt(r.ttft_ms, 0), "num ttft"), td(lateness(r), "num late"),
      );
    }),
  );
  $("#streams-count").textContent = String(rows.length);
  chart.add(at, rows);
}

function lateness(row) {
  // How far the server is behind the stream's schedule now, and how late its first token went out
  // (the engine anchors the schedule there: a late first token moves every deadline).
  if (row.client_slow) return "client slow";
  const first = row.first_token_late_ms >= 1 ? ` (first token +${fmt(row.first_token_late_ms, 0)})` : "";
  return `${fmt(row.late_ms, 0)}${first}`;
}

// -- journal -----------------------------------------------------------------------------------

function filters() {
  return {
    path: $("#filter-path").value.trim(),
    status: $("#filter-status").value.trim(),
    tier: $("#filter-tier").value,
    testId: $("#filter-test-id").value.trim(),
  };
}

function matches(entry, f) {
  if (f.path && entry.path !== f.path) return false;
  if (f.tier && entry.tier !== f.tier) return false;
  if (f.testId && entry.test_id !== f.testId) return false;
  if (f.status) {
    const wanted = f.status.toLowerCase();
    const status = String(entry.status);
    if (/^\dxx$/.test(wanted) ? status[0] !== wanted[0] : status !== wanted) return false;
  }
  return true;
}

function addEntries(entries) {
  for (const entry of entries) state.entries.set(entry.seq, entry);
  if (state.entries.size > MAX_ENTRIES) {
    const seqs = [...state.entries.keys()].sort((a, b) => a - b);
    for (const seq of seqs.slice(0, state.entries.size - MAX_ENTRIES)) state.entries.delete(seq);
  }
  showJournal();
}

function showJournal() {
  const f = filters();
  const shown = [...state.entries.values()].filter((e) => matches(e, f)).sort((a, b) => b.seq - a.seq).slice(0, 300);
  $("#journal tbody").replaceChildren(
    ...shown.map((e) => {
      const refused = e.status >= 400 || e.code === "no_recording";
      const error = e.code || e.error_type ? [e.error_type, e.code].filter(Boolean).join(" · ") : null;
      const row = el(
        "tr", { dataset: { seq: e.seq }, class: `${refused ? "refused" : ""}${state.open === e.seq ? " open" : ""}` },
        td(e.seq, "num"), td(new Date(e.started_at * 1000).toLocaleTimeString()), td(e.status, "num status"),
        td(e.method), td(e.path, "path"), td(e.model), e.tier ? tierCell(e.tier) : td(null), td(e.test_id, "test-id"),
        td(error, "error"), td(fmt(e.duration_ms, 0), "num"),
      );
      row.addEventListener("click", () => openEntry(e.seq));
      return row;
    }),
  );
  $("#journal-count").textContent = String(shown.length);
}

async function refetchJournal() {
  // The page keeps the newest entries; the server has older ones that match the filters too.
  const f = filters();
  const query = new URLSearchParams({ limit: "200" });
  if (f.path) query.set("path", f.path);
  if (f.tier) query.set("tier", f.tier);
  if (f.testId) query.set("test_id", f.testId);
  if (/^\d{3}$/.test(f.status)) query.set("status", f.status);
  $("#filter-error").textContent = "";
  try {
    const page = await api("GET", `/_mock/requests?${query}`);
    addEntries(page.data);
  } catch (error) {
    $("#filter-error").textContent = error.message;
  }
  showJournal();
}

async function openEntry(seq) {
  state.open = seq;
  showJournal();
  try {
    const entry = await api("GET", `/_mock/ui/requests/${seq}`);
    const reply = { status: entry.status, tier: entry.tier, downgraded: entry.downgraded, usage: entry.usage, duration_ms: entry.duration_ms };
    if (entry.status >= 400 || entry.code) reply.error = { message: entry.error_message, type: entry.error_type, param: entry.param, code: entry.code };
    if (entry.fault) reply.fault = entry.fault;
    if (entry.disconnected) reply.disconnected = true;
    const request = { method: entry.method, path: entry.path, key: entry.key, test_id: entry.test_id, headers: entry.headers, body: entry.body };
    $("#detail-seq").textContent = `#${seq} ${entry.request_id}`;
    $("#detail-reply").textContent = JSON.stringify(reply, null, 2);
    $("#detail-request").textContent = JSON.stringify(request, null, 2);
  } catch (error) {
    $("#detail-seq").textContent = `#${seq}`;
    $("#detail-reply").textContent = error.message;
    $("#detail-request").textContent = "";
  }
  $("#detail").hidden = false;
}

// -- usage, accounts, configuration ------------------------------------------------------------

function showUsage(usage) {
  $("#usage tbody").replaceChildren(
    ...usage.rows.map((r) =>
      el("tr", null, tierCell(r.tier), td(r.model), td(r.requests, "num"), td(r.input_tokens, "num"),
        td(r.cached_tokens, "num"), td(r.cache_write_tokens, "num"), td(r.output_tokens, "num"), td(fmt(r.cost_usd, 6), "num"))),
    el("tr", { class: "total" }, td("all"), td(""), td(usage.totals.requests, "num"), td(usage.totals.input_tokens, "num"),
      td(usage.totals.cached_tokens, "num"), td(usage.totals.cache_write_tokens, "num"),
      td(usage.totals.output_tokens, "num"), td(fmt(usage.totals.cost_usd, 6), "num")),
  );
  const cap = usage.ultrafast_cap === null ? "no cap" : `cap ${usage.ultrafast_cap}`;
  $("#capacity-state").textContent = `Ultrafast in flight: ${usage.ultrafast_in_flight} (${cap})`;
}

function showAccounts(accounts) {
  $("#accounts tbody").replaceChildren(
    ...accounts.map((a) => {
      const windows = a.windows.map((w) => `${w.model} [${w.tiers.join(", ")}]: ${w.requests_left}/${w.rpm} req, ${w.tokens_left}/${w.tpm} tok`);
      const quota = a.quota ? `$${fmt(a.quota.spent_usd, 4)} of ${a.quota.spend_usd === null ? "∞" : "$" + a.quota.spend_usd}` : "none";
      return el("tr", null, td(a.key), td(`${a.organization} / ${a.project}`), td(a.status), td(a.tiers.join(", ")),
        td(a.models.join(", ")), el("td", { class: "windows" }, windows.join("\n")), td(quota));
    }),
  );
}

function showConfig(config) {
  state.config = config;
  const placeholders = () => {
    const profile = config.profiles[$("#rate-tier").value] || {};
    $("#rate-value").placeholder = String(profile.tokens_per_second ?? "");
    $("#ttft-value").placeholder = String(profile.ttft_ms ?? "");
  };
  placeholders();
  $("#rate-tier").onchange = placeholders;
  $("#capacity").placeholder = String(config.capacity.ultrafast_concurrency ?? "none");
  $("#time-scale").placeholder = String(config.time_scale);
}

// -- controls ------------------------------------------------------------------------------------

function number(text) {
  // Sent as typed when it is not a number, so the server's own validation answers.
  const value = Number(text);
  return text.trim() !== "" && Number.isFinite(value) ? value : text;
}

function control(formSelector, errorSelector, patchOf) {
  $(formSelector).addEventListener("submit", async (event) => {
    event.preventDefault();
    const shown = $(errorSelector);
    shown.textContent = "";
    const patch = patchOf();
    if (patch === null) return;
    try {
      await api("PATCH", "/_mock/config", patch);
      shown.textContent = "";
    } catch (error) {
      shown.textContent = error.message;
    }
  });
}

control("#profile-form", "#profile-error", () => {
  const profile = {};
  if ($("#rate-value").value.trim()) profile.tokens_per_second = number($("#rate-value").value);
  if ($("#ttft-value").value.trim()) profile.ttft_ms = number($("#ttft-value").value);
  return Object.keys(profile).length ? { profiles: { [$("#rate-tier").value]: profile } } : null;
});
control("#capacity-form", "#capacity-error", () => ({ capacity: { ultrafast_concurrency: number($("#capacity").value) } }));
control("#time-scale-form", "#time-scale-error", () => ({ time_scale: number($("#time-scale").value) }));
control("#fault-form", "#fault-error", () => {
  const rule = { fault: $("#fault-spec").value.trim(), count: number($("#fault-count").value) };
  if ($("#fault-tier").value) rule.match = { tier: $("#fault-tier").value };
  const kept = state.config ? state.config.faults.rules.filter((r) => !(r.match && r.match.key)) : [];
  return { faults: { rules: [rule, ...kept] } };
});

$("#reset").addEventListener("click", async () => {
  $("#reset-error").textContent = "";
  try {
    await api("POST", "/_mock/reset");
    state.entries.clear();
    showJournal();
  } catch (error) {
    $("#reset-error").textContent = error.message;
  }
});

// -- speed check ---------------------------------------------------------------------------------

$("#speed-check").addEventListener("click", async () => {
  $("#speed-error").textContent = "";
  try {
    showSpeedCheck(await api("POST", "/_mock/speed-check"));
  } catch (error) {
    $("#speed-error").textContent = error.message;
  }
});

function showSpeedCheck(check) {
  if (!check) return;
  $("#speed-check").disabled = check.running;
  $("#speed-results").replaceChildren(
    ...check.runs.map((r) => {
      const figure = r.rate ?? r.live_rate;
      const status = r.status === "done" ? "tokens/s (usage.output_tokens / generation time)" : r.status === "running" ? "tokens/s so far" : r.status;
      return el(
        "div", { class: "card", dataset: { tier: r.tier, status: r.status } },
        el("div", { class: `tier tier-${r.tier}` }, r.tier),
        el("div", { class: "rate" }, figure === null ? "…" : fmt(figure)),
        el("div", { class: "sub" }, status),
        el("div", { class: "sub" }, `target ${fmt(r.target)} · TTFT ${r.ttft_ms ?? "–"} ms`),
        el("div", { class: "sub" }, r.whole_call_rate === null ? `${r.received} tokens` : `${r.output_tokens} tokens · whole call ${fmt(r.whole_call_rate)}/s`),
        r.error ? el("div", { class: "error" }, r.error) : null,
      );
    }),
  );
}

// -- start -----------------------------------------------------------------------------------------

for (const id of ["#filter-path", "#filter-status", "#filter-test-id"]) $(id).addEventListener("input", showJournal);
for (const id of ["#filter-path", "#filter-status", "#filter-test-id", "#filter-tier"]) $(id).addEventListener("change", refetchJournal);
$("#filters").addEventListener("submit", (event) => { event.preventDefault(); refetchJournal(); });
$("#legend").replaceChildren(...Object.keys(TIER_COLOURS).map((tier) => el("span", { class: `tier tier-${tier}` }, `${tier} `)));
$("#chart-window").textContent = String(CHART_WINDOW_S);
connect();
