// The autotuner's cost model: from what reads cost on a tablespace's storage
// to the skip thresholds of one VACUUM.  Pure C++17, no PostgreSQL headers.
// docs/model.md derives it.
#pragma once
#include "cpp_only.hpp"

#include <cstdint>

#include "policy.hpp"

namespace vacskip {

// How the server performs I/O (io_method on 18; 15 has none: kNone).
enum class IoMethod { kNone, kSync, kWorker, kIoUring, kOther };

// Storage settings in effect for one relation (per tablespace where
// PostgreSQL allows it), plus the server facts that decide which matter.
struct StorageInputs {
	int server_major = 18;
	double random_page_cost = 4.0;
	double seq_page_cost = 1.0;
	int effective_io_concurrency = 16;
	int maintenance_io_concurrency = 16;
	int io_combine_limit = 16;          // pages; 0 where the server has none
	IoMethod io_method = IoMethod::kWorker;
	int io_workers = 3;                 // io_method worker only
	bool direct_io = false;             // debug_io_direct includes data
};

// The storage settings PostgreSQL `major` ships with.
StorageInputs default_storage(int major);

// The concurrency VACUUM's reads overlap with: from 18 on its read stream
// keeps up to maintenance_io_concurrency reads in flight, performed by
// io_workers processes with io_method worker, by the kernel with io_uring,
// and one at a time with io_method sync; before 18 VACUUM reads one block
// at a time.
int vacuum_read_concurrency(const StorageInputs &in);

// The run lengths L (pages VACUUM skips or reads between two pages it
// must read) at which the costs are known; between them they are
// interpolated.  32 is stock's threshold: runs that long are skipped
// whatever the storage, so longer ones need no figures.
constexpr int kGapCount = 6;
constexpr std::uint32_t kGaps[kGapCount] = {1, 2, 4, 8, 16, 32};

// What vacskip.calibrate() measured on one tablespace's storage through the
// server's own read path, in microseconds, cold.
struct Calibration {
	// Per page read, reading one page out of every kGaps[i] + 1: the cost
	// of a page VACUUM reads after skipping kGaps[i] pages.
	double gap_us[kGapCount] = {};
	// Per run, reading runs of consecutive pages that each follow a long
	// skip: runs of 1 page (run_us[0]) and of kGaps[i] + 2 pages
	// (run_us[i + 1]: a page, kGaps[i] pages read through, the next page).
	double run_us[kGapCount + 1] = {};
	// VACUUM's work on a page it reads although the map let it skip it (an
	// all-frozen page: pruning and freezing find nothing to do), measured on
	// cached pages: a fixed part per page and a part per tuple.
	double cpu_page_us = 0;
	double cpu_tuple_us = 0;
};

// Whether a calibration holds usable figures (finite, not negative, a
// positive cost for a lone page).
bool calibration_valid(const Calibration &c);

// Where the costs came from.
enum class CostSource {
	kSettings,       // random_page_cost / seq_page_cost, as documented
	kCalibration,    // vacskip.calibrate() on this tablespace
};

// What the next page VACUUM must read costs, given a run of kGaps[i]
// skippable pages before it, either way, in `unit`s: seq_page_cost for
// kSettings, microseconds for kCalibration.
struct CostModel {
	CostSource source;
	// Skipping the run: that page is read after a skip.
	double skip_cost[kGapCount];
	// Reading the run through: the run's pages and that page continue the
	// read before them, and VACUUM works on the run's pages.
	double through_cost[kGapCount];
	// Of through_cost, per page of the run: VACUUM's work (0 where no
	// measurement gives it).
	double cpu_page;
	// vacuum_read_concurrency(): reported, and part of what a calibration
	// measured.
	int concurrency;
};

// PostgreSQL's documented meaning of random_page_cost: "The default value
// can be thought of as modeling random access as 40 times slower than
// sequential, while expecting 90% of random reads to be cached."  VACUUM's
// reads of the pages it would skip are not cached: the storage's own cost
// of a non-sequential read is random_page_cost / (1 - 0.9), 40 / 4 times
// random_page_cost.
constexpr double kDocumentedUncachedFactor = 40.0 / 4.0;

// `calibration` may be null (no valid calibration of this tablespace for
// the I/O path VACUUM uses now); `tuples_per_page` is the relation's
// density (reltuples / relpages), 0 when unknown.
CostModel cost_model(const StorageInputs &in, const Calibration *calibration,
					 double tuples_per_page);

// skip_cost and through_cost at a run of `run` pages (linear between the
// known lengths; beyond 32 the 32-page skip and the 32-page through cost
// per page).
double skip_cost_at(const CostModel &model, double run);
double through_cost_at(const CostModel &model, double run);

// The all-frozen threshold the model chooses: the shortest run length L
// from which on skipping never costs more than reading through, i.e.
// skip_cost_at(L') <= through_cost_at(L') for every L' >= L; clamped to
// 1..kStockThreshold so that vacskip never reads more than stock.
std::uint32_t tuned_threshold(const CostModel &model);

// The model's cost of a VACUUM that reads `pages_scanned` pages in
// `io_runs` runs of consecutive pages, in the model's unit: a page after a
// 32-page skip for every run, the rest at the 32-page through cost per
// page.
double estimated_cost(const CostModel &model, std::uint64_t pages_scanned,
					  std::uint64_t io_runs);

// How far the relation is from the next aggressive VACUUM.
struct FreezeInputs {
	std::int64_t relfrozenxid_age = 0;
	std::int64_t freeze_table_age = 150000000;             // effective value
	std::int64_t relminmxid_age = 0;
	std::int64_t multixact_freeze_table_age = 150000000;   // effective value
};

// Once relfrozenxid (or relminmxid) is older than this fraction of the
// effective freeze table age, an autotuned VACUUM reads runs that contain
// all-visible, unfrozen pages, so that it can advance relfrozenxid.
constexpr double kReadThroughFraction = 0.5;

// A threshold no run reaches: the run is always read.
constexpr std::uint32_t kReadThrough = 0xFFFFFFFFu;

// Whether relfrozenxid or relminmxid is old enough to read all-visible runs.
bool relfrozenxid_due(const FreezeInputs &in);

// Everything the autotuner knows about one VACUUM.
struct RelationInputs {
	StorageInputs storage;
	const Calibration *calibration = nullptr;   // valid and current, or null
	double tuples_per_page = 0;
	FreezeInputs freeze;
};

struct Decision {
	Thresholds thresholds;
	bool autotuned;        // vacskip.threshold = -1
	bool read_through;     // all-visible runs read so relfrozenxid can advance
	CostModel model;
	char reason[512];      // one line for vacskip.explain_threshold()
};

// The thresholds for one VACUUM under vacskip.threshold = `setting`.
// Throws std::invalid_argument for an invalid setting.
Decision decide(int setting, const RelationInputs &in);

}  // namespace vacskip
