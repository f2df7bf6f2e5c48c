"""Shared fixtures: small real repositories in temp dirs, indexed with the real model."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from sample_repo import write_repo

import scrydb


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test gets its own index cache directory: nothing leaks between tests."""
    monkeypatch.setenv("SCRY_CACHE_DIR", str(tmp_path_factory.mktemp("scry-cache")))
    monkeypatch.delenv("SCRY_DB", raising=False)


@pytest.fixture
def sample_repo(tmp_path: Path) -> Path:
    """A fresh copy of the sample repository (not indexed)."""
    return write_repo(tmp_path / "shop")


@pytest.fixture(scope="session")
def indexed_sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(repo, db) of the sample repository indexed once per session with the real model."""
    base = tmp_path_factory.mktemp("indexed")
    repo = write_repo(base / "shop")
    db = base / "shop.db"
    with scrydb.open(repo, db=db) as ix:
        ix.sync()
    yield repo, db


@pytest.fixture(scope="session")
def sample_index(indexed_sample: tuple[Path, Path]) -> Iterator[scrydb.Index]:
    """An open Index over the session's indexed sample repository (read-only use)."""
    repo, db = indexed_sample
    with scrydb.open(repo, db=db) as ix:
        yield ix


def run_scry(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real ``scry`` CLI as a subprocess."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "scrydb.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=600,
        input=input,
    )


def git(repo: Path, *args: str) -> None:
    """Run a real git command in ``repo`` (a test identity, no signing); fails loudly."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


# -- the extended reliability run (``--slow`` or ``SCRY_SLOW=1``) --------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="Extended reliability run: more kill points, hypothesis examples and a "
        "100,000-file scale test (same as SCRY_SLOW=1).",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--slow", default=False):
        os.environ["SCRY_SLOW"] = "1"


def slow_run() -> bool:
    """Whether this is the extended run (``--slow`` / ``SCRY_SLOW=1``): test modules read
    it when they are imported, after ``pytest_configure``."""
    return os.environ.get("SCRY_SLOW", "") not in ("", "0")
