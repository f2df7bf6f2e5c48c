"""``scry check``: do the pieces answer sanely? One verdict line per probe.

Probes: the config parses; SQLite loads FTS5 and sqlite-vec; the index file passes
``PRAGMA integrity_check``; the embedder loads, its vectors have the index's dimension and
rank a related text above an unrelated one; a configured reranker scores an on-topic
document above an off-topic one; a configured chat model returns code. Only configured
endpoints are contacted: an unconfigured install opens no socket here either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scrydb.config import Config
from scrydb.errors import ScryError

#: The sanity question and two answers to it: probes expect the first to win.
QUESTION = "how is a JSON string parsed into a dictionary"
ON_TOPIC = (
    "def parse_json(text: str) -> dict:\n"
    '    """Parse a JSON document and return the decoded object as a dict."""\n'
    "    return json.loads(text)\n"
)
OFF_TOPIC = (
    "def resize_image(img, width, height):\n"
    '    """Scale a bitmap to the given size with bilinear filtering."""\n'
    "    return img.resize((width, height), Image.BILINEAR)\n"
)


@dataclass
class Verdict:
    """One probe's outcome: ``ok``, ``FAIL`` or ``skip`` (not configured / nothing to check)."""

    name: str
    status: str
    detail: str
    seconds: float = 0.0


@dataclass
class Context:
    """What the probes share."""

    root: Path
    db: Path
    config: Config | None = None
    index_dim: int | None = None
    index_embedder: str | None = None


def probe_config(ctx: Context, explicit: str | None) -> Verdict:
    """The config file parses and validates (else the other probes use the defaults)."""
    from scrydb.config import find_config

    try:
        ctx.config = find_config(ctx.root, explicit)
    except ScryError as e:
        ctx.config = Config()
        return Verdict("config", "FAIL", f"{e} (checking with the defaults)")
    return Verdict("config", "ok", ctx.config.source or "defaults (no .scry.toml)")


def probe_sqlite(ctx: Context) -> Verdict:
    """FTS5 and sqlite-vec load into a scratch in-memory database."""
    from scrydb.store import EngineProblem, probe_engine

    try:
        sqlite_version, vec_version = probe_engine()
    except EngineProblem as e:
        return Verdict("sqlite", "FAIL", str(e))
    return Verdict("sqlite", "ok", f"SQLite {sqlite_version}, FTS5, sqlite-vec {vec_version}")


def probe_index(ctx: Context) -> Verdict:
    """The index file opens read-only and passes ``PRAGMA integrity_check``."""
    from scrydb.store import Store, counts

    if not ctx.db.exists():
        return Verdict("index", "skip", f"no index at {ctx.db} yet (`scry index` creates it)")
    try:
        store = Store(ctx.db, readonly=True)
    except ScryError as e:
        return Verdict("index", "FAIL", str(e))
    try:
        problems = store.integrity_problems()
        chunks = counts.chunks(store)
        ctx.index_dim = store.vec_dim()
        ctx.index_embedder = store.meta("embedder")
    except Exception as e:  # a damaged file fails in many ways
        return Verdict("index", "FAIL", f"{ctx.db}: {type(e).__name__}: {e}")
    finally:
        store.close()
    if problems != ["ok"]:
        return Verdict("index", "FAIL", f"{ctx.db}: integrity_check: {'; '.join(problems[:3])}")
    return Verdict("index", "ok", f"{ctx.db}: {chunks} chunks, integrity ok")


def probe_embedder(ctx: Context) -> Verdict:
    """The embedder answers unit vectors of the index's dimension that rank sensibly."""
    from scrydb.embed import make_embedder

    assert ctx.config is not None
    emb = make_embedder(ctx.config.embed)
    try:
        dim = emb.dim
        q = emb.embed_query(QUESTION)
        docs = emb.embed_documents([ON_TOPIC, OFF_TOPIC])
    except ScryError as e:
        return Verdict("embedder", "FAIL", f"{emb.id}: {e}")
    finally:
        emb.close()
    if q.shape != (dim,) or docs.shape != (2, dim) or not np.isfinite(docs).all():
        return Verdict(
            "embedder", "FAIL", f"{emb.id}: vectors of shape {docs.shape}, not (2, {dim})"
        )
    on, off = float(docs[0] @ q), float(docs[1] @ q)
    if not on > off:
        return Verdict(
            "embedder", "FAIL", f"{emb.id}: unrelated text scores higher ({off:.2f} >= {on:.2f})"
        )
    detail = f"{emb.id}: {dim}-d, related {on:.2f} > unrelated {off:.2f}"
    if ctx.index_dim is not None and ctx.index_dim != dim:
        return Verdict(
            "embedder",
            "FAIL",
            f"{detail}; the index holds {ctx.index_dim}-d vectors (`scry index` re-embeds)",
        )
    if ctx.index_dim is not None:
        detail += ", matches the index"
    if ctx.index_embedder and ctx.index_embedder != emb.id:
        detail += f" (index built with {ctx.index_embedder}: `scry index` re-embeds)"
    return Verdict("embedder", "ok", detail)


def probe_rerank(ctx: Context) -> Verdict:
    """A configured reranker scores the on-topic document above the off-topic one."""
    from scrydb.search.rerank import get_reranker, score_with_budget

    assert ctx.config is not None
    cfg = ctx.config.rerank
    if cfg.provider == "none":
        return Verdict("rerank", "skip", "not configured")
    rr = get_reranker(cfg)
    try:
        rr.load()
        scores = score_with_budget(rr, QUESTION, [ON_TOPIC, OFF_TOPIC], cfg.timeout)
    except ScryError as e:
        return Verdict("rerank", "FAIL", f"{rr.id}: {e}")
    on, off = scores
    if on is None or off is None:
        return Verdict("rerank", "FAIL", f"{rr.id}: scored only some documents: {scores}")
    if not on > off:
        return Verdict(
            "rerank", "FAIL", f"{rr.id}: off-topic scores higher ({off:.3g} >= {on:.3g})"
        )
    return Verdict("rerank", "ok", f"{rr.id}: on-topic {on:.3g} > off-topic {off:.3g}")


def probe_chat(ctx: Context) -> Verdict:
    """A configured chat model returns text (the hypothetical code HyDE embeds)."""
    from scrydb.search import hyde

    assert ctx.config is not None
    cfg = ctx.config.chat
    if not cfg.url:
        return Verdict("chat", "skip", "not configured")
    try:
        code = hyde.ask(cfg, QUESTION, "python")
    except ScryError as e:
        return Verdict("chat", "FAIL", str(e))
    first = code.strip().splitlines()[0][:50]
    return Verdict("chat", "ok", f"{len(code)} chars ({first!r}…), hyde = {cfg.hyde}")


def run_checks(root: Path, db: Path, config: str | None) -> list[Verdict]:
    """Every probe in order, each timed; a probe that crashes is a FAIL, not a traceback."""
    ctx = Context(root=root, db=db)
    probes: list[tuple[str, Callable[[], Verdict]]] = [
        ("config", lambda: probe_config(ctx, config)),
        ("sqlite", lambda: probe_sqlite(ctx)),
        ("index", lambda: probe_index(ctx)),
        ("embedder", lambda: probe_embedder(ctx)),
        ("rerank", lambda: probe_rerank(ctx)),
        ("chat", lambda: probe_chat(ctx)),
    ]
    out = []
    for name, fn in probes:
        t = time.perf_counter()
        try:
            v = fn()
        except Exception as e:
            v = Verdict(name, "FAIL", f"{type(e).__name__}: {e}")
        v.seconds = round(time.perf_counter() - t, 3)
        out.append(v)
    return out


def format_verdicts(verdicts: list[Verdict]) -> str:
    """One aligned line per probe: status, name, detail, time."""
    lines = []
    for v in verdicts:
        took = f" ({v.seconds * 1000:.0f} ms)" if v.status != "skip" and v.seconds >= 0.001 else ""
        lines.append(f"{v.status:<4}  {v.name:<8}  {v.detail}{took}")
    return "\n".join(lines)
