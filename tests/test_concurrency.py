"""Many processes on one index: searchers (which also sync before they search), two
indexers started at once, a third mid-way, and ``scry watch``, while files are edited,
created, renamed and deleted. Nobody sees an error or ``database is locked``, and no
update is lost: once the edits stop, the watched index equals a clean index of the
final tree, vectors included. (tests/test_crash.py runs two indexers against torn
reads; this adds the watcher, searching writers and a moving tree.)

Embeddings come from a small OpenAI-compatible endpoint in this process that hashes
texts into vectors: real HTTP, real embedding phase, no model to load.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import slow_run
from synth_repo import assert_consistent, chunk_set, embedded_hashes, module_path, write_synth

import scrydb

pytestmark = pytest.mark.slow

FILES = 400 if slow_run() else 120
EDIT_SECONDS = 30.0 if slow_run() else 6.0
SEARCHERS = 4 if slow_run() else 3
DIM = 24
CHILD = Path(__file__).parent / "searcher_child.py"
#: Longest wait for the watcher to catch up after the last edit.
CATCH_UP_S = 90.0


def fake_vector(text: str) -> list[float]:
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32).tolist()


class _Embeddings(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        out = json.dumps(
            {"data": [{"index": i, "embedding": fake_vector(t)} for i, t in enumerate(texts)]}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()
        srv.server_close()


def _scry(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "scrydb.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


class Editor(threading.Thread):
    """Edits the tree for ``seconds``: appends unique markers, creates, renames and
    deletes files (the moves an editor, a formatter and git make)."""

    def __init__(self, root: Path, seconds: float, seed: int) -> None:
        super().__init__(daemon=True)
        self.root, self.seconds, self.rng = root, seconds, random.Random(seed)
        self.edits = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            end = time.monotonic() + self.seconds
            n = 0
            while time.monotonic() < end:
                n += 1
                files = sorted(self.root.rglob("*.py"))
                p = self.rng.choice(files)
                what = self.rng.random()
                if what < 0.6:
                    p.write_text(p.read_text() + f"\nMARKER_{n} = {n}\n")
                elif what < 0.75:
                    new = self.root / "new" / f"added_{n}.py"
                    new.parent.mkdir(exist_ok=True)
                    new.write_text(f"def added_{n}(tenant_ledger):\n    return MARKER_{n}\n")
                elif what < 0.85 and len(files) > 20:
                    p.unlink()
                elif what < 0.95:
                    dst = self.root / "moved" / f"{p.stem}_{n}.py"
                    dst.parent.mkdir(exist_ok=True)
                    p.rename(dst)
                else:  # an atomic save: write a temp file, rename it over the original
                    tmp = p.with_suffix(".py.tmp~")
                    tmp.write_text(p.read_text().replace("return", f"return {n} and", 1))
                    os.replace(tmp, p)
                self.edits += 1
                time.sleep(self.rng.uniform(0.0, 0.08))
        except BaseException as e:  # reported by the test
            self.error = e


def _clean_state(root: Path, db: Path, cfg: scrydb.Config) -> tuple[set, set]:
    with scrydb.open(root, db=db, config=cfg) as ix:
        ix.sync()
        return chunk_set(ix), embedded_hashes(ix)


def test_searchers_indexers_and_a_watcher_on_a_moving_tree(endpoint: str, tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "repo", FILES, varied=True)
    toml = f'[embed]\nprovider = "openai"\nurl = "{endpoint}"\nmodel = "hash"\n'
    (repo / ".scry.toml").write_text(toml)
    cfg = scrydb.Config.load(repo / ".scry.toml")
    db = tmp_path / "live.db"
    stop = tmp_path / "stop"
    watcher = _scry("watch", "--db", str(db), "--debounce", "0.2", cwd=repo)
    indexers = [_scry("index", "--db", str(db), "--yes", "-q", cwd=repo) for _ in range(2)]
    searchers = [
        subprocess.Popen(
            [sys.executable, str(CHILD), str(db), str(stop), str(i)],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(SEARCHERS)
    ]
    editor = Editor(repo, EDIT_SECONDS, seed=7)
    try:
        time.sleep(1.0)
        editor.start()
        time.sleep(EDIT_SECONDS / 2)
        indexers.append(_scry("index", "--db", str(db), "--yes", "-q", cwd=repo))
        editor.join(EDIT_SECONDS + 30)
        assert editor.error is None, editor.error
        outs = [p.communicate(timeout=300) for p in indexers]
        for p, (_out, err) in zip(indexers, outs, strict=True):
            assert p.returncode == 0, err
            assert "locked" not in err.lower() and "Traceback" not in err, err
        # No lost update: the watched index reaches a clean index of the final tree.
        want = _clean_state(repo, tmp_path / "clean.db", cfg)
        deadline = time.monotonic() + CATCH_UP_S
        got: tuple[set, set] = (set(), set())
        while time.monotonic() < deadline:
            with scrydb.open(repo, db=db, config=cfg, readonly=True) as ix:
                got = chunk_set(ix), embedded_hashes(ix)
            if got == want:
                break
            time.sleep(0.5)
        missing = sorted(want[0] - got[0])[:5]
        extra = sorted(got[0] - want[0])[:5]
        assert got == want, f"missing {missing}, stale {extra}"
    finally:
        stop.touch()
        results = []
        for p in searchers:
            out, err = p.communicate(timeout=120)
            results.append((p.returncode, out, err))
        watcher.send_signal(signal.SIGINT)
        _w_out, w_err = watcher.communicate(timeout=60)
        for p in (*indexers, watcher, *searchers):
            if p.poll() is None:
                p.kill()
    for rc, out, err in results:
        assert rc == 0 and "Traceback" not in err, err[-2000:]
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["ran"] > 5 and not summary["problems"], summary["problems"][:5]
    assert watcher.returncode == 0, w_err[-2000:]
    low = w_err.lower()
    assert "sync failed" not in low and "locked" not in low and "traceback" not in low, w_err
    assert "scry watch: stopped" in w_err
    with scrydb.open(repo, db=db, config=cfg) as ix:
        assert_consistent(ix)
        assert not ix.sync().changed  # nothing was left for a later sync
        found = {m.text.split(" =")[0] for m in ix.locate("MARKER_", k=100_000)}
        on_disk = {
            line.split(" =")[0]
            for p in repo.rglob("*.py")
            for line in p.read_text().splitlines()
            if line.startswith("MARKER_")
        }
        assert on_disk <= found
    print(
        f"\nconcurrency: {editor.edits} edits, {len(indexers)} indexers, 1 watcher, "
        f"{SEARCHERS} searchers ran {sum(json.loads(o.strip().splitlines()[-1])['ran'] for _r, o, _e in results)} commands"
    )


def test_two_first_indexes_at_once_agree(endpoint: str, tmp_path: Path) -> None:
    """Two ``scry index`` of a fresh tree at the same moment, with embeddings (both
    create the file, switch it to WAL and write its schema together): both succeed and
    the result is one clean index."""
    repo = write_synth(tmp_path / "repo", FILES // 2, varied=True)
    (repo / ".scry.toml").write_text(
        f'[embed]\nprovider = "openai"\nurl = "{endpoint}"\nmodel = "hash"\n'
    )
    cfg = scrydb.Config.load(repo / ".scry.toml")
    db = tmp_path / "i.db"
    procs = [_scry("index", "--db", str(db), "--yes", cwd=repo) for _ in range(2)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errs
    assert not any("locked" in e.lower() or "Traceback" in e for e in errs), errs
    want = _clean_state(repo, tmp_path / "clean.db", cfg)
    with scrydb.open(repo, db=db, config=cfg) as ix:
        assert (chunk_set(ix), embedded_hashes(ix)) == want
        assert_consistent(ix)
        assert ix.search(module_path(3).rsplit("/", 1)[-1][:-3])
