"""The index file and every SQL statement scrydb runs: the only package that speaks SQL.

:mod:`~scrydb.store.db` holds :class:`Store` (the open file and its small helpers);
:mod:`~scrydb.store.schema` the schema and its migrations; :mod:`~scrydb.store.sqlitefile`
owning an SQLite file (opening, the WAL switch, the application-id check, setting a
damaged file aside), shared with the per-user vector cache (:mod:`~scrydb.store.vcache`).
Named operations live one module per job: writes in ``lexwrite.py``, ``embwrite.py`` and
``nextvectors.py``; reads in ``files.py``, ``chunks.py``, ``lookup.py``, ``legs.py``,
``counts.py`` and ``vectors.py`` (the in-memory dense index).

This face re-exports what callers outside ``store/`` use; modules inside it import
from their siblings, never from here (an import-linter contract).
"""

from scrydb.store.db import (
    BUSY_TIMEOUT_MS,
    DamagedError,
    EngineProblem,
    IndexWriteError,
    Readiness,
    Store,
    damaged_error,
    friendly_errors,
    probe_engine,
    translate_error,
)
from scrydb.store.schema import (
    APPLICATION_ID,
    MIGRATIONS,
    SCHEMA_VERSION,
    schema_sql,
    scrydb_version,
)

__all__ = [
    "APPLICATION_ID",
    "BUSY_TIMEOUT_MS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "DamagedError",
    "EngineProblem",
    "IndexWriteError",
    "Readiness",
    "Store",
    "damaged_error",
    "friendly_errors",
    "probe_engine",
    "schema_sql",
    "scrydb_version",
    "translate_error",
]
