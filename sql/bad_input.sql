-- bad and extreme input: a result or a clear error, never a crash
\set VERBOSITY sqlstate
-- multi-dimensional arrays
SELECT simhash_compute(ARRAY[['a', 'b'], ['c', 'd']]);
SELECT simhash_compute(ARRAY[[1, 2], [3, 4]]::bigint[]);
SELECT simhash_compute(ARRAY[['a']], ARRAY[1]::real[]);
SELECT simhash_shingle(ARRAY[['a', 'b']], 2);
-- weights: mismatched lengths, negative, NaN, infinite, too large
SELECT simhash_compute(ARRAY['a', 'b'], ARRAY[1]::real[]);
SELECT simhash_compute(ARRAY['a', 'b'], ARRAY[1, -0.5]::real[]);
SELECT simhash_compute(ARRAY['a'], ARRAY['NaN']::real[]);
SELECT simhash_compute(ARRAY['a'], ARRAY['Infinity']::real[]);
SELECT simhash_compute(ARRAY['a'], ARRAY[2e9]::real[]);
\set VERBOSITY default
SELECT simhash_compute(ARRAY[['a', 'b'], ['c', 'd']]);
SELECT simhash_compute(ARRAY['a', 'b'], ARRAY[1]::real[]);
SELECT simhash_compute(ARRAY['a', 'b'], ARRAY[1, -0.5]::real[]);
SELECT simhash_compute(ARRAY['a'], ARRAY[2e9]::real[]);
-- the largest weight is accepted
SELECT simhash_compute(ARRAY['a', 'b'], ARRAY[1073741824, 1]::real[])::bigint = simhash_hash('a');

-- large inputs: 10 million pre-hashed features, a 100 MB text
SELECT simhash_compute(array_agg(g * 922337203685)) FROM generate_series(1, 10000000) g;
SELECT simhash(repeat('abc def ghi ', 8738134)) = simhash_compute(ARRAY['abc', 'def', 'ghi']);
-- 100 MB of distinct tokens
SELECT simhash(string_agg(to_hex(g * 2654435761), ' ')) <> '0000000000000000' FROM generate_series(1, 11000000) g;
SELECT simhash(repeat('x', 100000000)) = simhash_compute(ARRAY[repeat('x', 100000000)]);
SELECT simhash_compute(array_agg(g::text)) FROM generate_series(1, 1000000) g;

-- invalid UTF-8 is only possible in SQL_ASCII databases: see the encoding test
