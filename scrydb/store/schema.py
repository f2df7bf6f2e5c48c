"""The schema of an index file: its version, the migrations that keep a file's data across
versions, and bringing a file opened by :class:`~scrydb.store.db.Store` to this version
(or refusing it: another program's SQLite file, a newer scrydb's index, an old one opened
read-only)."""

from __future__ import annotations

import contextlib
import importlib.metadata
import time
from contextlib import AbstractContextManager
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import apsw

from scrydb.errors import IndexError_
from scrydb.store import sqlitefile

#: Bump on any change to schema.sql; a file with a newer version is refused.
SCHEMA_VERSION = 6
#: Statements that bring a file of schema N to N + 1 while keeping its data (above all
#: its vectors, which cost minutes to hours to recompute). An older file without a path
#: to SCHEMA_VERSION is rebuilt from nothing (the next sync says so in one line).
MIGRATIONS: dict[int, str] = {
    # 2: orphan vectors carry the time they lost their last chunk; symbol_names is kept
    # in step with symbols per transaction (version 1 could lag after a killed run).
    1: """
    ALTER TABLE embeddings ADD COLUMN orphaned_at REAL;
    INSERT OR IGNORE INTO symbol_names(name) SELECT DISTINCT norm FROM symbols;
    DELETE FROM symbol_names WHERE NOT EXISTS
        (SELECT 1 FROM symbols WHERE symbols.norm = symbol_names.name);
    """,
    # 3: chunks get a header vector beside the body's (derived by the next embedding phase).
    2: """
    ALTER TABLE chunks ADD COLUMN head_hash TEXT;
    ALTER TABLE chunks ADD COLUMN head_emb_id INTEGER;
    """,
    # 4: long chunks get window vectors (table chunk_windows, made by schema.sql).
    3: """
    ALTER TABLE chunks ADD COLUMN windows INTEGER;
    """,
    # 5: a vector records where it came from (the model, the shared cache, a seed).
    4: """
    ALTER TABLE embeddings ADD COLUMN origin INTEGER;
    """,
    # 6: the code graph's references (table refs, made by schema.sql; the chunker's new
    # version re-chunks every file, which fills it).
    5: "SELECT 1",
}
#: ``PRAGMA application_id`` of scrydb files ("SCRY"): tells our files from others.
APPLICATION_ID = 0x53435259


def scrydb_version() -> str:
    """The installed scrydb's version (written into the index; named when it is refused)."""
    try:
        return importlib.metadata.version("scrydb")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a source checkout
        return "unknown"


def schema_sql() -> str:
    """The text of schema.sql (shipped inside the package; a copy sits at the repo top)."""
    return resources.files("scrydb").joinpath("schema.sql").read_text(encoding="utf-8")


class Opening(Protocol):
    """What bringing a file to this version needs of the :class:`~scrydb.store.db.Store`
    being opened (a type, not an import: ``db.py`` imports this module)."""

    path: Path
    conn: apsw.Connection
    readonly: bool
    migrated_from: int | None
    rebuilt_from: int | None

    def scalar(self, sql: str, params: tuple[Any, ...] = ()) -> Any: ...

    def meta(self, key: str, default: str | None = None) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def transaction(self) -> AbstractContextManager[None]: ...


def init_when_free(store: Opening, exists: bool, busy_timeout_ms: int) -> None:
    """:func:`_check_and_init`, tried again for up to ``busy_timeout_ms`` while another
    process holds the file (:func:`~scrydb.store.sqlitefile.retry_while_busy`: two first
    indexes starting together would otherwise see "database is locked")."""
    sqlitefile.retry_while_busy(lambda: _check_and_init(store, exists), busy_timeout_ms)


def _check_and_init(store: Opening, exists: bool) -> None:
    conn = store.conn
    ident = sqlitefile.identity(conn)
    version = ident.user_version
    if exists:
        if ident.foreign(APPLICATION_ID):
            raise IndexError_(
                f"{store.path} is an SQLite file but not a scrydb index; pass another --db"
            )
        if version > SCHEMA_VERSION:
            raise IndexError_(_newer_message(store, version))
    if store.readonly:
        if version < SCHEMA_VERSION:
            raise IndexError_(
                f"index {store.path} has an old schema ({version}, this scrydb writes "
                f"{SCHEMA_VERSION}); run `scry index` to upgrade it"
            )
        return
    sqlitefile.use_wal(conn, store.path)
    conn.execute("PRAGMA foreign_keys=ON")
    if version == SCHEMA_VERSION:
        return
    with store.transaction():
        # Read again under the write lock: another process may have just done this.
        version = store.scalar("PRAGMA user_version")
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise IndexError_(_newer_message(store, version))
        if 0 < version < SCHEMA_VERSION:
            if all(v in MIGRATIONS for v in range(version, SCHEMA_VERSION)):
                for v in range(version, SCHEMA_VERSION):
                    conn.execute(MIGRATIONS[v])
                store.migrated_from = version
            else:
                _drop_all(store)
                store.rebuilt_from = version
        conn.execute(schema_sql())
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        store.set_meta("schema", str(SCHEMA_VERSION))
        if version == 0:
            store.set_meta("created_at", str(time.time()))


def _newer_message(store: Opening, version: int) -> str:
    try:
        writer = store.meta("scrydb_version")
    except apsw.Error:
        writer = None
    theirs = f"scrydb {writer}, schema {version}" if writer else f"schema {version}"
    return (
        f"index {store.path} was written by a newer scrydb ({theirs}); this is scrydb "
        f"{scrydb_version()} (schema {SCHEMA_VERSION}): upgrade scrydb, or delete the "
        "file (or pass another --db) to rebuild it"
    )


def _drop_all(store: Opening) -> None:
    names = [
        (t, n)
        for t, n in store.conn.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%'"
        )
    ]
    for _typ, name in names:
        with contextlib.suppress(apsw.SQLError):
            store.conn.execute(f'DROP TABLE IF EXISTS "{name}"')
