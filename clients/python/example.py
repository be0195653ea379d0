#!/usr/bin/python3
"""example.py: near duplicates with psycopg 3 and the simhash adapters.

    /usr/bin/python3 clients/python/example.py ["conninfo"]

Connects with libpq's defaults (PGHOST, PGDATABASE, ...) or the conninfo
given, needs the simhash extension installed in that database, and works in a
temporary table.  Debian: apt-get install python3-psycopg.
"""
import sys

import psycopg

import simhash_psycopg

STORY = ("PostgreSQL is a powerful open source object-relational database system "
         "with over thirty years of active development that has earned it a strong "
         "reputation for reliability, feature robustness and performance. ")
DOCS = [
    STORY * 2,
    STORY * 2 + "Reposted with permission.",
    "A completely different sentence about foxes, dogs and their quarrels.",
]

with psycopg.connect(sys.argv[1] if len(sys.argv) > 1 else "") as conn:
    simhash_psycopg.register(conn)
    conn.execute("CREATE TEMP TABLE docs (id int PRIMARY KEY, body text, h simhash64)")
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO docs VALUES (%s, %s, simhash(%s))",
                        [(i, d, d) for i, d in enumerate(DOCS)])
    query = simhash_psycopg.Simhash64(
        conn.execute("SELECT h FROM docs WHERE id = 0").fetchone()[0])
    print(f"fingerprint of doc 0: {query} ({int(query)})")
    for doc_id, h, dist in conn.execute(
            "SELECT id, h, h <~> %s FROM docs ORDER BY h <~> %s, id", [query, query]):
        # h is a Simhash64 (an int), dist a plain int
        print(f"doc {doc_id}: {h}  distance {dist}{'  near duplicate' if dist <= 3 else ''}")
