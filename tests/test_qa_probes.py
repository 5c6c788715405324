"""QA regressions: malformed probe batteries are ProbeBatteryErrors naming the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mafialab.probes import ProbeBatteryError, load_battery


@pytest.mark.parametrize("value", ["5", "true", "1.5"])
def test_mafiascope_block_whose_probes_is_not_a_list(tmp_path: Path, value: str) -> None:
    p = tmp_path / "cfg.yaml"
    p.write_text(f"introspection:\n  enabled: true\n  probes: {value}\n")
    with pytest.raises(ProbeBatteryError, match=r"cfg\.yaml: introspection\.probes"):
        load_battery(p)


# A small model stuck in repetition can answer "[[[[[[..." up to its token limit. Such an
# answer must count as unparsed (raw text kept), never crash the game or the report.
DEGENERATE = ["[" * 1200, "[" * 900 + "]" * 900, '{"a":' * 500 + "1" + "}" * 500]


@pytest.mark.parametrize("text", DEGENERATE)
def test_degenerate_nesting_is_an_unparsed_answer(text: str) -> None:
    from mafialab.models import parse_json_lenient
    from mafialab.probes._parse import parse_answer

    parse_json_lenient(text)  # must not raise
    ans = parse_answer(text, {"type": "array"}, names=["Alex"], alive=["Alex"])
    assert ans.ok is False and ans.value is None


def test_nesting_depth_and_the_limit() -> None:
    from mafialab.probes._parse import _MAX_DEPTH, _nesting_depth, parse_answer

    assert [_nesting_depth(v) for v in (5, [], [[1]], {"a": [{"b": 1}]}, [1, [2, [3]]])] == [0, 1, 2, 3, 3]
    ok = parse_answer("x", parsed=[{"player": "Alex", "score": 3}])
    assert ok.ok and ok.value == [{"player": "Alex", "score": 3}]
    at_limit: list = []
    for _ in range(_MAX_DEPTH - 1):
        at_limit = [at_limit]
    assert _nesting_depth(at_limit) == _MAX_DEPTH and parse_answer("x", parsed=at_limit).ok
    assert not parse_answer("x", parsed=[at_limit]).ok  # one level more: refused, with an issue
    assert "nested" in parse_answer("x", parsed=[at_limit]).issues[0]


@pytest.mark.parametrize("text", DEGENERATE)
def test_metric_parsers_survive_degenerate_nesting(text: str) -> None:
    from mafialab.analysis._parse import repair_json, repair_json_reference

    for parse in (repair_json, repair_json_reference):
        parse(text)  # must not raise RecursionError


def test_log_reader_skips_a_line_nested_too_deeply(tmp_path: Path) -> None:
    from mafialab.record import iter_jsonl

    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n' + '{"b": ' + "[" * 5000 + "]" * 5000 + "}\n" + '{"c": 3}\n')
    problems: list[str] = []
    assert [obj for _, obj in iter_jsonl(p, problems)] == [{"a": 1}, {"c": 3}]
    assert len(problems) == 1 and ":2:" in problems[0] and "nested too deeply" in problems[0]


class _Degenerate:
    """Plays like the wrapped agent; answers every probe with a degenerate text."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.label = inner, inner.label

    async def decide(self, decision: Any, view: Any) -> Any:
        return await self.inner.decide(decision, view)

    async def probe(self, question: str, view: Any, schema: Any, max_tokens: int, probe_id: str) -> Any:
        from mafialab.models import ChatResponse

        return ChatResponse(text="[" * 1200)


async def test_a_degenerate_probe_answer_does_not_stop_the_game(tmp_path: Path) -> None:
    from mafialab.agents import make_agent
    from mafialab.harness import play_game
    from mafialab.probes import make_probe_observer, resolve_battery
    from mafialab.record import read_game, read_records, strip_clock
    from mafialab.rules import WEREWOLF7

    def agents() -> list[Any]:
        return [make_agent("scripted", s, WEREWOLF7, 0) for s in range(WEREWOLF7.n_seats)]

    plain = await play_game(WEREWOLF7, agents(), 0, out=tmp_path / "plain")
    probed_agents = agents()
    probed_agents[3] = _Degenerate(probed_agents[3])
    obs = make_probe_observer(resolve_battery("suspicion"), probed_agents, WEREWOLF7, 0, out=tmp_path / "probed")
    assert obs is not None
    res = await play_game(WEREWOLF7, probed_agents, 0, out=tmp_path / "probed", observers=[obs])
    assert res.winner == plain.winner and read_game(tmp_path / "probed" / res.game_id).winner is not None
    recs = read_records(tmp_path / "probed" / res.game_id / "probes.jsonl")
    mine = [r for r in recs if r["seat"] == 3]
    assert mine and all(not r["parse_ok"] and r["answer_raw"] == "[" * 1200 for r in mine)
    assert any(r["parse_ok"] for r in recs if r["seat"] != 3)
    game = tmp_path / "{}" / res.game_id / "game.jsonl"
    assert strip_clock(read_records(Path(str(game).format("plain")))) == strip_clock(
        read_records(Path(str(game).format("probed")))
    )
