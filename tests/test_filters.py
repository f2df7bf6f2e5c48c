"""``search/filters.py``: the SQL form and the in-memory form of a filter agree, on a
real SQLite table, for prefixes, globs and both spellings of a negated bracket."""

from __future__ import annotations

import itertools

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


@pytest.mark.parametrize(
    "path", ["[^a--]*", "[z-a].py", "src/[!b-a]*", "[]c-b]", "\n[\x89-\x89^a-\x99a-\r]\n"]
)
def test_a_backwards_range_is_refused_on_one_line(path: str) -> None:
    # The last: the range's ends were written as they were, and a carriage return split
    # the message in two (tests/fuzz/filters.py, corpus/filters/crash-range-end-escaped).
    # SQLite's GLOB keeps a backwards range's first end as a member, fnmatch drops both
    # ends: '[^a--]*' selected nothing in SQL and a.py in memory (tests/fuzz/filters.py).
    with pytest.raises(ScryError, match="runs backwards") as err:
        Filter(None, path)
    assert "\n" not in str(err.value) and "\r" not in str(err.value)


@pytest.mark.parametrize("path", ["[a-c]*", "[-a]*", "[a-]*", "[a-c-b]*"])
def test_forward_ranges_and_literal_dashes_are_kept(path: str) -> None:
    f = Filter(None, path)
    assert {p for p, lg in PATHS if f.matches(p, lg)} == _sql_paths(f)


@pytest.mark.parametrize(
    ("path", "want"),
    [
        # A leading "]" is a member that starts no range: "]", "-" and "a" (SQLite's
        # reading); fnmatch had read the range "]".."a", taking "^", "_" and "`" too.
        ("[]-a]", {"]", "-", "a"}),
        ("[!]-a]", {"^", "_", "`", "b", "[", "!"}),
        ("[^]-a]", {"^", "_", "`", "b", "[", "!"}),
        # After a range, a "-" is itself; "-" first or last is itself.
        ("[a-b-]", {"a", "b", "-"}),
        ("[--a]", {"-", "[", "]", "^", "_", "`", "a"}),
    ],
)
def test_a_bracket_is_read_once_for_both_forms(path: str, want: set[str]) -> None:
    # Found writing the backwards-range test (issue 46): '[]-a]' selected ']', '-', 'a'
    # in SQL and the range ']'..'a' in memory (tests/fuzz/corpus/filters/crash-leading-
    # bracket-range). Both forms are now written from one reading of the bracket.
    names = ["]", "-", "a", "b", "^", "_", "`", "[", "!"]
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE files(path TEXT, lang TEXT)")
    conn.executemany("INSERT INTO files VALUES (?, NULL)", [(n,) for n in names])
    f = Filter(None, path)
    where, params = f.sql()
    in_sql = {r[0] for r in conn.execute(f"SELECT f.path FROM files f WHERE 1 {where}", params)}
    assert {n for n in names if f.matches(n, None)} == in_sql == want


#: The differential check's alphabet: every character a bracket treats specially, two
#: ends of a range and a character between them ("]" "^" "_" "`" lie between "[" and "a").
_ALPHABET = "]-^!az["
_NAMES = sorted(
    {*(a for a in _ALPHABET + "_`b+.\\/y"), *(a + b for a in _ALPHABET for b in _ALPHABET)}
    | {"a/b", "]/x", "-/a", "[/z", "za", "a-z", "!^]"}
)


def test_random_bracket_globs_select_the_same_files_both_ways() -> None:
    """Every bracket of up to four characters over the alphabet, then random short
    globs with stars and question marks: the SQL and in-memory forms select the same
    files, or the glob is refused with one line (a backwards range)."""
    import random

    rng = random.Random(46)
    globs = {
        "[" + "".join(b) + "]" for n in range(5) for b in itertools.product(_ALPHABET, repeat=n)
    }
    globs |= {
        "".join(rng.choice(_ALPHABET + "*?") for _ in range(rng.randint(1, 8))) for _ in range(3000)
    }
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE files(path TEXT, lang TEXT)")
    conn.executemany("INSERT INTO files VALUES (?, NULL)", [(n,) for n in _NAMES])
    checked = 0
    for glob in sorted(globs):
        try:
            f = Filter(None, glob)
        except ScryError as e:
            assert "runs backwards" in str(e) and "\n" not in str(e), glob
            continue
        where, params = f.sql()
        rows = conn.execute(f"SELECT f.path FROM files f WHERE 1 {where}", params)
        in_sql = {r[0] for r in rows}
        in_memory = {n for n in _NAMES if f.matches(n, None)}
        assert in_sql == in_memory, (glob, sorted(in_sql ^ in_memory))
        checked += 1
    assert checked > 2000
