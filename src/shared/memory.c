/*
 * memory.c
 *		Large allocations shared by the parts (the pair search, the index
 *		build's runs, the radius join): transparent huge pages advised for
 *		arrays that are written once from start to end.
 */
#include "shared/memory.h"

#include <sys/mman.h>

#include "utils/memutils.h"

/* the size of a transparent huge page on x86-64 and arm64 (4kB base pages) */
#define SIMHASH_HUGE_PAGE ((uintptr_t) 2 * 1024 * 1024)

/*
 * MemoryContextAllocHuge(cxt, size), the whole 2MB pages inside it advised
 * MADV_HUGEPAGE when it spans a few: the search's arrays are written once
 * from start to end, each page first touched, and where transparent huge
 * pages are "madvise" (Debian's default) a page fault per 4kB page was a
 * quarter of the 1M-row radius join's time on a virtual machine; per 2MB
 * page it is negligible.  The advice is only a hint: without THP nothing
 * changes.
 */
void *
simhash_alloc_huge(MemoryContext cxt, Size size)
{
	void	   *p;

#ifdef MADV_HUGEPAGE
	if (size >= 2 * SIMHASH_HUGE_PAGE)
	{
		uintptr_t	lo,
					hi;

		/*
		 * Rounded up so that the block (malloc's mapping of its own, which
		 * Linux places on a 2MB boundary) ends on one: its last page can be
		 * huge too.  Its first: the headers before p are in its first 4kB.
		 */
		size = TYPEALIGN(SIMHASH_HUGE_PAGE, size + 4096) - 4096;
		p = MemoryContextAllocHuge(cxt, size);
		lo = TYPEALIGN_DOWN(SIMHASH_HUGE_PAGE, (uintptr_t) p);
		if (lo < TYPEALIGN_DOWN(4096, (uintptr_t) p))
			lo += SIMHASH_HUGE_PAGE;
		/* only pages that hold some of the block: no other memory is advised */
		hi = TYPEALIGN_DOWN(SIMHASH_HUGE_PAGE, TYPEALIGN(4096, (uintptr_t) p + size));
		if (hi > lo)
			(void) madvise((void *) lo, hi - lo, MADV_HUGEPAGE);
		return p;
	}
#endif
	p = MemoryContextAllocHuge(cxt, size);
	return p;
}
