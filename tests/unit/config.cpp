#include "ai_hwaccel/config.hpp"

#include <doctest/doctest.h>

#include <string>
#include <typeinfo>

namespace ah = ai_hwaccel;

TEST_CASE("version") {
    CHECK(ah::version.major == AI_HWACCEL_VERSION_MAJOR);
    CHECK(std::string(ah::version.text) == std::to_string(ah::version.major) + "." +
                                               std::to_string(ah::version.minor) + "." +
                                               std::to_string(ah::version.patch));
}

TEST_CASE("compiled_backend_mask") {
    // The test suite builds with the default configuration: all seventeen backends.
    CHECK(ah::compiled_backend_mask == (1u << 17) - 1);
}

TEST_CASE("AI_HWACCEL_ABI_NAMESPACE") {
    // The inline namespace carries the version and one digit per backend switch.
    const std::string mangled = typeid(ah::version_info).name();
    CHECK(mangled.find("v0_1_0_b11111111111111111") != std::string::npos);
}

TEST_CASE("AI_HWACCEL_OS") {
    CHECK(AI_HWACCEL_OS_LINUX + AI_HWACCEL_OS_MACOS + AI_HWACCEL_OS_WINDOWS <= 1);
#if defined(__linux__)
    CHECK(AI_HWACCEL_OS_LINUX == 1);
#endif
}
