-- simhash_find_all(hashes, blocks, max_distance): every pair of elements
-- within max_distance bits, each once, a <= b; compared with a brute-force
-- self-join on random, planted, clustered, identical and chained inputs.

-- a deterministic pseudo-random fingerprint
CREATE FUNCTION fa_hx(seed text) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
	SELECT ('x' || substr(md5(seed), 1, 16))::bit(64)::simhash64
$$;
-- h with the bits of mask flipped
CREATE FUNCTION fa_flip(h simhash64, mask bigint) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
	SELECT (h::bigint # mask)::simhash64
$$;
-- a mask of nbits pseudo-random bit positions (repeats coincide: at most nbits)
CREATE FUNCTION fa_rbits(seed text, nbits int) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(bit_or(1::bigint << (get_byte(decode(md5(seed || '/' || i), 'hex'), 0) % 64)), 0)
	FROM generate_series(1, nbits) i
$$;

-- the reference: all pairs of positions i < j within k bits
CREATE FUNCTION fa_ref_pairs(arr simhash64[], k int)
	RETURNS TABLE (a simhash64, b simhash64, distance int) LANGUAGE sql AS $$
	WITH e AS (SELECT v, i FROM unnest(arr) WITH ORDINALITY u(v, i) WHERE v IS NOT NULL)
	SELECT least(x.v, y.v), greatest(x.v, y.v), hamming_distance(x.v, y.v)
	FROM e x JOIN e y ON x.i < y.i
	WHERE hamming_distance(x.v, y.v) <= k
$$;
-- find_all against the reference: pairs found, missing, extra
CREATE FUNCTION fa_check_pairs(arr simhash64[], blocks int, k int) RETURNS text LANGUAGE sql AS $$
	WITH got AS (SELECT * FROM simhash_find_all(arr, blocks, k)),
	     ref AS (SELECT * FROM fa_ref_pairs(arr, k))
	SELECT format('%s pairs, %s missing, %s extra',
				  (SELECT count(*) FROM got),
				  (SELECT count(*) FROM (SELECT * FROM ref EXCEPT ALL SELECT * FROM got) m),
				  (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM ref) x))
$$;

CREATE TEMP TABLE fa_inputs (name text, arr simhash64[]);
-- random values, a third of them followed by copies at 0 .. 5 bits
INSERT INTO fa_inputs
SELECT 'planted', array_agg(v ORDER BY g, c)
FROM (SELECT g, 0 AS c, fa_hx('p' || g) AS v FROM generate_series(1, 600) g
	  UNION ALL
	  SELECT g, c, fa_flip(fa_hx('p' || g), fa_rbits('q' || g || '/' || c, (g + c) % 6))
	  FROM generate_series(1, 600, 3) g, generate_series(1, 3) c) s;
-- few distinct bits: many close pairs, found by many tables
INSERT INTO fa_inputs
SELECT 'clustered', array_agg(fa_flip('a5a5a5a5a5a5a5a5', fa_rbits('c' || g, 4)) ORDER BY g)
FROM generate_series(1, 500) g;
-- 60 equal values
INSERT INTO fa_inputs SELECT 'identical', array_fill('0123456789abcdef'::simhash64, ARRAY[60]);
-- a chain of one-bit steps, and its first 30 links again
INSERT INTO fa_inputs
WITH RECURSIVE chain(n, v) AS (
	SELECT 1, 'f0e1d2c3b4a59687'::simhash64
	UNION ALL
	SELECT n + 1, fa_flip(v, 1::bigint << (get_byte(decode(md5('s' || n), 'hex'), 0) % 64))
	FROM chain WHERE n < 150)
SELECT 'chain', array_agg(v ORDER BY n) || (array_agg(v ORDER BY n))[1:30] FROM chain;

SELECT name, cardinality(arr) FROM fa_inputs ORDER BY name;

-- every configuration gives exactly the reference pairs
SELECT name, blocks, k, fa_check_pairs(arr, blocks, k)
FROM fa_inputs,
	 (VALUES (1, 0), (2, 1), (4, 3), (5, 3), (6, 3), (8, 3), (7, 0), (7, 2), (10, 4),
			 (12, 6), (64, 1), (64, 2)) AS conf(blocks, k)
ORDER BY name, blocks, k;

-- a <= b, distances as hamming_distance, and each unordered pair once
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE a > b) AS reversed,
	   count(*) FILTER (WHERE distance <> hamming_distance(a, b)) AS wrong_distance,
	   count(DISTINCT (a, b)) AS distinct_pairs
FROM fa_inputs, simhash_find_all(arr, 6, 3) WHERE name = 'planted';

-- a small example: (0, 0) is a pair of positions; 0 and 7 are 3 bits
-- apart (twice, as 0 appears twice); 7 and f are 1 bit apart; 0 and f are 4
SELECT * FROM simhash_find_all(ARRAY['0000000000000000', '0000000000000007', '000000000000000f',
									 'ffffffffffffffff', '0000000000000000']::simhash64[], 4, 3)
ORDER BY a, b, distance;

-- duplicates: n equal values give n(n-1)/2 pairs at distance 0
SELECT a, b, distance, count(*)
FROM simhash_find_all(ARRAY['1111111111111111', '2222222222222222', '1111111111111111',
							'1111111111111111', '2222222222222222']::simhash64[], 1, 0)
GROUP BY a, b, distance ORDER BY a, b;
SELECT count(*) FROM simhash_find_all(array_fill('0000000000000001'::simhash64, ARRAY[1000]), 5, 3);

-- in the select list, as a set-returning function of records
SELECT simhash_find_all(ARRAY['0000000000000000', '0000000000000003', '8000000000000000']::simhash64[], 2, 1);

-- NULL elements are skipped; NULL arguments give no rows (strict)
SELECT * FROM simhash_find_all(ARRAY[NULL, 'abcdef0123456789', NULL, 'abcdef0123456788', NULL]::simhash64[], 4, 2);
SELECT count(*) FROM simhash_find_all(ARRAY[NULL, NULL]::simhash64[], 4, 2);
SELECT count(*) FROM simhash_find_all(NULL, 4, 2);
SELECT count(*) FROM simhash_find_all(ARRAY['abcdef0123456789']::simhash64[], NULL, 2);
SELECT count(*) FROM simhash_find_all(ARRAY['abcdef0123456789']::simhash64[], 4, NULL);
-- empty and one-element arrays: no pairs
SELECT count(*) FROM simhash_find_all('{}'::simhash64[], 4, 2);
SELECT count(*) FROM simhash_find_all(ARRAY['abcdef0123456789']::simhash64[], 4, 2);
-- NULLs between all the elements of a larger array change nothing
SELECT fa_check_pairs((SELECT array_agg(x ORDER BY o)
					FROM (SELECT v, 2 * i FROM unnest(arr) WITH ORDINALITY u(v, i)
						  UNION ALL
						  SELECT NULL, 2 * i + 1 FROM generate_series(0, cardinality(arr)) i) s(x, o)),
				   5, 3) AS with_nulls
FROM fa_inputs WHERE name = 'planted';

-- bad parameters and arrays
\set VERBOSITY sqlstate
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 0, 0);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 65, 3);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], -1, 3);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 4, -1);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 3, 3);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 2, 5);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 64, 3);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 20, 5);
SELECT * FROM simhash_find_all('{{0000000000000000,0000000000000001},{0000000000000002,0000000000000003}}'::simhash64[], 4, 3);
\set VERBOSITY default
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 65, 3);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 4, -1);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 3, 3);
SELECT * FROM simhash_find_all('{0000000000000000}'::simhash64[], 20, 5);
SELECT * FROM simhash_find_all('{{0000000000000000,0000000000000001},{0000000000000002,0000000000000003}}'::simhash64[], 4, 3);
-- the largest valid configurations
SELECT count(*) FROM simhash_find_all('{0000000000000000,0000000000000001}'::simhash64[], 64, 2);
SELECT count(*) FROM simhash_find_all('{0000000000000000,0000000000000001}'::simhash64[], 64, 63);
SELECT count(*) FROM simhash_find_all('{0000000000000000,0000000000000001}'::simhash64[], 64, 0);

-- 200,000 random values with 100 planted pairs at 1 .. 3 bits: sorts that
-- take several radix passes; random pairs within 3 bits are vanishingly rare
SELECT count(*), min(distance), max(distance)
FROM simhash_find_all((SELECT array_agg(fa_hx('big' || g)) FROM generate_series(1, 200000) g)
					  || (SELECT array_agg(fa_flip(fa_hx('big' || g), fa_rbits('f' || g, 1 + g % 3)))
						  FROM generate_series(1, 100) g), 5, 3);

-- a long scan with little output (every value shares block 1) is
-- interruptible: statement_timeout cancels it after little of the backend's
-- CPU time (about 40 s uncancelled), which unlike wall time does not grow
-- with the machine's load; the array is built before the timed statement
CREATE TEMP TABLE fa_same AS
SELECT array_agg(((hashtext(g::text)::bigint << 32) | 12345)::simhash64) AS a
FROM generate_series(1, 200000) g;
CREATE FUNCTION fa_cpu_ticks() RETURNS bigint LANGUAGE sql AS $$
	SELECT sum(t::bigint) FROM unnest((regexp_split_to_array(split_part(
		pg_read_file('/proc/' || pg_backend_pid() || '/stat'), ') ', 2), ' '))[12:13]) t $$;
SELECT fa_cpu_ticks() AS fa_cpu0 \gset
SET statement_timeout = '1s';
SELECT count(*) FROM fa_same, simhash_find_all(a, 2, 1);
RESET statement_timeout;
-- USER_HZ is 100: less than 10 s
SELECT fa_cpu_ticks() - :fa_cpu0 < 1000 AS cancelled_promptly;

-- parallel safe and immutable
SELECT provolatile, proparallel, proisstrict, prorows FROM pg_proc WHERE proname = 'simhash_find_all';

DROP TABLE fa_inputs, fa_same;
DROP FUNCTION fa_cpu_ticks(), fa_hx(text), fa_flip(simhash64, bigint), fa_rbits(text, int),
	fa_ref_pairs(simhash64[], int), fa_check_pairs(simhash64[], int, int);
