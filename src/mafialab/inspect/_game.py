"""Seeded, probed games as the Inspect task ``mafialab/game``."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from mafialab._words import count, noun_for
from mafialab.agents import Agent, LLMAgent, make_agent
from mafialab.analysis import GameData, Report, compute_report, game_data
from mafialab.harness import play_game
from mafialab.inspect._model import InspectChatModel
from mafialab.probes import GameSetup, resolve_battery
from mafialab.record import GameLog, read_game
from mafialab.rules import RuleSet, load_rules, winner_name

GAME_KEY = "game_dir"
"""Key of the game directory in the sample's store and metadata and in the score's metadata."""

ROLE_PREFIX = "role:"
"""``others=role:NAME`` plays the other seats with the Inspect model of role ``NAME``."""

METRIC_KEYS: tuple[str, ...] = ("win", "first_order_accuracy", "ece", "vote_coupling_top1")
"""Per-sample values and metrics of ``mafialab/game`` (see :func:`seat_figures`)."""


def parse_seats(seats: str | int | Sequence[int], n_seats: int) -> list[int]:
    """Seats from ``"0,3"``, ``3`` or ``[0, 3]``: sorted, unique, each in ``0..n_seats-1``.

    Raises:
        ValueError: A seat that is not an integer or is out of range, or no seat (names ``seats``).
    """
    if isinstance(seats, str):
        parts = [p.strip() for p in seats.split(",") if p.strip()]
    elif isinstance(seats, int):
        parts = [str(seats)]
    else:
        parts = [str(s) for s in seats]
    out: set[int] = set()
    for p in parts:
        try:
            s = int(p)
        except ValueError:
            raise ValueError(f"seats: {p!r} is not a seat number (expected e.g. 0,3)") from None
        if not 0 <= s < n_seats:
            raise ValueError(f"seats: {s} is out of range 0..{n_seats - 1}")
        out.add(s)
    if not out:
        raise ValueError("seats: no seat given (expected e.g. 0,3)")
    return sorted(out)


def seat_figures(game: GameData, seats: Sequence[int]) -> tuple[dict[str, float], Report]:
    """The model's figures in one game: value dict for the score and the report behind it.

    Probe answers of other seats are left out, then :func:`mafialab.analysis.compute_report`
    (``mafialab report``'s definitions) runs on the game:

    * ``win``: share of ``seats`` whose team won (0-1; 0 for an unfinished game);
    * ``first_order_accuracy``: F1 committed accuracy pooled over rounds (needs
      ``role_assessment`` answers: the ``default`` battery; absent otherwise);
    * ``ece``: F2 expected calibration error of those answers' confidences (absent without them);
    * ``vote_coupling_top1``: F4 share of the seats' day votes cast for the top suspect of
      their last ``suspicion_ranking`` (either battery; absent without units).

    Returns:
        ``(values, report)``: the values present, and the one-game
        :class:`~mafialab.analysis.Report`.
    """
    rep = compute_report([_seats_probes(game, seats)], resamples=1)
    values = {"win": _win_share(game, seats)}
    values.update((k, v) for k, v in _belief_figures(rep).items() if v is not None)
    return values, rep


def _seats_probes(game: GameData, seats: Sequence[int]) -> GameData:
    """``game`` with the probe answers of ``seats`` only."""
    names = {game.names[s] for s in seats}
    return dataclasses.replace(game, probes=[p for p in game.probes if p.player in names])


def _win_share(game: GameData, seats: Sequence[int]) -> float:
    """Share of ``seats`` whose team won (0-1; 0 for an unfinished game)."""
    teams = ["mafia" if game.names[s] in game.mafia else "town" for s in seats]
    return sum(t == game.winner for t in teams) / len(seats)


def _belief_figures(rep: Report) -> dict[str, float | None]:
    """``first_order_accuracy``, ``ece`` and ``vote_coupling_top1`` of a report (None: no data)."""
    fo = rep.first_order.values()
    n = sum(r.committed_n for r in fo)
    top1 = [side.top1 for _, side in rep.vote_coupling]
    tn = sum(x.n for x in top1)
    ece = rep.calibration.ece
    return {
        "first_order_accuracy": sum((r.committed_accuracy or 0.0) * r.committed_n for r in fo) / n if n else None,
        "ece": float(ece) if ece is not None else None,
        "vote_coupling_top1": sum(x.hits for x in top1) / tn if tn else None,
    }


def _load(path: str | Path) -> GameData:
    return game_data(read_game(Path(path)))


def seat_outcomes(glog: GameLog, seats: Sequence[int]) -> list[dict[str, Any]]:
    """What each of ``seats`` did in a game, to read its ``win`` by: a team's win is not the seat's play.

    Returns:
        One dict per seat in ``seats`` order: ``seat``, ``name``, ``role``, ``team``,
        ``won`` (its team won; None for an unfinished game), ``eliminated``
        (``{"round", "cause"}`` with cause ``night`` or ``vote``, or None when it survived)
        and ``decisions`` (its answered decisions: speeches, votes, night actions, team chat).
        ``explanation`` words it: ``"Dana (Villager): won with its team; eliminated night 1,
        made no decision"``.
    """
    roster = {s.seat: s for s in glog.header.roster}
    out = []
    for seat in seats:
        r = roster[seat]
        elim = next((e for e in glog.events if e.kind == "elimination" and e.seat == seat), None)
        decisions = sum(
            1 for e in glog.events if getattr(e, "decision", None) is not None and getattr(e, "seat", None) == seat
        )
        won = None if glog.winner is None else r.team == glog.winner
        if elim is None:
            fate = "survived"
        elif elim.cause == "night":
            fate = f"eliminated night {elim.round}"
        else:
            fate = f"eliminated by the vote of day {elim.round}"
        made = "made no decision" if decisions == 0 else f"made {count(decisions, 'decision')}"
        result = "game unfinished" if won is None else ("won" if won else "lost") + " with its team"
        out.append(
            {
                "seat": seat,
                "name": r.name,
                "role": r.role,
                "team": r.team,
                "won": won,
                "eliminated": None if elim is None else {"round": elim.round, "cause": elim.cause},
                "decisions": decisions,
                "explanation": f"{r.name} ({r.role}): {result}; {fate}, {made}",
            }
        )
    return out


@metric
def game_metrics() -> Metric:
    """The figures of :func:`seat_figures`, pooled over every game of the eval.

    ``win``: mean of the per-game win shares. The belief figures pool the seats' probe
    answers of all games through one :func:`mafialab.analysis.compute_report` (as
    ``mafialab report`` pools games: numerators and denominators summed), so they are not
    means of per-game rates. Reads the game directories recorded in the scores; a figure
    without data is left out.
    """

    def compute(scores: list[SampleScore]) -> Any:
        games, seat_sets = [], []
        for s in scores:
            meta = s.score.metadata or {}
            if meta.get(GAME_KEY):
                games.append(_load(meta[GAME_KEY]))
                seat_sets.append(list(meta["seats"]))
        if not games:
            return {}
        pairs = list(zip(games, seat_sets, strict=True))
        wins = [_win_share(g, st) for g, st in pairs]
        rep = compute_report([_seats_probes(g, st) for g, st in pairs], resamples=1)
        return {"win": sum(wins) / len(wins), **_belief_figures(rep)}

    return compute


@scorer(metrics=[game_metrics()])
def game_scorer() -> Any:
    """Scores one played game for the seats the model under evaluation played.

    Value: the dict of :func:`seat_figures` (``win`` always; the belief figures when the
    game has data for them). Explanation: per seat whether its team won and what the seat
    itself did (a seat killed on night 1 "won with its team; eliminated night 1, made no
    decision"), one line each. Metadata: the game directory, the seats, their names, the
    winner, ``seat_outcomes`` (:func:`seat_outcomes` without the wording) and the one-game
    report's figures.
    """

    async def score(state: TaskState, target: Target) -> Score:
        path = state.store.get(GAME_KEY)
        seats = list(state.metadata["seats"])
        glog = read_game(Path(path))
        game = game_data(glog)
        values, rep = seat_figures(game, seats)
        names = [game.names[s] for s in seats]
        outcomes = seat_outcomes(glog, seats)
        return Score(
            value=values,
            answer=f"winner: {winner_name(game.winner, game.rules)}",
            explanation="\n".join(o["explanation"] for o in outcomes),
            metadata={
                GAME_KEY: str(path),
                "seats": seats,
                "names": names,
                "winner": game.winner,
                "seat_outcomes": [{k: v for k, v in o.items() if k != "explanation"} for o in outcomes],
                "calibration_n": rep.calibration.n,
                "probe_records": rep.probe_records,
            },
        )

    return score


def _other_agent(spec: str, seat: int, rules: RuleSet, seed: int, options: dict[str, Any]) -> Agent:
    if spec.startswith(ROLE_PREFIX):
        role = spec[len(ROLE_PREFIX) :] or "others"
        model = InspectChatModel(get_model(role=role, required=True))
        return LLMAgent(seat, rules, seed, model, **options)
    return make_agent(spec, seat, rules, seed)


@solver
def play_seats(
    rules: RuleSet,
    seats: Sequence[int],
    others: str,
    probes: str,
    out: Path,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> Solver:
    """Play the sample's seeded game: the model under evaluation at ``seats``, ``others`` elsewhere.

    The model's seats are :class:`~mafialab.agents.LLMAgent` over
    :class:`~mafialab.inspect.InspectChatModel` (the prompt pack, answer schema, retry and
    fallback of ``mafialab play``); the probes of ``probes`` ask every agent that answers
    them. The game directory (``game.jsonl``, ``calls.jsonl``, ``probes.jsonl``) is written
    under ``out`` and recorded in the sample (store and metadata ``game_dir``).
    """
    options: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seed = int(state.metadata["seed"])
        model = InspectChatModel(get_model())
        agents: list[Agent] = [
            LLMAgent(s, rules, seed, model, **options) if s in seats else _other_agent(others, s, rules, seed, options)
            for s in range(rules.n_seats)
        ]
        # the default id (rules, seed, labels, agent settings, battery): the runner and the game agree on it
        observers = GameSetup.of(probes).observers(rules, seed, agents, out)
        result = await play_game(rules, agents, seed, out=out, observers=observers)
        state.store.set(GAME_KEY, str(result.path))
        state.metadata[GAME_KEY] = str(result.path)
        state.metadata["game_id"] = result.game_id
        summary = (
            f"{result.game_id}: winner {winner_name(result.winner, rules)} after {count(result.rounds, 'round')}; "
            f"{result.fallbacks}/{result.decisions} decisions fell back; log in {result.path}"
        )
        state.output.completion = summary
        return state

    return solve


@task
def game(
    rules: str = "werewolf7",
    seats: str = "0",
    others: str = "scripted",
    probes: str = "suspicion",
    games: int = 1,
    seed: int = 0,
    out: str = "runs/inspect",
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> Task:
    """Seeded probed games in which the model under evaluation plays the given seats.

    ``inspect eval mafialab/game --model PROVIDER/MODEL -T rules=werewolf7 -T seats=0,3
    -T others=scripted -T probes=suspicion -T out=DIR``: one sample per game (seeds
    ``seed`` .. ``seed + games - 1``). Scores per game: ``win``, ``first_order_accuracy``,
    ``ece`` (calibration) and ``vote_coupling_top1`` of the model's seats
    (:func:`seat_figures`); the game directories under ``out`` are ordinary mafialab logs
    (``mafialab view``, ``mafialab report``).

    Args:
        rules: Rule set (``mafiascope7``, ``werewolf7``, ``arena12`` or a YAML path).
        seats: Seats the model plays, comma-separated (``0,3``).
        others: The other seats: an agent spec (``scripted``, ``random``, a mafialab model
            string), or ``role:NAME`` for the Inspect model of role ``NAME``
            (``--model-role NAME=provider/model``).
        probes: Probe battery: ``none``, ``default``, ``suspicion`` or a YAML path.
        games: Games (samples), >= 1.
        seed: Seed of the first game.
        out: Directory for the game directories.
        max_tokens: Generation cap per model call (default: the prompt pack's per decision).
        temperature: Sampling temperature (default: the provider's).

    Raises:
        ValueError: Bad seats or games; a game directory of these seeds already in ``out``.
        mafialab.rules.RuleSetError: Unknown rule set.
        mafialab.probes.ProbeBatteryError: Unknown battery.
        mafialab.agents.AgentSpecError: Unknown agent spec in ``others``.
    """
    rs = load_rules(rules)
    seat_list = parse_seats(seats, rs.n_seats)
    if int(games) < 1:
        raise ValueError(f"games: must be >= 1, got {games}")
    resolve_battery(probes)  # refuse an unknown battery before any game
    if not others.startswith(ROLE_PREFIX):
        make_agent(others, 0, rs, int(seed))  # refuse an unknown agent spec before any game
    samples = [
        Sample(
            id=f"seed-{sd}",
            input=f"{rs.id} seed {sd}: the model plays {noun_for(len(seat_list), 'seat')} "
            f"{', '.join(map(str, seat_list))}; others: {others}",
            metadata={"seed": sd, "seats": seat_list, "rules": rs.id, "others": others, "probes": probes},
        )
        for sd in range(int(seed), int(seed) + int(games))
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"game-{rs.name}"),
        solver=play_seats(
            rs,
            seat_list,
            others,
            probes,
            Path(out),
            None if max_tokens is None else int(max_tokens),
            None if temperature is None else float(temperature),
        ),
        scorer=game_scorer(),
        metadata={"rules": rs.id, "seats": seat_list, "others": others, "probes": probes, "out": str(out)},
    )
