"""The viewer's build step: payloads, visibility of per-seat files, metrics, edge-case games."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import game_data, step_metrics
from mafialab.cli import app
from mafialab.engine import visible_events
from mafialab.record import PROBES_FILE, GameStatus, JsonlWriter, ProbeRecord, iter_game_dirs, read_game
from mafialab.rules import load_rules
from mafialab.viewer import (
    STEP_KINDS,
    SiteServer,
    ViewerError,
    build_game,
    build_site,
    file_id,
    normalise_probe,
    read_probes,
    role_vocabulary,
)
from mafialab.viewer._build import site_rows
from tests.viewer_games import XSS_IMG, copy_game, inject_message, play_probed, probe_lines


def load_js(path: Path) -> tuple[str, str, dict]:
    """Parse a data file ``MAFIALAB_DATA(kind, key, payload);``."""
    text = path.read_text(encoding="utf-8")
    m = re.fullmatch(r'MAFIALAB_DATA\(("[^"]*"),("(?:[^"\\]|\\.)*"),(.*)\);\n', text, re.S)
    assert m, text[:200]
    return json.loads(m.group(1)), json.loads(m.group(2)), json.loads(m.group(3))


def file_of(site: Path, game_id: str) -> str:
    """The data-file id the dashboard row of ``game_id`` points to."""
    return next(r["file"] for r in site_rows(site) if r["id"] == game_id)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    root = tmp_path_factory.mktemp("logs")

    async def make() -> None:
        d = await play_probed(root, 1, "mafiascope7", inject=XSS_IMG)
        inject_message(d, "hi " + XSS_IMG)
        await play_probed(root, 3, "arena12")

    asyncio.run(make())
    return root


def test_role_vocabulary_follows_mafiascope_order() -> None:
    v = role_vocabulary(load_rules("mafiascope7"))
    assert v.normalise("Villager or Doctor") == "Villager"
    assert v.normalise("probably MAFIA") == "Mafia"
    assert v.normalise("Doctor") == "Doctor"
    assert v.normalise("Sheriff") == "Sheriff"  # MafiaScope vocabulary, not in this rule set
    assert v.normalise("unknown yet") == "Unknown"
    assert v.normalise("Commissar") is None
    assert v.normalise(7) is None
    w = role_vocabulary(load_rules("werewolf7"))
    assert w.normalise("one of the Werewolves") == "Werewolf"
    assert w.normalise("Seer") == "Seer"
    assert w.is_mafia("Werewolf") and not w.is_mafia("Seer")


def _ra(seat: int, after: int, guesses: list[tuple[str, str, int]], pid: str = "role_assessment") -> ProbeRecord:
    ans = [{"player": p, "guessed_role": g, "confidence": c, "reason": "r"} for p, g, c in guesses]
    return ProbeRecord(
        game_id="g", round=1, msg_index=after, seat=seat, player="ABCD"[seat], role="?", probe_id=pid,
        position=0, after_seq=after, question="q", answer_raw=json.dumps(ans), answer_parsed=ans, parse_ok=True,
    )  # fmt: skip


def _sm(seat: int, after: int, att: list[tuple[str, str]]) -> ProbeRecord:
    ans = {"toward_me": [{"player": p, "attitude": a, "confidence": 70, "reason": "r"} for p, a in att]}
    return ProbeRecord(
        game_id="g", round=1, msg_index=after, seat=seat, player="ABCD"[seat], role="?", probe_id="social_map",
        position=2, after_seq=after, question="q", answer_raw=json.dumps(ans), answer_parsed=ans, parse_ok=True,
    )  # fmt: skip


def test_normalised_answers_keep_an_unusable_answer_verbatim() -> None:
    # the metrics themselves are mafialab.analysis.step_metrics' (tests/analysis/test_step_metrics.py)
    vocab = role_vocabulary(load_rules("mafiascope7"))
    recs = [
        _ra(1, 10, [("A", "Mafia", 80), ("c", "mafia!", 60), ("Zed", "Villager", 50)]),
        _sm(0, 12, [("B", "Suspects"), ("C", "trusts")]),
        ProbeRecord(game_id="g", round=1, msg_index=1, seat=3, player="D", role="?", probe_id="role_assessment",
                    position=0, after_seq=11, question="q", answer_raw="no idea", answer_parsed=None),
    ]  # fmt: skip
    ra, sm, bad = (normalise_probe(r, list("ABCD"), vocab) for r in recs)
    assert [(it["t"], it["r"], it["c"]) for it in ra.items] == [
        (0, "Mafia", 80.0),
        (2, "Mafia", 60.0),
        (None, "Villager", 50.0),
    ]
    assert [(it["t"], it["a"]) for it in sm.items] == [(1, "suspects"), (2, "trusts")]
    assert bad.ok is False and bad.raw == "no idea"


def test_site_layout_and_dashboard_rows(logs: Path, site: Path) -> None:
    for name in ("index.html", "app.js", "app.css", "data/index.js"):
        assert (site / name).is_file(), name
    kind, key, index = load_js(site / "data" / "index.js")
    assert (kind, key) == ("index", "index")
    assert "games" not in index  # the rows are in the pages only
    ids = sorted(r["id"] for r in site_rows(site))
    assert ids == sorted(p.name for p in logs.iterdir())
    for row in site_rows(site):
        d = logs / row["id"]
        probes = probe_lines(d)
        assert row["probes"] == len(probes)
        # usable answers (parsed and not empty: mafialab.analysis's one definition), never more than parsed
        assert row["usable_rate"] == pytest.approx(row["usable"] / len(probes))
        assert 0 < row["usable"] <= sum(p["parse_ok"] for p in probes)
        glog = read_game(d)
        assert row["winner"] == glog.winner
        assert row["steps"] == sum(1 for e in glog.events if e.kind in STEP_KINDS)
        assert (site / "data" / "g" / f"{row['file']}.js").is_file()
    cm = index["corpus_metrics"]
    assert cm["available"] is True, cm.get("reason")


def test_corpus_metrics_are_the_analysis_report(logs: Path, site: Path) -> None:
    from mafialab.analysis import compute_report, game_data

    _, _, index = load_js(site / "data" / "index.js")
    (name, block), *rest = index["corpus_metrics"]["corpora"].items()
    assert rest == [] and name == logs.name
    rep = compute_report(
        [game_data(read_game(d)) for d in sorted(logs.iterdir())], "default", resamples=1000, seed=0
    ).model_dump(mode="json")
    rows = {r["name"]: r for r in block["metrics"]}
    for rnd, f in rep["first_order"].items():
        got = rows[f"F1 r{rnd} committed accuracy"]
        assert got["value"] == f["committed_accuracy"] and got["n"] == f["committed_n"]
        assert got["ci"] == f["ci95"]["committed_accuracy"]
    assert rows["F2 ECE"]["value"] == rep["calibration"]["ece"]
    assert rows["F3 all accuracy"]["value"] == rep["second_order"]["all"]["accuracy"]
    assert rows["F4 innocents top1"]["n"] == rep["vote_coupling"]["innocents"]["top1"]["n"]
    assert [b["n"] for b in block["calibration"]["bins"]] == [b["n"] for b in rep["calibration"]["bins"]]


def test_a_corpus_the_analysis_cannot_score_says_why(monkeypatch: pytest.MonkeyPatch, logs: Path) -> None:
    # the analysis layer is part of mafialab; a corpus it fails on gets its reason, the others their figures
    from mafialab.analysis import ReportBuilder
    from mafialab.viewer import corpus_metrics

    real = ReportBuilder.report
    calls = []

    def report(self: ReportBuilder, **kw: object) -> dict:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("cannot score")
        return real(self, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(ReportBuilder, "report", report)
    dirs = sorted(logs.iterdir())
    got = corpus_metrics({"bad": dirs[:1], "good": dirs[1:]})
    assert got["available"] is True
    assert got["corpora"]["bad"] == {"error": "RuntimeError: cannot score"}
    assert got["corpora"]["good"]["games"] == len(dirs) - 1 and got["corpora"]["good"]["metrics"]


def test_seat_files_hold_exactly_the_engine_view(logs: Path, site: Path) -> None:
    d = logs / "arena12-probed-s3"
    glog = read_game(d)
    fid = file_of(site, glog.game_id)
    chats = [e for e in glog.events if e.kind == "mafia_chat"]
    assert chats, "arena12 has a mafia chat"
    for info in glog.header.roster:
        _, key, p = load_js(site / "data" / "s" / fid / f"{info.seat}.js")
        assert key == f"{glog.game_id}/{info.seat}"
        want = [e.seq for e in visible_events(glog.events, info.seat)]
        assert [e["seq"] for e in p["events"]] == want
        assert "roster" not in p and "metrics" not in p
        kinds = {e["kind"] for e in p["events"]}
        own = [pr for pr in p["probes"]]
        assert len(own) == sum(1 for x in probe_lines(d) if x["seat"] == info.seat)
        assert all(set(a) == {"s", "b", "a", "c"} for a in p["actual"])
        if info.team == "town":
            assert "mafia_chat" not in kinds and "kill_chosen" not in kinds
            assert p["teammates"] == []
            text = json.dumps(p)
            for c in chats:
                assert c.text not in text
            # the only role this seat learns before the end is its own
            end = next(e.seq for e in glog.events if e.kind == "game_end")
            told = {e["seat"] for e in p["events"] if e["kind"] == "role_assigned"}
            assert told == {info.seat}
            revealed = {e["seat"] for e in p["events"] if e["kind"] == "elimination" and e.get("role")}
            assert revealed <= {e.seat for e in glog.events if e.kind == "elimination" and e.seq < end}
        else:
            assert "mafia_chat" in kinds
            mates = sorted(s.seat for s in glog.header.roster if s.team == "mafia" and s.seat != info.seat)
            assert p["teammates"] == mates and p["excluded"] == mates


def test_god_payload_steps_probes_and_metrics(logs: Path, site: Path) -> None:
    d = logs / "mafiascope7-probed-s1"
    glog = read_game(d)
    _, _, g = load_js(site / "data" / "g" / f"{file_of(site, glog.game_id)}.js")
    assert g["steps"] == [e.seq for e in glog.events if e.kind in STEP_KINDS]
    assert [r["role"] for r in g["roster"]] == [s.role for s in glog.header.roster]
    n = len(g["steps"])
    assert len(g["metrics"]["recall"]) == n and len(g["metrics"]["agree"]) == n
    assert all(len(v) == n for v in g["metrics"]["acc"].values())
    assert "probes" not in g  # probe answers ship once, in the per-seat files
    assert sum(g["probe_counts"].values()) == len(probe_lines(d))
    # recompute one accuracy value independently from the raw probe lines
    seat = 1
    last = g["steps"][-1]
    ras = [
        p for p in probe_lines(d) if p["seat"] == seat and p["probe_id"] == "role_assessment" and p["after_seq"] <= last
    ]
    latest = max(ras, key=lambda p: (p["after_seq"], p["position"]))
    roles = {s.name: s.role for s in glog.header.roster}
    committed = [x for x in latest["answer_parsed"] if x["player"] != roles and x["guessed_role"] != "Unknown"]
    committed = [x for x in committed if x["player"] != glog.header.roster[seat].name]
    want = sum(x["guessed_role"] == roles[x["player"]] for x in committed) / len(committed) if committed else None
    got = g["metrics"]["acc"][str(seat)][-1]
    assert got == (pytest.approx(want) if want is not None else None)
    # the injected strings are kept verbatim as data (the front end renders them as text)
    assert any(XSS_IMG in (e.get("text") or "") for e in g["events"])


def _variants(logs: Path, root: Path) -> Path:
    src = logs / "mafiascope7-probed-s1"
    copy_game(src, root, "empty-game", setup_only=True)
    copy_game(src, root, "unfinished-game", keep=25)
    copy_game(src, root, "no-probes-game")
    deg = copy_game(src, root, "degraded-game")
    probes = [{**p, "game_id": "degraded-game"} for p in probe_lines(src)]  # this game's (another's are refused)
    (deg / "probes.jsonl").write_text("".join(json.dumps(p) + "\n" for p in probes), encoding="utf-8")
    n = len(read_game(deg).events)
    with JsonlWriter(deg / "game.jsonl") as w:
        w.write(GameStatus(seq=n + 1, degraded=True, answered_share=0.5, decisions=40, fallbacks=20))
    bad = root / "broken"
    bad.mkdir()
    (bad / "game.jsonl").write_text('{"kind": "speech"}\n', encoding="utf-8")
    return root


def test_edge_case_games_are_explained(logs: Path, tmp_path: Path) -> None:
    root = _variants(logs, tmp_path / "logs")
    summary = build_site(root, tmp_path / "site")
    assert sorted(summary.games) == ["degraded-game", "empty-game", "no-probes-game", "unfinished-game"]
    assert [Path(p).name for p, _ in summary.skipped] == ["broken"]
    _, _, index = load_js(tmp_path / "site" / "data" / "index.js")
    notes = {r["id"]: set(r["notes"]) for r in site_rows(tmp_path / "site")}
    assert notes["empty-game"] >= {"empty", "unfinished", "no_probes"}
    assert notes["unfinished-game"] >= {"unfinished", "no_probes"}
    assert notes["no-probes-game"] == {"no_probes"}
    assert notes["degraded-game"] == {"degraded"}
    rows = {r["id"]: r for r in site_rows(tmp_path / "site")}
    assert rows["degraded-game"]["degraded"] is True
    assert rows["empty-game"]["steps"] == 0
    # the degraded game is left out of calibration: only it had probes, so nothing is binned
    assert index["calibration"] == []
    assert index["skipped"][0]["reason"].endswith("no valid game_start header record")


def test_bad_probe_lines_are_reported_not_fatal(logs: Path, tmp_path: Path) -> None:
    d = copy_game(logs / "mafiascope7-probed-s1", tmp_path, "g")
    good = (logs / "mafiascope7-probed-s1" / "probes.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.dumps({**json.loads(good[0]), "game_id": "g"})  # this game's (another's are refused)
    (d / "probes.jsonl").write_text("\n".join([first, '{"kind": "probe"}', "{torn"]) + "\n", encoding="utf-8")
    problems: list[str] = []
    assert len(read_probes(d, problems)) == 1
    assert len(problems) == 2 and "invalid probe record" in problems[0] and "not valid JSON" in problems[1]
    gb = build_game(read_game(d), read_probes(d, []), "c", problems)
    assert "problems" in {n["code"] for n in gb.game["notes"]}


def test_build_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ViewerError, match=r"is a folder with no game\.jsonl in it or below"):
        build_site(tmp_path, tmp_path / "site")
    with pytest.raises(ViewerError, match="does not exist"):
        build_site(tmp_path / "nope", tmp_path / "site")
    r = CliRunner().invoke(app, ["view", str(tmp_path), "--out", str(tmp_path / "site")])
    assert (
        r.exit_code == 2
        and "with no game.jsonl in it or below" in " ".join(r.output.split())
        and "Traceback" not in r.output
    )


def test_raw_mafiascope_logs_get_a_hint(mafiascope_dir: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["view", str(mafiascope_dir / "ru_clean"), "--out", str(tmp_path / "site")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    text = " ".join(r.output.split())  # rich wraps long lines
    assert "holds 2 MafiaScope logs" in text and "mafialab import mafiascope" in text


def test_parallel_build_writes_the_same_site(logs: Path, site: Path, tmp_path: Path) -> None:
    roots = [tmp_path / "logs"]
    for d in logs.iterdir():
        for i in range(2):  # four games, so the build goes to worker processes
            copy_game(d, roots[0], f"{d.name}-{i}")
            (roots[0] / f"{d.name}-{i}" / "probes.jsonl").write_bytes((d / "probes.jsonl").read_bytes())
    one, two = tmp_path / "one", tmp_path / "two"
    build_site(roots[0], one, jobs=1)
    build_site(roots[0], two, jobs=2)
    files = sorted(p.relative_to(one) for p in one.rglob("*.js"))
    assert files == sorted(p.relative_to(two) for p in two.rglob("*.js"))
    assert len(files) > 4
    for f in files:
        assert (one / f).read_bytes() == (two / f).read_bytes(), f


def test_cli_builds_and_reports(logs: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["view", str(logs), "--out", str(tmp_path / "s")])
    assert r.exit_code == 0, r.output
    assert "Built 2 games" in r.output
    assert (tmp_path / "s" / "index.html").is_file()


def test_server_binds_loopback_only(site: Path) -> None:
    with SiteServer(site, 0) as srv:
        assert srv.url.startswith("http://127.0.0.1:")
        assert srv.host == "127.0.0.1" and srv.service is None
        with urllib.request.urlopen(srv.url + "data/index.js", timeout=5) as resp:
            assert resp.status == 200
            assert resp.read().startswith(b"MAFIALAB_DATA(")


def test_cli_serve_prints_a_loopback_url(logs: Path, tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("mafialab")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mafialab"]
    proc = subprocess.Popen(
        [*cmd, "view", str(logs), "--out", str(tmp_path / "s"), "--serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        assert proc.stdout is not None
        found = None
        for _ in range(20):
            line = proc.stdout.readline()
            found = re.search(r"Serving on (http://127\.0\.0\.1:(\d+)/)", line)
            if found or not line:
                break
        assert found, "no URL printed"
        with urllib.request.urlopen(found.group(1) + "index.html", timeout=5) as resp:
            assert resp.status == 200 and b"app.js" in resp.read()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_file_id_is_safe_and_distinct() -> None:
    a, b = file_id("../x y/é"), file_id("../x y/e")
    assert a != b and re.fullmatch(r"[A-Za-z0-9_-]+", a)
    assert file_id("g", "corpus1") != file_id("g", "corpus2")
    assert math.isclose(len(file_id("z" * 500)), 48 + 9)


def test_front_end_never_parses_data_as_html() -> None:
    from importlib import resources

    js = (resources.files("mafialab.viewer") / "static" / "app.js").read_text(encoding="utf-8")
    code = re.sub(r"/\*.*?\*/", "", js, flags=re.S)
    code = re.sub(r"^\s*//.*$", "", code, flags=re.M)
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "fetch("):
        assert sink not in code, sink
    html = (resources.files("mafialab.viewer") / "static" / "index.html").read_text(encoding="utf-8")
    assert "script-src 'self'" in html and "http" not in html.replace("http-equiv", "")


def test_step_series_are_the_analysis_step_metrics(logs: Path) -> None:
    # the page's strip and ego panels are mafialab.analysis.step_metrics, only shaped for the page
    for d in sorted(logs.iterdir()):
        glog, probes = read_game(d), read_probes(d, [])
        gb = build_game(glog, probes, "c")
        g = gb.game
        sm = step_metrics(game_data(glog), g["steps"])
        assert g["metrics"]["recall"] == sm.recall()
        assert g["metrics"]["agree"] == sm.agreement()
        for s in range(len(glog.header.roster)):
            assert g["metrics"]["acc"][s] == sm.accuracy(s)
            seat = gb.seats[s]
            at = {q: i for i, q in enumerate(g["steps"])}
            assert seat["agree"] == [sm.agreement(s)[at[q]] for q in seat["steps"]]
            assert seat["actual"] == [
                {"s": a.after_seq, "b": a.observer, "a": a.attitude, "c": a.confidence} for a in sm.actual[s]
            ]
        assert any(v is not None for v in g["metrics"]["agree"])


def test_strip_leaves_out_guesses_about_the_dead_as_the_report_does(logs: Path, tmp_path: Path) -> None:
    # F1 (default method) counts guesses about players alive when the answer was given; the
    # viewer's own strip used to count the dead too. A wrong guess about a dead player is added.
    src = logs / "mafiascope7-probed-s1"
    d = copy_game(src, tmp_path, "dead-guess")
    glog = read_game(d)
    roster = glog.header.roster
    death = next(e for e in glog.events if e.kind == "elimination")
    dead_at = {e.seat: e.seq for e in glog.events if e.kind == "elimination"}
    probes = [{**p, "game_id": "dead-guess"} for p in probe_lines(src)]
    rec = next(
        p
        for p in reversed(probes)
        if p["probe_id"] == "role_assessment" and p["after_seq"] > death.seq and roster[p["seat"]].team == "town"
        and p["seat"] != death.seat and isinstance(p["answer_parsed"], list)
    )  # fmt: skip
    wrong = next(r.name for r in glog.header.rules.roles if r.name != roster[death.seat].role)
    items = [x for x in rec["answer_parsed"] if x["player"] != roster[death.seat].name]
    rec["answer_parsed"] = [*items, {"player": roster[death.seat].name, "guessed_role": wrong, "confidence": 90}]
    rec["answer_raw"] = json.dumps(rec["answer_parsed"])
    (d / "probes.jsonl").write_text("".join(json.dumps(p) + "\n" for p in probes), encoding="utf-8")
    g = build_game(read_game(d), read_probes(d, []), "c").game
    # by hand: the committed guesses of this answer about others alive at its after_seq
    name_seat = {r.name: r.seat for r in roster}
    alive = [
        x for x in rec["answer_parsed"]
        if name_seat[x["player"]] != rec["seat"] and dead_at.get(name_seat[x["player"]], 10**9) > rec["after_seq"]
        and x["guessed_role"] != "Unknown"
    ]  # fmt: skip
    want = sum(x["guessed_role"] == roster[name_seat[x["player"]]].role for x in alive) / len(alive)
    i = max(i for i, q in enumerate(g["steps"]) if q <= rec["after_seq"])
    later = [
        p for p in probes
        if p["seat"] == rec["seat"] and p["probe_id"] == "role_assessment" and rec["after_seq"] < p["after_seq"] <= g["steps"][i]
    ]  # fmt: skip
    assert later == []  # this answer is the seat's latest at step i
    assert g["metrics"]["acc"][rec["seat"]][i] == pytest.approx(want)


def _mentions_by_hand(texts: list[str], others: list[str]) -> str | None:
    """Most-mentioned by an independent count: whole-word Latin names, ties to the last mention."""
    count: dict[str, int] = {}
    last: dict[str, tuple[int, int]] = {}
    for i, text in enumerate(texts):
        for name in others:
            for m in re.finditer(rf"(?<![^\W\d_]){re.escape(name)}(?![^\W\d_])", text):
                count[name] = count.get(name, 0) + 1
                last[name] = (i, m.start())
    if not count:
        return None
    best = max(count.values())
    return max((n for n, c in count.items() if c == best), key=lambda n: last[n])


def test_vote_predictions_in_the_god_payload(logs: Path, site: Path) -> None:
    d = logs / "mafiascope7-probed-s1"
    glog = read_game(d)
    _, _, g = load_js(site / "data" / "g" / f"{file_of(site, glog.game_id)}.js")
    units = g["vote_predictions"]
    names = [s.name for s in glog.header.roster]
    tallies = [e for e in glog.events if e.kind == "vote_tally" and e.stage == "vote"]
    # one unit per vote of every tally (scripted voters never vote for the dead)
    assert sorted((u["tally"], u["voter"], u["target"]) for u in units) == sorted(
        (t.seq, v, x) for t in tallies for v, x in t.votes.items()
    )
    probes = probe_lines(d)
    dead_before = {t.seq: {e.seat for e in glog.events if e.kind == "elimination" and e.seq < t.seq} for t in tallies}
    for u in units:
        vote = next(e for e in glog.events if e.seq == u["vote"])
        assert (vote.kind, vote.seat, vote.target) == ("vote", u["voter"], u["target"])
        others = [names[s] for s in range(len(names)) if s != u["voter"] and s not in dead_before[u["tally"]]]
        # probe: first alive other of the voter's last suspicion ranking before its vote
        ranks = [p for p in probes if p["seat"] == u["voter"] and p["probe_id"] == "suspicion_ranking" and p["after_seq"] < u["vote"]]  # fmt: skip
        top = [x["player"] for x in ranks[-1]["answer_parsed"] if x["player"] in others] if ranks else []
        assert u["probe"] == (names.index(top[0]) if top else None)
        # most-mentioned over the round's public messages before the vote
        texts = [
            e.text if e.kind == "speech" else e.statement
            for e in glog.events
            if e.round == vote.round and e.seq < vote.seq and e.kind in ("speech", "vote") and e.visibility.public
        ]
        want = _mentions_by_hand([t for t in texts if t], others)
        assert u["mentioned"] == (names.index(want) if want else None)
    assert any(u["mentioned"] is not None for u in units)


# Two directories holding one game id: the viewer builds both and says so, naming both paths.


def _index(site: Path) -> dict:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    m = re.fullmatch(r'MAFIALAB_DATA\("index","index",(.*)\);\n', text, re.S)
    assert m
    return json.loads(m.group(1))


def test_a_copy_with_the_same_id_is_kept_and_named(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(game_dir, logs / "a" / game_dir.name)
    shutil.copytree(game_dir, logs / "b" / game_dir.name)
    (logs / "b" / game_dir.name / "probes.jsonl").write_text("", encoding="utf-8")  # a marker of the copy
    summary = build_site(logs, tmp_path / "site", jobs=1)
    gid = game_dir.name
    assert sorted(summary.games) == [f"{gid}@a/{gid}", f"{gid}@b/{gid}"]
    assert not summary.skipped
    (warning,) = summary.warnings
    assert str(logs / "a" / gid) in warning and str(logs / "b" / gid) in warning
    index = _index(tmp_path / "site")
    rows = site_rows(tmp_path / "site")
    assert [r["game_id"] for r in rows] == [gid, gid]
    assert len({r["file"] for r in rows}) == 2
    assert index["warnings"] == [warning]
    for row in rows:  # each copy's data files carry its own key
        text = (tmp_path / "site" / "data" / "g" / f"{row['file']}.js").read_text(encoding="utf-8")
        assert text.startswith(f'MAFIALAB_DATA("game",{json.dumps(row["id"])},')


def test_view_prints_the_warning(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(game_dir, logs / "a" / game_dir.name)
    shutil.copytree(game_dir, logs / "b" / game_dir.name)
    res = CliRunner().invoke(app, ["view", str(logs), "--out", str(tmp_path / "site"), "-j", "1"])
    assert res.exit_code == 0, res.output
    assert "warning:" in res.output and "Built 2 games" in res.output


def test_a_newer_schema_copy_is_skipped_by_view_and_report_and_shares_no_id(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "mixed"
    shutil.copytree(game_dir, logs / "g1")
    shutil.copytree(game_dir, logs / "g2")
    file = logs / "g2" / "game.jsonl"
    lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["schema_version"] = 99  # written by a newer mafialab: this one cannot read it
    file.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    summary = build_site(logs, tmp_path / "site", jobs=1)
    gid = game_dir.name
    assert summary.games == [gid]  # the only game read keeps its plain id
    assert [p for p, _ in summary.skipped] == [str(logs / "g2")]
    assert summary.warnings == []  # no "in 2 directories": the copy was not read
    runner = CliRunner(env={"COLUMNS": "300", "NO_COLOR": "1"})
    res = runner.invoke(app, ["view", str(logs), "--out", str(tmp_path / "site2")])
    assert res.exit_code == 0, res.output
    assert "2 directories" not in res.output and "Built 1 game" in res.output
    res = runner.invoke(app, ["report", str(logs), "--format", "json"])
    assert res.exit_code == 0, res.output  # skipped as view skips it, not a refusal of the folder
    assert json.loads(res.stdout)["games"] == 1
    (skip,) = [ln for ln in res.stderr.splitlines() if ln.startswith("skipped:")]
    assert f"{file}:1: written with log schema v99" in skip
    assert "2 directories" not in res.stderr
    shutil.rmtree(logs / "g1")  # nothing readable left: both refuse the folder
    res = runner.invoke(app, ["report", str(logs)])
    assert res.exit_code == 2 and "can be read" in res.output


# A probe record for a seat the roster does not have is named (file, line, seat), not dropped silently.


def test_a_probe_record_for_a_seat_out_of_range_is_reported_and_left_out(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["play", "--agents", "scripted", "--probes", "suspicion", "--out", str(tmp_path / "r")]
    )
    assert res.exit_code == 0, res.output
    (d,) = iter_game_dirs(tmp_path / "r")
    path = d / PROBES_FILE
    lines = path.read_text().splitlines()
    rec = json.loads(lines[5])
    rec["seat"] = 99
    lines[5] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    problems: list[str] = []
    probes = read_probes(d, problems, 7)
    assert problems == [f"{path}:6: invalid probe record (seat 99 is out of range: the roster has seats 0-6)"]
    assert len(probes) == len(lines) - 1 and all(p.seat < 7 for p in probes)
    assert len(read_probes(d, [])) == len(lines)  # without the roster's size nothing is checked
    summary = build_site(tmp_path / "r", tmp_path / "site", jobs=1)
    assert summary.games and (d / PROBES_FILE).read_text().splitlines()[5] == lines[5]  # the file is kept
    page = next((tmp_path / "site" / "data" / "g").glob("*.js")).read_text()
    assert "seat 99 is out of range" in page  # the game's notes say so
