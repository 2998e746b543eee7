"""Time and peak memory of `wavesh run` when a command prints an image bomb (PROC-4).

Usage: python3 bench/image-bomb.py target/release/wavesh

Cases, each printed as one `data:image/png;base64,...` URL by the command:
  - bomb: a real 40000x40000 PNG (1-bit grey, all black) that compresses to a few MB
    and would decode to 1.6 GB;
  - header: a tiny PNG whose header claims 40000x40000;
  - photo: a real 4000x3000 image, which must still come back as a scaled image.
Prints, per case, the wall time, the peak resident set of the wavesh process
(getrusage of the child) and whether the model got an image or text.
"""
import base64
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib

wavesh = os.path.abspath(sys.argv[1])


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png(width, height, depth, colour, rows):
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def bomb():
    row = b"\x00" + b"\x00" * (40000 // 8)
    z = zlib.compressobj(9)
    parts = [z.compress(row) for _ in range(40000)]
    parts.append(z.flush())
    return png(40000, 40000, 1, 0, b"".join(parts))


def header():
    return png(40000, 40000, 8, 2, zlib.compress(b""))


def photo():
    rows = bytearray()
    for y in range(3000):
        rows += b"\x00" + bytes((x * 7 + y) % 251 for x in range(4000 * 3))
    return png(4000, 3000, 8, 2, zlib.compress(bytes(rows), 6))


def run(name, data):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "image.url")
        with open(path, "w") as out:
            out.write("data:image/png;base64," + base64.b64encode(data).decode())
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.monotonic()
        done = subprocess.run(
            [wavesh, "run", "--json", "--", f"cat {path}"],
            capture_output=True,
            cwd=tmp,
        )
        elapsed = time.monotonic() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        result = json.loads(done.stdout)
        kind = "text" if "data:image" in result["text"] else "image"
        note = "" if peak > before else " (peak no higher than an earlier case's)"
        print(
            f"{name:7} {len(data) / 1e6:7.2f} MB png  {elapsed:6.2f} s  "
            f"peak RSS {peak / 1024:7.1f} MiB{note}  -> {kind}"
        )


for name, make in [("header", header), ("bomb", bomb), ("photo", photo)]:
    run(name, make())
