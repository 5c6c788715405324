"""Transcript-only vote predictors and the probe's McNemar increment, on hand-made games.

Every expected value below is computed by hand from the fixture (the comments show how).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafialab.agents import LanguageData, LanguageDataError, load_language_data
from mafialab.analysis import DEFAULT, MAFIASCOPE, GameData, compute_report
from mafialab.analysis._baselines import TranscriptReader, transcript_predictions
from mafialab.analysis._data import Message, Probe
from mafialab.rules import MAFIASCOPE7

NAMES = ["Alex", "Bailey", "Casey", "Dana", "Gray"]


def _ranking(line: int, player: str, after_seq: int, order: list[str]) -> Probe:
    parsed = [{"player": n, "score": 9 - i} for i, n in enumerate(order)]
    return Probe(
        line=line,
        round=1,
        msg=0,
        position=0,
        player=player,
        probe_id="suspicion_ranking",
        parsed=parsed,
        parse_ok=True,
        raw=json.dumps(parsed),
        ts=None,
        after_seq=after_seq,
    )


def talk_game() -> GameData:
    """Round 1: three speeches and five vote statements, then the tally.

    idx 1 Alex    "Casey and Bailey."
    idx 2 Gray    votes Bailey  "VOTE: Bailey"
    idx 3 Bailey  "I suspect Gray. Dana is calm."
    idx 4 Casey   "Я думаю, Грей мафия, а Дана молчит."  (Gray, Dana in Russian, one accusing sentence)
    idx 5 Dana    votes Gray    "VOTE: Gray"            (Dana is the hidden team)
    idx 6 Alex    votes Gray    "VOTE: Gray"
    idx 7 Bailey  votes Gray    "VOTE: Gray"
    idx 8 Casey   votes Dana    "VOTE: Dana"
    """
    g = GameData(
        game_id="talk",
        path=Path("talk"),
        rules=MAFIASCOPE7,
        source="mafialab",
        names=list(NAMES),
        role={n: ("Mafia" if n == "Dana" else "Villager") for n in NAMES},
        mafia={"Dana"},
    )
    speeches = [
        (1, "Alex", "Casey and Bailey."),
        (3, "Bailey", "I suspect Gray. Dana is calm."),
        (4, "Casey", "Я думаю, Грей мафия, а Дана молчит."),
    ]
    votes = [
        (2, "Gray", "Bailey"),
        (5, "Dana", "Gray"),
        (6, "Alex", "Gray"),
        (7, "Bailey", "Gray"),
        (8, "Casey", "Dana"),
    ]
    for idx, who, text in speeches:
        g.messages.append(Message(1, idx, 10 + idx, who, text))
    for idx, who, target in votes:
        g.messages.append(Message(1, idx, 10 + idx, who, f"VOTE: {target}"))
        g.votes[(1, who)] = (None, 10 + idx)
        g.vote_index[(1, who)] = idx
    g.messages.sort(key=lambda m: m.seq)
    g.tallies.append((1, None, 30, {who: target for _, who, target in votes}))
    g.deaths.append((None, 31, "Gray"))
    # each voter's suspicion ranking just before its own vote (after_seq = vote seq - 1)
    tops = {"Gray": "Bailey", "Dana": "Alex", "Alex": "Gray", "Bailey": "Dana", "Casey": "Dana"}
    for i, (idx, who, _) in enumerate(votes):
        rest = [n for n in NAMES if n not in (who, tops[who])]
        g.probes.append(_ranking(i, who, 10 + idx - 1, [tops[who], *rest]))
    return g


def tally_game() -> GameData:
    """No talk; three tallies. Round 1 ties Alex/Bailey 2-2, round 2 Alex 3-1, round 3 is predicted.

    Nobody dies (so every tally's voters are alive); Dana is the hidden team.
    """
    names = ["Alex", "Bailey", "Casey", "Dana"]
    g = GameData(
        game_id="tally",
        path=Path("tally"),
        rules=MAFIASCOPE7,
        source="mafialab",
        names=names,
        role={n: ("Mafia" if n == "Dana" else "Villager") for n in names},
        mafia={"Dana"},
    )
    rounds = {
        1: {"Alex": "Bailey", "Bailey": "Alex", "Casey": "Bailey", "Dana": "Alex"},
        2: {"Alex": "Bailey", "Bailey": "Alex", "Casey": "Alex", "Dana": "Alex"},
        3: {"Alex": "Casey", "Bailey": "Alex", "Casey": "Alex", "Dana": "Bailey"},
    }
    seq = 1
    for rnd, votes in rounds.items():
        for who in votes:
            g.votes[(rnd, who)] = (None, seq)
            g.vote_index[(rnd, who)] = None
            seq += 1
        g.tallies.append((rnd, None, seq, votes))
        seq += 1
    return g


def _preds(g: GameData, method) -> dict[str, tuple[str | None, str | None, str | None]]:  # type: ignore[no-untyped-def]
    return {
        f"{u.round}:{u.voter}": (p.most_mentioned, p.most_accused, p.previous_target)
        for u, p in transcript_predictions(g, method)
    }


def test_predictions_per_vote_reference_and_default() -> None:
    g = talk_game()
    # Gray (idx 2) has read only "Casey and Bailey.": a 1-1 tie inside one message; no cue.
    # The reference breaks it by the alphabetical order of the candidates (Casey after Bailey),
    # the default by the position of the last mention (Bailey is written last).
    ref = _preds(g, MAFIASCOPE)
    assert ref["1:Gray"] == ("Casey", None, None)
    assert _preds(g, DEFAULT)["1:Gray"] == ("Bailey", None, None)
    # Dana (idx 5): Bailey 2 (idx 1, "VOTE: Bailey"), Casey 1, Gray 2 (idx 3, "Грей" at idx 4);
    # the Bailey/Gray tie goes to Gray (mentioned last). Accused: Bailey 1 (the vote statement),
    # Gray 2 ("suspect", "мафи").
    assert ref["1:Dana"] == ("Gray", "Gray", None)
    # Alex (idx 6): Dana is now a candidate ("Dana is calm", "Дана" with a case ending): 2;
    # Gray 3. Casey (idx 8): Gray 5.
    assert ref["1:Alex"] == ("Gray", "Gray", None)
    assert ref["1:Casey"] == ("Gray", "Gray", None)
    assert {k: v for k, v in _preds(g, DEFAULT).items() if k != "1:Gray"} == {
        k: v for k, v in ref.items() if k != "1:Gray"
    }


def test_report_baselines_and_increment_hand_values() -> None:
    rep = compute_report([talk_game()], MAFIASCOPE, resamples=20).model_dump(mode="json")
    inn = rep["vote_coupling"]["innocents"]
    # innocent voters Gray, Alex, Bailey, Casey; probe top-1 hits: Gray, Alex, Casey (3 of 4)
    assert (inn["top1"]["hits"], inn["top1"]["n"]) == (3, 4)
    # most-mentioned: Casey (miss), Gray (hit), Gray (hit), Gray (miss)
    assert inn["baselines"]["most_mentioned"] | {"ci95": None} == {"hits": 2, "n": 4, "rate": 0.5, "ci95": None}
    inc = inn["increment"]["most_mentioned"]
    # b: probe right and baseline wrong (Gray, Casey); c: the reverse (Bailey); p = P(|X-1.5| >= 0.5), X~Bin(3, 1/2)
    assert {k: inc[k] for k in ("n", "probe_hits", "baseline_hits", "b", "c", "mcnemar_p", "diff")} == {
        "n": 4, "probe_hits": 3, "baseline_hits": 2, "b": 2, "c": 1, "mcnemar_p": 1.0, "diff": 0.25,
    }  # fmt: skip
    # most-accused predicts nothing for Gray (no cue before its vote): Alex, Bailey, Casey
    assert (inn["baselines"]["most_accused"]["hits"], inn["baselines"]["most_accused"]["n"]) == (2, 3)
    inc = inn["increment"]["most_accused"]
    assert (inc["n"], inc["probe_hits"], inc["baseline_hits"], inc["b"], inc["c"], inc["diff"]) == (3, 2, 2, 1, 1, 0.0)
    maf = rep["vote_coupling"]["mafia"]
    assert maf["baselines"]["most_mentioned"]["hits"] == maf["baselines"]["most_mentioned"]["n"] == 1
    inc = maf["increment"]["most_mentioned"]
    assert (inc["n"], inc["probe_hits"], inc["baseline_hits"], inc["b"], inc["c"]) == (1, 0, 1, 0, 1)
    assert inc["mcnemar_p"] == 1.0 and inc["diff"] == -1.0
    # no earlier tally: the previous-target predictor is silent, and so is its increment
    assert inn["baselines"]["previous_target"] == {"hits": 0, "n": 0, "rate": None, "ci95": None}
    assert inn["increment"]["previous_target"]["mcnemar_p"] is None
    # the default method's tie rule turns Gray's vote into a baseline hit: b 1 (Casey), c 1 (Bailey)
    inc = compute_report([talk_game()], DEFAULT, resamples=20).model_dump(mode="json")["vote_coupling"]["innocents"][
        "increment"
    ]
    assert (inc["most_mentioned"]["baseline_hits"], inc["most_mentioned"]["b"], inc["most_mentioned"]["c"]) == (3, 1, 1)


def test_previous_target_reference_and_default() -> None:
    g = tally_game()
    ref = _preds(g, MAFIASCOPE)
    # reference: round 2 takes the alphabetically first of the tied Alex/Bailey, for every voter
    # (Alex included); round 3 takes round 2's Alex
    voters = ("Alex", "Bailey", "Casey", "Dana")
    assert {k: v[2] for k, v in ref.items()} == {
        f"{r}:{n}": (None if r == 1 else "Alex") for r in (1, 2, 3) for n in voters
    }
    # default: a tie has no plurality target; a voter is never its own candidate
    dflt = {k: v[2] for k, v in _preds(g, DEFAULT).items() if k[0] != "1"}
    assert dflt == {"2:Alex": None, "2:Bailey": None, "2:Casey": None, "2:Dana": None,
                    "3:Alex": None, "3:Bailey": "Alex", "3:Casey": "Alex", "3:Dana": "Alex"}  # fmt: skip
    rep = compute_report([g], MAFIASCOPE, resamples=20).model_dump(mode="json")["vote_coupling"]
    # innocents: R2 Alex miss, Bailey hit, Casey hit; R3 Alex miss, Bailey hit, Casey hit
    assert (rep["innocents"]["baselines"]["previous_target"]["hits"], rep["innocents"]["baselines"]["previous_target"]["n"]) == (4, 6)  # fmt: skip
    # Dana: R2 hit (Alex), R3 miss (Bailey)
    assert (rep["mafia"]["baselines"]["previous_target"]["hits"], rep["mafia"]["baselines"]["previous_target"]["n"]) == (1, 2)  # fmt: skip
    rep = compute_report([g], DEFAULT, resamples=20).model_dump(mode="json")["vote_coupling"]
    assert rep["innocents"]["baselines"]["previous_target"]["hits"] == rep["innocents"]["baselines"]["previous_target"]["n"] == 2  # fmt: skip
    assert (rep["mafia"]["baselines"]["previous_target"]["hits"], rep["mafia"]["baselines"]["previous_target"]["n"]) == (0, 1)  # fmt: skip


def test_name_matching_whole_words_and_transliterations() -> None:
    r = TranscriptReader(["Alex", "Gray", "Dana"], reference=True)
    names = ["Alex", "Gray", "Dana"]
    # Latin whole words only, case-sensitive; Cyrillic stems with up to three letters of ending
    assert [n for _, n in r.mentions("Alexander met Alex; gray Gray.", names)] == ["Alex", "Gray"]
    assert [n for _, n in r.mentions("Грэй и Грейем, но не Грейпфрут; Даной.", names)] == ["Gray", "Gray", "Dana"]
    # only endings after the whole stem: "Грея" (й -> я) is not a form of "Грей" in the table
    assert r.mentions("Грея", names) == []
    # accusation cues are stems, matched case-insensitively anywhere in a sentence
    text = "Alex is LOUD. I SUSPECT Gray!\nDana: голосую против Алекса"
    assert [n for _, n in r.accusations(text, names)] == ["Gray", "Dana", "Alex"]
    # a name with no entry in the table is matched in its own spelling only
    r2 = TranscriptReader(["Zoë"], reference=False)
    assert len(r2.mentions("Zoë, Zoëy, Зоя", ["Zoë"])) == 1
    # the default adds the language data's extra cues (the Werewolf skin's words)
    assert [n for _, n in TranscriptReader(names, reference=False).accusations("Gray is a wolf.", names)] == ["Gray"]
    assert r.accusations("Gray is a wolf.", names) == []


def test_language_data_is_data() -> None:
    ru = load_language_data("ru")
    assert "подозр" in ru.accusation_cues and ru.name_forms["Gray"] == ("Грей", "Грэй")
    assert "suspect" in load_language_data("en").accusation_cues
    with pytest.raises(LanguageDataError, match="unknown language 'xx'"):
        load_language_data("xx")
    # a caller may pass its own table: a new language is data, not code
    de = LanguageData(
        language="de", accusation_cues=("verdächt",), name_forms={"Gray": ("Grau",)}, name_suffix="[a-z]?"
    )
    r = TranscriptReader(["Gray"], reference=False, languages=[de])
    assert [n for _, n in r.accusations("Ich verdächtige Graus Stimme.", ["Gray"])] == ["Gray"]
    with pytest.raises(ValueError, match="name_suffix"):
        LanguageData(language="x", name_suffix="[")


def test_failed_turns_are_text_for_the_reference_only() -> None:
    g = talk_game()
    # a turn that failed in the source game (its error string kept as the message text)
    g.messages.insert(1, Message(1, 1, 11, "Dana", "ERROR: Alex Alex timed out", failed=True))
    # reference: the error text is read, Alex 2 beats Bailey 1 and Casey 1 before Gray's vote
    assert _preds(g, MAFIASCOPE)["1:Gray"][0] == "Alex"
    # default: a failed turn is not the transcript; the Bailey/Casey tie goes to Bailey as before
    assert _preds(g, DEFAULT)["1:Gray"][0] == "Bailey"
