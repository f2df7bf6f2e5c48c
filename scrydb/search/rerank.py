"""The optional reranker leg: a cross-encoder scores the fused top N, and its order joins
the fusion as one more rank vote.

Two implementations behind one interface, as for embedders:

* ``http``: an OpenAI/Jina/Cohere/vLLM/llama.cpp-style ``/rerank`` endpoint
  (``{model, query, documents, top_n}`` -> ``{results: [{index, relevance_score}]}``) or
  text-embeddings-inference (``{query, texts}`` -> ``[{index, score}]``; switched to when
  the server asks for ``texts``);
* ``local``: a sentence-transformers ``CrossEncoder`` model directory, loaded offline.

The leg never makes a search fail: a reranker that errors, answers garbage or takes longer
than ``[rerank] timeout`` is skipped for that query with a note in the results.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from scrydb.config import RerankConfig
from scrydb.embed.http import EndpointError, auth_headers, endpoint_url, finite_number, post_json
from scrydb.errors import ScryError

if TYPE_CHECKING:
    from scrydb.results import Results
    from scrydb.search.query import Query
    from scrydb.search.rank import Candidate


class RerankError(ScryError):
    """A reranker could not be loaded or answered nonsense."""


class Reranker(ABC):
    """Scores (query, document) pairs: higher means more relevant."""

    #: Stable identity (provider and model), for notes and ``scry check``.
    id: str

    def load(self) -> None:  # noqa: B027 - optional hook
        """Load what scoring needs (a model); not counted against the time budget."""

    @abstractmethod
    def score(self, query: str, documents: list[str]) -> list[float | None]:
        """One score per document (``None`` where the reranker gave none)."""


class HttpReranker(Reranker):
    """A ``/rerank`` endpoint (Jina/Cohere/vLLM/llama.cpp shape, or TEI's)."""

    def __init__(self, cfg: RerankConfig) -> None:
        self.cfg = cfg
        self.url = endpoint_url(cfg.url, "rerank")
        self.id = f"http:{cfg.model or 'default'}@{self.url}"
        self._field = "documents"  #: TEI names the list "texts"

    def score(self, query: str, documents: list[str]) -> list[float | None]:
        """POST once (and once more in TEI's shape if the server asks for ``texts``)."""
        headers = auth_headers(self.cfg.api_key_env, "[rerank]")
        for _ in range(2):
            payload: dict[str, Any] = {"query": query, self._field: documents}
            if self._field == "documents":
                payload["top_n"] = len(documents)
                payload["return_documents"] = False
            if self.cfg.model:
                payload["model"] = self.cfg.model
            try:
                data = post_json(self.url, payload, headers, self.cfg.timeout)
            except EndpointError as e:
                other = "texts" if self._field == "documents" else "documents"
                if e.status in (400, 422) and other in str(e) and _unique_field_hint(str(e)):
                    self._field = other
                    continue
                raise
            return parse_scores(data, len(documents))
        raise RerankError(f"{self.url} accepts neither 'documents' nor 'texts'")


def _unique_field_hint(message: str) -> bool:
    """A validation error that names a missing field (serde / pydantic wording)."""
    m = message.lower()
    return "missing" in m or "required" in m or "field" in m


def parse_scores(data: Any, n: int) -> list[float | None]:
    """Scores by document index from ``{results: [...]}``, ``{data: [...]}`` or a bare list
    of ``{index, relevance_score | score}``; anything else is a :class:`RerankError`."""
    rows = data
    if isinstance(data, dict):
        rows = data.get("results", data.get("data"))
    if not isinstance(rows, list):
        raise RerankError("reranker answered without a list of results")
    out: list[float | None] = [None] * n
    for row in rows:
        if not isinstance(row, dict):
            raise RerankError("reranker answered a result that is not an object")
        idx = row.get("index")
        s = row.get("relevance_score", row.get("score"))
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < n:
            raise RerankError(f"reranker answered index {idx!r} for {n} documents")
        if not finite_number(s):
            raise RerankError(f"reranker answered score {s!r} (not a finite number)")
        if out[idx] is not None:
            raise RerankError(f"reranker scored document {idx} twice")
        out[idx] = float(s)  # type: ignore[arg-type]  # finite_number() checked it
    if all(s is None for s in out):
        raise RerankError("reranker answered no scores")
    return out


class LocalReranker(Reranker):
    """A sentence-transformers ``CrossEncoder`` from a directory (or model package), offline."""

    #: Pairs per forward pass.
    BATCH = 16

    def __init__(self, cfg: RerankConfig) -> None:
        self.cfg = cfg
        self.id = f"local:{os.path.basename(os.path.normpath(cfg.model))}"
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the cross-encoder (once)."""
        with self._lock:
            if self._model is not None:
                return
            from scrydb.embed.local import _OFFLINE_ENV, resolve_model_dir

            for k, v in _OFFLINE_ENV.items():
                os.environ.setdefault(k, v)
            try:
                path, _ = resolve_model_dir(self.cfg.model)
            except ScryError as e:
                raise RerankError(str(e).replace("embedding model", "rerank model")) from None
            try:
                from sentence_transformers import CrossEncoder

                self._model = CrossEncoder(str(path), device=self.cfg.device, local_files_only=True)
            except Exception as e:  # a broken model directory must be one clean line
                raise RerankError(
                    f"cannot load rerank model from {path}: {type(e).__name__}: {e}"
                ) from None

    def score(self, query: str, documents: list[str]) -> list[float | None]:
        """Cross-encoder scores of (query, document) pairs."""
        self.load()
        import torch

        with torch.inference_mode():
            scores = self._model.predict(
                [(query, d) for d in documents],
                batch_size=self.BATCH,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        flat = [float(x) for x in scores.reshape(len(documents), -1)[:, -1]]
        return [s if finite_number(s) else None for s in flat]


#: The one place a ``[rerank] provider`` name maps to its class ("none": no reranker, the
#: leg is off). The names are ``config.CHOICES[("rerank", "provider")]``;
#: tests/test_config.py checks they agree.
RERANKERS: dict[str, Callable[[RerankConfig], Reranker] | None] = {
    "none": None,
    "http": HttpReranker,
    "local": LocalReranker,
}


def make_reranker(cfg: RerankConfig) -> Reranker:
    """The reranker a config asks for (nothing is loaded or contacted yet)."""
    build = RERANKERS.get(cfg.provider)
    if build is None:
        raise RerankError(f"no reranker configured (provider = {cfg.provider!r})")
    return build(cfg)


_cache: dict[tuple[Any, ...], Reranker] = {}
_cache_lock = threading.Lock()
#: Scoring runs here so that a slow reranker can be abandoned at the time budget.
_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="scry-rerank")


def get_reranker(cfg: RerankConfig) -> Reranker:
    """One reranker per distinct configuration per process (a local model loads once)."""
    key = (cfg.provider, cfg.model, cfg.url, cfg.api_key_env, cfg.device, cfg.timeout)
    with _cache_lock:
        rr = _cache.get(key)
        if rr is None:
            rr = _cache[key] = make_reranker(cfg)
        return rr


def document_text(c: Candidate, max_chars: int) -> str:
    """What the reranker reads of a chunk: its path and symbol, then its code (cut)."""
    head = c.path + (f" > {c.symbol}" if c.symbol else "")
    return f"{head}\n{c.content}"[:max_chars]


def score_with_budget(
    rr: Reranker, query: str, documents: list[str], budget: float
) -> list[float | None]:
    """``rr.score`` abandoned after ``budget`` seconds (:class:`RerankError` then)."""
    fut = _pool.submit(rr.score, query, documents)
    try:
        return fut.result(timeout=budget)
    except FutureTimeout:
        fut.cancel()
        raise RerankError(f"no answer within {budget:g} s") from None


def rerank_leg(cfg: RerankConfig, q: Query, cands: dict[int, Candidate], res: Results) -> bool:
    """Score the fused top N and cast the rerank rank votes; True when votes were cast
    (the caller then fuses again). Skipped for bare identifiers, where the exact name
    is the evidence and a cross-encoder only adds latency."""
    if cfg.provider == "none" or q.shape == "identifier":
        return False
    top = sorted(cands.values(), key=lambda c: -c.score)[: cfg.top_n]
    if len(top) < 2:
        return False
    docs = [document_text(c, cfg.max_chars) for c in top]
    try:
        rr = get_reranker(cfg)
        rr.load()
        scores = score_with_budget(rr, q.text, docs, cfg.timeout)
    except ScryError as e:
        res.notes.append(f"rerank skipped: {e}")
        return False
    except Exception as e:  # a model that crashes must not fail the search
        res.notes.append(f"rerank skipped: {type(e).__name__}: {e}")
        return False
    res.legs.append("rerank")
    scored = sorted(
        (i for i, s in enumerate(scores) if s is not None), key=lambda i: -(scores[i] or 0.0)
    )
    for r, i in enumerate(scored, 1):
        c = top[i]
        c.rerank_score, c.rerank_rank = scores[i], r
        if cfg.weight > 0:
            c.rank_votes["rerank"] = (cfg.weight, r)
    return cfg.weight > 0 and bool(scored)
