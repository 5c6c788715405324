"""``read_header`` refuses exactly the games ``read_game`` refuses (the viewer counts shared game
ids by it), and returns the same header for the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafialab.record import LogFormatError, read_game, read_header
from tests.helpers import write_game_dir


@pytest.fixture(scope="module")
def header(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from typer.testing import CliRunner

    from mafialab.cli import app

    out = tmp_path_factory.mktemp("hdr")
    res = CliRunner().invoke(app, ["play", "-r", "werewolf7", "-a", "scripted", "-s", "3", "-o", str(out)])
    assert res.exit_code == 0, res.output
    (file,) = out.glob("*/game.jsonl")
    return json.loads(file.read_text(encoding="utf-8").splitlines()[0])


def _cases(h: dict) -> dict[str, list]:
    no_roster = {k: v for k, v in h.items() if k != "roster"}
    return {
        "valid": [h],
        "newer schema": [{**h, "schema_version": 99}],
        "no roster": [no_roster],
        "setup first": [{"kind": "setup", "players": []}, h],
        "invalid then valid": [no_roster, h],
        "not a version": [{**h, "schema_version": "x"}],
    }


CASES = ["valid", "newer schema", "no roster", "setup first", "invalid then valid", "not a version"]


@pytest.mark.parametrize("case", CASES)
def test_read_header_agrees_with_read_game(header: dict, tmp_path: Path, case: str) -> None:
    d = write_game_dir(tmp_path, _cases(header)[case])
    try:
        log = read_game(d, warn=False)
    except LogFormatError:
        with pytest.raises(LogFormatError):
            read_header(d)
    else:
        assert read_header(d) == log.header


def test_a_torn_first_line_is_skipped_by_both(header: dict, tmp_path: Path) -> None:
    d = tmp_path / "g1"
    d.mkdir()
    (d / "game.jsonl").write_text('{"kind": "game_st\n' + json.dumps(header) + "\n", encoding="utf-8")
    assert read_header(d) == read_game(d, warn=False).header
