"""A sync that SIGKILLs itself at an exact point: the child process of the kill-point
tests in test_crash.py (``python tests/crash_child.py REPO DB POINT``).

POINT is ``count`` (run to the end and print how many SQL statements and COMMITs it
executed, and how long it took), ``stmt:N`` (die just before the N-th statement),
``commit:K`` (die just before the K-th COMMIT: the whole transaction is written to
the WAL but not committed), ``after:K`` (die at the first statement after the K-th
COMMIT) or ``timer:S`` (die S seconds in, wherever that is: inside SQLite, inside
the chunker, between two writes).

Small batches (16 files, 16 texts per transaction) give a small repository many
commit boundaries; the embedder is the deterministic fake (vectors from text hashes).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import apsw
from synth_repo import FakeEmbedder

import scrydb
from scrydb.sync import embedding as sync_embedding
from scrydb.sync import lexical as sync_lexical
from scrydb.sync import models as sync_models

EMBEDDER_ID = "fake:crash"
DIM = 16
BATCH = 16


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    repo, db, point = sys.argv[1], sys.argv[2], sys.argv[3]
    kind, _, arg = point.partition(":")
    sync_lexical.LEXICAL_BATCH_FILES = BATCH
    sync_embedding.EMBED_COMMIT = BATCH
    sync_models.EMBED_COMMIT = BATCH
    counts = {"statements": 0, "commits": 0}

    def tracer(_cursor: object, sql: str, _bindings: object) -> bool:
        counts["statements"] += 1
        is_commit = sql.lstrip()[:6].upper() == "COMMIT"
        if kind == "stmt" and counts["statements"] == int(arg):
            die()
        if kind == "commit" and is_commit and counts["commits"] + 1 == int(arg):
            die()
        if kind == "after" and counts["commits"] == int(arg):
            die()
        if is_commit:
            counts["commits"] += 1
        return True

    # Every connection this process opens is traced, from its first PRAGMA on.
    apsw.connection_hooks.append(lambda conn: setattr(conn, "exec_trace", tracer))
    if kind == "timer":
        t = threading.Timer(float(arg), die)
        t.daemon = True
        t.start()
    t0 = time.perf_counter()
    with scrydb.open(repo, db=db, embedder=FakeEmbedder(EMBEDDER_ID, dim=DIM)) as ix:
        rep = ix.sync()
    counts["seconds"] = time.perf_counter() - t0  # type: ignore[assignment]
    counts["pending"] = rep.pending
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
