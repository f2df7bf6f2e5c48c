"""The embedders one index uses: the configured one, built on first use, and for query
vectors the one the index's vectors came from, which differs while a re-embed for a
newly configured model is under way (searches keep the old vectors, so the old model)."""

from __future__ import annotations

from collections.abc import Callable

from scrydb.config import EmbedConfig
from scrydb.embed.base import Embedder
from scrydb.embed.providers import embedder_id, make_embedder, recorded_embedder


class IndexEmbedders:
    """The embedders of one open index (:class:`scrydb.index.Index` holds one).

    ``given`` is an embedder the caller built (the watcher's, a test's); otherwise the
    configured one is built from ``cfg`` on first use (the model loads when it embeds).
    """

    def __init__(self, cfg: EmbedConfig, given: Embedder | None = None) -> None:
        self._cfg = cfg
        self._configured = given
        #: embedders rebuilt from the settings an index recorded, by their id
        self._recorded: dict[str, Embedder] = {}

    def configured(self) -> Embedder:
        """The configured embedder (built on first use)."""
        if self._configured is None:
            self._configured = make_embedder(self._cfg)
        return self._configured

    def configured_id(self) -> str:
        """Identity of the configured embedder (nothing is loaded)."""
        if self._configured is not None:
            return self._configured.id
        return embedder_id(self._cfg)

    def for_queries(self, meta: Callable[[str], str | None]) -> Embedder:
        """The embedder that made the index's vectors, given a reader of its ``meta``
        values: the configured one, except while a re-embed for a newly configured model
        is under way (``next_embedder`` set), when it is the live model rebuilt from the
        settings the index recorded (``embed_config``; see :func:`recorded_embedder`)."""
        live = meta("embedder")
        mine = self.configured_id()
        if live is None or live == mine or meta("next_embedder") is None:
            return self.configured()
        emb = self._recorded.get(live)
        if emb is None:
            emb = recorded_embedder(live, meta("embed_config"), mine)
            self._recorded[live] = emb
        return emb
