"""The Python API: open, sync reports, read (and its refusals), related, locate, status."""

from __future__ import annotations

from pathlib import Path

import pytest

import scrydb
from scrydb.errors import ScryError


def test_open_validates_root(tmp_path: Path) -> None:
    with pytest.raises(ScryError, match="no such directory"):
        scrydb.open(tmp_path / "missing")
    f = tmp_path / "f.txt"
    f.write_text("x")
    with pytest.raises(ScryError, match="not a directory"):
        scrydb.open(f)


def test_lexical_sync_then_incremental(sample_repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    with scrydb.open(sample_repo, db=db) as ix:
        rep = ix.sync(embed=False)
        assert rep.files_added == rep.files_seen >= 10 and rep.pending > 0
        assert rep.texts_embedded == 0
        res = ix.search("LRUCache", mode="lexical")
        assert res[0].path == "svc/cache.go"
        again = ix.sync(embed=False)
        assert again.files_unchanged == again.files_seen and not again.changed
        (sample_repo / "app" / "config.py").write_text("DEFAULT_TIMEOUT = 99\n")
        (sample_repo / "svc" / "main.go").unlink()
        rep3 = ix.sync(embed=False)
        assert rep3.files_changed == 1 and rep3.files_deleted == 1
        assert ix.store.scalar("SELECT count(*) FROM files WHERE path = 'svc/main.go'") == 0
        assert ix.locate("DEFAULT_TIMEOUT = 99")[0].path == "app/config.py"


def test_touch_without_change_does_not_rechunk(sample_repo: Path, tmp_path: Path) -> None:
    with scrydb.open(sample_repo, db=tmp_path / "t.db") as ix:
        ix.sync(embed=False)
        before = ix.store.rows("SELECT id FROM chunks ORDER BY id")
        p = sample_repo / "app" / "retry.py"
        p.write_text(p.read_text())  # same bytes, new mtime
        rep = ix.sync(embed=False)
        assert rep.files_changed == 0
        assert ix.store.rows("SELECT id FROM chunks ORDER BY id") == before


def test_invalid_utf8_is_indexed_in_a_fallback_coding(tmp_path: Path) -> None:
    # Bytes that are not UTF-8 are read as cp1252/Latin-1 (sync/read.py; issue 42 row 15),
    # not with replacement characters.
    root = tmp_path / "r"
    root.mkdir()
    (root / "latin.py").write_bytes(b"def caf\xe9():\n    return 'cr\xe8me br\xfbl\xe9e'\n")
    with scrydb.open(root, db=tmp_path / "u.db") as ix:
        rep = ix.sync(embed=False)
        assert rep.files_added == 1
        text = ix.read("latin.py").text
        assert "def café():" in text and "crème brûlée" in text and "\ufffd" not in text


def test_read_serves_only_indexed_files(sample_repo: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("SECRET = 1\n")
    with scrydb.open(sample_repo, db=tmp_path / "r.db") as ix:
        ix.sync(embed=False)
        r = ix.read("app/config.py", 6, 8)
        assert r.text.split("\n") == ["DEFAULT_TIMEOUT = 30", "DEFAULT_PORT = 8080", ""]
        assert r.start_line == 6 and r.end_line == 8
        whole = ix.read("./app/config.py")
        assert whole.start_line == 1 and "def load_config" in whole.text
        bad = [
            "../outside.py",
            "/etc/passwd",
            "app/../../outside.py",
            "app/%2e%2e/x",
            "app\\config.py",
            "app/config.py\x00",
            "",
            "~/x",
        ]
        for p in bad:
            with pytest.raises(ScryError):
                ix.read(p)
        with pytest.raises(ScryError, match="not an indexed file"):
            ix.read("node_modules/x.js")
        with pytest.raises(ScryError, match="bad line range"):
            ix.read("app/config.py", 9, 3)
        capped = ix.read("app/users.py", 1, 10_000, max_lines=5)
        assert capped.truncated and capped.end_line == 5


def test_locate_is_literal(sample_repo: Path, tmp_path: Path) -> None:
    with scrydb.open(sample_repo, db=tmp_path / "l.db") as ix:
        ix.sync(embed=False)
        assert ix.locate("2 ** attempt")[0].path == "app/retry.py"
        assert ix.locate(".*") == []  # not a regex
        assert ix.locate("%") == []  # not a LIKE pattern
        assert len(ix.locate("userrepository", ignore_case=True)) >= 1
        assert ix.locate("userrepository") == []
        assert all(m.path.endswith(".go") for m in ix.locate("func", lang="go"))
        with pytest.raises(ScryError):
            ix.locate("")


@pytest.mark.slow
def test_related_lists_other_files_first(sample_index: scrydb.Index) -> None:
    # retry.py has three chunks; k large enough to list every neighbour of one of them
    res = sample_index.related("app/retry.py", 20, k=100)
    assert len(res) >= 3
    assert all(not (h.path == "app/retry.py" and h.start_line <= 20 <= h.end_line) for h in res)
    same = [i for i, h in enumerate(res) if h.path == "app/retry.py"]
    other = [i for i, h in enumerate(res) if h.path != "app/retry.py"]
    assert other and same, [h.location for h in res]  # the sample has both kinds
    assert max(other) < min(same), [h.location for h in res]


@pytest.mark.slow
def test_status_counts(sample_index: scrydb.Index) -> None:
    st = sample_index.status()
    assert st.files >= 10 and st.chunks >= st.files and st.vectors > 0 and st.pending == 0
    assert st.fingerprint["embedder"] == st.fingerprint["current_embedder"]
    assert st.stale == {"added": 0, "changed": 0, "deleted": 0}
    assert st.langs["python"] >= 5
