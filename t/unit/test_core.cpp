// Unit tests of src/core (pure C++17, no PostgreSQL): the setting, the cost
// model and autotuner, and the visibility-map walker.  Built and run by
// t/test_unit.py with AddressSanitizer and UBSan; prints "N passed, N failed".
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "../../src/core/calibration.hpp"
#include "../../src/core/model.hpp"
#include "../../src/core/policy.hpp"
#include "../../src/core/vmscan.hpp"

namespace {

int passed = 0;
int failed = 0;

void check(bool ok, const char *what)
{
	if (ok) {
		++passed;
	} else {
		++failed;
		std::printf("FAIL: %s\n", what);
	}
}

template <typename F>
bool throws_invalid_argument(F f)
{
	try {
		f();
	} catch (const std::invalid_argument &) {
		return true;
	}
	return false;
}

using namespace vacskip;

void test_setting()
{
	check(threshold_setting_valid(-1), "-1 (autotune) is valid");
	check(threshold_setting_valid(1), "1 is valid");
	check(threshold_setting_valid(1000000), "1000000 is valid");
	check(!threshold_setting_valid(0), "0 is invalid");
	check(!threshold_setting_valid(-2), "-2 is invalid");
	check(!threshold_setting_valid(1000001), "1000001 is invalid");

	const Thresholds fixed = choose_thresholds(4);
	check(fixed.all_frozen == 4 && fixed.all_visible == 4, "fixed 4 gives 4/4");
	const Thresholds max = choose_thresholds(kThresholdMax);
	check(max.all_frozen == 1000000u && max.all_visible == 1000000u, "max passes through");
	check(throws_invalid_argument([] { choose_thresholds(0); }), "0 throws");
	check(throws_invalid_argument([] { choose_thresholds(-1); }), "-1 is not a fixed threshold");
}

std::uint32_t auto_threshold(const StorageInputs &in, const Calibration *c = nullptr,
							 double tuples = 0, const MapCounts *map = nullptr)
{
	RelationInputs r;
	r.storage = in;
	r.calibration = c;
	r.tuples_per_page = tuples;
	r.map = map;
	return decide(kThresholdAutotune, r).thresholds.all_frozen;
}

bool near(double a, double b)
{
	return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
}

bool near(double a, double b, double within)
{
	return std::fabs(a - b) <= within;
}

void test_model_defaults()
{
	// random_page_cost 4 read as documented: 40 sequential reads uncached,
	// a break 39 > 32 pages read through
	for (int major : {15, 16, 17, 18, 19}) {
		RelationInputs r;
		r.storage = default_storage(major);
		const Decision d = decide(kThresholdAutotune, r);
		check(d.thresholds.all_frozen == 32 && d.thresholds.all_visible == 32,
			  "default settings of every major give stock's 32/32");
		check(d.autotuned && !d.read_through, "defaults: autotuned, no read-through");
		check(d.model.source == CostSource::kSettings && near(d.model.skip_cost, 40.0) &&
				  near(d.model.seq_cost, 1.0),
			  "defaults: a page after a skip costs 4 * 10 = 40 sequential reads");
	}
	// Even when relfrozenxid is old: at the stock threshold nothing changes.
	RelationInputs old;
	old.storage = default_storage(18);
	old.freeze.relfrozenxid_age = 140000000;
	const Decision d = decide(kThresholdAutotune, old);
	check(d.thresholds.all_visible == 32 && !d.read_through,
		  "defaults with an old relfrozenxid stay stock");
}

void test_model_settings()
{
	// ceil(10 * random_page_cost / seq_page_cost - 1), from 1 to 32, whatever
	// the concurrency or the major: the settings describe no I/O path
	struct {
		double rpc, spc;
		std::uint32_t want;
		const char *what;
	} cases[] = {
		{1.1, 1.0, 10, "1.1: 11 - 1 = 10"},
		{1.0, 1.0, 9, "1.0: 10 - 1 = 9"},
		{1.5, 1.0, 14, "1.5: 14"},
		{2.0, 1.0, 19, "2.0: 19"},
		{3.0, 1.0, 29, "3.0: 29"},
		{3.3, 1.0, 32, "3.3: 32 (33 - 1 = 32)"},
		{0.1, 1.0, 1, "0.1: 1 - 1 = 0, at least 1"},
		{0.0, 1.0, 1, "0: 1"},
		{2.2, 2.0, 10, "2.2 / 2.0 as 1.1"},
		{40.0, 1.0, 32, "40: clamped to stock"},
		{4.0, 0.0, 32, "seq_page_cost 0 (reading is free): 32"},
	};
	for (const auto &c : cases)
		for (int major : {15, 18})
			for (int conc : {1, 16, 256}) {
				StorageInputs in = default_storage(major);
				in.random_page_cost = c.rpc;
				in.seq_page_cost = c.spc;
				in.maintenance_io_concurrency = conc;
				check(auto_threshold(in) == c.want, c.what);
			}
	StorageInputs in = default_storage(18);
	in.random_page_cost = 1.1;
	check(auto_threshold(in, nullptr, 200) == 10, "settings: the density does not enter");
}

void test_read_concurrency()
{
	StorageInputs in = default_storage(18);
	check(vacuum_read_concurrency(in) == 3, "18 defaults: 16 ahead, 3 workers: 3");
	in.io_workers = 32;
	check(vacuum_read_concurrency(in) == 16, "32 workers: maintenance_io_concurrency's 16");
	in.maintenance_io_concurrency = 1;
	check(vacuum_read_concurrency(in) == 1, "maintenance_io_concurrency 1: 1");
	in.maintenance_io_concurrency = 0;
	check(vacuum_read_concurrency(in) == 1, "0 counts as 1");
	in.io_method = IoMethod::kIoUring;
	in.maintenance_io_concurrency = 64;
	check(vacuum_read_concurrency(in) == 64, "io_uring: no workers, 64");
	in.io_method = IoMethod::kSync;
	check(vacuum_read_concurrency(in) == 1, "io_method sync: one at a time");
	check(vacuum_read_concurrency(default_storage(15)) == 1, "15 reads one block at a time");
}

// A calibration whose reads cost `us` per page to read at every density
// and threshold, on a file's first pages as on the rest.
Calibration flat(double us, double cpu_page = 0, double cpu_tuple = 0)
{
	Calibration c;
	for (int d = 0; d < kDensityCount; d++)
		for (int t = 0; t < kGapCount; t++)
			c.read_us[d][t] = c.start_read_us[d][t] = us;
	c.cpu_page_us = cpu_page;
	c.cpu_tuple_us = cpu_tuple;
	c.noise_dof = 1000;   // many rounds, no spread
	return c;
}

// c, its first pages' figures made what its read_us say (for the tests of
// what does not depend on the part of the file).
const Calibration *both(Calibration &c)
{
	for (int d = 0; d < kDensityCount; d++)
		for (int t = 0; t < kGapCount; t++)
			c.start_read_us[d][t] = c.read_us[d][t];
	return &c;
}

// A map of `pages` pages, `needed` of which VACUUM must read, scattered
// (in needed * (1 - needed / pages) runs, at least one), and at each
// threshold kGaps[t] `through[t]` read through.
MapCounts map_of(std::uint64_t pages, std::uint64_t needed,
				 std::initializer_list<std::uint64_t> through)
{
	MapCounts m;
	m.rel_pages = pages;
	m.needed = needed;
	const double d = static_cast<double>(needed) / static_cast<double>(pages);
	m.io_runs[0] = std::max<std::uint64_t>(
		static_cast<std::uint64_t>(std::llround(static_cast<double>(needed) * (1 - d))), 1);
	int t = 0;
	for (std::uint64_t x : through)
		m.read_through[t++] = x;
	return m;
}

void test_measured_read_us()
{
	Calibration c = flat(1);
	for (int d = 0; d < kDensityCount; d++)
		for (int t = 0; t < kGapCount; t++)
			c.read_us[d][t] = (d + 1) * 100.0 + t;
	check(near(measured_read_us(c, 1.0 / 33, 8), 303), "a measured point");
	check(near(measured_read_us(c, 0.001, 1), 100) && near(measured_read_us(c, 0.9, 64), 805),
		  "beyond the measured densities and thresholds: the nearest");
	// halfway in the logarithms: between 1 / 33 and 1 / 17, 2.83 between 2 and 4
	check(near(measured_read_us(c, 1 / std::sqrt(33.0 * 17), 1), std::sqrt(300.0 * 400.0)),
		  "between densities: the geometric mean at the middle");
	check(near(measured_read_us(c, 0.01, std::sqrt(8.0)), std::sqrt(101.0 * 102.0)),
		  "between thresholds: the same");
}

void test_calibrated_densities()
{
	// where a scattered map's mean run of skippable pages, (1 - d) / d,
	// is each priced threshold, sparsest first, after 1 % and 1/57
	bool ok = kDensities[0] == 0.01 && near(kDensities[1], 1.0 / 57);
	for (int t = 0; t < kGapCount; t++) {
		const double d = kDensities[kDensityCount - 1 - t];
		ok &= near((1 - d) / d, kGaps[t]);
	}
	check(ok && kDensityCount == kGapCount + 2,
		  "densities: 1 %, 1/57, then a mean skippable run of 32, 16, 8, 4, 2, 1 pages");
	// no interval between two measured densities wider than twice: 1/57
	// halves (in the logarithms) the one from 1 % to 1/33
	double widest = 0;
	for (int d = 1; d < kDensityCount; d++)
		widest = std::max(widest, kDensities[d] / kDensities[d - 1]);
	check(widest < 2, "densities: none more than twice the one before");
}

void test_model_calibrated()
{
	const StorageInputs in = default_storage(18);
	// 10,000 pages, 500 to read (5 %): reading costs needed * read_us at
	// that density and threshold, plus VACUUM's work on the pages read
	// through
	Calibration c = flat(50, 2, 0.08);   // work: 2 + 0.08 * 100 = 10 us per page
	const double at[kGapCount] = {60, 40, 30, 35, 45, 70};
	for (auto &row : c.read_us)
		for (int t = 0; t < kGapCount; t++)
			row[t] = at[t];
	const MapCounts map = map_of(10000, 500, {0, 100, 300, 700, 1500, 3000});
	const CostModel m = cost_model(in, both(c), 100, &map);
	check(m.source == CostSource::kCalibration && near(m.density, 0.05) && near(m.cpu_page, 10),
		  "calibrated: density and work per page");
	check(near(m.cost[0], 500 * 60) && near(m.cost[2], 500 * 30 + 300 * 10) &&
			  near(m.cost[5], 500 * 70 + 3000 * 10),
		  "cost = needed * read_us + read through * work");
	check(auto_threshold(in, both(c), 100, &map) == 4, "the cheapest: 4 (18,000 us)");
	check(auto_threshold(in, both(c), 0, &map) == 4, "no tuples: still 4");
	// more work per page read through favours skipping
	const MapCounts long_runs = map_of(10000, 500, {0, 10, 20, 600, 1500, 3000});
	check(auto_threshold(in, both(c), 0, &long_runs) == 4, "4 reads 20 pages through: 15,040");
	c.cpu_page_us = 40;
	check(auto_threshold(in, both(c), 0, &long_runs) == 4, "dear work, still 4");
	check(auto_threshold(in, both(c), 0, &map) == 2, "dear work: 2 reads 100 through, 24,000");
	// ties keep the threshold closer to stock: a map with nothing to read
	// through costs the same at every threshold of equal reads
	Calibration same = flat(50);
	const MapCounts dense = map_of(1000, 1000, {0, 0, 0, 0, 0, 0});
	check(auto_threshold(in, &same, 0, &dense) == 32, "every threshold the same: 32");
	check(auto_threshold(in, &same, 0, nullptr) == 32, "no map walked: 32");
	// invalid figures are no calibration: the settings (defaults: 32)
	Calibration bad = flat(0);
	check(!calibration_valid(bad) && auto_threshold(in, &bad, 0, &map) == 32,
		  "reads costing 0 are no calibration");
	bad = flat(std::nan(""));
	check(!calibration_valid(bad), "NaN is no calibration");
	bad = flat(10, -1);
	check(!calibration_valid(bad), "negative work is no calibration");
	bad = flat(10);
	bad.read_cpu_share[3][2] = 1.5;
	check(!calibration_valid(bad), "more than all of a pattern's time on a CPU is none");
	bad.read_cpu_share[3][2] = -0.25;
	check(!calibration_valid(bad), "nor less than none of it");
	// the settings path prices the map too, but decides per run
	StorageInputs fast = in;
	fast.random_page_cost = 1.1;
	MapCounts runs = map;
	for (int t = 0; t < kGapCount; t++)
		runs.io_runs[t] = 500 - 20 * t;
	const CostModel sm = cost_model(fast, nullptr, 0, &runs);
	check(sm.source == CostSource::kSettings && auto_threshold(fast, nullptr, 0, &runs) == 10,
		  "settings: 10 whatever the map");
	check(near(sm.cost[1], 480 * 11 + (600 - 480) * 1.0),
		  "settings' cost: a run's first page 11, the others 1");
}

void test_model_runs()
{
	// The sparsest calibrated map favours high thresholds, every denser one
	// low thresholds.
	const StorageInputs in = default_storage(18);
	Calibration c = flat(1);
	const double sparse[kGapCount] = {90, 80, 70, 60, 50, 40};
	const double dense[kGapCount] = {40, 50, 60, 70, 80, 90};
	for (int d = 0; d < kDensityCount; d++)
		for (int t = 0; t < kGapCount; t++)
			c.read_us[d][t] = d == 0 ? sparse[t] : dense[t];
	// 500 of 10,000 pages to read, scattered: 475 runs, 9,500 skippable
	// pages, a run every 20: priced at 5 %, where 1 is cheapest
	const MapCounts scattered = map_of(10000, 500, {0, 10, 20, 40, 80, 160});
	const CostModel sm = cost_model(in, both(c), 0, &scattered);
	check(near(sm.runs, 475) && near(sm.run_density, 0.05) && near(sm.cost[0], 500 * 40.0),
		  "scattered: a run per 20 skippable pages, priced as the 5 % map");
	check(auto_threshold(in, both(c), 0, &scattered) == 1, "scattered: 1");
	// the same pages in 50 runs of 10: a run per 190 skippable pages, the
	// sparsest map's prices, 32 cheapest; the pages beyond its 1 / (1 - d)
	// per run are read on in a stream, at the densest map read through
	MapCounts clustered = scattered;
	clustered.io_runs[0] = 50;
	const CostModel cm = cost_model(in, both(c), 0, &clustered);
	const double d = 50.0 / 9500;
	const double stream = 90 * kDensities[kDensityCount - 1];
	check(near(cm.run_density, d) && near(stream_read_us(c), stream) &&
			  near(cm.cost[5], 50 / (1 - d) * 40 + (500 - 50 / (1 - d)) * stream),
		  "clustered: per run the sparse map's cost, the rest of each run a stream");
	check(auto_threshold(in, both(c), 0, &clustered) == 32, "clustered: 32");
	// runs more often than every second skippable page: the densest map
	MapCounts packed = map_of(1000, 900, {0, 0, 0, 0, 0, 0});
	for (auto &runs : packed.io_runs)
		runs = 80;
	const CostModel pm = cost_model(in, both(c), 0, &packed);
	check(near(pm.run_density, kDensities[kDensityCount - 1]) && std::isfinite(pm.cost[0]) &&
			  auto_threshold(in, both(c), 0, &packed) == 32,
		  "runs closer than every second page: the densest map; nothing read through: 32");
	// thresholds that read the same pages cost the same, whatever the
	// calibrated map says of them
	MapCounts same = scattered;
	for (int t = 0; t < kGapCount; t++) {
		same.read_through[t] = t < 3 ? 0 : 40;
		same.io_runs[t] = t < 3 ? 475 : 400;
	}
	const CostModel am = cost_model(in, both(c), 0, &same);
	check(am.cost[0] == am.cost[2] && am.cost[3] == am.cost[5] && am.cost[2] != am.cost[3] &&
			  auto_threshold(in, both(c), 0, &same) == 4,
		  "equal reads, equal costs: 4 for 1, 2 and 4; 32 for 8, 16 and 32");
}

void test_start_share()
{
	check(start_share(0, 131072) == 1.0 && start_share(1000, 131072) == 1.0,
		  "empty, or within the first pages: all of it");
	check(near(start_share(10000, 131072), 0.2048), "10,000 pages: the first 2,048");
	// two whole segments and 37,856 pages of a third: 2,048 of each
	check(near(start_share(300000, 131072), 3 * 2048 / 300000.0), "three files");
	check(near(start_share(263144, 131072), (2 * 2048 + 1000) / 263144.0),
		  "a last file shorter than 2,048 pages counts what it has");
}

void test_model_start()
{
	// First pages where 32 is cheapest (the kernel's readahead not yet
	// settled), the rest where 4 is: a table within its first pages takes
	// 32, a large one 4; the costs mix by the share.
	const StorageInputs in = default_storage(15);
	Calibration c = flat(1);
	const double start[kGapCount] = {300, 280, 260, 200, 150, 100};
	const double rest[kGapCount] = {60, 40, 30, 35, 45, 70};
	for (int d = 0; d < kDensityCount; d++)
		for (int t = 0; t < kGapCount; t++) {
			c.start_read_us[d][t] = start[t];
			c.read_us[d][t] = rest[t];
		}
	const MapCounts small = map_of(2000, 100, {0, 20, 60, 140, 300, 600});
	const MapCounts large = map_of(2000000, 100000, {0, 20000, 60000, 140000, 300000, 600000});
	check(auto_threshold(in, &c, 0, &small) == 32, "within the first pages: 32");
	check(auto_threshold(in, &c, 0, &large) == 4, "2,000,000 pages, 1.6 % first: 4");
	MapCounts mid = map_of(10000, 500, {0, 100, 300, 700, 1500, 3000});
	const CostModel m = cost_model(in, &c, 0, &mid);
	const double f = 0.2048;
	bool mixed = near(m.start_share, f);
	for (int t = 0; t < kGapCount; t++)
		mixed &= near(m.cost[t], 500 * (f * start[t] + (1 - f) * rest[t]));
	check(mixed, "10,000 pages: 20.48 % at the first pages' figures, the rest at read_us");
	mid.segment_pages = 4096;   // three files: 2,048 + 2,048 + 1,808 first pages
	check(near(cost_model(in, &c, 0, &mid).start_share, 5904 / 10000.0),
		  "every segment file starts anew");
}

// Every density's noise, measured from many degrees of freedom.
void set_noise(Calibration *c, double rest, double start)
{
	for (int d = 0; d < kDensityCount; d++) {
		c->read_noise[d] = rest;
		c->start_read_noise[d] = start;
	}
	c->noise_dof = 1000;
}

void test_noise_by_density()
{
	Calibration c = flat(1);
	for (int d = 0; d < kDensityCount; d++) {
		c.read_noise[d] = 0.01 * (d + 1);
		c.start_read_noise[d] = 0.1 * (d + 1);
	}
	check(near(measured_noise(c, 1.0 / 9), 0.05) && near(measured_noise(c, 1.0 / 9, true), 0.5),
		  "a measured density: its noise");
	check(near(measured_noise(c, std::sqrt(1.0 / 9 * 1.0 / 5)), 0.055),
		  "half-way in the logarithms: half of each");
	check(near(measured_noise(c, 0.001), 0.01) && near(measured_noise(c, 0.9), 0.08),
		  "beyond the measured densities: the nearest");
	// Student's t, one-sided 95 %, as Student's tables give it (to their
	// three decimals), for every number of degrees of freedom
	check(std::fabs(one_sided_95(1) - 6.314) < 5e-4 && std::fabs(one_sided_95(5) - 2.015) < 5e-4 &&
			  std::fabs(one_sided_95(10) - 1.812) < 5e-4 && std::fabs(one_sided_95(35) - 1.690) < 5e-4 &&
			  std::fabs(one_sided_95(45) - 1.679) < 5e-4,
		  "tabulated degrees of freedom, and between the tabulated ones (35, 45)");
	check(one_sided_95(0) == one_sided_95(1) && std::fabs(one_sided_95(5000) - 1.645) < 5e-4,
		  "below 1: 1's; many: the normal's");
	bool falls = true;
	for (int dof = 1; dof < 2000; dof++)
		falls &= one_sided_95(dof + 1) < one_sided_95(dof) && one_sided_95(dof) > 1.6448;
	check(falls, "the quantile never rises with the degrees of freedom, stays above 1.645");
}

// Between two calibrated densities the figures are interpolated; where
// they switch between the two (the kernel's readahead keeping ahead of the
// skips at one and not at the other), the saving's logarithm priced with
// either neighbour's figures bounds it.
void test_between_densities()
{
	const StorageInputs in = default_storage(18);
	Calibration c = flat(200);
	c.noise_dof = 1000;   // t = 1.646; every noise 0
	// 4 costs 50 per page to read at 1/33 and 100 at 1/17, 32 100 at both:
	// 4 saves ln 2 at 1/33, nothing at 1/17
	for (int d = 0; d < kDensityCount; d++)
		c.read_us[d][kGapCount - 1] = 100;
	c.read_us[2][2] = 50;
	c.read_us[3][2] = 100;
	// runs of one page to read, d = runs / skippable halfway between 1/33
	// and 1/17 in the logarithms (sqrt(33 * 17) = 23.69 skippable pages
	// per run): 4 priced at sqrt(50 * 100) = 70.7, a saving of ln 2 / 2
	MapCounts map{};
	map.rel_pages = 24690;
	map.needed = map.io_runs[0] = 1000;
	for (int t = 1; t < kGapCount; t++)
		map.io_runs[t] = 1000 - 10 * t;
	for (int t = 0; t < kGapCount; t++)
		map.read_through[t] = 0;
	const double mid = std::log(2.0) / 2;
	const CostModel m = cost_model(in, both(c), 0, &map);
	check(near(m.run_density, 1 / std::sqrt(33.0 * 17), 1e-4) &&
			  near(std::log(m.cost[5] / m.cost[2]), mid, 1e-3),
		  "halfway: 4 saves ln 2 / 2");
	// bounds 0 and ln 2, mean ln 2 / 2: sqrt((ln 2 - ln 2 / 2)(ln 2 / 2 - 0))
	check(near(m.between[2], mid, 1e-3) && m.between[5] == 0.0,
		  "between 1/33 and 1/17: spread ln 2 / 2 on 4's saving, none on 32's");
	// no measured noise, but 1.646 * 0.347 > 0.347: 32
	check(cheapest_threshold(m) == 4 && auto_threshold(in, both(c), 0, &map) == 32,
		  "the figures switch between the neighbours: 32");
	RelationInputs r;
	r.storage = in;
	r.calibration = both(c);
	r.map = &map;
	check(std::string(decide(kThresholdAutotune, r).reason).find(
			  "35% from pricing it between two calibrated densities") != std::string::npos,
		  "the reason gives the spread between the densities");
	// a threshold that saves at both neighbours alike: 8 at 80, ln 1.25
	// = 0.22 at no spread, beyond the noise where 4's ln 2 / 2 is not
	for (int d = 0; d < kDensityCount; d++)
		c.read_us[d][3] = 80;
	r.calibration = both(c);
	const Decision other = decide(kThresholdAutotune, r);
	check(other.thresholds.all_frozen == 8 &&
			  std::string(other.reason).find(
				  "skipped: 4 would cost 29% less than 32, within the calibration's noise") !=
				  std::string::npos,
		  "the cheapest whose saving can be told: 8, and the reason says why not 4");
	for (int d = 0; d < kDensityCount; d++)
		c.read_us[d][3] = 200;
	// neighbours that agree: 4 saves ln 2 at 1/33 and ln (100 / 60) at
	// 1/17; mean 0.602, spread sqrt(0.091 * 0.091) = 0.091, 1.646 * 0.091
	// = 0.150 < 0.602: 4
	c.read_us[3][2] = 60;
	const CostModel agree = cost_model(in, both(c), 0, &map);
	check(near(agree.between[2], 0.0911, 1e-3) && auto_threshold(in, both(c), 0, &map) == 4,
		  "the neighbours agree: 4");
	// each cost a sum of parts interpolated each on its own: half the
	// pages among a file's first (4,096 pages), whose figures for 4 go from
	// 1,000 at 1/33 to 10 at 1/17 while the rest's go from 10 to 1,000; 32
	// 200 everywhere.  At either neighbour 4 costs 505 per page to read,
	// ln (200 / 505) = -0.93; interpolated, 100 and 100: ln 2.  Bounded by
	// its neighbours the saving is -0.93: 32
	{
		Calibration h = flat(2000);
		h.noise_dof = 1000;
		for (int d = 0; d < kDensityCount; d++)
			h.read_us[d][kGapCount - 1] = h.start_read_us[d][kGapCount - 1] = 200;
		h.start_read_us[2][2] = 1000;
		h.start_read_us[3][2] = 10;
		h.read_us[2][2] = 10;
		h.read_us[3][2] = 1000;
		MapCounts half{};
		half.rel_pages = 4096;
		half.needed = half.io_runs[0] = 166;   // 3,930 skippable: d = 0.0422
		for (int t = 1; t < kGapCount; t++)
			half.io_runs[t] = 166 - t;
		const CostModel hm = cost_model(in, &h, 0, &half);
		check(near(hm.start_share, 0.5) &&
				  near(std::log(hm.cost[5] / hm.cost[2]), std::log(2.0), 1e-2) &&
				  near(hm.saving[2], std::log(200.0 / 505), 1e-3) && hm.between[2] == 0.0 &&
				  auto_threshold(in, &h, 0, &half) == 32,
			  "interpolated outside its neighbours' bounds: the nearer bound, a loss: 32");
	}
	// at a calibrated density nothing is interpolated: 1/33 (33,000
	// skippable pages in 1,000 runs), 4 saves ln 2 at no noise
	c.read_us[3][2] = 100;
	map.rel_pages = 34000;
	const CostModel at = cost_model(in, both(c), 0, &map);
	check(near(at.run_density, 1.0 / 33, 1e-9) && at.between[2] == 0.0 &&
			  auto_threshold(in, both(c), 0, &map) == 4,
		  "at 1/33 itself: no spread, 4");
}

void test_model_noise()
{
	// 4 priced 5 % below 32 (log 1/0.95 = 0.051): a saving beyond noise of
	// 0.02 per figure (1.645 * sqrt 2 * 0.02 = 0.047), within 0.025 (0.058)
	const StorageInputs in = default_storage(18);
	Calibration c = flat(1);
	const double at[kGapCount] = {120, 110, 95, 105, 110, 100};
	for (auto &row : c.read_us)
		for (int t = 0; t < kGapCount; t++)
			row[t] = at[t];
	const MapCounts map = map_of(10000, 500, {0, 10, 20, 40, 80, 160});
	check(auto_threshold(in, both(c), 0, &map) == 4, "many rounds, no spread: the cheapest, 4");
	// one round: a noise of 0 that rests on no degrees of freedom
	c.noise_dof = 0;
	RelationInputs once;
	once.storage = in;
	once.calibration = both(c);
	once.map = &map;
	const Decision single = decide(kThresholdAutotune, once);
	check(single.thresholds.all_frozen == 32 &&
			  std::string(single.reason).find("read its patterns only once") !=
				  std::string::npos,
		  "one round: 32, and the reason says why");
	set_noise(&c, 0.02, 0.02);
	check(auto_threshold(in, both(c), 0, &map) == 4, "5 % saved, beyond noise 0.02: 4");
	// the same noise estimated from 5 degrees of freedom: t = 2.015,
	// 2.015 * sqrt 2 * 0.02 = 0.057 > 0.051
	c.noise_dof = 5;
	check(auto_threshold(in, both(c), 0, &map) == 32,
		  "5 % saved, noise 0.02 from 5 degrees of freedom: 32");
	set_noise(&c, 0.025, 0.025);
	const CostModel m = cost_model(in, both(c), 0, &map);
	check(cheapest_threshold(m) == 4 && saving_within_noise(m, 2) &&
			  auto_threshold(in, both(c), 0, &map) == 32,
		  "5 % saved, within noise 0.025: stock's 32");
	// a large saving survives large noise
	for (auto &row : c.read_us)
		row[2] = 50;
	check(auto_threshold(in, both(c), 0, &map) == 4, "half the cost: 4 whatever the noise");
	RelationInputs r;
	r.storage = in;
	set_noise(&c, 0.025, 0.025);
	for (auto &row : c.read_us)
		row[2] = 95;
	r.calibration = both(c);
	r.map = &map;
	const Decision d = decide(kThresholdAutotune, r);
	check(d.thresholds.all_frozen == 32 &&
			  std::string(d.reason).find("within the calibration's noise") != std::string::npos,
		  "the reason says why 32 was kept");
	// each part's noise weighs by its share of the cost: noisy first pages
	// (0.2) and quiet rest (0.01) keep 32 on a table within its first
	// pages, and let 4 save its 5 % on one of 1,000,000 pages (8 files,
	// 1.64 % first: 0.0164 * 0.2 + 0.9836 * 0.01 = 0.0131 per cost,
	// 1.645 * sqrt 2 * 0.0131 = 0.030 < ln (100 / 95) = 0.051)
	set_noise(&c, 0.01, 0.2);
	const MapCounts small = map_of(2000, 100, {0, 2, 4, 8, 16, 32});
	const MapCounts large = map_of(1000000, 50000, {0, 1000, 2000, 4000, 8000, 16000});
	const CostModel lm = cost_model(in, both(c), 0, &large);
	check(auto_threshold(in, both(c), 0, &small) == 32 &&
			  near(cost_model(in, both(c), 0, &small).noise[2], 0.2),
		  "within the first pages: their noise, 32 kept");
	check(auto_threshold(in, both(c), 0, &large) == 4 &&
			  std::fabs(lm.noise[2] - (0.016384 * 0.2 + 0.983616 * 0.01)) < 1e-9,
		  "1,000,000 pages: mostly the rest's noise, 4");
	// each density its own noise: quiet sparse maps, noisy dense ones; the
	// map above has 475 runs in 9,500 skippable pages (d = 0.05, between
	// 1/33 and 1/17)
	set_noise(&c, 0.01, 0.01);
	for (int d = 5; d < kDensityCount; d++)   // 1/5 to 1/2
		c.read_noise[d] = c.start_read_noise[d] = 0.3;
	check(auto_threshold(in, both(c), 0, &map) == 4, "sparse map, quiet densities: 4");
	const MapCounts dense = map_of(10000, 2000, {0, 100, 200, 400, 800, 1600});
	check(auto_threshold(in, both(c), 0, &dense) == 32 &&
			  near(cost_model(in, both(c), 0, &dense).noise[2], 0.3),
		  "runs 1/4 of the skippable pages apart, noisy densities (1/5 on): 32");
	// Changes that cluster: 1,000 pages to read in 50 runs, 9,000
	// skippable pages (d = 1/180, priced at 1 %'s figures): 50.3 pages in
	// runs, 949.7 read on in a stream at 1/2's 32 (100 us per page to
	// read, 50 per page), the same 47,486 us at every threshold.  4 costs
	// 80 per page in runs, 32 100: 51,508 against 52,514 us, ln 0.0193.
	// The stream's noise cannot make one cheaper than the other: noisy
	// (0.3) it keeps no 32; the runs' noise does (0.3: 0.0234 and 0.0287 on
	// the two costs, 1.646 * 0.037 = 0.061).
	for (auto &row : c.read_us)
		for (int t = 0; t < kGapCount; t++)
			row[t] = at[t];
	for (auto &row : c.read_us)
		row[2] = 80;
	MapCounts clustered = map_of(10000, 1000, {0, 10, 20, 40, 80, 160});
	clustered.io_runs[0] = 50;
	set_noise(&c, 0.02, 0.02);
	c.read_noise[kDensityCount - 1] = c.start_read_noise[kDensityCount - 1] = 0.3;
	const CostModel cm = cost_model(in, both(c), 0, &clustered);
	check(near(cm.cost[2], 51508.4, 1) && near(cm.cost[5], 52513.9, 1) &&
			  near(cm.shared_noise, 949.72 * 50 * 0.3, 1) &&
			  near(cm.noise[2], 50.279 * 80 * 0.02 / cm.cost[2], 1e-5) &&
			  auto_threshold(in, both(c), 0, &clustered) == 4,
		  "clustered, the stream's noise 0.3: shared by every cost, 4 saves 1.9 %");
	set_noise(&c, 0.02, 0.02);
	c.read_noise[0] = c.start_read_noise[0] = 0.3;
	check(auto_threshold(in, both(c), 0, &clustered) == 32,
		  "clustered, the runs' noise 0.3: 32");
	// ... but it moves their ratio by the difference of its shares: quiet
	// runs (noise 0), the stream's noise 1.0: 47,486 x |1/51,508 -
	// 1/52,514| = 0.0177, 1.646 x 0.0177 = 0.029 > 0.0193: 32; at 0.5
	// (0.0145) 4
	set_noise(&c, 0.0, 0.0);
	c.read_noise[kDensityCount - 1] = c.start_read_noise[kDensityCount - 1] = 1.0;
	check(auto_threshold(in, both(c), 0, &clustered) == 32,
		  "clustered, the stream's noise 1.0 on 92 % of both costs: 32");
	RelationInputs cr;
	cr.storage = in;
	cr.calibration = both(c);
	cr.map = &clustered;
	const Decision kept = decide(kThresholdAutotune, cr);
	// (d = 1/180 lies below the first calibrated density: priced at its
	// figures, nothing interpolated)
	check(std::string(kept.reason).find("(0% and 0% on the parts of the two costs that "
										"differ, 1.8% on their ratio from the part they "
										"share, 0% from pricing it between two calibrated "
										"densities)") != std::string::npos,
		  "the reason gives the shared part's noise on the ratio");
	c.read_noise[kDensityCount - 1] = c.start_read_noise[kDensityCount - 1] = 0.5;
	check(auto_threshold(in, both(c), 0, &clustered) == 4,
		  "clustered, the stream's noise 0.5: 4");
}

void test_read_noise()
{
	// rounds that are slower or faster throughout: nothing left to compare
	double common[3 * 4];
	const double pattern[3] = {50, 80, 200}, round[4] = {1, 1.3, 0.9, 1.1};
	for (int k = 0; k < 3; k++)
		for (int r = 0; r < 4; r++)
			common[k * 4 + r] = pattern[k] * round[r];
	check(near(read_noise(common, 3, 4, 4), 0), "a round's common factor is no noise");
	// two patterns trading places over two rounds by a factor 2: residuals
	// of ln 2 / 2 in every cell, variance (ln 2)^2 on one degree of freedom,
	// sqrt(pi / 2 * (ln 2)^2 / 2) = ln 2 * sqrt(pi) / 2
	const double swap[2 * 2] = {100, 200, 200, 100};
	check(near(read_noise(swap, 2, 2, 2), std::log(2.0) * std::sqrt(std::acos(-1.0)) / 2),
		  "two patterns trading places: ln 2 * sqrt(pi) / 2");
	// the stride skips unused rounds
	const double strided[2 * 3] = {100, 200, -1, 200, 100, -1};
	check(near(read_noise(strided, 2, 2, 3), read_noise(swap, 2, 2, 2)), "stride");
	check(read_noise(swap, 2, 1, 2) == 0 && read_noise(swap, 1, 2, 2) == 0,
		  "one round or one pattern: not measured");
}

void test_density_figures()
{
	// three patterns over three rounds, their orders differing: each
	// pattern's median, and the noise of the rounds as they were paired
	double samples[3 * 4] = {100, 300, 200, -1,
							 200, 100, 300, -1,
							 300, 200, 100, -1};
	double kept[3 * 4];
	std::copy(samples, samples + 12, kept);
	double figures[3];
	const double noise = density_figures(samples, 3, 3, 4, figures);
	check(near(figures[0], 200) && near(figures[1], 200) && near(figures[2], 200),
		  "each pattern's median over its rounds");
	check(near(noise, read_noise(kept, 3, 3, 4)) && noise > 0.3,
		  "the noise of the rounds as paired");
	check(std::equal(samples, samples + 12, kept), "the samples left as they were");
	// sorted, every pattern would read 100, 200, 300: ranked alike, no noise
	const double ranked[3 * 3] = {100, 200, 300, 100, 200, 300, 100, 200, 300};
	check(near(read_noise(ranked, 3, 3, 3), 0), "rounds ranked alike: no noise");
	// two rounds: the median is the mean of their logarithms
	const double two[2 * 2] = {100, 300, 300, 100};
	density_figures(two, 2, 2, 2, figures);
	check(near(figures[0], std::sqrt(100.0 * 300.0)) && near(figures[1], figures[0]),
		  "two rounds: the mean of their logarithms");
	// a round slower or faster throughout cancels in a comparison: the same
	// rounds, each scaled by a factor of its own, give figures in the same
	// ratios (and the same noise)
	const double base[3 * 4] = {100, 120, 90, 150,
								200, 260, 230, 170,
								400, 350, 480, 390};
	const double factor[4] = {1, 3, 0.5, 2};
	double scaled[3 * 4];
	for (int k = 0; k < 3; k++)
		for (int r = 0; r < 4; r++)
			scaled[k * 4 + r] = base[k * 4 + r] * factor[r];
	double f_base[3], f_scaled[3];
	const double n_base = density_figures(base, 3, 4, 4, f_base);
	const double n_scaled = density_figures(scaled, 3, 4, 4, f_scaled);
	check(near(f_scaled[1] / f_scaled[0], f_base[1] / f_base[0]) &&
		  near(f_scaled[2] / f_scaled[0], f_base[2] / f_base[0]) && near(n_scaled, n_base),
		  "a round's own level cancels between the figures");
}

void test_student_t()
{
	// the incomplete beta function where it has a closed form: I_x(1, 1) =
	// x, I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b, and its symmetry
	bool beta_ok = true;
	for (double x : {0.01, 0.3, 0.5, 0.77, 0.99}) {
		beta_ok &= near(incomplete_beta(x, 1, 1), x);
		beta_ok &= near(incomplete_beta(x, 3.5, 1), std::pow(x, 3.5));
		beta_ok &= near(incomplete_beta(x, 1, 2.5), 1 - std::pow(1 - x, 2.5));
		beta_ok &= near(incomplete_beta(x, 2.5, 4) + incomplete_beta(1 - x, 4, 2.5), 1);
	}
	check(beta_ok, "incomplete beta: closed forms and symmetry");
	// one degree of freedom is the Cauchy distribution: P(T > t) = 1/2 -
	// atan(t) / pi; Student's tables (one-sided 95 % and 97.5 %)
	check(near(t_upper(3.0, 1), 0.5 - std::atan(3.0) / std::acos(-1.0)), "t, one dof: Cauchy");
	bool table_ok = std::fabs(t_quantile(0.05, 20) - 1.725) < 0.0015;
	table_ok &= std::fabs(t_quantile(0.025, 5) - 2.571) < 0.0015;
	table_ok &= std::fabs(t_quantile(0.025, 10) - 2.228) < 0.0015;
	check(table_ok, "t quantiles as Student's tables give them");
	check(near(t_upper(t_quantile(1e-4, 9), 9), 1e-4), "the quantile inverts the tail");
}

void test_disturbed_timings()
{
	// six patterns over five rounds, each round's own level and a spread
	// of about 2 % of each figure; then one pattern in one round 20 times
	// slower, as when the storage stalls
	const double level[5] = {1.0, 1.1, 0.95, 1.02, 0.9};
	const double spread[6][5] = {{1.00, 1.02, 0.98, 1.01, 0.99},
								 {0.98, 1.00, 1.02, 0.99, 1.01},
								 {1.02, 0.99, 1.00, 0.98, 1.01},
								 {1.01, 0.98, 1.01, 1.00, 1.00},
								 {0.99, 1.01, 0.99, 1.02, 0.99},
								 {1.00, 1.00, 1.00, 1.00, 1.00}};
	double clean[6 * 5], disturbed[6 * 5];
	for (int k = 0; k < 6; k++)
		for (int r = 0; r < 5; r++)
			clean[k * 5 + r] = disturbed[k * 5 + r] = 100.0 * (k + 1) * level[r] * spread[k][r];
	disturbed[2 * 5 + 3] *= 20;
	double f_clean[6], f_disturbed[6];
	int n_clean = -1, n_disturbed = -1;
	const double noise_clean = density_figures(clean, 6, 5, 5, f_clean, true, &n_clean);
	const double noise_disturbed = density_figures(disturbed, 6, 5, 5, f_disturbed, true, &n_disturbed);
	check(n_clean == 0 && near(noise_clean, read_noise(clean, 6, 5, 5)),
		  "undisturbed timings: none set aside, the noise as before");
	check(n_disturbed == 1, "the stalled timing set aside");
	// read_noise() over all of them: the one timing makes the noise many
	// times what it is without it; set aside, the noise is that of the
	// rest, raised by the degree of freedom it took (t at 19 over t at 20)
	check(read_noise(disturbed, 6, 5, 5) > 10 * noise_clean, "one stall inflates the spread");
	check(noise_disturbed < 1.5 * noise_clean && noise_disturbed > 0.5 * noise_clean,
		  "set aside, the noise is the rest's");
	bool figures_ok = true;
	for (int k = 0; k < 6; k++)
		figures_ok &= std::fabs(std::log(f_disturbed[k] / f_clean[k])) < 0.02;
	check(figures_ok, "the figures as without the stall, its own pattern's included");
	// two rounds: a pattern's two residuals are one number, nothing is set
	// aside; a whole pattern twice as slow is a figure, not a disturbance
	int n = -1;
	density_figures(disturbed, 6, 2, 5, f_disturbed, true, &n);
	check(n == 0, "two rounds: nothing set aside");
	double slower[6 * 5];
	for (int i = 0; i < 30; i++)
		slower[i] = clean[i] * (i / 5 == 4 ? 2 : 1);
	density_figures(slower, 6, 5, 5, f_disturbed, true, &n);
	check(n == 0 && near(f_disturbed[4] / f_clean[4], 2), "a pattern slower in every round");
	// buffered reads: nothing set aside, the stall counted in the spread
	const double buffered = density_figures(disturbed, 6, 5, 5, f_disturbed, false, &n);
	check(n == 0 && near(buffered, read_noise(disturbed, 6, 5, 5)),
		  "without disturbances set aside: the noise of every timing");
	// buffered reads with the device's requests counted: the stalled
	// timing asked for as many as its pattern's other rounds (the timings'
	// spread of about 2 %, in other rounds) and is set aside; asking for a
	// third of them, it is the readahead's other way of going, and kept
	double requests[6 * 5];
	for (int i = 0; i < 30; i++)
		requests[i] = 0.5 * spread[i / 5][(i % 5 + 2) % 5];
	const double stalled = density_figures(disturbed, 6, 5, 5, f_disturbed, false, &n, requests);
	check(n == 1 && stalled < 1.5 * noise_clean,
		  "buffered: a stall with its pattern's requests set aside");
	requests[2 * 5 + 3] /= 3;
	density_figures(disturbed, 6, 5, 5, f_disturbed, false, &n, requests);
	check(n == 0, "buffered: a timing whose requests differ kept");
	requests[2 * 5 + 3] *= 3;
	requests[4 * 5 + 1] = 0;
	density_figures(disturbed, 6, 5, 5, f_disturbed, false, &n, requests);
	check(n == 0, "buffered: a count of none, nothing set aside");
	requests[4 * 5 + 1] = std::nan("");
	density_figures(disturbed, 6, 5, 5, f_disturbed, false, &n, requests);
	check(n == 0, "buffered: a count missing, nothing set aside");
	// requests that add up exactly (each round's the same for every
	// pattern, counts over 257 pages to read; their logarithms' residuals
	// are rounding, 1e-16, and must not be taken for a spread): the
	// stall's requests as the others', set aside
	double even[6 * 5];
	for (int i = 0; i < 30; i++)
		even[i] = (7.0 * (i % 5) + 15) / 257;
	density_figures(disturbed, 6, 5, 5, f_disturbed, false, &n, even);
	check(n == 1, "buffered: requests without spread, the stall set aside");
	// four rounds of five kept (stride 5): the stall, in round 3, still set
	// aside, from the first four rounds' requests
	density_figures(disturbed, 6, 4, 5, f_disturbed, false, &n, even);
	check(n == 1, "buffered: fewer rounds than the stride");
	// with direct reads the requests are not asked
	requests[4 * 5 + 1] = 0.5;
	requests[2 * 5 + 3] /= 3;
	density_figures(disturbed, 6, 5, 5, f_disturbed, true, &n, requests);
	check(n == 1, "direct: a stall set aside whatever the requests");
}

void test_model_monotonic()
{
	// settings: a higher random_page_cost never lowers the threshold, a
	// higher seq_page_cost never raises it
	const double costs[] = {0.1, 0.5, 1.0, 1.01, 1.1, 1.25, 1.5, 2, 3, 4, 8, 40, 1000};
	bool rpc_ok = true, seq_ok = true;
	for (int major : {15, 18}) {
		std::uint32_t prev = 0;
		for (double r : costs) {
			StorageInputs in = default_storage(major);
			in.random_page_cost = r;
			const std::uint32_t t = auto_threshold(in);
			rpc_ok &= t >= prev && t >= 1 && t <= 32;
			prev = t;
			StorageInputs dearer = in;
			dearer.seq_page_cost = 2.0;
			seq_ok &= auto_threshold(dearer) <= t;
		}
	}
	check(rpc_ok, "higher random_page_cost never lowers the threshold");
	check(seq_ok, "higher seq_page_cost never raises the threshold");
	// calibrated: the measured read cost of one threshold falling never
	// takes the choice away from it; more work per page read through never
	// raises the threshold
	const StorageInputs in = default_storage(18);
	const MapCounts map = map_of(10000, 500, {0, 100, 300, 700, 1500, 3000});
	bool fall_ok = true, cpu_ok = true;
	for (int t = 0; t < kGapCount; t++) {
		Calibration c = flat(40, 0.5, 0.05);
		for (double us : {60.0, 40.0, 30.0, 20.0, 10.0, 1.0}) {
			for (auto &row : c.read_us)
				row[t] = us;
			const std::uint32_t before = auto_threshold(in, both(c), 50, &map);
			for (auto &row : c.read_us)
				row[t] = us * 0.9;
			const std::uint32_t after = auto_threshold(in, both(c), 50, &map);
			fall_ok &= after == before || after == kGaps[t];
			for (auto &row : c.read_us)
				row[t] = us;
			cpu_ok &= auto_threshold(in, both(c), 200, &map) <= before;
		}
	}
	check(fall_ok, "a threshold whose reads get cheaper is chosen or the choice stays");
	check(cpu_ok, "more tuples per page never raise the threshold");
}

void test_model_read_through()
{
	RelationInputs fast;
	fast.storage = default_storage(18);
	fast.storage.random_page_cost = 1.1;
	fast.freeze.freeze_table_age = 1000;
	fast.freeze.relfrozenxid_age = 500;
	Decision d = decide(kThresholdAutotune, fast);
	check(!d.read_through && d.thresholds.all_visible == 10, "age at half: no read-through");
	fast.freeze.relfrozenxid_age = 501;
	d = decide(kThresholdAutotune, fast);
	check(d.read_through && d.thresholds.all_visible == kReadThrough &&
			  d.thresholds.all_frozen == 10,
		  "age past half: all-visible runs read, all-frozen runs still skipped");
	RelationInputs mxid = fast;
	mxid.freeze.relfrozenxid_age = 0;
	mxid.freeze.multixact_freeze_table_age = 100;
	mxid.freeze.relminmxid_age = 51;
	check(decide(kThresholdAutotune, mxid).read_through, "relminmxid age counts too");
	d = decide(1, fast);
	check(!d.read_through && d.thresholds.all_visible == 1, "a fixed threshold stays fixed");
	check(throws_invalid_argument([&] { decide(-7, fast); }), "decide(-7) throws");
}

void test_estimated_cost()
{
	const StorageInputs in = default_storage(18);
	Calibration c = flat(50, 2, 0.08);
	const MapCounts map = map_of(10000, 500, {0, 100, 300, 700, 1500, 3000});
	const CostModel m = cost_model(in, both(c), 100, &map);
	check(near(estimated_cost(m, &c, 4, 800, 300, 90), 500 * 50 + 300 * 10),
		  "calibrated: the pages to read at the measured cost, the others' work");
	check(estimated_cost(m, &c, 4, 0, 0, 0) == 0.0, "nothing read costs nothing");
	StorageInputs fast = in;
	fast.random_page_cost = 1.1;
	const CostModel sm = cost_model(fast, nullptr, 0, nullptr);
	check(near(estimated_cost(sm, nullptr, 4, 100, 30, 3), 3 * 11 + 97 * 1.0),
		  "settings: 100 pages in 3 runs, 11 for each run's first");
	check(estimated_cost(sm, nullptr, 1, 0, 0, 0) == 0.0, "settings: nothing read");
	StorageInputs free_reads = in;
	free_reads.seq_page_cost = 0.0;
	const CostModel fm = cost_model(free_reads, nullptr, 0, nullptr);
	check(estimated_cost(fm, nullptr, 1, 0, 0, 0) == 0.0,
		  "seq_page_cost 0: nothing read costs nothing (not 0 times an infinite skip)");
}

void test_calibration_record()
{
	CalibrationRecord r;
	r.costs = flat(50.5, 0.75, 0.0625);
	r.costs.read_us[kDensityCount - 1][5] = 48.125;
	r.costs.read_us[0][1] = 333.5;
	r.costs.start_read_us[2][3] = 777.25;
	r.server_major = 18;
	r.direct_io = true;
	r.io_method = IoMethod::kWorker;
	r.io_workers = 3;
	r.maintenance_io_concurrency = 16;
	r.io_combine_limit = 16;
	r.measured_at = 1764600000;
	r.seconds = 10.5;
	r.rounds = 7;
	for (int d = 0; d < kDensityCount; d++) {
		r.costs.read_noise[d] = 0.03125 * (d + 1);
		r.costs.start_read_noise[d] = 0.25;
	}
	r.costs.noise_dof = 30;
	r.limit_requests = 3000.5;
	r.limit_bytes = 131072000;
	r.costs.read_cpu_share[5][4] = 0.375;
	r.read_ahead_kb = 4096;
	r.directory.inode = 1234567;
	r.directory.born_ns = 1764600000123456789ULL;
	r.directory.file_system = 0xfedcba9876543210ULL;   // beyond a signed 64-bit number
	std::snprintf(r.tablespace, sizeof(r.tablespace), "%s", "fast space");
	char text[8192];
	const int n = format_calibration(r, text, sizeof(text));
	CalibrationRecord back;
	check(n > 0 && parse_calibration(text, n, &back), "a record reads back");
	check(near(back.costs.read_us[1][1], 50.5) &&
			  near(back.costs.read_us[kDensityCount - 1][5], 48.125) &&
			  near(back.costs.read_us[0][1], 333.5) &&
			  near(back.costs.start_read_us[2][3], 777.25) &&
			  near(back.costs.start_read_us[0][1], 50.5) &&
			  near(back.costs.cpu_tuple_us, 0.0625) && near(back.costs.read_noise[0], 0.03125) &&
			  near(back.costs.read_noise[6], 0.21875) &&
			  near(back.costs.start_read_noise[3], 0.25) && back.costs.noise_dof == 30 &&
			  back.io_method == IoMethod::kWorker &&
			  back.direct_io && back.measured_at == 1764600000 && back.rounds == 7 &&
			  std::string(back.tablespace) == "fast space" && near(back.limit_requests, 3000.5) &&
			  near(back.limit_bytes, 131072000) && near(back.costs.read_cpu_share[5][4], 0.375) &&
			  back.read_ahead_kb == 4096 && back.directory.inode == 1234567 &&
			  back.directory.born_ns == 1764600000123456789ULL &&
			  back.directory.file_system == 0xfedcba9876543210ULL,
		  "every field survives");
	// the longest a record can be (every figure 23 characters, the longest
	// name) fits the 8,192 bytes calibration_store.cpp reads of a file
	CalibrationRecord longest = r;
	const double wide = 1.2345678901234567e-300;
	for (int d = 0; d < kDensityCount; d++) {
		longest.costs.read_noise[d] = longest.costs.start_read_noise[d] = wide;
		for (int t = 0; t < kGapCount; t++)
			longest.costs.read_us[d][t] = longest.costs.start_read_us[d][t] =
				longest.costs.read_cpu_share[d][t] = wide;
	}
	longest.directory.inode = longest.directory.born_ns = longest.directory.file_system =
		UINT64_MAX;
	longest.seconds = longest.costs.cpu_page_us = longest.costs.cpu_tuple_us =
		longest.limit_requests = longest.limit_bytes = wide;
	std::memset(longest.tablespace, 'n', sizeof(longest.tablespace) - 1);
	char big[16384];
	const int longest_n = format_calibration(longest, big, sizeof(big));
	check(longest_n > 4096 && longest_n < 8192, "the longest record fits in 8,192 bytes");
	// io_method's names, both ways
	bool names_ok = true;
	for (IoMethod m : {IoMethod::kNone, IoMethod::kSync, IoMethod::kWorker,
					   IoMethod::kIoUring, IoMethod::kOther})
		names_ok &= io_method_of(io_method_name(m)) == m;
	check(names_ok && io_method_of(nullptr) == IoMethod::kNone &&
			  io_method_of("posix_aio") == IoMethod::kOther,
		  "io_method names: each its own; none on 15 (no setting); an unknown one other");
	// the I/O path: the same concurrency is the same path
	StorageInputs now = measured_path(r);
	check(same_io_path(r, now), "its own path");
	now.maintenance_io_concurrency = 32;
	check(same_io_path(r, now), "32 ahead with 3 workers is still 3 in flight");
	now.maintenance_io_concurrency = 1;
	check(!same_io_path(r, now), "1 in flight is another path");
	now = measured_path(r);
	now.direct_io = false;
	check(!same_io_path(r, now), "buffered is another path");
	now = measured_path(r);
	now.io_combine_limit = 8;
	check(!same_io_path(r, now), "another io_combine_limit is another path");
	// the kernel's readahead: another is another path for buffered reads,
	// where both know it
	now = measured_path(r);
	now.read_ahead_kb = 128;
	check(same_io_path(r, now), "direct reads do not read ahead: any readahead is their path");
	CalibrationRecord buffered = r;
	buffered.direct_io = false;
	buffered.read_ahead_kb = 8192;
	now = measured_path(buffered);
	check(now.read_ahead_kb == 8192 && same_io_path(buffered, now),
		  "buffered reads under the readahead measured");
	now.read_ahead_kb = 128;
	check(!same_io_path(buffered, now), "another readahead is another path for buffered reads");
	now.read_ahead_kb = -1;
	check(same_io_path(buffered, now), "a readahead not known now cannot tell");
	buffered.read_ahead_kb = -1;
	now.read_ahead_kb = 128;
	check(same_io_path(buffered, now), "a record that does not know its readahead cannot tell");
	// damaged files are no calibration
	const std::string good(text, n);
	CalibrationRecord x;
	check(!parse_calibration(text, n / 2, &x), "a truncated file");
	const std::string version = "version " + std::to_string(kCalibrationFormat);
	for (int old : {8, 9})
	{
		std::string earlier = good;
		earlier.replace(earlier.find(version), version.size(), "version " + std::to_string(old));
		check(!parse_calibration(earlier.data(), earlier.size(), &x) &&
				  calibration_format(earlier.data(), earlier.size()) == old,
			  "an earlier format version (8: noise understated; 9: one map per density), "
			  "and which it is");
	}
	check(calibration_format(good.data(), good.size()) == kCalibrationFormat &&
			  calibration_format("tablespace x\n", 13) == -1,
		  "this format version, and none");
	std::string no_ra = good;
	const std::size_t ra = no_ra.find("read_ahead_kb ");
	no_ra.erase(ra, no_ra.find('\n', ra) - ra + 1);
	check(ra != std::string::npos && parse_calibration(no_ra.data(), no_ra.size(), &x) &&
			  x.read_ahead_kb == -1,
		  "a record written before the readahead was kept reads back, not knowing it");
	for (const char *bad : {"read_ahead_kb -2", "read_ahead_kb 8M", "read_ahead_kb "}) {
		std::string wrong = good;
		wrong.replace(ra, wrong.find('\n', ra) - ra, bad);
		check(!parse_calibration(wrong.data(), wrong.size(), &x), bad);
	}
	// where it was measured: a record without it does not know, and says
	// nothing against any place
	std::string nowhere = good;
	const std::size_t dir = nowhere.find("\ndirectory ") + 1;
	nowhere.erase(dir, nowhere.find('\n', dir) - dir + 1);
	check(dir != 0 && parse_calibration(nowhere.data(), nowhere.size(), &x) &&
			  x.directory.inode == 0 && x.directory.born_ns == 0 &&
			  x.directory.file_system == 0 && same_place(x.directory, r.directory),
		  "a record written before its place was kept reads back, not knowing it");
	for (const char *bad : {"directory -1 2 3", "directory 1 2", "directory 1 2 3 4",
							"directory 1 2x 3", "directory 1  2 3", "directory 1 2 +3",
							"directory 1 18446744073709551616 3", "directory "}) {
		std::string wrong = good;
		wrong.replace(dir, wrong.find('\n', dir) - dir, bad);
		check(!parse_calibration(wrong.data(), wrong.size(), &x), bad);
	}
	Place there = r.directory;
	check(same_place(r.directory, there), "measured here");
	there.inode++;
	check(!same_place(r.directory, there), "another directory on the file system: a copy");
	there = r.directory;
	there.born_ns++;
	check(!same_place(r.directory, there), "the same inode made at another time: a copy");
	there = r.directory;
	there.file_system++;
	check(same_place(r.directory, there),
		  "the same directory, made at the same time, on a file system numbered anew (XFS's "
		  "f_fsid is its device's number)");
	there.born_ns = 0;
	check(!same_place(r.directory, there),
		  "where either does not know when it was made, another file system: a copy");
	there.file_system = r.directory.file_system;
	check(same_place(r.directory, there), "and the same one: the same directory");
	there.inode = 0;
	check(same_place(r.directory, there), "a place not known now cannot tell");
	std::string no_limit = good;
	const std::size_t nl = no_limit.find("limit_bytes ");
	no_limit.erase(nl, no_limit.find('\n', nl) - nl + 1);
	check(!parse_calibration(no_limit.data(), no_limit.size(), &x), "the bytes' limit missing");
	std::string neg_rate = good;
	neg_rate.replace(neg_rate.find("limit_requests "), 15, "limit_requests -");
	check(!parse_calibration(neg_rate.data(), neg_rate.size(), &x), "a negative rate");
	std::string few_noises = good;
	const std::size_t fn = few_noises.find("\nread_noise ") + 1;
	few_noises.replace(fn, few_noises.find('\n', fn) - fn, "read_noise 0.1 0.1");
	check(!parse_calibration(few_noises.data(), few_noises.size(), &x),
		  "a noise for each density");
	std::string no_dof = good;
	const std::size_t nd = no_dof.find("noise_dof ");
	no_dof.erase(nd, no_dof.find('\n', nd) - nd + 1);
	check(!parse_calibration(no_dof.data(), no_dof.size(), &x), "the noise's degrees missing");
	std::string noisy = good;
	noisy.replace(noisy.find("read_noise "), 11, "read_noise -");
	check(!parse_calibration(noisy.data(), noisy.size(), &x), "negative noise");
	std::string no_start_noise = good;
	const std::size_t k = no_start_noise.find("start_read_noise ");
	no_start_noise.erase(k, no_start_noise.find('\n', k) - k + 1);
	check(!parse_calibration(no_start_noise.data(), no_start_noise.size(), &x),
		  "the first pages' noise missing");
	std::string neg = good;
	neg.replace(neg.find("read_us_2 "), 10, "read_us_2 -");
	check(!parse_calibration(neg.data(), neg.size(), &x), "a negative read cost");
	std::string few = good;
	const std::size_t g = few.find("read_us_1 ");
	few.replace(g, few.find('\n', g) - g, "read_us_1 1 2 3");
	check(!parse_calibration(few.data(), few.size(), &x), "too few thresholds");
	std::string missing = good;
	const std::size_t h = missing.find("read_us_3 ");
	missing.erase(h, missing.find('\n', h) - h + 1);
	check(!parse_calibration(missing.data(), missing.size(), &x), "a density missing");
	std::string no_start = good;
	const std::size_t i = no_start.find("start_read_us_6 ");
	no_start.erase(i, no_start.find('\n', i) - i + 1);
	check(i != std::string::npos && !parse_calibration(no_start.data(), no_start.size(), &x),
		  "a density's first-pages figures missing");
	std::string zero_start = good;
	const std::size_t j = zero_start.find("start_read_us_0 ");
	zero_start.replace(j, 16, "start_read_us_0 0 ");
	check(!parse_calibration(zero_start.data(), zero_start.size(), &x),
		  "a first-pages figure of 0");
	check(!parse_calibration("", 0, &x), "an empty file");
}

std::vector<std::uint8_t> pack(const std::vector<unsigned> &blocks)
{
	std::vector<std::uint8_t> map((blocks.size() + 3) / 4, 0);
	for (std::size_t b = 0; b < blocks.size(); ++b)
		map[b / 4] |= static_cast<std::uint8_t>(blocks[b] << (2 * (b % 4)));
	return map;
}

// The skip rule restated block by block, independently of VmWalker.
SimResult reference(const std::vector<unsigned> &blocks, std::uint64_t rel_pages,
					std::uint32_t threshold, bool aggressive)
{
	SimResult r;
	r.threshold = threshold;
	const std::uint64_t t = threshold == 0 ? 1 : threshold;
	std::vector<bool> scanned(rel_pages, false);
	auto state = [&](std::uint64_t b) { return b < blocks.size() ? blocks[b] : 0u; };
	auto skippable = [&](std::uint64_t b) {
		const unsigned s = state(b);
		return (s & 1) && b != rel_pages - 1 && (!aggressive || (s & 2));
	};
	std::uint64_t b = 0;
	while (b < rel_pages) {
		std::uint64_t e = b;
		bool allvis = false;
		while (skippable(e)) {
			allvis |= !(state(e) & 2);
			++e;
		}
		if (e - b > 0 && e - b < t) {
			for (std::uint64_t x = b; x < e; ++x)
				scanned[x] = true;
			r.pages_read_through += e - b;
		} else if (e - b > 0) {
			r.skipped_all_visible |= allvis;
		}
		scanned[e] = true;
		b = e + 1;
	}
	for (std::uint64_t x = 0; x < rel_pages; ++x) {
		if (scanned[x]) {
			++r.pages_scanned;
			if (x == 0 || !scanned[x - 1])
				++r.io_runs;
		}
	}
	return r;
}

std::vector<SimResult> walk(const std::vector<unsigned> &blocks, std::uint64_t rel_pages,
							const std::vector<std::uint32_t> &thresholds, bool aggressive,
							std::size_t chunk = 8168)
{
	std::vector<SimResult> res(thresholds.size());
	for (std::size_t i = 0; i < thresholds.size(); ++i)
		res[i].threshold = thresholds[i];
	const std::vector<std::uint8_t> map = pack(blocks);
	VmWalker w(rel_pages, aggressive, res.data(), res.size());
	for (std::size_t off = 0; off < map.size(); off += chunk)
		w.feed(map.data() + off, std::min(chunk, map.size() - off));
	w.finish();
	return res;
}

bool same(const SimResult &a, const SimResult &b)
{
	return a.pages_scanned == b.pages_scanned && a.pages_read_through == b.pages_read_through &&
		   a.io_runs == b.io_runs && a.skipped_all_visible == b.skipped_all_visible;
}

// One reader issuing requests one after another, each taking `service_us`,
// against a token bucket of `depth` tokens refilled at `rate` a second,
// full at the start (depth 0: no limit): when each of `n` completed.
std::vector<double> token_bucket_reads(int n, double service_us, double depth, double rate)
{
	std::vector<double> done(n);
	double t = 0, tokens = depth;
	for (int i = 0; i < n; i++) {
		if (depth > 0) {
			if (tokens < 1) {
				t += (1 - tokens) / rate * 1e6;   // wait for the next token
				tokens = 1;
			}
			tokens -= 1;
		}
		t += service_us;
		if (depth > 0)
			tokens = std::min(depth, tokens + service_us * rate / 1e6);
		done[i] = t;
	}
	return done;
}

// The same reader against an allowance of `per_slot` requests at the start
// of each `slot_us` (blk-throttle's time slices, as measured on Linux 6.18:
// 300 requests of 8 kB at once every 100 ms under a limit of 3,000 a second).
std::vector<double> slotted_reads(int n, double service_us, int per_slot, double slot_us)
{
	std::vector<double> done(n);
	double t = 0;
	int in_slot = 0;
	for (int i = 0; i < n; i++) {
		if (in_slot == per_slot) {
			t = (std::floor(t / slot_us) + 1) * slot_us;
			in_slot = 0;
		}
		if (std::floor((t + service_us) / slot_us) > std::floor(t / slot_us))
			in_slot = 0;   // a new slot began while it was served
		t += service_us;
		in_slot++;
		done[i] = t;
	}
	return done;
}

void test_find_rate_limit()
{
	const int n = 1500;
	std::vector<double> count(n);
	for (int i = 0; i < n; i++)
		count[i] = i + 1;
	// a token bucket of 300 at 3,000 a second, the reader 70 us a request:
	// the burst, a fifth of the reads, lifts the slope by 12 % (3,359)
	std::vector<double> t = token_bucket_reads(n, 70, 300, 3000);
	RateLimit l = find_rate_limit(t.data(), count.data(), n, 16);
	check(l.found && l.per_s > 3000 && l.per_s < 3000 * 1.15 && l.ahead > 200,
		  "a token bucket of 300 at 3,000 a second: found, at its rate and a share of its burst");
	// 300 at the start of every 100 ms
	t = slotted_reads(n, 70, 300, 100000);
	l = find_rate_limit(t.data(), count.data(), n, 16);
	check(l.found && std::fabs(l.per_s / 3000 - 1) < 0.1 && l.ahead_per_s > 10000,
		  "an allowance of 300 every 100 ms: found, at 3,000 a second");
	// no limit: one request every 100 us, +-30 % in a fixed pattern
	for (int i = 0; i < n; i++)
		t[i] = (i > 0 ? t[i - 1] : 0) + 100 * (1 + 0.3 * std::sin(i * 2.3999632));
	l = find_rate_limit(t.data(), count.data(), n, 16);
	check(!l.found && std::fabs(l.per_s / 10000 - 1) < 0.02,
		  "steady reads with jitter: no limit, their rate");
	// 1 MB reads alternating 0.5 and 2.5 ms (a device reading ahead on its
	// own): a fast read is 3 x the rate, a stretch of kMinStretchReads is not
	{
		const int m = 128;
		std::vector<double> tm(m), mb(m);
		for (int i = 0; i < m; i++) {
			tm[i] = (i > 0 ? tm[i - 1] : 0) + (i % 2 ? 2500 : 500);
			mb[i] = (i + 1) * 1048576.0;
		}
		check(!find_rate_limit(tm.data(), mb.data(), m, 16 * 8192).found,
			  "fast and slow reads alternating: no limit");
	}
	// cold first reads (the first 100 take 1 ms each) are no limit
	for (int i = 0; i < n; i++)
		t[i] = (i > 0 ? t[i - 1] : 0) + (i < 100 ? 1000 : 100);
	check(!find_rate_limit(t.data(), count.data(), n, 16).found, "slow first reads: no limit");
	// a bucket smaller than min_ahead does not count
	t = token_bucket_reads(n, 70, 10, 3000);
	l = find_rate_limit(t.data(), count.data(), n, 16);
	check(!l.found && l.ahead > 5 && l.ahead < 16, "a bucket of 10 against 16: not found");
	// a limit the reader can hardly outrun (served at 1.33 x the rate): not found
	t = token_bucket_reads(n, 250, 300, 3000);
	check(!find_rate_limit(t.data(), count.data(), n, 16).found,
		  "a burst served at 1.33 x its rate: not found");
	// too few reads, or no time, tell nothing
	check(!find_rate_limit(t.data(), count.data(), 3, 16).found, "3 reads: nothing");
	std::vector<double> zero(n, 0.0);
	check(!find_rate_limit(zero.data(), count.data(), n, 16).found, "no time: nothing");
	// a limit counts where two probes find it at rates within a quarter
	RateLimit a, b;
	a.found = b.found = true;
	a.per_s = 3000;
	b.per_s = 3300;
	check(near(repeated_limit(a, b), std::sqrt(3000.0 * 3300)), "two probes alike: their mean");
	b.per_s = 1364;   // a stall of the disk the benchmark runs on, 2026-12-03
	check(repeated_limit(a, b) == 0.0, "two probes far apart: no limit");
	b.per_s = 3000;
	b.found = false;
	check(repeated_limit(a, b) == 0.0, "one probe alone: no limit");
	// the least time under limits: the longer of requests and bytes
	CalibrationRecord r;
	check(limited_us(r, 100, 1e6) == 0.0, "no limit found: no least time");
	r.limit_requests = 1000;
	check(near(limited_us(r, 100, 1e9), 100000), "requests only: 100 at 1,000 a second");
	r.limit_bytes = 1e8;
	check(near(limited_us(r, 100, 1e6), 100000) && near(limited_us(r, 1, 1e8), 1e6),
		  "both: the longer");
}

void test_walker_edges()
{
	const std::vector<std::uint32_t> ts = {1, 2, 32};
	auto r = walk({}, 0, ts, false);
	check(r[0].pages_scanned == 0 && r[0].io_runs == 0, "empty table: nothing read");

	r = walk({3}, 1, ts, false);
	check(r[0].pages_scanned == 1 && r[0].io_runs == 1 && r[0].pages_read_through == 0,
		  "one all-frozen page: the last page is always read");

	std::vector<unsigned> frozen(1000, 3);
	r = walk(frozen, 1000, ts, false);
	check(r[0].pages_scanned == 1 && r[2].pages_scanned == 1 && !r[0].skipped_all_visible,
		  "all frozen: only the last page");
	r = walk(frozen, 1000, ts, true);
	check(r[0].pages_scanned == 1, "all frozen, aggressive: only the last page");

	std::vector<unsigned> none(1000, 0);
	r = walk(none, 1000, ts, false);
	check(r[0].pages_scanned == 1000 && r[0].io_runs == 1 && r[0].pages_read_through == 0,
		  "none visible: everything in one run");
	r = walk({}, 1000, ts, false);
	check(r[1].pages_scanned == 1000 && r[1].io_runs == 1, "no map at all: everything read");

	// a run at the very end: 40 frozen then the last page
	std::vector<unsigned> tail(41, 3);
	tail[0] = 0;
	r = walk(tail, 42, ts, false);   // block 41 is beyond the map: not visible
	check(r[0].pages_scanned == 2 && r[0].io_runs == 2, "run of 40 before the end is skipped");
	tail.resize(42, 3);
	r = walk(tail, 42, {32, 41, 0}, false);
	check(r[0].pages_scanned == 2 && r[1].pages_scanned == 42 && r[1].pages_read_through == 40,
		  "run of 40 ending just before the last page: skipped at 32, read at 41");
	check(r[2].pages_scanned == 2, "threshold 0 behaves as 1");

	// all-visible, unfrozen pages
	std::vector<unsigned> mixed(100, 3);
	mixed[0] = 0;
	mixed[50] = 1;
	r = walk(mixed, 100, {1, 200}, false);
	check(r[0].skipped_all_visible && r[0].pages_scanned == 2, "skipping an unfrozen page");
	check(!r[1].skipped_all_visible && r[1].pages_scanned == 100, "reading it");
	r = walk(mixed, 100, {1}, true);
	check(!r[0].skipped_all_visible && r[0].pages_scanned == 3 && r[0].io_runs == 3,
		  "aggressive: the unfrozen page is unskippable");

	// rel_pages shorter than the map
	r = walk(frozen, 10, {1}, false);
	check(r[0].pages_scanned == 1, "map beyond rel_pages is ignored");
}

void test_walker_random()
{
	std::mt19937_64 rng(20261130);
	const std::vector<std::uint32_t> ts = {0, 1, 2, 3, 4, 8, 16, 31, 32, 33, 100, 1000000};
	int mismatches = 0, cases = 0;
	for (int iter = 0; iter < 2300; ++iter) {
		const std::uint64_t rel_pages = rng() % (iter < 2000 ? 300 : 20000);
		// runs of states with random lengths: exercises the 32-block path
		std::vector<unsigned> blocks;
		const std::uint64_t map_len = rng() % 8 == 0 ? rel_pages / 2 : rel_pages + rng() % 40;
		const unsigned states[] = {0, 1, 3, 3, 3};
		while (blocks.size() < map_len) {
			const unsigned s = states[rng() % 5];
			const std::uint64_t len = 1 + rng() % (rng() % 2 ? 5 : 200);
			for (std::uint64_t k = 0; k < len && blocks.size() < map_len; ++k)
				blocks.push_back(s);
		}
		const bool aggressive = rng() % 4 == 0;
		const std::size_t chunk = rng() % 2 ? 8 * (1 + rng() % 4) : 1 + rng() % 13;
		const auto got = walk(blocks, rel_pages, ts, aggressive, chunk);
		for (std::size_t i = 0; i < ts.size(); ++i) {
			++cases;
			if (!same(got[i], reference(blocks, rel_pages, ts[i], aggressive)))
				++mismatches;
		}
	}
	std::printf("walker vs reference: %d cases, %d mismatches\n", cases, mismatches);
	check(mismatches == 0, "walker agrees with the block-by-block reference");
}

// A calibration in which every page to read costs 200 µs at thresholds 1
// to 8 and 20 at 16 and 32, with noises of 1 % and 10 µs of work a page at
// 100 tuples a page; and a relation of `map`, 100 tuples a page, under it.
Calibration step_calibration()
{
	Calibration step = flat(200, 2, 0.08);
	for (auto &row : step.read_us)
		row[4] = row[5] = 20;
	set_noise(&step, 0.01, 0.01);
	return step;
}

RelationInputs relation_of(const StorageInputs &in, Calibration &step, const MapCounts &map)
{
	RelationInputs r;
	r.storage = in;
	r.calibration = both(step);
	r.tuples_per_page = 100;
	r.map = &map;
	return r;
}

// The readahead of the device under a tablespace, from a tree laid out as
// /sys lays out block devices: /sys/dev/block/MAJ:MIN links to the
// device's directory; a disk's holds queue/read_ahead_kb, a partition's
// (inside its disk's) none.
void test_device_read_ahead()
{
	char root[] = "/tmp/vacskip-sysfs-XXXXXX";
	check(mkdtemp(root) != nullptr, "a directory for the tree");
	const std::string r = root;
	auto write = [](const std::string &path, const char *text) {
		FILE *f = std::fopen(path.c_str(), "w");
		if (f != nullptr) {
			std::fputs(text, f);
			std::fclose(f);
		}
	};
	for (const char *dir : {"/devices", "/devices/vda", "/devices/vda/queue", "/devices/vda/vda1",
							"/devices/zram0", "/devices/zram0/queue", "/block"})
		mkdir((r + dir).c_str(), 0700);
	write(r + "/devices/vda/queue/read_ahead_kb", "8192\n");
	write(r + "/devices/zram0/queue/read_ahead_kb", "12x\n");
	(void) !symlink("../devices/vda", (r + "/block/254:0").c_str());
	(void) !symlink("../devices/vda/vda1", (r + "/block/254:1").c_str());
	(void) !symlink("../devices/zram0", (r + "/block/253:0").c_str());
	const std::string blocks = r + "/block";
	check(device_read_ahead_kb(blocks.c_str(), 254, 0) == 8192, "a disk's own");
	check(device_read_ahead_kb(blocks.c_str(), 254, 1) == 8192, "a partition's is its disk's");
	check(device_read_ahead_kb(blocks.c_str(), 0, 45) == -1,
		  "no block device (tmpfs, a network file system): not known");
	check(device_read_ahead_kb(blocks.c_str(), 253, 0) == -1, "not a number: not known");
	write(r + "/devices/vda/queue/read_ahead_kb", "128\n");
	check(device_read_ahead_kb(blocks.c_str(), 254, 1) == 128, "read again, as it is now");
	for (const char *f : {"/block/254:0", "/block/254:1", "/block/253:0",
						  "/devices/vda/queue/read_ahead_kb",
						  "/devices/zram0/queue/read_ahead_kb"})
		unlink((r + f).c_str());
	for (const char *dir : {"/block", "/devices/zram0/queue", "/devices/zram0",
							"/devices/vda/vda1", "/devices/vda/queue", "/devices/vda",
							"/devices", ""})
		rmdir((r + dir).c_str());
}

// Where a directory lies: a copy of it (another directory) is another
// place, the same directory read again the same.
void test_place_of()
{
	char root[] = "/tmp/vacskip-place-XXXXXX";
	if (mkdtemp(root) == nullptr) {
		check(false, "a directory");
		return;
	}
	const std::string r = root;
	mkdir((r + "/base").c_str(), 0700);
	mkdir((r + "/copy").c_str(), 0700);
	(void) !symlink("base", (r + "/link").c_str());   // as pg_tblspc/OID is
	if (FILE *f = std::fopen((r + "/file").c_str(), "w"))
		std::fclose(f);
	Place here, again, copy, linked;
	Place untouched;
	untouched.inode = untouched.born_ns = untouched.file_system = 7;
	Place none = untouched, file = untouched;
	check(place_of((r + "/base").c_str(), &here) && here.inode != 0 &&
			  place_of((r + "/base").c_str(), &again) && same_place(here, again) &&
			  again.born_ns == here.born_ns,
		  "a directory is where it was");
	check(place_of((r + "/copy").c_str(), &copy) && copy.file_system == here.file_system &&
			  !same_place(here, copy),
		  "another directory on the same file system is another place");
	check(place_of((r + "/link").c_str(), &linked) && linked.inode == here.inode &&
			  same_place(here, linked),
		  "through a symbolic link: the directory it names");
	check(!place_of((r + "/none").c_str(), &none) && none.inode == 7 && none.born_ns == 7 &&
			  none.file_system == 7,
		  "no directory: not known, nothing changed");
	check(!place_of((r + "/file").c_str(), &file) && file.inode == 7,
		  "a file is no directory");
	unlink((r + "/link").c_str());
	unlink((r + "/file").c_str());
	rmdir((r + "/base").c_str());
	rmdir((r + "/copy").c_str());
	rmdir(root);
}

// VACUUM's cost-based delay: per page read through, vacuum_cost_page_miss
// points for reading it in and vacuum_cost_page_hit for the free space
// map's page, each point vacuum_cost_delay / vacuum_cost_limit of sleep.
void test_cost_delay()
{
	check(near(cost_delay_us(2, 200, 2, 1), 30) && near(cost_delay_us(4, 200, 2, 1), 60) &&
			  near(cost_delay_us(2, 400, 2, 1), 15) && near(cost_delay_us(2, 200, 10, 1), 110) &&
			  near(cost_delay_us(2, 200, 2, 0), 20) && near(cost_delay_us(2, 200, 0, 1), 10) &&
			  near(cost_delay_us(0.5, 10000, 2, 1), 0.15),
		  "delay: 1000 * delay_ms * (page_miss + page_hit) / limit microseconds a page");
	check(cost_delay_us(0, 200, 2, 1) == 0 && cost_delay_us(-1, 200, 2, 1) == 0 &&
			  cost_delay_us(std::nan(""), 200, 2, 1) == 0 &&
			  cost_delay_us(HUGE_VAL, 200, 2, 1) == 0 && cost_delay_us(2, 0, 2, 1) == 0 &&
			  cost_delay_us(2, -1, 2, 1) == 0 && cost_delay_us(2, 200, 0, 0) == 0 &&
			  cost_delay_us(2, 200, -1, 0) == 0,
		  "delay off, or settings it cannot be: no sleep priced");

	// one read at a time (io_method sync): nothing goes on while VACUUM
	// sleeps, and the sleep adds to the reading
	StorageInputs in = default_storage(18);
	in.io_method = IoMethod::kSync;
	Calibration c = flat(50, 2, 0.08);   // work: 2 + 0.08 * 100 = 10 a page
	set_noise(&c, 0.05, 0.05);
	const std::uint64_t through[kGapCount] = {0, 100, 300, 700, 1500, 3000};
	const MapCounts map = map_of(10000, 500, {0, 100, 300, 700, 1500, 3000});
	const CostModel off = cost_model(in, both(c), 100, &map);
	const CostModel on = cost_model(in, both(c), 100, &map, 20);
	bool added = true, noise_kept = true;
	for (int t = 0; t < kGapCount; t++) {
		added = added && near(on.cost[t] - off.cost[t], 20.0 * through[t]);
		noise_kept = noise_kept && near(on.noise[t] * on.cost[t], off.noise[t] * off.cost[t]);
	}
	check(added, "delay: every page read through costs its sleep more");
	check(noise_kept, "delay: a setting's meaning, no noise added");
	check(near(estimated_cost(on, &c, 4, 800, 300, 90), 500 * 50 + 300 * (10 + 20)),
		  "delay: in simulate()'s estimate too");
	check(off.delay_page == 0 && on.delay_page == 20, "delay: reported");

	// the settings' scale is not in time: unchanged, PostgreSQL's defaults
	// still give 32
	const MapCounts runs = map_of(10000, 1000, {0, 0, 0, 0, 8000, 8000});
	bool same = true;
	const CostModel s0 = cost_model(in, nullptr, 0, &runs);
	const CostModel s1 = cost_model(in, nullptr, 0, &runs, 20);
	for (int t = 0; t < kGapCount; t++)
		same = same && s0.cost[t] == s1.cost[t];
	RelationInputs settings;
	settings.storage = in;
	settings.map = &runs;
	settings.delay_page = 20;
	check(same && decide(kThresholdAutotune, settings).thresholds.all_frozen == 32,
		  "delay: the settings path is not priced in time, defaults keep 32");

	// where it decides: 1,000 pages to read, 200 µs each at 1 to 8 and 20
	// at 16 and 32, which read 8,000 more pages through, each 10 µs of
	// work: 200,000 against 100,000 without a delay, 100,000 + 8,000 * 30
	// = 340,000 with autovacuum's default (2 ms for 200 points, 3 points a
	// page)
	Calibration step = step_calibration();
	RelationInputs r = relation_of(in, step, runs);
	check(decide(kThresholdAutotune, r).thresholds.all_frozen == 32, "no delay: 32");
	r.delay_page = cost_delay_us(2, 200, 2, 1);
	const Decision d = decide(kThresholdAutotune, r);
	check(d.thresholds.all_frozen == 8 && near(d.model.cost[3], 200000) &&
			  near(d.model.cost[5], 340000),
		  "autovacuum's delay: 8 (1 to 4 read the same pages)");
	check(std::string(d.reason).find("cost-based delay's sleep, 30 microseconds") !=
			  std::string::npos,
		  "delay: the reason says what it priced");
}

// From 18 on, with io_method worker or io_uring, VACUUM's reads go on
// while it sleeps: a threshold costs the work on the pages it reads
// through, its reading and its sleeping, less what its naps hide, each
// the reads issued before it (maintenance_io_concurrency of them at most).
void test_cost_delay_overlap()
{
	const StorageInputs in = default_storage(18);     // worker, 16 issued ahead
	StorageInputs one = in;
	one.maintenance_io_concurrency = 1;
	StorageInputs sync = in;
	sync.io_method = IoMethod::kSync;
	StorageInputs old = default_storage(15);
	Calibration c = flat(50, 2, 0.08);                // work: 10 a page
	set_noise(&c, 0.05, 0.05);
	const std::uint64_t through[kGapCount] = {0, 100, 300, 700, 1500, 3000};
	const MapCounts map = map_of(10000, 500, {0, 100, 300, 700, 1500, 3000});
	const CostModel off = cost_model(in, both(c), 100, &map);
	check(!off.sleep_overlaps && !cost_model(in, both(c), 100, &map, 20, 230).sleep_overlaps &&
			  !cost_model(sync, both(c), 100, &map, 20, 230, 2000).sleep_overlaps &&
			  !cost_model(old, both(c), 100, &map, 20, 230, 2000).sleep_overlaps &&
			  cost_model(one, both(c), 100, &map, 20, 230, 2000).sleep_overlaps,
		  "overlap: not without a delay or its naps, with io_method sync, or before 18; "
		  "with one read issued ahead");
	// 20 µs a page read through, 230 a page to read (2 + 1 + 20 points at 10
	// µs), naps of 2 ms: the sleep, 115,000 + 20 a page read through, is
	// longer than the reading (off.cost less the work), and its 57.5 naps
	// or more, 16 reads ahead each, outnumber the reads (475 runs at 1, none
	// counted at the others, and at most one read more per 16 pages): the
	// sleep hides all the reading
	const CostModel on = cost_model(in, both(c), 100, &map, 20, 230, 2000);
	bool priced = on.sleep_overlaps, noise = true;
	for (int t = 0; t < kGapCount; t++) {
		const double work = 10.0 * through[t];
		const double reads = off.cost[t] - work;
		const double sleep = 500 * 230 + 20.0 * through[t];
		priced = priced && reads < sleep && near(on.cost[t], work + sleep);
		// the reading's noise only for the part the sleep does not cover
		noise = noise && near(on.noise[t] * on.cost[t], work * 0.05);
	}
	check(priced, "overlap: the work and the sleep, which hides the reading");
	check(noise, "overlap: no noise of the reading the sleep hides");
	check(near(estimated_cost(on, &c, 4, 800, 300, 90), 300 * 10 + 500 * 230 + 300 * 20),
		  "overlap: in simulate()'s estimate too");
	// one read issued ahead: each nap hides one read, the reading over its
	// reads at most; at 1, 500 pages to read at 50 µs in 475 runs, 475 +
	// 500 / 16 = 506.25 reads at most, 57.5 naps of 2 ms: 57.5 * 25,000 /
	// 506.25 hidden of the 25,000 µs read and 115,000 slept
	const CostModel serial = cost_model(one, both(c), 100, &map, 20, 230, 2000);
	const double hidden = 57.5 * 25000 / 506.25;
	check(near(serial.cost[0], 25000 + 115000 - hidden) &&
			  near(serial.noise[0] * serial.cost[0],
				   off.noise[0] * off.cost[0] * (25000 - hidden) / 25000),
		  "one read ahead: a nap hides one read; the noise of the rest of the reading");
	// at 4, 300 pages read through: 800 pages in 90 runs, 90 + 800 / 16 = 140
	// reads at most, 121,000 µs slept in 60.5 naps
	check(near(estimated_cost(serial, &c, 4, 800, 300, 90),
				   300 * 10 + 25000 + 121000 - 60.5 * 25000 / 140),
		  "one read ahead: in simulate()'s estimate too");
	// naps of 20 ms (vacuum_cost_delay 20, vacuum_cost_limit 2,000: the
	// same sleep per page) hide a tenth as much
	const CostModel long_naps = cost_model(one, both(c), 100, &map, 20, 230, 20000);
	check(near(long_naps.cost[0], 25000 + 115000 - hidden / 10),
		  "one read ahead: longer naps, fewer of them, hide less");
	// naps of 0.5 ms, 16 reads ahead: each hides 16 reads at the reading's
	// 25,000 / 506.25 µs a read, longer than the nap.  With 10 µs slept a
	// page to read (5,000 in all) the naps hide all the sleep, and the
	// reading, the longer, passes into the cost whole, its error too
	const CostModel reading = cost_model(in, both(c), 100, &map, 1, 10, 500);
	check(reading.sleep_overlaps && near(reading.cost[0], off.cost[0]) &&
			  near(reading.kept[0], 1) && near(reading.noise[0], off.noise[0]),
		  "overlap, the reading the longer: its noise whole");
	// 51 µs a page to read, 25,500 slept: the naps hide all the reading,
	// 500 µs short of the sleep.  An error of the reading's noise, sigma
	// (its runs' figures and the stream's), either way: dearer by sigma it
	// costs sigma - 500 more, cheaper nothing less
	const double sigma = off.noise[0] * off.cost[0] + off.shared_noise;
	const CostModel near_turn = cost_model(in, both(c), 100, &map, 1, 51, 500);
	check(near(near_turn.cost[0], 25500) && sigma > 500 &&
			  near(near_turn.kept[0], (sigma - 500) / sigma) &&
			  near(near_turn.noise[0] * near_turn.cost[0],
				   off.noise[0] * off.cost[0] * (sigma - 500) / sigma),
		  "overlap, the reading a little shorter than the sleep: the noise as far as "
		  "it moves the cost");
	check(near(on.kept[0], 0) && near(serial.kept[0], (25000 - hidden) / 25000) &&
			  near(off.kept[0], 1),
		  "overlap: the share of the reading's error in the cost, linear away from a turn");
	// the decision of test_cost_delay()'s map and calibration at autovacuum's
	// defaults: 1,000 pages to read at 200 µs at 1 to 8 (200,000) against
	// 20 at 32 (20,000) with 8,000 pages read through (80,000 of work); the
	// sleep 1,000 * 230 + 8,000 * 30 at 32 = 470,000, 230,000 at 8: 8
	// costs 230,000, 32 80,000 + 470,000 = 550,000
	const MapCounts runs = map_of(10000, 1000, {0, 0, 0, 0, 8000, 8000});
	Calibration step = step_calibration();
	RelationInputs r = relation_of(in, step, runs);
	r.delay_page = cost_delay_us(2, 200, 2, 1);
	r.delay_needed = cost_delay_us(2, 200, 2 + 20, 1);
	r.delay_nap = 2000;
	const Decision d = decide(kThresholdAutotune, r);
	check(d.thresholds.all_frozen == 8 && near(d.model.cost[3], 230000) &&
			  near(d.model.cost[5], 550000),
		  "overlap, autovacuum's delay: 8 at 230,000 against 550,000");
	check(std::string(d.reason).find("30 microseconds for each and 230 for each page to "
									 "read, in naps of 2e+03 during which up to 16 reads "
									 "issued ahead go on") !=
			  std::string::npos,
		  "overlap: the reason says so");
}

// No nap hides the reading's time on a CPU (Calibration::read_cpu_share):
// the naps hide at most the rest, the waiting, each nap the reads issued
// before it at the waiting's time per read.
void test_cost_delay_cpu()
{
	const StorageInputs in = default_storage(18);     // worker, 16 issued ahead
	StorageInputs one = in;
	one.maintenance_io_concurrency = 1;
	Calibration c = flat(50, 2, 0.08);                // work: 10 a page
	set_noise(&c, 0.05, 0.05);
	const std::uint64_t through[kGapCount] = {0, 100, 300, 700, 1500, 3000};
	const MapCounts map = map_of(10000, 500, {0, 100, 300, 700, 1500, 3000});
	const CostModel off = cost_model(in, both(c), 100, &map);
	Calibration half = c;
	for (int d = 0; d < kDensityCount; d++)
		for (int t = 0; t < kGapCount; t++)
			half.read_cpu_share[d][t] = 0.5;
	// test_cost_delay_overlap()'s sleep, longer than the reading at every
	// threshold, 16 reads ahead: the naps hide the waiting, half the
	// reading, and the cost is the work, the sleep and the other half
	const CostModel on = cost_model(in, both(half), 100, &map, 20, 230, 2000);
	bool priced = on.sleep_overlaps;
	for (int t = 0; t < kGapCount; t++) {
		const double work = 10.0 * through[t];
		const double reads = off.cost[t] - work;
		priced = priced && near(on.cpu_share[t], 0.5) &&
			near(on.cost[t], work + 500 * 230 + 20.0 * through[t] + reads / 2);
	}
	check(priced, "CPU: the naps hide the waiting only, not the reading's time on a CPU");
	// one read issued ahead: each of the 57.5 naps hides one read's
	// waiting, half of 25,000 µs over 506.25 reads at most (at 1)
	const CostModel serial = cost_model(one, both(half), 100, &map, 20, 230, 2000);
	check(near(serial.cost[0], 25000 + 115000 - 57.5 * 12500 / 506.25),
		  "CPU: one read ahead, each nap one read's waiting");
	// at 4, 300 pages read through: 800 pages in 90 runs, 140 reads at
	// most, 121,000 µs slept in 60.5 naps
	check(near(estimated_cost(serial, &half, 4, 800, 300, 90),
			   300 * 10 + 25000 + 121000 - 60.5 * 12500 / 140),
		  "CPU: in simulate()'s estimate too");
	// between calibrated thresholds and densities, linear in their
	// logarithms: 0.2 at 2, 0.6 at 4, at 3 log2(3 / 2) of the way
	Calibration rising = c;
	for (int d = 0; d < kDensityCount; d++) {
		rising.read_cpu_share[d][1] = 0.2;
		rising.read_cpu_share[d][2] = 0.6;
	}
	rising.read_cpu_share[4][2] = 0.8;
	check(near(measured_cpu_share(rising, 0.05, 3), 0.2 + 0.4 * std::log2(1.5)) &&
			  near(measured_cpu_share(rising, kDensities[4], 4), 0.8) &&
			  near(measured_cpu_share(rising, std::sqrt(kDensities[4] * kDensities[5]), 4),
				   0.7) &&
			  near(measured_cpu_share(rising, 0.001, 64), 0.0),
		  "CPU: between calibrated thresholds and densities, in their logarithms");
	RelationInputs r = relation_of(in, half, map);
	r.delay_page = 20;
	r.delay_needed = 230;
	r.delay_nap = 2000;
	const Decision d = decide(kThresholdAutotune, r);
	check(std::string(d.reason).find("issued ahead go on (no nap hides the reading's time on "
									 "a CPU, 0.5 of it at ") != std::string::npos,
		  "CPU: the reason says so");
}

}  // namespace

int main()
{
	test_setting();
	test_model_defaults();
	test_model_settings();
	test_read_concurrency();
	test_measured_read_us();
	test_start_share();
	test_noise_by_density();
	test_model_start();
	test_calibrated_densities();
	test_model_calibrated();
	test_model_runs();
	test_model_noise();
	test_between_densities();
	test_read_noise();
	test_density_figures();
	test_student_t();
	test_disturbed_timings();
	test_model_monotonic();
	test_model_read_through();
	test_estimated_cost();
	test_cost_delay();
	test_cost_delay_overlap();
	test_cost_delay_cpu();
	test_calibration_record();
	test_device_read_ahead();
	test_place_of();
	test_find_rate_limit();
	test_walker_edges();
	test_walker_random();
	std::printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
