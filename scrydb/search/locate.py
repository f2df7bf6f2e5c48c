"""``locate(text)``: exact literal matches over the indexed chunks, with line numbers.

The agent's grep: the text is matched as a literal (never as a pattern), only in what
the index holds, and each match reports its file, line and the enclosing chunk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrydb.errors import ScryError
from scrydb.paths import storable
from scrydb.results import Match
from scrydb.search.filters import Filter
from scrydb.store import lookup
from scrydb.store.lookup import Fold

if TYPE_CHECKING:
    from scrydb.store import Store

#: A matched line longer than this is cut around the match.
LINE_CHARS = 200
#: ASCII-only lower-casing: SQLite's ``lower()`` folds exactly these, so an ASCII needle
#: is compared the same way in SQL (``lookup.containing``'s ``ascii`` fold) and here.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def locate(
    store: Store,
    text: str,
    k: int = 50,
    lang: str | None = None,
    path: str | None = None,
    ignore_case: bool = False,
) -> list[Match]:
    """Up to ``k`` matches of the literal ``text`` (one per line), in path/line order."""
    if not text or not text.strip():
        raise ScryError("empty text to locate")
    if "\n" in text:
        raise ScryError("locate matches within one line: drop the newline")
    where, params = Filter(lang, path).sql()
    if not storable(text.replace("\x00", "")):
        return []  # lone surrogates (undecodable bytes): no indexed text contains them
    # Case folding: SQLite's lower() knows ASCII only; other needles use Python's.
    fold: Fold = "exact"
    needle = text
    if ignore_case and text.isascii():
        fold, needle = "ascii", text.translate(_ASCII_LOWER)
    elif ignore_case:
        fold, needle = "unicode", text.lower()
    rows = lookup.containing(store, needle, fold, (where, params))
    out: list[Match] = []
    for p, a, b, kind, sym, content in rows:
        for i, line in enumerate(content.split("\n")):
            if not ignore_case:
                hay = line
            else:
                hay = line.translate(_ASCII_LOWER) if text.isascii() else line.lower()
            col = hay.find(needle)
            if col < 0:
                continue
            shown = line
            if len(line) > LINE_CHARS:
                lo = max(0, col - LINE_CHARS // 3)
                shown = ("…" if lo else "") + line[lo : lo + LINE_CHARS] + "…"
            out.append(Match(p, a + i, col + 1, shown, a, b, kind, sym))
            if len(out) >= k:
                return out
    return out
