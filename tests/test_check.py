"""``scry check``: one verdict per probe, exit 0 when all are ok and 2 otherwise -- with
the built-in model, real local endpoints (tests/servers.py) and broken ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import run_scry
from servers import ModelServer

import scrydb
from scrydb.cli.check import check_cmd

pytestmark = pytest.mark.slow


def _check(repo: Path, db: Path, *args: str) -> Result:
    return CliRunner().invoke(check_cmd, [str(repo), "--db", str(db), *args])


def _lines(r: Result) -> dict[str, str]:
    out = {}
    for line in r.output.splitlines():
        name = line.split()[1]
        out[name] = line
    return out


def _config(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "scry.toml"
    p.write_text(text)
    return p


def test_help_has_an_example() -> None:
    r = CliRunner().invoke(check_cmd, ["--help"])
    assert r.exit_code == 0 and "Example:" in r.output and "scry check" in r.output


def test_built_in_model_and_index(indexed_sample: tuple[Path, Path]) -> None:
    repo, db = indexed_sample
    p = run_scry("check", "--db", str(db), cwd=repo)  # the real CLI, the real exit code
    assert p.returncode == 0, p.stdout + p.stderr
    lines = {ln.split()[1]: ln for ln in p.stdout.splitlines()}
    assert list(lines) == ["config", "sqlite", "index", "embedder", "rerank", "chat"]
    assert lines["config"].startswith("ok") and "defaults" in lines["config"]
    assert (
        lines["sqlite"].startswith("ok")
        and "FTS5" in lines["sqlite"]
        and "sqlite-vec" in lines["sqlite"]
    )
    assert lines["index"].startswith("ok") and "integrity ok" in lines["index"]
    assert lines["embedder"].startswith("ok") and "384-d" in lines["embedder"]
    assert "matches the index" in lines["embedder"]
    assert lines["rerank"].startswith("skip") and lines["chat"].startswith("skip")


def test_no_index_yet_is_not_a_failure_and_creates_nothing(
    sample_repo: Path, tmp_path: Path
) -> None:
    db = tmp_path / "none.db"
    r = _check(sample_repo, db)
    assert r.exit_code == 0, r.output
    assert _lines(r)["index"].startswith("skip")
    assert not db.exists()


def test_all_endpoints_answer_sanely(indexed_sample: tuple[Path, Path], tmp_path: Path) -> None:
    repo, db = indexed_sample
    with ModelServer() as srv:
        conf = _config(
            tmp_path,
            f'[embed]\nprovider = "openai"\nurl = "{srv.url}"\n'
            f'[rerank]\nprovider = "http"\nurl = "{srv.url}"\n'
            f'[chat]\nurl = "{srv.url}"\nhyde = "auto"\n',
        )
        r = _check(repo, db, "--config", str(conf), "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["ok"] is True
    checks = {c["name"]: c for c in report["checks"]}
    assert all(c["status"] == "ok" for c in checks.values()), checks
    assert "openai:" in checks["embedder"]["detail"] and "384-d" in checks["embedder"]["detail"]
    assert "index built with st:" in checks["embedder"]["detail"]  # same dim, another model id
    assert "on-topic" in checks["rerank"]["detail"]
    assert "hyde = auto" in checks["chat"]["detail"]


@pytest.mark.parametrize(
    ("behaviour", "section", "probe", "words"),
    [
        ({"rerank_score": "inverted"}, "rerank", "rerank", "off-topic scores higher"),
        ({"garbage": True}, "rerank", "rerank", "reranker answered"),
        ({"chat": "empty"}, "chat", "chat", "empty message"),
        ({"fail_first": 99, "fail_status": 503}, "chat", "chat", "HTTP 503"),
        ({"dim": 100}, "embed", "embedder", "100-d vectors"),
    ],
)
def test_broken_endpoint_fails_the_check(
    indexed_sample: tuple[Path, Path],
    tmp_path: Path,
    behaviour: dict[str, object],
    section: str,
    probe: str,
    words: str,
) -> None:
    repo, db = indexed_sample
    body = {
        "rerank": 'provider = "http"\n',
        "chat": 'hyde = "on"\n',
        "embed": 'provider = "openai"\nretries = 0\ndim = 384\n',
    }[section]
    with ModelServer(**behaviour) as srv:  # type: ignore[arg-type]
        conf = _config(tmp_path, f'[{section}]\nurl = "{srv.url}"\n{body}')
        r = _check(repo, db, "--config", str(conf))
    assert r.exit_code == 2, r.output
    line = _lines(r)[probe]
    assert line.startswith("FAIL") and words in line, line
    assert sum(v.startswith("FAIL") for v in _lines(r).values()) == 1


def test_dimension_differing_from_the_index_fails(
    indexed_sample: tuple[Path, Path], tmp_path: Path
) -> None:
    repo, db = indexed_sample
    with ModelServer(dim=100) as srv:
        conf = _config(tmp_path, f'[embed]\nprovider = "openai"\nurl = "{srv.url}"\n')
        r = _check(repo, db, "--config", str(conf))
    assert r.exit_code == 2
    line = _lines(r)["embedder"]
    assert line.startswith("FAIL") and "100-d" in line and "index holds 384-d" in line


def test_damaged_index_fails(indexed_sample: tuple[Path, Path], tmp_path: Path) -> None:
    repo, db = indexed_sample
    with scrydb.open(repo, db=db) as ix:
        ix.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        # B-tree pages to damage: where the chunks and files tables and an index start
        # (a scribble over free space or vector blobs passes an integrity check).
        roots = [
            r[0]
            for r in ix.store.rows(
                "SELECT rootpage FROM sqlite_master WHERE name IN ('chunks', 'files', 'chunks_file')"
            )
        ]
        page = ix.store.scalar("PRAGMA page_size")
    bad = tmp_path / "bad.db"
    shutil.copy(db, bad)
    data = bytearray(bad.read_bytes())
    for n in roots:  # the page header and cell pointers
        data[(n - 1) * page : (n - 1) * page + 800] = b"\xa5" * 800
    for off in range(3 * page, len(data) - page, 7 * page):  # and pages at intervals
        data[off + 100 : off + 900] = b"\xa5" * 800
    bad.write_bytes(bytes(data))
    r = _check(repo, bad)
    assert r.exit_code == 2, r.output
    assert _lines(r)["index"].startswith("FAIL")


def test_bad_config_fails(sample_repo: Path, tmp_path: Path) -> None:
    conf = _config(tmp_path, "[rerank]\nprovider = 3\n")
    r = _check(sample_repo, tmp_path / "x.db", "--config", str(conf))
    assert r.exit_code == 2
    line = _lines(r)["config"]
    assert line.startswith("FAIL") and "provider must be a string" in line
