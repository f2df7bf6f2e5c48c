"""A bug report as a query (issue 47, item 5): how long a 5,000-character report takes to
answer in a warm process, against a short question on the same index.

    python bench/report_bench.py            # evals/corpora/httpx (evals/fetch.sh httpx)

The index is the real httpx corpus with the packaged model (vectors come from the shared
cache after the first run). Each report is made of real text from the corpus: a title,
prose from its docs and docstrings, a pasted Python traceback through three of its
functions, and an error message, about 5,000 characters; every report is new to the
process (its segments' vectors are computed, not cached). Target: p50 <= 300 ms. Prints a
table and writes ``bench/out/report.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, Results, Row, loadavg, machine, pct, rss_peak_mb, table

import scrydb
from scrydb.embed import local

CORPUS = REPO / "evals" / "corpora" / "httpx"
TARGET_CHARS = 5000


def make_reports(ix: scrydb.Index, n: int, seed: int = 5) -> list[str]:
    """``n`` reports of about TARGET_CHARS characters from the corpus's own text."""
    rng = random.Random(seed)
    rows = ix.store.rows(
        "SELECT f.path, c.start_line, c.symbol, c.content FROM chunks c JOIN files f "
        "ON f.id = c.file_id WHERE c.kind IN ('function', 'method') AND f.path LIKE 'httpx/%'"
    )
    docs = [r[0] for r in ix.store.rows("SELECT content FROM chunks WHERE length(content) > 400")]
    out = []
    for i in range(n):
        frames = rng.sample(rows, 3)
        tb = ["Traceback (most recent call last):"]
        for path, line, sym, _c in frames:
            tb.append(
                f'  File "/usr/lib/python3.12/site-packages/{path}", line {line + 2}, in {sym}'
            )
            tb.append("    result = do_something(request)")
        tb.append(f"httpx.HTTPError: something failed while handling request number {i}")
        parts = [f"Unexpected error in {frames[-1][2]} (report {i})", ""]
        while sum(len(p) for p in parts) < TARGET_CHARS - 800:
            parts.append(" ".join(rng.choice(docs).split())[:600])
        parts += ["", "```", *tb, "```", "", "Expected the request to succeed."]
        out.append("\n".join(parts)[: TARGET_CHARS + 200])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reports", type=int, default=30)
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "report.json"))
    ap.add_argument(
        "--compare-workers",
        action="store_true",
        help="also time as many other new reports with their segments encoded one at a "
        "time (QUERY_WORKERS = 1), alternating with the others in the same process",
    )
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print("report_bench: evals/corpora/httpx is missing: run evals/fetch.sh httpx")
        return 2
    res = Results(machine=machine())
    tmp = tempfile.TemporaryDirectory(prefix="scry-report-bench-")
    with tmp, scrydb.open(CORPUS, db=Path(tmp.name) / "httpx.db") as ix:
        ix.sync()
        reports = make_reports(ix, args.reports)
        twins = make_reports(ix, args.reports, seed=6) if args.compare_workers else []
        ix.search("warm up the model and the vectors", k=10)
        short, long_, serial = [], [], []
        workers = local.QUERY_WORKERS
        rss0 = rss_peak_mb()
        for i, text in enumerate(reports):
            t0 = time.perf_counter()
            ix.search(f"how is request {i} retried after a timeout", k=10)
            short.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            ix.search(text, k=10)
            long_.append((time.perf_counter() - t0) * 1000)
            if twins:  # another new report, its segments encoded one at a time
                local.QUERY_WORKERS = 1
                try:
                    t0 = time.perf_counter()
                    ix.search(twins[i], k=10)
                    serial.append((time.perf_counter() - t0) * 1000)
                finally:
                    local.QUERY_WORKERS = workers
        rss1 = rss_peak_mb()
    chars = sum(len(t) for t in reports) / len(reports)
    p50 = pct(long_, 50)
    res.rows.append(
        Row("report", f"{chars:,.0f}-char report, new to the process, p50 (p90 {pct(long_, 90):.0f} ms)",
            p50, "ms", pct(short, 50), "a new short question p50", "<= 300 ms", p50 <= 300)
    )  # fmt: skip
    if serial:
        res.rows.append(
            Row("report", f"segments one at a time, p50 (p90 {pct(serial, 90):.0f} ms)",
                pct(serial, 50), "ms", p50, f"side by side ({workers} workers)", "", True)
        )  # fmt: skip
    res.rows.append(
        Row("report", f"peak RSS over {len(reports)} reports", rss1, "MB", rss0,
            "before them", "flat (ratio <= 1.05)", rss1 <= 1.05 * rss0)
    )  # fmt: skip
    res.extra["load_after"] = loadavg()
    print(table(res))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res.to_json(), indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
