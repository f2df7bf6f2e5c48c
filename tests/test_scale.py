"""Scale: a first lexical index of a synthetic repository of many files, in a process of
its own, at two sizes (10,000 and 30,000 files; 10,000 and 100,000 with ``--slow``):
the work grows linearly (no quadratic step in walk, diff, write or no-op sync) and so
does memory, by a bounded amount per file (no file's text is kept after it is written).

Ratios between two sizes measured in one run, never absolute times (CONTRIBUTING.md);
the figures are printed (``-s``) and recorded in RELIABILITY.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import slow_run
from synth_repo import write_synth

pytestmark = pytest.mark.slow

SIZES = (10_000, 100_000) if slow_run() else (10_000, 30_000)
#: Functions per file: files of about 1.2 KB, so memory that grew with the bytes read
#: (a parser keeping every file's text) shows up against the per-file bound.
FUNCS = 4
#: Linear growth may cost this much more than the size ratio (cache misses, a deeper
#: B-tree, a busy CI machine); a quadratic step costs the size ratio again.
SLACK = 1.8
#: Peak memory may grow by at most this much per extra file (paths, stats and the
#: bounded identifier caches; measured ~1.3 KB from 10k to 30k files).
BYTES_PER_FILE = 2048

CHILD = textwrap.dedent(
    """
    import json, sys, time
    import scrydb

    def peak_mb():
        # VmHWM: this process image's own peak (ru_maxrss would include the parent's
        # peak, inherited at fork).
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    root, db = sys.argv[1], sys.argv[2]
    with scrydb.open(root, db=db) as ix:
        t0 = time.perf_counter()
        rep = ix.sync(embed=False)
        t1 = time.perf_counter()
        again = ix.sync(embed=False)
        t2 = time.perf_counter()
        files = ix.store.scalar("SELECT count(*) FROM files")
        chunks = ix.store.scalar("SELECT count(*) FROM chunks")
        hit = ix.search("handle_7 retries", k=3, mode="lexical")[0].symbol
    print(json.dumps({
        "files": files, "chunks": chunks, "first": t1 - t0, "noop": t2 - t1,
        "scan": rep.seconds_scan, "lexical": rep.seconds_lexical,
        "changed": again.changed, "hit": hit,
        "peak_mb": peak_mb(),
    }))
    """
)


def _measure(base: Path, n: int) -> dict[str, float]:
    root = write_synth(base / f"r{n}", n, funcs=FUNCS)
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(base / f"r{n}.db")],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


@pytest.mark.timeout(3600)
def test_index_time_and_memory_grow_linearly(tmp_path: Path) -> None:
    small_n, big_n = SIZES
    small = _measure(tmp_path, small_n)
    big = _measure(tmp_path, big_n)
    print(f"\nscale {small_n}: {small}\nscale {big_n}: {big}")
    for n, m in ((small_n, small), (big_n, big)):
        assert m["files"] == n and m["chunks"] == n * FUNCS and not m["changed"]
        assert m["hit"] == "handle_7"
    ratio = big_n / small_n
    assert big["first"] / small["first"] < ratio * SLACK, (small, big)
    assert (big["noop"] + 0.05) / (small["noop"] + 0.05) < ratio * SLACK, (small, big)
    grown = (big["peak_mb"] - small["peak_mb"]) * 1024 * 1024
    assert grown / (big_n - small_n) < BYTES_PER_FILE, (small, big)
