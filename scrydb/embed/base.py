"""The one interface every embedder implements (:class:`Embedder`) and
:func:`normalise`, which scales its vectors to unit length."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors."""

    #: Stable identity (provider, model, version): part of the index fingerprint.
    id: str

    @property
    @abstractmethod
    def dim(self) -> int:
        """Vector dimension (may load the model)."""

    @abstractmethod
    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Vectors of chunk texts, shape (len(texts), dim), float32, unit length."""

    @abstractmethod
    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Vectors of search queries, shape (len(texts), dim), float32, unit length."""

    def embed_query(self, text: str) -> np.ndarray:
        """Vector of one query, shape (dim,)."""
        return self.embed_queries([text])[0]

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (connections, thread pools)."""


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (v / norms).astype(np.float32, copy=False)
