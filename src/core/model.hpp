// The autotuner's cost model: from the storage settings a DBA gives
// PostgreSQL to the skip thresholds of one VACUUM.  Pure C++17, no
// PostgreSQL headers.  docs/model.md explains the model.
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
};

// The storage settings PostgreSQL `major` ships with.
StorageInputs default_storage(int major);

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

// What one more I/O request costs, in pages transferred within a request:
// an assumption about the storage that no PostgreSQL setting states.  This
// machine's disk: a lone 8 kB read 60 us, a 128 kB read 141 us at queue
// depth 1 (../shared/MEASURED.md), i.e. ~55 us per request against ~5.4 us
// per page (r ~ 10); 8 is a round figure below that, for flash in general.
constexpr double kRequestCostPages = 8.0;

// Pages merged into one read request when VACUUM reads consecutive pages
// before 18, where the kernel's readahead does the merging, which
// PostgreSQL cannot see.  A skip starts a new sequential stream, and Linux
// starts a new stream's readahead window small: 32 kB (4 pages) for 8 kB
// reads with read_ahead_kb of 256 kB or more (16 kB below that), growing
// with each window.  The runs a threshold decides about are short, so the
// model takes the first window.  (Revision 2 took the 128 kB maximum; the
// benchmark's buffered reads on 15.18 favoured thresholds 1-4 over its 6.)
constexpr int kReadaheadPages = 4;

// The random part of a break has two terms.  The first is what the settings
// say literally: the next read is a random one, random_page_cost /
// seq_page_cost - 1 sequential reads dearer.  The second keeps stock's 32 at
// PostgreSQL's default ratio 4 (HDD-era defaults, whose literal reading would
// understate a spinning disk's seeks): what the split and the default's
// excess 3 leave of 32, times the excess ratio
// (random_page_cost/seq_page_cost - 1) / 3 raised to this power.  Fitted, not
// derived.  In three runs the benchmark's slow-random-read profile (its
// random_page_cost measured 2.9, 3.5, 3.4) was fastest at 8 or 16 on 18 and
// at 4-8 on 15; revision 4's fifth power with no literal term chose 15 (18)
// and 13 (15) at 3.4, 1.30 x the best on a 15 row.  The tenth power maps
// 2.9-3.5 to 8-12 (18) and 5-10 (15), 3.4 to 11 and 8 (docs/model.md,
// "Revision 5").
constexpr double kRandomShape = 10.0;

struct CostModel {
	// What breaking the read stream (skipping a run, then reading on) costs,
	// in sequential page reads: split_penalty + random_penalty.
	// +infinity when seq_page_cost <= 0.
	double break_penalty;
	// The part any storage pays: the extra request of splitting a merged read.
	double split_penalty;
	// The part the DBA's settings describe: a random read's excess cost,
	// literal plus the term that keeps stock's 32 at the default costs.
	double random_penalty;
	// The I/O concurrency VACUUM's reads overlap with (reported; the
	// benchmark did not support a term for it, docs/model.md).
	int concurrency;
	// Pages merged into one request (io_combine_limit on 18).
	int request_pages;
};

CostModel cost_model(const StorageInputs &in);

// The all-frozen threshold the model chooses: skipping a run of L pages
// saves L page reads and costs one break, so runs with L >= break_penalty
// are skipped; clamped to 1..kStockThreshold so that vacskip never reads
// more than stock PostgreSQL.
std::uint32_t tuned_threshold(const CostModel &model);

// The model's cost of a VACUUM that reads `pages_scanned` pages in
// `io_runs` runs of consecutive pages, in seq_page_cost units.
double estimated_cost(const CostModel &model, std::uint64_t pages_scanned,
					  std::uint64_t io_runs);

// Whether relfrozenxid or relminmxid is old enough to read all-visible runs.
bool relfrozenxid_due(const FreezeInputs &in);

struct Decision {
	Thresholds thresholds;
	bool autotuned;        // vacskip.threshold = -1
	bool read_through;     // all-visible runs read so relfrozenxid can advance
	CostModel model;
	char reason[512];      // one line for vacskip.explain_threshold()
};

// The thresholds for one VACUUM under vacskip.threshold = `setting`.
// Throws std::invalid_argument for an invalid setting.
Decision decide(int setting, const StorageInputs &storage, const FreezeInputs &freeze);

}  // namespace vacskip
