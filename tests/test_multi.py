"""Search across repositories (:mod:`scrydb.multi`, :mod:`scrydb.catalog`): two real
fixture repositories, each indexed with its own model behind a real OpenAI-compatible
endpoint (``hash-32``: :class:`FakeEmbedder`, 32-d; ``words-256``: :class:`WordEmbedder`,
256-d), searched through the API, the ``scry`` CLI as a subprocess and a real MCP client
session."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import run_scry
from sample_repo import write_repo
from synth_repo import FakeEmbedder, WordEmbedder
from test_mcp import Served

import scrydb
from scrydb.catalog import display_names, indexed_repos
from scrydb.errors import ScryError
from scrydb.multi import RRF_K, WEAK_LIST_WEIGHT, search_many

#: The two models the endpoint serves, by the ``model`` a request names.
MODELS = {"hash-32": FakeEmbedder("hash:32", 32), "words-256": WordEmbedder()}
DIMS = {"hash-32": 32, "words-256": 256}

#: The second repository: a client library of the shop, with its own retry code.
CLIENT_FILES = {
    "README.md": "# shop-client\n\nA Python client for the shop API: retries, tokens.\n",
    "client/__init__.py": '"""The shop client."""\n',
    "client/retry.py": '''"""Retrying requests of the shop client."""

import time


def backoff_delay(attempt: int, base: float = 0.25) -> float:
    """Exponential backoff: seconds to wait before retrying a failed request."""
    return base * (2 ** attempt)


def with_retries(send, request, attempts: int = 4):
    """Send a request, retrying with exponential backoff while it fails."""
    for attempt in range(attempts):
        try:
            return send(request)
        except ConnectionError:
            time.sleep(backoff_delay(attempt))
    raise ConnectionError("gave up after retrying")
''',
    "client/http.py": '''"""The HTTP client of the shop API."""

from client.retry import with_retries


class ShopClient:
    """Calls the shop's HTTP API, retrying failed requests."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self.token = token

    def get_user(self, user_id: int) -> dict:
        """Fetch one user by id."""
        return with_retries(self._send, ("GET", f"/users/{user_id}"))

    def create_order(self, items: list) -> dict:
        """Place an order for the items."""
        return with_retries(self._send, ("POST", "/orders", items))

    def _send(self, request):
        raise ConnectionError(request)
''',
    "client/auth.py": '''"""Access tokens of the shop client."""


class TokenStore:
    """Keeps the access token and refreshes it before it expires."""

    def __init__(self, token: str, expires_at: float) -> None:
        self.token = token
        self.expires_at = expires_at

    def refresh_token(self, now: float) -> str:
        """A fresh token when the old one is about to expire."""
        if now > self.expires_at - 60:
            self.token = self.token + "'"
        return self.token
''',
}

#: Words both repositories answer with a real definition (and a lexical match).
SHARED_QUERY = "exponential backoff before retrying a failed request"


class _Embeddings(BaseHTTPRequestHandler):
    """``POST /v1/embeddings``: the vectors of the model the request names."""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vecs = MODELS[body["model"]].embed_documents(texts)
        data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]
        raw = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@dataclass
class Fixture:
    """The two indexed repositories, the cache directory holding their indexes, and the
    environment a ``scry`` subprocess needs to find them."""

    shop: Path
    client: Path
    cache: Path

    @property
    def env(self) -> dict[str, str]:
        return {"SCRY_CACHE_DIR": str(self.cache)}


def _configure(root: Path, url: str, model: str) -> None:
    (root / ".scry.toml").write_text(
        f'[embed]\nprovider = "openai"\nurl = "{url}"\nmodel = "{model}"\ndim = {DIMS[model]}\n',
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    """``shop`` (the sample repository, model hash-32) and ``client`` (model words-256),
    each indexed with its own model into one cache directory."""
    base = tmp_path_factory.mktemp("multi")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    shop = write_repo(base / "shop")
    client = write_repo(base / "client", CLIENT_FILES)
    _configure(shop, url, "hash-32")
    _configure(client, url, "words-256")
    fx = Fixture(shop.resolve(), client.resolve(), base / "cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCRY_CACHE_DIR", str(fx.cache))
        for root in (fx.shop, fx.client):
            with scrydb.open(root) as ix:
                ix.sync()
    try:
        yield fx
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def cache(repos: Fixture, monkeypatch: pytest.MonkeyPatch) -> Fixture:
    """The fixture's cache directory as this test's (after the isolating fixture)."""
    monkeypatch.setenv("SCRY_CACHE_DIR", str(repos.cache))
    return repos


def _single(root: Path, query: str, k: int) -> scrydb.Results:
    with scrydb.open(root, readonly=True) as ix:
        return ix.search(query, k=k)


def _key(h: scrydb.Hit) -> tuple[str, int, int]:
    return (h.path, h.start_line, h.end_line)


# -- the API -------------------------------------------------------------------------------


def test_the_two_indexes_hold_two_models(cache: Fixture) -> None:
    entries = {e.root: e for e in indexed_repos()}
    assert set(entries) == {str(cache.shop), str(cache.client)}
    assert entries[str(cache.shop)].model == "openai:hash-32"
    assert entries[str(cache.client)].model == "openai:words-256"
    assert all(e.chunks and e.root_exists and e.last_sync and not e.error for e in entries.values())


def test_merged_lists_interleave_by_rank_and_name_their_repository(cache: Fixture) -> None:
    k = 6
    shop, client = _single(cache.shop, SHARED_QUERY, k), _single(cache.client, SHARED_QUERY, k)
    assert not shop.weak and not client.weak and len(shop) >= 3 and len(client) >= 3
    res = search_many([cache.shop, cache.client], SHARED_QUERY, k=k)
    assert res.repos == {"shop": str(cache.shop), "client": str(cache.client)}
    interleaved = [
        (name, _key(h))
        for pair in zip(shop, client, strict=False)
        for name, h in zip(("shop", "client"), pair, strict=True)
    ]
    assert [(h.repo, _key(h)) for h in res] == interleaved[:k]
    # Scored by rank alone: the first hit of each list 1/(RRF_K+1), then 1/(RRF_K+2) ...
    assert [h.score for h in res] == [round(1 / (RRF_K + 1 + i // 2), 6) for i in range(k)]
    assert res[0].location == f"shop:{res[0].path}:{res[0].start_line}-{res[0].end_line}"
    assert {h.to_json()["repo"] for h in res} == {"shop", "client"}
    assert "repo" not in shop[0].to_json() and "repos" not in shop.to_json()
    # The order given breaks ties: the client first, now.
    assert search_many([cache.client, cache.shop], SHARED_QUERY, k=2)[0].repo == "client"


def test_a_repository_without_the_name_comes_after_one_with_it(cache: Fixture) -> None:
    found = len(_single(cache.shop, "UserRepository", 50))
    assert found < RRF_K  # a weak list's first hit ranks with a usual list's 62nd
    res = search_many([cache.client, cache.shop], "UserRepository", k=found + 2)
    repos = [h.repo for h in res]
    assert repos == ["shop"] * found + ["client"] * 2
    assert repos[0] == "shop" and "client" in repos
    assert repos == sorted(repos, key=lambda r: r != "shop")  # every shop hit first
    first_client = repos.index("client")
    assert res[first_client].score == round(WEAK_LIST_WEIGHT / (RRF_K + 1), 6)
    assert res.missing == []  # the name exists: in the shop
    assert any(n.startswith("client: UserRepository occurs nowhere") for n in res.notes)
    assert not res.weak


def test_a_repository_that_cannot_be_searched_is_a_note(cache: Fixture, tmp_path: Path) -> None:
    not_indexed = tmp_path / "fresh"
    not_indexed.mkdir()
    stray = tmp_path / "notes.db"
    stray.write_text("not an index\n", encoding="utf-8")
    gone = tmp_path / "gone"
    res = search_many([cache.shop, gone, not_indexed, stray], SHARED_QUERY, k=5)
    assert len(res) == 5 and {h.repo for h in res} == {"shop"}
    assert list(res.repos) == ["shop"]
    notes = "\n".join(res.notes)
    assert f"{gone}: not searched: no such directory" in notes
    assert f"fresh: not searched: no index of {not_indexed.resolve()}" in notes
    assert f"{stray}: not searched:" in notes
    assert all("\n" not in n for n in res.notes)
    assert search_many([gone], SHARED_QUERY).repos == {}


def test_a_path_no_file_can_have_is_a_note(tmp_path: Path) -> None:
    # Found with the MCP harness's ``repos`` (the same paths in catalog.resolve_repo):
    # a name too long for the file system and an unknown home escaped as exceptions.
    res = search_many(["a" * 300, "~nosuchuser46/x", "b\nc"], "retry", k=3)
    assert len(res) == 0 and len(res.notes) == 3, res.notes
    assert all(n.isprintable() and "not searched" in n for n in res.notes), res.notes


def test_bad_input_raises_before_any_repository_opens(cache: Fixture) -> None:
    with pytest.raises(ScryError, match="empty query"):
        search_many([cache.shop, cache.client], "   ")
    with pytest.raises(ScryError, match="klingon"):
        search_many([cache.shop], "retry", lang="klingon")
    with pytest.raises(ValueError):
        search_many([cache.shop], "retry", k=0)


def test_open_indexes_are_searched_as_given_and_left_open(cache: Fixture) -> None:
    with scrydb.open(cache.client, readonly=True) as ix:
        res = scrydb.search_many([ix, cache.shop, cache.client], SHARED_QUERY, k=4)
        assert list(res.repos) == ["client", "shop"]  # the same repository counts once
        assert ix.search("TokenStore", k=1)[0].symbol == "TokenStore"  # still open


def test_display_names_stay_short_and_distinct() -> None:
    roots = [Path("/a/work/api"), Path("/b/old/api"), Path("/c/web")]
    assert display_names(roots) == ["work/api", "old/api", "web"]
    assert display_names([Path("/x/api"), Path("/y/x/api")]) == ["/x/api", "y/x/api"]


# -- the CLI ------------------------------------------------------------------------------


@pytest.mark.slow
def test_scry_repos_lists_both_with_roots_and_freshness(cache: Fixture, tmp_path: Path) -> None:
    r = run_scry("repos", "--json", cwd=tmp_path, env=cache.env)
    assert r.returncode == 0, r.stderr
    listed = {e["root"]: e for e in json.loads(r.stdout)}
    assert set(listed) == {str(cache.shop), str(cache.client)}
    for e in listed.values():
        assert e["root_exists"] and e["chunks"] > 0 and e["last_sync"] and e["error"] is None
    assert listed[str(cache.client)]["model"] == "openai:words-256"
    text = run_scry("repos", cwd=tmp_path, env=cache.env)
    assert text.returncode == 0
    line = next(x for x in text.stdout.splitlines() if x.startswith("client "))
    assert str(cache.client) in line and "synced" in line and "openai:words-256" in line
    assert "Example:" in run_scry("repos", "--help").stdout
    empty = run_scry("repos", cwd=tmp_path, env={"SCRY_CACHE_DIR": str(tmp_path / "none")})
    assert (
        empty.returncode == 1 and empty.stdout == "" and "no indexed repositories" in empty.stderr
    )


@pytest.mark.slow
def test_scry_repos_marks_a_gone_root_and_all_repos_skips_it(tmp_path: Path) -> None:
    env = {"SCRY_CACHE_DIR": str(tmp_path / "cache")}
    old = write_repo(tmp_path / "old")
    assert run_scry("index", "--no-embed", str(old), cwd=tmp_path, env=env).returncode == 0
    live = write_repo(tmp_path / "live")
    assert run_scry("index", "--no-embed", str(live), cwd=tmp_path, env=env).returncode == 0
    (tmp_path / "old").rename(tmp_path / "moved")
    listed = json.loads(run_scry("repos", "--json", cwd=tmp_path, env=env).stdout)
    assert [(e["name"], e["root_exists"]) for e in listed] == [("live", True), ("old", False)]
    assert listed[1]["root"] == str(old.resolve()) and listed[1]["chunks"] > 0
    text = run_scry("repos", cwd=tmp_path, env=env).stdout
    assert "root gone (synced" in text
    r = run_scry("search", "RetryPolicy", "--all-repos", "--json", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert {h["repo"] for h in json.loads(r.stdout)["hits"]} == {"live"}


@pytest.mark.slow
def test_cli_repo_twice_merges_both(cache: Fixture, tmp_path: Path) -> None:
    r = run_scry(
        "search", SHARED_QUERY, "--repo", str(cache.shop), "--repo", "client", "-n", "6",
        "--json", cwd=tmp_path, env=cache.env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["repos"] == {"shop": str(cache.shop), "client": str(cache.client)}
    assert [h["repo"] for h in out["hits"]] == ["shop", "client"] * 3
    api = search_many([cache.shop, cache.client], SHARED_QUERY, k=6)
    assert [(h["repo"], h["path"], h["start_line"]) for h in out["hits"]] == [
        (h.repo, h.path, h.start_line) for h in api
    ]
    text = run_scry(
        "search", SHARED_QUERY, "--repo", "shop", "--repo", str(cache.client), "-n", "4",
        cwd=tmp_path, env=cache.env,
    )  # fmt: skip
    assert text.returncode == 0, text.stderr
    heads = [line.split()[0] for line in text.stdout.splitlines() if line[:1].isalpha()]
    assert heads == [f"{h.repo}:{h.path}:{h.start_line}-{h.end_line}" for h in api[:4]]
    assert f"repositories: shop ({cache.shop}), client ({cache.client})" in text.stderr
    every = run_scry("search", "TokenStore", "--all-repos", "--json", cwd=tmp_path, env=cache.env)
    assert json.loads(every.stdout)["hits"][0]["repo"] == "client"


@pytest.mark.slow
def test_cli_repo_errors_are_one_line(cache: Fixture, tmp_path: Path) -> None:
    cases = [
        (["--repo", "nosuch"], "no repository nosuch"),
        (["--repo", "shop", "--repo", str(tmp_path / "gone")], "no repository"),
        (["--repo", "shop", "src/"], "PATH narrows a search of one repository"),
        (["--repo", "shop", "--db", str(tmp_path / "x.db")], "--db names one repository's index"),
        (["--repo", str(tmp_path)], "no repository could be searched"),
    ]
    for args, message in cases:
        r = run_scry("search", "retry", *args, cwd=tmp_path, env=cache.env)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and message in r.stderr, (args, r.stderr)
    empty = run_scry("search", "retry", "--all-repos", cwd=tmp_path, env={
        "SCRY_CACHE_DIR": str(tmp_path / "none")})  # fmt: skip
    assert empty.returncode == 2 and "no indexed repository in" in empty.stderr


# -- MCP ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_mcp_search_takes_repos(cache: Fixture, tmp_path: Path) -> None:
    srv = Served(cache.shop, cache.env, tmp_path / "serve.log")
    try:
        both = srv.text("search", {"query": SHARED_QUERY, "limit": 4, "repos": ["client", "."]})
        heads = [line.split()[0] for line in both.splitlines() if line[:1].isalpha()]
        api = search_many([cache.client, cache.shop], SHARED_QUERY, k=4)
        assert heads[:4] == [f"{h.repo}:{h.path}:{h.start_line}-{h.end_line}" for h in api]
        assert f"repositories: client ({cache.client}), shop ({cache.shop})" in both
        other = srv.text("search", {"query": "TokenStore", "repos": [str(cache.client)]})
        assert other.startswith("client:client/auth.py:")
        alone = srv.text("search", {"query": "TokenStore"})  # no repos: this repository
        assert "client/auth.py" not in alone
        bad = srv.call("search", {"query": "retry", "repos": ["nosuch"]})
        assert bad.is_error and "\n" not in bad.content[0].text
        assert "no repository nosuch" in bad.content[0].text
    finally:
        srv.close()
    assert os.environ.get("SCRY_DB") is None
