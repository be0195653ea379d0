/*
 * read.c
 *		The input of the table-scale dedup jobs: their arguments checked,
 *		one read of the table through SPI, the ids kept by row number in a
 *		temporary file, and progress NOTICEs.  See dedup.h.
 *
 * The table is read with one query, "SELECT id::id_type, hash FROM rel",
 * built from quoted identifiers and run by SPI as the calling user, so the
 * usual privilege checks apply (SELECT on the two columns).  Its rows go to
 * a DestReceiver, never into an SPI tuple table, so memory does not grow
 * with the table; the query runs to completion in one go, so the planner
 * may use a parallel sequential scan.  Large plain tables are read by
 * parallel workers instead when the input allows (read_parallel.c).
 */
#include "dedup.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "tcop/dest.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

/* a type of this extension: the one of that name in this function's schema */
Oid
dedup_extension_type(FunctionCallInfo fcinfo, const char *name)
{
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);

	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
						   CStringGetDatum(name), ObjectIdGetDatum(nsp));
}

/* a name argument as a string (not NULL) */
static char *
name_arg(FunctionCallInfo fcinfo, int arg, const char *what, const char *fname)
{
	if (PG_ARGISNULL(arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: %s must not be NULL", fname, what)));
	return pstrdup(NameStr(*PG_GETARG_NAME(arg)));
}

void
dedup_input_init_columns(DedupInput *in, FunctionCallInfo fcinfo, const char *fname,
						 int id_type_arg, const char *value_arg, Oid value_type,
						 const char *value_hint)
{
	char	   *relname;
	AttrNumber	id_att,
				value_att;
	Oid			col_type,
				col_coll,
				type;
	int32		typmod;
	TypeCacheEntry *tc;
	HeapTuple	tuple;

	memset(in, 0, sizeof(*in));
	in->fname = fname;
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: relation must not be NULL", fname)));
	in->relid = PG_GETARG_OID(0);
	in->id_column = name_arg(fcinfo, 1, "id_column", fname);
	in->hash_column = name_arg(fcinfo, 2, value_arg, fname);

	/*
	 * Lock first, as a query would: the column types checked
	 * below then cannot change (ALTER COLUMN ... TYPE needs an
	 * AccessExclusiveLock) before the read, which trusts them (a by-value
	 * datum read as a pointer otherwise).  A relation dropped before the
	 * lock was granted is no longer in the catalog.
	 */
	LockRelationOid(in->relid, AccessShareLock);
	relname = get_rel_name(in->relid);
	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", in->relid)));
	in->relname = quote_qualified_identifier(get_namespace_name(get_rel_namespace(in->relid)),
											 relname);

	/* the columns, and their types */
	id_att = get_attnum(in->relid, in->id_column);
	value_att = get_attnum(in->relid, in->hash_column);
	if (id_att == InvalidAttrNumber || value_att == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						id_att == InvalidAttrNumber ? in->id_column : in->hash_column,
						relname)));
	in->id_attnum = id_att;
	in->value_attnum = value_att;
	get_atttypetypmodcoll(in->relid, value_att, &type, &typmod, &col_coll);
	get_typlenbyval(type, &in->value_typlen, &in->value_typbyval);
	if (getBaseType(type) != value_type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s: column \"%s\" is of type %s, not %s",
						fname, in->hash_column, format_type_be(type),
						format_type_be(value_type)),
				 value_hint ? errhint("%s", value_hint) : 0));
	get_atttypetypmodcoll(in->relid, id_att, &col_type, &typmod, &col_coll);
	in->id_column_type = col_type;
	in->id_type = id_type_arg < 0 ? INT8OID :
		get_fn_expr_argtype(fcinfo->flinfo, id_type_arg);
	if (!OidIsValid(in->id_type))
		elog(ERROR, "%s: could not determine the type of id_type", fname);
	if (col_type != in->id_type &&
		!can_coerce_type(1, &col_type, &in->id_type, COERCION_ASSIGNMENT))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s: column \"%s\" is of type %s, which cannot be returned as %s",
						fname, in->id_column, format_type_be(col_type),
						format_type_be(in->id_type)),
				 errhint("Pass the ids' type in id_type (a NULL of that type), for example id_type => NULL::%s.",
						 format_type_be(col_type))));
	get_typlenbyval(in->id_type, &in->id_typlen, &in->id_typbyval);
	in->id_collation = col_type == in->id_type ? col_coll : get_typcollation(in->id_type);

	/* the ids' ordering: pairs are (smaller, larger), groups named by the least */
	tc = lookup_type_cache(in->id_type, TYPECACHE_LT_OPR);
	if (!OidIsValid(tc->lt_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("%s: could not identify an ordering operator for type %s",
						fname, format_type_be(in->id_type)),
				 errhint("Ids must have a default btree operator class; cast them, for example with id_type => NULL::text.")));
	in->id_lt_opr = tc->lt_opr;
	in->id_order.ssup_cxt = CurrentMemoryContext;
	in->id_order.ssup_collation = in->id_collation;
	in->id_order.ssup_nulls_first = false;
	PrepareSortSupportFromOrderingOp(tc->lt_opr, &in->id_order);

	in->budget = (Size) maintenance_work_mem * 1024;
	in->reltuples = -1;
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(in->relid));
	if (HeapTupleIsValid(tuple))
	{
		in->reltuples = ((Form_pg_class) GETSTRUCT(tuple))->reltuples;
		ReleaseSysCache(tuple);
	}
}

void
dedup_input_init(DedupInput *in, FunctionCallInfo fcinfo, const char *fname,
				 int id_type_arg, int max_distance_arg, int blocks_arg)
{
	int32		max_distance,
				blocks;

	dedup_input_init_columns(in, fcinfo, fname, id_type_arg, "hash_column",
							 dedup_extension_type(fcinfo, "simhash64"),
							 "Compute fingerprints into a simhash64 column, for example with simhash(text).");
	if (PG_ARGISNULL(max_distance_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: max_distance must not be NULL", fname),
				 errhint("To give the ids' type, name the argument: id_type => NULL::integer.")));
	max_distance = PG_GETARG_INT32(max_distance_arg);

	/*
	 * blocks: NULL chooses max_distance + 2, usually the fastest (a valid
	 * number of blocks, so that an out-of-range max_distance is what the
	 * check names)
	 */
	blocks = PG_ARGISNULL(blocks_arg) ?
		Max(Min(max_distance + 2, SIMHASH_MAX_BLOCKS), 1) : PG_GETARG_INT32(blocks_arg);
	simhash_blocks_init_checked(&in->blocks, blocks, max_distance);
}

void
dedup_put_pair(DedupInput *in, ReturnSetInfo *rsinfo, Datum a, Datum b, Datum third)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	bool		swap = dedup_id_compare(in, a, b) > 0;

	values[0] = swap ? b : a;
	values[1] = swap ? a : b;
	values[2] = third;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* ---- the read ---- */

typedef struct DedupReceiver
{
	DestReceiver pub;
	DedupInput *in;
	DedupRowFn	fn;
	void	   *arg;
	uint64		nrows;
	MemoryContext rowcxt;		/* reset after each row */
	DedupProgress progress;
} DedupReceiver;

/* the DestReceiver's receiveSlot: one row of the read to the job's callback */
static bool
dedup_receive(TupleTableSlot *slot, DestReceiver *self)
{
	DedupReceiver *r = (DedupReceiver *) self;
	bool		id_isnull,
				hash_isnull;
	Datum		id,
				hash;
	MemoryContext old;

	id = slot_getattr(slot, 1, &id_isnull);
	hash = slot_getattr(slot, 2, &hash_isnull);
	if (id_isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: column \"%s\" of relation %s contains NULL",
						r->in->fname, r->in->id_column, r->in->relname),
				 errdetail("Every row needs an id to be reported by.")));
	if ((r->nrows & 0xFFFF) == 0xFFFF)
	{
		CHECK_FOR_INTERRUPTS();
		dedup_progress(&r->progress, "read " UINT64_FORMAT " rows", r->nrows + 1);
		simhash_progress_rows((int64) r->nrows + 1, -1);
	}
	old = MemoryContextSwitchTo(r->rowcxt);
	r->fn(r->arg, r->nrows, id, hash_isnull, hash);
	MemoryContextSwitchTo(old);
	MemoryContextReset(r->rowcxt);
	r->nrows++;
	return true;
}

static void
dedup_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
dedup_shutdown(DestReceiver *self)
{
}

static void
dedup_destroy(DestReceiver *self)
{
}

uint64
dedup_read(DedupInput *in, DedupRowFn fn, void *arg)
{
	DedupReceiver r;
	SPIExecuteOptions options;
	StringInfoData query;
	int			rc;

	memset(&r, 0, sizeof(r));
	r.pub.receiveSlot = dedup_receive;
	r.pub.rStartup = dedup_startup;
	r.pub.rShutdown = dedup_shutdown;
	r.pub.rDestroy = dedup_destroy;
	r.pub.mydest = DestNone;
	r.in = in;
	r.fn = fn;
	r.arg = arg;
	r.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "simhash dedup row",
									 ALLOCSET_DEFAULT_SIZES);
	dedup_progress_start(&r.progress, in->fname);
	simhash_progress_rows(0, (int64) Max(in->reltuples, 0));
	simhash_progress_phase(SIMHASH_PHASE_READING);

	/* by a table scan (in parallel workers if worth it) if the input allows */
	if (dedup_read_parallel(in, fn, arg, &r.nrows, &r.progress))
	{
		MemoryContextDelete(r.rowcxt);
		dedup_progress(&r.progress, "read " UINT64_FORMAT " rows", r.nrows);
		simhash_progress_rows((int64) r.nrows, (int64) r.nrows);
		return r.nrows;
	}

	initStringInfo(&query);
	appendStringInfo(&query, "SELECT %s::%s, %s FROM %s",
					 quote_identifier(in->id_column),
					 format_type_be_qualified(in->id_type),
					 quote_identifier(in->hash_column),
					 in->relname);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	dedup_citus_notice(in);
	memset(&options, 0, sizeof(options));
	options.read_only = true;
	options.dest = &r.pub;
	rc = SPI_execute_extended(query.data, &options);
	if (rc < 0)
		elog(ERROR, "%s: reading %s failed: %s", in->fname, in->relname,
			 SPI_result_code_string(rc));
	SPI_finish();

	MemoryContextDelete(r.rowcxt);
	pfree(query.data);
	dedup_progress(&r.progress, "read " UINT64_FORMAT " rows", r.nrows);
	simhash_progress_rows((int64) r.nrows, (int64) r.nrows);
	return r.nrows;
}

/* ---- ids by row number ---- */

DedupIds *
dedup_ids_create(Oid typid)
{
	DedupIds   *ids = palloc0(sizeof(DedupIds));

	get_typlenbyval(typid, &ids->typlen, &ids->typbyval);
	ids->file = BufFileCreateTemp(false);
	ids->cursor = 0;
	return ids;
}

/* bytes of one fixed-size id; 0 for variable-length ones */
static inline Size
id_size(const DedupIds *ids)
{
	if (ids->typbyval)
		return sizeof(Datum);
	return ids->typlen > 0 ? (Size) ids->typlen : 0;
}

void
dedup_ids_append(DedupIds *ids, Datum id)
{
	Size		fixed = id_size(ids);

	if (ids->typbyval)
		BufFileWrite(ids->file, &id, sizeof(Datum));
	else if (fixed > 0)
		BufFileWrite(ids->file, DatumGetPointer(id), fixed);
	else
	{
		char	   *p;
		uint32		len;

		if (ids->n % DEDUP_IDS_MARK == 0)
		{
			uint64		m = ids->n / DEDUP_IDS_MARK;

			if (m >= ids->maxmarks)
			{
				ids->maxmarks = Max(ids->maxmarks * 2, 1024);
				ids->marks = ids->marks == NULL ?
					MemoryContextAllocHuge(GetMemoryChunkContext(ids), ids->maxmarks * sizeof(uint64)) :
					repalloc_huge(ids->marks, ids->maxmarks * sizeof(uint64));
			}
			ids->marks[m] = ids->size;
		}
		if (ids->typlen == -1)
		{
			p = (char *) PG_DETOAST_DATUM_PACKED(id);
			len = VARSIZE_ANY(p);
		}
		else
		{
			p = DatumGetCString(id);
			len = strlen(p) + 1;
		}
		BufFileWrite(ids->file, &len, sizeof(len));
		BufFileWrite(ids->file, p, len);
		fixed = sizeof(len) + len;
		if (p != DatumGetPointer(id))
			pfree(p);
	}
	ids->size += fixed;
	ids->n++;
	ids->cursor = PG_UINT64_MAX;	/* the file position is at the end */
}

/* position the ids file at byte pos */
static void
ids_seek(DedupIds *ids, uint64 pos)
{
	if (BufFileSeekBlock(ids->file, (long) (pos / BLCKSZ)) != 0 ||
		BufFileSeek(ids->file, 0, (off_t) (pos % BLCKSZ), SEEK_CUR) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in a temporary file of simhash ids")));
}

/* read len bytes of the ids file (an error if short) */
static void
ids_read(DedupIds *ids, void *p, Size len)
{
	if (BufFileRead(ids->file, p, len) != len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of simhash ids")));
}

Datum
dedup_ids_fetch(DedupIds *ids, uint64 row)
{
	Size		fixed = id_size(ids);
	Datum		result;

	Assert(row < ids->n);
	if (fixed > 0)
	{
		if (ids->cursor != row)
			ids_seek(ids, row * fixed);
		if (ids->typbyval)
			ids_read(ids, &result, sizeof(Datum));
		else
		{
			char	   *p = palloc(fixed);

			ids_read(ids, p, fixed);
			result = PointerGetDatum(p);
		}
	}
	else
	{
		uint32		len;
		char	   *p;

		if (ids->cursor > row || row - ids->cursor >= DEDUP_IDS_MARK)
		{
			ids_seek(ids, ids->marks[row / DEDUP_IDS_MARK]);
			ids->cursor = row - row % DEDUP_IDS_MARK;
		}
		while (ids->cursor < row)
		{
			/* skip an id */
			ids_read(ids, &len, sizeof(len));
			if (BufFileSeek(ids->file, 0, (off_t) len, SEEK_CUR) != 0)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not seek in a temporary file of simhash ids")));
			ids->cursor++;
		}
		ids_read(ids, &len, sizeof(len));
		p = palloc(len);
		ids_read(ids, p, len);
		result = PointerGetDatum(p);
	}
	ids->cursor = row + 1;
	return result;
}

void
dedup_ids_close(DedupIds *ids)
{
	BufFileClose(ids->file);
	if (ids->marks)
		pfree(ids->marks);
	pfree(ids);
}
