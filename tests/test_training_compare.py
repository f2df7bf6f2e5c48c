"""training/fusion.py compare: two dumps of the same queries, ranked by the shipped fusion,
give per-kind MRR and the paired difference; dumps of different queries are refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from scrydb.search import learned

ROOT = Path(__file__).resolve().parent.parent


def _dump(path: Path, right_first: list[bool], kinds: list[str]) -> Path:
    """One query per entry, three candidates in three files each; the right answer (the
    first candidate) gets the best hand score where ``right_first`` says so, else the
    second best."""
    hand_col = learned.FEATURES.index("hand")
    xs, qid, label, hand, paths = [], [], [], [], []
    for q, first in enumerate(right_first):
        h = np.array([3.0, 2.0, 1.0]) if first else np.array([2.0, 3.0, 1.0])
        x = np.zeros((3, len(learned.FEATURES)))
        x[:, hand_col] = h
        xs.append(x)
        qid.append(np.full(3, q, dtype=np.int32))
        label.append(np.array([1, 0, 0], dtype=np.int8))
        hand.append(h)
        paths += [f"q{q}/a.py", f"q{q}/b.py", f"q{q}/c.py"]
    np.savez_compressed(
        path,
        x=np.concatenate(xs),
        qid=np.concatenate(qid),
        label=np.concatenate(label),
        hand=np.concatenate(hand),
        paths=np.array(paths),
        kinds=np.array(kinds),
        sets=np.array(["s"] * len(kinds)),
        features=np.array(learned.FEATURES),
    )
    return path


def _compare(a: Path, b: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "training", "fusion", "compare", str(a), str(b)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_compare_reports_the_paired_difference(tmp_path: Path) -> None:
    kinds = ["doc", "doc", "para", "para"]
    a = _dump(tmp_path / "a.npz", [True, False, False, False], kinds)
    b = _dump(tmp_path / "b.npz", [True, True, True, False], kinds)
    r = _compare(a, b)
    assert r.returncode == 0, r.stderr
    # A: ranks 1, 2, 2, 2 -> MRR 0.625; B: 1, 1, 1, 2 -> 0.875; two queries moved up.
    assert "B - A: +0.2500" in r.stdout
    assert "2 of 4 queries moved" in r.stdout
    assert "0.625/1.000" in r.stdout and "0.875/1.000" in r.stdout
    same = _compare(a, a)
    assert "B - A: +0.0000" in same.stdout and "0 of 4 queries moved" in same.stdout


def test_compare_refuses_dumps_of_other_queries(tmp_path: Path) -> None:
    a = _dump(tmp_path / "a.npz", [True, False], ["doc", "doc"])
    b = _dump(tmp_path / "b.npz", [True, False, True], ["doc", "doc", "para"])
    r = _compare(a, b)
    assert r.returncode == 1
    assert "different queries" in r.stderr
