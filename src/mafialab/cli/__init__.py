"""The ``mafialab`` command line: parses and prints; the work lives in the library.

Importing this package is cheap, and so is ``mafialab --help``: a command's module (and
through it the part of the library that the command uses) loads only when that command runs
or its own help is asked for (:data:`COMMANDS`). :func:`main` loads it before the command
line is parsed, so a Ctrl-C while it loads is answered like any other interrupt at start.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import typer

    app: typer.Typer

INTERRUPTED_AT_START = "interrupted while starting; nothing was written"
"""What :func:`main` prints (after ``error: ``) on a Ctrl-C before a command runs."""

INTERRUPTED = "interrupted"
"""What :func:`main` prints (after ``error: ``) on a Ctrl-C in a command without its own message."""


def _error_line(message: str) -> None:
    """Write ``error: message`` to stderr, as :func:`mafialab.cli._app.fail` does (Rich may not be loaded yet)."""
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()


COMMANDS: dict[str, tuple[str, str, str]] = {
    "play": (
        "_play",
        "play",
        "Play GAMES seeded games and write their logs under OUT/<game_id>/ (game.jsonl, calls.jsonl).",
    ),
    "report": (
        "_report",
        "report",
        "Belief metrics F1-F4 with 95% game-level cluster-bootstrap intervals (docs/metrics.md).",
    ),
    "view": (
        "_view",
        "view",
        "Build a static, offline viewer site from the game logs under DIR (open OUT/index.html).",
    ),
    "judge": (
        "_judge",
        "judge",
        "Judge finished games; verdicts are appended to verdicts.jsonl beside each game.jsonl.",
    ),
    "retest": (
        "_retest",
        "retest",
        "Re-ask a probe battery on frozen contexts: the test-retest floor of top-suspect flips.",
    ),
    "rules": ("_rules", "rules_app", "List and show rule sets."),
    "models": ("_models", "models_app", "Model backends and embedded models."),
    "export": (
        "_export",
        "export_app",
        "Export game logs as tables for pandas/DuckDB, Hugging Face datasets or temporal-graph tools.",
    ),
    "import": (
        "_import",
        "import_app",
        "Import logs of other tools (MafiaScope, Kaggle Game Arena Werewolf) or a Hugging Face dataset folder as"
        " mafialab logs.",
    ),
    "season": ("_season", "season_app", "Seasons: many games, balanced seating, judges, leaderboards."),
    "beliefshift": (
        "_beliefshift",
        "bs_app",
        "The Werewolf belief-shift benchmark: annotate accusations, freeze, elicit priors and shifts, report tables.",
    ),
    "fork": ("_fork", "fork_app", "Fork a recorded game at a step and replay it with a change."),
    "bifurcate": (
        "_bifurcate",
        "bifurcate_app",
        "The bifurcation experiment: resample a vote, keep diverse variants, fork each, report.",
    ),
    "bus": (
        "_bus",
        "bus_app",
        "The model bus (MafiaScope-compatible): a hub routing seats' chat calls to workers.",
    ),
}
"""The command tree, registered here and nowhere else, in the order ``mafialab --help`` lists it.

``NAME: (MODULE, ATTRIBUTE, SUMMARY)``: the command is ``ATTRIBUTE`` of ``mafialab.cli.MODULE``,
a command function or a sub-app (a :class:`typer.Typer`); a command module defines its
functions (or its own sub-app) and does no registering. The root group imports a module only
when its command runs or its own help is asked for (``mafialab.cli._app._LazyCommands``),
so ``mafialab --help`` lists ``SUMMARY``, the first paragraph of the command's help (a test
keeps the two equal), without loading the library.
"""


def _command_module(args: list[str]) -> str | None:
    """The module (``mafialab.cli._play``) of the command that the command line ``args`` names, if any.

    ``args`` are the arguments after the program's name; the root group's own options
    (``-h``, ``--version``) take no value, so the command is the first argument that is not
    an option.
    """
    name = next((a for a in args if not a.startswith("-")), None)
    return f"mafialab.cli.{COMMANDS[name][0]}" if name in COMMANDS else None


@cache
def _command_tree() -> typer.Typer:
    """The ``mafialab`` Typer application: the root group, whose commands load when used (:data:`COMMANDS`)."""
    from mafialab.cli._app import app

    return app


def __getattr__(name: str) -> Any:
    """``mafialab.cli.app``: the registered command tree (:func:`_command_tree`), built on first use."""
    if name == "app":
        return _command_tree()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _interrupted_at_start() -> NoReturn:
    """Exit with code 130 and one line; nothing is open yet, so no clean-up is skipped.

    ``os._exit``, not ``sys.exit``: a Ctrl-C that passed through some extension module's
    import makes CPython end the process by SIGINT after any later ``sys.exit`` (seen as
    code -2 instead of 130 by a parent process).
    """
    _error_line(INTERRUPTED_AT_START)
    sys.stdout.flush()
    os._exit(130)


def _is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is a Ctrl-C that a library turned into another exception.

    pydantic-core builds a model's schema when its module is imported; a SIGINT arriving
    then is re-raised as ``SchemaError('… KeyboardInterrupt: …')`` with no exception chain,
    and other libraries raise their own error ``from`` the interrupt. Either counts:
    a ``KeyboardInterrupt`` in the ``__cause__``/``__context__`` chain, or a pydantic-core
    ``SchemaError`` whose message names it.
    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, KeyboardInterrupt):
            return True
        if type(cur).__name__ == "SchemaError" and "KeyboardInterrupt" in str(cur):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def _closed_stdout() -> NoReturn:
    """End quietly with code 141 (128 + SIGPIPE) when the reader of stdout went away.

    ``mafialab report DIR | head``: ``head`` closes the pipe after its lines; like ``yes`` or
    ``cat`` killed by SIGPIPE the command stops printing, says nothing, and exits with 141
    (the code a shell gives such a process; ``set -o pipefail`` sees it). Stdout is pointed at
    ``/dev/null`` first so that the interpreter's last flush does not fail again; exit
    handlers still run (files being written are closed as on any exit).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(141)


def main() -> None:
    """Console-script entry point.

    A file-system error that reaches this point (an output directory that is read-only or
    is a file, a full disk) is printed as ``error: PATH: reason`` and exits with code 2
    instead of a traceback; what was written before it stays on disk. A Ctrl-C (SIGINT)
    while the commands load prints ``error: interrupted while starting; nothing was
    written`` and exits with code 130 (also when a library re-raised it as its own error,
    as pydantic-core does while building a model's schema); a command's own interrupt message (``play`` says what it
    kept) or else ``error: interrupted`` is the one line printed on a Ctrl-C later on. Every
    interrupt line starts with ``error:``, as every other error does.
    When stdout is a pipe whose reader has gone (``mafialab report DIR | head``) the command
    ends silently with code 141, as ``yes | head`` does.
    """
    try:
        tree = _command_tree()
        module = _command_module(sys.argv[1:])
        if module is not None:  # loaded here, so that a Ctrl-C meanwhile is one before any command runs
            import_module(module)
        from rich.markup import escape

        from mafialab.cli._app import err_console, output_option_for
    except KeyboardInterrupt:
        _interrupted_at_start()
    except Exception as exc:
        if _is_interrupt(exc):
            _interrupted_at_start()
        raise
    try:
        tree()
    except BrokenPipeError:  # before OSError, of which it is one
        _closed_stdout()
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        option = output_option_for(err.filename)
        if option is not None:  # an output path: named by its option, as a checked one is
            where = f"{option}: {where}"
        why = err.strerror or str(err)
        err_console.print(f"[bold red]error:[/] {escape(where + str(why))}", highlight=False, markup=True)
        sys.exit(2)
    except KeyboardInterrupt:  # while Typer builds the command line, before any command runs
        _interrupted_at_start()
    except Exception as exc:  # a Ctrl-C while a command's modules load, re-raised by pydantic-core
        if _is_interrupt(exc):
            _interrupted_at_start()
        raise
    except SystemExit as stop:
        if isinstance(stop.__context__, BrokenPipeError):  # Click's own exit 1 on a closed pipe
            _closed_stdout()
        # Typer turns a Ctrl-C in a command without its own message into a silent exit 130
        if stop.code == 130 and isinstance(getattr(stop.__context__, "__cause__", None), KeyboardInterrupt):
            _error_line(INTERRUPTED)
        raise


__all__ = ["app", "main"]
