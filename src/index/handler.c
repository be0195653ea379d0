/*
 * handler.c
 *		The simhash access method's handler (its callbacks and properties)
 *		and its reloptions: blocks (m) and max_distance (k).
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/reloptions.h"
#include "commands/vacuum.h"
#include "utils/guc.h"

#include "simhash.h"
#include "am.h"

PG_FUNCTION_INFO_V1(simhash_handler);

static relopt_kind simhash_relopt_kind;
static relopt_parse_elt simhash_relopt_tab[2];

/* Called from _PG_init (src/module.c): the reloptions. */
void
simhash_index_init(void)
{
	simhash_relopt_kind = add_reloption_kind();
	add_int_reloption(simhash_relopt_kind, "blocks",
					  "Number of blocks the 64 bits are split into",
					  SIMHASH_DEFAULT_BLOCKS, 1, SIMHASH_MAX_BLOCKS, AccessExclusiveLock);
	add_int_reloption(simhash_relopt_kind, "max_distance",
					  "Largest distance answered by exact prefix lookups",
					  SIMHASH_DEFAULT_MAX_DISTANCE, 0, SIMHASH_MAX_DISTANCE, AccessExclusiveLock);
	simhash_relopt_tab[0].optname = "blocks";
	simhash_relopt_tab[0].opttype = RELOPT_TYPE_INT;
	simhash_relopt_tab[0].offset = offsetof(SimhashOptions, blocks);
	simhash_relopt_tab[1].optname = "max_distance";
	simhash_relopt_tab[1].opttype = RELOPT_TYPE_INT;
	simhash_relopt_tab[1].offset = offsetof(SimhashOptions, max_distance);
}

bytea *
simhash_options(Datum reloptions, bool validate)
{
	SimhashOptions *opts;

	opts = (SimhashOptions *) build_reloptions(reloptions, validate,
											   simhash_relopt_kind,
											   sizeof(SimhashOptions),
											   simhash_relopt_tab,
											   lengthof(simhash_relopt_tab));
	if (opts && validate)
		simhash_check_blocks(opts->blocks, opts->max_distance,
							 SIMHASH_MAX_INDEX_TABLES);
	return (bytea *) opts;
}

Datum
simhash_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = SIMHASH_NSTRATEGIES;
	amroutine->amsupport = 0;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = true;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = false;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = true;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_PARALLEL_BULKDEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = simhash_build;
	amroutine->ambuildempty = simhash_buildempty;
	amroutine->aminsert = simhash_insert;
	amroutine->ambulkdelete = simhash_bulkdelete;
	amroutine->amvacuumcleanup = simhash_vacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = simhash_costestimate;
	amroutine->amoptions = simhash_options;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = simhash_buildphasename;
	amroutine->amvalidate = simhash_validate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = simhash_beginscan;
	amroutine->amrescan = simhash_rescan;
	amroutine->amgettuple = simhash_gettuple;
	amroutine->amgetbitmap = simhash_getbitmap;
	amroutine->amendscan = simhash_endscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
