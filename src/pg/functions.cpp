// SQL-callable functions: vacskip.status(), effective_threshold(),
// explain_threshold(), simulate(), hook_active().  They only read (the
// catalogs and the visibility map), so they work on servers without the hook.
#include <cmath>
#include <new>

#include "../core/calibration.hpp"
#include "../core/model.hpp"
#include "../core/vmscan.hpp"
#include "guard.hpp"
#include "module.hpp"
#include "inputs.hpp"
#include "sql.hpp"

namespace {

// At most this many thresholds per simulate() call.
constexpr int kMaxThresholds = 1000;

// Open a relation the functions can answer for: a heap table or
// materialized view of this session or a permanent one.
Relation
open_heap_relation(Oid relid)
{
	Relation	rel = try_relation_open(relid, AccessShareLock);

	if (rel == nullptr)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	const char	relkind = rel->rd_rel->relkind;

	if (relkind == RELKIND_TOASTVALUE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a TOAST table", RelationGetRelationName(rel)),
				 errhint("VACUUM processes a TOAST table together with its table; "
						 "VACUUM (VERBOSE) of that table reports both.")));
	if (relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a partitioned table", RelationGetRelationName(rel)),
				 errdetail("A partitioned table has no storage of its own."),
				 errhint("Ask about each partition.")));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table or materialized view",
						RelationGetRelationName(rel)),
				 errdetail_relkind_not_supported(relkind)));
	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" does not use the heap access method",
						RelationGetRelationName(rel))));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions")));
	return rel;
}

// The thresholds the next VACUUM of rel uses: vacskip's choice on a server
// with the hook, stock's 32 on one without.
vacskip::Decision
next_vacuum_decision(const vacskip::pg::Inputs &in)
{
	vacskip::Decision d = vacskip::decide(vacskip::pg::threshold_setting(), in.inputs);

	if (!vacskip::pg::hook_active())
	{
		const vacskip::Thresholds chosen = d.thresholds;

		d.thresholds = {vacskip::kStockThreshold, vacskip::kStockThreshold};
		snprintf(d.reason, sizeof(d.reason),
				 "this server has no skip threshold hook, so VACUUM uses the stock "
				 "threshold %u (vacskip would choose %u all-frozen, %u all-visible)",
				 vacskip::kStockThreshold, chosen.all_frozen, chosen.all_visible);
	}
	return d;
}

const char *
mode_name(int setting)
{
	return setting == vacskip::kThresholdAutotune ? "auto" : "fixed";
}

const char *
source_name(bool tablespace)
{
	return tablespace ? "tablespace" : "global";
}

const char *
cost_source_name(vacskip::CostSource source)
{
	return source == vacskip::CostSource::kCalibration ? "calibration" : "settings";
}

Datum
timestamptz_of(int64 unix_seconds)
{
	return TimestampTzGetDatum(time_t_to_timestamptz(static_cast<pg_time_t>(unix_seconds)));
}

// explain_threshold()'s calibration column.
void
describe_calibration(const vacskip::pg::Inputs &in, char *out, size_t size)
{
	char		then[256];
	char		now[256];

	if (in.calibration_state == vacskip::pg::CalibrationState::kNone)
	{
		strlcpy(out, "none: run vacskip.calibrate() to measure this tablespace", size);
		return;
	}
	vacskip::pg::describe_io_path(vacskip::measured_path(in.calibration), then, sizeof(then));
	const char *at = timestamptz_to_str(time_t_to_timestamptz(
		static_cast<pg_time_t>(in.calibration.measured_at)));

	if (in.calibration_state == vacskip::pg::CalibrationState::kCurrent)
	{
		snprintf(out, size, "measured %s with %s", at, then);
		return;
	}
	if (in.calibration_state == vacskip::pg::CalibrationState::kElsewhere)
	{
		snprintf(out, size,
				 "not used: measured %s with %s, but the tablespace's directory is "
				 "another one now (a copy of the data: a base backup, a restore, the data "
				 "moved); run vacskip.calibrate() again", at, then);
		return;
	}
	vacskip::pg::describe_io_path(in.inputs.storage, now, sizeof(now));
	snprintf(out, size,
			 "not used: measured %s with %s, but VACUUM reads with %s now; run "
			 "vacskip.calibrate() again", at, then, now);
}

// A two-dimensional float8[] of rows x cols values, row by row.
Datum
float8_matrix(const double *xs, int rows, int cols)
{
	Datum	   *elems = static_cast<Datum *>(palloc(sizeof(Datum) * rows * cols));
	int			dims[2] = {rows, cols};
	int			lbs[2] = {1, 1};

	for (int i = 0; i < rows * cols; i++)
		elems[i] = Float8GetDatum(xs[i]);
	return PointerGetDatum(construct_md_array(elems, nullptr, 2, dims, lbs, FLOAT8OID,
											  sizeof(float8), FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
}

// A [rows][cols][depth] array of xs[(i * cols + j) * stride + r], r below
// depth, NaN as NULL; *none where every element is NaN.
Datum
float8_cube(const double *xs, int rows, int cols, int depth, int stride, bool *none)
{
	*none = false;
	if (depth < 1)
		return PointerGetDatum(construct_empty_array(FLOAT8OID));
	Datum	   *elems = static_cast<Datum *>(palloc(sizeof(Datum) * rows * cols * depth));
	bool	   *nulls = static_cast<bool *>(palloc(sizeof(bool) * rows * cols * depth));
	int			dims[3] = {rows, cols, depth};
	int			lbs[3] = {1, 1, 1};
	int			nans = 0;

	for (int i = 0; i < rows * cols; i++)
		for (int r = 0; r < depth; r++)
		{
			const double x = xs[i * stride + r];

			nulls[i * depth + r] = std::isnan(x);
			nans += std::isnan(x);
			elems[i * depth + r] = Float8GetDatum(std::isnan(x) ? 0 : x);
		}
	*none = nans == rows * cols * depth;
	return PointerGetDatum(construct_md_array(elems, nans ? nulls : nullptr, 3, dims, lbs,
											  FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
}

Datum
float8_array(const double *xs, int n)
{
	Datum	   *elems = static_cast<Datum *>(palloc(sizeof(Datum) * n));

	for (int i = 0; i < n; i++)
		elems[i] = Float8GetDatum(xs[i]);
	return PointerGetDatum(construct_array(elems, n, FLOAT8OID, sizeof(float8),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

// The thresholds argument of simulate(), checked.
int32 *
thresholds_arg(ArrayType *arr, int *count)
{
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("thresholds must be a one-dimensional array")));
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	deconstruct_array(arr, INT4OID, sizeof(int32), true, TYPALIGN_INT,
					  &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("thresholds must not be empty")));
	if (n > kMaxThresholds)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many thresholds: %d", n),
				 errdetail("At most %d thresholds can be simulated at once.",
						   kMaxThresholds)));
	int32	   *out = static_cast<int32 *>(palloc(sizeof(int32) * n));

	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("thresholds must not contain null values")));
		out[i] = DatumGetInt32(elems[i]);
		if (out[i] < vacskip::kThresholdMin || out[i] > vacskip::kThresholdMax)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("threshold %d is out of range", out[i]),
					 errdetail("Thresholds must be between %d and %d.",
							   vacskip::kThresholdMin, vacskip::kThresholdMax)));
	}
	*count = n;
	return out;
}

}  // namespace

namespace vacskip::pg {

TupleDesc
result_tupdesc(FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, nullptr, &tupdesc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function returning record called in context "
						"that cannot accept type record")));
	return BlessTupleDesc(tupdesc);
}

TupleDesc
result_tupdesc(FunctionCallInfo fcinfo, int columns, const char *function)
{
	TupleDesc	tupdesc = result_tupdesc(fcinfo);

	// the SQL declaration installed with another version of the module
	if (tupdesc->natts != columns)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("vacskip.%s() is declared with %d result columns, "
						"this build of the module returns %d",
						function, tupdesc->natts, columns),
				 errhint("DROP EXTENSION vacskip and CREATE EXTENSION vacskip again.")));
	return tupdesc;
}

void
describe_io_path(const vacskip::StorageInputs &in, char *out, size_t size)
{
	const char *reads = in.direct_io ? "direct reads" :
		in.read_ahead_kb >= 0 ?
		psprintf("buffered reads (kernel readahead %d kB)", in.read_ahead_kb) :
		"buffered reads";

	if (in.server_major < 18)
		snprintf(out, size, "%s, one at a time", reads);
	else
		snprintf(out, size,
				 "%s, io_method %s%s, maintenance_io_concurrency %d, io_combine_limit %d: "
				 "%d in flight",
				 reads, vacskip::io_method_name(in.io_method),
				 in.io_method == vacskip::IoMethod::kWorker ?
				 psprintf(" with %d workers", in.io_workers) : "",
				 in.maintenance_io_concurrency, in.io_combine_limit,
				 vacskip::vacuum_read_concurrency(in));
}

Datum
calibration_datum(TupleDesc tupdesc, Oid spcoid, const vacskip::CalibrationRecord &rec,
				  const double *samples, int stride)
{
	constexpr int ncols = kCalibrateColumns;
	Datum		v[ncols];
	bool		nulls[ncols] = {};
	char		path[512];
	const char *spcname = get_tablespace_name(spcoid);
	int			i = 0;

	describe_io_path(vacskip::measured_path(rec), path, sizeof(path));
	if (rec.limit_requests > 0 || rec.limit_bytes > 0)
	{
		const size_t len = strlen(path);

		snprintf(path + len, sizeof(path) - len,
				 "; rate limits found: %.0f requests and %.1f MB a second (0: none), "
				 "no pattern counted faster",
				 rec.limit_requests, rec.limit_bytes / 1e6);
	}
	v[i++] = DirectFunctionCall1(namein, CStringGetDatum(spcname ? spcname : rec.tablespace));
	v[i++] = timestamptz_of(rec.measured_at);
	v[i++] = Float8GetDatum(rec.seconds);
	v[i++] = Int32GetDatum(rec.rounds);
	v[i++] = CStringGetTextDatum(path);
	v[i++] = float8_array(vacskip::kDensities, vacskip::kDensityCount);
	v[i++] = float8_matrix(&rec.costs.read_us[0][0], vacskip::kDensityCount,
						   vacskip::kGapCount);
	v[i++] = float8_matrix(&rec.costs.start_read_us[0][0], vacskip::kDensityCount,
						   vacskip::kGapCount);
	v[i++] = float8_array(rec.costs.read_noise, vacskip::kDensityCount);
	v[i++] = float8_array(rec.costs.start_read_noise, vacskip::kDensityCount);
	v[i++] = Float8GetDatum(rec.costs.cpu_page_us);
	v[i++] = Float8GetDatum(rec.costs.cpu_tuple_us);
	v[i++] = float8_matrix(&rec.costs.read_cpu_share[0][0], vacskip::kDensityCount,
						   vacskip::kGapCount);
	// each round's figures as measured, before its level is taken out, and
	// the device's requests (NULL where they were not counted)
	constexpr int npatterns = vacskip::kDensityCount * vacskip::kGapCount;

	for (int kind = 0; kind < kCalibrateSampleKinds; kind++, i++)
		v[i] = float8_cube(samples + kind * npatterns * stride, vacskip::kDensityCount,
						   vacskip::kGapCount, rec.rounds, stride, &nulls[i]);
	Assert(i == ncols);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, v, nulls));
}

}  // namespace vacskip::pg

extern "C" {
PG_FUNCTION_INFO_V1(vacskip_hook_active);
PG_FUNCTION_INFO_V1(vacskip_status);
PG_FUNCTION_INFO_V1(vacskip_effective_threshold);
PG_FUNCTION_INFO_V1(vacskip_explain_threshold);
PG_FUNCTION_INFO_V1(vacskip_simulate);

Datum
vacskip_hook_active(PG_FUNCTION_ARGS)
{
	(void) fcinfo;
	return vacskip::pg::guarded([] {
		return BoolGetDatum(vacskip::pg::hook_active());
	});
}

Datum
vacskip_status(PG_FUNCTION_ARGS)
{
	return vacskip::pg::guarded([&] {
		TupleDesc	tupdesc = vacskip::pg::result_tupdesc(fcinfo);
		const int	setting = vacskip::pg::threshold_setting();
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = BoolGetDatum(vacskip::pg::hook_active());
		values[1] = Int32GetDatum(setting);
		values[2] = CStringGetTextDatum(mode_name(setting));
		values[3] = Int32GetDatum(atoi(GetConfigOption("server_version_num", false, false)));
		return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
	});
}

Datum
vacskip_effective_threshold(PG_FUNCTION_ARGS)
{
	return vacskip::pg::guarded([&] {
		Relation	rel = open_heap_relation(PG_GETARG_OID(0));
		vacskip::pg::Inputs in;

		vacskip::pg::read_inputs(rel, nullptr, -1, &in);
		const vacskip::Decision d = next_vacuum_decision(in);

		relation_close(rel, AccessShareLock);
		return Int32GetDatum(static_cast<int32>(d.thresholds.all_frozen));
	});
}

Datum
vacskip_explain_threshold(PG_FUNCTION_ARGS)
{
	return vacskip::pg::guarded([&] {
		const Oid	relid = PG_GETARG_OID(0);
		constexpr int ncols = 34;
		TupleDesc	tupdesc = vacskip::pg::result_tupdesc(fcinfo, ncols, "explain_threshold");
		Relation	rel = open_heap_relation(relid);
		vacskip::pg::Inputs in;

		vacskip::pg::read_inputs(rel, nullptr, -1, &in, true);
		const vacskip::Decision d = next_vacuum_decision(in);
		const int	setting = vacskip::pg::threshold_setting();
		const vacskip::StorageInputs &storage = in.inputs.storage;
		const vacskip::pg::StorageSources &src = in.sources;
		const vacskip::FreezeInputs &freeze = in.inputs.freeze;
		char		calibration[768];

		relation_close(rel, AccessShareLock);
		describe_calibration(in, calibration, sizeof(calibration));

		Datum		v[ncols];
		bool		nulls[ncols];
		int			i = 0;

		memset(nulls, 0, sizeof(nulls));
		v[i++] = ObjectIdGetDatum(relid);
		const char *spcname = get_tablespace_name(src.tablespace);

		if (spcname)
			v[i++] = DirectFunctionCall1(namein, CStringGetDatum(spcname));
		else
			nulls[i++] = true;
		v[i++] = Float8GetDatum(storage.random_page_cost);
		v[i++] = CStringGetTextDatum(source_name(src.random_page_cost));
		v[i++] = Float8GetDatum(storage.seq_page_cost);
		v[i++] = CStringGetTextDatum(source_name(src.seq_page_cost));
		v[i++] = Int32GetDatum(storage.effective_io_concurrency);
		v[i++] = CStringGetTextDatum(source_name(src.effective_io_concurrency));
		v[i++] = Int32GetDatum(storage.maintenance_io_concurrency);
		v[i++] = CStringGetTextDatum(source_name(src.maintenance_io_concurrency));
		if (storage.server_major >= 18)
		{
			v[i++] = Int32GetDatum(storage.io_combine_limit);
			v[i++] = CStringGetTextDatum(vacskip::io_method_name(storage.io_method));
			v[i++] = Int32GetDatum(storage.io_workers);
		}
		else
		{
			nulls[i++] = true;
			nulls[i++] = true;
			nulls[i++] = true;
		}
		v[i++] = BoolGetDatum(storage.direct_io);
		v[i++] = Int32GetDatum(d.model.concurrency);
		v[i++] = CStringGetTextDatum(calibration);
		v[i++] = CStringGetTextDatum(cost_source_name(d.model.source));
		v[i++] = CStringGetTextDatum(d.model.source == vacskip::CostSource::kCalibration ?
									 "us" : "seq_page_cost");
		v[i++] = Float8GetDatum(vacskip::cost_model(storage, nullptr, 0, nullptr).skip_cost);
		v[i++] = Float8GetDatum(in.inputs.tuples_per_page);
		v[i++] = Float8GetDatum(in.inputs.delay_page);
		v[i++] = Float8GetDatum(d.model.density);
		v[i++] = Int64GetDatum(static_cast<int64>(d.model.runs));
		v[i++] = float8_array(d.model.cost, vacskip::kGapCount);
		if (d.model.source == vacskip::CostSource::kCalibration)
			v[i++] = float8_array(d.model.cpu_share, vacskip::kGapCount);
		else
			nulls[i++] = true;
		v[i++] = Int64GetDatum(freeze.relfrozenxid_age);
		v[i++] = Int64GetDatum(freeze.freeze_table_age);
		v[i++] = Int64GetDatum(freeze.relminmxid_age);
		v[i++] = Int64GetDatum(freeze.multixact_freeze_table_age);
		v[i++] = BoolGetDatum(d.read_through && vacskip::pg::hook_active());
		v[i++] = CStringGetTextDatum(mode_name(setting));
		v[i++] = Int64GetDatum(static_cast<int64>(d.thresholds.all_frozen));
		v[i++] = Int64GetDatum(static_cast<int64>(d.thresholds.all_visible));
		v[i++] = CStringGetTextDatum(d.reason);
		Assert(i == ncols);
		return HeapTupleGetDatum(heap_form_tuple(tupdesc, v, nulls));
	});
}

Datum
vacskip_simulate(PG_FUNCTION_ARGS)
{
	return vacskip::pg::guarded([&] {
		const Oid	relid = PG_GETARG_OID(0);
		int			n;
		int32	   *thresholds = thresholds_arg(PG_GETARG_ARRAYTYPE_P(1), &n);
		const bool	aggressive = PG_GETARG_BOOL(2);

		InitMaterializedSRF(fcinfo, 0);
		ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
		Relation	rel = open_heap_relation(relid);
		vacskip::pg::Inputs in;

		vacskip::pg::read_inputs(rel, nullptr, aggressive ? 1 : 0, &in);
		const vacskip::CostModel model = vacskip::cost_model(in.inputs.storage,
															 in.inputs.calibration,
															 in.inputs.tuples_per_page,
															 in.inputs.map,
															 in.inputs.delay_page,
															 in.inputs.delay_needed,
															 in.inputs.delay_nap);
		const BlockNumber rel_pages = RelationGetNumberOfBlocks(rel);
		auto	   *results = static_cast<vacskip::SimResult *>(
			palloc(sizeof(vacskip::SimResult) * n));

		for (int i = 0; i < n; i++)
		{
			new (&results[i]) vacskip::SimResult();
			results[i].threshold = static_cast<uint32>(thresholds[i]);
		}
		vacskip::pg::walk_visibility_map(rel, rel_pages, aggressive, results, n);
		relation_close(rel, AccessShareLock);

		for (int i = 0; i < n; i++)
		{
			const vacskip::SimResult &r = results[i];
			Datum		v[7];
			bool		nulls[7] = {false, false, false, false, false, false, false};

			v[0] = Int32GetDatum(thresholds[i]);
			v[1] = Int64GetDatum(static_cast<int64>(rel_pages));
			v[2] = Int64GetDatum(static_cast<int64>(r.pages_scanned));
			v[3] = Int64GetDatum(static_cast<int64>(r.pages_read_through));
			v[4] = Int64GetDatum(static_cast<int64>(r.io_runs));
			v[5] = BoolGetDatum(aggressive || !r.skipped_all_visible);
			v[6] = Float8GetDatum(vacskip::estimated_cost(model, in.inputs.calibration,
														  r.threshold, r.pages_scanned,
														  r.pages_read_through, r.io_runs));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
		}
		return (Datum) 0;
	});
}
}
