// Unit tests of src/core (pure C++17, no PostgreSQL): the setting, the cost
// model and autotuner, and the visibility-map walker.  Built and run by
// t/test_unit.py with AddressSanitizer and UBSan; prints "N passed, N failed".
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

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
	check(throws_invalid_argument([] { decide(-7, StorageInputs{}, FreezeInputs{}); }),
		  "decide(-7) throws");
}

std::uint32_t auto_threshold(const StorageInputs &in)
{
	return decide(kThresholdAutotune, in, FreezeInputs{}).thresholds.all_frozen;
}

void test_model_defaults()
{
	for (int major : {15, 16, 17, 18, 19}) {
		const Decision d = decide(kThresholdAutotune, default_storage(major), FreezeInputs{});
		check(d.thresholds.all_frozen == 32 && d.thresholds.all_visible == 32,
			  "default settings of every major give stock's 32/32");
		check(d.autotuned && !d.read_through, "defaults: autotuned, no read-through");
	}
	// Even when relfrozenxid is old: at the stock threshold nothing changes.
	FreezeInputs old;
	old.relfrozenxid_age = 140000000;
	const Decision d = decide(kThresholdAutotune, default_storage(18), old);
	check(d.thresholds.all_visible == 32 && !d.read_through,
		  "defaults with an old relfrozenxid stay stock");
}

void test_model_fast_storage()
{
	// The part no setting describes: splitting a read merged from k pages,
	// k*8/(k+8): 16 pages on 18 (io_combine_limit), 4 before (the kernel's
	// first readahead window of a new stream).
	const double split18 = 16.0 * 8 / (16 + 8);
	const double split15 = 4.0 * 8 / (4 + 8);
	// The random part at random_page_cost 1.1: the excess 0.1 taken
	// literally, plus the rest of stock's 32 (less the split and the
	// default's excess 3) times the tenth power of (0.1 / 3).
	const double share = std::pow(0.1 / 3, 10);
	// This machine described as flash: random_page_cost 1.1.
	for (int major : {15, 18}) {
		const double split = major >= 18 ? split18 : split15;
		StorageInputs in = default_storage(major);
		in.random_page_cost = 1.1;
		const CostModel m = cost_model(in);
		check(std::fabs(m.split_penalty - split) < 1e-9, "split penalty k*8/(k+8)");
		check(std::fabs(m.random_penalty - (0.1 + (32 - split - 3) * share)) < 1e-9,
			  "random penalty at 1.1");
		check(std::fabs(m.break_penalty - (split + 0.1 + (32 - split - 3) * share)) < 1e-9,
			  "penalty = split + random");
		check(m.request_pages == (major >= 18 ? 16 : 4), "reads merged up to 16 (18) or 4 pages");
		check(auto_threshold(in) == (major >= 18 ? 6u : 3u),
			  "random_page_cost 1.1 gives ceil(5.33 + 0.1) = 6 on 18, ceil(2.67 + 0.1) = 3 on 15");
		in.random_page_cost = 1.0;
		check(auto_threshold(in) == (major >= 18 ? 6u : 3u),
			  "random_page_cost = seq_page_cost: the split alone");
		in.random_page_cost = 0.5;
		check(auto_threshold(in) == (major >= 18 ? 6u : 3u),
			  "random cheaper than sequential: the split alone");
	}
	StorageInputs in = default_storage(18);
	in.random_page_cost = 2.5;
	check(auto_threshold(in) == 7, "18, 2.5: ceil(5.33 + 1.5 + 23.67 * 0.5^10 = 6.86) = 7");
	in.io_method = IoMethod::kSync;
	check(cost_model(in).concurrency == 1, "io_method sync: no asynchronous reads");
	check(auto_threshold(in) == 7, "concurrency does not change the threshold");
	in.io_method = IoMethod::kWorker;
	in.maintenance_io_concurrency = 0;
	check(cost_model(in).concurrency == 1, "maintenance_io_concurrency 0 counts as 1");
	StorageInputs s15 = default_storage(15);
	s15.maintenance_io_concurrency = 256;
	s15.random_page_cost = 2.9;
	check(cost_model(s15).concurrency == 1, "15 reads one block at a time");
	check(cost_model(s15).request_pages == 4, "15: the kernel's first readahead window, 4 pages");
	check(auto_threshold(s15) == 5,
		  "15, slow profile 2.9: ceil(2.67 + 1.9 + 26.33 * (1.9/3)^10 = 4.84) = 5");
	s15.random_page_cost = 3.4;
	check(auto_threshold(s15) == 8,
		  "15, slow profile 3.4: ceil(2.67 + 2.4 + 26.33 * 0.8^10 = 7.89) = 8");
	s15.random_page_cost = 3.5;
	check(auto_threshold(s15) == 10,
		  "15, slow profile 3.5: ceil(2.67 + 2.5 + 26.33 * (2.5/3)^10 = 9.42) = 10");
	s15.random_page_cost = 2.0;
	check(auto_threshold(s15) == 4, "15, 2.0: ceil(2.67 + 1 + 26.33 / 3^10 = 3.67) = 4");

	// Worked examples of docs/model.md on 18: io_combine_limit k (fewer pages
	// merged make a split cheaper), random_page_cost, expected threshold.
	struct Example {
		int k;
		double rpc;
		std::uint32_t want;
		const char *what;
	};
	const Example examples[] = {
		{1, 1.0, 1, "io_combine_limit 1: 8/9, threshold 1"},
		{32, 1.0, 7, "io_combine_limit 32: 32*8/40 = 6.4, threshold 7"},
		{8, 1.1, 5, "io_combine_limit 8, 1.1: 4 + 0.1 + 21 * (0.1/3)^10 = 4.1, 5"},
		{16, 1.5, 6, "1.5: ceil(5.33 + 0.5 + 23.67 * (0.5/3)^10 = 5.83) = 6"},
		{16, 2.0, 7, "2.0: ceil(5.33 + 1 + 23.67 / 3^10 = 6.33) = 7"},
		{16, 2.9, 8, "slow profile as revision 2's run measured it, 2.9: ceil(5.33 + 1.9 + 0.25 = 7.48) = 8"},
		{16, 3.0, 8, "3.0: ceil(5.33 + 2 + 0.41 = 7.74) = 8"},
		{16, 3.2, 9, "slow profile as first measured, 3.2: ceil(5.33 + 2.2 + 1.07 = 8.60) = 9"},
		{16, 3.4, 11, "slow profile as revision 4's run measured it, 3.4: ceil(5.33 + 2.4 + 2.54 = 10.27) = 11"},
		{16, 3.5, 12, "slow profile as revision 3's run measured it, 3.5: ceil(5.33 + 2.5 + 3.82 = 11.66) = 12"},
		{16, 3.8, 21, "3.8: ceil(5.33 + 2.8 + 11.87 = 20.0) = 21"},
		{1, 4.0, 32, "default page costs give 32 at io_combine_limit 1"},
		{2, 4.0, 32, "default page costs give 32 at io_combine_limit 2"},
		{8, 4.0, 32, "default page costs give 32 at io_combine_limit 8"},
		{32, 4.0, 32, "default page costs give 32 at io_combine_limit 32"},
		{64, 4.0, 32, "default page costs give 32 at io_combine_limit 64"},
	};
	StorageInputs comb = default_storage(18);
	comb.maintenance_io_concurrency = 1;   // the slow profile's; does not enter
	for (const Example &e : examples) {
		comb.io_combine_limit = e.k;
		comb.random_page_cost = e.rpc;
		check(auto_threshold(comb) == e.want, e.what);
	}
	comb.io_combine_limit = 0;
	check(cost_model(comb).request_pages == 4, "no io_combine_limit read: readahead's 4");

	StorageInputs zero = default_storage(18);
	zero.seq_page_cost = 0;
	check(std::isinf(cost_model(zero).break_penalty) && auto_threshold(zero) == 32,
		  "seq_page_cost 0: reading is free, never skip more than stock");
	StorageInputs slow = default_storage(18);
	slow.random_page_cost = 40;
	check(auto_threshold(slow) == 32, "slower than default is clamped to stock");
}

void test_model_monotonic()
{
	const double costs[] = {0.1, 0.5, 1.0, 1.01, 1.1, 1.25, 1.5, 2, 3, 4, 8, 40, 1000};
	const int concs[] = {0, 1, 2, 4, 8, 10, 16, 32, 64, 256, 1000};
	const IoMethod methods[] = {IoMethod::kSync, IoMethod::kWorker, IoMethod::kIoUring};
	bool rpc_ok = true, seq_ok = true;
	for (int major : {15, 18})
		for (IoMethod method : methods)
			for (int c : concs) {
				std::uint32_t prev = 0;
				for (double r : costs) {
					StorageInputs in = default_storage(major);
					in.io_method = major >= 18 ? method : IoMethod::kNone;
					in.maintenance_io_concurrency = c;
					in.effective_io_concurrency = c;
					in.random_page_cost = r;
					const std::uint32_t t = auto_threshold(in);
					rpc_ok &= t >= prev && t >= 1 && t <= 32;
					prev = t;
					// a dearer sequential read never raises it
					StorageInputs dearer = in;
					dearer.seq_page_cost = 2.0;
					seq_ok &= auto_threshold(dearer) <= t;
				}
			}
	check(rpc_ok, "higher random_page_cost never lowers the threshold");
	check(seq_ok, "higher seq_page_cost never raises the threshold");
}

void test_model_read_through()
{
	StorageInputs fast = default_storage(18);
	fast.random_page_cost = 1.1;
	FreezeInputs young;
	young.relfrozenxid_age = 1000;
	young.freeze_table_age = 100;
	young.relfrozenxid_age = 50;   // exactly half: not past it
	Decision d = decide(kThresholdAutotune, fast, young);
	check(!d.read_through && d.thresholds.all_visible == 6, "age at half: no read-through");
	FreezeInputs due = young;
	due.relfrozenxid_age = 51;
	d = decide(kThresholdAutotune, fast, due);
	check(d.read_through && d.thresholds.all_visible == kReadThrough &&
			  d.thresholds.all_frozen == 6,
		  "age past half: all-visible runs read, all-frozen runs keep 6");
	FreezeInputs mxid;
	mxid.relminmxid_age = 80;
	mxid.multixact_freeze_table_age = 150;
	check(decide(kThresholdAutotune, fast, mxid).read_through, "relminmxid age counts too");
	d = decide(1, fast, due);
	check(!d.read_through && d.thresholds.all_visible == 1, "a fixed threshold stays fixed");
}

void test_estimated_cost()
{
	StorageInputs in = default_storage(18);
	in.random_page_cost = 2.5;   // 16*8/24 + 1.5 + (32 - 3 - 16*8/24) * (1.5/3)^10 = 6.86
	const CostModel m = cost_model(in);
	const double penalty = 16.0 * 8 / 24 + 1.5 + (32 - 3 - 16.0 * 8 / 24) / 1024.0;
	check(std::fabs(m.break_penalty - penalty) < 1e-9, "penalty at 2.5");
	check(std::fabs(estimated_cost(m, 100, 3) - (100 + 3 * penalty)) < 1e-9,
		  "cost = pages + runs * penalty");
	check(estimated_cost(m, 0, 0) == 0.0, "nothing read costs nothing");
}

// ---------------------------------------------------------------- walker

// Map states of a block: 0 not visible, 1 all-visible, 3 all-visible+frozen.
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

}  // namespace

int main()
{
	test_setting();
	test_model_defaults();
	test_model_fast_storage();
	test_model_monotonic();
	test_model_read_through();
	test_estimated_cost();
	test_walker_edges();
	test_walker_random();
	std::printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
