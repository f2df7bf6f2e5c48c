"""The vector tables of an index: the sqlite-vec ``vec_float`` / ``vec_bit`` tables of
the live embedder, and ``vec_next``, where a newly configured embedder's vectors wait
until they are complete (``scrydb.sync.models``)."""

from __future__ import annotations

from typing import Any, Protocol

import apsw

VEC_TABLES_SQL = """
CREATE VIRTUAL TABLE IF NOT EXISTS vec_float USING vec0(embedding float[{dim}] distance_metric=cosine);
CREATE VIRTUAL TABLE IF NOT EXISTS vec_bit USING vec0(embedding bit[{dim}]);
"""


class _Core(Protocol):
    """What the vector-table operations need of the :class:`~scrydb.store.Store` they are
    mixed into (its connection and meta helpers): a type for ``self``, not placeholders."""

    conn: apsw.Connection

    def scalar(self, sql: str, params: tuple[Any, ...] = ()) -> Any: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def meta(self, key: str, default: str | None = None) -> str | None: ...

    def bump(self, key: str) -> None: ...

    def has_table(self, name: str) -> bool: ...


class VectorTables:
    """The lifecycle of the vector tables (create, drop, the ``vec_next`` of a model
    switch), one job of :class:`~scrydb.store.Store`, which mixes it in."""

    def vec_dim(self: _Core) -> int | None:
        """Dimension of the vector tables, or None when they do not exist yet."""
        v = self.meta("embed_dim")
        if v is None or not self.has_table("vec_float"):
            return None
        return int(v)

    def create_vec_tables(self: _Core, dim: int) -> None:
        """Create the sqlite-vec tables for ``dim``-dimensional vectors (in a transaction)."""
        self.conn.execute(VEC_TABLES_SQL.format(dim=int(dim)))
        self.set_meta("embed_dim", str(int(dim)))

    def drop_vectors(self: _Core) -> None:
        """Forget every embedding (a changed embedder): chunks become lexical-only."""
        self.conn.execute("UPDATE chunks SET emb_id = NULL WHERE emb_id IS NOT NULL")
        self.conn.execute("UPDATE chunks SET head_emb_id = NULL WHERE head_emb_id IS NOT NULL")
        self.conn.execute("UPDATE chunk_windows SET emb_id = NULL WHERE emb_id IS NOT NULL")
        self.conn.execute("DELETE FROM embeddings")
        self.conn.execute("DROP TABLE IF EXISTS vec_float")
        self.conn.execute("DROP TABLE IF EXISTS vec_bit")
        self.conn.execute("DELETE FROM query_cache")
        self.bump("vec_epoch")

    def start_next_vectors(self: _Core, target: str, dim: int) -> None:
        """Begin computing a new embedder's vectors beside the live ones (in a
        transaction): ``vec_next`` holds them by chunk text hash until the switch."""
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS vec_next "
            "(text_hash TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID"
        )
        self.set_meta("next_embedder", target)
        self.set_meta("next_dim", str(int(dim)))

    def clear_next_vectors(self: _Core) -> None:
        """Forget a re-embed under way (in a transaction)."""
        self.conn.execute("DROP TABLE IF EXISTS vec_next")
        self.conn.execute("DELETE FROM meta WHERE key IN ('next_embedder', 'next_dim')")

    def next_vectors_progress(self: _Core) -> tuple[str, int, int] | None:
        """(new embedder, texts done, texts in all) of a re-embed under way, else None."""
        target = self.meta("next_embedder")
        if target is None or not self.has_table("vec_next"):
            return None
        total = self.scalar("SELECT count(DISTINCT text_hash) FROM chunks") or 0
        done = (
            self.scalar(
                "SELECT count(*) FROM vec_next WHERE text_hash IN (SELECT text_hash FROM chunks)"
            )
            or 0
        )
        return target, done, total
