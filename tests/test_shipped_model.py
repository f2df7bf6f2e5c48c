"""Models shipped inside scrydb's wheel (scrydb/models/NAME): the weights are the ones the
model card names (sha256), they load offline with torch and with the numpy query encoder,
and both give the same vectors. CI runs this; it never trains."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from scrydb.config import Config, EmbedConfig
from scrydb.embed.local import (
    LocalEmbedder,
    builtin_models,
    model_card,
    native_bf16,
    resolve_model_dir,
)

SHIPPED = builtin_models()


def test_default_model_is_installed() -> None:
    """The default model resolves: a shipped model's weights are present, or a package."""
    name = Config().embed.model
    path, version = resolve_model_dir(name)
    assert (path / "config.json").is_file() and version
    if name in SHIPPED:
        assert path == SHIPPED[name]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_card_matches_weights(name: str) -> None:
    path = SHIPPED[name]
    card = model_card(path)
    assert card.get("name") == name and card.get("version")
    weights = path / "model.safetensors"
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert card.get("sha256") == digest, f"{weights}: sha256 differs from the model card"
    assert weights.stat().st_size <= 50_000_000


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_model_loads_and_numpy_matches_torch(name: str, monkeypatch) -> None:
    emb = LocalEmbedder(EmbedConfig(model=name))
    assert emb.id == f"st:{name}@{model_card(SHIPPED[name])['version']}"
    texts = ["where is the retry backoff computed", "parse http date header"]
    monkeypatch.setenv("SCRY_QUERY_ENCODER", "torch")
    torch_vecs = LocalEmbedder(EmbedConfig(model=name)).embed_queries(texts)
    monkeypatch.delenv("SCRY_QUERY_ENCODER")
    assert emb.query_encoder == "numpy"
    fast = emb.embed_queries(texts)
    assert torch_vecs.shape == fast.shape == (2, emb.dim)
    cos = (torch_vecs * fast).sum(axis=1)
    assert np.all(cos > 0.999), cos
    # documents are embedded in float32 even though the weights are stored as fp16
    docs = emb.embed_documents(["def backoff(attempt):\n    return min(60, 2 ** attempt)"])
    assert docs.dtype == np.float32 and abs(float(np.linalg.norm(docs[0])) - 1) < 1e-4
    assert all(str(p.dtype) == "torch.float32" for p in emb.model.parameters())


@pytest.mark.slow
def test_bfloat16_documents_match_float32() -> None:
    """``[embed] precision``: bfloat16 documents are the float32 vectors to rounding (so the
    index's fingerprint ignores the setting), "auto" picks bf16 only on a CPU that has it
    natively, and an accelerator never autocasts."""
    texts = [
        "def backoff(attempt):\n    return min(60, 2 ** attempt)",
        "app > client.py > Client.send\n" + "    reply = self._send(request)\n" * 40,
        "Parse an HTTP date header into a datetime",
    ]
    f32 = LocalEmbedder(EmbedConfig(precision="float32"))
    bf16 = LocalEmbedder(EmbedConfig(precision="bfloat16"))
    assert f32.precision == "float32" and bf16.precision == "bfloat16"
    assert LocalEmbedder(EmbedConfig()).precision == ("bfloat16" if native_bf16() else "float32")
    assert LocalEmbedder(EmbedConfig(device="cuda", precision="bfloat16")).precision == "float32"
    assert f32.id == bf16.id  # same vectors, same index
    a, b = f32.embed_documents(texts), bf16.embed_documents(texts)
    assert a.dtype == b.dtype == np.float32 and a.shape == b.shape == (3, f32.dim)
    cos = (a * b).sum(axis=1)
    assert np.all(cos > 0.9995), cos
    assert not np.array_equal(a, b)  # bf16 really ran: the last digits differ
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)


def test_model_card_front_matter(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "---\nname: m\nversion: 2\nsha256: abc\n---\n# m\nkey: not front matter\n"
    )
    assert model_card(tmp_path) == {"name": "m", "version": "2", "sha256": "abc"}
    (tmp_path / "README.md").write_text("# no front matter\nname: x\n")
    assert model_card(tmp_path) == {}


def test_several_queries_side_by_side_give_the_vectors_of_one_at_a_time() -> None:
    """A bug report's prose segments are encoded side by side (one thread per core,
    issue 47 item 5); each vector equals the one the same text gets alone, and the
    query cache of an index keys them as it keys a single query."""
    from scrydb.embed import local

    emb = LocalEmbedder(EmbedConfig(model=Config().embed.model))
    texts = [
        "charge accepts a zero amount and the checkout page shows a server error " * 8,
        "the retry policy waits longer after each failed call",
        "parse the http date header into a timestamp",
    ]
    alone = np.stack([emb.embed_query(t) for t in texts])
    fast = emb._numpy_model()
    assert fast is not None
    with emb._blas():  # one BLAS thread, as every query is encoded
        together = local.normalise(fast.embed(texts, workers=3))
    np.testing.assert_array_equal(alone, together)
    np.testing.assert_array_equal(alone, emb.embed_queries(texts))
