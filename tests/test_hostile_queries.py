"""Hostile queries: empty, huge, FTS5 and SQL syntax, regex metacharacters, control
characters, lone surrogates and every script, through ``search`` (all modes and
filters), ``locate``, ``read``, ``related`` and the CLI. Never an SQLite error, never a
traceback: a result (possibly empty) or one clean ScryError line.

``locate`` is also checked against a brute-force scan of the indexed files on disk
(literal, complete, in path/line order; with ``-i``, between what any reading of
"ignoring case" finds and what every reading must find). ``--slow`` / ``SCRY_SLOW=1``
runs ten times the examples.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import slow_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sample_repo import write_repo
from synth_repo import FakeEmbedder

import scrydb
from scrydb.cli import main as cli_main
from scrydb.errors import ScryError

EXAMPLES = 2000 if slow_run() else 200
CLI_EXAMPLES = 400 if slow_run() else 40
#: Queries asked, per door (printed with ``-s`` for RELIABILITY.md).
ASKED: Counter[str] = Counter()

EXTRA = {
    "intl/grüße.py": "def grüße(name):\n    return f'Über über ÜBER {name}'\n\n\nKELVIN = 'K'\n",
    "intl/用户.go": 'package intl\n\n// 用户 查询\nfunc 查询用户(id int) string {\n\treturn "用户"\n}\n',
    "intl/rtl.js": "// مرحبا بالعالم שלום\nfunction salaam() {\n  return 'مرحبا';\n}\n",
    "odd/sqlish.sql": "SELECT * FROM users WHERE name = 'x'; -- DROP TABLE chunks;\n",
    "odd/regex.py": "PATTERN = r'^[a-z]+.*(\\d{2,})$|\\\\w+?'\nLIKE = '%_%'\nGLOB = '*?[]'\n",
    "odd/quotes.ts": 'const q = "\\"NEAR(a b)\\" AND -x ^y *z";\nexport const col = "symbol: body:";\n',
}

FIXED = [
    "",
    " ",
    "\t\n\r",
    "\u3000\u200b\ufeff",
    '"',
    '""',
    '"unterminated',
    "*",
    "a*",
    "*a",
    "NEAR(",
    "NEAR(a b, 3)",
    "NEAR(a b,",
    "AND",
    "a AND",
    "OR OR OR",
    "NOT x",
    "a + b",
    "-",
    "-x",
    "--",
    "^",
    "^start",
    "symbol: foo",
    "body:retry",
    "{symbol stem}: user",
    "- body : x",
    "chunks_fts",
    "rank MATCH 'x'",
    "'; DROP TABLE chunks; --",
    "1 OR 1=1",
    "%",
    "_",
    "%_%",
    "\\",
    "\\\\",
    "[a-z]+.*",
    "(((",
    ")))",
    "^[a-z]+.*(\\d{2,})$|\\w+?",
    "$(rm -rf /)",
    "`id`",
    "\x00",
    "\x00\x01\x02\x1b[31m",
    "a\x00b",
    "\ud800",
    "x\udcff y",
    "Überprüfung der Nutzer",
    "ÜBER",
    "用户 查询",
    "مرحبا",
    "שלום",
    "नमस्ते",
    "สวัสดี",
    "😀🔥",
    "K",
    "a" * 100_000,
    "retry " * 20_000,
    "x" * 1_000_000,
    "getUserById" * 500,
    "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p",
    "::->#.()",
    "where is " + "the " * 5000 + "retry",
]


@pytest.fixture(scope="module")
def hostile_ix() -> Iterator[scrydb.Index]:
    """The sample repository plus odd files, indexed with a fake embedder (the dense
    leg runs; only the vectors are meaningless)."""
    base = Path(tempfile.mkdtemp(prefix="scry-queries-"))
    root = write_repo(base / "shop")
    for rel, text in EXTRA.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    ix = scrydb.open(root, db=base / "q.db", embedder=FakeEmbedder(dim=32))
    ix.sync()
    try:
        yield ix
    finally:
        ix.close()
        shutil.rmtree(base, ignore_errors=True)


def _paths(ix: scrydb.Index) -> set[str]:
    return {r[0] for r in ix.store.rows("SELECT path FROM files")}


def _sane_search(ix: scrydb.Index, q: str, **kw: object) -> None:
    ASKED["search"] += 1
    k = int(kw.get("k", 10))  # type: ignore[call-overload]
    if k < 1:
        with pytest.raises(ValueError, match="k must be at least 1"):
            ix.search(q, **kw)  # type: ignore[arg-type]
        return
    try:
        res = ix.search(q, **kw)  # type: ignore[arg-type]
    except ScryError as e:
        msg = str(e)
        assert (
            (not q.strip() and "empty query" in msg)
            or "filter" in msg
            or ("unknown language" in msg and len(msg.splitlines()) == 1)
        ), (q[:50], msg)
        return
    assert isinstance(res, scrydb.Results) and len(res) <= max(1, min(k, 1000))
    indexed = _paths(ix)
    for h in res:
        assert h.path in indexed and 1 <= h.start_line <= h.end_line
        assert h.start_line <= h.anchor_line <= h.end_line


def _sane_locate(ix: scrydb.Index, text: str, ignore_case: bool = False, k: int = 50) -> None:
    ASKED["locate"] += 1
    try:
        found = ix.locate(text, k=k, ignore_case=ignore_case)
    except ScryError as e:
        assert not text.strip() or "\n" in text, (text[:50], e)
        return
    got = [(m.path, m.line) for m in found]
    if not ignore_case:
        assert got == brute_locate(ix, lambda line: text in line)[:k], text[:50]
        return
    # Case-insensitive: between what any reading of "ignoring case" finds (Unicode
    # caseless matching, casefold()) and what every reading must find (the text as
    # written, or with its case changed in a way no folding can disagree about).
    variants = _case_variants(text)
    must = brute_locate(ix, lambda line: any(v in line for v in variants))
    may = set(brute_locate(ix, lambda line: text.casefold() in line.casefold()))
    assert got == sorted(set(got), key=_in_order) and len(got) <= k, text[:50]
    assert set(got) <= may, (text[:50], sorted(set(got) - may)[:5])
    shown = [m for m in must if len(got) < k or _in_order(m) <= _in_order(got[-1])]
    assert set(shown) <= set(got), (text[:50], sorted(set(shown) - set(got))[:5])


def brute_locate(ix: scrydb.Index, holds: Callable[[str], bool]) -> list[tuple[str, int]]:
    """Every (path, line) of an indexed file, read from the disk, whose line ``holds``,
    in path/line order: what locate answers from its chunks (which cover every line
    that is not blank in this corpus), found here without them."""
    out = []
    for path in sorted(_paths(ix), key=str.encode):
        lines = (ix.root / path).read_text(encoding="utf-8").split("\n")
        out += [(path, n) for n, line in enumerate(lines, 1) if holds(line)]
    return out


def _in_order(match: tuple[str, int]) -> tuple[bytes, int]:
    return match[0].encode(), match[1]


def _case_variants(text: str) -> set[str]:
    """The text, and its case changed where every case-insensitive match agrees: an
    ASCII text upper, lower or swapped; any other text lower only (upper case is not
    one letter for one: ß's is SS, which lowers to ss)."""
    if text.isascii():
        return {text, text.lower(), text.upper(), text.swapcase()}
    return {text, text.lower()}


def _sane_read(ix: scrydb.Index, path: str, a: int | None = None, b: int | None = None) -> None:
    ASKED["read"] += 1
    try:
        r = ix.read(path, a, b)
    except ScryError as e:
        assert str(e)
        return
    assert r.path in _paths(ix)


def _sane_related(ix: scrydb.Index, path: str, line: int) -> None:
    ASKED["related"] += 1
    try:
        res = ix.related(path, line, k=5)
    except ScryError as e:
        assert str(e)
        return
    assert all(h.path in _paths(ix) for h in res)


def run_cli(*args: str) -> tuple[int, str, str]:
    """The real ``scry`` entry point, in this process (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            cli_main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0
    return code, out.getvalue(), err.getvalue()


def _sane_cli(ix: scrydb.Index, *args: str) -> None:
    ASKED["cli"] += 1
    cmd, *rest = args
    code, _out, err = run_cli(cmd, "--db", str(ix.db_path), *rest)
    assert code in (0, 1, 2), (args, code, err)
    assert "Traceback" not in err and "internal error" not in err, (args, err)
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        # One line of ours, or click's usage block (Usage / Try / Error).
        assert (len(lines) == 1 and lines[0].startswith("scry: error:")) or (
            lines[0].startswith("Usage:") and lines[-1].startswith("Error:")
        ), err


def test_fixed_hostile_queries_through_every_door(hostile_ix: scrydb.Index) -> None:
    ix = hostile_ix
    chunks = ix.store.scalar("SELECT count(*) FROM chunks")
    for q in FIXED:
        for mode in ("fused", "lexical", "dense"):
            _sane_search(ix, q, k=5, mode=mode)
        _sane_search(ix, q, k=3, lang="python,go", path="app")
        _sane_search(ix, "retry", lang=q or None)
        _sane_search(ix, "retry", path=q or None)
        for ic in (False, True):
            _sane_locate(ix, q[:2000], ignore_case=ic)
        _sane_read(ix, q)
        _sane_related(ix, q, 1)
    for q in [*FIXED[:40], "\ud800", "ÜBER", "用户 查询"]:
        _sane_cli(ix, "search", "--no-sync", "--mode", "lexical", "--", q)
        _sane_cli(ix, "locate", "--no-sync", "-i", "--", q)
        _sane_cli(ix, "read", "--no-sync", "--", q or ".")
        _sane_cli(ix, "related", "--no-sync", "--", f"{q}:3")
    assert ix.store.scalar("SELECT count(*) FROM chunks") == chunks
    assert ix.store.scalar("PRAGMA quick_check") == "ok"


def test_unicode_case_folding_in_locate(hostile_ix: scrydb.Index) -> None:
    """SQLite's lower() knows only ASCII: ``-i`` must still fold Ü, Σ, ..."""
    got = {m.line for m in hostile_ix.locate("über", ignore_case=True)}
    assert got == {2}, got  # 'Über über ÜBER' on line 2 (one match per line)
    assert hostile_ix.locate("ÜBER über", ignore_case=True)[0].path == "intl/grüße.py"
    assert hostile_ix.locate("über") and not hostile_ix.locate("ÜBER ÜBER")


def test_huge_numbers_and_limits(hostile_ix: scrydb.Index) -> None:
    ix = hostile_ix
    for line in (0, -1, 2**63, 2**70, -(2**70)):
        _sane_related(ix, "app/retry.py", line)
        _sane_read(ix, "app/retry.py", line, None)
        _sane_read(ix, "app/retry.py", 1, line)
    for k in (0, -5, 2**70):
        _sane_search(ix, "retry", k=k)
    assert len(ix.search("retry", k=2**70)) >= 1


# -- property-based ----------------------------------------------------------------------

_FTS = (
    '"|*|^|-|+|:|(|)|{|}|,|NEAR|AND|OR|NOT|symbol|stem|path|body|chunks_fts|rank|bm25|'
    "'|;|--|/*|*/|%|_|\\|[|]|.|?|$|#|@|!|=|<|>|&|`|retry|user|getUserById|ÜBER|用户|\x00|\t|\n"
).split("|")
queries = st.one_of(
    st.text(max_size=300),
    st.text(st.characters(codec=None), max_size=100),  # surrogates included
    st.lists(st.sampled_from(_FTS), max_size=40).map(" ".join),
    st.lists(st.sampled_from(_FTS), max_size=60).map("".join),
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=5), st.integers(1, 30_000)),
)
filters = st.one_of(
    st.none(),
    st.sampled_from(["python", "go,ts", "app", "app/", "svc/*.go", "*", "[", "intl/用户*"]),
    st.text(max_size=30),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    q=queries,
    mode=st.sampled_from(["fused", "lexical", "dense"]),
    k=st.integers(-3, 2000),
    lang=filters,
    path=filters,
)
def test_generated_searches_are_sane(
    hostile_ix: scrydb.Index, q: str, mode: str, k: int, lang: str | None, path: str | None
) -> None:
    _sane_search(hostile_ix, q, k=k, mode=mode, lang=lang, path=path, explain=k % 2 == 0)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        queries,
        st.sampled_from(["über", "ÜBER", "K", "用户", "%", "_", "*", "'", "--", "def ", "\x00"]),
    ),
    ignore_case=st.booleans(),
    k=st.integers(1, 400),
)
def test_generated_locates_match_a_brute_force_scan(
    hostile_ix: scrydb.Index, text: str, ignore_case: bool, k: int
) -> None:
    _sane_locate(hostile_ix, text, ignore_case, k)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.one_of(
        queries,
        st.sampled_from(["app/retry.py", "./app/retry.py", "app//retry.py", "app/./retry.py"]),
    ),
    a=st.one_of(st.none(), st.integers(-(2**65), 2**65)),
    b=st.one_of(st.none(), st.integers(-(2**65), 2**65)),
)
def test_generated_reads_and_related_are_sane(
    hostile_ix: scrydb.Index, path: str, a: int | None, b: int | None
) -> None:
    _sane_read(hostile_ix, path, a, b)
    _sane_related(hostile_ix, path, a or 1)


@settings(max_examples=CLI_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=queries, extra=st.sampled_from([[], ["--json"], ["--explain"], ["-n", "3"]]))
def test_generated_cli_queries_are_sane(hostile_ix: scrydb.Index, q: str, extra: list[str]) -> None:
    q = q.replace("\x00", "")  # an argv cannot hold NUL
    _sane_cli(hostile_ix, "search", "--no-sync", "--mode", "lexical", *extra, "--", q)
    _sane_cli(hostile_ix, "locate", "--no-sync", "--", q)


@pytest.mark.slow
def test_undecodable_arguments_in_a_real_process(hostile_ix: scrydb.Index) -> None:
    """argv bytes that are not UTF-8 reach Python as lone surrogates."""
    db = str(hostile_ix.db_path).encode()
    for args in (
        [b"search", b"--no-sync", b"--mode", b"lexical", b"\xff\xfe retry"],
        [b"search", b"--no-sync", b"--mode", b"lexical", b"--lang", b"\xff", b"retry"],
        [b"locate", b"--no-sync", b"-i", b"\xff"],
        [b"read", b"--no-sync", b"app/\xff.py"],
    ):
        p = subprocess.run(
            [sys.executable.encode(), b"-m", b"scrydb.cli", *args, b"--db", db],
            capture_output=True,
            timeout=120,
        )
        err = p.stderr.decode("utf-8", "replace")
        assert p.returncode in (0, 1, 2) and "Traceback" not in err, (args, err)
        assert "internal error" not in err, (args, err)


def test_every_kind_of_hostile_query_was_asked() -> None:
    """The runs above really asked each kind of hostile query (search, locate, ...);
    ``-s`` shows the counts."""
    print(f"\nhostile queries: {dict(ASKED)}")
    assert {"search", "locate"} <= set(ASKED), dict(ASKED)
    assert all(n > 0 for n in ASKED.values()), dict(ASKED)


def test_a_path_filter_of_a_user_that_does_not_exist(hostile_ix: scrydb.Index) -> None:
    """Found by test_generated_searches_are_sane: ``path='~0'`` raised pathlib's
    RuntimeError ("Could not determine home directory") out of the search; ``~name`` of
    no user is now a relative name, as a shell leaves it (paths.expand_user), and k is
    checked before the path (``k=0`` with ``path='~'`` is the k error)."""
    res = hostile_ix.search("parse", path="~0")
    assert isinstance(res, scrydb.Results) and len(res) == 0
    with pytest.raises(ValueError, match="k must be at least 1"):
        hostile_ix.search("parse", k=0, path="~")
    with pytest.raises(ScryError, match="outside the repository"):
        hostile_ix.search("parse", path="~")
