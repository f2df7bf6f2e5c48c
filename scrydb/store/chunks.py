"""Read operations on the ``chunks`` table (writing chunks is the lexical writer's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrydb.store import Store


def of_file(store: Store, file_id: int) -> list[tuple[int, int, str, str | None, str]]:
    """(start_line, end_line, kind, symbol, content) of a file's chunks, in line order."""
    rows: list[Any] = store.rows(
        "SELECT start_line, end_line, kind, symbol, content FROM chunks "
        "WHERE file_id = ? ORDER BY start_line",
        (file_id,),
    )
    return rows
