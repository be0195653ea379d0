/*
 * sentences.h
 *		Sentence fingerprints (the nshash method): a text's n longest
 *		distinct sentences, each hashed.  Pure C: no PostgreSQL headers.
 *
 * Rules (fixed forever; stored fingerprints depend on them):
 *	- input is UTF-8;
 *	- a sentence ends at a line break (LF, VT, FF, CR, U+0085, U+2028,
 *	  U+2029), at 。 ． ！ ？ ； ｡ (U+3002, U+FF0E, U+FF01, U+FF1F, U+FF1B,
 *	  U+FF61) wherever they occur, and at . ! ? ; when followed, after any
 *	  closing quotes or brackets ( " ' ) ] } ” ’ » ) and further . ! ? ;,
 *	  by whitespace or the end of the text;
 *	- a sentence is normalised to its tokens (tokenizer.h: letters and
 *	  digits, case-folded, full-width ASCII as ASCII) joined by one space,
 *	  so whitespace, case, width and punctuation do not matter;
 *	- its length is the number of characters in its tokens (letters,
 *	  digits and combining marks; not spaces or punctuation);
 *	- sentences shorter than min_length are ignored; equal normalised
 *	  sentences count once, at their first position;
 *	- the n longest remain (ties: the earlier first); each is hashed with
 *	  XXH3-64 (seed 0) over its normalised UTF-8 bytes, the same hash as
 *	  simhash_hash(array_to_string(simhash_tokens(sentence), ' '));
 *	- the hashes are returned in ascending order as signed 64-bit values.
 * A text without a qualifying sentence has no fingerprint (zero hashes).
 *
 * Work: the boundary scan reads every byte once and bounds each sentence's
 * length from above (ASCII letters and digits plus non-ASCII characters);
 * sentences are then tokenized longest bound first (taken from a heap, so
 * only those tokenized are ordered), and the scan stops as soon as no
 * remaining bound can reach the n-th longest length found, so usually only
 * a few sentences per text are tokenized and hashed.  Memory: 24 bytes per
 * sentence that may reach min_length, 32 more (and the hash set's 8 to 16)
 * per distinct one tokenized; no sort uses a second array.
 */
#ifndef SIMHASH_SENTENCES_H
#define SIMHASH_SENTENCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * realloc-like allocator: (arg, ptr, size) returns a block of size bytes
 * keeping the first bytes of ptr (NULL: a new block); size 0 frees ptr and
 * returns NULL.  It must not return NULL for size > 0 (fail by other
 * means: longjmp, abort).
 */
typedef void *(*SentenceReallocFn) (void *arg, void *ptr, size_t size);

typedef struct SentenceSpan
{
	size_t		start;			/* byte offset of the sentence */
	size_t		len;			/* its length in bytes */
	size_t		bound;			/* upper bound of its length in characters */
} SentenceSpan;

typedef struct SentenceCandidate
{
	uint64_t	hash;
	size_t		length;			/* characters */
	size_t		start;			/* first position */
	size_t		slot;			/* its slot in the hash set */
} SentenceCandidate;

/* Work space: reusable from one text to the next; all fields private. */
typedef struct SentenceWork
{
	SentenceReallocFn realloc_fn;
	void	   *arg;
	SentenceSpan *spans;
	size_t		spans_cap;
	SentenceCandidate *cands;
	size_t		cands_cap;
	size_t	   *heap;			/* min-heap of the longest lengths */
	size_t		heap_cap;
	size_t	   *set;			/* hash -> candidate index + 1 (0: empty) */
	size_t		set_cap;		/* a power of two */
	bool		set_dirty;		/* a call did not finish: clear the set */
	char	   *buf;			/* a normalised sentence */
	size_t		buf_cap;
	int64_t    *result;
	size_t		result_cap;
	void		(*check) (void *arg);	/* called now and then (may be NULL) */
	void	   *check_arg;
} SentenceWork;

extern void sentence_work_init(SentenceWork *w, SentenceReallocFn realloc_fn,
							   void *arg);
/*
 * Have sentence_hashes_compute() call check(arg) at least every 16 MB of
 * text scanned, every 1024 sentences and every 65536 tokens tokenized, and
 * every 4096 elements a sort handles (the server checks for interrupts there; an error thrown
 * from it leaves w usable).
 */
extern void sentence_work_set_check(SentenceWork *w, void (*check) (void *arg),
									void *arg);
/* Bytes held by the work space. */
extern size_t sentence_work_size(const SentenceWork *w);
extern void sentence_work_free(SentenceWork *w);

/*
 * The fingerprints of in[0 .. len): up to n hashes, ascending, in *hashes
 * (valid until the next call with w); returns how many.  n >= 1 and
 * min_length >= 1.
 */
extern size_t sentence_hashes_compute(SentenceWork *w, const char *in,
									  size_t len, int n, int min_length,
									  const int64_t **hashes);

#endif							/* SIMHASH_SENTENCES_H */
