"""Winners named the way a rule set names its teams ("Village", "Werewolves"), for every printout."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mafialab.rules._ruleset import RuleSet

UNFINISHED = "unfinished"
"""How a game without a winner (no ``game_end`` event) is named."""


def winner_name(winner: str | None, rules: RuleSet | Iterable[RuleSet | Mapping[str, str]]) -> str:
    """The display name of a winning team, from the rule set(s) the games were played under.

    Logs and reports keep the canonical team ids (``town``, ``mafia``); everything printed
    for a person names the team as the rule set's lexicon does, e.g. ``mafia`` is
    ``Werewolves`` under werewolf7 and ``Mafia`` under mafiascope7.

    Args:
        winner: ``"town"``, ``"mafia"``, ``None`` or ``"unfinished"`` (no winner); any other
            id (an imported game's own team) is returned as it is.
        rules: The rule set of the game, or the rule sets of pooled games (or their team
            names, ``{team id: name}``): when they name the team differently, the names are
            joined with ``/`` in first-seen order (``Village/Villagers``).

    Returns:
        The team's name, or ``"unfinished"``.
    """
    if winner is None or winner == UNFINISHED:
        return UNFINISHED
    if winner not in ("town", "mafia"):
        return winner
    sets = [rules] if isinstance(rules, RuleSet) else list(rules)
    names = list(
        dict.fromkeys(
            r.lexicon.team_name(winner) if isinstance(r, RuleSet) else r.get(winner, winner)  # type: ignore[arg-type]
            for r in sets
        )
    )
    return "/".join(names) if names else winner


def winners_line(counts: Mapping[str | None, int], rules: RuleSet | Iterable[RuleSet | Mapping[str, str]]) -> str:
    """Winner counts as one line: ``"Village 3, Werewolves 1, unfinished 1"``.

    Args:
        counts: Games won per canonical team id (``None``/``"unfinished"``: no winner).
        rules: As for :func:`winner_name`.

    Returns:
        Town first, then the hidden team, other ids, then unfinished games; teams with no
        game are left out; ``"none"`` when there is no game at all.
    """
    sets = [rules] if isinstance(rules, RuleSet) else list(rules)
    order = {"town": 0, "mafia": 1, None: 3, UNFINISHED: 3}
    named: dict[str, int] = {}
    for team in sorted(counts, key=lambda t: (order.get(t, 2), str(t))):
        if counts[team]:
            name = winner_name(team, sets)
            named[name] = named.get(name, 0) + counts[team]
    return ", ".join(f"{name} {n}" for name, n in named.items()) or "none"
