"""Language data of the prompt packs: accusation cues and the seat-name transliteration table.

The data live beside the prompt packs, in ``mafialab/agents/prompts/language/<code>.yaml`` (one
file per language), not in code, so a new language is a new file. Readers: the transcript vote
predictors of ``mafialab.analysis`` (most-mentioned / most-accused, ``docs/metrics.md``). This
module imports only :mod:`mafialab.config` (the files are read as package data, without
importing ``mafialab.agents``), so ``analysis`` reads them without depending on the agents;
``mafialab.agents`` re-exports the public names.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mafialab.config import ConfigError, load_config


class LanguageDataError(ConfigError):
    """A language data file could not be loaded; the message names the file and field."""


class LanguageData(BaseModel):
    """Per-language word lists used to read public transcripts.

    Attributes:
        language: Language code (``en``, ``ru``).
        accusation_cues: Case-insensitive stems marking an accusation sentence (matched
            anywhere in the text, as MafiaScope's ``ACCUSE_RE`` does).
        extra_cues: Stems the ``default`` method adds (skins' words such as "wolf").
        name_forms: Transliteration table: Latin seat name -> stems in this language's script.
        name_suffix: Regular expression for a case ending after a transliterated stem
            (``""``: none), e.g. ``[а-яё]{0,3}``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    language: str
    accusation_cues: tuple[str, ...] = ()
    extra_cues: tuple[str, ...] = ()
    name_forms: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    name_suffix: str = ""

    @field_validator("name_suffix")
    @classmethod
    def _valid_regex(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as err:
            raise ValueError(f"not a regular expression: {err}") from None
        return v


BUILTIN_LANGUAGES = ("en", "ru")
"""Language data files shipped in ``mafialab/agents/prompts/language/``."""


@functools.cache
def load_language_data(code: str) -> LanguageData:
    """The built-in language data for ``code`` (parsed once per process).

    Raises:
        LanguageDataError: Unknown code, malformed YAML or a bad field (the message names it).
    """
    if code not in BUILTIN_LANGUAGES:
        raise LanguageDataError(f"language: unknown language {code!r} (built in: {', '.join(BUILTIN_LANGUAGES)})")
    res = resources.files("mafialab").joinpath("agents", "prompts", "language", f"{code}.yaml")
    return load_config(res, LanguageData, source=f"language data {code}", error=LanguageDataError)
