"""HyDE through a real local chat server (tests/servers.py): when it runs, what it embeds,
how it is cached, and how a failing chat model falls back to the plain query."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from servers import ModelServer

import scrydb
from scrydb.config import ChatConfig, Config
from scrydb.results import Results
from scrydb.search import hyde

QUESTION = "how long do we wait before trying a failed call again"


def test_wanted_by_mode_and_shape() -> None:
    url = "http://127.0.0.1:9/v1"
    on, off, auto = (ChatConfig(url=url, hyde=m) for m in ("on", "off", "auto"))
    for shape in ("identifier", "keyword", "question", "location"):
        assert hyde.wanted(on, shape) and not hyde.wanted(off, shape)
    assert [hyde.wanted(auto, s) for s in ("identifier", "keyword", "question", "location")] == [
        False,
        False,
        True,
        True,
    ]
    assert not hyde.wanted(ChatConfig(hyde="on"), "question")  # no endpoint, no HyDE


def test_cache_tag_separates_plain_and_expanded_vectors() -> None:
    auto = ChatConfig(url="http://127.0.0.1:9/v1", hyde="auto", model="coder")
    assert hyde.cache_tag(auto, "identifier") == ""
    tag = hyde.cache_tag(auto, "question")
    assert tag and "coder" in tag and "mix" in tag
    code = ChatConfig(url=auto.url, hyde="auto", model="coder", hyde_embed="code")
    assert hyde.cache_tag(code, "question") != tag


def test_clean_code_unwraps_fences_and_drops_reasoning() -> None:
    assert hyde.clean_code("```python\ndef f():\n    pass\n```") == "def f():\n    pass"
    assert hyde.clean_code("<think>hmm</think>\nSure:\n```ts\nlet x = 1\n```\nDone.") == "let x = 1"
    assert hyde.clean_code("def g(): return 2") == "def g(): return 2"
    assert hyde.clean_code("```\nunterminated") == "unterminated"
    assert len(hyde.clean_code("x" * 10_000)) == hyde.MAX_CODE_CHARS


@pytest.fixture
def chat() -> Iterator[ModelServer]:
    with ModelServer() as srv:
        yield srv


def _open(
    indexed: tuple[Path, Path], chat: dict[str, object], db: Path | None = None
) -> scrydb.Index:
    repo, shared_db = indexed
    return scrydb.open(repo, db=db or shared_db, config=Config.from_dict({"chat": chat}))


@pytest.fixture
def own_db(indexed_sample: tuple[Path, Path], tmp_path: Path) -> Path:
    """A private copy of the indexed sample (its query cache starts empty)."""
    import shutil

    _repo, db = indexed_sample
    out = tmp_path / "copy.db"
    with scrydb.open(indexed_sample[0], db=db) as ix:
        ix.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(db, out)
    with scrydb.open(indexed_sample[0], db=out) as ix:
        ix.store.conn.execute("DELETE FROM query_cache")
    return out


@pytest.mark.slow
def test_on_asks_the_chat_model_and_caches_the_vector(
    indexed_sample: tuple[Path, Path], chat: ModelServer, own_db: Path
) -> None:
    cfg = {"url": chat.url, "model": "coder", "hyde": "on"}
    with _open(indexed_sample, cfg, own_db) as ix:
        res = ix.search(QUESTION, k=5)
        assert res and not res.notes
        (req,) = chat.requests("chat")
        assert req.body["model"] == "coder" and req.body["temperature"] == 0
        user = req.body["messages"][-1]["content"]
        assert "Language: python" in user and QUESTION in user
        ix.search(QUESTION, k=5)  # process cache
        ix.search("retry backoff", k=5)  # "on": every shape
    assert len(chat.requests("chat")) == 2
    with _open(indexed_sample, cfg, own_db) as ix:  # a new process-level cache: the index's
        ix.search(QUESTION, k=5)
    assert len(chat.requests("chat")) == 2


@pytest.mark.slow
def test_auto_expands_questions_only(
    indexed_sample: tuple[Path, Path], chat: ModelServer, own_db: Path
) -> None:
    with _open(indexed_sample, {"url": chat.url, "hyde": "auto"}, own_db) as ix:
        for q in ("UserRepository", "retry backoff", "compute_backoff"):
            ix.search(q)
        assert chat.requests("chat") == []
        ix.search(QUESTION)
        ix.search("where does the command line program start")
    assert len(chat.requests("chat")) == 2


@pytest.mark.slow
def test_off_never_calls(indexed_sample: tuple[Path, Path], chat: ModelServer) -> None:
    with _open(indexed_sample, {"url": chat.url, "hyde": "off"}) as ix:
        ix.search(QUESTION)
    assert chat.requests("chat") == []


@pytest.mark.slow
def test_vector_is_the_hypothetical_code_mixed_with_the_query(
    indexed_sample: tuple[Path, Path], chat: ModelServer, own_db: Path
) -> None:
    vecs = {}
    for mode in ("mix", "code"):
        cfg = {"url": chat.url, "hyde": "on", "hyde_embed": mode}
        with _open(indexed_sample, cfg, own_db) as ix:
            res = Results()
            res.shape = "question"
            vecs[mode] = ix.engine.query_vector(QUESTION, res)
            plain = ix.engine.query_vector(QUESTION)
            emb = ix.embedder()
    code = hyde.clean_code(_last_answer(chat))
    code_vec = emb.embed_documents([code])[0]
    np.testing.assert_allclose(vecs["code"], code_vec, atol=1e-5)
    mixed = plain + code_vec
    np.testing.assert_allclose(vecs["mix"], mixed / np.linalg.norm(mixed), atol=1e-5)
    assert float(vecs["mix"] @ plain) < 0.999  # really not the plain vector


def _last_answer(chat: ModelServer) -> str:
    from servers import imagine_code

    user = chat.requests("chat")[-1].body["messages"][-1]["content"]
    return imagine_code(user.split("Question: ", 1)[1], "python")


@pytest.mark.slow
def test_plain_cached_vector_is_not_reused_for_hyde(
    indexed_sample: tuple[Path, Path], chat: ModelServer, own_db: Path
) -> None:
    with _open(indexed_sample, {"url": chat.url, "hyde": "off"}, own_db) as ix:
        plain = [h.location for h in ix.search(QUESTION)]
    with _open(indexed_sample, {"url": chat.url, "hyde": "on"}, own_db) as ix:
        ix.search(QUESTION)
    assert len(chat.requests("chat")) == 1  # not served from the plain cache entry
    with _open(indexed_sample, {"url": chat.url, "hyde": "off"}, own_db) as ix:
        assert [h.location for h in ix.search(QUESTION)] == plain  # nor the other way round


@pytest.mark.slow
@pytest.mark.parametrize(
    ("behaviour", "chat_cfg", "note"),
    [
        ({"fail_first": 99, "fail_status": 500}, {}, "HTTP 500"),
        ({"delay": 3}, {"timeout": 0.5}, "no answer within 0.5 s"),
        ({"chat": "empty"}, {}, "empty message"),
        ({"garbage": True}, {}, "choices"),
    ],
)
def test_failing_chat_falls_back_to_the_plain_query(
    indexed_sample: tuple[Path, Path],
    own_db: Path,
    behaviour: dict[str, object],
    chat_cfg: dict[str, object],
    note: str,
) -> None:
    with _open(indexed_sample, {}, own_db) as ix:
        plain = [h.location for h in ix.search(QUESTION)]
    with ModelServer(**behaviour) as srv:  # type: ignore[arg-type]
        with _open(indexed_sample, {"url": srv.url, "hyde": "on", **chat_cfg}, own_db) as ix:
            res = ix.search(QUESTION)
            assert [h.location for h in res] == plain
            assert any(n.startswith("HyDE skipped") and note in n for n in res.notes), res.notes
            ix.search(QUESTION)  # a failure is not cached: the chat model is asked again
        assert len(srv.requests("chat")) == 2
