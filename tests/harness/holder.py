#!/usr/bin/python3
"""Keep an RBD image open with librbd, so that it has a real watcher.

usage: /usr/bin/python3 holder.py POOL IMAGE --pidfile FILE [--conf CEPH_CONF] [--write]
       /usr/bin/python3 holder.py --container --pidfile FILE [--hold-under DIR]

--container: no Ceph at all; stands for a container's process (started by a node agent under
`unshare -m`, so it keeps the mount namespace it was given) until SIGTERM. Writes FILE only.
--hold-under DIR: it also keeps open (as directory file descriptors) the mounts under DIR that its
namespace has at start, as a process reading files there does.

This stands in for a node that still has the image mapped (there is no kernel
RBD here). The watcher shows up in `rbd status` as <ip>:0/<nonce>, <ip> being the
address it connects from (--ip: the harness bridge address, or a node's address when
it runs in that node's network namespace).
Writes FILE (its pid) at start and FILE with ".addr" instead of ".pid" (its
client address, e.g. "127.0.0.1:0/1234567") once the image is open.
Reads 4 KiB every 5 s (--write: first writes the first 4 KiB back as read, which takes the
exclusive lock of an image that has the feature); on SIGTERM/SIGINT closes the image (the watcher goes
away at once) and exits 0. If it gets blocklisted it keeps running (like a
stuck kernel client) and logs the errors.
Must run with a python that has python3-rados/rbd: Debian's /usr/bin/python3 (Ceph 16), or with
`cluster up --ceph 18` the wrapper of Ceph 18's root ($UNSTICK_CEPH_PYTHON, harness_lib.CEPH_PY).
"""
import argparse
import os
import signal
import sys
import time

import rados
import rbd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pool", nargs="?")
    ap.add_argument("image", nargs="?")
    ap.add_argument("--container", action="store_true", help="hold a mount namespace only, no Ceph")
    ap.add_argument("--hold-under", help="--container: keep open the mounts under this directory")
    ap.add_argument("--write", action="store_true", help="write once (takes the exclusive lock)")
    ap.add_argument("--pidfile", required=True)
    ap.add_argument("--conf", default=os.environ.get("CEPH_CONF"))
    ap.add_argument("--ip", default=os.environ.get("UNSTICK_HOST_IP", "127.0.0.1"),
                    help="the address this client connects from (for the .addr file)")
    args = ap.parse_args()
    if args.container:
        return container(args.pidfile, args.hold_under)
    if not (args.pool and args.image):
        sys.exit("holder.py: POOL and IMAGE are required")
    if not args.conf:
        sys.exit("holder.py: no --conf and no CEPH_CONF")

    with open(args.pidfile + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.replace(args.pidfile + ".tmp", args.pidfile)
    addrfile = args.pidfile[:-4] + ".addr" if args.pidfile.endswith(".pid") else args.pidfile + ".addr"

    stop = {"flag": False}

    def on_signal(signum, _frame):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    cluster = rados.Rados(
        conffile=args.conf,
        conf={
            "client_mount_timeout": "5",
            "rados_mon_op_timeout": "10",
            "rados_osd_op_timeout": "10",
        },
    )
    cluster.connect(timeout=10)
    ioctx = cluster.open_ioctx(args.pool)
    image = rbd.Image(ioctx, args.image)  # registers the watch on rbd_header.<id>
    if args.write:
        image.write(image.read(0, 4096), 0)
    addr = cluster.get_addrs()
    # get_addrs() gives e.g. "[v2:0.0.0.0:0/123,v1:...]" or "127.0.0.1:0/123"; keep the nonce
    nonce = addr.rsplit("/", 1)[-1].rstrip("]")
    my_addr = f"{args.ip}:0/{nonce}"
    with open(addrfile + ".tmp", "w") as f:
        f.write(my_addr + "\n")
    os.replace(addrfile + ".tmp", addrfile)
    print(f"holder pid={os.getpid()} image={args.pool}/{args.image} addr={my_addr} raw={addr}", flush=True)

    while not stop["flag"]:
        try:
            image.read(0, 4096)
        except Exception as e:  # blocklisted: ConnectionShutdown (108); keep "holding"
            print(f"read failed: {e!r}", flush=True)
        for _ in range(50):
            if stop["flag"]:
                break
            time.sleep(0.1)

    try:
        image.close()
    finally:
        ioctx.close()
        cluster.shutdown()
    for f in (args.pidfile, addrfile):
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
    print("holder closed", flush=True)


def container(pidfile, hold_under=None):
    held = []
    if hold_under:
        with open("/proc/self/mountinfo") as f:
            points = [line.split()[4] for line in f]
        for m in points:
            if m.startswith(hold_under.rstrip("/") + "/"):
                try:
                    held.append(os.open(m, os.O_RDONLY | os.O_DIRECTORY))
                except OSError:
                    pass
    with open(pidfile + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.replace(pidfile + ".tmp", pidfile)
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(flag=True))
    signal.signal(signal.SIGINT, lambda *_: stop.update(flag=True))
    while not stop["flag"]:
        time.sleep(0.2)
    try:
        os.unlink(pidfile)
    except FileNotFoundError:
        pass


if __name__ == "__main__":
    main()
