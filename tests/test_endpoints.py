"""The OpenAI-compatible embeddings endpoint, against real local servers (tests/servers.py)
that compute real MiniLM vectors -- and misbehave in the ways real servers do."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from servers import ModelServer, free_port

import scrydb
from scrydb.config import Config, EmbedConfig
from scrydb.embed import embedder_id, make_embedder
from scrydb.embed import http as http_mod
from scrydb.embed.http import HttpEmbedder, endpoint_url
from scrydb.embed.local import LocalEmbedder
from scrydb.errors import ConfigError, EmbedderError

TEXTS = [
    f"def handler_{i}(request):\n    return respond(request, status={200 + i})\n" * (1 + i % 4)
    for i in range(40)
]


def _cfg(url: str, **kw: object) -> EmbedConfig:
    base: dict[str, object] = {"provider": "openai", "url": url, "model": "minilm", "timeout": 10.0}
    base.update(kw)
    return EmbedConfig(**base)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """TEXTS embedded by the built-in model, in float32 as the test server embeds them
    (bfloat16 on this CPU would differ by ~1e-3 per component)."""
    return LocalEmbedder(EmbedConfig(precision="float32")).embed_documents(TEXTS)


# -- no server needed ----------------------------------------------------------------------


def test_endpoint_url_appends_the_route_once() -> None:
    assert endpoint_url("http://h:1/v1", "embeddings") == "http://h:1/v1/embeddings"
    assert endpoint_url("http://h:1/v1/", "embeddings") == "http://h:1/v1/embeddings"
    assert endpoint_url("http://h:1/v1/embeddings", "embeddings") == "http://h:1/v1/embeddings"
    assert endpoint_url("http://h:1", "rerank") == "http://h:1/rerank"


def test_id_names_the_model_not_the_host() -> None:
    a = embedder_id(_cfg("http://gpu-1:8080/v1"))
    b = embedder_id(_cfg("http://gpu-2:9090/v1"))
    assert a == b == "openai:minilm"
    assert embedder_id(_cfg("http://x/v1", document_prefix="passage: ")) != a


def test_building_an_http_embedder_contacts_nothing() -> None:
    emb = make_embedder(_cfg(f"http://127.0.0.1:{free_port()}/v1", dim=384))
    assert isinstance(emb, HttpEmbedder) and emb.dim == 384 and emb.requests == 0


@pytest.mark.parametrize(
    ("raw", "msg"),
    [
        ({"embed": {"provider": "openai", "url": "127.0.0.1:8080"}}, "url must start with http"),
        ({"embed": {"concurrency": 0}}, "concurrency must be positive"),
        ({"embed": {"retries": -1}}, "retries must not be negative"),
        ({"embed": {"startup_wait": "long"}}, "startup_wait must be a number"),
        ({"rerank": {"timeout": 0}}, "timeout must be positive"),
        ({"rerank": {"weight": -1}}, "weight must not be negative"),
        ({"chat": {"hyde_embed": "both"}}, "hyde_embed must be one of"),
        ({"chat": {"hyde": "auto"}}, "needs url"),
    ],
)
def test_endpoint_config_errors_name_the_key(raw: dict[str, object], msg: str) -> None:
    with pytest.raises(ConfigError, match=msg):
        Config.from_dict(raw)  # type: ignore[arg-type]


def test_refused_query_fails_fast_and_cleanly() -> None:
    # A query never waits for a server to start (startup_wait is for documents): it is
    # refused at the first attempt, with no startup wait in its message.
    emb = HttpEmbedder(_cfg(f"http://127.0.0.1:{free_port()}/v1", dim=384, startup_wait=600))
    with pytest.raises(EmbedderError, match="connection refused") as e:
        emb.embed_query("anything")
    assert "waited" not in str(e.value), e.value
    assert emb.requests <= http_mod.QUERY_RETRIES + 1  # its own retries, no startup polling


def test_missing_api_key_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCRY_TEST_KEY", raising=False)
    emb = HttpEmbedder(_cfg("http://127.0.0.1:9/v1", dim=384, api_key_env="SCRY_TEST_KEY"))
    with pytest.raises(EmbedderError, match="SCRY_TEST_KEY"):
        emb.embed_documents(["x"])


# -- a real server computing MiniLM vectors ---------------------------------------------------

slow = pytest.mark.slow


@slow
def test_same_vectors_as_the_built_in_model(reference: np.ndarray) -> None:
    with ModelServer() as srv:
        emb = HttpEmbedder(_cfg(srv.url))
        assert emb.dim == 384  # learned from one probe request
        vecs = emb.embed_documents(TEXTS)
        q = emb.embed_query("return a response with a status")
    assert vecs.shape == (40, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(vecs, reference, atol=1e-5)
    ref_q = LocalEmbedder(EmbedConfig()).embed_query("return a response with a status")
    np.testing.assert_allclose(q, ref_q, atol=1e-5)


@slow
def test_batches_respect_count_and_character_budgets(reference: np.ndarray) -> None:
    with ModelServer() as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, batch_size=6, batch_chars=100_000))
        np.testing.assert_allclose(emb.embed_documents(TEXTS), reference, atol=1e-5)
        sizes = [r.n for r in srv.requests("embeddings")]
        assert sizes == [6] * 6 + [4]
        srv.log.clear()
        budget = 400
        emb = HttpEmbedder(_cfg(srv.url, dim=384, batch_size=64, batch_chars=budget))
        np.testing.assert_allclose(emb.embed_documents(TEXTS), reference, atol=1e-5)
        for r in srv.requests("embeddings"):
            chars = sum(len(t) for t in r.body["input"])
            assert chars <= budget or r.n == 1
        assert len(srv.requests("embeddings")) > 5


@slow
@pytest.mark.parametrize("wording", ["413", "llamacpp", "vllm", "tei"])
def test_rejected_batches_are_halved(reference: np.ndarray, wording: str) -> None:
    with ModelServer(max_batch=5, too_large=wording) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, batch_size=32, concurrency=1))
        np.testing.assert_allclose(emb.embed_documents(TEXTS), reference, atol=1e-5)
        statuses = [r.status for r in srv.requests("embeddings")]
        assert emb.rejections >= 2 and statuses.count(200) >= 8
        # the smaller size is remembered: the next call is not rejected at all
        srv.log.clear()
        emb.embed_documents(TEXTS)
        assert all(r.status == 200 and r.n <= 5 for r in srv.requests("embeddings"))


@slow
def test_a_text_too_long_alone_is_cut_until_it_fits() -> None:
    long_text = "def f():\n    return 1\n" * 200  # 4,400 characters
    with ModelServer(max_chars=1000) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, batch_size=16))
        vecs = emb.embed_documents(["short text", long_text])
        assert vecs.shape == (2, 384)
        ok = [r for r in srv.requests("embeddings") if r.status == 200]
        assert max(len(t) for r in ok for t in r.body["input"]) <= 1000
        # one long text is no reason to send smaller batches from now on
        srv.log.clear()
        emb.embed_documents(TEXTS[:16])
        assert [r.n for r in srv.requests("embeddings")] == [16]


@slow
@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_transient_errors_are_retried(status: int, reference: np.ndarray) -> None:
    with ModelServer(fail_first=2, fail_status=status) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, retries=3, batch_size=64))
        np.testing.assert_allclose(emb.embed_documents(TEXTS), reference, atol=1e-5)
        assert [r.status for r in srv.requests("embeddings")] == [status, status, 200]


@slow
def test_retries_run_out_with_one_clean_error() -> None:
    with ModelServer(fail_first=10, fail_status=500) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, retries=1))
        with pytest.raises(EmbedderError, match="HTTP 500"):
            emb.embed_documents(["x"])
        assert len(srv.requests("embeddings")) == 2


@slow
def test_client_errors_are_not_retried() -> None:
    with ModelServer(fail_first=10, fail_status=401) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, retries=3))
        with pytest.raises(EmbedderError, match="api_key_env"):
            emb.embed_documents(["x"])
        assert len(srv.requests("embeddings")) == 1


@slow
def test_waits_for_a_server_loading_its_model() -> None:
    with ModelServer(loading_for=1.5) as srv:
        emb = HttpEmbedder(_cfg(srv.url, startup_wait=30, retries=0))
        assert emb.embed_documents(["x", "y"]).shape == (2, 384)
        statuses = [r.status for r in srv.requests("embeddings")]
        assert statuses[0] == 503 and statuses[-1] == 200


@slow
def test_waits_for_a_server_that_is_not_listening_yet() -> None:
    srv = ModelServer(start_after=1.5).start()
    try:
        emb = HttpEmbedder(_cfg(srv.url, startup_wait=30, retries=0))
        assert emb.embed_documents(["x"]).shape == (1, 384)
    finally:
        srv.stop()


@slow
def test_startup_wait_is_bounded() -> None:
    with ModelServer(loading_for=60) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, startup_wait=0.6, retries=0))
        with pytest.raises(EmbedderError, match=r"Loading model.*waited 0\.6 s"):
            emb.embed_documents(["x"])


@slow
def test_timeout() -> None:
    with ModelServer(delay=3) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, timeout=0.3, retries=0))
        with pytest.raises(EmbedderError, match=r"no answer within 0\.3 s"):
            emb.embed_documents(["x"])


@slow
def test_requests_in_flight_are_bounded_by_concurrency() -> None:
    with ModelServer(delay=0.2) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, batch_size=2, concurrency=3))
        emb.embed_documents(TEXTS[:24])  # 12 batches
        emb.close()
        assert len(srv.requests("embeddings")) == 12
        assert srv.max_inflight == 3
    with ModelServer(delay=0.1) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, batch_size=2, concurrency=1))
        emb.embed_documents(TEXTS[:8])
        assert srv.max_inflight == 1


@slow
def test_wrong_dimension_is_an_error() -> None:
    with ModelServer(dim=100) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384))
        with pytest.raises(EmbedderError, match="100-d vectors, expected 384-d"):
            emb.embed_documents(["x"])


@slow
def test_garbage_is_an_error() -> None:
    with ModelServer(garbage=True) as srv:
        emb = HttpEmbedder(_cfg(srv.url, dim=384, retries=2))
        with pytest.raises(EmbedderError, match="answered no vectors for 1 texts"):
            emb.embed_documents(["x"])
        assert len(srv.requests("embeddings")) == 1  # not retried: it will not get better


@slow
def test_api_key_is_sent_but_never_stored(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRY_TEST_KEY", "s3cret-token-123")
    with ModelServer() as srv:
        cfg = Config.from_dict(
            {"embed": {"provider": "openai", "url": srv.url, "api_key_env": "SCRY_TEST_KEY"}}
        )
        db = tmp_path / "shop.db"
        with scrydb.open(sample_repo, db=db, config=cfg) as ix:
            rep = ix.sync()
            assert rep.texts_embedded > 0
        assert {r.auth for r in srv.log} == {"Bearer s3cret-token-123"}
    for f in tmp_path.glob("shop.db*"):
        assert b"s3cret" not in f.read_bytes()


@slow
def test_endpoint_index_ranks_like_the_built_in_model(tmp_path: Path) -> None:
    """Acceptance: an endpoint serving the same model gives the same search results."""
    from sample_repo import write_repo

    queries = [
        "how long do we wait before trying a failed call again",
        "where does the command line program start",
        "UserRepository",
        "check a bearer token signature",
        "evict the least recently used entry",
        "load settings from a toml file",
    ]
    repo = write_repo(tmp_path / "shop")
    f32 = Config.from_dict({"embed": {"precision": "float32"}})  # as the test server embeds
    with scrydb.open(repo, db=tmp_path / "local.db", config=f32) as ix:
        ix.sync()
        local = [[h.location for h in ix.search(q, k=8)] for q in queries]
        local_vecs = _vectors(ix)
    with ModelServer() as srv:
        cfg = Config.from_dict({"embed": {"provider": "openai", "url": srv.url, "batch_size": 7}})
        with scrydb.open(repo, db=tmp_path / "http.db", config=cfg) as ix:
            ix.sync()
            assert ix.status().fingerprint["embedder"] == "openai:scry-code-minilm"
            remote = [[h.location for h in ix.search(q, k=8)] for q in queries]
            remote_vecs = _vectors(ix)
    assert remote == local
    assert local_vecs.keys() == remote_vecs.keys()
    for h, v in local_vecs.items():
        np.testing.assert_allclose(remote_vecs[h], v, atol=1e-5)


def _vectors(ix: scrydb.Index) -> dict[str, np.ndarray]:
    rows = ix.store.rows(
        "SELECT e.text_hash, v.embedding FROM embeddings e JOIN vec_float v ON v.rowid = e.id"
    )
    return {h: np.frombuffer(b, dtype=np.float32) for h, b in rows}


@slow
def test_unconfigured_install_opens_no_socket(sample_repo: Path, tmp_path: Path) -> None:
    """Index, search (all shapes, --explain) and `scry check` with an audit hook that
    records every socket operation: there must be none."""
    script = textwrap.dedent(
        f"""
        import sys
        events = []
        def hook(event, args):
            if event.startswith("socket."):
                events.append((event, repr(args)[:120]))
        sys.addaudithook(hook)
        import scrydb
        from click.testing import CliRunner
        from scrydb.cli import cli
        with scrydb.open({str(sample_repo)!r}, db={str(tmp_path / "a.db")!r}) as ix:
            ix.sync()
            for q in ("UserRepository", "retry backoff", "how are failed calls retried",
                      "where does the program start"):
                assert ix.search(q, explain=True)
        r = CliRunner().invoke(cli, ["check", {str(sample_repo)!r}, "--db", {str(tmp_path / "a.db")!r}])
        assert r.exit_code == 0, r.output
        print("EVENTS", events)
        sys.exit(1 if events else 0)
        """
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "EVENTS []" in p.stdout


@slow
def test_configured_endpoint_is_what_connects(sample_repo: Path, tmp_path: Path) -> None:
    """The control for the test above: the same audit sees the configured endpoint."""
    with ModelServer() as srv:
        script = textwrap.dedent(
            f"""
            import sys
            events = []
            sys.addaudithook(lambda e, a: events.append(a[1]) if e == "socket.connect" else None)
            import scrydb
            from scrydb.config import Config
            cfg = Config.from_dict({{"embed": {{"provider": "openai", "url": {srv.url!r}}}}})
            with scrydb.open({str(sample_repo)!r}, db={str(tmp_path / "b.db")!r}, config=cfg) as ix:
                ix.sync()
            print("PORTS", sorted({{a[1] for a in events if isinstance(a, tuple)}}))
            """
        )
        p = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
        )
    assert p.returncode == 0, p.stderr[-2000:]
    assert f"PORTS [{srv.port}]" in p.stdout
