// The ESM entry point of the installed simhash-pg: the same functions as the
// CommonJS one (test/test.cjs), named and default exports.
import test from 'node:test';
import assert from 'node:assert';
import { createRequire } from 'node:module';
import pg from 'pg';
import simhash, { register, toSimhash64, parseSimhash64, parseSimhash64Array } from 'simhash-pg';

const require = createRequire(import.meta.url);

test('ESM exports are the CommonJS ones', () => {
  const cjs = require('simhash-pg');
  assert.strictEqual(register, cjs.register);
  assert.strictEqual(toSimhash64, cjs.toSimhash64);
  assert.strictEqual(parseSimhash64, cjs.parseSimhash64);
  assert.strictEqual(parseSimhash64Array, cjs.parseSimhash64Array);
  assert.strictEqual(simhash.register, register);
});

test('ESM round trip', async () => {
  const c = new pg.Client({ database: 'postgres' });
  await c.connect();
  try {
    await c.query('CREATE EXTENSION IF NOT EXISTS simhash');
    await register(c);
    const h = (await c.query("SELECT simhash('hello world') AS h")).rows[0].h;
    assert.strictEqual(typeof h, 'bigint');
    const d = (await c.query("SELECT $1 <~> simhash('hello world') AS d", [toSimhash64(h)])).rows[0].d;
    assert.strictEqual(d, 0);
  } finally {
    await c.end();
  }
});
