"""HyDE (hypothetical document embeddings) through a configured ``[chat]`` model.

A question like "how are failed calls retried" shares few words with the code that answers
it. A chat model (any OpenAI-compatible ``/v1/chat/completions`` endpoint) writes the code
it imagines the answer looks like, and the dense leg searches with that code's vector,
averaged with the question's (``hyde_embed = "mix"``, the default) or alone (``"code"``).

``hyde = "auto"`` asks only for natural-language questions (query shapes ``question`` and
``location``); ``"on"`` for every query; ``"off"`` (default) never, and then nothing here
runs. The vector is cached with the query vectors under a key that names HyDE, so a
cached plain vector is never taken for an expanded one. A chat model that fails or is
slower than ``[chat] timeout`` is skipped for that query: the plain query vector is used
and the results carry a note.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from scrydb.config import ChatConfig
from scrydb.embed import Embedder, normalise
from scrydb.embed.http import EndpointError, auth_headers, endpoint_url, post_json
from scrydb.errors import ScryError
from scrydb.search.query import dense_text

if TYPE_CHECKING:
    from scrydb.results import Results

#: Bump when the prompt changes: cached HyDE vectors of the old prompt are then unused.
PROMPT_VERSION = 1
#: The hypothetical code is cut to this many characters before it is embedded.
MAX_CODE_CHARS = 2000
#: Query shapes that ``hyde = "auto"`` expands (natural-language questions).
AUTO_SHAPES = ("question", "location")
#: The one place a ``[chat] hyde`` mode maps to the query shapes it expands (None: every
#: shape). The names are ``config.CHOICES[("chat", "hyde")]``; tests/test_config.py
#: checks they agree.
HYDE_MODES: dict[str, tuple[str, ...] | None] = {"off": (), "auto": AUTO_SHAPES, "on": None}

SYSTEM_PROMPT = (
    "You help search a code repository. Given a question about the code, write the short "
    "piece of source code (one function, method or class, with its name, signature and a "
    "one-line comment) that most likely answers it, as it would appear in the repository. "
    "Answer with code only: no explanation, no Markdown prose."
)

_FENCE = re.compile(r"```[\w+.-]*\n(.*?)(```|\Z)", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


class ChatError(ScryError):
    """The chat model failed or answered nothing usable."""


def wanted(cfg: ChatConfig, shape: str) -> bool:
    """Whether a query of this shape is expanded under this config (:data:`HYDE_MODES`)."""
    if not cfg.url:
        return False
    shapes = HYDE_MODES[cfg.hyde]
    return shapes is None or shape in shapes


def cache_tag(cfg: ChatConfig, shape: str) -> str:
    """The part of the query-vector cache key that says how HyDE made the vector
    ("" when HyDE does not apply, so plain keys stay what they always were)."""
    if not wanted(cfg, shape):
        return ""
    return f"hyde{PROMPT_VERSION}:{cfg.hyde_embed}:{cfg.model}:{cfg.max_tokens}\0"


def clean_code(text: str) -> str:
    """The code in a chat answer: reasoning blocks dropped, Markdown fences unwrapped."""
    text = _THINK.sub("", text)
    blocks = [m.group(1) for m in _FENCE.finditer(text)]
    code = "\n".join(b.strip("\n") for b in blocks) if blocks else text
    return code.strip()[:MAX_CODE_CHARS]


def ask(cfg: ChatConfig, question: str, lang: str | None = None) -> str:
    """The chat model's hypothetical code for ``question`` (a :class:`ChatError` if none)."""
    url = endpoint_url(cfg.url, "chat/completions")
    user = (f"Language: {lang}\n" if lang else "") + f"Question: {question}"
    payload: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ],
        "max_tokens": cfg.max_tokens,
        "temperature": 0,
        "stream": False,
    }
    if cfg.model:
        payload["model"] = cfg.model
    try:
        data = post_json(url, payload, auth_headers(cfg.api_key_env, "[chat]"), cfg.timeout)
    except EndpointError as e:
        raise ChatError(str(e)) from None
    try:
        choice = data["choices"][0]
        text = choice.get("message", {}).get("content") or choice.get("text") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ChatError(f"{url} answered without choices[0].message.content") from None
    if not isinstance(text, str):
        raise ChatError(f"{url} answered a message that is not text")
    code = clean_code(text)
    if not code:
        raise ChatError(f"{url} answered an empty message")
    return code


def _code_alone(emb: Embedder, text: str, code_vec: np.ndarray) -> np.ndarray:
    return code_vec


def _mixed(emb: Embedder, text: str, code_vec: np.ndarray) -> np.ndarray:
    qvec = emb.embed_query(dense_text(text))  # as the plain query vector
    return normalise(qvec + code_vec)[0]


#: The one place a ``[chat] hyde_embed`` name maps to how the hypothetical code's vector
#: becomes the query vector: alone, or averaged with the question's own. The names are
#: ``config.CHOICES[("chat", "hyde_embed")]``; tests/test_config.py checks they agree.
HYDE_EMBEDS: dict[str, Callable[[Embedder, str, np.ndarray], np.ndarray]] = {
    "code": _code_alone,
    "mix": _mixed,
}


def hyde_vector(
    cfg: ChatConfig, emb: Embedder, text: str, res: Results, lang: str | None
) -> np.ndarray | None:
    """The expanded query vector, or None (with a note in ``res``) when the chat model
    failed: the caller then uses the plain query vector. ``lang`` (the repository's
    main language) is a hint for the chat model."""
    try:
        code = ask(cfg, text, lang)
    except ScryError as e:
        res.notes.append(f"HyDE skipped, plain query used: {e}")
        return None
    hvec = emb.embed_documents([code])[0]
    return HYDE_EMBEDS[cfg.hyde_embed](emb, text, hvec)
