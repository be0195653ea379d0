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

-- issue #10: simhash_distance enforces its domain 0..64 in every input path
-- (text, binary, the cast from integer); 1.0 used int4in, int4recv and a
-- binary-coercible cast, which accepted any integer.
CREATE OR REPLACE FUNCTION simhash_distance_in(cstring) RETURNS simhash_distance
	AS 'MODULE_PATHNAME', 'simhash_distance_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION simhash_distance_recv(internal) RETURNS simhash_distance
	AS 'MODULE_PATHNAME', 'simhash_distance_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_from_int4(integer) RETURNS simhash_distance
	AS 'MODULE_PATHNAME', 'simhash_distance_from_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_distance_from_int4(integer) IS 'cast to simhash_distance: 22003 outside 0..64';
DROP CAST (integer AS simhash_distance);
CREATE CAST (integer AS simhash_distance) WITH FUNCTION simhash_distance_from_int4(integer) AS ASSIGNMENT;
