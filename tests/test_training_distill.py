"""training/distill.py, the parts that keep a long distillation run honest across sessions:
the pairs file can grow without moving the held-out draw, teacher shards line up with the
pairs they were made from, the pair scorer ranks each query's own code, and the cold
latency check times a real fresh process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from training import distill


def _corpus(root: Path, n_train: int, n_held: int) -> Path:
    data = root / "data"
    data.mkdir()
    with open(data / "train.jsonl", "w") as f:
        for i in range(n_train):
            row = {
                "query": f"return the {i}th thing",
                "code": f"def thing_{i}():\n    return {i}\n",
                "package": f"p{i % 3}",
                "lang": "python",
                "source": "name",
            }
            f.write(json.dumps(row) + "\n")
    with open(data / "heldout.jsonl", "w") as f:
        for i in range(n_held):
            row = {"query": f"held {i}", "code": f"x = {i}\n", "package": f"h{i % 2}"}
            f.write(json.dumps(row) + "\n")
    return data


def test_growing_the_pairs_keeps_the_heldout_draw_and_the_prefix(tmp_path: Path) -> None:
    data = _corpus(tmp_path, 60, 40)
    small, big = tmp_path / "small", tmp_path / "big"
    distill.main(
        ["texts", "--data", str(data), "--out", str(small), "--pairs", "20", "--heldout", "10"]
    )
    distill.main(
        ["texts", "--data", str(data), "--out", str(big), "--pairs", "50", "--heldout", "10"]
    )
    s_pairs = (small / "pairs.jsonl").read_text().splitlines()
    b_pairs = (big / "pairs.jsonl").read_text().splitlines()
    assert len(s_pairs) == 20 and len(b_pairs) == 50
    assert b_pairs[:20] == s_pairs  # the shards already embedded stay valid
    assert (small / "heldout.jsonl").read_text() == (big / "heldout.jsonl").read_text()
    held = [json.loads(x)["q"] for x in (big / "heldout.jsonl").read_text().splitlines()]
    assert len(set(held)) == 10


def _shard(path: Path, n: int, start: int) -> None:
    q = np.zeros((n, 768), np.float16)
    q[:, 0] = np.arange(start, start + n)
    np.savez(path, q=q, c=q)


def test_teacher_vectors_stop_at_a_short_shard(tmp_path: Path) -> None:
    tdir = tmp_path / "teacher"
    tdir.mkdir()
    _shard(tdir / "pairs-00000.npz", distill.SHARD, 0)
    _shard(tdir / "pairs-00001.npz", 5, distill.SHARD)  # the short end of a smaller run
    _shard(tdir / "pairs-00002.npz", distill.SHARD, 2 * distill.SHARD)  # from a larger one
    q, c, n = distill.teacher_vectors(tmp_path, "pairs")
    assert (c == q).all()
    # rows after the short shard would sit against the wrong pairs: they are not used
    assert n == distill.SHARD + 5
    assert list(q[:, 0].astype(int)) == list(range(n))


def test_pair_mrr_ranks_each_query_among_its_own_package() -> None:
    rng = np.random.default_rng(0)
    codes = distill.normalise(rng.normal(size=(6, 8)).astype(np.float32))
    groups = ["a", "a", "a", "b", "b", "b"]
    assert distill.pair_mrr(codes, codes, groups) == 1.0
    # each query pointed at the next code of its package: its own code is never first
    shifted = codes[[1, 2, 0, 4, 5, 3]]
    assert distill.pair_mrr(shifted, codes, groups) < 1.0


def test_cold_latency_runs_a_fresh_process_to_its_first_query_vector() -> None:
    ms = distill._cold(distill._COLD_LOCAL, "scry-code-minilm", 1)
    assert ms > 0
    # a process that cannot load its model is an error, never a time
    with pytest.raises(subprocess.CalledProcessError):
        distill._cold(distill._COLD_LOCAL, "no-such-model-anywhere", 1)
