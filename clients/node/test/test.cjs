'use strict';
// Tests of simhash-pg against a running server (PG* environment variables);
// run by test/clients.sh with `node --test` in a scratch project where the
// package is installed from `npm pack` output (CommonJS entry point; the ESM
// one is test/esm.test.mjs).  Makes and drops its own databases.
const test = require('node:test');
const assert = require('node:assert');
const { Client } = require('pg');
const { register, toSimhash64, parseSimhash64Array } = require('simhash-pg');

const MAX = (1n << 64n) - 1n;
const VALUES = { '0000000000000000': 0n, '0000000000000001': 1n, '8000000000000000': 1n << 63n,
  ffffffffffffffff: MAX, '0123456789abcdef': 0x0123456789abcdefn };

async function withDb(name, setupSql, fn) {
  const admin = new Client({ database: 'postgres' });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
  await admin.query(`CREATE DATABASE "${name}"`);
  const client = new Client({ database: name });
  await client.connect();
  try {
    for (const s of setupSql) await client.query(s);
    await fn(client);
  } finally {
    await client.end();
    await admin.query(`DROP DATABASE "${name}"`);
    await admin.end();
  }
}

const bits = (v) => v.toString(2).split('').filter((c) => c === '1').length;

test('unregistered: strings (what register fixes)', () => withDb('simhash_node0',
  ['CREATE EXTENSION simhash'], async (c) => {
    const r = (await c.query("SELECT 'ffffffffffffffff'::simhash64 AS h, " +
      "'ffffffffffffffff'::simhash64 <~> '0000000000000000'::simhash64 AS d")).rows[0];
    assert.deepStrictEqual([r.h, r.d], ['ffffffffffffffff', '64']);
  }));

test('simhash64 as BigInt, distance as Number, arrays, NULL', () => withDb('simhash_node1',
  ['CREATE EXTENSION simhash'], async (c) => {
    await register(c);
    for (const [text, value] of Object.entries(VALUES)) {
      const r = (await c.query("SELECT $1::simhash64 AS h, $1::simhash64 <~> '0000000000000000' AS d",
        [text])).rows[0];
      assert.strictEqual(r.h, value, text);
      assert.strictEqual(r.d, bits(value), text);
      // a value read is written back with toSimhash64
      const back = (await c.query('SELECT $1::simhash64::text AS t', [toSimhash64(r.h)])).rows[0];
      assert.strictEqual(back.t, text);
    }
    const a = (await c.query("SELECT ARRAY['ffffffffffffffff', NULL, '0000000000000002']::simhash64[] AS a"))
      .rows[0].a;
    assert.deepStrictEqual(a, [MAX, null, 2n]);
    assert.deepStrictEqual((await c.query("SELECT '{}'::simhash64[] AS a")).rows[0].a, []);
    const n = (await c.query('SELECT NULL::simhash64 AS h, NULL::simhash64 <~> NULL::simhash64 AS d')).rows[0];
    assert.deepStrictEqual([n.h, n.d], [null, null]);
    // a Number, so JSON.stringify writes it as a number
    const j = (await c.query("SELECT simhash('a b c') <~> simhash('a b d') AS d")).rows[0];
    assert.strictEqual(typeof j.d, 'number');
  }));

test('a BigInt read goes back as a parameter', () => withDb('simhash_node4',
  ['CREATE EXTENSION simhash', 'CREATE TABLE t (id int, h simhash64)',
    'CREATE INDEX ON t USING simhash (h)'], async (c) => {
    await register(c);
    const h = (await c.query("SELECT 'c00196f7b9c86851'::simhash64 AS h")).rows[0].h;
    assert.strictEqual(h, 13835505520976881745n);
    // pg sends a BigInt in decimal, which is not simhash64's text form (16 hex
    // digits: a 16-digit decimal would read as hex); toSimhash64 writes it
    await c.query('INSERT INTO t VALUES (1, $1)', [toSimhash64(h)]);
    // or the query reads the decimal as numeric, cast to simhash64 (unsigned)
    await c.query('INSERT INTO t VALUES (2, $1::numeric::simhash64)', [h]);
    await c.query('INSERT INTO t VALUES (3, $1::numeric::simhash64)', [5n]);
    const r = await c.query('SELECT id, h FROM t WHERE h <~> $1 <= 0 ORDER BY id', [toSimhash64(h)]);
    assert.deepStrictEqual(r.rows.map((x) => [x.id, x.h]), [[1, h], [2, h]]);
    const five = await c.query('SELECT h FROM t WHERE h <~> $1::numeric::simhash64 <= 0', [5n]);
    assert.deepStrictEqual(five.rows.map((x) => x.h), [5n]);
    await assert.rejects(c.query('SELECT $1::simhash64', [h]), /invalid input syntax for type simhash64/);
    await assert.rejects(c.query('SELECT $1::numeric::simhash64', [1n << 64n]), /out of range/);
  }));

test('versioned with the extension, installed copy', () => withDb('simhash_node5', [], async (c) => {
  const pkg = require('simhash-pg/package.json');
  const ext = (await c.query("SELECT default_version FROM pg_available_extensions WHERE name = 'simhash'"))
    .rows[0].default_version;
  assert.strictEqual(pkg.version.split('.').slice(0, 2).join('.'), ext);
  assert.strictEqual(pkg.private, undefined);
  assert.match(require.resolve('simhash-pg'), /node_modules[\\/]simhash-pg[\\/]/);
}));

test('extension in its own schema', () => withDb('simhash_node2',
  ['CREATE SCHEMA "sim hash"', 'CREATE EXTENSION simhash SCHEMA "sim hash"'], async (c) => {
    const oids = await register(c);
    const t = (await c.query('SELECT $1::int::regtype::text AS h, $2::int::regtype::text AS d',
      [oids.simhash64, oids.distance])).rows[0];
    assert.deepStrictEqual([t.h, t.d], ['"sim hash".simhash64', '"sim hash".simhash_distance']);
    const r = (await c.query('SELECT \'00000000000000ff\'::"sim hash".simhash64 AS h, ' +
      '\'00000000000000ff\'::"sim hash".simhash64 OPERATOR("sim hash".<~>) \'0000000000000000\' AS d')).rows[0];
    assert.deepStrictEqual([r.h, r.d], [255n, 8]);
  }));

test('not installed', () => withDb('simhash_node3', [], async (c) => {
  await assert.rejects(register(c), /CREATE EXTENSION simhash/);
}));

test('value checks', () => {
  assert.strictEqual(toSimhash64(255), '00000000000000ff');
  assert.strictEqual(toSimhash64(MAX), 'ffffffffffffffff');
  assert.throws(() => toSimhash64(-1n), RangeError);
  assert.throws(() => toSimhash64(MAX + 1n), RangeError);
  assert.deepStrictEqual(parseSimhash64Array('[0:1]={0000000000000001,NULL}'), [1n, null]);
});
