"""Learned fusion (search/learned.py): features, the shipped weights, and search with them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import scrydb
from scrydb.config import Config, ConfigError
from scrydb.errors import ScryError
from scrydb.search import learned
from scrydb.search.rank import Candidate


def _cand(cid: int, **kw: object) -> Candidate:
    c = Candidate(cid, path=f"src/f{cid}.py", start_line=1, end_line=10, content="")
    for k, v in kw.items():
        setattr(c, k, v)
    return c


def test_features_follow_the_evidence() -> None:
    a = _cand(1, lex_rank=1, lex_score=-8.0, dense_rank=2, dense_score=0.5)
    a.votes["symbol"] = 1.0
    a.factors["test"] = 0.55
    b = _cand(2, dense_rank=1, dense_score=0.7)
    x = learned.features([a, b], "question", coverage=0.5)
    col = {n: i for i, n in enumerate(learned.FEATURES)}
    assert x.shape == (2, len(learned.FEATURES))
    assert x[0, col["lex@question"]] == 1.0 and x[1, col["lex@question"]] == 0.0
    assert x[0, col["lex@identifier"]] == 0.0  # leg scores sit in the query shape's column
    assert x[1, col["dense@question"]] == 1.0 and x[0, col["dense@question"]] == 0.0
    assert x[0, col["lex*coverage"]] == 0.5
    assert x[0, col["vote:symbol"]] == 1.0
    assert x[0, col["log:test"]] == pytest.approx(np.log(0.55))
    assert x[1, col["has_lex"]] == 0.0 and x[1, col["dense_rr"]] == 1.0


def test_features_edge_cases() -> None:
    """Ties, missing legs, odd votes and factors: the cases a column-wise build can get wrong."""
    col = learned.COL
    a = _cand(1, dense_rank=1, dense_score=0.4, end_line=0)  # equal cosines; no lines
    b = _cand(2, dense_rank=2, dense_score=0.4, lex_rank=3, lex_score=0.5)  # bm25 <= 0
    a.votes.update({"stem": 0.5})
    a.rank_votes["rerank"] = (0.25, 1)  # a rank-1 vote counts its weight
    a.rank_votes["rerank2"] = (1.0, 3)  # counts 2 / (1 + 3) of a rank-1 vote
    # "short" is a factor left out of the features on purpose (learned.UNUSED_FACTORS)
    a.factors.update({"test": 0.0, "docs": 0.5, "short": 0.6})
    x = learned.features([a, b], "question", coverage=0.25)
    assert (x[:, col["dense@question"]] == 1.0).all()
    assert (x[:, col["dense*best_cos"]] == 0.4).all() and (x[:, col["cos"]] == 0.4).all()
    assert (x[:, col["has_lex"]] == 0.0).all()  # no positive BM25: no lexical evidence
    assert x[1, col["lex_rr"]] == pytest.approx(1 / 3) and x[0, col["lex_rr"]] == 0.0
    assert x[1, col["dense_rr"]] == 0.5
    assert x[0, col["vote:stem"]] == 0.5 and x[0, col["vote:other"]] == pytest.approx(0.75)
    assert x[0, col["log:test"]] == 0.0  # a zero factor has no log: left out
    assert x[0, col["log:docs"]] == pytest.approx(np.log(0.5))
    assert x[0, col["log_lines"]] == 0.0 and x[1, col["log_lines"]] == pytest.approx(np.log(11))
    assert learned.features([], "question").shape == (0, len(learned.FEATURES))


def test_coverage_is_the_share_of_query_words_in_the_lexical_hits() -> None:
    hit = _cand(1, lex_rank=1, lex_score=-3.0, content="def backoff(attempt): jitter")
    far = _cand(2, dense_rank=1, dense_score=0.4, content="sleep wait delay")
    cands = {1: hit, 2: far}
    assert learned.coverage(["backoff", "jitter"], cands) == 1.0
    assert learned.coverage(["backoff", "delay"], cands) == 0.5  # dense-only hits don't count
    assert learned.coverage([], cands) == 1.0


def test_shipped_weights_match_the_features() -> None:
    w, meta = learned.load_weights()
    assert w.shape == (len(learned.FEATURES),) and np.isfinite(w).all()
    assert meta["features"] == list(learned.FEATURES)
    assert "golden" in meta["about"]  # says what it was (not) fitted on


def test_stale_weights_are_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "fusion.json"
    bad.write_text(json.dumps({"features": ["lex"], "weights": [1.0]}))
    with pytest.raises(ScryError, match="refit"):
        learned.load_weights(str(bad))
    bad.write_text("{not json")
    with pytest.raises(ScryError, match="cannot read"):
        learned.load_weights(str(bad))


def test_fusion_setting_is_checked() -> None:
    assert Config.from_dict({"search": {"fusion": "learned"}}).search.fusion == "learned"
    with pytest.raises(ConfigError, match="fusion must be one of hand, learned"):
        Config.from_dict({"search": {"fusion": "magic"}})


@pytest.mark.slow
def test_search_with_learned_fusion(indexed_sample: tuple[Path, Path], tmp_path: Path) -> None:
    repo, db = indexed_sample
    cfg = tmp_path / "scry.toml"
    cfg.write_text('[search]\nfusion = "learned"\n')
    with scrydb.open(repo, db=db, config=cfg) as ix:
        hits = list(ix.search("UserRepository", k=5))
        assert hits[0].path == "app/users.py" and hits[0].start_line <= 13 <= hits[0].end_line
        assert hits[0].score == 1.0 and all(0.0 <= h.score <= 1.0 for h in hits)
        q = "Seconds to sleep before the next attempt"
        assert any(h.path == "app/retry.py" for h in ix.search(q, k=3))
