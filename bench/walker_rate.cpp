// How fast the visibility-map walker behind vacskip.simulate() goes, on
// synthetic maps of a 1 TiB table (134,217,728 heap pages, a 32 MiB map),
// for the six default thresholds.  Built and run by bench/simulate_rate.py:
//   g++ -O2 -std=c++17 bench/walker_rate.cpp src/core/vmscan.cpp
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "../src/core/vmscan.hpp"

namespace {

constexpr std::uint64_t kPages = 134217728;   // 1 TiB of 8 kB pages
constexpr std::size_t kMapPageBytes = 8168;   // map bytes per 8 kB map page

double walk_seconds(const std::vector<std::uint8_t> &map, std::uint64_t *scanned)
{
	vacskip::SimResult res[6];
	const std::uint32_t ts[6] = {1, 2, 4, 8, 16, 32};
	for (int i = 0; i < 6; ++i)
		res[i].threshold = ts[i];
	const auto t0 = std::chrono::steady_clock::now();
	vacskip::VmWalker w(kPages, false, res, 6);
	for (std::size_t off = 0; off < map.size(); off += kMapPageBytes)
		w.feed(map.data() + off, std::min(kMapPageBytes, map.size() - off));
	w.finish();
	const auto t1 = std::chrono::steady_clock::now();
	*scanned = res[0].pages_scanned;
	return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace

int main()
{
	std::mt19937_64 rng(42);
	struct Shape {
		const char *name;
		double dirty;   // fraction of pages not all-visible
	} shapes[] = {{"all frozen", 0.0}, {"1 in 10000 pages modified", 1e-4},
				  {"1 in 100 pages modified", 1e-2}, {"half the pages modified", 0.5}};
	std::printf("shape,heap_pages,runs,median_s,pages_per_s,scanned_at_1\n");
	for (const Shape &s : shapes) {
		std::vector<std::uint8_t> map(kPages / 4, 0xFF);
		std::bernoulli_distribution dirty(s.dirty);
		if (s.dirty > 0)
			for (std::uint64_t b = 0; b < kPages; ++b)
				if (dirty(rng))
					map[b / 4] &= static_cast<std::uint8_t>(~(3u << (2 * (b % 4))));
		std::vector<double> times;
		std::uint64_t scanned = 0;
		for (int run = 0; run < 7; ++run)
			times.push_back(walk_seconds(map, &scanned));
		std::sort(times.begin(), times.end());
		const double med = times[times.size() / 2];
		std::printf("%s,%llu,%zu,%.4f,%.3g,%llu\n", s.name,
					static_cast<unsigned long long>(kPages), times.size(), med, kPages / med,
					static_cast<unsigned long long>(scanned));
	}
	return 0;
}
