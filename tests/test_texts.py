"""What the model sees (``scrydb/sync/texts.py``): the texts a real index embeds are exactly
those the module builds, byte for byte as before it existed; the repository is named as
the index names it (the remote, not the folder), also in training's export.

Real files, real SQLite, real tree-sitter parses, real git; a stand-in embedder records
what it is given."""

from __future__ import annotations

import types
from pathlib import Path

from conftest import git
from sample_repo import write_repo
from synth_repo import FakeEmbedder

import scrydb
from scrydb.config import Config
from scrydb.paths import repo_name
from scrydb.store.vcache import text_key
from scrydb.sync import texts
from scrydb.sync.read import read_and_chunk
from scrydb.walk import walk

TAX = '''def add_tax(price: float, rate: float) -> float:
    """Add the sales tax to a price."""
    # the rate is a fraction of the price, not a percentage
    return price * (1 + rate)
'''
#: What the index embedded for ``TAX`` before ``sync/texts.py`` existed (scrydb f60c49b):
#: the body after its context line, the header, the comment view after the same line.
TAX_TEXTS = [
    "till > shop/tax.py > add_tax\n" + TAX.rstrip("\n"),
    "add tax\nAdd the sales tax to a price.\nshop tax",
    "till > shop/tax.py > add_tax\nthe rate is a fraction of the price, not a percentage",
]
#: The shared vector cache's keys of those texts (blake2b-128 of each), as stored by then.
TAX_KEYS = [text_key(t).hex() for t in TAX_TEXTS]


def _index_texts(repo: Path, db: Path) -> tuple[list[str], scrydb.SyncReport]:
    """(every text the model was given, the report) of a first index of ``repo``."""
    fake = FakeEmbedder()
    with scrydb.open(repo, db=db, embedder=fake) as ix:
        rep = ix.sync()
    return fake.texts, rep


def _module_texts(repo: Path, config: Config) -> dict[tuple[str, str], str]:
    """(kind, key) -> text of every chunk of ``repo``, built by ``sync/texts.py`` from the
    files read as the index reads them."""
    name = repo_name(repo)
    out: dict[tuple[str, str], str] = {}
    for f in walk(repo, config.index).files:
        for c in read_and_chunk(repo, f, config.index).chunks:
            for t in texts.chunk_texts(name, f.path, c.symbol, c.kind, c.content, config.index):
                out.setdefault((t.kind, t.key), t.text)
    return out


def test_a_fixture_chunk_is_embedded_as_before(tmp_path: Path) -> None:
    repo = tmp_path / "till"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "tax.py").write_text(TAX, encoding="utf-8")
    given, rep = _index_texts(repo, tmp_path / "t.db")
    assert given == TAX_TEXTS
    assert (rep.texts_embedded, rep.headers_embedded, rep.windows_embedded) == (1, 1, 1)
    assert [text_key(t).hex() for t in given] == TAX_KEYS
    # The module's functions give the same texts, one by one and all together.
    cfg = Config().index
    body = texts.body_text("till", "shop/tax.py", "add_tax", TAX.rstrip("\n"), 2000)
    head = texts.head_text("shop/tax.py", "add_tax", "function", TAX.rstrip("\n"))
    views = texts.view_texts_of("till", "shop/tax.py", "add_tax", TAX.rstrip("\n"), cfg)
    assert [body, head, *views.values()] == TAX_TEXTS
    built = _module_texts(repo, Config())
    assert [t for (_k, _h), t in built.items()] == TAX_TEXTS


def test_the_index_embeds_exactly_what_the_module_builds(tmp_path: Path) -> None:
    """Every text the model is given, over a repository with long chunks (windows),
    comments, headers and a duplicated function (one vector per key)."""
    repo = write_repo(tmp_path / "shop")
    long = "def very_long_function(x):\n    # weigh every item of the basket here\n" + "".join(
        f"    x = x + {i}  # step {i} adds its share\n" for i in range(300)
    )
    (repo / "long_mod.py").write_text(long + "    return x\n", encoding="utf-8")
    (repo / "copy_a.py").write_text(TAX, encoding="utf-8")
    (repo / "copy_b.py").write_text(TAX, encoding="utf-8")
    given, rep = _index_texts(repo, tmp_path / "s.db")
    assert rep.windows_embedded > 1 and rep.headers_embedded > 0
    assert len(given) == len(set(given))  # each text once
    built = _module_texts(repo, Config())
    assert sorted(given) == sorted(built.values())


def test_texts_name_the_repository_by_its_remote(tmp_path: Path) -> None:
    """A clone in a folder of another name embeds the remote's name; training's export
    rebuilds the index's own texts (it named the folder before)."""
    from training.export_eval import export_set

    repo = write_repo(tmp_path / "my-checkout")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "git@example.com:acme/shop.git")
    assert repo_name(repo) == "shop"
    fake = FakeEmbedder()
    with scrydb.open(repo, db=tmp_path / "c.db", embedder=fake) as ix:
        ix.sync()
        rec, ids = export_set(ix, repo, types.SimpleNamespace(cases=[]), Config())
    assert all("my-checkout" not in t for t in fake.texts)
    assert any(t.startswith("shop > ") for t in fake.texts)
    assert sorted(rec["texts"]) == sorted(fake.texts) and len(ids) == len(fake.texts)


def test_recipe_names_the_text_version_and_cut() -> None:
    cfg = Config()
    assert texts.recipe(cfg) == f"{texts.EMBED_TEXT_VERSION}:{cfg.index.embed_max_chars}"
    cfg.embed.dim = 64
    assert texts.recipe(cfg).endswith(":d64")
