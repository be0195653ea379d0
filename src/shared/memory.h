/*
 * memory.h
 *		Large allocations shared by the parts: the arrays of the pair search,
 *		of the index build's runs and of the radius join.
 */
#ifndef SIMHASH_SHARED_MEMORY_H
#define SIMHASH_SHARED_MEMORY_H

#include "postgres.h"

#include "utils/palloc.h"

/* MemoryContextAllocHuge, advising transparent huge pages for a large array */
extern void *simhash_alloc_huge(MemoryContext cxt, Size size);

#endif							/* SIMHASH_SHARED_MEMORY_H */
