"""The watcher: debounced syncs on real file events (watchdog), saves, atomic renames,
bursts, deleted and re-created directories, ignore rules, and ``scry watch`` itself."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from lock_tries import LockTries
from synth_repo import FakeEmbedder, function_text, module_path, write_synth

import scrydb
from scrydb.sync import SyncReport
from scrydb.watch import ChangeWatcher, Watcher
from scrydb.watch import events as watch_events

#: How long a test waits for a saved edit to become searchable. A generous bound, not a
#: latency bar (CONTRIBUTING: no wall-clock limits in tests): a debounce takes well under
#: a second, and each test prints what it measured.
EDIT_VISIBLE_S = 30.0


def wait_for(cond: Callable[[], bool], timeout: float) -> float | None:
    """Seconds until ``cond()`` held, or None if it never did within ``timeout``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return time.monotonic() - t0
        time.sleep(0.02)
    return None


class Running:
    """A started Watcher over a repo, with its reports, and a reader index."""

    def __init__(self, repo: Path, db: Path, embed: bool = False, **kw: object) -> None:
        self.reports: list[SyncReport] = []
        self.errors: list[BaseException] = []
        self.fake = FakeEmbedder()
        self.watcher = Watcher(
            lambda: scrydb.open(repo, db=db, embedder=self.fake),
            on_sync=self.reports.append,
            on_error=self.errors.append,
            embed=embed,
            **kw,  # type: ignore[arg-type]
        )
        self.watcher.start()
        assert self.watcher.wait_idle(30)
        self.reader = scrydb.open(repo, db=db, embedder=self.fake)

    def finds(self, text: str) -> bool:
        return bool(self.reader.locate(text))

    def close(self) -> None:
        self.watcher.stop()
        self.reader.close()
        assert not self.errors, self.errors


class Counted:
    """The names of the paths a ChangeWatcher counts as changes (a spy on its one rule,
    ``relevant``), so that a test can show that nothing else counted: file events arrive
    in order, so once a marker's event has counted, every earlier event was judged."""

    def __init__(self, cw: ChangeWatcher) -> None:
        self.names: list[str] = []
        judge = cw.relevant

        def relevant(path: str, is_dir: bool = False) -> bool:
            ok = judge(path, is_dir)
            if ok:
                self.names.append(os.path.basename(path))
            return ok

        cw.relevant = relevant  # type: ignore[method-assign]


def settle(r: Running, counted: Counted, name: str) -> int:
    """Write the marker ``<name>.py`` and wait until a sync made it searchable: only the
    marker may have counted since ``counted`` was last cleared (which it is now). The
    number of events the marker counted."""
    root = r.watcher.index.root  # type: ignore[union-attr]
    (root / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
    assert wait_for(lambda: r.finds(f"def {name}("), EDIT_VISIBLE_S) is not None
    assert set(counted.names) == {f"{name}.py"}, counted.names
    n = len(counted.names)
    counted.names.clear()
    return n


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    repo = write_synth(tmp_path / "w", 100)
    r = Running(repo, tmp_path / "w.db")
    yield r
    r.close()


def test_saved_edit_becomes_searchable(running: Running) -> None:
    repo = running.watcher.index.root  # type: ignore[union-attr]
    assert len(running.reports) == 1 and running.reports[0].files_added == 100
    p = repo / module_path(5)
    p.write_text(p.read_text() + "\n\ndef zebra_unicorn_saved():\n    return 1\n")
    took = wait_for(lambda: running.finds("zebra_unicorn_saved"), EDIT_VISIBLE_S)
    assert took is not None, f"edit not searchable within {EDIT_VISIBLE_S} s"
    print(f"edit searchable after {took:.2f}s")
    hits = running.reader.search("zebra_unicorn_saved", mode="lexical")
    assert hits[0].path == module_path(5)


def test_atomic_rename_save_is_seen(running: Running) -> None:
    repo = running.watcher.index.root  # type: ignore[union-attr]
    p = repo / module_path(7)
    tmp = p.with_name(f".{p.name}.tmp{os.getpid()}")
    tmp.write_text(p.read_text().replace("def handle_21(", "def renamed_by_editor_save("))
    os.replace(tmp, p)  # what vim, VS Code, JetBrains and most tools do
    took = wait_for(lambda: running.finds("renamed_by_editor_save"), EDIT_VISIBLE_S)
    assert took is not None
    assert running.watcher.wait_idle(10)
    assert not running.finds("def handle_21(")
    paths = {r[0] for r in running.reader.store.rows("SELECT path FROM files")}
    assert not any(".tmp" in q for q in paths)


def test_burst_of_a_thousand_changes_is_coalesced(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "b", 1000, funcs=1)
    r = Running(repo, tmp_path / "b.db")
    try:
        before = len(r.reports)
        t0 = time.monotonic()
        for i in range(1000):  # what a branch switch does to the working tree
            p = repo / module_path(i)
            p.write_text(p.read_text().replace("return total - 0", f"return total - {i + 1}"))
        written = time.monotonic() - t0
        assert r.watcher.wait_idle(60)
        syncs = len(r.reports) - before
        print(f"burst: {syncs} sync(s) for 1000 changes written in {written:.2f}s")
        # One sync after the burst (two if writing it took longer than MAX_DELAY_S).
        assert 1 <= syncs <= 1 + int(written // 5.0) + 1, (syncs, written)
        assert sum(rep.files_changed for rep in r.reports[before:]) == 1000
        assert r.finds("return total - 1000")
    finally:
        r.close()


def test_directory_deleted_and_recreated(running: Running) -> None:
    repo = running.watcher.index.root  # type: ignore[union-attr]
    d = repo / "core" / "sub0"
    gone = sorted(p.relative_to(repo).as_posix() for p in d.glob("*.py"))
    shutil.rmtree(d)
    took = wait_for(
        lambda: not running.reader.store.rows("SELECT 1 FROM files WHERE path LIKE 'core/sub0/%'"),
        EDIT_VISIBLE_S,
    )
    assert took is not None and gone
    d.mkdir()
    (d / "reborn.py").write_text("def phoenix_rises():\n    return 'again'\n")
    (d / "nested").mkdir()
    (d / "nested" / "deep.py").write_text("def deep_phoenix():\n    return 1\n")
    took = wait_for(
        lambda: running.finds("phoenix_rises") and running.finds("deep_phoenix"),
        EDIT_VISIBLE_S,
    )
    assert took is not None


def test_own_files_reads_and_ignored_paths_trigger_nothing(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "o", 20)
    (repo / "node_modules" / "x").mkdir(parents=True)
    (repo / "out").mkdir()  # ignored by the synth repo's .gitignore
    db = repo / "index.scry"  # the index inside the tree, as --db allows
    r = Running(repo, db)
    try:
        cw = r.watcher.changes
        assert cw is not None
        counted = Counted(cw)
        # The first sync's own reads and writes came before the marker: only it counted
        # (events judged before the spy was in place are in cw.events).
        n = settle(r, counted, "first_marker")
        assert cw.events == n
        events = cw.events
        for i in range(20):
            (repo / "node_modules" / "x" / f"f{i}.js").write_text("x")
            (repo / "out" / f"o{i}.py").write_text("x = 1\n")
            (repo / f"debug{i}.log").write_text("log")
        (repo / module_path(1)).read_text()  # reading is not a change
        # Neither they nor the first marker's sync (writing the index in the tree) counted.
        n = settle(r, counted, "second_marker")
        assert cw.events == events + n
        paths = {p for (p,) in r.reader.store.rows("SELECT path FROM files")}
        assert not any(p.startswith("index.scry") for p in paths)
        # An ignore-rule change counts: un-ignoring out/ indexes it.
        (repo / ".gitignore").write_text("*.log\n")
        assert wait_for(lambda: r.finds("x = 1"), EDIT_VISIBLE_S) is not None
    finally:
        r.close()


def test_watcher_embeds_after_the_lexical_pass(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "e", 10)
    r = Running(repo, tmp_path / "e.db", embed=True)
    try:
        # The lexical sync first (30 chunks wait), then the embedding sync.
        assert r.reports[0].pending == 30 and r.reports[0].texts_embedded == 0
        assert r.reports[1].pending == 0 and r.reports[1].texts_embedded == 30
        p = repo / module_path(3)
        p.write_text(p.read_text().replace("total = 9 + 0", "total = 9 + 5"))
        assert wait_for(lambda: r.finds("total = 9 + 5"), EDIT_VISIBLE_S) is not None
        assert r.watcher.wait_idle(10)
        assert r.reports[-1].texts_embedded == 1 and r.reports[-1].pending == 0
        hits = r.reader.search("handle_9")
        assert "dense" in hits.legs
    finally:
        r.close()


class SlowModel(FakeEmbedder):
    """A model that takes ``load_s`` to load (on its first call) and ``delay`` per text;
    ``loaded`` is set once it has loaded, so a test can tell what happened first."""

    def __init__(self, load_s: float, delay: float) -> None:
        super().__init__(delay=delay)
        self.load_s = load_s
        self._load = threading.Lock()
        self.loaded = threading.Event()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        with self._load:
            if not self.loaded.is_set():
                time.sleep(self.load_s)
                self.loaded.set()
        return super().embed_documents(texts)


def test_lexical_sync_never_waits_for_the_model(tmp_path: Path) -> None:
    """Issue 12, item 7: the model load and a long embedding run go on behind the
    lexical syncs, which land about a debounce after each change; every chunk still
    gets its vector in the end, and no text is embedded twice."""
    repo = write_synth(tmp_path / "m", 10)
    db = tmp_path / "m.db"
    # 150 texts: 20 s to load, then 15 s of embedding. The checks are about order (the
    # edit is searchable before the model has loaded, and while embeddings are pending),
    # with margins long enough for a loaded CI machine.
    model = SlowModel(load_s=20.0, delay=0.1)
    errors: list[BaseException] = []
    w = Watcher(
        lambda: scrydb.open(repo, db=db, embedder=model), on_error=errors.append, embed=True
    )
    reader = scrydb.open(repo, db=db, embedder=FakeEmbedder())

    def pending() -> int:
        return int(reader.store.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") or 0)

    w.start()
    try:
        assert wait_for(lambda: bool(reader.locate("def handle_29(")), 10) is not None
        # A change that needs long embedding (while the model is still loading) ...
        big = "\n\n".join(function_text(1000 + i) for i in range(120))
        (repo / "big.py").write_text(big)
        took = wait_for(lambda: bool(reader.locate("def handle_1119(")), EDIT_VISIBLE_S)
        assert took is not None and not model.loaded.is_set(), "lexical sync waited for the model"
        print(f"searchable while the model loads after {took:.2f}s")
        # ... and another one while its embeddings are being computed.
        assert wait_for(lambda: len(model.texts) > 1, 120) is not None, "embedding never began"
        p = repo / module_path(5)
        p.write_text(p.read_text() + "\n\ndef quokka_after_big():\n    return 1\n")
        took = wait_for(lambda: bool(reader.locate("quokka_after_big")), EDIT_VISIBLE_S)
        assert took is not None, "lexical sync waited for the embeddings"
        print(f"searchable while embedding after {took:.2f}s")
        assert pending() > 0  # the embeddings are still being computed behind it
        hits = reader.search("quokka_after_big", mode="lexical")
        assert hits[0].path == module_path(5)
        # In the end every chunk has its vector, and nothing was embedded twice.
        assert w.wait_idle(240)
        assert pending() == 0 and not errors, errors
        assert len(model.texts) == len(set(model.texts))
    finally:
        w.stop()
        reader.close()


class BrokenModel(FakeEmbedder):
    """A model that cannot load."""

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        raise scrydb.ScryError("cannot load embedding model from /nonexistent")


def test_a_model_that_cannot_load_leaves_lexical_syncs_going(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "x", 5)
    db = tmp_path / "x.db"
    warnings: list[str] = []
    errors: list[BaseException] = []
    w = Watcher(
        lambda: scrydb.open(repo, db=db, embedder=BrokenModel()),
        on_error=errors.append,
        warn=warnings.append,
    )
    reader = scrydb.open(repo, db=db, embedder=FakeEmbedder())

    def add(name: str) -> bool:
        (repo / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
        found = wait_for(lambda: bool(reader.locate(name)), 5) is not None
        return found and w.wait_idle(30)

    w.start()
    try:
        assert w.wait_idle(30) and w.model_state == "failed"
        # Each change tries the model again; one warning says it cannot load.
        assert add("added_without_model") and add("added_without_model_again")
        assert len(warnings) == 1 and "/nonexistent" in warnings[0], warnings
        assert not errors, errors
        assert reader.status(check_stale=False, check_git=False).pending == 17
    finally:
        w.stop()
        reader.close()


def test_watcher_moves_the_vectors_to_a_new_model(tmp_path: Path) -> None:
    """A model change leaves no chunk pending: the embedding sync still runs for it."""
    repo = write_synth(tmp_path / "n", 5)
    db = tmp_path / "n.db"
    with scrydb.open(repo, db=db, embedder=FakeEmbedder()) as ix:
        ix.sync()
    new = FakeEmbedder(id="fake:2")
    errors: list[BaseException] = []
    w = Watcher(lambda: scrydb.open(repo, db=db, embedder=new), on_error=errors.append)
    w.start()
    try:
        assert w.wait_idle(30) and not errors, errors
    finally:
        w.stop()
    with scrydb.open(repo, db=db, embedder=new) as ix:
        assert ix.store.meta("embedder") == "fake:2" and ix.store.meta("next_embedder") is None
        assert ix.status(check_stale=False, check_git=False).pending == 0
    assert len(set(new.texts)) >= 15


def test_watcher_waits_for_another_writer(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "l", 5)
    db = tmp_path / "l.db"
    warnings: list[str] = []
    holder = scrydb.open(repo, db=db)
    holder.store.writer_lock()
    w = Watcher(lambda: scrydb.open(repo, db=db), embed=False, warn=warnings.append)
    try:
        w.start()
        assert wait_for(lambda: bool(warnings), 5) is not None
        assert "another scry process is indexing" in warnings[0] and w.syncs == 0
        holder.store.release_writer_lock()
        assert wait_for(lambda: w.syncs == 1, 5) is not None
    finally:
        w.stop()
        holder.close()


def test_watcher_waits_for_a_writer_that_comes_mid_run(tmp_path: Path) -> None:
    """Issue 13: the one behaviour on a held lock (``scry watch`` and ``scry serve``):
    nothing blocks or fails, one note says so, and the sync runs once it is free."""
    repo = write_synth(tmp_path / "h", 5)
    db = tmp_path / "h.db"
    warnings: list[str] = []
    r = Running(repo, db, warn=warnings.append)
    holder = scrydb.open(repo, db=db)
    try:
        syncs = r.watcher.syncs
        with LockTries(db) as tries:
            holder.store.writer_lock()  # a `scry index` starts
            (repo / "held.py").write_text("def written_while_locked():\n    return 1\n")
            assert wait_for(lambda: r.watcher.phase == "waiting", 5) is not None
            seen = tries.count
            assert tries.wait_for(seen + 3, EDIT_VISIBLE_S), "no retries"  # several retries
        assert r.watcher.phase == "waiting" and r.watcher.syncs == syncs
        assert not r.watcher.wait_idle(0)  # a sync is owed
        assert not r.finds("written_while_locked")
        holder.store.release_writer_lock()
        assert wait_for(lambda: r.finds("written_while_locked"), 5) is not None
        assert r.watcher.wait_idle(10) and r.watcher.phase == "idle"
        locked = [w for w in warnings if "another scry process is indexing" in w]
        assert len(locked) == 1, warnings
    finally:
        holder.close()
        r.close()


def test_watcher_reloads_a_changed_config(tmp_path: Path) -> None:
    """Issue 13: the one behaviour on a ``.scry.toml`` change (``scry watch`` and ``scry
    serve``): the configuration is reloaded and the tree synced with it; the file events
    are judged by its rules too. A broken config keeps the old one."""
    repo = write_synth(tmp_path / "c", 14)
    db = tmp_path / "c.db"
    warnings: list[str] = []
    r = Running(repo, db, warn=warnings.append)
    excluded = "SELECT count(*) FROM files WHERE path LIKE 'core/sub0/%'"
    assert r.watcher.changes is not None
    counted = Counted(r.watcher.changes)
    try:
        assert r.reader.store.scalar(excluded)
        (repo / ".scry.toml").write_text('[index]\nexclude = ["core/sub0/"]\n')
        assert wait_for(lambda: not r.reader.store.scalar(excluded), 5) is not None
        assert r.watcher.wait_idle(10) and r.watcher.reloads == 1
        assert r.watcher.index is not None and r.watcher.index.config.index.exclude == [
            "core/sub0/"
        ]
        assert any("configuration reloaded" in w for w in warnings), warnings
        counted.names.clear()  # (.scry.toml and its sync)
        (repo / "core" / "sub0" / "new.py").write_text("def excluded_now():\n    return 1\n")
        settle(r, counted, "after_exclude")  # the new rule judges events too
        (repo / ".scry.toml").write_text("[index\n")  # broken: the old config stays
        assert wait_for(lambda: bool(r.errors), 5) is not None
        r.errors.clear()
        assert r.watcher.reloads == 1 and r.watcher.running
        (repo / "still.py").write_text("def still_watching():\n    return 1\n")
        assert wait_for(lambda: r.finds("still_watching"), 5) is not None
        assert not r.finds("excluded_now")
    finally:
        r.close()


def test_change_watcher_debounces_and_stops(tmp_path: Path) -> None:
    """The event source alone (what the Watcher's loop waits on)."""
    repo = write_synth(tmp_path / "c", 3)
    cw = ChangeWatcher(repo, ignore=[tmp_path / "x.db"], debounce=0.3)
    cw.start()
    stop = threading.Event()
    try:
        assert cw.kind and not cw.wait(stop, timeout=0.5)
        t0 = time.monotonic()
        for i in range(5):
            (repo / f"n{i}.py").write_text(f"x = {i}\n")
            time.sleep(0.1)
        assert cw.wait(stop, timeout=5)
        assert time.monotonic() - t0 >= 0.3 + 0.4  # quiet for the debounce after the last
        assert not cw.wait(stop, timeout=0.6)  # one signal for the whole burst
        (repo / ".git").mkdir()
        (repo / ".git" / "index.lock").write_text("")
        (repo / "n9.py").write_text("x = 9\n")
        assert not cw.wait(stop, timeout=1.0)  # git is busy: wait for it
        (repo / ".git" / "index.lock").unlink()
        assert cw.wait(stop, timeout=2)
        threading.Timer(0.2, stop.set).start()
        assert not cw.wait(stop)
    finally:
        cw.stop()


@pytest.mark.slow
def test_scry_watch_command(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "cli", 10)
    env = dict(os.environ, SCRY_CACHE_DIR=str(tmp_path / "cache"), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrydb.cli", "watch", str(repo), "--no-embed"],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(iter(proc.stderr.readline, "")),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    try:
        assert wait_for(lambda: any("10 new" in ln for ln in lines), 30), lines
        assert any("watching" in ln for ln in lines)
        (repo / "new_file.py").write_text("def watched_cli_edit():\n    return 2\n")
        assert wait_for(lambda: any("1 new" in ln for ln in lines), 5), lines
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
        reader.join(5)
        assert "stopped" in lines[-1] and not any("Traceback" in ln for ln in lines)
    finally:
        if proc.poll() is None:
            proc.kill()
    from conftest import run_scry

    r = run_scry("watch", "--help")
    assert r.returncode == 0 and "Example:" in r.stdout


def test_falls_back_to_polling_when_inotify_is_exhausted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    import watchdog.observers

    class Exhausted(watchdog.observers.Observer):  # type: ignore[misc, valid-type]
        def schedule(self, *a: object, **kw: object) -> object:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watchdog.observers, "Observer", Exhausted)
    monkeypatch.setattr(watch_events, "POLL_S", 0.2)
    repo = write_synth(tmp_path / "p", 5)
    r = Running(repo, tmp_path / "p.db")
    try:
        assert r.watcher.changes is not None and r.watcher.changes.kind.startswith("polling")
        (repo / "polled.py").write_text("def seen_by_polling():\n    return 1\n")
        assert wait_for(lambda: r.finds("seen_by_polling"), 3 * EDIT_VISIBLE_S) is not None
    finally:
        r.close()
