"""Read operations of the code graph (search/graph.py): references by name, by chunk and
by file, and the definitions they may resolve to. Rows are plain tuples."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrydb.store.db import Store

#: (chunk id, file id, path, name, kind, line, column, qualifier, module)
RefRow = tuple[int, int, str, str, str, int, int, str | None, str | None]
#: (chunk id, file id, path, name, qualified name, kind, line)
DefRow = tuple[int, int, str, str, str, str, int]

_REF_COLS = "r.chunk_id, r.file_id, f.path, r.name, r.kind, r.line, r.col, r.qualifier, r.module"
_DEF_COLS = "s.chunk_id, s.file_id, f.path, s.name, s.qualname, s.kind, s.line"


def refs_named(store: Store, norm: str, limit: int) -> list[RefRow]:
    """References whose normalised name is ``norm`` (any kind), by path and line."""
    rows: list[Any] = store.rows(
        f"SELECT {_REF_COLS} FROM refs r JOIN files f ON f.id = r.file_id "
        "WHERE r.norm = ? ORDER BY f.path, r.line, r.col LIMIT ?",
        (norm, limit),
    )
    return rows


def aliases_of(store: Store, name: str, norm: str) -> list[tuple[int, str]]:
    """(file id, local alias) of every import of ``name`` (normalised: ``norm``, which
    the index on refs.norm finds) under another name (``import {add as plus}``): the
    alias is what the file's calls say."""
    rows: list[Any] = store.rows(
        "SELECT DISTINCT file_id, alias FROM refs WHERE norm = ? AND kind = 'import' "
        "AND name = ? AND alias IS NOT NULL AND alias != name",
        (norm, name),
    )
    return rows


def refs_of_chunk(store: Store, chunk_id: int) -> list[RefRow]:
    """A chunk's references in source order."""
    rows: list[Any] = store.rows(
        f"SELECT {_REF_COLS} FROM refs r JOIN files f ON f.id = r.file_id "
        "WHERE r.chunk_id = ? ORDER BY r.line, r.col",
        (chunk_id,),
    )
    return rows


def imports_of_file(store: Store, file_id: int) -> list[tuple[str, str | None, str | None]]:
    """(name, module, local alias) of a file's import references."""
    rows: list[Any] = store.rows(
        "SELECT name, module, alias FROM refs WHERE file_id = ? AND kind = 'import'", (file_id,)
    )
    return rows


def inherits_of_chunk(store: Store, chunk_id: int) -> list[str]:
    """The base names a chunk's class definitions name (``inherit`` references)."""
    return [
        r[0]
        for r in store.rows(
            "SELECT name FROM refs WHERE chunk_id = ? AND kind = 'inherit'", (chunk_id,)
        )
    ]


def definitions_named(store: Store, norm: str, limit: int) -> list[DefRow]:
    """Definitions whose normalised name is ``norm``."""
    rows: list[Any] = store.rows(
        f"SELECT {_DEF_COLS} FROM symbols s JOIN files f ON f.id = s.file_id "
        "WHERE s.norm = ? ORDER BY f.path, s.line LIMIT ?",
        (norm, limit),
    )
    return rows


def definitions_qualified(store: Store, qualname: str, limit: int) -> list[DefRow]:
    """Definitions with exactly this qualified name (``Client.send``)."""
    rows: list[Any] = store.rows(
        f"SELECT {_DEF_COLS} FROM symbols s JOIN files f ON f.id = s.file_id "
        "WHERE s.qualname = ? ORDER BY f.path, s.line LIMIT ?",
        (qualname, limit),
    )
    return rows


def definitions_of_chunk(store: Store, chunk_id: int) -> list[DefRow]:
    """The definitions a chunk holds, by line."""
    rows: list[Any] = store.rows(
        f"SELECT {_DEF_COLS} FROM symbols s JOIN files f ON f.id = s.file_id "
        "WHERE s.chunk_id = ? ORDER BY s.line",
        (chunk_id,),
    )
    return rows


def chunk_at(store: Store, path: str, line: int) -> tuple[int, int, int, str | None] | None:
    """(chunk id, start, end, symbol) of the chunk of ``path`` holding ``line``."""
    row = store.rows(
        "SELECT c.id, c.start_line, c.end_line, c.symbol FROM chunks c "
        "JOIN files f ON f.id = c.file_id WHERE f.path = ? AND c.start_line <= ? "
        "AND c.end_line >= ? LIMIT 1",
        (path, line, line),
    )
    return tuple(row[0]) if row else None


def chunk_span(store: Store, chunk_id: int) -> tuple[int, int, str | None] | None:
    """(start, end, symbol) of a chunk."""
    row = store.rows("SELECT start_line, end_line, symbol FROM chunks WHERE id = ?", (chunk_id,))
    return tuple(row[0]) if row else None


def chunk_texts_of_file(store: Store, file_id: int) -> list[str]:
    """The content of a file's chunks, by line."""
    return [
        str(r[0])
        for r in store.rows(
            "SELECT content FROM chunks WHERE file_id = ? ORDER BY start_line", (file_id,)
        )
    ]


def has_refs(store: Store) -> bool:
    """Whether the index holds any reference (an index made before the graph has none)."""
    return store.scalar("SELECT 1 FROM refs LIMIT 1") is not None


def all_definitions(store: Store, limit: int) -> list[DefRow]:
    """Every definition (at most ``limit``), by path and line."""
    rows: list[Any] = store.rows(
        f"SELECT {_DEF_COLS} FROM symbols s JOIN files f ON f.id = s.file_id "
        "ORDER BY f.path, s.line LIMIT ?",
        (limit,),
    )
    return rows


def all_refs(store: Store, kinds: tuple[str, ...], limit: int) -> list[RefRow]:
    """Every reference of these kinds (at most ``limit``)."""
    marks = ",".join("?" * len(kinds))
    rows: list[Any] = store.rows(
        f"SELECT {_REF_COLS} FROM refs r JOIN files f ON f.id = r.file_id "
        f"WHERE r.kind IN ({marks}) LIMIT ?",
        (*kinds, limit),
    )
    return rows


def chunk_text(store: Store, chunk_id: int) -> tuple[int, str] | None:
    """(start line, content) of a chunk."""
    row = store.rows("SELECT start_line, content FROM chunks WHERE id = ?", (chunk_id,))
    return (int(row[0][0]), str(row[0][1])) if row else None


#: Reference kinds that use a definition (what centrality and connection count).
_USE_SQL = "('call', 'decorator', 'inherit')"


def use_counts(store: Store, chunk_ids: list[int], skip_kinds: tuple[str, ...]) -> dict[int, int]:
    """chunk id -> the most uses (calls, decorators, bases) of one name the chunk defines,
    by the name as written, anywhere in the repository (unresolved: a cheap in-degree);
    definitions of ``skip_kinds`` (constants, variables) are not counted."""
    if not chunk_ids:
        return {}
    marks = ",".join("?" * len(chunk_ids))
    skip = ",".join("?" * len(skip_kinds)) or "''"
    rows = store.rows(
        "SELECT s.chunk_id, max((SELECT count(*) FROM refs r WHERE r.norm = s.norm "
        f"AND r.name = s.name AND r.kind IN {_USE_SQL})) FROM symbols s "
        f"WHERE s.chunk_id IN ({marks}) AND s.kind NOT IN ({skip}) GROUP BY s.chunk_id",
        (*chunk_ids, *skip_kinds),
    )
    return {int(c): int(n or 0) for c, n in rows}


def neighbours(store: Store, strong: list[int], chunk_ids: list[int]) -> tuple[set[int], set[int]]:
    """Of ``chunk_ids``: the chunks that call (or decorate with, or inherit) a name one of
    ``strong`` defines, and the chunks that define a name one of ``strong`` calls; by the
    name as written, unresolved (a chunk is not its own neighbour)."""
    if not strong or not chunk_ids:
        return set(), set()
    s_marks = ",".join("?" * len(strong))
    c_marks = ",".join("?" * len(chunk_ids))
    calls_strong = store.rows(
        "SELECT DISTINCT r.chunk_id FROM symbols s JOIN refs r ON r.norm = s.norm "
        f"AND r.name = s.name WHERE s.chunk_id IN ({s_marks}) AND r.chunk_id IN ({c_marks}) "
        f"AND r.kind IN {_USE_SQL} AND r.chunk_id != s.chunk_id",
        (*strong, *chunk_ids),
    )
    called_by_strong = store.rows(
        "SELECT DISTINCT s.chunk_id FROM refs r JOIN symbols s ON s.norm = r.norm "
        f"AND s.name = r.name WHERE r.chunk_id IN ({s_marks}) AND s.chunk_id IN ({c_marks}) "
        f"AND r.kind IN {_USE_SQL} AND s.chunk_id != r.chunk_id",
        (*strong, *chunk_ids),
    )
    return {int(r[0]) for r in calls_strong}, {int(r[0]) for r in called_by_strong}
