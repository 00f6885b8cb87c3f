# Sourced by tests/harness/cluster: builds and caches kube-apiserver, kube-controller-manager and
# kube-scheduler of one of two versions (`cluster up --kube 1.20|current`):
#
#   1.20     1.20.2 from Debian 12's `kubernetes` source package (apt-get source), a GOPATH build of
#            its vendor tree                                  -> $CACHE/bin
#   current  $KUBE_CURRENT from the k8s.io/kubernetes Go module and its staging modules at the
#            matching v0.x.y versions (the Go module proxy)   -> $CACHE/kube-v$KUBE_CURRENT-$KUBE_BUILD_TAGS/bin
#
# Each directory holds the three binaries and `.build-tags`; binaries built with other tags are
# rebuilt, and another version or other tags are another directory. The build caches (GOCACHE,
# 1-2 GB) are removed after a build; the sources (Debian's tree, the module cache) stay.
# shellcheck shell=bash

KUBE_BINS=(kube-apiserver kube-controller-manager kube-scheduler)

# Built without the legacy cloud providers (AWS, Azure, GCE, OpenStack, vSphere: upstream's
# `providerless` build tag), which halves the Go source of 1.20 compiled (go list -deps of the three
# commands: 1,744 packages / 86.7 MB -> 1,489 / 46.0 MB); nothing here uses a cloud provider. From
# 1.31 the legacy providers are gone from the tree; the tag still drops a few files.
KUBE_BUILD_TAGS=providerless

# The newest k8s.io/kubernetes release on the module proxy whose build works with the machine's Go
# (v1.37.2 asks for go 1.26.0; checked: `go version` 1.26.8).
KUBE_CURRENT=1.37.2

# kube_bin_dir VERSION: where the binaries of VERSION (1.20|current) are
kube_bin_dir() {
  case $1 in
    1.20) echo "$CACHE/bin" ;;
    current) echo "$CACHE/kube-v$KUBE_CURRENT-$KUBE_BUILD_TAGS/bin" ;;
    *) die "unknown kube version '$1' (1.20|current)" ;;
  esac
}

# kube_release VERSION: the release VERSION stands for (1.20.2, $KUBE_CURRENT)
kube_release() { if [[ $1 == 1.20 ]]; then echo 1.20.2; else echo "$KUBE_CURRENT"; fi; }

kube_bins_built() { # VERSION
  local d b
  d=$(kube_bin_dir "$1")
  for b in "${KUBE_BINS[@]}"; do [[ -x $d/$b ]] || return 1; done
  [[ "$(cat "$d/.build-tags" 2>/dev/null)" == "$KUBE_BUILD_TAGS" ]]
}

# kube_ldflags RELEASE PKG...: the version stamp upstream's hack/lib/version.sh sets
kube_ldflags() {
  local rel=$1 pkg ld="-s -w" minor; shift
  minor=${rel#1.}; minor=${minor%%.*}
  for pkg in "$@"; do
    ld+=" -X $pkg.gitVersion=v$rel -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  echo "$ld"
}

build_kube() { # VERSION
  kube_bins_built "$1" && return 0
  local d; d=$(kube_bin_dir "$1")
  mkdir -p "$d"
  # one build of a version at a time (two checkouts may share the cache)
  exec 8> "$d/.build-lock"
  flock -w 7200 8 || die "another build holds $d/.build-lock"
  if ! kube_bins_built "$1"; then
    if [[ $1 == 1.20 ]]; then build_kube_debian; else build_kube_module; fi
  fi
  exec 8>&-
  kube_bins_built "$1" || exit 1   # (the build's subshell said why)
}

# 1.20.2 from Debian's source package (vendor tree, GOPATH mode); a subshell (its Go environment)
build_kube_debian() (
  local B=$CACHE/build.log
  log "building ${KUBE_BINS[*]} 1.20 from Debian source (first run only, ~4 min on 2 idle cores; log $B)"
  mkdir -p "$CACHE/src" "$CACHE/bin" "$CACHE/home"
  local src
  src=$(find "$CACHE/src" -maxdepth 1 -type d -name 'kubernetes-*' | head -1)
  if [[ -z $src || ! -f $src/.unstick-prepared ]]; then
    rm -rf "$CACHE/src" && mkdir -p "$CACHE/src"
    (cd "$CACHE/src" && timeout 900 apt-get source kubernetes) >> "$B" 2>&1 || die "apt-get source kubernetes failed (see $B)"
    src=$(find "$CACHE/src" -maxdepth 1 -type d -name 'kubernetes-*' | head -1)
    [[ -n $src ]] || die "no kubernetes-* dir after apt-get source"
    # pitfall 3: vendored reflect2 1.0.1 crashes with Go >= 1.18; use Debian's 1.0.2
    local r2
    r2=$(dpkg -L golang-github-modern-go-reflect2-dev | grep -E '/modern-go/reflect2$' | head -1)
    [[ -n $r2 ]] || die "reflect2 source dir not found"
    rm -f "$src"/vendor/github.com/modern-go/reflect2/*.go "$src"/vendor/github.com/modern-go/reflect2/*.s
    cp "$r2"/*.go "$r2"/*.s "$src/vendor/github.com/modern-go/reflect2/"
    touch "$src/.unstick-prepared"
  fi
  export GOCACHE=$CACHE/gocache GOFLAGS= CGO_ENABLED=0
  if [[ ! -f $src/pkg/generated/openapi/zz_generated.openapi.go ]]; then
    log "make gen_openapi"
    (cd "$src" && HOME=$CACHE/home timeout 1200 nice -n 10 make gen_openapi) >> "$B" 2>&1 || die "make gen_openapi failed (see $B)"
  fi
  export GOPATH=$CACHE/gopath GO111MODULE=off
  mkdir -p "$GOPATH/src/k8s.io" && ln -sfn "$src" "$GOPATH/src/k8s.io/kubernetes"
  local ld b
  ld=$(kube_ldflags 1.20.2 k8s.io/kubernetes/vendor/k8s.io/component-base/version k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version)
  if [[ "$(cat "$CACHE/bin/.build-tags" 2>/dev/null)" != "$KUBE_BUILD_TAGS" ]]; then
    for b in "${KUBE_BINS[@]}"; do rm -f "$CACHE/bin/$b"; done
  fi
  for b in "${KUBE_BINS[@]}"; do
    [[ -x $CACHE/bin/$b ]] && continue
    log "go build -tags $KUBE_BUILD_TAGS $b"
    (cd "$GOPATH/src/k8s.io/kubernetes" && HOME=$CACHE/home timeout 3600 nice -n 10 \
       go build -tags "$KUBE_BUILD_TAGS" -trimpath -ldflags "$ld" -o "$CACHE/bin/$b.tmp" "k8s.io/kubernetes/cmd/$b") >> "$B" 2>&1 \
       || die "go build $b failed (see $B)"
    mv "$CACHE/bin/$b.tmp" "$CACHE/bin/$b"
    log "$b built: $("$CACHE/bin/$b" --version 2>&1)"
  done
  echo "$KUBE_BUILD_TAGS" > "$CACHE/bin/.build-tags"
  # the 1.4 GB build cache is only useful for rebuilds; the source tree stays cached
  rm -rf "$CACHE/gocache"
)

# $KUBE_CURRENT from the Go module proxy: a throwaway main module that requires k8s.io/kubernetes and
# replaces each staging module (k/k's go.mod: `k8s.io/api v0.0.0` => ./staging/src/k8s.io/api) with
# its published v0.<minor>.<patch>, as a project importing k8s.io/kubernetes does. The three
# commands are built in one `go build` (shared package compiles). A subshell (its Go environment).
build_kube_module() (
  local rel=$KUBE_CURRENT d top B
  d=$(kube_bin_dir current); top=${d%/bin}; B=$top/build.log
  command -v go >/dev/null || die "no Go toolchain in PATH (the current control plane is built with Go >= 1.26)"
  log "building ${KUBE_BINS[*]} v$rel from the k8s.io/kubernetes module ($(go version | cut -d' ' -f3); first run only; log $B)"
  mkdir -p "$top/mod" "$CACHE/home"
  export GOMODCACHE=$CACHE/gomod GOCACHE=$top/gocache GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 GO111MODULE=on HOME=$CACHE/home
  unset GOPATH
  local kmod need
  kmod=$(cd "$top" && timeout 900 go mod download -json "k8s.io/kubernetes@v$rel" 2>> "$B" | jq -r .GoMod) \
    || die "go mod download k8s.io/kubernetes@v$rel failed (see $B)"
  [[ -s $kmod ]] || die "no go.mod of k8s.io/kubernetes@v$rel (see $B)"
  need=$(awk '$1 == "go" {print $2; exit}' "$kmod")
  {
    echo "// generated by tests/harness/kube_build.sh: k8s.io/kubernetes v$rel with its staging modules"
    echo "module unstick.local/kube-build"
    echo
    echo "go $need"
    echo
    echo "require k8s.io/kubernetes v$rel"
    echo
    echo "replace ("
    awk -v v="v0.${rel#1.}" '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {printf "\t%s => %s %s\n", $1, $1, v}' "$kmod"
    echo ")"
  } > "$top/mod/go.mod"
  local ld pkgs=() b
  ld=$(kube_ldflags "$rel" k8s.io/component-base/version k8s.io/client-go/pkg/version)
  for b in "${KUBE_BINS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  rm -rf "$top/out" && mkdir -p "$top/out"
  log "go build -tags $KUBE_BUILD_TAGS ${KUBE_BINS[*]} (go $need or newer)"
  (cd "$top/mod" && timeout 5400 nice -n 10 go build -tags "$KUBE_BUILD_TAGS" -trimpath -ldflags "$ld" -o "$top/out/" "${pkgs[@]}") \
    >> "$B" 2>&1 || { tail -20 "$B" >&2; die "go build of v$rel failed (see $B)"; }
  for b in "${KUBE_BINS[@]}"; do
    mv "$top/out/$b" "$d/$b"
    log "$b built: $("$d/$b" --version 2>&1)"
  done
  echo "$KUBE_BUILD_TAGS" > "$d/.build-tags"
  rm -rf "$top/out" "$top/gocache"
)
