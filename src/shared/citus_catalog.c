/*
 * citus_catalog.c
 *		Citus's catalog as the Citus join hook (join/citus.c) and the dedup
 *		jobs (dedup/citus_work.c, dedup/citus_groups_into.c) read it: which
 *		column a table is hash-distributed by.  See citus_catalog.h.
 */
#include "shared/citus_catalog.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "nodes/primnodes.h"
#include "nodes/readfuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/*
 * The distribution column of relid if it is a hash-distributed Citus
 * table, else InvalidAttrNumber (also without Citus); from Citus's catalog
 * pg_dist_partition (partmethod 'h', partkey the column's Var as text).
 */
AttrNumber
simhash_citus_hash_column(Oid relid)
{
	Oid			catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	Relation	rel;
	TupleDesc	desc;
	SysScanDesc scan;
	HeapTuple	tuple;
	AttrNumber	result = InvalidAttrNumber;
	int			att_relid = -1,
				att_method = -1,
				att_key = -1;

	if (!OidIsValid(catalog))
		return InvalidAttrNumber;
	rel = table_open(catalog, AccessShareLock);
	desc = RelationGetDescr(rel);
	for (int i = 0; i < desc->natts; i++)
	{
		const char *name = NameStr(TupleDescAttr(desc, i)->attname);

		if (strcmp(name, "logicalrelid") == 0)
			att_relid = i;
		else if (strcmp(name, "partmethod") == 0)
			att_method = i;
		else if (strcmp(name, "partkey") == 0)
			att_key = i;
	}
	if (att_relid < 0 || att_method < 0 || att_key < 0)
	{
		table_close(rel, AccessShareLock);
		return InvalidAttrNumber;
	}
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, att_relid + 1, desc, &isnull);
		Node	   *key;

		if (isnull || DatumGetObjectId(d) != relid)
			continue;
		d = heap_getattr(tuple, att_method + 1, desc, &isnull);
		if (isnull || DatumGetChar(d) != 'h')
			break;
		d = heap_getattr(tuple, att_key + 1, desc, &isnull);
		if (isnull)
			break;
		key = stringToNode(TextDatumGetCString(d));
		if (key && IsA(key, Var))
			result = ((Var *) key)->varattno;
		break;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}
