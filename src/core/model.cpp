#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace vacskip {

namespace {

// PostgreSQL's defaults for the page costs, the same in every major.
constexpr double kDefaultRandomPageCost = 4.0;
constexpr double kDefaultSeqPageCost = 1.0;

// The concurrency over which VACUUM's reads overlap.  From 18 on, VACUUM's
// first pass reads through a read stream whose look-ahead is
// maintenance_io_concurrency, with asynchronous I/O unless io_method is
// sync.  Before 18 VACUUM reads one block at a time.
int vacuum_concurrency(const StorageInputs &in) {
	if (in.server_major < 18 || in.io_method == IoMethod::kSync ||
		in.io_method == IoMethod::kNone)
		return 1;
	return std::max(in.maintenance_io_concurrency, 1);
}

// Pages VACUUM's reads of consecutive pages are merged into: from 18 on,
// the read stream combines up to io_combine_limit; before, the kernel's
// readahead does the merging.
int merged_read_pages(const StorageInputs &in) {
	if (in.server_major >= 18 && in.io_combine_limit > 0)
		return in.io_combine_limit;
	return kReadaheadPages;
}

// Splitting a merged read of up to k pages: skipping a run of L pages saves
// L pages and L/k requests, and costs one request (r pages):
// L * (1 + r/k) = r at L = k*r/(k + r).
double split_penalty(int k) {
	const double r = kRequestCostPages;
	return k * r / (k + r);
}

}  // namespace

StorageInputs default_storage(int major) {
	StorageInputs in;
	in.server_major = major;
	in.random_page_cost = kDefaultRandomPageCost;
	in.seq_page_cost = kDefaultSeqPageCost;
	if (major >= 18) {
		in.effective_io_concurrency = 16;
		in.maintenance_io_concurrency = 16;
		in.io_combine_limit = 16;
		in.io_method = IoMethod::kWorker;
	} else {
		in.effective_io_concurrency = 1;
		in.maintenance_io_concurrency = 10;
		in.io_combine_limit = 0;
		in.io_method = IoMethod::kNone;
	}
	return in;
}

CostModel cost_model(const StorageInputs &in) {
	const int concurrency = vacuum_concurrency(in);
	const int k = merged_read_pages(in);
	const double split = split_penalty(k);
	if (!(in.seq_page_cost > 0.0))
		return {std::numeric_limits<double>::infinity(), split,
				std::numeric_limits<double>::infinity(), concurrency, k};
	// A break also makes the next read a random one: random_page_cost /
	// seq_page_cost - 1, the excess the DBA's settings describe, taken
	// literally.  A second term takes B to stock's 32 at PostgreSQL's
	// default ratio, whatever io_combine_limit is: the defaults describe the
	// storage SKIP_PAGES_THRESHOLD was chosen for.  It rises as the tenth
	// power of the excess over the default's (kRandomShape, fitted), so it
	// matters only near the defaults.
	const double excess = std::max(in.random_page_cost / in.seq_page_cost - 1.0, 0.0);
	const double default_excess = kDefaultRandomPageCost / kDefaultSeqPageCost - 1.0;
	const double share = std::pow(excess / default_excess, kRandomShape);
	const double random = excess + (kStockThreshold - split - default_excess) * share;
	return {split + random, split, random, concurrency, k};
}

std::uint32_t tuned_threshold(const CostModel &model) {
	// Skip iff L >= penalty, L an integer: the threshold is ceil(penalty).
	// The epsilon keeps 32.000000001 (rounding) from becoming 33.
	const double t = std::ceil(model.break_penalty - 1e-9);
	if (!(t < kStockThreshold))
		return kStockThreshold;
	return t < 1.0 ? 1u : static_cast<std::uint32_t>(t);
}

double estimated_cost(const CostModel &model, std::uint64_t pages_scanned,
					  std::uint64_t io_runs) {
	const double breaks = io_runs == 0 ? 0.0 : model.break_penalty * io_runs;
	return static_cast<double>(pages_scanned) + breaks;
}

bool relfrozenxid_due(const FreezeInputs &in) {
	return in.relfrozenxid_age > kReadThroughFraction * in.freeze_table_age ||
		   in.relminmxid_age > kReadThroughFraction * in.multixact_freeze_table_age;
}

Decision decide(int setting, const StorageInputs &storage, const FreezeInputs &freeze) {
	Decision d{};
	d.model = cost_model(storage);
	if (setting != kThresholdAutotune) {
		d.thresholds = choose_thresholds(setting);
		d.autotuned = false;
		d.read_through = false;
		std::snprintf(d.reason, sizeof(d.reason), "fixed by vacskip.threshold = %d", setting);
		return d;
	}
	const std::uint32_t t = tuned_threshold(d.model);
	d.autotuned = true;
	d.thresholds = {t, t};
	// A threshold below stock skips more all-visible runs than stock does,
	// so non-aggressive VACUUMs advance relfrozenxid less often; as the next
	// aggressive VACUUM nears, read those runs.  At the stock threshold
	// nothing changes: installing vacskip alters no VACUUM until the storage
	// is described as faster than PostgreSQL's defaults.
	d.read_through = t < kStockThreshold && relfrozenxid_due(freeze);
	if (d.read_through)
		d.thresholds.all_visible = kReadThrough;
	int n;
	if (!(storage.seq_page_cost > 0.0))
		n = std::snprintf(d.reason, sizeof(d.reason),
						  "autotuned: seq_page_cost %.3g is not positive (reading is free), "
						  "so runs of %u or more pages are skipped, as in stock PostgreSQL",
						  storage.seq_page_cost, t);
	else
		n = std::snprintf(
			d.reason, sizeof(d.reason),
			"autotuned: a break in the read stream costs %.3g sequential page reads "
			"(%.3g for splitting a read of up to %d pages, %.3g for random_page_cost/"
			"seq_page_cost %.3g; I/O concurrency %d), so runs of %u or more pages are "
			"skipped",
			d.model.break_penalty, d.model.split_penalty, d.model.request_pages,
			d.model.random_penalty, storage.random_page_cost / storage.seq_page_cost,
			d.model.concurrency, t);
	if (d.read_through && n > 0 && static_cast<std::size_t>(n) < sizeof(d.reason))
		std::snprintf(d.reason + n, sizeof(d.reason) - n,
					  "; runs with all-visible pages are read so that relfrozenxid can "
					  "advance (age past %.0f%% of the freeze table age)",
					  kReadThroughFraction * 100);
	return d;
}

}  // namespace vacskip
