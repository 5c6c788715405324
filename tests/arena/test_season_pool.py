"""Frozen reference pool, name/position effects and power for planning."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import seat_effects
from mafialab.arena import (
    POOL_PROTOCOL,
    PoolError,
    build_index,
    evaluate_entrant,
    freeze_pool,
    games_needed,
    load_pool,
    pilot_sd,
    run_season,
    season_from_dict,
)
from mafialab.cli import app

runner = CliRunner(env={"COLUMNS": "250", "NO_COLOR": "1"})


def season(**over) -> dict:
    base = {
        "name": "p",
        "games": 6,
        "seed": 11,
        "roster": [{"agent": "scripted" if i % 2 else "random", "name": f"e{i}"} for i in range(13)],
        "deals": {"shuffle_names": True},
    }
    base.update(over)
    return base


@pytest.fixture(scope="module")
def pool_season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pool") / "season"
    asyncio.run(run_season(season_from_dict(season()), out))
    return out


def test_freeze_and_evaluate_leave_the_pool_ratings_unchanged(pool_season: Path, tmp_path: Path):
    path = tmp_path / "pool.json"
    pool = freeze_pool(pool_season, path)
    raw = path.read_bytes()
    data = json.loads(raw)
    body = {k: v for k, v in data.items() if k != "sha256"}
    want = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert data["sha256"] == pool.sha256 == want and data["protocol"] == POOL_PROTOCOL
    index = build_index(pool_season)
    assert {k: (v.mu, v.sigma) for k, v in pool.ratings.items()} == {
        e.name: (e.rating.mu, e.rating.sigma) for e in index.leaderboard
    }
    assert len(pool.deals) == 6 and [d.entrant_seat for d in pool.deals] == list(range(6))

    res = asyncio.run(evaluate_entrant("scripted", path, tmp_path / "ev", name="newcomer"))
    assert path.read_bytes() == raw  # the pool file is never rewritten
    assert res["pool_sha256"] == pool.sha256
    assert res["pool_ratings"] == {k: v.model_dump() for k, v in pool.ratings.items()}
    assert res["games_counted"] == 6 and len(res["games"]) == 6
    assert [g["seats"] for g in res["games"]] == [[i] for i in range(6)]
    r = res["rating"]
    assert (r["mu"], r["sigma"]) != (25.0, 25 / 3) and r["sigma"] < 25 / 3  # the entrant was rated
    assert math.isclose(r["ordinal"], r["mu"] - 3 * r["sigma"])
    assert json.loads((tmp_path / "ev" / "evaluation.json").read_text())["pool_sha256"] == pool.sha256
    # the deals are the pool's: same seeds, roles and names, pool entries on their seats
    from mafialab.arena import load_manifest

    m = load_manifest(tmp_path / "ev")
    for slot, d in zip(m.slots, pool.deals, strict=True):
        assert (slot.seed, slot.roles, slot.names) == (d.seed, d.roles, d.names)
        names = [e.name for e in m.config.roster]
        seats = [names[e] for e in slot.seating]
        assert seats[d.entrant_seat] == "newcomer"
        assert [n for i, n in enumerate(seats) if i != d.entrant_seat] == [
            n for i, n in enumerate(d.seating) if i != d.entrant_seat
        ]
    # a plain re-rating of the same games would move the pool's ratings: the test is not vacuous
    rerated = {e.name: (e.rating.mu, e.rating.sigma) for e in build_index(tmp_path / "ev").leaderboard}
    assert any(rerated[k] != (v.mu, v.sigma) for k, v in pool.ratings.items())


def test_a_tampered_or_foreign_pool_is_refused(pool_season: Path, tmp_path: Path):
    path = tmp_path / "pool.json"
    freeze_pool(pool_season, path)
    data = json.loads(path.read_text())
    data["ratings"]["e1"]["mu"] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(PoolError, match=r"sha256: the file says .* hashes to"):
        load_pool(bad)
    data = json.loads(path.read_text())
    data["protocol"] = "mafialab-pool/0"
    bad.write_text(json.dumps(data))
    with pytest.raises(PoolError, match="protocol: 'mafialab-pool/0' is not 'mafialab-pool/1'"):
        load_pool(bad)
    res = runner.invoke(app, ["season", "evaluate", "random", "--pool", str(bad), "--out", str(tmp_path / "ev")])
    assert res.exit_code == 2 and "--pool" in res.output and "protocol" in res.output
    assert not (tmp_path / "ev" / "season.json").exists()
    with pytest.raises(PoolError, match="name: 'e1' is a pool entry's name"):
        asyncio.run(evaluate_entrant("random", path, tmp_path / "ev2", name="e1"))


def test_cli_freeze_and_evaluate(pool_season: Path, tmp_path: Path):
    path = tmp_path / "p.json"
    res = runner.invoke(app, ["season", "freeze-pool", str(pool_season), "--out", str(path)])
    assert res.exit_code == 0, res.output
    sha = json.loads(path.read_text())["sha256"]
    assert sha in res.output
    res = runner.invoke(app, ["season", "evaluate", "random", "--pool", str(path), "--out", str(tmp_path / "ev")])
    assert res.exit_code == 0, res.output
    assert sha in res.output and "ratings unchanged" in res.output


def test_leaderboard_says_too_few_games_instead_of_effects(pool_season: Path):
    res = runner.invoke(app, ["season", "leaderboard", str(pool_season)])
    assert res.exit_code == 0, res.output
    assert "Name and speaking-position effects" in res.output
    assert "too few games: 6 counted games; an estimate needs 30" in res.output
    index = json.loads((pool_season / "index.json").read_text())
    assert index["effects"]["games"] == 6 and "no_estimate" in index["effects"]["names"]


def _synthetic(n_games: int, pos_effect: float, name_effect: float, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    names = [f"N{i}" for i in range(12)]
    rows = []
    for g in range(n_games):
        order = list(range(12))
        rng.shuffle(order)
        shuffled = names[:]
        rng.shuffle(shuffled)
        for s in range(12):
            mafia = int(s < 3)
            pos = order.index(s) / 11
            eta = (0.4 if mafia else -0.2) + pos_effect * (pos - 0.5) + (name_effect if shuffled[s] == "N3" else 0.0)
            won = int(rng.random() < 1 / (1 + math.exp(-eta)))
            rows.append({"game": f"g{g}", "won": won, "mafia": mafia, "name": shuffled[s], "position": pos,
                         "last": int(pos == 1)})  # fmt: skip
    return rows


def test_effects_recover_a_planted_direction():
    eff = seat_effects(_synthetic(400, pos_effect=1.5, name_effect=1.2))
    pos = eff["position"]
    assert pos["odds_ratio"] > 1 and pos["low"] > 1  # later speakers win more, interval clear of 1
    assert abs(pos["log_odds"] - 1.5) < 0.6
    names = eff["names"]
    assert names["p"] < 0.01 and names["largest"]["name"] == "N3" and names["largest"]["low"] > 1
    null = seat_effects(_synthetic(400, pos_effect=-1.5, name_effect=0.0, seed=2))
    assert null["position"]["high"] < 1  # the opposite direction comes out opposite


def test_effects_say_why_there_is_no_estimate():
    eff = seat_effects(_synthetic(10, 1.0, 0.0))
    assert eff["games"] == 10
    for k in ("position", "last_speaker", "names"):
        assert eff[k] == {"no_estimate": "too few games: 10 counted games; an estimate needs 30"}


def test_power_matches_the_formula_on_a_known_case():
    p = games_needed(0.2, 0.5, n_entries=13, n_seats=12)
    # n = ceil((2 * 1.959964 * 0.5 / 0.2)^2) = ceil(96.04) = 97; games = ceil(97 * 13 / 12) = 106
    assert p["seat_games_per_entry"] == 97 and p["games"] == 106
    assert math.isclose(p["z"], 1.959963984540054)
    assert games_needed(0.1, 0.5, 12, 12)["seat_games_per_entry"] == 385  # ceil(384.15)
    with pytest.raises(ValueError, match="--interval-width"):
        games_needed(0.0, 0.5, 12, 12)


def test_power_from_a_pilot_season(pool_season: Path, tmp_path: Path):
    index = build_index(pool_season)
    ss = sum(
        e.overall.wins * (e.overall.n - e.overall.wins) / e.overall.n for e in index.leaderboard if e.overall.n > 1
    )
    dof = sum(e.overall.n - 1 for e in index.leaderboard if e.overall.n > 1)
    sd, n = pilot_sd(pool_season)
    assert math.isclose(sd, math.sqrt(ss / dof)) and n == 72
    f = tmp_path / "s.yaml"
    f.write_text(json.dumps(season(games=3)))
    res = runner.invoke(app, ["season", "plan", str(f), "--interval-width", "0.2", "--prior-sd", "0.5"])
    assert res.exit_code == 0, res.output
    assert "needs 97 seat-games per entry = 106 games with 13 entries" in res.output
    res = runner.invoke(app, ["season", "plan", str(f), "--interval-width", "0.2", "--pilot", str(pool_season)])
    assert res.exit_code == 0, res.output
    want = games_needed(0.2, sd, 13, 12)
    assert f"= {want['games']} games with 13 entries" in res.output and f"SD {sd:.3f}" in res.output
    res = runner.invoke(app, ["season", "plan", str(f), "--interval-width", "0.2"])
    assert res.exit_code == 2 and "exactly one of --pilot" in res.output
