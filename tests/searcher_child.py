"""A user who keeps searching: the child process of tests/test_concurrency.py.

``python tests/searcher_child.py DB STOPFILE SEED`` runs the real ``scry`` entry point
in a loop (search with and without its automatic sync, fused and lexical, locate,
status, related) until STOPFILE exists, and prints one JSON line: how many commands
ran, and every one that failed or said anything about a lock or an internal error.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys

from scrydb.cli import main

QUERIES = ["retry backoff", "handle request", "MARKER", "parse the manifest", "tenant_ledger"]
#: Words that must never reach a user.
BAD = ("locked", "traceback", "internal error", "disk i/o", "malformed")


def run(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0
    return code, err.getvalue()


def main_loop() -> None:
    db, stop, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    ran = 0
    problems: list[str] = []
    while not os.path.exists(stop):
        q = rng.choice(QUERIES)
        args = rng.choice(
            [
                ["search", q, "--json"],  # syncs first unless someone else is writing
                ["search", q, "--no-sync"],
                ["search", q, "--no-sync", "--mode", "lexical"],
                ["locate", "MARKER_", "--no-sync"],
                ["status", "--fast"],
                ["related", f"core/sub0/mod_0.py:{rng.randint(1, 20)}", "--no-sync"],
            ]
        )
        code, err = run([*args, "--db", db])
        ran += 1
        low = err.lower()
        # Early on, before the first index has written anything: "no index yet".
        allowed_2 = any(m in low for m in ("not an indexed file", "no index of", "no index at"))
        if code not in (0, 1) and not (code == 2 and allowed_2):
            problems.append(f"{args}: exit {code}: {err.strip()[-300:]}")
        elif any(b in low for b in BAD):
            problems.append(f"{args}: {err.strip()[-300:]}")
    print(json.dumps({"ran": ran, "problems": problems}))


if __name__ == "__main__":
    main_loop()
