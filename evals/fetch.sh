#!/usr/bin/env bash
# Fetch the pinned third-party corpora that the golden sets in evals/*.toml search.
#
#   evals/fetch.sh            fetch every corpus
#   evals/fetch.sh NAME ...   fetch only the named corpora (httpx, trpc-server, minijinja, cobra, ws, jpype, cmark-gfm, pybind11, self, ...)
#
# Archives come from immutable package registries (PyPI, npm), are checked against the
# sha256 pinned below (a mismatch is fatal), are kept in evals/.cache/ so a rerun downloads
# nothing, and are unpacked into evals/corpora/NAME/ with the version directory stripped,
# so the corpus root is the package's source root. Both folders are git-ignored.
# The `self` corpus is this repository at a pinned commit, taken from the local git history
# with `git archive` (no network; a shallow clone lacks old commits: `git fetch --unshallow`).
# Needs only bash, coreutils, tar, git, python3 (with pip) and npm; the Debian-packaged corpora
# (method deb) also need apt-get and dpkg-deb, with package lists present (`apt-get update` once).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="$HERE/.cache"
CORPORA="$HERE/corpora"

# name | method | spec | archive file | sha256 | what to keep ("*" = everything)
#  - pip:  `pip download --no-deps --no-binary NAME NAME==VER` (the sdist itself, never a wheel)
#  - url:  the sdist's own file on PyPI, for a maturin (Rust) sdist: `pip download` would have to
#          run `cargo metadata` to prepare its metadata, which needs a Rust toolchain and crates.io
#  - npm:  `npm pack NAME@VER` (the registry tarball, byte for byte)
#  - deb:  `apt-get download NAME=VERSION` (a Debian binary package, e.g. a golang-*-dev one that
#          ships Go source; needs apt-get and dpkg-deb); unpacked with `dpkg-deb -x`, and "what to
#          keep" is then the one directory inside the package that becomes the corpus root
#  - git:  `git archive COMMIT` of this repository (spec = the full commit id; no archive file
#          and no sha256 column: the commit id pins the content)
# For npm packages only the TypeScript sources are kept, not the compiled dist/ copy of them.
# A nested path in "what to keep" (third_party/cmark/src) lands at the corpus root under its last
# component (src/).
SPECS=(
  "httpx|pip|httpx==0.28.1|httpx-0.28.1.tar.gz|75e98c5f16b0f35b567856f597f06ff2270a374470a5c2392242528e3e3e42fc|*"
  "trpc-server|npm|@trpc/server@10.45.2|trpc-server-10.45.2.tgz|7b861ef0a4410e1f988645c29a7680be8c860b459136716e3b91941c0fd1783e|src package.json README.md LICENSE"
  "minijinja|url|https://files.pythonhosted.org/packages/c8/0e/7b76e4a45d5665047bb288a3e5f2520f25a691be58a1662e5a0ca80ae5b5/minijinja-2.5.0.tar.gz|minijinja-2.5.0.tar.gz|ca97a8d8053aa0111f855d6706883dbfdbda600bd2dd0e152c03077a42c003e3|*"
  "cmark-gfm|pip|cmarkgfm==2025.10.22|cmarkgfm-2025.10.22.tar.gz|5bec61007b65b919488442c838c58a6c8bf4741f5103c593b2ef180d39818eda|third_party/cmark/src third_party/cmark/extensions third_party/cmark/COPYING"
  "pybind11|pip|pybind11==3.1.0|pybind11-3.1.0.tar.gz|a1cc06b524ab3edca51f8ad3895f9c4fa20b8b19283173dff4ae781449dc9639|include LICENSE README.rst"
  "cobra|deb|golang-github-spf13-cobra-dev=1.6.1-1|golang-github-spf13-cobra-dev_1.6.1-1_all.deb|4f5d20855133319beef3c5b49d3c21a0406f270bf94fb4b6f4d406b691283cb2|usr/share/gocode/src/github.com/spf13/cobra"
  "ws|npm|ws@8.23.0|ws-8.23.0.tgz|b8bd105a274ae9ca114f8c6ce4d9dbb0c764fe5118ba633c557e1703e297c587|lib index.js wrapper.mjs browser.js package.json README.md LICENSE"
  "jpype|pip|jpype1==1.7.1|jpype1-1.7.1.tar.gz|3cd88838dc3d2d546f7eaeadaaff864e590010c15f2b6a44b6f37e60796a14b2|native/jpype_module/src LICENSE README.rst"
  "self|git|c9ae0d974286c772d3f46e0557e4e736445b4dda|-|-|*"
)

die() { echo "fetch.sh: $*" >&2; exit 1; }

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"
  fi
}

download() {  # method spec archive -> $CACHE/archive
  local method="$1" spec="$2" archive="$3" tmp
  tmp="$(mktemp -d "$CACHE/.dl.XXXXXX")"
  case "$method" in
    pip)
      local name="${spec%%==*}"
      python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        --no-binary "$name" "$spec" -d "$tmp" >&2 \
        || { rm -rf "$tmp"; die "pip download $spec failed"; }
      ;;
    npm)
      (cd "$tmp" && npm pack --silent "$spec" >/dev/null) \
        || { rm -rf "$tmp"; die "npm pack $spec failed"; }
      ;;
    deb)
      command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 \
        || { rm -rf "$tmp"; die "$spec: the deb method needs apt-get and dpkg-deb (Debian/Ubuntu)"; }
      (cd "$tmp" && apt-get download -q "$spec" >/dev/null) \
        || { rm -rf "$tmp"; die "apt-get download $spec failed (run apt-get update first?)"; }
      ;;
    url)
      python3 - "$spec" "$tmp/$archive" <<'PY' || { rm -rf "$tmp"; die "download of $spec failed"; }
import shutil, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=120) as r, open(sys.argv[2], "wb") as f:
    shutil.copyfileobj(r, f)
PY
      ;;
    *) rm -rf "$tmp"; die "unknown method $method" ;;
  esac
  [ -f "$tmp/$archive" ] || { ls -la "$tmp" >&2; rm -rf "$tmp"; die "expected $archive after fetching $spec"; }
  mv -f "$tmp/$archive" "$CACHE/$archive"
  rm -rf "$tmp"
}

fetch_one() {
  local name="$1" method="$2" spec="$3" archive="$4" sha="$5" keep="$6"
  local path="$CACHE/$archive" dest="$CORPORA/$name" stamp="$CACHE/$name.stamp" got

  if [ -f "$path" ] && [ "$(sha256_of "$path")" != "$sha" ]; then
    echo "  cached $archive has the wrong sha256; downloading again" >&2
    rm -f "$path"
  fi
  if [ ! -f "$path" ]; then
    echo "  downloading $spec ($method)" >&2
    download "$method" "$spec" "$archive"
  fi
  got="$(sha256_of "$path")"
  if [ "$got" != "$sha" ]; then
    rm -f "$path"
    die "SHA256 MISMATCH for $archive: expected $sha, got $got (archive removed)"
  fi

  # Unpacked already from this very archive and selection? Then nothing to do.
  if [ -d "$dest" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha $keep" ]; then
    report "$name" "$spec" "$dest" "up to date"
    return
  fi

  local work top
  work="$(mktemp -d "$CORPORA/.unpack.XXXXXX")"
  if [ "$method" = deb ]; then
    # A .deb has no version directory: keep the one source directory named in "keep".
    mkdir "$work/deb"
    dpkg-deb -x "$path" "$work/deb" || { rm -rf "$work"; die "dpkg-deb -x $archive failed"; }
    [ -d "$work/deb/$keep" ] || { rm -rf "$work"; die "$archive has no $keep"; }
    top="$work/deb/$keep"
    chmod -R u+rwX,go+rX "$top"
    rm -rf "$dest"
    mv "$top" "$dest"
    rm -rf "$work"
    echo "$sha $keep" >"$stamp"
    report "$name" "$spec" "$dest" "fetched"
    return
  fi
  tar -xzf "$path" -C "$work" --no-same-owner
  # Strip the single version directory (httpx-0.28.1/, package/, ...).
  top="$(find "$work" -mindepth 1 -maxdepth 1)"
  [ "$(printf '%s\n' "$top" | wc -l)" -eq 1 ] && [ -d "$top" ] \
    || { rm -rf "$work"; die "$archive does not have a single top-level directory"; }
  if [ "$keep" != "*" ]; then
    local sel="$work/.sel" item
    mkdir "$sel"
    for item in $keep; do
      [ -e "$top/$item" ] || { rm -rf "$work"; die "$archive has no $item"; }
      mv "$top/$item" "$sel/"
    done
    top="$sel"
  fi
  chmod -R u+rwX,go+rX "$top"
  rm -rf "$dest"
  mv "$top" "$dest"
  rm -rf "$work"
  echo "$sha $keep" >"$stamp"
  report "$name" "$spec" "$dest" "fetched"
}

fetch_git() {  # name commit: `git archive` of this repository at COMMIT -> $CORPORA/name
  local name="$1" commit="$2" dest="$CORPORA/$1" stamp="$CACHE/$1.stamp" root work

  if [ -d "$dest" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "git $commit" ]; then
    report "$name" "${commit:0:12}" "$dest" "up to date"
    return
  fi
  command -v git >/dev/null 2>&1 || die "$name: needs git"
  root="$(git -C "$HERE" rev-parse --show-toplevel 2>/dev/null)" \
    || die "$name: $HERE is not inside a git checkout of this repository"
  if ! git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null; then
    if [ "$(git -C "$root" rev-parse --is-shallow-repository 2>/dev/null)" = "true" ]; then
      die "$name: commit $commit is not in the local history (this is a shallow clone): run \`git fetch --unshallow\` and retry"
    fi
    die "$name: commit $commit is not in the local history of $root (try \`git fetch --unshallow\` or \`git fetch origin\`)"
  fi

  echo "  extracting $name at ${commit:0:12} (git archive)" >&2
  work="$(mktemp -d "$CORPORA/.unpack.XXXXXX")"
  git -C "$root" archive "$commit" | tar -x -C "$work" --no-same-owner \
    || { rm -rf "$work"; die "git archive $commit failed"; }
  chmod -R u+rwX,go+rX "$work"
  rm -rf "$dest"
  mv "$work" "$dest"
  echo "git $commit" >"$stamp"
  report "$name" "${commit:0:12}" "$dest" "fetched"
}

report() {  # name spec dest state
  local files label="$2"
  case "$label" in http*) label="${label##*/}" ;; esac
  files="$(find "$3" -type f | wc -l | tr -d ' ')"
  printf '%-12s %-28s evals/%s  (%s files, %s)\n' "$1" "$label" "${3#"$HERE"/}" "$files" "$4"
}

main() {
  mkdir -p "$CACHE" "$CORPORA"
  local wanted=("$@") spec name matched=0 n
  if [ "${#wanted[@]}" -eq 0 ]; then
    for spec in "${SPECS[@]}"; do wanted+=("${spec%%|*}"); done
  fi
  for n in "${wanted[@]}"; do
    matched=0
    for spec in "${SPECS[@]}"; do
      name="${spec%%|*}"
      if [ "$name" = "$n" ]; then
        matched=1
        IFS='|' read -r name method pkg archive sha keep <<<"$spec"
        if [ "$method" = git ]; then
          fetch_git "$name" "$pkg"
        else
          fetch_one "$name" "$method" "$pkg" "$archive" "$sha" "$keep"
        fi
      fi
    done
    [ "$matched" -eq 1 ] || die "unknown corpus '$n' (known: $(printf '%s ' "${SPECS[@]%%|*}"))"
  done
}

main "$@"
