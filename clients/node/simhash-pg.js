'use strict';
/*
 * simhash-pg: node-postgres (pg) type parsers for the simhash extension.
 *
 * The extension's types get their OIDs at CREATE EXTENSION time, so pg cannot
 * know them in advance and returns simhash64 and the <~> result type
 * simhash_distance as strings.  register(client) looks the OIDs up in the
 * connected database (in the schema the extension was created in) and sets,
 * on that client only (client.setTypeParser; another database may have other
 * OIDs):
 *   simhash64          -> BigInt, unsigned 64-bit (0n .. 2n**64n - 1n)
 *   simhash64[]        -> array of BigInt (null for NULL)
 *   simhash_distance   -> Number
 * pg sends a BigInt parameter in decimal, which is not simhash64's text form
 * (16 hex digits); toSimhash64(bigint) gives that form to pass a fingerprint
 * read back as a parameter, or the query says $1::numeric::simhash64 (the
 * unsigned value).  Entry points: this file (CommonJS) and simhash-pg.mjs
 * (ESM), types in simhash-pg.d.ts / .d.mts.  With a pg.Pool, register each
 * new client:
 *   pool.on('connect', (client) => register(client))  -- or await it per query
 * or pass the OIDs to pg.types.setTypeParser once if every database is the same.
 */

const LOOKUP = `
SELECT h.oid::int AS simhash64, h.typarray::int AS simhash64_array, d.oid::int AS distance
FROM pg_extension e
JOIN pg_namespace n ON n.oid = e.extnamespace
JOIN pg_type h ON h.oid = to_regtype(format('%I.simhash64', n.nspname))
JOIN pg_type d ON d.oid = to_regtype(format('%I.simhash_distance', n.nspname))
WHERE e.extname = 'simhash'`;

const MAX = (1n << 64n) - 1n;

/* '00000000000000ff' -> 255n */
function parseSimhash64(text) {
  return BigInt('0x' + text);
}

/* BigInt or Number in 0 .. 2**64-1 -> '00000000000000ff' */
function toSimhash64(value) {
  const v = BigInt(value);
  if (v < 0n || v > MAX) throw new RangeError(`a simhash64 is an unsigned 64-bit value: ${value}`);
  return v.toString(16).padStart(16, '0');
}

/* '{ffffffffffffffff,NULL,0000000000000002}' -> [2n**64n-1n, null, 2n]
 * (the text form of a one-dimensional simhash64[]; elements need no quoting) */
function parseSimhash64Array(text) {
  const body = text.replace(/^(\[[^\]]*\]=)?\{/, '').replace(/\}$/, '');
  if (body === '') return [];
  return body.split(',').map((e) => (e === 'NULL' ? null : parseSimhash64(e)));
}

/* Looks up the OIDs and sets the parsers on client; resolves to the OIDs. */
async function register(client) {
  const res = await client.query(LOOKUP);
  if (res.rows.length === 0) {
    throw new Error('the simhash extension is not installed in this database (CREATE EXTENSION simhash)');
  }
  const oids = res.rows[0];
  client.setTypeParser(oids.simhash64, 'text', parseSimhash64);
  client.setTypeParser(oids.simhash64_array, 'text', parseSimhash64Array);
  client.setTypeParser(oids.distance, 'text', (t) => parseInt(t, 10));
  return oids;
}

module.exports = { register, toSimhash64, parseSimhash64, parseSimhash64Array };
