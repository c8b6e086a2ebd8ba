// Reading the autotuner's inputs from the server, and deciding from them.
#include "../core/calibration.hpp"
#include "module.hpp"
#include "calibration_store.hpp"
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
read_storage_of(Oid spcid, vacskip::StorageInputs *in)
{
	in->server_major = PG_VERSION_NUM / 10000;
	get_tablespace_page_costs(spcid, &in->random_page_cost, &in->seq_page_cost);
	in->effective_io_concurrency = get_tablespace_io_concurrency(spcid);
	in->maintenance_io_concurrency = get_tablespace_maintenance_io_concurrency(spcid);
	in->io_method = io_method_of(GetConfigOption("io_method", true, false));
#if PG_VERSION_NUM >= 180000
	/* what the read stream uses: the smaller of the two settings */
	in->io_combine_limit = io_combine_limit;
	in->io_workers = io_workers;
#else
	in->io_combine_limit = 0;
	in->io_workers = 0;
#endif
#if PG_VERSION_NUM >= 160000
	in->direct_io = (io_direct_flags & IO_DIRECT_DATA) != 0;
#else
	in->direct_io = false;
#endif
}

CalibrationState
read_calibration(Oid spcoid, const vacskip::StorageInputs &now,
				 vacskip::CalibrationRecord *rec)
{
	if (!load_calibration(spcoid, rec))
		return CalibrationState::kNone;
	return vacskip::same_io_path(*rec, now) ? CalibrationState::kCurrent :
		CalibrationState::kStale;
}

namespace {

// ANALYZE's or VACUUM's estimate of tuples per page; 0 when the relation
// has never been counted.
double
density(Relation rel)
{
	const double tuples = rel->rd_rel->reltuples;
	const double pages = rel->rd_rel->relpages;

	return tuples > 0 && pages > 0 ? tuples / pages : 0.0;
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

}  // namespace

void
read_inputs(Relation rel, const struct VacuumParams *params, Inputs *out)
{
	Oid			spcid = rel->rd_rel->reltablespace;

	if (!OidIsValid(spcid))
		spcid = MyDatabaseTableSpace;
	out->sources = StorageSources{spcid, false, false, false, false};
	out->inputs = vacskip::RelationInputs();
	read_storage_of(spcid, &out->inputs.storage);
	tablespace_overrides(spcid, &out->sources);
	out->calibration_state = read_calibration(spcid, out->inputs.storage, &out->calibration);
	out->inputs.calibration = out->calibration_state == CalibrationState::kCurrent ?
		&out->calibration.costs : nullptr;
	out->inputs.tuples_per_page = density(rel);
	read_freeze(rel, params, &out->inputs.freeze);
}

vacskip::Decision
decide_for(Relation rel, const struct VacuumParams *params)
{
	Inputs		in;

	read_inputs(rel, params, &in);
	return vacskip::decide(threshold_setting(), in.inputs);
}

}  // namespace vacskip::pg
