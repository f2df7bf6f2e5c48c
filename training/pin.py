"""Pin the training corpus: download every candidate package once and write manifest.json.

    python -m training pin [--candidates training/candidates.txt] --out DATA  # or $SCRY_TRAIN_DATA
                           [--manifest training/manifest.json] [--jobs 3]

Each line of candidates.txt is ``REGISTRY NAME`` (pypi, npm or deb). The newest version the
registry offers today is downloaded with the registry's own client (``pip download`` of the
sdist, ``npm pack``, ``apt-get download``), its sha256 taken and its languages counted after
unpacking. Packages refused by the exclusion check in corpus.py (evaluation corpora and the
reserved list) are never downloaded. An existing manifest entry is kept as it is (the
manifest is append-only: repinning means deleting the entry first).

This is how the manifest was made; rebuilding the corpus needs only corpus.py, which reads
the manifest and checks every archive against it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from training import add_data_option, corpus


def batch_download(registry: str, names: list[str], cache: Path) -> dict[str, str]:
    """One client call for many packages (apt-get and npm pay a start-up per call):
    name -> archive file name in ``cache``. Names the batch failed on are left out."""
    if not names:
        return {}
    batch = cache / f".batch-{registry}"
    batch.mkdir(exist_ok=True)
    if registry == "deb":
        cmd = ["apt-get", "download", *names]
    else:
        cmd = ["npm", "pack", "--silent", *names]
    r = subprocess.run(cmd, cwd=batch, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"batch {registry} failed ({r.stderr.strip()[-300:]}); per package", file=sys.stderr)
    got: dict[str, str] = {}
    for f in batch.iterdir():
        if registry == "deb":
            name = f.name.split("_")[0]
        else:
            info = json.loads(
                subprocess.run(
                    ["tar", "-xzOf", str(f), "package/package.json"],
                    capture_output=True,
                    check=True,
                ).stdout
            )
            name = info["name"]
        if name in names:
            shutil.move(str(f), cache / f.name)
            got[name] = f.name
    return got


PREFETCHED: dict[tuple[str, str], str] = {}


def pin_one(registry: str, name: str, cache: Path) -> dict:
    if (registry, name) in PREFETCHED:
        archive = PREFETCHED[(registry, name)]
        if registry == "deb":
            version = corpus._version_of(registry, name, archive)
        else:
            version = json.loads(
                subprocess.run(
                    ["tar", "-xzOf", str(cache / archive), "package/package.json"],
                    capture_output=True,
                    check=True,
                ).stdout
            )["version"]
    else:
        archive, version = corpus.download_latest(registry, name, cache)
    path = cache / archive
    entry: dict = {
        "registry": registry,
        "name": name,
        "version": version,
        "archive": archive,
        "sha256": corpus.sha256_of(path),
    }
    src = corpus.unpack(entry, cache.parent / "src")
    entry["languages"] = corpus.count_languages(entry, src)
    return entry


def main() -> int:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--candidates", default=str(here / "candidates.txt"))
    add_data_option(ap, "--out")
    ap.add_argument("--manifest", default=str(here / "manifest.json"))
    ap.add_argument("--jobs", type=int, default=3)
    args = ap.parse_args()

    out = Path(args.out)
    cache = out / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    mpath = Path(args.manifest)
    manifest = json.loads(mpath.read_text()) if mpath.exists() else {"packages": []}
    have = {(p["registry"], p["name"]) for p in manifest["packages"]}
    excluded = corpus.Exclusions.load(here.parent)

    todo = []
    for line in Path(args.candidates).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        registry, name = line.split()
        if (registry, name) in have:
            continue
        why = excluded.why(registry, name)
        if why:
            print(f"refused {registry}:{name}: {why}", file=sys.stderr)
            continue
        todo.append((registry, name))

    failed = []
    import threading

    lock = threading.Lock()

    def save() -> None:
        manifest["packages"].sort(key=lambda p: (p["registry"], p["name"]))
        mpath.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")

    def work(item: tuple[str, str]) -> None:
        registry, name = item
        try:
            e = pin_one(registry, name, cache)
        except Exception as exc:  # a candidate that cannot be had is left out, with a note
            failed.append(f"{registry}:{name}: {exc}")
            print(f"FAILED {registry}:{name}: {exc}", file=sys.stderr)
            return
        if not e["languages"]:
            failed.append(f"{registry}:{name}: no source files")
            print(f"EMPTY {registry}:{name}", file=sys.stderr)
            return
        print(f"pinned {registry}:{name}=={e['version']} {e['languages']}", file=sys.stderr)
        with lock:  # saved after each package: an interrupted run keeps what it pinned
            manifest["packages"].append(e)
            save()

    for reg in ("deb", "npm"):
        names = [n for r, n in todo if r == reg]
        for n, archive in batch_download(reg, names, cache).items():
            PREFETCHED[(reg, n)] = archive
    print(f"prefetched {len(PREFETCHED)} archives", file=sys.stderr)
    # quick registries first, PyPI (which prepares each sdist's metadata) last
    todo.sort(key=lambda t: t[0] == "pypi")
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(work, todo))
    save()
    print(f"{len(manifest['packages'])} packages pinned; {len(failed)} failed", file=sys.stderr)
    for f in failed:
        print("  " + f, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
