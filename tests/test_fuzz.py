"""The fuzz harnesses (tests/fuzz/, issue 46) in CI: a short atheris run of each (a few
thousand executions, libFuzzer in a child process since ``atheris.Fuzz()`` never
returns), and a replay of every checked-in seed and crash reproducer. The million-run
campaigns are a command (RELIABILITY.md, "Fuzzing")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris", reason="the test extra installs atheris (pyproject.toml)")

from fuzz.run import HARNESSES, corpus_dir

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "tests" / "fuzz" / "run.py"
#: Executions per harness in CI, and the longest input there (the campaigns use each
#: harness's own MAX_LEN): the six together take about 90 s on 2 loaded cores.
SMOKE_RUNS = {
    "chunk": 1500,
    "tokens": 3000,
    "query": 2000,
    "config": 2000,
    "filters": 2000,
    "mcp": 1500,
}
SMOKE_MAX_LEN = 2048


def _run(*args: str, tmp: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN), *args],
        cwd=ROOT,
        env={**os.environ, "SCRY_FUZZ_TMP": str(tmp)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_every_harness_has_seeds() -> None:
    for name in HARNESSES:
        seeds = [p for p in corpus_dir(name).iterdir() if p.name.startswith("seed-")]
        assert len(seeds) >= 5, name


def test_corpus_replays(tmp_path: Path) -> None:
    """Every seed and every saved reproducer (``crash-*``) passes its harness."""
    r = _run("--replay", "all", tmp=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert r.stdout.count("all pass") == len(HARNESSES), r.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", HARNESSES)
def test_smoke(name: str, tmp_path: Path) -> None:
    """A short coverage-guided run finds no crash, runs every execution asked for and
    reaches scrydb's code (``cov`` counts its instrumented edges)."""
    out = tmp_path / "figures.json"
    runs = SMOKE_RUNS[name]
    r = _run(
        f"--runs={runs}",
        f"--max-len={SMOKE_MAX_LEN}",
        f"--work={tmp_path / 'work'}",
        f"--json={out}",
        name,
        tmp=tmp_path,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    (res,) = json.loads(out.read_text())
    assert res["crashes"] == [] and res["executions"] >= runs, res
    assert res["cov"] >= 30, res
