/*
 * src/core/index_leaf.c
 *		Encoding and decoding the compressed leaves of the simhash index
 *		(layout: index_leaf.h and index/am.h).  Pure C.
 */
#include "index_leaf.h"

#include <string.h>

/*
 * The key loop (sv_leaf_match()): PGXS builds without -mpopcnt or -mavx2,
 * so on x86-64 it is also compiled for the popcnt instruction and for
 * AVX2, and the best the CPU has is chosen at run time.
 */
#if defined(__GNUC__) && defined(__x86_64__)
#define SV_MATCH_X86 1
#include <immintrin.h>
#endif

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
 * Little-endian store of 8 bytes at p, for a field of n < 8 bytes followed
 * by at least 8 - n bytes of the leaf stored after it: v below 2^(8n) has
 * zero bytes above its n, which the next fields overwrite.
 */
static inline void
store8_le(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
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
	const uint8_t *end = (const uint8_t *) contents + bytes;

	memset(&h, 0, sizeof(h));
	h.base = b->base;
	h.count = (uint16_t) b->count;
	h.key_bytes = (uint8_t) b->key_bytes;
	h.tid_bytes = (uint8_t) b->tid_bytes;
	h.off_bits = (uint8_t) b->off_bits;
	memcpy(contents, &h, sizeof(h));
	/*
	 * A field as 8 bytes (store8_le()) while they end within the leaf: the
	 * fields after it overwrite its zero high bytes.
	 */
	for (int i = 0; i < b->count; i++, p += b->key_bytes)
	{
		if (p + 8 <= end && b->key_bytes > 0)
			store8_le(p, b->keys[i] - b->base);
		else
			store_le(p, b->keys[i] - b->base, b->key_bytes);
	}
	if (b->entries)
	{
		for (int i = 0; i < b->count; i++, p += b->tid_bytes)
		{
			uint64_t	code = ((uint64_t) b->blocks[i] << b->off_bits) | b->offsets[i];

			if (p + 8 <= end)
				store8_le(p, code);
			else
				store_le(p, code, b->tid_bytes);
		}
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

/* Key i of the opened leaf `array` (sv_seek()'s accessor). */
static uint64_t
leaf_key_at(const void *array, int i)
{
	return sv_leaf_key((const SvLeaf *) array, i);
}

/*
 * The first entry at or after `from` whose key & mask is at least key &
 * mask (past: greater than it); count if none (sv_seek(): interpolation,
 * then galloping).  On a leaf that is not sorted (corrupt) it still
 * returns a position in from .. count.
 */
int
sv_leaf_seek(const SvLeaf *leaf, int from, uint64_t key, uint64_t mask, bool past)
{
	return sv_seek(leaf, leaf_key_at, from, leaf->count, key, mask, past);
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

/*
 * The body of the key loop: entries from .. end - 1 of an opened leaf
 * within radius of qkey, their positions appended to hits[] after the n
 * already there; returns the new count.
 */
static inline __attribute__((always_inline)) int
match_scalar(const SvLeaf *leaf, int from, int end, uint64_t qkey, int radius,
			 uint16_t *hits, int n)
{
	const uint8_t *p = leaf->keys + (size_t) from * leaf->key_bytes;
	int			kb = leaf->key_bytes;
	uint64_t	keep = sv_load_mask(kb);
	uint64_t	base = leaf->base;

	for (int i = from; i < end; i++, p += kb)
	{
		uint64_t	x = (base + (sv_load8_le(p) & keep)) ^ qkey;

		if (__builtin_expect(__builtin_popcountll(x) <= radius, 0))
			hits[n++] = (uint16_t) i;
	}
	return n;
}

/* the key loop with the portable popcount */
static int
match_portable(const SvLeaf *leaf, int from, int end, uint64_t qkey, int radius,
			   uint16_t *hits)
{
	return match_scalar(leaf, from, end, qkey, radius, hits, 0);
}

#ifdef SV_MATCH_X86
/* the key loop with the popcnt instruction */
__attribute__((target("popcnt")))
static int
match_popcnt(const SvLeaf *leaf, int from, int end, uint64_t qkey, int radius,
			 uint16_t *hits)
{
	return match_scalar(leaf, from, end, qkey, radius, hits, 0);
}

/*
 * The key loop with AVX2, four keys a step: two 16-byte loads hold keys
 * i, i + 1 and i + 2, i + 3 (key_bytes <= 8), a byte shuffle widens each
 * to its 64-bit lane (zeroing the bytes above key_bytes), then base is
 * added, qkey xored, the bits counted by nibble lookup (vpshufb) and summed
 * per lane (vpsadbw), and compared with the radius; the rest one by one.
 * The second load reads at most 16 - 2 * key_bytes bytes past the last
 * key, within the page (its special space follows the leaf: see
 * sv_load8_le()).
 */
__attribute__((target("avx2,popcnt")))
static int
match_avx2(const SvLeaf *leaf, int from, int end, uint64_t qkey, int radius,
		   uint16_t *hits)
{
	/* per key_bytes, the shuffle widening two keys of a 16-byte load */
	static int8_t ctl[SV_LEAF_MAX_KEY_BYTES + 1][16];
	static bool ctl_made = false;
	int			kb = leaf->key_bytes;
	const uint8_t *p = leaf->keys + (size_t) from * kb;
	__m256i		shuf,
				lut,
				low4,
				vbase,
				vq,
				vr;
	int			i = from,
				n = 0;

	if (kb == 0 || end - from < 4)
		return match_scalar(leaf, from, end, qkey, radius, hits, 0);
	if (!ctl_made)
	{
		for (int w = 0; w <= SV_LEAF_MAX_KEY_BYTES; w++)
			for (int j = 0; j < 8; j++)
			{
				ctl[w][j] = (int8_t) (j < w ? j : -128);
				ctl[w][8 + j] = (int8_t) (j < w ? w + j : -128);
			}
		ctl_made = true;
	}
	shuf = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) ctl[kb]));
	lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
						   0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
	low4 = _mm256_set1_epi8(0x0f);
	vbase = _mm256_set1_epi64x((long long) leaf->base);
	vq = _mm256_set1_epi64x((long long) qkey);
	vr = _mm256_set1_epi64x(radius);
	for (; i + 4 <= end; i += 4, p += 4 * kb)
	{
		__m256i		v = _mm256_inserti128_si256(
			_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) p)),
			_mm_loadu_si128((const __m128i *) (p + 2 * kb)), 1);
		__m256i		c;
		int			over;

		v = _mm256_xor_si256(_mm256_add_epi64(_mm256_shuffle_epi8(v, shuf), vbase), vq);
		c = _mm256_add_epi8(_mm256_shuffle_epi8(lut, _mm256_and_si256(v, low4)),
							_mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4)));
		c = _mm256_sad_epu8(c, _mm256_setzero_si256());
		over = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(c, vr)));
		if (__builtin_expect(over != 0xF, 0))
			for (int k = 0; k < 4; k++)
				if (!(over & (1 << k)))
					hits[n++] = (uint16_t) (i + k);
	}
	return match_scalar(leaf, i, end, qkey, radius, hits, n);
}
#endif

/* Can this CPU run the key loop impl? */
bool
sv_leaf_match_has(SvMatchImpl impl)
{
#ifdef SV_MATCH_X86
	__builtin_cpu_init();
	if (impl == SV_MATCH_POPCNT)
		return __builtin_cpu_supports("popcnt");
	if (impl == SV_MATCH_AVX2)
		return __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("avx2");
#endif
	return impl == SV_MATCH_PORTABLE;
}

/* sv_leaf_match() by impl (which the CPU must have: sv_leaf_match_has()) */
int
sv_leaf_match_with(SvMatchImpl impl, const SvLeaf *leaf, int from, int end,
				   uint64_t qkey, int radius, uint16_t *hits)
{
#ifdef SV_MATCH_X86
	if (impl == SV_MATCH_AVX2)
		return match_avx2(leaf, from, end, qkey, radius, hits);
	if (impl == SV_MATCH_POPCNT)
		return match_popcnt(leaf, from, end, qkey, radius, hits);
#endif
	return match_portable(leaf, from, end, qkey, radius, hits);
}

/*
 * The entries from .. end - 1 of an opened leaf (0 <= from <= end <=
 * count) whose key is within radius (Hamming distance) of qkey: their
 * positions into hits[] (room for end - from), in order; returns their
 * number.  The scan of a prefix's keys that every probe does (at 10M rows
 * about 150 keys), by the best loop this CPU can run.
 */
int
sv_leaf_match(const SvLeaf *leaf, int from, int end, uint64_t qkey, int radius,
			  uint16_t *hits)
{
	static int	best = -1;

	if (__builtin_expect(best < 0, 0))
		best = sv_leaf_match_has(SV_MATCH_AVX2) ? SV_MATCH_AVX2 :
			sv_leaf_match_has(SV_MATCH_POPCNT) ? SV_MATCH_POPCNT : SV_MATCH_PORTABLE;
	return sv_leaf_match_with((SvMatchImpl) best, leaf, from, end, qkey, radius, hits);
}
