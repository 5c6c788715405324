"""Play seeded Kaggle Werewolf games (kaggle-environments 1.33.2) and write deals, actions and outcomes.

Run by ``scripts/check_kaggle.sh`` in its own virtual environment (kaggle-environments installed,
mafialab not needed): ``python scripts/kaggle_deals.py N OUT.json [--replays DIR K] [--figures F]``;
``--unseen N DIR`` plays N new episodes and runs the evaluator on them (:func:`unseen`) and
``--compare EVALUATOR.json REPORT.json`` compares its figures with mafialab's report (:func:`compare`).

Each game: Kaggle deals the roles from the seed (``randomize_roles``); every decision is answered by
Kaggle's own ``random_agent`` (``envs/werewolf/werewolf.py``). Kaggle breaks vote ties with the
global ``random`` and mafialab with its own stream, so a tied outcome could not be compared: the
last voter of a vote whose random ballot would leave a tie switches to one of the tied leaders
(drawn from the game seed), the only change to Kaggle's random play. Written per game: ``config``
(the rule-set file it plays), ``ids`` and ``roles`` (per seat), ``actions`` (``[kind, round, seat,
target]`` in mafialab's rounds: Kaggle's night d is round d+1, day d is round d; kinds ``kill``,
``protect``, ``investigate``, ``vote``) and Kaggle's outcomes ``eliminations`` (``[round, seat,
cause]``), ``nights`` (killed seat or ``null``), ``votes`` (per day, voter -> target), ``checks``
(``[round, seat, target, result]``) and ``winner``. ``--replays DIR K`` also writes the first K
replays (steps without observations) and ``--figures F`` the evaluator's figures for them.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

PKG = "kaggle_environments.envs.werewolf"
LABELS = ["model-a", "model-b", "model-c", "model-d", "model-e"]
# mafialab rule set (name or examples/rules/kaggle/<file>) -> Kaggle game_config (None: package default)
_EXPERIMENTS = (
    "balanced",
    "standard_disable_doctor_self_save",
    "standard_DisableDoctorSelfSave_DisableDoctorConsecutiveSave",
    "standard_DisableDoctorSelfSave_DisableDoctorConsecutiveSave_NoTieBreak_NoRandFirst",
    "standard_disable_doctor_self_save_no_tie_break_no_rand_first",
    "standard_DisableDoctorSelfSave_SeerRevealTeam",
    "standard_DisableDoctorSelfSave_SeerRevealTeam_NightEliminationNoReveal_DayExileNoReveal",
    "standard_DisableDoctorSelfSave_SeerRevealTeam_NightEliminationRevealTeam_DayExileRevealTeam",
    "standard_parallel_voting",
    "standard_parallel_voting_no_tie_exile",
)
CONFIGS: dict[str, str | None] = {
    "kaggle-werewolf7": None,
    "kaggle-werewolf8": "standard",
    **{name: name for name in _EXPERIMENTS},
}


def game_config(name: str | None, seed: int, labels: list[str] = LABELS) -> dict[str, Any]:
    """Kaggle's configuration for one game: the rule-experiment file's, random agents, labels by seed."""
    import kaggle_environments

    rng = random.Random(f"labels/{seed}")
    if name is None:
        cfg: dict[str, Any] = {}
        agents = [
            dict(a)
            for a in json.loads(
                (Path(kaggle_environments.__file__).parent / "envs/werewolf/werewolf.json").read_text()
            )["configuration"]["agents"]["default"]
        ]
    else:
        path = (
            Path(kaggle_environments.__file__).parent / f"envs/werewolf/scripts/configs/run/rule_experiment/{name}.yaml"
        )
        cfg = dict(yaml.safe_load(path.read_text())["game_config"])
        agents = [
            {"id": a["id"], "role": a["role"], "role_params": a.get("role_params", {})} for a in cfg.pop("agents")
        ]
        for k in ("actTimeout", "runTimeout"):
            cfg.pop(k, None)
    for a in agents:
        a.update(agent_id="random", display_name=rng.choice(labels))
    cfg.update(seed=seed, randomize_roles=True, agents=agents)
    return cfg


class TieFree:
    """Kaggle's random agent; the last voter of a vote breaks a tie it would leave (seeded)."""

    def __init__(self, env: Any, seed: int) -> None:
        self.env, self.rng, self.ballots = env, random.Random(f"ties/{seed}"), {}

    def __call__(self, obs: Any, config: Any = None) -> Any:
        from kaggle_environments.envs.werewolf.werewolf import random_agent

        act = random_agent(obs)
        if act.get("action_type") != "VoteAction":
            return act
        kw = act["kwargs"]
        gs = self.env.game_state
        night = kw["phase"] == "Night"
        voters = [p.id for p in gs.alive_players() if not night or p.role.name == "Werewolf"]
        key = (kw["day"], kw["phase"])
        ballot = self.ballots.setdefault(key, {})
        ballot[kw["actor_id"]] = kw["target_id"]
        if len(ballot) == len(voters):
            tally = Counter(ballot.values()).most_common()
            top = [t for t, c in tally if c == tally[0][1]]
            if len(top) > 1:  # vote with a leader of the others' votes instead: then one leads
                others = Counter(t for v, t in ballot.items() if v != kw["actor_id"]).most_common()
                lead = sorted(t for t, c in others if c == others[0][1])
                kw["target_id"] = self.rng.choice(lead)
                ballot[kw["actor_id"]] = kw["target_id"]
        return act


def _events(replay: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (e["data_type"], json.loads(e["json_str"])) for step in replay["info"]["MODERATOR_OBSERVATION"] for e in step
    ]


def outcomes(replay: dict[str, Any]) -> dict[str, Any]:
    """Deal, actions and outcomes of a replay, seats numbered in roster order."""
    end = replay["info"]["GAME_END"]
    ids = [p["id"] for p in end["all_players"]]
    seat = {pid: i for i, pid in enumerate(ids)}
    roles = [end["all_players_and_role"][pid] for pid in ids]
    actions: list[list[Any]] = []
    elims: list[list[Any]] = []
    nights: dict[int, int | None] = {}
    votes: dict[int, dict[str, int]] = {}
    checks: list[list[Any]] = []
    kinds = {
        "WerewolfNightVoteDataEntry": "kill",
        "DoctorHealActionDataEntry": "protect",
        "SeerInspectActionDataEntry": "investigate",
        "DayExileVoteDataEntry": "vote",
    }
    for dtype, ev in _events(replay):
        d = ev.get("data") or {}
        if dtype in kinds:
            rnd = ev["day"] + 1 if ev["phase"] == "Night" else ev["day"]
            actions.append([kinds[dtype], rnd, seat[d["actor_id"]], seat.get(d["target_id"])])
            if dtype == "DayExileVoteDataEntry":
                votes.setdefault(rnd, {})[str(seat[d["actor_id"]])] = seat.get(d["target_id"])
        elif dtype == "WerewolfNightEliminationDataEntry":
            nights[ev["day"] + 1] = seat[d["eliminated_player_id"]]
            elims.append([ev["day"] + 1, seat[d["eliminated_player_id"]], "night"])
        elif dtype == "DayExileElectedDataEntry":
            elims.append([ev["day"], seat[d["elected_player_id"]], "vote"])
        elif dtype == "SeerInspectResultDataEntry":
            result = d["role"] if d.get("role") else ("mafia" if d["team"] == "Werewolves" else "town")
            checks.append([ev["day"] + 1, seat[d["actor_id"]], seat[d["target_id"]], result])
        elif ev.get("event_name") == "night_start":
            nights.setdefault(ev["day"] + 1, None)
    last_night = max(nights) if nights else 0
    winner = "town" if end["winner_team"] == "Villagers" else "mafia"
    return {
        "ids": ids,
        "roles": roles,
        "labels": [p["agent"]["display_name"] for p in end["all_players"]],
        "actions": actions,
        "eliminations": elims,
        "nights": [nights.get(r) for r in range(1, last_night + 1)],
        "votes": [votes[r] for r in sorted(votes)],
        "checks": checks,
        "winner": winner,
    }


def _python311_shim() -> None:
    """``SimultaneousMajority(tie_break="random")`` checks ``str in TieBreak``, a TypeError before
    Python 3.12: hand it the enum member (the value is unchanged)."""
    from kaggle_environments.envs.werewolf.game.protocols import vote

    init = vote.SimultaneousMajority.__init__
    if getattr(init, "_shimmed", False):
        return

    def patched(self: Any, tie_break: Any = vote.TieBreak.RANDOM) -> None:
        init(self, tie_break=vote.TieBreak(tie_break))

    patched._shimmed = True  # type: ignore[attr-defined]
    vote.SimultaneousMajority.__init__ = patched


def play(
    rules: str, seed: int, tie_free: bool = True, labels: list[str] = LABELS
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One game of Kaggle's engine with its random agents (``tie_free``: wrapped in :class:`TieFree`)."""
    from kaggle_environments import make
    from kaggle_environments.envs.werewolf.werewolf import random_agent

    _python311_shim()
    random.seed(seed)  # Kaggle's random agents and protocols draw from the global random
    cfg = game_config(CONFIGS[rules], seed, labels)
    env = make("werewolf", configuration=cfg, debug=False)
    agent = TieFree(env, seed) if tie_free else (lambda obs, config=None: random_agent(obs))
    env.run([agent] * len(cfg["agents"]))
    replay = env.toJSON()
    out = {"rules": rules, "seed": seed, **outcomes(replay)}
    return replay, out


def _tied(votes: dict[str, int | None]) -> bool:
    tally = Counter(t for t in votes.values() if t is not None).most_common()
    return len(tally) > 1 and tally[0][1] == tally[1][1]


def slim(replay: dict[str, Any]) -> dict[str, Any]:
    """The replay without per-step observations (their harness's record otherwise unchanged)."""
    keep = {k: v for k, v in replay.items() if k not in ("steps", "specification")}
    keep["steps"] = [[{"action": a.get("action"), "status": a.get("status")} for a in step] for step in replay["steps"]]
    return keep


def evaluator_order(folder: Path) -> list[str]:
    """The replay files in the order the evaluator reads and rates them (``GameSetEvaluator.__init__``:
    ``os.walk``, files ending ``.json``), as paths relative to ``folder``."""
    import os

    return [
        os.path.relpath(os.path.join(root, f), folder)
        for root, _, files in os.walk(folder)
        for f in files
        if f.endswith(".json")
    ]


def figures(folder: Path) -> dict[str, Any]:
    """The evaluator's point figures (``eval/metrics.py`` ``GameSetEvaluator``, no bootstrap) for a folder.

    Elo and OpenSkill depend on the game order: the evaluator's is :func:`evaluator_order`.
    """
    import tempfile

    from kaggle_environments.envs.werewolf.eval.metrics import GameSetEvaluator

    with tempfile.TemporaryDirectory() as cache:
        ev = GameSetEvaluator(str(folder), cache_dir=cache, error_log_path=str(Path(cache) / "errors.log"))
        ev.evaluate(gte_samples=0, elo_samples=0, openskill_samples=0)
    out: dict[str, Any] = {}
    for name, m in sorted(ev.metrics.items()):
        roles = sorted(m.wins_by_role)
        out[name] = {
            "games": len(m.wins),
            "win_rate": list(m.get_win_rate()),
            "irp": list(m.get_irp()),
            "vss": list(m.get_vss()),
            "ksr": list(m.get_ksr()),
            "wd_ksr": list(m.get_wd_ksr()),
            "wd_irp": list(m.get_wd_irp()),
            "wd_vss": list(m.get_wd_vss()),
            "margin_of_win": list(m.get_margin_of_win()),
            "speed_of_win": list(m.get_speed_of_win()),
            "elo": m.elo,
            "openskill_mu": getattr(m.openskill_rating, "mu", None),
            "openskill_sigma": getattr(m.openskill_rating, "sigma", None),
            "by_role": {
                r: {
                    "games": len(m.wins_by_role[r]),
                    "win_rate": list(m.get_win_rate_for_role(r)),
                    "ksr": list(m.get_ksr_for_role(r)),
                    "wd_ksr": list(m.get_wd_ksr_for_role(r)),
                }
                for r in roles
            },
        }
    return out


UNSEEN_LABELS = ["gemini-x", "gpt-y", "claude-z", "grok-w", "qwen-v", "llama-u", "deepseek-t"]
UNSEEN_SEED = 10_000  # seeds no fixture or check uses


def unseen(n: int, folder: Path) -> None:
    """Play ``n`` episodes "we never saw" into ``folder/episodes`` and run the evaluator on them.

    Kaggle's own random agents (unwrapped: ties are Kaggle's draws), seeds from
    :data:`UNSEEN_SEED`, agent labels :data:`UNSEEN_LABELS` (none of the fixtures' labels),
    ``kaggle-werewolf7`` and ``kaggle-werewolf8`` alternating; full replays as
    ``env.toJSON()`` writes them. Writes ``folder/evaluator.json`` (:func:`figures`) and
    ``folder/evaluator_order.json`` (:func:`evaluator_order`).
    """
    episodes = folder / "episodes"
    episodes.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        rules = ("kaggle-werewolf7", "kaggle-werewolf8")[i % 2]
        replay, out = play(rules, UNSEEN_SEED + i, tie_free=False, labels=UNSEEN_LABELS)
        (episodes / f"{rules}-seed{UNSEEN_SEED + i}.json").write_text(json.dumps(replay) + "\n", encoding="utf-8")
        print(f"{rules} seed {UNSEEN_SEED + i}: {out['winner']}", file=sys.stderr, flush=True)
    (folder / "evaluator.json").write_text(json.dumps(figures(episodes), indent=1, sort_keys=True) + "\n")
    (folder / "evaluator_order.json").write_text(json.dumps(evaluator_order(episodes), indent=1) + "\n")
    print(f"wrote {n} episodes to {episodes} and the evaluator's figures to {folder / 'evaluator.json'}")


def compare(theirs_path: Path, ours_path: Path) -> int:
    """Compare the evaluator's figures with ``mafialab report --by agent --format json``'s ``kaggle``.

    Per agent: games, win rate, KSR (mean and SEM, 1e-12), Elo, OpenSkill mu and sigma (1e-9);
    per agent and role: games, win rate, KSR. Prints one line per difference and a summary;
    returns the number of differences.
    """
    theirs = json.loads(theirs_path.read_text())
    ours = json.loads(ours_path.read_text())["kaggle"]
    diffs: list[str] = []

    def same(where: str, a: Any, b: Any, tol: float) -> None:
        if isinstance(a, list):
            ok = isinstance(b, list) and len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))
        elif isinstance(a, float) or isinstance(b, float):
            ok = a is not None and b is not None and abs(a - b) <= tol
        else:
            ok = a == b
        if not ok:
            diffs.append(f"{where}: evaluator {a!r}, mafialab {b!r}")

    if sorted(theirs) != sorted(ours):
        diffs.append(f"agents: evaluator {sorted(theirs)}, mafialab {sorted(ours)}")
    n_checked = 0
    worst = 0.0
    for agent in sorted(set(theirs) & set(ours)):
        t, o = theirs[agent], ours[agent]
        for key, tol in (("games", 0), ("win_rate", 1e-12), ("ksr", 1e-12), ("elo", 1e-9), ("openskill_mu", 1e-9),
                         ("openskill_sigma", 1e-9)):  # fmt: skip
            same(f"{agent}.{key}", t[key], o.get(key), tol)
            n_checked += 1
            if key in ("elo", "openskill_mu", "openskill_sigma") and o.get(key) is not None:
                worst = max(worst, abs(t[key] - o[key]))
        if sorted(t["by_role"]) != sorted(o["by_role"]):
            diffs.append(f"{agent}.by_role: evaluator {sorted(t['by_role'])}, mafialab {sorted(o['by_role'])}")
        for role in sorted(set(t["by_role"]) & set(o["by_role"])):
            for key, tol in (("games", 0), ("win_rate", 1e-12), ("ksr", 1e-12)):
                same(f"{agent}.{role}.{key}", t["by_role"][role][key], o["by_role"][role][key], tol)
                n_checked += 1
    for d in diffs:
        print(d)
    games = sum(m["games"] for m in theirs.values())
    print(
        f"{len(theirs)} agents, {games} seat-games: {n_checked} figures compared, {len(diffs)} differences "
        f"(largest Elo/OpenSkill gap {worst:.2e})"
    )
    return len(diffs)


def main(argv: list[str]) -> None:
    if argv and argv[0] == "--unseen":
        unseen(int(argv[1]), Path(argv[2]))
        return
    if argv and argv[0] == "--compare":
        sys.exit(1 if compare(Path(argv[1]), Path(argv[2])) else 0)
    n, path = int(argv[0]), Path(argv[1])
    rest = argv[2:]
    only = rest[rest.index("--rules") + 1].split(",") if "--rules" in rest else list(CONFIGS)
    keep = int(rest[rest.index("--replays") + 2]) if "--replays" in rest else 0
    games = []
    replays = []  # only the first ``keep`` (a replay is large: memory stays bounded)
    for rules in only:
        for seed in range(n):
            replay, out = play(rules, seed)
            games.append(out)
            if len(replays) < keep:
                replays.append((rules, seed, slim(replay)))
            print(f"{rules} seed {seed}: {out['winner']}", file=sys.stderr, flush=True)
    path.write_text(json.dumps({"kaggle_environments": "1.33.2", "games": games}, indent=None) + "\n", encoding="utf-8")
    print(f"wrote {len(games)} games to {path}")
    if "--replays" in rest:
        i = rest.index("--replays")
        folder, k = Path(rest[i + 1]), int(rest[i + 2])
        folder.mkdir(parents=True, exist_ok=True)
        for rules, seed, replay in replays[:k]:
            (folder / f"{rules}-seed{seed}.json").write_text(json.dumps(replay) + "\n", encoding="utf-8")
        print(f"wrote {k} replays to {folder}")
        if "--tie-replay" in rest:  # Kaggle's own random agents, unwrapped: the first seed with a tied day vote
            for seed in range(1, 50):
                replay, out = play("kaggle-werewolf7", seed, tie_free=False)
                if any(_tied(v) for v in out["votes"]):
                    tie = Path(rest[rest.index("--tie-replay") + 1])
                    tie.write_text(json.dumps(slim(replay)) + "\n", encoding="utf-8")
                    print(f"wrote the replay of kaggle-werewolf7 seed {seed} (a tied day vote) to {tie}")
                    break
        if "--figures" in rest:
            f = Path(rest[rest.index("--figures") + 1])
            f.write_text(json.dumps(figures(folder), indent=1, sort_keys=True) + "\n", encoding="utf-8")
            order = f.with_name("evaluator_order.json")  # the game order behind its Elo and OpenSkill
            order.write_text(json.dumps(evaluator_order(folder), indent=1) + "\n", encoding="utf-8")
            print(f"wrote the evaluator's figures to {f} and its game order to {order}")


if __name__ == "__main__":
    main(sys.argv[1:])
