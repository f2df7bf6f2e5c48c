"""scrydb benchmarks: one command, a table on stdout, JSON in bench/out/.

    python bench/run.py            # the full suite (5-9 minutes on 2 cores)
    python bench/run.py --quick    # smaller corpora, no 100k scale (about 3 minutes)
    python bench/run.py --only index,query

Sections: index throughput (real corpora, real model), time until a ~1,000-file tree
answers lexical queries, no-op sync and a one-line edit, query latency at 16k and 100k
chunks, the coarse pass's recall on real embeddings, CLI cold start, memory, and the
shared vector cache (a second worktree, a branch switch, a cold index with it on,
100k lookups; ``bench/cache_bench.py``, also runnable alone). Every
figure sits next to a reference measured in the same run; compare ratios, not absolute
times, across machines and loads. The pinned corpora of evals/ are fetched if missing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import common  # noqa: F401  (puts the checkout on sys.path)
from cache_bench import cache_section
from common import REPO, Results, bench_env, loadavg, machine, run_json, table
from corpora import REAL, copies_tree, queries
from index_bench import index_throughput, lexical_ready, load_model, noop_and_edit
from process_bench import build_scale, cold_start, memory
from query_bench import coarse_recall, query_latency

SECTIONS = ("index", "lexical", "sync", "query", "cli", "memory", "cache")
#: The real corpora indexed with the real model (section 1; their vectors feed "recall"):
#: ~1,800 texts, so three passes of the model (before, index, after) fit the time budget.
THIRD_PARTY = ("trpc-server", "httpx")
#: Renamed copies of the four real corpora (~3,600 chunks each) per scale.
COPIES_16K = 5
COPIES_100K = 28
#: Copies of the real corpora (~270 files each) for the ~1,000-file first index.
COPIES_1000_FILES = 4


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="small corpora, no 100k scale")
    ap.add_argument("--only", default="", help=f"comma-separated sections ({', '.join(SECTIONS)})")
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "results.json"))
    ap.add_argument("--work", default=None, help="scratch directory (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = ap.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()} or set(SECTIONS)
    unknown = only - set(SECTIONS)
    if unknown:
        ap.error(f"unknown sections: {', '.join(sorted(unknown))}")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="scry-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "cache").mkdir(exist_ok=True)
    os.environ["SCRY_CACHE_DIR"] = str(work / "cache")  # never the user's cache
    # Every section but "cache" measures the model path: no shared vector cache there
    # (the synthetic-vector embedders would also fill it under the real model's name).
    os.environ["SCRY_SHARED_CACHE"] = "0"
    res = Results(machine=machine())
    res.machine["mode"] = "quick" if args.quick else "full"
    print(
        f"scrydb bench ({res.machine['mode']}): {res.machine['cpu']}, {res.machine['cores']} cores, load {res.machine['load_start']}",
        flush=True,
    )
    t_start = time.perf_counter()
    names = ("trpc-server",) if args.quick else THIRD_PARTY
    qs = queries(REAL)
    if args.quick:
        qs = qs[::3]

    emb, load_s = load_model()
    res.add("model", "load + warm-up (sentence-transformers)", load_s, "s")

    real = None
    if "index" in only or "query" in only or "memory" in only:
        real = index_throughput(res, work, names, emb)
    if "lexical" in only:
        lexical_ready(res, work, REAL, COPIES_1000_FILES)
    if "sync" in only:
        noop_and_edit(res, work, 2000 if args.quick else 10_000, emb)

    scales = [("16k", COPIES_16K)] + ([] if args.quick else [("100k", COPIES_100K)])
    built = {}
    model_rss = None
    if "memory" in only:
        model_rss = run_json(["model"], env=bench_env(work))["rss_mb"]
    if only & {"query", "cli", "memory"}:
        for label, copies in scales:
            root = copies_tree(work / f"s{label}", REAL, copies)
            built[label] = build_scale(res, work, label, root, with_model="memory" in only)
            built[label]["root"] = root
    if "query" in only:
        for label, _ in scales:
            b = built[label]
            query_latency(res, label, b["root"], b["db"], emb, qs, big=label != "16k")
        if real is not None:
            coarse_recall(res, real["db"], real["root"], emb, queries(REAL), _exact_max())
    if "cli" in only:
        b = built["16k"]
        cold_start(res, work, b["root"], b["db"], qs)
    if "memory" in only:
        for label, _ in scales:
            memory(res, work, label, built[label], built[label]["root"], qs[:40], model_rss)
        if real is not None:
            _real_bytes(res, real)

    if "cache" in only:
        cache_section(res, work, quick=args.quick)

    res.machine["load_end"] = loadavg()
    res.machine["seconds"] = round(time.perf_counter() - t_start, 1)
    print()
    print(
        f"machine: {res.machine['cpu']}, {res.machine['cores']} cores, {res.machine['mem_gb']} GB; load {res.machine['load_start']} -> {res.machine['load_end']}; {res.machine['seconds']} s"
    )
    print(table(res))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res.to_json(), indent=1, default=str))
    print(f"\nJSON: {out}")
    if not args.keep and not args.work:
        shutil.rmtree(work, ignore_errors=True)
    misses = [r for r in res.rows if r.ok is False]
    return 1 if misses else 0


def _exact_max() -> int:
    from scrydb.config import SearchConfig

    return SearchConfig().exact_max


def _real_bytes(res: Results, real: dict[str, object]) -> None:
    from scrydb.store import Store

    db = Path(str(real["db"]))
    st = Store(db, readonly=True)
    try:
        chunks = st.scalar("SELECT count(*) FROM chunks")
        text = st.scalar("SELECT sum(length(CAST(content AS BLOB))) FROM chunks") / chunks
    finally:
        st.close()
    size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())
    per = size / chunks
    limit = 2 * text + 1700
    res.add(
        "memory",
        f"index bytes per chunk, real corpora ({chunks} chunks)",
        per,
        "B",
        limit,
        "2 x text + 1.7 KB",
        target="ratio <= 1",
        ok=per <= limit,
        note=f"mean chunk text {text:.0f} B",
    )


if __name__ == "__main__":
    sys.exit(main())
