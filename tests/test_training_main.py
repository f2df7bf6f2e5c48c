"""training/__main__.py and training/__init__.py: every listed step is a module with a
``main``, and no step defaults to a path that exists on one machine only (the corpus folder
comes from ``--data``/``--out`` or ``$SCRY_TRAIN_DATA``)."""

from __future__ import annotations

import argparse
import ast
import importlib
from pathlib import Path

import pytest

from training import DATA_ENV, add_data_option
from training.__main__ import STEPS, main, usage

TRAINING = Path(__file__).resolve().parent.parent / "training"
#: roots of paths that belong to one machine, not to the repository
MACHINE_ROOTS = ("/work", "/tmp", "/root", "/home", "/Users", "/mnt", "/data")


def test_every_step_is_listed_and_has_a_main(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for step, (module, _) in STEPS.items():
        assert f"  {step} " in text
        assert callable(importlib.import_module(module).main), module
    assert "training/README.md" in usage()  # where the experiments that left are recorded


def test_a_removed_experiment_is_no_step(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep"]) == 2
    assert "no step 'sweep'" in capsys.readouterr().err


def _machine_paths(tree: ast.AST) -> list[str]:
    """String constants that are argparse defaults or module-level assignments and start
    with a machine root (f-strings included: their literal parts)."""
    found: list[str] = []

    def check(node: ast.AST | None) -> None:
        parts = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts = [node.value]
        elif isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
        elif isinstance(node, ast.Call) and node.args:  # Path("/work/...")
            check(node.args[0])
        found.extend(p for p in parts[:1] if isinstance(p, str) and p.startswith(MACHINE_ROOTS))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "default":
                    check(kw.value)
    if isinstance(tree, ast.Module):
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign):
                check(stmt.value)
    return found


def test_no_default_is_a_path_on_one_machine() -> None:
    bad = {}
    for path in sorted(TRAINING.glob("*.py")):
        hits = _machine_paths(ast.parse(path.read_text(), filename=str(path)))
        if hits:
            bad[path.name] = hits
    assert not bad, bad


def test_the_checker_sees_a_machine_default() -> None:
    src = 'X = Path("/work/x")\nap.add_argument("--out", default=f"/tmp/{N}")\n'
    assert sorted(_machine_paths(ast.parse(src))) == ["/tmp/", "/work/x"]


def test_the_corpus_folder_is_the_option_or_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    ap = argparse.ArgumentParser()
    add_data_option(ap)
    assert ap.parse_args(["--data", "d"]).data == "d"
    with pytest.raises(SystemExit):
        ap.parse_args([])
    assert "--data" in capsys.readouterr().err

    optional = argparse.ArgumentParser()
    add_data_option(optional, "--out", required=False)
    assert optional.parse_args([]).out is None

    monkeypatch.setenv(DATA_ENV, "/somewhere/corpus")
    ap = argparse.ArgumentParser()
    add_data_option(ap, "--out")
    assert ap.parse_args([]).out == "/somewhere/corpus"
    assert ap.parse_args(["--out", "o"]).out == "o"
