/*
 * skip_probe: a test module that installs vacuum_skip_threshold_hook before
 * vacskip does, so that the tests can see vacskip chain to it.  It reports
 * each call with a NOTICE and proposes thresholds of 7; a module loaded after
 * it (vacskip) decides the final values.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "fmgr.h"
#include "utils/rel.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static vacuum_skip_threshold_hook_type prev_hook = NULL;

static void
skip_probe_hook(Relation rel, const struct VacuumParams *params,
				bool aggressive, BlockNumber rel_pages,
				VacuumSkipThresholds *thresholds)
{
	if (prev_hook)
		prev_hook(rel, params, aggressive, rel_pages, thresholds);
	ereport(NOTICE,
			(errmsg("skip_probe: %s, %u pages, aggressive %d, got %u/%u",
					RelationGetRelationName(rel), rel_pages, (int) aggressive,
					thresholds->all_frozen, thresholds->all_visible)));
	thresholds->all_frozen = 7;
	thresholds->all_visible = 7;
}

void
_PG_init(void)
{
	prev_hook = vacuum_skip_threshold_hook;
	vacuum_skip_threshold_hook = skip_probe_hook;
}
