"""Tools for people who write agents, rule sets or backends (layer ``testing``).

In the spirit of PettingZoo's ``pettingzoo.test``: checks anyone can run on their own
pieces, plus the fakes our own tests use.

- :func:`check_rules` / :func:`check_events`: play a rule set and check the engine's
  invariants on every game (dead players never act, exactly one winner, ...).
- :func:`check_agent`: play games with your agent in every seat; every answer it gives must
  be legal, and the games must stay conformant.
- :func:`golden_records` / :func:`golden_diff` / :func:`write_golden`: golden playthroughs, a
  seeded scripted game per rule set compared record by record with a committed copy.
- :data:`CHROMIUM` / :data:`CHROMIUM_ARGS`: the headless Debian chromium that browser tests
  drive through Playwright (nothing downloads).
- :class:`OpenAIStub`: an OpenAI-compatible chat server on 127.0.0.1 answering from the
  request's JSON schema (no network, no model), for backend and end-to-end tests; it also
  answers ``/v1/embeddings`` with :func:`stub_embedding`.

Nothing in the runtime packages imports this one.
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.testing._browser import CHROMIUM, CHROMIUM_ARGS
from mafialab.testing._conformance import ConformanceReport, check_agent, check_events, check_rules
from mafialab.testing._golden import (
    GOLDEN_SEED,
    golden_diff,
    golden_records,
    read_golden,
    write_golden,
)
from mafialab.testing._golden import golden_name as golden_name
from mafialab.testing._stub import (
    OpenAIStub,
    schema_instance,
    stub_embedding,
)
from mafialab.testing._stub import Responder as Responder

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "ConformanceReport",
    "GOLDEN_SEED",
    "OpenAIStub",
    "check_agent",
    "check_events",
    "check_rules",
    "golden_diff",
    "golden_records",
    "read_golden",
    "schema_instance",
    "stub_embedding",
    "write_golden",
]
