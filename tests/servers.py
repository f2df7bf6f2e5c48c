"""Real local model servers for the endpoint tests (and for ``scry eval`` by hand).

One :class:`ModelServer` answers the three OpenAI-compatible routes scrydb can use, on
127.0.0.1 and an ephemeral port, with real computations:

* ``POST /v1/embeddings``: vectors of the built-in default model, so an
  endpoint-backed index must rank exactly like the built-in one;
* ``POST /v1/rerank``: cosine of the MiniLM vectors of query and document (``cosine``),
  shared identifier words (``overlap``) or the cosine negated (``inverted``, a broken
  reranker) -- Jina/Cohere shape, or text-embeddings-inference's (``rerank_style="tei"``);
* ``POST /v1/chat/completions``: a plausible code snippet built from the question.

and misbehaves on request (:class:`Behaviour`): slow answers, the first N requests
failing, 413s (or llama.cpp / vLLM / TEI wording) for batches or texts that are too
large, 503 "Loading model" for a while after start, a port that opens late (connection
refused), vectors of the wrong dimension, garbage bodies.

By hand: ``python tests/servers.py --port 8765`` serves until interrupted.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

_model_lock = threading.Lock()
_model: Any = None


def minilm_embed(texts: list[str]) -> np.ndarray:
    """Unit vectors of the built-in default model (the built-in embedder's code path, in
    float32: a served model computes in its own precision, and these tests compare the
    client's vectors with ``LocalEmbedder(precision="float32")`` to 1e-5)."""
    global _model
    with _model_lock:
        if _model is None:
            from scrydb.config import EmbedConfig
            from scrydb.embed.local import LocalEmbedder

            _model = LocalEmbedder(EmbedConfig(precision="float32"))
        return _model._encode(texts)


@dataclass
class Behaviour:
    """How a :class:`ModelServer` misbehaves (defaults: it does not)."""

    delay: float = 0.0  #: seconds before every answer
    fail_first: int = 0  #: the first N requests are answered with ``fail_status``
    fail_status: int = 500
    loading_for: float = 0.0  #: seconds after start answered with 503 "Loading model"
    max_batch: int | None = None  #: embeddings: more inputs than this are rejected
    max_chars: int | None = None  #: embeddings: an input longer than this is rejected
    too_large: str = "413"  #: rejection wording: "413" | "llamacpp" | "vllm" | "tei"
    dim: int | None = None  #: embeddings are cut to this many dimensions
    garbage: bool = False  #: nonsense bodies with status 200
    rerank_style: str = "jina"  #: "jina" ({results: [...]}) | "tei" (bare list, "texts")
    rerank_score: str = "cosine"  #: "cosine" | "overlap" | "inverted"
    chat: str = "code"  #: "code" | "empty"


@dataclass
class Request:
    """One request as the server saw it."""

    route: str
    n: int  #: inputs (embeddings) or documents (rerank)
    body: dict[str, Any]
    auth: str | None
    status: int = 200


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ModelServer:
    """An OpenAI-compatible model server in a thread (see the module doc).

    ``start_after`` opens the port only after that many seconds (connection refused
    until then), like a server that is still starting.
    """

    def __init__(self, *, port: int = 0, start_after: float = 0.0, **behaviour: Any) -> None:
        self.b = Behaviour(**behaviour)
        self.port = port or (free_port() if start_after else 0)
        self.start_after = start_after
        self.log: list[Request] = []
        self.inflight = 0
        self.max_inflight = 0
        self.started_at = 0.0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        """Base URL, as it goes into ``.scry.toml``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def requests(self, route: str) -> list[Request]:
        """The requests seen on one route (``embeddings``, ``rerank``, ``chat``)."""
        with self._lock:
            return [r for r in self.log if r.route == route]

    def start(self) -> ModelServer:
        """Listen (now, or after ``start_after`` seconds in the background)."""
        self.started_at = time.monotonic()
        if self.start_after:
            t = threading.Thread(target=self._open_late, daemon=True)
            t.start()
            self._threads.append(t)
        else:
            self._open()
        return self

    def _open_late(self) -> None:
        if not self._stopped.wait(self.start_after):
            self._open()

    def _open(self) -> None:
        handler = type("Handler", (_Handler,), {"owner": self})
        httpd = _QuietServer(("127.0.0.1", self.port), handler)
        httpd.daemon_threads = False  # stop() waits for requests in flight
        self.port = int(httpd.server_address[1])
        self._httpd = httpd
        t = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        t.start()
        self._threads.append(t)

    def stop(self) -> None:
        """Stop listening."""
        self._stopped.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    """No tracebacks from handler threads: a client that gave up (timeout) is expected,
    and printing a traceback in a thread races pytest's own AST work on CPython 3.11."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class _Handler(BaseHTTPRequestHandler):
    owner: ModelServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._done()  # from here the client may send its next request
        raw = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(raw)
        except OSError:  # the client gave up waiting
            pass

    def do_POST(self) -> None:
        srv = self.owner
        n = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "body is not JSON"}})
            return
        route = self.path.rstrip("/").rsplit("/", 1)[-1]
        route = {"completions": "chat"}.get(route, route)
        items = body.get("input", body.get("documents", body.get("texts", [])))
        req = Request(
            route,
            1 if isinstance(items, str) else len(items),
            body,
            self.headers.get("Authorization"),
        )
        with srv._lock:
            srv.log.append(req)
            nth = len(srv.log)
            srv.inflight += 1
            srv.max_inflight = max(srv.max_inflight, srv.inflight)
        self._counted = True
        try:
            req.status = self._answer(srv, srv.b, route, body, nth)
        finally:
            self._done()

    def _done(self) -> None:
        """This request stops counting as in flight (once)."""
        if getattr(self, "_counted", False):
            self._counted = False
            with self.owner._lock:
                self.owner.inflight -= 1

    def _answer(self, srv: ModelServer, b: Behaviour, route: str, body: Any, nth: int) -> int:
        if b.delay and srv._stopped.wait(b.delay):
            # Stopped while "thinking": answer nothing, and above all run no model code in
            # a thread the interpreter may be tearing down (torch aborts the process then).
            self._send(503, {"error": {"message": "server stopped"}})
            return 503
        if time.monotonic() - srv.started_at < b.loading_for:
            self._send(503, {"error": {"message": "Loading model", "type": "unavailable_error"}})
            return 503
        if nth <= b.fail_first:
            self._send(
                b.fail_status,
                {"error": {"message": f"simulated failure {nth}"}},
                {"Retry-After": "0"} if b.fail_status == 429 else None,
            )
            return b.fail_status
        if b.garbage:
            self._send(
                200, {"data": "no", "results": [{"index": "zero", "relevance_score": "high"}]}
            )
            return 200
        if route == "embeddings":
            return self._embeddings(b, body)
        if route == "rerank":
            return self._rerank(b, body)
        if route == "chat":
            return self._chat(b, body)
        self._send(404, {"error": {"message": f"no route {self.path}"}})
        return 404

    def _too_large(self, b: Behaviour, what: str) -> int:
        if b.too_large == "llamacpp":
            msg = "input is too large to process. increase the physical batch size"
            self._send(500, {"error": {"code": 500, "message": msg, "type": "server_error"}})
            return 500
        if b.too_large == "vllm":
            msg = f"This model's maximum context length is 256 tokens ({what})"
            self._send(400, {"object": "error", "message": msg, "code": 400})
            return 400
        if b.too_large == "tei":
            msg = "Input validation error: `inputs` must have less than 256 tokens"
            self._send(422, {"error": msg, "error_type": "Validation"})
            return 422
        self._send(413, {"error": {"message": f"payload too large: {what}"}})
        return 413

    def _embeddings(self, b: Behaviour, body: Any) -> int:
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._send(400, {"error": {"message": "input must be a string or a list of strings"}})
            return 400
        if b.max_batch is not None and len(texts) > b.max_batch:
            return self._too_large(b, f"{len(texts)} inputs > {b.max_batch}")
        if b.max_chars is not None and any(len(t) > b.max_chars for t in texts):
            return self._too_large(b, f"an input is longer than {b.max_chars} characters")
        vecs = minilm_embed(texts)
        if b.dim is not None:
            vecs = vecs[:, : b.dim]
        data = [
            {"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)
        ]
        data.reverse()  # clients must order by "index", not by position
        self._send(200, {"object": "list", "data": data, "model": body.get("model", "minilm")})
        return 200

    def _rerank(self, b: Behaviour, body: Any) -> int:
        query = body.get("query")
        key = "texts" if b.rerank_style == "tei" else "documents"
        docs = body.get(key)
        if not isinstance(docs, list):
            msg = f"Failed to deserialize the JSON body into the target type: missing field `{key}`"
            self._send(422, {"error": msg, "error_type": "Validation"})
            return 422
        if not isinstance(query, str):
            self._send(422, {"error": "missing field `query`"})
            return 422
        scores = rerank_scores(b.rerank_score, query, docs)
        order = sorted(range(len(docs)), key=lambda i: -scores[i])
        if b.rerank_style == "tei":
            self._send(200, [{"index": i, "score": scores[i]} for i in order])
        else:
            top = body.get("top_n") or len(docs)
            results = [{"index": i, "relevance_score": scores[i]} for i in order[:top]]
            self._send(200, {"model": body.get("model", "minilm"), "results": results})
        return 200

    def _chat(self, b: Behaviour, body: Any) -> int:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            self._send(400, {"error": {"message": "messages required"}})
            return 400
        user = next(
            (m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), ""
        )
        lang = re.search(r"^Language: (\S+)", user, re.M)
        question = re.search(r"^Question: (.*)$", user, re.M)
        text = question.group(1) if question else user
        content = "" if b.chat == "empty" else imagine_code(text, lang.group(1) if lang else None)
        self._send(
            200,
            {
                "object": "chat.completion",
                "model": body.get("model", "template-coder"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            },
        )
        return 200


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_SPLIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _words(text: str) -> set[str]:
    out: set[str] = set()
    for w in _WORD.findall(text):
        out.add(w.lower())
        out.update(p.lower() for p in _SPLIT.findall(w))
    return {w for w in out if len(w) > 2}


def rerank_scores(mode: str, query: str, docs: list[str]) -> list[float]:
    """Real relevance scores: MiniLM cosine, identifier-word overlap, or cosine negated."""
    if mode == "overlap":
        q = _words(query) - _STOP
        return [len(q & _words(d)) / (1 + len(q)) for d in docs]
    vecs = minilm_embed([query, *docs])
    cos = [float(v @ vecs[0]) for v in vecs[1:]]
    return [-c for c in cos] if mode == "inverted" else cos


_STOP = set(
    """the and for are was were how what where which when why who does that this with from into
    its have has can should would will not all any each some get set use used using code
    function method class file find show there then than been being their them they""".split()
)


def imagine_code(question: str, lang: str | None) -> str:
    """What a small code model might answer: a function named after the question's
    content words, a comment restating it, and a body that uses the other words."""
    words = [w.lower() for w in _WORD.findall(question) if w.lower() not in _STOP and len(w) > 2]
    words = words or ["handle", "request"]
    name_words = words[:3]
    rest = words[3:7] or ["value"]
    lang = (lang or "python").lower()
    if lang in ("typescript", "javascript", "tsx", "go", "java", "rust", "kotlin", "csharp"):
        name = name_words[0] + "".join(w.title() for w in name_words[1:])
        args = ", ".join(rest[:2])
        body = "\n".join(f"  const {w} = {name_words[-1]}.{w};" for w in rest)
        code = (
            f"// {question}\nexport function {name}({args}) {{\n{body}\n"
            f"  return {{ {', '.join(rest)} }};\n}}"
        )
        return f"```{lang}\n{code}\n```"
    name = "_".join(name_words)
    body = "\n".join(f"    {w} = {name_words[-1]}.{w}" for w in rest)
    code = (
        f'def {name}({", ".join(rest[:2])}):\n    """{question}"""\n{body}\n    return {rest[-1]}'
    )
    return f"```python\n{code}\n```"


def main() -> None:
    """Serve until interrupted: ``python tests/servers.py --port 8765``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--rerank-score", default="cosine", choices=["cosine", "overlap", "inverted"])
    ap.add_argument("--delay", type=float, default=0.0)
    a = ap.parse_args()
    srv = ModelServer(port=a.port, rerank_score=a.rerank_score, delay=a.delay).start()
    minilm_embed(["warm up"])
    print(f"serving {srv.url} (embeddings, rerank: {a.rerank_score}, chat)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":
    main()
