#include "ai_hwaccel/core/warning.hpp"

#include <doctest/doctest.h>

namespace ah = ai_hwaccel;

TEST_CASE("warning") {
    const ah::warning w{ah::warning_kind::tool_timed_out, ah::backend_id::cuda, "nvidia-smi",
                        "killed after 5 s", 0};
    CHECK(ah::to_string(w) == "cuda: nvidia-smi: tool_timed_out: killed after 5 s");
    const ah::warning host{ah::warning_kind::parse_error, std::nullopt, "/proc/meminfo", "", 0};
    CHECK(ah::to_string(host) == "/proc/meminfo: parse_error");
}

TEST_CASE("warning_kind") {
    for (const auto& k : ah::warning_kind_table) CHECK(ah::parse_warning_kind(k.name) == k.id);
    CHECK_FALSE(ah::parse_warning_kind("oops").has_value());
}
