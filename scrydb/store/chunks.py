"""Read operations on the ``chunks`` table (writing chunks is the lexical writer's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrydb.errors import ScryError
from scrydb.results import ReadResult

if TYPE_CHECKING:
    from scrydb.store.db import Store


def of_file(store: Store, file_id: int) -> list[tuple[int, int, str, str | None, str]]:
    """(start_line, end_line, kind, symbol, content) of a file's chunks, in line order."""
    rows: list[Any] = store.rows(
        "SELECT start_line, end_line, kind, symbol, content FROM chunks "
        "WHERE file_id = ? ORDER BY start_line",
        (file_id,),
    )
    return rows


def read_lines(
    store: Store, rel: str, start: int | None, end: int | None, max_lines: int
) -> ReadResult | None:
    """Lines ``start``..``end`` of the indexed file ``rel``, from its stored chunks (None:
    not indexed). ``start`` alone: the whole chunk(s) containing that line; neither: the
    whole file; at most ``max_lines`` (``truncated`` then). A bad range is a ScryError."""
    from scrydb.store import files

    row = files.row(store, rel)
    if row is None:
        return None
    fid, lang, _n_lines = row
    chunks = of_file(store, fid)
    last = chunks[-1][1] if chunks else 0
    a = 1 if start is None else int(start)
    b = last if end is None else int(end)
    if start is not None and end is None:
        around = [(s, e) for s, e, *_ in chunks if s <= a <= e]
        a, b = (min(s for s, _ in around), max(e for _, e in around)) if around else (a, a)
    if a < 1 or b < a:
        raise ScryError(f"bad line range {a}-{b} for {rel}")
    if chunks and a > last:
        raise ScryError(f"{rel} has {last} indexed lines; line {a} is past its end")
    b = min(b, last)
    truncated = False
    if b - a + 1 > max_lines:
        b, truncated = a + max_lines - 1, True
    lines: dict[int, str] = {}
    spans = []
    for s, e, kind, sym, content in chunks:
        if e < a or s > b:
            continue
        spans.append((s, e, kind, sym))
        for i, line in enumerate(content.split("\n")):
            lines[s + i] = line
    text = "\n".join(lines.get(i, "") for i in range(a, b + 1)) if b >= a else ""
    return ReadResult(rel, a, max(a, b) if b >= a else a, text, lang, truncated, spans)
