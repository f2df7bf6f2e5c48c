"""``search/filters.py``: the SQL form and the in-memory form of a filter agree, on a
real SQLite table, for prefixes, globs and both spellings of a negated bracket."""

from __future__ import annotations

import apsw
import pytest

from scrydb.errors import ScryError
from scrydb.search.filters import Filter

PATHS = [
    ("a.py", "python"),
    ("b.py", "python"),
    ("src/a.py", "python"),
    ("src/b.ts", "typescript"),
    ("src/sub/c.py", "python"),
    ("docs/readme.md", "markdown"),
    ("abc.py", "python"),
    ("a[", None),
    ("!x", None),
    ("^z", None),
    ("[y", None),
]


def _sql_paths(f: Filter) -> set[str]:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE files(path TEXT, lang TEXT)")
    conn.executemany("INSERT INTO files VALUES (?, ?)", PATHS)
    where, params = f.sql()
    rows = conn.execute(f"SELECT f.path FROM files f WHERE 1 {where}", params)
    return {r[0] for r in rows}


@pytest.mark.parametrize(
    ("path", "lang", "want"),
    [
        # (``*`` crosses "/" in both dialects, as in a gitignore pattern with a slash.)
        ("[!a]*.py", None, {"b.py", "src/a.py", "src/sub/c.py"}),
        ("[^a]*.py", None, {"b.py", "src/a.py", "src/sub/c.py"}),
        ("[ab]*.py", None, {"a.py", "b.py", "abc.py"}),
        ("src", None, {"src/a.py", "src/b.ts", "src/sub/c.py"}),
        ("src/*.py", None, {"src/a.py", "src/sub/c.py"}),
        ("src/[!a]*", None, {"src/b.ts", "src/sub/c.py"}),
        ("*.md", None, {"docs/readme.md"}),
        ("src", "py", {"src/a.py", "src/sub/c.py"}),
        (None, "ts", {"src/b.ts"}),
        # Found by tests/fuzz/filters.py (corpus/filters/crash-lone-bracket, -bang-in-a-
        # bracket): a "[" that closes no bracket is itself, and "!" / "^" negate only
        # first in a bracket (the SQL side had matched nothing and the other character).
        ("a[", None, {"a["}),
        ("[a[!]*", None, {"abc.py", "a.py", "a[", "!x", "[y"}),
        ("[a[^]*", None, {"abc.py", "a.py", "a[", "^z", "[y"}),
    ],
)
def test_sql_and_memory_agree(path: str | None, lang: str | None, want: set[str]) -> None:
    f = Filter(lang, path)
    in_memory = {p for p, lg in PATHS if f.matches(p, lg)}
    assert in_memory == want
    assert _sql_paths(f) == want


@pytest.mark.parametrize("path", ["[^a--]*", "[z-a].py", "src/[!b-a]*", "[]c-b]"])
def test_a_backwards_range_is_refused_on_one_line(path: str) -> None:
    # SQLite's GLOB keeps a backwards range's first end as a member, fnmatch drops both
    # ends: '[^a--]*' selected nothing in SQL and a.py in memory (tests/fuzz/filters.py).
    with pytest.raises(ScryError, match="runs backwards") as err:
        Filter(None, path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("path", ["[a-c]*", "[-a]*", "[a-]*", "[a-c-b]*"])
def test_forward_ranges_and_literal_dashes_are_kept(path: str) -> None:
    f = Filter(None, path)
    assert {p for p, lg in PATHS if f.matches(p, lg)} == _sql_paths(f)
