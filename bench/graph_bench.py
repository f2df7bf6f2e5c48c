"""The code graph's cost (issue 44, item 6): what extracting and storing references adds
to a lexical index, and how fast ``callers`` answers.

    python bench/graph_bench.py            # ~10k and ~100k chunks, several minutes on 2 cores
    python bench/graph_bench.py --quick    # ~10k chunks only
    python bench/graph_bench.py --no-corpora   # section 2 only

1. Lexical-ready time and index size on the real corpora of ``evals/`` (``evals/fetch.sh``
   first), with reference extraction as shipped and with it switched off (the chunker's
   extraction replaced by one that finds nothing), in the same run: targets <= +10% time
   and <= +15% file size.
2. ``callers`` on a synthetic Python repository of about 10k and 100k function chunks,
   each calling two others (one through an import): p50 and p90 over 200 names, against
   a symbol lookup of the same names (the table's reference); target p50 <= 20 ms at
   100k. (Before 0e7f236 an import's module was matched against every indexed path,
   ~30 times per reference: p50 / p90 at 100k 135 ms / 5.6 s on a loaded machine,
   0.37 / 16 ms after, same run; evals/RESULTS.md.)

Prints a table and writes ``bench/out/graph.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, Results, Row, loadavg, machine, pct, table

import scrydb
from scrydb.chunk import code as chunk_code
from scrydb.search import graph

CORPORA = REPO / "evals" / "corpora"


def _index_lexical(root: Path, db: Path) -> float:
    t0 = time.perf_counter()
    with scrydb.open(root, db=db) as ix:
        ix.sync(embed=False)
    return time.perf_counter() - t0


def real_corpora(res: Results, work: Path) -> None:
    """Section 1: with and without extraction, per corpus and in total."""
    names = sorted(p.name for p in CORPORA.iterdir() if p.is_dir()) if CORPORA.is_dir() else []
    if not names:
        print("graph_bench: no evals/corpora (run evals/fetch.sh); section 1 skipped")
        return
    original = chunk_code.find_refs
    totals = {"on": [0.0, 0], "off": [0.0, 0]}
    for name in names:
        for mode in ("off", "on", "off", "on"):  # interleaved: load drifts alike
            chunk_code.find_refs = original if mode == "on" else _no_refs  # type: ignore[assignment]
            db = work / f"{name}-{mode}.db"
            for p in work.glob(f"{name}-{mode}.db*"):
                p.unlink()
            secs = _index_lexical(CORPORA / name, db)
            totals[mode][0] += secs
            totals[mode][1] = max(totals[mode][1], 0) + db.stat().st_size
    chunk_code.find_refs = original  # type: ignore[assignment]
    t_on, t_off = totals["on"][0], totals["off"][0]
    s_on, s_off = totals["on"][1], totals["off"][1]
    res.rows.append(
        Row(
            "graph", f"lexical-ready time, {len(names)} corpora (x2 each)", t_on, "s",
            t_off, "without extraction", "ratio <= 1.10", t_on <= 1.10 * t_off,
        )
    )  # fmt: skip
    res.rows.append(
        Row(
            "graph", "index file size (lexical only)", s_on / 1e6, "MB", s_off / 1e6,
            "without references", "ratio <= 1.15", s_on <= 1.15 * s_off,
        )
    )  # fmt: skip


def _no_refs(*args: object, **kwargs: object) -> list[object]:
    return []


def synthetic(n_files: int, funcs: int, root: Path) -> list[str]:
    """A package of ``n_files`` modules, each function calling two others (one through
    an import, one in its own module); the function names."""
    rng = random.Random(7)
    names = [f"f{i}_{j}" for i in range(n_files) for j in range(funcs)]
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for i in range(n_files):
        other = rng.randrange(n_files)
        lines = [f"from pkg.m{other} import f{other}_0\n\n"]
        for j in range(funcs):
            local = f"f{i}_{(j + 1) % funcs}"
            lines.append(
                f"def f{i}_{j}(x):\n"
                f'    """Step {j} of module {i}."""\n'
                f"    y = f{other}_0(x) + {j}\n"
                f"    return {local}(y) if y < {i + j} else y\n\n\n"
            )
        (pkg / f"m{i}.py").write_text("".join(lines))
    (root / ".git").mkdir()
    return names


def callers_latency(res: Results, work: Path, n_files: int) -> None:
    """Section 2: callers p50/p90 on ``n_files`` modules of 3 functions each."""
    root = work / f"synth{n_files}"
    names = synthetic(n_files, 3, root)
    db = work / f"synth{n_files}.db"
    secs = _index_lexical(root, db)
    with scrydb.open(root, db=db) as ix:
        chunks = int(ix.store.scalar("SELECT count(*) FROM chunks") or 0)
        refs = int(ix.store.scalar("SELECT count(*) FROM refs") or 0)
        sample = random.Random(3).sample(names, 200)
        for n in sample[:5]:  # warm the page cache
            graph.callers(ix.store, n)
        t_callers, t_lookup = [], []
        for n in sample:
            t0 = time.perf_counter()
            graph.callers(ix.store, n)
            t_callers.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            graph.find_definitions(ix.store, n)
            t_lookup.append((time.perf_counter() - t0) * 1000)
    label = f"callers p50 @{chunks // 1000}k chunks ({refs // 1000}k refs; indexed in {secs:.0f} s)"
    p50 = pct(t_callers, 50)
    res.rows.append(
        Row("graph", label, p50, "ms", pct(t_lookup, 50), "definition lookup p50",
            "<= 20 ms", p50 <= 20.0)
    )  # fmt: skip
    res.rows.append(
        Row("graph", f"callers p90 @{chunks // 1000}k chunks", pct(t_callers, 90), "ms",
            pct(t_lookup, 90), "definition lookup p90")
    )  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="~10k synthetic chunks only")
    ap.add_argument("--no-corpora", action="store_true", help="skip section 1")
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "graph.json"))
    args = ap.parse_args()
    res = Results(machine=machine())
    work = Path(tempfile.mkdtemp(prefix="scry-graph-bench-"))
    try:
        if not args.no_corpora:
            real_corpora(res, work)
        for n_files in (3_400,) if args.quick else (3_400, 33_400):
            callers_latency(res, work, n_files)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res.extra["load_after"] = loadavg()
    print(table(res))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res.to_json(), indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
