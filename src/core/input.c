/*
 * input.c
 *		Text and binary input of simhash64, simhash_distance and
 *		simhash_ball (see input.h).  Pure C.
 */
#include "input.h"

SimhashInput
simhash64_parse(const char *str, uint64_t *value)
{
	const char *p = str;
	uint64_t	v = 0;
	int			digits = 0;

	while (simhash_is_space(*p))
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; simhash_hex_value(*p) >= 0; p++, digits++)
		v = (v << 4) | (uint64_t) simhash_hex_value(*p);
	while (simhash_is_space(*p))
		p++;
	if (digits != 16 || *p != '\0')
		return SIMHASH_INPUT_SYNTAX;
	*value = v;
	return SIMHASH_INPUT_OK;
}

SimhashInput
simhash64_parse_decimal(const char *str, uint64_t *value)
{
	const char *p = str;
	bool		negative = false;
	bool		overflow = false;
	uint64_t	v = 0;
	int			digits = 0;

	if (*p == '-')
	{
		negative = true;
		p++;
	}
	for (; *p >= '0' && *p <= '9'; p++, digits++)
	{
		uint64_t	d = (uint64_t) (*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			v = v * 10 + d;
	}
	if (*p == '.')
		for (p++; *p == '0'; p++)
			;
	if (digits == 0 || *p != '\0')
		return SIMHASH_INPUT_SYNTAX;
	if (overflow || (negative && v != 0))
		return SIMHASH_INPUT_RANGE;
	*value = v;
	return SIMHASH_INPUT_OK;
}

/*
 * Optional sign and decimal digits at *p (advanced), saturating at
 * |v| > limit (so that a long run of digits cannot overflow).
 */
static bool
parse_integer(const char **p, int64_t limit, int64_t *value)
{
	const char *s = *p;
	bool		negative = false;
	int64_t		v = 0;
	int			digits = 0;

	if (*s == '-' || *s == '+')
		negative = (*s++ == '-');
	for (; *s >= '0' && *s <= '9'; s++, digits++)
		if (v <= limit)
			v = v * 10 + (*s - '0');
	*p = s;
	*value = negative ? -v : v;
	return digits > 0;
}

SimhashInput
simhash_distance_parse(const char *str, int32_t *value)
{
	const char *p = str;
	int64_t		v;

	while (simhash_is_space(*p))
		p++;
	if (!parse_integer(&p, SIMHASH_DISTANCE_MAX, &v))
		return SIMHASH_INPUT_SYNTAX;
	while (simhash_is_space(*p))
		p++;
	if (*p != '\0')
		return SIMHASH_INPUT_SYNTAX;
	if (!simhash_distance_valid(v))
		return SIMHASH_INPUT_RANGE;
	*value = (int32_t) v;
	return SIMHASH_INPUT_OK;
}

/*
 * Whitespace is allowed around the parentheses, the center and the radius;
 * nothing else.  The radius is not clamped (text must round-trip).
 */
SimhashInput
simhash_ball_parse(const char *str, uint64_t *center, int32_t *radius)
{
	const char *p = str;
	uint64_t	c = 0;
	int64_t		r;
	int			digits;

	while (simhash_is_space(*p))
		p++;
	if (*p++ != '(')
		return SIMHASH_INPUT_SYNTAX;
	while (simhash_is_space(*p))
		p++;
	for (digits = 0; simhash_hex_value(*p) >= 0; p++, digits++)
		c = (c << 4) | (uint64_t) simhash_hex_value(*p);
	if (digits != 16)
		return SIMHASH_INPUT_SYNTAX;
	while (simhash_is_space(*p))
		p++;
	if (*p++ != ',')
		return SIMHASH_INPUT_SYNTAX;
	while (simhash_is_space(*p))
		p++;
	if (!parse_integer(&p, SIMHASH_BALL_MAX_RADIUS, &r))
		return SIMHASH_INPUT_SYNTAX;
	while (simhash_is_space(*p))
		p++;
	if (*p++ != ')')
		return SIMHASH_INPUT_SYNTAX;
	while (simhash_is_space(*p))
		p++;
	if (*p != '\0')
		return SIMHASH_INPUT_SYNTAX;
	if (r < SIMHASH_BALL_EMPTY || r > SIMHASH_BALL_MAX_RADIUS)
		return SIMHASH_INPUT_RANGE;
	*center = c;
	*radius = (int32_t) r;
	return SIMHASH_INPUT_OK;
}

SimhashInput
simhash_read_be(const uint8_t *buf, size_t len, size_t *pos, int n,
				uint64_t *value)
{
	uint64_t	v = 0;

	if (*pos > len || len - *pos < (size_t) n)
		return SIMHASH_INPUT_SHORT;
	for (int i = 0; i < n; i++)
		v = (v << 8) | buf[(*pos)++];
	*value = v;
	return SIMHASH_INPUT_OK;
}

SimhashInput
simhash64_parse_binary(const uint8_t *buf, size_t len, size_t *pos,
					   uint64_t *value)
{
	return simhash_read_be(buf, len, pos, 8, value);
}

SimhashInput
simhash_distance_parse_binary(const uint8_t *buf, size_t len, size_t *pos,
							  int32_t *value)
{
	uint64_t	v;

	if (simhash_read_be(buf, len, pos, 4, &v) != SIMHASH_INPUT_OK)
		return SIMHASH_INPUT_SHORT;
	if (!simhash_distance_valid((int32_t) (uint32_t) v))
		return SIMHASH_INPUT_RANGE;
	*value = (int32_t) v;
	return SIMHASH_INPUT_OK;
}

SimhashInput
simhash_ball_parse_binary(const uint8_t *buf, size_t len, size_t *pos,
						  uint64_t *center, int32_t *radius)
{
	uint64_t	c,
				r;

	if (simhash_read_be(buf, len, pos, 8, &c) != SIMHASH_INPUT_OK ||
		simhash_read_be(buf, len, pos, 4, &r) != SIMHASH_INPUT_OK)
		return SIMHASH_INPUT_SHORT;
	if ((int32_t) (uint32_t) r < SIMHASH_BALL_EMPTY ||
		(int32_t) (uint32_t) r > SIMHASH_BALL_MAX_RADIUS)
		return SIMHASH_INPUT_RANGE;
	*center = c;
	*radius = (int32_t) (uint32_t) r;
	return SIMHASH_INPUT_OK;
}
