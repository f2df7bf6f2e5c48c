"""Typed configuration: defaults, validation with the key named, secrets by env name."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrydb.config import Config, find_config
from scrydb.errors import ConfigError


def test_defaults_without_file(tmp_path: Path) -> None:
    cfg = find_config(tmp_path)
    assert cfg.embed.model == "scry-code-minilm" and cfg.search.limit == 10 and cfg.source is None


def test_file_values_are_typed(tmp_path: Path) -> None:
    (tmp_path / ".scry.toml").write_text(
        '[search]\nlimit = 5\n[index]\nexclude = ["docs/"]\n[embed]\ntimeout = 5\n'
    )
    cfg = find_config(tmp_path)
    assert cfg.search.limit == 5 and cfg.index.exclude == ["docs/"] and cfg.embed.timeout == 5.0


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("[search\nlimit = 5", "not valid TOML"),
        ("[serch]\nlimit = 5\n", "unknown section [serch]"),
        ("[search]\nlimt = 5\n", "unknown key 'limt'"),
        ('[search]\nlimit = "ten"\n', "limit must be an integer"),
        ("[index]\nexclude = 3\n", "exclude must be a list"),
        ('[embed]\nprovider = "magic"\n', "provider must be one of"),
        ('[embed]\nprecision = "fp8"\n', "precision must be one of auto, float32, bfloat16"),
        ('[embed]\nprovider = "openai"\n', "needs url"),
        ("[search]\nlimit = 0\n", "must be positive"),
    ],
)
def test_bad_config_names_the_problem(tmp_path: Path, text: str, msg: str) -> None:
    p = tmp_path / ".scry.toml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=msg.replace("[", r"\[").replace("]", r"\]")):
        find_config(tmp_path)


def test_secret_comes_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = Config.from_dict(
        {"embed": {"provider": "openai", "url": "http://127.0.0.1:1", "api_key_env": "MY_KEY"}}
    )
    monkeypatch.setenv("MY_KEY", "s3cret")
    assert cfg.api_key(cfg.embed.api_key_env) == "s3cret"


# -- one table of providers per component, tied to CHOICES ------------------------------

#: What each provider needs besides its name to pass validation.
_NEEDS: dict[str, dict[str, str]] = {
    "openai": {"url": "http://127.0.0.1:9/v1"},
    "http": {"url": "http://127.0.0.1:9/v1"},
    "local": {},
}


def test_each_component_maps_exactly_the_configured_choices() -> None:
    """Every choice has an implementation in its component's one table, and every entry
    of a table is a choice the config accepts."""
    from scrydb import embed
    from scrydb.config import CHOICES
    from scrydb.search import hyde, rerank

    assert set(embed.PROVIDERS) == set(CHOICES[("embed", "provider")])
    assert set(rerank.RERANKERS) == set(CHOICES[("rerank", "provider")])
    assert set(hyde.HYDE_MODES) == set(CHOICES[("chat", "hyde")])
    assert set(hyde.HYDE_EMBEDS) == set(CHOICES[("chat", "hyde_embed")])


def test_every_provider_builds_from_a_valid_config() -> None:
    """Each configured choice builds through its factory (nothing loaded or contacted):
    the embedder has the id computed without building it; "none" builds no reranker."""
    from scrydb.config import CHOICES
    from scrydb.embed import embedder_id, make_embedder
    from scrydb.search.rerank import RerankError, make_reranker

    for name in CHOICES[("embed", "provider")]:
        cfg = Config.from_dict({"embed": {"provider": name, **_NEEDS[name]}}).embed
        emb = make_embedder(cfg)
        try:
            assert emb.id == embedder_id(cfg)
        finally:
            emb.close()
    ids = set()
    for name in CHOICES[("rerank", "provider")]:
        extra = {"model": "some-cross-encoder"} if name == "local" else _NEEDS.get(name, {})
        cfg = Config.from_dict({"rerank": {"provider": name, **extra}}).rerank
        if name == "none":
            with pytest.raises(RerankError, match="no reranker configured"):
                make_reranker(cfg)
        else:
            ids.add(make_reranker(cfg).id.split(":")[0])
    assert ids == {"http", "local"}


def test_an_unknown_embed_provider_is_a_clean_error() -> None:
    from scrydb.embed import provider
    from scrydb.errors import ScryError

    with pytest.raises(
        ScryError, match=r"unknown \[embed\] provider 'magic' \(one of local, openai\)"
    ):
        provider("magic")


@pytest.mark.parametrize(
    ("text", "shown"),
    [('["a\\nb"]\nx = 1\n', "[a\\nb]"), ('[index]\n"a\\u001bb" = 1\n', "'a\\x1bb'")],
)
def test_unknown_names_are_shown_on_one_line(tmp_path: Path, text: str, shown: str) -> None:
    """Found by tests/fuzz/config.py (corpus/config/crash-newline-in-a-key): a quoted
    TOML name holding a newline or an escape reached the error message as it was."""
    (tmp_path / ".scry.toml").write_text(text)
    with pytest.raises(ConfigError) as err:
        find_config(tmp_path)
    assert shown in str(err.value) and str(err.value).isprintable()
