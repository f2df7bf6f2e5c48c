"""Progress off a terminal (``scrydb/cli/progress.py``): ``scry index`` with stderr on a
pipe says where it is every few seconds (rich's bar is for terminals); a run shorter
than the interval says nothing more than before.

Real ``scry`` subprocesses, real model, real SQLite files."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from conftest import run_scry
from synth_repo import write_synth

from scrydb.cli.progress import PROGRESS_ENV, PROGRESS_SECONDS, PlainProgress, interval

LINE = re.compile(r"^scry: (chunk|embed) (\d+) of (\d+) (files|texts)( \(\d+%\))?", re.M)


@pytest.mark.slow
def test_index_off_a_terminal_prints_plain_progress(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "p", 60, funcs=3, varied=True)
    env = {"SCRY_CACHE_DIR": str(tmp_path / "cache"), PROGRESS_ENV: "0.001"}
    r = run_scry("index", "--db", str(tmp_path / "p.db"), cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    lines = LINE.findall(r.stderr)
    phases = {m[0] for m in lines}
    assert phases == {"chunk", "embed"}, r.stderr
    for phase, done, total, unit, _pct in lines:
        assert int(done) <= int(total) and unit == ("files" if phase == "chunk" else "texts")
    assert "\x1b[" not in r.stderr  # no terminal control codes in a log


def test_no_progress_lines_with_quiet_or_json(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "q", 20)
    env = {"SCRY_CACHE_DIR": str(tmp_path / "cache"), PROGRESS_ENV: "0.001"}
    for flags in (["-q"], ["--json"]):
        db = tmp_path / f"q{flags[0]}.db"
        r = run_scry("index", "--no-embed", *flags, "--db", str(db), cwd=repo, env=env)
        assert r.returncode == 0 and not LINE.search(r.stderr), r.stderr


def test_plain_progress_is_quiet_within_its_interval() -> None:
    out = io.StringIO()
    p = PlainProgress(out, every=3600.0)
    for i in range(1, 101):
        p("chunk", i, 100)
    assert out.getvalue() == ""


def test_plain_progress_line_says_how_far_and_how_long() -> None:
    out = io.StringIO()
    p = PlainProgress(out, every=1e-9)
    p("embed", 0, 400)
    p("embed", 100, 400)
    text = out.getvalue()
    assert "scry: embed 100 of 400 texts (25%), about " in text and text.endswith(" left\n")


def test_interval_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROGRESS_ENV, "2.5")
    assert interval() == 2.5
    for bad in ("", "soon", "0", "-1"):
        monkeypatch.setenv(PROGRESS_ENV, bad)
        assert interval() == PROGRESS_SECONDS
