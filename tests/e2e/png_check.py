#!/usr/bin/env python3
"""Checks that a PNG is a real picture: png_check.py FILE WIDTH HEIGHT [MIN_COLOURS].

Parses the chunks (signature, IHDR, IDAT, IEND, each CRC checked), asserts
the IHDR size, inflates the image data with zlib, undoes the scanline filters
and counts distinct pixel values, top row first, stopping once MIN_COLOURS
(default 16) are seen: a blank page (one colour) or a picture of nothing
fails. Exit 0 and one line of figures on success, 1 with the reason
otherwise. 8-bit greyscale, RGB, grey+alpha and RGBA (what Chromium writes).
"""
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def fail(message):
    print("png_check: " + message, file=sys.stderr)
    sys.exit(1)


def chunks(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("not a PNG (bad signature)")
    pos = 8
    while pos < len(data):
        if pos + 12 > len(data):
            fail("truncated chunk")
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            fail("bad CRC in chunk %r" % kind)
        yield kind, body
        pos += 12 + length


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(kind, row, prior, bpp):
    out = bytearray(row)
    if kind == 0:
        return out
    n = len(out)
    if kind == 1:
        for i in range(bpp, n):
            out[i] = (out[i] + out[i - bpp]) & 0xFF
    elif kind == 2:
        for i in range(n):
            out[i] = (out[i] + prior[i]) & 0xFF
    elif kind == 3:
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + ((left + prior[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            up_left = prior[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + paeth(left, prior[i], up_left)) & 0xFF
    else:
        fail("unknown filter type %d" % kind)
    return out


def main():
    if len(sys.argv) not in (4, 5):
        fail("usage: png_check.py FILE WIDTH HEIGHT [MIN_COLOURS]")
    path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    min_colours = int(sys.argv[4]) if len(sys.argv) == 5 else 16
    with open(path, "rb") as f:
        data = f.read()
    header, idat, ended = None, [], False
    for kind, body in chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            ended = True
    if header is None or not idat or not ended:
        fail("missing IHDR, IDAT or IEND")
    width, height, depth, colour, _, _, interlace = header
    if (width, height) != (want_w, want_h):
        fail("size %dx%d, expected %dx%d" % (width, height, want_w, want_h))
    if depth != 8 or colour not in CHANNELS or interlace != 0:
        fail("unsupported format: depth %d colour type %d interlace %d" % (depth, colour, interlace))
    bpp = CHANNELS[colour]
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    if len(raw) != height * (stride + 1):
        fail("image data is %d bytes, expected %d" % (len(raw), height * (stride + 1)))
    colours = set()
    prior = bytearray(stride)
    rows = 0
    for y in range(height):
        start = y * (stride + 1)
        row = unfilter(raw[start], raw[start + 1:start + 1 + stride], prior, bpp)
        rows += 1
        for x in range(0, stride, bpp):
            colours.add(bytes(row[x:x + bpp]))
        if len(colours) >= min_colours:
            break
        prior = row
    if len(colours) < min_colours:
        fail("only %d distinct colours in the whole image (blank?)" % len(colours))
    print("png_check: %s %dx%d, %d bytes, %d+ colours within the first %d rows"
          % (path, width, height, len(data), len(colours), rows))


if __name__ == "__main__":
    main()
