"""Base vs tuned table from two or more eval_golden.py reports (JSON).

    python -m training compare-evals --base base.json [base2.json ...] --tuned tuned.json [...]

Prints, per set, per leg (dense, fused, lexical) and per kind, MRR@10 and Recall@10 of both
and the change (tuned - base), as Markdown.
"""

from __future__ import annotations

import argparse
import json


def overall(paths: list[str]) -> dict:
    """The pooled (all sets, case-weighted) legs of a single report."""
    if len(paths) != 1:
        return {}
    with open(paths[0]) as f:
        return json.load(f).get("overall", {})


def merged(paths: list[str]) -> dict:
    sets: dict = {}
    for p in paths:
        with open(p) as f:
            sets.update(json.load(f)["sets"])
    return sets


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", nargs="+", required=True)
    ap.add_argument("--tuned", nargs="+", required=True)
    ap.add_argument("--legs", default="dense,fused,lexical")
    args = ap.parse_args()
    base, tuned = merged(args.base), merged(args.tuned)
    ob, ot = overall(args.base), overall(args.tuned)
    if ob and ot:  # pooled rows first, named "all sets"
        base = {"all sets": {"legs": ob}, **base}
        tuned = {"all sets": {"legs": ot}, **tuned}
    print("| set | leg | kind | n | MRR@10 base | MRR@10 tuned | Δ | R@10 base | R@10 tuned | Δ |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in [n for n in base if n in tuned]:
        for leg in args.legs.split(","):
            b, t = base[name]["legs"].get(leg), tuned[name]["legs"].get(leg)
            if not b or not t:
                continue
            rows = [("all", b, t)] + [
                (k, b["by_kind"][k], t["by_kind"].get(k, {})) for k in sorted(b["by_kind"])
            ]
            for kind, bb, tt in rows:
                if not tt:
                    continue
                bm, tm = bb["mrr@10"], tt["mrr@10"]
                br, tr = bb["recall@10"], tt["recall@10"]
                print(
                    f"| {name} | {leg} | {kind} | {bb['n']} | {bm:.3f} | {tm:.3f} | {tm - bm:+.3f} "
                    f"| {br:.3f} | {tr:.3f} | {tr - br:+.3f} |"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
