#!/usr/bin/python3
"""A detrun shim that watches external calls or injects one fault into them.

    detrun --shim "fault_shim.py --log LOG" -- PROGRAM ...
    detrun --shim "fault_shim.py --log LOG --drop-read 3" --shim-mode control -- PROGRAM ...

Monitor mode: one log line per external call after it ran, then at the end
`calls=N bytes_in=M bytes_out=K`. Control mode: every call runs, except the N-th read-like
call on a socket, which fails with ECONNRESET as if the peer had reset the connection; the
log says what was done with each call, then `calls=N socket_reads=R dropped=D`.
The protocol is proto/shim.proto; shim_pb2.py is generated from it by the build.
Runs with any python3 that has the protobuf package (Debian: python3-protobuf).
"""
import argparse
import errno
import os
import socket
import struct
import sys

PROTOCOL_VERSION = 1
# Calls that bring the peer's bytes into the program: the ones a reset connection fails.
READS = {"read", "readv", "recvfrom", "recvmsg"}
# Calls whose Call.data are the bytes the program sent out.
WRITES = {"write", "writev", "sendto", "sendmsg"}
HEADER = struct.Struct("<I")
MESSAGE_MAX = 16 << 20  # detrun's own limit; anything bigger is a broken stream


class ProtocolError(Exception):
    pass


def fail(why):
    print(f"fault_shim: {why}", file=sys.stderr, flush=True)
    sys.exit(1)


def load_protocol(proto_dir):
    # The generated module lives in the build tree, not in an installed package.
    sys.path.insert(0, proto_dir)
    try:
        import shim_pb2
    except ImportError as e:
        fail(f"cannot load shim_pb2 from {proto_dir} ({e}); build target "
             "shim_proto_python, or pass --proto-dir")
    return shim_pb2


def receive_exactly(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def receive(sock, pb):
    """The next ShimMessage, or None if detrun closed the socket between messages."""
    head = receive_exactly(sock, HEADER.size)
    if not head:
        return None
    if len(head) < HEADER.size:
        raise ProtocolError("socket closed inside a message header")
    (length,) = HEADER.unpack(head)
    if length > MESSAGE_MAX:
        raise ProtocolError(f"message of {length} bytes announced (at most {MESSAGE_MAX})")
    body = receive_exactly(sock, length)
    if len(body) < length:
        raise ProtocolError(f"socket closed after {len(body)} of {length} message bytes")
    msg = pb.ShimMessage()
    try:
        msg.ParseFromString(body)
    except Exception as e:  # the DecodeError class moved between protobuf versions
        raise ProtocolError(f"undecodable message of {length} bytes: {e}")
    if msg.WhichOneof("kind") is None:
        raise ProtocolError("message without a kind")
    return msg


def send(sock, msg):
    body = msg.SerializeToString()
    sock.sendall(HEADER.pack(len(body)) + body)


def describe(call):
    return f"t={call.time} task {call.task} {call.syscall}(fd {call.fd})"


def result(ret):
    if ret < 0 and -ret in errno.errorcode:
        return f"-{errno.errorcode[-ret]}"
    return str(ret)


class Shim:
    def __init__(self, sock, pb, log, drop_read):
        self.sock, self.pb, self.log, self.drop_read = sock, pb, log, drop_read
        self.calls = self.bytes_in = self.bytes_out = self.socket_reads = self.dropped = 0

    def monitor(self, call):
        if not call.done:
            raise ProtocolError(f"{describe(call)}: a monitor-mode call that has not run")
        print(f"{describe(call)} = {result(call.ret)}", file=self.log)
        # Only the bytes of successful calls crossed the boundary.
        if call.ret > 0 and call.syscall in READS:
            self.bytes_in += len(call.data)
        elif call.ret > 0 and call.syscall in WRITES:
            self.bytes_out += len(call.data)

    def control(self, call):
        if call.done:
            raise ProtocolError(f"{describe(call)}: a control-mode call that already ran")
        verdict = self.pb.ShimMessage()
        verdict.verdict.run = True
        what = "run"
        # Descriptors 0-2 are the terminal or pipes the program inherited; the fault is
        # meant for its network peers.
        if call.syscall in READS and call.fd >= 3:
            self.socket_reads += 1
            if self.socket_reads == self.drop_read:
                # The call does not run: its bytes stay in the kernel, unread, as they
                # would when a reset arrives first.
                verdict.verdict.run = False
                verdict.verdict.ret = -errno.ECONNRESET
                self.dropped += 1
                what = f"dropped read #{self.socket_reads}, returns -ECONNRESET"
        print(f"{describe(call)}: {what}", file=self.log)
        send(self.sock, verdict)

    def serve(self):
        hello = receive(self.sock, self.pb)
        if hello is None or hello.WhichOneof("kind") != "hello":
            raise ProtocolError("the first message is not a Hello")
        h = hello.hello
        if h.protocol_version != PROTOCOL_VERSION:
            raise ProtocolError(f"protocol version {h.protocol_version}, "
                                f"this shim speaks {PROTOCOL_VERSION}")
        control = h.mode == self.pb.CONTROL
        if self.drop_read and not control:
            fail("--drop-read needs detrun --shim-mode control")
        print(f"hello: {'control' if control else 'monitor'} mode, program "
              f"{' '.join(h.argv)}", file=self.log)
        while True:
            msg = receive(self.sock, self.pb)
            if msg is None:
                raise ProtocolError("detrun closed the socket without a Bye")
            kind = msg.WhichOneof("kind")
            if kind == "bye":
                print(f"bye: exit code {msg.bye.exit_code}", file=self.log)
                if control:  # calls that have not run yet carry no bytes to count
                    print(f"calls={self.calls} socket_reads={self.socket_reads} "
                          f"dropped={self.dropped}", file=self.log)
                else:
                    print(f"calls={self.calls} bytes_in={self.bytes_in} "
                          f"bytes_out={self.bytes_out}", file=self.log)
                return
            if kind != "call":
                raise ProtocolError(f"unexpected {kind} message")
            self.calls += 1
            (self.control if control else self.monitor)(msg.call)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", help="where the log goes (default: stderr)")
    ap.add_argument("--drop-read", type=int, default=0, metavar="N",
                    help="control mode: fail the N-th read-like socket call with ECONNRESET")
    ap.add_argument("--proto-dir", default=os.environ.get(
        "DETRUN_PROTO_PY", os.path.join(here, "..", "build", "proto-python")),
                    help="directory of shim_pb2.py")
    args = ap.parse_args()
    if args.drop_read < 0:
        fail("--drop-read must not be negative")
    pb = load_protocol(args.proto_dir)
    try:
        fd = int(os.environ["DETRUN_SHIM_FD"])
        sock = socket.socket(fileno=fd)
    except (KeyError, ValueError, OSError) as e:
        fail(f"no detrun socket (DETRUN_SHIM_FD): {e}; run me as detrun --shim")
    # Line-buffered: the log stays readable even if detrun has to kill this process.
    log = open(args.log, "w", buffering=1) if args.log else sys.stderr
    try:
        Shim(sock, pb, log, args.drop_read).serve()
    except ProtocolError as e:
        if log is not sys.stderr:  # the log should say why it stops short
            print(f"protocol error: {e}", file=log)
        fail(f"protocol error: {e}")
    except OSError as e:
        fail(f"socket: {e}")
    finally:
        if log is not sys.stderr:
            log.close()


if __name__ == "__main__":
    main()
