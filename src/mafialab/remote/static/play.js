// The human-web seat: long-polls the agent API with the seat's token from the URL fragment.
// The token is taken out of the address bar on load (history.replaceState: it stays in neither
// the address bar nor the history) and kept in this script's memory, and in this tab's
// sessionStorage so that a reload of the tab still opens the seat.
// Every text from the game is shown with textContent (never parsed as HTML).
"use strict";
(function () {
  const params = new URLSearchParams(location.hash.slice(1));
  const fromUrl = params.get("token");
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  let stored = null;
  try { stored = sessionStorage.getItem("mafialab-seat-token"); } catch (e) { /* storage off: memory only */ }
  const token = fromUrl || stored;
  const $ = (id) => document.getElementById(id);
  if (!token) { $("status").textContent = "no token: open the link the game printed (…/play#token=…)"; return; }
  try { sessionStorage.setItem("mafialab-seat-token", token); } catch (e) { /* storage off: memory only */ }
  const auth = { Authorization: "Bearer " + token };
  let since = 0;
  let current = null;
  let timer = null;

  function el(tag, text, cls) { const e = document.createElement(tag); e.textContent = text; if (cls) e.className = cls; return e; }

  async function api(path, opts) {
    opts = opts || {};
    const headers = Object.assign({}, auth, opts.headers || {});
    return fetch(path, Object.assign({}, opts, { headers: headers }));
  }

  async function loadSeat() {
    const r = await api("/v1/seat");
    if (r.status === 401) { $("status").textContent = "this token does not open a seat"; throw new Error("401"); }
    const me = await r.json();
    $("title").textContent = "You are " + (me.name || "seat " + me.seat);
    const mates = me.teammates && me.teammates.length ? "; your team: " + me.teammates.join(", ") : "";
    $("me").textContent = (me.role ? "Role: " + me.role + " (" + me.team + ")" : "") + mates;
  }

  function addEvents(body) {
    body.events.forEach((ev, i) => {
      const line = body.lines[i];
      if (line === null || line === undefined) return;
      const vis = ev.visibility || {};
      $("events").appendChild(el("li", line, vis.public ? "" : "private"));
    });
    since = body.next_since;
    $("events").scrollTop = $("events").scrollHeight;
  }

  function countdown(deadline) {
    clearInterval(timer);
    const tick = () => {
      const left = Math.max(0, Math.round(deadline - Date.now() / 1000));
      $("countdown").textContent = left + " s left";
      if (left <= 0) clearInterval(timer);
    };
    tick();
    timer = setInterval(tick, 500);
  }

  function show(req) {
    current = req;
    $("error").textContent = "";
    $("options").replaceChildren();
    const props = (req.schema && req.schema.properties) || {};
    if (req.kind === "probe") {
      $("prompt").textContent = req.probe.question;
    } else {
      $("prompt").textContent = req.question || req.prompt;  // a person reads the question, not the model text
    }
    (req.options || []).forEach((o, i) => {
      const lab = el("label", "");
      const inp = document.createElement("input");
      inp.type = "radio"; inp.name = "target"; inp.value = o.name; inp.id = "opt-" + i;
      lab.appendChild(inp);
      lab.appendChild(document.createTextNode(" " + (i + 1) + ". " + o.name));
      $("options").appendChild(lab);
    });
    const wantsText = req.kind === "probe" || "text" in props || "statement" in props;
    $("text-label").hidden = !wantsText;
    $("text").value = "";
    $("decision").dataset.request = req.id;
    $("decision").hidden = false;
    countdown(req.deadline);
  }

  async function send() {
    if (!current) return;
    const props = (current.schema && current.schema.properties) || {};
    let answer;
    if (current.kind === "probe") {
      const raw = $("text").value.trim();
      try { answer = JSON.parse(raw); } catch (e) { answer = raw; }
    } else {
      answer = {};
      const picked = document.querySelector("input[name=target]:checked");
      if ("target" in props && picked) answer.target = picked.value;
      if ("text" in props) answer.text = $("text").value;
      if ("statement" in props) answer.statement = $("text").value;
    }
    const r = await api("/v1/answer", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ request_id: current.id, answer: answer }) });
    if (r.ok) {
      $("decision").hidden = true; current = null; clearInterval(timer);
      $("status").textContent = "sent; waiting for the game…";
    } else {
      let detail = "refused";
      try { detail = (await r.json()).detail; } catch (e) { /* keep */ }
      $("error").textContent = "Not accepted: " + detail;
    }
  }

  async function loop() {
    await loadSeat();
    for (;;) {
      let r;
      try { r = await api("/v1/next?since=" + since + "&wait=25"); } catch (e) { await new Promise((ok) => setTimeout(ok, 1000)); continue; }
      if (r.status === 204) continue;
      if (r.status === 429) { await new Promise((ok) => setTimeout(ok, 1000)); continue; }
      if (!r.ok) { $("status").textContent = "error " + r.status; return; }
      const body = await r.json();
      addEvents(body);
      if (body.status === "over") {
        $("decision").hidden = true; clearInterval(timer);
        $("status").textContent = "the game is over"; return;
      }
      if (!current || current.id !== body.request.id) show(body.request);
      $("status").textContent = "your turn";
      if (current && current.id === body.request.id) {
        // wait until this request is answered or gone before polling again
        await new Promise((ok) => {
          const check = setInterval(() => { if (!current || current.deadline * 1000 < Date.now()) { clearInterval(check); current = null; ok(); } }, 200);
        });
      }
    }
  }

  $("submit").addEventListener("click", send);
  loop().catch((e) => { $("status").textContent = "stopped: " + e.message; });
})();
