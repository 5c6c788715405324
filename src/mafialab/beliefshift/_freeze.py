"""Freezing annotated messages into a self-contained, versioned benchmark file."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from mafialab import __version__
from mafialab.beliefshift._annotate import player_ref
from mafialab.beliefshift._io import AnnotationSet, content_id, sha256_file, write_jsonl
from mafialab.beliefshift._render import RENDER_VERSION, render_history, setting_text
from mafialab.beliefshift._schema import BenchHeader, BenchItem, ObserverContext
from mafialab.config import ConfigError, parse_config_text, top_level_message
from mafialab.engine import Elimination, Speech, derive_seed
from mafialab.record import GameLog
from mafialab.render import quote

PROMPT_KEYS = ("version", "system", "history", "prior", "shift", "posterior", "scale", "shift_scale", "omitted")
"""Keys every prompt pack must define."""


class FreezeError(ValueError):
    """Annotations and game logs do not match (the message names the annotation)."""


@cache
def default_prompts() -> dict[str, str]:
    """The prompt pack shipped with mafialab (``beliefshift/prompts.yaml``)."""
    text = resources.files("mafialab.beliefshift").joinpath("prompts.yaml").read_text(encoding="utf-8")
    return load_prompts_text(text, "prompts.yaml")


def load_prompts_text(text: str, source: str) -> dict[str, str]:
    """Parse and check a prompt pack (YAML mapping of :data:`PROMPT_KEYS` to strings).

    Raises:
        ValueError: Not a mapping, or a key missing / not a string (message names it).
    """
    data = parse_config_text(text, source)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: {top_level_message('a prompt pack (a mapping of its prompts)', data)}")
    for k in PROMPT_KEYS:
        if not isinstance(data.get(k), str):
            raise ConfigError(f"{source}: {k}: missing or not a string")
    return {k: str(data[k]) for k in PROMPT_KEYS}


@dataclass(frozen=True)
class FrozenBench:
    """A frozen benchmark: header and items (see :func:`freeze`)."""

    header: BenchHeader
    items: list[BenchItem]


def _alive_before(game: GameLog, seq: int) -> set[int]:
    dead = {ev.seat for ev in game.events if isinstance(ev, Elimination) and ev.seq < seq}
    return {s.seat for s in game.header.roster} - dead


def freeze(
    games: Sequence[GameLog],
    annotations: AnnotationSet,
    *,
    max_observers: int = 2,
    seed: int = 0,
    prompts: dict[str, str] | None = None,
) -> FrozenBench:
    """Build the benchmark items for ``annotations``.

    Per annotation (message, target): the eligible observers are the players alive when the
    message was sent, on the village side (true team ``town``), other than the accuser and the
    target; ``min(max_observers, eligible)`` of them are drawn without replacement by a
    ``random.Random`` seeded with ``derive_seed(seed, "observers:<item_id>")`` (recorded per
    item). Each observer's history is every event before the message that
    :func:`mafialab.engine.visible_events` lets it see, rendered once to text.

    Args:
        games: The game logs the annotations refer to.
        annotations: The annotation file.
        max_observers: Observers per item (``--observers``), >= 1.
        seed: Seed of the observer draws.
        prompts: Prompt pack to copy into the header (default: :func:`default_prompts`).

    Returns:
        The header and the items, ordered as the annotations.

    Raises:
        FreezeError: An annotation refers to a game or message not in ``games``, to a
            message that is not a day-discussion speech, its accuser does not match the
            speaker, its target is not a living player other than the speaker, or a
            (message, target) is annotated twice.
        ValueError: ``max_observers < 1``.
    """
    if max_observers < 1:
        raise ValueError(f"observers: must be >= 1, got {max_observers}")
    by_id = {g.game_id: g for g in games}
    items: list[BenchItem] = []
    used: list[str] = []
    seen: set[str] = set()
    for ann in annotations.annotations:
        g = by_id.get(ann.game_id)
        if g is None:
            hint = (
                " (its id is a fork branch's, and branches are left out unless asked for: "
                "`beliefshift freeze --include-branches`, or `load_logs(..., include_branches=True)`)"
                if "~" in ann.game_id  # a branch's id: <parent>~<batch>-<replica> (counterfactual.branch_id)
                else ""
            )
            raise FreezeError(f"annotation {ann.message_id}: game {ann.game_id} is not among the logs given{hint}")
        pos = next(
            (
                i
                for i, ev in enumerate(g.events)
                if isinstance(ev, Speech) and ev.round == ann.round and ev.index == ann.index
            ),
            None,
        )
        if pos is None:
            raise FreezeError(f"annotation {ann.message_id}: no speech with round {ann.round}, index {ann.index}")
        sp = g.events[pos]
        assert isinstance(sp, Speech)
        if sp.seat != ann.accuser.seat:
            raise FreezeError(
                f"annotation {ann.message_id}: accuser.seat {ann.accuser.seat} but the speaker is seat {sp.seat}"
            )
        if sp.phase != "day":
            raise FreezeError(f"annotation {ann.message_id}: not a day-discussion message (phase {sp.phase})")
        if g.game_id not in used:
            used.append(g.game_id)
        rules = g.header.rules
        item_id = f"{ann.message_id}:t{ann.target.seat}"
        alive = _alive_before(g, sp.seq)
        t = ann.target.seat
        if not 0 <= t < len(g.header.roster) or t == sp.seat or t not in alive:
            why = (
                "the speaker"
                if t == sp.seat
                else "not a seat of the game"
                if not 0 <= t < len(g.header.roster)
                else "dead"
            )
            raise FreezeError(
                f"annotation {ann.message_id}: target.seat {t} is {why}; a target is a player alive when the "
                "message was sent, other than the speaker"
            )
        if item_id in seen:
            raise FreezeError(f"annotation {ann.message_id}: a second annotation of target.seat {t} (item {item_id})")
        seen.add(item_id)
        eligible = sorted(
            s.seat
            for s in g.header.roster
            if s.team == "town" and s.seat in alive and s.seat not in (ann.accuser.seat, ann.target.seat)
        )
        obs_seed = derive_seed(seed, f"observers:{item_id}")
        chosen = sorted(random.Random(obs_seed).sample(eligible, min(max_observers, len(eligible))))
        before = g.events[:pos]
        observers = []
        for s in chosen:
            lines, pre = render_history(before, s, rules)
            ref = player_ref(g, s)
            observers.append(
                ObserverContext(
                    seat=s,
                    name=ref.name,
                    role=ref.role,
                    team=ref.team,
                    preamble=pre,
                    history=lines,
                    history_chars=sum(len(x) + 1 for x in lines),
                )
            )
        items.append(
            BenchItem(
                item_id=item_id,
                message_id=ann.message_id,
                game_id=ann.game_id,
                round=ann.round,
                index=ann.index,
                seq=sp.seq,
                category=ann.category,
                evidence=ann.evidence,
                accuser=player_ref(g, ann.accuser.seat),
                target=player_ref(g, ann.target.seat),
                message=f"[day {sp.round}, message {sp.index}] {player_ref(g, sp.seat).name}: {quote(sp.text)}",
                setting=setting_text(rules),
                game=rules.lexicon.game,
                town_team=rules.lexicon.town_team,
                mafia_team=rules.lexicon.mafia_team,
                eligible=eligible,
                observer_seed=obs_seed,
                observers=observers,
            )
        )
    header = BenchHeader(
        bench_id=content_id(items),
        software=f"mafialab {__version__}",
        seed=seed,
        max_observers=max_observers,
        annotator=annotations.header.annotator if annotations.header else "unknown",
        annotations_sha256=sha256_file(annotations.path) if annotations.path.is_file() else "",
        render_version=RENDER_VERSION,
        prompts=dict(prompts or default_prompts()),
        n_items=len(items),
        n_observations=sum(len(i.observers) for i in items),
        games=used,
    )
    return FrozenBench(header, items)


def write_bench(path: Path, bench: FrozenBench) -> None:
    """Write ``BENCH.jsonl`` (header line, then one line per item)."""
    write_jsonl(path, bench.header, bench.items)
