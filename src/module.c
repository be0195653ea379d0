/*
 * module.c
 *		The module entry: its magic block and _PG_init, which defines the
 *		settings of the shared services (src/shared/), calls each part's
 *		init function (its settings, reloptions, hooks and node methods) and
 *		then reserves the "simhash" prefix of settings.  The file map of
 *		src/ is in doc/contributing.md.
 */
#include "simhash.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "core/blocks.h"
#include "dedup/dedup.h"
#include "shared/progress.h"
#include "shared/workers.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* the radix sorts' hook (core/blocks.h): a sort of many keys can be cancelled */
static void
sort_interrupts(void)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * Load time: the shared settings, then each part's settings, reloptions,
 * hooks and node methods, the radix sorts' interrupt hook; then unknown simhash.* settings are refused (and
 * placeholders set before the load warned about) as for any extension's
 * reserved prefix.
 */
void
_PG_init(void)
{
	DefineCustomIntVariable("simhash.progress_interval",
							"Seconds between progress messages of simhash_pairs and simhash_groups.",
							"0 reports every step; -1 never reports.",
							&simhash_progress_interval,
							10, -1, INT_MAX / 1000,
							PGC_USERSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("simhash.parallel_min_rows",
							"Fewest rows for which simhash_pairs, simhash_groups and CREATE INDEX ... USING simhash use parallel workers.",
							"The default (2147483647) keeps them off: they pay only where the search dominates the job (large max_distance or many blocks). The number of workers is max_parallel_maintenance_workers.",
							&simhash_parallel_min_rows,
							INT_MAX, 0, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	dedup_citus_define_gucs();
	simhash_index_init();
	simhash_join_init();
	simhash_test_hold_init();
	simhash_sort_check_hook = sort_interrupts;
	MarkGUCPrefixReserved("simhash");
}
