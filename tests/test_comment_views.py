"""Comment views: a chunk's inner comments, embedded as one more vector beside its body
(chunk/header.py ``inner_comments``, chunk/windows.py ``view_texts``), stored and scored
like a window, reused by text, switched by ``[index] comment_vectors``."""

from __future__ import annotations

from pathlib import Path

from synth_repo import FakeEmbedder, WordEmbedder

import scrydb
from scrydb.chunk.header import COMMENT_CHARS, inner_comments
from scrydb.chunk.windows import COMMENT_SEQ, view_texts, window_texts
from scrydb.config import Config

PY = '''def settle(batch):
    """Settle one batch of transfers."""
    # group the transfers by their currency first
    groups = {}
    for t in batch:  # noqa: B007
        groups.setdefault(t.currency, []).append(t)
    # type: ignore
    # groups = dict(sorted(groups.items()))
    # then net each group so only one payment per pair leaves
    return [net(g) for g in groups.values()]
'''

C = """/** Parse one row of a table. */
static int parse_row(const char *s, int n) {
    /* Copyright (c) 2014 Somebody. All rights reserved. */
    int cells = 0;
    /* read the colons of the delimiter row,
       one cell at a time */
    for (int i = 0; i < n; i++) {
        // a pipe closes the cell
        if (s[i] == '|') cells++;
    }
    // ok
    return cells;
}
"""


def test_inner_comments_keep_the_authors_sentences_in_order() -> None:
    assert inner_comments(PY) == (
        "group the transfers by their currency first; "
        "then net each group so only one payment per pair leaves"
    )
    # the leading doc comment (the header has it), licences and one-word remarks are left
    # out; a comment block gives its first sentence
    assert inner_comments(C) == (
        "read the colons of the delimiter row, one cell at a time; a pipe closes the cell"
    )
    assert inner_comments("def add(a, b):\n    return a + b\n") == ""


def test_inner_comments_stop_at_whole_sentences_within_the_cap() -> None:
    body = "".join(
        f"    # step {i} moves the cursor forward by one cell\n    x += {i}\n" for i in range(40)
    )
    text = inner_comments("def walk(x):\n" + body)
    assert 0 < len(text) <= COMMENT_CHARS
    assert text.startswith("step 0 moves") and text.endswith("by one cell")
    assert text.count(";") == len(text.split("; ")) - 1


def test_views_are_windows_then_the_comments() -> None:
    views = view_texts(PY)
    assert views == {COMMENT_SEQ: inner_comments(PY)}
    assert view_texts(PY, comments=False) == {}
    long = (
        "def f(v):\n"
        + "".join(f"    v = g{i}(v)  # step\n" for i in range(200))
        + "    # done with all the steps here\n"
    )
    views = view_texts(long)
    assert sorted(views) == [*range(len(window_texts(long))), COMMENT_SEQ]


def _repo(root: Path) -> Path:
    (root / "pay").mkdir(parents=True)
    # many distinct words (the fake model embeds a bag of words): the body's vector holds
    # the comment's words among sixty others
    words = ["".join(chr(97 + (i * 7 + j * 3) % 26) for j in range(6)) for i in range(30)]
    filler = "".join(f"    total = {w}_step(total, {w}_limit)\n" for w in words)
    (root / "pay" / "ledger.py").write_text(
        "def reconcile(total):\n"
        f"{filler}"
        "    # rotate the zebra ledger before the nightly close\n"
        "    return total\n"
    )
    (root / "pay" / "tally.py").write_text("def tally(items):\n    return sum(items)\n")
    return root


def test_a_chunk_is_found_by_its_comment_view(tmp_path: Path) -> None:
    """The dense leg scores a chunk by its comment view like a window: words that only a
    comment holds, drowned in the body's vector, find the chunk through it."""
    root = _repo(tmp_path / "r")
    db = tmp_path / "i.db"
    with scrydb.open(root, db=db, embedder=WordEmbedder()) as ix:
        rep = ix.sync()
        assert rep.windows_embedded == 1  # the one comment view; no chunk is long
        rows = ix.store.rows("SELECT seq, emb_id FROM chunk_windows")
        assert len(rows) == 1 and rows[0][0] == COMMENT_SEQ and rows[0][1] is not None
        st = ix.status(check_stale=False, check_git=False)
        assert st.comment_vectors == 1 and st.window_vectors == 0
        res = ix.search("rotate zebra ledger nightly close", mode="dense", k=2, explain=True)
        assert res[0].symbol == "reconcile" and res[0].explain
        assert res[0].explain["cosine_from_window"] == COMMENT_SEQ
        with_view = res[0].explain["cosine"]
        assert "rotate the zebra ledger" in res[0].snippet  # the snippet holds the comment
    off = Config()
    off.index.comment_vectors = False
    with scrydb.open(root, db=db, config=off, embedder=WordEmbedder()) as ix:
        rep = ix.sync()
        assert rep.windows_embedded == rep.texts_embedded == 0
        assert ix.store.scalar("SELECT count(*) FROM chunk_windows") == 0
        st = ix.status(check_stale=False, check_git=False)
        assert st.comment_vectors == 0 and st.orphan_vectors == 1  # kept for reuse
        res = ix.search("rotate zebra ledger nightly close", mode="dense", k=2, explain=True)
        top = next(h for h in res if h.symbol == "reconcile")
        assert top.explain and top.explain["cosine"] < with_view - 0.2
        assert "cosine_from_window" not in top.explain
    emb = FakeEmbedder("words:1", dim=256)  # same id: nothing may be embedded again
    with scrydb.open(root, db=db, embedder=emb) as ix:
        rep = ix.sync()
        assert rep.windows_embedded == 0 and emb.texts == []
        st = ix.status(check_stale=False, check_git=False)
        assert st.comment_vectors == 1 and st.orphan_vectors == 0


def test_an_edited_comment_reembeds_its_view_only(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    with scrydb.open(root, db=tmp_path / "i.db", embedder=FakeEmbedder()) as ix:
        ix.sync()
        before = ix.store.scalar("SELECT emb_id FROM chunk_windows")
        p = root / "pay" / "ledger.py"
        p.write_text(p.read_text().replace("nightly close", "weekly close"))
        rep = ix.sync()
        # the body changed with it (the comment is part of the chunk), the view is new
        assert rep.texts_embedded == 1 and rep.windows_embedded == 1
        assert ix.store.scalar("SELECT emb_id FROM chunk_windows") != before
        t = root / "pay" / "tally.py"
        t.write_text(t.read_text().replace("return sum(items)", "return sum(items) + 0"))
        rep = ix.sync()
        assert rep.texts_embedded == 1 and rep.windows_embedded == 0  # another chunk
