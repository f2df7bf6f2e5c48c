"""Window vectors: extra vectors over the parts of a long chunk its body vector never sees,
reused by text like bodies, and a dense leg that scores a chunk by its best window."""

from __future__ import annotations

import itertools
from pathlib import Path

from synth_repo import FakeEmbedder, WordEmbedder

import scrydb
from scrydb.chunk.windows import MAX_WINDOWS, VIEW_CHARS, window_spans, window_texts
from scrydb.config import Config
from scrydb.results import Hit
from scrydb.search.hits import make_hit


def _long_function(name: str, lines: int, topic: str = "value") -> str:
    body = "".join(
        f"    {topic}_{i} = transform_{i % 7}({topic}_{i - 1}, limit={i})\n"
        for i in range(1, lines)
    )
    return f"def {name}({topic}_0):\n{body}    return {topic}_{lines - 1}\n"


def _repo(root: Path, lines: int = 120) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "long.py").write_text(_long_function("crunch", lines) + "\n")
    (root / "pkg" / "short.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    return root


def _long_chunk(ix: scrydb.Index) -> tuple[int, str, str, str | None]:
    return ix.store.rows(
        "SELECT c.id, c.content, f.path, c.symbol FROM chunks c JOIN files f ON f.id = c.file_id "
        "WHERE f.path = 'pkg/long.py' ORDER BY length(c.content) DESC LIMIT 1"
    )[0]


def test_short_chunks_have_no_windows() -> None:
    assert window_spans("x = 1\n" * 100) == []  # 600 characters: the body sees them all


def test_a_chunk_needing_fewer_than_three_windows_gets_none() -> None:
    assert window_spans(_long_function("f", 30)) == []  # ~1,500 characters


def test_a_long_chunk_gets_overlapping_windows_from_line_starts() -> None:
    content = _long_function("f", 200)
    spans = window_spans(content)
    assert len(spans) == MAX_WINDOWS
    for a, b in spans:
        assert content[a - 1] == "\n" and 0 < b - a <= VIEW_CHARS
    # The first starts inside what the body sees; each next one overlaps the one before.
    assert 0 < spans[0][0] < VIEW_CHARS
    for (a1, b1), (a2, _b2) in itertools.pairwise(spans):
        assert a1 < a2 < b1
    assert window_texts(content) == [content[a:b] for a, b in spans]


def test_windows_are_stored_linked_and_reused(tmp_path: Path) -> None:
    """A long chunk's windows get vectors; an unchanged chunk's windows are not embedded
    again; status counts them apart from bodies and headers."""
    root = _repo(tmp_path / "r")
    emb = FakeEmbedder()
    with scrydb.open(root, db=tmp_path / "i.db", embedder=emb) as ix:
        rep = ix.sync()
        s = ix.store
        cid, content, _path, _sym = _long_chunk(ix)
        rows = s.rows(
            "SELECT seq, emb_id FROM chunk_windows WHERE chunk_id = ? ORDER BY seq", (cid,)
        )
        assert [r[0] for r in rows] == list(range(len(window_spans(content))))
        assert rows and all(r[1] is not None for r in rows)
        assert s.scalar("SELECT count(*) FROM chunks WHERE windows IS NULL") == 0
        assert s.scalar("SELECT count(*) FROM chunk_windows") == len(rows)  # short: none
        assert rep.windows_embedded == len(rows)
        st = ix.status(check_stale=False, check_git=False)
        assert st.window_vectors == len(rows)
        assert st.vectors == s.scalar("SELECT count(DISTINCT text_hash) FROM chunks")
        again = ix.sync()
        assert again.windows_embedded == again.texts_embedded == 0
        # A full rebuild (`scry index --full`) starts from nothing, windows included:
        # their vectors come back from the shared vector cache, not the model.
        full = ix.sync(full=True)
        assert full.windows_embedded == full.texts_embedded == 0
        assert full.vectors_from_cache >= len(rows) + st.vectors
        assert s.scalar("SELECT count(*) FROM chunk_windows WHERE emb_id IS NULL") == 0
        assert s.scalar("SELECT count(*) FROM chunk_windows") == len(rows)


def test_an_edit_past_the_windows_reembeds_the_body_only(tmp_path: Path) -> None:
    """Windows are keyed by their own text: an edit at the end of a very long chunk (past
    its last window) changes the body's vector, not the windows'."""
    root = _repo(tmp_path / "r", lines=200)
    with scrydb.open(root, db=tmp_path / "i.db", embedder=FakeEmbedder()) as ix:
        ix.sync()
        before = {r[0] for r in ix.store.rows("SELECT emb_id FROM chunk_windows")}
        p = root / "pkg" / "long.py"
        p.write_text(p.read_text().replace("return value_199", "return value_199 + 1"))
        rep = ix.sync()
        assert rep.texts_embedded == 1 and rep.windows_embedded == 0
        assert {r[0] for r in ix.store.rows("SELECT emb_id FROM chunk_windows")} == before


def test_window_vectors_setting_drops_and_reuses_windows(tmp_path: Path) -> None:
    """``[index] window_vectors = false`` drops the windows (their vectors are kept for
    reuse, not used); on again, they come back without embedding anything."""
    root = _repo(tmp_path / "r")
    db = tmp_path / "i.db"
    off = Config()
    off.index.window_vectors = False
    with scrydb.open(root, db=db, embedder=FakeEmbedder()) as ix:
        n = ix.sync().windows_embedded
        assert n > 0
    with scrydb.open(root, db=db, config=off, embedder=FakeEmbedder()) as ix:
        rep = ix.sync()
        assert rep.windows_embedded == rep.texts_embedded == 0
        st = ix.status(check_stale=False, check_git=False)
        assert ix.store.scalar("SELECT count(*) FROM chunk_windows") == 0
        assert st.window_vectors == 0 and st.orphan_vectors == n
    emb = FakeEmbedder()
    with scrydb.open(root, db=db, embedder=emb) as ix:
        rep = ix.sync()
        assert rep.windows_embedded == 0 and emb.texts == []
        st = ix.status(check_stale=False, check_git=False)
        assert st.window_vectors == n and st.orphan_vectors == 0


def test_dense_leg_finds_a_chunk_by_its_window(tmp_path: Path) -> None:
    """Words that only a late stretch of a long chunk holds find that chunk through its
    window vector (scored by the window's cosine); without windows they do not."""
    root = _repo(tmp_path / "r")
    p = root / "pkg" / "long.py"
    p.write_text(
        p.read_text().replace(
            "value_100 = ", "zebra_quantum = lookup_zebra_quantum(); value_100 = "
        )
    )
    db = tmp_path / "i.db"
    # The fake model reads the whole cut text; the real one about VIEW_CHARS of it.
    on = Config()
    on.index.embed_max_chars = VIEW_CHARS
    with scrydb.open(root, db=db, config=on, embedder=WordEmbedder()) as ix:
        ix.sync()
        assert ix.store.scalar("SELECT count(*) FROM chunk_windows WHERE emb_id > 0") > 0
        res = ix.search("zebra quantum", mode="dense", k=3, explain=True)
        assert res[0].path == "pkg/long.py" and "zebra_quantum" in res[0].snippet
        assert res[0].explain and res[0].explain["cosine"] > 0.3
        assert res[0].explain["cosine_from_window"] is not None
        # Filters hold for windows too: in the directory it is found, outside it never.
        inside = ix.search("zebra quantum", path="pkg", mode="dense", k=3)
        assert inside[0].path == "pkg/long.py"
        outside = ix.search("zebra quantum", path="pkg/short.py", mode="dense", k=3)
        assert outside and all(h.path == "pkg/short.py" for h in outside)
    off = Config()
    off.index.embed_max_chars = VIEW_CHARS
    off.index.window_vectors = False
    with scrydb.open(root, db=db, config=off, embedder=WordEmbedder()) as ix:
        ix.sync()
        res = ix.search("zebra quantum", mode="dense", k=3, explain=True)
        assert all(h.explain and h.explain["cosine"] < 0.2 for h in res)


def test_model_change_reembeds_the_windows(tmp_path: Path) -> None:
    """A new model computes every window's vector too before it replaces the old ones."""
    root = _repo(tmp_path / "r")
    db = tmp_path / "i.db"
    with scrydb.open(root, db=db, embedder=FakeEmbedder("fake:a")) as ix:
        n = ix.sync().windows_embedded
    with scrydb.open(root, db=db, embedder=FakeEmbedder("fake:b")) as ix:
        rep = ix.sync(warn=lambda _m: None)
        assert rep.windows_embedded == n
        s = ix.store
        assert s.meta("embedder") == "fake:b"
        assert s.scalar("SELECT count(*) FROM chunk_windows WHERE emb_id IS NULL") == 0
        ids = {r[0] for r in s.rows("SELECT emb_id FROM chunk_windows")}
        assert len(ids) == n and all(
            s.scalar("SELECT 1 FROM vec_float WHERE rowid = ?", (i,)) for i in ids
        )


def test_snippet_centres_on_the_matched_window_when_no_line_matches() -> None:
    """A long chunk found by a window shows that window's lines, not its first ones, when
    no line holds a query word (a paraphrase); a line that does still wins."""
    content = _long_function("crunch", 200)
    a, b = window_spans(content)[2]
    first, last = content.count("\n", 0, a) + 1, content.count("\n", 0, b) + 1

    def hit(words: set[str], window: int | None) -> Hit:
        return make_hit(
            "pkg/long.py", 1, 201, "python", "function", "crunch", 1.0, content, 1,
            words=words, window=window,
        )  # fmt: skip

    assert first <= hit({"unrelated"}, 2).anchor_line <= last
    assert hit({"unrelated"}, None).anchor_line < first
    # A line holding a query word keeps the snippet where it would be without windows.
    assert hit({"transform"}, 2).anchor_line == hit({"transform"}, None).anchor_line < first
