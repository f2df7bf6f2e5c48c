"""Typed configuration from ``.scry.toml`` (repo root) or ``--config``.

Every value has a default, so no file is needed. Unknown sections or keys and values of
the wrong type are errors that name the key. Secrets are never written here: a section
names the *environment variable* that holds its API key (``api_key_env``).
"""

from __future__ import annotations

import os
import tomllib
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from scrydb.errors import ConfigError, ScryError, shown

CONFIG_NAME = ".scry.toml"


@dataclass
class IndexConfig:
    """``[index]``: what is walked and how it is chunked and embedded."""

    max_file_bytes: int = 1_000_000  #: larger files are skipped ("too-large")
    exclude: list[str] = field(default_factory=list)  #: extra gitignore-style patterns
    include: list[str] = field(default_factory=list)  #: patterns forced back in
    skip_secrets: bool = True  #: skip .env files, private keys, credentials
    embed_batch: int = 32  #: texts per model call
    embed_max_chars: int = 2000  #: chunk text cut before embedding (model sees 256 tokens)
    confirm_chunks: int = 20_000  #: ask before a first index estimated above this
    #: a search that creates the index answers lexically at once and leaves the
    #: embeddings to a background ``scry index`` (false: it waits for them)
    background: bool = True
    orphan_keep: int = 1000  #: unreferenced vectors kept for reuse (branch switches)
    #: embed a short header (names, first docstring sentence, path words) beside each
    #: chunk; the dense leg scores by both (about 3% more index time)
    header_vectors: bool = True
    #: embed up to three more windows of each very long chunk (past ~2,500 characters),
    #: the stretches its body vector does not see (about 20% more embedding work)
    window_vectors: bool = True
    #: embed a chunk's inner comments (the first sentence of each, up to 300 characters)
    #: as one more vector: authors' words for the steps of the code
    comment_vectors: bool = True
    #: index nested repositories: a directory below the root with its own ``.git`` (a
    #: submodule, a nested worktree, a vendored clone). Off: they are skipped
    #: ("nested-repo"), as each is a repository of its own
    nested_repos: bool = False
    #: look vectors up in the per-user shared cache before calling the model, and put
    #: the model's new vectors there (``SCRY_SHARED_CACHE=0`` turns it off too)
    shared_cache: bool = True
    #: the shared cache's size bound per model, in MB (least recently used out first)
    shared_cache_mb: float = 2048.0


@dataclass
class EmbedConfig:
    """``[embed]``: the embedding model (local sentence-transformers, or an endpoint)."""

    provider: str = "local"  #: "local" | "openai" (OpenAI-compatible /v1/embeddings)
    model: str = "scry-code-minilm"  #: shipped model name, package or directory; endpoint model id
    url: str = ""  #: endpoint base URL, e.g. http://127.0.0.1:8080/v1
    api_key_env: str = ""  #: name of the environment variable holding the API key
    dim: int = 0  #: expected dimension (0 = ask the model)
    query_prefix: str = ""  #: prepended to queries (e.g. "query: " for e5 models)
    document_prefix: str = ""  #: prepended to documents
    batch_chars: int = 60_000  #: endpoint: character budget per request
    batch_size: int = 64  #: endpoint: texts per request
    timeout: float = 60.0  #: endpoint: seconds per request
    retries: int = 4  #: endpoint: retries on transient errors
    concurrency: int = 2  #: endpoint: requests in flight
    startup_wait: float = 60.0  #: endpoint: seconds to wait for a loading server
    device: str = "cpu"  #: local: torch device
    threads: int = 0  #: local: torch threads (0 = all cores)
    #: local, on the CPU: the arithmetic documents are embedded in. "auto" = bfloat16
    #: where the CPU has native bf16 instructions (AVX512-BF16 or AMX), else float32
    precision: str = "auto"


@dataclass
class RerankConfig:
    """``[rerank]``: an optional cross-encoder leg over the fused top N."""

    provider: str = "none"  #: "none" | "local" (cross-encoder dir) | "http" (/rerank)
    model: str = ""  #: local: model directory or package; http: model id sent to the server
    url: str = ""  #: http: base URL (``/rerank`` is appended) or the full ``.../rerank`` URL
    api_key_env: str = ""  #: name of the environment variable holding the API key
    top_n: int = 20  #: fused candidates scored
    #: weight of the reranker's rank vote (rank r counts weight * 2 / (1 + r), as much as a
    #: rank-1 vote of the same weight at rank 1); 0 = scores shown, ranking unchanged
    weight: float = 1.0
    max_chars: int = 3000  #: each document is cut to this many characters
    timeout: float = 6.0  #: seconds; a slower reranker is skipped for that query
    device: str = "cpu"  #: local: torch device


@dataclass
class ChatConfig:
    """``[chat]``: an optional chat model for HyDE query expansion."""

    url: str = ""  #: base URL (``/chat/completions`` is appended), e.g. http://127.0.0.1:8080/v1
    model: str = ""  #: model id sent to the server
    api_key_env: str = ""  #: name of the environment variable holding the API key
    hyde: str = "off"  #: "auto" (questions only) | "on" | "off"
    hyde_embed: str = "mix"  #: "mix" (query + hypothetical code vectors) | "code" (code alone)
    timeout: float = 10.0  #: seconds; a slower chat model falls back to the plain query
    max_tokens: int = 256  #: length cap of the hypothetical code


@dataclass
class SearchConfig:
    """``[search]``: ranking knobs that users may want to change."""

    limit: int = 10
    #: Above this many vectors, a coarse Hamming pass + float rescore. An exact numpy scan
    #: of 100k vectors takes ~5-13 ms on 2 cores, while sign bits recall only ~0.5-0.6 of
    #: the exact top 10 for questions at a 0.4% pool (bench/run.py, "recall"): exact it is.
    exact_max: int = 250_000
    coarse_pool: int = 400  #: candidates kept by the coarse pass (at least 15% of the rows)
    recency: bool = False  #: small boost for recently changed files
    #: "hand": rank.py's weights; "learned": the fitted weights of search/fusion.json
    fusion: str = "learned"


@dataclass
class Config:
    """The whole configuration. ``Config()`` is the default."""

    index: IndexConfig = field(default_factory=IndexConfig)
    embed: EmbedConfig = field(default_factory=EmbedConfig)
    rerank: RerankConfig = field(default_factory=RerankConfig)
    chat: ChatConfig = field(default_factory=ChatConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    source: str | None = None  #: the file it was read from, if any

    @staticmethod
    def load(path: str | os.PathLike[str]) -> Config:
        """Read and validate a TOML file."""
        p = Path(path)
        raw = read_toml(p, "config")
        cfg = Config.from_dict(raw, origin=str(p))
        cfg.source = str(p)
        return cfg

    @staticmethod
    def from_dict(raw: dict[str, Any], origin: str = "config") -> Config:
        """Build a Config from parsed TOML, rejecting unknown keys and wrong types."""
        cfg = Config()
        sections = {f.name for f in fields(Config) if f.name != "source"}
        for name, value in raw.items():
            if name not in sections:
                raise ConfigError(
                    f"{origin}: unknown section [{shown(name)}] (known: {', '.join(sorted(sections))})"
                )
            if not isinstance(value, dict):
                raise ConfigError(f"{origin}: [{name}] must be a table")
            section = getattr(cfg, name)
            _fill(section, value, f"{origin}: [{name}]")
        _check(cfg, origin)
        return cfg

    def api_key(self, env_name: str) -> str | None:
        """The secret named by an ``api_key_env`` value, read from the environment."""
        return os.environ.get(env_name) if env_name else None


def read_toml(path: Path, what: str, error: type[ScryError] = ConfigError) -> dict[str, Any]:
    """A TOML file as a dict; an unreadable, non-UTF-8 or malformed file raises ``error``
    with one line naming ``what`` (config, golden set) and the file."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise error(f"cannot read {what} {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{what} {path} is not valid TOML: {e}") from None


def _fill(section: Any, values: dict[str, Any], where: str) -> None:
    hints = typing.get_type_hints(type(section))
    known = {f.name for f in fields(section)}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(
                f"{where} unknown key '{shown(key)}' (known: {', '.join(sorted(known))})"
            )
        setattr(section, key, _coerce(value, hints[key], f"{where} {key}"))


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list")
        return [_coerce(v, item, where) for v in value]
    if origin in (typing.Union, types.UnionType):
        raise ConfigError(f"{where}: unsupported type")  # not used by any key
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where} must be a number, not {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be an integer, not {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, not {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be a string, not {value!r}")
        return value
    raise ConfigError(f"{where}: unsupported type")


#: The values a setting with a fixed set of choices may take. Each name of a component's
#: choice has its implementation in that component's one table, and tests check they
#: agree: ``embed.provider`` in scrydb.embed.PROVIDERS, ``rerank.provider`` in
#: scrydb.search.rerank.RERANKERS, ``chat.hyde`` and ``chat.hyde_embed`` in
#: scrydb.search.hyde.HYDE_MODES and HYDE_EMBEDS (tests/test_config.py),
#: ``search.fusion`` in scrydb.search.fusion.STRATEGIES (tests/test_rank.py).
CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("embed", "provider"): ("local", "openai"),
    ("embed", "precision"): ("auto", "float32", "bfloat16"),
    ("rerank", "provider"): ("none", "local", "http"),
    ("chat", "hyde"): ("auto", "on", "off"),
    ("chat", "hyde_embed"): ("mix", "code"),
    ("search", "fusion"): ("hand", "learned"),
}


def _check(cfg: Config, origin: str) -> None:
    for (sec, key), allowed in CHOICES.items():
        v = getattr(getattr(cfg, sec), key)
        if v not in allowed:
            raise ConfigError(
                f"{origin}: [{sec}] {key} must be one of {', '.join(allowed)}, not {v!r}"
            )
    if cfg.embed.provider == "openai" and not cfg.embed.url:
        raise ConfigError(f'{origin}: [embed] provider = "openai" needs url')
    if cfg.rerank.provider == "http" and not cfg.rerank.url:
        raise ConfigError(f'{origin}: [rerank] provider = "http" needs url')
    if cfg.rerank.provider == "local" and not cfg.rerank.model:
        raise ConfigError(f'{origin}: [rerank] provider = "local" needs model (a directory)')
    if cfg.chat.hyde != "off" and not cfg.chat.url:
        raise ConfigError(f'{origin}: [chat] hyde = "{cfg.chat.hyde}" needs url')
    positive = (
        ("index", "max_file_bytes"),
        ("index", "embed_batch"),
        ("search", "limit"),
        ("embed", "batch_chars"),
        ("embed", "batch_size"),
        ("embed", "timeout"),
        ("embed", "concurrency"),
        ("rerank", "top_n"),
        ("rerank", "max_chars"),
        ("rerank", "timeout"),
        ("chat", "timeout"),
        ("chat", "max_tokens"),
        ("index", "shared_cache_mb"),
    )
    for sec, key in positive:
        if getattr(getattr(cfg, sec), key) <= 0:
            raise ConfigError(f"{origin}: [{sec}] {key} must be positive")
    for sec, key in (
        ("embed", "retries"),
        ("embed", "startup_wait"),
        ("embed", "dim"),
        ("rerank", "weight"),
    ):
        if getattr(getattr(cfg, sec), key) < 0:
            raise ConfigError(f"{origin}: [{sec}] {key} must not be negative")
    for sec in ("embed", "rerank", "chat"):
        url = getattr(cfg, sec).url
        if url and not url.startswith(("http://", "https://")):
            raise ConfigError(
                f"{origin}: [{sec}] url must start with http:// or https://, not {url!r}"
            )


def find_config(root: Path, explicit: str | os.PathLike[str] | None = None) -> Config:
    """The config for ``root``: ``explicit`` if given, else ``root/.scry.toml``, else defaults."""
    if explicit:
        return Config.load(explicit)
    candidate = root / CONFIG_NAME
    if candidate.is_file():
        return Config.load(candidate)
    return Config()
