"""Annotation: day messages only, the rules annotator on hand-labelled sentences, the model
annotator under a JSON schema, Cohen's kappa and agreement."""

from __future__ import annotations

import asyncio
import math
import threading
from pathlib import Path

import pytest

from mafialab.beliefshift import (
    ModelAnnotator,
    RulesAnnotator,
    agreement,
    annotate_games,
    day_messages,
    load_logs,
    read_annotations,
    write_annotations,
)
from mafialab.beliefshift._agreement import NONE, cohen_kappa
from mafialab.beliefshift._annotate import GameContext
from mafialab.beliefshift._io import AnnotationSet
from mafialab.engine import Speech, Vote
from mafialab.models import MockModel
from mafialab.rules import MAFIASCOPE7
from tests.beliefshift_fixtures import play_native

NAMES = ("Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray", "Harper")
SPEAKER = "Harper"

# (sentence, gold labels) — labelled by hand with the paper's definitions:
# accuse = states directly that the player is on the wolf team; suspect = raises the possibility.
HAND = [
    ("I have doubts about Bailey.", {"Bailey": "suspect"}),
    ("Casey is Werewolves.", {"Casey": "accuse"}),
    ("I checked Gray: Gray is Village. I have doubts about Dana.", {"Dana": "suspect"}),
    ("I checked Ellis: Ellis is Werewolves.", {"Ellis": "accuse"}),
    ("Bailey is not suspicious at all.", {}),
    ("I don't think Dana is a wolf.", {}),
    (
        "For now, I'm keeping a close eye on Bailey and Finley when they get back.",
        {"Bailey": "suspect", "Finley": "suspect"},
    ),
    ("I'm suspicious of the timing on those connection errors.", {}),
    ("If Casey were a wolf, she would have voted differently.", {}),
    ("Dana might be a wolf, but I'm not sure yet.", {"Dana": "suspect"}),
    ("Ellis and Finley are definitely wolves.", {"Ellis": "accuse", "Finley": "accuse"}),
    ("That's a gray area, honestly.", {}),
    ("I trust Casey completely.", {}),
    ("I don't trust Casey.", {"Casey": "suspect"}),
    ("Something is off about Ellis, but Dana is clearly village.", {"Ellis": "suspect"}),
    ("Casey's defense of Bailey is suspicious.", {"Casey": "suspect"}),
    ("Dana seems suspicious to me.", {"Dana": "suspect"}),
    ("Dana doesn't seem suspicious.", {}),
    ("Alex has been consistently suspicious of me and Dana throughout.", {}),
    ("I believe Gray is the mafia, and he has been steering votes.", {"Gray": "accuse"}),
    ("Either Alex is mafia or Bailey is mafia, and I lean Alex.", {"Alex": "suspect", "Bailey": "suspect"}),
    ("I'm most suspicious of Ellis right now.", {"Ellis": "suspect"}),
    ("I suspect Finley.", {"Finley": "suspect"}),
    ("Finley is probably a werewolf.", {"Finley": "suspect"}),
    ("Gray is my top suspect after that vote.", {"Gray": "suspect"}),
    ("Alex, I agree with your read on the votes.", {}),
    ("Bailey is innocent; the seer cleared her.", {}),
    ("There is no reason to suspect Casey.", {}),
    ("Why would Dana be a wolf? She pushed the right player.", {}),
    ("Ellis is 100% a wolf, I saw it.", {"Ellis": "accuse"}),
    ("Could Alex be one of the wolves?", {"Alex": "suspect"}),
    ("My suspicion is on Bailey now.", {"Bailey": "suspect"}),
    ("Gray's vote on Alex was almost too convenient.", {"Gray": "suspect"}),
    ("Harper is a wolf, you say? I'm Harper and I'm not.", {}),
    ("We should all calm down and listen to Casey.", {}),
    ("Dana was killed last night, so she was not a wolf.", {}),
    ("I'm wary of Alex, and Finley is clearly a werewolf.", {"Alex": "suspect", "Finley": "accuse"}),
    ("Bailey's silence is a red flag.", {"Bailey": "suspect"}),
    ("I'm not suspicious of Casey anymore.", {}),
    ("Finley looks shady to me.", {"Finley": "suspect"}),
]


def run_rules(text: str) -> dict[str, str]:
    ctx = GameContext(names=NAMES, game="Werewolf", town_team="Village", mafia_team="Werewolves")
    cands = {n: i for i, n in enumerate(NAMES) if n != SPEAKER}
    return {NAMES[lab.target]: lab.category for lab in RulesAnnotator().label_text(text, SPEAKER, cands, ctx)}


def test_rules_annotator_precision_on_hand_labelled_sentences():
    tp = fp = fn = 0
    wrong = []
    for text, gold in HAND:
        got = run_rules(text)
        for name, cat in got.items():
            if gold.get(name) == cat:
                tp += 1
            else:
                fp += 1
                wrong.append((text, name, cat))
        fn += sum(1 for name, cat in gold.items() if got.get(name) != cat)
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    assert precision >= 0.95, wrong
    assert recall >= 0.85, (precision, recall)


@pytest.mark.parametrize(
    "text",
    [t for t, gold in HAND if not gold],
)
def test_rules_annotator_ignores_negations_conditions_and_mentions(text):
    assert run_rules(text) == {}


# Sentences of corpus_v2 day discussions (speaker, sentence, gold), labelled by hand; sentences
# whose label a careful reader could dispute were left out. Reported speech ("Bailey says X is
# Mafia") is not the speaker's suspicion.
CORPUS_NAMES = ("Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray", "Harper", "Indigo", "Jordan",
                "Kennedy", "Logan")  # fmt: skip
CORPUS = [
    (
        "Jordan",
        "I'm keeping my eye on Alex for now—too much deflection and not enough real analysis.",
        {"Alex": "suspect"},
    ),
    (
        "Bailey",
        "Looking at what's left, Jordan claimed to be the Doctor and saved Dana once, so either Jordan is telling "
        "the truth and the Mafia dodged them last night, or Jordan is Mafia and let Dana die to sell their claim.",
        {"Jordan": "suspect"},
    ),
    (
        "Finley",
        "Harper's connection drop during intro is a bit suspicious, but Logan and Dana also had errors, so it might "
        "just be technical issues.",
        {"Harper": "suspect"},
    ),
    (
        "Kennedy",
        "I'm a bit suspicious of Casey's sudden shift from silence to a well-articulated vote, which could be a "
        "Mafia trying to blend in after connection issues gave them cover.",
        {"Casey": "suspect"},
    ),
    (
        "Alex",
        "Now Harper's confirmations make me think Casey is even more suspicious—they voted for the same person the "
        "Mafia tried to kill.",
        {"Casey": "suspect"},
    ),
    ("Jordan", "Logan is the obvious suspect: he defended Indigo aggressively from round one.", {"Logan": "suspect"}),
    (
        "Casey",
        "Now look at Bailey's response: they immediately tried to flip it and say Harper and Kennedy are the Mafia "
        "pair, using the save against them.",
        {},
    ),
    ("Alex", "I think Gray is the Mafia.", {"Gray": "accuse"}),
    ("Jordan", "But Kennedy's vote was the most suspicious echo to me.", {"Kennedy": "suspect"}),
    (
        "Ellis",
        "Gray jumped on Casey hard and fast, and now Gray's trying to shift suspicion onto me and even hinting "
        "Dana's connection error is fishy.",
        {"Gray": "suspect"},  # a hidden motive (shifting suspicion) is suspect by the definitions
    ),
    (
        "Logan",
        "I'm a bit suspicious of Casey since they didn't even introduce themselves when prompted.",
        {"Casey": "suspect"},
    ),
    ("Casey", "That means Bailey's theory that Harper and Kennedy are Mafia together is dead wrong.", {}),
    ("Alex", "I'm keeping my eyes on Bailey.", {"Bailey": "suspect"}),
    (
        "Kennedy",
        "I'm now very suspicious of Bailey and Casey as a potential Mafia pair.",
        {"Bailey": "suspect", "Casey": "suspect"},
    ),
    (
        "Gray",
        "I'm keeping an eye on Finley and Bailey's similar push for fast action—it could be a coordinated front.",
        {"Finley": "suspect", "Bailey": "suspect"},
    ),
    (
        "Finley",
        "That said, I'm slightly wary of Alex, Harper, and Dana voting so quickly in lockstep again.",
        {"Alex": "suspect", "Harper": "suspect", "Dana": "suspect"},
    ),
    (
        "Indigo",
        "I need to hear from Bailey before making up my mind, but Alex's confidence feels a little too convenient.",
        {"Alex": "suspect"},
    ),
    ("Casey", "I'm keeping my eyes on Jordan and Finley for now.", {"Jordan": "suspect", "Finley": "suspect"}),
    (
        "Ellis",
        "I'm keeping my eye on Gray most of all—that aggressive style is exactly how Mafia seize control early.",
        {"Gray": "suspect"},
    ),
    ("Alex", "I'm watching Finley closely.", {"Finley": "suspect"}),
    ("Logan", "Bailey's nervousness feels genuine, but we can't rule anyone out yet.", {}),
    ("Casey", "I'm watching Bailey especially—that's a very convenient shift.", {"Bailey": "suspect"}),
    ("Dana", "So now I'm looking at who's left: Jordan, Casey, Gray, Kennedy, and myself.", {}),
    ("Alex", "Right now, Casey's behavior seems the most calculated to me.", {"Casey": "suspect"}),
    ("Alex", "I agree that Kennedy's death makes perfect sense—she was leading the charge.", {}),
    ("Finley", "Logan's elimination was pushed hard by Ellis, Harper, and Jordan, with Bailey following.", {}),
    ("Dana", "Casey, you said you trust Bailey; why?", {}),
    ("Gray", "Logan is clearly Mafia and I will vote for him.", {"Logan": "accuse"}),
]


def test_rules_annotator_precision_on_hand_labelled_corpus_sentences():
    ctx = GameContext(names=CORPUS_NAMES, game="Mafia", town_team="Town", mafia_team="Mafia")
    tp = fp = fn = 0
    wrong = []
    for speaker, text, gold in CORPUS:
        cands = {n: i for i, n in enumerate(CORPUS_NAMES) if n != speaker}
        got = {CORPUS_NAMES[x.target]: x.category for x in RulesAnnotator().label_text(text, speaker, cands, ctx)}
        for name, cat in got.items():
            if gold.get(name) == cat:
                tp += 1
            else:
                fp += 1
                wrong.append((text, name, cat))
        fn += sum(1 for name, cat in gold.items() if got.get(name) != cat)
    assert tp / (tp + fp) >= 0.9, wrong
    assert tp / (tp + fn) >= 0.8


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    out = tmp_path_factory.mktemp("ann_games")
    play_native(out, range(3))
    play_native(out, range(2), rules=MAFIASCOPE7)  # intro day and public vote statements
    return load_logs([out])


def test_day_messages_exclude_intros_and_vote_statements(games):
    for g in games:
        msgs = day_messages(g)
        speech = {(e.round, e.index): e for e in g.events if isinstance(e, Speech)}
        votes = {(e.round, e.index) for e in g.events if isinstance(e, Vote) and e.index is not None}
        assert msgs, g.game_id
        for m in msgs:
            ev = speech[(m.round, m.index)]
            assert ev.phase == "day" and ev.seat == m.seat and ev.text == m.text
            assert (m.round, m.index) not in votes
            assert m.seat not in m.candidates
        intros = [e for e in speech.values() if e.phase == "intro"]
        assert not {(e.round, e.index) for e in intros} & {(m.round, m.index) for m in msgs}


async def test_annotate_games_records_roles_and_teams(games, tmp_path):
    res = await annotate_games(games, RulesAnnotator())
    assert res.annotations and not res.header.failed
    by_id = {g.game_id: g for g in games}
    for a in res.annotations:
        roster = {s.seat: s for s in by_id[a.game_id].header.roster}
        assert (a.accuser.role, a.accuser.team) == (roster[a.accuser.seat].role, roster[a.accuser.seat].team)
        assert (a.target.role, a.target.team) == (roster[a.target.seat].role, roster[a.target.seat].team)
        assert a.target.name in a.evidence and a.day == a.round
        assert a.message_id == f"{a.game_id}:r{a.round}:m{a.index}"
    # scripted speech: "I have doubts about X." is a suspicion, "X is <team>." an accusation
    cats = {a.category for a in res.annotations if a.evidence.startswith("I have doubts about")}
    assert cats == {"suspect"}
    write_annotations(tmp_path / "ann.jsonl", res)
    back = read_annotations(tmp_path / "ann.jsonl")
    assert back.header is not None and back.annotations == res.annotations
    assert len(back.header.scanned) == sum(len(day_messages(g)) for g in games)


async def test_model_annotator_uses_schema_and_records_failures(games):
    g = games[0]
    msgs = day_messages(g)

    def answer(req):
        if req.meta["message_id"] == msgs[0].message_id:
            return "not json"
        target = req.json_schema["properties"]["labels"]["items"]["properties"]["target"]["enum"][0]
        return {"labels": [{"target": target, "category": "accuse", "evidence": "x"}]}

    m = MockModel(answer, name="mock/annotator")
    res = await annotate_games([g], ModelAnnotator(m, retries=1))
    assert [f.message_id for f in res.header.failed] == [msgs[0].message_id]
    assert res.header.failed[0].cause == "non_json"
    assert len(res.annotations) == len(msgs) - 1
    req = m.requests[-1]
    assert req.purpose == "annotate" and req.json_schema["properties"]["labels"]["type"] == "array"
    names = [s.name for s in g.header.roster]
    speaker = next(mm for mm in msgs if mm.message_id == req.meta["message_id"]).seat
    assert names[speaker] not in req.json_schema["properties"]["labels"]["items"]["properties"]["target"]["enum"]
    bad = MockModel(lambda req: {"labels": [{"target": "Nobody", "category": "accuse", "evidence": ""}]})
    res2 = await annotate_games([g], ModelAnnotator(bad, retries=0))
    assert len(res2.header.failed) == len(msgs) and {f.cause for f in res2.header.failed} == {"schema"}


def test_cohen_kappa_by_hand():
    a = ["s", "s", "n", "n", "a", "n"]
    b = ["s", "n", "n", "n", "a", "a"]
    p_o = 4 / 6
    p_e = (2 / 6) * (1 / 6) + (3 / 6) * (3 / 6) + (1 / 6) * (2 / 6)
    assert cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert cohen_kappa(["x", "y"], ["x", "y"]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(["x", "x"], ["x", "x"]))
    with pytest.raises(ValueError):
        cohen_kappa(["x"], [])


async def test_agreement_counts_unlabelled_units(games, tmp_path):
    res = await annotate_games(games[:1], RulesAnnotator())
    write_annotations(tmp_path / "a.jsonl", res)
    a = read_annotations(tmp_path / "a.jsonl")
    # B: the same header, first annotation dropped, second flipped
    flipped = res.annotations[1].model_copy(
        update={"category": "accuse" if res.annotations[1].category == "suspect" else "suspect"}
    )
    b = AnnotationSet(tmp_path / "b.jsonl", res.header, [flipped, *res.annotations[2:]])
    rep = agreement(a, b)
    n_units = sum(len(m.candidates) for m in res.header.scanned)
    assert rep.n_units == n_units and rep.n_messages == len(res.header.scanned)
    assert rep.agreement == pytest.approx((n_units - 2) / n_units)
    assert rep.confusion[(res.annotations[0].category, NONE)] == 1
    la, lb = [], []
    for m in res.header.scanned:
        for t in m.candidates:
            la.append(
                next((x.category for x in a.annotations if (x.message_id, x.target.seat) == (m.message_id, t)), NONE)
            )
            lb.append(
                next((x.category for x in b.annotations if (x.message_id, x.target.seat) == (m.message_id, t)), NONE)
            )
    assert rep.kappa == pytest.approx(cohen_kappa(la, lb))
    bare = AnnotationSet(tmp_path / "hand.jsonl", None, res.annotations[:3])
    rep2 = agreement(bare, a)
    assert rep2.notes and rep2.n_messages == len({x.message_id for x in res.annotations[:3]})


def test_rules_against_hand_labels_of_real_corpus_messages(tmp_path, mafiascope_real):
    """20 random corpus_v2 day messages labelled by hand before any annotator saw them
    (``tests/data/beliefshift_hand_corpus_v2.jsonl``): the rules annotator finds most of
    the implicit suspicion too."""
    import shutil

    from mafialab.record import import_mafiascope

    hand = read_annotations(Path(__file__).parents[1] / "data" / "beliefshift_hand_corpus_v2.jsonl")
    assert hand.header is not None and len(hand.header.scanned) == 20
    src = tmp_path / "src"
    for gid in hand.header.games:
        shutil.copytree(mafiascope_real / "corpus_v2" / gid, src / gid)
    import_mafiascope(src, tmp_path / "logs")
    res = asyncio.run(annotate_games(load_logs([tmp_path / "logs"]), RulesAnnotator()))
    write_annotations(tmp_path / "rules.jsonl", res)
    rep = agreement(hand, read_annotations(tmp_path / "rules.jsonl"))
    assert rep.n_messages == 20 and rep.n_units == sum(len(m.candidates) for m in hand.header.scanned)
    labelled_by_rules = {k: v for k, v in rep.confusion.items() if k[1] != NONE}
    hits = sum(v for k, v in labelled_by_rules.items() if k[0] == k[1])
    gold = sum(v for k, v in rep.confusion.items() if k[0] != NONE)
    # the cue-lexicon annotator: 29 of 35 found (15 with the earlier pattern list), 4 extra
    assert hits >= 28 and gold == 35
    assert rep.precision >= 0.85 and rep.recall >= 0.8 and rep.kappa > 0.7


SEVEN = ("Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray")


def _label(text: str) -> list[tuple[str, str]]:
    ctx = GameContext(names=SEVEN)
    cands = {n: i for i, n in enumerate(SEVEN) if n != "Alex"}
    return [(SEVEN[lab.target], lab.category) for lab in RulesAnnotator().label_text(text, "Alex", cands, ctx)]


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


async def test_annotation_files_record_the_rules_pack_and_old_files_stay_readable(games, tmp_path):
    import json

    from mafialab.beliefshift import load_annotator_pack

    pack = load_annotator_pack("en")
    res = await annotate_games(games[:1], RulesAnnotator())
    assert res.header.annotator == f"rules:{pack.id}" == "rules:annotator-en-v14"
    assert res.annotations and {a.annotator for a in res.annotations} == {"rules:annotator-en-v14"}
    # another pack id is recorded as it is
    other = pack.__class__(**{**pack.__dict__, "id": "annotator-xx-v1"})
    assert RulesAnnotator(pack=other).name == "rules:annotator-xx-v1"
    write_annotations(tmp_path / "new.jsonl", res)
    # a file written before pack v7 says only "rules": it reads, and scores against the new one
    lines = (tmp_path / "new.jsonl").read_text().splitlines()
    old = []
    for line in lines:
        rec = json.loads(line)
        rec["annotator"] = "rules"
        old.append(json.dumps(rec))
    (tmp_path / "old.jsonl").write_text("\n".join(old) + "\n")
    back = read_annotations(tmp_path / "old.jsonl")
    assert back.header is not None and back.header.annotator == "rules"
    assert {a.annotator for a in back.annotations} == {"rules"}
    rep = agreement(back, read_annotations(tmp_path / "new.jsonl"))
    assert rep.agreement == pytest.approx(1.0) and rep.n_units > 0
