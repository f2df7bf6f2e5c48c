"""The embedding writer's statements (``sync/embedding.py``): what waits for a vector, the
derived header hashes and window rows, storing vectors and linking chunks to them, and
the bookkeeping of orphaned vectors. Each runs inside the caller's transaction unless it
says otherwise."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from scrydb.store.db import Store

#: A vector is in use while a chunk body, header or window points at it.
_USED = (
    "(EXISTS (SELECT 1 FROM chunks WHERE chunks.emb_id = embeddings.id) "
    "OR EXISTS (SELECT 1 FROM chunks WHERE chunks.head_emb_id = embeddings.id) "
    "OR EXISTS (SELECT 1 FROM chunk_windows w WHERE w.emb_id = embeddings.id))"
)

#: Which chunks a page reads (:func:`chunk_pages`), by name: a closed set, no SQL from callers.
CHUNK_PAGES = {
    "no-head-hash": "c.head_hash IS NULL",
    "no-views": "c.windows IS NULL",
    "body-pending": "c.emb_id IS NULL",
    "head-pending": "c.head_emb_id IS NULL AND c.head_hash != ''",
}


def anything_pending(store: Store) -> bool:
    """Whether a chunk body, header or window waits for a vector."""
    return bool(
        store.scalar(
            "SELECT EXISTS (SELECT 1 FROM chunks WHERE emb_id IS NULL "
            "OR (head_hash != '' AND head_emb_id IS NULL)) "
            "OR EXISTS (SELECT 1 FROM chunk_windows WHERE emb_id IS NULL)"
        )
    )


def pending_texts(store: Store) -> int:
    """Distinct texts (bodies, headers, windows) waiting for a vector."""
    s = store
    bodies = s.scalar("SELECT count(DISTINCT text_hash) FROM chunks WHERE emb_id IS NULL")
    heads = s.scalar(
        "SELECT count(DISTINCT head_hash) FROM chunks WHERE head_hash != '' AND head_emb_id IS NULL"
    )
    windows = s.scalar("SELECT count(DISTINCT text_hash) FROM chunk_windows WHERE emb_id IS NULL")
    return int(bodies or 0) + int(heads or 0) + int(windows or 0)


def chunk_pages(store: Store, which: str, page: int) -> Iterator[list[tuple[Any, ...]]]:
    """Pages of (id, path, symbol, kind, content, text_hash, head_hash) of the chunks
    ``which`` names (:data:`CHUNK_PAGES`), by id: keyset pages over the primary key, no
    scan or sort of all matching rows. A page's rows may change before the next is read."""
    where = CHUNK_PAGES[which]
    last_id = 0
    while True:
        rows = store.rows(
            "SELECT c.id, f.path, c.symbol, c.kind, c.content, c.text_hash, c.head_hash "
            f"FROM chunks c JOIN files f ON f.id = c.file_id WHERE {where} AND c.id > ? "
            "ORDER BY c.id LIMIT ?",
            (last_id, page),
        )
        if not rows:
            return
        last_id = rows[-1][0]
        yield rows


def pending_window_pages(store: Store, page: int) -> Iterator[list[tuple[Any, ...]]]:
    """Pages of (chunk id, seq, text_hash, path, symbol, content) of the windows waiting
    for a vector (keyset pages, as :func:`chunk_pages`)."""
    last = (0, -1)
    while True:
        rows = store.rows(
            "SELECT w.chunk_id, w.seq, w.text_hash, f.path, c.symbol, c.content "
            "FROM chunk_windows w JOIN chunks c ON c.id = w.chunk_id "
            "JOIN files f ON f.id = c.file_id WHERE w.emb_id IS NULL AND (w.chunk_id, w.seq) > (?, ?) "
            "ORDER BY w.chunk_id, w.seq LIMIT ?",
            (*last, page),
        )
        if not rows:
            return
        last = (rows[-1][0], rows[-1][1])
        yield rows


def reset_heads(store: Store) -> None:
    """Forget every header hash and header vector link (a changed header recipe)."""
    store.conn.execute(
        "UPDATE chunks SET head_hash = NULL, head_emb_id = NULL WHERE head_hash IS NOT NULL"
    )


def set_heads(store: Store, rows: Sequence[tuple[str, int]]) -> None:
    """(header hash, chunk id): '' for a chunk without a header."""
    store.conn.executemany("UPDATE chunks SET head_hash = ? WHERE id = ?", rows)


def reset_views(store: Store) -> None:
    """Forget every window and comment view (a changed rule or setting)."""
    store.conn.execute("DELETE FROM chunk_windows")
    store.conn.execute("UPDATE chunks SET windows = NULL WHERE windows IS NOT NULL")


def set_views(
    store: Store, rows: Sequence[tuple[int, int, str]], counts: Sequence[tuple[int, int]]
) -> None:
    """A page of chunks' views: (chunk id, seq, text hash) rows and (number of views, chunk
    id); earlier views of those chunks are replaced."""
    c = store.conn
    c.executemany("DELETE FROM chunk_windows WHERE chunk_id = ?", [(cid,) for _, cid in counts])
    c.executemany("INSERT INTO chunk_windows(chunk_id, seq, text_hash) VALUES (?, ?, ?)", rows)
    c.executemany("UPDATE chunks SET windows = ? WHERE id = ?", counts)


def link(store: Store, pairs: Sequence[tuple[str, int]]) -> None:
    """(text hash, vector id): point the chunks whose body, header or window has that hash
    at the vector, and count a kept orphan as in use again. The three kinds' hashes never
    collide (store/keys.py)."""
    c = store.conn
    c.executemany(
        "UPDATE chunks SET emb_id = ? WHERE text_hash = ? AND emb_id IS NULL",
        [(eid, h) for h, eid in pairs],
    )
    c.executemany(
        "UPDATE chunks SET head_emb_id = ? WHERE head_hash = ? AND head_emb_id IS NULL",
        [(eid, h) for h, eid in pairs],
    )
    c.executemany(
        "UPDATE chunk_windows SET emb_id = ? WHERE text_hash = ? AND emb_id IS NULL",
        [(eid, h) for h, eid in pairs],
    )
    c.executemany(
        "UPDATE embeddings SET orphaned_at = NULL WHERE id = ? AND orphaned_at IS NOT NULL",
        [(eid,) for _h, eid in pairs],
    )


def store_vectors(
    store: Store, hashes: Sequence[str], vecs: np.ndarray, origin: int | None = None
) -> None:
    """Store vectors under their hashes and link the chunks waiting for them, in one
    transaction; ``origin`` says where they came from (None: the model; store/keys.py)."""
    s = store
    c = s.conn
    with s.transaction():
        # Ids only grow (meta.emb_seq survives deletions), so readers can tell new
        # vectors from old ones by id alone.
        seq = max(int(s.meta("emb_seq") or 0), s.scalar("SELECT max(id) FROM embeddings") or 0)
        rows = []
        for h, v in zip(hashes, vecs, strict=True):
            eid = s.scalar("SELECT id FROM embeddings WHERE text_hash = ?", (h,))
            if eid is None:
                seq += 1
                eid = seq
                c.execute(
                    "INSERT INTO embeddings(id, text_hash, origin) VALUES (?, ?, ?)",
                    (eid, h, origin),
                )
            else:
                c.execute("UPDATE embeddings SET origin = ? WHERE id = ?", (origin, eid))
                c.execute("DELETE FROM vec_float WHERE rowid = ?", (eid,))
                c.execute("DELETE FROM vec_bit WHERE rowid = ?", (eid,))
            rows.append((eid, np.ascontiguousarray(v, dtype=np.float32).tobytes(), h))
        c.executemany(
            "INSERT INTO vec_float(rowid, embedding) VALUES (?, ?)", [r[:2] for r in rows]
        )
        c.executemany(
            "INSERT INTO vec_bit(rowid, embedding) VALUES (?, vec_quantize_binary(?))",
            [r[:2] for r in rows],
        )
        link(s, [(h, eid) for eid, _, h in rows])
        s.set_meta("emb_seq", str(seq))
        s.bump("vec_epoch")


def track_orphans(store: Store, keep: int) -> int:
    """In one transaction: stamp vectors that lost their last chunk, unstamp reused ones,
    and drop the oldest orphans beyond ``keep``; how many were dropped."""
    s = store
    now = time.time()
    with s.transaction():
        c = s.conn
        c.execute(
            f"UPDATE embeddings SET orphaned_at = NULL WHERE orphaned_at IS NOT NULL AND {_USED}"
        )
        c.execute(
            f"UPDATE embeddings SET orphaned_at = ? WHERE orphaned_at IS NULL AND NOT {_USED}",
            (now,),
        )
        drop = [
            (r[0],)
            for r in s.rows(
                "SELECT id FROM embeddings WHERE orphaned_at IS NOT NULL "
                "ORDER BY orphaned_at DESC, id DESC LIMIT -1 OFFSET ?",
                (max(0, keep),),
            )
        ]
        if drop:
            c.executemany("DELETE FROM vec_float WHERE rowid = ?", drop)
            c.executemany("DELETE FROM vec_bit WHERE rowid = ?", drop)
            c.executemany("DELETE FROM embeddings WHERE id = ?", drop)
            c.executemany("UPDATE chunks SET head_emb_id = NULL WHERE head_emb_id = ?", drop)
            c.executemany("UPDATE chunk_windows SET emb_id = NULL WHERE emb_id = ?", drop)
            s.bump("vec_epoch")
    return len(drop)
