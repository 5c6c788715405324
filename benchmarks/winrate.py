"""Win rate of town by agent type: scripted town vs random town, over many seeds.

Usage: python benchmarks/winrate.py [--games 1000] [--rules mafiascope7,werewolf7,arena12]
Prints JSON: per rule set and opponent, town win rate for scripted and random town, the
difference and its 95 % interval (normal approximation for two independent proportions,
and a paired bootstrap over seeds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random

from mafialab.agents import make_agent
from mafialab.engine import deal_roles
from mafialab.harness import play_game
from mafialab.rules import load_rules


async def town_wins(rules_name: str, town: str, mafia: str, seeds: range) -> list[int]:
    rules = load_rules(rules_name)
    out = []
    for seed in seeds:
        roles = deal_roles(rules, seed)
        specs = [mafia if rules.role(r).team == "mafia" else town for r in roles]
        agents = [make_agent(specs[s], s, rules, seed) for s in range(rules.n_seats)]
        res = await play_game(rules, agents, seed)
        out.append(1 if res.winner == "town" else 0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--rules", default="mafiascope7,werewolf7,arena12")
    ap.add_argument("--opponents", default="scripted,random")
    args = ap.parse_args()
    report = {}
    seeds = range(args.games)
    for rules_name in args.rules.split(","):
        for opp in args.opponents.split(","):
            s = asyncio.run(town_wins(rules_name, "scripted", opp, seeds))
            r = asyncio.run(town_wins(rules_name, "random", opp, seeds))
            n = len(seeds)
            ps, pr = sum(s) / n, sum(r) / n
            diff = ps - pr
            se = math.sqrt(ps * (1 - ps) / n + pr * (1 - pr) / n)
            rng = random.Random(0)
            boots = []
            for _ in range(1000):
                idx = [rng.randrange(n) for _ in range(n)]
                boots.append(sum(s[i] - r[i] for i in idx) / n)
            boots.sort()
            report[f"{rules_name}/mafia={opp}"] = {
                "games": n,
                "scripted_town_win_rate": round(ps, 4),
                "random_town_win_rate": round(pr, 4),
                "difference": round(diff, 4),
                "ci95_normal": [round(diff - 1.96 * se, 4), round(diff + 1.96 * se, 4)],
                "ci95_paired_bootstrap": [round(boots[24], 4), round(boots[974], 4)],
            }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
