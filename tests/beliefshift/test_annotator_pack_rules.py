"""The rules annotator as data: its patterns and rule order come from the annotator pack, its
labels are those it gave before (frozen on our fixtures, hashed on the real corpus), and a bad
pack is refused with the file and field named."""

from __future__ import annotations

import importlib.util
import json
from importlib import resources
from pathlib import Path

import pytest
import yaml

from mafialab.beliefshift import RulesAnnotator, load_annotator_pack
from mafialab.beliefshift._annotate import GameContext
from tests.conftest import FIXTURES, MAFIASCOPE, require_real

ROOT = Path(__file__).parents[2]
FROZEN = ROOT / "tests" / "data" / "beliefshift_rules_labels.jsonl"
"""The labels of every day message of our MafiaScope fixtures, as the annotator gave them before
its rules moved into the pack (``scripts/annotator_labels.py tests/data/mafiascope -o ...``)."""
SHARED_SUMMARY = ROOT / "tests" / "data" / "beliefshift_rules_labels_shared.json"
"""Per folder of the real MafiaScope release: message and label counts and a SHA-256 of the
labels (no text), from the same dump before the move (``--summary``)."""
CTX = GameContext(names=("Alex", "Bailey", "Casey", "Dana"), game="Mafia", town_team="Town", mafia_team="Mafia")
CANDS = {"Bailey": 1, "Casey": 2, "Dana": 3}


def _dump_module():
    spec = importlib.util.spec_from_file_location("annotator_labels", ROOT / "scripts" / "annotator_labels.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _labels_of(src: Path, tmp: Path) -> list[dict]:
    dump = _dump_module()
    return dump._label_all(dump._messages(dump._sources([src], tmp)), RulesAnnotator())


def _raw_pack() -> dict:
    return yaml.safe_load(resources.files("mafialab.beliefshift").joinpath("annotator_en.yaml").read_text("utf-8"))


def _write(tmp_path: Path, raw: dict) -> Path:
    path = tmp_path / "pack.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path


def _labels(text: str, pack=None) -> dict[str, str]:
    return {CTX.names[x.target]: x.category for x in RulesAnnotator(pack=pack).label_text(text, "Alex", CANDS, CTX)}


def test_labels_of_the_fixture_corpora_are_the_frozen_ones(tmp_path):
    frozen = [json.loads(x) for x in FROZEN.read_text(encoding="utf-8").splitlines()]
    got = _labels_of(FIXTURES, tmp_path)
    assert len(got) == len(frozen) == 134
    assert sum(len(r["labels"]) for r in got) == 69
    assert [r for r in got if r not in frozen] == []
    assert got == frozen


def test_labels_of_the_real_corpus_match_the_stored_hashes(tmp_path):
    """Every day message of the real MafiaScope release (the development set's 200 among them):
    the same labels, evidence and rules as before the rules moved into the pack."""
    require_real(MAFIASCOPE)
    dump = _dump_module()
    lines = _labels_of(MAFIASCOPE, tmp_path)
    stored = json.loads(SHARED_SUMMARY.read_text(encoding="utf-8"))
    assert sum(v["messages"] for v in stored.values()) == len(lines) == 1669
    assert dump._summary(lines) == stored


def test_a_pack_without_the_engine_takes_the_built_in_one(tmp_path):
    raw = _raw_pack()
    for key in ("text", "pieces", "patterns", "steps", "format"):
        raw.pop(key)
    pack = load_annotator_pack(_write(tmp_path, raw))
    assert pack.engine == load_annotator_pack("en").engine
    text = "Casey is the Mafia. I'm keeping an eye on Dana."
    assert _labels(text, pack) == _labels(text) == {"Casey": "accuse", "Dana": "suspect"}


def test_the_order_of_the_rules_is_the_packs(tmp_path):
    raw = _raw_pack()
    text = "Casey is Mafia."
    assert _labels(text) == {"Casey": "accuse"}
    # without the identity statements, the clause's suspicion cue (the team word) is what is left
    raw["steps"]["sentence"] = [s for s in raw["steps"]["sentence"] if s.get("rule") != "accuse"]
    assert _labels(text, load_annotator_pack(_write(tmp_path, raw))) == {"Casey": "suspect"}
    # and without the clause steps nothing is labelled
    raw["steps"]["sentence"] = [s for s in raw["steps"]["sentence"] if s["kind"] != "clauses"]
    assert _labels(text, load_annotator_pack(_write(tmp_path, raw))) == {}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda r: r["steps"]["sentence"].append({"kind": "guess"}),
            r"steps: Value error, sentence\.7\.kind: 'guess' is not one of",
        ),
        (
            lambda r: r["steps"]["clause"][0].update(patterns=["nope"]),
            r"steps\.clause\.0\.patterns: unknown pattern 'nope'",
        ),
        (
            lambda r: r["patterns"]["hedges"].update(template="\\b({alt:hedges}"),
            r"patterns\.hedges: not a valid pattern",
        ),
        (lambda r: r["patterns"]["hedges"].update(template="{alt:hedgez}"), r"patterns\.hedges: \{alt:hedgez\}"),
        (lambda r: r["patterns"]["hedges"].update(template="{fillerz}"), r"patterns\.hedges: \{fillerz\}: not a piece"),
        (lambda r: r["patterns"]["motive"].update(when=["motives"]), r"patterns\.motive: unknown cue list 'motives'"),
        (lambda r: r["patterns"].pop("generic"), r"patterns: missing generic"),
        (lambda r: r["patterns"]["hedges"].update(templat="x"), r"patterns\.hedges\.templat: Extra inputs"),
        (lambda r: r["steps"]["subject_cues"][0].update(category="blame"), r"steps\.subject_cues\.0\.category"),
        (lambda r: r["text"].pop("quoted"), r"text\.quoted: Field required"),
        (lambda r: r.update(format=3), r"format: Input should be 1 or 2"),
        (lambda r: r["pieces"]["pron"].update(template="{P}"), r"pieces: P, pron use each other \(a cycle\)"),
    ],
)
def test_a_bad_pack_is_refused_naming_the_file_and_field(tmp_path, edit, message):
    raw = _raw_pack()
    edit(raw)
    path = _write(tmp_path, raw)
    with pytest.raises(ValueError, match=message) as err:
        load_annotator_pack(path)
    assert str(err.value).startswith(f"{path}: ")
