"""Post-game verdicts (layer ``judge``): transcript, prompt, validation, ensembles.

A judge model reads the complete role-revealed transcript of a finished game and returns
a headline, a recap, an MVP and 0-10 scores per player on deception (mafia only),
detection (non-mafia only) and influence (everyone). Verdicts are validated, clamped and
stored in ``verdicts.jsonl`` beside the game log. See ``docs/arena.md``.
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.judge._ensemble import AxisStat as AxisStat
from mafialab.judge._ensemble import Ensemble as Ensemble
from mafialab.judge._ensemble import EnsemblePlayer as EnsemblePlayer
from mafialab.judge._ensemble import (
    ensemble,
)
from mafialab.judge._ensemble import game_ensemble as game_ensemble
from mafialab.judge._ensemble import judge_with_ensemble as judge_with_ensemble
from mafialab.judge._judge import DEFAULT_ATTEMPTS as DEFAULT_ATTEMPTS
from mafialab.judge._judge import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from mafialab.judge._judge import (
    JudgeError,
    judge_game,
)
from mafialab.judge._judge import build_judge_messages as build_judge_messages
from mafialab.judge._judge import fit_transcript as fit_transcript
from mafialab.judge._judge import resolve_judges as resolve_judges
from mafialab.judge._transcript import CONDENSE_RULE as CONDENSE_RULE
from mafialab.judge._transcript import SHORT_CHARS as SHORT_CHARS
from mafialab.judge._transcript import (
    Line,
    Transcript,
    build_transcript,
)
from mafialab.judge._validate import (
    UnusableVerdict,
    validate_verdict,
    verdict_schema,
)
from mafialab.judge._validate import ValidVerdict as ValidVerdict
from mafialab.judge._validate import coerce_score as coerce_score

__all__ = [
    "JudgeError",
    "Line",
    "Transcript",
    "UnusableVerdict",
    "build_transcript",
    "ensemble",
    "judge_game",
    "validate_verdict",
    "verdict_schema",
]
