/*
 * insert.c
 *		Inserting into a simhash index (design: README.md): append to a pending
 *		lane (pending.c); when the lanes are long, sort them into a run (and
 *		merge runs) unless another backend is already doing so.
 */
#include "postgres.h"

#include "am.h"
#include "simhash.h"

/*
 * entries in the lanes' full pages that trigger a flush (scans read them
 * all, and the tail page of each lane): 2,040, about 32 lane pages of 64
 * entries (pending.c).  A flush costs about the same whatever its size, so
 * a lower limit, which scans would prefer, costs inserts more; a higher one
 * makes every scan read more pending entries
 * (bench/inserts_instructions.sh, bench/inserts_lookups.sh).
 */
#define SIMHASH_PENDING_LIMIT (4 * SIMHASH_PAGE_ITEMS)

bool
simhash_insert(Relation index, Datum *values, bool *isnull,
			   ItemPointer ht_ctid, Relation heapRel,
			   IndexUniqueCheck checkUnique, bool indexUnchanged,
			   IndexInfo *indexInfo)
{
	if (isnull[0])
	{
		/* kept for ordered scans, which return every row */
		simhash_nulls_append(index, ht_ctid);
		return false;
	}
	if (simhash_pending_append(index, simhash_key_hash(index, values[0]), ht_ctid)
		>= SIMHASH_PENDING_LIMIT)
		simhash_flush_and_merge(index, false, false, 1.0);
	return false;
}
