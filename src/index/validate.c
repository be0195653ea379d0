/*
 * validate.c
 *		amvalidate for the simhash access method: an operator class may
 *		have the search operator <@ (simhash64, simhash_ball) as strategy 1,
 *		the ordering operator <~> (simhash64, simhash64) as strategy 2, the
 *		search operator && (simhash_ball, simhash_ball) as strategy 3, and
 *		no support functions.
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/syscache.h"

#include "am.h"

bool
simhash_validate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	CatCList   *oprlist;
	CatCList   *proclist;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	for (int i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);

		if (!((oprform->amopstrategy == SIMHASH_WITHIN_STRATEGY ||
			   oprform->amopstrategy == SIMHASH_NEAR_STRATEGY) &&
			  oprform->amoppurpose == AMOP_SEARCH) &&
			!(oprform->amopstrategy == SIMHASH_DISTANCE_STRATEGY &&
			  oprform->amoppurpose == AMOP_ORDER))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("simhash operator family contains operator %u with invalid strategy number %d",
							oprform->amopopr, oprform->amopstrategy)));
			result = false;
		}
	}
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
	if (proclist->n_members > 0)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("simhash operator family has support functions, which it does not use")));
		result = false;
	}
	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}
