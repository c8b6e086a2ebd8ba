// Reading the autotuner's inputs from the server, and deciding from them.
#include "module.hpp"
#include "inputs.hpp"

namespace vacskip::pg {

namespace {

vacskip::IoMethod
io_method_of(const char *name)
{
	if (name == nullptr)
		return vacskip::IoMethod::kNone;
	if (strcmp(name, "sync") == 0)
		return vacskip::IoMethod::kSync;
	if (strcmp(name, "worker") == 0)
		return vacskip::IoMethod::kWorker;
	if (strcmp(name, "io_uring") == 0)
		return vacskip::IoMethod::kIoUring;
	return vacskip::IoMethod::kOther;
}

// Which settings the tablespace overrides (ALTER TABLESPACE ... SET).
void
tablespace_overrides(Oid spcid, StorageSources *sources)
{
	HeapTuple	tp = SearchSysCache1(TABLESPACEOID, ObjectIdGetDatum(spcid));

	if (!HeapTupleIsValid(tp))
		return;
	bool		isnull;
	Datum		datum = SysCacheGetAttr(TABLESPACEOID, tp, Anum_pg_tablespace_spcoptions,
										&isnull);

	if (!isnull)
	{
		TableSpaceOpts *opts = (TableSpaceOpts *) tablespace_reloptions(datum, false);

		if (opts != nullptr)
		{
			sources->random_page_cost = opts->random_page_cost >= 0;
			sources->seq_page_cost = opts->seq_page_cost >= 0;
			sources->effective_io_concurrency = opts->effective_io_concurrency >= 0;
			sources->maintenance_io_concurrency = opts->maintenance_io_concurrency >= 0;
			pfree(opts);
		}
	}
	ReleaseSysCache(tp);
}

}  // namespace

void
read_storage(Relation rel, vacskip::StorageInputs *in, StorageSources *sources)
{
	Oid			spcid = rel->rd_rel->reltablespace;

	if (!OidIsValid(spcid))
		spcid = MyDatabaseTableSpace;
	*sources = StorageSources{spcid, false, false, false, false};

	in->server_major = PG_VERSION_NUM / 10000;
	get_tablespace_page_costs(spcid, &in->random_page_cost, &in->seq_page_cost);
	in->effective_io_concurrency = get_tablespace_io_concurrency(spcid);
	in->maintenance_io_concurrency = get_tablespace_maintenance_io_concurrency(spcid);
	in->io_method = io_method_of(GetConfigOption("io_method", true, false));
#if PG_VERSION_NUM >= 180000
	/* what the read stream uses: the smaller of the two settings */
	in->io_combine_limit = io_combine_limit;
#else
	in->io_combine_limit = 0;
#endif
	tablespace_overrides(spcid, sources);
}

void
read_freeze(Relation rel, const struct VacuumParams *params, vacskip::FreezeInputs *in)
{
	const TransactionId relfrozenxid = rel->rd_rel->relfrozenxid;
	const MultiXactId relminmxid = rel->rd_rel->relminmxid;

	/* ages as vacuum_get_cutoffs() computes them, wraparound-safe */
	in->relfrozenxid_age = TransactionIdIsNormal(relfrozenxid) ?
		(int32) (ReadNextTransactionId() - relfrozenxid) : 0;
	in->relminmxid_age = MultiXactIdIsValid(relminmxid) ?
		(int32) (ReadNextMultiXactId() - relminmxid) : 0;

	/* the effective table ages, clamped like vacuum_get_cutoffs() does */
	int			table_age = params && params->freeze_table_age >= 0 ?
		params->freeze_table_age : vacuum_freeze_table_age;
	int			mxid_table_age = params && params->multixact_freeze_table_age >= 0 ?
		params->multixact_freeze_table_age : vacuum_multixact_freeze_table_age;

	in->freeze_table_age = Min(table_age, autovacuum_freeze_max_age * 0.95);
	in->multixact_freeze_table_age = Min(mxid_table_age,
										 MultiXactMemberFreezeThreshold() * 0.95);
}

vacskip::Decision
decide_for(Relation rel, const struct VacuumParams *params)
{
	vacskip::StorageInputs storage;
	vacskip::FreezeInputs freeze;
	StorageSources sources;

	read_storage(rel, &storage, &sources);
	read_freeze(rel, params, &freeze);
	return vacskip::decide(threshold_setting(), storage, freeze);
}

}  // namespace vacskip::pg
