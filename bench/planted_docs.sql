-- bench/planted_docs.sql: the benchmarks' table (bench/dedup.sh, bench/join.sh):
--   psql -v n=N -v orig=ORIG -f bench/planted_docs.sql
-- docs(id bigint, h simhash64): ids 1 .. orig have h = simhash_hash(id::text)
-- (random); ids orig + 1 .. n are copies of a pseudo-randomly chosen earlier
-- row (planted.src) with 0 .. 3 bits flipped (chosen by hashing the id).
CREATE EXTENSION simhash;
CREATE UNLOGGED TABLE docs (id bigint, h simhash64);
INSERT INTO docs SELECT i, simhash_hash(i::text)::simhash64 FROM generate_series(1, :orig) i;
-- planted: row p copies row src(p) with (p % 4) bits flipped
CREATE UNLOGGED TABLE planted AS
SELECT p AS id, 1 + (abs(simhash_hash('s' || p)) % :orig) AS src,
       simhash_hash('b' || p)::bigint AS bits, (p % 4)::int AS nflip
FROM generate_series(:orig + 1, :n) p;
INSERT INTO docs
SELECT p.id, (d.h::bigint
	# CASE WHEN p.nflip >= 1 THEN 1::bigint << (p.bits & 63)::int ELSE 0 END
	# CASE WHEN p.nflip >= 2 THEN 1::bigint << ((p.bits >> 6) & 63)::int ELSE 0 END
	# CASE WHEN p.nflip >= 3 THEN 1::bigint << ((p.bits >> 12) & 63)::int ELSE 0 END)::simhash64
FROM planted p JOIN docs d ON d.id = p.src;
VACUUM ANALYZE docs;
VACUUM ANALYZE planted;
