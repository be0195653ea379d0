/*
 * src/join/plan.c
 *		The radius join's plan: the CustomScan made from the chosen path,
 *		over the two children's plans (one when the inputs are identical),
 *		and the scan methods that make its executor node.
 */
#include "join.h"

#include "nodes/makefuncs.h"

/* the scan's methods: the executor's node is made by exec.c */
const CustomScanMethods join_scan_methods = {
	.CustomName = JOIN_NAME,
	.CreateCustomScanState = join_create_state,
};

/* target entries for the columns of a child's output */
static List *
child_columns(List *tlist, List *result)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		result = lappend(result,
						 makeTargetEntry((Expr *) copyObject(tle->expr),
										 list_length(result) + 1, NULL, false));
	}
	return result;
}

/* PlanCustomPath: the CustomScan over the two children's plans */
Plan *
join_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *outer = linitial(custom_plans);
	Plan	   *inner = lsecond(custom_plans);
	List	   *cond = linitial(best_path->custom_private);
	List	   *joinquals = lsecond(best_path->custom_private);
	List	   *otherquals = lthird(best_path->custom_private);
	int			jointype = intVal(lfourth(best_path->custom_private));
	List	   *shared = list_nth(best_path->custom_private, 4);
	Node	   *self_fails = list_nth(best_path->custom_private, 5);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = otherquals;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	/* identical inputs: the inner's plan is not run, its columns are the outer's */
	cscan->custom_plans = shared != NIL ? list_make1(outer) : custom_plans;
	cscan->custom_scan_tlist = child_columns(inner->targetlist,
											 child_columns(outer->targetlist, NIL));
	cscan->custom_exprs = list_make4(linitial(cond), lsecond(cond), lthird(cond),
									 joinquals);
	cscan->custom_private = list_make4(makeInteger(jointype),
									   makeInteger(list_length(outer->targetlist)),
									   shared, copyObject(self_fails));
	cscan->custom_relids = bms_copy(rel->relids);
	cscan->methods = &join_scan_methods;
	return &cscan->scan.plan;
}
