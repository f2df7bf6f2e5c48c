"""What a new user hits in the first hour (issue 12): a search never leaves the repository,
a bad model setting never costs the vectors, secrets stay out, a sub-directory is part of
its repository's index. Real CLI subprocesses over real index files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_scry

from scrydb.paths import is_broad_root, repo_root, scope_in
from scrydb.store import Store
from scrydb.walk import walk


def _repo(base: Path, name: str = "repo", git: bool = True) -> Path:
    root = base / name
    (root / "app").mkdir(parents=True)
    if git:
        (root / ".git").mkdir()
    (root / "app" / "retry.py").write_text(
        "class RetryPolicy:\n"
        '    """Decides whether a failed call is tried again."""\n\n'
        "    def backoff(self, attempt):\n"
        '        """Seconds to wait before the next attempt."""\n'
        "        return min(30, 2 ** attempt)\n"
    )
    (root / "app" / "main.py").write_text(
        'def main():\n    """Entry point of the command line."""\n    print("hi")\n'
    )
    return root


def _env(tmp_path: Path) -> dict[str, str]:
    return {"SCRY_CACHE_DIR": str(tmp_path / "cache")}


def _dbs(tmp_path: Path) -> list[str]:
    cache = tmp_path / "cache"
    return sorted(p.name for p in cache.glob("*.db")) if cache.exists() else []


def test_search_path_outside_the_repository_is_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    outside = tmp_path / "etc"
    outside.mkdir()
    (outside / "shadow").write_text("root:$6$abc:19000:0:99999:7:::\n")
    (outside / "machine-id").write_text("0123456789abcdef\n")
    env = _env(tmp_path)
    for cmd in (["spinner", str(outside)], ["search", "spinner", str(outside)]):
        r = run_scry(*cmd, "--no-sync", cwd=repo, env=env)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "outside the repository" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert "machine-id" not in r.stdout
    assert not any(n.startswith("etc-") for n in _dbs(tmp_path))
    # --path with an absolute path outside: the same rule.
    r = run_scry("search", "spinner", "--path", str(outside), cwd=repo, env=env)
    assert r.returncode == 2 and "outside the repository" in r.stderr


def test_search_outside_any_repository_does_not_index(tmp_path: Path) -> None:
    loose = _repo(tmp_path, "loose", git=False)
    env = _env(tmp_path)
    r = run_scry("retry backoff", cwd=loose, env=env)
    assert r.returncode == 2 and "no repository here" in r.stderr, r.stderr
    assert _dbs(tmp_path) == []
    for cmd in (["read", "app/main.py"], ["locate", "main"], ["related", "app/main.py:1"]):
        r = run_scry(*cmd, cwd=loose, env=env)
        assert r.returncode == 2 and "no repository here" in r.stderr, (cmd, r.stderr)
    assert _dbs(tmp_path) == []
    # `scry index` is the way to index a plain directory; searches then find it.
    r = run_scry("index", "--no-embed", cwd=loose, env=env)
    assert r.returncode == 0, r.stderr
    r = run_scry("RetryPolicy", "--mode", "lexical", cwd=loose / "app", env=env)
    assert r.returncode == 0 and "app/retry.py" in r.stdout, r.stderr


def test_index_of_home_or_root_refused_off_a_terminal(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    env = {**_env(tmp_path), "HOME": str(home)}
    r = run_scry("index", "--no-embed", str(home), cwd=tmp_path, env=env)
    assert r.returncode == 2 and "home directory" in r.stderr and "--yes" in r.stderr
    r = run_scry("index", "--no-embed", "/", cwd=tmp_path, env=env)
    assert r.returncode == 2 and "file system root" in r.stderr
    assert _dbs(tmp_path) == []
    r = run_scry("index", "--no-embed", "--yes", "-q", str(home), cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr


def test_broad_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "u" / "me"))
    (tmp_path / "u" / "me" / "src").mkdir(parents=True)
    assert is_broad_root(Path("/"))
    assert is_broad_root(tmp_path / "u" / "me") and is_broad_root(tmp_path / "u")
    assert not is_broad_root(tmp_path / "u" / "me" / "src")


def test_index_of_a_subdirectory_indexes_its_repository(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    env = _env(tmp_path)
    r = run_scry("index", "--no-embed", "app", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    assert f"inside the repository {repo}" in r.stderr
    assert len(_dbs(tmp_path)) == 1 and _dbs(tmp_path)[0].startswith("repo-")
    r = run_scry("status", "app", "--json", cwd=repo, env=env)
    assert r.returncode == 0 and f'"root": "{repo}"' in r.stdout, r.stderr
    r = run_scry("status", cwd=repo / "app", env=env)
    assert r.returncode == 0 and f"root      {repo}" in r.stdout
    # A search from inside app/ uses the repository's index, paths from the root.
    r = run_scry("RetryPolicy", "--mode", "lexical", "--no-sync", cwd=repo / "app", env=env)
    assert r.returncode == 0 and "app/retry.py" in r.stdout
    assert len(_dbs(tmp_path)) == 1


def test_scope_rule_for_path_and_dash_dash_path(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert scope_in(repo, "app", cwd=repo) == "app"
    assert scope_in(repo, ".", cwd=repo / "app") == "app"
    assert scope_in(repo, "*.py", cwd=repo / "app") == "app/*.py"
    assert scope_in(repo, "../app/retry.py", cwd=repo / "app") == "app/retry.py"
    assert scope_in(repo, str(repo / "app"), cwd=tmp_path) == "app"
    assert scope_in(repo, str(repo), cwd=repo) == ""
    with pytest.raises(Exception, match="outside the repository"):
        scope_in(repo, "..", cwd=repo)
    with pytest.raises(Exception, match="outside the repository"):
        scope_in(repo, "/etc", cwd=repo)
    assert repo_root(repo / "app") == repo
    assert repo_root(tmp_path) is None or repo_root(tmp_path) != repo


def test_system_credential_files_are_secrets(tmp_path: Path) -> None:
    names = [
        "shadow",
        "gshadow",
        "shadow-",
        "ssh/ssh_host_ed25519_key",
        ".ssh/id_ed25519",
        ".netrc",
        ".pgpass",
        ".aws/credentials",
        "keys/server.pem",
        "keys/server.key",
        "vault.kdbx",
        "krb5.keytab",
        ".env",
    ]
    kept = ["ssh/ssh_host_ed25519_key.pub", "app/credentials.py", ".env.example", "passwd"]
    for n in names + kept:
        p = tmp_path / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x = 1\n")
    res = walk(tmp_path)
    got = {f.path for f in res.files}
    assert got == set(kept), got
    assert res.skipped["secret"] == len(names)


@pytest.mark.slow
def test_model_setting_that_cannot_load_keeps_the_vectors(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    env = _env(tmp_path)
    r = run_scry("index", "-q", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "cache" / _dbs(tmp_path)[0]

    def vectors() -> tuple[int, str | None]:
        st = Store(db, readonly=True)
        try:
            return st.scalar("SELECT count(*) FROM embeddings"), st.meta("embedder")
        finally:
            st.close()

    before = vectors()
    assert before[0] > 0
    (repo / ".scry.toml").write_text('[embed]\nmodel = "/nonexistent"\n')
    r = run_scry("locate", "backoff", cwd=repo, env=env)  # needs no model: answers
    assert r.returncode == 0 and "app/retry.py" in r.stdout and vectors() == before
    for cmd in (["retry backoff"], ["index"]):
        r = run_scry(*cmd, cwd=repo, env=env)
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        assert "index is unchanged" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert "Traceback" not in r.stderr
        assert vectors() == before
    os.remove(repo / ".scry.toml")
    r = run_scry("retry backoff", "--json", cwd=repo, env=env)
    assert r.returncode == 0 and '"dense"' in r.stdout


# -- the smaller first-hour items, over one lexical index of the sample repository -------


@pytest.fixture(scope="module")
def lex_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    from sample_repo import write_repo

    base = tmp_path_factory.mktemp("first")
    repo = write_repo(base / "shop")
    (repo / ".git").mkdir()
    (repo / "odd\nname.py").write_text("def odd_named_helper():\n    return 1\n")
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (repo / "node_modules" / "x").mkdir(parents=True)
    (repo / "node_modules" / "x" / "i.js").write_text("x = 1\n")
    env = {"SCRY_CACHE_DIR": str(base / "cache")}
    r = run_scry("index", "--no-embed", "-q", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    return repo, env


def _lex(*args: str) -> list[str]:
    return [*args, "--mode", "lexical", "--no-sync"]


def test_lang_aliases_and_unknown_languages(lex_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = lex_repo
    for alias in ("py", "Python", "python3"):
        r = run_scry(*_lex("search", "compute_backoff", "--lang", alias), cwd=repo, env=env)
        assert r.returncode == 0 and "app/retry.py" in r.stdout, (alias, r.stderr)
    r = run_scry(*_lex("search", "cache", "--lang", "go,ts"), cwd=repo, env=env)
    assert r.returncode == 0 and "svc/cache.go" in r.stdout
    r = run_scry(*_lex("search", "readme", "--lang", "md"), cwd=repo, env=env)
    assert r.returncode == 0 and "README.md" in r.stdout
    r = run_scry(*_lex("search", "cache", "--lang", "cobol"), cwd=repo, env=env)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "unknown language 'cobol'" in r.stderr and "python" in r.stderr
    r = run_scry("locate", "cache", "--lang", "rs", "--no-sync", cwd=repo, env=env)
    assert r.returncode in (0, 1) and "unknown" not in r.stderr


def test_api_lang_alias_k_and_result_types(lex_repo: tuple[Path, dict[str, str]]) -> None:
    import scrydb
    from scrydb.errors import ScryError
    from scrydb.results import Match

    repo, env = lex_repo
    os.environ["SCRY_CACHE_DIR"] = env["SCRY_CACHE_DIR"]
    with scrydb.open(repo, readonly=True) as ix:
        hits = ix.search("compute_backoff", lang="py", mode="lexical")
        assert hits and hits[0].path == "app/retry.py"
        with pytest.raises(ScryError, match="unknown language"):
            ix.search("x", lang="cobol")
        with pytest.raises(ValueError):
            ix.search("compute_backoff", k=0)
        m = ix.locate("def compute_backoff")
        assert isinstance(m[0], Match) and m[0].path == "app/retry.py"
        assert m[0].to_json()["line"] == m[0].line


def test_help_is_fast_and_usage_errors_are_one_line(lex_repo: tuple[Path, dict[str, str]]) -> None:
    import subprocess
    import sys

    from scrydb.cli import LAZY_COMMANDS, LAZY_HELP, cli

    code = (
        "import sys\nfrom scrydb import cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('MCP' if 'mcp' in sys.modules else 'NO-MCP', 'torch' in sys.modules,\n"
        "      'numpy' in sys.modules, 'scrydb.index' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "NO-MCP False False False" in out.stdout and "serve" in out.stdout, (
        out.stdout + out.stderr
    )
    assert "scry search WORD" in out.stdout  # one-word queries that are command names
    import click

    ctx = click.Context(cli)
    for name in LAZY_COMMANDS:
        cmd = cli.get_command(ctx, name)
        assert cmd is not None and cmd.get_short_help_str(200) == LAZY_HELP[name]
    repo, env = lex_repo
    for args in (["search"], ["related", "x.py:1", "-n", "abc"], ["index", "--bogus"]):
        r = run_scry(*args, cwd=repo, env=env)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stderr.startswith("scry: error:") and "--help" in r.stderr


def test_read_paths_and_lines(lex_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = lex_repo
    r = run_scry("read", "../README.md:1-3", "--no-sync", cwd=repo / "app", env=env)
    assert r.returncode == 0 and "# shop" in r.stdout, r.stderr
    r = run_scry("read", "", "--no-sync", cwd=repo, env=env)
    assert r.returncode == 2 and "empty path" in r.stderr
    # PATH:LINE is the chunk around that line, as in the MCP read tool.
    text = (repo / "app" / "retry.py").read_text().split("\n")
    line = next(i + 1 for i, t in enumerate(text) if "def compute_backoff" in t) + 2
    r = run_scry("read", f"app/retry.py:{line}", "--no-sync", cwd=repo, env=env)
    assert r.returncode == 0 and len(r.stdout.strip().splitlines()) > 1
    assert "def compute_backoff" in r.stdout
    for bad in ("app/retry.py:0", "app/retry.py:9999"):
        r = run_scry("related", bad, "--no-sync", cwd=repo, env=env)
        assert r.returncode == 2, (bad, r.stdout, r.stderr)
        r2 = run_scry("read", bad, "--no-sync", cwd=repo, env=env)
        assert r2.returncode == 2


def test_queries_with_nothing_to_search_for(lex_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = lex_repo
    for q in ('"', "*", "NEAR(", "^", "\U0001f600", "(( ))"):
        r = run_scry("search", q, "--no-sync", cwd=repo, env=env)
        assert r.returncode == 1 and not r.stdout.strip(), (q, r.stdout)
        assert "nothing to search for" in r.stderr


def test_status_lists_skipped_paths_and_index_counts(lex_repo: tuple[Path, dict[str, str]]) -> None:
    import json

    repo, env = lex_repo
    r = run_scry("status", "--skipped", "--json", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    skipped = json.loads(r.stdout)["skipped"]
    assert skipped["binary"] == ["blob.bin"] and skipped["noise-dir"] == ["node_modules/"]
    assert ".git/" not in skipped.get("noise-dir", [])
    r = run_scry("status", "--skipped", cwd=repo, env=env)
    assert "noise-dir (1)" in r.stdout and "  node_modules/" in r.stdout


def test_file_names_are_escaped_in_text_output(lex_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = lex_repo
    r = run_scry(*_lex("search", "odd_named_helper"), cwd=repo, env=env)
    assert r.returncode == 0 and "odd\\nname.py:1-2" in r.stdout, r.stdout
    r = run_scry("locate", "odd_named_helper", "--no-sync", cwd=repo, env=env)
    assert "odd\\nname.py:1:" in r.stdout


def test_no_sync_without_an_index_says_so(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    env = _env(tmp_path)
    for cmd in (["RetryPolicy", "--no-sync"], ["locate", "x", "--no-sync"]):
        r = run_scry(*cmd, cwd=repo, env=env)
        assert r.returncode == 2 and "no index" in r.stderr, r.stderr
    assert _dbs(tmp_path) == []


def test_full_estimate_names_a_rebuild_and_the_model_load(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    env = _env(tmp_path)
    assert run_scry("index", "--no-embed", "-q", cwd=repo, env=env).returncode == 0
    r = run_scry("index", "--full", "--no-embed", cwd=repo, env=env)
    assert "full rebuild of" in r.stderr and "first index" not in r.stderr
    # A first index with embeddings mentions the model load.
    repo2 = _repo(tmp_path, "second")
    import subprocess
    import sys

    code = (
        "import sys; sys.argv=['scry']\n"
        "from scrydb.cli.common import confirm_first_index\n"
        "import scrydb\n"
        f"ix = scrydb.open({str(repo2)!r}, db={str(tmp_path / 'e.db')!r})\n"
        "confirm_first_index(ix, ask=False)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}
    )
    assert "first index of" in out.stderr and "to load the model" in out.stderr, out.stderr


@pytest.mark.slow
def test_first_search_answers_lexically_and_embeds_in_the_background(tmp_path: Path) -> None:
    import json
    import time

    from scrydb import background

    repo = _repo(tmp_path)
    env = _env(tmp_path)
    r = run_scry("RetryPolicy", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("app/retry.py:"), r.stdout
    assert "in the background" in r.stderr and "scry index --cancel" in r.stderr
    db = tmp_path / "cache" / _dbs(tmp_path)[0]
    try:
        # `scry status` shows it while it runs; `scry index --cancel` ends it cleanly.
        bg = background.running(db)
        if bg is not None:
            st = run_scry("status", cwd=repo, env=env)
            assert "background" in st.stdout, st.stdout
            c = run_scry("index", "--cancel", cwd=repo, env=env)
            assert c.returncode == 0 and "stopped the background indexer" in c.stderr
            assert background.running(db) is None
        # Started again by hand, it finishes: every chunk gets its vector.
        r = run_scry("index", "-q", cwd=repo, env=env)
        assert r.returncode == 0, r.stderr
        st = json.loads(run_scry("status", "--json", cwd=repo, env=env).stdout)
        assert st["search"] == "hybrid" and st["pending"] == 0
    finally:
        background.stop(db)
    # --no-background (or [index] background = false) waits for the vectors instead.
    repo2 = _repo(tmp_path, "other")
    r = run_scry("RetryPolicy", "--no-background", cwd=repo2, env=env)
    assert r.returncode == 0 and "background" not in r.stderr
    db2 = next(p for p in (tmp_path / "cache").glob("other-*.db"))
    assert background.running(db2) is None
    st = json.loads(run_scry("status", "--json", cwd=repo2, env=env).stdout)
    assert st["search"] == "hybrid"
    deadline = time.monotonic() + 5
    while background.running(db) is not None and time.monotonic() < deadline:
        time.sleep(0.1)


def test_index_summary_adds_up(tmp_path: Path) -> None:
    import re

    repo = _repo(tmp_path)
    (repo / "app" / "blob.py").write_bytes(b"x = 1\x00\x01\x02\n")  # binary by content
    (repo / "node_modules" / "m").mkdir(parents=True)
    (repo / "node_modules" / "m" / "i.js").write_text("x = 1\n")
    (repo / "package-lock.json").write_text("{}\n")
    r = run_scry("index", "--no-embed", cwd=repo, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    m = re.search(
        r"(\d+) files \((\d+) new, (\d+) changed, (\d+) unchanged, (\d+) skipped by content\), "
        r"(\d+) deleted; (\d+) paths left out",
        r.stderr,
    )
    assert m, r.stderr
    seen, new, changed, unchanged, by_content, _deleted, by_rules = map(int, m.groups())
    assert seen == new + changed + unchanged + by_content
    assert (new, by_content, by_rules) == (2, 1, 2), r.stderr
    st = run_scry("status", "--skipped", "--json", cwd=repo, env=_env(tmp_path))
    import json

    skipped = json.loads(st.stdout)["skipped"]
    assert skipped["binary"] == ["app/blob.py"] and skipped["lock-file"] == ["package-lock.json"]
    # Run again with nothing to do: it says so, and no search hint (issue 42 row 8: the
    # user typed the command `scry index`, not a query).
    again = run_scry("index", "--no-embed", cwd=repo, env=_env(tmp_path))
    assert again.returncode == 0 and "nothing changed" in again.stderr
    assert "scry search" not in again.stderr
