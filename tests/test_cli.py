"""The scry CLI as a subprocess: commands, JSON schema, exit codes, clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_scry

pytestmark = pytest.mark.slow

HIT_KEYS = {
    "path",
    "start_line",
    "end_line",
    "lang",
    "kind",
    "symbol",
    "score",
    "snippet",
    "anchor_line",
    "snippet_start",
    "truncated",
    "chunk_id",
}


@pytest.fixture(scope="module")
def cli_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The sample repo indexed through the CLI (module-wide: the model loads once)."""
    from sample_repo import write_repo

    base = tmp_path_factory.mktemp("cli")
    repo = write_repo(base / "shop")
    env = {"SCRY_CACHE_DIR": str(base / "cache")}
    r = run_scry("index", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    assert "indexed" in r.stderr
    return repo, env


def test_search_json_schema(cli_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = cli_repo
    r = run_scry("search", "UserRepository", "--json", "-n", "3", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert set(data) >= {"query", "shape", "hits", "notes", "weak", "suggestions", "legs"}
    assert data["shape"] == "identifier" and len(data["hits"]) <= 3
    hit = data["hits"][0]
    assert set(hit) == HIT_KEYS
    assert (
        hit["path"] == "app/users.py"
        and hit["kind"] == "class"
        and hit["symbol"] == "UserRepository"
    )
    assert isinstance(hit["start_line"], int) and isinstance(hit["truncated"], bool)


def test_default_command_is_search_and_text_output(cli_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = cli_repo
    r = run_scry("evicting the least recently used entry", "-n", "2", cwd=repo / "svc", env=env)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("svc/cache.go:") and "LRUCache.Put" in first
    assert "\x1b[" not in r.stdout  # no colour when not a TTY


def test_path_argument_scopes_search(cli_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = cli_repo
    r = run_scry("search", "user", "web", "--json", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    assert all(h["path"].startswith("web/") for h in json.loads(r.stdout)["hits"])


def test_explain_and_budget(cli_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = cli_repo
    r = run_scry("search", "compute_backoff", "--explain", "-n", "2", cwd=repo, env=env)
    assert "lex=" in r.stdout and "dense=" in r.stdout
    full = run_scry("search", "user", "-n", "10", cwd=repo, env=env)
    small = run_scry("search", "user", "-n", "10", "--budget", "120", cwd=repo, env=env)
    assert small.returncode == 0 and len(small.stdout) < len(full.stdout)
    assert len(small.stdout) / 3.0 <= 200


def test_no_results_exit_1(cli_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = cli_repo
    r = run_scry("search", "cache", "--lang", "kotlin", cwd=repo, env=env)
    assert r.returncode == 1
    assert "no results" in r.stderr


def test_errors_are_one_line_exit_2(cli_repo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    repo, env = cli_repo
    cases = [
        (["search", ""], "empty query"),
        (["index", str(tmp_path / "missing")], "no such directory"),
        (["read", "../etc/passwd"], "refused path"),
        (["read", "/etc/passwd"], "outside the repository"),
        (["read", "app/nope.py"], "not an indexed file"),
        (["related", "app/retry.py"], "give a line"),
    ]
    for args, msg in cases:
        r = run_scry(*args, cwd=repo, env=env)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert msg in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    f = tmp_path / "file.txt"
    f.write_text("x")
    r = run_scry("index", str(f), cwd=repo, env=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_bad_db_file_is_refused_and_kept(
    cli_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = cli_repo
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"\x00garbage" * 512)
    r = run_scry("search", "user", "--db", str(junk), cwd=repo, env=env)
    assert r.returncode == 2 and "not a scrydb index" in r.stderr and "Traceback" not in r.stderr
    assert junk.read_bytes() == b"\x00garbage" * 512


def test_status_read_locate_related(cli_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = cli_repo
    st = run_scry("status", "--json", cwd=repo, env=env)
    assert st.returncode == 0, st.stderr
    data = json.loads(st.stdout)
    assert data["files"] >= 10 and data["chunks"] >= data["files"] and data["pending"] == 0
    assert data["vectors"] > 0 and data["stale"] == {"added": 0, "changed": 0, "deleted": 0}
    text = run_scry("status", cwd=repo, env=env)
    assert "chunks" in text.stdout and "fresh     yes" in text.stdout

    rd = run_scry("read", "app/config.py:10-12", cwd=repo, env=env)
    assert rd.returncode == 0
    assert rd.stdout.splitlines()[0].split(None, 1) == [
        "10",
        'def load_config(path: str = "shop.toml") -> dict:',
    ]

    loc = run_scry("locate", "DEFAULT_TIMEOUT", "--json", cwd=repo, env=env)
    matches = json.loads(loc.stdout)["matches"]
    assert {m["path"] for m in matches} == {"app/config.py"}
    assert matches[0]["line"] == 6 and matches[0]["column"] == 1

    rel = run_scry("related", "app/users.py:20", "--json", "-n", "3", cwd=repo, env=env)
    assert rel.returncode == 0, rel.stderr
    hits = json.loads(rel.stdout)["hits"]
    assert hits and all(
        not (h["path"] == "app/users.py" and h["start_line"] <= 20 <= h["end_line"]) for h in hits
    )


def test_search_syncs_edits_first(cli_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = cli_repo
    (repo / "app" / "invoice.py").write_text(
        'def render_invoice_pdf(order):\n    """Lay out the invoice as a PDF page."""\n    pages = []\n    pages.append(order)\n    return pages\n'
    )
    r = run_scry("search", "render_invoice_pdf", "--json", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hits"][0]["path"] == "app/invoice.py"
    (repo / "app" / "invoice.py").unlink()
    r = run_scry("locate", "render_invoice_pdf", "--no-sync", cwd=repo, env=env)
    assert r.returncode == 0  # not synced yet: the index still has it
    r = run_scry("locate", "render_invoice_pdf", cwd=repo, env=env)
    assert r.returncode == 1  # locate syncs first, like search
    r = run_scry("search", "render_invoice_pdf", "--json", cwd=repo, env=env)
    assert all(h["path"] != "app/invoice.py" for h in json.loads(r.stdout)["hits"])


def test_help_has_examples() -> None:
    for cmd in ("index", "search", "status", "read", "related", "locate", "eval"):
        r = run_scry(cmd, "--help")
        assert r.returncode == 0 and "Example:" in r.stdout, cmd


def test_shared_filter_options_keep_each_commands_limits(
    cli_repo: tuple[Path, dict[str, str]],
) -> None:
    """search, locate and related declare -n/--lang/--path through cli/common's shared
    options; each command keeps its own -n range and default."""
    repo, env = cli_repo
    for cmd, most in (("search", 1000), ("related", 100), ("locate", 10000)):
        arg = "app/users.py:1" if cmd == "related" else "User"
        r = run_scry(cmd, arg, "-n", str(most + 1), "--no-sync", cwd=repo, env=env)
        assert r.returncode == 2 and f"1<=x<={most}" in r.stderr, (cmd, r.stderr)
    full = run_scry("locate", "def ", "--no-sync", "--json", cwd=repo, env=env)
    assert len(json.loads(full.stdout)["matches"]) <= 50  # locate's default limit
    r = run_scry(
        "locate", "def ", "--lang", "py", "--path", "app/", "--no-sync", "--json", cwd=repo, env=env
    )
    paths = {m["path"] for m in json.loads(r.stdout)["matches"]}
    assert paths and all(p.startswith("app/") and p.endswith(".py") for p in paths), paths
    r = run_scry("search", "user", "--lang", "py", "--path", "app/", "--json", cwd=repo, env=env)
    assert all(h["path"].startswith("app/") for h in json.loads(r.stdout)["hits"])
