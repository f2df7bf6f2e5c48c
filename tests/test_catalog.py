"""``catalog.py``: a repository named by path, index file or name (``scry search --repo``,
the MCP ``search`` tool's ``repos``). Hostile specs end in one ScryError line."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrydb.catalog import resolve_repo
from scrydb.errors import ScryError


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # Found by tests/fuzz/mcp.py once it fuzzed ``repos`` (corpus/mcp/crash-repos-*):
        # the first two escaped as OSError and RuntimeError, an agent saw "Error executing
        # tool search" and the server logged no reason.
        ("a" * 300, "File name too long"),
        ("~nosuchuser46/x", "home directory"),
        ("shop\nrm", r"no repository shop\\nrm: not a directory"),
        ("\x00", r"no repository \\x00: not text"),
        ("\ud800", r"no repository \\ud800: not text"),
        ("x" * 1000, "no repository x{200}…: File name too long"),
    ],
)
def test_a_hostile_spec_is_one_line(
    spec: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRY_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ScryError, match=message) as err:
        resolve_repo(spec, base=tmp_path)
    text = str(err.value)
    assert text.isprintable() and len(text) < 400, text


def test_a_directory_outside_is_a_root_without_an_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRY_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "repo").mkdir()
    src = resolve_repo("..", base=tmp_path / "repo")
    assert src.db.parent == tmp_path / "cache" and not src.db.exists()
