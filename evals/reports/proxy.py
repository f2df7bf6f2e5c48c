#!/usr/bin/env python3
"""A cheap proxy of the bug-report set for tuning (not its protocol; see evals/README.md,
"Bug reports"): each repository is indexed once, lexically (no vectors, so the fused
search is the lexical leg, the votes and the priors), at the base commit of its median
case, and every case of the repository is searched there; a case whose label files do
not exist at that commit is left out. Seconds per repository instead of hours, but
approximate where a case's base commit is far from the median one. Variants set module
constants for one search each:

    python evals/reports/proxy.py --repo sqlfluff --split dev \\
        --variant base \\
        --variant "x0.2=scrydb.search.reportquery.REPORT_NOT_CODE=0.2"

Tune on the dev half; check the test half once, at the end.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as R

KEYS = ("file_acc@1", "file_acc@5", "file_acc@10", "func_acc@5", "func_acc@10", "mrr")


def parse_variant(spec: str) -> tuple[str, list[tuple[str, str, float]]]:
    """``name`` or ``name=module.ATTR=value[,module.ATTR=value...]``."""
    name, _, rest = spec.partition("=")
    sets = []
    for item in filter(None, rest.split(",")):
        target, _, value = item.rpartition("=")
        module, _, attr = target.rpartition(".")
        sets.append((module, attr, int(value) if value.isdigit() else float(value)))
    return name, sets


def search_with(
    ix: Any, text: str, sets: list[tuple[str, str, float]], mode: str | None = None
) -> list[Any]:
    """The hits of ``text`` with the variant's constants set, then restored."""
    saved = []
    for module, attr, value in sets:
        m = importlib.import_module(module)
        saved.append((m, attr, getattr(m, attr)))
        setattr(m, attr, value)
    try:
        return list(ix.search(text, k=50, mode=mode) if mode else ix.search(text, k=50))
    finally:
        for m, attr, value in saved:
            setattr(m, attr, value)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="a repository of the set (part of its name)")
    ap.add_argument("--split", choices=["dev", "test"], default="dev")
    ap.add_argument("--variant", action="append", default=[], help="name[=module.ATTR=value,...]")
    ap.add_argument("--work-dir", type=Path, default=R.EVALS / "corpora" / "reports-proxy")
    ap.add_argument(
        "--dense",
        action="store_true",
        help="embed the index too (its own file, minutes to build once): the fused search "
        "with its dense leg, as the set's protocol runs it",
    )
    ap.add_argument("--mode", default=None, help="one leg alone: lexical or dense (default: fused)")
    ap.add_argument("--cases", action="store_true", help="a line per case: label ranks, top files")
    args = ap.parse_args()
    import scrydb

    variants = [parse_variant(v) for v in (args.variant or ["base"])]
    cases = sorted(R.load_cases(args.split, [args.repo], [], None), key=lambda c: c["base_date"])
    if not cases:
        print("no case selected", file=sys.stderr)
        return 2
    mid = cases[len(cases) // 2]
    repo = mid["repo"]
    root = args.work_dir / repo.replace("/", "+")
    db = args.work_dir / f"{repo.replace('/', '+')}{'.dense' if args.dense else ''}.db"
    R.materialize(R.mirror_dir(repo), mid["base_commit"], root, R.EXCLUDE.get(repo, ()))
    dataset = R.mirror_dir(R.DATASET_REPO)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in variants}
    with scrydb.open(root, db=db) as ix:
        ix.sync(embed=args.dense)
        for c in cases:
            if not all((root / f).is_file() for f in c["files"]):
                continue
            text = R.issue_text(dataset, c["id"])
            defs: dict = {}
            for name, sets in variants:
                found = search_with(ix, text, sets, args.mode)
                hits = [(h.path, h.start_line, h.end_line) for h in found]
                row = R.score(c, hits, root, defs)
                rows[name].append(row)
                if args.cases:
                    print(
                        f"{name:<10} {c['id']:<36} ranks={row['file_ranks']} "
                        f"fn@10={row['func_acc@10']} top={row['top_files']}"
                    )
    print(f"{repo} at {mid['base_commit'][:10]} ({mid['base_date'][:10]}), {args.split}")
    for name, rs in rows.items():
        s = R.summarise(rs)
        cells = " ".join("-" if s[k] is None else f"{s[k]:.3f}" for k in KEYS)
        print(f"{name:<16} n={s['n']:>3}  {cells}  ({' / '.join(KEYS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
