"""One first-use policy (scrydb.firstuse): the CLI and the MCP server answer a never-indexed
repository, an interrupted first index and an empty tree the same way.

Each state is built twice from nothing (the first answer completes the index), once for a
``scry locate`` subprocess and once for a real MCP client session of ``scry serve
--no-embed``; ``locate`` needs no model, so both answers are exact lines and comparable."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import apsw
import pytest
from conftest import run_scry
from sample_repo import write_repo
from test_mcp import Served

import scrydb
from scrydb import firstuse
from scrydb.store import Readiness

STATES = ("never", "interrupted", "empty")
NEEDLE = "MAX_ATTEMPTS"


def _prepare(base: Path, state: str) -> tuple[Path, Path, dict[str, str]]:
    """A repository and the path of its index, in ``state``."""
    base.mkdir(parents=True)
    env = {"SCRY_CACHE_DIR": str(base / "cache"), "SCRY_SHARED_CACHE": "0"}
    db = base / "index.db"
    if state == "empty":
        repo = base / "empty"
        repo.mkdir()
        return repo, db, env
    repo = write_repo(base / "shop")
    if state == "interrupted":
        # A first index that committed part of the tree and stopped: the lexical pass ran
        # without app/retry.py, which comes back, and the pass never completed.
        aside = base / "retry.py"
        shutil.move(repo / "app" / "retry.py", aside)
        r = run_scry("index", "--no-embed", "--db", str(db), cwd=repo, env=env)
        assert r.returncode == 0, r.stderr
        shutil.move(aside, repo / "app" / "retry.py")
        con = apsw.Connection(str(db))
        con.execute("DELETE FROM meta WHERE key = 'last_sync'")
        con.close()
        assert _readiness(repo, db) is Readiness.PARTIAL
    else:
        assert not db.exists()
    return repo, db, env


def _readiness(repo: Path, db: Path) -> Readiness:
    with scrydb.open(repo, db, readonly=True) as ix:
        return ix.store.readiness()


def _lines(text: str) -> set[str]:
    """``path:line`` of each match in locate's grep-like answer (the CLI's and MCP's)."""
    return set(re.findall(r"^([\w./-]+:\d+):\d+:", text, flags=re.M))


def _cli(base: Path, state: str) -> tuple[set[str], str]:
    repo, db, env = _prepare(base, state)
    r = run_scry("locate", NEEDLE, "--db", str(db), cwd=repo, env=env)
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    found = _lines(r.stdout)
    assert _readiness(repo, db) is Readiness.READY
    return found, r.stderr


def _mcp(base: Path, state: str) -> tuple[set[str], str]:
    repo, db, env = _prepare(base, state)
    srv = Served(repo, env, base / "serve.log", "--db", str(db), "--no-embed")
    try:
        text = srv.text("locate", {"text": NEEDLE})
        log = srv.logs()
    finally:
        srv.close()
    found = _lines(text)
    if not found:
        assert text.startswith("no matches"), text
    assert _readiness(repo, db) is Readiness.READY
    return found, log


@pytest.mark.slow
@pytest.mark.parametrize("state", STATES)
def test_cli_and_mcp_answer_each_state_alike(tmp_path: Path, state: str) -> None:
    cli, cli_err = _cli(tmp_path / "cli", state)
    mcp, mcp_log = _mcp(tmp_path / "mcp", state)
    assert cli == mcp
    if state == "empty":
        assert cli == set()
    else:
        # the file the interrupted pass had not reached is found by both
        assert {"app/retry.py:6", "app/retry.py:18"} <= cli
    # the same notice, from the one policy
    want = {
        "never": "yet: indexing it now (once)",
        "interrupted": "was stopped before it finished: finishing it now",
        "empty": "yet: indexing it now (once)",
    }[state]
    assert want in cli_err, cli_err
    assert want in mcp_log, mcp_log


def test_readiness_is_one_rule(tmp_path: Path) -> None:
    """NONE before anything, PARTIAL with files but no complete pass, READY after one
    (an empty tree too), and the plan follows it."""
    repo = write_repo(tmp_path / "shop")
    db = tmp_path / "x.db"
    cfg = scrydb.Config()
    cfg.index.background = True
    with scrydb.open(repo, db, cfg) as ix:
        assert ix.store.readiness() is Readiness.NONE
        p = firstuse.plan(ix)
        assert p.first and p.background and not p.embed_now and not p.sync
        assert not firstuse.plan(ix, allow_background=False).background
        assert firstuse.plan(ix, allow_background=False).embed_now
        assert not firstuse.plan(ix, embed=False).embed_now
        ix.sync(embed=False)
        assert ix.store.readiness() is Readiness.READY
        p = firstuse.plan(ix)
        assert not p.first and p.sync and p.notice(repo) is None
        assert not firstuse.plan(ix, no_sync=True).sync
        with ix.store.transaction():
            ix.store.conn.execute("DELETE FROM meta WHERE key = 'last_sync'")
        assert ix.store.readiness() is Readiness.PARTIAL
        assert "finishing it now" in str(firstuse.plan(ix).notice(repo))
    empty = tmp_path / "empty"
    empty.mkdir()
    with scrydb.open(empty, tmp_path / "e.db", cfg) as ix:
        ix.sync(embed=False)
        assert ix.store.readiness() is Readiness.READY
        assert not ix.store.has_chunks()


def test_plan_thresholds() -> None:
    assert firstuse.embed_after_sync(1)
    assert firstuse.embed_after_sync(firstuse.AUTO_EMBED_MAX)
    assert not firstuse.embed_after_sync(firstuse.AUTO_EMBED_MAX + 1)
    assert not firstuse.embed_after_sync(0)
    assert not firstuse.embed_after_sync(5, embed=False)
