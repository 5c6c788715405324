"""Log readers and the writer never pass on or choke on a lone surrogate ("\\ud800", valid JSON)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from mafialab.engine import Speech, Visibility
from mafialab.record import JsonlWriter, iter_jsonl


def test_a_lone_surrogate_escape_is_read_as_fffd_and_a_valid_pair_is_kept(tmp_path: Path):
    f = tmp_path / "x.jsonl"
    f.write_text('{"a": "x\\ud800y", "b": ["\\udfff"], "\\ud800k": 1}\n{"e": "\\ud83d\\ude00"}\n', encoding="ascii")
    (_, first), (_, second) = list(iter_jsonl(f))
    assert first == {"a": "x\ufffdy", "b": ["\ufffd"], "\ufffdk": 1}
    assert second == {"e": "\U0001f600"}
    json.dumps(first, ensure_ascii=False).encode("utf-8")  # can be written again


def test_the_writer_writes_what_utf8_cannot_encode_as_fffd_and_says_so(tmp_path: Path, caplog):
    path = tmp_path / "g" / "game.jsonl"
    ev = Speech(
        seq=1, round=1, phase="day", visibility=Visibility(public=True), seat=0, text="hi \ud800", index=0, decision=3
    )
    with caplog.at_level(logging.WARNING, logger="mafialab.record"), JsonlWriter(path, clock=None) as w:
        w.write(ev)
        w.write({"note": "\udc00\udc01"})
    lines = [json.loads(x) for x in path.read_bytes().decode("utf-8").splitlines()]
    assert lines[0]["text"] == "hi \ufffd" and lines[0]["kind"] == "speech"
    assert lines[1] == {"note": "\ufffd\ufffd"}
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        f"{path}: 1 character UTF-8 cannot encode written as U+FFFD",
        f"{path}: 2 characters UTF-8 cannot encode written as U+FFFD",
    ]
