"""Sections 5 and 6: the CLI as a fresh process, and memory (peak RSS, bytes per chunk)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import Results, bench_env, median, run_json

#: Fresh processes timed per CLI case (the median is reported).
COLD_RUNS = 3


def _scry(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, bool, int]:
    """(seconds, torch imported?, exit code) of one ``scry`` process."""
    code = (
        "import sys, atexit, os\n"
        "atexit.register(lambda: os.write(2, b'\\nBENCH-TORCH=%d\\n' % ('torch' in sys.modules)))\n"
        "from scrydb.cli import main\n"
        "sys.argv = ['scry'] + sys.argv[1:]\n"
        "main()\n"
    )
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    secs = time.perf_counter() - t0
    return secs, "BENCH-TORCH=1" in out.stderr, out.returncode


def cold_start(res: Results, work: Path, root: Path, db: Path, queries: list[str]) -> None:
    """Section 5: ``scry search`` as a fresh process on an existing index."""
    env = bench_env(work)
    sec = "cli"
    bare = median(
        _timed_proc([sys.executable, "-c", "import numpy"], env, root) for _ in range(COLD_RUNS)
    )
    res.add(sec, "reference: python -c 'import numpy'", bare, "s")
    base = ["search", "--db", str(db), "-n", "10"]
    q_lex = queries[0]
    runs = [_scry([*base, "--mode", "lexical", q_lex], env, root) for _ in range(COLD_RUNS)]
    s = median(r[0] for r in runs)
    torch = any(r[1] for r in runs)
    res.add(
        sec,
        "scry search --mode lexical",
        s,
        "s",
        bare,
        "python+numpy",
        target="<= 1.0 s, no torch",
        ok=s <= 1.0 and not torch,
        note=f"torch {'imported' if torch else 'not imported'}",
    )
    _scry([*base, queries[1]], env, root)  # caches the query vector
    runs = [_scry([*base, queries[1]], env, root) for _ in range(COLD_RUNS)]
    s = median(r[0] for r in runs)
    torch = any(r[1] for r in runs)
    res.add(
        sec,
        "scry search, cached query vector",
        s,
        "s",
        bare,
        "python+numpy",
        target="<= 1.0 s, no torch",
        ok=s <= 1.0 and not torch,
        note=f"torch {'imported' if torch else 'not imported'}",
    )
    runs = [_scry([*base, q], env, root) for q in queries[2 : 2 + COLD_RUNS]]
    s = median(r[0] for r in runs)
    torch = any(r[1] for r in runs)
    res.add(
        sec,
        "scry search, new query (full path)",
        s,
        "s",
        bare,
        "python+numpy",
        target="as short as possible",
        note=f"torch {'imported' if torch else 'not imported'}",
    )
    env_t = dict(env, SCRY_QUERY_ENCODER="torch")
    runs = [_scry([*base, q + " (torch)"], env_t, root) for q in queries[2 : 2 + 1]]
    res.add(
        sec,
        "  same with SCRY_QUERY_ENCODER=torch",
        runs[0][0],
        "s",
        bare,
        "python+numpy",
        note="sentence-transformers path",
    )


def _timed_proc(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=True)
    return time.perf_counter() - t0


def build_scale(
    res: Results, work: Path, label: str, root: Path, with_model: bool
) -> dict[str, Any]:
    """Index a scale tree in a worker process (synthetic vectors; the real model loaded
    too when ``with_model``) and report its peak RSS and size."""
    db = work / f"{label}.db"
    for p in work.glob(f"{label}.db*"):
        p.unlink()
    args = ["index", str(root), str(db)] + (["--model"] if with_model else [])
    out = run_json(args, env=bench_env(work))
    out["db"] = db
    res.add(
        "build",
        f"index {label}: {out['chunks']} chunks, {out['vectors']} vectors",
        out["seconds"],
        "s",
        note="synthetic vectors",
    )
    return out


def memory(
    res: Results,
    work: Path,
    label: str,
    built: dict[str, Any],
    root: Path,
    queries: list[str],
    model_rss: float | None,
) -> None:
    """Section 6: peak RSS indexing and serving; index bytes per chunk."""
    sec = "memory"
    if model_rss is not None:
        res.add(
            sec,
            f"peak RSS indexing {built['chunks'] // 1000}k chunks (model loaded)",
            built["rss_mb"],
            "MB",
            model_rss,
            "model alone",
            target="<= 1500 MB",
            ok=built["rss_mb"] <= 1500,
        )
    qf = work / "queries.json"
    qf.write_text(json.dumps(queries))
    served = run_json(["serve", str(root), str(built["db"]), str(qf)], env=bench_env(work))
    res.add(
        sec,
        f"peak RSS serving @{label} ({2 * len(queries)} queries)",
        served["rss_mb"],
        "MB",
        served["matrix_mb"],
        "float32 matrix",
        note=f"torch {'imported' if served['torch'] else 'not imported'}",
    )
    bytes_per = built["db_bytes"] / built["chunks"]
    text = built["text_bytes"] / built["chunks"]
    limit = 2 * text + 1700
    res.add(
        sec,
        f"index bytes per chunk @{label}",
        bytes_per,
        "B",
        limit,
        "2 x text + 1.7 KB",
        target="ratio <= 1",
        ok=bytes_per <= limit,
        note=f"mean chunk text {text:.0f} B",
    )
