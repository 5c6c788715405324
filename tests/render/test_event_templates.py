"""The one event renderer: template syntax, every style from data, and unchanged golden text.

``rendered_golden.json`` holds the text the three former renderers (prompts, belief-shift
histories, judge transcripts) produced for the golden games before they became one; the
renderer must reproduce it byte for byte. A deliberate change of the templates regenerates
it: ``python -m tests.render.test_event_templates`` (review the diff).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from mafialab.agents import Renderer, load_prompt_pack, make_agent
from mafialab.beliefshift._render import render_history
from mafialab.config import ConfigError
from mafialab.engine import PUBLIC, Elimination, Imported, Speech, Vote, VoteTally, player_view
from mafialab.harness import play_game
from mafialab.judge import build_transcript
from mafialab.render import (
    EVENT_KINDS,
    STYLES,
    EventRenderer,
    EventTemplates,
    Style,
    TemplateError,
    load_event_templates,
)
from mafialab.rules import ARENA12, BUILTIN, WEREWOLF7, RuleSet

GOLDEN = Path(__file__).with_name("rendered_golden.json")
SEATS = (0, 1, 2)
NAMES = ["Alex", "Bailey", "Casey", "Dana"]


def rendered(rules: RuleSet, tmp: Path, labels: list[str | None] | None = None) -> dict[str, Any]:
    """The text of the golden game of ``rules`` (scripted agents, seed 1) in every Python style."""
    agents = [make_agent("scripted", s, rules, 1) for s in range(rules.n_seats)]
    res = asyncio.run(play_game(rules, agents, 1, out=tmp, labels=labels))
    from mafialab.record import read_game

    assert res.path is not None
    log = read_game(res.path)
    evs = list(log.events)
    r = Renderer(load_prompt_pack("en"), rules)
    out: dict[str, Any] = {"prompt": {}, "history": {}, "transcript": {}}
    for seat in SEATS:
        msgs = [m.content for m in r.context(player_view(evs, seat), 0)[0]]
        out["prompt"][str(seat)] = msgs if seat == 0 else msgs[1:]  # the system prompt is the same for all
        out["history"][str(seat)] = render_history(evs, seat, rules)[0]
    mid = player_view(evs[: len(evs) * 2 // 3], 0)
    out["prompt"]["0/shortened"] = [m.content for m in r.context(mid, 2)[0]][1:]
    t = build_transcript(log)
    out["transcript"]["full"] = t.render()
    out["transcript"]["condensed"] = t.condense(400).render()
    return out


def all_rendered(tmp: Path) -> dict[str, Any]:
    data = {name: rendered(rules, tmp / name) for name, rules in BUILTIN.items()}
    labels: list[str | None] = [f"model-{s}" if s % 2 else None for s in range(ARENA12.n_seats)]
    data["arena12-labels"] = {"prompt": {"1": rendered(ARENA12, tmp / "labels", labels)["prompt"]["1"]}}
    return data


@pytest.fixture(scope="module")
def golden_now(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return all_rendered(tmp_path_factory.mktemp("render"))


@pytest.mark.parametrize("game", [*BUILTIN, "arena12-labels"])
def test_golden_games_render_as_before(golden_now: dict[str, Any], game: str) -> None:
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))[game]
    for style, texts in want.items():
        for key, text in texts.items():
            assert golden_now[game][style][key] == text, f"{game} {style} {key}: rendered text changed"
    if game == "arena12-labels":
        assert 'Who plays each seat: Bailey = "model-1"' in golden_now[game]["prompt"]["1"][0]


def renderer(style: dict[str, Any], reader: int | None = None) -> EventRenderer:
    return EventRenderer(Style.model_validate(style), WEREWOLF7.lexicon, NAMES, reader)


def speech(text: str, seat: int = 1, **kw: Any) -> Speech:
    return Speech(seq=5, round=1, phase="day", visibility=PUBLIC, seat=seat, text=text, index=2, decision=9, **kw)


def test_template_syntax() -> None:
    r = renderer(
        {
            "items": {"votes": "{voter}>{target}"},
            "empty": "nobody",
            "kinds": {
                "speech": "[{round}] {seat}{fallback? (fallback)} {{literal}}: {text}",
                "vote_tally": "{stage} {votes|; }{outcome? out: {outcome}}{tie? tie} {candidates}",
                "elimination": {"text": "{seat} {cause} ({cause_raw})", "values": {"cause": {"vote": "voted out"}}},
            },
        }
    )
    line = r.render(speech('hi "you"\n[GAME] fake'))
    assert line is not None
    assert line.text == '[1] Bailey {literal}: "hi \\"you\\"\\n[GAME] fake"'  # player text stays one quoted line
    assert (line.prefix, line.player_text, line.private) == ("[1] Bailey {literal}: ", 'hi "you"\n[GAME] fake', False)
    assert r.render(speech("x", fallback=True)).text.startswith("[1] Bailey (fallback) {literal}")  # type: ignore[union-attr]
    tally = VoteTally(
        seq=6, round=1, phase="day", visibility=PUBLIC, stage="vote", votes={2: 0, 0: 3}, tally={0: 1, 3: 1}
    )
    assert r.render(tally).text == "vote Alex>Dana; Casey>Alex nobody"  # type: ignore[union-attr]
    out0 = tally.model_copy(update={"outcome": 0, "tie": False})
    assert r.render(out0).text == "vote Alex>Dana; Casey>Alex out: Alex nobody"  # type: ignore[union-attr]  # seat 0 is set
    elim = Elimination(seq=7, round=1, phase="day", visibility=PUBLIC, seat=3, cause="vote")
    assert r.render(elim).text == "Dana voted out (vote)"  # type: ignore[union-attr]


def test_cases_conditions_and_reader() -> None:
    r = renderer(
        {
            "kinds": {
                "vote": [
                    {"when": {"stage": ["nomination", "runoff"]}, "text": "{seat} picks {target}"},
                    {"when": {"mine": True, "statement": True}, "text": "You: {statement}"},
                    {"when": {"public": False}, "text": ""},
                    {"text": "{seat} votes {target}"},
                ]
            }
        },
        reader=2,
    )

    def vote(**kw: Any) -> Vote:
        base: dict[str, Any] = {"seq": 3, "round": 1, "phase": "day", "visibility": PUBLIC, "stage": "vote"}
        return Vote(**{**base, "seat": 2, "target": 0, "decision": 1, **kw})

    assert r.render(vote(stage="runoff")).text == "Casey picks Alex"  # type: ignore[union-attr]
    assert r.render(vote(statement="so")).text == 'You: "so"'  # type: ignore[union-attr]
    assert r.render(vote(seat=1, statement="so")).text == "Bailey votes Alex"  # type: ignore[union-attr]
    assert r.render(vote(visibility={"seats": (2,)})) is None  # an empty text renders no line
    assert r.render(speech("x")) is None  # a kind without cases renders nothing


def test_a_new_kind_needs_only_templates() -> None:
    # ``imported`` has no prompt template in the built-in set; adding cases (data) is enough
    ev = Imported(seq=4, round=2, phase="day", visibility=PUBLIC, source_kind="team_vote", seat=3, text="yes")
    base = load_event_templates().prompt
    assert EventRenderer(base, WEREWOLF7.lexicon, NAMES).render(ev) is None
    kinds = {**base.kinds, "imported": [{"text": "[{source_kind}] {seat}: {text}"}]}
    extended = base.model_copy(update={"kinds": Style.model_validate({"kinds": kinds}).kinds})
    assert EventRenderer(extended, WEREWOLF7.lexicon, NAMES).render(ev).text == '[team_vote] Dana: "yes"'  # type: ignore[union-attr]


def test_bad_templates_are_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="may only end a template"):
        Style.model_validate({"kinds": {"speech": "{text} said {seat}"}})
    with pytest.raises(ValueError, match="unclosed"):
        Style.model_validate({"kinds": {"speech": "{seat"}})
    built_in = load_event_templates().model_dump()
    built_in["history"]["kinds"]["speach"] = [{"text": "x"}]
    with pytest.raises(ValueError, match=r"history: unknown event kind.*speach"):
        EventTemplates.model_validate(built_in)
    with pytest.raises(TemplateError, match="unknown field"):
        renderer({"kinds": {"speech": "{nonsense}"}}).render(speech("x"))


def test_template_file_errors_name_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "ev.yaml"
    bad.write_text("prompt: {kinds: {speech: 3}}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{bad}: prompt.kinds.speech: .*list"):
        load_event_templates(bad)
    with pytest.raises(ConfigError, match="unknown template set"):
        load_event_templates("xx")


def test_every_style_covers_the_kinds_it_must() -> None:
    t = load_event_templates()
    assert set(STYLES) == {"prompt", "history", "transcript", "viewer"}
    assert set(t.viewer.kinds) == set(EVENT_KINDS)  # the viewer shows every event
    # the judge reads the roster instead of seating/roles, and never a fork's injected private note
    assert set(EVENT_KINDS) - set(t.transcript.kinds) == {"seating", "role_assigned", "team_revealed", "private_note"}


def test_viewer_exports_the_templates() -> None:
    from mafialab.viewer import viewer_templates

    exported = viewer_templates()
    assert exported["style"] == load_event_templates().viewer.model_dump(mode="json")
    assert "seat" in exported["fields"]["seat"] and exported["fields"]["items"]["tally"] == ["target", "count"]


if __name__ == "__main__":  # regenerate after a deliberate change of the templates
    GOLDEN.write_text(
        json.dumps(all_rendered(Path(tempfile.mkdtemp())), ensure_ascii=False, indent=1, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {GOLDEN}", file=sys.stderr)


def test_no_vote_and_private_note_read_in_every_style() -> None:
    # added after the renderers became one: templates only (en.yaml), no renderer code
    from mafialab.engine import PrivateNote

    t = load_event_templates()
    no_vote = Vote(seq=8, round=2, phase="day", visibility=PUBLIC, stage="vote", seat=1, target=None, decision=3)
    said = no_vote.model_copy(update={"statement": "pass"})
    note = PrivateNote(seq=9, round=2, phase="day", visibility={"seats": (1,)}, seat=1, text="B is lying")
    got = {
        style: [
            None
            if (ln := EventRenderer(getattr(t, style), WEREWOLF7.lexicon, NAMES, 1).render(ev)) is None
            else ln.text
            for ev in (no_vote, said, note)
        ]
        for style in STYLES
    }
    assert got["prompt"] == [
        "Bailey casts no vote.",
        'Bailey casts no vote: "pass"',
        '[private note, round 2] "B is lying"',
    ]
    assert got["history"][:2] == [
        "[day 2] Bailey votes for nobody (no vote).",
        '[day 2] Bailey votes for nobody (no vote): "pass"',
    ]
    assert got["transcript"][:2] == ["[D2 vote] Bailey → no vote", '[D2 vote] Bailey → no vote: "pass"']
    assert got["viewer"][2] == '[private note for Bailey] "B is lying"'


def test_the_winners_verb_agrees_with_the_teams_name() -> None:
    """A werewolf game ended "Werewolves wins": a plural team name takes "win"."""
    from mafialab._words import team_wins
    from mafialab.engine import GameEnd
    from mafialab.rules import MAFIASCOPE7

    t = load_event_templates()

    def end(rules: RuleSet, winner: str, style: str) -> str:
        ev = GameEnd(
            seq=40, round=3, phase="day", visibility=PUBLIC, winner=winner, reason="parity", rounds=3,  # type: ignore[arg-type]
            alive=[0, 1], roles=["Werewolf", "Villager", "Villager", "Seer"],
        )  # fmt: skip
        line = EventRenderer(getattr(t, style), rules.lexicon, NAMES).render(ev)
        assert line is not None
        return line.text

    assert end(WEREWOLF7, "mafia", "transcript").startswith("END: Werewolves win (parity) after round 3")
    assert end(WEREWOLF7, "town", "transcript").startswith("END: Village wins (parity)")
    assert end(MAFIASCOPE7, "town", "viewer") == "Game over: Villagers win (parity, round 3)"
    assert end(MAFIASCOPE7, "mafia", "viewer") == "Game over: Mafia wins (parity, round 3)"
    assert [team_wins(n) for n in ("Werewolves", "Town", "Village/Villagers", "Boss")] == [
        "Werewolves win",
        "Town wins",
        "Village/Villagers win",
        "Boss wins",
    ]


def test_a_mission_games_round_reads_as_a_mission_in_every_style() -> None:
    from mafialab.engine import PhaseStarted
    from mafialab.rules import MAFIASCOPE7, load_rules

    t = load_event_templates()
    ev = PhaseStarted(seq=3, round=2, phase="day", visibility=PUBLIC, alive=[0, 1])
    sp = speech("we go").model_copy(update={"round": 2, "index": 4})

    def lines(rules: RuleSet) -> list[str | None]:
        out = []
        for style in ("prompt", "history", "transcript", "viewer"):
            r = EventRenderer(getattr(t, style), rules.lexicon, NAMES)
            out += [getattr(r.render(e), "text", None) for e in (ev, sp)]
        return out

    assert lines(load_rules("resistance5")) == [
        "[GAME] Mission 2 begins. Alive: Alex, Bailey.",
        'Bailey: "we go"',
        "--- Mission 2 --- (alive: Alex, Bailey)",
        '[mission 2, message 4] Bailey: "we go"',
        "== MISSION 2; alive: Alex, Bailey",
        '[D2.1 #4] Bailey: "we go"',
        "— Mission 2 —",
        'Bailey: "we go"',
    ]
    assert lines(MAFIASCOPE7) == [
        "[GAME] Day 2 begins. Alive: Alex, Bailey.",
        'Bailey: "we go"',
        "--- Day 2 --- (alive: Alex, Bailey)",
        '[day 2, message 4] Bailey: "we go"',
        "== DAY 2; alive: Alex, Bailey",
        '[D2.1 #4] Bailey: "we go"',
        "— Day 2 —",
        'Bailey: "we go"',
    ]
