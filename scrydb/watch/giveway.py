"""An embedder that gives way: embeddings run in slices, and a slice boundary is where a
waiting lexical sync takes over (the slices already computed are kept)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from scrydb.embed import Embedder
from scrydb.errors import ScryError
from scrydb.watch.events import EMBED_SLICE, KEEP_MAX, WARM_TEXT


class GaveWay(Exception):
    """An embedding batch was abandoned for new file events (see GivingWayEmbedder)."""


class GivingWayEmbedder(Embedder):
    """An embedder for a background embedding phase that must give way to lexical syncs.

    ``load(done)`` loads ``inner``'s model in a daemon thread of its own (no lock held:
    lexical syncs go on meanwhile) and calls ``done()`` when it is ready or failed
    (``state``: "cold", "loading", "ready", "failed"; ``error`` says why). A document
    batch is embedded ``slice`` texts at a time, and before every slice but the first
    ``give_way()`` is asked: when it says so the batch is abandoned (:class:`GaveWay`
    leaves ``Index.sync``, nothing half-written) and the slices already computed are
    kept, so the next batch that asks for those texts gets them without recomputing.
    A call of at most ``slice`` texts (a probe) never gives way.

    Other threads may embed queries through it (an MCP server's searches): every model
    call holds ``lock`` (a tokenizer is not safe to share between threads), so a query
    waits for at most one slice. With ``queries=True`` the load embeds a query first
    and sets ``queries_ready`` before it loads the document side.
    """

    def __init__(self, inner: Embedder, slice: int = EMBED_SLICE, queries: bool = False) -> None:
        self.inner = inner
        self.id = inner.id
        self.slice = max(1, slice)
        self.queries = queries
        self.give_way: Callable[[], bool] = _never
        self.state = "cold"
        self.error: str | None = None
        self.lock = threading.Lock()
        self.queries_ready = threading.Event()
        self._kept: dict[str, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return self.inner.dim

    def load(self, done: Callable[[], None] | None = None) -> None:
        """Load the model in the background (once; again after a failure)."""
        if self.state in ("loading", "ready"):
            return
        self.state, self.error = "loading", None
        threading.Thread(target=self._load, args=(done,), name="scry-model", daemon=True).start()

    def _load(self, done: Callable[[], None] | None) -> None:
        try:
            if self.queries:
                with self.lock:
                    self.inner.embed_queries([WARM_TEXT])
                self.queries_ready.set()
            with self.lock:
                self.inner.embed_documents([WARM_TEXT])  # loads the model; vectors not kept
            self.state = "ready"
        except Exception as e:  # reported by the watcher; retried on the next change
            self.error = str(e) if isinstance(e, ScryError) else f"{type(e).__name__}: {e}"
            self.state = "failed"
        if done is not None:
            done()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return self.inner.embed_documents([])
        kept = self._kept
        todo = [t for t in dict.fromkeys(texts) if t not in kept]
        if len(kept) + len(todo) > KEEP_MAX:  # abandoned texts that never came back
            kept.clear()
            todo = list(dict.fromkeys(texts))
        for i in range(0, len(todo), self.slice):
            if i and self.give_way():
                raise GaveWay
            part = todo[i : i + self.slice]
            with self.lock:
                vectors = np.asarray(self.inner.embed_documents(part))
            kept.update(zip(part, vectors, strict=True))
        out = np.stack([kept[t] for t in texts])
        for t in texts:
            kept.pop(t, None)
        return out

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        with self.lock:
            return self.inner.embed_queries(texts)


def _never() -> bool:
    return False


# -- the command -------------------------------------------------------------------------
