// The C header compiled as C++: its declarations get C linkage and no warnings.
#include "ai_hwaccel.h"

#include <type_traits>

static_assert(std::is_standard_layout_v<ahw_device_info> && std::is_trivially_copyable_v<ahw_device_info>);
static_assert(std::is_standard_layout_v<ahw_estimate_result>);
static_assert(noexcept(ahw_version()) && noexcept(ahw_detect()) && noexcept(ahw_estimate(nullptr, nullptr, nullptr, 0, 0, nullptr)),
              "every function of the C ABI is noexcept for C++ callers");

// Taking the address checks the declarations are functions with the documented types.
[[maybe_unused]] static ahw_status (*const estimate)(const char*, const char*, const char*, uint32_t, uint32_t,
                                                     ahw_estimate_result*) = &ahw_estimate;
[[maybe_unused]] static ahw_registry* (*const detect)(void) = &ahw_detect;
static_assert(std::is_standard_layout_v<ahw_bandwidth_result> && std::is_trivially_copyable_v<ahw_bandwidth_result>);
static_assert(noexcept(ahw_measure_memory_bandwidth(0, 0, 0, nullptr)) && noexcept(ahw_detect_measured(nullptr)) &&
              noexcept(ahw_estimate_at_bandwidth(nullptr, nullptr, nullptr, 0, 0, 0, nullptr)));
[[maybe_unused]] static ahw_status (*const estimate_at_bandwidth)(const char*, const char*, const char*, uint32_t,
                                                                  uint32_t, double, ahw_estimate_result*) =
    &ahw_estimate_at_bandwidth;
[[maybe_unused]] static ahw_status (*const measure)(uint64_t, uint32_t, uint32_t, ahw_bandwidth_result*) =
    &ahw_measure_memory_bandwidth;
[[maybe_unused]] static ahw_status (*const detect_measured)(ahw_registry**) = &ahw_detect_measured;
static_assert(noexcept(ahw_has_accelerator(nullptr)) && noexcept(ahw_accelerator_memory(nullptr)) &&
              noexcept(ahw_total_memory(nullptr)) && noexcept(ahw_best_device(nullptr, nullptr)));
[[maybe_unused]] static ahw_status (*const best_device)(const ahw_registry*, size_t*) = &ahw_best_device;
[[maybe_unused]] static uint64_t (*const accelerator_memory)(const ahw_registry*) = &ahw_accelerator_memory;
static_assert(std::is_standard_layout_v<ahw_plan_result> && std::is_trivially_copyable_v<ahw_plan_result>);
static_assert(noexcept(ahw_plan(nullptr, nullptr, nullptr, 0, 0, 0, nullptr)));
[[maybe_unused]] static ahw_status (*const plan)(const ahw_registry*, const char*, const char*, uint32_t, uint32_t, int,
                                                 ahw_plan_result*) = &ahw_plan;
static_assert(std::is_standard_layout_v<ahw_cluster_result> && std::is_trivially_copyable_v<ahw_cluster_result>);
static_assert(noexcept(ahw_plan_cluster(nullptr, 0, 0, nullptr, nullptr, 0, 0, 0, nullptr, nullptr)));
[[maybe_unused]] static ahw_status (*const plan_cluster)(const ahw_registry* const*, size_t, double, const char*,
                                                         const char*, uint32_t, uint32_t, int, ahw_plan_result*,
                                                         ahw_cluster_result*) = &ahw_plan_cluster;
static_assert(noexcept(ahw_catalogue_registry(nullptr, 0, 0, nullptr)));
[[maybe_unused]] static ahw_status (*const catalogue_registry)(const char*, uint32_t, uint64_t, ahw_registry**) =
    &ahw_catalogue_registry;
