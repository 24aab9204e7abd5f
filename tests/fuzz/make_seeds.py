#!/usr/bin/env python3
"""Writes the hand-made seeds of the log fuzzer corpus (tests/fuzz/corpus).

    make_seeds.py OUTDIR [RECORDED.log ...]

Every RECORDED log (made with `detrun record`, ideally under `env -i` so no environment
leaks into the corpus) is copied as rec-NAME, and damaged copies of it are made: cut at
every interesting offset, bit-flipped with and without a recomputed checksum. Synthetic
logs cover each record kind and each rule of recorder/log.c (record_well_formed, block
framing, format version, records after the end). No dependency beyond the standard library.
"""
import os
import struct
import sys
import zlib

MAGIC = b"DETRUNLG"


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def zigzag(v):
    return (v << 1) ^ (v >> 63)


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(num << 3 | 2) + varint(len(b)) + b


def field_fixed32(num, v):
    return varint(num << 3 | 5) + struct.pack("<I", v & 0xFFFFFFFF)


def field_fixed64(num, v):
    return varint(num << 3 | 1) + struct.pack("<Q", v & (2**64 - 1))


def header(version=1, argv=("prog",), program="/bin/prog", env=(), cwd="/", outside=(),
           extra=b""):
    h = field_varint(1, version) + field_bytes(2, "0.2.0")
    for a in argv:
        h += field_bytes(3, a)
    h += field_bytes(4, program) + field_varint(5, 0x1234) + field_varint(6, 4096)
    for e in env:
        h += field_bytes(7, e)
    h += field_bytes(8, cwd) + field_varint(9, 0) + field_varint(10, 1893456000)
    h += field_varint(11, 1) + field_varint(12, 1) + field_varint(13, 1)
    if outside:
        h += field_bytes(15, b"".join(varint(fd) for fd in outside))
    h += field_varint(16, 10) + extra
    return record(0, 0, 3, h)


def record(dt, task, kind, body):
    r = b""
    if dt:
        r += field_varint(1, dt)
    if task:
        r += field_varint(2, task)
    return r + field_bytes(kind, body)


def result(dt, task, nr, ret, outs=(), digest=0):
    b = field_varint(1, nr) + field_varint(2, zigzag(ret))
    for o in outs:
        b += field_bytes(3, o)
    if digest:
        b += field_fixed32(4, digest)
    return record(dt, task, 4, b)


def ready(dt, task):
    return record(dt, task, 5, b"")


def advance(dt, ns):
    return record(dt, 0, 6, field_varint(1, ns))


def signal(dt, signo):
    return record(dt, 0, 7, field_varint(1, signo))


def fileread(dt, task, path, size=100, h=7):
    return record(dt, task, 8, field_bytes(1, path) + field_varint(2, size) + field_varint(3, h))


def digest(dt, value):
    return record(dt, 0, 9, field_fixed64(1, value))


def end(dt, code=0, events=100):
    return record(dt, 0, 10, field_varint(1, code & 0xFFFFFFFFFFFFFFFF) + field_varint(2, events))


def payload(*records):
    return b"".join(varint(len(r)) + r for r in records)


def block(p, crc=None, length=None):
    return struct.pack("<II", len(p) if length is None else length,
                       zlib.crc32(p) if crc is None else crc) + p


def log(*blocks):
    return MAGIC + b"".join(blocks)


def blocks_of(data):
    """(offset, length) of each intact block."""
    out, off = [], 8
    while off + 8 <= len(data):
        n = struct.unpack_from("<I", data, off)[0]
        if n == 0 or off + 8 + n > len(data):
            break
        out.append((off, n))
        off += 8 + n
    return out


def fix_crcs(data):
    data = bytearray(data)
    for off, n in blocks_of(data):
        struct.pack_into("<I", data, off + 4, zlib.crc32(bytes(data[off + 8:off + 8 + n])))
    return bytes(data)


def synthetic():
    H = header()
    seeds = {
        "empty": b"",
        "magic-only": MAGIC,
        "magic-cut": MAGIC[:5],
        "wrong-magic": b"DETRUNLX" + block(payload(H)),
        "header-only": log(block(payload(H))),
        "every-kind": log(block(payload(H)), block(payload(
            fileread(46, 1, "/etc/ld.so.cache"), result(2, 1, 0, 5, [b"hello"], 0),
            ready(1, 1), result(0, 1, 45, 26, [b"SET k v\n", b"\x02\x00\x1f\x90"], 0xdeadbeef),
            result(1, 2, 44, 3, [], 0x811c9dc5), advance(3, 5_000_000_000), signal(0, 15),
            digest(900, 0x0123456789abcdef), end(4, 3, 1024)))),
        "every-kind-one-block": log(block(payload(
            H, fileread(46, 1, "/lib/libc.so.6"), result(2, 1, 0, -11), ready(1, 1),
            advance(3, 1), signal(0, 64), digest(1, 1), end(1)))),
        "negative-exit": log(block(payload(H, end(1, -1, 0)))),
        "no-end": log(block(payload(H)), block(payload(result(60, 1, 0, 0, [b""])))),
        "header-with-env-fds": log(block(payload(header(
            argv=("sh", "-c", "echo hi"), env=("PATH=/usr/bin", "HOME=/tmp", "LANG=C"),
            outside=(0, 1, 2, 7))))),
        "header-unknown-field": log(block(payload(header(extra=field_varint(99, 5))))),
        "header-real-clock": log(block(payload(header(extra=field_varint(17, 1)),
                                               advance(5, 10**9), end(1)))),
        "wrong-version-0": log(block(payload(header(version=0)))),
        "wrong-version-2": log(block(payload(header(version=2)))),
        "header-no-argv": log(block(payload(header(argv=())))),
        "header-empty-program": log(block(payload(header(program="")))),
        "header-not-first": log(block(payload(ready(1, 1), H))),
        "two-headers": log(block(payload(H, H))),
        "records-after-end": log(block(payload(H, end(1), ready(1, 1)))),
        "end-then-block": log(block(payload(H, end(1))), block(payload(digest(1, 1)))),
        "result-task-0": log(block(payload(H, result(1, 0, 0, 1)))),
        "result-nr-1023": log(block(payload(H, result(1, 1, 1023, 1)))),
        "result-nr-1024": log(block(payload(H, result(1, 1, 1024, 1)))),
        "ready-task-0": log(block(payload(H, ready(1, 0)))),
        "file-task-0": log(block(payload(H, fileread(1, 0, "/x")))),
        "signal-0": log(block(payload(H, signal(1, 0)))),
        "signal-65": log(block(payload(H, signal(1, 65)))),
        "signal-negative": log(block(payload(H, signal(1, -9)))),
        "empty-record": log(block(payload(H, b""))),
        "unknown-kind": log(block(payload(H, record(1, 1, 11, b"")))),
        "two-kinds-one-record": log(block(payload(H, ready(1, 1) + field_bytes(9, b"")))),
        "kind-twice": log(block(payload(H, result(1, 1, 0, 1, [b"a"]) +
                                       field_bytes(4, field_varint(1, 1) +
                                                   field_bytes(3, b"bb"))))),
        "result-then-ready-same-record": log(block(payload(
            H, result(1, 1, 0, 1, [b"abc"]) + field_bytes(5, b"")))),
        "dt-wraps": log(block(payload(H, ready(2**64 - 1, 1), ready(5, 1), end(1)))),
        "bad-wire-type": log(block(payload(H, bytes([0x0b, 0x01])))),
        "truncated-submessage": log(block(payload(H, bytes([0x22, 0x05, 0x08])))),
        "varint-overlong": log(block(payload(H) + b"\x80" * 10 + b"\x01")),
        "varint-cut": log(block(payload(H) + b"\xff\xff")),
        "record-past-block": log(block(payload(H) + varint(50) + b"\x10\x01")),
        "block-len-0": log(block(b"", length=0)),
        "block-len-max-plus-1": log(block(payload(H), length=(1 << 20) + 1)),
        "block-len-past-file": log(block(payload(H), length=len(payload(H)) + 1)),
        "block-header-cut": log(block(payload(H)))[:-len(payload(H)) - 3],
        "bad-crc": log(block(payload(H), crc=0)),
        "bad-crc-second-block": log(block(payload(H)), block(payload(end(1)), crc=1)),
        "trailing-bytes": log(block(payload(H, end(1)))) + b"\x00\x00\x00",
        "many-small-records": log(block(payload(H)), block(payload(*[ready(1, 1)] * 300)),
                                  block(payload(*[advance(0, i) for i in range(200)]))),
        "big-output": log(block(payload(H, result(1, 1, 0, 4000, [bytes(range(256)) * 16])))),
        "many-outputs": log(block(payload(H, result(1, 1, 47, 64, [b"x" * i for i in range(40)])))),
        "zigzag-extremes": log(block(payload(H, result(1, 1, 0, -(2**63)),
                                             result(1, 1, 0, 2**63 - 1)))),
    }
    return seeds


def damaged(name, data):
    out = {}
    n = len(data)
    cuts = {1, 7, 8, 9, 12, 15, 16, n // 2, n - 1}
    for off, ln in blocks_of(data):
        cuts |= {off, off + 4, off + 8, off + 8 + ln // 2, off + 8 + ln}
    for c in sorted(cuts):
        if 0 < c < n:
            out[f"{name}-cut{c}"] = data[:c]
    blocks = blocks_of(data)
    # Bit flips: in the magic, a block length, a checksum, and in record bytes (with and
    # without the checksum recomputed, so the flip is seen past it).
    flips = [3]
    for off, ln in blocks[:3]:
        flips += [off, off + 2, off + 5, off + 8, off + 9, off + 8 + ln // 3,
                  off + 8 + ln - 1]
    for i, f in enumerate(flips):
        if f >= n:
            continue
        for bit in (0, 7):
            d = bytearray(data)
            d[f] ^= 1 << bit
            out[f"{name}-flip{f}.{bit}"] = bytes(d)
            if f >= 16:
                out[f"{name}-flip{f}.{bit}-crcfixed"] = fix_crcs(d)
    # Blocks swapped, the header block dropped, a block doubled.
    if len(blocks) >= 2:
        parts = [data[o:o + 8 + ln] for o, ln in blocks]
        out[f"{name}-blocks-swapped"] = MAGIC + parts[1] + parts[0] + b"".join(parts[2:])
        out[f"{name}-no-header-block"] = MAGIC + b"".join(parts[1:])
        out[f"{name}-block-doubled"] = MAGIC + parts[0] + parts[1] + b"".join(parts[1:])
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    seeds = {f"syn-{k}": v for k, v in synthetic().items()}
    for path in sys.argv[2:]:
        name = os.path.splitext(os.path.basename(path))[0]
        data = open(path, "rb").read()
        seeds[f"rec-{name}"] = data
        seeds.update(damaged(f"rec-{name}", data))
    seeds.update(damaged("syn-every-kind", seeds["syn-every-kind"]))
    for k, v in seeds.items():
        with open(os.path.join(outdir, k), "wb") as f:
            f.write(v)
    print(f"{len(seeds)} seeds in {outdir}")


if __name__ == "__main__":
    main()
