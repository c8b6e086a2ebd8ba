// The threshold setting: from vacskip.threshold to fixed skip thresholds.
// Pure C++17, no PostgreSQL headers.
#pragma once
#include "cpp_only.hpp"

#include <cstdint>

namespace vacskip {

// Minimum lengths of runs of skippable pages that VACUUM skips.
struct Thresholds {
	std::uint32_t all_frozen;   // runs of all-frozen pages only
	std::uint32_t all_visible;  // runs with an all-visible, not frozen page
};

// vacskip.threshold: -1 autotunes, 1..1000000 is a fixed threshold.
constexpr int kThresholdAutotune = -1;
constexpr int kThresholdMin = 1;
constexpr int kThresholdMax = 1000000;

// SKIP_PAGES_THRESHOLD of stock PostgreSQL (15 to 18 and master).
constexpr std::uint32_t kStockThreshold = 32;

// Whether a value is acceptable for vacskip.threshold.
constexpr bool threshold_setting_valid(int setting) {
	return setting == kThresholdAutotune ||
		   (setting >= kThresholdMin && setting <= kThresholdMax);
}

// The thresholds for a fixed setting (1..1000000); throws
// std::invalid_argument otherwise (autotuning is decide() in model.hpp).
Thresholds choose_thresholds(int setting);

}  // namespace vacskip
