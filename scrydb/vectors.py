"""The dense leg's in-memory view of the vec0 tables.

The vectors' single source of truth is the sqlite-vec ``vec_float`` table. Reading it
once into a numpy matrix and scanning that is several times faster than a vec0 KNN query
(DESIGN.md: 1.2 ms vs 10 ms at 16k vectors), so a process keeps the matrix and refreshes
it when ``meta.vec_epoch`` moves (new rows are appended; a deletion reloads).

Above ``exact_max`` vectors, a coarse pass ranks the sign bits by Hamming distance (the
same bits as the ``vec_bit`` table: ``vec_quantize_binary`` keeps ``x > 0``) and float
vectors rescore the ``coarse_pool`` best.
"""

from __future__ import annotations

import threading

import numpy as np

from scrydb.store import Store


class VectorIndex:
    """Embedding ids + float32 matrix (+ packed sign bits) loaded from the store."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.bits = np.zeros((0, 0), dtype=np.uint8)
        self.epoch: str | None = None
        self.live: np.ndarray | None = None  #: rows that some chunk uses (None = all)
        self._live_epoch: tuple[str | None, str | None] | None = None
        self.dim = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def refresh(self, store: Store) -> None:
        """Bring the matrix up to date with the store (cheap when nothing changed)."""
        self._refresh_vectors(store)
        self._refresh_live(store)

    def _refresh_live(self, store: Store) -> None:
        """Mask out vectors no chunk uses (kept for reuse after a branch switch): they must
        neither take places in the candidate pool nor shift the dense ranks."""
        key = (store.meta("vec_epoch", "0"), store.meta("lex_epoch", "0"))
        if key == self._live_epoch:
            return
        used = np.fromiter(
            (
                r[0]
                for r in store.conn.execute(
                    "SELECT DISTINCT emb_id FROM chunks WHERE emb_id IS NOT NULL"
                )
            ),
            dtype=np.int64,
        )
        mask = np.isin(self.ids, used)
        self.live = None if mask.all() else mask
        self._live_epoch = key

    def _refresh_vectors(self, store: Store) -> None:
        epoch = store.meta("vec_epoch", "0")
        if epoch == self.epoch:
            return
        with self._lock:
            if epoch == self.epoch:
                return
            dim = store.vec_dim()
            if dim is None:
                self.__init__()  # type: ignore[misc]
                self.epoch = epoch
                return
            if dim != self.dim or len(self) == 0:
                self._load(store, dim, after=None)
            else:
                # Additions only are the common case; any deletion means a full reload.
                count = store.scalar("SELECT count(*) FROM embeddings")
                last = int(self.ids[-1]) if len(self) else 0
                added = store.scalar("SELECT count(*) FROM embeddings WHERE id > ?", (last,))
                if count == len(self) + added:
                    self._load(store, dim, after=last)
                else:
                    self._load(store, dim, after=None)
            self.epoch = epoch

    def _load(self, store: Store, dim: int, after: int | None) -> None:
        sql = "SELECT rowid, embedding FROM vec_float"
        params: tuple[int, ...] = ()
        if after is not None:
            sql += " WHERE rowid > ?"
            params = (after,)
        rows = store.rows(sql + " ORDER BY rowid", params)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if rows:
            mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
                len(rows), dim
            )
        else:
            mat = np.zeros((0, dim), dtype=np.float32)
        bits = np.packbits(mat > 0, axis=1)
        if after is None:
            self.ids, self.matrix, self.bits = ids, mat, bits
        else:
            self.ids = np.concatenate([self.ids, ids])
            self.matrix = np.concatenate([self.matrix, mat]) if len(mat) else self.matrix
            self.bits = np.concatenate([self.bits, bits]) if len(mat) else self.bits
        self.dim = dim

    def search(
        self,
        query: np.ndarray,
        k: int,
        allowed: np.ndarray | None = None,
        exact_max: int = 8000,
        coarse_pool: int = 400,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` (embedding ids, cosine scores), best first.

        ``allowed`` is a boolean mask over rows (filters pushed into the leg).
        """
        n = len(self)
        if n == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if self.live is not None and len(self.live) == n:
            allowed = self.live if allowed is None else (allowed & self.live)
        rows = np.flatnonzero(allowed) if allowed is not None else None
        count = n if rows is None else len(rows)
        if count == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if count > exact_max:
            cand = self._coarse(q, rows, max(coarse_pool, k))
        else:
            cand = rows
        mat = self.matrix if cand is None else self.matrix[cand]
        scores = mat @ q
        top = _top_k(scores, k)
        idx = top if cand is None else cand[top]
        return self.ids[idx], scores[top]

    def _coarse(self, q: np.ndarray, rows: np.ndarray | None, pool: int) -> np.ndarray:
        """Rows of the ``pool`` vectors nearest by Hamming distance of sign bits."""
        qbits = np.packbits(q > 0)
        bits = self.bits if rows is None else self.bits[rows]
        dist = np.bitwise_count(np.bitwise_xor(bits, qbits)).sum(axis=1, dtype=np.int32)
        top = _top_k(-dist, pool)
        return top if rows is None else rows[top]

    def vector(self, emb_id: int) -> np.ndarray | None:
        """The stored vector of one embedding id, or None."""
        pos = np.searchsorted(self.ids, emb_id)
        if pos < len(self.ids) and self.ids[pos] == emb_id:
            return self.matrix[pos]
        return None

    def mask(self, emb_ids: np.ndarray) -> np.ndarray:
        """Boolean row mask of the given embedding ids."""
        return np.isin(self.ids, emb_ids)


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, in descending order."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < len(scores):
        part = np.argpartition(-scores, k - 1)[:k]
    else:
        part = np.arange(len(scores))
    return part[np.argsort(-scores[part], kind="stable")]
