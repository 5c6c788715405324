import re

from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import CALLS_FILE, iter_game_dirs, iter_jsonl, read_game
from mafialab.testing import OpenAIStub

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_models_list():
    res = runner.invoke(app, ["models", "list"])
    assert res.exit_code == 0, res.output
    for word in ("openai", "local", "mock", "local/smollm2", "local/gemma3-270m"):
        assert word in res.output
    assert "under --ray the limit holds for all workers of the cluster together" in res.output


def test_play_against_openai_compatible_server(tmp_path):
    with OpenAIStub().in_thread() as stub:
        res = runner.invoke(
            app,
            ["play", "--agents", "openai/stub-model", "--seat", "0=scripted", "--base-url", stub.base_url,
             "--max-tokens", "40", "--temperature", "0.5", "--games", "2", "--parallel", "2", "--out", str(tmp_path)],
        )  # fmt: skip
        n_requests = len(stub.requests)
        bodies = list(stub.requests)
    assert res.exit_code == 0, res.output
    dirs = iter_game_dirs(tmp_path)
    assert len(dirs) == 2
    lines = [c for d in dirs for _, c in iter_jsonl(d / CALLS_FILE)]
    calls = [c for c in lines if c["kind"] == "call"]
    summaries = [c for c in lines if c["kind"] == "call_summary"]
    assert len(summaries) == 2 and all(s["calls"] > 0 for s in summaries)  # one closing record per game
    # one preflight probe for the run (the dialect is chosen once) plus one call per model decision
    assert n_requests == len(calls) + 1
    assert "structured output as json_schema" in res.output
    assert {c["status"] for c in calls} == {"ok"} and {c["model"] for c in calls} == {"openai/stub-model"}
    assert all(c["seat"] != 0 for c in calls)
    game_bodies = bodies[1:]
    assert all(b["response_format"]["type"] == "json_schema" for b in game_bodies)
    assert all(b["max_tokens"] == 40 and b["temperature"] == 0.5 for b in game_bodies)
    log = read_game(dirs[0])
    assert [s.agent for s in log.header.roster][:2] == ["scripted", "openai/stub-model"]
    assert log.status is not None and not log.status.degraded and log.status.answered_share == 1.0
    assert re.search(r"\b\d+ model calls?, \d+ usable", res.output), res.output


def test_play_refuses_unreachable_server(tmp_path):
    res = runner.invoke(
        app, ["play", "--agents", "openai/x", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path)]
    )
    assert res.exit_code == 2
    assert "preflight" in res.output and "Traceback" not in res.output
    assert not iter_game_dirs(tmp_path)


def test_play_bad_model_option_is_clear(tmp_path):
    res = runner.invoke(app, ["play", "--agents", "openai/x?bse_url=1", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "unknown option 'bse_url'" in res.output


def test_with_model_options():
    from mafialab.agents import with_model_options
    from mafialab.models import parse_model_spec

    opts = {"base_url": "http://h:1/v1", "api_key_env": "K", "max_tokens": 9}
    assert with_model_options("scripted", opts) == "scripted"
    model, o = parse_model_spec(with_model_options("openai/m?max_tokens=3", opts))
    assert model == "openai/m" and o == {"base_url": "http://h:1/v1", "api_key_env": "K", "max_tokens": 3}
    model, o = parse_model_spec(with_model_options("local/smollm2", opts))
    assert o == {"max_tokens": 9}


def test_play_prints_the_dialect_and_refuses_a_server_usable_in_none(tmp_path):
    with OpenAIStub(server="llama-cpp-python").in_thread() as stub:
        res = runner.invoke(
            app, ["play", "--agents", "openai/m", "--base-url", stub.base_url, "--seed", "2", "--out", str(tmp_path)]
        )
    assert res.exit_code == 0, res.output
    assert "openai/m: structured output as json_object (tried json_schema: HTTP 500" in " ".join(res.output.split())
    with OpenAIStub(responder=lambda b: "no JSON here").in_thread() as stub:
        res = runner.invoke(
            app, ["play", "--agents", "openai/m", "--base-url", stub.base_url, "--out", str(tmp_path / "b")]
        )
        assert res.exit_code == 2 and "no schema-valid answer" in res.output and "--allow-degraded" in res.output
        assert not (tmp_path / "b").exists() or not iter_game_dirs(tmp_path / "b")
        res = runner.invoke(
            app,
            ["play", "--agents", "openai/m", "--base-url", stub.base_url, "--allow-degraded", "--out", str(tmp_path / "b")],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "warning:" in res.output and "DEGRADED" in res.output
