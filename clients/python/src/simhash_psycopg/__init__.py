"""simhash_psycopg: psycopg 3 adapters for the simhash extension's types.

The extension's types get their OIDs when ``CREATE EXTENSION simhash`` runs, so
a driver cannot know them in advance: without adapters psycopg returns
``simhash64`` and the ``<~>`` result type ``simhash_distance`` as strings.
``register(conn)`` looks the OIDs up in the connected database (in the schema
the extension was created in) and registers, on that connection only:

- ``simhash64`` -> :class:`Simhash64`, an ``int`` subclass holding the unsigned
  64-bit value (0 .. 2**64-1), loaded from the text form (16 hex digits) and
  from the binary form (8 bytes, network order);
- ``Simhash64`` -> ``simhash64`` when passed as a query parameter (text and
  binary), so a value read can be written back, and ``Simhash64(n)`` writes
  any Python int in range;
- ``simhash_distance`` -> ``int`` (text and binary);
- ``simhash64[]`` <-> lists of them.

A plain Python int keeps psycopg's usual dumping (``smallint``, ``integer``,
``bigint`` or ``numeric`` by its size), which no simhash operator takes: write
the placeholder as ``%s::simhash64`` (every integer type casts to simhash64,
numeric as the unsigned value) or wrap the value in ``Simhash64``.

    import psycopg, simhash_psycopg
    with psycopg.connect() as conn:
        simhash_psycopg.register(conn)
        h = conn.execute("SELECT simhash('hello world')").fetchone()[0]
        conn.execute("SELECT %s <~> simhash('hello there')", [h]).fetchone()[0]  # an int
        conn.execute("SELECT %s::simhash64", [13835505520976881745]).fetchone()[0]
"""

from __future__ import annotations

import struct
from typing import Any, Tuple, Union

import psycopg
from psycopg.abc import Buffer
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo
from psycopg.types.array import register_array

__all__ = ["Simhash64", "register", "lookup_oids", "__version__"]

__version__ = "1.1.0"

_U64 = struct.Struct("!Q")
_I32 = struct.Struct("!i")


class Simhash64(int):
    """A simhash64 fingerprint: an int in 0 .. 2**64-1, printed as 16 hex digits."""

    def __new__(cls, value: Union[int, str, bytes]) -> "Simhash64":
        if isinstance(value, (bytes, str)):
            text = value.decode() if isinstance(value, bytes) else value
            text = text.strip()
            if text[:2] in ("0x", "0X"):
                text = text[2:]
            if len(text) != 16:
                raise ValueError(f"a simhash64 is 16 hexadecimal digits: {value!r}")
            value = int(text, 16)
        value = int(value)
        if not 0 <= value < 1 << 64:
            raise ValueError(f"a simhash64 is an unsigned 64-bit value: {value}")
        return super().__new__(cls, value)

    def __str__(self) -> str:
        return format(int(self), "016x")

    def __repr__(self) -> str:
        return f"Simhash64('{self}')"


class _Simhash64TextLoader(Loader):
    format = Format.TEXT

    def load(self, data: Buffer) -> Simhash64:
        return Simhash64(int(bytes(data), 16))


class _Simhash64BinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data: Buffer) -> Simhash64:
        return Simhash64(_U64.unpack(data)[0])


class _DistanceTextLoader(Loader):
    format = Format.TEXT

    def load(self, data: Buffer) -> int:
        return int(bytes(data))


class _DistanceBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data: Buffer) -> int:
        return int(_I32.unpack(data)[0])


class _Simhash64TextDumper(Dumper):
    format = Format.TEXT

    def dump(self, obj: Any) -> bytes:
        return format(int(obj), "016x").encode()


class _Simhash64BinaryDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        return _U64.pack(int(obj))


# the types in the schema the extension was created in, found by name there
_LOOKUP = """
SELECT h.oid, h.typarray, d.oid
FROM pg_extension e
JOIN pg_namespace n ON n.oid = e.extnamespace
JOIN pg_type h ON h.oid = to_regtype(format('%I.simhash64', n.nspname))
JOIN pg_type d ON d.oid = to_regtype(format('%I.simhash_distance', n.nspname))
WHERE e.extname = 'simhash'
"""


def _lookup(conn: psycopg.Connection[Any]) -> Tuple[int, int, int]:
    row = conn.execute(_LOOKUP).fetchone()
    if row is None:
        raise LookupError("the simhash extension is not installed in this database "
                          "(CREATE EXTENSION simhash)")
    return int(row[0]), int(row[1]), int(row[2])


def lookup_oids(conn: psycopg.Connection[Any]) -> Tuple[int, int]:
    """(simhash64 OID, simhash_distance OID) in conn's database; LookupError if absent."""
    h_oid, _, d_oid = _lookup(conn)
    return h_oid, d_oid


def register(conn: psycopg.Connection[Any]) -> Tuple[int, int]:
    """Register the simhash adapters on conn (a psycopg.Connection); returns the OIDs."""
    h_oid, h_array_oid, d_oid = _lookup(conn)
    adapters = conn.adapters
    adapters.register_loader(h_oid, _Simhash64TextLoader)
    adapters.register_loader(h_oid, _Simhash64BinaryLoader)
    adapters.register_loader(d_oid, _DistanceTextLoader)
    adapters.register_loader(d_oid, _DistanceBinaryLoader)
    # dumpers carry the OID, which differs between databases: one class each
    for base in (_Simhash64TextDumper, _Simhash64BinaryDumper):
        adapters.register_dumper(Simhash64, type(base.__name__, (base,), {"oid": h_oid}))
    info = TypeInfo("simhash64", h_oid, h_array_oid)
    info.register(conn)
    register_array(info, conn)
    return h_oid, d_oid
