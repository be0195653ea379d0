/*
 * citus_catalog.h
 *		Citus's catalog as the Citus join hook and the dedup jobs read it:
 *		which column a table is hash-distributed by.  The extension does not
 *		depend on Citus: its catalog is looked up by name.
 */
#ifndef SIMHASH_SHARED_CITUS_CATALOG_H
#define SIMHASH_SHARED_CITUS_CATALOG_H

#include "postgres.h"

#include "access/attnum.h"

/*
 * The distribution column of relid if it is a hash-distributed Citus table,
 * else InvalidAttrNumber (also without Citus).
 */
extern AttrNumber simhash_citus_hash_column(Oid relid);

#endif							/* SIMHASH_SHARED_CITUS_CATALOG_H */
