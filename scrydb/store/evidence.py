"""Reads a bug report's evidence needs (search/reportquery.py): the chunk holding a line
and the chunks that hold a literal text."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrydb.store.db import Store


def chunk_holding(store: Store, path: str, line: int) -> int | None:
    """The id of the chunk of ``path`` whose lines hold ``line``."""
    v = store.scalar(
        "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id "
        "WHERE f.path = ? AND c.start_line <= ? AND c.end_line >= ? LIMIT 1",
        (path, line, line),
    )
    return int(v) if v is not None else None


def chunks_containing(store: Store, text: str, limit: int) -> list[int]:
    """Ids of chunks whose content holds ``text`` literally (instr: no pattern syntax)."""
    return [
        int(r[0])
        for r in store.rows(
            "SELECT id FROM chunks WHERE instr(content, ?) > 0 LIMIT ?", (text, limit)
        )
    ]
