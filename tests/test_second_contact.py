"""What a second new user tripped over (issue 42): ranking that depended on ``-n``, names
that exist nowhere, one score scale, wording that fits the command, MCP path errors and
notes, the serve rule, budgets and capped reads. Real CLI subprocesses, a real MCP client
session, real index files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import run_scry
from sample_repo import write_repo
from synth_repo import WordEmbedder, write_synth

import scrydb
from scrydb import present
from scrydb.search import rank
from scrydb.search.query import MAX_QUERY_CHARS


def _env(tmp_path: Path) -> dict[str, str]:
    return {"SCRY_CACHE_DIR": str(tmp_path / "cache")}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The sample repository (a git-like root) indexed once through the real CLI."""
    base = tmp_path_factory.mktemp("second")
    repo = write_repo(base / "shop")
    (repo / ".git").mkdir(exist_ok=True)
    env = {"SCRY_CACHE_DIR": str(base / "cache")}
    r = run_scry("index", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    return repo, env


# -- row 1: the top hits do not depend on -n ------------------------------------------------


def test_pool_does_not_grow_with_k_up_to_the_mcp_limit() -> None:
    for shape in ("identifier", "keyword", "question", "location"):
        sizes = {rank.pool_size(shape, k) for k in (1, 3, 10, 40, rank.POOL_FIXED_K)}
        assert len(sizes) == 1, (shape, sizes)
    from scrydb.mcp_server.service import MAX_HITS

    assert MAX_HITS <= rank.POOL_FIXED_K  # every MCP limit ranks the same pool


def test_top_hits_are_the_same_whatever_the_limit(tmp_path: Path) -> None:
    # 240 chunks: more than one leg's pool, so a pool that grew with k would change the
    # candidates and the dense normalisation.
    repo = write_synth(tmp_path / "synth", n_files=80, funcs=3, varied=True)
    queries = [
        "retry the upload when the token expires",
        "flush the ledger journal",
        "where is the cache snapshot merged",
        "decode packet payload",
    ]
    with scrydb.open(repo, db=tmp_path / "s.db", embedder=WordEmbedder()) as ix:
        ix.sync()
        for q in queries:
            small = [h.location for h in ix.search(q, k=3)]
            for k in (10, 40, 50):
                assert [h.location for h in ix.search(q, k=k)][:3] == small, (q, k)


# -- row 4 and 13: names that exist nowhere, gibberish, cut queries -------------------------


@pytest.mark.parametrize("name", ["FooBarBazQux", "MAX_RETRY_WINDOW"])
def test_missing_identifier_is_weak_and_exits_1(
    shop: tuple[Path, dict[str, str]], name: str
) -> None:
    repo, env = shop
    r = run_scry("search", name, "--json", cwd=repo, env=env)
    assert r.returncode == 1, (r.returncode, r.stderr)
    out = json.loads(r.stdout)
    assert out["weak"] is True and out["missing"] == [name]
    assert any("occurs nowhere" in n for n in out["notes"])
    text = run_scry("search", name, cwd=repo, env=env)
    assert text.returncode == 1 and "occurs nowhere" in text.stderr


def test_existing_identifier_is_not_missing(shop: tuple[Path, dict[str, str]]) -> None:
    repo, env = shop
    for name in ("UserRepository", "MAX_ATTEMPTS", "compute_backoff"):
        r = run_scry("search", name, "--json", cwd=repo, env=env)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["missing"] == [] and out["weak"] is False, name


def test_a_typo_is_missing_but_still_finds_the_name(shop: tuple[Path, dict[str, str]]) -> None:
    repo, env = shop
    r = run_scry("search", "compute_backof", "--json", cwd=repo, env=env)
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["missing"] == ["compute_backof"]
    assert out["hits"][0]["path"] == "app/retry.py"  # fuzzy expansion still finds it
    assert "compute_backoff" in out["suggestions"]


def test_gibberish_is_weak(shop: tuple[Path, dict[str, str]]) -> None:
    repo, env = shop
    for q in ("xqzvbnmwplkj", "qoxw vexzu plimbrak"):
        r = run_scry("search", q, "--json", cwd=repo, env=env)
        out = json.loads(r.stdout)
        assert out["weak"] is True, (q, out["hits"][:1])


def test_a_question_with_known_words_is_not_weak(shop: tuple[Path, dict[str, str]]) -> None:
    repo, env = shop
    r = run_scry("search", "how are failed calls retried", "--json", cwd=repo, env=env)
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["weak"] is False and out["hits"]


def test_a_cut_query_says_so(shop: tuple[Path, dict[str, str]]) -> None:
    repo, env = shop
    long = ("retry backoff " * 8000)[:100_000]
    r = run_scry("search", long, "--json", cwd=repo, env=env)
    assert r.returncode in (0, 1), r.stderr
    notes = json.loads(r.stdout)["notes"]
    # A long text is read as a report (issue 47): its parts are weighed, and a note says
    # so; a plain text over the limit would say it was cut.
    assert any(n.startswith("read as a bug report") for n in notes), notes
    from scrydb.search.query import cut_note

    assert f"first {MAX_QUERY_CHARS:,} of 100,000 characters" in (cut_note(long) or "")
    short = json.loads(run_scry("search", "retry backoff", "--json", cwd=repo, env=env).stdout)
    assert not any("was cut" in n for n in short["notes"])


# -- rows 7 and 9: bare scry, one score scale ------------------------------------------------


def test_bare_scry_prints_the_help(tmp_path: Path) -> None:
    r = run_scry(cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 2
    assert r.stdout.startswith("Usage: scry") and "\\n" not in r.stdout
    assert "Commands:" in r.stdout and "search" in r.stdout


def test_score_has_one_scale(shop: tuple[Path, dict[str, str]]) -> None:
    repo, env = shop
    r = run_scry("search", "how are failed calls retried", "--json", "--explain", cwd=repo, env=env)
    hits = json.loads(r.stdout)["hits"]
    assert hits
    for h in hits:
        assert h["score"] == h["explain"]["score"]
    assert hits[0]["score"] == pytest.approx(1.0)  # the learned fusion's best hit scores 1
    plain = json.loads(
        run_scry("search", "how are failed calls retried", "--json", cwd=repo, env=env).stdout
    )
    assert [h["score"] for h in plain["hits"]] == [h["score"] for h in hits]


# -- rows 10 and 17: read -----------------------------------------------------------------


def test_read_outside_the_repository_says_so_in_read_words(
    shop: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = shop
    outside = tmp_path / "elsewhere.md"
    outside.write_text("secret\n")
    link = repo / "app" / "leak.md"
    if not link.exists():
        os.symlink(outside, link)
    for target in (os.path.relpath(outside, repo), str(outside), "app/leak.md"):
        r = run_scry("read", target, cwd=repo, env=env)
        assert r.returncode == 2, (target, r.stdout)
        assert "secret" not in r.stdout
        assert "narrows a search" not in r.stderr
        assert "only files of this repository" in r.stderr, r.stderr
    link.unlink()


def test_a_capped_read_says_how_to_go_on(tmp_path: Path) -> None:
    repo = tmp_path / "big"
    (repo / ".git").mkdir(parents=True)
    body = "\n".join(f"    total += {i}" for i in range(700))
    (repo / "long.py").write_text(f"def long():\n    total = 0\n{body}\n    return total\n")
    env = _env(tmp_path)
    assert run_scry("index", "--no-embed", cwd=repo, env=env).returncode == 0
    r = run_scry("read", "long.py:1-1000", cwd=repo, env=env)
    assert r.returncode == 0
    assert r.stdout.rstrip().splitlines()[-1].split()[0] == "300"
    assert "capped at 300 lines" in r.stderr and "`scry read long.py:301-600`" in r.stderr


# -- row 16: --budget counts what is printed, JSON included ---------------------------------


@pytest.mark.parametrize("budget", [50, 150, 400])
def test_budget_holds_for_json(shop: tuple[Path, dict[str, str]], budget: int) -> None:
    repo, env = shop
    r = run_scry(
        "search",
        "how are failed calls retried",
        "--json",
        "--budget",
        str(budget),
        cwd=repo,
        env=env,
    )
    out = json.loads(r.stdout)
    used = present.estimate_tokens(r.stdout.rstrip("\n"))
    if any("below the smallest answer" in n for n in out["notes"]):
        assert len(out["hits"]) == 1 and len(out["hits"][0]["snippet"].split("\n")) == 1
    else:
        assert used <= budget * 1.1, (budget, used)
    text = run_scry(
        "search", "how are failed calls retried", "--budget", str(budget), cwd=repo, env=env
    )
    assert present.estimate_tokens(text.stdout.rstrip("\n")) <= max(budget * 1.1, 60)


# -- row 14: one rule for a search and scry serve outside a repository ----------------------


def test_serve_refuses_outside_a_repository_like_search(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("def f():\n    return 1\n")
    env = _env(tmp_path)
    s = run_scry("x", cwd=plain, env=env)
    v = run_scry("serve", cwd=plain, env=env)
    assert s.returncode == 2 and v.returncode == 2
    assert "no repository here" in s.stderr and "no repository here" in v.stderr
    assert "Traceback" not in v.stderr
    assert not list((tmp_path / "cache").rglob("*.db"))  # nothing was indexed


# -- rows 11 and 12: MCP ---------------------------------------------------------------------


@pytest.mark.slow
def test_mcp_path_outside_is_a_tool_error_and_notes_are_true(tmp_path: Path) -> None:
    from test_mcp import Served

    repo = write_repo(tmp_path / "shop")
    env = _env(tmp_path)
    db = tmp_path / "shop.db"
    with scrydb.open(repo, db=db) as ix:  # a complete index: nothing left to embed
        ix.sync()
    served = Served(repo, {**env, "SCRY_DB": str(db)}, tmp_path / "serve.log", "--no-watch")
    try:
        first = served.text("search", {"query": "how are failed calls retried"})
        assert "computing" not in first, first
        for bad in ("../", "/etc", "../outside"):
            res = served.call("search", {"query": "retry", "path": bad})
            assert res.is_error, (bad, res.content[0].text)
            assert "outside the repository" in res.content[0].text
        inside = served.text("search", {"query": "retry", "path": str(repo / "app")})
        assert "app/retry.py" in inside
    finally:
        served.close()


def test_python_api_refuses_escaping_filters(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "shop")
    with scrydb.open(repo, db=tmp_path / "s.db", embedder=WordEmbedder()) as ix:
        ix.sync()
        for bad in ("../x", "/etc", "app/../../x"):
            with pytest.raises(scrydb.ScryError, match="outside the repository"):
                ix.search("retry", path=bad)
        assert ix.search("retry", path=str(repo / "app"))  # absolute inside: fine
        assert ix.search("retry", path="app/")


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX paths")


# -- row 2: a definition appended after a class is its own chunk, and its rare words win ----


def test_a_function_appended_after_a_class_is_found_by_its_rare_words(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "shop")
    (repo / ".git").mkdir(exist_ok=True)
    methods = "".join(
        f"    def step_{i}(self, value):\n"
        f'        """Step {i} of the pipeline."""\n'
        f"        return value * {i} + self.offset\n\n"
        for i in range(40)
    )
    helpers = repo / "app" / "helpers.py"
    helpers.write_text(
        "class Pipeline:\n"
        '    """Runs the steps in order."""\n\n'
        "    offset = 1\n\n"
        f"{methods}\n\n"
        "def compute_quokka_backoff(attempt):\n"
        '    """Seconds a marsupial waits before hopping again."""\n'
        "    return min(30, 2 ** attempt)\n"
    )
    wf = repo / ".github" / "workflows"
    wf.mkdir(parents=True)
    for name in ("lock", "tests", "publish"):
        (wf / f"{name}.yaml").write_text(
            f"name: {name}\non:\n  push:\n    branches: [main]\njobs:\n  run:\n"
            "    runs-on: ubuntu-latest\n    steps:\n      - run: echo waits before retrying again\n"
        )
    env = _env(tmp_path)
    assert run_scry("index", cwd=repo, env=env).returncode == 0
    r = run_scry("search", "marsupial waits before hopping again", "--json", cwd=repo, env=env)
    out = json.loads(r.stdout)
    first = out["hits"][0]
    assert (first["path"], first["symbol"]) == ("app/helpers.py", "compute_quokka_backoff")
    assert out["weak"] is False
