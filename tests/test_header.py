"""Header vectors: the short natural-language text embedded beside each chunk's body, and
the dense leg that scores a chunk by both."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_repo import FakeEmbedder, write_synth

import scrydb
from scrydb.chunk import chunk_file
from scrydb.chunk.header import header_parts, header_text, path_words
from scrydb.config import Config
from scrydb.langs import detect


def _header_of(path: str, text: str, symbol: str) -> str | None:
    """The header of the chunk (parsed by tree-sitter) whose label names ``symbol``."""
    chunks = chunk_file(path, text, detect(path))
    for ch in chunks:
        if ch.symbol and symbol in ch.symbol:
            return header_text(path, ch.symbol, ch.kind, ch.content)
    raise AssertionError(f"no chunk for {symbol}: {[c.symbol for c in chunks]}")


PY = '''
import time


def backoff_delay(attempt: int, base: float = 0.5) -> float:
    """Compute the wait between two attempts. Doubles each time.

    Longer explanation that is not part of the header.
    """
    return base * 2 ** attempt
'''

GO = """package retry

// Backoff returns how long to sleep before the next try.
// It never exceeds the configured cap.
func Backoff(attempt int) time.Duration {
	return time.Duration(attempt) * time.Second
}
"""

C = """#include <stdio.h>

/**
 * @brief Parse one block of input into the document tree.
 * @param parser the parser
 */
static int parse_block(cmark_parser *parser, const char *input) {
  return 0;
}
"""

JS = """/* istanbul ignore next */
/**
 * Create a TLS socket and start the handshake.
 *
 * @param {Object} options Connection options
 * @private
 */
function tlsConnect(options) {
  return tls.connect(options);
}
"""


def test_python_header_has_name_docstring_sentence_and_path() -> None:
    head = _header_of("src/net/retry_policy.py", PY, "backoff_delay")
    assert head == ("backoff delay\nCompute the wait between two attempts.\nsrc net retry policy")


def test_go_header_takes_the_leading_comment() -> None:
    head = _header_of("pkg/retry/backoff.go", GO, "Backoff")
    assert head is not None
    lines = head.splitlines()
    assert lines[0] == "backoff"
    assert lines[1] == "Backoff returns how long to sleep before the next try."


def test_c_header_unwraps_brief_and_drops_tags() -> None:
    head = _header_of("src/blocks.c", C, "parse_block")
    assert head is not None
    assert "Parse one block of input into the document tree." in head.splitlines()
    assert "@param" not in head and "@brief" not in head


def test_js_header_skips_tool_pragmas_and_jsdoc_tags() -> None:
    head = _header_of("lib/websocket.js", JS, "tlsConnect")
    assert head is not None
    assert head.splitlines()[1] == "Create a TLS socket and start the handshake."
    assert "istanbul" not in head and "@param" not in head


def test_markdown_section_header_is_heading_and_first_sentence() -> None:
    text = "# Retries\n\nFailed calls are retried with a growing wait. More text here.\n"
    chunks = chunk_file("docs/guide.md", text, detect("docs/guide.md"))
    ch = chunks[0]
    head = header_text("docs/guide.md", ch.symbol, ch.kind, ch.content)
    assert head is not None
    assert "Failed calls are retried with a growing wait." in head.splitlines()
    assert "# Retries" not in head


def test_a_window_without_name_or_comment_has_no_header() -> None:
    assert header_text("data/blob.txt", None, "block", "x = 1\ny = 2\n") is None
    parts = header_parts("a/b.py", "f", "function", "def f():\n    return 1\n")
    assert parts["signature"] == "def f():" and parts["doc"] == ""


def test_path_words_split_directories_and_identifiers() -> None:
    assert path_words("src/http_client/RetryPolicy.ts") == "src http client retry policy"
    assert path_words("Makefile") == "makefile"


@pytest.mark.slow
def test_header_vectors_are_stored_and_reused(sample_repo: Path, tmp_path: Path) -> None:
    """Every chunk with a header gets a second vector; an unchanged chunk's header is not
    embedded again; the dense leg finds a function by a docstring-shaped question."""
    db = tmp_path / "i.db"
    with scrydb.open(sample_repo, db=db) as ix:
        rep = ix.sync()
        s = ix.store
        with_head = s.scalar("SELECT count(*) FROM chunks WHERE head_hash != ''")
        assert with_head and with_head > 0
        assert s.scalar("SELECT count(*) FROM chunks WHERE head_hash IS NULL") == 0
        assert (
            s.scalar("SELECT count(*) FROM chunks WHERE head_hash != '' AND head_emb_id IS NULL")
            == 0
        )
        bodies = s.scalar("SELECT count(DISTINCT text_hash) FROM chunks")
        heads = s.scalar("SELECT count(DISTINCT head_hash) FROM chunks WHERE head_hash != ''")
        assert rep.texts_embedded == bodies and rep.headers_embedded == heads
        st = ix.status()
        assert st.vectors == bodies and st.header_vectors == heads
        again = ix.sync()
        assert again.texts_embedded == again.headers_embedded == 0
        res = ix.search("how is the wait between attempts computed", mode="dense", k=5)
        assert res and res[0].path == "app/retry.py"


def test_header_vectors_setting_adds_and_drops_only_headers(tmp_path: Path) -> None:
    """``[index] header_vectors``: off embeds bodies only; turned on, only the headers are
    embedded (the bodies keep their vectors); off again, nothing is embedded and the dense
    leg stops using them."""
    root = write_synth(tmp_path / "r", 6)
    db = tmp_path / "i.db"
    off = Config()
    off.index.header_vectors = False
    with scrydb.open(root, db=db, config=off, embedder=FakeEmbedder()) as ix:
        rep = ix.sync()
        s = ix.store
        bodies = s.scalar("SELECT count(DISTINCT text_hash) FROM chunks")
        assert rep.texts_embedded == bodies
        assert s.scalar("SELECT count(*) FROM chunks WHERE head_hash != ''") == 0
    with scrydb.open(root, db=db, embedder=FakeEmbedder()) as ix:
        rep = ix.sync()
        s = ix.store
        heads = s.scalar("SELECT count(DISTINCT head_hash) FROM chunks WHERE head_hash != ''")
        assert heads and rep.headers_embedded == heads and rep.texts_embedded == 0
        assert s.scalar("SELECT count(*) FROM chunks WHERE head_emb_id IS NULL") == 0
    with scrydb.open(root, db=db, config=off, embedder=FakeEmbedder()) as ix:
        rep = ix.sync()
        assert rep.texts_embedded == rep.headers_embedded == 0
        assert ix.store.scalar("SELECT count(*) FROM chunks WHERE head_emb_id IS NOT NULL") == 0
        assert ix.status().vectors == bodies


def test_related_compares_bodies_with_bodies(tmp_path: Path) -> None:
    """``related`` finds code like a chunk's code: header vectors never take its places."""
    root = write_synth(tmp_path / "r", 6)
    with scrydb.open(root, db=tmp_path / "i.db", embedder=FakeEmbedder()) as ix:
        ix.sync()
        s = ix.store
        vectors = ix.engine.vectors
        vectors.refresh(s)
        heads = {r[0] for r in s.rows("SELECT head_emb_id FROM chunks WHERE head_emb_id > 0")}
        bodies = {r[0] for r in s.rows("SELECT emb_id FROM chunks WHERE emb_id > 0")}
        assert heads and vectors.bodies is not None
        assert set(vectors.ids[vectors.bodies].tolist()) == bodies
        path = s.scalar("SELECT path FROM files ORDER BY path LIMIT 1")
        res = ix.related(path, 1, k=5)
        assert len(res) == 5 and all(h.path != path for h in res)
