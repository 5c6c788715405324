/* mafialab viewer: a static, offline single-page app.
 *
 * Data arrives as script files calling MAFIALAB_DATA(kind, key, payload) (works from file://).
 * Safety rule: every string from a log is put into the page with textContent, attribute
 * properties or SVG text nodes; this file never assigns innerHTML.
 * Visibility rule: the impersonation view loads only data/s/<game>/<seat>.js, which the
 * build step filled with mafialab.engine.visible_events(events, seat); nothing here decides
 * what a player saw.
 */
(function () {
  "use strict";

  // ------------------------------------------------------------------ data loading
  const store = new Map();
  const waiting = new Map();
  window.MAFIALAB_DATA = function (kind, key, payload) {
    const k = kind + ":" + key;
    store.set(k, payload);
    const w = waiting.get(k);
    if (w) { waiting.delete(k); w.forEach((f) => f(payload)); }
  };

  function load(kind, key, src, fresh) {
    const k = kind + ":" + key;
    if (fresh) { store.delete(k); src += (src.indexOf("?") < 0 ? "?" : "&") + "t=" + Date.now(); }
    if (store.has(k)) return Promise.resolve(store.get(k));
    return new Promise((resolve, reject) => {
      const list = waiting.get(k) || [];
      list.push(resolve);
      waiting.set(k, list);
      const s = document.createElement("script");
      s.src = src;
      s.charset = "utf-8";
      s.onload = () => { if (!store.has(k)) reject(new Error("data file " + src + " did not contain " + k)); };
      s.onerror = () => { waiting.delete(k); reject(new Error("could not load " + src + " (was the site built completely?)")); };
      document.head.appendChild(s);
    });
  }

  const loadIndex = () => load("index", "index", "data/index.js");
  const loadGame = (row) => load("game", row.id, "data/g/" + row.file + ".js");
  const loadSeat = (row, seat) => load("seat", row.id + "/" + seat, "data/s/" + row.file + "/" + seat + ".js");

  // ------------------------------------------------------------------ DOM helpers (text only)
  const SVGNS = "http://www.w3.org/2000/svg";
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    setAttrs(el, attrs);
    append(el, kids);
    return el;
  }
  function s(tag, attrs, ...kids) {
    const el = document.createElementNS(SVGNS, tag);
    setAttrs(el, attrs);
    append(el, kids);
    return el;
  }
  function setAttrs(el, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.setAttribute("class", v);
      else if (k === "text") el.textContent = String(v);
      else if (k === "title") {
        if (el instanceof SVGElement) el.appendChild(s("title", null, String(v)));
        else el.title = String(v);
      } else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "dataset") Object.assign(el.dataset, v);
      else el.setAttribute(k, String(v));
    }
  }
  function append(el, kids) {
    for (const c of kids.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }
  const app = () => document.getElementById("app");
  const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(1) + "%");
  const num = (x, d) => (x === null || x === undefined ? "–" : Number(x).toFixed(d === undefined ? 2 : d));
  // a p-value by mafialab.analysis.fmt_p's rule (the CLI's): 3 decimals, scientific (1.083e-05) below 0.001.
  // Python rounds an exact tie (0.0625) to even where toFixed rounds up: read the exact decimals to match it.
  // Below 0.001 a 4-digit tie cannot be a double, so toExponential agrees; its exponent gets Python's 2 digits.
  const pval = (p) => {
    if (p === null || p === undefined || Number.isNaN(p)) return "–";
    if (p < 0.001) return p.toExponential(3).replace(/e([+-])(\d)$/, "e$10$2");
    const exact = p.toFixed(100), i = exact.indexOf(".") + 4;
    const tie = exact[i] === "5" && /^0*$/.test(exact.slice(i + 1));
    return tie && Number(exact[i - 1]) % 2 === 0 ? exact.slice(0, i) : p.toFixed(3);
  };
  const enc = encodeURIComponent;
  // counted nouns as mafialab._words.count words them: "1 game", "2 games"
  const count = (n, noun, plural) => n + " " + (n === 1 ? noun : plural || noun + "s");

  function notesBox(notes) {
    if (!notes || !notes.length) return null;
    return h("div", { class: "notes" }, notes.map((n) => h("p", { class: "note " + n.level, dataset: { code: n.code } }, n.text)));
  }

  // latest item of a list sorted by .s with s <= seq
  function latestIndex(list, seq, key) {
    let lo = 0, hi = list.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (list[m][key || "s"] <= seq) lo = m + 1; else hi = m; }
    return lo - 1;
  }

  // latest usable answer per probe id at seq; .newer holds a later unusable answer, if any
  function latestProbes(probes, seq) {
    const out = {}, bad = {};
    for (const p of probes || []) {
      if (p.s > seq) break;
      if (p.ok) { out[p.p] = p; delete bad[p.p]; } else bad[p.p] = p;
    }
    for (const [pid, p] of Object.entries(bad)) out[pid] = out[pid] ? Object.assign({}, out[pid], { newer: p }) : p;
    return out;
  }

  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"];

  // ------------------------------------------------------------------ event text
  function teamName(g, t) { return (g.teams && g.teams[t]) || t; }
  function nm(names, i) { return i === null || i === undefined ? "nobody" : (names[i] !== undefined ? names[i] : "seat " + i); }

  function visLabel(ev, names) {
    const v = ev.visibility || {};
    if (v.public) return null;
    const parts = [];
    (v.teams || []).forEach((t) => parts.push(t + " only"));
    (v.seats || []).forEach((x) => parts.push(nm(names, x) + " only"));
    return parts.length ? parts.join(", ") : "moderator only";
  }

  // Event lines come from the event templates (the prompt pack's "viewer" style, written to
  // data/templates.js at build time by mafialab.render): the same syntax and field rules as
  // the Python renderer, so a new event kind is added in the templates only.
  let TPL = null; // {style, fields}

  function parseTemplate(t) {
    const out = [];
    let i = 0, lit = "";
    while (i < t.length) {
      const c = t[i];
      if ((c === "{" || c === "}") && t[i + 1] === c) { lit += c; i += 2; continue; }
      if (c !== "{") { lit += c; i += 1; continue; }
      let depth = 1, j = i + 1;
      while (j < t.length && depth) { if (t[j] === "{") depth++; else if (t[j] === "}") depth--; j++; }
      if (lit) { out.push(["lit", lit]); lit = ""; }
      const body = t.slice(i + 1, j - 1), q = body.indexOf("?"), p = body.indexOf("|");
      if (q > 0 && (p < 0 || q < p)) out.push(["if", body.slice(0, q), body.slice(q + 1)]);
      else if (p > 0) out.push(["field", body.slice(0, p), body.slice(p + 1)]);
      else out.push(["field", body, ", "]);
      i = j;
    }
    if (lit) out.push(["lit", lit]);
    return out;
  }
  function isSet(v) {
    if (v === null || v === undefined || v === false || v === "") return false;
    if (Array.isArray(v)) return v.some(isSet);
    if (typeof v === "object") return Object.keys(v).length > 0;
    return true;
  }
  function holds(when, facts) {
    for (const [k, want] of Object.entries(when || {})) {
      const got = facts[k];
      if (typeof want === "boolean") { if (isSet(got) !== want) return false; }
      else if (Array.isArray(want)) { if (!want.includes(got)) return false; }
      else if (got !== want) return false;
    }
    return true;
  }
  function eventLine(ev, names, g) {
    if (!TPL) return [ev.kind];
    const F = TPL.fields, style = TPL.style, words = g.words || {};
    const has = (list, k) => list.indexOf(k) >= 0;
    const who = (i) => h("b", null, nm(names, i));
    const facts = Object.assign({}, ev, { public: !!(ev.visibility && ev.visibility.public), mine: false });
    function raw(name, f) {
      if (name in f) return f[name];
      if (name.endsWith("_raw") && name.slice(0, -4) in f) return f[name.slice(0, -4)];
      if (name in words) return words[name];
      return "{" + name + "}";
    }
    function fmt(t, f, values) {
      return parseTemplate(t).map(([kind, name, arg]) => {
        if (kind === "lit") return name;
        if (kind === "if") return isSet(name in f || name in words ? raw(name, f) : null) ? fmt(arg, f, values) : null; // a field the record leaves out while unset
        return show(name, f, values, arg);
      });
    }
    function show(name, f, values, sep) {
      const v = raw(name, f);
      if (name.endsWith("_raw") && !(name in f)) return v === null || v === undefined ? "" : String(v);
      if (values && values[name] && String(v) in values[name]) return fmt(values[name][String(v)], f, {});
      if (v === null || v === undefined) return "";
      if (has(F.quoted, name)) return h("span", { class: "msg" }, String(v));
      if (has(F.seat, name)) return who(v);
      if (has(F.team, name) && (v === "mafia" || v === "town")) return teamName(g, v);
      if (name in F.items) {
        const [a, b] = F.items[name];
        let pairs;
        if (name === "labels") pairs = v.map((x, k) => [k, x]).filter((p) => p[1]);
        else if (name === "tally") pairs = Object.entries(v).map(([k, c]) => [+k, c]).sort((x, y) => y[1] - x[1] || x[0] - y[0]);
        else pairs = Object.entries(v).map(([k, c]) => [+k, c]).sort((x, y) => x[0] - y[0]);
        const out = [];
        pairs.forEach(([x, y], k) => { if (k) out.push(sep); out.push(fmt(style.items[name] || "", Object.assign({ [a]: x, [b]: y }, words), {})); });
        return out;
      }
      if (has(F.seat_list, name)) {
        if (!v.length) return style.empty;
        const out = [];
        v.forEach((x, k) => { if (k) out.push(sep); out.push(who(x)); });
        return out;
      }
      if (Array.isArray(v)) return v.join(sep);
      return String(v);
    }
    for (const c of style.kinds[ev.kind] || []) {
      if (!holds(c.when, facts)) continue;
      if (!c.text) return [];
      const parts = fmt(c.text, facts, c.values);
      return c.css ? [h("span", { class: c.css }, parts)] : parts;
    }
    return [];
  }

  function stepLabel(ev, names, g) {
    if (!ev) return "start";
    // a day round is named by the rule set's words ("mission" in mission games)
    const phase = ev.phase === "day" && g && g.words && g.words.day_lower ? g.words.day_lower : ev.phase;
    const base = "R" + ev.round + " " + phase + " · #" + ev.seq + " ";
    const span = h("span", null, eventLine(ev, names, g));
    let t = span.textContent;
    if (t.length > 90) t = t.slice(0, 89) + "…";
    return base + t;
  }

  // ------------------------------------------------------------------ router
  let current = null; // {kind, key, update(step)}

  function parseHash() {
    const raw = (location.hash || "#/").replace(/^#/, "");
    const parts = raw.split("/").filter((x) => x !== "").map(decodeURIComponent);
    if (parts[0] === "game" && parts.length >= 2) {
      const r = { view: "game", id: parts[1], seat: null, step: null };
      let i = 2;
      if (parts[i] === "as") { r.view = "as"; r.seat = parseInt(parts[i + 1], 10); i += 2; }
      if (parts[i] === "step") { r.step = parseInt(parts[i + 1], 10); i += 2; }
      if (parts[i] === "bif") r.bif = parts[i + 1] || null;
      return r;
    }
    if (parts[0] === "batch" && parts.length >= 2) return { view: "batch", batch: parts[1] };
    if (parts[0] === "compare" && parts.length >= 3) return { view: "compare", a: parts[1], b: parts[2] };
    if (parts[0] === "season" && parts.length >= 2) return { view: "season", name: parts[1] };
    if (parts[0] === "arena") return { view: "arena" };
    if (parts[0] === "calibration") return { view: "calibration", kind: parts[1] || "all", key: parts[2] || "all games" };
    if (parts[0] === "sort") return { view: "dashboard", page: 1, sort: parts[1], dir: parts[2] || "asc" };
    if (parts[0] === "page") {
      const r = { view: "dashboard", page: parseInt(parts[1], 10) || 1 };
      if (parts[2] === "sort") { r.sort = parts[3]; r.dir = parts[4] || "asc"; }
      return r;
    }
    return { view: "dashboard", page: 1 };
  }

  function gameHash(id, step, seat) {
    return "#/game/" + enc(id) + (seat !== null && seat !== undefined ? "/as/" + seat : "") + (step !== null && step !== undefined ? "/step/" + step : "");
  }

  async function route() {
    const r = parseHash();
    try {
      const index = await loadIndex();
      if (!TPL) TPL = await load("templates", "events", "data/templates.js");
      document.getElementById("source").textContent = index.source + " · " + index.software;
      if ((r.view === "game" || r.view === "as") && current && current.id === r.id && current.view === r.view && current.seat === r.seat) {
        current.update(r.step, r);
        return;
      }
      current = null;
      if (r.view === "dashboard") await renderDashboard(index, r);
      else if (r.view === "calibration") renderCalibration(index, r);
      else if (r.view === "season") renderSeason(index, r);
      else if (r.view === "batch" || r.view === "compare") await EXT.page(index, r);
      else if (r.view === "arena") await EXT.arena(index, r);
      else {
        const row = await findRow(index, r.id);
        if (!row) { renderError("No game " + JSON.stringify(r.id) + " in this site."); return; }
        if (r.view === "as" && !(Number.isInteger(r.seat) && r.seat >= 0 && r.seat < row.seats)) {
          renderError("No seat " + JSON.stringify(r.seat === null || isNaN(r.seat) ? null : r.seat) + " in game " + JSON.stringify(r.id) + " (seats 0–" + (row.seats - 1) + ").");
          return;
        }
        clear(app()).appendChild(h("p", { class: "muted" }, "Loading game…"));
        if (r.view === "game") {
          // probe answers live in the per-seat files only (one copy on disk); the moderator's view loads them all
          const g = await loadGame(row);
          const seats = await Promise.all(g.roster.map((x) => loadSeat(row, x.seat)));
          g.probes = {};
          seats.forEach((p) => { g.probes[p.seat] = p.probes; });
          const chain = await lineage(index, row); // a branch's breadcrumb: its parents' rows, from their pages
          current = renderGame(row, g, r.step, index, r, chain);
        }
        else current = renderAs(row, await loadSeat(row, r.seat), r.step, index);
      }
    } catch (err) {
      renderError(err && err.message ? err.message : String(err));
    }
  }

  function renderError(msg) {
    clear(app()).appendChild(h("div", { class: "notes" }, h("p", { class: "note warn", id: "error" }, msg)));
  }

  // ------------------------------------------------------------------ extensions (branches.js fills EXT)
  const NOEXT = { dashboard() {}, game() { return { timeline() {}, show() {}, route() {}, suffix: () => "" }; }, page() { renderError("This view needs branches.js."); }, arena() { renderError("The Arena panel is part of the served site only (mafialab view DIR --serve)."); } };
  const EXT = {
    dashboard: (...a) => (window.MAFIALAB_VIEWER.ext.dashboard || NOEXT.dashboard)(...a),
    game: (...a) => (window.MAFIALAB_VIEWER.ext.game || NOEXT.game)(...a),
    page: (...a) => (window.MAFIALAB_VIEWER.ext.page || NOEXT.page)(...a),
    arena: (...a) => (window.MAFIALAB_VIEWER.ext.arena || NOEXT.arena)(...a),
  };
  window.MAFIALAB_VIEWER = {
    ext: {}, h, s, clear, load, pct, num, pval, count, enc, app, gameHash, teamName, stepIndexFor, notesBox, renderError, findRow, lineage,
    reloadIndex: () => {
      for (const k of store.keys()) if (k.startsWith("page:")) stalePages.add(k.slice(5));
      return load("index", "index", "data/index.js", true);
    },
    route,
    rerender: () => { current = null; return route(); },
  };

  window.addEventListener("hashchange", route);
  window.addEventListener("DOMContentLoaded", route);

  // ------------------------------------------------------------------ dashboard
  const COLUMNS = [
    ["id", "game"], ["corpus", "corpus"], ["rules", "rule set"], ["models", "models"], ["winner_name", "winner"],
    ["rounds", "rounds"], ["steps", "steps"], ["probes", "probes"], ["usable_rate", "usable answers"], ["degraded", "degraded"], ["notes", "notes"],
  ];

  function cmp(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;
    if (b === null || b === undefined) return -1;
    if (Array.isArray(a)) a = a.join(","); if (Array.isArray(b)) b = b.join(",");
    return a < b ? -1 : 1;
  }

  // the dashboard's precomputed pages (data/pages/<n>.js, index.pages.size rows in game-id order) hold the rows;
  // data/index.js holds none: only one page of rows is loaded and drawn.
  // pages loaded before the index was reloaded (a fork job added games) are loaded afresh, once
  const stalePages = new Set();
  const loadPage = (n) => load("page", String(n), "data/pages/" + n + ".js", stalePages.delete(String(n)));

  // the page holding game `id`: pages are in id order as this script compares strings (the build
  // sorts by UTF-16 code units), and index.pages.first holds each page's first id
  function pageOf(info, id) {
    const first = info.first || [];
    let lo = 0, hi = first.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (first[m] <= id) lo = m + 1; else hi = m; }
    return Math.max(1, lo);
  }

  // a game's dashboard row (undefined when the site has no such game); loads one page at most
  async function findRow(index, id) {
    if (!index.pages || !index.pages.total) return undefined;
    const page = await loadPage(pageOf(index.pages, id));
    return page.rows.find((g) => g.id === id);
  }

  // the rows from the root game down to `row` (a branch's parents in the site: row.under_parent), at most 20
  async function lineage(index, row) {
    const chain = [];
    let cur = row, guard = 0;
    while (cur && guard++ < 20) { chain.unshift(cur); cur = cur.under_parent ? await findRow(index, cur.parent.game_id) : null; }
    return chain;
  }

  function pageHash(n, sortKey, dir) {
    return "#/page/" + n + (sortKey ? "/sort/" + sortKey + "/" + (dir || "asc") : "");
  }

  function pager(n, count, top) { // ids on the pager above the table only (the one below repeats it)
    const nums = [];
    for (let k = 1; k <= count; k++) if (k === 1 || k === count || Math.abs(k - n) <= 2) nums.push(k);
    const kids = [n > 1 ? h("a", { href: pageHash(n - 1), id: top ? "page-prev" : null, rel: "prev" }, "‹ previous") : h("span", { class: "muted" }, "‹ previous")];
    let last = 0;
    for (const k of nums) {
      if (k > last + 1) kids.push(h("span", { class: "muted gap" }, "…"));
      kids.push(k === n ? h("span", { class: "current", dataset: { page: k } }, String(k)) : h("a", { href: pageHash(k), dataset: { page: k } }, String(k)));
      last = k;
    }
    kids.push(n < count ? h("a", { href: pageHash(n + 1), id: top ? "page-next" : null, rel: "next" }, "next ›") : h("span", { class: "muted" }, "next ›"));
    return h("nav", { class: "pager", id: top ? "pager" : null, dataset: { page: n, pages: count } }, kids);
  }

  async function renderDashboard(index, r) {
    const info = index.pages;
    const n = Math.min(Math.max(1, r.page || 1), Math.max(1, info.count));
    const page = await loadPage(n);
    const root = clear(app());
    const games = page.rows.slice();
    const sortKey = r.sort || "id", dir = r.dir === "desc" ? -1 : 1;
    games.sort((a, b) => dir * cmp(a[sortKey], b[sortKey]));
    root.appendChild(h("h1", null, "Games (" + info.total + ")"));
    const first = (n - 1) * info.size;
    root.appendChild(h("p", { class: "muted", id: "page-info" }, "Page " + n + " of " + info.count + ": games " + (games.length ? first + 1 : 0) + "–" + (first + games.length) + " of " + info.total +
      " in game-id order; sorting a column orders the rows of this page."));
    if (info.count > 1) root.appendChild(pager(n, info.count, true));
    if (index.warnings && index.warnings.length) {
      root.appendChild(notesBox(index.warnings.map((w) => ({ level: "warn", code: "warning", text: w }))));
    }
    if (index.skipped && index.skipped.length) {
      root.appendChild(notesBox(index.skipped.map((x) => ({ level: "warn", code: "skipped", text: "Skipped " + x.path + ": " + x.reason }))));
    }
    if (index.notices && index.notices.length) { // the embedded model's note; games without probes, said once
      const box = notesBox(index.notices);
      box.id = "notices";
      root.appendChild(box);
    }
    const head = h("tr", null, COLUMNS.map(([k, label]) => {
      const next = sortKey === k && dir === 1 ? "desc" : "asc";
      return h("th", { class: sortKey === k ? "sorted" : null, dataset: { col: k } },
        h("a", { href: pageHash(n, k, next) }, label + (sortKey === k ? (dir === 1 ? " ▲" : " ▼") : "")));
    }));
    const body = h("tbody", null, games.map((g) => h("tr", { dataset: { game: g.id }, class: g.degraded ? "degraded" : null },
      h("td", null, h("a", { href: gameHash(g.id, null) }, g.id)),
      h("td", null, g.corpus), h("td", null, g.rules), h("td", null, g.models.join(", ")),
      h("td", null, g.winner_name || "unfinished"), h("td", { class: "num" }, g.rounds), h("td", { class: "num" }, g.steps),
      h("td", { class: "num", title: Object.entries(g.probe_ids || {}).map(([k, v]) => k + ": " + v).join("\n") }, g.probes),
      h("td", { class: "num", title: (g.usable === undefined ? "" : g.usable + " of " + g.probes + " answers usable (parsed, not empty)") }, pct(g.usable_rate)), h("td", null, g.degraded ? "yes" : ""), h("td", null, g.note_words.join(", ")) // words by mafialab.viewer._build.note_words
    )));
    root.appendChild(h("table", { class: "games", id: "games", dataset: { sort: sortKey + ":" + (dir === 1 ? "asc" : "desc"), page: n } }, h("thead", null, head), body));
    EXT.dashboard(index, body, COLUMNS.length, games);
    if (info.count > 1) root.appendChild(pager(n, info.count, false));

    if (index.seasons && index.seasons.length) {
      root.appendChild(h("h2", null, "Seasons"));
      root.appendChild(h("ul", { class: "seasons", id: "seasons" }, index.seasons.map((z) => h("li", null,
        h("a", { href: "#/season/" + enc(z.name) }, z.name), " · " + z.rules + " · " + z.counted + "/" + z.planned + " games counted · " + z.dir))));
    }
    root.appendChild(h("h2", null, "Corpus metrics"));
    const cmi = index.corpus_metrics && index.corpus_metrics.inclusion;
    if (cmi) root.appendChild(h("p", { class: "note info", id: "inclusion" }, cmi.rule + ". A branch's own page shows its own figures."));
    root.appendChild(corpusMetrics(index.corpus_metrics));
    root.appendChild(h("h2", null, "Calibration (all games)"));
    const all = (index.calibration || []).find((c) => c.kind === "all");
    root.appendChild(all ? calibrationChart(all, "all games") : h("p", { class: "muted" }, calibrationMissing(index)));
    root.appendChild(h("p", null, h("a", { href: "#/calibration" }, "Calibration per corpus and per model →")));
  }

  function corpusMetrics(cm) {
    if (!cm || !cm.available) return h("p", { class: "note info", id: "metrics-unavailable" }, (cm && cm.reason) || "metrics unavailable");
    const box = h("div", { class: "corpus-metrics" });
    for (const [name, block] of Object.entries(cm.corpora || {})) {
      box.appendChild(h("h3", null, name));
      if (block.error) { box.appendChild(h("p", { class: "note warn" }, "metrics unavailable: " + block.error)); continue; }
      if (block.inclusion) box.appendChild(h("p", { class: "muted inclusion", dataset: { corpus: name } }, block.inclusion.rule));
      if (block.probe_records === 0) { // one line before the empty rows, not one per metric after them
        box.appendChild(h("p", { class: "note info no-probes", dataset: { corpus: name } }, "Not computed: the games counted here have no probe answers (see the note above the games for how to record them)."));
      }
      const rows = (block.metrics || []).map((m) => h("tr", null, h("td", null, m.name), h("td", { class: "num" }, num(m.value, 4)),
        h("td", { class: "num" }, m.ci ? "[" + num(m.ci[0], 4) + ", " + num(m.ci[1], 4) + "]" : "–"), h("td", { class: "num" }, m.n === undefined ? "" : m.n)));
      box.appendChild(h("table", { class: "metrics", dataset: { corpus: name } }, h("thead", null, h("tr", null, h("th", null, "metric"), h("th", null, "value"), h("th", null, "95% CI"), h("th", null, "n"))), h("tbody", null, rows)));
      if (block.probe_records !== 0) (block.missing || []).forEach((why) => box.appendChild(h("p", { class: "note info missing-metric" }, "Not computed: " + why)));
      if (block.calibration) box.appendChild(calibrationChart(block.calibration, name));
    }
    box.appendChild(h("p", { class: "muted" }, "Computed by " + cm.source + " at build time."));
    return box;
  }

  // ------------------------------------------------------------------ calibration
  function calibrationMissing(index) {
    const cm = index.corpus_metrics;
    if (cm && !cm.available) return "Calibration unavailable: " + (cm.reason || "no analysis layer");
    return "No role-assessment answers with confidences from players outside the hidden team: nothing to calibrate.";
  }

  function ciText(ci, why, digits) {
    return ci ? "[" + num(ci[0], digits) + ", " + num(ci[1], digits) + "]" : (why || "–");
  }

  function calibrationChart(group, caption) {
    const W = 420, H = 300, L = 44, B = 36, T = 12, R = 12;
    const x = (v) => L + (v / 100) * (W - L - R), y = (v) => H - B - v * (H - B - T);
    const svg = s("svg", { class: "calib", viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img" });
    svg.appendChild(s("line", { x1: x(0), y1: y(0), x2: x(100), y2: y(1), class: "diag" }));
    for (let v = 0; v <= 100; v += 20) {
      svg.appendChild(s("text", { x: x(v), y: H - B + 16, class: "tick", "text-anchor": "middle" }, String(v)));
      svg.appendChild(s("text", { x: L - 6, y: y(v / 100) + 4, class: "tick", "text-anchor": "end" }, String(v / 100)));
    }
    svg.appendChild(s("line", { x1: x(0), y1: y(0), x2: x(100), y2: y(0), class: "axis" }));
    svg.appendChild(s("line", { x1: x(0), y1: y(0), x2: x(0), y2: y(1), class: "axis" }));
    svg.appendChild(s("text", { x: (L + W - R) / 2, y: H - 4, class: "label", "text-anchor": "middle" }, "stated confidence"));
    svg.appendChild(s("text", { x: 12, y: (T + H - B) / 2, class: "label", transform: "rotate(-90 12 " + (T + H - B) / 2 + ")", "text-anchor": "middle" }, "accuracy"));
    // group: the report's calibration block (mafialab.analysis Calibration, key for key) plus small_bin
    for (const b of group.bins) {
      const g = s("g", { class: "bin" + (b.n < group.small_bin ? " small" : ""), title: b.lo + "–" + b.hi + ": accuracy " + num(b.accuracy, 3) + " " + ciText(b.ci95, b.no_interval, 3) + ", n=" + b.n + " in " + count(b.games, "game") + ", mean confidence " + num(b.mean_confidence, 1) });
      g.appendChild(s("rect", { x: x(b.lo) + 2, y: y(b.accuracy), width: x(b.hi) - x(b.lo) - 4, height: y(0) - y(b.accuracy), class: "bar" }));
      if (b.ci95) g.appendChild(s("line", { x1: x(b.mean_confidence), x2: x(b.mean_confidence), y1: y(b.ci95[0]), y2: y(b.ci95[1]), class: "ci" }));
      g.appendChild(s("circle", { cx: x(b.mean_confidence), cy: y(b.accuracy), r: 4, class: "pt" }));
      svg.appendChild(g);
    }
    return h("figure", { class: "calib-fig" }, svg,
      h("figcaption", null, (caption ? caption + ": " : "") + "n = " + group.n + " answers in " + count(group.games, "game") + " · ECE " + num(group.ece, 4) + " " + ciText(group.ci95.ece, group.no_interval, 4) +
        " · counted: " + group.population + " · bars: accuracy per confidence bin, whiskers: 95% game-level cluster-bootstrap interval (none over fewer than 2 games), dot at mean confidence; bins with n < 20 dimmed. Computed by mafialab.analysis, as in mafialab report."));
  }

  function renderSeason(index, r) {
    const root = clear(app());
    const z = (index.seasons || []).find((x) => x.name === r.name);
    if (!z) { renderError("No season " + JSON.stringify(r.name) + " in this site."); return; }
    root.appendChild(h("h1", null, "Season " + z.name));
    root.appendChild(h("p", { class: "muted" }, z.rules + " · " + z.counted + " of " + z.planned + " games counted" + (z.replacements ? " · " + count(z.replacements, "replacement") : "") + " · " + z.dir));
    root.appendChild(h("h2", null, "Leaderboard"));
    root.appendChild(h("table", { class: "metrics", id: "season-board" }, h("thead", null, h("tr", null, z.leaderboard.head.map((c) => h("th", null, c)))),
      h("tbody", null, z.leaderboard.rows.map((row) => h("tr", null, row.map((c) => h("td", null, c)))))));
    root.appendChild(h("h2", null, "Games and verdicts"));
    const list = h("div", { class: "season-games", id: "season-games" });
    for (const g of z.games) {
      const title = "Game " + g.slot + " · " + g.game_id;
      const head = h("h3", null, g.key ? h("a", { href: gameHash(g.key, null) }, title) : title);
      const facts = h("p", { class: "muted" }, (g.winner ? "won by " + (g.winner_name || g.winner) : "unfinished") + (g.rounds !== null ? " after " + count(g.rounds, "round") : "") +
        (g.degraded ? " · degraded" : "") + (g.counted ? "" : " · not counted") + (g.judges.length ? " · judges: " + g.judges.join(", ") : " · not judged") + (g.missing.length ? " · missing: " + g.missing.join(", ") : ""));
      const box = h("section", { class: "season-game", dataset: { game: g.game_id } }, head, facts);
      if (g.headline) box.appendChild(h("p", { class: "headline" }, h("b", null, g.headline)));
      if (g.recap) box.appendChild(h("p", { class: "recap" }, g.recap));
      if (g.mvp) box.appendChild(h("p", null, "MVP: " + g.mvp + (g.mvp_entry ? " (" + g.mvp_entry + ")" : "")));
      if (g.scores.length) {
        box.appendChild(h("table", { class: "metrics scores" }, h("thead", null, h("tr", null, ["player", "entry", "role", "deception", "detection", "influence"].map((c) => h("th", null, c)))),
          h("tbody", null, g.scores.map((p) => h("tr", null, h("td", null, p.name), h("td", null, p.entry || ""), h("td", null, p.role),
            ["deception", "detection", "influence"].map((k) => h("td", { class: "num" }, p[k] === null ? "–" : num(p[k], 1))))))));
      }
      if (!g.key) box.appendChild(h("p", { class: "note info" }, "This game's log is not under the site's directory: no game page."));
      list.appendChild(box);
    }
    root.appendChild(list);
  }

  // stated vs log-probability readouts of one corpus, side by side (the report's readouts section)
  function readoutsTable(name, ro) {
    const box = h("section", { class: "readouts", dataset: { corpus: name } });
    box.appendChild(h("h2", null, "Stated vs log-probability readout: " + name));
    const rows = [["stated", ro.stated], ["logprob", ro.logprob]];
    box.appendChild(h("table", { class: "metrics readouts-summary" },
      h("thead", null, h("tr", null, ["readout", "n", "accuracy", "mean confidence", "ECE", "Brier", "vote coupling"].map((t) => h("th", null, t)))),
      h("tbody", null, rows.map(([k, v]) => h("tr", { dataset: { readout: k } }, h("td", null, k), h("td", { class: "num" }, v.n), h("td", { class: "num" }, num(v.accuracy, 3)),
        h("td", { class: "num" }, num(v.mean_confidence, 3)), h("td", { class: "num" }, num(v.ece, 3)), h("td", { class: "num" }, num(v.brier, 3)), h("td", { class: "num" }, num(v.vote_coupling, 3) + " (" + v.vote_n + ")"))))));
    box.appendChild(h("table", { class: "metrics readouts-bins" },
      h("thead", null, h("tr", null, ["confidence", "stated n", "stated accuracy", "logprob n", "logprob accuracy"].map((t) => h("th", null, t)))),
      h("tbody", null, ro.stated.bins.map((b, i) => { const l = ro.logprob.bins[i]; return h("tr", null, h("td", null, num(b.lo, 1) + "–" + num(b.hi, 1)), h("td", { class: "num" }, b.n), h("td", { class: "num" }, num(b.accuracy, 3)), h("td", { class: "num" }, l.n), h("td", { class: "num" }, num(l.accuracy, 3))); }))));
    box.appendChild(h("p", { class: "muted" }, "Agreement (same top suspect): " + num(ro.agreement, 3) + " of " + ro.pairs + " paired steps. Log-probability dynamics: volatility " + num(ro.dynamics.volatility, 3) + ", top-suspect flips " + num(ro.dynamics.flip_rate, 3) + "; retest floor " + num(ro.dynamics.retest_floor, 1) + " (no sampling). A log-probability distribution is a tokenisation-dependent score, not a calibrated probability by fiat (docs/probes.md)."));
    return box;
  }

  function renderCalibration(index, r) {
    const root = clear(app());
    root.appendChild(h("h1", null, "Calibration"));
    for (const [name, c] of Object.entries((index.corpus_metrics && index.corpus_metrics.corpora) || {})) if (c && c.readouts) root.appendChild(readoutsTable(name, c.readouts));
    const groups = index.calibration || [];
    if (!groups.length) { root.appendChild(h("p", { class: "note info" }, calibrationMissing(index))); return; }
    const sel = groups.find((g) => g.kind === r.kind && g.key === r.key) || groups[0];
    root.appendChild(h("ul", { class: "groups" }, groups.map((g) => h("li", { class: g === sel ? "sel" : null },
      h("a", { href: "#/calibration/" + enc(g.kind) + "/" + enc(g.key) }, g.kind + ": " + g.key + " (n=" + g.n + ")")))));
    if (sel.inclusion) root.appendChild(h("p", { class: "note info", id: "calib-inclusion" }, sel.inclusion + "."));
    root.appendChild(calibrationChart(sel));
    root.appendChild(h("table", { class: "metrics", id: "calib-table" },
      h("thead", null, h("tr", null, ["bin", "n", "games", "accuracy", "95% CI (games)", "mean confidence"].map((t) => h("th", null, t)))),
      h("tbody", null, sel.bins.map((b) => h("tr", { class: b.n < sel.small_bin ? "small" : null }, h("td", null, b.lo + "–" + b.hi), h("td", { class: "num" }, b.n), h("td", { class: "num" }, b.games),
        h("td", { class: "num" }, num(b.accuracy, 3)), h("td", { class: "num ci" }, ciText(b.ci95, b.no_interval, 3)), h("td", { class: "num" }, num(b.mean_confidence, 1)))))));
    root.appendChild(h("p", { class: "muted", id: "calib-population" }, "Counted: " + sel.population + ". Intervals: game-level cluster bootstrap; none over fewer than 2 games (the reason is shown). The same definition, games and numbers as mafialab report (mafialab.analysis): degraded games left out, and fork branches unless the site was built with view --include-branches (report --include-branches counts them too)."));
  }

  // ------------------------------------------------------------------ shared game pieces
  function scrubber(steps, stepIndex, onPick, label) {
    const range = h("input", { type: "range", min: 0, max: Math.max(0, steps.length - 1), value: Math.max(0, stepIndex), id: "scrubber", "aria-label": "timeline step" });
    const prev = h("button", { id: "prev", type: "button", title: "previous step" }, "◀");
    const next = h("button", { id: "next", type: "button", title: "next step" }, "▶");
    const lab = h("span", { class: "steplabel", id: "steplabel" }, label);
    range.addEventListener("input", () => onPick(+range.value));
    // arrow keys step through the timeline when focus is not in a form field
    document.onkeydown = (e) => {
      if (!document.body.contains(range) || (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName))) return;
      if (e.key === "ArrowLeft") { e.preventDefault(); onPick(Math.max(0, +range.value - 1)); }
      else if (e.key === "ArrowRight") { e.preventDefault(); onPick(Math.min(steps.length - 1, +range.value + 1)); }
    };
    prev.addEventListener("click", () => onPick(Math.max(0, +range.value - 1)));
    next.addEventListener("click", () => onPick(Math.min(steps.length - 1, +range.value + 1)));
    return { el: h("div", { class: "scrubber" }, prev, range, next, lab), range, lab };
  }

  function transcript(events, names, g) {
    const rows = events.filter((ev) => ev.kind !== "seating").map((ev) => {
      const priv = visLabel(ev, names);
      return h("li", { class: "ev " + ev.kind + (priv ? " private" : ""), dataset: { seq: ev.seq } },
        h("span", { class: "seq" }, "#" + ev.seq), priv ? h("span", { class: "tag lock", title: "visible to: " + priv }, priv) : null, " ", eventLine(ev, names, g));
    });
    const list = h("ol", { class: "transcript", id: "transcript" }, rows);
    return {
      el: list,
      show(seq) {
        let last = null;
        for (const li of rows) {
          const on = +li.dataset.seq <= seq;
          li.hidden = !on;
          li.classList.remove("current");
          if (on) last = li;
        }
        if (last) { last.classList.add("current"); list.scrollTop = list.scrollHeight; }
      },
    };
  }

  // graph: nodes on a circle. nodeInfo(i) -> {fill, ring, dead, label, sub, title}; edges [[from,to]]
  function seatGraph(n, nodeInfo, edges, id) {
    // the ring grows with the table so that neighbours' labels (12 seats: "Town (known)") do not collide
    const R = Math.max(120, 13 * n), W = 2 * R + 140, H = 2 * R + 100, cx = W / 2, cy = H / 2 - 6;
    const short = (t, k) => (t && t.length > k ? t.slice(0, k - 1) + "…" : t);
    const pos = (i) => [cx + R * Math.sin((2 * Math.PI * i) / n), cy - R * Math.cos((2 * Math.PI * i) / n)];
    const svg = s("svg", { class: "graph", id: id, viewBox: "0 0 " + W + " " + H, width: W, height: H });
    const defs = s("defs", null, s("marker", { id: id + "-arrow", viewBox: "0 0 10 10", refX: 22, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" })));
    svg.appendChild(defs);
    for (const [a, b] of edges) {
      const [x1, y1] = pos(a), [x2, y2] = pos(b);
      svg.appendChild(s("line", { x1, y1, x2, y2, class: "vote-edge", "marker-end": "url(#" + id + "-arrow)" }));
    }
    for (let i = 0; i < n; i++) {
      const info = nodeInfo(i), [x, y] = pos(i);
      const g = s("g", { class: "node" + (info.dead ? " dead" : ""), dataset: { seat: i }, title: info.title || (info.sub ? info.label + " · " + info.sub : info.label) });
      g.appendChild(s("circle", { cx: x, cy: y, r: 16, fill: info.fill, class: "seat" + (info.dashed ? " guess" : "") }));
      if (info.dead) g.appendChild(s("path", { d: "M" + (x - 9) + " " + (y - 9) + " L" + (x + 9) + " " + (y + 9) + " M" + (x + 9) + " " + (y - 9) + " L" + (x - 9) + " " + (y + 9), class: "cross" }));
      g.appendChild(s("text", { x, y: y + 30, "text-anchor": "middle", class: "nodename" }, short(info.label, 16)));
      if (info.sub) g.appendChild(s("text", { x, y: y + 42, "text-anchor": "middle", class: "nodesub" }, short(info.sub, 22)));
      svg.appendChild(g);
    }
    return svg;
  }

  const ROLE_COLOURS = { mafia: "#c0392b", town: "#2e86c1" };
  const ABILITY_COLOURS = { protect: "#27ae60", investigate: "#d4ac0d", kill: "#922b21" };
  function roleFill(team, role, g) {
    const spec = (g.roles || []).find((r) => r.name === role);
    if (spec && spec.team === "town" && spec.ability) return ABILITY_COLOURS[spec.ability] || "#8e44ad";
    return ROLE_COLOURS[team || (spec && spec.team)] || "#95a5a6";
  }

  // votes of the latest vote stage in the round of `seq`, among `events` up to seq
  function voteEdges(events, seq) {
    let round = null, stage = null;
    const out = [];
    for (const ev of events) {
      if (ev.seq > seq) break;
      if (ev.kind === "phase_started") { round = ev.round; out.length = 0; stage = null; }
      if (ev.kind === "vote") {
        if (stage !== ev.stage) { out.length = 0; stage = ev.stage; }
        out.push([ev.seat, ev.target]);
      }
    }
    return out;
  }

  // the latest counted day vote up to `seq`: each vote cast so far beside the probe's top-1 and
  // the transcript-only predictors (computed at build time, mafialab.analysis, default method)
  const VOTE_PREDICTORS = [["probe", "probe top-1"], ["mentioned", "most-mentioned"], ["accused", "most-accused"], ["previous", "previous target"]];
  function votePanel(g, seq, names) {
    const units = (g.vote_predictions || []).filter((u) => u.vote <= seq);
    const box = h("div", { class: "votepanel", id: "votepanel" });
    if (g.vote_note) { box.appendChild(h("p", { class: "muted" }, "Votes against the transcript: " + g.vote_note + ".")); return box; }
    if (!units.length) { box.appendChild(h("p", { class: "muted" }, "No counted day vote yet.")); return box; }
    const latest = units.reduce((a, u) => (u.vote > a.vote ? u : a));
    const rows = units.filter((u) => u.tally === latest.tally).sort((a, b) => a.vote - b.vote);
    const cell = (u, k) => {
      const p = u[k];
      if (p === null || p === undefined) return h("td", { class: "pred none", title: "no prediction" }, "—");
      const hit = p === u.target;
      return h("td", { class: "pred " + (hit ? "hit" : "miss") }, nm(names, p) + (hit ? " ✓" : " ✗"));
    };
    box.appendChild(h("table", { class: "votes" },
      h("caption", null, "Round " + latest.round + " vote: the probe and the transcript"),
      h("thead", null, h("tr", null, h("th", null, "voter"), h("th", null, "voted"), VOTE_PREDICTORS.map(([, label]) => h("th", null, label)))),
      h("tbody", null, rows.map((u) => h("tr", { dataset: { voter: u.voter, side: u.side } }, h("td", null, nm(names, u.voter)), h("td", null, nm(names, u.target)), VOTE_PREDICTORS.map(([k]) => cell(u, k)))))));
    return box;
  }

  function deadAt(events, seq) {
    const dead = new Set();
    for (const ev of events) { if (ev.seq > seq) break; if (ev.kind === "elimination") dead.add(ev.seat); }
    return dead;
  }

  // which readout the belief panels show: stated answers, log-probability distributions, or both
  let READOUT = "both";
  function readoutMode() { return READOUT; }
  function readoutPicker(g, rerender) {
    const has = Object.values(g.probes || {}).some((ps) => (ps || []).some((p) => p.lp));
    if (!has) return null;
    const sel = h("select", { id: "readout" }, [["both", "both readouts"], ["stated", "stated answers"], ["logprob", "log-probabilities"]].map(([v, t]) => h("option", { value: v }, t)));
    sel.value = READOUT;
    sel.addEventListener("change", () => { READOUT = sel.value; rerender(); });
    return h("label", { class: "readout" }, "show ", sel);
  }

  function beliefCard(seat, names, latest, opts) {
    const card = h("section", { class: "card", dataset: { seat } });
    card.appendChild(h("h4", null, names[seat] !== undefined ? names[seat] : "seat " + seat, opts.subtitle ? h("span", { class: "muted" }, " " + opts.subtitle) : null));
    const ra = latest.role_assessment;
    if (ra && ra.items) {
      card.appendChild(h("div", { class: "sub" }, "role guesses (#" + ra.s + ")"));
      card.appendChild(h("ul", { class: "guesses" }, ra.items.filter((it) => it.t !== seat).map((it) => {
        const verdict = opts.truth && it.t !== null && it.r && it.r !== "Unknown" ? (it.r.toLowerCase() === String(opts.truth(it.t)).toLowerCase() ? " ✓" : " ✗") : "";
        return h("li", { title: it.why || "(no reason given)", class: "hoverreason" }, h("span", { class: "who" }, it.name), " " + (it.g || "?") + (it.c !== null && it.c !== undefined ? " (" + num(it.c, 0) + ")" : "") + verdict);
      })));
    }
    const sr = latest.suspicion_ranking;
    if (sr && sr.items) {
      card.appendChild(h("div", { class: "sub" }, "suspicion ranking (#" + sr.s + ")"));
      card.appendChild(h("ol", { class: "ranking" }, sr.items.map((it) => h("li", { title: it.why || "(no reason given)", class: "hoverreason" }, it.name + (it.score !== null && it.score !== undefined ? " (" + num(it.score, 0) + ")" : "")))));
    }
    if (!opts.hideSocial) {
      const sm = latest.social_map;
      if (sm && sm.items) {
        card.appendChild(h("div", { class: "sub" }, "thinks others feel about it (#" + sm.s + ")"));
        card.appendChild(h("ul", { class: "guesses" }, sm.items.filter((it) => it.t !== seat).map((it) => h("li", { title: it.why || "(no reason given)", class: "hoverreason" }, it.name + " " + (it.a || "?") + (it.c !== null && it.c !== undefined ? " (" + num(it.c, 0) + ")" : "")))));
      }
    }
    const mode = readoutMode();
    for (const [pid, p] of Object.entries(latest)) {
      if (p.lp) {
        if (mode === "stated") continue;
        card.appendChild(h("div", { class: "sub" }, pid + ": log-probability readout (#" + p.s + ")"));
        card.appendChild(h("ol", { class: "ranking logprob" }, p.items.map((it) => h("li", { title: "probability among the candidates (softmax of the model's log-probabilities; not generated text)" }, it.name + " (" + num(it.p, 2) + ")"))));
        continue;
      }
      if (mode === "logprob") continue;
      if (p.newer) card.appendChild(h("details", { class: "rawprobe unusable" }, h("summary", null, pid + ": later answer (#" + p.newer.s + ") unusable, showing #" + p.s), h("pre", null, p.newer.raw || "")));
      if (p.items && ["role_assessment", "suspicion_ranking", "social_map"].includes(pid)) continue;
      card.appendChild(h("details", { class: "rawprobe" }, h("summary", null, pid + " (#" + p.s + ")" + (p.ok ? "" : " — unusable answer")), h("pre", null, p.raw === undefined || p.raw === null ? "" : p.raw)));
    }
    if (!Object.keys(latest).length) card.appendChild(h("p", { class: "muted" }, "no probe answer yet"));
    return card;
  }

  // ------------------------------------------------------------------ metrics strip
  function metricsStrip(g, onPick) {
    // the axis titles are HTML beside and under the plot (never SVG text over its lines): B only keeps the 0 line clear
    const steps = g.steps, n = steps.length, W = 900, H = 96, L = 30, R = 8, T = 8, B = 6;
    const x = (i) => L + (n <= 1 ? 0 : (i / (n - 1)) * (W - L - R)), y = (v) => T + (1 - v) * (H - T - B);
    const svg = s("svg", { class: "strip", id: "strip", viewBox: "0 0 " + W + " " + H, preserveAspectRatio: "none", width: "100%", height: H });
    const hasData = g.metrics.recall.some((v) => v !== null) || g.metrics.agree.some((v) => v !== null) || Object.values(g.metrics.acc).some((a) => a.some((v) => v !== null));
    const cov = g.coverage || { answers: {}, missing: {} };
    const have = Object.entries(cov.answers || {}).map(([k, v]) => k + " " + v).join(", ");
    const lacks = ["first_order", "second_order"].filter((k) => cov.missing && cov.missing[k]).map((k) => cov.missing[k]);
    if (!hasData) {
      const text = have
        ? "Metrics strip: accuracy and recall need role_assessment answers, agreement needs social_map and role_assessment; this game has usable " + have +
          (cov.battery ? " (battery " + cov.battery + ")" : "") + ". The vote panel (top-1 suspect against the vote) and belief dynamics read the suspicion rankings."
        : "Metrics strip: no usable probe answers in this game.";
      return h("div", { class: "strip-empty muted", id: "strip" }, text);
    }
    [0, 0.5, 1].forEach((v) => { svg.appendChild(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" })); svg.appendChild(s("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end", class: "tick" }, String(v))); });
    const path = (vals) => {
      let d = "", pen = false;
      vals.forEach((v, i) => { if (v === null) { pen = false; return; } d += (pen ? " L" : " M") + x(i).toFixed(1) + " " + y(v).toFixed(1); pen = true; });
      return d;
    };
    Object.entries(g.metrics.acc).forEach(([seat, vals]) => svg.appendChild(s("path", { d: path(vals), class: "line acc", stroke: PALETTE[seat % PALETTE.length], title: "first-order accuracy of " + g.roster[seat].name })));
    svg.appendChild(s("path", { d: path(g.metrics.recall), class: "line recall", title: "crowd recall of the hidden team" }));
    svg.appendChild(s("path", { d: path(g.metrics.agree), class: "line agree", title: "second-order agreement" }));
    const cursor = s("line", { x1: 0, x2: 0, y1: T, y2: H - B, class: "cursor" });
    svg.appendChild(cursor);
    const hit = s("rect", { x: L, y: 0, width: W - L - R, height: H, class: "hit" });
    hit.addEventListener("click", (e) => {
      const box = svg.getBoundingClientRect();
      const px = ((e.clientX - box.left) / box.width) * W;
      const i = Math.round(((px - L) / (W - L - R)) * (n - 1));
      onPick(Math.max(0, Math.min(n - 1, i)));
    });
    svg.appendChild(hit);
    const legend = h("div", { class: "legend" },
      h("span", { class: "key recall" }, "crowd recall of " + teamName(g, "mafia")), h("span", { class: "key agree" }, "second-order agreement"),
      g.roster.map((r) => h("span", { class: "key acc", style: null, dataset: { seat: r.seat } }, h("i", { class: "swatch", dataset: { c: r.seat % PALETTE.length } }), r.name + " accuracy")));
    legend.querySelectorAll("i.swatch").forEach((i) => { i.style.background = PALETTE[+i.dataset.c]; });
    const gaps = lacks.length ? h("p", { class: "muted strip-missing" }, "Not drawn: " + lacks.join(" · ")) : null;
    const plot = h("div", { class: "stripplot" }, h("span", { class: "axis-title y" }, "share (0–1)"), svg);
    const xTitle = h("div", { class: "axis-title x" }, "step of the game (click to jump)");
    return { el: h("div", { class: "stripbox" }, plot, xTitle, legend, gaps), move(i) { cursor.setAttribute("x1", x(i)); cursor.setAttribute("x2", x(i)); } };
  }

  function stepIndexFor(steps, seq) {
    if (seq === null || seq === undefined || isNaN(seq)) return steps.length - 1;
    let i = latestIndex(steps.map((q) => ({ s: q })), seq);
    return Math.max(0, i);
  }

  // ------------------------------------------------------------------ game (moderator) view
  function renderGame(row, g, step, index, r0, chain) {
    const root = clear(app());
    const names = g.roster.map((r) => r.name);
    root.appendChild(h("h1", null, "Game " + g.id));
    root.appendChild(h("p", { class: "muted", id: "game-facts" }, g.game_name + " rules " + g.rules_id + " · seed " + g.seed + " · source " + g.source + " · " + (g.winner ? "won by " + teamName(g, g.winner) : "unfinished")));
    const nb = notesBox(g.notes); if (nb) root.appendChild(nb);
    const seats = h("p", { class: "impersonate" }, "See it as: ", g.roster.map((r) => [h("a", { href: "#", class: "as-link", dataset: { seat: r.seat } }, r.name), " "]));
    root.appendChild(seats);
    const view = { view: "game", id: g.id, seat: null, update: null };
    const ext = EXT.game({ root, row, g, index, names, chain: chain || [row] });
    if (!g.steps.length) {
      root.appendChild(seatGraph(names.length, (i) => ({ fill: roleFill(g.roster[i].team, g.roster[i].role, g), label: names[i], sub: g.roster[i].role }), [], "truth"));
      seats.querySelectorAll("a.as-link").forEach((a) => { a.href = gameHash(g.id, null, +a.dataset.seat); });
      view.update = () => {};
      return view;
    }
    const bySeq = new Map(g.events.map((ev) => [ev.seq, ev]));
    const pick = (i) => { const q = g.steps[i]; history.replaceState(null, "", gameHash(g.id, q) + ext.suffix()); show(i); };
    const sc = scrubber(g.steps, 0, pick, "");
    root.appendChild(sc.el);
    const strip = metricsStrip(g, pick);
    root.appendChild(strip.el || strip);
    ext.timeline(pick);
    const tr = transcript(g.events, names, g);
    const graphBox = h("div", { class: "graphbox" });
    const voteBox = h("div", { class: "voteboxwrap" });
    const panels = h("div", { class: "panels", id: "panels" });
    const picker = readoutPicker(g, () => show(+sc.range.value));
    root.appendChild(h("div", { class: "grid" }, h("div", { class: "col-transcript" }, h("h3", null, "Transcript"), tr.el), h("div", { class: "col-graph" }, h("h3", null, "Ground truth"), graphBox), h("div", { class: "col-panels" }, h("h3", null, "Agents' beliefs", picker ? " " : null, picker), panels)));
    root.appendChild(h("section", { class: "votesection" }, h("h3", null, "Votes: the probe's prediction beside the transcript's"), voteBox));
    const truth = (t) => (g.roster[t] ? g.roster[t].role : null);
    function show(i) {
      const seq = g.steps[i];
      sc.range.value = i;
      sc.lab.textContent = (i + 1) + "/" + g.steps.length + " · " + stepLabel(bySeq.get(seq), names, g);
      tr.show(seq);
      if (strip.move) strip.move(i);
      const dead = deadAt(g.events, seq);
      clear(graphBox).appendChild(seatGraph(names.length, (k) => ({
        fill: roleFill(g.roster[k].team, g.roster[k].role, g), dead: dead.has(k), label: names[k], sub: g.roster[k].role + (dead.has(k) ? " †" : ""),
        title: names[k] + ": " + g.roster[k].role + " (" + teamName(g, g.roster[k].team) + "), " + g.roster[k].agent,
      }), voteEdges(g.events, seq), "truth"));
      clear(voteBox).appendChild(votePanel(g, seq, names));
      clear(panels);
      g.roster.forEach((r) => panels.appendChild(beliefCard(r.seat, names, latestProbes(g.probes[r.seat], seq), { subtitle: r.role + (dead.has(r.seat) ? " †" : "") + " · " + r.agent, truth })));
      seats.querySelectorAll("a.as-link").forEach((a) => { a.href = gameHash(g.id, seq, +a.dataset.seat); });
      ext.show(i, seq);
    }
    view.update = (stepSeq, r) => { show(stepIndexFor(g.steps, stepSeq)); ext.route(r || {}); };
    view.update(step, r0);
    return view;
  }

  // ------------------------------------------------------------------ impersonation view
  function renderAs(row, p, step, index) {
    const root = clear(app());
    const names = p.names;
    const view = { view: "as", id: p.id, seat: p.seat, update: null };
    const title = h("h1", null, "As " + p.name + (p.role ? " (" + p.role + ")" : ""));
    root.appendChild(title);
    const header = h("p", { class: "ashead", id: "ashead" });
    root.appendChild(header);
    root.appendChild(h("p", { class: "muted" }, "Only what this player could observe, as decided by the engine's visibility function at build time. ",
      h("a", { href: gameHash(p.id, step), id: "back-to-game" }, "Back to the full game")));
    if (p.teammates && p.teammates.length) root.appendChild(h("p", null, "Known teammates: " + p.teammates.map((m) => nm(names, m)).join(", ")));
    const nb = notesBox(p.notes); if (nb) root.appendChild(nb);
    if (!p.steps.length) {
      root.appendChild(h("p", { class: "note info" }, "This player observed no steps."));
      view.update = () => {};
      return view;
    }
    const bySeq = new Map(p.events.map((ev) => [ev.seq, ev]));
    const pick = (i) => { history.replaceState(null, "", gameHash(p.id, p.steps[i], p.seat)); show(i); };
    const sc = scrubber(p.steps, 0, pick, "");
    root.appendChild(sc.el);
    const g = p;
    const tr = transcript(p.events, names, g);
    const graphBox = h("div", { class: "graphbox" });
    const own = h("div", { class: "panels" });
    const ego = h("div", { class: "ego", id: "ego" });
    root.appendChild(h("div", { class: "grid" }, h("div", { class: "col-transcript" }, h("h3", null, "What " + p.name + " saw"), tr.el),
      h("div", { class: "col-graph" }, h("h3", null, "Subjective graph"), graphBox), h("div", { class: "col-panels" }, h("h3", null, "Own beliefs"), own)));
    root.appendChild(ego);
    const back = document.getElementById("back-to-game");
    // a teammate's role when its team has one role (werewolf7: "Werewolf"), so that it reads as the seat's own does
    function soleRole(team) { const rs = (p.roles || []).filter((r) => r.team === team); return rs.length === 1 ? rs[0].name : null; }
    function known(seq) { // roles this player knows for certain from its visible events
      const roles = {};
      for (const ev of p.events) {
        if (ev.seq > seq) break;
        if (ev.kind === "role_assigned") roles[ev.seat] = { role: ev.role, team: ev.team };
        else if (ev.kind === "team_revealed") ev.members.forEach((m) => { if (!roles[m]) roles[m] = { role: soleRole(ev.team), team: ev.team }; });
        else if (ev.kind === "elimination" && ev.role) roles[ev.seat] = { role: ev.role, team: null };
        else if (ev.kind === "game_end") ev.roles.forEach((r, k) => { roles[k] = { role: r, team: null }; });
      }
      return roles;
    }
    function show(i) {
      const seq = p.steps[i];
      sc.range.value = i;
      sc.lab.textContent = (i + 1) + "/" + p.steps.length + " · " + stepLabel(bySeq.get(seq), names, g);
      tr.show(seq);
      back.href = gameHash(p.id, seq);
      const latest = latestProbes(p.probes, seq);
      const ra = latest.role_assessment;
      const guesses = {};
      if (ra && ra.items) ra.items.forEach((it) => { if (it.t !== null) guesses[it.t] = it; });
      const dead = deadAt(p.events, seq), kn = known(seq);
      clear(graphBox).appendChild(seatGraph(names.length, (k) => {
        const K = kn[k], G = guesses[k];
        if (K) {
          const spec = K.role ? p.roles.find((r) => r.name === K.role) : null;
          const team = K.team || (spec ? spec.team : null);
          return { fill: K.role ? roleFill(team, K.role, p) : ROLE_COLOURS[team] || "#95a5a6", dead: dead.has(k), label: names[k], sub: (K.role || "member of " + teamName(p, K.team)) + " (known)", title: names[k] + ": known from what this player saw" };
        }
        const gspec = G && G.r ? p.roles.find((r) => r.name === G.r) : null;
        const fill = !G || !G.r || G.r === "Unknown" ? "#bdc3c7" : gspec ? roleFill(gspec.team, gspec.name, p) : ROLE_COLOURS.town;
        return { fill, dashed: true, dead: dead.has(k), label: names[k], sub: G ? (G.g || "?") + (G.c !== null && G.c !== undefined ? " " + num(G.c, 0) : "") : "no guess", title: G ? (G.why || "") : "no guess yet" };
      }, voteEdges(p.events, seq), "subjective"));
      clear(own).appendChild(beliefCard(p.seat, names, latest, { subtitle: p.role || "", hideSocial: true }));
      // ego panels
      const believed = {};
      const sm = latest.social_map;
      if (sm && sm.items) sm.items.forEach((it) => { if (it.t !== null && it.t !== p.seat) believed[it.t] = it; });
      const actual = {};
      for (const a of p.actual) { if (a.s <= seq) actual[a.b] = a; else break; }
      const agree = p.agree[i];
      clear(header).append(h("span", { class: "agree", id: "agreement" }, "Second-order agreement at this step: " + (agree === null || agree === undefined ? "– (no comparable pairs yet)" : pct(agree))));
      const others = names.map((_, k) => k).filter((k) => k !== p.seat && !(p.excluded || []).includes(k));
      const rowsB = others.map((k) => { const b = believed[k]; return h("tr", { title: b ? b.why || "" : "", class: "hoverreason" }, h("td", null, names[k]), h("td", { class: "att " + (b && b.a ? b.a : "none") }, b ? (b.a || "?") : "–"), h("td", { class: "num" }, b && b.c !== null && b.c !== undefined ? num(b.c, 0) : "")); });
      const rowsA = others.map((k) => { const a = actual[k], b = believed[k]; const match = a && b && b.a ? (a.a === b.a ? "✓" : "✗") : ""; return h("tr", null, h("td", null, names[k]), h("td", { class: "att " + (a ? a.a : "none") }, a ? a.a : "–"), h("td", { class: "num" }, a && a.c !== null && a.c !== undefined ? num(a.c, 0) : ""), h("td", null, match)); });
      clear(ego).append(
        h("div", { class: "egopanel", id: "ego-believed" }, h("h3", null, "Believed: how " + p.name + " thinks each player feels about it"), h("table", { class: "metrics" }, h("thead", null, h("tr", null, h("th", null, "player"), h("th", null, "attitude"), h("th", null, "conf."))), h("tbody", null, rowsB))),
        h("div", { class: "egopanel", id: "ego-actual" }, h("h3", null, "Actual: what they privately reported about " + p.name), h("table", { class: "metrics" }, h("thead", null, h("tr", null, h("th", null, "player"), h("th", null, "attitude"), h("th", null, "conf."), h("th", null, "agrees"))), h("tbody", null, rowsA)),
          h("p", { class: "muted" }, "From each player's latest role assessment of " + p.name + " at this step (hidden-team role with confidence ≥ 50: suspects; town role ≥ 50: trusts; else neutral). Their reasons are not shown here, since they may reveal what only they knew."))
      );
    }
    view.update = (stepSeq) => show(stepIndexFor(p.steps, stepSeq));
    view.update(step);
    return view;
  }
})();
