// What VACUUM reads, computed from a visibility map: the skip rule of
// heap_vac_scan_next_block() (18, and the 15 series) replayed over the map's
// bits for any number of thresholds in one pass.  Pure C++17, no PostgreSQL
// headers; no allocation, so the PostgreSQL layer may keep a walker across
// calls that can raise an ERROR.
#pragma once
#include "cpp_only.hpp"

#include <cstddef>
#include <cstdint>

namespace vacskip {

// Two bits per heap block, four blocks per byte, lowest bits first (the
// visibility map's on-disk layout).
constexpr unsigned kMapAllVisible = 0x01;
constexpr unsigned kMapAllFrozen = 0x02;
constexpr unsigned kBlocksPerMapByte = 4;

// Results for one threshold (the same for all-frozen and all-visible runs,
// as vacskip.threshold = N sets them).  Filled by VmWalker.
struct SimResult {
	std::uint32_t threshold = 0;          // input; 0 behaves as 1, like the core
	std::uint64_t pages_scanned = 0;      // what VACUUM VERBOSE calls "scanned"
	std::uint64_t pages_read_through = 0; // skippable pages read: run too short
	std::uint64_t io_runs = 0;            // maximal runs of consecutive scanned pages
	bool skipped_all_visible = false;     // skipped a run with an unfrozen page
	// walker state
	std::uint64_t skipped_runs = 0;
	bool first_run_skipped = false;       // the run starting at block 0
};

class VmWalker {
public:
	// `results[0..n)` hold the thresholds to simulate; their counters must
	// be zero.  `aggressive`: all-visible, unfrozen pages must be read.
	VmWalker(std::uint64_t rel_pages, bool aggressive, SimResult *results, std::size_t n);

	// The next `len` bytes of the map, in order from heap block 0.  Bytes
	// for blocks at or beyond rel_pages are ignored.
	void feed(const std::uint8_t *map, std::size_t len);

	// Heap blocks the map did not cover count as not all-visible (a missing
	// map page reads as zeros).  Call once, after the last feed().
	void finish();

	std::uint64_t blocks_seen() const { return next_block_; }

private:
	void block(unsigned bits);
	void word(std::uint64_t w);
	void end_run();

	std::uint64_t rel_pages_;
	bool aggressive_;
	SimResult *results_;
	std::size_t n_;
	std::uint64_t next_block_ = 0;   // heap block the next map bits describe
	std::uint64_t run_length_ = 0;   // skippable blocks since the last unskippable
	bool run_all_visible_ = false;   // ... of which one is all-visible, unfrozen
	bool seen_unskippable_ = false;  // past the first run
	std::uint64_t unskippable_ = 0;  // unskippable blocks: read at any threshold
};

}  // namespace vacskip
