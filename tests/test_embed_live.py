"""scrydb/embed/live.py: which embedder an index uses for its documents and its queries."""

from __future__ import annotations

import json

import pytest
from synth_repo import FakeEmbedder

from scrydb.config import EmbedConfig
from scrydb.embed import IndexEmbedders, embedder_id
from scrydb.errors import ScryError


def test_configured_embedder_is_the_given_one_or_built_once() -> None:
    given = FakeEmbedder("fake:given")
    mine = IndexEmbedders(EmbedConfig(), given)
    assert mine.configured() is given and mine.configured_id() == "fake:given"
    built = IndexEmbedders(EmbedConfig())
    assert built.configured_id() == embedder_id(EmbedConfig())  # nothing built for the id
    assert built.configured() is built.configured()  # built on first use, then kept


def test_queries_use_the_configured_model_unless_a_re_embed_is_under_way() -> None:
    given = FakeEmbedder("fake:new")
    emb = IndexEmbedders(EmbedConfig(), given)
    old = embedder_id(EmbedConfig())  # the index's vectors came from the default model
    meta: dict[str, str] = {}
    assert emb.for_queries(meta.get) is given  # never embedded
    meta["embedder"] = "fake:new"
    assert emb.for_queries(meta.get) is given  # the vectors are this model's
    meta["embedder"] = old
    assert emb.for_queries(meta.get) is given  # another model, but no re-embed under way
    meta["next_embedder"] = "fake:new"
    meta["embed_config"] = json.dumps({})  # what the old vectors' model was built from
    live = emb.for_queries(meta.get)
    assert live is not given and live.id == old  # rebuilt, not loaded
    assert emb.for_queries(meta.get) is live  # and kept


def test_a_re_embed_without_recorded_settings_says_what_to_do() -> None:
    emb = IndexEmbedders(EmbedConfig(), FakeEmbedder("fake:new"))
    meta = {"embedder": "fake:old", "next_embedder": "fake:new"}
    with pytest.raises(ScryError, match="`scry index` finishes the re-embed"):
        emb.for_queries(meta.get)
