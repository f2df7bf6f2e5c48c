"""Reading a file for the index (``scrydb/sync/read.py``): text by a byte order mark, a
declared coding (PEP 263 cookie, XML declaration), UTF-8, or a fallback (cp1252, then
Latin-1) when the bytes are not UTF-8; ``scry locate`` finds the accented words and
``scry status`` says which files were read so; change detection stays on bytes; an
index written by the older decoder reads such files again once.

Real files, real SQLite, real ``scry`` subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_scry

import scrydb
from scrydb.store import Store
from scrydb.store.keys import text_hash
from scrydb.sync.read import DECODER_VERSION, declared_coding, decode_text, file_hash

COOKIE = "# -*- coding: latin-1 -*-\n"
CAFE = 'def order():\n    """Pay at the café for the crème brûlée."""\n    return "café"\n'


def _repo(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / ".scry.toml").write_text("")
    (root / "declared.py").write_bytes((COOKIE + CAFE).encode("latin-1"))
    (root / "plain.py").write_bytes(CAFE.replace("order", "serve").encode("latin-1"))
    (root / "utf8.py").write_text(CAFE.replace("order", "brew"), encoding="utf-8")
    return root


def test_declared_coding() -> None:
    assert declared_coding(b"# -*- coding: latin-1 -*-\nx = 1\n") == "iso8859-1"
    assert declared_coding(b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n") == (
        "cp1252"
    )
    assert declared_coding(b'<?xml version="1.0" encoding="ISO-8859-15"?>\n') == "iso8859-15"
    assert declared_coding(b"x = 1\ny = 2\n# coding: latin-1\n") is None  # line 3: too late
    assert declared_coding(b"# coding: no-such-codec\n") is None
    assert declared_coding(b"# coding: rot13\n") is None  # a codec, not a text coding


def test_decode_text() -> None:
    latin = "café crème".encode("latin-1")
    assert decode_text(b"x = 1\n") == ("x = 1\n", None)
    assert decode_text("café".encode()) == ("café", None)
    assert decode_text(b"\xef\xbb\xbfcaf\xc3\xa9") == ("café", None)
    assert decode_text("café".encode("utf-16")) == ("café", "utf-16")
    assert decode_text(COOKIE.encode() + latin) == (COOKIE + "café crème", "iso8859-1")
    assert decode_text(latin) == ("café crème", "cp1252")
    assert decode_text(b"\x93quoted\x94 \x81") == ("\x93quoted\x94 \x81", "iso8859-1")
    # Mostly UTF-8 with one bad byte: still UTF-8, the bad byte replaced.
    assert decode_text("naïve café ".encode() + b"\xff") == ("naïve café \ufffd", None)
    # A file declaring UTF-8 keeps it, bad bytes and all.
    assert decode_text(b"# coding: utf-8\n" + latin)[1] is None


def test_latin1_files_are_found_and_reported(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "cafe")
    db = tmp_path / "c.db"
    env = {"SCRY_CACHE_DIR": str(tmp_path / "cache")}
    r = run_scry("index", "--no-embed", "--db", str(db), cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    r = run_scry("locate", "café", "--no-sync", "--db", str(db), cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    found = {line.split(":", 1)[0] for line in r.stdout.splitlines()}
    assert found == {"declared.py", "plain.py", "utf8.py"}, r.stdout
    assert "\ufffd" not in r.stdout
    r = run_scry("status", "--json", "--fast", "--db", str(db), cwd=repo, env=env)
    st = json.loads(r.stdout)
    assert st["codings"] == {"declared.py": "iso8859-1", "plain.py": "cp1252"}
    r = run_scry("status", "--fast", "--db", str(db), cwd=repo, env=env)
    assert "2 files not UTF-8" in r.stdout and "plain.py (cp1252)" in r.stdout
    # Change detection stays on bytes: the stored hash is the bytes', and rewriting a
    # file in UTF-8 (other bytes, same text) re-reads it and it leaves the list.
    store = Store(db, readonly=True)
    try:
        digest = store.scalar("SELECT hash FROM files WHERE path = 'plain.py'")
    finally:
        store.close()
    assert digest == file_hash((repo / "plain.py").read_bytes())
    (repo / "plain.py").write_text(CAFE.replace("order", "serve") + "\n", encoding="utf-8")
    r = run_scry("index", "--no-embed", "--json", "--db", str(db), cwd=repo, env=env)
    assert json.loads(r.stdout)["files_changed"] == 1, r.stdout
    r = run_scry("status", "--json", "--fast", "--db", str(db), cwd=repo, env=env)
    assert json.loads(r.stdout)["codings"] == {"declared.py": "iso8859-1"}


def test_an_index_by_the_older_decoder_reads_such_files_again(tmp_path: Path) -> None:
    """Files indexed as U+FFFD by an older scrydb are read again once, whatever their
    stat; the others are not."""
    repo = _repo(tmp_path / "old")
    db = tmp_path / "o.db"
    with scrydb.open(repo, db=db) as ix:
        ix.sync(embed=False)
        rows = ix.store.rows(
            "SELECT c.id, c.content FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = 'plain.py'"
        )
        with ix.store.transaction():
            # What the older decoder left: replacement characters, no decoder mark.
            for cid, content in rows:
                old = content.replace("é", "\ufffd").replace("è", "\ufffd")
                ix.store.conn.execute(
                    "UPDATE chunks SET content = ?, text_hash = ? WHERE id = ?",
                    (old, text_hash(old), cid),
                )
            ix.store.conn.execute("DELETE FROM meta WHERE key = 'decoder'")
        assert not any(m.path == "plain.py" for m in ix.locate("café"))
        rep = ix.sync(embed=False)
        assert rep.files_changed == 1 and rep.chunks_written == len(rows)
        assert ix.store.meta("decoder") == DECODER_VERSION
        assert any(m.path == "plain.py" for m in ix.locate("café"))
        assert ix.sync(embed=False).files_changed == 0
