"""Sentence embeddings for variant selection, and farthest-point selection by cosine distance.

Embedders: ``tfidf`` (scikit-learn's TF-IDF fitted on the texts of one point, offline) and
``openai/<model>?base_url=...`` (any OpenAI-compatible ``/v1/embeddings`` server; options
``base_url``, ``api_key_env``, ``prefix`` added before every text, ``batch`` size,
``max_concurrency`` requests in flight). Every embedder returns L2-normalised rows, so a dot
product is the cosine similarity.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import parse_qsl

import numpy as np

from mafialab.models import DEFAULT_OPENAI_CONCURRENCY, InFlightLimit


class Embedder(Protocol):
    """Texts to L2-normalised vectors.

    Attributes:
        name: The spec the embedder was made from (recorded in the run's header).
    """

    name: str

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: an array ``(len(texts), dim)`` of unit rows (zero rows for empty texts)."""
        ...


def _normalise(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.asarray(x / np.where(norms > 0, norms, 1.0), dtype=float)


class TfidfEmbedder:
    """TF-IDF vectors fitted on the texts passed to one :meth:`embed` call.

    scikit-learn's ``TfidfVectorizer`` with word unigrams and bigrams and sublinear term
    frequency; rows L2-normalised.
    """

    name = "tfidf"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (fit and transform in one go); rows are L2-normalised."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        docs = [t or "" for t in texts]
        if not any(d.strip() for d in docs):
            return np.zeros((len(docs), 1))
        try:
            x = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit_transform(docs)
        except ValueError:  # only stop words / no tokens
            return np.zeros((len(docs), 1))
        return _normalise(x.toarray())


class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint (the official ``openai`` SDK).

    Args:
        model: Model name sent to the server.
        base_url: Server URL (``http://127.0.0.1:8000/v1``); ``None``: OpenAI's.
        api_key_env: Environment variable holding the key (``EMPTY`` is sent to a local
            server when it is unset).
        prefix: Text put before every input (``"query: "`` for e5 models).
        batch: Inputs per request.
        max_concurrency: Requests in flight at once (>= 1; default
            :data:`~mafialab.models.DEFAULT_OPENAI_CONCURRENCY`). The limit is keyed by server
            and model like a chat backend's (:class:`~mafialab.models.InFlightLimit`), so under
            ``--ray`` it holds for the driver and every worker together.

    Raises:
        ValueError: No key for OpenAI's own endpoint, a batch size or ``max_concurrency`` below 1.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        prefix: str = "",
        batch: int = 64,
        max_concurrency: int = DEFAULT_OPENAI_CONCURRENCY,
    ):
        self.model = model
        self.base_url = base_url
        self.prefix = prefix
        self.batch = int(batch)
        if self.batch < 1:
            raise ValueError(f"--embed: batch must be >= 1, got {batch}")
        if int(max_concurrency) < 1:
            raise ValueError(f"--embed: max_concurrency must be >= 1, got {max_concurrency}")
        self._limit = InFlightLimit(int(max_concurrency), key=f"openai|{base_url or 'api.openai.com'}|{model}")
        key = os.environ.get(api_key_env)
        if not key and base_url is None:
            raise ValueError(f"--embed: environment variable {api_key_env} is not set (or give base_url=)")
        self._key = key or "EMPTY"
        self.name = f"openai/{model}"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in batches (up to ``max_concurrency`` requests at once); rows are L2-normalised.

        Raises:
            RuntimeError: The server failed or answered the wrong number of vectors.
        """
        import openai

        client = openai.AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=2)

        async def one(chunk: list[str]) -> list[list[float]]:
            async with self._limit():
                resp = await client.embeddings.create(model=self.model, input=chunk)
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(chunk):
                raise RuntimeError(f"--embed: {self.name} returned {len(data)} vectors for {len(chunk)} texts")
            return [list(d.embedding) for d in data]

        inputs = [self.prefix + (t or " ") for t in texts]
        chunks = [inputs[i : i + self.batch] for i in range(0, len(inputs), self.batch)]
        try:
            rows = [row for got in await asyncio.gather(*(one(c) for c in chunks)) for row in got]
        except openai.OpenAIError as err:
            raise RuntimeError(f"--embed: {self.name} at {self.base_url or 'api.openai.com'} failed: {err}") from None
        finally:
            await client.close()
        return _normalise(np.array(rows, dtype=float)) if rows else np.zeros((0, 1))


def make_embedder(spec: str) -> Embedder:
    """The embedder named by ``spec``: ``tfidf`` or ``openai/<model>[?base_url=...&prefix=...]``.

    Raises:
        ValueError: An unknown spec or option (the message names it).
    """
    spec = spec.strip()
    if spec == "tfidf":
        return TfidfEmbedder()
    if spec.startswith("openai/"):
        model, _, query = spec[len("openai/") :].partition("?")
        if not model:
            raise ValueError("--embed: openai/<model> needs a model name")
        opts: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
        known = {"base_url", "api_key_env", "prefix", "batch", "max_concurrency"}
        unknown = sorted(set(opts) - known)
        if unknown:
            raise ValueError(f"--embed: unknown option {unknown[0]!r} (known: {', '.join(sorted(known))})")
        for name in ("batch", "max_concurrency"):
            if name in opts:
                try:
                    opts[name] = int(opts[name])
                except ValueError:
                    raise ValueError(f"--embed: {name} must be an integer, got {opts[name]!r}") from None
        return OpenAIEmbedder(model, **opts)
    raise ValueError(f"--embed: unknown embedder {spec!r} (use tfidf or openai/<model>?base_url=...)")


def farthest_point(emb: np.ndarray, selected: Sequence[int], candidates: Sequence[int], k: int) -> list[int]:
    """Greedy max-min selection by cosine distance (Gonzalez 1985, farthest-point traversal).

    Repeatedly adds the candidate whose smallest cosine distance (1 - dot product of unit
    rows) to everything selected so far is largest; ties go to the earlier candidate.

    Args:
        emb: Unit rows ``(n, dim)``.
        selected: Indices already kept (distances are measured to them; may be empty, then
            the first candidate starts).
        candidates: Indices to choose from (in preference order for ties).
        k: How many to add (fewer if the candidates run out).

    Returns:
        The added indices, in the order chosen.
    """
    cands = list(candidates)
    if k <= 0 or not cands:
        return []
    chosen: list[int] = []
    sel = list(selected)
    if not sel:
        sel = [cands.pop(0)]
        chosen.append(sel[0])
    sims = emb[cands] @ emb[sel].T  # (c, s)
    mind = (1.0 - sims).min(axis=1)
    while len(chosen) < k and cands:
        j = int(np.argmax(mind))
        pick = cands.pop(j)
        chosen.append(pick)
        mind = np.delete(mind, j)
        if cands:
            mind = np.minimum(mind, 1.0 - emb[cands] @ emb[pick])
    return chosen


def mean_pairwise_cosine(emb: np.ndarray, idx: Sequence[int]) -> float | None:
    """Mean cosine similarity over the distinct pairs of ``idx`` (``None`` with < 2 items)."""
    ids = list(idx)
    if len(ids) < 2:
        return None
    s = emb[ids] @ emb[ids].T
    n = len(ids)
    return float((s.sum() - np.trace(s)) / (n * (n - 1)))
