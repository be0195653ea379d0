/*
 * insert.c
 *		Inserting into a simhash index (design: am.h): append to a pending
 *		lane (pending.c); when the lanes are long, sort them into a run (and
 *		merge runs) unless another backend is already doing so.
 */
#include "postgres.h"

#include "am.h"
#include "simhash.h"

/*
 * entries in the lanes' full pages that trigger a flush (scans read them
 * all, and the tail page of each lane): 2,040, about 32 lane pages of 64
 * entries (pending.c).  At 200k rows a flush costs ~5M instructions
 * whatever its size (callgrind: ~2.7k per insert at this limit, ~10k at
 * 512), so a lower limit, for scans, costs inserts more.  At 1M rows
 * (20,000 inserts, bench/inserts_instructions.sh 1000000 20000) flushes and
 * merges cost 11.7k per insert with merge factor 4, 7.7k with 2 (policy.c);
 * a limit of 4,080 would make that 6.8k, for twice the pending entries
 * every scan reads.
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
