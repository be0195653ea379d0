/*
 * compat.h
 *	  The differences between the PostgreSQL major versions the extension
 *	  builds against (15 to 18), in one place.
 *
 * Every other file is written once, against the names below; each name
 * maps to what the server being built against offers.  Guards test
 * PG_VERSION_NUM only.  15 and 18 are built and tested; 16 and 17 are
 * covered by the guards (written from those branches' headers) and built,
 * not tested.
 *
 * Nothing here changes what is stored: the index pages and the WAL records
 * the extension writes are the same on every version.
 */
#ifndef SIMHASH_COMPAT_H
#define SIMHASH_COMPAT_H

#include "postgres.h"

#include "access/htup_details.h"
#include "access/nbtxlog.h"
#include "access/rmgr.h"
#include "access/xloginsert.h"
#include "catalog/pg_class.h"
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#endif
#include "commands/vacuum.h"
#include "nodes/parsenodes.h"
#include "storage/proc.h"
#include "storage/smgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#if PG_VERSION_NUM < 150000
#error "simhash needs PostgreSQL 15 or later"
#endif

/*
 * A function that never returns: 18 spells it pg_noreturn, before the
 * declaration; earlier versions pg_attribute_noreturn(), after it.  The
 * attribute form is also valid before the declaration.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * A relation's physical file: RelFileNode until 15, RelFileLocator from 16.
 */
#if PG_VERSION_NUM >= 160000
typedef RelFileLocator SimhashRelFile;
#define SimhashRelationFile(rel)		((rel)->rd_locator)
#define SimhashRelFileEquals(a, b)		RelFileLocatorEquals(a, b)
#else
typedef RelFileNode SimhashRelFile;
#define SimhashRelationFile(rel)		((rel)->rd_node)
#define SimhashRelFileEquals(a, b)		RelFileNodeEquals(a, b)
#endif

/*
 * A page buffer aligned for I/O (smgrextend() and smgrwrite() assert the
 * alignment from 16, for direct I/O); 15 has only the 8-byte alignment.
 */
#if PG_VERSION_NUM < 160000
typedef PGAlignedBlock PGIOAlignedBlock;
#endif

/*
 * smgropen() of a permanent relation's file, this backend's own (15, 16:
 * a BackendId; from 17 a ProcNumber).
 */
#if PG_VERSION_NUM >= 170000
#define simhash_smgropen(file)			smgropen((file), INVALID_PROC_NUMBER)
#else
#define simhash_smgropen(file)			smgropen((file), InvalidBackendId)
#endif

/*
 * Whether this process is an autovacuum worker (17 replaced the function
 * by a test of the backend type).
 */
#if PG_VERSION_NUM < 170000
#include "postmaster/autovacuum.h"
#define AmAutoVacuumWorkerProcess()		IsAutoVacuumWorkerProcess()
#endif

/*
 * This backend's local transaction id and its PGPROC's number (17 moved
 * the first into vxid and replaced the second by MyProcNumber).
 */
#if PG_VERSION_NUM >= 170000
#define SimhashMyLocalTransactionId()	(MyProc->vxid.lxid)
#define SimhashMyProcNumber()			((int) MyProcNumber)
#else
#define SimhashMyLocalTransactionId()	(MyProc->lxid)
#define SimhashMyProcNumber()			((int) MyProc->pgprocno)
#endif

/*
 * The count of disabled plan nodes (enable_* = off) under a path, compared
 * before cost from 18 on; earlier versions add disable_cost to the cost of
 * such a node instead, which a parent's cost carries up by itself.
 */
#if PG_VERSION_NUM >= 180000
#define SimhashPathDisabledNodes(path)	((path)->disabled_nodes)
#define SimhashSetDisabledNodes(path, n)	((path)->disabled_nodes = (n))
#else
#define SimhashPathDisabledNodes(path)	0
#define SimhashSetDisabledNodes(path, n)	((void) (n))
#endif

/* whether a role owns a relation (16 generalised the owner checks) */
#if PG_VERSION_NUM >= 160000
#define simhash_relation_ownercheck(relid, role) \
	object_ownercheck(RelationRelationId, (relid), (role))
#else
#define simhash_relation_ownercheck(relid, role)	pg_class_ownercheck((relid), (role))
#endif

/*
 * Entry i (1-based) of this session's snapshot of the backends' status (16
 * renamed the lookup by position; the old name looks up a backend id)
 */
#if PG_VERSION_NUM >= 160000
#define simhash_local_beentry(i)	pgstat_get_local_beentry_by_index(i)
#else
#define simhash_local_beentry(i)	pgstat_fetch_stat_local_beentry(i)
#endif

/* a role's privilege on a schema (16 generalised the ACL checks) */
#if PG_VERSION_NUM >= 160000
#define simhash_namespace_aclcheck(nspid, role, mode) \
	object_aclcheck(NamespaceRelationId, (nspid), (role), (mode))
#else
#define simhash_namespace_aclcheck(nspid, role, mode) \
	pg_namespace_aclcheck((nspid), (role), (mode))
#endif

/* vacuum_delay_point() outside ANALYZE (18 added the argument) */
#if PG_VERSION_NUM >= 180000
#define simhash_vacuum_delay_point()	vacuum_delay_point(false)
#else
#define simhash_vacuum_delay_point()	vacuum_delay_point()
#endif

/*
 * The next datum of a datum sort, copied into the caller's context when
 * passed by reference (15's only behaviour; 16 made the copy optional).
 */
#if PG_VERSION_NUM >= 160000
#define simhash_tuplesort_getdatum(state, forward, val, isnull, abbrev) \
	tuplesort_getdatum((state), (forward), true, (val), (isnull), (abbrev))
#else
#define simhash_tuplesort_getdatum(state, forward, val, isnull, abbrev) \
	tuplesort_getdatum((state), (forward), (val), (isnull), (abbrev))
#endif

/* a minimal tuple with no extra space before it (18 added the argument) */
#if PG_VERSION_NUM >= 180000
#define simhash_form_minimal_tuple(desc, values, isnull) \
	heap_form_minimal_tuple((desc), (values), (isnull), 0)
#else
#define simhash_form_minimal_tuple(desc, values, isnull) \
	heap_form_minimal_tuple((desc), (values), (isnull))
#endif

/*
 * Whether a btree-family operator means <, > or <> (18 generalised
 * get_op_btree_interpretation() to any index family's compare types).
 */
static inline bool
simhash_op_is_lt_gt_ne(Oid opno)
{
	ListCell   *lc;

#if PG_VERSION_NUM >= 180000
	foreach(lc, get_op_index_interpretation(opno))
	{
		OpIndexInterpretation *i = lfirst(lc);

		if (i->cmptype == COMPARE_LT || i->cmptype == COMPARE_GT ||
			i->cmptype == COMPARE_NE)
			return true;
	}
#else
	foreach(lc, get_op_btree_interpretation(opno))
	{
		OpBtreeInterpretation *i = lfirst(lc);

		if (i->strategy == BTLessStrategyNumber ||
			i->strategy == BTGreaterStrategyNumber ||
			i->strategy == ROWCOMPARE_NE)
			return true;
	}
#endif
	return false;
}

/*
 * WAL-log the snapshot-conflict horizon of pages about to be freed as
 * nbtree's XLOG_BTREE_REUSE_PAGE record, whose redo only resolves that
 * conflict on a standby (16 renamed its fields and added isCatalogRel:
 * whether logical decoding on a standby reads the table, which user
 * tables with an index of this access method never are unless marked
 * user_catalog_table).
 */
static inline void
simhash_log_reuse_horizon(Relation index, bool is_catalog, BlockNumber block,
						  FullTransactionId horizon)
{
	xl_btree_reuse_page xlrec;

	memset(&xlrec, 0, sizeof(xlrec));
#if PG_VERSION_NUM >= 160000
	xlrec.locator = index->rd_locator;
	xlrec.snapshotConflictHorizon = horizon;
	xlrec.isCatalogRel = is_catalog;
#else
	(void) is_catalog;
	xlrec.node = index->rd_node;
	xlrec.latestRemovedFullXid = horizon;
#endif
	xlrec.block = block;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, SizeOfBtreeReusePage);
	XLogInsert(RM_BTREE_ID, XLOG_BTREE_REUSE_PAGE);
}

/*
 * A range-table entry that is not a relation any more (the Citus join
 * rewrite turns one into a CTE reference): from 16 its permission check is
 * an RTEPermissionInfo in the query's list, removed here (and the other
 * entries' indexes renumbered); up to 15 it is in the entry, checked only
 * for relations.  The relation is read, and checked, by the CTE's query.
 */
static inline void
simhash_rte_drop_permission(Query *parse, RangeTblEntry *rte)
{
#if PG_VERSION_NUM >= 160000
	Index		gone = rte->perminfoindex;
	ListCell   *lc;

	if (gone == 0)
		return;
	parse->rteperminfos = list_delete_nth_cell(parse->rteperminfos, gone - 1);
	rte->perminfoindex = 0;
	foreach(lc, parse->rtable)
	{
		RangeTblEntry *other = lfirst(lc);

		if (other->perminfoindex > gone)
			other->perminfoindex--;
	}
#else
	(void) parse;
	rte->requiredPerms = 0;
#endif
}

/* the GROUP BY entry of a query's range table (18 added it) */
#if PG_VERSION_NUM >= 180000
#define SimhashRteIsGroup(rte)	((rte)->rtekind == RTE_GROUP)
#else
#define SimhashRteIsGroup(rte)	false
#endif

#endif							/* SIMHASH_COMPAT_H */
