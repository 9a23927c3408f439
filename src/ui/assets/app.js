// The dashboard: four pages over the REST API (docs/ui.md), routed by the URL's hash.
// No framework and no build step: the pages are plain DOM built with el().
"use strict";

const CSRF = document.querySelector('meta[name="torchx-csrf"]').content;
const STATES = ["SUBMITTED", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "UNKNOWN"];
let cleanup = [];  // what the current page must close when another one opens (streams)

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

async function api(method, path, body) {
  // The page's CSRF token goes with every call: a change needs it, and so does loading a
  // component from a file (its code runs).
  const opts = { method, headers: { "X-Torchx-CSRF": CSRF } };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((data.error && data.error.message) || res.status + " " + res.statusText);
  return data;
}

const appPath = (handle) => "/api/v1/apps/" + encodeURIComponent(handle);
const stateBadge = (s) => el("span", { class: "state " + s, "data-state": s }, s);

function age(created) {
  if (!created) return "";
  const s = Math.max(0, Date.now() / 1000 - created);
  if (s < 60) return Math.floor(s) + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  if (s < 86400) return Math.floor(s / 3600) + "h";
  return Math.floor(s / 86400) + "d";
}

function setLive(on) { document.getElementById("live").classList.toggle("on", on); }

function stream(url, handlers) {
  const es = new EventSource(url);
  es.onopen = () => setLive(true);
  es.onerror = () => setLive(false);
  for (const [name, fn] of Object.entries(handlers)) es.addEventListener(name, fn);
  cleanup.push(() => { es.close(); setLive(false); });
  return es;
}

function banner(text, kind) { return el("div", { class: "banner" + (kind ? " " + kind : ""), role: "alert" }, text); }

// ---- Apps page ---------------------------------------------------------------------------

async function appsPage(main, params) {
  const q = new URLSearchParams(params);
  const offset = Number(q.get("offset") || 0);
  const limit = 50;
  const schedulers = (await api("GET", "/api/v1/schedulers")).schedulers.filter((s) => s.listed).map((s) => s.name);

  const schedSel = el("select", { id: "f-scheduler" }, el("option", { value: "" }, "all schedulers"),
    schedulers.map((s) => el("option", { value: s, selected: q.get("scheduler") === s }, s)));
  const stateSel = el("select", { id: "f-state" }, el("option", { value: "" }, "any state"),
    STATES.map((s) => el("option", { value: s, selected: q.get("state") === s }, s)));
  const nameIn = el("input", { type: "text", id: "f-name", placeholder: "name or id", value: q.get("name") || "" });
  const go = (extra) => {
    const n = new URLSearchParams();
    if (schedSel.value) n.set("scheduler", schedSel.value);
    if (stateSel.value) n.set("state", stateSel.value);
    if (nameIn.value) n.set("name", nameIn.value);
    for (const [k, v] of Object.entries(extra || {})) n.set(k, v);
    location.hash = "#/?" + n.toString();
  };
  schedSel.onchange = () => go();
  stateSel.onchange = () => go();
  nameIn.onkeydown = (e) => { if (e.key === "Enter") go(); };

  const body = el("div", { id: "apps-body" });
  main.replaceChildren(el("h1", {}, "Apps"), el("div", { class: "filters" }, schedSel, stateSel, nameIn,
    el("button", { onclick: () => go() }, "Filter")), body);

  const listQuery = new URLSearchParams();
  for (const k of ["scheduler", "state", "name"]) if (q.get(k)) listQuery.set(k, q.get(k));
  // A composite (a pipeline, a sweep, a managed job) is one row with its children counted by
  // state; expanding it pages its children. What is expanded, and at which page, outlives the
  // redraws the event stream makes.
  const expanded = new Map();  // handle -> offset of the children shown
  const pages = new Map();     // handle -> the page of children drawn (or {error})
  const memberLimit = 50;
  const fetchPage = async (handle, from) => {
    try { return await api("GET", appPath(handle) + "/members?offset=" + from + "&limit=" + memberLimit); }
    catch (e) { return { error: e.message, offset: from }; }
  };
  // A page of children is kept only while it is still the one asked for (a later click moves on).
  const keep = (handle, page) => { if (expanded.get(handle) === page.offset) pages.set(handle, page); };
  let data = null;
  let listed = 0;  // a listing answered after a newer one's is dropped
  // On load and on each event: the list and the expanded composites' pages, afresh.
  const render = async () => {
    const mine = ++listed;
    const lq = new URLSearchParams(listQuery);
    lq.set("offset", offset);
    lq.set("limit", limit);
    let fresh;
    try { fresh = await api("GET", "/api/v1/apps?" + lq.toString()); }
    catch (e) { if (mine === listed) body.replaceChildren(banner(e.message)); return; }
    const got = await Promise.all(fresh.apps.filter((a) => expanded.has(a.app_handle))
      .map(async (a) => [a.app_handle, await fetchPage(a.app_handle, expanded.get(a.app_handle))]));
    if (mine !== listed) return;
    for (const [handle, page] of got) keep(handle, page);
    data = fresh;
    draw();
  };
  // A click on a row's toggle or pager: that composite's page alone, drawn into the list held.
  const show = async (handle, from) => {
    if (from === null) { expanded.delete(handle); pages.delete(handle); draw(); return; }
    expanded.set(handle, from);
    keep(handle, await fetchPage(handle, from));
    draw();
  };
  const draw = () => {
    // A child follows its composite, indented, linking to its own app.
    const memberRow = (m) => el("tr", { class: "member", "data-handle": m.app_handle || "", "data-step": m.name },
      el("td", {}, "\u21b3 ", m.app_handle ? el("a", { href: "#/app/" + encodeURIComponent(m.app_handle), class: "mono" },
        m.app_handle.split("/").pop()) : el("span", { class: "muted" }, "not submitted")),
      el("td", {}, m.name),
      el("td", {}, m.scheduler),
      el("td", {}, stateBadge(m.state)),
      el("td", {}, m.depends_on.length ? el("span", { class: "muted" }, "after " + m.depends_on.join(", ")) : ""),
      el("td", {}, ""),
      el("td", { title: m.submitted ? new Date(m.submitted * 1000).toLocaleString() : "" }, age(m.submitted)),
      el("td", {}, m.submitted ? took(m.submitted, m.ended) : ""),
      el("td", {}, ""),
      el("td", { class: "reason err" }, m.state === "SUCCEEDED" ? "" : m.msg || ""));
    const membersRows = (a) => {
      const page = expanded.has(a.app_handle) && pages.get(a.app_handle);
      if (!page) return [];
      if (page.error) return [el("tr", { class: "member" }, el("td", { colspan: 10 }, banner(page.error)))];
      const from = page.offset;
      const to = Math.min(page.total, from + page.members.length);
      const turn = (at) => () => show(a.app_handle, at);
      return [...page.members.map(memberRow), el("tr", { class: "member member-pager", "data-pager-of": a.app_handle },
        el("td", { colspan: 10 },
          el("button", { class: "small", disabled: from === 0, onclick: turn(Math.max(0, from - memberLimit)) }, "\u2190 Previous"),
          el("span", { class: "muted" }, " " + (page.total ? (from + 1) + "\u2013" + to + " of " + page.total : "none yet") + " "),
          el("button", { class: "small", disabled: to >= page.total, onclick: turn(from + memberLimit) }, "Next \u2192")))];
    };
    const countsText = (counts) => STATES.filter((s) => counts[s]).map((s) => counts[s] + " " + s.toLowerCase()).join(", ");
    const rolesCell = (a) => {
      if (!a.composite) {
        return a.roles.map((r) => el("div", {}, r.role + " \u00d7" + r.replicas + " ",
          el("span", { class: "muted" }, Object.entries(r.states).map(([s, n]) => n + " " + s.toLowerCase()).join(", "))));
      }
      const total = Object.values(a.member_counts).reduce((x, y) => x + y, 0);
      const open = expanded.has(a.app_handle);
      const toggle = () => show(a.app_handle, open ? null : 0);
      return [el("button", { class: "expand small", "aria-expanded": String(open), onclick: toggle },
        (open ? "\u25be " : "\u25b8 ") + total + (total === 1 ? " member" : " members")), " ",
        el("span", { class: "muted member-counts" }, countsText(a.member_counts))];
    };
    const rows = data.apps.flatMap((a) => [el("tr", { "data-handle": a.app_handle, class: a.composite ? "composite" : null },
      el("td", {}, el("a", { href: "#/app/" + encodeURIComponent(a.app_handle), class: "mono" }, a.app_id)),
      el("td", {}, a.name),
      el("td", {}, a.scheduler),
      el("td", {}, stateBadge(a.state)),
      el("td", {}, rolesCell(a)),
      el("td", {}, a.num_restarts === null ? "" : String(a.num_restarts)),
      el("td", { title: a.created ? new Date(a.created * 1000).toLocaleString() : "" }, age(a.created)),
      el("td", {}, a.created ? took(a.created, a.ended) : ""),
      el("td", {}, a.user || ""),
      el("td", { class: "reason err" }, a.reason || "")), ...membersRows(a)]);
    const end = Math.min(data.total, offset + data.apps.length);
    body.replaceChildren(
      ...data.errors.map((e) => banner(e.scheduler + ": " + e.message)),
      el("table", { id: "apps" }, el("thead", {}, el("tr", {}, ["App", "Name", "Scheduler", "State", "Roles", "Restarts", "Age", "Duration", "User", "Why it failed"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows.length ? rows : el("tr", {}, el("td", { colspan: 10, class: "muted" }, "No apps.")))),
      el("div", { class: "pager" },
        el("button", { disabled: offset === 0, onclick: () => go({ offset: Math.max(0, offset - limit) }) }, "\u2190 Newer"),
        el("span", { class: "muted", id: "apps-count" }, data.total ? (offset + 1) + "\u2013" + end + " of " + data.total : "0 apps"),
        el("button", { disabled: end >= data.total, onclick: () => go({ offset: offset + limit }) }, "Older \u2192")));
  };
  await render();
  stream("/api/v1/events?" + listQuery.toString(), { apps: render });
}

// ---- App page ----------------------------------------------------------------------------

// The server decodes error files to {message, exit_code, timestamp}.
function structuredError(err) {
  if (!err) return null;
  return el("div", { class: "err" },
    err.exit_code !== null && err.exit_code !== undefined ? el("div", {}, "exit code " + err.exit_code) : null,
    el("pre", {}, String(err.message)));
}

function roleTable(status) {
  return el("table", { id: "replicas" },
    el("thead", {}, el("tr", {}, ["Role", "Replica", "State", "Host", "Error"].map((h) => el("th", {}, h)))),
    el("tbody", {}, status.roles.flatMap((r) => r.replicas.map((rep) => el("tr", {},
      el("td", {}, r.role), el("td", {}, String(rep.id)), el("td", {}, stateBadge(rep.state)),
      el("td", { class: "mono" }, rep.hostname || ""), el("td", {}, structuredError(rep.structured_error)))))));
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

const seconds = (s) => s < 60 ? s.toFixed(1) + "s" : s < 3600 ? (s / 60).toFixed(1) + "m" : (s / 3600).toFixed(1) + "h";

// How long something has run: its duration once it ended; while it runs, a count the page's clock
// moves on every second between refreshes (a refresh comes only when something changes).
const tickingText = (from) => seconds(Math.max(0, Date.now() / 1000 - from)) + " so far";
function took(from, ended) {
  if (ended !== null && ended !== undefined) return seconds(Math.max(0, ended - from));
  return el("span", { class: "ticking", "data-from": String(from) }, tickingText(from));
}
setInterval(() => {
  for (const e of document.querySelectorAll(".ticking")) e.textContent = tickingText(Number(e.dataset.from));
}, 1000);

// Each replica's attempts over time: one row per replica, one bar per attempt, coloured by how it
// ended; and the same as a table (the retry history).
// `ended`: whether the app has ended, and `endedAt` when (null where unknown): an attempt the
// scheduler recorded no end for then stops there, and neither ticks nor stretches to now.
function attemptsView(attempts, ended, endedAt) {
  if (!attempts.length) return el("p", { class: "muted" }, "This scheduler keeps no history of attempts.");
  const now = Date.now() / 1000;
  const t0 = Math.min(...attempts.map((a) => a.started));
  const lastKnown = Math.max(t0, ...attempts.map((a) => a.ended || a.started));
  const endOf = (a) => a.ended || (ended ? endedAt || lastKnown : now);
  const t1 = Math.max(t0 + 1, ...attempts.map(endOf));
  const rows = [...new Set(attempts.map((a) => a.role + "/" + a.replica))];
  const W = 1000, L = 120, H = 22;
  const x = (t) => L + (W - L - 10) * (t - t0) / (t1 - t0);
  const plot = svg("svg", { class: "timeline", id: "timeline", viewBox: `0 0 ${W} ${rows.length * H + 20}`, role: "img" },
    ...rows.map((r, i) => svg("text", { x: 4, y: i * H + 15 }, r)),
    ...attempts.map((a) => {
      const i = rows.indexOf(a.role + "/" + a.replica);
      const end = endOf(a);
      return svg("rect", { class: "bar-" + a.state, x: x(a.started), y: i * H + 3, height: H - 6,
        width: Math.max(2, x(end) - x(a.started)), "data-attempt": a.attempt },
        svg("title", {}, `${a.role}/${a.replica} attempt ${a.attempt}: ${a.state}` +
          (a.exit_code === null ? "" : ` (exit ${a.exit_code})`) + `, ${seconds(end - a.started)}`));
    }),
    svg("text", { x: L, y: rows.length * H + 15 }, new Date(t0 * 1000).toLocaleTimeString()),
    svg("text", { x: W - 10, y: rows.length * H + 15, "text-anchor": "end" }, "+" + seconds(t1 - t0)));
  const table = el("table", { id: "attempts" },
    el("thead", {}, el("tr", {}, ["Role", "Replica", "Attempt", "State", "Exit code", "Started", "Duration"].map((h) => el("th", {}, h)))),
    el("tbody", {}, attempts.map((a) => el("tr", {}, el("td", {}, a.role), el("td", {}, String(a.replica)),
      el("td", {}, String(a.attempt)), el("td", {}, stateBadge(a.state)), el("td", {}, a.exit_code === null ? "" : String(a.exit_code)),
      el("td", {}, new Date(a.started * 1000).toLocaleTimeString()),
      el("td", { class: "duration" }, a.ended || !ended ? took(a.started, a.ended) : "\u2013")))));
  return el("div", {}, plot, table);
}

// ---- A pipeline's steps as a graph --------------------------------------------------------

// Steps in columns by depth (the longest chain of dependencies before each), an arrow from each
// dependency to its dependent; each box shows the step's state and duration and links to its app.
function stepsGraph(members) {
  const byName = new Map(members.map((m) => [m.name, m]));
  const depth = new Map();
  const depthOf = (m, seen) => {
    if (depth.has(m.name)) return depth.get(m.name);
    if (seen.has(m.name)) return 0;  // a cycle cannot be submitted; draw it flat rather than loop
    seen.add(m.name);
    const d = Math.max(-1, ...m.depends_on.filter((n) => byName.has(n)).map((n) => depthOf(byName.get(n), seen))) + 1;
    depth.set(m.name, d);
    return d;
  };
  members.forEach((m) => depthOf(m, new Set()));
  const columns = [];
  for (const m of members) (columns[depth.get(m.name)] ||= []).push(m);
  const BW = 170, BH = 46, GX = 60, GY = 14;
  const pos = new Map();
  columns.forEach((col, c) => col.forEach((m, r) => pos.set(m.name, { x: 10 + c * (BW + GX), y: 10 + r * (BH + GY) })));
  const W = 20 + columns.length * (BW + GX) - GX, H = 20 + Math.max(...columns.map((c) => c.length)) * (BH + GY) - GY;
  const now = Date.now() / 1000;
  const edges = members.flatMap((m) => m.depends_on.filter((n) => pos.has(n)).map((n) => {
    const a = pos.get(n), b = pos.get(m.name);
    return svg("path", { class: "edge", d: `M${a.x + BW},${a.y + BH / 2} C${a.x + BW + GX / 2},${a.y + BH / 2} ` +
      `${b.x - GX / 2},${b.y + BH / 2} ${b.x - 6},${b.y + BH / 2}`, "marker-end": "url(#arrow)", "data-from": n, "data-to": m.name });
  }));
  const boxes = members.map((m) => {
    const p = pos.get(m.name);
    const took = m.submitted ? seconds(Math.max(0, (m.ended || now) - m.submitted)) + (m.ended ? "" : " so far") : "";
    const box = svg("g", { class: "step", "data-step": m.name, "data-state": m.state },
      svg("rect", { class: "bar-" + m.state, x: p.x, y: p.y, width: BW, height: BH, rx: 5 }),
      svg("text", { x: p.x + 8, y: p.y + 18, class: "step-name" }, m.name),
      svg("text", { x: p.x + 8, y: p.y + 36 }, m.state + (took ? " \u00b7 " + took : "")),
      svg("title", {}, `${m.name}: ${m.state}` + (m.app_handle ? " (" + m.app_handle + ")" : "") + (m.msg ? "\n" + m.msg : "")));
    return m.app_handle ? svg("a", { href: "#/app/" + encodeURIComponent(m.app_handle) }, box) : box;
  });
  return svg("svg", { class: "steps-graph", id: "steps-graph", viewBox: `0 0 ${W} ${H}`, width: W, role: "img", "aria-label": "steps" },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" },
      svg("path", { d: "M0,0 L10,5 L0,10 z" }))),
    ...edges, ...boxes);
}

// ---- Resources: each replica's CPU, memory and GPU samples over time ---------------------

const bytes = (b) => { const u = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0; while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; } return (i ? b.toFixed(1) : String(b)) + u[i]; };
const PALETTE = ["#0969da", "#cf222e", "#1f883d", "#9a6700", "#8250df", "#bf3989", "#1b7c83", "#6e7781"];

// One small line chart: a line per series ({label, points: [[t, v]]}), the value axis from 0 to
// the peak (at least `floor`), time along the bottom.
function lineChart(id, title, series, fmt, floor) {
  const W = 480, H = 150, L = 56, B = 20, T = 18;
  const pts = series.flatMap((s) => s.points);
  if (!pts.length) return el("div", { class: "chart", id }, el("h3", {}, title), el("p", { class: "muted" }, "no figures"));
  const t0 = Math.min(...pts.map((p) => p[0])), t1 = Math.max(t0 + 1, ...pts.map((p) => p[0]));
  const top = Math.max(floor, ...pts.map((p) => p[1])) || 1;
  const x = (t) => L + (W - L - 8) * (t - t0) / (t1 - t0), y = (v) => T + (H - T - B) * (1 - v / top);
  return el("div", { class: "chart", id, "data-t0": String(t0), "data-t1": String(t1) },
    el("h3", {}, title),
    svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title },
      svg("line", { x1: L, y1: y(0), x2: W - 8, y2: y(0), class: "axis" }),
      svg("line", { x1: L, y1: y(top), x2: W - 8, y2: y(top), class: "grid" }),
      svg("text", { x: L - 4, y: y(top) + 4, "text-anchor": "end" }, fmt(top)),
      svg("text", { x: L - 4, y: y(0) + 4, "text-anchor": "end" }, fmt(0)),
      svg("text", { x: L, y: H - 4 }, new Date(t0 * 1000).toLocaleTimeString()),
      svg("text", { x: W - 8, y: H - 4, "text-anchor": "end" }, "+" + seconds(t1 - t0)),
      ...series.map((s, i) => s.points.length === 1
        ? svg("circle", { cx: x(s.points[0][0]), cy: y(s.points[0][1]), r: 3, fill: PALETTE[i % PALETTE.length] }, svg("title", {}, s.label))
        : svg("polyline", { points: s.points.map((p) => x(p[0]) + "," + y(p[1])).join(" "), stroke: PALETTE[i % PALETTE.length], "data-series": s.label },
          svg("title", {}, s.label)))));
}

function resourcesView(u) {
  const reps = u.replicas || [];
  const name = (r) => r.role + "/" + r.replica_id;
  const series = (pick) => reps.map((r) => ({ label: name(r),
    points: r.samples.filter((s) => pick(s) !== null && pick(s) !== undefined).map((s) => [s.time, pick(s)]) }));
  const sumGpu = (key) => (s) => s.gpus.length ? s.gpus.reduce((a, g) => a + (g[key] || 0), 0) : null;
  const hasGpu = reps.some((r) => r.samples.some((s) => s.gpus.length));
  const legend = el("div", { class: "legend" }, reps.map((r, i) =>
    el("span", {}, el("i", { style: null, class: "swatch s" + (i % PALETTE.length) }), name(r))));
  const charts = el("div", { class: "charts" },
    lineChart("chart-cpu", "CPU %", series((s) => s.cpu_percent), (v) => v.toFixed(0) + "%", 100),
    lineChart("chart-rss", "Memory (RSS)", series((s) => s.rss_bytes), bytes, 1),
    ...(hasGpu ? [lineChart("chart-gpu", "GPU %", series(sumGpu("utilization_percent")), (v) => v.toFixed(0) + "%", 100),
      lineChart("chart-gpu-mem", "GPU memory", series(sumGpu("memory_used_bytes")), bytes, 1)] : []));
  const newest = (r) => r.samples[r.samples.length - 1];
  const table = el("table", { id: "resources-table" },
    el("thead", {}, el("tr", {}, ["Replica", "Host", "CPU %", "RSS", "Processes", "GPUs", "GPU %", "GPU memory"].map((h) => el("th", {}, h)))),
    el("tbody", {}, reps.map((r) => { const s = newest(r); return el("tr", {},
      el("td", {}, name(r)), el("td", {}, r.host),
      el("td", {}, s && s.cpu_percent !== null ? s.cpu_percent.toFixed(1) : "\u2013"),
      el("td", {}, s && s.rss_bytes !== null ? bytes(s.rss_bytes) : "\u2013"),
      el("td", {}, s && s.processes !== null ? String(s.processes) : "\u2013"),
      el("td", {}, s && s.gpus.length ? s.gpus.map((g) => g.index).join(",") : "\u2013"),
      el("td", {}, s && s.gpus.length ? s.gpus.map((g) => g.utilization_percent === null ? "\u2013" : g.utilization_percent.toFixed(0)).join(",") : "\u2013"),
      el("td", {}, s && s.gpus.length ? s.gpus.map((g) => g.memory_used_bytes === null ? "\u2013" : bytes(g.memory_used_bytes)).join(",") : "\u2013")); })));
  const hostGpus = (u.hosts || []).filter((h) => h.samples.length && h.samples[h.samples.length - 1].gpus.length).map((h) =>
    el("p", { class: "muted" }, "GPUs on " + h.host + ": " + h.samples[h.samples.length - 1].gpus.map((g) =>
      `${g.index} ${g.name} ${g.utilization_percent === null ? "\u2013" : g.utilization_percent.toFixed(0) + "%"} ` +
      (g.memory_used_bytes === null ? "" : bytes(g.memory_used_bytes) + (g.memory_total_bytes ? "/" + bytes(g.memory_total_bytes) : ""))).join("; ")));
  const notes = [u.note, u.gpu_note && "GPUs: " + u.gpu_note].filter(Boolean).map((n) => el("p", { class: "muted note" }, n));
  const every = u.interval_seconds ? el("p", { class: "muted" }, `Sampled every ${u.interval_seconds}s.`) : null;
  return el("div", {}, every, legend, charts, table, ...hostGpus, ...notes);
}

// The card refreshes itself while the app runs (the scheduler samples on its own clock). Its plots
// cover the whole run or its last stretch: up to the app's end once it ended, else up to now.
const RANGES = [["", "whole run"], ["3600", "last hour"], ["900", "last 15 min"], ["300", "last 5 min"], ["60", "last minute"]];
function resourcesCard(handle, detail) {
  const range = el("select", { id: "resources-range", "aria-label": "time range" },
    RANGES.map(([v, text]) => el("option", { value: v }, text)));
  const head = () => el("div", { class: "card-head" }, el("h2", {}, "Resources"), range);
  const card = el("div", { class: "card", id: "resources" }, head(), el("p", { class: "muted" }, "Loading\u2026"));
  let timer = null, stopped = false, loads = 0;
  const load = async () => {
    clearTimeout(timer);
    const mine = ++loads;  // a range picked mid-load supersedes it
    if (stopped) return;
    const doc = await api("GET", appPath(handle)).catch(() => null);
    const st = doc ? doc.status.state : "UNKNOWN";
    const ended = /SUCCEEDED|FAILED|CANCELLED|UNKNOWN/.test(st);
    let q = "";
    if (range.value) {
      const upTo = ended && doc && doc.ended ? doc.ended : Date.now() / 1000;
      q = "?since=" + (upTo - Number(range.value)).toFixed(3);
    }
    let u;
    try { u = await api("GET", appPath(handle) + "/resources" + q); }
    catch (e) { if (mine === loads) card.replaceChildren(head(), el("p", { class: "muted" }, e.message)); return; }
    if (stopped || mine !== loads) return;
    const view = resourcesView(u);
    view.dataset.since = q ? q.slice(7) : "";
    card.replaceChildren(head(), view);
    if (!ended) timer = setTimeout(load, Math.max(2, u.interval_seconds || 5) * 1000);
  };
  range.onchange = load;
  cleanup.push(() => { stopped = true; clearTimeout(timer); });
  load();
  return card;
}

// Why a failed app failed: each failed replica's last stderr lines.
function failureLogs(tails) {
  return tails.map((t) => el("div", { class: "failure-log" },
    el("h3", {}, `${t.role}/${t.replica} failed: the last ${t.lines.length} line${t.lines.length === 1 ? "" : "s"} of its ${t.stream === "stderr" ? "stderr" : "log"}`),
    el("pre", { class: "log" }, t.lines.join("\n"))));
}

// A command as a shell would take it back: words quoted only where they need it.
function shellLine(words) {
  return words.filter((w) => w !== undefined && w !== null).map((w) =>
    /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : "'" + String(w).replace(/'/g, "'\\''") + "'").join(" ");
}

function resourceText(r) {
  if (!r) return "";
  const parts = [`${r.cpu} CPU`, `${r.gpu} GPU`, `${r.memMB} MB memory`];
  const caps = Object.entries(r.capabilities || {});
  if (caps.length) parts.push("capabilities: " + caps.map(([k, v]) => k + "=" + v).join(", "));
  const devices = Object.entries(r.devices || {});
  if (devices.length) parts.push("devices: " + devices.map(([k, v]) => k + "\u00d7" + v).join(", "));
  return parts.join(", ");
}

function mountText(m) {
  const ro = m.read_only ? " (read-only)" : "";
  if (m.type === "bind") return `bind ${m.src_path} \u2192 ${m.dst_path}${ro}`;
  if (m.type === "volume") return `volume ${m.src} \u2192 ${m.dst_path}${ro}`;
  if (m.type === "device") return `device ${m.src_path} \u2192 ${m.dst_path} (${m.permissions})`;
  return JSON.stringify(m);
}

function appDefView(app) {
  if (!app) return el("p", { class: "muted" }, "The scheduler does not keep the app's definition.");
  return app.roles.map((r) => el("div", { class: "card" },
    el("h2", {}, "Role " + r.name + " \u00d7" + (r.num_replicas || 1)),
    el("dl", { class: "kv" },
      el("dt", {}, "image"), el("dd", { class: "mono" }, r.image || ""),
      el("dt", {}, "entrypoint"), el("dd", { class: "mono" }, r.entrypoint),
      el("dt", {}, "command"), el("dd", { class: "mono", id: "role-command-" + r.name }, shellLine([r.entrypoint, ...(r.args || [])])),
      el("dt", {}, "env"), el("dd", { class: "mono" }, Object.entries(r.env || {}).map(([k, v]) => el("div", {}, k + "=" + v))),
      el("dt", {}, "resource"), el("dd", {}, resourceText(r.resource)),
      el("dt", {}, "max_retries"), el("dd", {}, String(r.max_retries || 0) + (r.retry_policy ? " (" + r.retry_policy + ")" : "")),
      el("dt", {}, "mounts"), el("dd", { class: "mono" }, (r.mounts || []).map((m) => el("div", {}, mountText(m)))))));
}

function logPanel(handle, detail) {
  const roles = detail.status.roles;
  // Every replica interleaved (each line prefixed, as `torchx log` prints an app) by default where
  // there are several; one replica when chosen.
  const many = roles.reduce((n, r) => n + r.replicas.length, 0) > 1;
  // A composite's own log, its driver's, is one more choice (no role is named so: role names are
  // word characters).
  const DRIVER = "(driver)";
  const roleSel = el("select", { id: "log-role" }, roles.length > 1 ? el("option", { value: "" }, "all roles") : null,
    roles.map((r) => el("option", { value: r.role }, r.role)),
    detail.composite ? el("option", { value: DRIVER }, "driver log") : null);
  const repSel = el("select", { id: "log-replica" });
  // A retried replica's earlier runs (the retry history): "latest" or one attempt.
  const attemptSel = el("select", { id: "log-attempt" });
  const fillAttempts = () => {
    const runs = repSel.value === "all" ? [] :
      (detail.attempts || []).filter((a) => a.role === roleSel.value && String(a.replica) === String(repSel.value));
    attemptSel.replaceChildren(el("option", { value: "" }, "latest attempt"),
      ...runs.slice(0, -1).map((a) => el("option", { value: a.attempt }, `attempt ${a.attempt} (${a.state}${a.exit_code === null ? "" : ", exit " + a.exit_code})`)));
    attemptSel.hidden = runs.length < 2;
  };
  const fillReplicas = () => {
    repSel.hidden = roleSel.value === DRIVER;
    const r = roles.find((x) => x.role === roleSel.value);
    repSel.replaceChildren(...(many ? [el("option", { value: "all" }, "all replicas")] : []),
      ...(r ? r.replicas : []).map((rep) => el("option", { value: rep.id }, "replica " + rep.id)));
    fillAttempts();
  };
  fillReplicas();
  const streamSel = el("select", { id: "log-stream" }, ["combined", "stdout", "stderr"].map((s) => el("option", { value: s }, s)));
  const regexIn = el("input", { type: "text", id: "log-regex", placeholder: "regex filter" });
  const followBox = el("input", { type: "checkbox", id: "log-follow", checked: !detail.status.state.match(/SUCCEEDED|FAILED|CANCELLED/) });
  const out = el("pre", { class: "log", id: "log" });
  const download = el("a", { id: "log-download", class: "button" }, "Download");
  let controller = null;
  const load = async () => {
    if (controller) controller.abort();
    controller = new AbortController();
    const driver = roleSel.value === DRIVER;
    streamSel.hidden = driver;
    const q = driver ? new URLSearchParams({ driver: "true" })
      : new URLSearchParams({ role: roleSel.value, replica: repSel.value || 0, stream: streamSel.value });
    if (regexIn.value) q.set("regex", regexIn.value);
    if (!driver && attemptSel.value !== "") q.set("attempt", attemptSel.value);
    // The same lines, whole and not followed, as a file.
    download.href = appPath(handle) + "/logs?" + q.toString();
    download.setAttribute("download", (driver ? [handle.split("/").pop(), "driver"]
      : [handle.split("/").pop(), roleSel.value, repSel.value === "all" ? "" : repSel.value,
        attemptSel.value === "" ? "" : "attempt" + attemptSel.value]).filter((p) => p !== "").join("-") + ".log");
    if (attemptSel.value === "" && followBox.checked) q.set("follow", "true");
    out.textContent = "";
    try {
      const res = await fetch(appPath(handle) + "/logs?" + q.toString(), { signal: controller.signal });
      if (!res.ok) { const d = await res.json().catch(() => ({})); out.textContent = (d.error && d.error.message) || res.statusText; return; }
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const stick = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
        out.append(dec.decode(value, { stream: true }));
        if (stick) out.scrollTop = out.scrollHeight;
      }
    } catch (e) { if (e.name !== "AbortError") out.append("\n[" + e.message + "]"); }
  };
  roleSel.onchange = () => { fillReplicas(); load(); };
  repSel.onchange = () => { attemptSel.value = ""; fillAttempts(); load(); };
  for (const c of [streamSel, followBox, attemptSel]) c.onchange = load;
  regexIn.onkeydown = (e) => { if (e.key === "Enter") load(); };
  cleanup.push(() => controller && controller.abort());
  load();
  // A retry after the page opened adds an attempt to choose from.
  detail.onAttempts = (attempts) => {
    const before = (detail.attempts || []).length;
    detail.attempts = attempts;
    if (attempts.length !== before) { const keep = attemptSel.value; fillAttempts(); attemptSel.value = keep; }
  };
  return el("div", { class: "card" }, el("h2", {}, "Logs"),
    el("div", { class: "filters" }, roleSel, repSel, attemptSel, streamSel, regexIn, el("label", {}, followBox, " follow"), download), out);
}

async function appPage(main, handle) {
  let detail;
  try { detail = await api("GET", appPath(handle)); } catch (e) { main.replaceChildren(banner(e.message)); return; }
  const head = el("div", { class: "titlebar" });
  const summary = el("div", { class: "card", id: "app-status" });
  const history = el("div", { class: "card", id: "history" });
  const steps = el("div", { class: "card", id: "steps",
    hidden: !(detail.members && detail.members.length) || !!detail.sweep || !!detail.managed });
  const recoveries = el("div", { class: "card", id: "managed", hidden: !detail.managed });
  const trials = el("div", { class: "card", id: "sweep", hidden: !detail.sweep });
  const notice = el("div", { id: "notice" });
  const cancelBtn = el("button", { class: "danger", id: "cancel", onclick: async () => {
    if (!confirm("Cancel " + handle + "?")) return;
    try {
      await api("POST", appPath(handle) + "/cancel");
      notice.dataset.kind = "cancel";  // cleared once the app has ended
      notice.replaceChildren(banner("Cancel requested.", "info"));
    }
    catch (e) { notice.replaceChildren(banner(e.message)); }
  } }, "Cancel");
  const deleteBtn = el("button", { class: "danger", id: "delete", onclick: async () => {
    if (!confirm("Delete " + handle + " and its logs?")) return;
    try { await api("DELETE", appPath(handle)); location.hash = "#/"; } catch (e) { notice.replaceChildren(banner(e.message)); }
  } }, "Delete");
  // Delete only where the app's scheduler can, Stacks where it dumps them (its capabilities, from
  // the schedulers' listing).
  let canDelete = true, canStacks = false;
  try {
    const sched = (await api("GET", "/api/v1/schedulers")).schedulers.find((x) => handle.startsWith(x.name + "://"));
    if (sched && sched.capabilities) {
      canDelete = sched.capabilities.includes("delete");
      canStacks = sched.capabilities.includes("stacks");
    }
  } catch (e) { /* the listing is a nicety: keep the button */ }
  const stacks = el("div", { class: "card", id: "stacks", hidden: true });
  let dumping = false, ended = false;  // one dump at a time; none once the app has ended
  const stacksBtn = el("button", { id: "stacks-button", onclick: async () => {
    if (dumping) return;
    dumping = true;
    stacksBtn.disabled = true;
    stacks.hidden = false;
    stacks.replaceChildren(el("h2", {}, "Stacks"), el("p", { class: "muted" }, "Reading each process's stack\u2026"));
    try { stacks.replaceChildren(el("h2", {}, "Stacks"), ...stacksView(await api("POST", appPath(handle) + "/stacks"))); }
    catch (e) { stacks.replaceChildren(el("h2", {}, "Stacks"), banner(e.message)); }
    finally { dumping = false; stacksBtn.disabled = ended; }
  } }, "Stacks");
  // A CPU profile of one replica (py-spy's speedscope JSON), recorded on the server and handed
  // to the browser as a file to download.
  const profile = el("div", { class: "card", id: "profile", hidden: true });
  let profiling = false, replicas = [];
  const profileBtn = el("button", { id: "profile-button", onclick: () => {
    profile.hidden = false;
    if (!profiling) profile.replaceChildren(el("h2", {}, "Profile"), ...profileForm());
  } }, "Profile");
  const profileForm = () => {
    const sel = el("select", { id: "profile-replica" }, replicas.map((r) => el("option", { value: r }, r)));
    const secs = el("input", { id: "profile-duration", type: "number", min: "1", max: "60", value: "5" });
    const out = el("div", { id: "profile-result" });
    const go = el("button", { class: "primary", id: "profile-start", onclick: async () => {
      if (profiling || !sel.value) return;
      profiling = true;
      go.disabled = true;
      const cut = sel.value.lastIndexOf("/");
      const role = sel.value.slice(0, cut), replica = sel.value.slice(cut + 1);
      out.replaceChildren(el("p", { class: "muted" }, "Sampling " + sel.value + " for " + secs.value + " s\u2026"));
      try {
        const data = await api("POST", appPath(handle) + "/profile?" +
          new URLSearchParams({ role, replica, duration: secs.value }).toString());
        const text = JSON.stringify(data);
        const name = (detail.app_id || "app") + "." + role + "." + replica + ".speedscope.json";
        const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
        // Revoked when this page closes; a page already closed revokes it at once.
        if (!profile.isConnected) { URL.revokeObjectURL(url); return; }
        cleanup.push(() => URL.revokeObjectURL(url));
        out.replaceChildren(el("a", { id: "profile-download", href: url, download: name, "data-bytes": text.length },
          "Download " + name), " \u2014 open it at ",
          el("a", { href: "https://www.speedscope.app", rel: "noreferrer", target: "_blank" }, "speedscope.app"));
      } catch (e) { out.replaceChildren(banner(e.message)); }
      finally { profiling = false; go.disabled = ended; }
    } }, "Record");
    return [el("div", { class: "filters" }, el("label", { for: "profile-replica" }, "Replica"), sel,
      el("label", { for: "profile-duration" }, "Seconds"), secs, go), out];
  };
  const render = (d) => {
    const s = d.status;
    const terminal = /SUCCEEDED|FAILED|CANCELLED/.test(s.state);
    cancelBtn.disabled = terminal;
    ended = terminal;
    replicas = (s.roles || []).flatMap((r) => r.replicas.map((rep) => r.role + "/" + rep.id));
    stacksBtn.disabled = terminal || dumping;
    profileBtn.disabled = terminal;
    if (terminal && notice.dataset.kind === "cancel") { notice.replaceChildren(); delete notice.dataset.kind; }
    deleteBtn.disabled = !terminal;
    head.replaceChildren(el("h1", {}, (d.appdef && d.appdef.name) || d.app_id), stateBadge(s.state),
      el("span", { class: "actions" }, ...(canStacks ? [stacksBtn, profileBtn] : []), cancelBtn, ...(canDelete ? [deleteBtn] : [])));
    summary.replaceChildren(el("dl", { class: "kv" },
      el("dt", {}, "handle"), el("dd", { class: "mono" }, d.app_handle),
      el("dt", {}, "scheduler"), el("dd", {}, d.scheduler),
      el("dt", {}, "restarts"), el("dd", { id: "restarts" }, String(s.num_restarts)),
      d.created ? [el("dt", {}, "submitted"), el("dd", { id: "submitted" }, new Date(d.created * 1000).toLocaleString())] : null,
      d.started ? [el("dt", {}, "started"), el("dd", { id: "started" }, new Date(d.started * 1000).toLocaleString())] : null,
      d.ended ? [el("dt", {}, "ended"), el("dd", { id: "ended" }, new Date(d.ended * 1000).toLocaleString())] : null,
      d.created ? [el("dt", {}, "duration"), el("dd", { id: "duration" }, terminal ? (d.ended ? took(d.created, d.ended) : "-") : took(d.created, null))] : null,
      d.user ? [el("dt", {}, "user"), el("dd", { id: "user" }, d.user)] : null,
      s.msg ? [el("dt", {}, "message"), el("dd", {}, s.msg)] : null,
      s.ui_url ? [el("dt", {}, "ui"), el("dd", { class: "mono" },
        /^https?:\/\//.test(s.ui_url) ? el("a", { href: s.ui_url, rel: "noreferrer" }, s.ui_url) : s.ui_url)] : null),
      ...(s.structured_error ? [structuredError(s.structured_error)] : []), ...(d.sweep ? [] : [roleTable(s)]),
      ...failureLogs(d.failure_logs || []));
    if (d.sweep) trials.replaceChildren(...sweepView(d.sweep, handle));
    else if (d.managed) recoveries.replaceChildren(...managedView(d.managed));
    else if (d.members && d.members.length) steps.replaceChildren(el("h2", {}, "Steps"), stepsGraph(d.members));
    history.replaceChildren(el("h2", {}, "Attempts"), attemptsView(d.attempts || [], terminal, d.ended || null));
    if (detail.onAttempts) detail.onAttempts(d.attempts || []);
  };
  render(detail);
  main.replaceChildren(head, notice, stacks, profile, summary, trials, recoveries, steps, resourcesCard(handle, detail), history, logPanel(handle, detail),
    el("h2", {}, "Definition"), ...(detail.sweep
      // A sweep's "roles" are its trials, each its own app: no fake role cards (entrypoint "trial", -1 CPU).
      ? [el("p", { class: "muted", id: "definition-trials" }, "Each trial is an app of its own: its definition is on its page (the trials table links to it).")]
      : [appDefView(detail.appdef)].flat()));
  const es = stream(appPath(handle) + "/events", {
    app: (e) => render(JSON.parse(e.data)),
    error: (e) => { if (e.data) notice.replaceChildren(banner(JSON.parse(e.data).error.message)); },
    gone: () => notice.replaceChildren(banner("The app is gone from its scheduler.")),
    // The app ended: nothing more will change, so no reconnecting.
    end: () => { es.close(); setLive(false); },
  });
}

// `torchx debug stack --json`'s document: each group of processes standing in the same place as a
// collapsible block headed by its count and innermost frame (the largest first), then the
// processes that have no stack and why.
function stacksView(d) {
  const frame = (f) => f.function + " (" + f.file + ":" + f.line + ")";
  const who = (p) => p.role + "/" + p.replica_id + " pid " + p.pid + (p.rank === null ? "" : " rank " + p.rank);
  const groups = d.groups.map((g, i) => el("details", { class: "stack-group", open: i === 0 || null, "data-count": g.count },
    el("summary", {}, g.count + (g.count === 1 ? " process in " : " processes in ") + (g.innermost ? frame(g.innermost) : "no Python frame")),
    el("div", { class: "muted" }, g.members.map((m) => who(d.processes[m])).join(", ")),
    el("pre", { class: "log stack" }, g.frames.map(frame).join("\n"))));
  const missing = d.processes.filter((p) => p.error).map((p) =>
    el("p", { class: "muted stack-missing" }, who(p) + " (" + p.command + "): " + p.error));
  if (!groups.length && !missing.length) return [el("p", { class: "muted" }, "No process is running.")];
  return [...groups, ...missing];
}

// ---- A managed job's attempts: a timeline (one bar per attempt, submitted to ended) and why ----

function managedView(m) {
  const W = 640, ROW = 26, L = 90, R = 10, T = 6;
  const now = Date.now() / 1000;
  const times = m.attempts.flatMap((a) => [a.submitted, a.ended]).filter((t) => t !== null && t !== undefined);
  // An ended job's axis ends where it did, not at the time the page was loaded.
  const over = /^(SUCCEEDED|FAILED|CANCELLED)$/.test(m.state);
  const t0 = times.length ? Math.min(...times) : now, t1 = Math.max(over && times.length ? t0 : now, ...times, t0 + 1);
  const x = (t) => L + (W - L - R) * (t - t0) / (t1 - t0);
  const H = T + ROW * Math.max(1, m.attempts.length) + 18;
  const bars = m.attempts.map((a, i) => {
    const y = T + i * ROW, start = a.submitted ?? a.ended ?? t1, end = a.ended ?? t1;
    return svg("g", { class: "attempt", "data-attempt": a.attempt },
      svg("text", { x: 4, y: y + 16 }, `attempt ${a.attempt}`),
      svg("rect", { x: x(start), y: y + 4, width: Math.max(3, x(end) - x(start)), height: ROW - 10,
                    class: "bar " + a.state },
        svg("title", {}, `${a.target}: ${a.why}${a.cause ? " — ended: " + a.cause : ""}`)),
      ...(a.started ? [svg("line", { x1: x(a.started), x2: x(a.started), y1: y + 2, y2: y + ROW - 4, class: "started" })] : []));
  });
  const dur = (s) => s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
  const rows = m.attempts.map((a) => el("tr", { "data-attempt": a.attempt },
    el("td", {}, String(a.attempt)), el("td", {}, stateBadge(a.state)), el("td", {}, a.target),
    el("td", {}, a.why), el("td", { class: "cause" }, a.cause ? `${a.cause}${a.reason ? ": " + a.reason : ""}` : ""),
    el("td", { class: "mono" }, a.handle ? el("a", { href: "#/app/" + encodeURIComponent(a.handle) }, a.handle) : "-")));
  return [el("h2", {}, "Recoveries"),
    el("p", { class: "muted" }, `up to ${m.max_recoveries} per target on ${m.recover_on.join(", ")}` +
      (m.start_timeout ? `; next target after ${dur(m.start_timeout)} waiting` : "") + `; checkpoints in ${m.checkpoint_dir}`),
    svg("svg", { class: "timeline", id: "managed-timeline", viewBox: `0 0 ${W} ${H}`, role: "img",
                 "aria-label": "attempts over time", "data-t0": t0, "data-t1": t1 },
      ...bars, svg("text", { x: L, y: H - 4 }, "0"), svg("text", { x: W - R, y: H - 4, "text-anchor": "end" }, dur(t1 - t0))),
    el("table", { id: "managed-attempts" },
      el("thead", {}, el("tr", {}, ...["#", "state", "target", "why", "ended by", "handle"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows))];
}

// ---- A sweep's trials: a sortable table, the objective against each parameter and over time ----

const fmtNum = (v) => v === null || v === undefined ? "-" : Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3)
  ? v.toExponential(3) : String(+v.toPrecision(6));

// Points (x, y) as a scatter, each a link to its trial; `line`: a step line through them (the best so far).
function scatter(id, title, points, xlabel, line) {
  const W = 420, H = 170, L = 56, B = 28, T = 10, R = 10;
  if (!points.length) return el("div", { class: "chart", id }, el("h3", {}, title), el("p", { class: "muted" }, "no reports yet"));
  const xs = points.map((p) => p.x), ys = points.map((p) => p.y);
  const x0 = Math.min(...xs), x1 = Math.max(...xs) > x0 ? Math.max(...xs) : x0 + 1;
  const y0 = Math.min(...ys), y1 = Math.max(...ys) > y0 ? Math.max(...ys) : y0 + 1;
  const x = (v) => L + (W - L - R) * (v - x0) / (x1 - x0), y = (v) => T + (H - T - B) * (1 - (v - y0) / (y1 - y0));
  return el("div", { class: "chart", id },
    el("h3", {}, title),
    svg("svg", { class: "sweep-plot", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title },
      svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }),
      svg("text", { x: L - 4, y: y(y1) + 4, "text-anchor": "end" }, fmtNum(y1)),
      svg("text", { x: L - 4, y: y(y0) + 4, "text-anchor": "end" }, fmtNum(y0)),
      svg("text", { x: L, y: H - 8 }, fmtNum(x0)),
      svg("text", { x: W - R, y: H - 8, "text-anchor": "end" }, fmtNum(x1)),
      svg("text", { x: (L + W) / 2, y: H - 8, "text-anchor": "middle" }, xlabel),
      ...(line ? [svg("polyline", { class: "best-line", points: line.map((p) => x(p.x) + "," + y(p.y)).join(" ") })] : []),
      ...points.map((p) => svg("circle", { cx: x(p.x), cy: y(p.y), r: 4, class: "pt " + p.state, "data-trial": p.index },
        svg("title", {}, `trial ${p.index}: ${fmtNum(p.y)}`)))));
}

const sweepSort = new Map();  // handle -> {key, asc}

function sweepView(sw, handle) {
  const params = Object.keys((sw.trials.find((t) => Object.keys(t.values).length) || { values: {} }).values);
  const objective = sw.objective ? sw.objective.metric : null;
  const metrics = [];
  for (const t of sw.trials) for (const k of Object.keys(t.metrics)) if (k !== objective && !metrics.includes(k)) metrics.push(k);
  const cols = [
    { key: "trial", label: "Trial", val: (t) => t.index },
    ...params.map((p) => ({ key: "p:" + p, label: p, val: (t) => t.values[p] })),
    { key: "state", label: "State", val: (t) => t.state },
    { key: "duration", label: "Duration", val: (t) => t.submitted && t.ended ? t.ended - t.submitted : null },
    ...(objective ? [{ key: "objective", label: objective + " *", val: (t) => t.objective }] : []),
    ...metrics.map((m) => ({ key: "m:" + m, label: m, val: (t) => t.metrics[m] })),
  ];
  // The sort a click chose outlives the page's refreshes (each event rebuilds the card).
  const saved = sweepSort.get(handle);
  let sortKey = saved ? saved.key : objective ? "objective" : "trial";
  let asc = saved ? saved.asc : !sw.objective || sw.objective.direction === "minimize";
  const body = el("tbody");
  const fill = () => {
    const col = cols.find((c) => c.key === sortKey);
    const rows = [...sw.trials].sort((a, b) => {
      const va = col.val(a), vb = col.val(b);
      if (va === null || va === undefined) return 1;
      if (vb === null || vb === undefined) return -1;
      return (va < vb ? -1 : va > vb ? 1 : 0) * (asc ? 1 : -1);
    });
    body.replaceChildren(...rows.map((t) => el("tr", { class: "trial" + (t.index === sw.best ? " best" : ""), "data-index": t.index },
      el("td", {}, t.handle ? el("a", { href: "#/app/" + encodeURIComponent(t.handle) }, String(t.index)) : String(t.index),
        t.index === sw.best ? el("span", { class: "muted" }, " best") : null),
      ...params.map((p) => el("td", { class: "mono" }, String(t.values[p] ?? "-"))),
      el("td", {}, stateBadge(t.state)),
      el("td", {}, t.submitted && t.ended ? seconds(t.ended - t.submitted) : ""),
      ...(objective ? [el("td", { class: "mono objective" }, fmtNum(t.objective))] : []),
      ...metrics.map((m) => el("td", { class: "mono" }, fmtNum(t.metrics[m]))))));
  };
  const head = el("tr", {}, cols.map((c) => el("th", { class: "sortable", "data-key": c.key, onclick: () => {
    if (sortKey === c.key) asc = !asc; else { sortKey = c.key; asc = true; }
    sweepSort.set(handle, { key: sortKey, asc });
    fill();
  } }, c.label)));
  fill();
  const reported = sw.trials.filter((t) => t.objective !== null && t.objective !== undefined);
  const plots = [];
  if (objective) {
    for (const p of params) {
      if (!reported.length || !reported.every((t) => typeof t.values[p] === "number")) continue;
      plots.push(scatter("sweep-plot-" + p, `${objective} by ${p}`,
        reported.map((t) => ({ x: t.values[p], y: t.objective, index: t.index, state: t.state })), p));
    }
    const done = reported.filter((t) => t.ended).sort((a, b) => a.ended - b.ended);
    const better = (a, b) => sw.objective.direction === "minimize" ? a < b : a > b;
    let best = null;
    const line = done.flatMap((t) => {  // a step: flat until a trial does better
      const x = t.ended - done[0].ended, before = best;
      if (best === null || better(t.objective, best)) best = t.objective;
      return before === null ? [{ x, y: best }] : [{ x, y: before }, { x, y: best }];
    });
    plots.push(scatter("sweep-plot-time", `${objective} over time (best so far)`,
      done.map((t) => ({ x: t.ended - done[0].ended, y: t.objective, index: t.index, state: t.state })), "seconds", line));
  }
  return [el("h2", {}, `Trials (${sw.trials.length})`),
    sw.objective ? el("p", { class: "muted" }, `${sw.objective.direction} ${objective} (${sw.objective.reduce} report); click a column to sort`) : null,
    sw.objective_unreported ? el("div", { class: "banner", id: "sweep-objective-unreported" }, sw.objective_unreported) : null,
    el("div", { class: "charts", id: "sweep-plots" }, plots),
    el("table", { id: "sweep-trials" }, el("thead", {}, head), body)];
}

// ---- Run page ----------------------------------------------------------------------------

function paramInput(p) {
  const id = "p-" + p.name;
  if (p.type === "bool") return el("input", { type: "checkbox", id, name: p.name, checked: p.default === true });
  const def = p.default === null || p.default === undefined ? "" :
    (typeof p.default === "object" ? (Array.isArray(p.default) ? p.default.join(",") : Object.entries(p.default).map(([k, v]) => k + "=" + v).join(",")) : String(p.default));
  return el("input", { type: p.type === "int" || p.type === "float" ? "number" : "text", step: p.type === "float" ? "any" : null,
    id, name: p.name, value: def, placeholder: p.type === "list" ? "a,b,c" : p.type === "dict" ? "k=v,k2=v2" : "" });
}

// A scheduler option's control by its type: a bool is a choice (unset keeps the scheduler's
// default), numbers are number fields, lists say how to separate them.
function cfgInput(o) {
  const id = "c-" + o.name;
  const def = o.default === null || o.default === undefined ? "" : String(o.default);
  if (o.type === "bool") {
    return el("select", { id, "data-opt": o.name },
      el("option", { value: "" }, "default" + (def ? " (" + def + ")" : "")),
      el("option", { value: "True" }, "True"), el("option", { value: "False" }, "False"));
  }
  const numeric = o.type === "int" || o.type === "float";
  return el("input", { type: numeric ? "number" : "text", step: o.type === "float" ? "any" : null, id, "data-opt": o.name,
    placeholder: o.type.includes("List") ? (def || "a;b;c") : o.type.includes("Dict") ? (def || "k:v;k2:v2") : def });
}

async function runPage(main, params) {
  const q = new URLSearchParams(params);
  const [comps, scheds] = await Promise.all([api("GET", "/api/v1/components"), api("GET", "/api/v1/schedulers")]);
  const compIn = el("input", { type: "text", id: "component", list: "component-list", value: q.get("component") || "utils.echo" });
  const compList = el("datalist", { id: "component-list" }, comps.components.map((c) => el("option", { value: c.name }, c.summary)));
  // A composite scheduler (pipelines) takes no app of its own: `torchx pipeline run` starts those.
  // Only the schedulers this dashboard is set up for (`torchx ui -s`, .torchxconfig), that can be reached.
  const runnable = scheds.schedulers.filter((s) => s.listed && !s.error && !(s.capabilities || []).includes("composite"));
  const schedSel = el("select", { id: "scheduler" }, runnable.map((s) => el("option", { value: s.name }, s.name)));
  const form = el("div", { class: "form-grid", id: "params" });
  const cfgForm = el("div", { class: "form-grid", id: "cfg" });
  const result = el("div", { id: "result" });
  let spec = null;

  const loadSpec = async () => {
    result.replaceChildren();
    try { spec = await api("GET", "/api/v1/components/" + encodeURIComponent(compIn.value)); }
    catch (e) { spec = null; form.replaceChildren(banner(e.message)); return; }
    form.replaceChildren(el("div", {}), el("p", { class: "muted" }, spec.summary || ""),
      ...spec.params.flatMap((p) => [
        el("label", { for: "p-" + p.name }, "--" + p.name, el("span", { class: "help" }, p.type + (p.required ? ", required" : ""))),
        el("div", {}, paramInput(p), el("span", { class: "help muted" }, p.help || ""))]),
      ...(spec.varargs ? [el("label", { for: "p-varargs" }, spec.varargs.name, el("span", { class: "help" }, "one per line")),
        el("textarea", { id: "p-varargs" })] : []));
  };
  const loadCfg = () => {
    const s = scheds.schedulers.find((x) => x.name === schedSel.value);
    cfgForm.replaceChildren(...(s ? s.runopts : []).flatMap((o) => [
      el("label", { for: "c-" + o.name }, o.name, el("span", { class: "help" }, o.type + (o.required ? ", required" : ""))),
      el("div", {}, cfgInput(o), el("span", { class: "help muted" }, o.help || ""))]));
  };
  const request = (dryrun) => {
    const args = [];
    for (const p of spec.params) {
      const input = document.getElementById("p-" + p.name);
      if (p.type === "bool") { if (input.checked !== (p.default === true)) args.push("--" + p.name + "=" + (input.checked ? "True" : "False")); continue; }
      if (input.value !== "") args.push("--" + p.name, input.value);
    }
    const va = document.getElementById("p-varargs");
    if (va && va.value.trim()) args.push("--", ...va.value.split("\n").filter((l) => l.length));
    const cfg = [];
    for (const input of cfgForm.querySelectorAll("[data-opt]")) if (input.value) cfg.push(input.dataset.opt + "=" + input.value);
    return { component: compIn.value, args, scheduler: schedSel.value, cfg: cfg.join(","), dryrun };
  };
  const submit = async (dryrun) => {
    if (!spec) return;
    try {
      const r = await api("POST", "/api/v1/apps", request(dryrun));
      if (dryrun) result.replaceChildren(el("h2", {}, "Dry run on " + r.dryrun.scheduler), el("pre", { class: "log", id: "dryrun" }, r.dryrun.request));
      else location.hash = "#/app/" + encodeURIComponent(r.app_handle);
    } catch (e) { result.replaceChildren(banner(e.message)); }
  };
  compIn.onchange = loadSpec;
  schedSel.onchange = loadCfg;
  main.replaceChildren(el("h1", {}, "Run a component"),
    el("div", { class: "card" }, el("div", { class: "form-grid" },
      el("label", { for: "component" }, "Component", el("span", { class: "help" }, "builtin, plugin, or file.py:fn")), el("div", {}, compIn, compList),
      el("label", { for: "scheduler" }, "Scheduler"), el("div", {}, schedSel))),
    el("div", { class: "card" }, el("h2", {}, "Parameters"), form),
    el("div", { class: "card" }, el("h2", {}, "Scheduler options"), cfgForm),
    el("div", { class: "filters" }, el("button", { id: "dryrun-btn", onclick: () => submit(true) }, "Dry run"),
      el("button", { class: "primary", id: "run-btn", onclick: () => submit(false) }, "Run")),
    result);
  loadCfg();
  await loadSpec();
}

// ---- Hosts: each scheduler's hosts or nodes, their capacity and use, and the apps on each ----

function hostsTable(scheduler, hosts) {
  const num = (v) => Number.isInteger(v) ? String(v) : v.toFixed(1);
  const mem = (mb) => mb >= 10240 ? (mb / 1024).toFixed(1) + " GiB" : mb + " MiB";
  // What is given to jobs where the engine says, else what is in use, over the capacity, with a bar.
  const share = (given, used, cap, fmt) => {
    const v = given ?? used;
    if (v === null || v === undefined || !cap) return el("span", {}, fmt(cap));
    return el("span", { class: "share" }, el("meter", { min: 0, max: cap, value: Math.min(v, cap) }),
      " " + fmt(v) + (given === null || given === undefined ? " used" : "") + " / " + fmt(cap));
  };
  return el("table", { class: "hosts", "data-scheduler": scheduler },
    el("thead", {}, el("tr", {}, ["Host", "State", "CPUs", "Memory", "GPUs", "Apps"].map((h) => el("th", {}, h)))),
    el("tbody", {}, hosts.map((h) => el("tr", { class: "host", "data-host": h.name },
      el("td", { class: "mono", title: h.address + (h.groups.length ? " \u00b7 " + h.groups.join(", ") : "") }, h.name),
      el("td", {}, h.state),
      el("td", {}, share(h.cpus_allocated, h.cpus_used, h.cpus, num)),
      el("td", {}, share(h.memory_allocated_mb, h.memory_used_mb, h.memory_mb, mem)),
      el("td", {}, h.gpus ? share(h.gpus_allocated, null, h.gpus, num) : "0"),
      el("td", { class: "host-apps" }, h.apps.map((a) => el("div", {},
        el("a", { href: "#/app/" + encodeURIComponent(a.handle) }, a.app_id),
        a.where.length ? el("span", { class: "muted" }, " " + a.where.join(", ")) : null)))))));
}

async function hostsPage(main) {
  const body = el("div", { id: "hosts" }, el("p", { class: "muted" }, "Asking each scheduler\u2026"));
  main.replaceChildren(el("div", { class: "titlebar" }, el("h1", {}, "Hosts")), body);
  // Registered before the first answer: a page left while it loads must not keep asking.
  let busy = false, stopped = false;
  const timer = setInterval(() => load(), 10000);
  cleanup.push(() => { stopped = true; clearInterval(timer); });
  const load = async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      const d = await api("GET", "/api/v1/hosts");
      if (stopped) return;
      body.replaceChildren(...(d.schedulers.length ? d.schedulers.map((s) => el("div", { class: "card", "data-scheduler": s.scheduler },
        el("h2", {}, s.scheduler + (s.hosts ? " \u00b7 " + s.hosts.length + (s.hosts.length === 1 ? " host" : " hosts") : "")),
        s.error ? banner(s.error) : hostsTable(s.scheduler, s.hosts)))
        : [el("p", { class: "muted" }, "None of the listed schedulers can list its hosts.")]));
    } catch (e) { if (!stopped) body.replaceChildren(banner(e.message)); }
    finally { busy = false; }
  };
  await load();
}

// ---- Router ------------------------------------------------------------------------------

async function route() {
  for (const c of cleanup.splice(0)) c();
  window.scrollTo(0, 0);  // a new page opens at its top (its title, state and actions)
  const main = document.getElementById("main");
  const hash = location.hash.slice(1) || "/";
  const [path, query] = hash.split("?");
  document.getElementById("nav-apps").classList.toggle("active", path === "/");
  document.getElementById("nav-run").classList.toggle("active", path === "/run");
  document.getElementById("nav-hosts").classList.toggle("active", path === "/hosts");
  try {
    if (path.startsWith("/app/")) await appPage(main, decodeURIComponent(path.slice(5)));
    else if (path === "/run") await runPage(main, query || "");
    else if (path === "/hosts") await hostsPage(main);
    else await appsPage(main, query || "");
  } catch (e) {
    main.replaceChildren(banner(e.message));
  }
}

window.addEventListener("hashchange", route);
route();
