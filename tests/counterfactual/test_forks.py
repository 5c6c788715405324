"""Forks: prefix equality, interventions, determinism, belief leak test, imported parents."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.agents import LLMAgent, make_agent
from mafialab.cli import app
from mafialab.counterfactual import (
    Inject,
    Night,
    PrivateBelief,
    Resample,
    compare_batches,
    fork_steps,
    inject_vote_text,
    read_batches,
    resolve_step,
    run_fork,
)
from mafialab.engine import Action, GameState, Vote
from mafialab.harness import ReplayMismatch, play_game, replay
from mafialab.models import MockModel
from mafialab.record import GAME_FILE, import_mafiascope, read_game, read_records, strip_clock
from mafialab.record._import_mafiascope import import_game
from mafialab.rules import MAFIASCOPE7, MAFIASCOPE7_V2, WEREWOLF7, RuleSet
from tests.conftest import MAFIASCOPE, require_real
from tests.llm_helpers import legal_answer


def _play(rules: RuleSet, seed: int, out: Path) -> Path:
    agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
    res = asyncio.run(play_game(rules, agents, seed, out=out))
    assert res.path is not None
    return res.path


def _records(path: Path) -> list[dict[str, Any]]:
    return strip_clock(read_records(path / GAME_FILE))


def _first_vote(parent: Path) -> Any:
    return next(s for s in fork_steps(read_game(parent)) if s.kind == "vote")


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    return _play(MAFIASCOPE7_V2, 3, tmp_path / "runs")


def test_prefix_equals_parent_events(parent: Path, tmp_path: Path) -> None:
    plog = read_game(parent)
    step = _first_vote(parent)
    batch = asyncio.run(run_fork(parent, step.id, Resample(), n=2, out=tmp_path / "forks"))
    prefix_len = len(replay(plog, upto=step.id).events)
    assert prefix_len > 10
    parent_events = _records(parent)[1 : 1 + prefix_len]
    for b in batch.branches:
        assert b.path is not None
        recs = _records(b.path)
        head = recs[0]
        assert head["parent"]["game_id"] == plog.game_id and head["parent"]["step"] == step.id
        assert head["seed"] == plog.header.seed
        assert recs[1 : 1 + prefix_len] == parent_events
        assert b.game_id == f"{plog.game_id}~{batch.batch}-{b.replica}"
        # the branch replays (prefix from the parent's seed, then its continuation seed)
        assert replay(read_game(b.path)).winner == b.winner


def test_injected_vote_changes_that_vote_only(parent: Path, tmp_path: Path) -> None:
    plog = read_game(parent)
    step = _first_vote(parent)
    state = replay(plog, upto=step.id)
    d = next(x for x in state.pending() if x.id == step.id)
    original = next(e for e in plog.events if isinstance(e, Vote) and e.decision == step.id)
    new_target = next(s for s in d.options if s != original.target)
    name = state.names[new_target]
    batch = asyncio.run(run_fork(parent, step.id, Inject(target=name, text="Changed my mind."), out=tmp_path / "f"))
    assert batch.branches[0].path is not None
    blog = read_game(batch.branches[0].path)
    votes = {e.decision: e for e in blog.events if isinstance(e, Vote)}
    parent_votes = {e.decision: e for e in plog.events if isinstance(e, Vote)}
    assert votes[step.id].target == new_target and votes[step.id].statement == "Changed my mind."
    assert not votes[step.id].fallback
    # every vote before the step is the parent's; the injected one is the only change at the step
    for did, ev in parent_votes.items():
        if did < step.id:
            assert votes[did].target == ev.target


def test_injected_no_vote_casts_no_vote(parent: Path, tmp_path: Path) -> None:
    step = _first_vote(parent)
    iv = inject_vote_text("I will not vote today. VOTE: Nobody", MAFIASCOPE7_V2.seat_names)
    assert iv.no_vote and iv.target is None
    batch = asyncio.run(run_fork(parent, step.id, iv, out=tmp_path / "f"))
    assert batch.branches[0].path is not None
    blog = read_game(batch.branches[0].path)
    vote = next(e for e in blog.events if isinstance(e, Vote) and e.decision == step.id)
    assert vote.target is None and vote.fallback is False
    tally = next(e for e in blog.events if e.kind == "vote_tally" and e.seq > vote.seq)
    assert step.seat not in tally.votes  # type: ignore[union-attr]


def test_no_vote_refused_where_rules_do_not_allow_it(tmp_path: Path) -> None:
    parent = _play(MAFIASCOPE7, 3, tmp_path / "runs")
    step = _first_vote(parent)
    with pytest.raises(ValueError, match="no no-vote"):
        asyncio.run(run_fork(parent, step.id, Inject(text="x", no_vote=True), out=tmp_path / "f"))


def test_deterministic_agents_give_identical_branches(parent: Path, tmp_path: Path) -> None:
    step = _first_vote(parent)
    for out in ("a", "b"):
        asyncio.run(run_fork(parent, step.id, Resample(), n=3, seed=7, out=tmp_path / out))
    a = sorted(p.name for p in (tmp_path / "a").iterdir())
    b = sorted(p.name for p in (tmp_path / "b").iterdir())
    assert a == b and len(a) == 3
    for name in a:
        assert _records(tmp_path / "a" / name) == _records(tmp_path / "b" / name)
    seeds = {read_game(tmp_path / "a" / n).header.parent.continuation_seed for n in a}  # type: ignore[union-attr]
    assert len(seeds) == 3  # each replica draws from its own seed


def test_night_override_sets_the_action(tmp_path: Path) -> None:
    parent = _play(WEREWOLF7, 2, tmp_path / "runs")
    plog = read_game(parent)
    step = next(s for s in fork_steps(plog) if s.kind == "protect")
    state = replay(plog, upto=step.id)
    d = next(x for x in state.pending() if x.id == step.id)
    target = d.options[-1]
    batch = asyncio.run(run_fork(parent, step.id, Night(seat=step.seat, target=target), out=tmp_path / "f"))
    assert batch.branches[0].path is not None
    ev = next(e for e in read_game(batch.branches[0].path).events if e.kind == "night_action" and e.decision == step.id)
    assert ev.target == target and not ev.fallback  # type: ignore[union-attr]


def test_belief_reaches_only_its_seat(parent: Path, tmp_path: Path) -> None:
    """Leak test: the injected line is in the chosen seat's prompts and in no other seat's."""
    step = _first_vote(parent)
    secret = "BELIEF-MARKER-7c1: you are sure Casey is Mafia."
    model = MockModel(legal_answer)

    def build(spec: str, seat: int, rules: RuleSet, seed: int) -> LLMAgent:
        return LLMAgent(seat, rules, seed, model)

    seat = 2
    batch = asyncio.run(
        run_fork(parent, step.id, PrivateBelief(seat=seat, text=secret), out=tmp_path / "f", build_agent=build)
    )
    assert model.requests, "the continuation called the model"
    seen = {int(r.meta["seat"]): False for r in model.requests}
    for r in model.requests:
        text = "\n".join(m.content for m in r.messages)
        if secret in text:
            seen[int(r.meta["seat"])] = True
    assert seen.get(seat) is True
    assert [s for s, hit in seen.items() if hit] == [seat]
    assert batch.branches[0].path is not None
    note = next(e for e in read_game(batch.branches[0].path).events if e.kind == "private_note")
    assert note.visibility.seats == (seat,) and not note.visibility.public


def test_compare_reports_rates_and_fisher(parent: Path, tmp_path: Path) -> None:
    step = _first_vote(parent)
    asyncio.run(run_fork(parent, step.id, Resample(), n=3, out=tmp_path / "a"))
    asyncio.run(run_fork(parent, step.id, Resample(), n=2, seed=1, out=tmp_path / "b"))
    res = compare_batches(tmp_path / "a", tmp_path / "b")
    assert res["a"]["n"] == 3 and res["b"]["n"] == 2
    a_m, b_m = res["a"]["mafia"], res["b"]["mafia"]
    assert a_m["k"] + res["a"]["town"]["k"] == 3
    assert 0 <= a_m["lo"] <= a_m["p"] <= a_m["hi"] <= 1
    d = res["difference"]["mafia"]
    assert d["diff"] == pytest.approx(a_m["p"] - b_m["p"])
    assert d["lo"] <= d["diff"] <= d["hi"] and 0 < d["fisher_p"] <= 1
    assert len(read_batches(tmp_path / "a")) == 1
    with pytest.raises(ValueError, match="both sides are batch"):
        compare_batches(tmp_path / "a", tmp_path / "a")


def _to_mafiascope(state: GameState, gid: str) -> list[dict[str, Any]]:
    """Write a finished mafiascope7-v2 engine game in MafiaScope's record format (our own text)."""
    names, roles = state.names, state.roles
    recs: list[dict[str, Any]] = [
        {"game_id": gid, "kind": "setup", "round": 0, "ts": 1.0,
         "players": [{"name": n, "role": r, "model": "scripted", "backend": "test"} for n, r in zip(names, roles, strict=True)]},
    ]  # fmt: skip
    seq: dict[int, int] = {}

    def add(kind: str, rnd: int, **kw: Any) -> None:
        recs.append({"game_id": gid, "kind": kind, "round": rnd, "ts": 1.0 + len(recs), **kw})

    def msg(kind: str, rnd: int, seat: int, text: str) -> None:
        seq[rnd] = seq.get(rnd, 0) + 1
        add(kind, rnd, player=names[seat], response=text, msg_seq=seq[rnd])

    for ev in state.events:
        if ev.kind == "speech":
            msg("intro" if ev.phase == "intro" else "day_discuss", ev.round, ev.seat, ev.text)
        elif ev.kind == "night_action" and ev.ability == "kill":
            msg("night_mafia", ev.round, ev.seat, f"Quiet plan. ACTION: Kill {names[ev.target]}")
        elif ev.kind == "night_action" and ev.ability == "protect":
            msg("night_doctor", ev.round, ev.seat, f"Guarding. ACTION: Protect {names[ev.target]}")
        elif ev.kind == "kill_chosen":
            add("night_kill", ev.round, victim=names[ev.target])
        elif ev.kind == "night_result":
            text = f"{names[ev.killed]} was killed by the Mafia." if ev.killed is not None else (
                f"The Doctor saved {names[ev.saved]}!" if ev.saved is not None else "No one was killed tonight.")  # fmt: skip
            add("night_analysis", ev.round, night_result=text)
        elif ev.kind == "vote":
            who = names[ev.target] if ev.target is not None else "nobody"
            msg("day_vote", ev.round, ev.seat, f"{ev.statement} VOTE: {who}")
        elif ev.kind == "vote_tally":
            add("vote_tally", ev.round, votes={names[v]: names[t] for v, t in ev.votes.items()},
                tally={names[t]: c for t, c in ev.tally.items()})  # fmt: skip
        elif ev.kind == "elimination" and ev.cause == "vote":
            add("day_eliminate", ev.round, eliminated=names[ev.seat], role=roles[ev.seat], votes=1)
        elif ev.kind == "game_end":
            add("game_over", ev.round, winner="Mafia" if ev.winner == "mafia" else "Villagers")
    return recs


def _fixture_game(tmp_path: Path) -> Path:
    rules = MAFIASCOPE7_V2
    state = GameState(rules, 11)
    agents = [make_agent("scripted", s, rules, 11) for s in range(rules.n_seats)]
    from mafialab.harness import run_game

    asyncio.run(run_game(state, agents))
    src = tmp_path / "ms" / "g1"
    src.mkdir(parents=True)
    (src / "game.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _to_mafiascope(state, "g1")))
    gi = import_game(src, tmp_path / "imp" / "g1")
    assert gi.out is not None
    return gi.out


def test_fork_of_imported_fixture_continues_with_scripted_agents(tmp_path: Path) -> None:
    imported = _fixture_game(tmp_path)
    ilog = read_game(imported)
    assert replay(ilog).winner == ilog.winner
    step = next(s for s in fork_steps(ilog) if s.kind == "vote")
    assert step.source_index is not None
    batch = asyncio.run(run_fork(imported, step.id, Resample(), n=2, agents="scripted", out=tmp_path / "f"))
    for b in batch.branches:
        assert b.winner in ("town", "mafia") and b.path is not None
        blog = read_game(b.path)
        assert blog.header.rules_id == "mafiascope7-v2" and blog.header.parent is not None
        assert replay(blog).winner == b.winner


def test_imported_game_refused_at_first_unreproducible_step(tmp_path: Path) -> None:
    imported, _ = _damaged_import(tmp_path)  # the first doctor turn: its action can no longer be read
    with pytest.raises(ReplayMismatch, match=r"^step \d+ \(round 1 night, \w+ protect\): the recorded protect target"):
        replay(read_game(imported))


def _shared(sub: str) -> Path:
    return require_real(MAFIASCOPE / sub)


def test_fork_of_imported_en_demo_game_continues_with_scripted_agents(tmp_path: Path) -> None:
    rep = import_mafiascope(_shared("en_demo"), tmp_path / "imp")
    assert len(rep.imported) == 5
    for gi in rep.imported:  # every en_demo game rebuilds under mafiascope7-v2
        assert gi.out is not None
        g = read_game(gi.out)
        assert replay(g).winner == g.winner
    assert rep.imported[0].out is not None
    parent = read_game(rep.imported[0].out)
    step = next(s for s in fork_steps(parent) if s.kind == "vote")
    batch = asyncio.run(run_fork(parent, step.id, Resample(), n=2, agents="scripted", out=tmp_path / "f"))
    assert all(b.winner in ("town", "mafia") for b in batch.branches)


def test_mafiascope_fork_logs_import_as_branches_without_prefix(tmp_path: Path) -> None:
    forks = _shared("bifurcation_guided") / "forks"
    src = sorted(p for p in forks.iterdir() if p.is_dir())[0]
    gi = import_game(src, tmp_path / "b")
    assert gi.out is not None
    g = read_game(gi.out)
    assert g.header.parent is not None and g.header.parent.prefix == "absent"
    assert g.header.parent.fork_point is not None and len(g.header.parent.fork_point) == 2
    with pytest.raises(ReplayMismatch, match="without its prefix"):
        replay(g)


def test_replica_action_is_legal_after_inject_under_v2() -> None:
    # an injected vote naming the voter counts as no vote under mafiascope7-v2
    from mafialab.counterfactual import injected_action

    state = GameState(MAFIASCOPE7_V2, 1)
    while not any(d.kind == "vote" for d in state.pending()):
        for d in state.pending():
            t = d.options[0] if d.wants_target else None
            state.apply(Action(decision=d.id, seat=d.seat, target=t, text="hi" if d.needs_text else None))
    d = next(x for x in state.pending() if x.kind == "vote")
    a = injected_action(state, d, Inject(target=state.names[d.seat], text="me"))
    assert a.target is None


def test_probed_branch_keeps_the_parents_prefix_probes(tmp_path: Path) -> None:
    from mafialab.probes import make_probe_observer

    rules, seed = WEREWOLF7, 4
    agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
    obs = make_probe_observer("suspicion", agents, rules, seed, out=tmp_path / "runs")
    assert obs is not None
    res = asyncio.run(play_game(rules, agents, seed, out=tmp_path / "runs", observers=[obs]))
    assert res.path is not None
    plog = read_game(res.path)
    step = next(s for s in fork_steps(plog) if s.round == 2 and s.kind == "speak")
    batch = asyncio.run(run_fork(res.path, step.id, Resample(), probes="suspicion", out=tmp_path / "f"))
    prefix_len = len(replay(plog, upto=step.id).events)
    assert batch.branches[0].path is not None
    parent_probes = [r for r in read_records(res.path / "probes.jsonl") if r["after_seq"] <= prefix_len]
    branch_probes = read_records(batch.branches[0].path / "probes.jsonl")
    assert parent_probes and len(branch_probes) > len(parent_probes)
    head = branch_probes[: len(parent_probes)]
    assert [r["answer_raw"] for r in head] == [r["answer_raw"] for r in parent_probes]
    assert {r["game_id"] for r in branch_probes} == {batch.branches[0].game_id}
    assert all(r["after_seq"] > prefix_len for r in branch_probes[len(parent_probes) :])


def test_dry_run_estimate_from_the_parents_calls(tmp_path: Path) -> None:
    from mafialab.counterfactual import estimate_fork
    from mafialab.record import Price, PriceTable
    from tests.llm_helpers import llm_agents

    rules = MAFIASCOPE7_V2
    agents, _ = llm_agents(rules, 5)
    prices = PriceTable(prices={"mock/*": Price(input=1.0, output=2.0)})
    res = asyncio.run(play_game(rules, agents, 5, out=tmp_path / "runs", prices=prices))
    assert res.path is not None
    calls = [c for c in read_records(res.path / "calls.jsonl") if c["kind"] == "call"]
    step = _first_vote(res.path)
    after = [c for c in calls if c.get("decision") is not None and c["decision"] >= step.id]
    est = estimate_fork(res.path, step.id, n=4)
    assert est.calls_per_branch == len(after) > 0 and est.calls == 4 * len(after)
    priced = [c["cost_usd"] for c in calls if c["cost_usd"] is not None]
    assert est.cost_usd == pytest.approx(sum(priced) / len(priced) * len(after) * 4)


def test_step_after_a_mafiascope_fork_point(tmp_path: Path) -> None:
    from mafialab.counterfactual import step_after_message

    ilog = read_game(_fixture_game(tmp_path))
    steps = fork_steps(ilog)
    vote = next(s for s in steps if s.kind == "vote")
    assert vote.source_index is not None
    assert step_after_message(steps, vote.round, vote.source_index - 1, kind="vote") == vote
    with pytest.raises(ValueError, match="no replayable vote"):
        step_after_message(steps, 99, 0, kind="vote")


def test_a_branch_forks_again_and_replays(parent: Path, tmp_path: Path) -> None:
    step = _first_vote(parent)
    first = asyncio.run(run_fork(parent, step.id, Resample(), out=tmp_path / "f1"))
    child = first.branches[0].path
    assert child is not None
    later = next(s for s in fork_steps(read_game(child)) if s.id > step.id + 1)
    second = asyncio.run(run_fork(child, later.id, Resample(), n=2, out=tmp_path / "f2"))
    for b in second.branches:
        assert b.path is not None
        g = read_game(b.path)
        assert g.game_id.startswith(first.branches[0].game_id + "~")
        assert g.header.parent is not None and g.header.parent.root == read_game(parent).game_id
        assert replay(g).winner == b.winner
        # the grandchild's prefix is the child's events up to the later step
        n = len(replay(read_game(child), upto=later.id).events)
        assert _records(b.path)[1 : 1 + n] == _records(child)[1 : 1 + n]


def test_resample_replicas_draw_the_fork_answer_with_the_servers_n(parent: Path, tmp_path: Path) -> None:
    from mafialab.testing import OpenAIStub
    from tests.helpers import seeded_responder

    step = _first_vote(parent)

    async def go() -> tuple[Any, list[dict[str, Any]]]:
        async with OpenAIStub(responder=seeded_responder) as stub:
            spec = f"openai/stub?base_url={stub.base_url}&max_n=4"
            batch = await run_fork(
                parent, step.id, Resample(), n=6, agents="scripted", seats={step.seat: spec},
                out=tmp_path / "f", check_remote=False,
            )  # fmt: skip
            return batch, list(stub.requests)

    batch, requests = asyncio.run(go())
    fork_msgs = requests[0]["messages"]
    at_fork = [r for r in requests if r["messages"] == fork_msgs]
    assert sorted(r.get("n", 1) for r in at_fork) == [2, 4]  # ceil(6 / 4) requests for 6 replicas
    assert all("n" not in r for r in requests if r["messages"] != fork_msgs)  # later calls: one answer each
    votes = []
    for b in batch.branches:
        assert b.path is not None and b.winner in ("town", "mafia")
        calls = [json.loads(x) for x in (b.path / "calls.jsonl").read_text().splitlines()]
        mine = [c for c in calls if c.get("decision") == step.id]
        assert [c["status"] for c in mine] == ["ok"]  # each replica records its own drawn answer
        vote = next(e for e in read_game(b.path).events if getattr(e, "decision", None) == step.id)
        votes.append((vote.target, vote.statement))  # type: ignore[attr-defined]
    assert len(set(votes)) > 1  # the replicas got different answers


def test_interventions_on_a_dead_seat_are_refused(tmp_path: Path) -> None:
    """A night override or a belief for a seat that is dead at the fork step would silently do nothing."""
    parent = _play(WEREWOLF7, 2, tmp_path / "runs")
    plog = read_game(parent)
    steps = fork_steps(plog)
    step = steps[-1]
    state = replay(plog, upto=step.id)
    dead = next(s for s in range(state.n_seats) if not state.alive[s])
    living = next(s for s in range(state.n_seats) if state.alive[s])
    with pytest.raises(ValueError, match=rf"--night: seat {dead} \(.*\) is dead"):
        asyncio.run(run_fork(parent, step.id, Night(seat=dead, target=living), out=tmp_path / "n"))
    with pytest.raises(ValueError, match=rf"--night: target {dead} \(.*\) is dead"):
        asyncio.run(run_fork(parent, step.id, Night(seat=living, target=dead), out=tmp_path / "t"))
    with pytest.raises(ValueError, match=rf"--belief: seat {dead} \(.*\) is dead"):
        asyncio.run(run_fork(parent, step.id, PrivateBelief(seat=dead, text="x"), out=tmp_path / "b"))
    assert not (tmp_path / "n").exists() or not any((tmp_path / "n").rglob("game.jsonl"))


def test_a_night_override_for_a_seat_without_a_night_action_is_refused(tmp_path: Path) -> None:
    """A Villager has no night action: the branch would be a plain resample labelled as an intervention."""
    parent = _play(WEREWOLF7, 2, tmp_path / "runs")
    plog = read_game(parent)
    step = next(s for s in fork_steps(plog) if s.kind == "protect")
    state = replay(plog, upto=step.id)
    plain = next(s for s in range(state.n_seats) if state.alive[s] and WEREWOLF7.role(state.roles[s]).ability is None)
    living = next(s for s in range(state.n_seats) if state.alive[s] and s != plain)
    with pytest.raises(ValueError, match=rf"--night: seat {plain} \(.*\) has no night action to override"):
        asyncio.run(run_fork(parent, step.id, Night(seat=plain, target=living), out=tmp_path / "v"))


# Where the forkable steps of a game stop: an unreproducible imported turn, a log with a lost event, no decisions.


runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def _damaged_import(tmp_path: Path) -> tuple[Path, int]:
    """An imported game whose first doctor turn names no seat; returns it and that turn's decision id."""
    imported = _fixture_game(tmp_path)
    first = next(s for s in fork_steps(read_game(imported)) if s.kind == "protect")
    lines = (imported / GAME_FILE).read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec.get("kind") == "imported" and rec.get("source_kind") == "night_doctor":
            rec["text"] = "I am not saying."
            lines[i] = json.dumps(rec)
            break
    (imported / GAME_FILE).write_text("\n".join(lines) + "\n")
    return imported, first.id


def test_imported_game_forks_up_to_its_first_unreproducible_step(tmp_path: Path) -> None:
    imported, bad = _damaged_import(tmp_path)
    steps = fork_steps(read_game(imported))
    assert [s.id for s in steps] == list(range(bad))
    assert steps.stop is not None and steps.stop.step == bad
    assert steps.stop.reason.startswith(f"step {bad} (round 1 night, ")
    assert "the recorded protect target cannot be read" in steps.stop.reason
    assert resolve_step(steps, str(bad - 1)).id == bad - 1
    for at in (str(bad), str(bad + 3)):
        with pytest.raises(ValueError, match=rf"^--at: step {at} cannot be forked: the replay stops at step {bad} "):
            resolve_step(steps, at)


def test_fork_cli_on_an_imported_game_lists_and_forks_before_the_stop(tmp_path: Path) -> None:
    imported, bad = _damaged_import(tmp_path)
    res = runner.invoke(app, ["fork", "steps", str(imported), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert [s["id"] for s in json.loads(res.stdout)] == list(range(bad))
    stop = [ln for ln in res.stderr.splitlines() if "the list stops" in ln]
    assert len(stop) == 1 and f"step {bad} (round 1 night," in stop[0] and "protect target cannot be read" in stop[0]
    ok = runner.invoke(
        app, ["fork", "run", str(imported), "--at", str(bad - 1), "--agents", "scripted", "--out", str(tmp_path / "a")]
    )
    assert ok.exit_code == 0, ok.output
    assert len(list((tmp_path / "a").iterdir())) == 1
    refused = runner.invoke(app, ["fork", "run", str(imported), "--at", str(bad), "--out", str(tmp_path / "b")])
    assert refused.exit_code == 2
    assert f"--at: step {bad} cannot be forked" in refused.output and "protect target cannot be read" in refused.output


def _played(tmp_path: Path) -> Path:
    res = runner.invoke(
        app, ["play", "--rules", "mafiascope7-v2", "--agents", "scripted", "--seed", "4", "--out", str(tmp_path / "r")]
    )
    assert res.exit_code == 0, res.output
    return next((tmp_path / "r").iterdir())


def test_a_lost_role_record_stops_the_steps_and_fork_run_names_its_line(tmp_path: Path) -> None:
    g = _played(tmp_path)
    lines = (g / GAME_FILE).read_text().splitlines()
    n = next(i for i, ln in enumerate(lines) if json.loads(ln)["kind"] == "role_assigned")
    rec = json.loads(lines[n])
    rec["seat"] = 99
    lines[n] = json.dumps(rec)
    (g / GAME_FILE).write_text("\n".join(lines) + "\n")
    res = runner.invoke(app, ["fork", "steps", str(g), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == []  # the lost record is in the deal: the replay never follows the game
    res = runner.invoke(app, ["fork", "run", str(g), "--at", "2", "--dry-run", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2
    err = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(err) == 1
    assert err[0].startswith("error: --at: step 2 cannot be forked: the replay stops at step 0 ")
    assert f"{g / GAME_FILE}:{n + 1}: invalid role_assigned record" in err[0] and "seat 99" in err[0]


def test_steps_of_a_game_stopped_before_any_decision_say_so(tmp_path: Path) -> None:
    g = _played(tmp_path)
    lines = (g / GAME_FILE).read_text().splitlines()
    first = next(i for i, ln in enumerate(lines) if json.loads(ln)["kind"] == "speech")
    (g / GAME_FILE).write_text("\n".join(lines[:first]) + "\n")  # Ctrl-C before the first answer
    res = runner.invoke(app, ["fork", "steps", str(g)])
    assert res.exit_code == 0, res.output
    assert res.stderr.strip() == f"{g}: the game has no decisions to fork at (it ended or was stopped before the first)"
