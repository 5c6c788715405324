"""Seasons: scripted season with the mock judge checked by hand, resume, integrity gate, config errors."""

from __future__ import annotations

import asyncio
import json
import math
from collections import defaultdict
from pathlib import Path

import pytest
from openskill.models import PlackettLuce

from mafialab.agents import ScriptedAgent, register_agent
from mafialab.arena import (
    SeasonConfigError,
    SeasonError,
    build_index,
    load_manifest,
    resume_season,
    run_season,
    season_from_dict,
)
from mafialab.arena._season import GAMES_DIR, answered_share
from mafialab.engine import Action, Decision, PlayerView, deal_roles
from mafialab.models import ChatRequest, ChatResponse, MockModel, register_backend
from mafialab.record import read_game, strip_clock

Z = 1.959963984540054


def judge_fn(request: ChatRequest) -> dict:
    """A deterministic mock judge: scores from seat names; deception for everyone (nulled for town)."""
    names = request.json_schema["properties"]["mvp"]["enum"]
    game_id = request.meta["game_id"]
    k = int(game_id.rsplit("-s", 1)[1])
    return {
        "headline": f"Headline of {game_id}",
        "recap": "recap",
        "mvp": names[k % len(names)],
        "players": [
            {"name": n, "deception": (i + k) % 11, "detection": (2 * i + k) % 11, "influence": (3 * i) % 12, "note": ""}
            for i, n in enumerate(names)
        ],
    }


def make_judge(name: str = "mock/judge") -> MockModel:
    return MockModel(judge_fn, name=name)


def season(**over) -> dict:
    base = {
        "name": "t",
        "games": 3,
        "seed": 40,
        "roster": [
            {"agent": "scripted", "name": "s1"},
            {"agent": "scripted", "name": "s2"},
            {"agent": "random", "name": "r1"},
            {"agent": "random", "name": "r2"},
            {"agent": "scripted", "name": "s3"},
        ],
        "judges": ["mock/judge"],
        "parallelism": {"games": 2},
        "prices": {"x/y": {"input": 1.0, "output": 2.0, "cached_input": 0.5}},
    }
    base.update(over)
    return base


def wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    den = 1 + Z * Z / n
    centre = (p + Z * Z / (2 * n)) / den
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / den
    return centre - half, centre + half


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


async def test_scripted_season_leaderboard_by_hand(tmp_path: Path):
    cfg = season_from_dict(season())
    out = tmp_path / "s"
    await run_season(cfg, out, judges={"mock/judge": make_judge()})
    # a fake calls.jsonl for one game (tokens and cost are read from it)
    first = sorted((out / GAMES_DIR).iterdir())[0]
    calls = [
        {"kind": "call", "seat": 0, "model": "x/y", "prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 40},
        {"meta": {"seat": 1}, "model": "x/y", "usage": {"prompt_tokens": 50, "completion_tokens": 5}},
        {"seat": 2, "purpose": "judge", "model": "x/y", "prompt_tokens": 999, "completion_tokens": 999},
        {"seat": 3, "model": "z/unpriced", "prompt_tokens": 7, "completion_tokens": 1},
    ]
    (first / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    index = build_index(out)
    manifest = json.loads((out / "season.json").read_text())
    names = [e["name"] for e in manifest["config"]["roster"]]

    # ---- recompute everything from the raw files
    stats = {n: defaultdict(int) for n in names}
    team_games = {n: defaultdict(set) for n in names}  # games in which the entry held a seat of that team
    axis_vals = {n: defaultdict(list) for n in names}
    mvp = defaultdict(int)
    tokens = defaultdict(lambda: [0, 0])
    cost = {}
    games_rows = []
    for slot in manifest["slots"]:
        lines = read_jsonl(out / GAMES_DIR / slot["game_id"] / "game.jsonl")
        header, end = lines[0], next(x for x in lines if x["kind"] == "game_end")
        verdict = read_jsonl(out / GAMES_DIR / slot["game_id"] / "verdicts.jsonl")
        assert len(verdict) == 1
        verdict = verdict[0]
        games_rows.append((slot["game_id"], header["seed"], end["winner"], end["rounds"], verdict["headline"]))
        seat_entry = [names[e] for e in slot["seating"]]
        assert [s["role"] for s in header["roster"]] == deal_roles(cfg.load_rules(), slot["seed"])
        for s in header["roster"]:
            n = seat_entry[s["seat"]]
            won = s["team"] == end["winner"]
            stats[n]["seats"] += 1
            stats[n]["wins"] += won
            stats[n][s["team"] + "_n"] += 1
            stats[n][s["team"] + "_w"] += won
            team_games[n][s["team"]].add(slot["game_id"])
            # the mock judge's raw scores, with role-inappropriate axes dropped by hand
            k = header["seed"]
            i = s["seat"]
            if s["team"] == "mafia":
                axis_vals[n]["deception"].append((i + k) % 11)
            else:
                axis_vals[n]["detection"].append((2 * i + k) % 11)
            axis_vals[n]["influence"].append(min(10, (3 * i) % 12))
        mvp[seat_entry[header["seed"] % 12]] += 1
        if slot["game_id"] == first.name:
            for seat, pt, ct, usd in ((0, 100, 10, (60 * 1.0 + 40 * 0.5 + 10 * 2.0) / 1e6), (1, 50, 5, (50 + 10) / 1e6),
                                      (3, 7, 1, None)):  # fmt: skip
                n = seat_entry[seat]
                tokens[n][0] += pt
                tokens[n][1] += ct
                cost[n] = None if usd is None or cost.get(n, 0.0) is None else cost.get(n, 0.0) + usd

    board = {e.name: e for e in index.leaderboard}
    assert set(board) == set(names)
    assert any(v is not None for v in cost.values()) and None in cost.values()  # both cases exercised
    assert index.games_counted == 3 and index.replacements == 0
    for n in names:
        e, st = board[n], stats[n]
        assert e.seats == st["seats"] and e.games == 3  # 5 entries < 12 seats: everyone plays every game
        assert (e.overall.wins, e.overall.n) == (st["wins"], st["seats"])
        assert (e.as_mafia.wins, e.as_mafia.n) == (st["mafia_w"], st["mafia_n"])
        assert (e.as_town.wins, e.as_town.n) == (st["town_w"], st["town_n"])
        assert e.overall.rate == pytest.approx(st["wins"] / st["seats"])
        lo, hi = wilson(st["wins"], st["seats"])
        assert (e.overall.low, e.overall.high) == (pytest.approx(lo), pytest.approx(hi))
        if st["mafia_n"] and len(team_games[n]["mafia"]) >= 2:
            lo, hi = wilson(st["mafia_w"], st["mafia_n"])
            assert (e.as_mafia.low, e.as_mafia.high) == (pytest.approx(lo), pytest.approx(hi))
        elif st["mafia_n"]:  # mafia seats in one game only: no interval, and the reason
            assert e.as_mafia.low is None and e.as_mafia.no_interval == "no interval: 1 game"
        for axis in ("deception", "detection", "influence"):
            vals = axis_vals[n][axis]
            m = getattr(e, axis)
            assert m.n == len(vals)
            if vals:
                assert m.mean == pytest.approx(sum(vals) / len(vals))
                team = {"deception": ["mafia"], "detection": ["town"], "influence": ["mafia", "town"]}[axis]
                if len(set().union(*(team_games[n][t] for t in team))) >= 2:
                    assert min(vals) <= m.low <= m.mean <= m.high <= max(vals)
                else:  # scores from one game only: no interval, and the reason
                    assert m.low is None and m.no_interval == "no interval: 1 game"
        assert e.mvp == mvp[n]
        pt, ct = tokens[n]
        assert (e.prompt_tokens, e.completion_tokens) == (pt, ct)
        if n not in cost or cost[n] is None:
            assert e.cost_usd is None
        else:
            assert e.cost_usd == pytest.approx(cost[n])
    assert sum(e.mvp for e in index.leaderboard) == 3
    assert [(g.game_id, g.seed, g.winner, g.rounds, g.headline) for g in index.games] == games_rows
    assert all(not g.degraded and g.counted for g in index.games)
    assert [g.mvp for g in index.games] == [
        read_game(out / GAMES_DIR / g.game_id).header.roster[g.seed % 12].name for g in index.games
    ]

    # OpenSkill recomputed independently (openskill's rate as Kaggle's evaluator calls it: winners
    # first, one rating per entry, updated once per seat), leaving out self-play games (an entry on
    # both teams): with 5 entries at 12 seats every game is self-play, so nothing is rated
    model = PlackettLuce()
    rating = {n: model.rating(name=n) for n in names}
    n_self = 0
    for slot in manifest["slots"]:
        lines = read_jsonl(out / GAMES_DIR / slot["game_id"] / "game.jsonl")
        winner = next(x for x in lines if x["kind"] == "game_end")["winner"]
        seat_team = [s["team"] for s in lines[0]["roster"]]
        teams = {t: [names[slot["seating"][s]] for s in range(12) if seat_team[s] == t] for t in ("town", "mafia")}
        if set(teams["town"]) & set(teams["mafia"]):
            n_self += 1
            continue
        order = ("town", "mafia") if winner == "town" else ("mafia", "town")
        for team in model.rate([[rating[n] for n in teams[t]] for t in order]):
            for r in team:
                rating[r.name] = r
    assert index.ratings is not None
    assert (index.ratings.self_play_games, index.ratings.games_rated) == (n_self, 3 - n_self) == (3, 0)
    for n in names:
        assert board[n].rating.mu == pytest.approx(rating[n].mu)
        assert board[n].rating.sigma == pytest.approx(rating[n].sigma)
        assert board[n].rating.ordinal == pytest.approx(rating[n].mu - 3 * rating[n].sigma)
    ordinals = [e.rating.ordinal for e in index.leaderboard]
    assert ordinals == sorted(ordinals, reverse=True)

    # the table names and the seat-to-model mapping are public in the seating event
    g0 = read_game(out / GAMES_DIR / manifest["slots"][0]["game_id"])
    seating = next(e for e in g0.events if e.kind == "seating")
    assert seating.visibility.public
    assert seating.labels == [cfg.roster[e].label for e in manifest["slots"][0]["seating"]]
    assert (out / "index.json").is_file() and (out / "leaderboard.md").is_file()


async def test_run_refuses_existing_season_dir(tmp_path: Path):
    cfg = season_from_dict(season(games=1, judges=[]))
    await run_season(cfg, tmp_path / "s")
    with pytest.raises(SeasonError, match="already holds a season"):
        await run_season(cfg, tmp_path / "s")


def snapshot(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / GAMES_DIR).rglob("*.jsonl"))}


async def test_resume_after_truncated_game_neither_duplicates_nor_loses(tmp_path: Path):
    cfg = season_from_dict(season(games=4))
    out = tmp_path / "s"
    await run_season(cfg, out, judges={"mock/judge": make_judge()})
    before = snapshot(out)
    m = load_manifest(out)
    # simulate a crash: game 1 lost its end (torn mid-game), game 3 was never started
    g1, g3 = m.slots[1], m.slots[3]
    path1 = out / GAMES_DIR / g1.game_id / "game.jsonl"
    lines = path1.read_text().splitlines(keepends=True)
    torn = "".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:17]  # torn last line
    path1.write_text(torn)
    (out / GAMES_DIR / g1.game_id / "verdicts.jsonl").unlink()
    for p in (out / GAMES_DIR / g3.game_id).iterdir():
        p.unlink()
    (out / GAMES_DIR / g3.game_id).rmdir()
    raw = json.loads((out / "season.json").read_text())
    for j in (1, 3):
        raw["slots"][j].update(status="pending", winner=None, rounds=None, answered_share=None)
    (out / "season.json").write_text(json.dumps(raw))
    (out / "index.json").unlink()

    judge = make_judge()
    await resume_season(out, judges={"mock/judge": judge})
    after = snapshot(out)
    # finished games untouched, rerun games identical to the originals (same seed, scripted agents)
    assert set(after) == set(before)
    for key in before:
        a, b = (strip_clock(json.loads(x) for x in d[key].decode().splitlines()) for d in (before, after))
        assert a == b, key
        if g1.game_id not in key and g3.game_id not in key:
            assert before[key] == after[key]  # byte for byte, not rewritten
    assert len(judge.requests) == 2  # only the two rerun games were judged
    m2 = load_manifest(out)
    assert [s.status for s in m2.slots] == ["judged"] * 4
    assert [a.outcome for a in m2.slots[1].history] == ["incomplete"]
    moved = out / m2.slots[1].history[0].path
    assert (moved / "game.jsonl").read_text() == torn  # the partial log is kept, not deleted
    assert len(list((out / GAMES_DIR).iterdir())) == 4
    assert json.loads((out / "index.json").read_text())["games_counted"] == 4


_HANG = {"armed": False, "reached": None}


class HangingAgent(ScriptedAgent):
    """Scripted, but hangs mid-game in game seed 41 while armed (to cancel a season mid-game)."""

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        if _HANG["armed"] and self._seed == 41 and decision.id >= 60:
            _HANG["reached"].set()
            await asyncio.sleep(3600)
        return await super().decide(decision, view)


def _hanging(spec, seat, rules, seed):
    a = HangingAgent(seat, rules, seed)
    a._seed = seed
    return a


register_agent("test-hang", _hanging)


async def test_season_cancelled_mid_game_resumes(tmp_path: Path):
    cfg = season_from_dict(season(games=3, roster=["test-hang", "random"], parallelism={"games": 1}))
    out = tmp_path / "s"
    _HANG.update(armed=True, reached=asyncio.Event())
    task = asyncio.create_task(run_season(cfg, out, judges={"mock/judge": make_judge()}))
    await asyncio.wait_for(_HANG["reached"].wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    m = load_manifest(out)
    assert [s.status for s in m.slots] == ["judged", "pending", "pending"]
    partial = read_game(out / GAMES_DIR / m.slots[1].game_id)
    assert partial.winner is None and len(partial.events) > 10
    done0 = (out / GAMES_DIR / m.slots[0].game_id / "game.jsonl").read_bytes()
    _HANG["armed"] = False
    judge = make_judge()
    await resume_season(out, judges={"mock/judge": judge})
    m = load_manifest(out)
    assert [s.status for s in m.slots] == ["judged"] * 3
    assert (out / GAMES_DIR / m.slots[0].game_id / "game.jsonl").read_bytes() == done0
    assert [s.seed for s in m.slots] == [40, 41, 42]
    assert m.slots[1].history[0].outcome == "incomplete" and m.slots[1].history[0].seed == 41
    assert len(judge.requests) == 2
    assert sorted(p.name for p in (out / GAMES_DIR).iterdir()) == sorted(s.game_id for s in m.slots)
    for s in m.slots:
        assert len(read_jsonl(out / GAMES_DIR / s.game_id / "verdicts.jsonl")) == 1


class FlakyAgent(ScriptedAgent):
    """Returns fallback-marked actions (as an LLM agent does after failed calls) in chosen games."""

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        a = await super().decide(decision, view)
        return a.model_copy(update={"fallback": True}) if self._flaky else a


FLAKY_SEEDS = {100, 103}


def _flaky(spec, seat, rules, seed):
    a = FlakyAgent(seat, rules, seed)
    a._flaky = seed in FLAKY_SEEDS
    return a


register_agent("test-flaky", _flaky)


async def test_degraded_game_is_discarded_and_replayed_with_next_seed(tmp_path: Path):
    # K=3, S=100: game 0 (seed 100) is degraded -> replaced by seed S+K+0 = 103, also degraded
    # -> replaced by S+K+1 = 104, which is fine; games 1 and 2 are fine.
    cfg = season_from_dict(
        season(games=3, seed=100, roster=["test-flaky"], parallelism={"games": 1}, judges=["mock/judge"])
    )
    out = tmp_path / "s"
    await run_season(cfg, out, judges={"mock/judge": make_judge()})
    m = load_manifest(out)
    assert [s.seed for s in m.slots] == [104, 101, 102]
    assert m.replacements == 2
    hist = m.slots[0].history
    assert [(a.seed, a.outcome) for a in hist] == [(100, "discarded"), (103, "discarded")]
    for a in hist:
        g = read_game(out / a.path)
        assert a.path.startswith("discarded/")
        assert g.status is not None and g.status.degraded and g.status.answered_share == 0.0
        assert a.answered_share == 0.0
    kept = read_game(out / GAMES_DIR / m.slots[0].game_id)
    assert kept.header.seed == 104 and kept.header.meta["replaces"] == [a.game_id for a in hist]
    assert answered_share(kept)[0] == 1.0
    # the replacement keeps every entry's team
    index = build_index(out)
    assert index.replacements == 2 and index.games_counted == 3
    assert [d["seed"] for d in index.discarded] == [100, 103]
    assert sorted(p.name for p in (out / GAMES_DIR).iterdir()) == sorted(s.game_id for s in m.slots)


async def test_degraded_game_kept_and_flagged_when_budget_spent(tmp_path: Path):
    cfg = season_from_dict(season(games=2, seed=100, roster=["test-flaky"], judges=[], limits={"max_replacements": 0}))
    out = tmp_path / "s"
    await run_season(cfg, out)
    m = load_manifest(out)
    assert m.slots[0].degraded and not m.slots[1].degraded and m.replacements == 0
    assert read_game(out / GAMES_DIR / m.slots[0].game_id).status.degraded
    index = build_index(out)
    assert index.games_counted == 1
    assert [g.counted for g in index.games] == [False, True] and index.games[0].degraded


class _Down:
    name = "down/judge"
    context_window = 8192
    calls_network = True
    counts_tokens = False

    def count_tokens(self, text: str) -> int:
        return len(text)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(error="connection refused", error_kind="transport", model=self.name)


register_backend("down", lambda model, **kw: _Down())


async def test_integrity_gate_refuses_unreachable_backend(tmp_path: Path):
    cfg = season_from_dict(season(judges=["down/judge"]))
    with pytest.raises(SeasonError, match=r"unreachable.*down/judge: connection refused"):
        await run_season(cfg, tmp_path / "s")
    assert not (tmp_path / "s" / "season.json").exists()


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"games": 0}, "games"),
        ({"roster": []}, "roster"),
        ({"roster": ["scripted", "nonsense-agent"]}, "roster[1].agent"),
        ({"roster": [{"agent": "scripted", "name": "a"}, {"agent": "random", "name": "a"}]}, "roster"),
        ({"judges": ["no-slash"]}, "judges[0].model"),
        (
            {"judges": ["mock/a", "nosuchprovider/x"]},
            "judges[1].model: 'nosuchprovider/x': unknown model provider 'nosuchprovider'",
        ),
        ({"gamez": 3}, "gamez"),
        ({"rules": "chess"}, "rules"),
        ({"limits": {"min_answered_share": 1.5}}, "limits.min_answered_share"),
        ({"prices": {"x/y": {"input": -1, "output": 0}}}, "prices.x/y.input"),
    ],
)
def test_config_errors_name_the_field(patch, field):
    with pytest.raises(SeasonConfigError) as err:
        season_from_dict(season(**patch))
    assert field in str(err.value)
    assert "rules: rules:" not in str(err.value)  # a field is named once


_ORDER: list[str] = []
_STARTED: set[int] = set()


class SlowAgent(ScriptedAgent):
    """Scripted, but yields to the event loop at every decision (so games interleave)."""

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        if self._seed not in _STARTED:
            _STARTED.add(self._seed)
            _ORDER.append("start")
        await asyncio.sleep(0.001)
        return await super().decide(decision, view)


def _slow(spec, seat, rules, seed):
    a = SlowAgent(seat, rules, seed)
    a._seed = seed
    return a


register_agent("test-slow", _slow)


def hostile_judge_fn(request: ChatRequest) -> dict:
    out = judge_fn(request)
    for p in out["players"]:
        p["influence"] = 10 - min(10, p["influence"])
    out["headline"] = "[bold red]pwned[/] <script>x</script> | col"
    return out


async def test_concurrent_games_two_judges_and_escaped_text(tmp_path: Path):
    from mafialab.arena import render_markdown

    _ORDER.clear()
    _STARTED.clear()
    cfg = season_from_dict(
        season(
            games=3,
            roster=["test-slow", "random"],
            judges=["mock/judge", "mock/judge2"],
            parallelism={"games": 3, "judge_calls": 1},
        )
    )
    out = tmp_path / "s"
    judges = {"mock/judge": make_judge(), "mock/judge2": MockModel(hostile_judge_fn, name="mock/judge2")}
    await run_season(cfg, out, judges=judges, progress=lambda ev, slot: _ORDER.append(ev))
    assert _ORDER[:4] == ["start", "start", "start", "played"]  # all three games were in flight together
    index = build_index(out)
    manifest = load_manifest(out)
    # per seat-game the ensemble mean of the two judges' influence is ((3i)%12 clamped + 10 - that) / 2 = 5
    for e in index.leaderboard:
        assert e.influence.mean == pytest.approx(5.0) and e.influence.n == e.seats
    # the disagreement between judges, per entry: spread |x - (10 - x)| and each judge's own mean
    xs = defaultdict(list)
    for slot in manifest.slots:
        for seat, entry in enumerate(slot.seating):
            xs[cfg.roster[entry].name].append(min(10, (3 * seat) % 12))
    for e in index.leaderboard:
        x = xs[e.name]
        assert e.judge_spread["influence"] == pytest.approx(sum(abs(2 * v - 10) for v in x) / len(x))
        assert e.by_judge["mock/judge"]["influence"] == pytest.approx(sum(x) / len(x))
        assert e.by_judge["mock/judge2"]["influence"] == pytest.approx(sum(10 - v for v in x) / len(x))
    for g in index.games:
        assert g.judges_ok == ["mock/judge", "mock/judge2"]
        assert g.headline == f"Headline of {g.game_id}"  # the first judge's headline
    assert {len(read_jsonl(out / GAMES_DIR / s.game_id / "verdicts.jsonl")) for s in manifest.slots} == {2}
    # hostile model text is escaped in Markdown and does not break the rich CLI
    from mafialab.judge import game_ensemble

    ens = game_ensemble(out / GAMES_DIR / manifest.slots[0].game_id)
    assert ens.headline == f"Headline of {manifest.slots[0].game_id}"
    index.games[0].headline = "[bold red]pwned[/] <script>x</script> | col"
    md = render_markdown(index)
    assert "<script>" not in md and "&lt;script&gt;" in md and "\\| col" in md


async def test_game_marked_degraded_by_the_harness_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # the models harness closes a log with game_status.degraded when model calls failed;
    # simulate that for seed 60 and check the season replaces the game with seed S+K+0 = 62
    import mafialab.arena._season as season_mod
    from mafialab.record import GameStatus, JsonlWriter

    real = season_mod.play_game

    async def play(rules, agents, seed, **kw):
        res = await real(rules, agents, seed, **kw)
        if seed == 60:
            with JsonlWriter(res.path / "game.jsonl") as w:
                w.write(
                    GameStatus(
                        seq=len(res.state.events) + 1,
                        degraded=True,
                        answered_share=0.4,
                        detail={"model_decisions": 50},
                    )
                )
        return res

    monkeypatch.setattr(season_mod, "play_game", play)
    cfg = season_from_dict(season(games=2, seed=60, judges=[]))
    out = tmp_path / "s"
    await run_season(cfg, out)
    m = load_manifest(out)
    assert [s.seed for s in m.slots] == [62, 61]
    (a,) = m.slots[0].history
    assert (a.seed, a.outcome, a.answered_share) == (60, "discarded", 0.4)
    assert "harness gate" in a.reason and "50 model decisions" in a.reason
    assert not m.slots[0].degraded and build_index(out).games_counted == 2
