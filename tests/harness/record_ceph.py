#!/usr/bin/python3
"""Records what the harness's Ceph prints for every command the console runs, as fixtures.

usage: eval "$(tests/harness/cluster env)"; /usr/bin/python3 tests/harness/record_ceph.py DIR

Needs the harness up (`tests/harness/cluster up [--ceph 16|18]`); the `rbd`/`ceph` on PATH are the
ones `cluster env` names (Ceph 18's wrappers first in PATH with --ceph 18). Makes two images of its
own in replicapool (`unstick-record-csi`: default features, held open by a holder that wrote once,
so it has a watcher and an exclusive-lock owner, and a ceph-csi client-address metadata key;
`unstick-record-intree`: layering only, an in-tree `kubelet_lock_magic_` lock and a snapshot), a
blocklist entry for the holder and a range entry for 192.0.2.0/24 (TEST-NET-1: no client is
there), and removes all of it again at the end.

Writes DIR/<name> with each command's stdout byte for byte (the argv the console builds, `--format
json` for the .json files, none for the .txt files), and DIR/SOURCE: the Ceph version that printed
them, and per file its argv, exit status and stderr. Exits non-zero when a command the console
needs fails.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_lib as H  # noqa: E402

CSI = "unstick-record-csi"
INTREE = "unstick-record-intree"
UNUSED = "unstick-record-unused"
SNAP = "unstick-backup-20261126T220000Z"
RANGE = "192.0.2.0/24"
HANDLE = "0001-0009-rook-ceph-0000000000000002-5d3c0b58-0000-4000-8000-00000000a001"
META_KEY = f".rbd.csi.ceph.com/clientaddress/{HANDLE}/worker-1"


class Recorder:
    def __init__(self, out):
        self.out = out
        self.source = []
        os.makedirs(out, exist_ok=True)

    def run(self, tool, *args, name=None, ok=True, fmt=True):
        """Runs `tool --conf C args [--format json]`; stdout to DIR/name when named; returns it."""
        argv = [tool, "--conf", H.CEPH_CONF, *args] + (["--format", "json"] if fmt else [])
        p = subprocess.run(argv, env=H.CEPH_ENV, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        shown = " ".join([tool, *args] + (["--format", "json"] if fmt else []))
        err = p.stderr.decode(errors="replace").strip()
        self.source.append((name or "-", shown, p.returncode, err))
        if name:
            with open(os.path.join(self.out, name), "wb") as f:
                f.write(p.stdout)
        if ok and p.returncode != 0:
            sys.exit(f"record_ceph: {shown}: exit {p.returncode}: {err}")
        return p.stdout.decode(errors="replace")

    def both(self, tool, *args, name):
        """The JSON form (NAME.json) and the text form (NAME.txt) of one command."""
        self.run(tool, *args, name=f"{name}.json")
        self.run(tool, *args, name=f"{name}.txt", fmt=False)

    def write_source(self, version):
        lines = [f"Recorded by tests/harness/record_ceph.py on the harness ({time.strftime('%Y-%m-%d', time.gmtime())}), "
                 f"printed by: {version}", "",
                 "Each file is one command's stdout, byte for byte; `--conf <harness ceph.conf>` and the client",
                 "timeouts (CEPH_ARGS) are left out of the argv below. `exit` is the exit status; stderr follows it.",
                 ""]
        for name, argv, rc, err in self.source:
            lines.append(f"{name}\t{argv}\texit {rc}" + (f"\tstderr: {err}" if err else ""))
        with open(os.path.join(self.out, "SOURCE"), "w") as f:
            f.write("\n".join(lines) + "\n")


def start_holder(image):
    pidfile = os.path.join(H.RUN, "holder-record.pid")
    addrfile = os.path.join(H.RUN, "holder-record.addr")
    log = open(os.path.join(H.RUN, "holder-record.log"), "a")
    subprocess.Popen([H.CEPH_PY, os.path.join(H.HERE, "holder.py"), H.POOL, image, "--pidfile", pidfile, "--write"],
                     env=H.CEPH_ENV, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                     close_fds=True)
    log.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if os.path.exists(addrfile):
            # the address the OSD sees (rbd status), not the holder's guess in its .addr file
            watchers = H.rbd_json("status", f"{H.POOL}/{image}")["watchers"]
            if len(watchers) == 1:
                return pidfile, watchers[0]["address"]
        time.sleep(0.2)
    sys.exit("record_ceph: the holder did not open its image in 30 s (see run/holder-record.log)")


def stop_holder(pidfile):
    try:
        pid = int(open(pidfile).read().strip())
    except (OSError, ValueError):
        return
    if H.pid_alive_holder(pid):
        os.kill(pid, 15)
        for _ in range(100):
            if not H.pid_alive_holder(pid):
                break
            time.sleep(0.1)


def cleanup(r):
    for img in (CSI, INTREE, UNUSED):
        r.run("rbd", "snap", "purge", "--no-progress", f"{H.POOL}/{img}", ok=False, fmt=False)
        r.run("rbd", "rm", "--no-progress", f"{H.POOL}/{img}", ok=False, fmt=False)
    r.run("ceph", "osd", "blocklist", "range", "rm", RANGE, ok=False, fmt=False)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    r = Recorder(sys.argv[1])
    version = r.run("ceph", "--version", name="version.txt", fmt=False).strip()
    if H.ceph("osd", "blocklist", "ls").stdout.strip():
        sys.exit("record_ceph: the blocklist is not empty; `tests/harness/cluster reset` first")
    pool = f"{H.POOL}/"
    cleanup(r)
    r.source.clear()
    r.run("rbd", "create", pool + CSI, "--size", "64", fmt=False)
    r.run("rbd", "create", pool + INTREE, "--size", "64", "--image-feature", "layering", fmt=False)
    r.run("rbd", "create", pool + UNUSED, "--size", "64", "--image-feature", "layering", fmt=False)
    pidfile, addr = start_holder(CSI)
    try:
        r.run("rbd", "image-meta", "set", pool + CSI, META_KEY, addr.split(":")[0], fmt=False)
        r.run("rbd", "lock", "add", pool + INTREE, "kubelet_lock_magic_worker-1", fmt=False)
        r.run("rbd", "snap", "create", "--no-progress", f"{pool}{INTREE}@{SNAP}", name="rbd-snap-create.txt", fmt=False)
        r.both("rbd", "status", pool + CSI, name="rbd-status-watcher")
        r.both("rbd", "status", pool + UNUSED, name="rbd-status-none")
        r.both("rbd", "lock", "ls", pool + CSI, name="rbd-lock-ls-exclusive")
        r.both("rbd", "lock", "ls", pool + INTREE, name="rbd-lock-ls-in-tree")
        r.both("rbd", "lock", "ls", pool + UNUSED, name="rbd-lock-ls-none")
        r.both("rbd", "image-meta", "list", pool + CSI, name="rbd-image-meta-list")
        r.both("rbd", "image-meta", "list", pool + UNUSED, name="rbd-image-meta-list-none")
        r.both("rbd", "info", pool + CSI, name="rbd-info")
        r.both("rbd", "snap", "ls", pool + INTREE, name="rbd-snap-ls")
        r.both("rbd", "ls", "-l", H.POOL, name="rbd-ls-l")
        r.both("rbd", "ls", H.POOL, name="rbd-ls")
        r.both("ceph", "osd", "ls", name="ceph-osd-ls")
        r.both("ceph", "tell", "osd.0", "dump_watchers", name="dump-watchers")
        r.both("ceph", "status", name="ceph-status")
        r.both("ceph", "osd", "blocklist", "ls", name="blocklist-ls-empty")
        r.run("ceph", "osd", "blocklist", "add", addr, name="blocklist-add.txt", fmt=False)
        r.run("ceph", "osd", "blocklist", "range", "add", RANGE, name="blocklist-range-add.txt", fmt=False)
        r.both("ceph", "osd", "blocklist", "ls", name="blocklist-ls")
        r.both("rbd", "status", pool + CSI, name="rbd-status-after-blocklist")
        r.run("ceph", "osd", "blocklist", "rm", addr, name="blocklist-rm.txt", fmt=False)
        r.run("ceph", "osd", "blocklist", "range", "rm", RANGE, name="blocklist-range-rm.txt", fmt=False)
        lock = H.rbd_json("lock", "ls", pool + INTREE)[0]
        r.run("rbd", "lock", "rm", pool + INTREE, lock["id"], lock["locker"], name="rbd-lock-rm.txt", fmt=False)
        # breaking a lock blocklists its locker (rbd_blocklist_on_break_lock): undo it
        r.run("ceph", "osd", "blocklist", "rm", lock["address"], fmt=False)
        r.run("rbd", "status", f"{H.POOL}/unstick-record-missing", name="rbd-status-missing.json", ok=False)
        exported = subprocess.run(["rbd", "--conf", H.CEPH_CONF, "export", "--no-progress", f"{pool}{INTREE}@{SNAP}", "-"],
                                  env=H.CEPH_ENV, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        r.source.append(("-", f"rbd export --no-progress {H.POOL}/{INTREE}@{SNAP} -  ({len(exported.stdout)} bytes)",
                         exported.returncode, exported.stderr.decode(errors="replace").strip()))
    finally:
        stop_holder(pidfile)
        cleanup(r)
        # the holder's address may still be blocklisted when a step above failed
        r.run("ceph", "osd", "blocklist", "rm", addr, ok=False, fmt=False)
    r.source = [s for s in r.source if s[0] != "-" or "export" in s[1]]
    r.write_source(version)
    print(f"recorded {len(os.listdir(r.out)) - 1} files in {r.out} ({version})")


if __name__ == "__main__":
    main()
