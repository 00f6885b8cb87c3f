# unstick's bulk RBD reader (sources/ceph/bulk.rs runs it as `python3 -c <this> ARGS`).
# One client connection reads, for every image of the pools named, what `rbd lock ls` and
# `rbd image-meta list` print, straight from the image's header object (no image is opened):
# the lockers of its "rbd_lock" cls lock and its "metadata_" omap keys. Images are read by
# THREADS threads (librados releases the GIL). One JSON object a line on stdout, flushed:
#   {"kind":"reader","librados":[major,minor,extra],"python":"3.11.2"}
#   {"kind":"pool","pool":P,"namespace":NS,"images":N}            after listing a pool
#   {"kind":"pool","pool":P,"namespace":NS,"errno":E,"message":M}   a pool that could not be listed
#   {"kind":"image","pool":P,"namespace":NS,"name":IMG,"id":ID,"lockers":[{"id","locker","address"}],
#    "meta":{KEY:VALUE}}  or  {..., "errno":E, "message":M}         one per image
#   {"kind":"end","stopped":null|"deadline"}                       images not printed were not read
# ARGS: [--conf F] [--id ID] [--keyring F] [--client_mount_timeout S] [--rados_mon_op_timeout S]
#       [--rados_osd_op_timeout S] [--threads N] [--deadline S] POOL[/NAMESPACE]...
# (`--opt=value` works too; other options are ignored). Exit 0 when it ran; 3 when the rados/rbd
# modules are missing; 4 for bad ARGS; 5 when it cannot connect (each with the reason on stderr).
import json
import socket
import struct
import sys
import threading
import time

try:
    import rados
    import rbd
except ImportError as missing:
    sys.stderr.write("unstick bulk reader: %s\n" % missing)
    sys.exit(3)

out_lock = threading.Lock()


def emit(obj):
    line = json.dumps(obj, sort_keys=True) + "\n"
    with out_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def parse_args(argv):
    opts, pools, i = {}, [], 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            if "=" in a:
                k, v = a[2:].split("=", 1)
            elif i + 1 < len(argv):
                k, v = a[2:], argv[i + 1]
                i += 1
            else:
                raise ValueError("option %s has no value" % a)
            opts[k] = v
        else:
            pools.append(a)
        i += 1
    return opts, pools


def err_fields(e):
    return {"errno": getattr(e, "errno", None) or 5, "message": str(e)}


class Reader:
    """Ceph's little-endian encoding (src/include/encoding.h) of a cls lock reply."""

    def __init__(self, b):
        self.b, self.at = b, 0

    def take(self, n):
        if self.at + n > len(self.b):
            raise ValueError("lock get_info reply ends early at byte %d" % self.at)
        self.at += n
        return self.b[self.at - n:self.at]

    def u8(self):
        return self.take(1)[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def string(self):
        return self.take(self.u32()).decode("utf-8", "replace")

    def start(self):  # ENCODE_START: version, compat, length; returns where the struct ends
        self.take(2)
        n = self.u32()
        return self.at + n


SETTINGS = ("keyring", "client_mount_timeout", "rados_mon_op_timeout", "rados_osd_op_timeout")
ENTITY_TYPES = {1: "mon", 2: "mds", 4: "osd", 8: "client", 16: "mgr"}


def entity_addr(r):
    """entity_addr_t as entity_addr_t::get_legacy_str() prints it: IP:PORT/NONCE."""
    if r.u8() != 1:
        raise ValueError("a pre-Luminous (legacy) address encoding")
    end = r.start()
    r.u32()  # type (legacy, msgr2, any)
    nonce = r.u32()
    sa = r.take(r.u32())
    r.at = end
    if len(sa) >= 8 and struct.unpack("<H", sa[:2])[0] == socket.AF_INET:
        host = socket.inet_ntop(socket.AF_INET, sa[4:8])
    elif len(sa) >= 24 and struct.unpack("<H", sa[:2])[0] == socket.AF_INET6:
        host = "[%s]" % socket.inet_ntop(socket.AF_INET6, sa[8:24])
    else:
        return "-/%d" % nonce  # no address (an entity_addr_t of type NONE)
    return "%s:%d/%d" % (host, struct.unpack(">H", sa[2:4])[0], nonce)


def lockers_of(reply):
    """cls_lock_get_info_reply (src/cls/lock/cls_lock_ops.h) -> rbd lock ls's JSON entries."""
    r = Reader(reply)
    r.start()
    out = []
    for _ in range(r.u32()):
        end = r.start()  # locker_id_t
        kind, num = struct.unpack("<Bq", r.take(9))
        cookie = r.string()
        r.at = end
        end = r.start()  # locker_info_t
        r.take(8)  # expiration
        address = entity_addr(r)
        r.at = end
        locker = "%s.%d" % (ENTITY_TYPES.get(kind, "unknown"), num)
        out.append({"id": cookie, "locker": locker, "address": address})
    return out


GET_INFO = struct.pack("<BBII", 1, 1, 4 + len(b"rbd_lock"), len(b"rbd_lock")) + b"rbd_lock"


def read_image(io, spec, entry):
    name, iid = entry["name"], entry.get("id") or ""
    line = {"kind": "image", "pool": spec[0], "namespace": spec[1], "name": name, "id": iid}
    header = "rbd_header." + iid if iid else name + ".rbd"
    try:
        _, reply = io.execute(header, "lock", "get_info", GET_INFO, 1 << 16)
        lockers = lockers_of(reply)
        meta = {}
        if iid:
            with rados.ReadOpCtx() as op:
                vals, _ = io.get_omap_vals(op, "", "metadata_", 4096)
                io.operate_read_op(op, header)
                for k, v in vals:
                    meta[k[len("metadata_"):]] = (v or b"").decode("utf-8", "replace")
        line["lockers"], line["meta"] = lockers, meta
    except Exception as e:  # one image's failure is that image's line
        line.update(err_fields(e))
    emit(line)


def main():
    try:
        opts, pools = parse_args(sys.argv[1:])
        threads = max(1, int(opts.pop("threads", "8")))
        deadline = time.monotonic() + float(opts.pop("deadline", "600"))
    except ValueError as e:
        sys.stderr.write("unstick bulk reader: %s\n" % e)
        sys.exit(4)
    v = rados.Rados.version(None)
    emit({"kind": "reader", "librados": [v.major, v.minor, v.extra], "python": sys.version.split()[0]})
    # "" reads what the CLI reads without --conf: $CEPH_CONF, else /etc/ceph/ceph.conf
    conffile, rados_id = opts.get("conf", ""), opts.get("id")
    conf = dict((k, v) for k, v in opts.items() if k in SETTINGS)
    try:
        cluster = rados.Rados(rados_id=rados_id, conffile=conffile, conf=conf)
        cluster.connect(timeout=int(conf.get("client_mount_timeout", "10")))
    except rados.Error as e:
        sys.stderr.write("unstick bulk reader: cannot connect: %s\n" % e)
        sys.exit(5)
    work = []
    for p in pools:
        spec = tuple(p.split("/", 1)) if "/" in p else (p, "")
        try:
            io = cluster.open_ioctx(spec[0])
            io.set_namespace(spec[1])
            images = list(rbd.RBD().list2(io))
        except (rados.Error, rbd.Error) as e:
            emit(dict({"kind": "pool", "pool": spec[0], "namespace": spec[1]}, **err_fields(e)))
            continue
        emit({"kind": "pool", "pool": spec[0], "namespace": spec[1], "images": len(images)})
        work.extend((io, spec, entry) for entry in images)
    state = {"next": 0, "stopped": None}
    take = threading.Lock()

    def worker():
        while True:
            with take:
                if state["next"] >= len(work):
                    return
                if time.monotonic() > deadline:
                    state["stopped"] = "deadline"
                    return
                item = work[state["next"]]
                state["next"] += 1
            read_image(*item)

    running = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for t in running:
        t.start()
    for t in running:
        t.join()
    emit({"kind": "end", "stopped": state["stopped"]})
    cluster.shutdown()


main()
