// Unit tests of src/core/policy (pure C++17, no PostgreSQL).  Built and run
// by t/test_unit.py with sanitizers; prints "N passed, N failed".
#include <cstdio>
#include <stdexcept>

#include "../../src/core/policy.hpp"

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

}  // namespace

int main()
{
    using namespace vacskip;

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
    const Thresholds autotuned = choose_thresholds(kThresholdAutotune);
    check(autotuned.all_frozen == kStockThreshold && autotuned.all_visible == kStockThreshold,
          "autotune keeps the stock threshold for now");

    check(throws_invalid_argument([] { choose_thresholds(0); }), "0 throws");
    check(throws_invalid_argument([] { choose_thresholds(-7); }), "-7 throws");

    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
