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

-- issue #10: simhash_index_check is for the index's owner (and superusers),
-- like amcheck's functions: not executable by PUBLIC.  It also checks, before
-- taking any lock, that the caller owns the index and that it is a simhash
-- index (in C).
REVOKE ALL ON FUNCTION simhash_index_check(regclass, boolean) FROM PUBLIC;
