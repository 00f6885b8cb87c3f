# Sourced by tests/harness/cluster: the Ceph release the harness runs (`cluster up --ceph 16|18`).
#
#   16   Debian 12's own packages (ceph-mon, ceph-osd, ceph-common: 16.2.x "pacific"), on PATH
#   18   Debian 13 (trixie)'s packages (18.2.x "reef"), in a root of their own made by mmdebstrap
#        (apt resolves the dependencies; debootstrap 1.0.128 of Debian 12 fails on trixie: it
#        installs systemd before its pre-dependency libsystemd-shared is configured), cached in
#        $CACHE/ceph18-trixie/root (made once; a new suite or package list makes it again);
#        $CACHE/ceph18-trixie/bin holds one wrapper per command (ceph, rbd, rados, ceph-mon, ceph-osd, ceph-authtool, monmaptool, python3) that
#        runs the root's binary with the root's own dynamic loader and libraries. No chroot and no
#        mount: every path (conf, keyrings, run dir, the harness's scripts) is the host's, a
#        process keeps the network namespace it was started in (`ip netns exec NS rbd ...` runs
#        Ceph 18's rbd in NS), and nothing has to be unmounted. The daemons find the root's
#        plugins and object classes through their conf (ceph_root_conf).
#
# With 18, `cluster` puts the wrapper directory first in PATH (and `cluster env` prints it), so
# `rbd`/`ceph` of the scripts, the tests and the console are Ceph 18's; holders run under the
# root's python3 (python3-rados/rbd of 18), which the scripts get as UNSTICK_CEPH_PYTHON.
# shellcheck shell=bash

CEPH18_SUITE=trixie
CEPH18_PKGS=(ceph-mon ceph-osd ceph-common python3-rados python3-rbd)
CEPH18_TOOLS=(ceph rbd rados ceph-mon ceph-osd ceph-authtool monmaptool ceph-conf)
# what a stamp of the root says: the suite and the packages it was made with
ceph18_stamp() { echo "$CEPH18_SUITE ${CEPH18_PKGS[*]}"; }
ceph18_top() { echo "$CACHE/ceph18-$CEPH18_SUITE"; }

# The harness's Ceph release: `up --ceph 16|18` chooses it (default 16) and records it in
# $STATE/ceph-version; every other command uses the recorded one.
CEPH_VERSION=$(cat "$STATE/ceph-version" 2>/dev/null || echo 16)
[[ $CEPH_VERSION == 16 || $CEPH_VERSION == 18 ]] || CEPH_VERSION=16

# set_ceph_version 16|18: PATH and the python that holders run under
set_ceph_version() {
  CEPH_VERSION=$1
  CEPH_PY=$SYSPY
  local bin p=:$PATH:; bin=$(ceph18_top)/bin
  p=${p//:$bin:/:}; p=${p#:}; PATH=${p%:}
  if [[ $CEPH_VERSION == 18 ]]; then
    PATH=$bin:$PATH
    CEPH_PY=$bin/python3
  fi
  export PATH UNSTICK_CEPH_PYTHON=$CEPH_PY
}

# ceph_release: "ceph 16.2.15+ds-0+deb12u1" (Debian's package version) or "ceph 18.2.7" (what the
# root's `ceph --version` said when it was made)
ceph_release() {
  if [[ $CEPH_VERSION == 18 ]]; then
    awk '{print "ceph " $3; exit}' "$(ceph18_top)/version" 2>/dev/null || echo "ceph 18 (root not made yet)"
  else
    echo "ceph $(dpkg-query -W -f='${Version}' ceph-common 2>/dev/null)"
  fi
}

ceph18_built() {
  local top; top=$(ceph18_top)
  [[ "$(cat "$top/.built" 2>/dev/null)" == "$(ceph18_stamp)" && -x $top/bin/ceph ]]
}

# The Debian mirror this machine's apt uses (deb822 `URIs:` or a one-line `deb` entry), else
# deb.debian.org; UNSTICK_DEBIAN_MIRROR overrides it.
debian_mirror() {
  local m=${UNSTICK_DEBIAN_MIRROR:-}
  [[ -n $m ]] || m=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [[ -n $m ]] || m=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  echo "${m:-http://deb.debian.org/debian}"
}

# build_ceph18: mmdebstrap the root (first run only; cached), then write the wrappers
build_ceph18() {
  ceph18_built && return 0
  local top; top=$(ceph18_top)
  mkdir -p "$top"
  exec 8> "$top/.build-lock"
  flock -w 3600 8 || die "another build holds $top/.build-lock"
  if ! ceph18_built; then
    [[ $(id -u) == 0 ]] || die "need root to make Ceph 18's root"
    command -v mmdebstrap >/dev/null || die "no mmdebstrap (cluster up installs it)"
    local mirror B=$top/build.log t0=$SECONDS
    mirror=$(debian_mirror)
    log "mmdebstrap $CEPH18_SUITE with ${CEPH18_PKGS[*]} from $mirror into $top/root (first run only; log $B)"
    ceph18_rm "$top/root.tmp"; rm -rf "$top/bin"
    local inc; inc=$(IFS=,; echo "${CEPH18_PKGS[*]}")
    timeout 3600 nice -n 10 mmdebstrap --mode=root --variant=apt --include="$inc" "$CEPH18_SUITE" "$top/root.tmp" "$mirror" \
      > "$B" 2>&1 || { tail -20 "$B" >&2; ceph18_unmount "$top/root.tmp"; die "mmdebstrap $CEPH18_SUITE failed (log $B)"; }
    ceph18_rm "$top/root"
    ceph18_unmount "$top/root.tmp"
    mv "$top/root.tmp" "$top/root"
    ceph18_wrappers "$top"
    "$top/bin/ceph" --version > "$top/version" 2>&1 || die "Ceph 18's ceph does not run: $(cat "$top/version")"
    ceph18_stamp > "$top/.built"
    log "Ceph 18 root ready in $((SECONDS - t0)) s: $(cat "$top/version"), $(du -sm "$top/root" | cut -f1) MB"
  fi
  exec 8>&-
}

# ceph18_unmount DIR: mmdebstrap (like debootstrap) mounts /proc, /sys and parts of /dev into its
# target while it installs; a run that died may leave them. Lazily, deepest first.
ceph18_unmount() {
  local mp
  while read -r mp; do
    umount -l "$mp" || die "cannot unmount $mp (left by mmdebstrap)"
  done < <(awk -v d="$1/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r)
}

# ceph18_rm DIR: removes a root, never what is mounted in it (a host /dev bound there)
ceph18_rm() {
  [[ -e $1 ]] || return 0
  ceph18_unmount "$1"
  rm -rf --one-file-system "$1"
}

# ceph18_wrappers TOP: TOP/bin/<tool> runs TOP/root's <tool> with the root's loader and libraries
# (`--inhibit-cache`: never the host's /etc/ld.so.cache; the library path comes before the
# binaries' RUNPATH /usr/lib/x86_64-linux-gnu/ceph, which is the host's Ceph 16). Python tools run
# under the root's python3 (-E -s: no PYTHON* variables, no user site), which finds its prefix
# (and so python3-rados/rbd 18) from its own path. Its command line still holds `/usr/bin/python3`
# (as `<root>/usr/bin/python3`), which the harness's pid checks look for.
ceph18_wrappers() {
  local top=$1 root=$1/root t target
  local lib=$root/usr/lib/x86_64-linux-gnu
  local ld=$lib/ld-linux-x86-64.so.2 lp=$lib:$lib/ceph
  [[ -x $ld ]] || die "no dynamic loader at $ld"
  mkdir -p "$top/bin"
  for t in "${CEPH18_TOOLS[@]}" python3; do
    if [[ $t == python3 ]]; then target="$root/usr/bin/python3 -E -s"
    elif head -c 2 "$root/usr/bin/$t" | grep -q '#!'; then target="$root/usr/bin/python3 -E -s $root/usr/bin/$t"
    else target=$root/usr/bin/$t; fi
    printf '#!/bin/sh\n# Ceph 18 (%s) from %s: tests/harness/ceph_root.sh\nexec %s --inhibit-cache --library-path %s %s "$@"\n' \
      "$CEPH18_SUITE" "$root" "$ld" "$lp" "$target" > "$top/bin/$t"
    chmod +x "$top/bin/$t"
  done
}

# ceph_root_conf: the conf lines the daemons of this release need ([global]); 18 loads its
# erasure-code and compressor plugins and its object classes (cls_rbd, cls_lock) from the root
ceph_root_conf() {
  [[ $CEPH_VERSION == 18 ]] || return 0
  local lib; lib=$(ceph18_top)/root/usr/lib/x86_64-linux-gnu
  printf 'plugin dir = %s\nerasure code dir = %s\nosd class dir = %s\n' "$lib/ceph" "$lib/ceph/erasure-code" "$lib/rados-classes"
}
