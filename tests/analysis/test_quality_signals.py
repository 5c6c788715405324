"""Quality signals beside the integrity gate: copied speeches, constant answers, off-roster names.

A game can pass the integrity gate (no fallbacks, every answer parsed) and be noise: speeches
that copy the seat's prompt, probe answers that never vary, names that are no seat of the
game. ``play``'s summary, ``report``'s instrument section and its JSON/CSV name them per model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mafialab._quality import (
    CONSTANT_MIN_ANSWERS,
    common_value,
    constant_value,
    copied_words,
    is_constant,
    is_junk,
    off_roster,
)
from mafialab.analysis import DEFAULT, game_data, game_quality
from mafialab.cli import app
from mafialab.record import iter_call_records, iter_game_dirs, read_game
from mafialab.testing import OpenAIStub
from mafialab.testing._stub import default_responder
from mafialab.viewer import build_site
from mafialab.viewer._build import read_data_file, site_rows

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})

OWN = "I watched the last vote closely and I still cannot tell who leads the wolves here."


def _schema(body: dict[str, Any]) -> dict[str, Any]:
    rf = body.get("response_format") or {}
    return (rf.get("json_schema") or {}).get("schema") or {}


def _echo(body: dict[str, Any]) -> str:
    """A model that answers every speech with its system prompt (then a sentence of its own)."""
    props = _schema(body).get("properties", {})
    if "text" in props:
        system = body["messages"][0]["content"]
        return json.dumps({"text": f"{system[:400]} {OWN}"})
    return default_responder(body)


def _off_roster(body: dict[str, Any]) -> str:
    """A model that ranks a player who is not in the game (and answers the rest validly)."""
    if _schema(body).get("type") == "array":
        return json.dumps([{"player": "Zebedee", "score": 90}])
    return default_responder(body)


JUNK = ("][", ")(,", "{</thead><table><tbody><tr class=")
"""Speeches SmolLM2-135M gave in a trial of ``play`` (5 of 12 were of this kind)."""


def _junk(body: dict[str, Any]) -> str:
    """A model whose every speech and vote statement is markup or punctuation."""
    props = _schema(body).get("properties", {})
    if "text" in props or "statement" in props:
        ans = json.loads(default_responder(body))
        n = sum(len(m.get("content") or "") for m in body["messages"])
        for k in ("text", "statement"):
            if k in props:
                ans[k] = JUNK[n % len(JUNK)]
        return json.dumps(ans)
    return default_responder(body)


def test_junk_definition() -> None:
    for text in JUNK:
        assert is_junk(text), text
    assert is_junk("!!! ?? ... x1")  # letters are less than half of it
    assert is_junk("a b c")  # no word of two letters
    for text in ("I think Bailey is lying.", "Vote Alex!!!", "<b>Alex</b> is mafia", "Ok", "Алекс врёт", "", "  "):
        assert not is_junk(text), text


def test_junk_speeches_are_flagged(tmp_path: Path) -> None:
    with OpenAIStub(responder=_junk).in_thread() as stub:
        res = runner.invoke(
            app,
            ["play", "--agents", "openai/junk", "--seat", "0=scripted", "--base-url", stub.base_url,
             "--seed", "2", "--allow-degraded", "--out", str(tmp_path / "g")],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    (game,) = iter_game_dirs(tmp_path / "g")
    g = game_data(read_game(game))
    said = [m for m in g.messages if m.speaker != g.names[0] and m.text.strip()]
    assert said and all(m.text in JUNK for m in said)
    q = game_quality(g, DEFAULT)
    r = q["by_model"]["openai/junk"]
    assert r["junk_speeches"] == r["public_texts"] == len(said) == q["junk_speeches"]
    assert q["by_model"]["scripted"]["junk_speeches"] == 0 < q["by_model"]["scripted"]["public_texts"]
    out = " ".join(res.output.split())
    line = f"junk speeches: openai/junk {len(said)} of {len(said)} public texts are markup or punctuation, not words"
    assert line in out and "none fired" not in out
    res = runner.invoke(app, ["report", str(tmp_path / "g"), "--no-cache", "--resamples", "20", "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert f"instrument,pooled,quality_junk_speeches,{len(said)}," in res.stdout
    res = runner.invoke(app, ["report", str(tmp_path / "g"), "--no-cache", "--resamples", "20"])
    assert f"quality: {line}" in " ".join(res.output.split())


def test_definitions() -> None:
    prompt = "You are Alex. Your role: Werewolf. Your fellow werewolves are Bailey and Casey tonight."
    assert copied_words("Hello all. Your role: Werewolf. Your fellow werewolves are Bailey and Casey!", prompt) == 10
    assert copied_words("your role werewolf your fellow werewolves are", prompt) == 0  # 7 words: not a copy
    assert copied_words("I think Bailey is odd and Casey too, frankly speaking all", prompt) == 0
    assert constant_value(["[]"] * CONSTANT_MIN_ANSWERS) == "[]"
    assert constant_value(["[]"] * (CONSTANT_MIN_ANSWERS - 1)) is None  # too few to say
    assert constant_value(["[]"] * 11 + ["[1]"]) is None
    assert common_value([(6, "0/0"), (6, "0/0"), (0, None)]) == "0/0" and is_constant(12, "0/0")
    assert common_value([(6, "0/0"), (6, "1/0")]) is None and not is_constant(12, None)
    roster = ["Alex", "Bailey", "Casey"]
    assert off_roster("Zebedee", roster) and not off_roster("**bailey**", roster)
    assert not off_roster("", roster) and not off_roster(None, roster)


def test_an_echoing_model_is_flagged_in_plays_summary(tmp_path: Path) -> None:
    with OpenAIStub(responder=_echo).in_thread() as stub:
        res = runner.invoke(
            app,
            ["play", "--rules", "werewolf7", "--agents", "openai/echo", "--seat", "0=scripted", "--base-url",
             stub.base_url, "--seed", "2", "--allow-degraded", "--out", str(tmp_path)],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    (game,) = iter_game_dirs(tmp_path)
    calls = [c for _, c in iter_call_records(game) if c.get("kind") == "call" and c["purpose"] == "speak"]
    assert calls and all(c["copied_words"] >= 8 for c in calls if c["seat"] != 0)
    q = game_quality(game_data(read_game(game)), DEFAULT)
    n = q["by_model"]["openai/echo"]["copied_speeches"]
    assert n == len([c for c in calls if c["seat"] != 0]) > 0
    out = " ".join(res.output.split())
    assert "quality signals" in out
    assert f"copied speeches: openai/echo {n} of {n} texts copy 8+ words of the seat's own prompt" in out


def test_a_clean_model_gets_no_quality_line(tmp_path: Path) -> None:
    with OpenAIStub().in_thread() as stub:
        res = runner.invoke(
            app, ["play", "--agents", "openai/m", "--base-url", stub.base_url, "--seed", "2", "--out", str(tmp_path)]
        )
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    # what was checked, never a verdict of quality
    assert (
        "quality signals: none fired (copied speeches, junk speeches, constant answers, off-roster names); "
        "they do not judge play" in out
    )
    assert "answers that parse but carry little" not in out


def test_constant_probe_answers_are_flagged_in_report(tmp_path: Path) -> None:
    # the stub's default answer to an array schema is [] : every suspicion ranking empty
    with OpenAIStub().in_thread() as stub:
        res = runner.invoke(
            app,
            ["play", "--agents", "openai/zero", "--probes", "suspicion", "--base-url", stub.base_url,
             "--seed", "2", "--out", str(tmp_path / "g")],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "constant answers: openai/zero suspicion_ranking" in " ".join(res.output.split())
    res = runner.invoke(app, ["report", str(tmp_path / "g"), "--no-cache", "--resamples", "20"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "quality: constant answers: openai/zero suspicion_ranking" in out and ", all []" in out
    res = runner.invoke(app, ["report", str(tmp_path / "g"), "--no-cache", "--resamples", "20", "--format", "json"])
    rep = json.loads(res.stdout)
    (flag,) = rep["instrument"]["pooled"]["quality"]["constant"]
    assert flag["model"] == "openai/zero" and flag["probe_id"] == "suspicion_ranking" and flag["value"] == "[]"
    assert flag["answers"] >= CONSTANT_MIN_ANSWERS
    assert rep["instrument"]["games"][0]["quality"]["constant"] == [flag]
    res = runner.invoke(app, ["report", str(tmp_path / "g"), "--no-cache", "--resamples", "20", "--format", "csv"])
    assert "instrument,pooled,quality_constant_answers,1" in res.stdout
    # the viewer: a note on the game page, its code in the dashboard's notes column
    build_site(tmp_path / "g", tmp_path / "site", jobs=1)
    (row,) = site_rows(tmp_path / "site")  # the dashboard rows live in the pages
    assert "quality" in row["notes"]
    payload = read_data_file(tmp_path / "site" / "data" / "g" / f"{row['file']}.js")
    (note,) = [n for n in payload["notes"] if n["code"] == "quality"]
    assert note["level"] == "warn" and "constant answers: openai/zero suspicion_ranking" in note["text"]


def test_off_roster_names_are_counted(tmp_path: Path) -> None:
    with OpenAIStub(responder=_off_roster).in_thread() as stub:
        res = runner.invoke(
            app,
            ["play", "--agents", "openai/x", "--probes", "suspicion", "--base-url", stub.base_url,
             "--seed", "2", "--out", str(tmp_path)],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    (game,) = iter_game_dirs(tmp_path)
    g = game_data(read_game(game))
    answered = [p for p in g.probes if p.raw.strip()]
    q = game_quality(g, DEFAULT)
    assert q["off_roster"] == q["by_model"]["openai/x"]["off_roster"] == len(answered) > 0
    assert f"off-roster names: openai/x {len(answered)} names that are no seat of the game" in " ".join(
        res.output.split()
    )
