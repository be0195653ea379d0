/*
 * src/core/index_leaf.h
 *		The compressed leaves of the simhash index's runs (format version 2;
 *		the layout and its arithmetic are in index/am.h): pure encoding,
 *		decoding and searching (sv_seek(), sv_leaf_match()), no PostgreSQL
 *		headers, so that the server (index/leaf.c, index/run_read.c,
 *		index/run_write.c), the page checks (core/index_pages.c), the unit
 *		test (test/unit/test_index_leaf.c) and the fuzz target share them.
 *
 * A leaf holds `count` entries sorted by key (a table's permuted hash):
 *	SvLeafHeader (16 bytes) | count x key_bytes | count x tid_bytes | dead bitmap
 * Each key is stored as key - base (base = the first key), little-endian,
 * in the leaf's key_bytes (0 .. 8).  An entry leaf (table 0's tree, page
 * kind SV_LEAF) also stores each TID as the code (block << off_bits) |
 * offset in tid_bytes (1 .. 6), and a dead bitmap of ceil(count / 8) bytes
 * (bit i % 8 of byte i / 8), the one place VACUUM marks.  A key leaf (the
 * other tables' trees, SV_KEY_LEAF) stores keys only: tid_bytes = off_bits
 * = 0, no bitmap.
 *
 * sv_leaf_layout_ok() is the check every reader relies on (sizes in range
 * and the page's pd_lower equal to the size they give); the accessors
 * assume it passed.
 */
#ifndef SIMHASH_INDEX_LEAF_H
#define SIMHASH_INDEX_LEAF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* bytes of a page's contents: BLCKSZ - page header - special space */
#define SV_LEAF_CONTENTS	(8192 - 24 - 16)
/* most entries in one leaf (also a bound on the writer's memory) */
#define SV_LEAF_MAX_ENTRIES 4096
#define SV_LEAF_MAX_KEY_BYTES 8
#define SV_LEAF_MAX_TID_BYTES 6
#define SV_LEAF_MAX_OFF_BITS 16

typedef struct SvLeafHeader
{
	uint64_t	base;			/* the first entry's key */
	uint16_t	count;			/* entries, 1 .. SV_LEAF_MAX_ENTRIES */
	uint8_t		key_bytes;		/* bytes of each key - base, 0 .. 8 */
	uint8_t		tid_bytes;		/* bytes of each TID code; 0 in a key leaf */
	uint8_t		off_bits;		/* low bits of a TID code holding the offset */
	uint8_t		pad[3];
} SvLeafHeader;

/* a leaf opened for reading (pointers into the page) */
typedef struct SvLeaf
{
	const uint8_t *keys;
	const uint8_t *tids;		/* NULL in a key leaf */
	const uint8_t *dead;		/* NULL in a key leaf */
	uint64_t	base;
	int			count;
	int			key_bytes;
	int			tid_bytes;
	int			off_bits;
} SvLeaf;

/* a leaf being filled by a writer, entry by entry in key order */
typedef struct SvLeafBuilder
{
	bool		entries;		/* an entry leaf (TIDs, dead bitmap) */
	int			count;
	int			key_bytes;
	int			tid_bytes;
	int			off_bits;
	uint64_t	base;
	uint32_t	max_block;
	uint16_t	max_offset;
	uint64_t	keys[SV_LEAF_MAX_ENTRIES];
	uint32_t	blocks[SV_LEAF_MAX_ENTRIES];
	uint16_t	offsets[SV_LEAF_MAX_ENTRIES];
} SvLeafBuilder;

/* Bytes a leaf of this shape takes (its header included). */
static inline size_t
sv_leaf_bytes(int count, int key_bytes, int tid_bytes)
{
	return sizeof(SvLeafHeader) + (size_t) count * (key_bytes + tid_bytes) +
		(tid_bytes > 0 ? ((size_t) count + 7) / 8 : 0);
}

/*
 * Little-endian load of 8 bytes at p: a leaf is always in a page image,
 * whose special space (16 bytes) follows any field of it, so a field of
 * n < 8 bytes is read as 8 and masked with sv_load_mask(n).
 */
static inline uint64_t
sv_load8_le(const uint8_t *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* The mask of the low n (0 .. 8) bytes. */
static inline uint64_t
sv_load_mask(int n)
{
	return n >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * n)) - 1;
}

/* Little-endian load of n (0 .. 8) bytes (see sv_load8_le()). */
static inline uint64_t
sv_load_le(const uint8_t *p, int n)
{
	return sv_load8_le(p) & sv_load_mask(n);
}

/* Key i of an opened leaf. */
static inline uint64_t
sv_leaf_key(const SvLeaf *leaf, int i)
{
	return leaf->base + sv_load_le(leaf->keys + (size_t) i * leaf->key_bytes, leaf->key_bytes);
}

/* TID i of an opened entry leaf. */
static inline void
sv_leaf_tid(const SvLeaf *leaf, int i, uint32_t *block, uint16_t *offset)
{
	uint64_t	code = sv_load_le(leaf->tids + (size_t) i * leaf->tid_bytes, leaf->tid_bytes);

	*block = (uint32_t) (code >> leaf->off_bits);
	*offset = (uint16_t) (code & ((UINT64_C(1) << leaf->off_bits) - 1));
}

/* Is entry i of an opened entry leaf marked dead? */
static inline bool
sv_leaf_is_dead(const SvLeaf *leaf, int i)
{
	return (leaf->dead[i / 8] >> (i % 8)) & 1;
}

#if defined(__GNUC__)
#define SV_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define SV_ALWAYS_INLINE inline
#endif

/* key i of a sorted array, for sv_seek() */
typedef uint64_t (*SvKeyAt) (const void *array, int i);

/* Does key k & mask reach t (past: exceed it)?  What sv_seek() looks for. */
static inline bool
sv_key_reaches(uint64_t k, uint64_t t, uint64_t mask, bool past)
{
	return past ? (k & mask) > t : (k & mask) >= t;
}

/*
 * The first of the entries from .. count - 1 of a sorted array whose key
 * (key_at) & mask is at least key & mask (past: greater than it), or count
 * if none; mask keeps high bits, so that key & mask is sorted too.  The
 * keys are hashes or their permutations, near-uniform over the range, so
 * the position is guessed by interpolation between entry `from` and the
 * last entry, and found by galloping from the guess (steps 1, 2, 4, ...) to
 * a bracket that is then bisected: O(log d) keys for a guess d entries off,
 * never more than about 2 log2(count) (a skewed or duplicate-heavy array).
 * A binary search of a leaf of ~800 keys reads ~10 keys on as many cache
 * lines, each a miss in a large index; the guess is usually within a line
 * or two.  On an array that is not sorted (a corrupt page) the result is
 * still in from .. count.  Inlined so that key_at is (leaves:
 * sv_leaf_seek(); inner pages: index/run_read.c).
 */
static SV_ALWAYS_INLINE int
sv_seek(const void *array, SvKeyAt key_at, int from, int count, uint64_t key,
		uint64_t mask, bool past)
{
	uint64_t	t = key & mask;
	int			lo,
				hi = count - 1,
				g,
				step;
	uint64_t	first,
				last,
				target;

	if (from < 0)
		from = 0;
	if (from >= count)
		return count;
	lo = from;
	first = key_at(array, lo);
	if (sv_key_reaches(first, t, mask, past))
		return lo;
	last = key_at(array, hi);
	if (!sv_key_reaches(last, t, mask, past))
		return count;
	/* not reached at lo, reached at hi: the answer is in lo + 1 .. hi */
	if (hi - lo <= 1)
		return hi;
	/* the largest key whose key & mask is t, when past */
	target = past ? (t | ~mask) : t;
	if (target <= first || last <= first)
		g = lo + 1;
	else if (target >= last)
		g = hi - 1;
	else
		g = lo + 1 + (int) ((double) (target - first) / (double) (last - first) *
							(double) (hi - lo - 1));
	g = g <= lo ? lo + 1 : g >= hi ? hi - 1 : g;
	if (sv_key_reaches(key_at(array, g), t, mask, past))
	{
		hi = g;
		for (step = 1; hi - step > lo; step *= 2)
		{
			if (!sv_key_reaches(key_at(array, hi - step), t, mask, past))
			{
				lo = hi - step;
				break;
			}
			hi -= step;
		}
	}
	else
	{
		lo = g;
		for (step = 1; lo + step < hi; step *= 2)
		{
			if (sv_key_reaches(key_at(array, lo + step), t, mask, past))
			{
				hi = lo + step;
				break;
			}
			lo += step;
		}
	}
	/* not reached at lo, reached at hi */
	while (hi - lo > 1)
	{
		int			mid = lo + (hi - lo) / 2;

		if (sv_key_reaches(key_at(array, mid), t, mask, past))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

extern void sv_leaf_builder_init(SvLeafBuilder *b, bool entries);
extern bool sv_leaf_fits(const SvLeafBuilder *b, uint64_t key, uint32_t block, uint16_t offset);
extern void sv_leaf_add(SvLeafBuilder *b, uint64_t key, uint32_t block, uint16_t offset);
extern size_t sv_leaf_encode(SvLeafBuilder *b, void *contents);
extern bool sv_leaf_layout_ok(const void *contents, size_t bytes, bool entries,
							  const char **problem);
extern void sv_leaf_open(const void *contents, SvLeaf *leaf);
extern int	sv_leaf_seek(const SvLeaf *leaf, int from, uint64_t key, uint64_t mask,
						 bool past);
extern int	sv_leaf_lower_bound(const SvLeaf *leaf, uint64_t key, uint64_t mask);
extern void sv_leaf_set_dead(void *contents, int i);

/* the key loops of sv_leaf_match() (the same results; a test compares them) */
typedef enum SvMatchImpl
{
	SV_MATCH_PORTABLE,
	SV_MATCH_POPCNT,			/* x86-64's popcnt instruction */
	SV_MATCH_AVX2				/* x86-64's AVX2, four keys a step */
} SvMatchImpl;

extern int	sv_leaf_match(const SvLeaf *leaf, int from, int end, uint64_t qkey,
						  int radius, uint16_t *hits);
extern bool sv_leaf_match_has(SvMatchImpl impl);
extern int	sv_leaf_match_with(SvMatchImpl impl, const SvLeaf *leaf, int from, int end,
							   uint64_t qkey, int radius, uint16_t *hits);

#endif							/* SIMHASH_INDEX_LEAF_H */
