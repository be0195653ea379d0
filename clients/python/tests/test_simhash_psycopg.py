#!/usr/bin/python3
"""Tests of simhash_psycopg against a running server (libpq's PG* variables).

Run by test/clients.sh with the package installed into a fresh venv (Debian's
python3-venv, with Debian's python3-psycopg visible); imports the installed
copy, never the source tree.  Makes and drops its own databases.
"""
import os
import unittest

import psycopg
from psycopg import sql

import simhash_psycopg
from simhash_psycopg import Simhash64

MAX = (1 << 64) - 1
VALUES = {"0000000000000000": 0, "0000000000000001": 1, "8000000000000000": 1 << 63,
          "ffffffffffffffff": MAX, "0123456789abcdef": 0x0123456789ABCDEF}


def make_db(name, schema=None):
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    conn = psycopg.connect(dbname=name, autocommit=True)
    if schema is not None:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("CREATE EXTENSION simhash SCHEMA {}").format(sql.Identifier(schema)))
    return conn


def drop_db(conn):
    name = conn.info.dbname
    conn.close()
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(name)))


class Adapters(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.conn = make_db("simhash_py", schema="public")

    @classmethod
    def tearDownClass(cls):
        drop_db(cls.conn)

    def setUp(self):
        # every test starts from an unregistered connection
        self.conn.close()
        type(self).conn = psycopg.connect(dbname="simhash_py", autocommit=True)

    def test_unregistered_reads_strings(self):
        # what the adapters fix: psycopg does not know the extension's OIDs
        h, d = self.conn.execute(
            "SELECT 'ffffffffffffffff'::simhash64, "
            "'ffffffffffffffff'::simhash64 <~> '0000000000000000'::simhash64").fetchone()
        self.assertEqual((h, d), ("ffffffffffffffff", "64"))

    def test_load_text_and_binary(self):
        simhash_psycopg.register(self.conn)
        for binary in (False, True):
            with self.conn.cursor(binary=binary) as cur:
                for text, value in VALUES.items():
                    h, d = cur.execute(
                        "SELECT %t::simhash64, %t::simhash64 <~> '0000000000000000'",
                        [text, text]).fetchone()
                    self.assertIsInstance(h, Simhash64)
                    self.assertEqual(int(h), value, (binary, text))
                    self.assertEqual(str(h), text)
                    self.assertIs(type(d), int)
                    self.assertEqual(d, bin(value).count("1"))

    def test_dump_text_and_binary(self):
        simhash_psycopg.register(self.conn)
        for placeholder in ("%t", "%b", "%s"):
            for text, value in VALUES.items():
                typ, out, back = self.conn.execute(
                    f"SELECT pg_typeof({placeholder})::text, {placeholder}::text, {placeholder}",
                    [Simhash64(value)] * 3).fetchone()
                self.assertEqual((typ, out), ("simhash64", text), placeholder)
                self.assertEqual(back, value)

    def test_round_trip_through_a_table(self):
        simhash_psycopg.register(self.conn)
        self.conn.execute("CREATE TEMP TABLE t (id int, h simhash64)")
        with self.conn.cursor() as cur:
            cur.executemany("INSERT INTO t VALUES (%s, %s)",
                            [(i, Simhash64(v)) for i, v in enumerate(VALUES.values())])
        rows = self.conn.execute("SELECT h FROM t ORDER BY id").fetchall()
        self.assertEqual([r[0] for r in rows], list(VALUES.values()))
        # values read are written back as simhash64 and compare equal in SQL
        n = self.conn.execute("SELECT count(*) FROM t WHERE h = ANY(%s::simhash64[])",
                              [[r[0] for r in rows]]).fetchone()[0]
        self.assertEqual(n, len(VALUES))
        # the distance compares as an int in Python and in SQL
        d = self.conn.execute("SELECT min(h <~> %s) FROM t WHERE id > 0",
                              [Simhash64(0)]).fetchone()[0]
        self.assertEqual(d, 1)

    def test_plain_int_parameters(self):
        # psycopg sends an int as smallint, integer, bigint or numeric by its
        # size; %s::simhash64 takes each, numeric as the unsigned value
        simhash_psycopg.register(self.conn)
        for value in (5, 70000, 1 << 40, (1 << 63) - 1, 1 << 63, 13835505520976881745, MAX):
            h, d = self.conn.execute(
                "SELECT %s::simhash64, %s::simhash64 <~> '0000000000000000'",
                [value, value]).fetchone()
            self.assertEqual((h, d), (value, bin(value).count("1")), value)
        self.conn.execute("CREATE TEMP TABLE ints (h simhash64)")
        self.conn.execute("INSERT INTO ints VALUES (%s::simhash64)", [13835505520976881745])
        self.assertEqual(self.conn.execute(
            "SELECT count(*) FROM ints WHERE h <~> %s::simhash64 <= 0",
            [13835505520976881745]).fetchone()[0], 1)
        with self.assertRaises(psycopg.errors.NumericValueOutOfRange):
            self.conn.execute("SELECT %s::simhash64", [1 << 64])

    def test_installed_copy(self):
        # the tests import the installed package, typed, versioned with the extension
        here = os.path.dirname(os.path.abspath(__file__))
        pkg = os.path.dirname(simhash_psycopg.__file__)
        self.assertFalse(pkg.startswith(os.path.dirname(here)), pkg)
        self.assertTrue(os.path.exists(os.path.join(pkg, "py.typed")))
        from importlib.metadata import version
        self.assertEqual(version("simhash-psycopg"), simhash_psycopg.__version__)
        ext = self.conn.execute("SELECT default_version FROM pg_available_extensions "
                                "WHERE name = 'simhash'").fetchone()[0]
        self.assertEqual(simhash_psycopg.__version__.rsplit(".", 1)[0], ext)

    def test_simhash64_arrays_load(self):
        simhash_psycopg.register(self.conn)
        for binary in (False, True):
            with self.conn.cursor(binary=binary) as cur:
                a = cur.execute("SELECT ARRAY['ffffffffffffffff', NULL, '0000000000000002']"
                                "::simhash64[]").fetchone()[0]
                self.assertEqual(a, [MAX, None, 2], binary)
                self.assertIsInstance(a[0], Simhash64)

    def test_null(self):
        simhash_psycopg.register(self.conn)
        self.assertEqual(self.conn.execute(
            "SELECT NULL::simhash64, NULL::simhash64 <~> NULL::simhash64").fetchone(),
            (None, None))

    def test_value_checks(self):
        self.assertEqual(Simhash64("0xFFFFFFFFFFFFFFFF"), MAX)
        self.assertEqual(repr(Simhash64(255)), "Simhash64('00000000000000ff')")
        for bad in (-1, 1 << 64, "fff", "0x123"):
            with self.assertRaises(ValueError):
                Simhash64(bad)


class Schemas(unittest.TestCase):
    def test_extension_in_its_own_schema(self):
        # OIDs come from the extension's schema, on the search_path or not
        conn = make_db("simhash_py_schema", schema="sim hash")
        try:
            h_oid, d_oid = simhash_psycopg.register(conn)
            self.assertEqual(conn.execute(
                "SELECT %s::regtype::text, %s::regtype::text", [h_oid, d_oid]).fetchone(),
                ('"sim hash".simhash64', '"sim hash".simhash_distance'))
            h, d = conn.execute(
                'SELECT \'00000000000000ff\'::"sim hash".simhash64, '
                '\'00000000000000ff\'::"sim hash".simhash64 '
                'OPERATOR("sim hash".<~>) \'0000000000000000\'').fetchone()
            self.assertEqual((h, d), (255, 8))
            self.assertIs(type(d), int)
        finally:
            drop_db(conn)

    def test_not_installed(self):
        conn = make_db("simhash_py_none")
        try:
            with self.assertRaisesRegex(LookupError, "CREATE EXTENSION simhash"):
                simhash_psycopg.register(conn)
        finally:
            drop_db(conn)


if __name__ == "__main__":
    unittest.main(verbosity=2)
