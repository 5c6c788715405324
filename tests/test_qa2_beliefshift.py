"""QA2 regressions for ``mafialab beliefshift``: small-sample Spearman p-values, bad results files."""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.beliefshift import (
    ModelInfo,
    ModelsFileError,
    ResultRecord,
    build_report,
    load_models_yaml,
    write_jsonl,
)
from mafialab.beliefshift._annotate import GameContext, RulesAnnotator
from mafialab.cli import app
from tests.beliefshift_fixtures import result


def test_spearman_p_is_exact_for_a_few_models() -> None:
    # four models whose mean prior about the (wolf) target rises with size: rho = 1.
    # scipy's t approximation gives p = 0 here; the exact two-sided p is the share of the
    # 4! = 24 orderings with |rho| = 1 (identity and reversal): 2 / 24.
    sizes = {"m2": 2.0, "m8": 8.0, "m20": 20.0, "m70": 70.0}
    recs = [
        result(label, i, "town", "mafia", "accuse", (0, prior), (1, 1))
        for i, (label, prior) in enumerate(zip(sizes, (-1, 0, 1, 2), strict=True))
    ]
    infos = {k: ModelInfo(label=k, params_b=v) for k, v in sizes.items()}
    rep = build_report(recs, infos)
    sp = {r[0]: r for r in rep.tables["spearman"].rows}
    assert sp["prior.wolf"][1] == 4
    assert sp["prior.wolf"][2] == pytest.approx(1.0)
    assert sp["prior.wolf"][3] == pytest.approx(2 / 24)
    # a quantity equal in every model has no correlation at all
    assert math.isnan(sp["prior.village"][2]) and math.isnan(sp["prior.village"][3])


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({"prior": {"accuser": 7, "target": 0}}, "prior.accuser: 7 is outside the scale -3..+3"),
        ({"shift": {"accuser": 0, "target": -4}}, "shift.target: -4 is outside the scale -3..+3"),
        ({"shift": None}, "shift: missing in an observation marked ok"),
    ],
)
def test_report_refuses_off_scale_or_missing_ratings(tmp_path: Path, edit: dict, field: str) -> None:
    # a hand-edited results line used to crash `report` with a ValueError traceback (7) or be
    # scored silently; now it is a clear error naming the line and the field
    good = result("m", 1, "town", "mafia", "accuse", (0, 1), (1, 1))
    bad = result("m", 2, "town", "mafia", "accuse", (0, 1), (1, 1)).model_dump(mode="json") | edit
    path = tmp_path / "res.jsonl"
    path.write_text(good.model_dump_json() + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["beliefshift", "report", str(path), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 2, res.output
    assert f"res.jsonl:2: invalid result record ({field})" in " ".join(res.output.split())
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_independent_shifts_may_reach_six() -> None:
    base = result("m", 1, "town", "mafia", "accuse", (-3, -3), (3, 3)).model_dump(mode="json")
    ind = base | {"protocol": "independent", "posterior": {"accuser": 3, "target": 3}}
    rec = ResultRecord.model_validate(ind | {"shift": {"accuser": 6, "target": 6}})
    assert rec.shift is not None and rec.shift.target == 6
    with pytest.raises(ValueError, match=re.escape("shift.accuser: 7 is outside the scale -6..+6")):
        ResultRecord.model_validate(ind | {"shift": {"accuser": 7, "target": 6}})
    with pytest.raises(ValueError, match="posterior: missing in an observation marked ok"):
        ResultRecord.model_validate(ind | {"posterior": None})
    # a failed observation may lack its ratings
    assert not ResultRecord.model_validate(base | {"ok": False, "cause": "empty", "shift": None}).ok


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_models_yaml_params_b_must_be_finite(tmp_path: Path, value: str) -> None:
    # YAML's .nan / .inf passed the "> 0" check (.inf became a >=30B model, .nan a sized one)
    path = tmp_path / "models.yaml"
    path.write_text(f"models:\n  - {{label: a, params_b: {value}}}\n", encoding="utf-8")
    with pytest.raises(ModelsFileError, match=r"models\.0\.params_b: must be a finite number > 0"):
        load_models_yaml(path)


NAMES = ("Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray")


def _label(text: str) -> list[tuple[str, str]]:
    ctx = GameContext(names=NAMES)
    cands = {n: i for i, n in enumerate(NAMES) if n != "Alex"}
    return [(NAMES[lab.target], lab.category) for lab in RulesAnnotator().label_text(text, "Alex", cands, ctx)]


def test_rules_annotator_survives_degenerate_repetition() -> None:
    # a looping model's "Bailey, Bailey, ..." (8 kB) took 195 s (cubic backtracking in the
    # name-list pattern and the sentence-subject scans); the guard is a hang guard, not a speed target
    text = "Bailey, " * 1000 + "is mafia. Gray is probably a wolf, and " + "very long " * 2000
    box: list[list[tuple[str, str]]] = []
    th = threading.Thread(target=lambda: box.append(_label(text)), daemon=True)
    th.start()
    th.join(60)
    assert box, "the rules annotator did not finish within 60 s"
    assert ("Gray", "suspect") in box[0]


def test_subject_suspicion_is_found_in_long_sentences() -> None:
    long_tail = " and then everyone argued about it" * 200
    assert _label(
        "Kennedy aside, Casey held back on the vote, which could be a smart Mafia move" + long_tail + "."
    ) == [("Casey", "suspect")]
    assert _label("Dana's vote on day one feels calculated" + long_tail + ".") == [("Dana", "suspect")]
    # the subject of the clause, wherever it stands (the cue annotator reads clauses, not openings)
    assert _label("We all noticed that yesterday Dana's vote felt calculated" + long_tail + ".") == [
        ("Dana", "suspect")
    ]
    assert _label("We all noticed that Casey voted against Dana, which felt calculated" + long_tail + ".") == [
        ("Casey", "suspect")
    ]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen benchmark of two native scripted werewolf7 games (rules annotator)."""
    root = tmp_path_factory.mktemp("bs")
    r = CliRunner()
    res = r.invoke(
        app, ["play", "-r", "werewolf7", "-a", "scripted", "-s", "7", "--games", "2", "-o", str(root / "logs")]
    )
    assert res.exit_code == 0, res.output
    res = r.invoke(app, ["beliefshift", "annotate", str(root / "logs"), "--out", str(root / "ann.jsonl")])
    assert res.exit_code == 0, res.output
    res = r.invoke(
        app, ["beliefshift", "freeze", str(root / "logs"), str(root / "ann.jsonl"), "--out", str(root / "b.jsonl")]
    )
    assert res.exit_code == 0, res.output
    return root / "b.jsonl"


@pytest.mark.parametrize(("window", "max_tokens"), [(100, 1024), (1088, 1024)])
def test_run_refuses_a_window_smaller_than_the_generation_budget(
    bench: Path, tmp_path: Path, window: int, max_tokens: int
) -> None:
    # a 100-token window with --max-tokens 1024 used to run every observation with all its
    # history dropped and prompts that still could not fit; 1088 = 1024 + 64 reserved is too small too
    out = tmp_path / "res.jsonl"
    args = ["beliefshift", "run", str(bench), "--model", f"mock/x?context_window={window}", "--out", str(out)]
    res = CliRunner().invoke(app, [*args, "--max-tokens", str(max_tokens)])
    assert res.exit_code == 2, res.output
    msg = " ".join(res.output.split())
    assert f"--context-window: {window} tokens cannot hold --max-tokens {max_tokens} plus the 64 reserved" in msg
    assert not out.exists()


def test_run_accepts_a_window_just_above_the_budget(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "res.jsonl"
    args = [
        "beliefshift",
        "run",
        str(bench),
        "--model",
        "mock/x?context_window=1089",
        "--out",
        str(out),
        "--limit",
        "1",
    ]
    res = CliRunner().invoke(app, [*args, "--max-tokens", "1024"])
    assert res.exit_code == 0, res.output
    assert out.exists()


def _tampered(ann: Path, out: Path, edit: Callable[[dict], list[dict]]) -> Path:
    lines = [json.loads(x) for x in ann.read_text(encoding="utf-8").splitlines()]
    out.write_text("\n".join(json.dumps(r) for r in [lines[0], *edit(lines[1])]) + "\n", encoding="utf-8")
    return out


def _with_target(a: dict, seat: int) -> dict:
    return a | {"target": a["target"] | {"seat": seat}}


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        # a target seat the game lacks raised StopIteration (a traceback)
        (lambda a: [_with_target(a, 99)], "target.seat 99 is not a seat of the game"),
        # the speaker as its own target was frozen as an item
        (lambda a: [_with_target(a, a["accuser"]["seat"])], "is the speaker"),
        # a hand-merged file with the same (message, target) twice gave two items with one item_id
        (lambda a: [a, a], "a second annotation of target.seat"),
    ],
)
def test_freeze_refuses_impossible_annotations(
    bench: Path, tmp_path: Path, edit: Callable[[dict], list[dict]], expected: str
) -> None:
    root = bench.parent
    bad = _tampered(root / "ann.jsonl", tmp_path / "bad.jsonl", edit)
    res = CliRunner().invoke(
        app, ["beliefshift", "freeze", str(root / "logs"), str(bad), "--out", str(tmp_path / "b.jsonl")]
    )
    assert res.exit_code == 2, res.output
    assert expected in " ".join(res.output.split())
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_freeze_names_the_speaker_from_the_log(bench: Path, tmp_path: Path) -> None:
    # the message line took the accuser's name from the annotation, so a hand-made file could
    # put another name in every model's prompt
    root = bench.parent
    good = json.loads((root / "ann.jsonl").read_text(encoding="utf-8").splitlines()[1])
    bad = _tampered(
        root / "ann.jsonl", tmp_path / "bad.jsonl", lambda a: [a | {"accuser": a["accuser"] | {"name": "Mallory"}}]
    )
    out = tmp_path / "b.jsonl"
    res = CliRunner().invoke(app, ["beliefshift", "freeze", str(root / "logs"), str(bad), "--out", str(out)])
    assert res.exit_code == 0, res.output
    item = json.loads(out.read_text(encoding="utf-8").splitlines()[1])
    assert "Mallory" not in item["message"]
    assert item["message"].startswith(f"[day {good['round']}, message {good['index']}] {good['accuser']['name']}: ")


def test_report_out_that_is_a_file_names_the_option(tmp_path: Path) -> None:
    # was "error: <path>: File exists" from deep in the writer, after all tables were built
    res_file = tmp_path / "res.jsonl"
    res_file.write_text(result("m", 1, "town", "mafia", "accuse", (0, 1), (1, 1)).model_dump_json() + "\n")
    taken = tmp_path / "taken"
    taken.write_text("keep me")
    res = CliRunner().invoke(app, ["beliefshift", "report", str(res_file), "--out", str(taken)])
    assert res.exit_code == 2, res.output
    assert "--out:" in res.output and "is a file, not a directory" in " ".join(res.output.split())
    assert taken.read_text() == "keep me"


@pytest.mark.parametrize("cmd", ["annotate", "freeze", "run"])
def test_out_that_is_a_directory_is_refused_first(bench: Path, tmp_path: Path, cmd: str) -> None:
    # annotate/freeze did all the work (a model annotator: every call) and then failed naming
    # "<out>.tmp", leaving that file behind
    root = bench.parent
    d = tmp_path / "adir"
    d.mkdir()
    args = {
        "annotate": [str(root / "logs")],
        "freeze": [str(root / "logs"), str(root / "ann.jsonl")],
        "run": [str(bench), "--model", "mock/x"],
    }[cmd]
    res = CliRunner().invoke(app, ["beliefshift", cmd, *args, "--out", str(d)])
    assert res.exit_code == 2, res.output
    assert "--out:" in res.output and "is a directory, not a file" in " ".join(res.output.split())
    assert list(tmp_path.iterdir()) == [d] and list(d.iterdir()) == []


def test_write_jsonl_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        write_jsonl(tmp_path, None, [])
    assert list(tmp_path.iterdir()) == []
