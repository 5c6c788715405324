"""The Werewolf belief-shift benchmark (layer ``beliefshift``).

Implements "Do LLMs Trust the Accuser or the Accusation? Measuring Belief Shifts in
Werewolf" (2026): annotate suspect/accuse messages of recorded games, freeze them with the
observers' visible histories into a versioned benchmark file, elicit each observer's prior
and belief shift on the -3..+3 scale from a chat model, and aggregate the results into the
paper's tables (see ``docs/beliefshift.md``).
"""

from mafialab.beliefshift._agreement import (
    agreement,
    agreement_with_labels,
    is_labels_file,
    read_labels,
)
from mafialab.beliefshift._annotate import (
    ModelAnnotator,
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
    estimate_bench,
    run_bench,
    run_bench_ray,
)
from mafialab.beliefshift._freeze import (
    FreezeError,
    freeze,
    load_prompts_text,
    write_bench,
)
from mafialab.beliefshift._hf import (
    bench_tables as bench_tables,
)
from mafialab.beliefshift._hf import (
    restore_benches as restore_benches,
)
from mafialab.beliefshift._io import (
    BeliefShiftFormatError,
    read_annotations,
    read_bench,
    read_results,
)
from mafialab.beliefshift._report import (
    ModelsFileError,
    add_published,
    build_report,
    load_models_yaml,
    read_all_results,
    write_report,
)
from mafialab.beliefshift._schema import ResultRecord

__all__ = [
    "BeliefShiftFormatError",
    "ContextWindowError",
    "DEFAULT_MODEL",
    "FreezeError",
    "ModelAnnotator",
    "ModelsFileError",
    "ResultRecord",
    "ResultsMismatch",
    "RulesAnnotator",
    "RunOptions",
    "agreement",
    "agreement_with_labels",
    "annotate_games",
    "add_published",
    "build_report",
    "day_messages",
    "elicit_observation",
    "freeze",
    "is_labels_file",
    "load_annotator_pack",
    "load_logs",
    "load_models_yaml",
    "load_prompts_text",
    "read_all_results",
    "read_annotations",
    "read_bench",
    "read_labels",
    "read_results",
    "estimate_bench",
    "run_bench",
    "run_bench_ray",
    "write_annotations",
    "write_bench",
    "write_report",
]
