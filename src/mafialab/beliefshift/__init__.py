"""The Werewolf belief-shift benchmark (layer ``beliefshift``).

Implements "Do LLMs Trust the Accuser or the Accusation? Measuring Belief Shifts in
Werewolf" (2026): annotate suspect/accuse messages of recorded games, freeze them with the
observers' visible histories into a versioned benchmark file, elicit each observer's prior
and belief shift on the -3..+3 scale from a chat model, and aggregate the results into the
paper's tables (see ``docs/beliefshift.md``).
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.beliefshift._agreement import (
    agreement,
    agreement_with_labels,
    read_labels,
)
from mafialab.beliefshift._agreement import is_labels_file as is_labels_file
from mafialab.beliefshift._annotate import ModelAnnotator as ModelAnnotator
from mafialab.beliefshift._annotate import (
    RulesAnnotator,
    annotate_games,
    day_messages,
    load_annotator_pack,
    load_logs,
    write_annotations,
)
from mafialab.beliefshift._elicit import (
    DEFAULT_MODEL,
    ContextWindowError,
    ResultsMismatch,
    RunOptions,
    elicit_observation,
    run_bench,
)
from mafialab.beliefshift._elicit import estimate_bench as estimate_bench
from mafialab.beliefshift._elicit import run_bench_ray as run_bench_ray
from mafialab.beliefshift._freeze import (
    FreezeError,
    freeze,
)
from mafialab.beliefshift._freeze import load_prompts_text as load_prompts_text
from mafialab.beliefshift._freeze import write_bench as write_bench
from mafialab.beliefshift._hf import (
    bench_tables as bench_tables,
)
from mafialab.beliefshift._hf import (
    restore_benches as restore_benches,
)
from mafialab.beliefshift._io import (
    BeliefShiftFormatError,
    read_annotations,
    read_results,
)
from mafialab.beliefshift._io import read_bench as read_bench
from mafialab.beliefshift._report import (
    ModelsFileError,
    build_report,
    write_report,
)
from mafialab.beliefshift._report import add_published as add_published
from mafialab.beliefshift._report import load_models_yaml as load_models_yaml
from mafialab.beliefshift._report import read_all_results as read_all_results
from mafialab.beliefshift._schema import ResultRecord as ResultRecord

__all__ = [
    "BeliefShiftFormatError",
    "ContextWindowError",
    "DEFAULT_MODEL",
    "FreezeError",
    "ModelsFileError",
    "ResultsMismatch",
    "RulesAnnotator",
    "RunOptions",
    "agreement",
    "agreement_with_labels",
    "annotate_games",
    "build_report",
    "day_messages",
    "elicit_observation",
    "freeze",
    "load_annotator_pack",
    "load_logs",
    "read_annotations",
    "read_labels",
    "read_results",
    "run_bench",
    "write_annotations",
    "write_report",
]
