/*
 * utf8.c
 *		Texts of the server encoding as the UTF-8 the pure-C tokenizer and
 *		feature hash read, and UTF-8 back to texts: every SQL function that
 *		takes or returns text goes through these (text fingerprints,
 *		features, MinHash, sentence fingerprints).
 */
#include "simhash.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "core/tokenizer.h"
#include "text/text.h"

/*
 * Features are hashed over their UTF-8 bytes, whatever the database
 * encoding, so that a text gives the same fingerprint everywhere.  In
 * SQL_ASCII databases the bytes are taken as they are (no validation).
 */
static inline bool
needs_utf8_conversion(void)
{
	int			enc = GetDatabaseEncoding();

	return enc != PG_UTF8 && enc != PG_SQL_ASCII;
}

/* A feature's hash: its bytes in the server encoding, hashed as UTF-8. */
uint64
simhash_text_hash(const char *data, int len)
{
	char	   *utf8;
	uint64		h;

	if (!needs_utf8_conversion())
		return simhash_feature_hash(data, len);
	utf8 = pg_server_to_any(data, len, PG_UTF8);
	if (utf8 == data)
		return simhash_feature_hash(data, len);
	h = simhash_feature_hash(utf8, strlen(utf8));
	pfree(utf8);
	return h;
}

/*
 * The text as UTF-8 (converted when the database encoding needs it; then
 * *data is palloc'd, else it points into t).
 */
void
simhash_text_utf8(text *t, const char **data, size_t *len)
{
	const char *src = VARDATA_ANY(t);
	int			srclen = VARSIZE_ANY_EXHDR(t);

	*data = src;
	*len = srclen;
	if (needs_utf8_conversion())
	{
		*data = pg_server_to_any(src, srclen, PG_UTF8);
		if (*data != src)
			*len = strlen(*data);
	}
}

/* UTF-8 bytes (a token, a shingle) as a text in the database encoding. */
text *
simhash_utf8_text(const char *utf8, size_t len)
{
	char	   *s;
	text	   *result;

	if (!needs_utf8_conversion())
		return cstring_to_text_with_len(utf8, len);
	s = pg_any_to_server(utf8, len, PG_UTF8);
	result = cstring_to_text_with_len(s, strlen(s));
	if (s != utf8)
		pfree(s);
	return result;
}

/*
 * The text as UTF-8, and a buffer for its normalised form.  Large texts
 * need a "huge" allocation: the buffer is twice the input.
 */
void
simhash_text_prepare(text *t, const char **data, size_t *len, char **buf)
{
	simhash_text_utf8(t, data, len);
	*buf = MemoryContextAllocHuge(CurrentMemoryContext,
								  simhash_tokenizer_bufsize(*len));
}
