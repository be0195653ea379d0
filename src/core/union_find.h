/*
 * union_find.h
 *		A union-find over row numbers 0 .. nrows - 1 (nrows below 2^32 - 1):
 *		the connected components of the pairs of simhash_groups() and the
 *		shared-key and MinHash group jobs.  Pure C: the caller allocates the
 *		arrays (simhash_union_bytes()), so the server can account for them
 *		in maintenance_work_mem.
 *
 * Roots are their component's least row (a union keeps the smaller root),
 * and find halves paths.  A bit per row records whether the row was in a
 * pair at all: rows never paired are components of their own, and the
 * caller can skip them without a find.
 */
#ifndef SIMHASH_UNION_FIND_H
#define SIMHASH_UNION_FIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the most rows: row numbers are 32 bits, UINT32_MAX is left unused */
#define SIMHASH_UNION_MAX_ROWS ((uint64_t) UINT32_MAX - 1)

typedef struct SimhashUnion
{
	uint64_t	nrows;
	uint32_t   *parent;			/* nrows entries; roots are least rows */
	uint8_t    *linked;			/* bit per row: in a pair */
} SimhashUnion;

/* Bytes of the arrays for nrows rows: 4 per row, plus a bit. */
extern size_t simhash_union_bytes(uint64_t nrows);

/*
 * Every row its own component.  parent has nrows entries (at least one),
 * linked nrows / 8 + 1 bytes; nrows is at most SIMHASH_UNION_MAX_ROWS.
 */
extern void simhash_union_init(SimhashUnion *u, uint64_t nrows,
							   uint32_t *parent, uint8_t *linked);

/* The root of row's component: its least row. */
extern uint32_t simhash_union_find(SimhashUnion *u, uint64_t row);

/* Join the components of rows a and b, and mark both as linked. */
extern void simhash_union_pair(SimhashUnion *u, uint64_t a, uint64_t b);

/* Whether row was in any pair. */
static inline bool
simhash_union_linked(const SimhashUnion *u, uint64_t row)
{
	return (u->linked[row / 8] & (1 << (row % 8))) != 0;
}

#endif							/* SIMHASH_UNION_FIND_H */
