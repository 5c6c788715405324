/* mafialab viewer: branch trees, batch outcomes, comparisons, the sensitivity strip, the
 * bifurcation panel, belief dynamics and (on the served site only) the Branch dialog.
 *
 * Every number drawn here was computed in Python at build time (mafialab.counterfactual's
 * rate/compare_batches, mafialab.analysis's report_bifurcation and belief_dynamics) and read
 * from data/index.js or data/b/<game>.js; this file only draws them.
 * Safety rule as in app.js: strings from logs go in with textContent; never innerHTML.
 */
(function () {
  "use strict";
  const V = window.MAFIALAB_VIEWER;
  const { h, s, clear, load, pct, num, count, enc, app, gameHash, teamName, findRow, lineage } = V;
  const TEAMS = ["town", "mafia"];
  const apiMeta = document.querySelector('meta[name="mafialab-api"]');
  const API = apiMeta ? apiMeta.getAttribute("content") : null; // only the served site has it
  // the served page's token: sent back on every API call, so the server knows the call comes from its own page
  const csrfMeta = document.querySelector('meta[name="mafialab-csrf"]');
  const CSRF = csrfMeta ? csrfMeta.getAttribute("content") : "";

  const loadBranches = (row, fresh) => load("branches", row.id, "data/b/" + row.file + ".js", fresh);
  // rows live in the dashboard's pages (data/index.js has none): a view looks up the rows it
  // needs first (rowsOf loads at most their pages), then draws with them
  async function rowsOf(index, ids) {
    const out = new Map();
    for (const id of new Set(ids)) { const row = await findRow(index, id); if (row) out.set(id, row); }
    return out;
  }
  const batchesOf = (index, id) => (index.batches || []).filter((b) => b.parent === id);
  const rateText = (r) => (r.n ? r.k + "/" + r.n + " = " + pct(r.p) + (r.lo !== null ? " [" + pct(r.lo) + ", " + pct(r.hi) + "]" : "") : "–");
  // a winner as the game's rule set names the team ("Werewolves"), from the game's row or its parent's
  const winnerText = (row, w) => (w ? teamName(row || {}, w) : "unfinished");
  // "Werewolves win", "Mafia wins": the verb agrees with the team's name (mafialab._words.verb_for)
  const teamWins = (g, t) => {
    const name = teamName(g || {}, t);
    const last = name.split("/").pop().trim().split(/\s+/).pop();
    return name + (/(^|[^s])s$/.test(last) ? " win" : " wins");
  };
  const stepText = (b) => "step " + b.step + (b.at ? " (" + b.at + (b.kind ? ", " + b.kind : "") + ")" : "");

  // ------------------------------------------------------------------ tree
  function outcomeCounts(b, g) {
    return TEAMS.map((t) => teamName(g || {}, t) + " " + b[t].k).join(" / ") + (b.unfinished ? " / unfinished " + b.unfinished : "");
  }

  // rows: the drawn page's rows by id; a branch whose row is on another page is named by its parent's rule set (a fork keeps it)
  function tree(index, id, depth, rows, prow) {
    const bs = batchesOf(index, id);
    if (!bs.length || depth > 8) return null;
    const row = rows.get(id) || prow;
    return h("ul", { class: "branchtree", dataset: { parent: id } }, bs.map((b) => h("li", { class: "batchnode", dataset: { batch: b.batch } },
      h("a", { href: "#/batch/" + enc(b.batch), class: "batchlink" }, stepText(b)), " · ", h("span", { class: "ivlabel" }, b.label),
      " · " + count(b.replicas, "replica") + " · ", h("span", { class: "counts" }, outcomeCounts(b, row)), " ",
      miniStrip(b, row),
      h("ul", { class: "branches" }, b.games.map((gid, k) => h("li", { class: "branchnode", dataset: { game: gid } },
        h("a", { href: gameHash(gid, null) }, gid), " → " + winnerText(rows.get(gid) || row, b.winners[k]), tree(index, gid, depth + 1, rows, row)))))));
  }

  function miniStrip(b, g) {
    const W = 120, H = 10, n = b.replicas || 1;
    const svg = s("svg", { class: "ministrip", viewBox: "0 0 " + W + " " + H, width: W, height: H, preserveAspectRatio: "none", title: outcomeCounts(b, g) + " of " + b.replicas });
    let x = 0;
    for (const t of TEAMS) { const w = (W * b[t].k) / n; svg.appendChild(s("rect", { x, y: 0, width: w, height: H, class: "seg " + t })); x += w; }
    svg.appendChild(s("rect", { x, y: 0, width: W - x, height: H, class: "seg unfinished" }));
    return svg;
  }

  // rows: this page's rows; row.under_parent (computed at build time over the whole site) marks a
  // branch whose parent is in the site: it is drawn in its parent's tree, not as a row of its own
  V.ext.dashboard = function (index, body, ncols, rows) {
    const byId = new Map(rows.map((g) => [g.id, g]));
    for (const tr of Array.from(body.children)) {
      const row = byId.get(tr.dataset.game);
      if (row && row.under_parent) { tr.hidden = true; tr.classList.add("branchrow"); continue; }
      if (row && batchesOf(index, row.id).length) {
        tr.after(h("tr", { class: "treerow", dataset: { treeOf: row.id } }, h("td", { colspan: ncols }, h("span", { class: "muted" }, "branches of " + row.id + ":"), tree(index, row.id, 0, byId, row))));
      }
    }
    const nested = index.pages.nested || 0;
    if (nested) {
      const h1 = app().querySelector("h1");
      if (h1) h1.textContent = "Games (" + (index.pages.total - nested) + " + " + count(nested, "branch", "branches") + ", drawn under their parents)";
    }
  };

  // ------------------------------------------------------------------ outcome strip and comparison
  function outcomeStrip(b, g, id) {
    const W = 600, H = 34, n = b.replicas || 1;
    const svg = s("svg", { class: "outcome", id, viewBox: "0 0 " + W + " " + H, width: "100%", height: H, preserveAspectRatio: "none" });
    let x = 0;
    for (const t of TEAMS) {
      const w = (W * b[t].k) / n;
      svg.appendChild(s("rect", { x, y: 0, width: w, height: H, class: "seg " + t, title: teamName(g, t) + ": " + rateText(b[t]) }));
      x += w;
    }
    svg.appendChild(s("rect", { x, y: 0, width: W - x, height: H, class: "seg unfinished", title: "unfinished: " + b.unfinished }));
    const legend = h("div", { class: "legend outcome-legend" }, TEAMS.map((t) => h("span", { class: "key " + t, dataset: { team: t } }, "P(" + teamWins(g, t) + ") " + rateText(b[t]))),
      h("span", { class: "key n" }, "n = " + b.n + " finished of " + b.replicas + (b.unfinished ? " (" + b.unfinished + " unfinished)" : "")));
    return h("div", { class: "outcomebox", dataset: { batch: b.batch } }, svg, legend);
  }

  async function renderBatch(index, r) {
    const root = clear(app());
    const b = (index.batches || []).find((x) => x.batch === r.batch);
    if (!b) { V.renderError("No batch " + JSON.stringify(r.batch) + " in this site."); return; }
    const rows = await rowsOf(index, [b.parent, ...b.games]);
    const prow = rows.get(b.parent);
    root.appendChild(crumbs(prow ? await lineage(index, prow) : [], "batch " + b.batch));
    root.appendChild(h("h1", null, "Batch " + b.batch));
    root.appendChild(h("p", { class: "muted" }, "Fork of ", prow ? h("a", { href: gameHash(b.parent, null) }, b.parent) : b.parent, " at " + stepText(b) + " · ", h("span", { class: "ivlabel", id: "iv" }, b.label)));
    root.appendChild(h("h2", null, "Outcome"));
    root.appendChild(outcomeStrip(b, prow || {}, "outcome"));
    root.appendChild(h("ol", { class: "branches", id: "batch-branches" }, b.games.map((gid, k) => h("li", null, h("a", { href: gameHash(gid, null) }, gid), " → " + winnerText(rows.get(gid) || prow, b.winners[k])))));
    const others = batchesOf(index, b.parent).filter((x) => x.batch !== b.batch);
    if (others.length) {
      root.appendChild(h("h2", null, "Compare with another batch of the same parent"));
      root.appendChild(h("ul", { class: "compare-links" }, others.map((o) => h("li", null, h("a", { href: "#/compare/" + enc(b.batch) + "/" + enc(o.batch) }, o.batch + " · " + stepText(o) + " · " + o.label)))));
    }
  }

  // a precomputed comparison of B with A read as A with B: the sides swap, each difference and
  // its Newcombe interval change sign (the interval is antisymmetric), the two-sided Fisher p stays
  function flipped(cmp) {
    const neg = (x) => (x === null ? null : -x);
    const difference = {};
    for (const t of TEAMS) { const d = cmp.difference[t]; difference[t] = { diff: neg(d.diff), lo: neg(d.hi), hi: neg(d.lo), fisher_p: d.fisher_p }; }
    return { a: cmp.b, b: cmp.a, difference };
  }

  async function renderCompare(index, r) {
    const root = clear(app());
    const A = (index.batches || []).find((x) => x.batch === r.a), B = (index.batches || []).find((x) => x.batch === r.b);
    if (!A || !B) { V.renderError("No batch " + JSON.stringify(!A ? r.a : r.b) + " in this site."); return; }
    if (A.parent !== B.parent) { V.renderError("Batches " + r.a + " and " + r.b + " fork different games; comparisons are between batches of one parent."); return; }
    const prow = await findRow(index, A.parent);
    if (!prow) { V.renderError("No game " + JSON.stringify(A.parent) + " in this site."); return; }
    const bf = await loadBranches(prow);
    // the site stores each pair once, in its own order; the page shows A as the URL names it first
    const stored = bf.comparisons[A.batch + "|" + B.batch], rev = bf.comparisons[B.batch + "|" + A.batch];
    const cmp = stored || (rev ? flipped(rev) : null);
    root.appendChild(crumbs(await lineage(index, prow), "compare"));
    root.appendChild(h("h1", null, "Compare " + A.batch + " with " + B.batch));
    if (!cmp) { root.appendChild(h("p", { class: "note warn" }, "No precomputed comparison (more than 40 batches of this parent): use `mafialab fork compare`.")); return; }
    root.appendChild(h("div", { class: "compare", id: "compare" },
      h("div", { class: "side", dataset: { side: "a", batch: A.batch } }, h("h3", null, "A: " + A.batch + " · " + stepText(A)), h("p", { class: "ivlabel" }, A.label), outcomeStrip(A, prow || {}, "outcome-a")),
      h("div", { class: "side", dataset: { side: "b", batch: B.batch } }, h("h3", null, "B: " + B.batch + " · " + stepText(B)), h("p", { class: "ivlabel" }, B.label), outcomeStrip(B, prow || {}, "outcome-b"))));
    root.appendChild(h("table", { class: "metrics", id: "delta" }, h("thead", null, h("tr", null, ["team", "P(win) A", "P(win) B", "Δ A − B", "95% Newcombe", "Fisher p"].map((t) => h("th", null, t)))),
      h("tbody", null, TEAMS.map((t) => { const d = cmp.difference[t]; return h("tr", { dataset: { team: t } }, h("td", null, t), h("td", { class: "num" }, rateText(cmp.a[t])), h("td", { class: "num" }, rateText(cmp.b[t])),
        h("td", { class: "num delta" }, d.diff === null ? "–" : num(d.diff, 3)), h("td", { class: "num" }, d.lo === null ? "–" : "[" + num(d.lo, 3) + ", " + num(d.hi, 3) + "]"), h("td", { class: "num" }, V.pval(d.fisher_p))); }))));
    root.appendChild(h("p", { class: "muted" }, "Computed at build time by mafialab.counterfactual.compare_batches (the numbers of `mafialab fork compare A B`): finished branches only, Newcombe hybrid score interval, two-sided Fisher exact test."));
  }

  V.ext.page = async function (index, r) {
    if (r.view === "batch") return renderBatch(index, r);
    return renderCompare(index, r);
  };

  // ------------------------------------------------------------------ game page pieces
  // chain: rows from the root game down (V.lineage)
  function crumbs(chain, last) {
    const nav = h("nav", { class: "breadcrumb", id: "breadcrumb" }, h("a", { href: "#/" }, "Dashboard"));
    chain.forEach((g, k) => {
      const next = chain[k + 1];
      const at = next && next.parent && next.parent.fork_seq !== null ? next.parent.fork_seq : null;
      nav.append(" › ", h("a", { href: gameHash(g.id, at), dataset: { game: g.id } }, g.id));
    });
    if (last) nav.append(" › ", h("span", null, last));
    return nav;
  }

  function timelineX(n) { const W = 900, L = 30, R = 8; return (i) => L + (n <= 1 ? 0 : (i / (n - 1)) * (W - L - R)); }

  function sensitivityStrip(g, sens, pick) {
    const n = g.steps.length, W = 900, H = 26, x = timelineX(n);
    const svg = s("svg", { class: "sens", id: "sensitivity", viewBox: "0 0 " + W + " " + H, preserveAspectRatio: "none", width: "100%", height: H });
    const pts = sens.map((p) => ({ p, i: V.stepIndexFor(g.steps, g.decision_seq[p.step]) }));
    pts.forEach(({ p, i }, k) => {
      const x0 = k === 0 ? x(0) : (x(pts[k - 1].i) + x(i)) / 2, x1 = k === pts.length - 1 ? x(n - 1) : (x(i) + x(pts[k + 1].i)) / 2;
      const town = p.town.p;
      const cell = s("rect", { x: x0, y: 0, width: Math.max(1, x1 - x0), height: H, class: "cell", dataset: { step: p.step, town: town === null ? "" : town },
        title: "step " + p.step + (p.at ? " (" + p.at + ")" : "") + ": P(" + teamWins(g, "town") + ") " + rateText(p.town) + " · P(" + teamWins(g, "mafia") + ") " + rateText(p.mafia) });
      cell.style.fill = town === null ? "#ddd" : "rgb(" + Math.round(192 * (1 - town) + 46 * town) + "," + Math.round(57 * (1 - town) + 134 * town) + "," + Math.round(43 * (1 - town) + 193 * town) + ")";
      cell.addEventListener("click", () => pick(i));
      svg.appendChild(cell);
      svg.appendChild(s("line", { x1: x(i), x2: x(i), y1: 0, y2: H, class: "tick" }));
    });
    return h("div", { class: "sensbox" }, h("div", { class: "legend" }, h("span", null, "Sensitivity (fork sweep): P(" + teamWins(g, "town") + ") after resampling each step — blue " + teamName(g, "town") + ", red " + teamName(g, "mafia") + "; hover for n and intervals")), svg);
  }

  const QUAD = { correct_good: "CG", policy_gap: "PG", perception_gap: "PE", luck: "LK", random: "RND" };

  function badgeRow(g, bifs, gid) {
    const n = g.steps.length, x = timelineX(n);
    const box = h("div", { class: "badges", id: "bif-badges" });
    bifs.forEach((bif) => bif.points.forEach((p) => {
      const seq = p.decision !== null ? g.decision_seq[p.decision] : null;
      const i = seq === undefined || seq === null ? 0 : V.stepIndexFor(g.steps, seq);
      const q = p.report ? p.report.quadrant : null;
      const a = h("a", { class: "badge q-" + (q || "none"), href: gameHash(gid, seq === undefined ? null : seq) + "/bif/" + enc(p.point_id), dataset: { point: p.point_id }, title: p.point_id + " · quadrant " + (q || "unknown") }, QUAD[q] || (q || "?"));
      a.style.left = (100 * x(i) / 900).toFixed(2) + "%";
      box.appendChild(a);
    }));
    return box;
  }

  function gauge(label, value, text, id) {
    const W = 220, H = 14;
    const svg = s("svg", { class: "gauge", viewBox: "0 0 " + W + " " + H, width: W, height: H });
    svg.appendChild(s("rect", { x: 0, y: 0, width: W, height: H, class: "track" }));
    if (value !== null && value !== undefined) svg.appendChild(s("rect", { x: 0, y: 0, width: W * value, height: H, class: "fill" }));
    return h("div", { class: "gaugebox", id }, h("span", { class: "glabel" }, label), svg, h("span", { class: "gvalue" }, text));
  }

  function bifPanel(g, bifs, pid) {
    const gid = g.id;
    for (const bif of bifs) {
      const p = bif.points.find((x) => x.point_id === pid);
      if (!p) continue;
      const rp = p.report || {};
      // a team vote (mission games) has a choice (approve/reject) where a day vote has a target, and no quadrant
      const team = rp.kind === "team_vote";
      const what = team ? "choice" : "target";
      const factual = team ? (rp.factual_choice || "(no vote)") : (rp.factual_target || "no vote");
      const panel = h("section", { class: "bifpanel", id: "bifpanel", dataset: { point: pid } });
      panel.append(h("h3", null, "Bifurcation point " + pid), h("p", { class: "muted" }, "experiment " + bif.experiment + " (" + bif.path + ") · voter " + rp.voter + (team ? " · team vote" : " · quadrant " + (rp.quadrant || "unknown")) + " · factual " + what + " " + factual + " · parent winner " + (p.parent_winner ? winnerText(g, p.parent_winner) : "–")));
      panel.append(gauge("lock-in (modal concentration)", rp.modal_concentration, num(rp.modal_concentration, 3) + (rp.factual_is_modal === null ? "" : rp.factual_is_modal ? " · factual " + what + " is modal" : " · factual " + what + " is not modal"), "lockin"));
      panel.append(gauge("flip share", rp.flip_share, rp.forks ? rp.flips + "/" + rp.forks + " = " + num(rp.flip_share, 3) : "–", "flipgauge"));
      const counts = Object.entries((team ? rp.choice_counts : rp.target_counts) || {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      const total = counts.reduce((a, c) => a + c[1], 0);
      panel.append(h("h4", null, "Resample " + what + "s (" + total + " samples)"), h("table", { class: "metrics", id: "targets" }, h("tbody", null, counts.map(([t, c]) => h("tr", { dataset: { target: t } }, h("td", null, t), h("td", { class: "num" }, c), h("td", null, h("span", { class: "bar" }, "")))))));
      panel.querySelectorAll("#targets tr").forEach((tr, k) => { tr.querySelector(".bar").style.width = (160 * counts[k][1] / Math.max(1, total)).toFixed(1) + "px"; });
      panel.append(h("h4", null, "Kept variants"), h("table", { class: "metrics", id: "variants" },
        h("thead", null, h("tr", null, ["#", "kept as", what, "samples", "injected text", "winner", "flip", "fork"].map((t) => h("th", null, t)))),
        h("tbody", null, p.variants.map((v) => h("tr", { dataset: { variant: v.variant_idx } }, h("td", { class: "num" }, v.variant_idx), h("td", null, v.stage || v.source), h("td", null, team ? (v.choice || "(no vote)") : (v.vote_target || "no vote")), h("td", { class: "num", title: "resamples with this same answer (identical answers are one variant)" }, v.count === null || v.count === undefined ? "–" : v.count),
          h("td", { class: "vtext" }, v.text === null ? "(not recorded)" : v.text), h("td", null, v.winner ? winnerText(g, v.winner) : v.error ? "failed: " + v.error : "unfinished"), h("td", null, v.flipped === null ? "–" : v.flipped ? "yes" : "no"),
          h("td", null, v.fork_id ? h("a", { href: gameHash(v.fork_id, null), class: "forklink" }, "open fork") : "–"))))));
      panel.append(h("p", { class: "muted" }, "Numbers from mafialab.analysis.report_bifurcation at build time (= `mafialab bifurcate report --format json`). ", h("a", { href: gameHash(gid, null) }, "close")));
      return panel;
    }
    return h("p", { class: "note warn", id: "bifpanel" }, "No bifurcation point " + JSON.stringify(pid) + " in this game.");
  }

  function dynamicsStrip(g) {
    const d = g.dynamics;
    if (!d || !d.rounds.length) return h("div", { class: "strip-empty muted", id: "dynamics" }, "Belief dynamics: no consecutive suspicion rankings in this game.");
    const W = 900, H = 70, L = 30, T = 6, B = 16, n = d.rounds.length, bw = (W - L - 8) / n;
    const y = (v) => T + (1 - Math.min(1, v)) * (H - T - B);
    const svg = s("svg", { class: "dyn", viewBox: "0 0 " + W + " " + H, preserveAspectRatio: "none", width: "100%", height: H });
    [0, 0.5, 1].forEach((v) => svg.appendChild(s("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end", class: "tick" }, String(v))));
    d.rounds.forEach((r, k) => {
      const x0 = L + k * bw;
      if (r.volatility !== null) svg.appendChild(s("rect", { x: x0 + 2, y: y(r.volatility / 2), width: bw / 2 - 3, height: y(0) - y(r.volatility / 2), class: "vol", dataset: { round: r.round }, title: "round " + r.round + ": volatility " + num(r.volatility, 3) + " over " + r.volatility_pairs + " pairs (L1, 0–2; drawn halved)" }));
      if (r.flip_rate !== null) svg.appendChild(s("rect", { x: x0 + bw / 2, y: y(r.flip_rate), width: bw / 2 - 3, height: y(0) - y(r.flip_rate), class: "flip", dataset: { round: r.round }, title: "round " + r.round + ": top-suspect flip rate " + num(r.flip_rate, 3) + " over " + r.flip_pairs + " pairs" }));
      svg.appendChild(s("text", { x: x0 + bw / 2, y: H - 3, "text-anchor": "middle", class: "tick" }, "R" + r.round));
    });
    if (d.retest) svg.appendChild(s("line", { x1: L, x2: W - 8, y1: y(d.retest.flip_rate), y2: y(d.retest.flip_rate), class: "floor", title: "retest floor: flip rate " + num(d.retest.flip_rate, 3) + " over " + d.retest.pairs + " repeat pairs" }));
    const all = d.all || {};
    return h("div", { class: "dynbox", id: "dynamics" }, svg, h("div", { class: "legend" },
      h("span", { class: "key vol" }, "suspicion volatility (L1/2) per round" + (all.volatility !== null && all.volatility !== undefined ? ", game " + num(all.volatility, 3) : "")),
      h("span", { class: "key flip" }, "top-suspect flip rate per round" + (all.flip_rate !== null && all.flip_rate !== undefined ? ", game " + num(all.flip_rate, 3) : "")),
      d.retest ? h("span", { class: "key floor", id: "retest-floor" }, "retest floor " + num(d.retest.flip_rate, 3) + " (" + d.retest.pairs + " pairs)") : h("span", { class: "muted" }, "no retest floor (run `mafialab retest`)")));
  }

  V.ext.game = function (ctx) {
    const { root, row, g, index, chain } = ctx;
    const state = { bif: null, bf: null, pick: null, panelBox: h("div", { class: "bifbox" }) };
    const h1 = root.querySelector("h1");
    const isBranch = row.parent && row.under_parent; // its parent is in the site
    if (row.parent) {
      root.insertBefore(crumbs(chain, null), h1);
      const p = row.parent;
      h1.after(h("p", { class: "forknote", id: "forknote" }, "Branch of ", isBranch ? h("a", { href: gameHash(p.game_id, p.fork_seq) }, p.game_id) : p.game_id,
        " forked at step " + p.step + (p.at ? " (" + p.at + ")" : "") + (p.fork_seq !== null ? ", event #" + p.fork_seq : "") + " · ", h("span", { class: "ivlabel" }, p.label),
        " · ", h("a", { href: "#/batch/" + enc(p.batch) }, "batch " + p.batch + ", replica " + p.replica), ". Events before the fork are the parent's (dimmed)."));
    }
    const extras = h("div", { class: "branch-extras" });
    const belowStrip = h("div", { class: "timeline-extras" });
    const bfReady = row.branches ? loadBranches(row).catch(() => null) : Promise.resolve(null);
    if (batchesOf(index, g.id).length) extras.append(h("h3", null, "Branches"), tree(index, g.id, 0, new Map([[row.id, row]]), row));
    if (API) extras.append(branchButton(ctx));
    Promise.resolve().then(() => root.append(extras)); // after the rest of the page (renderGame runs to its end first)
    return {
      suffix: () => (state.bif ? "/bif/" + enc(state.bif) : ""),
      timeline(pick) {
        state.pick = pick;
        const strip = root.querySelector(".stripbox, #strip");
        if (strip) strip.after(belowStrip);
        belowStrip.append(dynamicsStrip(g));
        bfReady.then((bf) => {
          state.bf = bf;
          if (!bf) return;
          if (bf.sensitivity.length) belowStrip.prepend(sensitivityStrip(g, bf.sensitivity, pick));
          if (bf.bifurcations.length) { belowStrip.prepend(badgeRow(g, bf.bifurcations, g.id)); belowStrip.after(state.panelBox); }
          if (state.bif) clear(state.panelBox).append(bifPanel(g, bf.bifurcations, state.bif));
        });
      },
      show(i, seq) {
        const fs = row.parent ? row.parent.fork_seq : null;
        if (fs === null || fs === undefined) return;
        root.querySelectorAll("#transcript li").forEach((li) => {
          const q = +li.dataset.seq;
          li.classList.toggle("prefix", q < fs);
          li.classList.toggle("forkstep", q === fs);
        });
      },
      route(r) {
        state.bif = r.bif || null;
        if (!state.bif) { clear(state.panelBox); return; }
        if (state.bf) clear(state.panelBox).append(bifPanel(g, state.bf.bifurcations, state.bif));
      },
    };
  };

  // ------------------------------------------------------------------ served site: the Branch dialog
  function token() { try { return sessionStorage.getItem("mafialab-token") || ""; } catch (e) { return ""; } }
  V.token = token;
  async function api(method, path, body) {
    const headers = { "Content-Type": "application/json", "X-Mafialab-CSRF": CSRF };
    const t = token();
    if (t) headers.Authorization = "Bearer " + t;
    const res = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    let data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (!res.ok) throw new Error((data && data.detail ? (typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail)) : res.statusText) + " (HTTP " + res.status + ")");
    return data;
  }

  V.api = api; // the Arena panel (arena.js) calls the API the same way: page token, bearer token

  function branchButton(ctx) {
    const btn = h("button", { type: "button", id: "branch-button" }, "Branch from this step…");
    const box = h("div", { class: "branchdialog", id: "branch-dialog", hidden: true });
    btn.addEventListener("click", () => openDialog(ctx, box));
    return h("div", { class: "branchctl" }, btn, box);
  }

  async function openDialog(ctx, box) {
    const { g } = ctx;
    box.hidden = false;
    clear(box).append(h("p", { class: "muted" }, "Loading steps…"));
    let info;
    try { info = await api("GET", "info"); } catch (e) { clear(box).append(h("p", { class: "note warn", id: "branch-error" }, e.message)); return; }
    if (info.auth && !token()) {
      const tok = h("input", { id: "branch-token", type: "password", placeholder: "bearer token" });
      const ok = h("button", { type: "button", id: "branch-token-ok" }, "Use token");
      ok.addEventListener("click", () => { try { sessionStorage.setItem("mafialab-token", tok.value); } catch (e) { /* private mode */ } openDialog(ctx, box); });
      clear(box).append(h("label", null, "This server needs its bearer token: ", tok), ok);
      return;
    }
    let steps;
    try { steps = await api("GET", "games/" + enc(g.id) + "/steps"); } catch (e) {
      if (/HTTP 401/.test(e.message)) { try { sessionStorage.removeItem("mafialab-token"); } catch (x) { /* ignore */ } }
      clear(box).append(h("p", { class: "note warn", id: "branch-error" }, e.message));
      return;
    }
    const seq = +((location.hash.match(/\/step\/(\d+)/) || [])[1] || g.steps[g.steps.length - 1]);
    // the first forkable decision answered at or after the current step
    const at = steps.steps.find((st) => st.seq !== null && st.seq >= seq) || steps.steps[steps.steps.length - 1];
    const sel = h("select", { id: "branch-step" }, steps.steps.map((st) => h("option", { value: st.id, selected: st === at ? "selected" : null }, st.id + " · " + st.label + " · " + st.name + " " + st.kind + " " + st.done)));
    const kind = h("select", { id: "branch-kind" }, [["resample", "none (resample)"], ["inject", "replace utterance"], ["belief", "inject belief"], ["night", "night action"]].map(([v, t]) => h("option", { value: v }, t)));
    const text = h("textarea", { id: "branch-text", rows: 2, placeholder: "utterance or belief text" });
    const target = h("input", { id: "branch-target", placeholder: "target name (inject) or seat (night)" });
    const seat = h("input", { id: "branch-seat", type: "number", min: 0, placeholder: "seat (belief/night)" });
    const n = h("input", { id: "branch-n", type: "number", min: 1, max: 50, value: 2 });
    const agents = h("input", { id: "branch-agents", placeholder: "agents (default: the parent's)", value: "" });
    const est = h("p", { class: "muted", id: "branch-estimate" });
    const status = h("p", { id: "branch-status", class: "muted" });
    const go = h("button", { type: "button", id: "branch-go" }, "Start fork");
    const body = () => {
      const iv = { type: kind.value };
      if (kind.value === "inject") { iv.text = text.value || null; iv.target = target.value || null; }
      if (kind.value === "belief") { iv.seat = +seat.value; iv.text = text.value; }
      if (kind.value === "night") { iv.seat = +seat.value; iv.target = +target.value; }
      return { game: g.id, step: +sel.value, intervention: iv, replicas: +n.value, agents: agents.value || null };
    };
    const estimate = async () => {
      try {
        const e = await api("GET", "games/" + enc(g.id) + "/estimate?step=" + enc(sel.value) + "&replicas=" + enc(n.value));
        est.textContent = "Estimate: " + count(Math.round(e.calls), "model call") + (e.cost_usd === null ? " (unpriced)" : ", $" + num(e.cost_usd, 4)) + " · " + e.basis;
      } catch (err) { est.textContent = "Estimate unavailable: " + err.message; }
    };
    sel.addEventListener("change", estimate); n.addEventListener("change", estimate);
    go.addEventListener("click", async () => {
      go.disabled = true;
      status.textContent = "Starting…";
      try {
        const job = await api("POST", "forks", body());
        poll(ctx, job.id, status, go);
      } catch (err) { status.textContent = "Refused: " + err.message; go.disabled = false; }
    });
    clear(box).append(
      h("label", null, "step ", sel), h("label", null, "intervention ", kind), h("label", null, "text ", text), h("label", null, "target ", target), h("label", null, "seat ", seat),
      h("label", null, "replicas ", n), h("label", null, "agents ", agents), est, go, status);
    estimate();
  }

  async function poll(ctx, id, status, go) {
    let job;
    try { job = await api("GET", "jobs/" + enc(id)); } catch (err) { status.textContent = "Lost the job: " + err.message; go.disabled = false; return; }
    status.dataset.state = job.state;
    status.textContent = "Job " + job.id + ": " + job.state + " · done " + job.done + ", running " + job.running + ", failed " + job.failed + " of " + job.total + (job.eta_s !== null ? " · ETA " + num(job.eta_s, 0) + " s" : "") + (job.error ? " · " + job.error : "");
    if (job.state === "running" || job.state === "queued") { setTimeout(() => poll(ctx, id, status, go), 400); return; }
    go.disabled = false;
    if (job.state === "done") {
      // the new branches are in data/index.js and the parent's branch file: reload those two, redraw
      const index = await V.reloadIndex();
      const row = await findRow(index, ctx.g.id);
      if (row && row.branches) await loadBranches(row, true);
      await V.rerender();
      const box = document.getElementById("branch-dialog");
      if (box) { box.hidden = false; clear(box).append(h("p", { id: "branch-status", dataset: { state: "done" } }, status.textContent + " · new branches: " + job.branches.join(", "))); }
    }
  }
})();
