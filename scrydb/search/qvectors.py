"""Query vectors: the process cache, then the index's ``query_cache`` table, then the
model (through HyDE when ``[chat] hyde`` asks for it)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from scrydb.config import Config
from scrydb.embed import Embedder
from scrydb.results import Results
from scrydb.search.query import dense_text
from scrydb.store import BUSY_TIMEOUT_MS, Store, lookup

#: Query vectors kept per process (and persisted in the ``query_cache`` table).
QUERY_CACHE_SIZE = 256


class QueryVectors:
    """Vectors of query texts for one store. Thread-safe."""

    def __init__(
        self,
        store: Store,
        config: Config,
        embedder: Callable[[], Embedder],
        lang_hint: Callable[[], str | None],
    ) -> None:
        self.store = store
        self.config = config
        self.embedder = embedder
        self.lang_hint = lang_hint
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def vector(self, text: str, res: Results | None = None) -> np.ndarray:
        """The query's vector: process cache, then the index's cache, then the model, which
        embeds the query without its opening question words (:func:`query.dense_text`).

        For a search (``res`` given) whose shape ``[chat] hyde`` expands, the vector is
        made from the chat model's hypothetical code (``scrydb.search.hyde``) and cached under a
        key that says so; a failing chat model falls back to the plain vector (noted).
        """
        emb = self.embedder()
        tag = ""
        if res is not None and self.config.chat.hyde != "off":
            from scrydb.search import hyde

            tag = hyde.cache_tag(self.config.chat, res.shape)
        # Keyed by what is embedded: questions that differ only in their opening words
        # share a vector (HyDE asks the chat model with the whole question).
        keyed = text if tag else dense_text(text)
        key = hashlib.blake2b(f"{emb.id}\0{tag}{keyed}".encode(), digest_size=16).hexdigest()
        with self._lock:
            if key in self._qcache:
                self._qcache.move_to_end(key)
                return self._qcache[key]
        vec = lookup.cached_query_vector(self.store, key)
        if vec is None:
            vec = (
                hyde.hyde_vector(self.config.chat, emb, text, res, self.lang_hint())
                if tag and res is not None
                else None
            )
            if tag and vec is None:
                return self.vector(text)  # the chat model failed: plain query
            if vec is None:
                vec = emb.embed_query(keyed)
            self._persist_query_vector(key, vec)
        with self._lock:
            self._qcache[key] = vec
            while len(self._qcache) > QUERY_CACHE_SIZE:
                self._qcache.popitem(last=False)
        return vec

    def vectors(self, texts: list[str]) -> list[np.ndarray]:
        """The vectors of several query texts (a bug report's prose segments; no HyDE):
        each from the caches when there, the rest embedded in one call (side by side)."""
        emb = self.embedder()
        keyed = [dense_text(t) for t in texts]
        keys = [
            hashlib.blake2b(f"{emb.id}\0{k}".encode(), digest_size=16).hexdigest() for k in keyed
        ]
        out: list[np.ndarray | None] = []
        for key in keys:
            with self._lock:
                vec = self._qcache.get(key)
            out.append(vec if vec is not None else lookup.cached_query_vector(self.store, key))
        missing = [i for i, v in enumerate(out) if v is None]
        if missing:
            new = emb.embed_queries([keyed[i] for i in missing])
            for i, vec in zip(missing, new, strict=True):
                out[i] = vec
                self._persist_query_vector(keys[i], vec)
        with self._lock:
            for key, vec in zip(keys, out, strict=True):
                self._qcache[key] = vec  # type: ignore[assignment]
                self._qcache.move_to_end(key)
            while len(self._qcache) > QUERY_CACHE_SIZE:
                self._qcache.popitem(last=False)
        return [v for v in out if v is not None]

    def _persist_query_vector(self, key: str, vec: np.ndarray) -> None:
        """Best effort: never wait for the writer, never fail a search over it."""
        lookup.keep_query_vector(self.store, key, vec, QUERY_CACHE_SIZE, BUSY_TIMEOUT_MS)
