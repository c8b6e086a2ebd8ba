#include "vmscan.hpp"

#include <cstring>

namespace vacskip {

namespace {

// The low bit of every 2-bit block entry in a 64-bit word of the map.
constexpr std::uint64_t kLowBits = 0x5555555555555555ull;

// Bits [from, to) of a word, to <= 64.
constexpr std::uint64_t bit_range(unsigned from, unsigned to) {
	const std::uint64_t upto = to >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << to) - 1;
	return upto & ~((std::uint64_t{1} << from) - 1);
}

}  // namespace

VmWalker::VmWalker(std::uint64_t rel_pages, bool aggressive, SimResult *results,
				   std::size_t n)
	: rel_pages_(rel_pages), aggressive_(aggressive), results_(results), n_(n) {}

// The run of skippable blocks before an unskippable block ends: each
// threshold skips it or reads it whole.  Unskippable blocks themselves are
// read at every threshold and only counted (unskippable_).
void VmWalker::end_run() {
	const std::uint64_t length = run_length_;
	if (length > 0) {
		// locals: the stores below could alias the members as far as the
		// compiler knows.  Branch-free: on a fragmented map, run lengths
		// are unpredictable.
		const bool all_visible = run_all_visible_;
		const bool first = !seen_unskippable_;
		SimResult *const end = results_ + n_;
		for (SimResult *r = results_; r != end; ++r) {
			const bool skip = length >= r->threshold;   // 0 behaves as 1
			r->skipped_runs += skip;
			r->pages_read_through += skip ? 0 : length;
			r->skipped_all_visible |= skip & all_visible;
			r->first_run_skipped |= skip & first;
		}
	}
	run_length_ = 0;
	run_all_visible_ = false;
	seen_unskippable_ = true;
}

void VmWalker::block(unsigned bits) {
	// The last block is always read (VACUUM must see whether it has tuples).
	const bool skippable = (bits & kMapAllVisible) && next_block_ != rel_pages_ - 1 &&
						   (!aggressive_ || (bits & kMapAllFrozen));
	if (skippable) {
		++run_length_;
		if (!(bits & kMapAllFrozen))
			run_all_visible_ = true;
	} else {
		end_run();
		++unskippable_;
	}
	++next_block_;
}

// 32 blocks, none of them the last: a word of the map at a time, one step
// per stretch of skippable or unskippable blocks.
void VmWalker::word(std::uint64_t w) {
	next_block_ += 32;
	if (w == ~std::uint64_t{0}) {   // all frozen: the common case
		run_length_ += 32;
		return;
	}
	const std::uint64_t visible = w & kLowBits;
	const std::uint64_t frozen = (w >> 1) & kLowBits;
	const std::uint64_t unfrozen = visible & ~frozen;   // all-visible, not frozen
	const std::uint64_t skippable = aggressive_ ? visible & frozen : visible;
	const std::uint64_t unskippable = ~skippable & kLowBits;
	unsigned pos = 0;   // bit of the first block not yet accounted for
	while (pos < 64) {
		const std::uint64_t ahead = bit_range(pos, 64);
		if (skippable & (std::uint64_t{1} << pos)) {
			const std::uint64_t stop = unskippable & ahead;
			const unsigned end = stop ? static_cast<unsigned>(__builtin_ctzll(stop)) : 64;
			run_length_ += (end - pos) / 2;
			if (unfrozen & bit_range(pos, end))
				run_all_visible_ = true;
			pos = end;
		} else {
			const std::uint64_t stop = skippable & ahead;
			const unsigned end = stop ? static_cast<unsigned>(__builtin_ctzll(stop)) : 64;
			end_run();
			unskippable_ += (end - pos) / 2;
			pos = end;
		}
	}
}

void VmWalker::feed(const std::uint8_t *map, std::size_t len) {
	std::size_t i = 0;
	while (i < len && next_block_ < rel_pages_) {
		if (len - i >= 8 && next_block_ % 4 == 0 && next_block_ + 32 < rel_pages_) {
			std::uint64_t w;
			std::memcpy(&w, map + i, sizeof w);
			word(w);
			i += 8;
			continue;
		}
		const unsigned byte = map[i++];
		for (unsigned k = 0; k < kBlocksPerMapByte && next_block_ < rel_pages_; ++k)
			block((byte >> (2 * k)) & 3u);
	}
}

void VmWalker::finish() {
	if (next_block_ < rel_pages_) {
		// the map does not cover these blocks: none is all-visible
		end_run();
		unskippable_ += rel_pages_ - next_block_;
		next_block_ = rel_pages_;
	}
	for (std::size_t i = 0; i < n_; ++i) {
		SimResult &r = results_[i];
		r.pages_scanned = unskippable_ + r.pages_read_through;
		// a new run of read blocks starts after every skipped run, and at
		// block 0 unless that is where a skipped run starts
		r.io_runs = rel_pages_ == 0 ? 0 : 1 + r.skipped_runs - (r.first_run_skipped ? 1 : 0);
	}
}

}  // namespace vacskip
