"""SPDY/3.1 for the kubelet's exec endpoint (kubelet_exec.py): what a 1.30+ kube-apiserver speaks
to a node that does not declare `ExtendWebSocketsToKubelet` (it translates the client's
WebSocket v5 into client-go's SPDY executor, `remotecommand` protocol v4 over SPDY streams).

Frames (draft-mbelshe-httpbis-spdy-00, SPDY/3.1): control frames `1 | version 3 | type`, flags,
24-bit length; data frames `0 | stream id`, flags (0x01 FIN), 24-bit length. Header blocks are
zlib streams (one per direction per connection, sync-flushed) primed with SPDY/3's dictionary,
copied below from github.com/moby/spdystream v0.5.1 `spdy/dictionary.go` (1423 bytes). The
client opens one stream per channel (SYN_STREAM, header `streamtype`: error, stdout, stderr, ...);
the server answers each with SYN_REPLY, then writes the output as DATA and the `Status` JSON on
the error stream, and ends every stream with FIN. stdlib only.
"""
import base64
import struct
import zlib

DICT = base64.b64decode(
    "AAAAB29wdGlvbnMAAAAEaGVhZAAAAARwb3N0AAAAA3B1dAAAAAZkZWxldGUAAAAFdHJhY2UAAAAGYWNjZXB0AAAADmFjY2Vw"
    "dC1jaGFyc2V0AAAAD2FjY2VwdC1lbmNvZGluZwAAAA9hY2NlcHQtbGFuZ3VhZ2UAAAANYWNjZXB0LXJhbmdlcwAAAANhZ2UA"
    "AAAFYWxsb3cAAAANYXV0aG9yaXphdGlvbgAAAA1jYWNoZS1jb250cm9sAAAACmNvbm5lY3Rpb24AAAAMY29udGVudC1iYXNl"
    "AAAAEGNvbnRlbnQtZW5jb2RpbmcAAAAQY29udGVudC1sYW5ndWFnZQAAAA5jb250ZW50LWxlbmd0aAAAABBjb250ZW50LWxv"
    "Y2F0aW9uAAAAC2NvbnRlbnQtbWQ1AAAADWNvbnRlbnQtcmFuZ2UAAAAMY29udGVudC10eXBlAAAABGRhdGUAAAAEZXRhZwAA"
    "AAZleHBlY3QAAAAHZXhwaXJlcwAAAARmcm9tAAAABGhvc3QAAAAIaWYtbWF0Y2gAAAARaWYtbW9kaWZpZWQtc2luY2UAAAAN"
    "aWYtbm9uZS1tYXRjaAAAAAhpZi1yYW5nZQAAABNpZi11bm1vZGlmaWVkLXNpbmNlAAAADWxhc3QtbW9kaWZpZWQAAAAIbG9j"
    "YXRpb24AAAAMbWF4LWZvcndhcmRzAAAABnByYWdtYQAAABJwcm94eS1hdXRoZW50aWNhdGUAAAATcHJveHktYXV0aG9yaXph"
    "dGlvbgAAAAVyYW5nZQAAAAdyZWZlcmVyAAAAC3JldHJ5LWFmdGVyAAAABnNlcnZlcgAAAAJ0ZQAAAAd0cmFpbGVyAAAAEXRy"
    "YW5zZmVyLWVuY29kaW5nAAAAB3VwZ3JhZGUAAAAKdXNlci1hZ2VudAAAAAR2YXJ5AAAAA3ZpYQAAAAd3YXJuaW5nAAAAEHd3"
    "dy1hdXRoZW50aWNhdGUAAAAGbWV0aG9kAAAAA2dldAAAAAZzdGF0dXMAAAAGMjAwIE9LAAAAB3ZlcnNpb24AAAAISFRUUC8x"
    "LjEAAAADdXJsAAAABnB1YmxpYwAAAApzZXQtY29va2llAAAACmtlZXAtYWxpdmUAAAAGb3JpZ2luMTAwMTAxMjAxMjAyMjA1"
    "MjA2MzAwMzAyMzAzMzA0MzA1MzA2MzA3NDAyNDA1NDA2NDA3NDA4NDA5NDEwNDExNDEyNDEzNDE0NDE1NDE2NDE3NTAyNTA0"
    "NTA1MjAzIE5vbi1BdXRob3JpdGF0aXZlIEluZm9ybWF0aW9uMjA0IE5vIENvbnRlbnQzMDEgTW92ZWQgUGVybWFuZW50bHk0"
    "MDAgQmFkIFJlcXVlc3Q0MDEgVW5hdXRob3JpemVkNDAzIEZvcmJpZGRlbjQwNCBOb3QgRm91bmQ1MDAgSW50ZXJuYWwgU2Vy"
    "dmVyIEVycm9yNTAxIE5vdCBJbXBsZW1lbnRlZDUwMyBTZXJ2aWNlIFVuYXZhaWxhYmxlSmFuIEZlYiBNYXIgQXByIE1heSBK"
    "dW4gSnVsIEF1ZyBTZXB0IE9jdCBOb3YgRGVjIDAwOjAwOjAwIE1vbiwgVHVlLCBXZWQsIFRodSwgRnJpLCBTYXQsIFN1biwg"
    "R01UY2h1bmtlZCx0ZXh0L2h0bWwsaW1hZ2UvcG5nLGltYWdlL2pwZyxpbWFnZS9naWYsYXBwbGljYXRpb24veG1sLGFwcGxp"
    "Y2F0aW9uL3hodG1sK3htbCx0ZXh0L3BsYWluLHRleHQvamF2YXNjcmlwdCxwdWJsaWNwcml2YXRlbWF4LWFnZT1nemlwLGRl"
    "ZmxhdGUsc2RjaGNoYXJzZXQ9dXRmLThjaGFyc2V0PWlzby04ODU5LTEsdXRmLSwqLGVucT0wLg==")
assert len(DICT) == 1423

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FIN = 0x01


class Conn:
    def __init__(self, sock, rest):
        self.sock, self.buf = sock, rest
        self.inflate = zlib.decompressobj(zdict=DICT)
        self.deflate = zlib.compressobj(zdict=DICT)

    def read_exact(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_frame(self):
        """("control", type, flags, data) or ("data", stream id, flags, data)."""
        head = self.read_exact(8)
        first, = struct.unpack("!I", head[:4])
        flags, length = head[4], int.from_bytes(head[5:8], "big")
        data = self.read_exact(length)
        if first & 0x80000000:
            return "control", first & 0xFFFF, flags, data
        return "data", first & 0x7FFFFFFF, flags, data

    def headers_of(self, block):
        raw = self.inflate.decompress(block)
        n, = struct.unpack("!I", raw[:4])
        pos, out = 4, {}
        for _ in range(n):
            ln, = struct.unpack("!I", raw[pos:pos + 4])
            name = raw[pos + 4:pos + 4 + ln].decode()
            pos += 4 + ln
            lv, = struct.unpack("!I", raw[pos:pos + 4])
            out[name] = raw[pos + 4:pos + 4 + lv].decode()
            pos += 4 + lv
        return out

    def control(self, typ, flags, data):
        self.sock.sendall(struct.pack("!HHI", 0x8000 | 3, typ, (flags << 24) | len(data)) + data)

    def reply(self, stream_id):
        block = struct.pack("!I", 0)  # no headers
        comp = self.deflate.compress(block) + self.deflate.flush(zlib.Z_SYNC_FLUSH)
        self.control(SYN_REPLY, 0, struct.pack("!I", stream_id) + comp)

    def data(self, stream_id, payload, flags=0):
        for i in range(0, max(len(payload), 1), 1 << 14):
            chunk = payload[i:i + (1 << 14)]
            last = i + (1 << 14) >= len(payload)
            self.sock.sendall(struct.pack("!II", stream_id, ((flags if last else 0) << 24) | len(chunk)) + chunk)


def serve_exec(sock, rest, proto, want, run, status_json, log):
    """Answers the upgrade, waits for the client's streams, runs the command (`run()` ->
    (code, stdout, stderr)) and writes its output and `status_json(code)`. Returns (code, bytes
    of stdout, bytes of stderr). `want`: the stream types the request asked for (error, stdout,
    stderr)."""
    sock.sendall((f"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
                  f"X-Stream-Protocol-Version: {proto}\r\n\r\n").encode())
    c = Conn(sock, rest)
    streams = {}  # streamtype -> stream id
    while not want <= streams.keys():
        kind, typ, flags, data = c.read_frame()
        if kind != "control":
            continue
        if typ == SYN_STREAM:
            sid = struct.unpack("!I", data[:4])[0] & 0x7FFFFFFF
            h = c.headers_of(data[10:])
            streams[h.get("streamtype", "?")] = sid
            c.reply(sid)
        elif typ == PING:
            c.control(PING, 0, data)
        elif typ in (GOAWAY, RST_STREAM):
            raise EOFError(f"client sent control frame {typ} before the streams")
    log(f"spdy streams {streams}")
    code, out, err = run()
    if out and "stdout" in streams:
        c.data(streams["stdout"], out)
    if err and "stderr" in streams:
        c.data(streams["stderr"], err)
    c.data(streams["error"], status_json(code))
    for sid in streams.values():
        c.data(sid, b"", FIN)
    c.control(GOAWAY, 0, struct.pack("!II", 0, 0))
    return code, len(out), len(err)
