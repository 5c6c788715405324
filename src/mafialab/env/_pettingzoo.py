"""The PettingZoo AEC environment: one seat acts at a time, in the order the engine asks."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from gymnasium import logger
from gymnasium.spaces import Dict
from pettingzoo import AECEnv, ParallelEnv

from mafialab._words import count
from mafialab.env._core import Episode, Rewards
from mafialab.env._spaces import action_space, observation_space
from mafialab.rules import RuleSet, load_rules

RENDER_MODES = ("ansi", "human")


class _Table:
    """What the AEC and the parallel environment share: rule set, seeds, spaces, the episode."""

    def __init__(
        self,
        rules: RuleSet | str | Path,
        seed: int | None,
        out: str | Path | None,
        render_mode: str | None,
        rewards: Rewards,
        pack: str | Path,
        agent_labels: Sequence[str] | None,
    ):
        self.rules = rules if isinstance(rules, RuleSet) else load_rules(rules)
        if self.rules.mission is not None:
            raise ValueError(
                f"rules: {self.rules.id} is a mission game (team proposals, approve/reject votes, secret mission "
                "cards); the environment's spaces are made for elimination games (a target seat and a text). "
                "Play mission games with `mafialab play` or mafialab.harness.play_game"
            )
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode: {render_mode!r} is not one of {', '.join(RENDER_MODES)}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed: {seed!r} is not an int")
        n = self.rules.n_seats
        labels = list(agent_labels) if agent_labels is not None else ["env"] * n
        if len(labels) != n:
            raise ValueError(f"agent_labels: {count(len(labels), 'label')} for {count(n, 'seat')}")
        self.labels = labels
        self.out = Path(out) if out is not None else None
        self.render_mode = render_mode
        self.reward_scheme = rewards
        self.pack = pack
        self.next_seed = seed
        self.episode: Episode | None = None
        self.printed = 0
        self.possible_agents = [f"seat_{s}" for s in range(n)]
        self.action_spaces = {a: action_space(self.rules) for a in self.possible_agents}
        self.observation_spaces = {a: observation_space(self.rules) for a in self.possible_agents}

    def start(self, seed: int | None) -> Episode:
        """A new game: seed ``seed``, else one after the last game's, else a drawn one (then recorded)."""
        if self.episode is not None:
            self.episode.close()
        if seed is None:
            seed = self.next_seed if self.next_seed is not None else random.SystemRandom().randrange(2**31)
        self.next_seed = int(seed) + 1
        self.printed = 0
        self.episode = Episode(
            self.rules, int(seed), out=self.out, agent_labels=self.labels, pack=self.pack, rewards=self.reward_scheme
        )
        return self.episode

    def render(self) -> str | None:
        """``ansi``: the transcript so far; ``human``: print the lines not printed yet."""
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human' to env()")
            return None
        if self.episode is None:
            return "" if self.render_mode == "ansi" else None
        if self.render_mode == "ansi":
            return self.episode.transcript()
        lines = self.episode.transcript_lines()
        for line in lines[self.printed :]:
            print(line)
        self.printed = len(lines)
        return None

    def info(self, seat: int, note: str | None) -> dict[str, Any]:
        """A seat's info: the action mask in the form ``action_space.sample(mask)`` takes, and a fallback note."""
        assert self.episode is not None
        out: dict[str, Any] = {"action_mask": {"choice": self.episode.mask(seat), "text": None}}
        if note is not None:
            out["fallback"] = note
        return out


def _seat(agent: str) -> int:
    return int(agent.rsplit("_", 1)[1])


class MafiaEnv(AECEnv):  # type: ignore[misc]
    """A mafialab game as a PettingZoo AEC environment; build it with :func:`mafialab.env.env`."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "mafialab_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
    }

    def __init__(self, table: _Table):
        super().__init__()
        self._table = table
        self.rules = table.rules
        self.render_mode = table.render_mode
        self.possible_agents = list(table.possible_agents)
        self.action_spaces = table.action_spaces
        self.observation_spaces = table.observation_spaces
        self._notes: dict[str, str] = {}

    def observation_space(self, agent: str) -> Dict:
        """The observation space of ``agent`` (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Dict:
        """The action space of ``agent`` (the same object every call)."""
        return self.action_spaces[agent]

    @property
    def episode(self) -> Episode:
        """The game being played (after :meth:`reset`)."""
        if self._table.episode is None:
            raise RuntimeError("call reset() first")
        return self._table.episode

    @property
    def game_dir(self) -> Path | None:
        """The log directory of the current game (``None`` without ``out``)."""
        return self.episode.path

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a game: ``seed`` is the engine's game seed (default: the last game's plus one).

        ``options`` is accepted and not used.
        """
        ep = self._table.start(seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._notes = {}
        self._update_infos()
        seat = ep.next_seat()
        assert seat is not None, "a game starts with a decision"
        self.agent_selection = self.possible_agents[seat]

    def observe(self, agent: str) -> dict[str, Any]:
        """``agent``'s observation now (see ``docs/env.md``)."""
        return self.episode.observation(_seat(agent))

    def step(self, action: Any) -> None:
        """Play ``action`` (``{"choice": int, "text": str}``) for :attr:`agent_selection`."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        ep = self.episode
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        why = ep.act(_seat(agent), action)
        if why is not None:
            self._notes[agent] = why
            self.rewards[agent] += float(ep.rewards.invalid)
        else:
            self._notes.pop(agent, None)
        if ep.over:
            for a, r in zip(self.possible_agents, ep.final_rewards(), strict=True):
                self.rewards[a] += r
                self.terminations[a] = True
            self.agent_selection = self.agents[0]
        else:
            seat = ep.next_seat()
            assert seat is not None
            self.agent_selection = self.possible_agents[seat]
        self._update_infos()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _update_infos(self) -> None:
        self.infos = {a: self._table.info(_seat(a), self._notes.get(a)) for a in self.agents}

    def render(self) -> str | None:
        """The transcript (``ansi``: returned; ``human``: printed line by line as the game goes)."""
        return self._table.render()

    def close(self) -> None:
        """Close the current game's log (an unfinished game's log stays as written)."""
        if self._table.episode is not None:
            self._table.episode.close()


class MafiaParallelEnv(ParallelEnv):  # type: ignore[misc]
    """A mafialab game as a PettingZoo parallel environment; build it with :func:`mafialab.env.parallel_env`.

    Each :meth:`step` answers the decisions the engine asks together (a batch: the night's
    actions, a secret vote; a single seat when the rules ask one seat at a time, such as a
    speech): every seat with a pending decision answers its earliest one with its action;
    actions of other seats are ignored, and a missing one is replaced like an illegal one.
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "mafialab_v0", "render_modes": list(RENDER_MODES)}

    def __init__(self, table: _Table):
        self._table = table
        self.rules = table.rules
        self.render_mode = table.render_mode
        self.possible_agents = list(table.possible_agents)
        self.action_spaces = table.action_spaces
        self.observation_spaces = table.observation_spaces
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> Dict:
        """The observation space of ``agent`` (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Dict:
        """The action space of ``agent`` (the same object every call)."""
        return self.action_spaces[agent]

    @property
    def episode(self) -> Episode:
        """The game being played (after :meth:`reset`)."""
        if self._table.episode is None:
            raise RuntimeError("call reset() first")
        return self._table.episode

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start a game (``seed`` as for the AEC form); every seat's observation and info."""
        ep = self._table.start(seed)
        self.agents = list(self.possible_agents)
        obs = {a: ep.observation(_seat(a)) for a in self.agents}
        return obs, {a: self._table.info(_seat(a), None) for a in self.agents}

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        """Answer the pending batch with ``actions`` (agent → ``{"choice": int, "text": str}``)."""
        ep = self.episode
        agents = list(self.agents)
        rewards = dict.fromkeys(agents, 0.0)
        notes: dict[str, str] = {}
        acting = sorted({d.seat for d in ep.state.pending()})
        for seat in acting:
            a = self.possible_agents[seat]
            why = ep.act(seat, actions.get(a))
            if why is not None:
                notes[a] = why
                rewards[a] += float(ep.rewards.invalid)
        over = ep.over
        if over:
            for a, r in zip(self.possible_agents, ep.final_rewards(), strict=True):
                rewards[a] += r
        obs = {a: ep.observation(_seat(a)) for a in agents}
        infos = {a: self._table.info(_seat(a), notes.get(a)) for a in agents}
        terminations = dict.fromkeys(agents, over)
        truncations = dict.fromkeys(agents, False)
        if over:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        """The transcript (``ansi``: returned; ``human``: printed line by line as the game goes)."""
        return self._table.render()

    def close(self) -> None:
        """Close the current game's log (an unfinished game's log stays as written)."""
        if self._table.episode is not None:
            self._table.episode.close()
