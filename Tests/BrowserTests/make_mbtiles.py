"""Writes a small synthetic MBTiles file: PNG tiles of a made-up street grid (beige blocks, white streets, a few
yellow avenues and green parks), drawn from world pixel coordinates so that streets continue across tiles.

Usage: make_mbtiles.py OUT.mbtiles [--bounds WEST,SOUTH,EAST,NORTH] [--zooms MIN-MAX]
Used by scripts/browser-test (the tracking page over tiles the broker serves) and scripts/api-contract.
Standard library only (sqlite3, zlib).
"""
import argparse
import math
import sqlite3
import struct
import zlib

BLOCK = (242, 239, 233)
STREET = (255, 255, 255)
CASING = (214, 206, 194)
AVENUE = (249, 210, 123)
PARK = (200, 230, 190)


def png(width, height, rows):
    """An 8-bit RGB PNG of `rows` (bytes of width*3 each)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + row for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


def kind(position, period):
    """What a world pixel coordinate is along one axis: a street, its casing, an avenue, or inside a block."""
    offset = position % period
    avenue = (position // period) % 6 == 0
    if offset < (6 if avenue else 4):
        return "avenue" if avenue else "street"
    if offset < (8 if avenue else 5):
        return "casing"
    return "block"


def tile(z, x, y):
    period = max(24, int(96 * 2 ** (z - 15)))
    columns = [kind(x * 256 + i, period) for i in range(256)]
    rows = []
    for j in range(256):
        gy = y * 256 + j
        row_kind = kind(gy, period)
        block_row = (gy // period)
        pixels = bytearray()
        for i, column_kind in enumerate(columns):
            if row_kind == "avenue" or column_kind == "avenue":
                colour = AVENUE
            elif row_kind == "street" or column_kind == "street":
                colour = STREET
            elif row_kind == "casing" or column_kind == "casing":
                colour = CASING
            elif (block_row * 7 + (x * 256 + i) // period * 3) % 11 == 0:
                colour = PARK
            else:
                colour = BLOCK
            pixels += bytes(colour)
        rows.append(bytes(pixels))
    return png(256, 256, rows)


def tile_range(west, south, east, north, z):
    n = 2 ** z
    def column(lon):
        return min(n - 1, max(0, int((lon + 180) / 360 * n)))
    def row(lat):
        phi = math.radians(lat)
        return min(n - 1, max(0, int((1 - math.log(math.tan(phi) + 1 / math.cos(phi)) / math.pi) / 2 * n)))
    return range(column(west), column(east) + 1), range(row(north), row(south) + 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--bounds", default="-58.44,-34.625,-58.36,-34.57")
    parser.add_argument("--zooms", default="12-16")
    options = parser.parse_args()
    west, south, east, north = (float(v) for v in options.bounds.split(","))
    low, high = (int(v) for v in options.zooms.split("-"))
    database = sqlite3.connect(options.out)
    database.execute("CREATE TABLE metadata (name TEXT, value TEXT)")
    database.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
    database.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
    metadata = {"name": "synthetic streets", "format": "png", "type": "baselayer", "version": "1",
                "bounds": options.bounds, "minzoom": str(low), "maxzoom": str(high)}
    database.executemany("INSERT INTO metadata VALUES (?, ?)", metadata.items())
    count = 0
    for z in range(low, high + 1):
        columns, rows = tile_range(west, south, east, north, z)
        for x in columns:
            for y in rows:
                # MBTiles counts rows from the south (TMS).
                database.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (z, x, 2 ** z - 1 - y, tile(z, x, y)))
                count += 1
    database.commit()
    database.close()
    print(f"wrote {count} tiles (zooms {low}-{high}) to {options.out}")


if __name__ == "__main__":
    main()
