/* sql/simhash--1.0--1.1.sql: upgrade of the simhash extension from 1.0 to 1.1
 *
 * 1.0 (sql/simhash--1.0.sql, tag v1.0) is frozen.  Every change to an SQL
 * object since then is made here, in sections named after the issue that made
 * it; the install script of 1.1 (sql/simhash--1.1.sql) is built by the Makefile
 * as 1.0 followed by this file, so a fresh install and an upgraded one have the
 * same objects by construction.  Statements must be valid both ways: on a
 * database being upgraded and right after the 1.0 script in a fresh install.
 */

\echo Use "ALTER EXTENSION simhash UPDATE TO '1.1'" to load this file. \quit

-- issue #16: simhash_v2(text, width) and simhash_features_v2(text, width):
-- the same tokens and shingles as simhash(text, window), but a feature made
-- only of letters of scripts written without spaces (Han, Kana, Hangul, Thai,
-- ...) votes with min(count, 8) instead of 1 + floor(2 log2(count)), which
-- raises the recall of short edited Chinese passages; other features vote as
-- in simhash(text).  A text without features gives NULL (simhash(text) gives
-- 0000000000000000).  New names, so that simhash(body[, n]) and
-- simhash_features(body[, n]) resolve as before; "width" is not a reserved
-- word, so simhash_v2(body, width => 3) parses.
CREATE FUNCTION simhash_v2(body text, width integer DEFAULT 1) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_text_v2'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash_v2(text, integer) IS 'simhash of a text, version 2: CJK features weighted by min(count, 8); NULL when the text has no features';

CREATE FUNCTION simhash_features_v2(body text, width integer DEFAULT 1,
		OUT feature text, OUT count integer, OUT weight integer) RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10 ROWS 100;
COMMENT ON FUNCTION simhash_features_v2(text, integer) IS 'the weighted features simhash_v2(text) votes with';
