/*
 * bench/gen_docs.c: bench/scale.sh's rows as binary COPY files, the rows of
 * bench/planted_docs.sql and scale.sh's query and new-row tables without a
 * database (100M rows in about a minute instead of a quarter of an hour):
 *
 *   cc -O2 -Isrc -o gen_docs bench/gen_docs.c src/core/tokenizer.c
 *   gen_docs N ORIG DOCS_FILE QUERIES_FILE NEWS_FILE
 *
 * DOCS_FILE, for docs (id bigint, h simhash64), in id order:
 *   ids 1 .. ORIG        h = simhash_hash(id::text)
 *   ids ORIG + 1 .. N    row src = 1 + (abs(simhash_hash('s' || id)) % ORIG)
 *                        with (id % 4) bits flipped, at positions bits & 63,
 *                        (bits >> 6) & 63, (bits >> 12) & 63 of
 *                        bits = simhash_hash('b' || id)
 * QUERIES_FILE, for queries (qid bigint, q simhash64): qid 1 .. 500 the
 *   first 500 planted rows' fingerprints (ids ORIG + 1 ..), qid 500 + i
 *   simhash_hash('q' || i) for i in 1 .. 500
 * NEWS_FILE, for news (id int, h simhash64), g in 1 .. 1000000: even g are
 *   row 1 + (g * 7919) % ORIG with bits g % 62 and g % 62 + 1 flipped, odd g
 *   simhash_hash('new' || g)
 * simhash_hash is the extension's own feature hash (src/core/tokenizer.c,
 * XXH3-64 of the UTF-8 bytes), so the rows are those the SQL makes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tokenizer.h"

#define NEWS_ROWS 1000000
#define PLANTED_QUERIES 500
#define RANDOM_QUERIES 500

/* the feature hash of prefix || n (n in decimal), as simhash_hash returns it */
static uint64_t
hash_of(const char *prefix, int64_t n)
{
	char		buf[64];
	int			len = snprintf(buf, sizeof(buf), "%s%" PRId64, prefix, n);

	return simhash_feature_hash(buf, (size_t) len);
}

/* a random row's fingerprint: simhash_hash(id::text) */
static uint64_t
random_row(int64_t id)
{
	return hash_of("", id);
}

/* the fingerprint of planted row p (orig < p <= n) */
static uint64_t
planted_row(int64_t p, int64_t orig)
{
	int64_t		s = (int64_t) hash_of("s", p);
	int64_t		bits = (int64_t) hash_of("b", p);
	int			nflip = (int) (p % 4);
	uint64_t	h;

	if (s == INT64_MIN)
	{
		/* abs() of it is an error in SQL: the SQL generator fails here too */
		fprintf(stderr, "gen_docs: abs(simhash_hash('s%" PRId64 "')) overflows\n", p);
		exit(1);
	}
	h = random_row(1 + (s < 0 ? -s : s) % orig);
	if (nflip >= 1)
		h ^= UINT64_C(1) << (bits & 63);
	if (nflip >= 2)
		h ^= UINT64_C(1) << ((bits >> 6) & 63);
	if (nflip >= 3)
		h ^= UINT64_C(1) << ((bits >> 12) & 63);
	return h;
}

/* big-endian stores */
static void
put32(unsigned char *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char) (v >> (24 - 8 * i));
}

static void
put64(unsigned char *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char) (v >> (56 - 8 * i));
}

static void
check_io(int ok, const char *path)
{
	if (!ok)
	{
		fprintf(stderr, "gen_docs: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* open a binary COPY file and write its header */
static FILE *
copy_open(const char *path)
{
	static const unsigned char header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
	FILE	   *f = fopen(path, "wb");

	check_io(f != NULL, path);
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	check_io(fwrite(header, 1, sizeof(header), f) == sizeof(header), path);
	return f;
}

/* one tuple: an int8 or int4 key (keylen 8 or 4) and a simhash64 */
static void
copy_row(FILE *f, const char *path, int keylen, int64_t key, uint64_t h)
{
	unsigned char b[2 + 4 + 8 + 4 + 8];
	size_t		len = 0;

	b[0] = 0;
	b[1] = 2;
	put32(b + 2, (uint32_t) keylen);
	len = 6;
	if (keylen == 8)
		put64(b + len, (uint64_t) key);
	else
		put32(b + len, (uint32_t) key);
	len += keylen;
	put32(b + len, 8);
	put64(b + len + 4, h);
	len += 12;
	check_io(fwrite(b, 1, len, f) == len, path);
}

/* the trailer, and close */
static void
copy_close(FILE *f, const char *path)
{
	static const unsigned char trailer[2] = {0xff, 0xff};

	check_io(fwrite(trailer, 1, 2, f) == 2, path);
	check_io(fclose(f) == 0, path);
}

int
main(int argc, char **argv)
{
	int64_t		n,
				orig;
	FILE	   *f;

	if (argc != 6)
	{
		fprintf(stderr, "usage: gen_docs N ORIG DOCS_FILE QUERIES_FILE NEWS_FILE\n");
		return 2;
	}
	n = strtoll(argv[1], NULL, 10);
	orig = strtoll(argv[2], NULL, 10);
	if (orig < 1 || n < orig + PLANTED_QUERIES)
	{
		fprintf(stderr, "gen_docs: need 1 <= ORIG and ORIG + %d <= N\n", PLANTED_QUERIES);
		return 2;
	}

	f = copy_open(argv[3]);
	for (int64_t id = 1; id <= orig; id++)
		copy_row(f, argv[3], 8, id, random_row(id));
	for (int64_t p = orig + 1; p <= n; p++)
		copy_row(f, argv[3], 8, p, planted_row(p, orig));
	copy_close(f, argv[3]);

	f = copy_open(argv[4]);
	for (int64_t i = 1; i <= PLANTED_QUERIES; i++)
		copy_row(f, argv[4], 8, i, planted_row(orig + i, orig));
	for (int64_t i = 1; i <= RANDOM_QUERIES; i++)
		copy_row(f, argv[4], 8, PLANTED_QUERIES + i, hash_of("q", i));
	copy_close(f, argv[4]);

	f = copy_open(argv[5]);
	for (int64_t g = 1; g <= NEWS_ROWS; g++)
	{
		uint64_t	h;

		if (g % 2 == 0)
			h = random_row(1 + (g * 7919) % orig) ^ (UINT64_C(3) << (g % 62));
		else
			h = hash_of("new", g);
		copy_row(f, argv[5], 4, g, h);
	}
	copy_close(f, argv[5]);
	return 0;
}
