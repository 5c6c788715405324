"""The ``mafialab fork`` commands: steps, run (and --dry-run), compare, sweep, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mafialab._words import count
from mafialab.cli import app
from mafialab.record import read_game

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def _parent(tmp_path: Path) -> Path:
    res = runner.invoke(
        app, ["play", "--rules", "mafiascope7-v2", "--agents", "scripted", "--seed", "4", "--out", str(tmp_path / "r")]
    )
    assert res.exit_code == 0, res.output
    return next((tmp_path / "r").iterdir())


def test_steps_run_compare(tmp_path: Path) -> None:
    g = _parent(tmp_path)
    res = runner.invoke(app, ["fork", "steps", str(g), "--format", "json"])
    assert res.exit_code == 0, res.output
    steps = json.loads(res.output)
    speech = next(s for s in steps if s["kind"] == "speak" and s["round"] == 1)
    assert speech["label"] == f"1:day:{speech['index']}"
    at = speech["label"]
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", at, "--inject", '{"text": "Casey is Mafia."}', "-n", "4", "--out",
              str(tmp_path / "a")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert len(list((tmp_path / "a").iterdir())) == 4
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", str(speech["id"]), "-n", "3", "--out", str(tmp_path / "b")]
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["fork", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "json"])
    assert res.exit_code == 0, res.output
    cmp = json.loads(res.output)
    assert cmp["a"]["n"] == 4 and cmp["b"]["n"] == 3
    assert cmp["a"]["intervention"]["type"] == "inject" and cmp["b"]["intervention"]["type"] == "resample"
    branch = next((tmp_path / "a").iterdir())
    assert read_game(branch).header.parent.step == speech["id"]  # type: ignore[union-attr]


def test_dry_run_plays_nothing_and_errors_name_the_option(tmp_path: Path) -> None:
    g = _parent(tmp_path)
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", "12", "-n", "5", "--dry-run", "--out", str(tmp_path / "x")]
    )
    assert res.exit_code == 0, res.output
    assert "5 branches" in res.output and "no calls.jsonl" in res.output
    assert not (tmp_path / "x").exists()
    res = runner.invoke(app, ["fork", "run", str(g), "--at", "999", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "--at: no forkable step '999'" in res.output
    res = runner.invoke(app, ["fork", "run", str(g), "--at", "12", "--inject", "{bad", "--out", str(tmp_path / "x")])
    assert (
        res.exit_code == 2
        and "--inject: not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"
        in res.output
    )
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", "12", "--resample", "--belief", "0=x", "--out", str(tmp_path / "x")]
    )
    assert res.exit_code == 2 and "give only one of" in res.output
    res = runner.invoke(app, ["fork", "run", str(g), "--at", "12", "--night", "0=Zed", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "--night: unknown target 'Zed'" in res.output


def test_sweep_prints_a_row_per_step(tmp_path: Path) -> None:
    g = _parent(tmp_path)
    res = runner.invoke(
        app, ["fork", "sweep", str(g), "-n", "2", "--steps", "10,16", "--out", str(tmp_path / "s"), "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert [r["step"] for r in rows] == [10, 16]
    assert all(r["n"] == 2 and r["town"]["k"] + r["mafia"]["k"] == 2 for r in rows)
    res = runner.invoke(app, ["fork", "sweep", str(g), "-n", "1", "--steps", "bogus", "--out", str(tmp_path / "t")])
    assert res.exit_code == 2 and "error: --steps: expected a decision id" in res.output  # the option given


def test_steps_of_a_log_with_an_unreadable_line_say_the_list_stops_at_it(tmp_path: Path) -> None:
    g = _parent(tmp_path)
    full = runner.invoke(app, ["fork", "steps", str(g), "--format", "json"])
    n_all = len(json.loads(full.output))
    lines = (g / "game.jsonl").read_text().splitlines(keepends=True)
    kinds = [json.loads(ln)["kind"] for ln in lines]
    cut = max(i for i, k in enumerate(kinds) if k == "speech")  # the last speech: steps after it are lost
    lines[cut] = '{"kind": "speech", "seq": \n'  # a torn speech in the middle of the game
    (g / "game.jsonl").write_text("".join(lines))
    res = runner.invoke(app, ["fork", "steps", str(g)])
    assert res.exit_code == 0, res.output
    listed = sum(
        1 for ln in res.stdout.splitlines() if ln.strip().startswith("│") and ln.split("│")[1].strip().isdigit()
    )
    assert 0 < listed < n_all  # replay stops at the gap
    warning = " ".join(res.stderr.split())
    assert f"1 unreadable line in the log (the first at {g / 'game.jsonl'}:{cut + 1}):" in warning
    assert f"as far as it still follows the game ({count(listed, 'step')} listed)" in warning


def test_steps_of_a_log_with_a_repeated_line_lose_nothing(tmp_path: Path) -> None:
    # the reader keeps a repeated line's first copy: no event is missing, every step is listed
    g = _parent(tmp_path)
    full = runner.invoke(app, ["fork", "steps", str(g), "--format", "json"])
    lines = (g / "game.jsonl").read_text().splitlines(keepends=True)
    vote = next(i for i, ln in enumerate(lines) if json.loads(ln)["kind"] == "vote")
    lines.insert(vote + 1, lines[vote])
    (g / "game.jsonl").write_text("".join(lines))
    res = runner.invoke(app, ["fork", "steps", str(g), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == json.loads(full.output)
    said = " ".join(res.stderr.split())
    assert "unreadable line" not in said and "missing" not in said, said
    assert f"skipped: {g / 'game.jsonl'}:{vote + 2}: repeated seq" in said


def test_fork_run_names_the_winners_as_the_rule_set_does(tmp_path: Path) -> None:
    res = runner.invoke(app, ["play", "--agents", "scripted", "--seed", "2", "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    g = next((tmp_path / "r").iterdir())  # werewolf7: "Village" and "Werewolves"
    res = runner.invoke(app, ["fork", "run", str(g), "--at", "20", "-n", "4", "--out", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    names = {"town": "Village", "mafia": "Werewolves"}
    won: dict[str, int] = {}
    for branch in (tmp_path / "f").iterdir():
        log = read_game(branch)
        assert log.winner in names
        row = next(line for line in res.output.splitlines() if log.game_id in line)
        assert f" {names[log.winner]} " in row and " town " not in row and " mafia " not in row
        won[names[log.winner]] = won.get(names[log.winner], 0) + 1
    flat = " ".join(res.output.split())
    expected = ", ".join(f"{n} {won[n]}" for n in ("Village", "Werewolves") if n in won)
    assert f"won: {expected}." in flat and "town won" not in flat
    # fork compare and fork sweep name the teams the same way
    res = runner.invoke(app, ["fork", "run", str(g), "--at", "25", "-n", "3", "--out", str(tmp_path / "f2")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["fork", "compare", str(tmp_path / "f"), str(tmp_path / "f2")])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    # the verb agrees with the team's name: "Werewolves wins" read wrong
    assert "P(Village wins)" in flat and "P(Werewolves win)" in flat and "P(town" not in flat
    assert "Werewolves wins" not in flat
    assert "Village: A - B =" in flat and "town: A - B" not in flat
    res = runner.invoke(app, ["fork", "sweep", str(g), "-n", "1", "--steps", "20", "--out", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    assert "P(Village wins)" in " ".join(res.output.split())


def test_a_night_override_after_the_last_night_is_warned_about(tmp_path: Path) -> None:
    # a --night change takes the seat's next night action; at the game's last vote none
    # follows, and the branch used to be counted as changed without a word
    g = _parent(tmp_path)
    steps = json.loads(runner.invoke(app, ["fork", "steps", str(g), "--format", "json"]).output)
    log = read_game(g, warn=False)
    alive = {s.seat for s in log.header.roster} - {e.seat for e in log.events if e.kind == "elimination"}
    seat = next(s.seat for s in log.header.roster if s.seat in alive and s.role in ("Doctor", "Mafia"))
    target = next(s for s in sorted(alive) if s != seat)
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", str(steps[-1]["id"]), "--night", f"{seat}={target}", "-n", "2",
              "--out", str(tmp_path / "late")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    said = " ".join(res.stderr.split())
    assert (
        f"warning: --night: the override never took effect in 2 branches of 2: no night action of seat {seat}" in said
    )
    first_night = next(s for s in steps if s["phase"] == "night" and s["seat"] == seat)
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", str(first_night["id"]), "--night", f"{seat}={target}", "-n", "2",
              "--out", str(tmp_path / "early")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "never took effect" not in res.stderr


def test_an_unknown_format_is_refused_by_every_fork_command(tmp_path: Path) -> None:
    # `--format JSON` or `yaml` printed a table: a script piping it to jq got a table
    g = _parent(tmp_path)
    for args in (
        ["steps", str(g)],
        ["compare", str(g), str(g)],
        ["sweep", str(g), "-n", "1", "--out", str(tmp_path / "s")],
    ):
        res = runner.invoke(app, ["fork", *args, "--format", "yaml"])
        assert res.exit_code == 2, (args, res.output)
        assert (
            "error: --format: 'yaml' is not valid" in " ".join(res.output.split()) and "'table', 'json'" in res.output
        )
    assert not (tmp_path / "s").exists()


def test_a_night_override_that_can_never_be_legal_is_refused_before_playing(tmp_path: Path) -> None:
    # a Mafia seat "killing" its teammate played, fell back, and the batch was labelled (night)
    g = _parent(tmp_path)
    log = read_game(g, warn=False)
    mafia = [s.seat for s in log.header.roster if s.team == "mafia"]
    first = json.loads(runner.invoke(app, ["fork", "steps", str(g), "--format", "json"]).output)[0]
    for target, why in ((mafia[1], "a teammate"), (mafia[0], "the seat itself")):
        res = runner.invoke(
            app, ["fork", "run", str(g), "--at", str(first["id"]), "--night", f"{mafia[0]}={target}", "-n", "1",
                  "--out", str(tmp_path / "x")],
        )  # fmt: skip
        assert res.exit_code == 2, res.output
        name = next(s.name for s in log.header.roster if s.seat == target)
        assert f"error: --night: {name} is {why}, never a legal kill target for seat {mafia[0]}" in res.output
    assert not (tmp_path / "x").exists()
