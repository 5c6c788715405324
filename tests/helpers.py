"""Small drivers for engine tests."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mafialab.engine import Action, Decision, GameState
from mafialab.record import GAME_FILE, PROBES_FILE
from mafialab.rules import RuleSet

Policy = Callable[[GameState, Decision], Action | None]


def random_action(rng: random.Random, d: Decision) -> Action:
    target = rng.choice(d.options) if d.wants_target else None
    text = f"seat {d.seat} says hi" if d.needs_text else None
    choice = rng.choice(d.choices) if d.choices else None
    return Action(decision=d.id, seat=d.seat, target=target, text=text, choice=choice)


def drive(
    rules: RuleSet, seed: int, policy: Policy | None = None, rng_seed: int = 0, max_batches: int = 10_000
) -> GameState:
    """Play a game to the end; ``policy`` may force an action (else uniformly random)."""
    state = GameState(rules, seed)
    rng = random.Random(rng_seed)
    for _ in range(max_batches):
        if state.is_terminal:
            return state
        for d in state.pending():
            a = policy(state, d) if policy else None
            if a is None:
                a = random_action(rng, d)
            res = state.apply(a)
            assert res is None, res
    raise AssertionError("game did not terminate")


def write_game_dir(root: Path, records: list[dict]) -> Path:
    """Write ``records`` as ``root/g1/game.jsonl`` and return the game directory."""
    d = root / "g1"
    d.mkdir(parents=True)
    (d / GAME_FILE).write_text("".join(json.dumps(r) + "\n" for r in records))
    return d


def play_probed_parent(out: Path, seed: int = 3) -> Path:
    """Play a mafiascope7 game of scripted agents probed with the default battery; its directory."""
    from mafialab.agents import make_agent
    from mafialab.harness import play_game
    from mafialab.probes import make_probe_observer
    from mafialab.rules import load_rules

    rules = load_rules("mafiascope7")
    agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
    obs = make_probe_observer("default", agents, rules, seed, out=out, game_id="parent")
    asyncio.run(play_game(rules, agents, seed, out=out, game_id="parent", observers=[obs] if obs else []))
    return out / "parent"


def seeded_responder(body: dict[str, Any]) -> str:
    """Stub-server answers: schema-valid JSON that differs with the request's seed (so repeats differ)."""
    from mafialab.testing import schema_instance

    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if schema is None:
        return "I have nothing to add."
    return json.dumps(schema_instance(schema, json.dumps(body["messages"][-1:]) + str(body.get("seed"))))


def freeze_scripted_bench(root: Path, games: int = 1, seed: int = 7) -> Path:
    """Play ``games`` scripted werewolf7 games under ``root``, annotate them (rules annotator) and freeze
    a belief-shift benchmark; returns the benchmark file (the CLI path a user takes)."""
    from typer.testing import CliRunner

    from mafialab.cli import app

    r = CliRunner()
    res = r.invoke(
        app,
        ["play", "-r", "werewolf7", "-a", "scripted", "-s", str(seed), "--games", str(games), "-o", str(root / "logs")],
    )
    assert res.exit_code == 0, res.output
    res = r.invoke(app, ["beliefshift", "annotate", str(root / "logs"), "--out", str(root / "ann.jsonl")])
    assert res.exit_code == 0, res.output
    res = r.invoke(
        app, ["beliefshift", "freeze", str(root / "logs"), str(root / "ann.jsonl"), "--out", str(root / "b.jsonl")]
    )
    assert res.exit_code == 0, res.output
    return root / "b.jsonl"


def unreachable_ray(monkeypatch: Any, error: Exception) -> None:
    """Install a stand-in ``ray`` module whose ``init`` raises ``error`` (no cluster there)."""
    import sys
    import types

    def init(**kwargs: Any) -> None:
        raise error

    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False  # type: ignore[attr-defined]
    fake.init = init  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", fake)
    # the address answers a TCP connection: the failure under test is Ray's own
    monkeypatch.setattr("mafialab.harness._ray.address_unreachable", lambda address, timeout=5.0: None)


def copy_game(game: Path, root: Path, ids: range) -> None:
    """Copies of a recorded ``game`` (game.jsonl, probes.jsonl) under ``root``, one per ``i`` in ``ids``.

    Copy ``i`` is ``root/copy-<i, 5 digits>`` with that game id in every record that has one.
    """
    lines = {f: (game / f).read_text().splitlines() for f in (GAME_FILE, PROBES_FILE)}
    for i in ids:
        gid = f"copy-{i:05d}"
        (root / gid).mkdir(parents=True)
        for f, rows in lines.items():
            recs = [json.loads(x) for x in rows]
            for r in recs:
                if "game_id" in r:
                    r["game_id"] = gid
            (root / gid / f).write_text("".join(json.dumps(r) + "\n" for r in recs))


def scripted_play(out: Path, *options: str) -> list[str]:
    """Arguments of ``mafialab play`` with scripted agents on ``mafiascope7`` into ``out``, ``options`` added."""
    return ["play", "--rules", "mafiascope7", "--agents", "scripted", *options, "--out", str(out)]


def stub_bifurcation(stub: Any, resamples: int, keep: int, sampler_options: str = "") -> dict[str, Any]:
    """Keyword arguments of ``run_bifurcation``: ``resamples`` drawn from ``stub`` (an ``OpenAIStub``), ``keep`` forks.

    The continuations are played by scripted agents; ``sampler_options`` is appended to the
    sampler's model string (``"&max_n=5"``).
    """
    sampler = f"openai/stub?base_url={stub.base_url}{sampler_options}"
    return {"resamples": resamples, "keep": keep, "sampler": sampler, "agents": "scripted", "check_remote": False}
