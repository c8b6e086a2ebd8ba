#include "policy.hpp"

#include <stdexcept>
#include <string>

namespace vacskip {

Thresholds choose_thresholds(int setting) {
    if (!threshold_setting_valid(setting))
        throw std::invalid_argument("invalid vacskip.threshold setting " +
                                    std::to_string(setting));
    if (setting == kThresholdAutotune)
        return {kStockThreshold, kStockThreshold};
    const auto t = static_cast<std::uint32_t>(setting);
    return {t, t};
}

}  // namespace vacskip
