/*
 * src/join/explain.c
 *		EXPLAIN of the radius join: the join type, the condition, the table
 *		groups planned or searched and, with ANALYZE, the pairs checked and
 *		the bytes spilled, by all processes and (VERBOSE) by each worker.
 */
#include "join.h"

#include "nodes/makefuncs.h"
#include "utils/ruleutils.h"

/* the join type as EXPLAIN names it */
static const char *
join_type_name(JoinType jointype)
{
	switch (jointype)
	{
		case JOIN_INNER:
			return "Inner";
		case JOIN_SEMI:
			return "Semi";
		case JOIN_ANTI:
			return "Anti";
		default:
			return "?";
	}
}

/*
 * EXPLAIN ANALYZE under a Gather: the pairs checked and the bytes spilled by
 * all processes (the leader's and each worker's runs, added up in the
 * instrumentation by join_run()); with VERBOSE, each worker's, as
 * PostgreSQL shows each worker's rows (not with debug_parallel_query's
 * hidden Gather).
 */
static void
explain_workers(CustomScanState *node, ExplainState *es)
{
	Instrumentation *total = node->ss.ps.instrument;
	WorkerInstrumentation *w = node->ss.ps.worker_instrument;

	ExplainPropertyUInteger("Pairs Checked", NULL, (uint64) total->ntuples2, es);
	if (total->nfiltered2 > 0 || es->format != EXPLAIN_FORMAT_TEXT)
		ExplainPropertyUInteger("Spilled", "kB",
								((uint64) total->nfiltered2 + 1023) / 1024, es);
	if (!es->verbose || es->hide_workers)
		return;
	for (int n = 0; n < w->num_workers; n++)
	{
		Instrumentation *i = &w->instrument[n];

		if (i->nloops <= 0)
			continue;			/* not launched, or never ran the join */
		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			appendStringInfoSpaces(es->str, es->indent * 2);
			appendStringInfo(es->str, "Worker %d:  Pairs Checked: " UINT64_FORMAT, n,
							 (uint64) i->ntuples2);
			if (i->nfiltered2 > 0)
				appendStringInfo(es->str, "  Spilled: " UINT64_FORMAT "kB",
								 ((uint64) i->nfiltered2 + 1023) / 1024);
			appendStringInfoChar(es->str, '\n');
		}
		else
		{
			char		label[64];

			snprintf(label, sizeof(label), "Worker %d Pairs Checked", n);
			ExplainPropertyUInteger(label, NULL, (uint64) i->ntuples2, es);
			snprintf(label, sizeof(label), "Worker %d Spilled", n);
			ExplainPropertyUInteger(label, "kB", ((uint64) i->nfiltered2 + 1023) / 1024, es);
		}
	}
}

/* EXPLAIN: the join type, the condition, its table groups, the work done */
void
join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	RadiusJoinState  *js = (RadiusJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	bool		useprefix = list_length(es->rtable) > 1 || es->verbose;
	Node	   *k = list_nth(cscan->custom_exprs, EXPR_RADIUS);
	List	   *quals = list_nth(cscan->custom_exprs, EXPR_JOINQUALS);
	char	   *cond;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	ExplainPropertyText("Join Type",
						join_type_name((JoinType) intVal(linitial(cscan->custom_private))),
						es);
	cond = psprintf("(%s <~> %s) <= %s",
					deparse_expression(list_nth(cscan->custom_exprs, EXPR_OUTER_HASH),
									   context, useprefix, false),
					deparse_expression(list_nth(cscan->custom_exprs, EXPR_INNER_HASH),
									   context, useprefix, false),
					deparse_expression(k, context, useprefix, false));
	ExplainPropertyText("Distance Condition", cond, es);
	if (lthird(cscan->custom_private) != NIL)
		ExplainPropertyText("Inner Input", "the outer's rows (identical scans, read once)", es);
	if (quals != NIL)
		ExplainPropertyText("Join Filter",
							deparse_expression((Node *) make_ands_explicit(quals),
											   context, useprefix, false),
							es);

	/* the table groups: known now for a constant radius, else after a run */
	if (es->analyze && js->done)
	{
		if (js->searched)
			ExplainPropertyText("Table Groups",
								psprintf("%d (blocks %d, %d tables)",
										 js->blocks.max_distance + 1,
										 js->blocks.nblocks, js->blocks.ntables),
								es);
		else
			ExplainPropertyText("Table Groups",
								js->radius_null || js->radius_value < 0 ?
								"none (nothing within the distance)" :
								"none (every pair within the distance)", es);
	}
	else if (IsA(k, Const) && !((Const *) k)->constisnull &&
			 DatumGetInt64(((Const *) k)->constvalue) >= 0 &&
			 DatumGetInt64(((Const *) k)->constvalue) < 64)
	{
		int			radius = (int) DatumGetInt64(((Const *) k)->constvalue);
		int			m = join_nblocks(radius);

		ExplainPropertyText("Table Groups",
							psprintf("%d (blocks %d, %d tables)", radius + 1, m,
									 (int) simhash_binomial(m, radius)),
							es);
	}
	else
		ExplainPropertyText("Table Groups", "distance + 1, chosen at run time", es);

	if (es->analyze && node->ss.ps.worker_instrument != NULL)
		explain_workers(node, es);
	else if (es->analyze && js->done)
	{
		ExplainPropertyUInteger("Pairs Checked", NULL, js->pairs_checked, es);
		if (js->spilled_bytes > 0 || es->format != EXPLAIN_FORMAT_TEXT)
			ExplainPropertyUInteger("Spilled", "kB",
									(js->spilled_bytes + 1023) / 1024, es);
	}
}
