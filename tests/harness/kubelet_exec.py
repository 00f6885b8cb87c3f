"""The kubelet's exec endpoint, served by a node agent (agent.py) so that the real kube-apiserver
proxies a real `pods/exec` into it (SEED.md "Exec into Rook pods").

HTTPS on the node's InternalIP and the port of `status.daemonEndpoints.kubeletEndpoint` (10250),
inside the node's network namespace (the listening socket is made there with setns(2) through
ctypes; stdlib only). The API server authenticates with its kubelet client certificate
(`--kubelet-client-certificate`, signed by the harness CA: the client certificate is required and
verified here, as kubelet's x509 authentication does); the agent serves a self-signed certificate,
as kubelet does by default (the API server is given no kubelet CA, as with kubeadm).

`POST /exec/<ns>/<pod>/<container>?command=...&command=...&stdout=1&stderr=1` with an upgrade:
  - `Upgrade: websocket` (the API server passes the client's upgrade through: 1.20 always; 1.30+
    only for nodes that declare `ExtendWebSocketsToKubelet` or clients that do not ask for
    `v5.channel.k8s.io`): the channel protocol of kubelet 1.20, `v4.channel.k8s.io` (one byte of
    channel, 1 stdout, 2 stderr, 3 the error channel's `Status` JSON);
  - `Upgrade: SPDY/3.1` (1.30+ translates a v5 WebSocket client into SPDY towards a node that
    does not declare `ExtendWebSocketsToKubelet`): spdy.py.
The command runs as argv (no shell) in the node's network namespace with the pod's Ceph files
made visible where the pod has them (`agent.py pod-exec`); the exit status goes into the error
channel as kubelet writes it. Every request's line and headers are appended to
RUN/kubelet-exec-NODE.log (JSON lines), which the exec test and SEED.md read.
"""
import base64
import ctypes
import hashlib
import json
import os
import socket
import ssl
import struct
import subprocess
import threading
import time
import urllib.parse

import harness_lib as H

CLONE_NEWNET = 0x40000000
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455
# kubelet 1.20's WebSocket protocols (remotecommand/websocket.go), best first
WS_PROTOCOLS = ["v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"]
EXEC_TIMEOUT = 120


def listen_in_netns(netns, ip, port):
    """A listening TCP socket on ip:port inside network namespace `netns` (/run/netns/NAME)."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {netns}")
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((ip, port))
            s.listen(16)
        finally:
            if libc.setns(own, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(own)
        os.close(target)
    return s


def exit_status(code, argv):
    """The error channel's Status, as kubelet writes it (remotecommand `handleResizeEvents`' sibling
    `writeStatus`: Success, or NonZeroExitCode with the ExitCode cause)."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure",
            "message": f"command terminated with non-zero exit code: error executing command {argv}, exit code {code}",
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


class Server:
    def __init__(self, node, ip, netns, run, log, port=10250):
        self.node, self.ip, self.netns, self.run, self.log, self.port = node, ip, netns, run, log, port
        pki = os.path.join(H.STATE, "pki")
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(os.path.join(pki, "kubelet-serving.crt"), os.path.join(pki, "kubelet-serving.key"))
        self.ctx.load_verify_locations(os.path.join(pki, "ca.crt"))
        self.ctx.verify_mode = ssl.CERT_REQUIRED
        self.ctx.set_alpn_protocols(["http/1.1"])
        self.journal = os.path.join(run, f"kubelet-exec-{node}.log")
        self.lock = threading.Lock()

    def start(self):
        sock = listen_in_netns(self.netns, self.ip, self.port)
        self.log(f"kubelet exec endpoint on https://{self.ip}:{self.port} (netns {self.netns})")
        threading.Thread(target=self.accept_loop, args=(sock,), daemon=True).start()

    def accept_loop(self, sock):
        while True:
            conn, _ = sock.accept()
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def record(self, entry):
        with self.lock, open(self.journal, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def handle(self, raw):
        try:
            raw.settimeout(EXEC_TIMEOUT + 30)
            conn = self.ctx.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError) as e:
            self.log(f"exec endpoint: TLS handshake failed: {e}")
            raw.close()
            return
        try:
            self.serve(conn)
        except (OSError, ValueError, KeyError, H.ApiError) as e:
            self.log(f"exec endpoint: {e!r}")
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def read_head(self, conn):
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(4096)
            if not chunk:
                raise ValueError("connection closed before the request head")
            buf += chunk
        head, rest = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers.setdefault(k.strip().lower(), []).append(v.strip())
        return method, target, headers, rest

    def serve(self, conn):
        method, target, headers, rest = self.read_head(conn)
        url = urllib.parse.urlsplit(target)
        q = urllib.parse.parse_qs(url.query)
        peer = conn.getpeercert() or {}
        cn = next((v for rdn in peer.get("subject", ()) for k, v in rdn if k == "commonName"), None)
        entry = {"time": time.time(), "method": method, "path": url.path, "query": q, "client_cn": cn,
                 "headers": {k: v for k, v in headers.items() if k != "authorization"}}
        parts = url.path.strip("/").split("/")
        if len(parts) != 4 or parts[0] != "exec":
            self.record({**entry, "answer": 404})
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        _, ns, pod, container = parts
        argv = q.get("command", [])
        upgrade = ",".join(headers.get("upgrade", [])).lower()
        if upgrade == "websocket":
            offered = [p.strip() for h in headers.get("sec-websocket-protocol", []) for p in h.split(",")]
            proto = next((p for p in WS_PROTOCOLS if p in offered), None)
            self.record({**entry, "answer": "websocket", "protocol": proto})
            if proto is None:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            key = headers["sec-websocket-key"][0]
            accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
            conn.sendall((f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {proto}\r\n\r\n").encode())
            code, out, err = self.run_in_pod(ns, pod, container, argv)
            for ch, data in ((1, out), (2, err), (3, json.dumps(exit_status(code, argv)).encode())):
                if data:
                    conn.sendall(ws_frame(0x2, bytes([ch]) + data))
            conn.sendall(ws_frame(0x8, struct.pack("!H", 1000)))
            self.record({"time": time.time(), "path": url.path, "exit": code, "stdout_bytes": len(out),
                         "stderr_bytes": len(err)})
            drain(conn)
        elif upgrade.startswith("spdy/"):
            offered = [p.strip() for h in headers.get("x-stream-protocol-version", []) for p in h.split(",")]
            proto = next((p for p in WS_PROTOCOLS if p in offered), None)
            self.record({**entry, "answer": "spdy", "protocol": proto})
            import spdy  # noqa: E402  (only 1.30+ API servers speak it to a node)
            want = {"error"} | {"stdout" for _ in q.get("output", [])} | {"stderr" for _ in q.get("error", [])}
            code, n_out, n_err = spdy.serve_exec(conn, rest, proto, want, lambda: self.run_in_pod(ns, pod, container, argv),
                                                 lambda c: json.dumps(exit_status(c, argv)).encode(), self.log)
            self.record({"time": time.time(), "path": url.path, "exit": code, "stdout_bytes": n_out,
                         "stderr_bytes": n_err})
        else:
            self.record({**entry, "answer": 400})
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def run_in_pod(self, ns, pod, container, argv):
        """(exit code, stdout, stderr) of argv in the pod's place on this node."""
        p = H.Kube().get(H.p_core(ns, "pods", pod))
        app = (p["metadata"].get("labels") or {}).get("app", "")
        role = "operator" if app == "rook-ceph-operator" else "toolbox"
        if not argv:
            return 1, b"", b"no command\n"
        cmd = ["ip", "netns", "exec", self.netns, H.SYSPY, os.path.join(H.HERE, "agent.py"), "--run", self.run,
               "pod-exec", "--role", role, "--cluster-ns", ns, "--", *argv]
        self.log(f"exec in {ns}/{pod}/{container} ({role}): {argv}")
        try:
            r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=EXEC_TIMEOUT)
        except subprocess.TimeoutExpired as e:
            return 124, e.stdout or b"", (e.stderr or b"") + b"\nkilled after the exec timeout\n"
        return r.returncode, r.stdout, r.stderr


def ws_frame(opcode, payload):
    """One unmasked server frame (RFC 6455), FIN set."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + payload


def drain(conn):
    """Reads what the peer still sends (its close frame) until it closes or goes quiet."""
    conn.settimeout(5)
    try:
        while conn.recv(4096):
            pass
    except (OSError, ssl.SSLError):
        pass


def pod_exec(role, cluster_ns, argv):
    """Inside `ip netns exec NODE-NS` (a mount namespace of its own, slave to the host's): the pod's
    Ceph files where the pod has them, then exec argv. Toolbox: /etc/ceph/ceph.conf (+ keyring) as
    Rook's toolbox writes them; operator: /var/lib/rook/<ns>/<ns>.config and client.admin.keyring."""
    conf = open(H.CEPH_CONF).read()
    admin_key = next(line.split("=", 1)[1].strip() for line in conf.splitlines()
                     if line.strip().startswith("keyring") and "client.admin" in line)
    if role == "toolbox":
        top, d, conf_name, key_name = "/etc/ceph", "/etc/ceph", "ceph.conf", "keyring"
    else:
        top, d = "/var/lib/rook", f"/var/lib/rook/{cluster_ns}"
        conf_name, key_name = f"{cluster_ns}.config", "client.admin.keyring"
    os.makedirs(top, exist_ok=True)  # an empty directory on the host; the tmpfs over it is this process's
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755,size=1m", "tmpfs", top], check=True)
    os.makedirs(d, exist_ok=True)
    keyring = os.path.join(d, key_name)
    with open(keyring, "w") as f:
        f.write(open(admin_key).read())
    with open(os.path.join(d, conf_name), "w") as f:
        f.write(conf.replace(admin_key, keyring))
    env = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_ARGS")}
    os.execvpe(argv[0], argv, env)
