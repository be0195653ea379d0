'use strict';
// example.js: near duplicates with node-postgres and simhash-pg.
//   node example.js     (libpq-style PG* environment variables), with
//   simhash-pg installed (npm install ./clients/node) and pg
// Needs the simhash extension in the database; works in a temporary table.
// Debian: apt-get install node-pg (or npm install pg).
const { Client } = require('pg');
const { register, toSimhash64 } = require('simhash-pg');

const story = 'PostgreSQL is a powerful open source object-relational database system ' +
  'with over thirty years of active development that has earned it a strong ' +
  'reputation for reliability, feature robustness and performance. ';
const docs = [story.repeat(2), story.repeat(2) + 'Reposted with permission.',
  'A completely different sentence about foxes, dogs and their quarrels.'];

(async () => {
  const client = new Client();
  await client.connect();
  try {
    await register(client);
    await client.query('CREATE TEMP TABLE docs (id int PRIMARY KEY, body text, h simhash64)');
    for (const [i, d] of docs.entries()) {
      await client.query('INSERT INTO docs VALUES ($1, $2, simhash($2))', [i, d]);
    }
    const q = (await client.query('SELECT h FROM docs WHERE id = 0')).rows[0].h; // a BigInt
    console.log(`fingerprint of doc 0: ${toSimhash64(q)} (${q})`);
    const res = await client.query(
      'SELECT id, h, h <~> $1 AS distance FROM docs ORDER BY h <~> $1, id', [toSimhash64(q)]);
    for (const r of res.rows) {
      // r.h is a BigInt, r.distance a Number
      console.log(`doc ${r.id}: ${toSimhash64(r.h)}  distance ${r.distance}${r.distance <= 3 ? '  near duplicate' : ''}`);
    }
  } finally {
    await client.end();
  }
})().catch((e) => { console.error(e); process.exit(1); });
