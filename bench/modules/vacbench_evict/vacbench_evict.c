/*
 * vacbench_evict: a benchmark-only module.  vacbench_evict(rel regclass)
 * writes out the relation's dirty shared buffers (every fork) and then
 * drops all of its buffers from shared buffers, so that the next VACUUM
 * reads it from the file system: what a server restart did before, in
 * milliseconds rather than a second.  For buffered reads the benchmark then
 * evicts the files from the kernel's page cache (posix_fadvise).  Returns
 * the number of forks whose buffers were dropped.
 *
 *   CREATE FUNCTION vacbench_evict(regclass) RETURNS int
 *       AS '$libdir/vacbench_evict' LANGUAGE C STRICT;
 */
#include "postgres.h"

#include "access/relation.h"
#include "fmgr.h"
#include "storage/bufmgr.h"
#include "storage/lockdefs.h"
#include "storage/smgr.h"
#include "utils/rel.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(vacbench_evict);

Datum
vacbench_evict(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel = relation_open(relid, AccessExclusiveLock);
	SMgrRelation smgr;
	ForkNumber	forks[MAX_FORKNUM + 1];
	BlockNumber firsts[MAX_FORKNUM + 1];
	int			n = 0;

	if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("vacbench_evict: temporary relations are not supported")));
	/* dirty buffers first: dropping them would lose their changes */
	FlushRelationBuffers(rel);
	smgr = RelationGetSmgr(rel);
	for (int f = 0; f <= MAX_FORKNUM; f++)
	{
		if (!smgrexists(smgr, (ForkNumber) f))
			continue;
		forks[n] = (ForkNumber) f;
		firsts[n] = 0;
		n++;
	}
	if (n > 0)
#if PG_VERSION_NUM >= 160000
		DropRelationBuffers(smgr, forks, n, firsts);
#else
		DropRelFileNodeBuffers(smgr, forks, n, firsts);
#endif
	/* the lock is held until the end of the transaction */
	relation_close(rel, NoLock);
	PG_RETURN_INT32(n);
}
