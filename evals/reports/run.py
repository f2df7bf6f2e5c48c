#!/usr/bin/env python3
"""Score scry on real bug reports: each issue's whole text is the query, each case is
searched in its repository at the fix's base commit (see evals/README.md, "Bug reports").

    python evals/reports/run.py --subset ci            # 10 astroid cases
    python evals/reports/run.py --subset sample --legs # 32 cases of 3 repositories
    python evals/reports/run.py --split test --legs    # the held-out half, three legs
    python evals/reports/run.py --json out.json        # everything, report saved

For each repository, cases run in the order of their base commits. One working tree per
repository (``--work-dir``) is moved from commit to commit (``git archive`` of the commit,
only changed files rewritten, removed ones deleted, data folders left out: ``EXCLUDE``),
and one index per repository (``--db-dir``) is synced after each move, so a nearby commit
costs only its changed files, and their vectors mostly come from the shared vector cache.

Metrics (LocAgent, arXiv 2503.09089): the chunk hits (``--depth`` of them) are folded into
a ranked list of files and of functions (each hit stands for the definition it overlaps
most, innermost on a tie). File Acc@k = 1 when every label file is in the first k files;
function Acc@k likewise over the label functions (cases with at least one); MRR = 1/rank
of the first label file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import labels as L
from make_manifest import DATASET_COMMIT, DATASET_REPO, HINTS, mirror_dir, text_sha

HERE = Path(__file__).resolve().parent
EVALS = HERE.parent
MANIFEST = HERE / "manifest.json"
DEFAULT_WORK = EVALS / "corpora" / "reports"
DEFAULT_DBS = EVALS / ".cache" / "reports"
#: data folders left out of each working tree (data files and test fixtures by the
#: thousand, which would cost most of the indexing and answer no bug report)
EXCLUDE = {
    "sqlfluff/sqlfluff": ("test/fixtures/",),
    "pvlib/pvlib-python": ("pvlib/data/",),
    "pydicom/pydicom": ("pydicom/data/", "src/pydicom/data/"),
}
#: named subsets. ci: ten astroid cases from one stretch of months (base commits 2022-06 to
#: 2023-02), small enough to index and score in minutes; sample: ci, marshmallow's six
#: (dev) and pvlib's sixteen from 2023 (base commits 2023-05 to 2023-09) -- the 32 cases
#: of the first numbers in evals/README.md
CI_SUBSET = (
    "pylint-dev__astroid-1196",
    "pylint-dev__astroid-1614",
    "pylint-dev__astroid-1616",
    "pylint-dev__astroid-1719",
    "pylint-dev__astroid-1866",
    "pylint-dev__astroid-1903",
    "pylint-dev__astroid-1962",
    "pylint-dev__astroid-1959",
    "pylint-dev__astroid-1978",
    "pylint-dev__astroid-2015",
)
PVLIB_SAMPLE = (1719, 1738, 1740, 1623, 1395, 1739, 1737, 1707, 1296, 1666, 1764, 1782, 1832)
PVLIB_SAMPLE += (1852, 1822, 1854)
SAMPLE_SUBSET = (
    *CI_SUBSET,
    *(f"marshmallow-code__marshmallow-{n}" for n in (1524, 1343, 1359, 1702, 1810, 2123)),
    *(f"pvlib__pvlib-python-{n}" for n in PVLIB_SAMPLE),
)
SUBSETS = {"ci": CI_SUBSET, "sample": SAMPLE_SUBSET}
LEGS = ("fused", "lexical", "dense")
KS_FILE = (1, 5, 10)
KS_FUNC = (5, 10)


def load_cases(
    split: str, repos: Sequence[str], ids: Sequence[str], limit: int | None
) -> list[dict[str, Any]]:
    cases = json.loads(MANIFEST.read_text(encoding="utf-8"))["cases"]
    if split != "all":
        cases = [c for c in cases if c["split"] == split]
    if repos:
        cases = [c for c in cases if any(r in c["repo"] for r in repos)]
    if ids:
        cases = [c for c in cases if c["id"] in ids]
    if limit:
        cases = cases[:limit]
    return cases


def issue_text(dataset: Path, iid: str) -> str:
    """The issue text of a case, from the dataset's git directory, checked against the
    manifest's hash by the caller."""
    proj, pr = iid.rsplit("-", 1)
    raw = subprocess.run(
        [
            "git",
            "--git-dir",
            str(dataset),
            "cat-file",
            "blob",
            f"{DATASET_COMMIT}:projects/{proj}/PR{pr}/bug_description.txt",
        ],
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", "surrogateescape")
    return raw[: raw.index(HINTS)]


def has_commit(gd: Path, commit: str) -> bool:
    """Whether the git directory holds ``commit`` (a snapshot may lack an old one)."""
    probe = ["git", "--git-dir", str(gd), "cat-file", "-e", f"{commit}^{{commit}}"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def _blob_id(body: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()


def materialize(gd: Path, commit: str, root: Path, exclude: Sequence[str]) -> dict[str, int]:
    """Make ``root`` hold exactly the files of ``commit`` (less ``exclude`` prefixes, links
    and submodules): unchanged files are not touched, so their stat still matches the
    index. A blob the git directory lacks (a snapshot may leave out its largest files) is
    counted in ``absent`` and left out."""
    listing = subprocess.run(
        ["git", "--git-dir", str(gd), "ls-tree", "-r", "-z", commit],
        check=True,
        capture_output=True,
    ).stdout
    want: dict[str, str] = {}
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, path_b = entry.split(b"\t", 1)
        mode, kind, sha = meta.decode().split()
        path = path_b.decode("utf-8", "surrogateescape")
        if kind != "blob" or mode == "120000" or path.startswith(tuple(exclude)):
            continue
        want[path] = sha
    root.mkdir(parents=True, exist_ok=True)
    todo = []
    for path, sha in want.items():
        dest = root / path
        if dest.is_file() and not dest.is_symlink() and _blob_id(dest.read_bytes()) == sha:
            continue
        todo.append(path)
    keep = set(want)
    written = absent = 0
    if todo:
        proc = subprocess.Popen(
            ["git", "--git-dir", str(gd), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        feed = "".join(f"{want[p]}\n" for p in todo).encode()
        # fed from a thread: a large batch would fill both pipes

        def write() -> None:
            assert proc.stdin is not None
            proc.stdin.write(feed)
            proc.stdin.close()

        t = threading.Thread(target=write)
        t.start()
        for path in todo:
            header = proc.stdout.readline().split()
            if len(header) != 3:  # "<sha> missing"
                absent += 1
                keep.discard(path)
                continue
            body = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            dest = root / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.is_symlink() or dest.is_file():
                dest.unlink()
            elif dest.is_dir():
                shutil.rmtree(dest)
            dest.write_bytes(body)
            written += 1
        t.join()
        proc.wait()
    removed = 0
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if rel not in keep:
                p.unlink()
                removed += 1
        for name in dirnames:
            d = Path(dirpath) / name
            if not d.is_symlink() and d.is_dir() and not any(d.iterdir()):
                d.rmdir()
    return {"files": len(keep), "written": written, "removed": removed, "absent": absent}


def score(
    case: dict[str, Any], hits: list[tuple[str, int, int]], root: Path, defs_cache: dict
) -> dict[str, Any]:
    """Per-case metrics from a ranked hit list."""
    files = L.file_ranking(hits)
    defs_of: dict[str, list[L.Definition]] = {}
    for path in files:
        if path.endswith(".py"):
            if path not in defs_cache:
                try:
                    src = (root / path).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    src = ""
                defs_cache[path] = L.definitions(src)
            defs_of[path] = defs_cache[path]
    funcs = L.function_ranking(hits, defs_of)
    out: dict[str, Any] = {f"file_acc@{k}": L.accuracy_at(files, case["files"], k) for k in KS_FILE}
    out |= {f"func_acc@{k}": L.accuracy_at(funcs, case["functions"], k) for k in KS_FUNC}
    out["mrr"] = L.reciprocal_rank(files, case["files"])
    ranks = [files.index(f) + 1 if f in files else None for f in case["files"]]
    out["file_ranks"] = ranks
    out["top_files"] = files[:5]
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    keys = [f"file_acc@{k}" for k in KS_FILE] + [f"func_acc@{k}" for k in KS_FUNC] + ["mrr"]
    out: dict[str, Any] = {"n": len(rows)}
    for key in keys:
        vals = [r[key] for r in rows if r.get(key) is not None]
        out[key] = round(sum(vals) / len(vals), 4) if vals else None
    out["n_func"] = sum(1 for r in rows if r.get("func_acc@5") is not None)
    return out


def render(report: dict[str, Any]) -> str:
    cols = ["file_acc@1", "file_acc@5", "file_acc@10", "func_acc@5", "func_acc@10", "mrr"]
    head = f"{'group':<30}{'leg':<9}{'n':>4}{'n_fn':>5}  " + "".join(f"{c:>12}" for c in cols)
    lines = [head, "-" * len(head)]
    for group, legs in report["summary"].items():
        for leg, s in legs.items():
            cells = "".join(f"{'-' if s[c] is None else format(s[c], '.3f'):>12}" for c in cols)
            lines.append(f"{group:<30}{leg:<9}{s['n']:>4}{s['n_func']:>5}  {cells}")
    t = report["timing"]
    lines.append("")
    lines.append(
        f"{t['cases']} cases at {t['commits']} commits in {t['total_s']:.0f} s: "
        f"sync {t['sync_s']:.0f} s (median {t['sync_median_s']:.1f} s per commit), "
        f"search p50 {t['search_p50_ms']:.0f} ms; {t['total_s'] / max(1, t['cases']):.1f} s per case"
    )
    if report.get("skipped"):
        lines.append(
            f"skipped (base commit not in the git directory): {', '.join(report['skipped'])}"
        )
    return "\n".join(lines)


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=["all", "dev", "test"], default="all")
    ap.add_argument("--repo", action="append", default=[], help="only this repository (part)")
    ap.add_argument("--id", action="append", default=[], help="only this case id")
    ap.add_argument(
        "--subset",
        choices=sorted(SUBSETS),
        help="a named subset (ci: 10 astroid cases; sample: 32 cases of 3 repositories)",
    )
    ap.add_argument("--limit", type=int, default=None, help="the first N selected cases")
    ap.add_argument("--legs", action="store_true", help="also the lexical and dense legs")
    ap.add_argument("--depth", type=int, default=50, help="chunk hits per search")
    ap.add_argument("--work-dir", type=Path, default=DEFAULT_WORK)
    ap.add_argument("--db-dir", type=Path, default=DEFAULT_DBS)
    ap.add_argument("--config", default=None, help="a scry config file for every corpus")
    ap.add_argument("--json", type=Path, default=None, help="write the full report here")
    ap.add_argument(
        "--cases-out",
        type=Path,
        default=None,
        help="append each case's row here (JSON lines) as soon as it is scored",
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="cases already in --cases-out are not run again; their rows count in the summary",
    )
    ap.add_argument("--quiet", action="store_true")
    return ap.parse_args()


def _load_done(path: Path | None, legs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--resume``: the rows already in ``--cases-out`` that scored every leg asked for."""
    done: dict[str, dict[str, Any]] = {}
    if path is not None and path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if set(legs) <= set(row["legs"]):
                    done[row["id"]] = row
    return done


def _summary(
    results: list[dict[str, Any]], repos: Sequence[str], legs: Sequence[str]
) -> dict[str, Any]:
    """Metrics per group (all, each half, each repository) and leg."""
    groups: dict[str, list[dict[str, Any]]] = {"all": results}
    for half in ("dev", "test"):
        rows = [r for r in results if r["split"] == half]
        if rows:
            groups[half] = rows
    for repo in repos:
        groups[repo] = [r for r in results if r["repo"] == repo]
    return {
        g: {leg: summarise([r["legs"][leg] for r in rows]) for leg in legs}
        for g, rows in groups.items()
    }


def _search_case(
    ix: Any,
    c: dict[str, Any],
    legs: Sequence[str],
    depth: int,
    root: Path,
    defs_cache: dict[str, list[L.Definition]],
    searches: list[float],
) -> dict[str, Any]:
    """One case's row: each leg's search of its text, scored (search times appended)."""
    row: dict[str, Any] = {
        "id": c["id"],
        "repo": c["repo"],
        "split": c["split"],
        "base_commit": c["base_commit"],
        "legs": {},
    }
    for leg in legs:
        ts = time.perf_counter()
        res = ix.search(c["text"], k=depth, mode=leg)
        searches.append(time.perf_counter() - ts)
        hits = [(h.path, h.start_line, h.end_line) for h in res]
        row["legs"][leg] = score(c, hits, root, defs_cache)
    return row


def main() -> int:
    args = _args()

    import scrydb

    ids = list(args.id) + list(SUBSETS.get(args.subset or "", ()))
    cases = load_cases(args.split, args.repo, ids, args.limit)
    if not cases:
        print("no case selected", file=sys.stderr)
        return 2
    legs = LEGS if args.legs else ("fused",)
    dataset = mirror_dir(DATASET_REPO)
    say = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    for c in cases:
        text = issue_text(dataset, c["id"])
        if text_sha(text) != c["text_sha256"]:
            raise SystemExit(f"{c['id']}: issue text does not match the manifest's hash")
        c["text"] = text
    by_repo: dict[str, list[dict[str, Any]]] = {}
    for c in sorted(cases, key=lambda c: (c["repo"], c["base_date"], c["id"])):
        by_repo.setdefault(c["repo"], []).append(c)

    results: list[dict[str, Any]] = []
    done = _load_done(args.cases_out, legs) if args.resume else {}
    skipped: list[str] = []  # cases whose base commit the git directory lacks
    syncs: list[float] = []
    searches: list[float] = []
    t0 = time.perf_counter()
    args.db_dir.mkdir(parents=True, exist_ok=True)
    for repo, rcases in by_repo.items():
        gd = mirror_dir(repo)
        root = args.work_dir / repo.replace("/", "+")
        db = args.db_dir / f"{repo.replace('/', '+')}.db"
        current = None
        defs_cache: dict[str, list[L.Definition]] = {}
        for c in rcases:
            if c["id"] in done:
                results.append(done[c["id"]])
                continue
            if c["base_commit"] != current and not has_commit(gd, c["base_commit"]):
                say(f"  {c['id']}: skipped, {repo}'s git directory lacks {c['base_commit'][:10]}")
                skipped.append(c["id"])
                continue
            if c["base_commit"] != current:
                ts = time.perf_counter()
                moved = materialize(gd, c["base_commit"], root, EXCLUDE.get(repo, ()))
                with scrydb.open(root, db=db, config=args.config) as ix:
                    rep = ix.sync()
                syncs.append(time.perf_counter() - ts)
                current, defs_cache = c["base_commit"], {}
                say(
                    f"{repo} @ {current[:10]} ({c['base_date'][:10]}): {moved['written']} files "
                    f"written, {moved['removed']} removed; sync {rep.seconds:.1f} s, "
                    f"{rep.vectors_from_cache} vectors from the cache; {syncs[-1]:.1f} s in all"
                )
            with scrydb.open(root, db=db, config=args.config) as ix:
                row = _search_case(ix, c, legs, args.depth, root, defs_cache, searches)
            f = row["legs"]["fused"]
            say(
                f"  {c['id']}: file ranks {f['file_ranks']} (of {c['files']}); "
                f"func acc@10 {f['func_acc@10']}"
            )
            results.append(row)
            if args.cases_out:
                with args.cases_out.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")

    summary = _summary(results, list(by_repo), legs)
    total = time.perf_counter() - t0
    report = {
        "manifest": str(MANIFEST.relative_to(EVALS.parent)),
        "depth": args.depth,
        "summary": summary,
        "timing": {
            "cases": len(results),
            "commits": len(syncs),
            "total_s": round(total, 1),
            "sync_s": round(sum(syncs), 1),
            "sync_median_s": round(statistics.median(syncs), 2) if syncs else 0.0,
            "search_p50_ms": round(statistics.median(searches) * 1000, 1) if searches else 0.0,
        },
        "skipped": skipped,
        "cases": results,
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
