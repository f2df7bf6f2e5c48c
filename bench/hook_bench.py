"""The Claude Code hook's added latency (issue 45): what one ``python -m scrydb.install.hook
pre-tool-use`` process costs before the agent's Grep runs, on a warm index.

    python bench/hook_bench.py                # about a minute on 2 cores
    python bench/hook_bench.py --runs 31 --copies 8

The corpus is this checkout's tracked Python files, ``--copies`` times over, in a git
repository in a temp directory, indexed with synthetic vectors that carry the packaged
model's id (``common.UnitVectors``: the dense leg costs what it costs with real vectors).
The queries scry would answer are Grep patterns of this code base's own names and phrases.
The first answering hook starts the warm helper (``scrydb.install.hookd``) that the later
ones ask; one case turns it off (``SCRY_HOOK_HELPER=0``: every hook imports the search stack
itself). Per case, one warm-up run (which also byte-compiles the modules, into the scratch
directory, as an installed scrydb has them), then ``--runs`` timed processes fed a
recorded PreToolUse payload, the cases taking turns; the hook's whole wall time is what
it adds (the tool itself runs unchanged). References measured in the same run: a bare
interpreter (``python -c pass``), the literal tool (``grep -rn PATTERN .``) and the same
lexical search from the CLI (``scry search --mode lexical``, a fresh process each time).
``--baseline DIR`` adds the answering cases run from another copy of the package (a
directory holding ``scrydb/``, e.g. ``git archive COMMIT scrydb | tar -x -C DIR``), taking
turns with the others: a before/after under the same load.
Prints a table and writes ``bench/out/hook.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import REPO, Results, UnitVectors, bench_env, loadavg, machine, pct, table

#: Grep patterns the hook searches for (names and phrases of this code base).
PATTERNS = (
    "default_db_path",
    "fit_budget",
    "QueryVectors",
    "readiness",
    "background indexer",
    "writer lock",
    "query vector cache",
    "learned fusion weights",
)
#: Patterns searched once before the timing (their query vectors are cached): the
#: dense leg joins the lexical one for these.
CACHED = ("vector cache", "watcher debounce", "hook limit", "chunk windows")
#: A pattern the hook passes through (a regular expression): its floor cost.
REGEX = r"def\s+\w+\(self"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=15, help="timed processes per case")
    ap.add_argument("--copies", type=int, default=4, help="copies of the checkout's code")
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "hook.json"))
    ap.add_argument(
        "--baseline", metavar="DIR", help="also time the hook from DIR/scrydb (before/after)"
    )
    args = ap.parse_args(argv)
    baseline = Path(args.baseline).resolve() if args.baseline else None
    if baseline is not None and not (baseline / "scrydb" / "install" / "hook.py").is_file():
        ap.error(f"--baseline {args.baseline}: no scrydb/install/hook.py there")
    work = Path(tempfile.mkdtemp(prefix="scry-hook-bench-"))
    try:
        res = run(work, args.runs, args.copies, baseline)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(
        f"machine: {res.machine['cpu']}, {res.machine['cores']} cores; load "
        f"{res.machine['load_start']} -> {res.machine['load_end']}"
    )
    print(table(res))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res.to_json(), indent=1, default=str))
    print(f"\nJSON: {out}")
    return 1 if any(r.ok is False for r in res.rows) else 0


@dataclass
class Case:
    """One kind of process timed: a hook call (``payload`` set) or a reference command."""

    name: str
    command: Callable[[int], list[str]]
    payload: Callable[[int], dict[str, Any]] | None = None
    cwd: Path | None = None
    expect: str | None = None  #: what an answered hook call prints
    env: dict[str, str] | None = None  #: the environment, when not the bench's own
    times: list[float] = field(default_factory=list)
    answered: int = 0


def run(work: Path, runs: int, copies: int, baseline: Path | None = None) -> Results:
    """Build the corpus and index, then time every case, round-robin (a load that comes and
    goes on a shared machine then falls on every case alike)."""
    from scrydb.install import hook

    (work / "cache").mkdir()
    os.environ["SCRY_CACHE_DIR"] = str(work / "cache")
    os.environ["SCRY_SHARED_CACHE"] = "0"
    res = Results(machine=machine())
    print(f"hook bench: {res.machine['cpu']}, load {res.machine['load_start']}", flush=True)
    root = corpus(work / "code", copies)
    env = bench_env(work)
    # Byte-compiled modules, as an installed scrydb has them (an environment that sets
    # PYTHONDONTWRITEBYTECODE would otherwise compile every module in every process);
    # kept in the scratch directory, not the checkout.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    chunks = index(root)
    _cache_query_vectors(root, CACHED)
    unindexed = work / "unindexed"
    unindexed.mkdir()
    subprocess.run(["git", "init", "-q", str(unindexed)], check=True)
    res.extra.update(chunks=chunks, copies=copies, runs=runs, limit_s=hook.LIMIT_S)
    print(f"  corpus: {chunks} chunks ({copies} copies of this checkout's Python)", flush=True)
    cases = _cases(root, unindexed, env, work, baseline)
    if baseline is not None:
        res.extra["baseline"] = str(baseline)
    for i in range(runs + 1):  # the first round warms up
        for c in cases:
            data = c.payload(i) if c.payload else None
            stdin = json.dumps(data) if data else None
            secs, out = _run(c.command(i), stdin, c.cwd or root, c.env or env)
            if i:
                c.times.append(secs)
                c.answered += c.expect is not None and c.expect in out
    _report(res, cases, runs, work)
    res.machine["load_end"] = loadavg()
    return res


def _cases(
    root: Path, unindexed: Path, env: dict[str, str], work: Path, baseline: Path | None
) -> list[Case]:
    """What is timed: the references, the hook's cases and (``baseline``) the old hook's."""

    def hook_cmd(mode: str) -> Callable[[int], list[str]]:
        return lambda i: [
            sys.executable,
            "-m",
            "scrydb.install.hook",
            "pre-tool-use",
            "--mode",
            mode,
        ]

    def grep(
        patterns: tuple[str, ...], cwd: Path = root, fresh: bool = False
    ) -> Callable[[int], dict[str, Any]]:
        return lambda i: _payload(
            {"pattern": patterns[i % len(patterns)], "output_mode": "content"},
            cwd,
            f"bench-{i}" if fresh else "bench",
        )

    lexical = [sys.executable, "-m", "scrydb.cli", "search", "--mode", "lexical", "--no-sync"]
    cases = [
        Case("reference: python -c pass", lambda i: [sys.executable, "-c", "pass"]),
        Case("reference: grep -rn PATTERN . (the literal tool)",
             lambda i: ["grep", "-rn", PATTERNS[i % len(PATTERNS)], "."]),
        Case("reference: scry search --mode lexical (a fresh CLI)",
             lambda i: [*lexical, PATTERNS[i % len(PATTERNS)]]),
        Case("hook: pass-through (a regular expression)", hook_cmd("augment"),
             lambda i: _payload({"pattern": REGEX}, root, "bench")),
        Case("hook: augment, lexical (no cached vector)", hook_cmd("augment"), grep(PATTERNS),
             expect="additionalContext"),
        Case("hook: redirect, lexical (deny with the hits)", hook_cmd("redirect"),
             grep(PATTERNS, fresh=True), expect='"deny"'),
        Case("hook: augment, lexical + dense (cached vector)", hook_cmd("augment"), grep(CACHED),
             expect="additionalContext"),
        Case("hook: no index (fails open)", hook_cmd("augment"), grep(PATTERNS, unindexed),
             cwd=unindexed),
        Case("hook: augment, lexical, no warm helper (SCRY_HOOK_HELPER=0)", hook_cmd("augment"),
             grep(PATTERNS), expect="additionalContext", env=dict(env, SCRY_HOOK_HELPER="0")),
    ]  # fmt: skip
    if baseline is not None:
        # The same hook from the other copy of the package (its own byte-compiled cache).
        old = dict(env, PYTHONPATH=str(baseline), PYTHONPYCACHEPREFIX=str(work / "pycache-base"))
        cases += [
            Case("baseline: augment, lexical", hook_cmd("augment"), grep(PATTERNS),
                 expect="additionalContext", env=old),
            Case("baseline: augment, lexical + dense", hook_cmd("augment"), grep(CACHED),
                 expect="additionalContext", env=old),
        ]  # fmt: skip
    return cases


def _report(res: Results, cases: list[Case], runs: int, work: Path) -> None:
    """Stop the warm helpers the hooks started; one row per case."""
    from scrydb.install import hook, hookd

    helpers = sum(hookd.stop(p) for p in (work / "cache" / "hooks").glob("helper-*.sock"))
    res.extra["helpers_stopped"] = helpers
    ref = pct(cases[0].times, 50) * 1e3
    limit_ms = hook.LIMIT_S * 1e3
    for c in cases:
        p50, p90 = pct(c.times, 50) * 1e3, pct(c.times, 90) * 1e3
        if c.payload is None:
            res.add("hook", c.name, p50, "ms", note=f"p90 {p90:.0f} ms")
            continue
        # An answer that comes after the hook's own limit is never seen: pure cost.
        answers = c.expect is not None
        target = f"p90 < {limit_ms:.0f} ms (the limit)" if answers else ""
        note = f"p90 {p90:.0f} ms" + (f"; answered {c.answered}/{runs}" if answers else "")
        ok = p90 < limit_ms if answers else None
        res.add("hook", c.name, p50, "ms", ref, "python -c pass", target, ok, note)


def corpus(dest: Path, copies: int) -> Path:
    """This checkout's tracked Python files, ``copies`` times, in a git repository."""
    files = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    for c in range(copies):
        for rel in files:
            src = REPO / rel
            if src.is_file():
                out = dest / f"copy{c}" / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, out)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    return dest


def index(root: Path) -> int:
    """Index ``root`` at its default place with synthetic vectors; its chunk count."""
    import scrydb

    with scrydb.open(root, embedder=UnitVectors()) as ix:
        ix.sync()
        return ix.status(check_stale=False, check_git=False).chunks


def _cache_query_vectors(root: Path, patterns: tuple[str, ...]) -> None:
    """Search each pattern once, as ``scry search`` would: its query vector is cached."""
    import scrydb

    with scrydb.open(root, embedder=UnitVectors()) as ix:
        for p in patterns:
            ix.search(p, k=5)


def _payload(tool_input: dict[str, Any], cwd: Path, session: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Grep",
        "tool_input": tool_input,
        "tool_use_id": "toolu_bench",
    }


def _run(cmd: list[str], stdin: str | None, cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """(wall seconds, stdout) of one process."""
    t0 = time.perf_counter()
    out = subprocess.run(
        cmd, input=stdin, cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    return time.perf_counter() - t0, out.stdout


if __name__ == "__main__":
    sys.exit(main())
