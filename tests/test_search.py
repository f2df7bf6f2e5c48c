"""Search on a real index of the sample repository, with the real model."""

from __future__ import annotations

import pytest

import scrydb
from scrydb.errors import ScryError

pytestmark = pytest.mark.slow


def _top(ix: scrydb.Index, q: str, k: int = 5, **kw: object) -> list[scrydb.Hit]:
    return list(ix.search(q, k=k, **kw))  # type: ignore[arg-type]


def test_symbol_query_returns_definition_first(sample_index: scrydb.Index) -> None:
    hits = _top(sample_index, "UserRepository")
    assert hits[0].path == "app/users.py"
    assert hits[0].start_line <= 13 <= hits[0].end_line  # the class line


def test_identifier_in_other_spellings(sample_index: scrydb.Index) -> None:
    for q in ("getUserById", "get_user_by_id"):
        hits = _top(sample_index, q, k=3)
        paths = [h.path for h in hits]
        assert set(paths[:2]) == {"web/server.ts", "app/users.py"}, (q, paths)


def test_natural_language_question_top3(sample_index: scrydb.Index) -> None:
    hits = _top(sample_index, "how long do we wait before trying a failed call again", k=3)
    assert any(h.path == "app/retry.py" and h.start_line <= 10 <= h.end_line for h in hits), [
        h.location for h in hits
    ]


def test_question_openings_do_not_reach_the_query_vector(sample_index: scrydb.Index) -> None:
    eng = sample_index.engine
    asked = eng.query_vector("how does the server look up a user by id?")
    stated = eng.query_vector("server look up a user by id")
    assert float(asked @ stated) > 0.9999  # one embedding, shared by both phrasings
    raw = sample_index.embedder().embed_query("how does the server look up a user by id?")
    assert float(asked @ raw) < 0.999  # really not the question's own vector


def test_location_question_finds_entry_point(sample_index: scrydb.Index) -> None:
    hits = _top(sample_index, "where does the command line program start", k=3)
    assert any(h.path in ("app/cli.py", "pyproject.toml") for h in hits), [h.location for h in hits]


def test_test_files_rank_below_code(sample_index: scrydb.Index) -> None:
    hits = _top(sample_index, "compute_backoff", k=10)
    paths = [h.path for h in hits]
    assert paths[0] == "app/retry.py" and "tests/test_retry.py" in paths, paths
    # ... and moves up when the query asks for tests: the penalty is lifted.
    asked_hits = _top(sample_index, "tests of compute_backoff", k=10, explain=True)
    asked = [h.path for h in asked_hits]
    test = "tests/test_retry.py"
    # Right after the definition (which the query names), never lower than before ...
    assert test in asked and asked.index(test) <= min(1, paths.index(test)), (asked, paths)
    # ... and without the test-path penalty.
    assert "test" not in asked_hits[asked.index(test)].explain["factors"]


def test_filters_are_hard(sample_index: scrydb.Index) -> None:
    # Each filter must return something (an empty answer would pass any "every hit is ..."
    # check) and only what it allows, and the unfiltered answer must include what it drops.
    for query, kw, ok in (
        ("user lookup by id", {"lang": "go"}, lambda h: h.lang == "go"),
        ("user lookup by id", {"path": "web"}, lambda h: h.path.startswith("web/")),
        (
            "cache",
            {"path": "svc/*.go"},
            lambda h: h.path.startswith("svc/") and h.path.endswith(".go"),
        ),
    ):
        hits = _top(sample_index, query, k=10, **kw)
        assert hits, (query, kw)
        assert all(ok(h) for h in hits), (query, kw, [h.path for h in hits])
        unfiltered = _top(sample_index, query, k=10)
        assert any(not ok(h) for h in unfiltered), (query, "the filter dropped nothing")
    assert _top(sample_index, "cache", lang="kotlin") == []


def test_snippet_fields(sample_index: scrydb.Index) -> None:
    h = _top(sample_index, "evicting the least recently used entry", k=1)[0]
    assert h.path == "svc/cache.go"
    assert h.start_line <= h.anchor_line <= h.end_line
    assert h.snippet_start <= h.anchor_line
    lines = h.snippet.split("\n")
    assert len(lines) <= 31
    assert not h.truncated or len(lines) < h.end_line - h.start_line + 1


def test_explain_has_components(sample_index: scrydb.Index) -> None:
    h = sample_index.search("compute_backoff", k=1, explain=True)[0]
    assert h.explain is not None
    assert h.explain["lexical_rank"] is not None and h.explain["dense_rank"] is not None
    assert "symbol" in h.explain["votes"]


def test_legs_alone(sample_index: scrydb.Index) -> None:
    lex = sample_index.search("LRUCache", k=3, mode="lexical")
    dense = sample_index.search("LRUCache", k=3, mode="dense")
    assert lex.legs == ["lexical"] and dense.legs == ["dense"]
    assert lex[0].path == "svc/cache.go"


def test_empty_query_is_an_error(sample_index: scrydb.Index) -> None:
    for q in ("", "   ", "\n\t"):
        with pytest.raises(ScryError, match="empty query"):
            sample_index.search(q)


@pytest.mark.parametrize(
    "q",
    [
        '"',
        "*",
        "NEAR(a b)",
        "a AND",
        "-x",
        "^start",
        "symbol: foo",
        "'; DROP TABLE chunks; --",
        "(((",
        "[a-z]+.*",
        "\x00\x01\x02",
        "Überprüfung der Nutzer",
        "用户 查询",
        "a" * 100_000,
        "OR OR OR",
    ],
)
def test_hostile_queries_never_fail(sample_index: scrydb.Index, q: str) -> None:
    res = sample_index.search(q, k=5)
    assert isinstance(res, scrydb.Results)
    assert sample_index.store.scalar("SELECT count(*) FROM chunks") > 0


def test_weak_results_suggest_identifiers(sample_index: scrydb.Index) -> None:
    res = sample_index.search("compute_backof", k=5)  # a typo
    assert res[0].path == "app/retry.py"  # fuzzy expansion finds it anyway
    sugg = sample_index.engine.suggest(
        __import__("scrydb.search.query", fromlist=["analyse"]).analyse("RetryPolcy")
    )
    assert "RetryPolicy" in sugg
