"""Read operations a search makes beyond the legs: symbol and entry-point lookups, fuzzy
name candidates, exact-text matches, a file's chunks around a line, the query-vector cache.

Filters arrive as the SQL fragment and parameters of :meth:`scrydb.search.filters.Filter.sql`
(built by :func:`scrydb.store.filters.files_where`: a condition on ``f``, the ``files``
alias).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

import apsw
import numpy as np

from scrydb.store import sqlitefile

if TYPE_CHECKING:
    from scrydb.store.db import Store

Where = tuple[str, list[Any]]


def definitions(
    store: Store, norm: str, where: Where, limit: int
) -> list[tuple[int, str, str, str]]:
    """(chunk id, qualified name, path, kind) of definitions whose normalised name is ``norm``."""
    cond, params = where
    rows: list[Any] = store.rows(
        "SELECT s.chunk_id, s.qualname, f.path, s.kind FROM symbols s JOIN files f ON f.id = s.file_id "
        f"WHERE s.norm = ? {cond} LIMIT ?",
        (norm, *params, limit),
    )
    return rows


def entry_points(store: Store, where: Where, limit: int) -> list[int]:
    """Ids of chunks shaped like entry points (``main``, CLI groups, ...)."""
    cond, params = where
    return [
        r[0]
        for r in store.rows(
            f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.entry = 1 {cond} LIMIT ?",
            (*params, limit),
        )
    ]


def has_symbol_name(store: Store, norm: str) -> bool:
    """Whether some definition has exactly this normalised name."""
    return store.scalar("SELECT 1 FROM symbol_names WHERE name = ?", (norm,)) is not None


def has_term(store: Store, term: str) -> bool:
    """Whether any chunk's lexical columns (symbol, path, body) hold ``term`` as a token
    (one word or whole identifier, quoted: no FTS5 syntax gets through)."""
    t = term.strip()
    if not t:
        return False
    try:
        row = store.scalar(
            "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1",
            ('"' + t.replace('"', '""') + '"',),
        )
    except apsw.SQLError:
        return False
    return row is not None


def trigram_names(store: Store, match: str, limit: int) -> list[str]:
    """Symbol names sharing trigrams with an FTS5 ``match`` expression, best first; []
    when the expression is not valid FTS5."""
    try:
        rows = store.rows(
            "SELECT name FROM symbol_trigrams WHERE symbol_trigrams MATCH ? ORDER BY rank LIMIT ?",
            (match, limit),
        )
    except apsw.SQLError:
        return []
    return [r[0] for r in rows]


#: How :func:`containing` compares a chunk's text with the needle: ``exact``, as stored;
#: ``ascii``, folded by SQLite's ``lower()``, which knows ASCII letters only (the needle
#: lower-cased the same way); ``unicode``, folded by the index's ``scry_lower()`` (Python's
#: ``str.lower``, for any other needle).
Fold = Literal["exact", "ascii", "unicode"]
#: ``instr()`` is a literal substring test: no LIKE/GLOB wildcards, no escaping issues.
_CONTAINS: dict[str, str] = {
    "exact": "instr(c.content, ?) > 0",
    "ascii": "instr(lower(c.content), ?) > 0",
    "unicode": "instr(scry_lower(c.content), ?) > 0",
}


def containing(
    store: Store, needle: str, fold: Fold, where: Where
) -> list[tuple[str, int, int, str, str | None, str]]:
    """(path, start, end, kind, symbol, content) of chunks whose content holds ``needle``
    as a literal, compared as ``fold`` says, by path and line."""
    fcond, params = where
    rows: list[Any] = store.rows(
        "SELECT f.path, c.start_line, c.end_line, c.kind, c.symbol, c.content FROM chunks c "
        f"JOIN files f ON f.id = c.file_id WHERE {_CONTAINS[fold]} {fcond} "
        "ORDER BY f.path, c.start_line",
        (needle, *params),
    )
    return rows


def last_line(store: Store, path: str) -> int | None:
    """The last indexed line of a file (None: not indexed)."""
    v = store.scalar(
        "SELECT max(c.end_line) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?",
        (path,),
    )
    return None if v is None else int(v)


def chunks_near(
    store: Store, path: str, line: int, limit: int
) -> list[tuple[int, int | None, int, int]]:
    """(chunk id, body vector id, start, end) of a file's chunks nearest ``line``."""
    rows: list[Any] = store.rows(
        "SELECT c.id, c.emb_id, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id "
        "WHERE f.path = ? ORDER BY abs(c.start_line - ?) LIMIT ?",
        (path, line, limit),
    )
    return rows


def chunks_with_vectors(
    store: Store, emb_ids: Iterable[int], not_chunk: int
) -> list[tuple[Any, ...]]:
    """(id, emb_id, path, lang, start, end, kind, symbol, content) of the chunks whose body
    vector is one of ``emb_ids``, except chunk ``not_chunk``."""
    ids = list(emb_ids)
    marks = ",".join("?" * len(ids))
    return store.rows(
        "SELECT c.id, c.emb_id, f.path, f.lang, c.start_line, c.end_line, c.kind, c.symbol, c.content "
        f"FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.emb_id IN ({marks}) AND c.id != ?",
        (*ids, not_chunk),
    )


def embedding_ids(store: Store, hashes: Iterable[str]) -> dict[str, int]:
    """text_hash -> embedding id for the hashes that already have a vector."""
    wanted = sorted(set(hashes))
    if not wanted:
        return {}
    return dict(
        store.rows(
            "SELECT e.text_hash, e.id FROM json_each(?) AS j "
            "JOIN embeddings AS e ON e.text_hash = j.value",
            (json.dumps(wanted),),
        )
    )


def vectors_by_hash(store: Store, hashes: list[str]) -> dict[str, np.ndarray]:
    """text_hash -> float vector for the hashes this index has a vector of."""
    found: dict[str, np.ndarray] = {}
    for h, blob in store.rows(
        "SELECT e.text_hash, v.embedding FROM json_each(?) AS j "
        "JOIN embeddings AS e ON e.text_hash = j.value "
        "JOIN vec_float AS v ON v.rowid = e.id",
        (json.dumps(hashes),),
    ):
        found[h] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    return found


def cached_query_vector(store: Store, key: str) -> np.ndarray | None:
    """A query vector kept by an earlier search (``query_cache``), or None."""
    blob = store.scalar("SELECT vector FROM query_cache WHERE key = ?", (key,))
    return None if blob is None else np.frombuffer(blob, dtype=np.float32).copy()


def keep_query_vector(store: Store, key: str, vec: np.ndarray, keep: int, busy_ms: int) -> None:
    """Best effort: store a query vector, keep the ``keep`` newest; never waits for the
    writer (busy timeout 0 meanwhile, then ``busy_ms`` again), never raises."""
    if store.readonly:
        return
    conn = store.conn
    conn.set_busy_timeout(0)
    try:
        # A cache's row: not worth an fsync on the search path (sqlitefile.unsynced).
        with sqlitefile.unsynced(conn), store.transaction():
            conn.execute(
                "INSERT OR REPLACE INTO query_cache(key, vector, used_at) VALUES (?, ?, ?)",
                (key, np.ascontiguousarray(vec, dtype=np.float32).tobytes(), time.time()),
            )
            conn.execute(
                "DELETE FROM query_cache WHERE key IN (SELECT key FROM query_cache ORDER BY used_at DESC LIMIT -1 OFFSET ?)",
                (keep,),
            )
    except apsw.Error:
        pass
    finally:
        with contextlib.suppress(apsw.Error):
            conn.set_busy_timeout(busy_ms)
