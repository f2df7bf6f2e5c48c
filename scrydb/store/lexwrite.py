"""The lexical writer's statements (``sync/lexical.py``): files, skips, chunks, their FTS
rows, symbols and the fuzzy-name table. Each runs inside the writer's transaction; the
writer decides what changes, these say how it is stored."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrydb.store.db import Store


def clear(store: Store) -> None:
    """Empty the lexical tables (a rebuild; vectors stay for reuse)."""
    c = store.conn
    c.execute("DELETE FROM chunks_fts")
    c.execute("DELETE FROM symbols")
    c.execute("DELETE FROM refs")
    c.execute("DELETE FROM chunk_windows")  # (the cascade would, row by row)
    c.execute("DELETE FROM chunks")
    c.execute("DELETE FROM files")
    c.execute("DELETE FROM skipped")
    c.execute("DELETE FROM symbol_names")


def forget_skips(store: Store, paths: Iterable[str]) -> None:
    """Drop these paths from the skipped table."""
    store.conn.executemany("DELETE FROM skipped WHERE path = ?", [(p,) for p in paths])


def record_skips(store: Store, skips: Sequence[tuple[str, str, int, int]]) -> None:
    """(path, reason, size, mtime_ns) of files left out by content."""
    store.conn.executemany(
        "INSERT OR REPLACE INTO skipped(path, reason, size, mtime_ns) VALUES (?, ?, ?, ?)", skips
    )


def touch_files(store: Store, touched: Sequence[tuple[int, int, int]]) -> None:
    """(file id, size, mtime_ns) of files whose stat changed but whose bytes did not."""
    store.conn.executemany(
        "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?",
        [(sz, mt, fid) for fid, sz, mt in touched],
    )


def update_file(
    store: Store, fid: int, lang: str | None, size: int, mtime_ns: int, digest: str, n_lines: int,
    now: float,
) -> None:  # fmt: skip
    """A changed file's row."""
    store.conn.execute(
        "UPDATE files SET lang = ?, size = ?, mtime_ns = ?, hash = ?, n_lines = ?, indexed_at = ? "
        "WHERE id = ?",
        (lang, size, mtime_ns, digest, n_lines, now, fid),
    )


def insert_file(
    store: Store, path: str, lang: str | None, size: int, mtime_ns: int, digest: str,
    n_lines: int, now: float,
) -> int:  # fmt: skip
    """A new file's row (no longer a skipped one); its id."""
    c = store.conn
    c.execute("DELETE FROM skipped WHERE path = ?", (path,))
    c.execute(
        "INSERT INTO files(path, lang, size, mtime_ns, hash, n_lines, indexed_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (path, lang, size, mtime_ns, digest, n_lines, now),
    )
    return int(c.last_insert_rowid())


def symbols_of_file(store: Store, fid: int) -> list[tuple[int, str, str, str, int]]:
    """(chunk id, name, qualified name, kind, line) of a file's definitions."""
    rows: list[Any] = store.rows(
        "SELECT chunk_id, name, qualname, kind, line FROM symbols WHERE file_id = ?", (fid,)
    )
    return rows


def chunks_of_file(store: Store, fid: int) -> list[tuple[int, int, int, str, str | None, str]]:
    """(id, start, end, kind, symbol, text hash) of a file's chunks."""
    rows: list[Any] = store.rows(
        "SELECT id, start_line, end_line, kind, symbol, text_hash FROM chunks WHERE file_id = ?",
        (fid,),
    )
    return rows


def delete_chunks(store: Store, ids: Sequence[tuple[int]]) -> None:
    """Chunks (as 1-tuples of ids) with their FTS rows, symbols and references."""
    c = store.conn
    c.executemany("DELETE FROM chunks_fts WHERE rowid = ?", ids)
    c.executemany("DELETE FROM symbols WHERE chunk_id = ?", ids)
    c.executemany("DELETE FROM refs WHERE chunk_id = ?", ids)
    c.executemany("DELETE FROM chunks WHERE id = ?", ids)


def move_chunks(store: Store, moves: Sequence[tuple[int, int]]) -> None:
    """(line offset, chunk id): kept chunks whose lines moved, with their symbols and
    references."""
    c = store.conn
    c.executemany(
        "UPDATE chunks SET start_line = start_line + ?1, end_line = end_line + ?1 WHERE id = ?2",
        moves,
    )
    c.executemany("UPDATE symbols SET line = line + ?1 WHERE chunk_id = ?2", moves)
    c.executemany("UPDATE refs SET line = line + ?1 WHERE chunk_id = ?2", moves)


def insert_chunk(
    store: Store,
    row: tuple[int, int, int, str, str | None, str, str, int | None, int],
    fts: tuple[str, str, str, str],
    symbols: Sequence[tuple[str, str, str, str, int]],
    refs: Sequence[tuple[str, str, str, int, int, str | None, str | None, str | None]] = (),
) -> int:
    """A chunk (file id, start, end, kind, symbol, content, text hash, vector id, entry),
    its FTS row (symbol, stem, path, body), its definitions (name, norm, qualified name,
    kind, line) and its references (name, norm, kind, line, column, qualifier, module,
    alias);
    its id."""
    c = store.conn
    c.execute(
        "INSERT INTO chunks(file_id, start_line, end_line, kind, symbol, content, text_hash, "
        "emb_id, entry) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        row,
    )
    cid = int(c.last_insert_rowid())
    c.execute(
        "INSERT INTO chunks_fts(rowid, symbol, stem, path, body) VALUES (?, ?, ?, ?, ?)",
        (cid, *fts),
    )
    if symbols:
        fid = row[0]
        c.executemany(
            "INSERT INTO symbols(name, norm, qualname, kind, file_id, chunk_id, line) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(n, norm, q, k, fid, cid, ln) for n, norm, q, k, ln in symbols],
        )
    if refs:
        c.executemany(
            "INSERT INTO refs(chunk_id, file_id, name, norm, kind, line, col, qualifier, "
            "module, alias) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(cid, row[0], *r) for r in refs],
        )
    return cid


def delete_file_chunks(store: Store, fid: int) -> tuple[list[str], int]:
    """Delete a file's chunks, FTS rows and symbols: (the symbols' normalised names, the
    number of chunks deleted)."""
    c = store.conn
    names = [r[0] for r in store.rows("SELECT norm FROM symbols WHERE file_id = ?", (fid,))]
    n = int(store.scalar("SELECT count(*) FROM chunks WHERE file_id = ?", (fid,)) or 0)
    c.execute(
        "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (fid,)
    )
    c.execute("DELETE FROM symbols WHERE file_id = ?", (fid,))
    c.execute("DELETE FROM refs WHERE file_id = ?", (fid,))
    c.execute("DELETE FROM chunks WHERE file_id = ?", (fid,))
    return names, n


def delete_file(store: Store, fid: int) -> None:
    """A file's row (its chunks first: :func:`delete_file_chunks`)."""
    store.conn.execute("DELETE FROM files WHERE id = ?", (fid,))


def sync_symbol_names(store: Store, new: set[str], gone: set[str]) -> None:
    """Bring ``symbol_names`` (fuzzy expansion) in line with names written (``new``) and
    deleted (``gone``: removed only when no symbol has them any more)."""
    c = store.conn
    if new:
        c.execute(
            "INSERT OR IGNORE INTO symbol_names(name) SELECT value FROM json_each(?)",
            (json.dumps(sorted(new)),),
        )
    if gone:
        c.execute(
            "DELETE FROM symbol_names WHERE name IN (SELECT value FROM json_each(?)) "
            "AND NOT EXISTS (SELECT 1 FROM symbols WHERE symbols.norm = symbol_names.name)",
            (json.dumps(sorted(gone)),),
        )
