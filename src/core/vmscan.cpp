#include "vmscan.hpp"

#include <cstring>

namespace vacskip {

namespace {

// Eight map bytes (32 heap blocks) at once.
constexpr std::uint64_t kAllFrozenWord = ~std::uint64_t{0};
constexpr std::uint64_t kVisibleBits = 0x5555555555555555ull;

}  // namespace

VmWalker::VmWalker(std::uint64_t rel_pages, bool aggressive, SimResult *results,
                   std::size_t n)
    : rel_pages_(rel_pages), aggressive_(aggressive), results_(results), n_(n) {}

// An unskippable block: the run of skippable blocks before it is skipped or
// read whole, then the block itself is read.
void VmWalker::unskippable() {
    for (std::size_t i = 0; i < n_; ++i) {
        SimResult &r = results_[i];
        if (run_length_ > 0) {
            const std::uint64_t threshold = r.threshold == 0 ? 1 : r.threshold;
            if (run_length_ >= threshold) {
                r.skipped_all_visible |= run_all_visible_;
                r.last_scanned = false;
            } else {
                r.pages_scanned += run_length_;
                r.pages_read_through += run_length_;
                if (!r.last_scanned)
                    ++r.io_runs;
                r.last_scanned = true;
            }
        }
        ++r.pages_scanned;
        if (!r.last_scanned)
            ++r.io_runs;
        r.last_scanned = true;
    }
    run_length_ = 0;
    run_all_visible_ = false;
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
        unskippable();
    }
    ++next_block_;
}

void VmWalker::feed(const std::uint8_t *map, std::size_t len) {
    std::size_t i = 0;
    while (i < len && next_block_ < rel_pages_) {
        // Fast path: 32 blocks, none of them the last, all visible; the
        // common case of a mostly frozen table.
        if (len - i >= 8 && next_block_ + 32 < rel_pages_) {
            std::uint64_t w;
            std::memcpy(&w, map + i, sizeof w);
            if (w == kAllFrozenWord) {
                run_length_ += 32;
                next_block_ += 32;
                i += 8;
                continue;
            }
            if (!aggressive_ && (w & kVisibleBits) == kVisibleBits) {
                run_length_ += 32;
                run_all_visible_ = true;   // not all frozen, all visible
                next_block_ += 32;
                i += 8;
                continue;
            }
        }
        const unsigned byte = map[i++];
        for (unsigned k = 0; k < kBlocksPerMapByte && next_block_ < rel_pages_; ++k)
            block((byte >> (2 * k)) & 3u);
    }
}

void VmWalker::finish() {
    if (next_block_ >= rel_pages_)
        return;
    // The first uncovered block ends any pending run; every block after it
    // extends the same run of scanned blocks.
    block(0);
    const std::uint64_t rest = rel_pages_ - next_block_;
    for (std::size_t i = 0; i < n_; ++i)
        results_[i].pages_scanned += rest;
    next_block_ = rel_pages_;
}

}  // namespace vacskip
