"""The report's ``instrument`` section: calls, tokens and the fate of every probe answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import DEFAULT, MAFIASCOPE, GameData, compute_report
from mafialab.analysis._data import Call, Probe
from mafialab.analysis._instrument import LOSS_CAUSES, game_instrument, probe_fate, usable
from mafialab.cli import app
from mafialab.record import CALLS_FILE, PROBES_FILE
from mafialab.rules import MAFIASCOPE7

RANKING = '[{"player": "Bailey", "score": 7}, {"player": "Casey", "score": 3}]'


def _probe(raw: str, probe_id: str = "suspicion_ranking", error: str | None = None, **kw) -> Probe:  # type: ignore[no-untyped-def]
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    return Probe(
        line=0,
        round=1,
        msg=1,
        position=0,
        player="Alex",
        probe_id=probe_id,
        parsed=kw.pop("parsed", parsed),
        parse_ok=kw.pop("parse_ok", parsed is not None),
        raw=raw,
        ts=None,
        after_seq=3,
        error=error,
        **kw,
    )


@pytest.mark.parametrize(
    ("probe", "fate"),
    [
        (_probe(RANKING), "raw"),
        (_probe(f"```json\n{RANKING}\n```"), "repaired"),  # fences stripped
        (_probe(RANKING[:-30]), "repaired"),  # cut after the first item: closed, the cut item dropped
        (_probe("ERROR: ('Connection aborted.', ConnectionResetError(104))"), "transport_error"),  # imported
        (_probe("", error="APIConnectionError: Connection error."), "transport_error"),  # native
        (_probe("", error="empty answer"), "empty"),
        (_probe("   "), "empty"),
        (_probe('[{"player": "Bail'), "truncated"),  # nothing complete to keep
        (_probe("Sure! Here is my ranking of", error="answer is not JSON (length)"), "truncated"),
        (_probe("I would rather not say."), "unparseable"),
        (_probe('[{"player": "A"]'), "unparseable"),  # a closer that does not match: malformed, not cut
        (_probe('{"rankings": ' + RANKING + "}"), "wrong_shape"),  # a wrapper object
        (_probe('{"toward_me": {"Bailey": "trusts"}}', "social_map"), "wrong_shape"),
        (_probe('{"toward_me": []}', "social_map"), "wrong_shape"),  # parses, says nothing: not usable
        (_probe("[]"), "wrong_shape"),  # an empty ranking: not usable (report, instrument and viewer alike)
        (_probe('{"toward_me": [{"player": "A", "attitude": "trusts"}]}', "social_map"), "raw"),
        (_probe("{}", "planned_action"), "wrong_shape"),
        (_probe('{"action": "vote"}', "planned_action", schema_ok=False), "schema_failed"),
        # a ranking of the probe's shape whose record failed its own schema check (score -2 < 0)
        (_probe('[{"player": "Bailey", "score": -2}]', schema_ok=False), "schema_failed"),
        (_probe('[{"player": "Bailey", "score": 7}]', schema_ok=True), "raw"),
        (_probe('{"action": "vote"}', "planned_action"), "raw"),
    ],
)
def test_probe_fate(probe: Probe, fate: str) -> None:
    assert probe_fate(probe, MAFIASCOPE) == fate


def _game(calls: list[Call] | None, probes: list[Probe], turns: int = 0) -> GameData:
    g = GameData(
        game_id="g",
        path=Path("g"),
        rules=MAFIASCOPE7,
        source="mafialab",
        names=["Alex", "Bailey", "Casey"],
        role={"Alex": "Villager", "Bailey": "Mafia", "Casey": "Villager"},
        mafia={"Bailey"},
        probes=probes,
        calls=calls,
        agent_turns=turns,
    )
    return g


def test_game_instrument_from_calls() -> None:
    calls = [
        Call("speak", 100, 20, "ok"),
        Call("vote", 120, 5, "retried"),
        Call("probe", 300, 40, "ok"),
        Call("probe", 310, 0, "error"),
        Call("probe", 290, 50, "ok"),
        Call("judge", 1000, 200, "ok"),  # not a game call, not a probe call
    ]
    probes = [_probe(RANKING), _probe("", error="APIConnectionError: x"), _probe(f"```{RANKING}```")]
    row = game_instrument(_game(calls, probes, turns=7), DEFAULT)
    assert row["calls_source"] == "calls.jsonl"
    assert (row["game_calls"], row["probe_calls"]) == (2, 3)
    assert row["multiplier"] == pytest.approx(5 / 2)  # (probe + game calls) / game calls
    assert row["tokens"] == {"game": {"prompt": 220, "completion": 25}, "probe": {"prompt": 900, "completion": 90}}
    assert row["probe_answers"] == {"records": 3, "raw": 1, "repaired": 1, "unusable": 1}
    assert row["lost"] == {c: int(c == "transport_error") for c in LOSS_CAUSES}


def test_game_instrument_from_the_game_log() -> None:
    # no calls.jsonl (an imported game): the agents' turns are the game calls, probe records the probe calls
    row = game_instrument(_game(None, [_probe(RANKING)] * 4, turns=2), MAFIASCOPE)
    assert row["calls_source"] == "game log"
    assert (row["game_calls"], row["probe_calls"], row["multiplier"]) == (2, 4, 3.0)
    assert row["tokens"] == {"game": None, "probe": None}  # nothing recorded, nothing guessed
    assert game_instrument(_game(None, [], turns=0), MAFIASCOPE)["multiplier"] is None


def test_report_pools_the_instrument() -> None:
    a = _game([Call("speak", 10, 1, "ok"), Call("probe", 5, 5, "ok")], [_probe(RANKING)])
    b = _game(None, [_probe("nope"), _probe(RANKING)], turns=3)
    b.game_id = "h"
    ins = compute_report([a, b], DEFAULT, resamples=10).model_dump(mode="json")["instrument"]
    assert [r["game_id"] for r in ins["games"]] == ["g", "h"]
    pooled = ins["pooled"]
    assert (pooled["games"], pooled["game_calls"], pooled["probe_calls"]) == (2, 4, 3)
    assert pooled["multiplier"] == pytest.approx(7 / 4)
    assert pooled["tokens"] == {"game": {"prompt": 10, "completion": 1}, "probe": {"prompt": 5, "completion": 5}}
    assert pooled["tokens_games"] == 1
    assert pooled["probe_answers"] == {"records": 3, "raw": 2, "repaired": 0, "unusable": 1}
    assert pooled["lost"]["unparseable"] == 1


def test_scripted_game_report_has_every_field(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["play", "--rules", "mafiascope7", "--agents", "scripted", "--probes", "default",
                              "--seed", "3", "--out", str(tmp_path)])  # fmt: skip
    assert res.exit_code == 0, res.output
    (game,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    n_records = len((game / PROBES_FILE).read_text().splitlines())
    for method in ("default", "mafiascope"):
        out = runner.invoke(app, ["report", str(tmp_path), "-f", "json", "-m", method, "--resamples", "20"])
        assert out.exit_code == 0, out.output
        rep = json.loads(out.stdout)
        for side in ("innocents", "mafia"):
            vc = rep["vote_coupling"][side]
            assert set(vc["baselines"]) == set(vc["increment"]) == {"most_mentioned", "most_accused", "previous_target"}
            for x in vc["baselines"].values():
                assert set(x) == {"hits", "n", "rate", "ci95"}
            for x in vc["increment"].values():
                assert set(x) == {"n", "probe_hits", "baseline_hits", "b", "c", "mcnemar_p", "diff", "diff_ci95"}
        # scripted speeches name players: the transcript predicts some innocent votes
        assert rep["vote_coupling"]["innocents"]["baselines"]["most_mentioned"]["n"] > 0
        ins = rep["instrument"]
        (row,) = ins["games"]
        assert row["calls_source"] == ("calls.jsonl" if (game / CALLS_FILE).is_file() else "game log")
        assert row["probe_calls"] == n_records and row["game_calls"] > 0
        assert row["probe_answers"]["records"] == n_records == row["probe_answers"]["raw"]  # scripted answers are JSON
        assert sum(row["lost"].values()) == row["probe_answers"]["unusable"] == 0
    csv_out = runner.invoke(app, ["report", str(tmp_path), "-f", "csv", "--resamples", "20"]).stdout
    assert "instrument,pooled,multiplier," in csv_out
    assert "vote_coupling,innocents increment most_mentioned,mcnemar_p," in csv_out
    table = CliRunner(env={"COLUMNS": "250"}).invoke(app, ["report", str(tmp_path), "--resamples", "20"]).stdout
    assert "F4 against the transcript" in table and "Instrument: cost" in table and "Instrument: probe answers" in table


def test_usable_respects_the_records_schema_check() -> None:
    """An answer whose record says ``schema_ok: false`` is not usable, whatever its shape (one definition)."""
    bad = _probe('[{"player": "Bailey", "score": -2}]', schema_ok=False)
    assert not usable(bad, MAFIASCOPE)
    assert usable(_probe('[{"player": "Bailey", "score": 2}]', schema_ok=True), MAFIASCOPE)
