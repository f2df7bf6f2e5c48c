"""The statements of a model switch (``sync/models.py``): which texts still lack a vector of
the new model in ``vec_next``, storing those vectors, and the one-transaction switch that
replaces the old model's vectors by the complete new set. (The table's lifecycle, create and
drop, is ``store/tables.py``'s.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from scrydb.store.db import Store

#: The texts without a vec_next vector, per kind of text: body, header, window.
_MISSING = {
    "body": (
        "FROM chunks c JOIN files f ON f.id = c.file_id WHERE NOT EXISTS "
        "(SELECT 1 FROM vec_next n WHERE n.text_hash = c.text_hash)"
    ),
    "head": (
        "FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.head_hash != '' AND "
        "NOT EXISTS (SELECT 1 FROM vec_next n WHERE n.text_hash = c.head_hash)"
    ),
    "window": (
        "FROM chunk_windows w JOIN chunks c ON c.id = w.chunk_id "
        "JOIN files f ON f.id = c.file_id WHERE NOT EXISTS "
        "(SELECT 1 FROM vec_next n WHERE n.text_hash = w.text_hash)"
    ),
}
_KEY = {"body": "c.text_hash", "head": "c.head_hash", "window": "w.text_hash"}


def has_vectors(store: Store) -> bool:
    """Whether the index holds any vector."""
    return store.scalar("SELECT 1 FROM embeddings LIMIT 1") is not None


def missing_count(store: Store) -> int:
    """Distinct texts (bodies, headers, windows) without a vector of the new model."""
    return sum(
        int(store.scalar(f"SELECT count(DISTINCT {_KEY[k]}) {_MISSING[k]}") or 0) for k in _MISSING
    )


def missing_page(store: Store, kind: str, limit: int) -> list[tuple[Any, ...]]:
    """Up to ``limit`` texts of ``kind`` without a new-model vector: (hash, content, symbol,
    path) for bodies, (hash, content, symbol, chunk kind, path) for headers and (hash,
    content, symbol, path, seq) for windows."""
    cols = {
        "body": "c.text_hash, c.content, c.symbol, f.path",
        "head": "c.head_hash, c.content, c.symbol, c.kind, f.path",
        "window": "w.text_hash, c.content, c.symbol, f.path, w.seq",
    }[kind]
    return store.rows(f"SELECT {cols} {_MISSING[kind]} LIMIT ?", (limit,))


def put(store: Store, hashes: list[str], vecs: list[np.ndarray]) -> None:
    """Store new-model vectors in ``vec_next`` (one transaction)."""
    with store.transaction():
        store.conn.executemany(
            "INSERT OR REPLACE INTO vec_next(text_hash, vector) VALUES (?, ?)",
            [
                (h, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                for h, v in zip(hashes, vecs, strict=True)
            ],
        )


def complete(store: Store) -> bool:
    """Whether every body, header and window has its new-model vector."""
    return not (
        store.scalar(
            "SELECT 1 FROM chunks c WHERE NOT EXISTS "
            "(SELECT 1 FROM vec_next n WHERE n.text_hash = c.text_hash) LIMIT 1"
        )
        or store.scalar(
            "SELECT 1 FROM chunks c WHERE c.head_hash != '' AND NOT EXISTS "
            "(SELECT 1 FROM vec_next n WHERE n.text_hash = c.head_hash) LIMIT 1"
        )
        or store.scalar(
            "SELECT 1 FROM chunk_windows w WHERE NOT EXISTS "
            "(SELECT 1 FROM vec_next n WHERE n.text_hash = w.text_hash) LIMIT 1"
        )
    )


def switch(store: Store) -> None:
    """Inside the caller's transaction: drop the old vectors and make the complete
    ``vec_next`` set the live one (new embedding ids after every id used so far), then
    forget ``vec_next``. The caller records the new embedder and bumps the epoch."""
    s = store
    dim = int(s.meta("next_dim") or 0)
    seq = max(int(s.meta("emb_seq") or 0), s.scalar("SELECT max(id) FROM embeddings") or 0)
    s.drop_vectors()
    s.create_vec_tables(dim)
    c = s.conn
    c.execute(
        "INSERT INTO embeddings(id, text_hash) SELECT ? + row_number() OVER "
        "(ORDER BY text_hash), text_hash FROM vec_next "
        "WHERE text_hash IN (SELECT text_hash FROM chunks "
        "UNION SELECT head_hash FROM chunks WHERE head_hash != '' "
        "UNION SELECT text_hash FROM chunk_windows)",
        (seq,),
    )
    c.execute(
        "INSERT INTO vec_float(rowid, embedding) SELECT e.id, n.vector "
        "FROM embeddings e JOIN vec_next n ON n.text_hash = e.text_hash"
    )
    c.execute(
        "INSERT INTO vec_bit(rowid, embedding) SELECT e.id, vec_quantize_binary(n.vector) "
        "FROM embeddings e JOIN vec_next n ON n.text_hash = e.text_hash"
    )
    c.execute(
        "UPDATE chunks SET emb_id = "
        "(SELECT e.id FROM embeddings e WHERE e.text_hash = chunks.text_hash), "
        "head_emb_id = "
        "(SELECT e.id FROM embeddings e WHERE e.text_hash = chunks.head_hash)"
    )
    c.execute(
        "UPDATE chunk_windows SET emb_id = "
        "(SELECT e.id FROM embeddings e WHERE e.text_hash = chunk_windows.text_hash)"
    )
    s.set_meta("emb_seq", str(seq + (s.scalar("SELECT count(*) FROM embeddings") or 0)))
    s.clear_next_vectors()
