"""A bug report as a search (issue 47, item 2): a pasted traceback's frames, its error
message and the names it gives find the code to change, through the real engine, a real
index and the real model; short queries keep their route."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_scry
from sample_repo import write_repo

import scrydb
from scrydb.search.query import prepare

PAYMENTS = '''"""Charging cards."""


class PaymentError(Exception):
    """A charge the provider refused."""


def charge(card: str, cents: int) -> str:
    """Charge a card; the provider's receipt id."""
    if cents <= 0:
        raise PaymentError(f"amount must be positive, got {cents} cents for card {card}")
    return _provider_call(card, cents)


def _provider_call(card: str, cents: int) -> str:
    return f"rcpt-{card[-4:]}-{cents}"
'''

REPORT = """charge() accepts a zero amount from the checkout page and then fails

When the basket is empty the checkout still calls `charge` and the customer sees a
server error page instead of a friendly message. I would expect the checkout to skip the
payment, or at least the error to be caught and shown properly.

```
Traceback (most recent call last):
  File "/srv/shop/venv/lib/python3.12/site-packages/flask/app.py", line 1463, in wsgi_app
    response = self.full_dispatch_request()
  File "/srv/shop/checkout/views.py", line 88, in pay
    receipt = charge(card, total)
  File "/srv/shop/app/payments.py", line 11, in charge
    raise PaymentError(f"amount must be positive, got {cents} cents for card {card}")
app.payments.PaymentError: amount must be positive, got 0 cents for card 4242424242424242
```

Versions: shop 2.3, Python 3.12 on Debian. This started after the basket refactoring.
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("report")
    repo = write_repo(base / "shop")
    (repo / ".git").mkdir(exist_ok=True)
    (repo / "app" / "payments.py").write_text(PAYMENTS)
    db = base / "shop.db"
    with scrydb.open(repo, db=db) as ix:
        ix.sync()
    return repo, db


def test_a_pasted_traceback_finds_the_raising_function_first(shop: tuple[Path, Path]) -> None:
    repo, db = shop
    with scrydb.open(repo, db=db) as ix:
        res = ix.search(REPORT, k=5, explain=True)
        top = res[0]
        assert (top.path, top.symbol) == ("app/payments.py", "charge")
        votes = top.explain["votes"] if top.explain else {}
        assert votes.get("frame") and votes.get("message"), votes
        assert any(n.startswith("read as a bug report") for n in res.notes)
        assert not any("was cut" in n for n in res.notes)


def test_report_route_only_for_reports() -> None:
    q = prepare("where is the retry backoff computed")
    assert q.report is None and q.dense_texts == [q.text]
    r = prepare(REPORT)
    assert r.report is not None and r.shape == "question" and not r.wants_tests
    assert "charge" in r.identifiers and "PaymentError" in r.identifiers
    assert len(r.dense_texts) >= 1 and all("Traceback" not in t for t in r.dense_texts)


def test_a_filter_keeps_report_votes_inside_it(shop: tuple[Path, Path]) -> None:
    repo, db = shop
    with scrydb.open(repo, db=db) as ix:
        hits = ix.search(REPORT, k=5, path="tests/")
        assert hits and all(h.path.startswith("tests/") for h in hits)


def test_cli_reads_a_report_from_stdin(shop: tuple[Path, Path], tmp_path: Path) -> None:
    repo, db = shop
    r = run_scry("search", "-", "--json", "--db", str(db), cwd=repo, input=REPORT)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["hits"][0]["path"] == "app/payments.py"


def test_a_nul_in_a_reported_name_keeps_the_lexical_leg(shop: tuple[Path, Path]) -> None:
    """Found by tests/fuzz/query.py (corpus/query/crash-nul-in-a-frame): one NUL byte in a
    report's name reached the FTS5 expression, FTS5 refused it whole ("unterminated
    string") and the lexical leg answered nothing."""
    repo, db = shop
    text = REPORT.replace("in pay\n", "in pa\x00y\n")
    assert any("\x00" in t for t in prepare(text).lexical_terms)
    with scrydb.open(repo, db=db) as ix:
        hits = ix.search(text, k=3, mode="lexical")
        assert hits and hits[0].path == "app/payments.py"


def test_explain_shows_the_parts_of_the_report_a_hit_matched(
    shop: tuple[Path, Path],
) -> None:
    """``--explain`` (issue 47, item 3): the frame, the message fragment, the names and
    the prose segments' cosines behind a hit, in the JSON and in the text."""
    repo, db = shop
    r = run_scry("search", "-", "--json", "--explain", "--db", str(db), cwd=repo, input=REPORT)
    assert r.returncode == 0, r.stderr
    top = json.loads(r.stdout)["hits"][0]
    part = top["explain"]["report"]
    assert top["path"] == "app/payments.py"
    assert part["frames"] == ["/srv/shop/app/payments.py:11 in charge"]
    assert any("must be positive" in m for m in part["messages"])
    assert part["names"][0] == "charge" and "PaymentError" in part["names"]
    assert part["segments"] and all(-1.0 <= c <= 1.0 for c in part["segments"])
    assert part["file_rank"] == 1
    text = run_scry("search", "-", "--explain", "--db", str(db), cwd=repo, input=REPORT)
    assert text.returncode == 0, text.stderr
    assert "report: frame /srv/shop/app/payments.py:11 in charge; message '" in text.stdout
    assert "file #1 by summed evidence" in text.stdout


def test_a_report_wants_code_to_change_before_prose_config_and_tests() -> None:
    """Where to change (issue 47): after the fusion a report's candidates in prose or
    configuration files, and in test or docs paths, fall behind code of a lower score."""
    from scrydb.search import rank, reportquery

    def cand(cid: int, path: str, lang: str | None, score: float) -> rank.Candidate:
        c = rank.Candidate(cid, score=score, path=path, lang=lang)
        c.factors.update(rank.path_factors(path, False, False, False))
        return c

    cands = {
        1: cand(1, "CHANGELOG.md", "markdown", 1.0),
        2: cand(2, "setup.cfg", "ini", 0.95),
        3: cand(3, "tests/test_payments.py", "python", 0.9),
        4: cand(4, "app/payments.py", "python", 0.6),
    }
    reportquery.rescore(cands, {})
    order = [c.path for c in sorted(cands.values(), key=lambda c: -c.score)]
    assert order[0] == "app/payments.py", order
    # setup.cfg 0.95 x 0.2 (configuration), the test 0.9 x 0.2, CHANGELOG.md 1.0 x 0.2 x
    # 0.2 (prose in a docs path): relative to the code's 0.6, which now leads
    assert cands[4].score == 1.0
    assert cands[2].score == pytest.approx(0.95 * 0.2 / 0.6)
    assert cands[3].score == pytest.approx(0.9 * 0.2 / 0.6)
    assert cands[1].score == pytest.approx(0.2 * 0.2 / 0.6)


def test_a_report_ranks_files_by_their_summed_evidence(shop: tuple[Path, Path]) -> None:
    """Which file (issue 47): a report's code files are ranked by the BM25 of their
    chunks summed over a wide lexical pool, tests, docs and prose left out; the best
    file's candidates get the "file_rr" feature at 1.0, and a filter bounds the pool."""
    from scrydb.search import reportquery
    from scrydb.search.filters import Filter
    from scrydb.search.query import fts_match

    repo, db = shop
    q = prepare(REPORT)
    match = fts_match(q.lexical_terms)
    with scrydb.open(repo, db=db) as ix:
        ranks = reportquery.file_ranks(ix.store, match)
        assert ranks and min(ranks.values()) == 1
        assert sorted(ranks.values()) == list(range(1, len(ranks) + 1))
        assert next(p for p, r in ranks.items() if r == 1) == "app/payments.py", ranks
        assert not any(p.endswith((".md", ".toml")) or "test" in p for p in ranks), ranks
        filt = Filter(None, "web/**")
        only = reportquery.file_ranks(ix.store, match, filt.sql(), filt.active)
        assert all(p.startswith("web/") for p in only), only
        cands = {}
        with reportquery.observing(lambda items, x: cands.update({"x": x, "items": items})):
            ix.search(REPORT, k=5)
        col = reportquery.REPORT_FEATURES.index("file_rr")
        best = [c for c, row in zip(cands["items"], cands["x"], strict=True) if row[col] == 1.0]
        assert best and all(c.path == "app/payments.py" for c in best)
