"""Each ranking heuristic of search/rank.py, shown working: pure functions on candidates,
then on small real indexes (lexical only where vectors don't matter, so no model)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import scrydb
from scrydb.config import Config
from scrydb.search import rank
from scrydb.search.rank import Candidate


def _cand(cid: int, path: str = "a.py", **kw: object) -> Candidate:
    c = Candidate(
        cid, path=path, content=kw.pop("content", f"def f{cid}(): pass"), text_hash=str(cid)
    )  # type: ignore[arg-type]
    for k, v in kw.items():
        setattr(c, k, v)
    return c


# -- fusion -------------------------------------------------------------------------------


def test_fusion_orders_by_both_legs_votes_and_factors() -> None:
    """Behaviour, not arithmetic: leg weights decide between a lexical-only and a
    dense-only favourite, a hit strong in both wins, a vote lifts, a factor lowers."""

    def cands() -> dict[int, Candidate]:
        return {
            1: _cand(1, lex_score=-10.0, dense_score=0.30),  # best lexical, worst dense
            2: _cand(2, lex_score=-2.0, dense_score=0.60),  # best dense, weak lexical
            3: _cand(3, lex_score=-9.0, dense_score=0.58),  # strong in both
            4: _cand(4, dense_score=0.45),  # dense only, middling
        }

    def order(cs: dict[int, Candidate]) -> list[int]:
        return sorted(cs, key=lambda i: -cs[i].score)

    lexical_heavy, dense_heavy = cands(), cands()
    rank.fuse(lexical_heavy, dense_w=0.1, lex_w=0.9)
    rank.fuse(dense_heavy, dense_w=0.9, lex_w=0.1)
    assert order(lexical_heavy).index(1) < order(lexical_heavy).index(2)
    assert order(dense_heavy).index(2) < order(dense_heavy).index(1)
    balanced = cands()
    rank.fuse(balanced, dense_w=0.5, lex_w=0.5)
    assert order(balanced)[0] == 3
    voted = cands()
    voted[4].votes["symbol"] = rank.SYMBOL_VOTE
    rank.fuse(voted, dense_w=0.5, lex_w=0.5)
    assert voted[4].score > balanced[4].score
    penalised = cands()
    penalised[3].factors["test"] = rank.PENALTY_TEST
    rank.fuse(penalised, dense_w=0.5, lex_w=0.5)
    assert penalised[3].score < balanced[3].score and order(penalised)[0] != 3


def test_fusion_arithmetic_on_the_pool_evidence() -> None:
    """The documented sum: lex_w x BM25 over the pool's best + dense_w x min-max cosine +
    SCORE_VOTE per vote (a rank-r vote counts 2 / (1 + r)), times every factor. Equal
    cosines carry no dense term; a pool whose best BM25 is not positive no lexical term."""
    a = _cand(1, lex_score=-8.0, dense_score=0.6)
    b = _cand(2, lex_score=-2.0, dense_score=0.2)
    c = _cand(3, dense_score=0.4)
    b.votes["symbol"] = 1.0
    b.rank_votes["rerank"] = (1.0, 3)
    c.factors.update({"test": 0.5, "docs": 0.8})
    rank.fuse({1: a, 2: b, 3: c}, dense_w=0.5, lex_w=0.5)
    assert a.score == pytest.approx(0.5 * 1.0 + 0.5 * 1.0)
    assert b.score == pytest.approx(0.5 * 0.25 + 0.0 + rank.SCORE_VOTE * (1.0 + 0.5))
    assert c.score == pytest.approx(0.5 * 0.5 * 0.5 * 0.8)
    ev = rank.evidence([a, b, c])
    assert ev.has_lex.tolist() == [True, True, False] and ev.best_lex == 8.0
    tied = {1: _cand(1, dense_score=0.4), 2: _cand(2, dense_score=0.4, lex_score=0.3)}
    rank.fuse(tied, dense_w=0.5, lex_w=0.5)
    assert tied[1].score == tied[2].score == 0.0
    assert rank.evidence(list(tied.values())).dense.tolist() == [1.0, 1.0]  # learned reads it


# -- diversity ----------------------------------------------------------------------------


def test_max_per_file_and_duplicates() -> None:
    same_file = [_cand(i, "big.py", score=1.0 - i / 100) for i in range(8)]
    other = [_cand(100 + i, f"o{i}.py", score=0.5 - i / 100) for i in range(5)]
    chosen = rank.diversify(same_file + other, 10)
    assert sum(1 for c in chosen if c.path == "big.py") == rank.MAX_PER_FILE
    assert len(chosen) == 10
    # Identical text (a vendored copy) and near-identical text are dropped.
    body = (
        "def parse(text, limit, options):\n    tokens = split_words(text, options.separator)\n"
        "    total = compute(tokens, options.weights)\n    return normalise(total, limit, options.flags)\n"
    )
    a = _cand(1, "v3/p.py", content=body, score=1.0)
    b = _cand(2, "v4/p.py", content=body, score=0.9)
    b.text_hash = a.text_hash
    c = _cand(3, "v5/p.py", content=body + "# tweak\n", score=0.8)
    d = _cand(4, "x.py", content="class Other:\n    value = 1\n", score=0.1)
    assert [x.chunk_id for x in rank.diversify([a, b, c, d], 10)] == [1, 4]


# -- priors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "factor"),
    [
        ("tests/test_client.py", "test"),
        ("src/client_test.go", "test"),
        ("web/auth.spec.ts", "test"),
        ("pkg/testdata/x.go", "test"),
        ("examples/basic.py", "example"),
        ("vendor/lib/x.go", "vendored"),
        ("api/service_pb2.py", "generated"),
        ("types/index.d.ts", "stub"),
        ("docs/guide/usage.py", "docs"),
        ("CHANGELOG.md", "docs"),
    ],
)
def test_path_penalties(path: str, factor: str) -> None:
    assert factor in rank.path_factors(path, False, False, False)
    assert rank.path_factors("src/client.py", False, False, False) == {}


def test_path_penalties_lifted_when_asked() -> None:
    assert "test" not in rank.path_factors("tests/test_client.py", True, False, False)
    assert "example" not in rank.path_factors("examples/basic.py", False, True, False)
    assert "docs" not in rank.path_factors("docs/x.py", False, False, True)


def test_content_penalties() -> None:
    comments = "// The lexer.\n// It turns text\n// into tokens.\n"
    imports = "import os\nimport sys\nfrom pathlib import Path\n"
    code = "def f(x):\n    return x + 1\n"
    assert rank.content_factors(comments, "rust") == {"comments": rank.PENALTY_COMMENTS}
    assert rank.content_factors(imports, "python", "code", 5) == {"imports": rank.PENALTY_IMPORTS}
    assert rank.content_factors(imports + code, "python", "code", 1) == {
        "preamble": rank.PENALTY_PREAMBLE
    }
    assert rank.content_factors("# Title\ntext\n", "markdown") == {"prose": rank.PENALTY_PROSE}
    assert rank.content_factors(code, "python", "function", 1) == {}
    assert rank.content_factors("a: 1\n", "yaml") == {}


def test_recency_factor() -> None:
    day = 86_400 * 10**9
    now = 1_000 * day
    assert rank.recency_factor(now, now) == pytest.approx(1 + rank.RECENCY_BOOST)
    assert 1.0 < rank.recency_factor(now - 7 * day, now) < 1 + rank.RECENCY_BOOST
    assert rank.recency_factor(now - 30 * day, now) == 1.0
    assert rank.recency_factor(0, now) == 1.0


# -- on a real (lexical) index ---------------------------------------------------------------


def _lexical_index(root: Path, tmp: Path, config: Config | None = None) -> scrydb.Index:
    ix = scrydb.open(root, db=tmp / "r.db", config=config)
    ix.sync(embed=False)
    return ix


def test_definition_beats_call_sites(sample_repo: Path, tmp_path: Path) -> None:
    with _lexical_index(sample_repo, tmp_path) as ix:
        hits = ix.search("load_config", k=3)
        assert hits[0].path == "app/config.py" and hits[0].symbol == "load_config"
        assert hits[0].explain is None
        explained = ix.search("load_config", k=3, explain=True)[0].explain
        assert explained is not None and explained["votes"].get("definition")


def test_qualified_identifier_prefers_its_class(tmp_path: Path) -> None:
    root = tmp_path / "q"
    (root / "a").mkdir(parents=True)
    (root / "a" / "client.py").write_text(
        "class Client:\n    def send(self, request):\n        '''Send one request.'''\n        return self.transport.handle(request)\n"
    )
    (root / "a" / "server.py").write_text(
        "class Server:\n    def send(self, response):\n        '''Send one response.'''\n        return self.socket.write(response)\n"
    )
    with _lexical_index(root, tmp_path) as ix:
        assert ix.search("Client.send", k=2)[0].path == "a/client.py"
        assert ix.search("Server.send", k=2)[0].path == "a/server.py"


def test_plain_word_symbol_votes_only_for_rare_names(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    for i in range(5):  # five definitions of ``run``: an ambiguous word
        (root / f"job{i}.py").write_text(
            f"def run(x):\n    '''Job {i}.'''\n    y = x * {i}\n    return y\n"
        )
    (root / "engine.py").write_text(
        "def start_engine(x):\n    '''Run the engine.'''\n    run = x\n    return run\n"
    )
    with _lexical_index(root, tmp_path) as ix:
        res = ix.search("run", k=6, explain=True)
        assert all("symbol" not in (h.explain or {}).get("votes", {}) for h in res)


def test_declaration_prior_in_questions_only(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "m.py").write_text(
        "class TokenBucket:\n    '''A token bucket rate limiter.'''\n    rate: float\n    capacity: int\n\n\n"
        "def refill_bucket(bucket, now):\n    '''Refill the token bucket.'''\n    bucket.tokens = min(bucket.capacity, bucket.tokens + bucket.rate * now)\n    return bucket\n"
    )
    with _lexical_index(root, tmp_path) as ix:
        q = ix.search("how is the token bucket refilled", k=2, explain=True)
        cls = next(h for h in q if h.kind == "class")
        assert cls.explain and cls.explain["factors"].get("declaration") == rank.PENALTY_DECLARATION
        ident = ix.search("TokenBucket", k=1, explain=True)[0]
        assert ident.kind == "class" and "declaration" not in (ident.explain or {})["factors"]


def test_short_factor_by_shape() -> None:
    assert rank.short_factor(3, "question") < rank.short_factor(12, "question") < 1.0
    assert rank.short_factor(int(rank.SHORT_LINES), "question") == 1.0
    assert rank.short_factor(3, "location") > rank.short_factor(3, "question")
    assert rank.short_factor(3, "question", interrogative=False) == 1.0  # a statement
    for shape in ("identifier", "keyword"):
        assert rank.short_factor(3, shape) == 1.0


def test_short_chunk_prior_for_how_questions_only(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    body = "\n".join(f"        score += weight_{i} * item.tightness" for i in range(26))
    (root / "node.py").write_text(
        'def get_list_tight(node):\n    """Whether the list is tight."""\n    return node.tight\n'
    )
    (root / "blocks.py").write_text(
        'def finalize_list(node):\n    """Decide whether a list is tight or loose."""\n'
        f"    score = 0\n    for item in node.items:\n{body}\n    node.tight = score < 1\n"
    )
    with _lexical_index(root, tmp_path) as ix:

        def factors(query: str, symbol: str) -> dict:
            hit = next(h for h in ix.search(query, k=5, explain=True) if h.symbol == symbol)
            return (hit.explain or {})["factors"]

        how = factors("how is a list marked tight", "get_list_tight")
        # 3 of 25 lines, alpha 0.3 for a question: (3 / 25) ** 0.3 = 0.529 (worked out by
        # hand, not by the function under test)
        assert how.get("short") == pytest.approx(0.529, abs=1e-3)
        assert "short" not in factors("how is a list marked tight", "finalize_list")
        # a statement of what the code does, and a query naming the getter: no prior
        assert "short" not in factors("tell apart tight and loose lists", "get_list_tight")
        assert "short" not in factors("how does get_list_tight work", "get_list_tight")


def test_entry_point_vote_for_location_questions(sample_repo: Path, tmp_path: Path) -> None:
    with _lexical_index(sample_repo, tmp_path) as ix:
        res = ix.search("where does the command line program start", k=5, explain=True)
        entry = [h for h in res if (h.explain or {}).get("votes", {}).get("entry")]
        assert entry and entry[0].path in {"app/cli.py", "svc/main.go", "pyproject.toml"}
        assert res[0].path in {"app/cli.py", "svc/main.go", "pyproject.toml"}


def test_fuzzy_expansion_for_typos(sample_repo: Path, tmp_path: Path) -> None:
    with _lexical_index(sample_repo, tmp_path) as ix:
        assert ix.search("UserRepositry", k=1)[0].symbol == "UserRepository"
        hit = ix.search("deactivte user", k=1, explain=True)[0]
        assert hit.path == "app/users.py" and "def deactivate" in hit.snippet
        assert (hit.explain or {})["votes"].get("symbol")  # the fuzzy match voted


def test_miss_says_weak_and_suggests(sample_repo: Path, tmp_path: Path) -> None:
    with _lexical_index(sample_repo, tmp_path) as ix:
        res = ix.search("qqqzzz", k=5)
        assert not res and res.weak and res.suggestions == []
        res = ix.search("where is the usrrepository class defined", k=5)
        assert not res and res.weak
        assert "UserRepository" in res.suggestions, res.suggestions


def test_recency_boost_when_enabled(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    body = "def handle_{n}(request):\n    '''Handle an upload request.'''\n    data = request.read()\n    return store(data)\n"
    for n in ("old", "new"):
        (root / f"{n}.py").write_text(body.format(n=n))
    old_t = time.time() - 60 * 86_400
    os.utime(root / "old.py", (old_t, old_t))
    cfg = Config()
    cfg.search.recency = True
    with _lexical_index(root, tmp_path, cfg) as ix:
        res = ix.search("upload request handler", k=2, explain=True)
        assert res[0].path == "new.py" and (res[0].explain or {})["factors"].get("recent")


def test_evidence_names_are_one_closed_list() -> None:
    """Every factor is a learned feature or an explained exception; every shape has hand
    weights and learned columns; fusion names agree with the config's choices."""
    from scrydb.config import CHOICES
    from scrydb.search import fusion, learned
    from scrydb.search.query import QUERY_SHAPES

    assert set(learned.FACTORS) | set(learned.UNUSED_FACTORS) == rank.FACTOR_NAMES
    assert not set(learned.FACTORS) & set(learned.UNUSED_FACTORS)
    assert set(learned.VOTES) | set(learned.UNUSED_VOTES) == rank.VOTE_NAMES
    assert not set(learned.VOTES) & set(learned.UNUSED_VOTES)
    assert set(rank.WEIGHTS) == set(QUERY_SHAPES) == set(learned.SHAPES)
    assert set(fusion.STRATEGIES) == set(CHOICES[("search", "fusion")])


def test_unknown_evidence_is_an_error() -> None:
    from scrydb.search import learned

    c = rank.Candidate(1)
    c.lex_rank, c.lex_score = 1, -3.0
    c.factors["shortish"] = 0.5  # a typo or a factor nobody registered
    with pytest.raises(ValueError, match="shortish"):
        rank.fuse({1: c}, 0.5, 0.5)
    c.factors.clear()
    c.votes["symbl"] = 1.0
    with pytest.raises(ValueError, match="symbl"):
        rank.evidence([c])
    c.votes.clear()
    with pytest.raises(ValueError, match="statement"):
        learned.features([c], "statement")
    c.factors["short"] = 0.6  # named, on purpose not a feature
    assert learned.features([c], "question").shape == (1, len(learned.FEATURES))


def test_fusion_observer_sees_each_fusion(tmp_path: Path, sample_repo: Path) -> None:
    from scrydb.search import fusion

    seen: list[fusion.Fused] = []
    with _lexical_index(sample_repo, tmp_path) as ix:
        with fusion.observing(seen.append):
            hits = ix.search("how are retries scheduled", k=3)
        ix.search("how are retries scheduled", k=3)  # after the block: not observed
    assert len(seen) == 1
    ev = seen[0]
    assert ev.query.text == "how are retries scheduled" and ev.strategy == "learned"
    assert 0.0 <= ev.coverage <= 1.0
    best = max(ev.candidates, key=lambda c: c.score)
    assert (best.path, best.start_line) == (hits[0].path, hits[0].start_line)
