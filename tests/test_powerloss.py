"""Power loss at a thousand points: unsynced writes dropped or torn (``tests/powerloss.py``)
in a first index, an incremental sync, a model switch, two indexes filling one shared
vector cache at once, and a schema migration.

Each operation runs once through the recording VFS; then, for every chosen crash point
and both kinds of fault, the files a power cut there would leave are rebuilt in a temp
directory and checked: ``PRAGMA integrity_check`` is ok; each database file holds
exactly the content of a committed transaction, and not one before the last commit
that had returned (none acknowledged is lost, nothing half-written is visible); the
index's tables agree (``synth_repo.assert_consistent``); the shared cache holds only
right vectors. After a sample of the points (all of them with ``--slow``) the
operation runs again on the rebuilt files and must end with the same chunks, symbols,
references and vectors as the uninterrupted run.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

import apsw
import numpy as np
import powerloss
import pytest
from conftest import slow_run
from synth_repo import (
    FakeEmbedder,
    assert_consistent,
    chunk_set,
    make_schema_1,
    module_text,
    ref_set,
    symbol_set,
    vector_map,
    write_synth,
)

import scrydb
from scrydb import background
from scrydb.store import sqlitefile
from scrydb.store.db import Store
from scrydb.store.lookup import keep_query_vector
from scrydb.store.schema import SCHEMA_VERSION
from scrydb.store.vcache import text_key
from scrydb.sync import embedding as sync_embedding
from scrydb.sync import lexical as sync_lexical
from scrydb.sync import models as sync_models
from scrydb.sync import rates

pytestmark = pytest.mark.slow  # about two minutes on 2 cores (RELIABILITY.md)

#: Crash positions per operation (each tried with both faults), and every how many
#: points the operation is resumed (``--slow``: more points, a resume after each).
POSITIONS = 200 if slow_run() else 110
RESUME_EVERY = 1 if slow_run() else 12
#: Every how many resumes one loses power too (and is resumed again).
CUT_RESUMES = 4
FILES = 24
BATCH = 6  #: files per lexical commit, texts per embedding commit: many commits
DIM = 16
MODEL = "fake:power"
SEED = 46
#: Totals over the module, printed at the end (and quoted in RELIABILITY.md).
TOTALS: Counter[str] = Counter()


def _content(ix: scrydb.Index) -> tuple[Any, ...]:
    assert_consistent(ix)
    return chunk_set(ix), symbol_set(ix), ref_set(ix), vector_map(ix)


def _index(repo: Path, db: Path, model: str = MODEL) -> scrydb.Index:
    return scrydb.open(repo, db=db, embedder=FakeEmbedder(model, dim=DIM))


def _env(root: Path, cache: bool) -> mock._patch[Any]:
    env = {"SCRY_CACHE_DIR": str(root / "cache"), "SCRY_SHARED_CACHE": "1" if cache else "0"}
    return mock.patch.dict(os.environ, env)


@dataclass
class Scenario:
    """An operation on the index files under a root (run once recorded, then again on
    each rebuilt root to resume), and what it starts from."""

    name: str
    repos: list[Path]
    #: (root) -> {index file name: content}; must be repeatable on a copy of the root
    run: Callable[[Path], dict[str, tuple[Any, ...]]]
    #: file name -> bytes: the index files before the operation (nothing: a first index)
    start: dict[str, bytes] = field(default_factory=dict)
    cache: bool = False


def _sync_all(sc_repos: list[Path], cache: bool, model: str = MODEL) -> Callable[[Path], dict]:
    """Sync one index per repository (in threads when several: two writers at once)."""

    def run(root: Path) -> dict[str, tuple[Any, ...]]:
        out: dict[str, tuple[Any, ...]] = {}
        errors: list[BaseException] = []

        def one(i: int, repo: Path) -> None:
            try:
                with _index(repo, root / f"index{i}.db", model) as ix:
                    rep = ix.sync()
                    assert rep.pending == 0 and ix.store.meta("embedder") == model
                    out[f"index{i}.db"] = _content(ix)
            except BaseException as e:
                errors.append(e)

        with _env(root, cache):
            threads = [threading.Thread(target=one, args=(i, r)) for i, r in enumerate(sc_repos)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if errors:
            raise errors[0]
        return out

    return run


# -- the ledger: what each database file may hold after a cut at position N ----------------


class Ledger:
    """Per database file: its digest before the operation and at each point where a
    transaction became complete in its WAL, and which of those points each commit that
    returned (each acknowledgement) stands for."""

    def __init__(self, log: powerloss.Log, root: Path, work: Path) -> None:
        self.root = root
        bounds = log.boundaries()
        files = set(bounds) | {
            p for p, b in log.initial.items() if b is not None and p.endswith(".db")
        }
        self.files = sorted(files)
        replay = powerloss.Replay(log)
        state = work / "ledger"
        state.mkdir(parents=True)
        powerloss.materialize(replay.full(), root, state)
        self.initial = {f: self._digest(state, f) for f in self.files}
        self.states: dict[str, list[str]] = {f: [] for f in self.files}
        for pos, path in sorted((pos, f) for f in bounds for pos, _t in bounds[f]):
            replay.advance(pos)
            powerloss.materialize(replay.full(), root, state)
            self.states[path].append(self._digest(state, path))
        #: per file: (position of the acknowledgement, index of the state it stands for)
        self.acks: dict[str, list[tuple[int, int]]] = {f: [] for f in self.files}
        for path, pos, thread in log.commits:
            mine = [j for j, (b, t) in enumerate(bounds.get(path, [])) if b <= pos and t == thread]
            assert mine, f"an acknowledged commit of {path} with no commit frame before it"
            self.acks[path].append((pos, mine[-1]))

    def rel(self, path: str) -> Path:
        return Path(path).relative_to(self.root)

    def _digest(self, where: Path, path: str) -> str:
        d, integrity = powerloss.inspect(where / self.rel(path), vectors=not _is_cache(path))
        assert integrity == ["ok"], (path, integrity)
        return d

    def verdict(self, path: str, position: int, found: str) -> str:
        """``ok``, ``lost`` (the state before an acknowledged transaction) or ``torn`` (no
        committed state at all)."""
        states = self.states[path]
        acked = [j for pos, j in self.acks[path] if pos <= position]
        first = max(acked) if acked else 0
        allowed = set(states[first:])
        if not acked:
            allowed.add(self.initial[path])
        if found in allowed:
            return "ok"
        earlier = set(states[:first]) | {self.initial[path]}
        return "lost" if found in earlier else "torn"


def _is_cache(path: str) -> bool:
    """Whether a database file is one of the shared vector cache's (``<cache>/vectors/``)."""
    return Path(path).parent.name == "vectors"


# -- choosing and checking crash points ----------------------------------------------------


def _positions(log: powerloss.Log, rng: random.Random) -> list[int]:
    """Right after each acknowledged commit, just before and after a sample of syncs,
    and random writes: POSITIONS of them (all there are, when fewer)."""
    n = len(log.ops)
    acks = {pos for _p, pos, _t in log.commits}
    syncs = [i for i, op in enumerate(log.ops) if op.kind == "sync"]
    around = {i for s in syncs for i in (s, s + 1)}
    chosen = set(rng.sample(sorted(acks), min(len(acks), POSITIONS // 3)))
    rest = sorted(around - chosen)
    chosen |= set(rng.sample(rest, min(len(rest), POSITIONS // 3)))
    others = sorted(set(range(n + 1)) - chosen)
    chosen |= set(rng.sample(others, min(len(others), POSITIONS - len(chosen))))
    return sorted(chosen)


def _check_cut(ledger: Ledger, position: int, dest: Path, expect: dict) -> str:
    """Integrity, the ledger, consistent tables, right cache vectors; returns a verdict."""
    worst = "ok"
    for path in ledger.files:
        found, integrity = powerloss.inspect(dest / ledger.rel(path), vectors=not _is_cache(path))
        if integrity != ["ok"]:
            return f"integrity: {path} {integrity[:3]}"
        verdict = ledger.verdict(path, position, found)
        if verdict != "ok":
            worst = f"{verdict}: {ledger.rel(path)}"
        if _is_cache(path):
            _check_cache(dest / ledger.rel(path), expect)
    _check_indexes(dest)
    return worst


def _check_indexes(dest: Path) -> None:
    """The tables of every index file under ``dest`` agree (an old schema's aside)."""
    for db in sorted(dest.glob("index*.db")):
        if db.stat().st_size == 0:
            continue
        conn = apsw.Connection(str(db))
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.close()
        if version == SCHEMA_VERSION:
            store = Store(db, readonly=True)
            try:
                assert_consistent(SimpleNamespace(store=store))  # type: ignore[arg-type]
            finally:
                store.close()


def _cut_the_resume(
    sc: Scenario, dest: Path, rng: random.Random, ref: dict, expect: dict[bytes, bytes]
) -> None:
    """Power fails again during the resume: record it (it must end right), cut it at a
    random point (dropped or torn), check the files, and resume once more."""
    with powerloss.recording() as log:
        assert sc.run(dest) == ref, sc.name
    replay = powerloss.Replay(log)
    replay.advance(rng.randint(0, len(log.ops)))
    files, _pending, _lost = replay.cut(rng if rng.random() < 0.5 else None)
    again = dest.parent / "cut-again"
    powerloss.materialize(files, dest, again)
    for db in sorted(again.rglob("*.db")):
        _found, integrity = powerloss.inspect(db, vectors=not _is_cache(str(db)))
        assert integrity == ["ok"], (sc.name, db, integrity[:3])
        if _is_cache(str(db)):
            _check_cache(db, expect)
    _check_indexes(again)
    assert sc.run(again) == ref, sc.name


def _check_cache(path: Path, expect: dict[bytes, bytes]) -> None:
    """Every vector in the shared cache is the one the model gives its text."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    conn = apsw.Connection(str(path))
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").fetchall():
            return
        for key, vec in conn.execute("SELECT key, vector FROM vectors"):
            assert expect.get(bytes(key)) == bytes(vec), "a wrong vector in the shared cache"
    finally:
        conn.close()


def _cache_expect(texts: list[str]) -> dict[bytes, bytes]:
    fake = FakeEmbedder(MODEL, dim=DIM)
    vecs = fake.embed_documents(texts)
    return {
        text_key(t): np.asarray(v, dtype=np.float32).tobytes()
        for t, v in zip(texts, vecs, strict=True)
    }


def _power_cuts(sc: Scenario, tmp: Path) -> None:
    """Record the operation once, then cut power at POSITIONS points, twice each."""
    root = tmp / f"{sc.name}-root"
    root.mkdir()
    for name, data in sc.start.items():
        (root / name).write_bytes(data)
    texts: list[str] = []
    orig = FakeEmbedder.embed_documents

    def spy(self: FakeEmbedder, batch: list[str]) -> np.ndarray:
        texts.extend(batch)
        return orig(self, batch)

    t0 = time.perf_counter()
    with mock.patch.object(FakeEmbedder, "embed_documents", spy), powerloss.recording() as log:
        ref = sc.run(root)
    seconds = time.perf_counter() - t0
    ledger = Ledger(log, root, tmp / sc.name)
    expect = _cache_expect(texts) if sc.cache else {}
    rng = random.Random(f"{SEED}-{sc.name}")
    positions = _positions(log, rng)
    replay = powerloss.Replay(log)
    dest = tmp / sc.name / "cut"
    failures: list[str] = []
    stats: Counter[str] = Counter()
    for i, position in enumerate(positions):
        replay.advance(position)
        for fault in ("dropped", "torn", "garbled") if i % 2 else ("dropped", "torn"):
            seeded = random.Random(f"{SEED}-{sc.name}-{position}-{fault}")
            files, _pending, lost = replay.cut(
                None if fault == "dropped" else seeded, garble=fault == "garbled"
            )
            powerloss.materialize(files, root, dest)
            stats[fault] += 1
            stats[f"{fault} writes lost"] += lost
            verdict = _check_cut(ledger, position, dest, expect)
            if verdict != "ok":
                failures.append(f"{fault} at {position}/{len(log.ops)}: {verdict}")
                stats[verdict.split(":")[0]] += 1
                continue
            if (stats["dropped"] + stats["torn"] + stats["garbled"]) % RESUME_EVERY == 0:
                if stats["resumed"] % CUT_RESUMES == CUT_RESUMES - 1:
                    _cut_the_resume(sc, dest, rng, ref, expect)
                    stats["resumes cut"] += 1
                else:
                    assert sc.run(dest) == ref, (sc.name, fault, position)
                stats["resumed"] += 1
    for key, value in stats.items():
        TOTALS[key] += value
    TOTALS["points"] += len(positions)
    summary = (
        f"{sc.name}: {len(log.ops)} ops ({sum(op.kind == 'sync' for op in log.ops)} syncs), "
        f"{len(log.commits)} commits, recorded in {seconds:.1f}s; {len(positions)} positions, "
        f"{dict(stats)}"
    )
    print(summary)
    assert not failures, (summary, failures[:10])


# -- the operations ------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small transactions: a small repository with many commit boundaries."""
    monkeypatch.setattr(sync_lexical, "LEXICAL_BATCH_FILES", BATCH)
    monkeypatch.setattr(sync_embedding, "EMBED_COMMIT", BATCH)
    monkeypatch.setattr(sync_models, "EMBED_COMMIT", BATCH)


def _built(repo: Path, tmp: Path, model: str = MODEL) -> bytes:
    """An index of ``repo`` as a closed file (checkpointed: no WAL beside it)."""
    db = tmp / f"built-{repo.name}-{model}.db"
    with _env(tmp, cache=False), _index(repo, db, model) as ix:
        ix.sync()
    return db.read_bytes()


def _mutate(repo: Path) -> None:
    """Edits, deletions, renames and new files."""
    files = sorted(repo.rglob("*.py"))
    for p in files[0:5]:
        p.write_text(p.read_text().replace("    return ", "    audit_log()\n    return ", 1))
    for p in files[5:8]:
        p.unlink()
    for p in files[8:11]:
        dst = repo / "moved" / p.name
        dst.parent.mkdir(exist_ok=True)
        p.rename(dst)
    for i in range(5):
        p = repo / "fresh" / f"new_{i}.py"
        p.parent.mkdir(exist_ok=True)
        p.write_text(module_text(10_000 + i, 3, varied=True))


def test_power_loss_first_index(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "repo", FILES, varied=True)
    _power_cuts(Scenario("first", [repo], _sync_all([repo], cache=False)), tmp_path)


def test_power_loss_incremental_sync(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "repo", FILES, varied=True)
    start = {"index0.db": _built(repo, tmp_path)}
    _mutate(repo)
    _power_cuts(Scenario("incremental", [repo], _sync_all([repo], False), start), tmp_path)


def test_power_loss_model_switch(tmp_path: Path) -> None:
    """Vectors of the new model computed beside the old ones (vec_next), then swapped."""
    repo = write_synth(tmp_path / "repo", FILES, varied=True)
    start = {"index0.db": _built(repo, tmp_path, "fake:old")}
    _power_cuts(Scenario("model", [repo], _sync_all([repo], False), start), tmp_path)


def test_power_loss_shared_cache_two_writers(tmp_path: Path) -> None:
    """Two checkouts of one repository indexed at once, both filling one vector cache."""
    repos = [write_synth(tmp_path / f"checkout{i}", FILES, varied=True) for i in (0, 1)]
    _power_cuts(Scenario("cache", repos, _sync_all(repos, cache=True), cache=True), tmp_path)


def _schema_1(data: bytes, tmp: Path) -> bytes:
    """The same index as a schema-1 file (synth_repo.make_schema_1, as tests/test_sync.py's
    migration test makes it)."""
    db = tmp / "old.db"
    db.write_bytes(data)
    make_schema_1(db)
    return db.read_bytes()


def test_power_loss_schema_migration(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "repo", FILES, varied=True)
    start = {"index0.db": _schema_1(_built(repo, tmp_path), tmp_path)}
    _power_cuts(Scenario("migration", [repo], _sync_all([repo], False), start), tmp_path)


def test_normal_sync_would_lose_acknowledged_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the index commits with ``synchronous=FULL``: with NORMAL, WAL mode does not
    sync the WAL at commit, and a power cut right after a commit returned loses it (the
    file stays sound). Also shows the ledger sees a lost acknowledgement."""
    orig = sqlitefile.use_wal

    def normal(conn: apsw.Connection, path: Path) -> None:
        orig(conn, path)
        conn.execute("PRAGMA synchronous=NORMAL")

    monkeypatch.setattr(sqlitefile, "use_wal", normal)
    repo = write_synth(tmp_path / "repo", FILES, varied=True)
    root = tmp_path / "root"
    root.mkdir()
    with powerloss.recording() as log:
        _sync_all([repo], cache=False)(root)
    ledger = Ledger(log, root, tmp_path / "normal")
    replay = powerloss.Replay(log)
    dest = tmp_path / "cut"
    verdicts: Counter[str] = Counter()
    for position in sorted({pos for _p, pos, _t in log.commits}):
        replay.advance(position)
        powerloss.materialize(replay.cut(None)[0], root, dest)
        path = str(root / "index0.db")
        found, integrity = powerloss.inspect(dest / "index0.db")
        assert integrity == ["ok"]
        verdicts[ledger.verdict(path, position, found)] += 1
    print(f"synchronous=NORMAL, cut right after each commit: {dict(verdicts)}")
    assert verdicts["lost"] > 0 and verdicts["torn"] == 0


def test_query_cache_rows_are_not_synced(tmp_path: Path) -> None:
    """A search keeps its query vector in the index (``query_cache``) without an fsync
    (``sqlitefile.unsynced``: losing it to a power cut costs a query embedding); the
    index's own transactions stay synced, and FULL is back after it."""
    repo = write_synth(tmp_path / "repo", 4, varied=True)
    db = tmp_path / "index.db"
    db.write_bytes(_built(repo, tmp_path))
    with powerloss.recording() as log:
        store = Store(db)
        try:
            with store.transaction():  # starts the WAL (its header is always synced)
                store.set_meta("power", "on")
            before = len(log.ops)
            keep_query_vector(store, "q", np.ones(DIM, dtype=np.float32), 10, 1000)
            kept = log.ops[before:]
            with store.transaction():
                store.set_meta("power", "cut")
            assert store.scalar("PRAGMA synchronous") == 2
        finally:
            store.close()
    assert [op for op in kept if op.kind == "write"], "the row was written"
    assert not [op for op in kept if op.kind == "sync"], "and not synced"
    after = log.ops[before + len(kept) :]
    assert [op for op in after if op.kind == "sync"], "a transaction is"


@pytest.mark.parametrize("content", [b"", b'{"fake:power": [12.5, 1', b"\x00" * 4096])
def test_json_sidecars_after_a_power_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    """The two files scrydb writes beside SQLite's (no VFS sees them) are written to a
    temp name and renamed, unsynced: after a power cut the new name may hold nothing,
    a prefix or zeros. Each reads as absent and is replaced by the next write."""
    monkeypatch.setenv("SCRY_CACHE_DIR", str(tmp_path / "cache"))
    rates.rates_path().parent.mkdir(parents=True)
    rates.rates_path().write_bytes(content)
    assert rates.embed_rate(MODEL) == (rates.DEFAULT_EMBED_RATE, False)
    rates.record_rate(MODEL, 7.0)
    assert rates.embed_rate(MODEL)[1]  # measured: the damaged file was replaced
    db = tmp_path / "index.db"
    background.record_path(db).write_bytes(content)
    assert background.running(db) is None
    background.register(db, tmp_path)
    assert background.running(db) is not None
    background.unregister(db)
    assert background.running(db) is None


def test_totals() -> None:
    """The module's figures (run last): at least 1,000 cuts, none failed."""
    if TOTALS["points"] == 0:
        pytest.skip("run with the other tests of this module")
    print(dict(TOTALS))
    assert TOTALS["dropped"] + TOTALS["torn"] + TOTALS["garbled"] >= 1000
