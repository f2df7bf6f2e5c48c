"""The CI check that store/ alone speaks SQL (.ci/check_sql.py): it passes on this tree,
fails on a statement planted outside store/, and fails when an exception is stale."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHECK = REPO / ".ci" / "check_sql.py"


def _load():
    spec = importlib.util.spec_from_file_location("check_sql", CHECK)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _copy(tmp: Path) -> Path:
    root = tmp / "tree"
    shutil.copytree(REPO / "scrydb", root / "scrydb", ignore=shutil.ignore_patterns("models"))
    return root


def test_this_tree_passes() -> None:
    r = subprocess.run([sys.executable, str(CHECK)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_planted_statement_fails(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    target = root / "scrydb" / "status.py"
    target.write_text(
        target.read_text()
        + '\n\ndef _planted(store):\n    return store.scalar("SELECT count(*) FROM chunks")\n'
    )
    r = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
    assert r.returncode == 1
    (line,) = r.stdout.splitlines()
    assert line.startswith("scrydb/status.py:") and "outside scrydb/store/" in line
    # the same statement inside store/ is fine
    target.write_text(target.read_text().split("\n\ndef _planted")[0] + "\n")
    (root / "scrydb" / "store" / "planted.py").write_text(
        'def planted(store):\n    return store.scalar("SELECT 1")\n'
    )
    r = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_an_exception_that_no_longer_runs_sql_fails(tmp_path: Path) -> None:
    mod = _load()
    root = _copy(tmp_path)
    pending = dict(mod.PENDING) | {"scrydb/status.py": "planted reason"}
    problems = mod.check(root, pending)
    assert problems == ["scrydb/status.py: in PENDING but runs no SQL now: remove it"]


def test_a_planted_fragment_fails_and_prose_does_not(tmp_path: Path) -> None:
    """SQL text built outside store/ (a condition spliced into a store operation's
    statement) fails like a statement run there; a docstring about SQL does not."""
    root = _copy(tmp_path)
    target = root / "scrydb" / "status.py"
    clean = target.read_text()
    target.write_text(
        clean
        + '\n\ndef _prose():\n    """Finds rows WHERE f.path GLOB ? (prose: a docstring)."""\n'
    )
    r = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    for fragment in (
        'f"f.lang IN ({marks})"',
        '"instr(c.content, ?) > 0"',
        '"(f.path = ? OR substr(f.path, 1, ?) = ?)"',
        '"DELETE FROM query_cache"',
    ):
        target.write_text(clean + f"\n\ndef _planted(marks):\n    return {fragment}\n")
        r = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
        assert r.returncode == 1, fragment
        (line,) = r.stdout.splitlines()
        assert line.startswith("scrydb/status.py:") and "SQL text outside" in line, line


def test_messages_are_not_sql() -> None:
    """Text for people (messages, help, a dotted name) is not taken for SQL; a fragment
    and a statement are."""
    mod = _load()
    for text in (
        "no index at {path} (run `scry index` first)",
        "Only these languages, e.g. python or ts,tsx.",
        "Continue?",
        "os.path or pathlib",
    ):
        assert not mod.is_sql_text(text), text
    assert mod.is_sql_text("f.path GLOB ?") and mod.is_sql_text("SELECT 1")
