"""What a run attaches to each of its games: the probe runner and the seats played from outside.

Every caller that plays a game (``mafialab play``, seasons, forks and the bifurcation
experiment, the fork API of ``mafialab view --serve``, the Inspect task) builds a game's
observers here, so the order of the observers, the game id they write under and the files
they write are the same everywhere. The object lives in ``probes`` rather than ``harness``:
the probe runner builds on the game loop (game ids, replay), so the game loop cannot build
probe runners without the two packages importing each other. Seats played from outside come
in through :class:`SeatHost` (``mafialab.remote.SeatServer`` is one), so this module does not
import ``remote``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mafialab.harness import GameObserver, default_game_id, run_config
from mafialab.probes._battery import ProbeBattery, resolve_battery
from mafialab.probes._runner import make_probe_observer
from mafialab.record import ProbeRecord
from mafialab.rules import RuleSet


class SeatHost(Protocol):
    """Serves the seats of a game played from outside the process (``mafialab.remote.SeatServer``)."""

    def open_game(self, game_id: str, agents: Sequence[Any], game_dir: Path | None = None) -> Sequence[Any]:
        """Attach the game's remote seats; returns one ticket per seat (its token, to print once)."""
        ...

    def observer(self, game_id: str) -> GameObserver:
        """The observer that keeps the seats of ``game_id`` current and tells them the end."""
        ...


@dataclass(frozen=True)
class GameSetup:
    """The probes and the seats played from outside that a run attaches to each of its games.

    Build one per run, then ask :meth:`observers` for each game and pass them to
    :func:`mafialab.harness.play_game`. A setup without a host or callbacks pickles (a Ray
    worker can build its game's observers from it).

    Attributes:
        battery: The probe battery asked in every game (``None``, or a disabled battery: the
            games are not probed).
        seats: Serves the remote and human-web seats (``None``: no seat is played from outside).
        on_probe_record: Called with each probe record written (e.g. a progress bar).
        on_ticket: Called with each remote seat's ticket when a game opens (print its token).
    """

    battery: ProbeBattery | None = None
    seats: SeatHost | None = field(default=None, compare=False)
    on_probe_record: Callable[[ProbeRecord], None] | None = field(default=None, compare=False)
    on_ticket: Callable[[Any], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # a disabled battery (or one without probes) asks nothing and is not in the game id
        object.__setattr__(self, "battery", resolve_battery(self.battery))

    @classmethod
    def of(cls, battery: str | Path | ProbeBattery | None, **kwargs: Any) -> GameSetup:
        """A setup asking ``battery``: ``none``/``None``, a built-in name, a YAML path or a loaded battery.

        Raises:
            ProbeBatteryError: The battery could not be loaded (the message names the field).
        """
        return cls(battery=resolve_battery(battery), **kwargs)

    @property
    def probes(self) -> str | None:
        """The battery's fingerprint (``<name>:<8 hex>``, as in the run configuration), or ``None``."""
        return self.battery.fingerprint() if self.battery is not None else None

    def run_config(self, agents: Sequence[Any]) -> dict[str, Any]:
        """The run configuration of a game with ``agents`` (:func:`mafialab.harness.run_config` with the battery)."""
        cfg = run_config(agents)
        if self.battery is not None:
            cfg["probes"] = self.battery.fingerprint()
        return cfg

    def game_id(self, rules: RuleSet, seed: int, agents: Sequence[Any]) -> str:
        """The id :func:`mafialab.harness.play_game` gives a game of this setup when it is given none."""
        return default_game_id(rules, seed, [a.label for a in agents], self.run_config(agents))

    def observers(
        self,
        rules: RuleSet,
        seed: int,
        agents: Sequence[Any],
        out: Path | None = None,
        *,
        game_id: str | None = None,
    ) -> list[GameObserver]:
        """The observers of one game, in the order the game must call them.

        The probe runner comes first, then the seats' observer: a seat told the game is over
        stops listening, and a probe may follow the game's last event. Opening the game for
        its remote seats writes their tokens under ``out/<game id>/.seats/`` and calls
        :attr:`on_ticket` with each ticket.

        Args:
            rules: The rule set.
            seed: The game seed.
            agents: The game's agents, one per seat (the probe runner asks those that answer
                probes).
            out: Parent of the game directory (as given to ``play_game``); ``None`` keeps the
                probe records in memory and writes no token file.
            game_id: The game's id when the caller chooses it (seasons, forks); default
                :meth:`game_id`, the id ``play_game`` derives.

        Returns:
            The observers (empty without a battery and a seat host).
        """
        found: list[GameObserver] = []
        gid = game_id or self.game_id(rules, seed, agents)
        if self.battery is not None:
            runner = make_probe_observer(
                self.battery, list(agents), rules, seed, out=out, game_id=gid, on_record=self.on_probe_record
            )
            if runner is not None:
                found.append(runner)
        if self.seats is not None:
            for ticket in self.seats.open_game(gid, agents, out / gid if out is not None else None):
                if self.on_ticket is not None:
                    self.on_ticket(ticket)
            found.append(self.seats.observer(gid))
        return found
