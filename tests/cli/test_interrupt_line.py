"""A Ctrl-C prints one line in the format of every other error (``error: …``), exit code 130,
whether it comes while the commands load, in a command with its own message, or in one without."""

from __future__ import annotations

import sys

import pytest
import typer

import mafialab.cli as cli


def _run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tree) -> tuple[int, str]:
    monkeypatch.setattr(cli, "_command_tree", tree)
    monkeypatch.setattr(sys, "argv", ["mafialab", "go"])

    def _exit(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(cli.os, "_exit", _exit)
    with pytest.raises(SystemExit) as stop:
        cli.main()
    return int(stop.value.code or 0), capsys.readouterr().err


def _app(body) -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.command("go")(body)
    app.command("other")(lambda: None)
    return app


def test_ctrl_c_while_the_commands_load_is_an_error_line(monkeypatch, capsys) -> None:
    def tree():
        raise KeyboardInterrupt

    code, err = _run_main(monkeypatch, capsys, tree)
    assert (code, err) == (130, f"error: {cli.INTERRUPTED_AT_START}\n")


def test_ctrl_c_in_a_command_without_its_own_message_is_an_error_line(monkeypatch, capsys) -> None:
    def go() -> None:
        raise KeyboardInterrupt

    code, err = _run_main(monkeypatch, capsys, lambda: _app(go))
    assert (code, err) == (130, "error: interrupted\n")


def test_play_s_own_interrupt_message_has_the_same_prefix(capsys, tmp_path) -> None:
    from mafialab.cli._play import interrupted

    for out in (None, tmp_path):
        with pytest.raises(typer.Exit) as stop:
            interrupted(out)
        assert stop.value.exit_code == 130
        err = capsys.readouterr().err
        assert err.startswith("error: interrupted") and err.count("\n") == 1, err


def test_ctrl_c_turned_into_a_schema_error_while_a_module_loads_is_an_interrupt(monkeypatch, capsys) -> None:
    # pydantic-core re-raises a SIGINT during schema building as SchemaError, unchained
    from pydantic_core import SchemaError

    def body() -> None:
        raise SchemaError("Error building 'literal' serializer: KeyboardInterrupt: ")

    code, err = _run_main(monkeypatch, capsys, lambda: _app(body))
    assert (code, err) == (130, f"error: {cli.INTERRUPTED_AT_START}\n")


def test_an_error_raised_from_a_ctrl_c_is_an_interrupt(monkeypatch, capsys) -> None:
    def tree():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as stop:
            raise RuntimeError("could not finish loading") from stop

    code, err = _run_main(monkeypatch, capsys, tree)
    assert (code, err) == (130, f"error: {cli.INTERRUPTED_AT_START}\n")


def test_other_errors_while_loading_are_not_taken_for_a_ctrl_c(monkeypatch, capsys) -> None:
    from pydantic_core import SchemaError

    def body() -> None:
        raise SchemaError("Error building 'literal' serializer: bad value")

    monkeypatch.setattr(cli, "_command_tree", lambda: _app(body))
    monkeypatch.setattr(sys, "argv", ["mafialab", "go"])
    with pytest.raises(SchemaError, match="bad value"):
        cli.main()
