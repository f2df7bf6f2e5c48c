"""Fuzz the hard filters and the walk's ignore rules: :class:`scrydb.search.filters.Filter`
(a ``lang`` and a path prefix or glob, read as SQL by the store and as a predicate in
memory) and :class:`scrydb.walk.Selector` over real ``.gitignore`` / ``.scryignore`` files.

Input: line 1 the ``lang`` filter, line 2 the ``path`` filter, line 3 a file path of the
input's own, the rest a ``.gitignore`` (lines after a ``---`` line a ``src/.scryignore``).
Asserted: a bad filter is a ScryError with one line; a good one selects the same files
as SQL over a real SQLite table and as :meth:`Filter.matches` (the contract of
search/filters.py); ignore files never make the walk or the selector raise; the walk
lists exactly the files the selector keeps (its contract: one rule for the walk, status
and the watcher); and a CPU bound.
"""

from __future__ import annotations

from pathlib import Path

import apsw

from scrydb.config import IndexConfig
from scrydb.paths import storable
from scrydb.search.filters import Filter
from scrydb.walk import Selector, walk

from .common import Finding, bounded, expected_errors, scratch, text_of

MAX_LEN = 2048
BOUND_S = 2.0
#: Files of the fuzzed repository, with their languages (tests/test_filters.py's and more).
FILES = (
    ("a.py", "python"),
    ("abc.py", "python"),
    ("src/a.py", "python"),
    ("src/b.ts", "typescript"),
    ("src/sub/c.py", "python"),
    ("src/[x].py", "python"),
    ("src/!n.go", "go"),
    ("docs/readme.md", "markdown"),
    ("docs/a b/#c.md", "markdown"),
    ("build/out.py", "python"),
    ("ünï/cödé.rs", "rust"),
    (".hidden/h.py", "python"),
)
_root: Path | None = None
_db: apsw.Connection | None = None


def setup() -> None:
    """The repository folder and the SQLite table of the process."""
    global _root, _db
    _root = scratch("scry-fuzz-filters-")
    for p, _ in FILES:
        (_root / p).parent.mkdir(parents=True, exist_ok=True)
        (_root / p).write_text("x = 1\n", encoding="utf-8")
    _db = apsw.Connection(":memory:")
    _db.execute("CREATE TABLE files(path TEXT, lang TEXT)")


def _check_filter(lang: str, path: str, own: str) -> None:
    assert _db is not None
    f = None
    with expected_errors("Filter"), bounded(BOUND_S, "Filter"):
        f = Filter(lang or None, path or None)
    if f is None:
        return
    rows = list(FILES)
    if own and storable(own):
        rows.append((own.strip("/"), "python"))
    _db.execute("DELETE FROM files")
    _db.executemany("INSERT INTO files VALUES (?, ?)", rows)
    where, params = f.sql()
    in_sql = {r[0] for r in _db.execute(f"SELECT f.path FROM files f WHERE 1 {where}", params)}
    in_memory = {p for p, lg in rows if f.matches(p, lg)}
    if in_sql != in_memory:
        raise Finding(
            f"lang {lang!r} path {path!r}: SQL alone selects {sorted(in_sql - in_memory)}, "
            f"memory alone {sorted(in_memory - in_sql)}"
        )


def _check_ignores(gitignore: str, scryignore: str) -> None:
    assert _root is not None
    (_root / ".gitignore").write_text(gitignore, encoding="utf-8", errors="replace")
    (_root / "src" / ".scryignore").write_text(scryignore, encoding="utf-8", errors="replace")
    with bounded(BOUND_S, "walk"):
        listed = {f.path for f in walk(_root).files}
        select = Selector(_root, IndexConfig())
        kept = {p for p, _ in FILES if select.reason(p) is None}
    if listed != kept:
        raise Finding(f"the walk lists {sorted(listed ^ kept)} unlike the selector")


def test_one(data: bytes) -> None:
    """One input (see the module's docstring)."""
    if _root is None:
        setup()
    lines = text_of(data).split("\n")
    lang, path, own = [*lines, "", "", ""][:3]
    _check_filter(lang, path, own)
    rest = lines[3:]
    cut = rest.index("---") if "---" in rest else len(rest)
    _check_ignores("\n".join(rest[:cut]), "\n".join(rest[cut + 1 :]))
