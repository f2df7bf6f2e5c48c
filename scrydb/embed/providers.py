"""Which embedder an ``[embed] provider`` name builds: one table (:data:`PROVIDERS`) and
the factories over it; an implementation is imported only when its provider is used."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from scrydb.config import EmbedConfig
from scrydb.embed.base import Embedder
from scrydb.errors import ScryError


class Provider(NamedTuple):
    """One ``[embed] provider``: how its embedder is built, and the id it will have
    (computed without building it: the index fingerprint is read before any model)."""

    build: Callable[[EmbedConfig], Embedder]
    make_id: Callable[[EmbedConfig], str]


def _local() -> Provider:
    from scrydb.embed.local import LocalEmbedder

    return Provider(LocalEmbedder, LocalEmbedder.make_id)


def _openai() -> Provider:
    from scrydb.embed.http import HttpEmbedder

    return Provider(HttpEmbedder, HttpEmbedder.make_id)


#: The one place an ``[embed] provider`` name maps to its implementation, imported on
#: first use (an endpoint never imports the local model's code). The names are
#: ``config.CHOICES[("embed", "provider")]``; tests/test_config.py checks they agree.
PROVIDERS: dict[str, Callable[[], Provider]] = {"local": _local, "openai": _openai}


def provider(name: str) -> Provider:
    """The :class:`Provider` of an ``[embed] provider`` name."""
    load = PROVIDERS.get(name)
    if load is None:
        raise ScryError(
            f"unknown [embed] provider {name!r} (one of {', '.join(sorted(PROVIDERS))})"
        )
    return load()


def embedder_id(cfg: EmbedConfig) -> str:
    """The id an embedder built from ``cfg`` will have, without loading anything."""
    return provider(cfg.provider).make_id(cfg)


def make_embedder(cfg: EmbedConfig) -> Embedder:
    """Build the embedder a config asks for (nothing is loaded until it is used)."""
    return provider(cfg.provider).build(cfg)


def recorded_embedder(live_id: str, recorded_config: str | None, configured_id: str) -> Embedder:
    """The embedder an index's vectors came from, rebuilt from the settings it recorded
    (``embed_config``, JSON): searches use it while a re-embed for a newly configured model
    (``configured_id``) is under way. A ScryError when the settings are missing or no
    longer build the same model."""
    import json

    from scrydb.config import Config

    try:
        cfg = Config.from_dict({"embed": json.loads(recorded_config or "")}).embed
    except (ValueError, ScryError):
        raise ScryError(
            f"the index's vectors come from {live_id}, not the configured {configured_id}, and "
            "it did not record how to load that model: `scry index` finishes the re-embed"
        ) from None
    emb = make_embedder(cfg)
    if emb.id != live_id:
        raise ScryError(
            f"the index's vectors come from {live_id}, which is no longer here ({emb.id}): "
            "`scry index` finishes the re-embed"
        )
    return emb
