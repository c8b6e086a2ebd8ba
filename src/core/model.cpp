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

bool finite_nonnegative(double x)
{
	return std::isfinite(x) && x >= 0.0;
}

}  // namespace

StorageInputs default_storage(int major)
{
	StorageInputs in;
	in.server_major = major;
	in.random_page_cost = kDefaultRandomPageCost;
	in.seq_page_cost = kDefaultSeqPageCost;
	if (major >= 18) {
		in.effective_io_concurrency = 16;
		in.maintenance_io_concurrency = 16;
		in.io_combine_limit = 16;
		in.io_method = IoMethod::kWorker;
		in.io_workers = 3;
	} else {
		in.effective_io_concurrency = 1;
		in.maintenance_io_concurrency = 10;
		in.io_combine_limit = 0;
		in.io_method = IoMethod::kNone;
		in.io_workers = 0;
	}
	in.direct_io = false;
	return in;
}

int vacuum_read_concurrency(const StorageInputs &in)
{
	if (in.server_major < 18 || in.io_method == IoMethod::kSync ||
		in.io_method == IoMethod::kNone)
		return 1;
	const int ahead = std::max(in.maintenance_io_concurrency, 1);
	if (in.io_method == IoMethod::kWorker)
		return std::max(std::min(ahead, in.io_workers), 1);
	return ahead;
}

bool calibration_valid(const Calibration &c)
{
	if (!(std::isfinite(c.run_us[0]) && c.run_us[0] > 0.0))
		return false;
	for (double g : c.gap_us)
		if (!finite_nonnegative(g))
			return false;
	for (double r : c.run_us)
		if (!finite_nonnegative(r))
			return false;
	return finite_nonnegative(c.cpu_page_us) && finite_nonnegative(c.cpu_tuple_us);
}

CostModel cost_model(const StorageInputs &in, const Calibration *calibration,
					 double tuples_per_page)
{
	CostModel m{};
	m.concurrency = vacuum_read_concurrency(in);
	if (calibration != nullptr && calibration_valid(*calibration)) {
		// Measured, in microseconds.  Skipping a run of L pages: the next
		// page is read after a skip of L, as in the gap patterns.  Reading it
		// through: a lone page's run (the page before the run) grows by L + 1
		// pages, as the runs measured cold after a long skip grow, and
		// VACUUM works on L more pages.
		const Calibration &c = *calibration;
		const double tuples = finite_nonnegative(tuples_per_page) ? tuples_per_page : 0.0;
		m.source = CostSource::kCalibration;
		m.cpu_page = c.cpu_page_us + c.cpu_tuple_us * tuples;
		for (int i = 0; i < kGapCount; i++) {
			m.skip_cost[i] = c.gap_us[i];
			m.through_cost[i] = std::max(c.run_us[i + 1] - c.run_us[0], 0.0) +
				kGaps[i] * m.cpu_page;
		}
		return m;
	}
	// From the settings, in seq_page_cost units.  Read through, the run's L
	// pages and the next are sequential reads; skipped, the next is a
	// non-sequential one, which costs random_page_cost / seq_page_cost on the
	// planner's scale, read as the documentation defines that scale (90 % of
	// random reads cached): the storage's own cost is ten times that.
	// Whatever the run: the settings do not say what a short skip costs.
	m.source = CostSource::kSettings;
	m.cpu_page = 0.0;
	double skip = std::numeric_limits<double>::infinity();
	if (in.seq_page_cost > 0.0)
		skip = std::max(in.random_page_cost, 0.0) / in.seq_page_cost * kDocumentedUncachedFactor;
	for (int i = 0; i < kGapCount; i++) {
		m.skip_cost[i] = skip;
		m.through_cost[i] = kGaps[i] + 1.0;
	}
	return m;
}

namespace {

// A curve known at kGaps, at `run`: linear between them, the first value
// below, and beyond the last the last value plus `per_page` for each page.
double at(const double (&ys)[kGapCount], double run, double per_page)
{
	if (!(run > kGaps[0]))
		return ys[0];
	for (int i = 1; i < kGapCount; i++) {
		if (run <= kGaps[i]) {
			const double lo = kGaps[i - 1], hi = kGaps[i];
			if (std::isinf(ys[i - 1]) || std::isinf(ys[i]))
				return std::max(ys[i - 1], ys[i]);
			return ys[i - 1] + (ys[i] - ys[i - 1]) * (run - lo) / (hi - lo);
		}
	}
	return ys[kGapCount - 1] + (run - kGaps[kGapCount - 1]) * per_page;
}

}  // namespace

double skip_cost_at(const CostModel &model, double run)
{
	return at(model.skip_cost, run, 0.0);
}

double through_cost_at(const CostModel &model, double run)
{
	const double last = model.through_cost[kGapCount - 1];
	return at(model.through_cost, run, last / (kGaps[kGapCount - 1] + 1));
}

std::uint32_t tuned_threshold(const CostModel &model)
{
	// From the stock threshold down: the threshold is one above the longest
	// run that is cheaper to read through than to skip.  Costs equal within
	// rounding count as equal (1.1 * 10 is 11.000000000000002 in binary).
	for (std::uint32_t run = kStockThreshold; run >= 1; run--) {
		if (through_cost_at(model, run) < skip_cost_at(model, run) * (1 - 1e-12))
			return std::min(run + 1, kStockThreshold);
	}
	return 1;
}

double estimated_cost(const CostModel &model, std::uint64_t pages_scanned,
					  std::uint64_t io_runs)
{
	const double per_page = through_cost_at(model, kStockThreshold) / (kStockThreshold + 1);
	const double runs = static_cast<double>(std::min(io_runs, pages_scanned));
	return runs * skip_cost_at(model, kStockThreshold) +
		(static_cast<double>(pages_scanned) - runs) * per_page;
}

bool relfrozenxid_due(const FreezeInputs &in)
{
	return in.relfrozenxid_age > kReadThroughFraction * in.freeze_table_age ||
		   in.relminmxid_age > kReadThroughFraction * in.multixact_freeze_table_age;
}

namespace {

// The reason line of an autotuned decision.
void explain(const Decision &d, const RelationInputs &in, std::uint32_t t,
			 char *out, std::size_t size)
{
	const CostModel &m = d.model;
	int n;
	if (m.source == CostSource::kCalibration)
		n = std::snprintf(
			out, size,
			"autotuned from the storage measured by vacskip.calibrate(): after a skip of "
			"1 / 32 pages the next page costs %.3g / %.3g us; reading those pages through "
			"instead costs %.3g / %.3g us (%.3g us per page of it VACUUM's work on %.3g "
			"tuples); so runs of %u or more pages are skipped",
			m.skip_cost[0], m.skip_cost[kGapCount - 1], m.through_cost[0],
			m.through_cost[kGapCount - 1], m.cpu_page, in.tuples_per_page, t);
	else if (!(in.storage.seq_page_cost > 0.0))
		n = std::snprintf(out, size,
						  "autotuned: seq_page_cost %.3g is not positive (reading is "
						  "free), so runs of %u or more pages are skipped, as in stock "
						  "PostgreSQL",
						  in.storage.seq_page_cost, t);
	else
		n = std::snprintf(
			out, size,
			"autotuned from the settings: random_page_cost/seq_page_cost %.3g, read "
			"as documented (90%% of random reads cached), makes an uncached "
			"non-sequential read cost %.3g sequential ones, so runs of %u or more pages "
			"are skipped (vacskip.calibrate() measures the storage instead)",
			in.storage.random_page_cost / in.storage.seq_page_cost, m.skip_cost[0], t);
	if (d.read_through && n > 0 && static_cast<std::size_t>(n) < size)
		std::snprintf(out + n, size - n,
					  "; runs with all-visible pages are read so that relfrozenxid can "
					  "advance (age past %.0f%% of the freeze table age)",
					  kReadThroughFraction * 100);
}

}  // namespace

Decision decide(int setting, const RelationInputs &in)
{
	Decision d{};
	d.model = cost_model(in.storage, in.calibration, in.tuples_per_page);
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
	// is described as faster than PostgreSQL's defaults, or measured.
	d.read_through = t < kStockThreshold && relfrozenxid_due(in.freeze);
	if (d.read_through)
		d.thresholds.all_visible = kReadThrough;
	explain(d, in, t, d.reason, sizeof(d.reason));
	return d;
}

}  // namespace vacskip
