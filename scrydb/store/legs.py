"""The statements of the search legs: BM25 over ``chunks_fts``, the vector ids a filter
allows, the chunks behind the nearest vectors, candidate hydration. Kept together and
exactly as the engine needs them (each is on the hot path of every query; timings in the
comments are from bench/).

Filters arrive as :meth:`scrydb.search.filters.Filter.sql` gives them: a SQL fragment over
``f`` (files) and ``c`` (chunks) and its parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import apsw

if TYPE_CHECKING:
    from scrydb.store.db import Store

Where = tuple[str, Sequence[Any]]


def bm25(
    store: Store, match: str, where: Where, active: bool, pool: int, weights: Sequence[float]
) -> list[tuple[int, float]]:
    """(chunk id, BM25: lower is better) of the best ``pool`` matches of an FTS5 expression;
    [] for an expression FTS5 refuses. ``active``: the filter restricts anything."""
    cond, params = where
    w = weights
    expr = f"bm25(chunks_fts, {w[0]}, {w[1]}, {w[2]}, {w[3]}) AS s FROM chunks_fts"
    if active:
        sql = (
            f"SELECT c.id, {expr} JOIN chunks c ON c.id = chunks_fts.rowid "
            f"JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH ? {cond} "
            "ORDER BY s LIMIT ?"
        )
    else:  # no filter: no join per match (every FTS row is a chunk; 1.7 vs 4.5 ms)
        sql = f"SELECT rowid, {expr} WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?"
    try:
        rows: list[Any] = store.rows(sql, (match, *params, pool))
    except apsw.SQLError:
        return []  # an FTS expression the caller failed to quote: no lexical evidence
    return rows


def allowed_vectors(store: Store, where: Where) -> list[int]:
    """Every vector id (body, header, window) of the chunks a filter lets through."""
    cond, params = where
    ids = [
        e
        for r in store.rows(
            "SELECT c.emb_id, c.head_emb_id FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE c.emb_id IS NOT NULL {cond}",
            tuple(params),
        )
        for e in r
        if e is not None
    ]
    ids += [
        r[0]
        for r in store.rows(
            "SELECT w.emb_id FROM chunk_windows w JOIN chunks c ON c.id = w.chunk_id "
            f"JOIN files f ON f.id = c.file_id WHERE w.emb_id IS NOT NULL {cond}",
            tuple(params),
        )
    ]
    return ids


def windows_among(
    store: Store, emb_ids: Sequence[int], where: Where, active: bool
) -> list[tuple[int, int, int]]:
    """(chunk id, window vector id, seq) of the window vectors among ``emb_ids``."""
    cond, params = where
    # The files table only for a filter (the join costs ~0.4 ms on 300 ids).
    files = "JOIN files f ON f.id = c.file_id " if active else ""
    marks = ",".join("?" * len(emb_ids))
    rows: list[Any] = store.rows(
        "SELECT w.chunk_id, w.emb_id, w.seq FROM chunk_windows w "
        f"JOIN chunks c ON c.id = w.chunk_id {files}WHERE w.emb_id IN ({marks}) {cond}",
        (*emb_ids, *params),
    )
    return rows


def chunks_behind(
    store: Store, emb_ids: Sequence[int], chunk_ids: Iterable[int], where: Where, active: bool
) -> list[tuple[int, int | None, int | None]]:
    """(chunk id, body vector id, header vector id) of the chunks whose body or header is
    among ``emb_ids``, and of ``chunk_ids`` (chunks found by a window)."""
    cond, params = where
    files = "JOIN files f ON f.id = c.file_id " if active else ""
    marks = ",".join("?" * len(emb_ids))
    extra = list(chunk_ids)
    wmarks = ",".join("?" * len(extra))
    rows: list[Any] = store.rows(
        f"SELECT c.id, c.emb_id, c.head_emb_id FROM chunks c {files}"
        f"WHERE (c.emb_id IN ({marks}) OR c.head_emb_id IN ({marks}) OR c.id IN ({wmarks})) "
        f"{cond}",
        (*emb_ids, *emb_ids, *extra, *params),
    )
    return rows


def chunk_files(store: Store, ids: Sequence[int]) -> list[tuple[int, tuple[str, str | None]]]:
    """(chunk id, (path, lang)) of chunks (no content read)."""
    if not ids:
        return []
    rows = store.rows(
        "SELECT c.id, f.path, f.lang FROM chunks c JOIN files f ON f.id = c.file_id "
        f"WHERE c.id IN ({','.join('?' * len(ids))})",
        tuple(ids),
    )
    return [(cid, (path, lang)) for cid, path, lang in rows]


def hydrate(store: Store, ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """(id, path, lang, start, end, kind, symbol, content, text hash, file mtime) of chunks."""
    return store.rows(
        "SELECT c.id, f.path, f.lang, c.start_line, c.end_line, c.kind, c.symbol, c.content, "
        "c.text_hash, f.mtime_ns "
        f"FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({','.join('?' * len(ids))})",
        tuple(ids),
    )


def main_language(store: Store) -> str | None:
    """The language most indexed files are written in."""
    v = store.scalar(
        "SELECT lang FROM files WHERE lang IS NOT NULL GROUP BY lang ORDER BY count(*) DESC LIMIT 1"
    )
    return None if v is None else str(v)


def symbol_spelling(store: Store, norm: str) -> str | None:
    """A definition's name as written, for a normalised name (a "did you mean")."""
    v = store.scalar("SELECT name FROM symbols WHERE norm = ? LIMIT 1", (norm,))
    return None if v is None else str(v)
