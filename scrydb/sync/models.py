"""A model change never costs the vectors: the new embedder is loaded and probed before
anything changes, its vectors are computed beside the old ones (``vec_next``), and they
replace the old ones in one transaction when complete; searches keep the old ones (and
the model that made them) until then."""

from __future__ import annotations

import numpy as np

from scrydb.embed import Embedder
from scrydb.errors import ScryError
from scrydb.store import nextvectors
from scrydb.sync.base import (
    BODY,
    EMBED_COMMIT,
    EMBED_PAGE,
    HEAD,
    WINDOW,
    Phase,
    embed_config_json,
    embed_recipe,
)
from scrydb.sync.reuse import Reuse, SeedIndex, make_reuse


class ModelSwitch(Phase):
    """Probes a newly configured embedder and moves the index over to it."""

    #: another index to take vectors from (``--seed``), set by the embedding phase
    seed: SeedIndex | None = None

    def _embedder_target(self) -> str | None:
        """The identity (model + embedded-text recipe) the configured embedder would give
        the vectors; None when unknown."""
        if self.embedder_id is None:
            return None
        return f"{self.embedder_id} | {embed_recipe(self.config)}"

    def _live_target(self) -> str | None:
        """The identity of the vectors the index holds now (None: it holds none)."""
        s = self.store
        old_id = s.meta("embedder")
        if old_id is None or not nextvectors.has_vectors(s):
            return None
        return f"{old_id} | {s.meta('embed_text')}"

    def probe(self) -> int | None:
        """When the configured embedder differs from the one that made the index's vectors
        (and no re-embed for it is under way): load it and embed one text, before anything
        changes. Returns its dimension (None: nothing to probe). A model that cannot load,
        or answers with a wrong shape, raises ScryError and the index is untouched."""
        target = self._embedder_target()
        live = self._live_target()
        if target is None or live is None or live == target:
            return None
        if self.store.meta("next_embedder") == target:
            return None  # probed when this re-embed started
        if self._embedder_factory is None:
            return None
        try:
            emb = self.embedder()
            vec = np.asarray(emb.embed_documents(["def probe(): return 1"]))
            dim = int(emb.dim)
        except ScryError as e:
            raise ScryError(
                f"cannot use the configured embedding model ({e}); the index is unchanged: "
                "fix [embed] in the config"
            ) from None
        except Exception as e:  # a broken model directory can fail in many ways
            raise ScryError(
                f"cannot load the configured embedding model {self.embedder_id} "
                f"({type(e).__name__}: {e}); the index is unchanged: fix [embed] in the config"
            ) from None
        if vec.shape != (1, dim) or not np.isfinite(vec).all():
            raise ScryError(
                f"the configured embedding model {self.embedder_id} returned vectors of shape "
                f"{vec.shape}, not (1, {dim}); the index is unchanged"
            )
        return dim

    def check(self, probed_dim: int | None) -> None:
        """A changed model or embedded-text recipe never costs the vectors: the new
        model's vectors are computed beside the old ones (``vec_next``) and replace them
        only when complete (:meth:`_switch_vectors`); searches keep the old ones (and the
        model that made them) until then."""
        s = self.store
        target = self._embedder_target()
        if target is None:
            return
        live = self._live_target()
        if live is None or live == target:
            # Nothing to keep (or nothing changed): the configured embedder is the index's.
            if s.meta("next_embedder") is not None:
                s.clear_next_vectors()  # the config went back to the model in use
            self._adopt_embedder()
            return
        if s.meta("next_embedder") == target:
            return  # a re-embed for this model is under way: the next embedding phase goes on
        if probed_dim is None:
            return  # a sync without a model (locate): the next sync that has one starts it
        old_id, old_recipe = s.meta("embedder"), s.meta("embed_text")
        recipe = embed_recipe(self.config)
        differs = []
        if old_id != self.embedder_id:
            differs.append(f"embedding model changed ({old_id} -> {self.embedder_id})")
        if old_recipe != recipe:
            differs.append(f"embedded text changed ({old_recipe} -> {recipe})")
        self.warn(
            f"{'; '.join(differs)}: computing the new vectors beside the old ones; searches "
            "keep the old ones until every chunk has its new vector"
        )
        s.clear_next_vectors()
        s.start_next_vectors(target, probed_dim)
        self.report.rebuilt = self.report.rebuilt or "; ".join(differs)

    def _adopt_embedder(self) -> None:
        """Record the configured embedder as the one the index's vectors come from."""
        s = self.store
        recipe = embed_recipe(self.config)
        if s.meta("embedder") != self.embedder_id:
            s.set_meta("embedder", str(self.embedder_id))
        if s.meta("embed_text") != recipe:
            s.set_meta("embed_text", recipe)
        cfg = embed_config_json(self.config)
        if s.meta("embed_config") != cfg:
            s.set_meta("embed_config", cfg)

    def embed_all(self) -> None:
        """A model change under way: embed every distinct chunk text, header and window
        with the new model into ``vec_next`` (one transaction per EMBED_COMMIT; a killed run
        resumes), then switch to the new vectors in one transaction."""
        emb = self.embedder()
        reuse = make_reuse(self.config, self.embedder_id, emb.dim, self.seed, self.warn)
        try:
            self._embed_all(emb, reuse)
        finally:
            self.report.seconds_cache += reuse.seconds
            reuse.close()

    def _embed_all(self, emb: Embedder, reuse: Reuse) -> None:
        s = self.store
        total = nextvectors.missing_count(s)
        self.progress("embed", 0, total)
        done = 0
        while not self._cancelled():
            texts: dict[str, str] = {}
            kind = BODY
            for h, content, sym, path in nextvectors.missing_page(s, BODY, EMBED_PAGE):
                texts.setdefault(h, self.body_text(path, sym, content))
            if not texts:
                kind = HEAD
                for h, content, sym, ckind, path in nextvectors.missing_page(s, HEAD, EMBED_PAGE):
                    texts.setdefault(h, self.head_text(path, sym, ckind, content))
            if not texts:
                kind = WINDOW
                for h, content, sym, path, seq in nextvectors.missing_page(s, WINDOW, EMBED_PAGE):
                    # A window whose text is gone (cannot happen under the writer lock)
                    # still gets a vector, so the loop ends.
                    texts.setdefault(h, self.window_text(path, sym, content, seq) or path)
            if not texts:
                break
            items = sorted(texts.items(), key=lambda it: len(it[1]))
            found, items = reuse.take(items)
            if found:
                self._put_next([h for h, _v, _o in found], [v for _h, v, _o in found])
                for origin in {o for _h, _v, o in found}:
                    self.count_reused(origin, sum(1 for f in found if f[2] == origin))
                done += len(found)
                self.progress("embed", done, max(total, done))
            for i in range(0, len(items), EMBED_COMMIT):
                if self._cancelled():
                    break
                part = items[i : i + EMBED_COMMIT]
                vecs = emb.embed_documents([t for _, t in part])
                self._put_next([h for h, _ in part], list(vecs))
                reuse.give(part, vecs)
                done += len(part)
                self.count_embedded(kind, len(part))
                self.progress("embed", done, max(total, done))
        if not self._cancelled():
            self._switch_vectors()

    def _put_next(self, hashes: list[str], vecs: list[np.ndarray]) -> None:
        """Store new-model vectors in ``vec_next`` (one transaction)."""
        nextvectors.put(self.store, hashes, vecs)

    def _switch_vectors(self) -> None:
        """Replace the old model's vectors by the complete new set, in one transaction."""
        s = self.store
        with s.transaction():
            if not nextvectors.complete(s):
                return  # not complete (cannot happen under the writer lock)
            nextvectors.switch(s)
            self._adopt_embedder()
            s.bump("vec_epoch")
