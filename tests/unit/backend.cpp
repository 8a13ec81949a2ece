#include "ai_hwaccel/core/backend.hpp"

#include <doctest/doctest.h>

namespace ah = ai_hwaccel;

TEST_CASE("backend_table") {
    static_assert(ah::backend_count == 17);
    for (const auto& b : ah::backend_table) {
        CHECK(b.compiled); // the suite builds every backend
        CHECK(std::string_view(b.macro).starts_with("AI_HWACCEL_BACKEND_"));
        CHECK(ah::parse_backend(b.name) == b.id);
    }
    CHECK(ah::info(ah::backend_id::cuda).tools.contains("nvidia-smi"));
    CHECK(ah::info(ah::backend_id::rocm).tools.contains("rocminfo"));
    CHECK(ah::info(ah::backend_id::neuron).tools.contains("neuron-ls"));
}

TEST_CASE("backend_for") {
    CHECK(ah::backend_for(ah::device_kind::cuda_gpu) == ah::backend_id::cuda);
    CHECK(ah::backend_for(ah::device_kind::apple_neural_engine) == ah::backend_id::apple);
    CHECK(ah::backend_for(ah::device_kind::aws_trainium) == ah::backend_id::neuron);
    CHECK_FALSE(ah::backend_for(ah::device_kind::cpu).has_value());
}

TEST_CASE("is_compiled") {
    CHECK(ah::is_compiled(ah::backend_id::tpu));
    CHECK_FALSE(ah::parse_backend("opencl").has_value());
}

// The names a detection-only program carries are the table's own.
static_assert([] {
    for (std::size_t i = 0; i < ah::backend_count; ++i) {
        const auto& row = ah::backend_table[i];
        if (ah::detail::backend_names[i] != row.name || ah::detail::backend_displays[i] != row.display)
            return false;
        if (!ah::detail::is_backend_macro(row.macro, row.name)) return false;
        if (ah::to_string(row.id) != row.name) return false;
    }
    return true;
}());

static_assert(ah::detail::is_backend_macro("AI_HWACCEL_BACKEND_INTEL_GPU", "intel_gpu"));
static_assert(!ah::detail::is_backend_macro("AI_HWACCEL_BACKEND_INTEL", "intel_gpu"));
static_assert(!ah::detail::is_backend_macro("AI_HWACCEL_BACKEND_Cuda", "cuda"));
