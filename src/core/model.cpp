#include "model.hpp"
#include "calibration.hpp"

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
	for (int d = 0; d < kDensityCount; d++)
		for (int t = 0; t < kGapCount; t++)
			if (!(std::isfinite(c.read_us[d][t]) && c.read_us[d][t] > 0.0 &&
				  std::isfinite(c.start_read_us[d][t]) && c.start_read_us[d][t] > 0.0))
				return false;
	for (int d = 0; d < kDensityCount; d++)
		if (!finite_nonnegative(c.read_noise[d]) || !finite_nonnegative(c.start_read_noise[d]))
			return false;
	for (int d = 0; d < kDensityCount; d++)
		for (int t = 0; t < kGapCount; t++)
			if (!(c.read_cpu_share[d][t] >= 0.0 && c.read_cpu_share[d][t] <= 1.0))
				return false;
	return finite_nonnegative(c.cpu_page_us) && finite_nonnegative(c.cpu_tuple_us) &&
		   c.noise_dof >= 0;
}

namespace {

// Where x falls between the points xs[0..n): the index i of the segment
// [xs[i], xs[i + 1]] and the share w along it, in the logarithms; clamped to
// the ends.
void locate(const double *xs, int n, double x, int *i, double *w)
{
	if (!(x > xs[0])) {
		*i = 0;
		*w = 0.0;
		return;
	}
	for (int k = 0; k + 1 < n; k++) {
		if (x <= xs[k + 1]) {
			*i = k;
			*w = std::log(x / xs[k]) / std::log(xs[k + 1] / xs[k]);
			return;
		}
	}
	*i = n - 2;
	*w = 1.0;
}

}  // namespace

double start_share(std::uint64_t rel_pages, std::uint64_t segment_pages)
{
	if (rel_pages == 0)
		return 1.0;
	if (segment_pages == 0)
		segment_pages = rel_pages;
	const std::uint64_t full = rel_pages / segment_pages;
	const std::uint64_t last = rel_pages % segment_pages;
	const double first = static_cast<double>(full) *
		static_cast<double>(std::min<std::uint64_t>(segment_pages, kStartPages)) +
		static_cast<double>(std::min<std::uint64_t>(last, kStartPages));
	return first / static_cast<double>(rel_pages);
}

namespace {

// Where (density, threshold) falls among the calibrated ones: locate() of
// each.
void locate_pattern(double density, double threshold, int *di, double *dw, int *ti,
					double *tw)
{
	double gaps[kGapCount];
	for (int t = 0; t < kGapCount; t++)
		gaps[t] = kGaps[t];
	locate(kDensities, kDensityCount, density, di, dw);
	locate(gaps, kGapCount, threshold, ti, tw);
}

}  // namespace

double measured_read_us(const Calibration &c, double density, double threshold, bool start)
{
	int di, ti;
	double dw, tw;
	locate_pattern(density, threshold, &di, &dw, &ti, &tw);
	const auto &us = start ? c.start_read_us : c.read_us;
	auto at = [&](int d) {
		return std::log(us[d][ti]) * (1 - tw) + std::log(us[d][ti + 1]) * tw;
	};
	return std::exp(at(di) * (1 - dw) + at(di + 1) * dw);
}

double measured_cpu_share(const Calibration &c, double density, double threshold)
{
	int di, ti;
	double dw, tw;
	locate_pattern(density, threshold, &di, &dw, &ti, &tw);
	const auto &s = c.read_cpu_share;
	auto at = [&](int d) { return s[d][ti] * (1 - tw) + s[d][ti + 1] * tw; };
	return at(di) * (1 - dw) + at(di + 1) * dw;
}

double stream_read_us(const Calibration &c, bool start)
{
	const auto &us = start ? c.start_read_us : c.read_us;
	return us[kDensityCount - 1][kGapCount - 1] * kDensities[kDensityCount - 1];
}

double measured_noise(const Calibration &c, double density, bool start)
{
	int di;
	double dw;
	locate(kDensities, kDensityCount, density, &di, &dw);
	const auto &noise = start ? c.start_read_noise : c.read_noise;
	return noise[di] * (1 - dw) + noise[di + 1] * dw;
}

double one_sided_95(int dof)
{
	// the last quantile asked: a calibration's degrees of freedom stay the
	// same from one VACUUM to the next, and a backend asks one at a time
	static int last_dof = 0;
	static double last_t = 0;
	dof = std::max(dof, 1);
	if (dof != last_dof) {
		last_t = t_quantile(0.05, dof);
		last_dof = dof;
	}
	return last_t;
}

namespace {

// A calibrated cost's parts: reading the relation's share among the
// segment files' first pages (*start), the rest (*rest); VACUUM's work on
// the pages read through is read_through * model.cpu_page.  Where not
// null, each part times its figures' noise, summed: *spread over the part
// priced at the threshold's own figures, *shared over the pages read on
// in a stream, priced with one figure at every threshold.  The runs are
// priced with the figures of density `at`: the map's run_density, or one of
// the calibrated densities either side of it.
void calibrated_reads(const CostModel &model, const Calibration &c, std::uint32_t threshold,
					  std::uint64_t pages_scanned, std::uint64_t read_through, double at,
					  double *start, double *rest, double *spread, double *shared)
{
	// per run: read_us per page to read, times the pages to read per run
	// on the scattered map of run_density, 1 / (1 - d); longer runs read
	// on in a stream
	const double d = model.run_density;
	const double needed = static_cast<double>(pages_scanned - read_through);
	const double runs = std::min(model.runs, needed);
	const double per_run = 1.0 / (1.0 - d);
	const double in_runs = std::max(needed - runs * per_run, 0.0);
	constexpr double kDensest = kDensities[kDensityCount - 1];
	auto reads = [&](bool first) {
		return runs * per_run * measured_read_us(c, at, threshold, first) +
			in_runs * stream_read_us(c, first);
	};
	auto noisy = [&](bool first) {
		return runs * per_run * measured_read_us(c, at, threshold, first) *
			measured_noise(c, at, first);
	};
	auto noisy_stream = [&](bool first) {
		return in_runs * stream_read_us(c, first) * measured_noise(c, kDensest, first);
	};
	const double f = std::min(std::max(model.start_share, 0.0), 1.0);
	*start = f * reads(true);
	*rest = (1 - f) * reads(false);
	if (spread != nullptr)
		*spread = f * noisy(true) + (1 - f) * noisy(false);
	if (shared != nullptr)
		*shared = f * noisy_stream(true) + (1 - f) * noisy_stream(false);
}

}  // namespace

double cost_delay_us(double delay_ms, int cost_limit, int page_miss, int page_hit)
{
	const int points = std::max(page_miss, 0) + std::max(page_hit, 0);
	if (!(std::isfinite(delay_ms) && delay_ms > 0.0) || cost_limit <= 0 || points <= 0)
		return 0.0;
	return 1000.0 * delay_ms * points / cost_limit;
}

double hidden_by_sleep(const CostModel &model, double reads, double sleep, double ios,
					   double cpu_share)
{
	if (!model.sleep_overlaps || !(reads > 0.0 && sleep > 0.0 && ios > 0.0))
		return 0.0;
	const double waiting = reads * (1.0 - std::clamp(cpu_share, 0.0, 1.0));
	const double per_nap = model.reads_ahead * waiting / ios;
	return std::min({sleep, waiting, sleep / model.nap * per_nap});
}

double reading_share(const CostModel &model, double reads, double sleep, double ios,
					 double noise, double cpu_share)
{
	auto left = [&](double x) {
		return x - hidden_by_sleep(model, x, sleep, ios, cpu_share);
	};
	if (!(noise > 0.0))
		return reads > 0.0 ? left(reads) / reads : 0.0;
	return std::max(left(reads + noise) - left(reads),
					left(reads) - left(std::max(reads - noise, 0.0))) /
		noise;
}

double reads_at_most(const CostModel &model, double pages_scanned, double io_runs)
{
	return io_runs + pages_scanned / std::max(model.io_combine, 1.0);
}

CostModel cost_model(const StorageInputs &in, const Calibration *calibration,
					 double tuples_per_page, const MapCounts *map, double delay_page,
					 double delay_needed, double delay_nap)
{
	CostModel m{};
	std::fill(m.kept, m.kept + kGapCount, 1.0);
	m.concurrency = vacuum_read_concurrency(in);
	m.reads_ahead = std::max(in.maintenance_io_concurrency, 1);
	m.io_combine = std::max(in.io_combine_limit, 1);
	const double tuples = finite_nonnegative(tuples_per_page) ? tuples_per_page : 0.0;
	const bool measured = calibration != nullptr && calibration_valid(*calibration);
	m.density = map != nullptr && map->rel_pages > 0 ?
		static_cast<double>(map->needed) / static_cast<double>(map->rel_pages) : 0.0;
	// Runs of pages to read: what threshold 1 reads in one run each.
	m.runs = map != nullptr ? static_cast<double>(map->io_runs[0]) : 0.0;
	const double skippable = map != nullptr && map->rel_pages > map->needed ?
		static_cast<double>(map->rel_pages - map->needed) : 0.0;
	constexpr double kDensest = kDensities[kDensityCount - 1];
	m.run_density = skippable > 0.0 ? std::min(m.runs / skippable, kDensest) : kDensest;
	m.start_share = map != nullptr ? start_share(map->rel_pages, map->segment_pages) : 1.0;
	if (measured) {
		// Measured, in microseconds: each run of pages VACUUM must read
		// costs what a run cost on the scattered map with skippable runs as
		// long, the pages read through add VACUUM's work on them.
		const Calibration &c = *calibration;
		m.source = CostSource::kCalibration;
		m.cpu_page = c.cpu_page_us + c.cpu_tuple_us * tuples;
		m.delay_page = finite_nonnegative(delay_page) ? delay_page : 0.0;
		m.delay_needed = finite_nonnegative(delay_needed) ? delay_needed : 0.0;
		// the read stream's reads issued go on while VACUUM sleeps: from 18
		// on, performed by I/O workers or the kernel
		m.nap = finite_nonnegative(delay_nap) ? delay_nap : 0.0;
		m.sleep_overlaps = m.delay_page > 0.0 && m.nap > 0.0 && in.server_major >= 18 &&
			(in.io_method == IoMethod::kWorker || in.io_method == IoMethod::kIoUring);
		m.skip_cost = m.seq_cost = 0.0;
		m.noise_dof = c.noise_dof;
		for (int t = 0; t < kGapCount; t++)
			m.cpu_share[t] = measured_cpu_share(c, m.run_density, kGaps[t]);
		const double work_noise = measured_noise(c, m.run_density);
		// A threshold's cost with the runs priced at the figures of density
		// `at`; where not null, *spread its parts' noise and *kept how much
		// of the reading's error passes into the cost (reading_share()), the
		// spread so counted, *shared the stream's noise.
		auto price = [&](int t, double at, double *spread, double *shared, double *kept) {
			double start = 0.0, rest = 0.0, noisy = 0.0, stream = 0.0;
			if (map != nullptr)
				calibrated_reads(m, c, kGaps[t], map->needed + map->read_through[t],
								 map->read_through[t], at, &start, &rest, &noisy, &stream);
			if (shared != nullptr)
				*shared = stream;
			const double through = map != nullptr ?
				static_cast<double>(map->read_through[t]) : 0.0;
			const double work = through * m.cpu_page;
			const double reads = start + rest;
			double cost, share = 1.0;
			if (m.sleep_overlaps) {
				// the reading, the sleeping, less what the sleeping hides;
				// an error of the reading moves that by reading_share() of it
				const double needed = map != nullptr ? static_cast<double>(map->needed) : 0.0;
				const double sleep = needed * m.delay_needed + through * m.delay_page;
				const double ios = reads_at_most(
					m, needed + through,
					map != nullptr ? static_cast<double>(map->io_runs[t]) : 0.0);
				const double cpu = measured_cpu_share(c, at, kGaps[t]);
				const double hidden = hidden_by_sleep(m, reads, sleep, ios, cpu);
				share = reading_share(m, reads, sleep, ios, noisy + stream, cpu);
				cost = work + reads + sleep - hidden;
			} else
				cost = reads + work + through * m.delay_page;
			if (spread != nullptr)
				*spread = noisy * share;
			if (kept != nullptr)
				*kept = share;
			return cost;
		};
		// Thresholds that read the same pages cost the same: what the
		// highest of them costs.
		auto same_pages = [&](int t) {
			return map != nullptr && map->read_through[t] == map->read_through[t + 1] &&
				map->io_runs[t] == map->io_runs[t + 1];
		};
		// the pages read on in a stream: the same part, and noise, at every
		// threshold
		double shared = 0.0;
		for (int t = 0; t < kGapCount; t++) {
			double spread = 0.0;
			m.cost[t] = price(t, m.run_density, &spread, &shared, &m.kept[t]);
			// each part's figures as noisy as measured at the density it is
			// priced at, the parts weighted by their shares of the cost and
			// added (the most their noise can add up to, however the parts'
			// errors go together); the pages read on in a stream apart: the
			// same part of every threshold's cost; the delay is a setting's
			// meaning, not a measurement
			const double work = (map != nullptr ?
				static_cast<double>(map->read_through[t]) : 0.0) * m.cpu_page;
			m.noise[t] = m.cost[t] > 0.0 ? (spread + work * work_noise) / m.cost[t] :
				work_noise;
		}
		m.shared_noise = shared;
		for (int t = kGapCount - 2; t >= 0; t--)
			if (same_pages(t)) {
				m.cost[t] = m.cost[t + 1];
				m.noise[t] = m.noise[t + 1];
				m.kept[t] = m.kept[t + 1];
				m.cpu_share[t] = m.cpu_share[t + 1];
			}
		// Each saving's logarithm, and between two calibrated densities how
		// far the interpolation may be off: priced with either neighbour's
		// figures it bounds the saving (between[] and saving[] above).
		int di;
		double dw;
		locate(kDensities, kDensityCount, m.run_density, &di, &dw);
		const bool interpolated = dw > 0.0 && dw < 1.0;
		double lo[kGapCount], hi[kGapCount];
		for (int t = 0; interpolated && t < kGapCount; t++) {
			lo[t] = price(t, kDensities[di], nullptr, nullptr, nullptr);
			hi[t] = price(t, kDensities[di + 1], nullptr, nullptr, nullptr);
		}
		for (int t = kGapCount - 2; interpolated && t >= 0; t--)
			if (same_pages(t)) {
				lo[t] = lo[t + 1];
				hi[t] = hi[t + 1];
			}
		constexpr int s = kGapCount - 1;
		for (int t = 0; t < s; t++) {
			if (!(m.cost[t] > 0.0 && m.cost[s] > 0.0))
				continue;
			double mu = std::log(m.cost[s] / m.cost[t]);
			if (interpolated) {
				const double a = std::log(lo[s] / lo[t]), b = std::log(hi[s] / hi[t]);
				if (!(std::isfinite(a) && std::isfinite(b) && std::isfinite(mu))) {
					m.between[t] = std::nan("");
					continue;
				}
				const double low = std::min(a, b), high = std::max(a, b);
				mu = std::min(std::max(mu, low), high);
				m.between[t] = std::sqrt(std::max((high - mu) * (mu - low), 0.0));
			}
			m.saving[t] = mu;
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
	m.seq_cost = 1.0;
	m.skip_cost = std::numeric_limits<double>::infinity();
	if (in.seq_page_cost > 0.0)
		m.skip_cost = std::max(in.random_page_cost, 0.0) / in.seq_page_cost *
			kDocumentedUncachedFactor;
	for (int t = 0; t < kGapCount; t++)
		m.cost[t] = map == nullptr ? 0.0 :
			estimated_cost(m, nullptr, kGaps[t], map->needed + map->read_through[t],
						   map->read_through[t], map->io_runs[t]);
	return m;
}

namespace {

// The part both costs share (the pages read on in a stream) moves both
// alike: in the logarithm of their ratio its error counts only by the
// difference of its shares of the two, each as much of it as passes into
// that cost.
double shared_in_ratio(const CostModel &model, int t)
{
	constexpr int s = kGapCount - 1;
	return std::max(model.shared_noise, 0.0) *
		std::fabs(model.kept[t] / model.cost[t] - model.kept[s] / model.cost[s]);
}

// The index in kGaps of the cheapest threshold (told: of those whose
// saving over stock's lies beyond the calibration's noise, stock's where
// none does); from the stock threshold down, so that a tie keeps the
// larger one (the one closer to stock).
int cheapest_index(const CostModel &model, bool told = false)
{
	int best = kGapCount - 1;
	for (int t = kGapCount - 2; t >= 0; t--)
		if (model.cost[t] < model.cost[best] * (1 - 1e-9) &&
			!(told && saving_within_noise(model, t)))
			best = t;
	return best;
}

}  // namespace

std::uint32_t cheapest_threshold(const CostModel &model)
{
	return kGaps[cheapest_index(model)];
}

bool saving_within_noise(const CostModel &model, int t)
{
	const double stock = model.cost[kGapCount - 1];
	if (!(model.cost[t] > 0.0 && stock > 0.0))
		return false;
	if (model.noise_dof < 1)
		return true;   // a single round: its noise was never measured
	const double a = std::max(model.noise[t], 0.0);
	const double b = std::max(model.noise[kGapCount - 1], 0.0);
	const double s = shared_in_ratio(model, t);
	// and between two calibrated densities, how far the interpolation may
	// be off (not a number: nothing can be told)
	if (std::isnan(model.between[t]))
		return true;
	const double g = std::max(model.between[t], 0.0);
	return model.saving[t] <=
		one_sided_95(model.noise_dof) * std::sqrt(a * a + b * b + s * s + g * g);
}

std::uint32_t tuned_threshold(const CostModel &model)
{
	if (model.source == CostSource::kCalibration)
		return kGaps[cheapest_index(model, true)];
	// From the settings: skip runs of L from the L on which L + 1 sequential
	// reads cost at least the read after a skip; costs equal within rounding
	// count as equal (1.1 * 10 is 11.000000000000002 in binary).
	for (std::uint32_t run = 1; run < kStockThreshold; run++)
		if ((run + 1) * model.seq_cost >= model.skip_cost * (1 - 1e-12))
			return run;
	return kStockThreshold;
}

double estimated_cost(const CostModel &model, const Calibration *calibration,
					  std::uint32_t threshold, std::uint64_t pages_scanned,
					  std::uint64_t read_through, std::uint64_t io_runs)
{
	if (model.source == CostSource::kCalibration && calibration != nullptr) {
		double start, rest;
		calibrated_reads(model, *calibration, threshold, pages_scanned, read_through,
						 model.run_density, &start, &rest, nullptr, nullptr);
		const double through = static_cast<double>(read_through);
		const double needed = pages_scanned > read_through ?
			static_cast<double>(pages_scanned - read_through) : 0.0;
		if (model.sleep_overlaps) {
			const double sleep = needed * model.delay_needed + through * model.delay_page;
			return through * model.cpu_page + start + rest + sleep -
				hidden_by_sleep(model, start + rest, sleep,
								reads_at_most(model, static_cast<double>(pages_scanned),
											  static_cast<double>(io_runs)),
								measured_cpu_share(*calibration, model.run_density,
												   threshold));
		}
		return start + rest + through * (model.cpu_page + model.delay_page);
	}
	// a run's first page after a skip, the others in sequence (no run, no
	// skip: 0 * an infinite skip_cost, seq_page_cost 0, is not a cost)
	const double runs = static_cast<double>(std::min(io_runs, pages_scanned));
	return (runs > 0 ? runs * model.skip_cost : 0.0) +
		(static_cast<double>(pages_scanned) - runs) * model.seq_cost;
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
	if (m.source == CostSource::kCalibration) {
		char delay[320] = "";
		int ti = 0;	// t's, or the next above
		while (ti + 1 < kGapCount && kGaps[ti] < t)
			ti++;
		if (m.sleep_overlaps)
			std::snprintf(delay, sizeof(delay),
						  ", and the cost-based delay's sleep, %.3g microseconds for each and "
						  "%.3g for each page to read, in naps of %.3g during which up to %.0f "
						  "reads issued ahead go on (no nap hides the reading's time on a CPU, "
						  "%.2g of it at %u)",
						  m.delay_page, m.delay_needed, m.nap, m.reads_ahead,
						  m.cpu_share[ti], t);
		else if (m.delay_page > 0.0)
			std::snprintf(delay, sizeof(delay),
						  ", and the cost-based delay's sleep, %.3g microseconds for each",
						  m.delay_page);
		const double skippable = in.map != nullptr && in.map->rel_pages > in.map->needed ?
			static_cast<double>(in.map->rel_pages - in.map->needed) : 0.0;
		n = std::snprintf(
			out, size,
			"autotuned from the storage measured by vacskip.calibrate(): %.3g%% of its "
			"pages to read, in %.0f runs %.3g skippable pages apart on average, %.3g%% "
			"of its pages among the first %u of a segment file; at "
			"thresholds 1, 2, 4, 8, 16, 32 reading it would cost %.3g, %.3g, %.3g, %.3g, "
			"%.3g, %.3g ms (VACUUM's work on the pages read through included%s), so runs "
			"of %u or more pages are skipped",
			m.density * 100, m.runs, m.runs > 0 ? skippable / m.runs : 0.0,
			m.start_share * 100, kStartPages,
			m.cost[0] / 1000, m.cost[1] / 1000, m.cost[2] / 1000, m.cost[3] / 1000,
			m.cost[4] / 1000, m.cost[5] / 1000, delay, t);
		// not the threshold priced cheapest: say why
		const int c = cheapest_index(m);
		const bool passed = t != kGaps[c] && n > 0 && static_cast<std::size_t>(n) < size;
		const char *as = t == kStockThreshold ? ", as in stock PostgreSQL" : "";
		if (passed && m.noise_dof < 1)
			n += std::snprintf(
				out + n, size - n,
				"%s: %u would cost %.2g%% less, but the calibration read its patterns only "
				"once, which cannot show how far its figures may be off (calibrate for "
				"longer)",
				as, kGaps[c], 100 * (1 - m.cost[c] / m.cost[kGapCount - 1]));
		else if (passed)
			n += std::snprintf(
				out + n, size - n,
				"%s: %u would cost %.2g%% less than 32, within the calibration's noise "
				"(%.2g%% and %.2g%% on the parts of the two costs that differ, %.2g%% on "
				"their ratio from the part they share, %.2g%% from pricing it between two "
				"calibrated densities)",
				as, kGaps[c], 100 * (1 - m.cost[c] / m.cost[kGapCount - 1]),
				100 * m.noise[c], 100 * m.noise[kGapCount - 1],
				100 * shared_in_ratio(m, c),
				100 * m.between[c]);
	} else if (!(in.storage.seq_page_cost > 0.0))
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
			in.storage.random_page_cost / in.storage.seq_page_cost, m.skip_cost, t);
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
	d.model = cost_model(in.storage, in.calibration, in.tuples_per_page, in.map,
						 in.delay_page, in.delay_needed, in.delay_nap);
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
