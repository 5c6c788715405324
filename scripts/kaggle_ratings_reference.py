"""Freeze Kaggle Game Arena's werewolf evaluator's ratings of a few random-agent episodes.

Runs in a virtual environment with ``kaggle-environments==1.33.2 polarix openskill plotly``
(not mafialab's): it plays ``N`` werewolf episodes with Kaggle's random agents, seats drawn
from ten agent labels (so ratings differ; in every other episode from five of them, so some
agents sit twice in a game and some games are self-play), runs ``GameSetEvaluator``
(``kaggle_environments/envs/werewolf/eval/metrics.py``) on them, and writes to ``OUT``
(default ``tests/data/ratings``):

- ``kaggle_results.json``: the games in mafialab's neutral results format
  (``mafialab.analysis._ratings.GameOutcome``), ``order`` being the evaluator's game order;
- ``kaggle_figures.json``: the evaluator's figures per agent (wins and games per role, Elo,
  OpenSkill ``mu``/``sigma``, GTE mean and std over ``--gte-samples`` resamples, seed 42).

Usage::

    /work/venvs/kaggle/bin/python scripts/kaggle_ratings_reference.py [--games 24] [--out DIR]

``tests/analysis/test_ratings_kaggle.py`` checks mafialab's ratings against these figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
from importlib.metadata import version
from pathlib import Path

LABELS = ["alder", "birch", "cedar", "dogwood", "elm", "fir", "ginkgo", "hazel", "ilex", "juniper"]
ROLES = ["Werewolf", "Werewolf", "Doctor", "Seer", "Villager", "Villager", "Villager", "Villager"]
NAMES = ["Kai", "Jordan", "Charlie", "Taylor", "Alex", "Jamie", "Quinn", "Casey"]


def _config(seed: int) -> dict:
    rnd = random.Random(seed)
    roles = ROLES[:]
    rnd.shuffle(roles)
    # even seeds: eight different agents; odd seeds: drawn from five, so an agent may hold two
    # seats of a team or sit on both teams (self-play)
    labels = rnd.sample(LABELS, len(roles)) if seed % 2 == 0 else [rnd.choice(LABELS[:5]) for _ in roles]
    agents = []
    for name, role, label in zip(NAMES, roles, labels, strict=True):
        a = {"role": role, "id": name, "agent_id": "random", "display_name": label}
        if role == "Doctor":
            a["role_params"] = {"allow_self_save": True}
        agents.append(a)
    return {
        "seed": seed,
        "actTimeout": 900,
        "runTimeout": 7200,
        "discussion_protocol": {
            "name": "RoundRobinDiscussion",
            "params": {"max_rounds": 1, "first_to_speak": "random"},
        },
        "day_voting_protocol": {"name": "SequentialVoting", "params": {"first_to_vote": "random"}},
        "werewolf_night_vote_protocol": {"name": "SequentialVoting", "params": {"first_to_vote": "random"}},
        "night_elimination_reveal_level": "role",
        "day_exile_reveal_level": "role",
        "agents": agents,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=24)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--gte-samples", type=int, default=8)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "tests/data/ratings"))
    args = ap.parse_args()

    from kaggle_environments import make
    from kaggle_environments.envs.werewolf.eval.metrics import GameSetEvaluator
    from kaggle_environments.envs.werewolf.game.consts import Team

    tmp = Path(tempfile.mkdtemp(prefix="kaggle_ratings_"))
    games_dir = tmp / "games"
    games_dir.mkdir()
    for i in range(args.games):
        cfg = _config(args.seed + i)
        env = make("werewolf", configuration=cfg)
        env.run(["random"] * len(cfg["agents"]))
        (games_dir / f"episode_{args.seed + i}.json").write_text(env.render(mode="json"))
    # the evaluator reads the files in os.walk order and keeps that order (Elo, OpenSkill)
    files = [os.path.join(root, f) for root, _, fs in os.walk(games_dir) for f in fs if f.endswith(".json")]
    ev = GameSetEvaluator(
        str(games_dir), gte_tasks="role_win_rates", cache_dir=str(tmp / "cache"), error_log_path=str(tmp / "errors.log")
    )
    assert len(ev.games) == len(files), "an episode failed to load"
    ev.evaluate(gte_samples=args.gte_samples, elo_samples=0, openskill_samples=0)

    team = {Team.VILLAGERS: "town", Team.WEREWOLVES: "mafia"}
    results = []
    for order, (path, g) in enumerate(zip(files, ev.games, strict=True)):
        seats = [
            {"agent": p.agent.display_name, "role": p.role.name, "team": team[p.role.team],
             "won": p.role.team == g.winner_team}
            for p in g.players
        ]  # fmt: skip
        results.append({"game_id": Path(path).stem, "order": order, "seats": seats})
    figures = {}
    for agent, m in sorted(ev.metrics.items()):
        if m.agent_name is None:
            continue
        figures[agent] = {
            "by_role": {r: [int(sum(v)), len(v)] for r, v in sorted(m.wins_by_role.items())},
            "elo": float(m.elo),
            "openskill_mu": float(m.openskill_rating.mu),
            "openskill_sigma": float(m.openskill_rating.sigma),
            "gte": [float(m.gte_rating[0]), float(m.gte_rating[1])],
        }
    source = {
        "kaggle_environments": version("kaggle-environments"),
        "polarix": version("polarix"),
        "openskill": version("openskill"),
        "evaluator": "kaggle_environments/envs/werewolf/eval/metrics.py GameSetEvaluator",
        "gte_tasks": ev.gte_tasks,
        "gte_samples": args.gte_samples,
        "gte_seed": ev.seed,
        "episode_seeds": [args.seed, args.seed + args.games - 1],
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "kaggle_results.json").write_text(json.dumps({"source": source, "games": results}, indent=1) + "\n")
    (out / "kaggle_figures.json").write_text(json.dumps({"source": source, "agents": figures}, indent=1) + "\n")
    print(f"wrote {out}/kaggle_results.json and kaggle_figures.json ({len(results)} games)")


if __name__ == "__main__":
    main()
