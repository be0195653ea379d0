/*
 * test/fuzz/fuzz_input.c: libFuzzer target for every type input function,
 * text and binary (src/core/input.c, minhash_parse_text/_binary in src/core/minhash.c):
 * simhash64, simhash_distance, simhash_ball, minhash_signature.  The first
 * byte picks the parser, the rest is the input (NUL-terminated for the
 * text forms, as a cstring).  Checks: no out-of-bounds access (ASan), no
 * undefined behaviour (UBSan), every accepted value inside its domain, and
 * accepted values round-trip through their output form.
 */
#include "input.h"
#include "minhash.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "check failed: %s\n", #cond); abort(); } } while (0)

/* minhash text out, as minhash_signature_out writes it */
static char *
minhash_out(const MinhashParams *p, bool empty, const uint32_t *slots)
{
	char	   *buf = malloc(200 + 9 * (size_t) p->permutations);
	int			n = sprintf(buf, "v%d n_gram=%d n_gram_type=%s permutations=%d seed=%" PRId64 " slots=",
							p->version, p->n_gram, minhash_ngram_type_name(p->n_gram_type),
							p->permutations, p->seed);

	if (empty)
		strcpy(buf + n, "empty");
	else
		for (int i = 0; i < p->permutations; i++)
			n += sprintf(buf + n, "%s%08" PRIx32, i ? "," : "", slots[i]);
	return buf;
}

static void
text_forms(int which, const char *s)
{
	char		out[64];

	switch (which)
	{
		case 0:
			{
				uint64_t	v,
							w;

				if (simhash64_parse(s, &v) != SIMHASH_INPUT_OK)
					return;
				snprintf(out, sizeof(out), "%016" PRIx64, v);
				CHECK(simhash64_parse(out, &w) == SIMHASH_INPUT_OK && w == v);
				return;
			}
		case 1:
			{
				int32_t		d,
							e;

				if (simhash_distance_parse(s, &d) != SIMHASH_INPUT_OK)
					return;
				CHECK(d >= 0 && d <= SIMHASH_DISTANCE_MAX);
				snprintf(out, sizeof(out), "%d", d);
				CHECK(simhash_distance_parse(out, &e) == SIMHASH_INPUT_OK && e == d);
				return;
			}
		case 2:
			{
				uint64_t	c,
							c2;
				int32_t		r,
							r2;

				if (simhash_ball_parse(s, &c, &r) != SIMHASH_INPUT_OK)
					return;
				CHECK(r >= SIMHASH_BALL_EMPTY && r <= SIMHASH_BALL_MAX_RADIUS);
				snprintf(out, sizeof(out), "(%016" PRIx64 ",%d)", c, r);
				CHECK(simhash_ball_parse(out, &c2, &r2) == SIMHASH_INPUT_OK && c2 == c && r2 == r);
				return;
			}
		default:
			{
				static uint32_t slots[MINHASH_MAX_PERMUTATIONS],
							slots2[MINHASH_MAX_PERMUTATIONS];
				MinhashParams p,
							p2;
				bool		empty,
							empty2;
				char		detail[200];
				char	   *again;

				if (minhash_parse_text(s, &p, &empty, slots, detail, sizeof(detail)) != NULL)
					return;
				CHECK(p.permutations >= 1 && p.permutations <= MINHASH_MAX_PERMUTATIONS);
				CHECK(empty || minhash_invalid_slot(slots, p.permutations) == 0);
				again = minhash_out(&p, empty, slots);
				CHECK(minhash_parse_text(again, &p2, &empty2, slots2, detail, sizeof(detail)) == NULL);
				CHECK(minhash_params_equal(&p, &p2) && empty == empty2);
				CHECK(empty || memcmp(slots, slots2, 4 * (size_t) p.permutations) == 0);
				free(again);
				return;
			}
	}
}

static void
binary_forms(int which, const uint8_t *b, size_t len)
{
	size_t		pos = 0;

	switch (which)
	{
		case 0:
			{
				uint64_t	v;

				if (simhash64_parse_binary(b, len, &pos, &v) == SIMHASH_INPUT_OK)
					CHECK(pos == 8);
				return;
			}
		case 1:
			{
				int32_t		d;

				if (simhash_distance_parse_binary(b, len, &pos, &d) == SIMHASH_INPUT_OK)
					CHECK(pos == 4 && d >= 0 && d <= SIMHASH_DISTANCE_MAX);
				return;
			}
		case 2:
			{
				uint64_t	c;
				int32_t		r;

				if (simhash_ball_parse_binary(b, len, &pos, &c, &r) == SIMHASH_INPUT_OK)
					CHECK(pos == 12 && r >= SIMHASH_BALL_EMPTY && r <= SIMHASH_BALL_MAX_RADIUS);
				return;
			}
		default:
			{
				static uint32_t slots[MINHASH_MAX_PERMUTATIONS];
				MinhashParams p;
				bool		empty;
				uint8_t    *ser;
				MinhashParams p2;
				bool		empty2;

				if (minhash_parse_binary(b, len, &pos, &p, &empty, slots) != NULL)
					return;
				CHECK(pos <= len);
				CHECK(pos == 15 + (empty ? 0 : 4 * (size_t) p.permutations));
				CHECK(empty || minhash_invalid_slot(slots, p.permutations) == 0);
				/* the stored form of the value is valid */
				ser = malloc(minhash_size(p.permutations, empty));
				minhash_write_header(ser, &p, empty);
				if (!empty)
					minhash_store_slots(ser + MINHASH_HEADER_SIZE, slots, p.permutations);
				CHECK(minhash_read_header(ser, minhash_size(p.permutations, empty), &p2, &empty2) == NULL);
				CHECK(minhash_params_equal(&p, &p2) && empty == empty2);
				free(ser);
				return;
			}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *s;

	if (size == 0)
		return 0;
	if (data[0] & 4)
	{
		binary_forms(data[0] & 3, data + 1, size - 1);
		return 0;
	}
	s = malloc(size);
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	text_forms(data[0] & 3, s);
	free(s);
	return 0;
}
