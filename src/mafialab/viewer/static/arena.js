/* mafialab viewer: the Arena panel (#/arena), on the served site only (mafialab view DIR --serve).
 *
 * Pick a built-in rule set, seat the agent specs the person who started the server allowed
 * (--allow-agents: the server checks every spec again and refuses anything else), see the
 * estimated cost (computed by the server), launch a batch or a season, and watch the jobs;
 * finished games are added to the site by the server and appear on the dashboard.
 * Safety rule as in app.js: strings from the server go in with textContent; never innerHTML.
 */
(function () {
  "use strict";
  const V = window.MAFIALAB_VIEWER;
  const { h, clear, num, count, app, gameHash } = V;
  const apiMeta = document.querySelector('meta[name="mafialab-api"]');
  if (!apiMeta || !V.api) return; // the static build: no panel, no nav link
  const api = V.api;

  const nav = document.querySelector("header.top nav");
  if (nav) nav.appendChild(h("a", { href: "#/arena", id: "nav-arena" }, "Arena"));

  let pollTimer = null;
  const seen = new Map(); // job id -> "done:state" when last drawn (a change reloads the site index)

  function jobLine(j) {
    const li = h("li", { class: "arenajob", dataset: { job: j.id, state: j.state } },
      h("strong", null, j.id), " · " + j.kind + " · " + j.rules + " · ",
      h("span", { class: "jobstate" }, j.state),
      " · done " + j.done + ", running " + j.running + ", failed " + j.failed + " of " + j.total +
      (j.eta_s !== null && j.eta_s > 0 ? " · ETA " + num(j.eta_s, 0) + " s" : "") +
      " · estimated cost: " + (j.cost && j.cost.text ? j.cost.text : "unknown") + " · in " + j.folder + "/");
    if (j.error) li.append(h("div", { class: "note warn" }, j.error));
    if (j.season && (j.state === "done" || j.state === "failed")) li.append(h("div", null, h("a", { href: "#/season/" + encodeURIComponent(j.season), class: "seasonlink" }, "season page: " + j.season)));
    if (j.games.length) li.append(h("div", { class: "arenagames" }, "games: ", ...j.games.flatMap((g, k) => [k ? ", " : "", h("a", { href: gameHash(g, null) }, g)])));
    return li;
  }

  async function pollJobs(list) {
    pollTimer = null;
    if (!document.body.contains(list)) return; // left the panel
    let jobs;
    try { jobs = await api("GET", "arena/jobs"); } catch (e) { clear(list).append(h("li", { class: "note warn" }, e.message)); return; }
    let grew = false;
    // a job with more games done, or just finished (a season's page is written last), changed the site
    for (const j of jobs) { const key = j.done + ":" + j.state; if (seen.has(j.id) ? seen.get(j.id) !== key : j.done > 0) grew = true; seen.set(j.id, key); }
    if (grew) await V.reloadIndex(); // the new games are in data/index.js and the dashboard pages
    clear(list).append(...(jobs.length ? jobs.slice().reverse().map(jobLine) : [h("li", { class: "muted" }, "No arena jobs yet.")]));
    if (jobs.some((j) => j.state === "queued" || j.state === "running")) pollTimer = setTimeout(() => pollJobs(list), 500);
  }

  function tokenForm(again) {
    const tok = h("input", { id: "arena-token", type: "password", placeholder: "bearer token" });
    const ok = h("button", { type: "button", id: "arena-token-ok" }, "Use token");
    ok.addEventListener("click", () => { try { sessionStorage.setItem("mafialab-token", tok.value); } catch (e) { /* private mode */ } again(); });
    return h("p", null, h("label", null, "This server needs its bearer token: ", tok), " ", ok);
  }

  V.ext.arena = async function () {
    const root = clear(app());
    root.append(h("h1", null, "Arena"), h("p", { class: "muted" }, "Launch seeded games of the agents this server allows; they are written under the served folder and appear on the dashboard as they finish."));
    let info;
    try { info = await api("GET", "arena"); } catch (e) {
      if (/HTTP 401/.test(e.message)) { try { sessionStorage.removeItem("mafialab-token"); } catch (x) { /* ignore */ } root.append(tokenForm(() => V.ext.arena())); }
      else root.append(h("p", { class: "note warn", id: "arena-error" }, e.message));
      return;
    }
    if (info.auth && !V.token()) { root.append(tokenForm(() => V.ext.arena())); return; }
    if (!info.agents.length) {
      root.append(h("p", { class: "note warn", id: "arena-error" }, "This server allows no agents: start it with --allow-agents SPEC,... (for example scripted,random)."));
      return;
    }
    const rules = h("select", { id: "arena-rules" }, info.rules.map((r) => h("option", { value: r.name }, r.name + " · " + count(r.seats, "seat"))));
    const kind = h("select", { id: "arena-kind" }, [["batch", "batch: the line-up below, seat by seat"], ["season", "season: the line-up's agents as a roster, seated by the arena"]].map(([v, t]) => h("option", { value: v }, t)));
    const games = h("input", { id: "arena-games", type: "number", min: 1, max: info.max_games, value: 2 });
    const seed = h("input", { id: "arena-seed", type: "number", min: 0, placeholder: "first free" });
    const seats = h("div", { class: "arenaseats", id: "arena-seats" });
    const est = h("p", { id: "arena-estimate", class: "muted" });
    const go = h("button", { type: "button", id: "arena-go" }, "Launch");
    const status = h("p", { id: "arena-status", class: "muted" });
    const cap = h("p", { class: "muted", id: "arena-cap" }, "At most " + count(info.cap, "game") + " in flight on this server (--max-arena-games).");
    const list = h("ul", { class: "arenajobs", id: "arena-jobs" });

    const drawSeats = () => {
      const r = info.rules.find((x) => x.name === rules.value);
      const old = Array.from(seats.querySelectorAll("select")).map((x) => x.value);
      clear(seats).append(...Array.from({ length: r.seats }, (_, i) => h("label", { class: "arenaseat" }, "seat " + i + " ",
        h("select", { class: "arena-seat", dataset: { seat: i } }, info.agents.map((a) => h("option", { value: a, selected: a === (old[i] || info.agents[i % info.agents.length]) ? "selected" : null }, a))))));
    };
    const body = () => ({
      kind: kind.value, rules: rules.value, games: +games.value, seed: seed.value === "" ? null : +seed.value,
      agents: Array.from(seats.querySelectorAll("select")).map((x) => x.value),
    });
    let asked = 0;
    const estimate = async () => {
      const mine = ++asked;
      est.textContent = "Estimating…";
      delete est.dataset.cost;
      try {
        const e = await api("POST", "arena/estimate", body());
        if (mine !== asked) return;
        est.dataset.cost = e.text;
        est.textContent = "Estimated cost: " + e.text + " (" + count(e.games, "game") + ") · " + e.basis;
      } catch (err) { if (mine === asked) est.textContent = "Estimate unavailable: " + err.message; }
    };
    rules.addEventListener("change", () => { drawSeats(); estimate(); });
    for (const el of [kind, games, seed, seats]) el.addEventListener("change", estimate);
    go.addEventListener("click", async () => {
      go.disabled = true;
      status.textContent = "Launching…";
      try {
        const job = await api("POST", "arena/jobs", body());
        status.textContent = "Launched " + job.id + " (" + count(job.total, "game") + ", estimated cost: " + job.cost.text + ").";
        if (!pollTimer) pollJobs(list);
      } catch (err) { status.textContent = "Refused: " + err.message; }
      go.disabled = false;
    });
    drawSeats();
    root.append(h("div", { class: "arenaform", id: "arena-form" },
      h("label", null, "rule set ", rules), h("label", null, "launch ", kind), h("label", null, "games ", games), h("label", null, "first seed ", seed),
      seats, est, go, status, cap), h("h2", null, "Jobs"), list);
    estimate();
    if (pollTimer) clearTimeout(pollTimer);
    pollJobs(list);
  };
})();
