"""The dense leg's in-memory view of the vec0 tables.

The vectors' single source of truth is the sqlite-vec ``vec_float`` table. Reading it
once into a numpy matrix and scanning that is many times faster than a vec0 KNN query
(``bench/run.py``: about 1 ms vs 18 ms at 16k vectors), so a process keeps the matrix and
refreshes it when ``meta.vec_epoch`` moves (new rows are appended; a deletion reloads).
A full load reads vec0's chunk blobs directly (up to 1,024 vectors per row, not one),
checked against the table's own row count and a sample of rows, and falls back to
reading the table row by row when its layout is not the one it knows.

Up to ``exact_max`` vectors (250k by default) every query is an exact scan: 5-13 ms at
100k on 2 cores. Above it, a coarse pass ranks the sign bits by Hamming distance (the
same bits as the ``vec_bit`` table: ``vec_quantize_binary`` keeps ``x > 0``) and float
vectors rescore the best ``coarse_pool`` rows or ``COARSE_SHARE`` of them, whichever is
more. The bits are made on first use and kept column-major in 64-bit words, so the pass
is six vectorised XOR/popcount sweeps over contiguous memory (0.2 ms at 100k vectors).

Products are computed with ``np.einsum`` rather than BLAS: single-threaded, so a busy
machine never stalls a query on a BLAS worker thread (measured on 2 shared cores: a
16k-vector scan took 16 ms with two OpenBLAS threads, 0.9 ms with one).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import apsw
import numpy as np

from scrydb.store.db import Store

#: The coarse pass keeps at least this share of the candidate rows for the float rescore.
#: On real MiniLM vectors with the golden sets' questions as queries, the sign bits
#: recall 0.49-0.62 of the exact top 10 at a 0.4% pool, 0.95-0.99 at 8%, 0.985-0.998 at
#: 15% (1,830 and 3,533 vectors; recall grows with the corpus at a fixed share). Questions
#: and code live far apart; a chunk as the query needs only 2%.
COARSE_SHARE = 0.15
#: Rows scored per block when a subset of rows is rescored: bounds the copy a gather makes
#: (256 rows of 384 floats = 384 KB).
SCORE_BLOCK = 256
#: Rows gathered per product when the cosines of given ids are computed (64 rows of 384
#: floats = 96 KB; a query's dense leg stays within its allocation gate).
GATHER_BLOCK = 64
#: vec0 rows re-read through the table's public interface to check a direct chunk read.
CHECK_SAMPLE = 4


class VectorIndex:
    """Embedding ids + float32 matrix (+ packed sign bits) loaded from the store."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        #: Sign bits, (words, rows) uint64, made on first coarse pass (see ``bits``).
        self._bits: np.ndarray | None = None
        self.epoch: str | None = None
        self.live: np.ndarray | None = None  #: rows that some chunk uses (None = all)
        #: rows that some chunk uses as its body (not only as its header); None = all
        self.bodies: np.ndarray | None = None
        self._live_epoch: tuple[str | None, str | None] | None = None
        self.dim = 0
        self.loaded_by = ""  #: "chunks" (vec0 blobs) or "rows" (row by row), for the bench
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @property
    def bits(self) -> np.ndarray:
        """Sign bits of the matrix, (words, rows) uint64: word j of every row contiguous."""
        bits = self._bits
        if bits is None or bits.shape[1] != len(self):
            bits = self._bits = sign_bits(self.matrix)
        return bits

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
        bodies = np.fromiter(
            (
                r[0]
                for r in store.conn.execute(
                    "SELECT DISTINCT emb_id FROM chunks WHERE emb_id IS NOT NULL"
                )
            ),
            dtype=np.int64,
        )
        heads = np.fromiter(
            (
                r[0]
                for r in store.conn.execute(
                    "SELECT head_emb_id FROM chunks WHERE head_emb_id IS NOT NULL "
                    "UNION SELECT emb_id FROM chunk_windows WHERE emb_id IS NOT NULL"
                )
            ),
            dtype=np.int64,
        )
        body_mask = np.isin(self.ids, bodies)
        mask = body_mask | np.isin(self.ids, heads)
        self.live = None if mask.all() else mask
        self.bodies = None if body_mask.all() else body_mask
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
        got = read_chunks(store, "vec_float", dim) if after is None else None
        self.loaded_by = "chunks" if got is not None else "rows"
        ids, mat = got if got is not None else read_rows(store, dim, after)
        if after is None:
            self.ids, self.matrix = ids, mat
        elif len(ids):
            self.ids = np.concatenate([self.ids, ids])
            self.matrix = np.concatenate([self.matrix, mat])
        self._bits = None
        self.dim = dim

    def search(
        self,
        query: np.ndarray,
        k: int,
        allowed: np.ndarray | None = None,
        exact_max: int = 250_000,
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
        count = n if allowed is None else int(np.count_nonzero(allowed))
        if count == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if count > exact_max:
            pool = max(coarse_pool, k, int(count * COARSE_SHARE))
            rows = self._coarse(q, allowed, pool)
        elif allowed is not None and count * 4 < n:
            rows = np.flatnonzero(allowed)  # a narrow filter: score its rows only
        else:
            rows = None
        if rows is None:
            scores = np.einsum("ij,j->i", self.matrix, q)
            if allowed is not None:
                scores[~allowed] = -np.inf
            top = _top_k(scores, min(k, count))
            return self.ids[top], scores[top]
        scores = self._scores(q, rows)
        top = _top_k(scores, k)
        return self.ids[rows[top]], scores[top]

    def _scores(self, q: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Cosine of ``q`` with the given rows, gathered a block at a time."""
        out = np.empty(len(rows), dtype=np.float32)
        for i in range(0, len(rows), SCORE_BLOCK):
            part = rows[i : i + SCORE_BLOCK]
            out[i : i + len(part)] = np.einsum("ij,j->i", self.matrix[part], q)
        return out

    def _coarse(self, q: np.ndarray, allowed: np.ndarray | None, pool: int) -> np.ndarray:
        """Rows of the ``pool`` allowed vectors nearest by Hamming distance of sign bits."""
        qbits = sign_bits(q[None, :])[:, 0]
        bits = self.bits
        n = len(self)
        dist = np.zeros(n, dtype=np.uint16)
        word = np.empty(n, dtype=np.uint64)
        ones = np.empty(n, dtype=np.uint8)
        for j in range(bits.shape[0]):
            np.bitwise_xor(bits[j], qbits[j], out=word)
            np.bitwise_count(word, out=ones)
            dist += ones
        if allowed is not None:
            dist[~allowed] = np.iinfo(np.uint16).max
        pool = min(pool, n)
        if pool < n:
            rows = np.argpartition(dist, pool - 1)[:pool]
        else:
            rows = np.arange(n)
        if allowed is not None:
            rows = rows[allowed[rows]]
        rows.sort()  # ascending rows: the gathers read memory in order
        return rows

    def vector(self, emb_id: int) -> np.ndarray | None:
        """The stored vector of one embedding id, or None."""
        pos = np.searchsorted(self.ids, emb_id)
        if pos < len(self.ids) and self.ids[pos] == emb_id:
            return self.matrix[pos]
        return None

    def cosines(self, emb_ids: Iterable[int], qvec: np.ndarray) -> dict[int, float]:
        """Cosine with ``qvec`` of each given embedding id that has a stored vector (the ids
        a search needs beyond its nearest), GATHER_BLOCK rows per product."""
        want = np.fromiter(emb_ids, dtype=np.int64)
        if not len(want) or not len(self.ids):
            return {}
        pos = np.minimum(np.searchsorted(self.ids, want), len(self.ids) - 1)
        found = self.ids[pos] == want
        rows, ids = pos[found], want[found].tolist()
        scores: list[float] = []
        for i in range(0, len(rows), GATHER_BLOCK):  # bounded copies (a gather copies)
            block = self.matrix[rows[i : i + GATHER_BLOCK]]
            scores += np.einsum("ij,j->i", block, qvec).tolist()
        return dict(zip(ids, scores, strict=True))

    def mask(self, emb_ids: np.ndarray) -> np.ndarray:
        """Boolean row mask of the given embedding ids."""
        return np.isin(self.ids, emb_ids)


def sign_bits(mat: np.ndarray) -> np.ndarray:
    """Sign bits (``x > 0``) of each row, packed into (words, rows) uint64."""
    rows, dim = mat.shape
    words = (dim + 63) // 64
    packed = np.zeros((rows, words * 8), dtype=np.uint8)
    packed[:, : (dim + 7) // 8] = np.packbits(mat > 0, axis=1)
    return np.ascontiguousarray(packed.view(np.uint64).T)


def read_rows(store: Store, dim: int, after: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(ids, matrix) of vec_float read row by row (``after``: only rowids above it)."""
    sql = "SELECT rowid, embedding FROM vec_float"
    params: tuple[int, ...] = ()
    if after is not None:
        sql += " WHERE rowid > ?"
        params = (after,)
    rows = store.rows(sql + " ORDER BY rowid", params)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    mat = np.empty((len(rows), dim), dtype=np.float32)
    for i, r in enumerate(rows):
        mat[i] = np.frombuffer(r[1], dtype=np.float32)
    return ids, mat


def read_chunks(store: Store, table: str, dim: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(ids, matrix) of a vec0 float table read from its chunk blobs, sorted by id.

    vec0 (sqlite-vec 0.1) stores vectors in chunks: ``T_chunks`` holds each chunk's
    size, validity bitmap and rowids, ``T_vector_chunks00`` its vectors as one blob.
    Anything unexpected (other tables, sizes, counts, or a sampled row that differs from
    what the table itself returns) gives None, and the caller reads row by row.
    """
    try:
        total = store.scalar(f"SELECT count(*) FROM {table}_rowids")
        cur = store.conn.execute(
            f"SELECT c.size, c.validity, c.rowids, v.vectors FROM {table}_chunks AS c "
            f"JOIN {table}_vector_chunks00 AS v ON v.rowid = c.chunk_id ORDER BY c.chunk_id"
        )
        ids = np.empty(total, dtype=np.int64)
        mat = np.empty((total, dim), dtype=np.float32)
        n = 0
        for size, validity, rowids, vectors in cur:
            if (
                not isinstance(vectors, bytes)
                or len(vectors) != size * dim * 4
                or len(rowids) != size * 8
                or len(validity) * 8 < size
            ):
                return None
            valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[:size]
            keep = np.flatnonzero(valid)
            m = len(keep)
            if n + m > total:
                return None
            chunk_ids = np.frombuffer(rowids, np.int64)
            chunk = np.frombuffer(vectors, np.float32).reshape(size, dim)
            if m == size:  # a full chunk: plain copies, no gather
                ids[n : n + m] = chunk_ids
                mat[n : n + m] = chunk
            else:
                ids[n : n + m] = chunk_ids[keep]
                mat[n : n + m] = chunk[keep]
            n += m
    except (apsw.Error, ValueError, TypeError):
        return None
    if n != total:
        return None
    if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
        order = np.argsort(ids, kind="stable")
        ids, mat = ids[order], mat[order]
        if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
            return None  # duplicate rowids: not a layout we understand
    picks: list[int] = (
        np.unique(np.linspace(0, len(ids) - 1, CHECK_SAMPLE).astype(np.int64)).tolist()
        if len(ids)
        else []
    )
    for i in picks:
        blob = store.scalar(f"SELECT embedding FROM {table} WHERE rowid = ?", (int(ids[i]),))
        if blob is None or np.frombuffer(blob, np.float32).tobytes() != mat[i].tobytes():
            return None
    return ids, mat


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, in descending order."""
    n = len(scores)
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < n:
        part = np.argpartition(scores, n - k)[n - k :]  # the k largest, no negated copy
    else:
        part = np.arange(n)
    return part[np.argsort(-scores[part], kind="stable")]
