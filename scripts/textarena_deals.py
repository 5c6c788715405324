"""Play seeded SecretMafia-v0 games in TextArena 0.7.4 and write their deals, actions and outcomes.

Run by ``scripts/check_textarena.sh`` in its own virtual environment (textarena installed, mafialab
not needed): ``python scripts/textarena_deals.py N OUT.json``. Only TextArena's SecretMafia module
is imported (its other environments fetch NLTK data at import).

Each game: TextArena deals the roles from the seed; every decision is answered by a plan that is
a pure function of (seed, phase, night number, alive players), written so that no vote and no
kill vote ties (TextArena breaks ties with the global ``random``, mafialab with its own stream:
tied outcomes could not be compared). What is written per game: ``roles`` (seat -> role),
``actions`` (``[kind, night, seat, target]`` with kind ``kill``/``protect``/``investigate``/
``vote``), and TextArena's outcomes: ``eliminations`` (``[night, seat, cause]``), ``nights``
(killed seat or ``null``), ``votes`` (per day, voter -> target), ``checks`` (``[night, seat,
target, is_mafia]``) and ``winner`` (``town``/``mafia``); and ``night1``: seat -> the observation
string TextArena's ``LLMObservationWrapper`` gives a player at its first-night turn, for each
player who has seen no other player's move by then (the rendering reference of the
``textarena:`` agent bridge, tests/agents/test_textarena_bridge.py).
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any


def plan(seed: int, kind: str, night: int, seat: int, alive: list[int], roles: dict[int, str]) -> int:
    """The target ``seat`` names in decision ``kind`` of night/day ``night``; tie-free by construction."""
    rng = random.Random(f"{seed}/{kind}/{night}")
    town = [p for p in alive if roles[p] != "Mafia"]
    if kind == "kill":
        return rng.choice(town)  # every killer names the same target
    if kind in ("protect", "investigate"):
        return random.Random(f"{seed}/{kind}/{night}/{seat}").choice([p for p in alive if p != seat])
    # day vote: everyone votes for one player, except one dissenter (when the majority stays unique)
    target = rng.choice(alive)
    dissenter = rng.choice(alive)
    if len(alive) >= 4 and seat == dissenter:
        return next(p for p in alive if p != target)
    return target


def play(seed: int) -> dict[str, Any]:
    """One game of TextArena's SecretMafia-v0 (6 players, its registered settings)."""
    from textarena.envs.SecretMafia.env import Phase, SecretMafiaEnv

    env = SecretMafiaEnv(mafia_ratio=0.25, discussion_rounds=3)
    env.reset(num_players=6, seed=seed)
    roles = dict(env.player_roles)
    out: dict[str, Any] = {"seed": seed, "roles": {str(k): v for k, v in roles.items()}, "actions": []}
    elims: list[list[Any]] = []
    killed: dict[int, int] = {}
    votes: list[dict[str, int]] = []
    checks: list[list[Any]] = []
    night = 0
    prev = None
    seen: dict[int, list[tuple[int, str]]] = {p: [] for p in roles}
    out["night1"] = {}
    done = False
    while not done:
        phase = env.phase
        if phase == Phase.NIGHT_MAFIA and prev != Phase.NIGHT_MAFIA:
            night += 1
            helpers = {"Doctor", "Detective"} & {roles[p] for p in env.state.game_state["alive_players"]}
            if not helpers and "lost_kill_night" not in out:
                # TextArena resolves the night kill only after a Doctor or Detective turn: with
                # neither alive the Mafia's kill is never carried out (a defect of 0.7.4)
                out["lost_kill_night"] = night
        if phase == Phase.DAY_VOTING and prev != Phase.DAY_VOTING:
            votes.append({})
        prev = phase
        pid = env.state.current_player_id
        alive = list(env.state.game_state["alive_players"])
        before = set(alive)
        kind = {
            Phase.NIGHT_MAFIA: "kill",
            Phase.NIGHT_DOCTOR: "protect",
            Phase.NIGHT_DETECTIVE: "investigate",
            Phase.DAY_VOTING: "vote",
        }.get(phase)
        seen[pid].extend((sender, msg) for sender, msg, _ in env.state.get_current_player_observation())
        if night == 1 and kind in ("kill", "protect", "investigate"):
            names = env.state.role_mapping
            obs = "".join(f"\n[{'GAME' if s == -1 else names.get(s, f'Player {s}')}] {m}" for s, m in seen[pid])
            if "\n[Player " not in obs:
                out["night1"][str(pid)] = obs
        if kind is None:
            action = f"Player {pid} has nothing to add."
        else:
            target = plan(seed, kind, night, pid, sorted(alive), roles)
            out["actions"].append([kind, night, pid, target])
            action = f"I choose [{target}]"
            if kind == "vote":
                votes[-1][str(pid)] = target
            if kind == "investigate":
                checks.append([night, pid, target, roles[target] == "Mafia"])
        done, _ = env.step(action)
        gone = before - set(env.state.game_state["alive_players"])
        for s in sorted(gone):
            cause = "vote" if phase == Phase.DAY_VOTING else "night"
            elims.append([night, s, cause])
            if cause == "night":
                killed[night] = s
    rewards = env.state.rewards or {}
    mafia_won = any(rewards.get(p, 0) > 0 for p, r in roles.items() if r == "Mafia")
    nights = [killed.get(k) for k in range(1, night + 1)]
    out.update(eliminations=elims, nights=nights, votes=votes, checks=checks, winner="mafia" if mafia_won else "town")
    return out


def main() -> None:
    n, path = int(sys.argv[1]), sys.argv[2]
    games = [play(seed) for seed in range(n)]
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"textarena": "0.7.4", "env": "SecretMafia-v0", "num_players": 6, "games": games}, fh, indent=1)
        fh.write("\n")
    print(f"wrote {len(games)} games to {path}")


if __name__ == "__main__":
    main()
