/*
 * insert.c
 *		Inserting into a simhash index (design: am.h): append to the pending list; when
 *		it is long, sort it into a run (and merge runs) unless another
 *		backend is already doing so.
 */
#include "postgres.h"

#include "am.h"
#include "simhash.h"

/* pending entries that trigger a flush: scans read them all */
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
		simhash_list_append(index, 0, ht_ctid, true);
		return false;
	}
	if (simhash_list_append(index, DatumGetSimhash64(values[0]), ht_ctid, false)
		>= SIMHASH_PENDING_LIMIT)
		simhash_flush_and_merge(index, false, false, 1.0);
	return false;
}
