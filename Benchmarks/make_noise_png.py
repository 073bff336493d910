#!/usr/bin/env python3
"""Writes a valid PNG of random RGB noise (8-bit truecolor, no interlace) that does not compress.

Usage: make_noise_png.py OUT.png WIDTH HEIGHT [ZLIB_LEVEL]

The pixel rows are os.urandom bytes (filter type 0), deflated at ZLIB_LEVEL (default 0, stored
blocks), so the file is about WIDTH * HEIGHT * 3 bytes: 3200 x 3200 gives ~29.3 MiB, well under
the validator's 50-megapixel limit. IDAT is split into 1 MiB chunks. Prints the file's size.
"""
import os
import struct
import sys
import zlib


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def main() -> int:
    if len(sys.argv) not in (4, 5):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    level = int(sys.argv[4]) if len(sys.argv) == 5 else 0
    if width <= 0 or height <= 0 or width * height > 50_000_000:
        print("make_noise_png.py: size must be positive and at most 50 megapixels", file=sys.stderr)
        return 2
    row_bytes = width * 3
    compressor = zlib.compressobj(level)
    with open(out, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        pending = bytearray()

        def flush_idat(force: bool) -> None:
            nonlocal pending
            step = 1 << 20
            while len(pending) >= step or (force and pending):
                f.write(chunk(b"IDAT", bytes(pending[:step])))
                del pending[:step]

        rows_per_batch = max(1, (1 << 20) // (row_bytes + 1))
        for first in range(0, height, rows_per_batch):
            rows = min(rows_per_batch, height - first)
            raw = bytearray()
            for _ in range(rows):
                raw += b"\x00" + os.urandom(row_bytes)
            pending += compressor.compress(bytes(raw))
            flush_idat(False)
        pending += compressor.flush()
        flush_idat(True)
        f.write(chunk(b"IEND", b""))
    print(os.path.getsize(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
