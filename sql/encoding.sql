-- the same text gives the same fingerprint whatever the database encoding;
-- in SQL_ASCII databases invalid UTF-8 bytes separate tokens
SELECT simhash('École, Straße: naïve café') AS utf8_simhash,
       simhash_hash('é') AS utf8_hash,
       simhash_compute(ARRAY['é', 'ß']) AS utf8_compute,
       simhash('école:1 straße:2,3'::tsvector) AS utf8_tsvector,
       simhash('µ') AS utf8_micro;
CREATE DATABASE simhash_latin1 ENCODING 'LATIN1' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C';
CREATE DATABASE simhash_ascii ENCODING 'SQL_ASCII' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C';
\c simhash_latin1
SET client_encoding = 'UTF8';
CREATE EXTENSION simhash;
SELECT simhash('École, Straße: naïve café') AS latin1_simhash,
       simhash_hash('é') AS latin1_hash,
       simhash_compute(ARRAY['é', 'ß']) AS latin1_compute,
       simhash('école:1 straße:2,3'::tsvector) AS latin1_tsvector;
SELECT simhash_tokens('École, Straße: naïve café');
SELECT simhash_compute(simhash_shingle(simhash_tokens('École, Straße: naïve café'), 3))
	= simhash('École, Straße: naïve café', 3);
SELECT * FROM simhash_features('École, Straße, école');
-- a folded character the database encoding cannot hold (micro sign folds to Greek mu)
SELECT simhash_tokens('µ');
SELECT simhash('µ') AS latin1_micro;
\c simhash_ascii
SET client_encoding = 'SQL_ASCII';
CREATE EXTENSION simhash;
SELECT simhash('École, Straße: naïve café') AS ascii_simhash, simhash_hash('é') AS ascii_hash;
SELECT simhash_tokens(E'caf\xff\xfee na\xc3\xafve \xe4\xb8');
SELECT simhash(E'caf\xffe') = simhash_compute(ARRAY['caf', 'e']) AS invalid_bytes_separate;
\c contrib_regression
DROP DATABASE simhash_latin1;
DROP DATABASE simhash_ascii;
