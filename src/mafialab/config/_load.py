"""Reading YAML/JSON configuration files into pydantic models, with one error format.

Every configuration the project reads (rule sets, probe batteries, season files, prompt
packs, event templates, price tables, benchmark model lists) goes through
:func:`load_config`, so a bad file always fails the same way: one line
``<file>: <field path>: <problem>`` (several problems joined by ``"; "``), where the field
path names keys with dots and list positions in brackets (``roster[2].agent``) and
``(top level)`` stands for the document itself.

Every YAML text the package reads, user files and package data alike, is parsed here
(:func:`parse_config_text`) and nowhere else, under limits applied while it is read: files up
to 10 MB (refused before they are read), and in a YAML document at most 100,000 nodes and 100
alias expansions, an alias counting as everything it repeats (a "billion laughs" document of a
few hundred bytes is refused at once, not after it has filled the memory).
"""

from __future__ import annotations

import difflib
import errno
import json
import stat
from collections.abc import Callable, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from mafialab._words import kind_of

M = TypeVar("M", bound=BaseModel)

MAX_PROBLEMS = 5
"""Most validation problems named in one message (the rest are counted)."""


class ConfigError(ValueError):
    """A configuration could not be loaded; the message names the file and the field."""


def field_path(loc: Sequence[int | str]) -> str:
    """A pydantic error location as a field path: ``roster[2].agent`` (``(top level)`` when empty)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def top_level_message(wanted: str, data: Any, prefix: Sequence[int | str] = ()) -> str:
    """What is wrong with a document whose top level (or the value at ``prefix``) has the wrong kind.

    ``expected a mapping of fields at the top level, found a list``, or with a ``prefix``
    ``roster[2]: expected a mapping of fields, found a string``: what was expected and what
    was found in plain words (:func:`mafialab._words.kind_of`), never a Python type name.
    The caller puts the file's name in front.

    Args:
        wanted: What was expected, with its article (``"a mapping of fields"``, ``"a rule set
            (a mapping of its fields)"``).
        data: The value found.
        prefix: Where the value sits in its file (empty: the top level).
    """
    if prefix:
        return f"{field_path(prefix)}: expected {wanted}, found {kind_of(data)}"
    return f"expected {wanted} at the top level, found {kind_of(data)}"


def _model_at(model: type[BaseModel] | None, loc: Sequence[int | str]) -> type[BaseModel] | None:
    """The pydantic model validating the value at ``loc`` inside ``model`` (``None`` when unknown)."""
    current: Any = model
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        if isinstance(part, int):
            return None  # a list position inside a model: handled with the field below
        field = current.model_fields.get(part)
        if field is None:
            return None
        current = _inner_model(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner_model(annotation: Any) -> Any:
    """The model inside ``X``, ``X | None``, ``list[X]``, ``tuple[X, ...]`` or ``dict[str, X]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        inner = _inner_model(arg)
        if inner is not None:
            return inner
    return None


def accepted_fields(model: type[BaseModel]) -> list[str]:
    """The keys a mapping validated into ``model`` may hold, in the model's order.

    Each field as a file spells it: its alias (``schema``), and its own name too when the
    model also validates by name; then the model's ``FILE_KEYS`` (a ``ClassVar`` naming keys
    its loader reads and removes before validation, such as a rule set's ``extends``).
    """
    by_name = bool(model.model_config.get("populate_by_name") or model.model_config.get("validate_by_name"))
    out: list[str] = []
    for name, info in model.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        if alias is None or by_name:
            out.append(name)
        if alias is not None and alias != name:
            out.append(alias)
    out += [k for k in getattr(model, "FILE_KEYS", ()) if k not in out]
    return out


def _unknown_field(name: str, model: type[BaseModel] | None) -> str:
    """``unknown field 'X'`` with the nearest accepted name, or the accepted names (:func:`accepted_fields`)."""
    msg = f"unknown field {name!r}"
    if model is None:
        return msg
    allowed = accepted_fields(model)
    near = difflib.get_close_matches(name, allowed, n=1, cutoff=0.75)  # 0.6 took 'kind' for 'id'
    return f"{msg} (did you mean {near[0]!r}?)" if near else f"{msg} (allowed: {', '.join(allowed)})"


def validation_message(
    err: ValidationError,
    prefix: Sequence[int | str] = (),
    limit: int = MAX_PROBLEMS,
    *,
    model: type[BaseModel] | None = None,
) -> str:
    """The problems of ``err`` as ``path: message`` joined by ``"; "``.

    A problem found by a check of the whole model (no location) is its message alone: such
    checks name the fields they compare. A field the model does not have reads ``unknown
    field 'X' (did you mean 'Y'?)``, or lists the allowed fields when none is near (difflib
    ratio >= 0.75; with ``model``; pydantic says "Extra inputs are not permitted"). A list's
    "too short" error is left out when its items have errors of their own (it only counts
    the items pydantic dropped).

    Args:
        err: The pydantic error.
        prefix: Path of the validated value inside its file (prepended to every location).
        limit: Most problems named (the rest are counted).
        model: The model that was validated (names the allowed fields of an unknown one).
    """
    errors = err.errors()
    # a list too short only because its bad items were dropped ("Tuple should have at least 1
    # item ... not 0") repeats the items' own errors, which name the bad fields: left out
    inner = [e["loc"] for e in errors]
    errors = [
        e
        for e in errors
        if not (
            e["type"] == "too_short" and any(len(x) > len(e["loc"]) and x[: len(e["loc"])] == e["loc"] for x in inner)
        )
    ]
    parts = []
    for e in errors[:limit]:
        msg = str(e["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        if e["type"] == "extra_forbidden" and e["loc"] and isinstance(e["loc"][-1], str):
            owner = _model_at(model, [p for p in e["loc"][:-1] if not isinstance(p, int)])
            msg = _unknown_field(e["loc"][-1], owner)
        loc = (*prefix, *e["loc"])
        parts.append(f"{field_path(loc)}: {msg}" if loc else msg)  # a model-level check names its fields itself
    more = len(errors) - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


MAX_FILE_BYTES = 10_000_000
"""Largest configuration file read (bytes, 10 MB); a larger one is refused before it is read."""

MAX_YAML_NODES = 100_000
"""Most nodes in one YAML document (scalars, lists and mappings; an alias counts the nodes it repeats)."""

MAX_YAML_ALIASES = 100
"""Most alias expansions in one YAML document (a use of ``*name``, and each alias inside what it repeats)."""


class _LimitExceeded(Exception):
    """A YAML document passed a limit while it was composed (the message says which)."""


def _line(event: yaml.Event) -> str:
    """``line N: `` where ``event`` starts in its document (empty when unknown)."""
    mark = event.start_mark
    return f"line {mark.line + 1}: " if mark is not None else ""


class _LimitedComposer(yaml.composer.Composer):
    """PyYAML's composer, counting nodes and alias expansions while it composes a document.

    PyYAML repeats an anchored node by reference, so a few hundred bytes of nested aliases (the
    "billion laughs") compose quickly and blow up only when the data is walked or printed.
    This composer keeps, for each anchor, how many nodes and alias expansions the anchored
    node stands for once expanded, adds them at each use of the alias, and stops at
    :data:`MAX_YAML_NODES` nodes or :data:`MAX_YAML_ALIASES` alias expansions, before
    anything is built from the document. An alias used inside its own anchor (a cycle) is
    refused too.
    """

    peek_event: Callable[[], Any]  # the parser's (pure Python or libyaml), beside this class

    def _start_counts(self) -> None:
        self._nodes = 0
        self._aliases = 0
        self._expanded: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, alias expansions) it stands for

    def _count(self, nodes: int, aliases: int, event: yaml.Event) -> None:
        self._nodes += nodes
        self._aliases += aliases
        line = _line(event)
        if self._aliases > MAX_YAML_ALIASES:
            raise _LimitExceeded(f"{line}more than {MAX_YAML_ALIASES} alias expansions (YAML anchors); refused")
        if self._nodes > MAX_YAML_NODES:
            raise _LimitExceeded(
                f"{line}more than {MAX_YAML_NODES:,} YAML nodes (aliases counted as what they repeat); refused"
            )

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        """Compose the next node as PyYAML does, counting it (an alias: what its anchor stands for)."""
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            anchor = event.anchor
            if anchor in self._expanded:
                nodes, aliases = self._expanded[anchor]
                self._count(nodes, aliases + 1, event)
            elif anchor in self.anchors:  # still being composed: the alias sits inside its own anchor
                raise _LimitExceeded(
                    f"{_line(event)}alias *{anchor} is inside its own anchor (a cycle of YAML anchors); refused"
                )
            return super().compose_node(parent, index)  # an undefined alias: PyYAML says so
        before = (self._nodes, self._aliases)
        self._count(1, 0, event)
        node = super().compose_node(parent, index)
        if event.anchor is not None:
            self._expanded[event.anchor] = (self._nodes - before[0], self._aliases - before[1])
        return node


class _LimitedLoader(_LimitedComposer, yaml.SafeLoader):
    """The limited composer over PyYAML's pure-Python safe loader (its reader, scanner and parser)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._start_counts()


_CParser: Any = getattr(getattr(yaml, "cyaml", None), "CParser", None)
"""libyaml's scanner and parser, when PyYAML was built with it (``None``: the pure-Python loader alone)."""

if _CParser is not None:

    class _LimitedCLoader(_LimitedComposer, _CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        """The limited composer over libyaml's scanner and parser (about ten times faster).

        Only the scanning and parsing into events is libyaml's; composing (with the limits),
        tag resolution and construction are the same Python code as :class:`_LimitedLoader`,
        so a document both accept gives the same data. A document libyaml refuses is parsed
        again by :class:`_LimitedLoader`, so every message is PyYAML's own.
        """

        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self.anchors = {}  # the composer's table (its __init__ is not run: CParser has its own)
            self._start_counts()


def read_config_text(
    path: Path | Traversable, *, error: type[ValueError] = ConfigError, source: str | None = None
) -> str:
    """The text of a configuration file (UTF-8), refused unread when it is larger than 10 MB.

    A file on disk is refused by its size before it is opened; any file (a package resource, a
    pipe) is read at most one byte past the limit, so a large one is never read whole.

    Args:
        path: The file (a path, or a package resource).
        error: The exception class to raise (a subclass of :class:`ValueError`).
        source: How the file is named in messages (default: ``path``).

    Raises:
        error: Unreadable file, a folder, larger than 10 MB, or not UTF-8.
    """
    where = source or str(path)
    too_big = f"{where}: larger than {MAX_FILE_BYTES // 1_000_000} MB (the most a configuration file may hold); refused"
    try:
        if isinstance(path, Path):
            st = path.stat()  # follows links: a link to a regular file is fine
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
            if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or never end
                raise error(f"{where}: not a regular file (a pipe, socket or device); refused")
            if st.st_size > MAX_FILE_BYTES:
                raise error(too_big)
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise error(too_big)
        return data.decode("utf-8")
    except IsADirectoryError:
        kind = "JSON" if path.name.endswith(".json") else "YAML"
        raise error(f"{where} is a folder, not a file: expected a {kind} file") from None
    except OSError as err:
        raise error(f"{where}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise error(f"{where}: cannot read: not UTF-8 text ({err.reason} at byte {err.start})") from None


def read_config(path: Path | Traversable, *, error: type[ValueError] = ConfigError, source: str | None = None) -> Any:
    """Read a YAML or JSON file (JSON when the name ends in ``.json``) into plain data.

    The file is read with :func:`read_config_text` (at most 10 MB) and parsed with
    :func:`parse_config_text` (YAML limits on nodes and aliases).

    Args:
        path: The file (a path, or a package resource).
        error: The exception class to raise (a subclass of :class:`ValueError`).
        source: How the file is named in messages (default: ``path``).

    Raises:
        error: Unreadable file, larger than 10 MB, not UTF-8, malformed YAML/JSON (with the
            line), or a YAML document past a limit.
    """
    where = source or str(path)
    text = read_config_text(path, error=error, source=where)
    return parse_config_text(text, where, json_text=path.name.endswith(".json"), error=error)


def json_error(err: json.JSONDecodeError) -> str:
    """One JSON error in the words every reader of JSON text uses: ``not valid JSON (MSG at line L column C)``.

    ``MSG`` is :mod:`json`'s own message (``Expecting value``, ``Unterminated string
    starting``); line and column count from 1 in the text that was parsed (a config file, the
    value of an option such as ``fork run --inject``).
    """
    return f"not valid JSON ({err.msg.removesuffix(' at')} at line {err.lineno} column {err.colno})"


def parse_config_text(text: str, source: str, *, json_text: bool = False, error: type[ValueError] = ConfigError) -> Any:
    """Parse configuration text (YAML, or JSON with ``json_text``).

    The only YAML parser of the package: safe tags only, and limits applied while the document
    is composed (before any Python data is built from it): at most :data:`MAX_YAML_NODES`
    nodes and :data:`MAX_YAML_ALIASES` alias expansions, an alias counted as everything it
    repeats, so a "billion laughs" document of a few hundred bytes is refused at once.

    Raises:
        error: Malformed text (the message names ``source`` and the line), or a YAML document
            past a limit (``<source>: line N: more than 100 alias expansions (YAML anchors);
            refused``).
    """
    if json_text:
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise error(f"{source}: {json_error(err)}") from None
    if _CParser is not None:
        fast = _LimitedCLoader(text)
        try:
            return fast.get_single_data()
        except (yaml.YAMLError, _LimitExceeded, RecursionError):
            pass  # read again below, so the message (or the refusal) is the pure-Python loader's
        finally:
            fast.dispose()
    loader = _LimitedLoader(text)
    try:
        return loader.get_single_data()
    except _LimitExceeded as err:
        raise error(f"{source}: {err}") from None
    except RecursionError:  # PyYAML's scanner and composer recurse once per level of nesting
        raise error(f"{source}: nested too deeply (YAML lists or mappings inside each other); refused") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}:" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        raise error(f"{source}:{line} not valid YAML ({problem})") from None
    finally:
        loader.dispose()


def load_config(
    data: Any,
    model: type[M],
    *,
    source: str | None = None,
    error: type[ValueError] = ConfigError,
    prefix: Sequence[int | str] = (),
) -> M:
    """Validate a configuration into ``model``: a file (YAML/JSON) or data already read.

    Args:
        data: A path or package resource (read with :func:`read_config`), or plain data.
        model: The pydantic model.
        source: How the configuration is named in messages (default: the path, else the
            model's name).
        error: The exception class to raise (a subclass of :class:`ValueError`).
        prefix: Path of ``data`` inside its file (for messages).

    Returns:
        The validated model.

    Raises:
        error: ``<source>: <field path>: <problem>`` for the first problems found, or a
            read/parse error from :func:`read_config`.
    """
    if isinstance(data, Path | Traversable):
        source = source or str(data)
        data = read_config(data, error=error, source=source)
    where = source or model.__name__
    if data is None and not prefix:
        raise error(f"{where}: the file is empty (expected a mapping of {model.__name__} fields)")
    if not isinstance(data, dict):
        raise error(f"{where}: {top_level_message('a mapping of fields', data, prefix)}")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise error(f"{where}: {validation_message(err, prefix, model=model)}") from None
