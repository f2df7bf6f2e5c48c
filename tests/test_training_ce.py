"""training/train_ce.py: a few real steps of the cross-encoder trainer on a tiny mined-pairs
directory; it logs the loss and the held-out score, resumes where it stopped, and writes a
model directory that scrydb's local reranker leg loads and scores with."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from scrydb.config import RerankConfig
from scrydb.search.rerank import LocalReranker

ROOT = Path(__file__).resolve().parent.parent

CODES = [
    ("retry.py", "backoff", "def backoff(attempt):\n    return min(60, 2 ** attempt)"),
    ("users.py", "find_user", "def find_user(db, email):\n    return db.get(email)"),
    ("config.py", "load", "def load(path):\n    return tomllib.loads(open(path).read())"),
    ("cli.py", "main", "def main(argv):\n    args = parse(argv)\n    run(args)"),
    ("auth.py", "verify", "def verify(token, key):\n    return hmac.compare(token, key)"),
    ("cache.py", "evict", "def evict(cache):\n    cache.pop(next(iter(cache)))"),
]
QUERIES = [
    "How long to wait before the next attempt.",
    "Look up an account by its e-mail address.",
    "Read the settings file.",
    "Entry point of the command line.",
    "Check that a request's token is genuine.",
    "Drop the oldest entry when the cache is full.",
]


def _pair(i: int, package: str) -> dict:
    path, sym, code = CODES[i]
    others = [f"demo > {p} > {s}\n{c}" for j, (p, s, c) in enumerate(CODES) if j != i]
    return {
        "query": QUERIES[i],
        "code": f"demo > {path} > {sym}\n{code}",
        "negatives": others[:3],
        "package": package,
        "path": path,
        "symbol": sym,
    }


def _data(tmp: Path, n: int) -> Path:
    data = tmp / "data"
    (data / "mined").mkdir(parents=True, exist_ok=True)
    pairs = [_pair(i % len(CODES), "demo") for i in range(n)]
    (data / "mined" / "demo.json").write_text(json.dumps({"pairs": pairs}))
    held = [_pair(i, "held") for i in range(3)]
    (data / "heldout.jsonl").write_text("".join(json.dumps(r) + "\n" for r in held))
    return data


def _train(data: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "training",
            "train-ce",
            "--data",
            str(data),
            "--out",
            str(out),
            "--minutes",
            "5",
            "--batch",
            "2",
            "--negs",
            "2",
            "--max-len",
            "64",
            "--eval-queries",
            "3",
            "--eval-every",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_trains_resumes_and_loads_as_reranker(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = _train(_data(tmp_path, 6), out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((out / "state.json").read_text())["step"] == 3
    log = [json.loads(ln) for ln in (out / "log.jsonl").read_text().splitlines()]
    assert log[0] == {"step": 0, "heldout_mrr": log[0]["heldout_mrr"]}
    assert any(e.get("final") for e in log)
    # More pairs: the run continues from its checkpoint instead of starting again.
    r = _train(_data(tmp_path, 10), out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((out / "state.json").read_text())["step"] == 5
    log = [json.loads(ln) for ln in (out / "log.jsonl").read_text().splitlines()]
    assert [e["step"] for e in log if "heldout_mrr" in e].count(0) == 1
    rr = LocalReranker(RerankConfig(provider="local", model=str(out / "model")))
    scores = rr.score("wait before retrying", ["retry.py > backoff\n" + CODES[0][2], "x = 1"])
    assert len(scores) == 2 and all(s is not None and math.isfinite(s) for s in scores)
