// Reading the autotuner's inputs from the server, and deciding from them.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "../core/calibration.hpp"
#include "module.hpp"
#include "calibration_store.hpp"
#include "inputs.hpp"

namespace vacskip::pg {

namespace {

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
	in->io_method = vacskip::io_method_of(GetConfigOption("io_method", true, false));
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

int
read_ahead_kb_of(Oid spcoid)
{
	char	   *dir = GetDatabasePath(MyDatabaseId, spcoid);
	struct stat st;
	const bool	found = stat(dir, &st) == 0;

	pfree(dir);
	return found ? vacskip::device_read_ahead_kb("/sys/dev/block", major(st.st_dev),
												 minor(st.st_dev)) : -1;
}

vacskip::Place
place_of_tablespace(Oid spcoid)
{
	char	   *dir = spcoid == DEFAULTTABLESPACE_OID ? pstrdup("base") :
		psprintf("pg_tblspc/%u/%s", spcoid, TABLESPACE_VERSION_DIRECTORY);
	vacskip::Place place;

	(void) vacskip::place_of(dir, &place);
	pfree(dir);
	return place;
}

namespace {

// What VACUUM reads of the tablespace's storage: read_ahead_kb_of() and
// place_of_tablespace(), read again at most once a second in a backend: the
// readahead alone, a stat() and a read of /sys, took about 17 us on the
// benchmark machine, more than the rest of the choice, and a VACUUM of a
// table with a TOAST table chooses twice.
constexpr double kStorageSeenFor = 1.0;   // seconds

struct Seen
{
	Oid			spcoid;
	int			kb;
	vacskip::Place place;
	instr_time	at;
};

const Seen &
storage_now(Oid spcoid)
{
	static Seen seen[8];
	static unsigned next;
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	Seen	   *s = nullptr;

	for (Seen &one : seen)
		if (OidIsValid(one.spcoid) && one.spcoid == spcoid)
			s = &one;
	if (s != nullptr)
	{
		instr_time	age = now;

		INSTR_TIME_SUBTRACT(age, s->at);
		if (INSTR_TIME_GET_DOUBLE(age) < kStorageSeenFor)
			return *s;
	}
	else
		s = &seen[next++ % lengthof(seen)];
	*s = Seen{spcoid, read_ahead_kb_of(spcoid), place_of_tablespace(spcoid), now};
	return *s;
}

}  // namespace

CalibrationState
read_calibration(Oid spcoid, vacskip::StorageInputs *now, vacskip::CalibrationRecord *rec)
{
	if (!load_calibration(spcoid, rec))
		return CalibrationState::kNone;
	if (rec->directory.inode != 0 || (!rec->direct_io && rec->read_ahead_kb >= 0 &&
									  !now->direct_io))
	{
		const Seen &seen = storage_now(spcoid);

		if (!vacskip::same_place(rec->directory, seen.place))
			return CalibrationState::kElsewhere;
		if (!rec->direct_io && rec->read_ahead_kb >= 0 && !now->direct_io)
			now->read_ahead_kb = seen.kb;
	}
	return vacskip::same_io_path(*rec, *now) ? CalibrationState::kCurrent :
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

// Bytes of visibility map per map page (visibilitymap.c's MAPSIZE; part of
// the on-disk format).
constexpr Size kMapBytesPerPage = BLCKSZ - MAXALIGN(SizeOfPageHeaderData);

void
walk_visibility_map(Relation rel, BlockNumber rel_pages, bool aggressive,
					vacskip::SimResult *results, int n)
{
	vacskip::VmWalker walker(rel_pages, aggressive, results, n);
	SMgrRelation smgr = RelationGetSmgr(rel);
	const BlockNumber map_pages = smgrexists(smgr, VISIBILITYMAP_FORKNUM) ?
		smgrnblocks(smgr, VISIBILITYMAP_FORKNUM) : 0;
	uint8	   *copy = static_cast<uint8 *>(palloc(kMapBytesPerPage));

	for (BlockNumber mapblk = 0;
		 mapblk < map_pages && walker.blocks_seen() < rel_pages; mapblk++)
	{
		CHECK_FOR_INTERRUPTS();
		Buffer		buf = ReadBufferExtended(rel, VISIBILITYMAP_FORKNUM, mapblk,
											 RBM_ZERO_ON_ERROR, nullptr);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		memcpy(copy, PageGetContents(BufferGetPage(buf)), kMapBytesPerPage);
		UnlockReleaseBuffer(buf);
		walker.feed(copy, kMapBytesPerPage);
	}
	walker.finish();
	pfree(copy);
}

namespace {

// The map's counts at every threshold the model prices, over rel_pages
// pages.
void
read_map_counts(Relation rel, BlockNumber rel_pages, bool aggressive, vacskip::MapCounts *out)
{
	vacskip::SimResult results[vacskip::kGapCount];

	for (int t = 0; t < vacskip::kGapCount; t++)
		results[t].threshold = vacskip::kGaps[t];
	walk_visibility_map(rel, rel_pages, aggressive, results, vacskip::kGapCount);
	*out = vacskip::MapCounts();
	out->rel_pages = rel_pages;
	out->segment_pages = RELSEG_SIZE;
	out->needed = results[0].pages_scanned - results[0].pages_read_through;
	for (int t = 0; t < vacskip::kGapCount; t++)
	{
		out->read_through[t] = results[t].pages_read_through;
		out->io_runs[t] = results[t].io_runs;
	}
}

}  // namespace

namespace {

// A page read through costs its miss and the free space map's hit; a page
// VACUUM must read is dirtied as well.
void
set_cost_delay(double delay_ms, int limit, vacskip::RelationInputs *in)
{
	in->delay_page = vacskip::cost_delay_us(delay_ms, limit, VacuumCostPageMiss,
											VacuumCostPageHit);
	in->delay_needed = vacskip::cost_delay_us(delay_ms, limit,
											  VacuumCostPageMiss + VacuumCostPageDirty,
											  VacuumCostPageHit);
	/* vacuum_delay_point() naps once the balance reaches the limit, for
	 * delay * balance / limit: at least the delay */
	in->delay_nap = in->delay_page > 0 ? 1000.0 * delay_ms : 0.0;
}

}  // namespace

void
session_cost_delay(vacskip::RelationInputs *in)
{
	set_cost_delay(VacuumCostDelay, VacuumCostLimit, in);
}

void
vacuum_cost_delay_now(vacskip::RelationInputs *in)
{
#if PG_VERSION_NUM >= 160000
	/* the VACUUM's own, which autovacuum sets apart from the settings */
	const double delay_ms = vacuum_cost_delay;
	const int	limit = vacuum_cost_limit;
#else
	const double delay_ms = VacuumCostDelay;
	const int	limit = VacuumCostLimit;
#endif

	set_cost_delay(VacuumCostActive ? delay_ms : 0, limit, in);
}

void
read_inputs(Relation rel, const struct VacuumParams *params, int aggressive, Inputs *out,
			bool walk_map, BlockNumber rel_pages)
{
	Oid			spcid = rel->rd_rel->reltablespace;

	if (!OidIsValid(spcid))
		spcid = MyDatabaseTableSpace;
	out->sources = StorageSources{spcid, false, false, false, false};
	out->inputs = vacskip::RelationInputs();
	read_storage_of(spcid, &out->inputs.storage);
	tablespace_overrides(spcid, &out->sources);
	out->calibration_state = read_calibration(spcid, &out->inputs.storage, &out->calibration);
	out->inputs.calibration = out->calibration_state == CalibrationState::kCurrent ?
		&out->calibration.costs : nullptr;
	out->inputs.tuples_per_page = density(rel);
	session_cost_delay(&out->inputs);
	read_freeze(rel, params, &out->inputs.freeze);
	/*
	 * As vacuum_get_cutoffs() decides, where the VACUUM did not say:
	 * aggressive once relfrozenxid (relminmxid) precedes or equals the
	 * cutoff, i.e. its age reaches the freeze table age.
	 */
	const vacskip::FreezeInputs &f = out->inputs.freeze;

	out->aggressive = aggressive >= 0 ? aggressive != 0 :
		f.relfrozenxid_age >= f.freeze_table_age ||
		f.relminmxid_age >= f.multixact_freeze_table_age;
	/* the map counts only where a calibration prices it */
	out->inputs.map = nullptr;
	if (out->inputs.calibration != nullptr || walk_map)
	{
		read_map_counts(rel, rel_pages != InvalidBlockNumber ? rel_pages :
						RelationGetNumberOfBlocks(rel), out->aggressive, &out->map);
		out->inputs.map = &out->map;
	}
}

vacskip::Decision
decide_for(Relation rel, const struct VacuumParams *params, int aggressive,
		   BlockNumber rel_pages)
{
	const int	setting = threshold_setting();
	Inputs		in;

	/* a fixed threshold needs none of the relation's inputs */
	if (setting != vacskip::kThresholdAutotune)
		return vacskip::decide(setting, vacskip::RelationInputs());
	read_inputs(rel, params, aggressive, &in, false, rel_pages);
	vacuum_cost_delay_now(&in.inputs);
	return vacskip::decide(setting, in.inputs);
}

}  // namespace vacskip::pg
