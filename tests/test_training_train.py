"""training/train.py: a real run of the contrastive fine-tuner, two steps on a tiny mined-pairs
corpus, with and without bf16 autocast: it logs which precision it ran, moves the weights,
scores the held-out pairs and saves a model that loads and embeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


def _corpus(root: Path) -> Path:
    data = root / "data"
    data.mkdir()
    words = ["parse", "render", "retry", "hash", "merge", "split", "cache", "sort"]
    with open(data / "train.jsonl", "w") as f:
        for i, w in enumerate(words):
            row = {
                "query": f"{w} the input and return the result",
                "code": f"def {w}_items(items):\n    return [{w}(x) for x in items]\n",
                "package": f"p{i % 2}",
                "lang": "python",
                "source": "doc",
                "negatives": [],
            }
            f.write(json.dumps(row) + "\n")
    with open(data / "heldout.jsonl", "w") as f:
        for i, w in enumerate(words[:4]):
            row = {"query": f"{w} one value", "code": f"def {w}(x):\n    return x\n"}
            f.write(json.dumps({**row, "package": f"h{i % 2}"}) + "\n")
    return data


def _events(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("bf16", ["off", "auto"])
def test_two_steps_train_save_and_say_their_precision(tmp_path: Path, bf16: str) -> None:
    from sentence_transformers import SentenceTransformer

    from scrydb.embed.local import native_bf16

    data = _corpus(tmp_path)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "training", "train", "--data", str(data), "--out", str(out)]
    cmd += ["--max-pairs", "8", "--batch", "4", "--negs", "0", "--lr", "1e-3"]
    cmd += ["--save-every", "100", "--threads", "1", "--bf16", bf16]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run(cmd, cwd=REPO, env=env, check=True, capture_output=True, timeout=600)

    ev = _events(out)
    start = next(e for e in ev if e["event"] == "start")
    assert start["bf16_active"] is (bf16 == "auto" and native_bf16())
    assert [e["step"] for e in ev if e["event"] == "train"] == [2]
    assert np.isfinite(next(e for e in ev if e["event"] == "train")["loss"])
    evals = [e for e in ev if e["event"] == "eval"]
    assert [e["step"] for e in evals] == [0, 2] and evals[-1]["heldout_queries"] == 4
    assert ev[-1]["event"] == "done"

    tuned = SentenceTransformer(str(out / "final"), device="cpu")
    base = SentenceTransformer(start["base"], device="cpu")
    text = ["def merge_items(items): ..."]
    a = tuned.encode(text, normalize_embeddings=True)
    b = base.encode(text, normalize_embeddings=True)
    assert a.shape == (1, 384)
    assert float((a * b).sum()) < 0.99999  # two steps at lr 1e-3 moved the weights
