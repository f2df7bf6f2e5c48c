"""``scry serve`` through a real MCP client session (the SDK's stdio client spawning
``python -m scrydb.cli serve`` as a subprocess) against the sample repository."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from conftest import run_scry
from lock_tries import LockTries
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from sample_repo import write_repo

import scrydb
from scrydb.tokencount import TokenCounter

TOOLS = {"search", "read", "related", "locate", "status", "map", "callers", "callees", "refs"}
SECRET = "TOP-SECRET-CONTENT-5d41"
#: Longest wait for background work (model load + embedding on a slow CI machine).
DEADLINE_S = 180.0
#: A call made while another process holds the writer lock must answer within this (it
#: answers from what is committed; one that waited for the lock would never return).
LOCK_HELD_ANSWER_S = 60.0


class Served:
    """A live MCP session to ``scry serve`` that sync tests can call into."""

    def __init__(self, repo: Path, env: dict[str, str], log: Path, *args: str) -> None:
        self.repo = repo
        self.log = log
        self._stack = contextlib.ExitStack()
        self.portal = self._stack.enter_context(start_blocking_portal())
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "scrydb.cli", "serve", "--root", str(repo), *args],
            env={**os.environ, **env},
        )
        self._errlog = self._stack.enter_context(log.open("w"))
        self.session: ClientSession = self._stack.enter_context(
            self.portal.wrap_async_context_manager(self._connect(params))
        )

    @contextlib.asynccontextmanager
    async def _connect(self, params: StdioServerParameters) -> AsyncIterator[ClientSession]:
        async with (
            stdio_client(params, errlog=self._errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            self.init = await session.initialize()
            yield session

    def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Call a tool; the CallToolResult."""
        return self.portal.call(self.session.call_tool, name, args or {})

    def text(self, name: str, args: dict[str, Any] | None = None) -> str:
        """Call a tool that must succeed; its text."""
        res = self.call(name, args)
        assert not res.is_error, res.content[0].text
        return res.content[0].text

    def within(self, seconds: float, name: str, args: dict[str, Any]) -> str:
        """Call a tool that must succeed and answer at all within ``seconds`` (a hang
        check with a generous bound, not a latency bar); its text."""

        async def call() -> Any:
            with anyio.fail_after(seconds):
                return await self.session.call_tool(name, args)

        res = self.portal.call(call)
        assert not res.is_error, res.content[0].text
        return res.content[0].text

    def until(self, name: str, args: dict[str, Any], ok: Any, what: str) -> str:
        """Call a tool until ``ok(text)`` holds (polling, with a deadline)."""
        deadline = time.monotonic() + DEADLINE_S
        while True:
            text = self.text(name, args)
            if ok(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what}; last answer:\n{text}\n{self.logs()}"
                )
            time.sleep(0.3)

    def logs(self) -> str:
        self._errlog.flush()
        return "server stderr:\n" + self.log.read_text(errors="replace")[-3000:]

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The sample repository (plus a secret outside it, linked in by symlinks) served
    over MCP; the first search is sent right after initialize (``served.early``)."""
    base = tmp_path_factory.mktemp("mcp")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    repo = write_repo(base / "shop")
    (repo / "leak.txt").symlink_to(outside / "secret.txt")
    (repo / "linkdir").symlink_to(outside, target_is_directory=True)
    srv = Served(repo, {"SCRY_CACHE_DIR": str(base / "cache")}, base / "serve.log")
    t0 = time.monotonic()
    srv.early = srv.call("search", {"query": "UserRepository"})
    srv.early_seconds = time.monotonic() - t0
    try:
        yield srv
    finally:
        srv.close()


def _embedded(srv: Served) -> None:
    srv.until(
        "status",
        {},
        lambda t: "every chunk has its vector" in t and "embedder  ready" in t,
        "embeddings",
    )


# -- tests -------------------------------------------------------------------------------


@pytest.mark.slow
def test_search_answers_while_embeddings_are_pending(served: Served) -> None:
    res = served.early
    assert not res.is_error, res.content[0].text
    text = res.content[0].text
    assert text.startswith("app/users.py:13-39  class UserRepository"), text
    # Sent right after start: the model is still loading, so the answer is lexical and
    # says so (embeddings pending, or the dense leg skipped while the model loads).
    assert "lexical" in text or "embedding" in text, text
    print(f"first answer after {served.early_seconds:.1f}s")


@pytest.mark.slow
def test_initialize_and_list_tools(served: Served) -> None:
    assert served.init.server_info.name == "scry"
    assert "search" in (served.init.instructions or "")
    tools = {t.name: t for t in served.portal.call(served.session.list_tools).tools}
    assert set(tools) == TOOLS
    assert "first" in tools["search"].description
    assert "literal" in tools["locate"].description
    for t in tools.values():
        assert t.description and len(t.description) < 400
        assert t.annotations is not None and t.annotations.read_only_hint
    assert tools["read"].input_schema["required"] == ["file"]
    assert tools["search"].input_schema["properties"]["limit"]["maximum"] == 50


@pytest.mark.slow
def test_search_finds_the_definition_first_within_budget(served: Served) -> None:
    _embedded(served)
    text = served.text("search", {"query": "UserRepository"})
    assert text.splitlines()[0] == "app/users.py:13-39  class UserRepository"
    assert "lexical" not in text  # embeddings are complete now
    ten = served.text("search", {"query": "how are users looked up and stored", "limit": 10})
    heads = [
        ln for ln in ten.splitlines() if ln and not ln[0].isspace() and ":" in ln and ln[0] != ">"
    ]
    assert heads and heads[0].startswith("app/users.py:")
    tokens = TokenCounter().count(ten)
    assert tokens <= 1700, tokens  # about 1,500 for 10 hits


@pytest.mark.slow
def test_read_serves_the_real_lines(served: Served) -> None:
    lines = (served.repo / "app/config.py").read_text().splitlines()
    text = served.text("read", {"file": "app/config.py", "start_line": 6, "end_line": 7})
    assert text.splitlines() == ["app/config.py:6-7  (python)", f"6  {lines[5]}", f"7  {lines[6]}"]
    # One line: the whole chunk around it; path:A-B as the file works too.
    whole = served.text("read", {"file": "app/users.py", "start_line": 20})
    assert whole.splitlines()[0] == "app/users.py:13-39  (python)"
    assert "def deactivate(self, user_id: int) -> bool:" in whole
    assert served.text("read", {"file": "app/users.py:13-39"}) == whole
    bad = served.call("read", {"file": "app/nope.py"})
    assert bad.is_error and "not an indexed file" in bad.content[0].text


@pytest.mark.slow
def test_locate_finds_exact_lines(served: Served) -> None:
    text = served.text("locate", {"text": "DEFAULT_TIMEOUT"})
    assert text.splitlines()[0] == "app/config.py:6:1: DEFAULT_TIMEOUT = 30"
    assert "[function load_config]" in text
    assert served.text("locate", {"text": "default_timeout", "ignore_case": True}) == text
    assert served.text("locate", {"text": "no_such_literal_xyz"}).startswith("no matches")


@pytest.mark.slow
def test_related_and_status(served: Served) -> None:
    _embedded(served)
    text = served.text("related", {"file": "app/retry.py", "line": 9})
    assert "tests/test_retry.py" in text
    assert served.text("related", {"file": "app/retry.py:9"}) == text
    status = served.text("status", {})
    assert "files     13" in status and "every chunk has its vector" in status
    assert "watcher   watchdog" in status and "embedder  ready" in status


BAD_PATHS = [
    "../outside/secret.txt",
    "app/../../outside/secret.txt",
    "/etc/passwd",
    "OUTSIDE_ABS",
    "leak.txt",
    "linkdir/secret.txt",
    "app/\x00config.py",
    "%2e%2e/outside/secret.txt",
    "..%2foutside%2fsecret.txt",
    "..\\outside\\secret.txt",
    "~/secret.txt",
]


@pytest.mark.slow
def test_paths_outside_the_index_are_refused(served: Served) -> None:
    outside = served.repo.parent / "outside" / "secret.txt"
    for bad in BAD_PATHS:
        bad = str(outside) if bad == "OUTSIDE_ABS" else bad
        for tool, args in (("read", {"file": bad}), ("related", {"file": bad, "line": 1})):
            res = served.call(tool, args)
            text = res.content[0].text
            assert res.is_error, (tool, bad, text)
            assert "refused" in text or "not an indexed file" in text, (tool, bad, text)
            assert SECRET not in text
    # The symlinked secret was never indexed: no tool can find it either.
    assert served.text("locate", {"text": SECRET}).startswith("no matches")
    assert SECRET not in served.text("search", {"query": SECRET})
    escaped = served.call("search", {"query": "secret", "path": "../outside"})
    assert escaped.is_error and SECRET not in escaped.content[0].text  # a tool error, as read's


@pytest.mark.slow
def test_watcher_picks_up_an_edit_and_a_new_file(served: Served) -> None:
    cfg = served.repo / "app/config.py"
    cfg.write_text(cfg.read_text() + "\nRETRY_JITTER_SECONDS = 7\n")
    (served.repo / "app/payments.py").write_text(
        '"""Payments."""\n\n\nclass PaymentGateway:\n    """Charges cards through the provider."""\n\n'
        "    def charge(self, cents: int) -> bool:\n        return cents > 0\n"
    )
    found = served.until(
        "locate",
        {"text": "RETRY_JITTER_SECONDS"},
        lambda t: t.startswith("app/config.py:"),
        "the edit",
    )
    assert "RETRY_JITTER_SECONDS = 7" in found
    hit = served.until(
        "search",
        {"query": "PaymentGateway"},
        lambda t: t.startswith("app/payments.py:"),
        "the new file",
    )
    assert "class PaymentGateway" in hit.splitlines()[0]


def test_cancelled_search_returns_promptly(tmp_path: Path) -> None:
    """A search that waits (here: for a first index another process holds up) reports
    progress, returns as soon as it is cancelled (at its first progress report: the
    cancellation, not the search, ended the call), and leaves the server answering."""
    repo = write_repo(tmp_path / "shop")
    db = tmp_path / "shop.db"
    holder = scrydb.open(repo, db=db)
    holder.store.writer_lock()  # "another scry process is indexing"
    srv = Served(
        repo,
        {"SCRY_CACHE_DIR": str(tmp_path / "cache")},
        tmp_path / "serve.log",
        "--db",
        str(db),
        "--no-embed",
    )
    try:
        progress: list[tuple[float, str | None]] = []
        answered: list[Any] = []

        async def cancelled_search() -> bool:
            """Whether the call ended by its cancellation (a hang check bounds it all)."""
            reported = anyio.Event()

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                progress.append((p, message))
                reported.set()

            async def search() -> None:
                try:
                    answered.append(
                        await srv.session.call_tool(
                            "search", {"query": "UserRepository"}, progress_callback=on_progress
                        )
                    )
                finally:
                    reported.set()  # (an answer without progress fails below, not by hanging)

            with anyio.fail_after(LOCK_HELD_ANSWER_S):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(search)
                    await reported.wait()
                    tg.cancel_scope.cancel()
            return tg.cancel_scope.cancelled_caught

        assert srv.portal.call(cancelled_search) and not answered, answered
        assert "waiting for the first index" in (progress[-1][1] or ""), progress
        # The lock is still held: status answers at all (it would wait for ever if it
        # waited for the lock), and the server works on after the cancellation.
        status = srv.within(LOCK_HELD_ANSWER_S, "status", {})
        assert "waiting for another scry process" in status, status
        holder.store.release_writer_lock()  # the server's sync can run now
        text = srv.until(
            "search", {"query": "UserRepository"}, lambda t: "app/users.py" in t, "a search"
        )
        assert text.startswith("app/users.py:13-39")
    finally:
        srv.close()
        holder.close()


def _serve_lexical(tmp_path: Path) -> tuple[Served, Path]:
    """A fresh sample repository served with ``--no-embed``, its first index built."""
    repo = write_repo(tmp_path / "shop")
    db = tmp_path / "shop.db"
    env = {"SCRY_CACHE_DIR": str(tmp_path / "cache")}
    srv = Served(repo, env, tmp_path / "serve.log", "--db", str(db), "--no-embed")
    try:
        srv.until("locate", {"text": "MAX_ATTEMPTS"}, lambda t: "app/retry.py" in t, "the index")
    except BaseException:
        srv.close()
        raise
    return srv, db


def test_serve_waits_for_a_writer_lock_held_mid_session(tmp_path: Path) -> None:
    """Issue 13: a writer lock held by another process (a ``scry index``) is the same for
    ``scry serve`` as for ``scry watch``: the server answers from what is committed, says
    so once, and syncs as soon as the lock is free."""
    srv, db = _serve_lexical(tmp_path)
    holder = scrydb.open(srv.repo, db=db)
    try:
        holder.store.writer_lock()
        (srv.repo / "app/held.py").write_text("def written_while_held():\n    return 1\n")
        with LockTries(db) as tries:
            srv.until(
                "status", {}, lambda t: "waiting for another scry process" in t, "the waiting state"
            )
            # several retries (each opens the lock file and finds it held): still waiting,
            # still answering, no error
            seen = tries.count
            assert tries.wait_for(seen + 3, DEADLINE_S), f"no retries\n{srv.logs()}"
        # answers while the lock is held (a call that waited for it would never return)
        hit = srv.within(LOCK_HELD_ANSWER_S, "search", {"query": "RetryPolicy"})
        assert hit.startswith("app/retry.py:")
        miss = srv.within(LOCK_HELD_ANSWER_S, "locate", {"text": "written_while_held"})
        assert miss.startswith("no matches")
        assert "waiting for another scry process" in srv.text("status", {})
        holder.store.release_writer_lock()
        srv.until(
            "locate",
            {"text": "written_while_held"},
            lambda t: t.startswith("app/held.py:1:"),
            "the sync after the lock",
        )
        status = srv.text("status", {})
        assert "sync      idle" in status and "last error" not in status, status
        log = srv.logs()
        assert log.count("another scry process is indexing") == 1, log
        assert "sync failed" not in log and "Traceback" not in log, log
    finally:
        srv.close()
        holder.close()


def test_serve_reloads_a_changed_config(tmp_path: Path) -> None:
    """Issue 13: a changed ``.scry.toml`` is the same for ``scry serve`` as for ``scry
    watch``: reloaded, and the tree synced with it (no restart)."""
    srv, _db = _serve_lexical(tmp_path)
    try:
        (srv.repo / ".scry.toml").write_text('[index]\nexclude = ["app/retry.py"]\n')
        srv.until(
            "locate",
            {"text": "MAX_ATTEMPTS"},
            lambda t: "app/retry.py" not in t,
            "the excluded file to leave the index",
        )
        bad = srv.call("read", {"file": "app/retry.py"})
        assert bad.is_error and "not an indexed file" in bad.content[0].text
        status = srv.text("status", {})
        assert "config    .scry.toml reloaded (1x" in status, status
        assert "sync      idle" in status or "sync      lexical" in status, status
        assert srv.text("search", {"query": "UserRepository"}).startswith("app/users.py:")
        log = srv.logs()
        assert "configuration reloaded" in log and "restart" not in log, log
    finally:
        srv.close()


def test_serve_help() -> None:
    r = run_scry("serve", "--help")
    assert r.returncode == 0, r.stderr
    assert "MCP" in r.stdout and "--root" in r.stdout and "docs/agents.md" in r.stdout


@pytest.mark.slow
def test_tool_errors_are_one_line_and_languages_take_aliases(served: Served) -> None:
    bad = served.call("search", {"query": "retry", "limit": 0})
    text = bad.content[0].text
    assert bad.is_error and "\n" not in text.strip(), text
    assert "limit" in text and "pydantic" not in text and "http" not in text, text
    unknown = served.call("search", {"query": "retry", "lang": "cobol"})
    assert unknown.is_error and "unknown language 'cobol'" in unknown.content[0].text
    assert "\n" not in unknown.content[0].text.strip()
    aliased = served.text("search", {"query": "compute_backoff", "lang": "py"})
    assert "app/retry.py" in aliased
    lines = served.call("related", {"file": "app/retry.py", "line": 9999})
    assert lines.is_error and "past its end" in lines.content[0].text


def test_a_crash_in_a_tool_stays_a_crash_and_an_error_one_line() -> None:
    """scry's server shortens tool errors to one line, but a crash (the SDK's
    UnexpectedToolError) passes as it is, so the SDK logs its traceback; made a plain
    ToolError it was logged as an expected failure without one (tests/fuzz/mcp.py could
    not tell it from an answer)."""
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    from scrydb.errors import ScryError
    from scrydb.mcp_server.tools import _Server

    srv = _Server("t")

    @srv.tool()
    def boom() -> str:
        raise OSError(36, "File name too long")

    @srv.tool()
    def refuse() -> str:
        raise ToolError(str(ScryError("no repository a\nb")))

    with pytest.raises(UnexpectedToolError) as crash:
        anyio.run(srv.call_tool, "boom", {})
    assert isinstance(crash.value.__cause__, OSError)
    with pytest.raises(ToolError) as err:
        anyio.run(srv.call_tool, "refuse", {})
    assert not isinstance(err.value, UnexpectedToolError)
    assert str(err.value) == "refuse: no repository a\\nb"
