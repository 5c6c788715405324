"""Option types of the ``mafialab`` command line: each checks its value and names itself in its messages.

A command declares what a parameter takes with one of these types as :data:`typing.Annotated`
metadata (Typer leaves it alone, so parsing and ``--help`` are unchanged) and decorates its
function with :func:`checked`, below the decorator that registers it::

    @export_app.command("tgn")
    @checked
    def export_tgn_cmd(
        directory: Annotated[Path, Games()] = typer.Argument(..., help="Directory of game logs."),
        out: Annotated[Path | None, OutFile(force="force", suffixes=(".csv", ".parquet"))] = typer.Option(
            None, "--out", "-o", help="Write to FILE (.csv or .parquet); default stdout CSV."
        ),
        force: bool = typer.Option(False, "--force", help="Replace FILE if it exists."),
    ) -> None: ...

Before the body runs, :func:`checked` runs the checks in three rounds: outputs
(:class:`OutDir`, :class:`OutFile`: refused before any input is read or any work is done), then
inputs (:class:`InPath`, :class:`Games`, :class:`OneGame`, :class:`Prices`), then values
(:class:`RuleSetId`, :class:`Battery`, :class:`ModelString`, :class:`AgentSpec`,
:class:`Choice`, :class:`Keys`, :class:`HttpUrl`, :class:`EnvVar`, :class:`Finite`); within a
round, in the order of the parameters. A refusal is one line ``error: NAME: …`` (exit code 2),
NAME being how the command line names the parameter: its first long option (``--out``, also
when typed as ``-o``), else its argument's metavar or upper-cased name (``DIR``, ``GAME_DIR``).
A list is checked item by item; ``None`` (an option not given) is not checked; a check never
changes the value (:class:`OneGame` keeps the game it read for :func:`game_log`). A type that
depends on another parameter names it by its Python name (``OutDir(not_above="directory")``);
the message names that one as the command line does. A new command (``import kaggle``,
``export hf``) takes the same types, and with them the same checks and words.

Numbers out of range (``--games 0``, ``--points 0``) are declared with Typer's ``min``/``max``
and worded by the root group (:func:`mafialab.cli._app.param_error_message`), as are values of
the wrong type and an unknown value of an :class:`enum.Enum` option (:class:`Format`).
The options several commands share (:func:`seed_option`, :func:`ray_option`,
:func:`cache_option`) and the helpers that name a library error by its option
(:func:`option_message`, :func:`library_message`) live here too.
"""

from __future__ import annotations

import functools
import inspect
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_type_hints

import typer

from mafialab.cli import _app
from mafialab.cli._app import fail

if TYPE_CHECKING:
    from mafialab.analysis import SummaryCache
    from mafialab.record import GameLog, PriceTable
    from mafialab.rules import RuleSet

F = TypeVar("F", bound=Callable[..., Any])


class Given:
    """What a check sees of the whole command line: every parameter's value and how the command line names it."""

    def __init__(self, values: Mapping[str, Any], names: Mapping[str, str]) -> None:
        self.values = values
        self.names = names

    def pairs(self, params: Sequence[str]) -> list[tuple[str, Path]]:
        """``(NAME, PATH)`` of each of ``params`` given (a list parameter gives one pair per path)."""
        out: list[tuple[str, Path]] = []
        for p in params:
            v = self.values.get(p)
            out += [(self.names[p], Path(x)) for x in (v if isinstance(v, list | tuple) else [v]) if x is not None]
        return out


NOTHING_ELSE = Given({}, {})
"""What a check sees of a command line when it checks a value on its own."""


class OptionType:
    """What a parameter takes: :meth:`check` refuses a bad value (through :func:`fail`) or returns it."""

    round = 2
    """When :func:`checked` runs the check: 0 outputs, 1 inputs, 2 values."""

    def check(self, value: Any, name: str, given: Given) -> Any:
        """Refuse ``value`` (given as ``name``) through :func:`fail`, or return it."""
        return value


def _declared_name(param: str, info: Any) -> str:
    """How the command line names the parameter ``param`` declared with Typer's ``info`` (its default)."""
    decls = [d for d in getattr(info, "param_decls", None) or () if d.startswith("-")]
    if decls:
        return next((d for d in decls if d.startswith("--")), decls[0])
    return str(getattr(info, "metavar", None) or param).upper().rstrip(".")


def _declared(command: Callable[..., Any]) -> list[tuple[str, str, OptionType]]:
    """``(PARAMETER, NAME, TYPE)`` of every parameter of ``command`` with an :class:`OptionType`, in check order."""
    hints = get_type_hints(command, include_extras=True)
    sig = inspect.signature(command)
    found = [
        (p, _declared_name(p, sig.parameters[p].default), kind)
        for p in sig.parameters
        for kind in getattr(hints.get(p), "__metadata__", ())
        if isinstance(kind, OptionType)
    ]
    return sorted(found, key=lambda f: f[2].round)  # stable: declaration order within a round


def checked(command: F) -> F:
    """Run the checks of ``command``'s declared option types (:class:`OptionType`) before its body.

    Outputs first, then inputs, then values, each round in the order of the parameters.
    """
    declared: list[tuple[str, str, OptionType]] = []

    @functools.wraps(command)
    def run(**kwargs: Any) -> Any:
        if not declared:
            declared.extend(_declared(command))
        sig = inspect.signature(command)
        given = Given(kwargs, {p: _declared_name(p, sig.parameters[p].default) for p in sig.parameters})
        for param, name, kind in declared:
            value = kwargs[param]
            if isinstance(value, list | tuple):
                kwargs[param] = type(value)(kind.check(v, name, given) for v in value)
            elif value is not None:
                kwargs[param] = kind.check(value, name, given)
        return command(**kwargs)

    return run  # type: ignore[return-value]


class Format(StrEnum):
    """What a command prints to stdout (``--format``): tables, JSON or CSV."""

    table = "table"
    json = "json"
    csv = "csv"


class TableOrJson(StrEnum):
    """What a command prints to stdout (``--format``): tables or JSON."""

    table = "table"
    json = "json"


# ------------------------------------------------ outputs (round 0)
class OutDir(OptionType):
    """A folder the command writes into, created when missing.

    Refused (README's promise: a recorded game is never overwritten, a command's input is never
    its output; paths followed through symlinks and ``..``): a file; a place under a file; a
    folder, or the closest existing one above, where nothing can be created (a folder is made
    and removed there to make sure: :func:`os.access` says yes to root even in ``/proc``); one of
    ``inputs`` or a recorded log's name (:func:`refuse_recorded_or_input`); a recorded game's
    folder (it holds ``game.jsonl``: a reader of that folder would find the output mixed with
    the game; a new, empty or earlier output folder of the command is fine, so resuming works);
    the input folder ``not_above`` or a folder above it (a folder inside it is fine).

    Args:
        inputs: Parameters holding the command's input files.
        not_above: The parameter holding the command's input folder.
        file_suffix: A suffix (``.parquet``) that makes the value one output file instead
            (:class:`OutFile`), unless a folder of that name exists.
    """

    round = 0

    def __init__(self, inputs: Sequence[str] = (), not_above: str | None = None, file_suffix: str | None = None):
        self.inputs, self.not_above, self.file_suffix = tuple(inputs), not_above, file_suffix

    def check(self, value: Path, name: str, given: Given = NOTHING_ELSE) -> Path:
        from mafialab.record import GAME_FILE

        if self.file_suffix is not None and value.suffix == self.file_suffix and not value.is_dir():
            return OutFile(self.inputs).check(value, name, given)
        refuse_recorded_or_input(value, name, given.pairs(self.inputs))
        if (value / GAME_FILE).is_file():
            fail(
                f"{name}: {value} is a recorded game's folder (it holds {GAME_FILE}); nothing is written into a "
                "game's folder: choose another folder"
            )
        _app._checked_outputs.append((name, value))
        if value.exists() and not value.is_dir():
            fail(f"{name}: {value} is a file; give a folder (it is created when missing)")
        if value.is_dir():
            why = _cannot_create_in(value, "it")
            if why is not None:
                fail(f"{name}: cannot write into the folder {value}: {why}")
        else:
            _check_writable_place(value, name, "the folder")
        for label, folder in given.pairs([self.not_above] if self.not_above else []):
            real, inp = Path(os.path.realpath(value)), Path(os.path.realpath(folder))
            if real == inp or real in inp.parents:
                where = "is the input " + label if real == inp else f"holds the input {label} ({folder})"
                fail(f"{name}: {value} {where}; its output would be written among the input's files: "
                     "choose another folder")  # fmt: skip
        return value


class OutFile(OptionType):
    """A file the command writes, its folder created when missing.

    Refused: a folder; a place under a file; a file, or the closest existing folder above it,
    that is not writable; one of ``inputs`` or a recorded log (``game.jsonl``, ``calls.jsonl`` …
    of a game's folder: :func:`refuse_recorded_or_input`); a suffix not in ``suffixes``; a file
    that exists when the command's ``force`` switch is off.

    Args:
        inputs: Parameters holding the command's input files.
        force: The parameter of the command's ``--force`` switch (off: an existing file, an
            earlier result or a labels file given by mistake, is refused); ``None``: a command
            without one, whose existing file is replaced.
        suffixes: The suffixes the file may have (``.csv``, ``.parquet``); empty: any.
    """

    round = 0

    def __init__(self, inputs: Sequence[str] = (), force: str | None = None, suffixes: Sequence[str] = ()):
        self.inputs, self.force, self.suffixes = tuple(inputs), force, tuple(suffixes)

    def check(self, value: Path, name: str, given: Given) -> Path:
        if self.suffixes and value.suffix not in self.suffixes:  # a typo (-o game.jsonl) never overwrites a log
            fail(f"{name}: expected a {' or '.join(self.suffixes)} file, got {value}")
        refuse_recorded_or_input(value, name, given.pairs(self.inputs))
        _app._checked_outputs.append((name, value))
        if value.is_dir():
            fail(f"{name}: {value} is a folder; give a file name (e.g. {value / 'out.jsonl'})")
        if value.exists() and self.force is not None and not given.values[self.force]:
            fail(f"{name}: {value} exists (use --force to replace it)")
        if not value.exists():
            _check_writable_place(value, name, "the file")
        elif not os.access(value, os.W_OK):
            fail(f"{name}: cannot write the file {value}: it is not writable (permissions or a read-only disk)")
        return value


# ------------------------------------------------ inputs (round 1)
YAML_FILE = "a YAML file"
JSONL_FILE = "a JSONL file"
ONE_GAME = "one game's folder (holding game.jsonl)"


class InPath(OptionType):
    """A path that exists: ``NAME: PATH does not exist[: expected WANTED]``.

    ``kind`` ``"folder"`` refuses a file (``NAME: PATH is a file, not a folder: expected …``),
    ``"file"`` a folder; ``wanted`` says what is expected (``"a YAML file"``).
    """

    round = 1

    def __init__(self, wanted: str | None = None, kind: Literal["any", "folder", "file"] = "any"):
        self.wanted, self.kind = wanted, kind

    def check(self, value: Path, name: str, given: Given = NOTHING_ELSE) -> Path:
        if not value.exists():
            fail(f"{name}: {value} does not exist" + (f": expected {self.wanted}" if self.wanted else ""))
        if self.kind == "folder" and not value.is_dir():
            fail(f"{name}: {value} is a file, not a folder: expected {self.wanted or 'a folder'}")
        if self.kind == "file" and value.is_dir():
            fail(f"{name}: {value} is a folder, not a file: expected {self.wanted or 'a file'}")
        return value


class JsonLines(OptionType):
    """A JSONL file with at least one JSON-object line; ``expected`` names the kind of file, for the message.

    An empty file or one without such a line (a text or binary file given by mistake) is
    refused; a bad line further on is left to the file's reader, which names it.
    """

    round = 1

    def __init__(self, expected: str):
        self.expected = expected

    def check(self, value: Path, name: str, given: Given) -> Path:
        InPath(JSONL_FILE, "file").check(value, name)
        blank = True
        try:
            with value.open(encoding="utf-8") as fh:
                for line in fh:
                    blank = blank and not line.strip()
                    if line.strip() and _json_object(line):
                        return value
        except (OSError, UnicodeDecodeError):
            return value  # left to the reader
        if blank:
            fail(f"{name}: {value} is empty (expected {self.expected})")
        fail(f"{name}: {value} has no JSON-object line: expected {self.expected} (one JSON object per line)")


def _json_object(line: str) -> bool:
    import json

    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


class Games(OptionType):
    """A game's folder or a folder with games in it or below (:func:`mafialab.record.no_games_message` words it)."""

    round = 1

    def check(self, value: Path, name: str, given: Given) -> Path:
        from mafialab.record import iter_game_dirs, no_games_message

        if not value.exists() or not iter_game_dirs(value):
            fail(f"{name}: {no_games_message(value)}")
        return value


class OneGame(OptionType):
    """One game's folder, read once; the body takes the game with :func:`game_log`.

    Every problem is logged as :func:`mafialab.record.read_game` logs it, but only for a game
    that can be read: a path that is no game log gives one line (``NAME: PATH does not exist:
    expected one game's folder …``, ``NAME: FILE: no valid game_start header record …``).
    """

    round = 1

    def check(self, value: Path, name: str, given: Given) -> Path:
        import logging

        from mafialab.record import LogFormatError, read_game

        InPath(ONE_GAME).check(value, name)
        try:
            _games[value] = read_game(value, warn=False)
        except LogFormatError as err:
            fail(f"{name}: {err}")
        for why in _games[value].problems:  # as read_game(path) would have logged them while reading
            logging.getLogger(read_game.__module__).warning(why)
        return value


_games: dict[Path, GameLog] = {}
"""The games :class:`OneGame` read in this run, by the path given."""


def game_log(path: Path) -> GameLog:
    """The game that :class:`OneGame` read from ``path`` (read now when it was not checked)."""
    from mafialab.record import read_game

    return _games.pop(path) if path in _games else read_game(path)


class Prices(OptionType):
    """A YAML price table that loads (:func:`load_price_option`); the body loads it again with that function."""

    round = 1

    def check(self, value: Path, name: str, given: Given) -> Path:
        load_price_option(value, name)
        return value


# ------------------------------------------------ values (round 2)
class RuleSetId(OptionType):
    """A rule set that loads: a built-in name, a versioned id or a YAML path (kept as given)."""

    def check(self, value: str, name: str, given: Given) -> str:
        from mafialab.rules import RuleSetError, load_rules

        try:
            load_rules(value)
        except RuleSetError as err:
            fail(option_message(name, err))
        return value


class Battery(OptionType):
    """A probe battery: a built-in name or a YAML path (kept as given; ``none`` turns probes off)."""

    def check(self, value: str, name: str, given: Given) -> str:
        from mafialab.probes import ProbeBatteryError, resolve_battery

        try:
            resolve_battery(value)
        except ProbeBatteryError as err:
            fail(option_message(name, err))
        return value


class ModelString(OptionType):
    """A model string ``provider/model[?key=value&...]`` that builds (kept as given).

    ``also`` are words taken as they are (``rules``: the offline annotator).
    """

    def __init__(self, also: Sequence[str] = ()):
        self.also = tuple(also)

    def check(self, value: str, name: str, given: Given) -> str:
        from mafialab.models import ModelSpecError, get_model

        if value not in self.also:
            try:
                get_model(value)
            except (ModelSpecError, ImportError) as err:
                fail(f"{name}: {err}")
        return value


class AgentSpec(OptionType):
    """An agent spec that builds for the rule set of the game that parameter ``game`` (a :class:`OneGame`) reads.

    Seat 0 and the command's ``seed`` (0 when it has none) build it.
    """

    def __init__(self, game: str = "game"):
        self.game = game

    def check(self, value: str, name: str, given: Given) -> str:
        rules = _games[given.values[self.game]].header.rules  # read by the game's OneGame check (round 1)
        check_agent_spec(value, name, rules, 0, int(given.values.get("seed") or 0))
        return value


class Choice(OptionType):
    """One of a few words: ``NAME: expected a or b, got 'x'``."""

    def __init__(self, *choices: str):
        self.choices = choices

    def check(self, value: str, name: str, given: Given) -> str:
        if value not in self.choices:
            fail(f"{name}: expected {' or '.join(self.choices)}, got {value!r}")
        return value


class Keys(OptionType):
    """Keys from ``choices``, comma-separated in each value of a repeatable option (:func:`keys_once` lists them)."""

    def __init__(self, choices: Sequence[str]):
        self.choices = tuple(choices)

    def check(self, value: str, name: str, given: Given) -> str:
        bad = [k for k in keys_once([value]) if k not in self.choices]
        if bad:
            fail(f"{name}: unknown key {bad[0]!r}; use one of {', '.join(self.choices)}")
        return value


def keys_once(values: Iterable[str]) -> list[str]:
    """The comma-separated keys of ``values``, each once, in order (blanks left out)."""
    return list(dict.fromkeys(k.strip() for v in values for k in v.split(",") if k.strip()))


class HttpUrl(OptionType):
    """An ``http(s)://`` URL with a host (an OpenAI-compatible server's base URL)."""

    def check(self, value: str, name: str, given: Given) -> str:
        from urllib.parse import urlsplit

        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            fail(f"{name}: expected an http(s) URL (e.g. http://localhost:8000/v1), got {value!r}")
        return value


class EnvVar(OptionType):
    """The name of an environment variable that must be set and not empty (kept as given: the body reads it).

    ``said`` is how the refusal ends (``is not set or empty``).
    """

    def __init__(self, said: str = "is not set or empty"):
        self.said = said

    def check(self, value: str, name: str, given: Given) -> str:
        if not os.environ.get(value):
            fail(f"{name}: environment variable {value} {self.said}")
        return value


class Finite(OptionType):
    """A finite number (Click's ``FLOAT`` takes ``inf``); ``unit`` and ``least`` word the refusal."""

    def __init__(self, unit: str, least: float):
        self.unit, self.least = unit, least

    def check(self, value: float, name: str, given: Given) -> float:
        import math

        if not math.isfinite(value):
            fail(f"{name}: expected a finite number of {self.unit} >= {self.least:g}, got {value}")
        return value


# ------------------------------------------------ the checks behind the path types
def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (``.`` for a relative path with none)."""
    p = path
    while not p.exists() and not p.is_symlink():
        if p.parent == p:
            break
        p = p.parent
    return p


def _cannot_create_in(folder: Path, name: str) -> str | None:
    """Why nothing can be created in the existing ``folder`` (called ``name``), or ``None`` when something can.

    :func:`os.access` alone says yes to root everywhere, also in ``/proc`` or ``/sys``
    where no folder can be made; so when the access check passes a folder is really
    created there and removed at once.

    Returns:
        ``NAME is not writable (permissions or a read-only disk)``, ``nothing can be created
        in NAME (No such file or directory)`` (the system's reason), or ``None``.
    """
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{name} is not writable (permissions or a read-only disk)"
    try:
        probe = tempfile.mkdtemp(prefix=".mafialab-check-", dir=folder)
    except OSError as err:
        return f"nothing can be created in {name} ({err.strerror or err})"
    os.rmdir(probe)
    return None


def _check_writable_place(path: Path, option: str, what: str) -> None:
    """Fail unless every existing ancestor of ``path`` is a folder in which something can be created."""
    base = _nearest_existing(path.parent if path.parent != path else path)
    if base.exists() and not base.is_dir():
        fail(f"{option}: {path} cannot be created: {base} is a file, not a folder")
    why = _cannot_create_in(base, str(base)) if base.exists() else None
    if why is not None:
        fail(f"{option}: cannot write {what} {path}: {why}")


def _recorded_folder(folder: Path) -> bool:
    """Whether ``folder`` is a recorded game's (or a bifurcation's) folder."""
    from mafialab.record import BIFURCATION_FILE, GAME_FILE

    return (folder / GAME_FILE).is_file() or (folder / BIFURCATION_FILE).is_file()


def refuse_recorded_or_input(path: Path, option: str = "--out", inputs: Iterable[tuple[str, Path]] = ()) -> None:
    """Fail (code 2) when the output ``path`` is one of the command's inputs or a recorded log.

    The README's promise, a recorded game is never overwritten, kept for every ``--out``:
    ``path`` (followed through symlinks and ``..``) may not be

    * one of ``inputs`` (``(NAME, PATH)`` pairs: the command's own input files), or
    * a file named as recorded data (:data:`mafialab.record.RECORDED_FILES`: ``game.jsonl``,
      ``calls.jsonl``, ``probes.jsonl`` …) inside a recorded game's or bifurcation's folder,
      or such a file that exists anywhere.

    Raises:
        typer.Exit: (through :func:`fail`, code 2) ``OPTION: PATH is the input NAME …`` or
            ``OPTION: PATH is a recorded game's FILE …``.
    """
    from mafialab.record import RECORDED_FILES

    real = Path(os.path.realpath(path))
    for name, given in inputs:
        same = real == Path(os.path.realpath(given))
        if not same and real.exists() and given.exists():
            try:
                same = os.path.samefile(real, given)
            except OSError:
                same = False
        if same:
            fail(f"{option}: {path} is the input {name}; writing it would replace it: choose another path")
    if real.name in RECORDED_FILES and (real.exists() or _recorded_folder(real.parent)):
        fail(
            f"{option}: {path} is a recorded log ({real.name}); a recorded game is never overwritten: "
            "choose another path"
        )


def ray_option(work: str, where: str) -> Any:
    """The ``--ray auto|local|ADDRESS`` option of a command that fans ``work`` out as Ray tasks.

    Args:
        work: What runs as tasks, as the help's first words (``"Play the games"``).
        where: Where the results land (``"the logs land in OUT as in a local run"``).
    """
    return typer.Option(
        None,
        "--ray",
        help=f"{work} as Ray tasks: auto (an existing cluster), local (one started for the run) or a cluster "
        f"ADDRESS; {where}. Needs mafialab\\[ray].",
    )


def cache_option(help: str) -> Any:
    """The ``--cache FOLDER`` option of a command that reads per-game summaries (``report``, ``view``).

    Args:
        help: What the folder holds for this command, as the help's first words; the default
            folder is appended.
    """
    return typer.Option(
        None,
        "--cache",
        help=f"{help} [default: $XDG_CACHE_HOME/mafialab/summaries, else ~/.cache/mafialab/summaries].",
    )


def no_cache_option() -> Any:
    """The ``--no-cache`` switch that goes with :func:`cache_option`."""
    return typer.Option(False, "--no-cache", help="Compute every game's summary; read and write no cache.")


def summary_cache(cache: Path | None, no_cache: bool) -> SummaryCache | None:
    """The per-game summary cache that ``--cache``/``--no-cache`` ask for, checked before any work.

    Returns:
        ``None`` with ``--no-cache``; else a :class:`mafialab.analysis.SummaryCache` on ``cache``,
        or on :func:`mafialab.analysis.default_cache_dir` when it is not given. Nothing is
        created on disk here.

    Raises:
        typer.Exit: (code 2, through :func:`fail`) when ``cache`` is a file or cannot be created.
    """
    if no_cache:
        return None
    from mafialab.analysis import SummaryCache, default_cache_dir

    if cache is not None:
        OutDir().check(cache, "--cache")  # a file given as the cache folder is refused, not written beside
    return SummaryCache(cache if cache is not None else default_cache_dir())


def seed_option(help: str, *short: str) -> Any:
    """The ``--seed`` option of every command that draws: an integer >= 0 (default 0).

    A negative seed is refused by the root group as any out-of-range value is (``--seed: -1
    is out of range (allowed: 0 or more)``), so no folder or record is ever named with one.
    """
    return typer.Option(0, "--seed", *short, min=0, help=help)


# ------------------------------------------------ library errors named by their option
@contextmanager
def refusing(*kinds: type[BaseException], name: str | None = None, out: Path | None = None) -> Iterator[None]:
    """Turn an error of ``kinds`` raised inside into one ``error:`` line (:func:`fail`, code 2).

    With ``name`` (an argument, ``FILE``): ``NAME: message`` (:func:`arg_message`); with ``out``
    (the command's output): the library's words for it as the option (:func:`library_message`);
    else the message as it is. A refusal already made inside (:class:`typer.Exit`) passes.
    """
    try:
        yield
    except typer.Exit:
        raise
    except kinds as err:
        fail(arg_message(name, err) if name else library_message(err, out) if out is not None else str(err))


def arg_message(name: str, err: BaseException | str) -> str:
    """``NAME: message`` for an error about the content of the argument ``name`` (``FILE``, ``BENCH``)."""
    msg = str(err)
    return msg if msg.startswith(f"{name}: ") else f"{name}: {msg}"


def option_message(option: str, err: BaseException) -> str:
    """``OPTION: message`` for an error about a value given as ``option`` (its own leading name dropped).

    The library says ``agents: …``, ``probes: …`` or ``rules: …`` (its parameter) where the
    command line has ``--agents``, ``--seat 3=…``, ``--battery`` or ``NAME``; the message keeps
    every other word.
    """
    msg = str(err)
    bare = option.lstrip("-").lower()
    for name in (option, bare, bare.replace("-", "_"), *_LIBRARY_NAMES):
        msg = msg.removeprefix(f"{name}: ")
    return f"{option}: {msg}"


_LIBRARY_NAMES = ("agents", "probes", "rules")
"""Parameter names the library starts its errors with, where the CLI names its own option."""


_LIBRARY_OPTIONS = {"out": "--out"}
"""Library parameters whose errors (``out: …``) are about a value the command line gives as an option."""


def library_message(err: BaseException, out: Path | None = None, option: str = "--out") -> str:
    """A library error as the command line names its subject: ``out: PATH already exists …`` → ``--out: …``.

    ``run_fork``, ``play_game`` and the Ray runner name their ``out`` parameter; the user gave
    it as ``--out``. A message that starts with the output path ``out`` itself (``R.jsonl: holds
    results of bench …``, ``B: holds a bifurcation run with other parameters``) is named by
    ``option`` too. Any other message is returned unchanged.
    """
    msg = str(err)
    head, sep, rest = msg.partition(": ")
    if sep and head in _LIBRARY_OPTIONS:
        return f"{_LIBRARY_OPTIONS[head]}: {rest}"
    if out is not None and msg.startswith((f"{out}:", f"{out} ")):
        return f"{option}: {msg}"
    return msg


def seat_option(seat: int, overrides: Mapping[int, str], option: str = "--agents") -> str:
    """The option a seat's agent spec came from: ``--seat N=SPEC`` when overridden, else ``option``."""
    return f"--seat {seat}={overrides[seat]}" if seat in overrides else option


def check_agent_spec(
    spec: str,
    option: str,
    rules: RuleSet,
    seat: int = 0,
    seed: int = 0,
    given: Mapping[str, str] | None = None,
) -> None:
    """Build the agent for a spec given on the command line; fail (code 2) naming ``option`` if it cannot be built.

    A model string's bad provider, option name or value (``openai/m?max_n=x``), an unknown
    agent spec, a missing optional extra or a bad remote-seat spec all come out as
    ``OPTION: …`` on one line, before any game or model call.

    Args:
        spec: The agent spec (model options from other command-line options already added).
        option: Where the spec came from (``--agents``, ``--seat 3=…``).
        rules: The rule set the agent plays.
        seat: The seat it plays.
        seed: The game seed.
        given: Model options that came from options of their own (``{"api_key_env":
            "--api-key-env"}``): an error about one of them names that option instead.

    Raises:
        typer.Exit: (through :func:`fail`, code 2) the spec cannot be built.
    """
    import mafialab.remote  # noqa: F401  (registers the remote, human and human-web seat specs)
    from mafialab.agents import make_agent

    try:
        make_agent(spec, seat, rules, seed)
    except (ValueError, ImportError) as err:  # AgentSpecError, ModelSpecError, PromptPackError, SeatSpecError
        msg = str(err)
        by = next((o for k, o in (given or {}).items() if msg.startswith(f"{k}:") or f"option {k}=" in msg), option)
        fail(option_message(by, err))


def load_price_option(path: Path | None, option: str = "--prices") -> PriceTable:
    """The ``--prices`` table (the defaults when ``path`` is ``None``); errors name the option and the path.

    Raises:
        typer.Exit: (through :func:`fail`, code 2) the file does not exist, is a folder, or an
            entry is bad (``--prices: FILE: MODEL.FIELD: …``).
    """
    from mafialab.record import PriceTable, load_prices

    if path is None:
        return PriceTable()
    InPath(YAML_FILE, "file").check(path, option)
    try:
        return load_prices(path)
    except ValueError as err:  # ConfigError: names the file, the model and the field
        fail(option_message(option, err))
