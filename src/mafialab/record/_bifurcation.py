"""Bifurcation-experiment directories: typed records, reader, and the MafiaScope importer.

A bifurcation directory holds one experiment (``docs/counterfactual.md``):

- ``bifurcation.json``: a :class:`BifurcationHeader` (parameters and provenance);
- ``points.jsonl``: one :class:`BifurcationPoint` per fork point (a decision to vote);
- ``forks.jsonl``: one :class:`ForkOutcome` per kept variant, written when its fork ends;
- ``samples/<point_id>.jsonl``: the raw resamples of a point (runs only);
- ``forks/<fork id>/``: the fork games (mafialab game directories).

MafiaScope's released bifurcation runs (``points.json``, ``fork_results.jsonl``, optional
``summary.json``, ``forks/<id>/game.jsonl``) are read directly by
:func:`read_bifurcation` and converted by :func:`import_mafiascope_bifurcation`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from mafialab._files import write_atomic
from mafialab.config import validation_message
from mafialab.record._io import GAME_FILE, JsonlWriter, iter_jsonl

BIFURCATION_FILE = "bifurcation.json"
"""Header file of a bifurcation directory."""
POINTS_FILE = "points.jsonl"
"""One :class:`BifurcationPoint` per line."""
FORKS_FILE = "forks.jsonl"
"""One :class:`ForkOutcome` per line (append-only; the last line of a variant wins)."""
SAMPLES_DIR = "samples"
"""Raw resamples, ``samples/<point_id>.jsonl``."""
FORK_GAMES_DIR = "forks"
"""Fork game directories, ``forks/<fork id>/``."""

BIFURCATION_SCHEMA_VERSION = 1
"""Version of the bifurcation-directory format written by this mafialab."""

NO_VOTE = "(no vote)"
"""Key of ``target_counts`` for samples that cast no valid vote (no name, a dead player,
the voter itself)."""

QUADRANTS = ("correct_good", "policy_gap", "perception_gap", "luck")
"""Quadrants of an innocent day vote (assessment right/wrong x move good/bad), in the
order right&good, right&bad, wrong&bad, wrong&good (MafiaScope §6)."""

_M = TypeVar("_M", bound=BaseModel)

_WINNER = {"Mafia": "mafia", "Villagers": "town", "Village": "town", "Town": "town", "mafia": "mafia", "town": "town"}
_STAGE = {"factual": "factual", "target_coverage": "target_coverage", "maxmin": "farthest", "farthest": "farthest"}


class BifurcationHeader(BaseModel):
    """``bifurcation.json``: what was run, with which parameters.

    Attributes:
        kind: Always ``"bifurcation"``.
        schema_version: Version of the bifurcation-directory format (1).
        experiment: Free name of the experiment.
        source: ``"mafialab"`` or ``"mafiascope"`` (imported).
        parameters: Run parameters (``resamples``, ``keep``, ``temperature``, ``embed``,
            ``seed``, ``points`` spec, model), as given.
        meta: Provenance extras (source title, date, pool sizes).
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["bifurcation"] = "bifurcation"
    schema_version: int = BIFURCATION_SCHEMA_VERSION
    experiment: str = ""
    source: str = "mafialab"
    parameters: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)


class BifurcationPoint(BaseModel):
    """One fork point: a recorded day vote whose statement is resampled and replaced.

    Attributes:
        point_id: Unique id within the experiment.
        game_id: Parent game id.
        decision: Decision id of the vote in the parent (``None`` for imported points).
        fork_point: The source's fork coordinate (MafiaScope: ``[round, msg_seq]`` of the last
            public message before the vote), if any.
        round: Round of the vote (>= 1).
        voter: Voter's seat name.
        quadrant: ``correct_good``, ``policy_gap``, ``perception_gap``, ``luck``, or another
            label (``random``) for control draws; ``None`` when the vote has none.
        factual_target: The parent's counted vote target (``None``: no valid vote).
        parent_winner: Winning team id of the parent (``"town"``/``"mafia"``).
        mafia: Names of the real hidden-team members.
        alive: Names alive at the vote (a vote for anyone else casts no vote).
        target_counts: Vote target of every resample, counted; :data:`NO_VOTE` for samples
            without a valid vote. ``None`` when the samples are not known.
        diversity: Source-reported diversity of the kept variants (mean pairwise cosine of
            the selected variants and of random draws), if any.
        extra: Source fields kept verbatim.
        kind: The decision kind of the point when it is not a day vote: ``team_vote`` (a
            mission game's approve/reject vote); ``None`` for a day vote.
        factual_choice: Team votes: the parent's answer (``approve``/``reject``; ``None``: blank).
        choice_counts: Team votes: the answer of every resample, counted (:data:`NO_VOTE` for
            a blank one); ``None`` when not known.
        factual_passed: Team votes: whether the parent's proposal passed.

    The four team-vote fields are left out of the JSON while unset, so a day vote's line
    reads as before they existed.
    """

    model_config = ConfigDict(extra="forbid")

    point_id: str
    game_id: str
    decision: int | None = None
    fork_point: list[int] | None = None
    round: int = Field(ge=0)
    voter: str
    quadrant: str | None = None
    factual_target: str | None = None
    parent_winner: Literal["town", "mafia"] | None = None
    mafia: list[str] = Field(default_factory=list)
    alive: list[str] | None = None
    target_counts: dict[str, int] | None = None
    diversity: dict[str, Any] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    kind: str | None = None
    factual_choice: str | None = None
    choice_counts: dict[str, int] | None = None
    factual_passed: bool | None = None

    @model_serializer(mode="wrap")
    def _drop_unset_team_vote(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _drop_none(handler(self), ("kind", "factual_choice", "choice_counts", "factual_passed"))


class ForkOutcome(BaseModel):
    """One kept variant of a point, injected as the voter's answer and played out once.

    Attributes:
        point_id: The point.
        variant_idx: 0 for the factual answer, then 1, 2, ... in selection order.
        source: ``"factual"`` (the parent's own answer, not regenerated) or ``"sampled"``.
        stage: Why the variant was kept: ``"factual"``, ``"target_coverage"`` (first
            sample of a vote target not yet covered) or ``"farthest"`` (farthest-point
            selection by cosine distance); ``None`` if unknown.
        sample_idx: Index of the variant among the point's samples (``None`` for factual).
        text: The injected statement (``None`` when the source does not give it).
        vote_target: Target the injected statement votes for; ``None``: no valid vote.
        fork_id: Id of the fork game.
        winner: Winning team id of the fork; ``None`` if it did not finish.
        rounds: Rounds the fork lasted.
        error: Why the fork has no outcome, if it has none.
        count: How many of the point's usable samples are this variant's answer (the same
            text, whitespace aside, and vote target): identical samples are one variant,
            forked once. 0 for a factual answer no sample repeated; ``None`` when not
            recorded (runs before distinct variants, imported runs).
        choice: Team votes: the injected answer (``approve``/``reject``; ``None``: blank, or a
            day vote).
        proposal_passed: Team votes: whether the proposal voted on passed in the fork.

    ``choice`` and ``proposal_passed`` are left out of the JSON while unset (day votes).
    """

    model_config = ConfigDict(extra="forbid")

    point_id: str
    variant_idx: int = Field(ge=0)
    source: Literal["factual", "sampled"] = "sampled"
    stage: str | None = None
    sample_idx: int | None = None
    text: str | None = None
    vote_target: str | None = None
    fork_id: str | None = None
    winner: Literal["town", "mafia"] | None = None
    rounds: int | None = None
    error: str | None = None
    count: int | None = Field(default=None, ge=0)
    choice: str | None = None
    proposal_passed: bool | None = None

    @model_serializer(mode="wrap")
    def _drop_unset_team_vote(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _drop_none(handler(self), ("choice", "proposal_passed"))


def _drop_none(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``data`` without those of ``keys`` whose value is ``None`` (day-vote records read as before)."""
    for k in keys:
        if data.get(k, 0) is None:
            del data[k]
    return data


class Bifurcation(BaseModel):
    """A whole experiment in memory: header, points, and the latest outcome per variant.

    Attributes:
        path: Directory it was read from.
        header: The header.
        points: Points in file order.
        forks: Fork outcomes, one per ``(point_id, variant_idx)``, in file order.
        problems: Unreadable or inconsistent lines (``file:line: why``), skipped.
    """

    path: Path
    header: BifurcationHeader
    points: list[BifurcationPoint]
    forks: list[ForkOutcome]
    problems: list[str] = Field(default_factory=list)


def _winner(value: Any) -> str | None:
    return _WINNER.get(str(value)) if value is not None else None


def is_mafiascope_bifurcation(path: Path) -> bool:
    """Whether ``path`` is a MafiaScope bifurcation directory (has both result files).

    The files are ``points.json`` and ``fork_results.jsonl``.
    """
    path = Path(path)
    return (path / "points.json").is_file() and (path / "fork_results.jsonl").is_file()


def is_bifurcation_dir(path: Path) -> bool:
    """Whether ``path`` is a mafialab bifurcation directory (``bifurcation.json``)."""
    return (Path(path) / BIFURCATION_FILE).is_file()


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not readable JSON ({err})") from None


def _fork_setup(path: Path) -> dict[str, Any] | None:
    """The ``setup`` record of a MafiaScope fork log (``None`` if absent)."""
    for _, rec in iter_jsonl(path):
        if rec.get("kind") == "setup":
            return rec
    return None


def _fork_winner(path: Path) -> tuple[str | None, int | None]:
    winner = rounds = None
    for _, rec in iter_jsonl(path):
        if rec.get("kind") == "game_over":
            winner = _winner(rec.get("winner"))
            rounds = rec.get("round") if isinstance(rec.get("round"), int) else None
    return winner, rounds


def _read_mafiascope(path: Path) -> Bifurcation:
    """Read a MafiaScope bifurcation directory into the mafialab model (nothing written)."""
    problems: list[str] = []
    pj = _load_json(path / "points.json")
    raw_points = pj.get("points") if isinstance(pj, dict) else pj
    if not isinstance(raw_points, list):
        raise ValueError(f"{path / 'points.json'}: field 'points': expected a list of points")
    summary: dict[str, Any] = {}
    spath = path / "summary.json"
    if spath.is_file():
        summary = _load_json(spath)
        if not isinstance(summary, dict):
            raise ValueError(f"{spath}: expected a JSON object")
    sum_points = {str(p.get("point_id")): p for p in summary.get("points") or [] if isinstance(p, dict)}
    points: list[BifurcationPoint] = []
    for i, rp in enumerate(raw_points):
        try:
            points.append(_mafiascope_point(rp, sum_points.get(str(rp["point_id"]), {})))
        except (KeyError, TypeError, ValueError) as err:
            problems.append(f"{path / 'points.json'}: point {i}: unusable ({type(err).__name__}: {err}), skipped")
    by_id = {p.point_id: p for p in points}
    sum_variants = {(pid, v.get("variant_idx")): v for pid, sp in sum_points.items() for v in sp.get("variants") or []}
    outcomes: dict[tuple[str, int], ForkOutcome] = {}
    for n, rec in iter_jsonl(path / "fork_results.jsonl", problems):
        try:
            pid = str(rec["point_id"])
            idx = int(rec["variant_idx"])
            if pid not in by_id:
                problems.append(f"{path / 'fork_results.jsonl'}:{n}: unknown point {pid!r}, skipped")
                continue
            outcomes[(pid, idx)] = _mafiascope_outcome(rec, idx, by_id[pid], sum_variants.get((pid, idx), {}),
                                                       path / "forks")  # fmt: skip
        except (KeyError, TypeError, ValueError) as err:
            problems.append(f"{path / 'fork_results.jsonl'}:{n}: unusable ({type(err).__name__}: {err}), skipped")
    header = _mafiascope_header(path, summary, pj)
    return Bifurcation(path=path, header=header, points=points, forks=list(outcomes.values()), problems=problems)


def _mafiascope_point(rp: dict[str, Any], sp: dict[str, Any]) -> BifurcationPoint:
    """One point of MafiaScope's ``points.json`` (``rp``), with its ``summary.json`` entry ``sp`` (may be empty).

    Raises:
        KeyError, TypeError, ValueError: a required field is missing or of the wrong type.
    """
    roles = rp.get("roles_alive")
    mafia: list[str] = []
    if isinstance(roles, dict):
        mafia = sorted(n for n, r in roles.items() if r in ("Mafia", "Spy"))
    counts = sp.get("target_dist_samples")
    tc = None
    if isinstance(counts, dict):
        tc = {(NO_VOTE if k in ("None", "null", "") else str(k)): int(v) for k, v in counts.items()}
    fork = rp.get("fork")
    keep = ("s1", "move_good", "vote_seq", "in_3b_replay")
    return BifurcationPoint(
        point_id=str(rp["point_id"]),
        game_id=str(rp["game_id"]),
        fork_point=[int(x) for x in fork] if isinstance(fork, list) else None,
        round=int(rp["round"]),
        voter=str(rp["voter"]),
        quadrant=rp.get("quadrant"),
        factual_target=rp.get("target", sp.get("factual_target")),
        parent_winner=_winner(rp.get("winner", sp.get("parent_winner"))),  # type: ignore[arg-type]
        mafia=mafia,
        alive=[str(a) for a in rp["alive"]] if isinstance(rp.get("alive"), list) else None,
        target_counts=tc,
        diversity=sp.get("diversity") if isinstance(sp.get("diversity"), dict) else None,
        extra={k: rp[k] for k in keep if k in rp},
    )


def _mafiascope_outcome(rec: dict[str, Any], idx: int, point: BifurcationPoint, sv: dict[str, Any],
                        forks_dir: Path) -> ForkOutcome:  # fmt: skip
    """One line of MafiaScope's ``fork_results.jsonl`` (``rec``, variant ``idx`` of ``point``).

    ``sv`` is the variant's ``summary.json`` entry (may be empty). A fork game log under
    ``forks_dir`` fills in a missing winner, and the point's hidden team when unknown.
    """
    fid = rec.get("fork_game_id") or sv.get("fork_game_id")
    winner = _winner(rec.get("winner"))
    rounds = rec.get("rounds")
    gpath = forks_dir / str(fid) / GAME_FILE
    if fid and gpath.is_file():
        if winner is None:
            winner, rounds = _fork_winner(gpath)
        if not point.mafia:
            setup = _fork_setup(gpath)
            if setup:
                point.mafia = sorted(
                    str(p.get("name")) for p in setup.get("players") or [] if p.get("role") in ("Mafia", "Spy")
                )
    return ForkOutcome(
        point_id=point.point_id,
        variant_idx=idx,
        source="factual" if rec.get("source", sv.get("source")) == "factual" else "sampled",
        stage=_STAGE.get(str(sv.get("stage")), sv.get("stage")),
        sample_idx=rec.get("sample_idx"),
        vote_target=rec.get("vote_target"),
        fork_id=str(fid) if fid else None,
        winner=winner,  # type: ignore[arg-type]
        rounds=int(rounds) if isinstance(rounds, int) else None,
        error=sv.get("error") or rec.get("error"),
    )


def _mafiascope_header(path: Path, summary: dict[str, Any], pj: Any) -> BifurcationHeader:
    """The experiment header from MafiaScope's ``summary.json`` (``summary``) and ``points.json`` (``pj``)."""
    sampling: dict[str, Any] = summary["sampling"] if isinstance(summary.get("sampling"), dict) else {}
    return BifurcationHeader(
        experiment=str(summary.get("title") or path.name),
        source="mafiascope",
        parameters={
            "resamples": sampling.get("n_samples"),
            "keep": sampling.get("n_selected"),
            "temperature": sampling.get("temperature"),
            "max_tokens": sampling.get("max_tokens"),
            "model": sampling.get("model"),
            "seed": pj.get("seed") if isinstance(pj, dict) else None,
            "per_quadrant": pj.get("per_quadrant") if isinstance(pj, dict) else None,
        },
        meta={
            k: v
            for k, v in {
                "date": summary.get("date"),
                "pool_sizes": pj.get("pool_sizes") if isinstance(pj, dict) else None,
                "source_dir": path.name,
            }.items()
            if v is not None
        },
    )


def _read_native(path: Path) -> Bifurcation:
    problems: list[str] = []
    try:
        header = BifurcationHeader.model_validate(_load_json(path / BIFURCATION_FILE))
    except ValidationError as err:
        raise ValueError(f"{path / BIFURCATION_FILE}: {validation_message(err, limit=1)}") from None
    if header.schema_version > BIFURCATION_SCHEMA_VERSION:
        raise ValueError(
            f"{path / BIFURCATION_FILE}: schema_version {header.schema_version} is newer than this mafialab "
            f"reads ({BIFURCATION_SCHEMA_VERSION}); upgrade mafialab"
        )
    points: list[BifurcationPoint] = []
    seen: set[str] = set()
    for _, p in _valid_lines(path / POINTS_FILE, BifurcationPoint, "point", problems):
        if p.point_id in seen:  # a resumed run re-describes a point: the last line wins
            points = [q for q in points if q.point_id != p.point_id]
        seen.add(p.point_id)
        points.append(p)
    outcomes: dict[tuple[str, int], ForkOutcome] = {}
    fpath = path / FORKS_FILE
    for n, f in _valid_lines(fpath, ForkOutcome, "fork", problems):
        if f.point_id not in seen:
            problems.append(f"{fpath}:{n}: fork of unknown point {f.point_id!r}, skipped")
            continue
        outcomes.pop((f.point_id, f.variant_idx), None)
        outcomes[(f.point_id, f.variant_idx)] = f
    return Bifurcation(path=path, header=header, points=points, forks=list(outcomes.values()), problems=problems)


def _valid_lines(path: Path, model: type[_M], what: str, problems: list[str]) -> Iterator[tuple[int, _M]]:
    """``(line, record)`` for each line of the JSONL file ``path`` (if any) that is a valid ``model``.

    A line that is not is named in ``problems`` (``<file>:<line>: unusable <what> (...)``) and skipped.
    """
    if not path.is_file():
        return
    for n, rec in iter_jsonl(path, problems):
        try:
            obj = model.model_validate(rec)
        except ValidationError as err:
            problems.append(f"{path}:{n}: unusable {what} ({validation_message(err, limit=1)})")
            continue
        yield n, obj


def read_bifurcation(path: Path) -> Bifurcation:
    """Read a bifurcation directory: mafialab's own, or a MafiaScope release read in place.

    Args:
        path: A directory with ``bifurcation.json`` (mafialab) or with ``points.json`` and
            ``fork_results.jsonl`` (MafiaScope; ``summary.json`` and ``forks/`` optional).

    Returns:
        The experiment; unreadable lines are listed in ``problems`` and skipped.

    Raises:
        FileNotFoundError: If ``path`` is neither kind of bifurcation directory.
        ValueError: If a whole-file record (header, ``points.json``) is unreadable, naming
            the file and field.
    """
    path = Path(path)
    if is_bifurcation_dir(path):
        return _read_native(path)
    if is_mafiascope_bifurcation(path):
        return _read_mafiascope(path)
    raise FileNotFoundError(
        f"{path}: not a bifurcation directory (needs {BIFURCATION_FILE}, or MafiaScope's points.json "
        "and fork_results.jsonl)"
    )


def write_points(path: Path, points: Iterable[BifurcationPoint]) -> None:
    """Append points to ``path/points.jsonl`` (created)."""
    with JsonlWriter(Path(path) / POINTS_FILE, clock=None) as w:
        for p in points:
            w.write(p)


def replace_point(path: Path, point: BifurcationPoint) -> None:
    """Put ``point`` into ``path/points.jsonl`` in place of any earlier line with its ``point_id``.

    A resumed run describes a point again (its samples may have grown): the file keeps one
    line per point. Other lines, unreadable ones included, are kept as they are; the file is
    rewritten atomically (:func:`write_atomic`), so a run killed meanwhile leaves the old file
    or the new one.

    Raises:
        OSError: The file cannot be read or written.
    """
    file = Path(path) / POINTS_FILE
    kept: list[str] = []
    if file.is_file():
        for line in file.read_text(encoding="utf-8").splitlines():
            try:
                same = json.loads(line).get("point_id") == point.point_id
            except (ValueError, AttributeError):  # a damaged line is not ours to drop
                same = False
            if line.strip() and not same:
                kept.append(line)
    write_atomic(file, "".join(f"{line}\n" for line in [*kept, point.model_dump_json()]))


def write_header(path: Path, header: BifurcationHeader) -> None:
    """Write ``path/bifurcation.json`` (the directory is created)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / BIFURCATION_FILE).write_text(header.model_dump_json(indent=1) + "\n", encoding="utf-8")


RETEST_FILE = "retest.jsonl"
"""Test-retest answers (:class:`RetestRecord` lines), written by ``mafialab retest``."""


class RetestRecord(BaseModel):
    """One repeat of one probe on a frozen context (``mafialab retest``).

    The same question on the same frozen context, asked ``repeats`` times; differences
    between repeats are sampling noise (MafiaScope §7, test-retest floor).

    Attributes:
        kind: Always ``"retest"``.
        game_id: Game the context comes from.
        point: Index of the frozen point within the retest run.
        round: Round of the frozen point.
        msg_index: Public message index of the frozen point (-1: round end).
        after_seq: ``seq`` of the last game event in the frozen context.
        player: Probed player's name.
        alive: Players alive at the point (the player included).
        probe_id: Probe id.
        repeat: Repeat number (0-based).
        answer_raw: The raw answer text.
        answer_parsed: The parsed answer (``None`` if unparseable).
        parse_ok: Whether parsing succeeded.
        model: The probed agent's label.
        error: Transport error of the call, if any.
        distribution: A ``logprob`` probe's distribution over its candidates (log schema
            v4), else ``None``.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["retest"] = "retest"
    game_id: str
    point: int = Field(ge=0)
    round: int = Field(ge=0)
    msg_index: int
    after_seq: int = Field(ge=0)
    player: str
    alive: list[str]
    probe_id: str
    repeat: int = Field(ge=0)
    answer_raw: str = ""
    answer_parsed: Any = None
    parse_ok: bool = False
    model: str = ""
    error: str | None = None
    distribution: dict[str, float] | None = None


def read_retests(paths: Iterable[Path], problems: list[str] | None = None) -> list[RetestRecord]:
    """Read ``retest.jsonl`` files (unusable lines reported to ``problems`` and skipped)."""
    out: list[RetestRecord] = []
    for path in paths:
        for n, rec in iter_jsonl(Path(path), problems):
            try:
                out.append(RetestRecord.model_validate(rec))
            except ValidationError as err:
                if problems is not None:
                    problems.append(f"{path}:{n}: unusable retest record ({validation_message(err, limit=1)})")
    return out
