#include "policy.hpp"

#include <stdexcept>
#include <string>

namespace vacskip {

Thresholds choose_thresholds(int setting) {
	if (setting < kThresholdMin || setting > kThresholdMax)
		throw std::invalid_argument("invalid fixed vacskip.threshold " +
									std::to_string(setting));
	const auto t = static_cast<std::uint32_t>(setting);
	return {t, t};
}

}  // namespace vacskip
