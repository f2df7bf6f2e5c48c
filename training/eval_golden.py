"""Score the golden sets with a chosen embedding model: ``scry eval`` plus a config.

    python -m training eval-golden --model DIR_OR_PACKAGE --db-dir DIR --save OUT.json \\
        evals/httpx.toml evals/trpc-server.toml [--legs]

The same evaluator as ``scry eval --config FILE`` (scrydb.evaluate), with ``[embed] model``
set in a config file written for the run. (An earlier version patched ``scrydb.open``; that
silently scored the shipped model once the evaluator passed its own ``config``.) Use a
separate --db-dir per model: the index fingerprint would otherwise rebuild it on every
switch.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_sets(cases: list[str], config_text: str, db_dir: str, half: str, k: int = 10) -> dict:
    """scry eval's report (all legs) over the golden-set files ``cases``, every corpus opened
    with a config file holding ``config_text`` (the Evaluator's ``config``, as ``scry eval
    --config FILE`` does)."""
    from scrydb import evaluate

    cfg = Path(tempfile.mkdtemp(prefix="scry-eval-")) / "scry.toml"
    cfg.write_text(config_text)
    sets = [evaluate.only_half(evaluate.load_set(c), half) for c in cases]
    ev = evaluate.Evaluator(
        k=k,
        legs=True,
        runs=1,
        repo=None,
        db_dir=db_dir,
        tokens=False,
        progress=lambda m: print(m, file=sys.stderr),
        config=str(cfg),
    )
    return ev.run(sets)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--model", required=True, help="model directory or installed model package")
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--save", required=True)
    ap.add_argument("--legs", action="store_true", default=True)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument(
        "--half", default="all", choices=["all", "dev", "test"], help="tune on dev, report test"
    )
    ap.add_argument(
        "--extra",
        default="",
        help='more config (TOML), e.g. "[index]\\nwindow_vectors = false" for the run without windows',
    )
    args = ap.parse_args()

    model = args.model
    if Path(model).is_dir():
        model = str(Path(model).resolve())
    extra = args.extra.replace("\\n", "\n")
    config = f'[embed]\nmodel = "{model}"\n' + (extra + "\n" if extra else "")
    report = run_sets(args.cases, config, args.db_dir, args.half, args.k)
    report["embed_model"] = args.model
    report["half"] = args.half
    Path(args.save).write_text(json.dumps(report, indent=1), encoding="utf-8")
    from scrydb import evaluate

    print(evaluate.render(report, None, misses=0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
