"""training/export_eval.py + training/dscore.py: the offline dense scorer, fed a real index's
exported texts and vectors, ranks chunks exactly as the engine's dense leg does (the check
that lets a model be scored on the golden sets without building an index with it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import scrydb
from scrydb import evaluate
from scrydb.config import find_config
from training import dscore, export_eval

ROOT = Path(__file__).resolve().parent.parent
from scrydb.store.vectors import read_rows  # noqa: E402

CASES = [
    ("how is the retry backoff computed", "app/retry.py", "nl"),
    ("look up a user account by e-mail address", "app/users.py", "paraphrase"),
    ("where does the command line start", "app/cli.py", "location"),
    ("verify the token of an API request", "web/auth.ts", "nl"),
    ("read the settings file", "app/config.py", "paraphrase"),
    ("parse what people type into the search box", "core/src/lib.rs", "nl"),
]


def _golden(tmp: Path, repo: Path) -> Path:
    lines = [f'[meta]\ncorpus = "{repo}"\nsplit = "alternate"\n']
    for q, path, kind in CASES:
        lines.append(f'[[case]]\nquery = "{q}"\nexpect = ["{path}"]\nkind = "{kind}"\n')
    f = tmp / "golden.toml"
    f.write_text("\n".join(lines))
    return f


def test_offline_dense_ranking_is_the_engines(
    indexed_sample: tuple[Path, Path], tmp_path: Path
) -> None:
    repo, db = indexed_sample
    gs = evaluate.load_set(_golden(tmp_path, repo))
    with scrydb.open(repo, db=db) as ix:
        rec, ids = export_eval.export_set(ix, repo, gs, find_config(repo))
        rowids, mat = read_rows(ix.store, ix.store.vec_dim(), None)
        pos = {int(e): i for i, e in enumerate(rowids)}
        texts = mat[[pos[e] for e in ids]]
        # every chunk with a body vector is there, with its header and windows
        assert len(rec["chunks"]) == ix.store.scalar("SELECT count(*) FROM chunks")
        assert all(ch[4] >= 0 for ch in rec["chunks"])
        assert any(ch[5] >= 0 for ch in rec["chunks"])
        queries = np.stack([ix.engine.query_vector(c.query) for c in gs.cases])
        scores = dscore.chunk_scores(texts, queries, dscore.prep(rec))
        for qi, case in enumerate(gs.cases):
            hits = ix.search(case.query, k=5, mode="dense")
            engine_top = [(h.path, h.start_line) for h in hits]
            order = np.argsort(-scores[qi], kind="stable")[:5]
            offline_top = [(rec["chunks"][i][0], rec["chunks"][i][2]) for i in order]
            assert offline_top == engine_top, case.query
            # the relevant chunks are the ones the golden set's matcher accepts
            rel = {rec["chunks"][i][0] for i in rec["cases"][qi]["rel"]}
            assert rel == {case.targets[0].path}
    # the summary uses the set's halves and kinds
    report = dscore.evaluate(
        {"shop": {**rec, "_idx": dscore.prep(rec)}},
        lambda _name, _t: texts,
        lambda _qs: queries[[i for i, c in enumerate(gs.cases) if c.half in ("dev", "test")]],
    )
    assert set(report) == {"dev", "test"}
    assert 0.0 <= report["dev"]["all"] <= 1.0 and "nl" in report["dev"]
