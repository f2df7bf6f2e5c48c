"""The first-index estimate (``sync/estimate.py``) and the rate it divides by
(``sync/rates.py``): it counts the texts a real index embeds (every kind, distinct,
minus what the shared cache holds), honours the index's skip rules, and one slow run
does not move the rate.

Real files, real SQLite, real tree-sitter parses; a stand-in embedder records what it
is given."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from synth_repo import FakeEmbedder, function_text, write_synth

import scrydb
from scrydb.config import Config
from scrydb.sync import estimate
from scrydb.sync import rates as rates_mod
from scrydb.sync.rates import (
    DEFAULT_EMBED_RATE,
    RATE_HISTORY,
    embed_rate,
    record_rate,
    typical_rate,
)
from scrydb.sync.reuse import open_shared_cache

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"


def _repo(root: Path) -> Path:
    """A small tree with every kind of text: bodies, headers, comment views and the
    windows of a long function, a duplicated module, and a private key (skipped)."""
    repo = write_synth(root, 60, funcs=3, varied=True)
    long = "def very_long_function(x):\n    # weigh every item of the basket here\n" + "".join(
        f"    x = x + {i}  # step {i} adds its share\n" for i in range(300)
    )
    (repo / "long_mod.py").write_text(long + "    return x\n", encoding="utf-8")
    (repo / "copy.py").write_text((repo / "long_mod.py").read_text(), encoding="utf-8")
    (repo / "deploy_key.py").write_text(
        f'KEY = """\n{KEY}"""\n\ndef unlock_vault():\n    return KEY\n', encoding="utf-8"
    )
    return repo


def test_estimate_counts_the_texts_the_index_embeds(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    config = Config()
    config.index.shared_cache = False
    est = estimate(repo, config, rate=10.0, rate_measured=True)
    fake = FakeEmbedder()
    with scrydb.open(repo, db=tmp_path / "r.db", config=config, embedder=fake) as ix:
        rep = ix.sync()
    embedded = rep.texts_embedded + rep.headers_embedded + rep.windows_embedded
    assert rep.windows_embedded and rep.headers_embedded and rep.skipped["secret"] == 1
    # Under ESTIMATE_SAMPLE files: every file is in the sample, so the count is exact.
    assert est.texts == embedded == len(fake.texts)
    assert est.kinds == {
        "body": rep.texts_embedded,
        "head": rep.headers_embedded,
        "window": rep.windows_embedded,
    }
    assert est.chunks == rep.chunks_written and est.to_embed == embedded
    assert est.seconds_embed == pytest.approx(embedded / 10.0)


def test_estimate_samples_the_whole_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree a little over ESTIMATE_SAMPLE files is sampled over all of it, not its
    first files: here the first half (code, a dozen texts per file) and the second (plain
    text of the same size, one text each) differ twelvefold in texts per byte."""
    monkeypatch.setattr(sys.modules["scrydb.sync.estimate"], "ESTIMATE_SAMPLE", 20)
    repo = tmp_path / "mixed"
    repo.mkdir()
    (repo / ".scry.toml").write_text("")
    for i in range(15):
        code = "\n\n".join(function_text(i * 10 + j) for j in range(6))
        (repo / f"a_{i:02}.py").write_text(code, encoding="utf-8")
        words = " ".join(f"note{i}word{k}" for k in range(len(code) // 12))
        (repo / f"b_{i:02}.txt").write_text(words[: len(code)] + "\n", encoding="utf-8")
    config = Config()
    config.index.shared_cache = False
    est = estimate(repo, config, rate=10.0, rate_measured=True)
    fake = FakeEmbedder()
    with scrydb.open(repo, db=tmp_path / "m.db", config=config, embedder=fake) as ix:
        ix.sync()
    assert abs(est.texts - len(fake.texts)) <= 0.1 * len(fake.texts), (est, len(fake.texts))


def test_estimate_honours_skip_secrets(tmp_path: Path) -> None:
    """The estimate reads files as the index does: a private key is not counted, and is
    when ``skip_secrets`` is off (the index then embeds it too)."""
    repo = _repo(tmp_path / "r")
    on = Config()
    off = Config()
    off.index.skip_secrets = False
    with_key = estimate(repo, off, rate=10.0, rate_measured=True)
    without = estimate(repo, on, rate=10.0, rate_measured=True)
    assert with_key.texts > without.texts and with_key.chunks > without.chunks


def test_estimate_subtracts_what_the_shared_cache_holds(tmp_path: Path) -> None:
    """After a clone of the same repository is indexed, the cache holds every text: the
    estimate expects nothing to embed."""
    config = Config()
    a = _repo(tmp_path / "a" / "proj")
    b = _repo(tmp_path / "b" / "proj")
    fake = FakeEmbedder()
    with scrydb.open(a, db=tmp_path / "a.db", config=config, embedder=fake) as ix:
        ix.sync()
    cache = open_shared_cache(config, fake.id, fake.dim, warn=lambda _m: None, readonly=True)
    assert cache is not None
    try:
        fresh = estimate(b, config, rate=10.0, rate_measured=True)
        cached = estimate(b, config, rate=10.0, rate_measured=True, cache=cache)
    finally:
        cache.close()
    assert fresh.cached == 0 and fresh.to_embed == len(fake.texts)
    assert cached.cached == 1.0 and cached.to_embed == 0 and cached.seconds_embed == 0


def test_one_slow_run_does_not_move_the_rate() -> None:
    """The rate is the median of the recent measured ones: one run at a tenth of the
    pace (a busy machine) leaves it where it was; a lasting change moves it."""
    for _ in range(4):
        record_rate("m:1", 20.0)
    record_rate("m:1", 2.0)
    assert embed_rate("m:1") == (20.0, True)
    for _ in range(RATE_HISTORY):
        record_rate("m:1", 8.0)
    assert embed_rate("m:1") == (8.0, True)
    stored = json.loads(rates_mod.rates_path().read_text(encoding="utf-8"))
    assert stored["m:1"] == [8.0] * RATE_HISTORY
    assert typical_rate([]) is None and typical_rate([3.0, 30.0, 4.0]) == 4.0


def test_a_first_measured_run_is_one_sample_beside_the_default() -> None:
    """One or two measured runs count with the default as one more sample: a first run
    on a busy machine does not become the machine's rate."""
    d = DEFAULT_EMBED_RATE
    assert typical_rate([d / 4]) == pytest.approx((d / 4 + d) / 2)
    assert typical_rate([d / 4, d * 2]) == d
    assert typical_rate([d / 4, d * 2, d * 3]) == d * 2  # enough of its own: no default


def test_a_rate_from_an_older_scrydb_is_not_used() -> None:
    """An older scrydb stored one number of bodies/s: another unit, so it is ignored (the
    default is said to be a default) and replaced by the next measured rate."""
    path = rates_mod.rates_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"m:1": 55.0}), encoding="utf-8")
    assert embed_rate("m:1") == (DEFAULT_EMBED_RATE, False)
    record_rate("m:1", 30.0)
    assert embed_rate("m:1") == ((30.0 + DEFAULT_EMBED_RATE) / 2, True)


def test_a_sync_records_a_rate_of_every_kind_of_text(tmp_path: Path) -> None:
    """A sync that embedded more than RATE_MIN_TEXTS texts records a rate; the index
    keeps it in its meta and the machine in its history."""
    repo = _repo(tmp_path / "r")
    fake = FakeEmbedder(id="fake:rate")
    with scrydb.open(repo, db=tmp_path / "r.db", embedder=fake) as ix:
        rep = ix.sync()
        assert rep.embed_rate is not None and rep.embed_rate > 0
        assert ix.status(check_stale=False, check_git=False).embed_rate is not None
    assert embed_rate("fake:rate")[1]
