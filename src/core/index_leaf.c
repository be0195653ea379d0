/*
 * src/core/index_leaf.c
 *		Encoding and decoding the compressed leaves of the simhash index
 *		(layout: index_leaf.h and index/am.h).  Pure C.
 */
#include "index_leaf.h"

#include <string.h>

/* Bits needed for v (0 for 0). */
static inline int
bits_for(uint64_t v)
{
	return v == 0 ? 0 : 64 - __builtin_clzll(v);
}

/* Bytes needed for v (0 for 0). */
static inline int
bytes_for(uint64_t v)
{
	return (bits_for(v) + 7) / 8;
}

/* Start an empty leaf: of entries (TIDs and dead bits) or of keys only. */
void
sv_leaf_builder_init(SvLeafBuilder *b, bool entries)
{
	b->entries = entries;
	b->count = 0;
	b->key_bytes = 0;
	b->tid_bytes = 0;
	b->off_bits = 0;
	b->base = 0;
	b->max_block = 0;
	b->max_offset = 0;
}

/* The TID code width for these maxima: (tid_bytes, off_bits). */
static void
tid_shape(uint32_t max_block, uint16_t max_offset, int *tid_bytes, int *off_bits)
{
	int			ob = bits_for(max_offset);

	if (ob < 1)
		ob = 1;
	*off_bits = ob;
	*tid_bytes = bytes_for(((uint64_t) max_block << ob) | ((UINT64_C(1) << ob) - 1));
}

/*
 * Would the leaf still fit a page with this entry added (after all the
 * others: key at least the last one)?  An empty leaf takes any entry.
 */
bool
sv_leaf_fits(const SvLeafBuilder *b, uint64_t key, uint32_t block, uint16_t offset)
{
	int			kb,
				tb = 0,
				ob;

	if (b->count == 0)
		return true;
	if (b->count >= SV_LEAF_MAX_ENTRIES)
		return false;
	kb = bytes_for(key - b->base);
	if (kb < b->key_bytes)
		kb = b->key_bytes;
	if (b->entries)
	{
		if (block <= b->max_block && offset <= b->max_offset)
			tb = b->tid_bytes;	/* the common case: no wider TIDs */
		else
			tid_shape(block > b->max_block ? block : b->max_block,
					  offset > b->max_offset ? offset : b->max_offset, &tb, &ob);
	}
	return sv_leaf_bytes(b->count + 1, kb, tb) <= SV_LEAF_CONTENTS;
}

/* Add an entry (the caller checked sv_leaf_fits()). */
void
sv_leaf_add(SvLeafBuilder *b, uint64_t key, uint32_t block, uint16_t offset)
{
	int			kb;

	if (b->count == 0)
	{
		b->base = key;
		b->max_block = 0;
		b->max_offset = 0;
		b->key_bytes = 0;
	}
	kb = bytes_for(key - b->base);
	if (kb > b->key_bytes)
		b->key_bytes = kb;
	b->keys[b->count] = key;
	if (b->entries)
	{
		if (b->count == 0 || block > b->max_block || offset > b->max_offset)
		{
			if (block > b->max_block)
				b->max_block = block;
			if (offset > b->max_offset)
				b->max_offset = offset;
			tid_shape(b->max_block, b->max_offset, &b->tid_bytes, &b->off_bits);
		}
		b->blocks[b->count] = block;
		b->offsets[b->count] = offset;
	}
	b->count++;
}

/* Little-endian store of the low n bytes of v. */
static void
store_le(uint8_t *p, uint64_t v, int n)
{
	for (int j = 0; j < n; j++)
	{
		p[j] = (uint8_t) v;
		v >>= 8;
	}
}

/*
 * Write the leaf (count >= 1) at contents (the page's, after its header);
 * returns the bytes written.  The builder is empty afterwards.
 */
size_t
sv_leaf_encode(SvLeafBuilder *b, void *contents)
{
	SvLeafHeader h;
	uint8_t    *p = (uint8_t *) contents + sizeof(SvLeafHeader);
	size_t		bytes = sv_leaf_bytes(b->count, b->key_bytes, b->tid_bytes);

	memset(&h, 0, sizeof(h));
	h.base = b->base;
	h.count = (uint16_t) b->count;
	h.key_bytes = (uint8_t) b->key_bytes;
	h.tid_bytes = (uint8_t) b->tid_bytes;
	h.off_bits = (uint8_t) b->off_bits;
	memcpy(contents, &h, sizeof(h));
	for (int i = 0; i < b->count; i++, p += b->key_bytes)
		store_le(p, b->keys[i] - b->base, b->key_bytes);
	if (b->entries)
	{
		for (int i = 0; i < b->count; i++, p += b->tid_bytes)
			store_le(p, ((uint64_t) b->blocks[i] << b->off_bits) | b->offsets[i],
					 b->tid_bytes);
		memset(p, 0, ((size_t) b->count + 7) / 8);	/* nothing dead */
	}
	b->count = 0;
	return bytes;
}

/*
 * Is the leaf at contents, of `bytes` bytes (pd_lower minus the page
 * header), well formed: an entry leaf (entries) or a key leaf, with its
 * count and widths in range, and exactly the size they give?
 */
bool
sv_leaf_layout_ok(const void *contents, size_t bytes, bool entries, const char **problem)
{
	SvLeafHeader h;

	if (bytes < sizeof(SvLeafHeader))
	{
		*problem = "the leaf is shorter than its header";
		return false;
	}
	memcpy(&h, contents, sizeof(h));
	if (h.count < 1 || h.count > SV_LEAF_MAX_ENTRIES)
	{
		*problem = "the leaf's entry count is out of range";
		return false;
	}
	if (h.key_bytes > SV_LEAF_MAX_KEY_BYTES)
	{
		*problem = "the leaf's key width is out of range";
		return false;
	}
	if (entries ? (h.tid_bytes < 1 || h.tid_bytes > SV_LEAF_MAX_TID_BYTES ||
				   h.off_bits < 1 || h.off_bits > SV_LEAF_MAX_OFF_BITS ||
				   h.tid_bytes * 8 - h.off_bits > 32)
		: (h.tid_bytes != 0 || h.off_bits != 0))
	{
		*problem = "the leaf's TID width is out of range";
		return false;
	}
	if (sv_leaf_bytes(h.count, h.key_bytes, h.tid_bytes) != bytes)
	{
		*problem = "the leaf's size does not match its count and widths";
		return false;
	}
	return true;
}

/* Open a checked leaf for reading. */
void
sv_leaf_open(const void *contents, SvLeaf *leaf)
{
	SvLeafHeader h;
	const uint8_t *p = (const uint8_t *) contents + sizeof(SvLeafHeader);

	memcpy(&h, contents, sizeof(h));
	leaf->base = h.base;
	leaf->count = h.count;
	leaf->key_bytes = h.key_bytes;
	leaf->tid_bytes = h.tid_bytes;
	leaf->off_bits = h.off_bits;
	leaf->keys = p;
	p += (size_t) h.count * h.key_bytes;
	if (h.tid_bytes > 0)
	{
		leaf->tids = p;
		leaf->dead = p + (size_t) h.count * h.tid_bytes;
	}
	else
		leaf->tids = leaf->dead = NULL;
}

/*
 * Does key k & mask reach t (past: exceed it)?  The predicate sv_leaf_seek()
 * searches for, false then true along a sorted leaf.
 */
static inline bool
key_reaches(uint64_t k, uint64_t t, uint64_t mask, bool past)
{
	return past ? (k & mask) > t : (k & mask) >= t;
}

/* key_reaches() for entry i */
static inline bool
seek_reached(const SvLeaf *leaf, int i, uint64_t t, uint64_t mask, bool past)
{
	return key_reaches(sv_leaf_key(leaf, i), t, mask, past);
}

/*
 * The first entry at or after `from` whose key & mask is at least key &
 * mask (past: greater than it); count if none.  Keys are hashes (or their
 * permutations), near-uniform over the leaf's range, so the search guesses
 * the position by interpolation between entry `from` and the last entry,
 * and gallops from the guess (steps 1, 2, 4, ...) to a bracket it then
 * bisects: O(log d) keys for a guess d entries off, never more than about
 * 2 log2(count) on a skewed or duplicate-heavy leaf.  A binary search of a
 * leaf of ~800 keys reads ~10 keys on as many cache lines, each a miss in
 * a large index; the guess is usually within a line or two.  On a leaf
 * that is not sorted (corrupt) it still returns a position in from .. count.
 */
int
sv_leaf_seek(const SvLeaf *leaf, int from, uint64_t key, uint64_t mask, bool past)
{
	uint64_t	t = key & mask;
	int			lo = from,
				hi = leaf->count - 1,
				g,
				step;
	uint64_t	first,
				last,
				target;

	if (from < 0)
		lo = from = 0;
	if (from >= leaf->count)
		return leaf->count;
	first = sv_leaf_key(leaf, lo);
	if (key_reaches(first, t, mask, past))
		return lo;
	last = sv_leaf_key(leaf, hi);
	if (!key_reaches(last, t, mask, past))
		return leaf->count;
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
	if (seek_reached(leaf, g, t, mask, past))
	{
		hi = g;
		for (step = 1; hi - step > lo; step *= 2)
		{
			if (!seek_reached(leaf, hi - step, t, mask, past))
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
			if (seek_reached(leaf, lo + step, t, mask, past))
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

		if (seek_reached(leaf, mid, t, mask, past))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* The first entry whose key & mask is at least key & mask (count if none). */
int
sv_leaf_lower_bound(const SvLeaf *leaf, uint64_t key, uint64_t mask)
{
	return sv_leaf_seek(leaf, 0, key, mask, false);
}

/* Mark entry i (< count) of the checked entry leaf at contents dead. */
void
sv_leaf_set_dead(void *contents, int i)
{
	SvLeaf		leaf;

	sv_leaf_open(contents, &leaf);
	((uint8_t *) leaf.dead)[i / 8] |= (uint8_t) (1 << (i % 8));
}
