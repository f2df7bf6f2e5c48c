"""An OpenAI-compatible ``/v1/embeddings`` endpoint, and the small JSON client that the
reranker and HyDE chat endpoints share.

Works with llama.cpp, text-embeddings-inference, vLLM, Ollama and OpenAI itself. Only the
standard library is used (``urllib`` + ``concurrent.futures``): one POST per batch, no
session state, so a fleet behind a load balancer needs nothing special.

What a real server does, and what this client does about it:

* rejects a batch as too large (413, or 400/422/500 saying "too large" / "context
  length" / "too many tokens") -> the batch is halved and the smaller size is remembered;
  a single text still rejected is cut in half until it fits;
* fails transiently (connection refused/reset, timeout, 429, 5xx) -> retried with
  exponential backoff (``Retry-After`` honoured), ``retries`` times;
* is still loading its model (503 "loading", or connection refused) -> waited for, up to
  ``startup_wait`` seconds, before the first answer;
* answers with vectors of another dimension, or garbage -> one clean error.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from scrydb.config import EmbedConfig
from scrydb.embed.base import Embedder, normalise
from scrydb.errors import EmbedderError, ScryError

#: Exponential backoff between retries: BACKOFF_BASE * 2**attempt, at most BACKOFF_MAX s.
BACKOFF_BASE = 0.5
BACKOFF_MAX = 8.0
#: Poll interval while a server loads its model (connection refused / 503 "loading").
STARTUP_POLL = 0.5
#: A single text the server still rejects is cut in half down to this many characters.
MIN_TEXT_CHARS = 32
#: Searches must not hang on a dead server: query embeddings retry at most this often
#: and do not wait for a loading server (the dense leg is then skipped with a note).
QUERY_RETRIES = 1
#: Text of the request that learns an endpoint's dimension when ``dim`` is not configured.
PROBE_TEXT = "def probe(): return 'dimension'"

#: Error bodies that mean "this request is too big" (TEI, llama.cpp, vLLM, OpenAI wording).
_TOO_LARGE = re.compile(
    r"too (large|long|big|many)|context.?length|maximum context|exceeds? the (max|limit)"
    r"|must have less than|batch size|payload|input.{0,40}(length|tokens)|physical batch",
    re.I,
)
_LOADING = re.compile(r"\bloading\b", re.I)


class EndpointError(ScryError):
    """An HTTP endpoint failed; the flags say whether trying again can help."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        *,
        transient: bool = False,
        too_large: bool = False,
        starting: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient  #: worth retrying (reset, timeout, 429, 5xx)
        self.too_large = too_large  #: the request was too big: send less
        self.starting = starting  #: the server is not up yet (refused / loading)
        self.retry_after = retry_after


def endpoint_url(base: str, path: str) -> str:
    """``http://h:8080/v1`` + ``embeddings`` -> ``http://h:8080/v1/embeddings``; a URL that
    already ends with the path is used as it is."""
    base = base.rstrip("/")
    return base if base.endswith("/" + path) else f"{base}/{path}"


def auth_headers(api_key_env: str, where: str) -> dict[str, str]:
    """``Authorization`` from the environment variable named in the config (never stored)."""
    import os

    if not api_key_env:
        return {}
    key = os.environ.get(api_key_env)
    if not key:
        raise EmbedderError(f"{where}: environment variable {api_key_env} (api_key_env) is not set")
    return {"Authorization": f"Bearer {key}"}


def post_json(url: str, payload: Any, headers: dict[str, str], timeout: float) -> Any:
    """One POST of ``payload`` as JSON; the decoded JSON answer, or an :class:`EndpointError`."""
    body = json.dumps(payload).encode()
    req = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
    except urllib.error.HTTPError as e:
        raise _http_error(url, e) from None
    except urllib.error.URLError as e:
        raise _os_error(url, e.reason, timeout) from None
    except (OSError, ValueError) as e:  # reset, timeout while reading, bad status line
        raise _os_error(url, e, timeout) from None
    try:
        return json.loads(raw)
    except ValueError:
        raise EndpointError(
            f"{url} answered with something that is not JSON: {raw[:80]!r}"
        ) from None


def _http_error(url: str, e: urllib.error.HTTPError) -> EndpointError:
    try:
        text = e.read(2000).decode("utf-8", "replace")
    except OSError:
        text = ""
    detail = _error_text(text) or e.reason or ""
    msg = f"{url} answered HTTP {e.code}" + (f": {detail}" if detail else "")
    retry_after = None
    with_ra = e.headers.get("Retry-After") if e.headers else None
    if with_ra:
        try:
            retry_after = float(with_ra)
        except ValueError:
            retry_after = None
    if e.code == 413 or (e.code in (400, 422, 500, 507) and _TOO_LARGE.search(text)):
        return EndpointError(msg, e.code, too_large=True)
    if e.code == 503 and _LOADING.search(text):
        return EndpointError(msg, e.code, transient=True, starting=True, retry_after=retry_after)
    if e.code == 401 or e.code == 403:
        return EndpointError(msg + " (check api_key_env)", e.code)
    transient = e.code in (408, 409, 425, 429) or e.code >= 500
    return EndpointError(msg, e.code, transient=transient, retry_after=retry_after)


def _error_text(text: str) -> str:
    """The message inside a JSON error body (OpenAI, TEI, llama.cpp shapes), else the text."""
    try:
        d = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:200]
    if isinstance(d, dict):
        err = d.get("error", d.get("message", d.get("detail", "")))
        if isinstance(err, dict):
            err = err.get("message", err)
        return " ".join(str(err).split())[:200]
    return " ".join(str(d).split())[:200]


def _os_error(url: str, reason: Any, timeout: float) -> EndpointError:
    if isinstance(reason, ConnectionRefusedError):
        return EndpointError(f"{url}: connection refused", transient=True, starting=True)
    if isinstance(reason, TimeoutError):
        return EndpointError(f"{url}: no answer within {timeout:g} s", transient=True)
    if isinstance(reason, OSError):
        return EndpointError(f"{url}: {reason.strerror or reason}", transient=True)
    return EndpointError(f"{url}: {reason}", transient=isinstance(reason, OSError))


class HttpEmbedder(Embedder):
    """Vectors from an OpenAI-compatible ``/embeddings`` endpoint (see the module doc)."""

    def __init__(self, cfg: EmbedConfig) -> None:
        self.cfg = cfg
        self.id = self.make_id(cfg)
        self.url = endpoint_url(cfg.url, "embeddings")
        self._dim: int | None = cfg.dim or None
        self._max_batch = max(1, cfg.batch_size)  #: shrinks when the server rejects a batch
        self._max_chars = max(1, cfg.batch_chars)
        self._ready = False  #: the server has answered once (no more startup waiting)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.requests = 0  #: requests sent (for reports and tests)
        self.rejections = 0  #: batches the server rejected as too large

    @staticmethod
    def make_id(cfg: EmbedConfig) -> str:
        """``openai:<model>`` (+ a hash of ``document_prefix``): the model, not the URL, so
        the same model behind another host or load balancer keeps the index."""
        ident = f"openai:{cfg.model or 'default'}"
        if cfg.document_prefix:
            ident += "+" + hashlib.blake2b(cfg.document_prefix.encode(), digest_size=4).hexdigest()
        return ident

    @property
    def dim(self) -> int:
        """The configured ``dim``, else learned from one probe request."""
        if self._dim is None:
            self._embed_all([PROBE_TEXT], query=False)
        assert self._dim is not None
        return self._dim

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Document vectors (with ``document_prefix``), batched and sent concurrently."""
        pre = self.cfg.document_prefix
        return self._embed_all([pre + t for t in texts] if pre else texts, query=False)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Query vectors (with ``query_prefix``); few retries, no startup wait."""
        pre = self.cfg.query_prefix
        return self._embed_all([pre + t for t in texts] if pre else texts, query=True)

    def close(self) -> None:
        """Stop the request threads."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    # -- batching --------------------------------------------------------------------

    def _embed_all(self, texts: list[str], query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        texts = [t if t.strip() else " " for t in texts]  # some servers reject empty input
        batches = self._plan(texts)
        if len(batches) == 1 or self.cfg.concurrency <= 1:
            parts = [self._embed_batch(b, query) for b in batches]
        else:
            pool = self._executor()
            parts = list(pool.map(lambda b: self._embed_batch(b, query), batches))
        return np.vstack(parts)

    def _plan(self, texts: list[str]) -> list[list[str]]:
        """Consecutive batches within the (learned) text count and character budget."""
        out: list[list[str]] = []
        cur: list[str] = []
        chars = 0
        for t in texts:
            if cur and (len(cur) >= self._max_batch or chars + len(t) > self._max_chars):
                out.append(cur)
                cur, chars = [], 0
            cur.append(t)
            chars += len(t)
        if cur:
            out.append(cur)
        return out

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=max(1, self.cfg.concurrency), thread_name_prefix="scry-embed"
                )
            return self._pool

    def _embed_batch(self, texts: list[str], query: bool) -> np.ndarray:
        """One batch; halved (and the halves sent) while the server says it is too large."""
        return self._send_or_halve(texts, query)[0]

    def _send_or_halve(self, texts: list[str], query: bool) -> tuple[np.ndarray, bool]:
        """The batch's vectors, and whether they came at the first try."""
        try:
            return self._request(texts, query), True
        except EndpointError as e:
            if not e.too_large:
                raise EmbedderError(f"embedding endpoint failed: {e}") from None
            with self._lock:
                self.rejections += 1
            if len(texts) == 1 and len(texts[0]) <= MIN_TEXT_CHARS:
                raise EmbedderError(
                    f"embedding endpoint rejects even a {len(texts[0])}-character text: {e}"
                ) from None
        if len(texts) == 1:  # one text too long for the server: send its first half
            return self._send_or_halve([texts[0][: len(texts[0]) // 2]], query)[0], False
        mid = len(texts) // 2
        a, a_first = self._send_or_halve(texts[:mid], query)
        b, b_first = self._send_or_halve(texts[mid:], query)
        if a_first and b_first:  # the halves fit where the whole did not: remember that
            with self._lock:
                self._max_batch = min(self._max_batch, max(mid, len(texts) - mid))
                halves = (sum(map(len, texts[:mid])), sum(map(len, texts[mid:])))
                self._max_chars = min(self._max_chars, max(halves))
        return np.vstack([a, b]), False

    # -- one request -------------------------------------------------------------------

    def _request(self, texts: list[str], query: bool) -> np.ndarray:
        """POST one batch, retrying transient failures and waiting for a loading server."""
        cfg = self.cfg
        payload: dict[str, Any] = {"input": texts}
        if cfg.model:
            payload["model"] = cfg.model
        headers = auth_headers(cfg.api_key_env, "[embed]")
        retries = min(cfg.retries, QUERY_RETRIES) if query else cfg.retries
        start = time.monotonic()
        attempt = 0
        while True:
            try:
                with self._lock:
                    self.requests += 1
                data = post_json(self.url, payload, headers, cfg.timeout)
            except EndpointError as e:
                waited = time.monotonic() - start
                if e.starting and not self._ready and not query and waited < cfg.startup_wait:
                    time.sleep(min(e.retry_after or STARTUP_POLL, cfg.startup_wait - waited))
                    continue  # the server is loading its model: not a retry
                if e.starting and not self._ready and not query and cfg.startup_wait > 0:
                    raise EndpointError(
                        f"{e} (waited {cfg.startup_wait:g} s for the server to start)", e.status
                    ) from None
                if not e.transient or attempt >= retries:
                    if e.status is not None or e.too_large:
                        self._ready = True
                    raise
                delay = min(BACKOFF_MAX, BACKOFF_BASE * 2**attempt)
                delay = e.retry_after if e.retry_after is not None else delay
                time.sleep(min(BACKOFF_MAX, delay) * random.uniform(0.75, 1.0))
                attempt += 1
                continue
            self._ready = True
            return self._vectors(data, len(texts))

    def _vectors(self, data: Any, n: int) -> np.ndarray:
        """The rows of an OpenAI-shaped answer, checked (count, dimension, finite numbers)."""
        rows = data.get("data") if isinstance(data, dict) else None
        if not isinstance(rows, list) or len(rows) != n:
            got = len(rows) if isinstance(rows, list) else "no"
            raise EmbedderError(
                f"embedding endpoint {self.url} answered {got} vectors for {n} texts"
            )
        try:
            ordered = sorted(rows, key=lambda r: int(r.get("index", 0)))
            vecs = np.array([r["embedding"] for r in ordered], dtype=np.float32)
        except (TypeError, ValueError, KeyError, AttributeError):
            raise EmbedderError(
                f"embedding endpoint {self.url} answered something that is not a list of vectors"
            ) from None
        if vecs.ndim != 2 or vecs.shape[1] == 0 or not np.isfinite(vecs).all():
            raise EmbedderError(f"embedding endpoint {self.url} answered malformed vectors")
        with self._lock:
            if self._dim is None:
                self._dim = int(vecs.shape[1])
        if vecs.shape[1] != self._dim:
            source = "[embed] dim" if self.cfg.dim else "its first answer"
            raise EmbedderError(
                f"embedding endpoint {self.url} answered {vecs.shape[1]}-d vectors, "
                f"expected {self._dim}-d ({source})"
            )
        return normalise(vecs)


def finite_number(x: Any) -> bool:
    """A real number (not a bool, not NaN or infinite)."""
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
