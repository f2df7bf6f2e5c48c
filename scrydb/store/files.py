"""Operations on the ``files`` and ``skipped`` tables (what was indexed, what was left out).

Store owns the SQL; every other module asks these named questions. Writing rows stays with
the lexical writer's store operations.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrydb.store.db import Store


def count(store: Store) -> int:
    """Indexed files."""
    return int(store.scalar("SELECT count(*) FROM files") or 0)


def paths(store: Store) -> set[str]:
    """Every indexed path."""
    return {r[0] for r in store.rows("SELECT path FROM files")}


def ids_by_path(store: Store) -> dict[str, int]:
    """Every indexed path -> its file id."""
    return {str(p): int(i) for i, p in store.rows("SELECT id, path FROM files")}


def ids_by_path_containing(store: Store, text: str) -> dict[str, int]:
    """Indexed paths that contain ``text`` -> their file ids (one scan of the files
    table, without reading every path into Python: an import's module names a few)."""
    return {
        str(p): int(i)
        for i, p in store.rows("SELECT id, path FROM files WHERE instr(path, ?) > 0", (text,))
    }


def has(store: Store, path: str) -> bool:
    """Whether ``path`` (repository-relative, exactly) is indexed."""
    return store.scalar("SELECT 1 FROM files WHERE path = ?", (path,)) is not None


def row(store: Store, path: str) -> tuple[int, str | None, int] | None:
    """(id, language, lines) of an indexed file, or None."""
    rows = store.rows("SELECT id, lang, n_lines FROM files WHERE path = ?", (path,))
    return rows[0] if rows else None


def with_langs(store: Store) -> list[tuple[str, str | None]]:
    """(path, language) of every indexed file, by path."""
    return store.rows("SELECT path, lang FROM files ORDER BY path")


def langs(store: Store) -> dict[str, int]:
    """Files per language ("text" for none), most first."""
    return {
        (lang or "text"): n
        for lang, n in store.rows("SELECT lang, count(*) FROM files GROUP BY lang ORDER BY 2 DESC")
    }


def stats(store: Store) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) of every indexed file."""
    return {p: (size, mt) for p, size, mt in store.rows("SELECT path, size, mtime_ns FROM files")}


def paths_with_text(store: Store, text: str) -> set[str]:
    """Indexed files with a chunk whose text contains ``text`` (a scan of every chunk)."""
    return {
        r[0]
        for r in store.rows(
            "SELECT DISTINCT f.path FROM files f JOIN chunks c ON c.file_id = f.id "
            "WHERE instr(c.content, ?) > 0",
            (text,),
        )
    }


def states(store: Store) -> dict[str, tuple[int, int, int, str]]:
    """path -> (id, size, mtime_ns, content hash) of every indexed file (what a sync diffs)."""
    return {
        path: (fid, size, mtime, digest)
        for fid, path, size, mtime, digest in store.rows(
            "SELECT id, path, size, mtime_ns, hash FROM files"
        )
    }


def newest_mtime(store: Store) -> int:
    """The newest indexed file's mtime (ns), 0 for none."""
    return int(store.scalar("SELECT max(mtime_ns) FROM files") or 0)


def skipped(store: Store) -> dict[str, tuple[str, int, int]]:
    """path -> (reason, size, mtime_ns) of every file the last syncs left out by content."""
    return {
        p: (reason, size, mtime)
        for p, reason, size, mtime in store.rows("SELECT path, reason, size, mtime_ns FROM skipped")
    }


def skipped_reasons(store: Store) -> Counter[str]:
    """Files left out by content, per reason."""
    return Counter(dict(store.rows("SELECT reason, count(*) FROM skipped GROUP BY reason")))
