"""Elicitation: prompts, constrained labels, failure accounting, protocols, shortening, resume."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab._quality import CONSTANT_MIN_ANSWERS
from mafialab.analysis import Stat
from mafialab.beliefshift import ResultsMismatch, RunOptions, build_report, read_bench, read_results, run_bench
from mafialab.beliefshift._elicit import build_prompts, parse_levels, rating_schema
from mafialab.beliefshift._freeze import default_prompts
from mafialab.beliefshift._schema import LABELS, BenchHeader, BenchItem, ObserverContext
from mafialab.beliefshift._tables import fmt_cell
from mafialab.cli import app
from mafialab.models import CHARS_PER_TOKEN, ChatRequest, ChatResponse, MockModel, register_backend
from tests.beliefshift_fixtures import player


def bench(n_items: int = 2, history: int = 5) -> tuple[BenchHeader, list[BenchItem]]:
    items = []
    for i in range(n_items):
        lines = ["Players, in seat order: Ann, Bob, Cid, Dee.", "You are Cid. Your role: Villager (Village team)."]
        lines += [f'[day 1, message {k}] Dee: "line {k} {"x" * 50}"' for k in range(1, history + 1)]
        items.append(
            BenchItem(
                item_id=f"g:r1:m{i + 10}:t1",
                message_id=f"g:r1:m{i + 10}",
                game_id="g",
                round=1,
                index=i + 10,
                seq=100 + i,
                category="accuse",
                evidence="Bob is Werewolves.",
                accuser=player(0, "mafia", "Ann"),
                target=player(1, "town", "Bob"),
                message='[day 1, message 10] Ann: "Bob is Werewolves."',
                setting="4 players.",
                game="Werewolf",
                town_team="Village",
                mafia_team="Werewolves",
                eligible=[2, 3],
                observer_seed=1,
                observers=[
                    ObserverContext(
                        seat=s,
                        name=n,
                        role="Villager",
                        team="town",
                        preamble=2,
                        history=lines,
                        history_chars=sum(len(x) + 1 for x in lines),
                    )
                    for s, n in ((2, "Cid"), (3, "Dee"))
                ],
            )
        )
    h = BenchHeader(
        bench_id="b1",
        seed=0,
        max_observers=2,
        annotator="rules",
        render_version=1,
        prompts=default_prompts(),
        n_items=len(items),
        n_observations=2 * len(items),
        games=["g"],
    )
    return h, items


def by_stage(prior, second):
    """Mock answering by stage; ``prior``/``second`` are outputs or callables of the request."""

    def f(req: ChatRequest):
        out = prior if req.meta["stage"] == "prior" else second
        return out(req) if callable(out) else out

    return f


GOOD_PRIOR = {"Ann": "+1", "Bob": "-2"}


GOOD_SHIFT = {"Ann": "-1", "Bob": "+3"}


async def test_anchored_prompts_share_prefix_and_show_prior(tmp_path):
    h, items = bench(1)
    m = MockModel(by_stage(GOOD_PRIOR, GOOD_SHIFT))
    s = await run_bench(h, items, m, tmp_path / "r.jsonl", RunOptions(retries=0))
    assert (s.total, s.ok, s.completion) == (2, 2, 1.0)
    prior_req, shift_req = m.requests[0], m.requests[1]
    assert prior_req.meta["stage"] == "prior" and shift_req.meta["stage"] == "shift"
    assert shift_req.messages[: len(prior_req.messages)] == prior_req.messages  # shared prefix
    assert json.loads(shift_req.messages[2].content) == GOOD_PRIOR  # its own prior, as the assistant turn
    assert "Ann +1, Bob -2" in shift_req.messages[3].content
    assert 'Ann: "Bob is Werewolves."' in shift_req.messages[3].content
    assert "Bob is Werewolves" not in prior_req.messages[1].content  # the prior is asked before the message
    enum = prior_req.json_schema["properties"]["Ann"]["enum"]
    assert enum == list(LABELS) and prior_req.json_schema["required"] == ["Ann", "Bob"]
    _, recs, _ = read_results(tmp_path / "r.jsonl")
    assert recs[0].prior.model_dump() == {"accuser": 1, "target": -2}
    assert recs[0].shift.model_dump() == {"accuser": -1, "target": 3}


async def test_independent_protocol_shift_is_posterior_minus_prior(tmp_path):
    h, items = bench(1)
    m = MockModel(by_stage({"Ann": "-3", "Bob": "+3"}, {"Ann": "+3", "Bob": "-3"}))
    s = await run_bench(h, items, m, tmp_path / "r.jsonl", RunOptions(protocol="independent"))
    assert s.ok == 2
    post = next(r for r in m.requests if r.meta["stage"] == "posterior")
    prior = next(r for r in m.requests if r.meta["stage"] == "prior")
    assert len(post.messages) == 2 and "your beliefs were" not in post.messages[1].content  # no prior shown
    assert post.messages[1].content.startswith(prior.messages[1].content.split("\n\nQuestion")[0])  # history prefix
    _, recs, _ = read_results(tmp_path / "r.jsonl")
    r = recs[0]
    assert (r.protocol, r.shift.accuser, r.shift.target) == ("independent", 6, -6)
    assert r.posterior.model_dump() == {"accuser": 3, "target": -3}
    t9 = build_report(recs).tables["table9_models"]
    assert t9.columns[2:] == [f"+{k}" if k > 0 else str(k) for k in range(-6, 7)]


@pytest.mark.parametrize(
    ("answer", "cause"),
    [
        ({"Ann": "+4", "Bob": "0"}, "out_of_scale"),
        ({"Ann": 5, "Bob": 0}, "out_of_scale"),
        ({"Ann": "strongly wolf", "Bob": "0"}, "out_of_scale"),
        ({"Ann": 1.5, "Bob": "0"}, "out_of_scale"),
        ({"Ann": "+1"}, "schema"),
        ([1, 2], "schema"),
        ("I think Ann is +2 and Bob is 0", "non_json"),
        ("", "empty"),
        ("<think>hmm</think>", "empty"),
        (ChatResponse(error="finish_reason=length", error_kind="length"), "length"),
        (ChatResponse(error="connection reset", error_kind="transport"), "transport"),
        (ConnectionError("reset by peer"), "transport"),
    ],
)
async def test_failures_are_counted_with_cause_never_as_zero(tmp_path, answer, cause):
    h, items = bench(1)
    m = MockModel(by_stage(answer, GOOD_SHIFT))
    s = await run_bench(h, items, m, tmp_path / "r.jsonl", RunOptions(retries=1))
    assert (s.ok, s.causes[cause]) == (0, 2)
    assert len(m.requests) == 4  # two observers x (1 + 1 retry); no shift asked after a failed prior
    _, recs, _ = read_results(tmp_path / "r.jsonl")
    for r in recs:
        assert not r.ok and r.cause == cause and r.prior is None and r.shift is None
        assert r.calls[0].causes == [cause, cause] and r.calls[0].attempts == 2
    rep = build_report(recs)
    row = rep.tables["completion"].rows[0]
    cols = rep.tables["completion"].columns
    assert row[cols.index("valid")] == 0 and row[cols.index(cause)] == 2
    assert rep.quantities["mock/mock"]["prior.wolf"].n == 0  # nothing scored


async def test_backend_that_raises_is_a_transport_failure(tmp_path):
    class Broken:
        name = "broken/x"
        context_window = None
        calls_network = True
        counts_tokens = False

        def count_tokens(self, text):
            return len(text)

        async def chat(self, request):
            raise TimeoutError("no answer")

    h, items = bench(1)
    s = await run_bench(h, items, Broken(), tmp_path / "r.jsonl", RunOptions(retries=0))
    assert s.causes["transport"] == 2
    _, recs, _ = read_results(tmp_path / "r.jsonl")
    assert "TimeoutError" in recs[0].calls[0].detail


async def test_retry_recovers_and_records_the_failed_attempt(tmp_path):
    h, items = bench(1)
    answers = iter(["not json", GOOD_PRIOR, GOOD_SHIFT, "not json", GOOD_PRIOR, GOOD_SHIFT])
    m = MockModel(lambda req: next(answers))
    s = await run_bench(h, items, m, tmp_path / "r.jsonl", RunOptions(retries=2, concurrency=1))
    assert s.ok == 2
    _, recs, _ = read_results(tmp_path / "r.jsonl")
    assert recs[0].calls[0].attempts == 2 and recs[0].calls[0].causes == ["non_json"]


async def test_reasoning_is_kept_apart(tmp_path):
    h, items = bench(1)
    m = MockModel(by_stage('<think>Ann was quiet.</think>{"Ann": "+2", "Bob": "0"}', ChatResponse(
        text=json.dumps(GOOD_SHIFT), reasoning="the accusation is weak")))  # fmt: skip
    await run_bench(h, items, m, tmp_path / "r.jsonl")
    _, recs, _ = read_results(tmp_path / "r.jsonl")
    assert recs[0].calls[0].reasoning == "Ann was quiet." and recs[0].calls[0].text == '{"Ann": "+2", "Bob": "0"}'
    assert recs[0].calls[1].reasoning == "the accusation is weak"
    assert recs[0].prior.accuser == 2


def test_parse_levels_accepts_only_the_scale():
    assert parse_levels({"A": "+3", "B": "-3"}, "A", "B")[0].model_dump() == {"accuser": 3, "target": -3}
    assert parse_levels({"A": 2, "B": "0"}, "A", "B")[0].model_dump() == {"accuser": 2, "target": 0}
    assert parse_levels({"A": True, "B": "0"}, "A", "B")[1] == "out_of_scale"
    assert parse_levels({"A": "-4", "B": "0"}, "A", "B")[1] == "out_of_scale"
    assert rating_schema("A", "B")["additionalProperties"] is False


async def test_context_shortening_drops_oldest_history_and_is_recorded(tmp_path):
    h, items = bench(1, history=60)
    obs = items[0].observers[0]
    full = build_prompts(h, items[0], obs, context_window=None, max_tokens=64)
    assert full.dropped == 0
    short = build_prompts(h, items[0], obs, context_window=1500, max_tokens=64)
    assert 0 < short.dropped < 60
    text = short.history
    assert "You are Cid" in text and "earlier events omitted" in text  # preamble kept, marker added
    assert "message 60" in text and "message 1 " not in text  # newest kept, oldest dropped
    est = (
        sum(len(m.content) for m in short.shift_messages('{"Ann": "+1", "Bob": "0"}', "Ann +1, Bob 0"))
        / CHARS_PER_TOKEN
    )
    assert est + 64 <= 1500
    m = MockModel(by_stage(GOOD_PRIOR, GOOD_SHIFT), context_window=1500)
    s = await run_bench(h, items, m, tmp_path / "r.jsonl", RunOptions(max_tokens=64))
    assert s.shortened == 2
    _, recs, _ = read_results(tmp_path / "r.jsonl")
    assert recs[0].history_dropped == short.dropped and recs[0].history_events == 62


async def test_resume_skips_valid_observations_and_refuses_other_runs(tmp_path):
    h, items = bench(2)
    out = tmp_path / "r.jsonl"
    flaky = iter(["", "", GOOD_PRIOR, GOOD_SHIFT, GOOD_PRIOR, GOOD_SHIFT, GOOD_PRIOR, GOOD_SHIFT])
    m1 = MockModel(lambda req: next(flaky))
    s1 = await run_bench(h, items, m1, out, RunOptions(retries=0, concurrency=1))
    assert (s1.ok, s1.causes["empty"]) == (2, 2)
    m2 = MockModel(by_stage(GOOD_PRIOR, GOOD_SHIFT))
    s2 = await run_bench(h, items, m2, out, RunOptions(retries=0))
    assert (s2.done, s2.ok, s2.total) == (2, 4, 4) and len(m2.requests) == 4
    header, recs, _ = read_results(out)
    assert header is not None and header.bench_id == "b1" and len(recs) == 6  # appended, nothing lost
    rep = build_report(recs)
    comp = rep.tables["completion"]
    assert comp.rows[0][comp.columns.index("valid")] == 4  # the last record per observation wins
    with pytest.raises(ResultsMismatch, match="protocol"):
        await run_bench(h, items, m2, out, RunOptions(protocol="independent"))


def test_prompt_text_is_quoted_and_complete():
    h, items = bench(1)
    p = build_prompts(h, items[0], items[0].observers[0], context_window=None, max_tokens=64)
    assert "{" + "history}" not in p.history and "Werewolves" in p.prior and "Village" in p.prior
    assert p.system.startswith("You are Cid, a player in a game of Werewolf.")
    assert '"Ann": "<label>"' in p.prior


async def test_shortening_uses_the_model_tokenizer_when_it_has_one(tmp_path):
    h, items = bench(1, history=60)
    obs = items[0].observers[0]

    def words(text: str) -> int:
        return len(text.split())

    p = build_prompts(h, items[0], obs, context_window=700, max_tokens=64, count_tokens=words)
    by_chars = build_prompts(h, items[0], obs, context_window=700, max_tokens=64)
    assert 0 < p.dropped < by_chars.dropped  # words are fewer than characters / 3
    msgs = p.shift_messages('{"Ann": "+1", "Bob": "0"}', "Ann +1, Bob 0")
    assert sum(words(m.content) for m in msgs) + 64 + 64 <= 700

    class Tokenizing(MockModel):
        counts_tokens = True

        def count_tokens(self, text: str) -> int:
            return words(text)

    m = Tokenizing(by_stage(GOOD_PRIOR, GOOD_SHIFT), context_window=700)
    await run_bench(h, items, m, tmp_path / "r.jsonl", RunOptions(max_tokens=64))
    header, recs, _ = read_results(tmp_path / "r.jsonl")
    assert header.options["token_count"] == "model tokenizer"
    assert recs[0].history_dropped == p.dropped


async def test_shift_call_follows_its_prior_call(tmp_path):
    # one slot: the shift of an observer comes right after its prior, so a single-slot prefix
    # cache (llama.cpp) reuses the shared system + history
    h, items = bench(2)
    m = MockModel(by_stage(GOOD_PRIOR, GOOD_SHIFT))
    await run_bench(h, items, m, tmp_path / "r.jsonl", RunOptions(concurrency=1))
    stages = [(r.meta["item_id"], r.meta["observer"], r.meta["stage"]) for r in m.requests]
    assert len(stages) == 8
    for k in range(0, 8, 2):
        assert stages[k][2] == "prior" and stages[k + 1][2] == "shift" and stages[k][:2] == stages[k + 1][:2]


async def test_resume_after_a_torn_last_line_loses_nothing(tmp_path):
    h, items = bench(2)
    out = tmp_path / "r.jsonl"
    await run_bench(h, items, MockModel(by_stage(GOOD_PRIOR, GOOD_SHIFT)), out, RunOptions(concurrency=1))
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])  # crash in the middle of the last record
    _, recs, problems = read_results(out)
    assert len(recs) == 3 and len(problems) == 1
    s = await run_bench(h, items, MockModel(by_stage(GOOD_PRIOR, GOOD_SHIFT)), out, RunOptions())
    assert (s.done, s.ok) == (1, 4)
    _, recs, problems = read_results(out)
    assert len(recs) == 4 and len(problems) == 1  # only the torn line is skipped


# Elicitation refuses a context window too small for the generation budget.


@pytest.mark.parametrize(("window", "max_tokens"), [(100, 1024), (1088, 1024)])
def test_run_refuses_a_window_smaller_than_the_generation_budget(
    bench: Path, tmp_path: Path, window: int, max_tokens: int
) -> None:
    # a 100-token window with --max-tokens 1024 used to run every observation with all its
    # history dropped and prompts that still could not fit; 1088 = 1024 + 64 reserved is too small too
    out = tmp_path / "res.jsonl"
    args = ["beliefshift", "run", str(bench), "--model", f"mock/x?context_window={window}", "--out", str(out)]
    res = CliRunner().invoke(app, [*args, "--max-tokens", str(max_tokens)])
    assert res.exit_code == 2, res.output
    msg = " ".join(res.output.split())
    assert f"--context-window: {window} tokens cannot hold --max-tokens {max_tokens} plus the 64 reserved" in msg
    assert not out.exists()


def test_run_accepts_a_window_just_above_the_budget(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "res.jsonl"
    args = [
        "beliefshift",
        "run",
        str(bench),
        "--model",
        "mock/x?context_window=1089",
        "--out",
        str(out),
        "--limit",
        "1",
    ]
    res = CliRunner().invoke(app, [*args, "--max-tokens", "1024"])
    assert res.exit_code == 0, res.output
    assert out.exists()


# A model answering 0/0 to every prior and shift is flagged: its valid answers are not informative.


runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def _zero(req: ChatRequest) -> dict[str, str]:
    return {n: "0" for n in req.json_schema["properties"]}


def _varied(req: ChatRequest) -> dict[str, str]:
    h = hashlib.sha256(req.messages[-1].content.encode()).digest()
    return {n: LABELS[h[i] % 7] for i, n in enumerate(req.json_schema["properties"])}


def _register() -> None:
    register_backend("mockconst", lambda model, **kw: MockModel(_zero, name=f"mockconst/{model}"))
    register_backend("mockvaried", lambda model, **kw: MockModel(_varied, name=f"mockvaried/{model}"))


def test_a_model_answering_zero_everywhere_is_flagged_in_run_and_report(bench: Path, tmp_path: Path) -> None:
    _register()
    header, _ = read_bench(bench)
    n = header.n_observations
    assert n >= 10
    res = runner.invoke(
        app, ["beliefshift", "run", str(bench), "--model", "mockconst/z", "--out", str(tmp_path / "z.jsonl")]
    )
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"{n}/{n} observations valid, 0 informative (0.0 % completion)" in out
    assert f"answers do not vary (every prior 0/0, every shift 0/0 over {n} valid observations)" in out
    assert "completion below the 95 % target" in out
    res = runner.invoke(
        app, ["beliefshift", "run", str(bench), "--model", "mockvaried/v", "--out", str(tmp_path / "v.jsonl")]
    )
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"{n}/{n} observations valid, {n} informative (100.0 % completion)" in out
    assert "do not vary" not in out
    res = runner.invoke(
        app,
        ["beliefshift", "report", str(tmp_path / "z.jsonl"), str(tmp_path / "v.jsonl"), "--out", str(tmp_path / "r")],
    )
    assert res.exit_code == 0, res.output
    assert "Answers that do not vary (flagged, not informative): mockconst/z (every prior 0/0, every shift 0/0)" in (
        " ".join(res.output.split())
    )
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO((tmp_path / "r" / "completion.csv").read_text()))}
    assert (rows["mockconst/z"]["valid"], rows["mockconst/z"]["informative"]) == (str(n), "0")
    assert float(rows["mockconst/z"]["completion %"]) == 0.0
    assert float(rows["mockvaried/v"]["completion %"]) == 100.0


def test_too_few_answers_to_judge_constancy_get_a_note_and_no_zero_interval(bench: Path, tmp_path: Path) -> None:
    """4 valid observations all 0/0: not flagged (under 10), but a note says they are too few to judge,
    and intervals over equal answers are not printed as ``0.00 ± 0.00``."""
    _register()
    res = runner.invoke(
        app,
        ["beliefshift", "run", str(bench), "--model", "mockconst/z", "--limit", "2", "--out", str(tmp_path / "z.jsonl")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    m = re.search(r"(\d+)/(\d+) observations valid, (\d+) informative", out)
    assert m is not None and m.group(1) == m.group(2) == m.group(3)
    n = int(m.group(1))
    assert 0 < n < CONSTANT_MIN_ANSWERS
    assert "do not vary" not in out  # too few to flag
    assert (
        f"note: too few valid observations ({n} < {CONSTANT_MIN_ANSWERS}) to judge whether the answers vary; "
        "completion counts them as informative" in out
    )
    res = runner.invoke(app, ["beliefshift", "report", str(tmp_path / "z.jsonl"), "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"Too few valid observations (under {CONSTANT_MIN_ANSWERS}) to judge whether the answers vary" in out
    assert f"mockconst/z ({n})" in out
    md = "".join(p.read_text(encoding="utf-8") for p in sorted((tmp_path / "r").glob("*.md")))
    assert md and "± 0.00" not in md and "0.00 ± 0.00" not in out
    assert "or every response is the same value (zero variance)" in md + out


def test_an_interval_over_equal_values_is_no_interval() -> None:
    assert fmt_cell(Stat(0.0, 0.0, 2)) == "0.00"  # two identical answers: zero variance, no interval
    assert fmt_cell(Stat(1.5, math.nan, 1)) == "1.50"  # one answer
    assert fmt_cell(Stat(1.5, 0.25, 4)) == "1.50 ± 0.25"
