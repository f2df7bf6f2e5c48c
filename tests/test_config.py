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
