"""Write the small branch fixture the viewer tests read (``tests/data/viewer_branches``).

Everything is played by scripted agents (the bifurcation's resamples come from the
in-process OpenAI stub with seeded answers), so the fixture is the same on every machine:

- ``parent/``: a probed mafiascope7 game (seed 9, ``tests/data/branch_battery.yaml``);
- ``forks/``: a sweep (resample at four public steps, three replicas each), an injected
  vote (four replicas) and an injected private belief (three replicas);
- ``bif/``: a bifurcation run on one innocent vote (12 resamples, 4 kept variants); one
  kept variant's text carries an ``<img onerror>`` that the viewer must keep inert;
- ``retest/``: a test-retest run on the parent (four points, two repeats) for the retest floor.

Run: ``PYTHONPATH=src python scripts/make_branch_fixture.py [OUT]`` (default the tests' folder).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from mafialab.agents import make_agent
from mafialab.counterfactual import Inject, PrivateBelief, fork_steps, plan_points, run_bifurcation, run_fork, sweep
from mafialab.harness import play_game
from mafialab.probes import make_probe_observer, run_retest
from mafialab.record import FORKS_FILE, read_game
from mafialab.rules import load_rules
from mafialab.testing import OpenAIStub, schema_instance

ROOT = Path(__file__).resolve().parents[1]
BATTERY = ROOT / "tests" / "data" / "branch_battery.yaml"
XSS_VARIANT = '<img src=x onerror="window.__xss=1"> I vote for nobody in particular.'


def _responder(body: dict[str, Any]) -> str:
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if schema is None:
        return "I have nothing to add."
    return json.dumps(schema_instance(schema, json.dumps(body["messages"][-1:]) + str(body.get("seed"))))


async def make(out: Path, seed: int = 9) -> None:
    rules = load_rules("mafiascope7")
    agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
    obs = make_probe_observer(BATTERY, agents, rules, seed, out=out, game_id="parent")
    await play_game(rules, agents, seed, out=out, game_id="parent", observers=[obs] if obs else [])
    parent = read_game(out / "parent")
    steps = fork_steps(parent)
    public = [s for s in steps if s.public]
    votes = [s for s in steps if s.kind == "vote"]
    forks = out / "forks"
    chosen = [public[i].id for i in (0, len(public) // 3, 2 * len(public) // 3, len(public) - 1)]
    await sweep(parent, 3, steps=chosen, seed=1, out=forks, agents="scripted", check_remote=False)
    vote = votes[0]
    alive = [s.name for s in parent.header.roster if s.name != vote.name]
    await run_fork(
        parent, vote.id, Inject(target=alive[-1], text=f"I vote {alive[-1]}."), n=4, seed=2, out=forks,
        agents="scripted", check_remote=False,
    )  # fmt: skip
    await run_fork(
        parent, public[1].id, PrivateBelief(seat=0, text="You are sure the quiet one is lying."), n=3, seed=3,
        out=forks, agents="scripted", check_remote=False,
    )  # fmt: skip
    planned = plan_points(parent, "innocent-votes")
    point = next((p for p in planned if p.quadrant), planned[0])  # a vote with a quadrant when there is one
    async with OpenAIStub(responder=_responder) as stub:
        spec = f"openai/stub?base_url={stub.base_url}"
        await run_bifurcation(
            parent, str(point.step.id), out / "bif", resamples=12, keep=4, sampler=spec, agents="scripted",
            check_remote=False, parallel=2,
        )  # fmt: skip
    await run_retest(out / "parent", out / "retest", points=4, repeats=2, battery=str(BATTERY), seed=1)
    path = out / "bif" / FORKS_FILE
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    for rec in lines:
        if rec.get("variant_idx") == len(lines) - 1:
            rec["text"] = XSS_VARIANT
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "data" / "viewer_branches"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    asyncio.run(make(out))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out} ({size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
