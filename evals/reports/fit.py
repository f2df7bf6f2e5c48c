#!/usr/bin/env python3
"""Fit the weights of a bug report's own scores (scrydb/search/reportquery.py,
``REPORT_FEATURES`` / ``REPORT_WEIGHTS``) on the dev half of the bug-report set, and judge
the fit by leaving one repository out:

    python evals/reports/fit.py sqlfluff pydicom marshmallow           # dev repositories
    python evals/reports/fit.py sqlfluff pydicom marshmallow --l2 0.1

Each repository is searched as ``proxy.py --dense`` searches it (one index with vectors
at its median case's base commit; built by the first ``proxy.py --dense`` run). Per case,
the candidates and their features are captured as the engine rescored them
(``reportquery.observing``); the right candidates are the hits on a label function (a
label file's hits when the case names no function there). The model is the engine's:
``exp(w . x)``, fitted with a listwise softmax loss (the probability mass on the right
candidates), L2 pulling ``w`` towards the shipped weights. Printed: the shipped
weights' figures per repository, then for each repository the weights fitted on the
others and its figures with them (file Acc@1/5/10, function Acc@5/10, MRR), then a fit on
all. Nothing is written: a fit that pays on the left-out repositories is copied into
``REPORT_WEIGHTS`` by hand, with its figures, and checked on the test half once.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import labels as L
import run as R

KEYS = ("file_acc@1", "file_acc@5", "file_acc@10", "func_acc@5", "func_acc@10", "mrr")


def proxy_index(repo: str, work: Path) -> tuple[Path, Path, list[dict[str, Any]]]:
    """(tree, index file, cases whose label files exist there) of ``proxy.py --dense``."""
    cases = sorted(R.load_cases("all", [repo], [], None), key=lambda c: c["base_date"])
    name = cases[len(cases) // 2]["repo"].replace("/", "+")
    root, db = work / name, work / f"{name}.dense.db"
    if not db.is_file():
        raise SystemExit(f"{db} is missing: run proxy.py --repo {repo} --dense first")
    return root, db, [c for c in cases if all((root / f).is_file() for f in c["files"])]


def positives(c: dict[str, Any], items: list[Any], root: Path, defs: dict) -> np.ndarray:
    """Which candidates are right: on a label function, or in a label file that has none."""
    want: dict[str, set[str]] = defaultdict(set)
    for fid in c["functions"]:
        path, _, name = fid.partition("::")
        want[path].add(name)
    pos = np.zeros(len(items), dtype=bool)
    for i, it in enumerate(items):
        if it.path not in c["files"]:
            continue
        names = want.get(it.path)
        if not names:
            pos[i] = True
            continue
        if it.path not in defs:
            defs[it.path] = L.definitions((root / it.path).read_text(errors="replace"))
        d = L.hit_definition(defs[it.path], it.start_line, it.end_line)
        pos[i] = d is not None and d.name in names
    return pos


def figures(ix: Any, root: Path, cases: list[dict[str, Any]], texts: dict[str, str]) -> list[float]:
    rows: list[dict[str, Any]] = []
    defs: dict = {}
    for c in cases:
        hits = [(h.path, h.start_line, h.end_line) for h in ix.search(texts[c["id"]], k=50)]
        rows.append(R.score(c, hits, root, defs))
    s = R.summarise(rows)
    return [s[k] if s[k] is not None else float("nan") for k in KEYS]


def fit(groups: list[tuple[np.ndarray, np.ndarray]], w0: np.ndarray, l2: float) -> np.ndarray:
    from scipy.optimize import minimize

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.0, np.zeros_like(w)
        for x, pos in groups:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            mass = p[pos].sum()
            total -= math.log(mass + 1e-12)
            grad += x.T @ (p - np.where(pos, p / (mass + 1e-12), 0.0))
        d = w - w0
        return total / len(groups) + l2 * float(d @ d), grad / len(groups) + 2 * l2 * d

    return minimize(loss, w0.copy(), jac=True, method="L-BFGS-B", options={"maxiter": 300}).x


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repos", nargs="+", help="repositories of the dev half (part of a name)")
    ap.add_argument("--l2", type=float, default=0.01, help="pull towards the shipped weights")
    ap.add_argument("--work-dir", type=Path, default=R.EVALS / "corpora" / "reports-proxy")
    args = ap.parse_args()
    import scrydb
    from scrydb.search import reportquery as RQ

    shipped = dict(RQ.REPORT_WEIGHTS)
    names = RQ.REPORT_FEATURES
    w0 = np.array([shipped.get(n, 0.0) for n in names])
    dataset = R.mirror_dir(R.DATASET_REPO)
    data: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    opened: dict[str, tuple[Any, Path, list[dict[str, Any]], dict[str, str]]] = {}
    for repo in args.repos:
        root, db, cases = proxy_index(repo, args.work_dir)
        if any(c["split"] != "dev" for c in cases):
            raise SystemExit(f"{repo}: not a dev repository (tune on the dev half only)")
        ix = scrydb.open(root, db=db)
        texts = {c["id"]: R.issue_text(dataset, c["id"]) for c in cases}
        groups: list[tuple[np.ndarray, np.ndarray]] = []
        defs: dict = {}
        for c in cases:
            seen: list[tuple[list[Any], np.ndarray]] = []
            with RQ.observing(lambda items, x, seen=seen: seen.append((list(items), x.copy()))):
                ix.search(texts[c["id"]], k=50)
            if seen:
                items, x = seen[-1]
                pos = positives(c, items, root, defs)
                if pos.any():
                    groups.append((x, pos))
        data[repo] = groups
        opened[repo] = (ix, root, cases, texts)
        print(f"{repo}: {len(cases)} cases, {len(groups)} with a right candidate in the pool")

    def show(label: str, vals: list[float]) -> None:
        print(f"  {label:<28}" + " ".join(f"{v:.3f}" for v in vals) + f"  ({' / '.join(KEYS)})")

    def with_weights(w: np.ndarray | None, repo: str) -> list[float]:
        ix, root, cases, texts = opened[repo]
        if w is not None:
            RQ.REPORT_WEIGHTS.clear()
            RQ.REPORT_WEIGHTS.update(zip(names, w.tolist(), strict=True))
        try:
            return figures(ix, root, cases, texts)
        finally:
            RQ.REPORT_WEIGHTS.clear()
            RQ.REPORT_WEIGHTS.update(shipped)

    print("shipped weights:")
    for repo in args.repos:
        show(repo, with_weights(None, repo))
    for held in args.repos if len(args.repos) > 1 else []:
        w = fit([g for r in args.repos if r != held for g in data[r]], w0, args.l2)
        print(
            f"fitted without {held}: "
            + " ".join(f"{n}={v:+.2f}" for n, v in zip(names, w, strict=True))
        )
        show(f"{held} (left out)", with_weights(w, held))
    w = fit([g for r in args.repos for g in data[r]], w0, args.l2)
    print("fitted on all: " + " ".join(f"{n}={v:+.3f}" for n, v in zip(names, w, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
