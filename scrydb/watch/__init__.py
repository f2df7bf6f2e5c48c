"""Keep an index fresh from file events: the one sync loop of ``scry watch`` and
``scry serve`` (:mod:`scrydb.mcp_server` runs on :class:`Watcher`).

Two pieces, both reusable:

* :class:`ChangeWatcher` turns watchdog's file events under a root into one debounced
  "something changed" signal. It drops what cannot change the index: the index's own
  files, ``.git`` internals, noise directories, paths the ignore rules exclude, and
  events that do not change content (open, close-without-write). A burst (``git
  checkout``, a build) becomes one signal once it has been quiet for ``debounce``
  seconds (``max_delay`` bounds the wait for a stream that never pauses), and a running
  git command (``.git/index.lock``) is waited for, so a sync never sees half a branch.
* :class:`Watcher` runs the syncs on those signals in a thread of its own:
  ``Watcher(index_factory, on_sync=callback)`` with ``start()`` / ``stop()``. Every burst
  gets a lexical sync at once (no model involved); embeddings are computed behind it,
  after the model has loaded in a thread of its own, and give way to the next burst's
  lexical sync (:class:`GivingWayEmbedder`). A sync walks and stat-diffs the whole tree,
  so nothing depends on every event being seen: editors' atomic-rename saves, deleted
  and re-created directories and dropped events all come right at the next sync. A
  changed ``.scry.toml`` is reloaded; another process's writer lock is waited for.

``watchdog`` is imported only here, when a watcher starts.
"""

from scrydb.watch.events import CHANGE_EVENTS, DEBOUNCE_S, ChangeWatcher
from scrydb.watch.giveway import GaveWay, GivingWayEmbedder
from scrydb.watch.loop import Watcher, describe, model_change_due

__all__ = [
    "CHANGE_EVENTS",
    "DEBOUNCE_S",
    "ChangeWatcher",
    "GaveWay",
    "GivingWayEmbedder",
    "Watcher",
    "describe",
    "model_change_due",
]
