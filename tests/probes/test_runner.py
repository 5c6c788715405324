"""The probe runner: triggers, chaining, dead players, concurrency, records, non-invasiveness."""

from __future__ import annotations

import asyncio
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from mafialab.agents import ScriptedAgent, make_agent
from mafialab.engine import (
    Action,
    Decision,
    Elimination,
    Event,
    GameEnd,
    InvestigationResult,
    NightAction,
    PlayerView,
    Speech,
    Vote,
    VoteTally,
    visible_events,
)
from mafialab.harness import play_game
from mafialab.models import ChatMessage, ChatRequest, ChatResponse, MockModel
from mafialab.probes import (
    ProbeableAgent,
    ProbeBattery,
    ProbeRunner,
    battery_from_dict,
    load_battery,
    make_probe_observer,
)
from mafialab.record import GAME_FILE, PROBES_FILE, ProbeRecord, probe_sort_key, read_records, strip_clock
from mafialab.rules import MAFIASCOPE7, WEREWOLF7, RuleSet

# --------------------------------------------------------------------------- test agents


def _transcript(view: PlayerView) -> str:
    lines = []
    for ev in view.events:
        if isinstance(ev, Speech):
            lines.append(f"{view.names[ev.seat]}: {ev.text}")
        elif isinstance(ev, Vote):
            lines.append(f"{view.names[ev.seat]} votes {view.names[ev.target]}")
        elif isinstance(ev, Elimination):
            lines.append(f"{view.names[ev.seat]} died ({ev.cause})")
    return "\n".join(lines)


_PURPOSE = {"speak": "speak", "mafia_chat": "speak", "vote": "vote", "nominate": "vote", "runoff_vote": "vote"}


class MockLLMAgent:
    """An LLM-style agent over a chat model: builds its context from the view, parses JSON.

    Game calls use purposes ``speak``/``vote``/``night_action``; probes use ``probe``, so a
    :class:`MockModel` with one queue per purpose serves both independently.
    """

    label = "mock/test"

    def __init__(self, seat: int, model: MockModel):
        self.seat = seat
        self.model = model

    def _context(self, view: PlayerView) -> list[ChatMessage]:
        system = ChatMessage(role="system", content=f"You are {view.name}, a {view.role} in a game of Mafia.")
        return [system, ChatMessage(role="user", content=_transcript(view) or "(nothing yet)")]

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        purpose = _PURPOSE.get(decision.kind, "night_action")
        ask = ChatMessage(role="user", content=f"Decide: {decision.kind}. Options: {decision.options}")
        req = ChatRequest(messages=[*self._context(view), ask], purpose=purpose, meta={"seat": self.seat})
        resp = await self.model.chat(req)
        try:
            data = json.loads(resp.text)
        except ValueError:
            data = {}
        target = view.names.index(data["target"]) if data.get("target") in view.names else None
        if not decision.wants_target:
            return Action(decision=decision.id, seat=self.seat, text=str(data.get("text") or "..."))
        text = "I vote." if decision.needs_text else None
        return Action(decision=decision.id, seat=self.seat, target=target if target is not None else -1, text=text)

    async def probe(
        self, question: str, view: PlayerView, json_schema: dict[str, Any] | None, max_tokens: int, probe_id: str
    ) -> ChatResponse:
        messages = [*self._context(view), ChatMessage(role="user", content=question)]
        req = ChatRequest(
            messages=messages,
            json_schema=json_schema,
            max_tokens=max_tokens,
            purpose="probe",
            meta={"seat": self.seat, "probe_id": probe_id},
        )
        return await self.model.chat(req)


def _game_outputs(rules: RuleSet, seed: int, n: int = 400) -> dict[str, list[Any]]:
    rng = random.Random(seed)
    names = list(rules.seat_names[: rules.n_seats])
    bogus = [*names, "Nobody"]  # an unknown name makes the engine fall back (seeded stream)
    return {
        "speak": [{"text": f"I suspect {rng.choice(names)}."} for _ in range(n)],
        "vote": [{"target": rng.choice(bogus)} for _ in range(n)],
        "night_action": [{"target": rng.choice(bogus)} for _ in range(n)],
    }


def _probe_outputs(seed: int, n: int = 4000) -> list[Any]:
    rng = random.Random(seed)
    kinds = [
        '[{"player": "Alex", "score": 70}]',
        '```json\n{"toward_me": []}\n```',
        '[{"player": "Alex", "guessed_role": "Mafia", "confidence": 6',
        "I would rather not answer.",
        RuntimeError("connection reset"),
        '{"action": "vote", "target": "Alex", "reasoning": "x"} and more',
    ]
    return [rng.choice(kinds) for _ in range(n)]


class RecordingAgent(ScriptedAgent):
    """A scripted player whose probe answers are canned and whose probe calls are logged."""

    def __init__(self, seat: int, rules: RuleSet, seed: int, log: list[tuple[int, str, int, str]]):
        super().__init__(seat, rules, seed)
        self.log = log
        self.counter = 0

    def probe_snapshot(self, view: PlayerView) -> RecordingAgent:
        return self  # canned answers from no belief state: the shared log sees every call

    async def probe(
        self, question: str, view: PlayerView, json_schema: dict[str, Any] | None, max_tokens: int, probe_id: str
    ) -> ChatResponse:
        self.counter += 1
        self.log.append((self.seat, probe_id, view.events[-1].seq, question))
        if probe_id == "free":
            return ChatResponse(text=f"plain words {self.seat}-{self.counter}", model="rec")
        return ChatResponse(text=json.dumps({"seat": self.seat, "n": self.counter}), model="rec")


# --------------------------------------------------------------------------- helpers


def _probe_battery(**top: Any) -> ProbeBattery:
    return battery_from_dict(
        {
            **top,
            "probes": [
                {"id": "a", "question": "A {player} last={last_a}"},
                {"id": "b", "question": "B prev={prev_a} last={last_b}", "when": "own_turn"},
                {"id": "c", "question": "C {players}", "when": "round_end"},
                {"id": "d", "question": "D {prev_a}", "when": "night_action"},
            ],
        }
    )


async def _recorded_game(rules: RuleSet, seed: int, battery: ProbeBattery, tmp_path: Path):
    log: list[tuple[int, str, int, str]] = []
    agents = [RecordingAgent(s, rules, seed, log) for s in range(rules.n_seats)]
    runner = make_probe_observer(battery, agents, rules, seed, out=tmp_path)
    assert runner is not None
    res = await play_game(rules, agents, seed, out=tmp_path, observers=[runner])
    return res, runner, log


def _alive_after(events: list[Event], seq: int, n: int) -> set[int]:
    dead = {e.seat for e in events if isinstance(e, Elimination) and e.seq <= seq}
    return set(range(n)) - dead


# --------------------------------------------------------------------------- triggers


@pytest.mark.parametrize("rules", [MAFIASCOPE7, WEREWOLF7], ids=lambda r: r.name)
async def test_triggers_and_who_is_probed(rules: RuleSet, tmp_path: Path):
    res, runner, _ = await _recorded_game(rules, 11, _probe_battery(), tmp_path)
    events = res.state.events
    n = rules.n_seats
    by_key: dict[tuple[int, str], set[int]] = defaultdict(set)
    for r in runner.records:
        by_key[(r.after_seq, r.probe_id)].add(r.seat)
        assert r.seat in _alive_after(events, r.after_seq, n), "a dead player was probed"
    expected: dict[tuple[int, str], set[int]] = defaultdict(set)
    for i, ev in enumerate(events):
        if isinstance(ev, Speech) or (isinstance(ev, Vote) and ev.visibility.public):
            alive = _alive_after(events, ev.seq, n)
            expected[(ev.seq, "a")] |= alive
            expected[(ev.seq, "b")] |= {ev.seat}  # own_turn: the speaker only
        elif isinstance(ev, NightAction):
            nxt = events[i + 1] if i + 1 < len(events) else None
            upto = nxt.seq if isinstance(nxt, InvestigationResult) and nxt.seat == ev.seat else ev.seq
            for pid in "abd":
                expected[(upto, pid)] |= {ev.seat}
        elif isinstance(ev, VoteTally) and ev.stage in ("vote", "runoff"):
            nxt = events[i + 1] if i + 1 < len(events) else None
            upto = nxt.seq if isinstance(nxt, Elimination) else ev.seq
            if upto < len(events) and isinstance(events[upto], GameEnd):
                continue
            for pid in "ac":
                expected[(upto, pid)] |= _alive_after(events, upto, n)
    assert dict(by_key) == dict(expected)
    # record keys: message index for messages, -1 for night actions and round ends
    for r in runner.records:
        ev = events[r.after_seq - 1]
        if r.trigger in ("always", "own_turn"):
            assert isinstance(ev, (Speech, Vote)) and r.msg_index == ev.index and r.round == ev.round
            assert r.trigger == ("own_turn" if ev.seat == r.seat else "always")
        else:
            assert r.msg_index == -1
        if r.trigger == "round_end":
            assert r.phase == "round_end" and r.probe_id in ("a", "c")
        assert r.role == res.state.roles[r.seat]
    assert {r.trigger for r in runner.records} == {"always", "own_turn", "night_action", "round_end"}


async def test_trigger_switches(tmp_path: Path):
    battery = _probe_battery(after_each_message=False, after_each_round=True, after_night_action=False)
    _, runner, _ = await _recorded_game(WEREWOLF7, 3, battery, tmp_path)
    assert runner.records and {r.trigger for r in runner.records} == {"round_end"}
    battery = _probe_battery(after_each_message=False, after_each_round=False)  # night follows messages
    _, runner, _ = await _recorded_game(WEREWOLF7, 3, battery, tmp_path / "2")
    assert runner.records == []


async def test_night_action_view_includes_own_result_only(tmp_path: Path):
    res, runner, log = await _recorded_game(WEREWOLF7, 5, _probe_battery(), tmp_path)
    seer = res.state.roles.index("Seer")
    seer_night = [r for r in runner.records if r.trigger == "night_action" and r.seat == seer]
    assert seer_night
    for r in seer_night:
        assert isinstance(res.state.events[r.after_seq - 1], InvestigationResult)
    # each view is the seat's visible events up to the trigger, nothing later
    events = res.state.events
    expected = {(r.seat, max(e.seq for e in visible_events(events[: r.after_seq], r.seat))) for r in runner.records}
    assert {(seat, last_seq) for seat, _pid, last_seq, _q in log} == expected
    # and every trigger event is visible to the seats it probes (public, or the actor's own)
    assert expected == {(r.seat, r.after_seq) for r in runner.records}


# --------------------------------------------------------------------------- chaining


async def test_chaining_prev_and_last(tmp_path: Path):
    battery = battery_from_dict(
        {
            "probes": [
                {"id": "x", "question": "X last={last_x}"},
                {"id": "free", "question": "F last={last_free}"},
                {"id": "y", "question": "Y prev={prev_x} prevf={prev_free} last={last_y}"},
            ]
        }
    )
    _, runner, _ = await _recorded_game(MAFIASCOPE7, 2, battery, tmp_path)
    per_seat: dict[int, list[ProbeRecord]] = defaultdict(list)
    for r in runner.records:
        per_seat[r.seat].append(r)
    checked = 0
    for recs in per_seat.values():
        last: dict[str, str] = {}
        steps: dict[int, dict[str, ProbeRecord]] = defaultdict(dict)
        for r in recs:
            steps[r.after_seq][r.probe_id] = r
        for seq in sorted(steps):
            step = steps[seq]
            x, f, y = step["x"], step["free"], step["y"]
            assert x.question == f"X last={last.get('x', 'N/A')}"
            assert f.question == f"F last={last.get('free', 'N/A')}"
            x_text = json.dumps(x.answer_parsed, separators=(",", ":"))
            assert y.question == f"Y prev={x_text} prevf={f.answer_raw} last={last.get('y', 'N/A')}"
            assert f.parse_ok is False  # free text: chained as raw text
            last = {"x": x_text, "free": f.answer_raw, "y": json.dumps(y.answer_parsed, separators=(",", ":"))}
            checked += 1
    assert checked > 20


async def test_failed_call_keeps_the_earlier_answer_for_chaining(tmp_path: Path):
    outputs = iter(['{"v": 1}', RuntimeError("boom"), '{"v": 3}'])

    class Flaky:
        label = "flaky"

        async def probe(self, question, view, json_schema, max_tokens, probe_id):  # type: ignore[no-untyped-def]
            out = next(outputs)
            if isinstance(out, Exception):
                raise out
            return ChatResponse(text=out)

    battery = battery_from_dict({"after_each_round": False, "probes": [{"id": "x", "question": "{last_x}"}]})
    agents: list[Any] = [make_agent("scripted", s, MAFIASCOPE7, 1) for s in range(7)]
    agents[0] = Flaky()
    runner = ProbeRunner(battery, agents, game_id="g")
    assert runner.skipped_seats == []
    from mafialab.engine import GameState

    state = GameState(MAFIASCOPE7, 1)
    # play the intro until three messages exist, probing only seat 0 by hand
    runner.probed_seats = [0]
    for _ in range(3):
        d = state.pending()[0]
        state.apply(Action(decision=d.id, seat=d.seat, text="hi"))
        await runner.on_events(state.events[-1:], state)
    await runner.finish()  # on_events only schedules: the answers arrive in the background
    qs = [r.question for r in runner.records]
    errs = [r.error for r in runner.records]
    assert qs == ["N/A", '{"v":1}', '{"v":1}']
    assert errs[0] is None and errs[1] == "RuntimeError: boom" and errs[2] is None
    assert runner.records[1].answer_raw == "" and runner.records[1].parse_ok is False
    assert runner.calls == 3 and runner.failed == 1


# --------------------------------------------------------------------------- answers


async def test_dead_or_unknown_player_answers_are_kept_and_flagged(tmp_path: Path):
    rules = MAFIASCOPE7
    seed = 4
    answer = [
        {"player": "Alex", "guessed_role": "Mafia", "confidence": 60, "reason": "x"},
        {"player": "Zed", "guessed_role": "Villager", "confidence": 50, "reason": "y"},
    ]
    model = MockModel({**_game_outputs(rules, seed), "probe": [json.dumps(answer)] * 3000})
    agents = [MockLLMAgent(s, model) for s in range(rules.n_seats)]
    battery = battery_from_dict(
        {"probes": [load_battery("default").probe("role_assessment").model_dump(by_alias=True)]}
    )
    runner = make_probe_observer(battery, agents, rules, seed, out=tmp_path)
    assert runner is not None
    res = await play_game(rules, agents, seed, out=tmp_path, observers=[runner])
    alex_dead_at = next((e.seq for e in res.state.events if isinstance(e, Elimination) and e.seat == 0), None)
    assert runner.records
    for r in runner.records:
        assert r.parse_ok and r.answer_parsed == answer and r.schema_ok is False
        assert "$[1].player: 'Zed' is not a player" in r.issues
        assert ("$[0].player: 'Alex' is dead" in r.issues) == (alex_dead_at is not None and r.after_seq >= alex_dead_at)
    # the request carried the rendered schema: alive names only
    probe_reqs = [q for q in model.requests if q.purpose == "probe"]
    assert len(probe_reqs) == len(runner.records)
    enum = probe_reqs[-1].json_schema["items"]["properties"]["player"]["enum"]  # type: ignore[index]
    assert enum == [res.state.names[s] for s in _alive_after(res.state.events, runner.records[-1].after_seq, 7)]


async def test_records_written_beside_game_log(tmp_path: Path):
    rules, seed = WEREWOLF7, 8
    model = MockModel({**_game_outputs(rules, seed), "probe": _probe_outputs(seed)})
    agents = [MockLLMAgent(s, model) for s in range(rules.n_seats)]
    runner = make_probe_observer("default", agents, rules, seed, out=tmp_path)
    assert runner is not None
    res = await play_game(rules, agents, seed, out=tmp_path, observers=[runner])
    assert res.path is not None
    lines = read_records(res.path / PROBES_FILE)
    assert len(lines) == len(runner.records) == runner.calls > 0
    stamped = [r.model_copy(update={"ts": x["ts"]}) for r, x in zip(runner.records, lines, strict=True)]
    assert [ProbeRecord.model_validate(x) for x in lines] == stamped
    assert all(x["game_id"] == res.game_id and x["ts"] is not None for x in lines)
    by_raw: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for x in lines:
        by_raw[x["answer_raw"]].append(x)
    truncated = by_raw['[{"player": "Alex", "guessed_role": "Mafia", "confidence": 6']
    assert truncated and all(x["parse_ok"] and x["repaired"] for x in truncated)
    assert truncated[0]["answer_parsed"] == [{"player": "Alex", "guessed_role": "Mafia", "confidence": 6}]
    fenced = by_raw['```json\n{"toward_me": []}\n```']
    assert fenced and all(x["parse_ok"] and x["repaired"] and x["answer_parsed"] == {"toward_me": []} for x in fenced)
    prose = by_raw["I would rather not answer."]
    assert prose and all(not x["parse_ok"] and x["answer_parsed"] is None and x["error"] is None for x in prose)
    errors = by_raw[""]
    assert errors and all(x["error"] == "RuntimeError: connection reset" and not x["parse_ok"] for x in errors)
    assert runner.failed == len(errors)
    plain = by_raw['[{"player": "Alex", "score": 70}]']
    assert plain and all(x["parse_ok"] and not x["repaired"] for x in plain)


async def test_agents_without_probe_are_skipped(tmp_path: Path):
    rules, seed = WEREWOLF7, 1
    agents = [make_agent("random" if s % 2 else "scripted", s, rules, seed) for s in range(rules.n_seats)]
    runner = make_probe_observer("suspicion", agents, rules, seed, out=tmp_path)
    assert runner is not None and runner.skipped_seats == [1, 3, 5]
    await play_game(rules, agents, seed, out=tmp_path, observers=[runner])
    assert runner.records and {r.seat for r in runner.records} <= {0, 2, 4, 6}
    assert isinstance(agents[0], ProbeableAgent) and not isinstance(agents[1], ProbeableAgent)


def test_none_battery_gives_no_observer():
    agents = [make_agent("scripted", s, WEREWOLF7, 0) for s in range(7)]
    assert make_probe_observer("none", agents, WEREWOLF7, 0, out=None) is None


# --------------------------------------------------------------------------- concurrency


async def test_probes_run_concurrently_and_chains_keep_their_order():
    spans: dict[tuple[int, str], tuple[float, float]] = {}
    in_flight = {"n": 0, "peak": 0}

    class Slow:
        label = "slow"

        def __init__(self, seat: int):
            self.seat = seat

        async def probe(self, question, view, json_schema, max_tokens, probe_id):  # type: ignore[no-untyped-def]
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            in_flight["n"] += 1
            in_flight["peak"] = max(in_flight["peak"], in_flight["n"])
            await asyncio.sleep(0.01)
            in_flight["n"] -= 1
            spans[(self.seat, probe_id)] = (t0, loop.time())
            return ChatResponse(text="[]")

    from mafialab.engine import GameState

    state = GameState(MAFIASCOPE7, 0)
    d = state.pending()[0]
    state.apply(Action(decision=d.id, seat=d.seat, text="hello"))
    agents = [Slow(s) for s in range(7)]
    runner = ProbeRunner(load_battery("default"), agents, game_id="g")
    await runner.on_events(state.events[-1:], state)
    assert runner.records == [] and not spans  # scheduling does not wait for answers
    assert runner.pending == 7 * 4 + 1
    await runner.finish()
    assert len(runner.records) == 7 * 4 + 1 and runner.pending == 0
    # the independent probes of every seat start together (3 per seat: role, suspicion, personality)
    assert in_flight["peak"] == 7 * 3
    for seat in range(7):
        # social_map splices {prev_role_assessment}: it starts after that answer
        assert spans[(seat, "social_map")][0] >= spans[(seat, "role_assessment")][1]
    # planned_action (the speaker's own turn) waits for role_assessment and social_map
    assert spans[(d.seat, "planned_action")][0] >= spans[(d.seat, "social_map")][1]
    # three chained calls deep, not 29 one after another: the longest run of calls each
    # starting after the previous one ended
    depth: dict[tuple[int, str], int] = {}
    for key, (start, _) in sorted(spans.items(), key=lambda kv: kv[1][0]):
        depth[key] = 1 + max((depth[k] for k, (_, end) in spans.items() if k in depth and end <= start), default=0)
    assert max(depth.values()) == 3
    # records are written as answers arrive; sorted by key they are in seat, then battery order
    ordered = sorted(runner.records, key=probe_sort_key)
    assert [(r.seat, r.position) for r in ordered] == sorted((r.seat, r.position) for r in runner.records)
    assert [(r.seat, r.position) for r in runner.records] != [(r.seat, r.position) for r in ordered]


async def test_max_concurrent_limits_calls():
    in_flight = {"n": 0, "peak": 0}

    class Slow:
        label = "slow"

        async def probe(self, question, view, json_schema, max_tokens, probe_id):  # type: ignore[no-untyped-def]
            in_flight["n"] += 1
            in_flight["peak"] = max(in_flight["peak"], in_flight["n"])
            await asyncio.sleep(0.005)
            in_flight["n"] -= 1
            return ChatResponse(text="[]")

    from mafialab.engine import GameState

    state = GameState(MAFIASCOPE7, 0)
    d = state.pending()[0]
    state.apply(Action(decision=d.id, seat=d.seat, text="hello"))
    runner = ProbeRunner(load_battery("suspicion"), [Slow() for _ in range(7)], game_id="g", max_concurrent=2)
    await runner.on_events(state.events[-1:], state)
    await runner.finish()
    assert in_flight["peak"] == 2 and len(runner.records) == 7


# --------------------------------------------------------------------------- non-invasiveness


def _game_lines(path: Path) -> list[dict[str, Any]]:
    """The game's records without clock fields, and without what names the run in the header
    (the game id and ``meta.probes``: a probed game is another recorded game of the same play)."""
    recs = strip_clock(read_records(path / GAME_FILE))
    head = {k: v for k, v in recs[0].items() if k != "game_id"}
    head["meta"] = {k: v for k, v in head.get("meta", {}).items() if k != "probes"}
    return [head, *recs[1:]]


async def _mock_game(rules: RuleSet, seed: int, out: Path, battery: str | None) -> tuple[Path, MockModel, int]:
    model = MockModel({**_game_outputs(rules, seed), "probe": _probe_outputs(seed)})
    agents = [MockLLMAgent(s, model) for s in range(rules.n_seats)]
    runner = make_probe_observer(battery, agents, rules, seed, out=out)
    res = await play_game(rules, agents, seed, out=out, observers=[runner] if runner else [])
    assert res.path is not None and res.fallbacks > 0  # the game exercised the fallback stream
    return res.path, model, len(runner.records) if runner else 0


@pytest.mark.parametrize("rules", [MAFIASCOPE7, WEREWOLF7], ids=lambda r: r.name)
@pytest.mark.parametrize("battery", ["default", "suspicion"])
async def test_mock_game_log_identical_with_and_without_probes(rules: RuleSet, battery: str, tmp_path: Path):
    plain, m0, _ = await _mock_game(rules, 21, tmp_path / "plain", None)
    probed, m1, n = await _mock_game(rules, 21, tmp_path / "probed", battery)
    assert n > 20
    assert _game_lines(plain) == _game_lines(probed)
    assert not (plain / PROBES_FILE).exists() and (probed / PROBES_FILE).is_file()
    game0 = [r for r in m0.requests if r.purpose != "probe"]
    game1 = [r for r in m1.requests if r.purpose != "probe"]
    assert game0 == game1  # no game-facing call ever saw a probe question or answer
    probe_q = {r.messages[-1].content for r in m1.requests if r.purpose == "probe"}
    assert not any(m.content in probe_q for r in game1 for m in r.messages)


@pytest.mark.parametrize("rules", [MAFIASCOPE7, WEREWOLF7], ids=lambda r: r.name)
async def test_scripted_game_log_identical_with_and_without_probes(rules: RuleSet, tmp_path: Path):
    for seed in (0, 1, 2):
        logs = []
        for battery in (None, "default"):
            agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
            out = tmp_path / f"{seed}-{battery}"
            runner = make_probe_observer(battery, agents, rules, seed, out=out)
            res = await play_game(rules, agents, seed, out=out, observers=[runner] if runner else [])
            assert res.path is not None
            logs.append(_game_lines(res.path))
            if runner is not None:
                assert runner.records and all(r.parse_ok and r.schema_ok for r in runner.records)
        assert logs[0] == logs[1]


async def test_the_identity_check_catches_a_leaky_agent(tmp_path: Path):
    """Sanity check of the test above: an agent that remembers probes changes the game."""

    class Leaky(ScriptedAgent):
        probes_seen = 0

        def probe_snapshot(self, view: PlayerView) -> Leaky:
            return self  # answers probes on the playing agent itself, not on a frozen copy

        async def probe(self, question, view, json_schema, max_tokens, probe_id):  # type: ignore[no-untyped-def]
            self.probes_seen += 1
            return ChatResponse(text="[]")

        async def decide(self, decision: Decision, view: PlayerView) -> Action:
            a = await super().decide(decision, view)
            if a.text is not None and decision.kind == "speak":
                return a.model_copy(update={"text": f"{a.text} ({self.probes_seen})"})
            return a

    logs = []
    for battery in (None, "suspicion"):
        agents = [Leaky(s, WEREWOLF7, 0) for s in range(7)]
        runner = make_probe_observer(battery, agents, WEREWOLF7, 0, out=tmp_path / str(battery))
        res = await play_game(WEREWOLF7, agents, 0, out=tmp_path / str(battery), observers=[runner] if runner else [])
        assert res.path is not None
        logs.append(_game_lines(res.path))
    assert logs[0] != logs[1]


async def test_scripted_probe_leaves_the_agent_untouched():
    """Probing a scripted agent on a later view changes none of its state, nested or random."""
    import copy

    from mafialab.agents._scripted_probe import ANSWERS
    from mafialab.engine import GameState

    rules = WEREWOLF7
    state = GameState(rules, 9)
    agents = [ScriptedAgent(s, rules, 9) for s in range(rules.n_seats)]
    probed = 0
    while not state.is_terminal:
        for seat in state.alive_seats():
            agent = agents[seat]
            before = {k: copy.deepcopy(v) for k, v in vars(agent).items() if k not in ("_rng", "rules")}
            rng_state = agent._rng.getstate()
            for pid in ANSWERS:
                resp = await agent.probe("?", state.view(seat), None, 100, pid)
                assert resp.ok and resp.parsed is not None and json.loads(resp.text) == resp.parsed
            after = {k: v for k, v in vars(agent).items() if k not in ("_rng", "rules")}
            assert after == before
            assert agent._rng.getstate() == rng_state
            probed += 1
        for d in state.pending():
            state.apply(await agents[d.seat].decide(d, state.view(d.seat)))
    assert probed > 20
    resp = await agents[0].probe("?", state.view(0), None, 100, "weather_report")
    assert resp.error is not None and resp.error_kind == "unsupported" and "weather_report" in resp.error


class _Degenerate:
    """Plays like the wrapped agent; answers every probe with a degenerate text."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.label = inner, inner.label

    async def decide(self, decision: Any, view: Any) -> Any:
        return await self.inner.decide(decision, view)

    async def probe(self, question: str, view: Any, schema: Any, max_tokens: int, probe_id: str) -> Any:
        from mafialab.models import ChatResponse

        return ChatResponse(text="[" * 1200)


async def test_a_degenerate_probe_answer_does_not_stop_the_game(tmp_path: Path) -> None:
    from mafialab.agents import make_agent
    from mafialab.harness import play_game
    from mafialab.probes import make_probe_observer, resolve_battery
    from mafialab.record import read_game, read_records, strip_clock
    from mafialab.rules import WEREWOLF7

    def agents() -> list[Any]:
        return [make_agent("scripted", s, WEREWOLF7, 0) for s in range(WEREWOLF7.n_seats)]

    plain = await play_game(WEREWOLF7, agents(), 0, out=tmp_path / "plain")
    probed_agents = agents()
    probed_agents[3] = _Degenerate(probed_agents[3])
    obs = make_probe_observer(resolve_battery("suspicion"), probed_agents, WEREWOLF7, 0, out=tmp_path / "probed")
    assert obs is not None
    res = await play_game(WEREWOLF7, probed_agents, 0, out=tmp_path / "probed", observers=[obs])
    assert res.winner == plain.winner and read_game(tmp_path / "probed" / res.game_id).winner is not None
    recs = read_records(tmp_path / "probed" / res.game_id / "probes.jsonl")
    mine = [r for r in recs if r["seat"] == 3]
    assert mine and all(not r["parse_ok"] and r["answer_raw"] == "[" * 1200 for r in mine)
    assert any(r["parse_ok"] for r in recs if r["seat"] != 3)
    # the game itself is the same; only its id and the header's record of the battery differ
    plain_recs = strip_clock(read_records(tmp_path / "plain" / plain.game_id / "game.jsonl"))
    probed_recs = strip_clock(read_records(tmp_path / "probed" / res.game_id / "game.jsonl"))
    assert plain.game_id != res.game_id
    assert probed_recs[0]["meta"]["probes"].startswith("suspicion:") and "probes" not in plain_recs[0]["meta"]
    assert plain_recs[1:] == probed_recs[1:]
