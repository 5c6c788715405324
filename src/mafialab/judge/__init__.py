"""Post-game verdicts (layer ``judge``): transcript, prompt, validation, ensembles.

A judge model reads the complete role-revealed transcript of a finished game and returns
a headline, a recap, an MVP and 0-10 scores per player on deception (mafia only),
detection (non-mafia only) and influence (everyone). Verdicts are validated, clamped and
stored in ``verdicts.jsonl`` beside the game log. See ``docs/arena.md``.
"""

from mafialab.judge._ensemble import AxisStat, Ensemble, EnsemblePlayer, ensemble, game_ensemble, judge_with_ensemble
from mafialab.judge._judge import (
    DEFAULT_ATTEMPTS,
    DEFAULT_MAX_TOKENS,
    JudgeError,
    build_judge_messages,
    fit_transcript,
    judge_game,
    resolve_judges,
)
from mafialab.judge._transcript import CONDENSE_RULE, SHORT_CHARS, Line, Transcript, build_transcript
from mafialab.judge._validate import UnusableVerdict, ValidVerdict, coerce_score, validate_verdict, verdict_schema

__all__ = [
    "CONDENSE_RULE",
    "DEFAULT_ATTEMPTS",
    "DEFAULT_MAX_TOKENS",
    "SHORT_CHARS",
    "AxisStat",
    "Ensemble",
    "EnsemblePlayer",
    "JudgeError",
    "Line",
    "Transcript",
    "UnusableVerdict",
    "ValidVerdict",
    "build_judge_messages",
    "build_transcript",
    "coerce_score",
    "ensemble",
    "fit_transcript",
    "game_ensemble",
    "judge_game",
    "judge_with_ensemble",
    "resolve_judges",
    "validate_verdict",
    "verdict_schema",
]
