#include "ai_hwaccel/core/taxonomy.hpp"

#include <doctest/doctest.h>

namespace ah = ai_hwaccel;

TEST_CASE("device_kind") {
    // A superset of the reference peer's eighteen kinds.
    static_assert(ah::device_kind_count >= 18);
    CHECK(ah::family_of(ah::device_kind::cuda_gpu) == ah::family::gpu);
    CHECK(ah::family_of(ah::device_kind::intel_gpu) == ah::family::gpu); // not an ASIC
    CHECK(ah::family_of(ah::device_kind::apple_neural_engine) == ah::family::npu);
    CHECK(ah::family_of(ah::device_kind::gaudi) == ah::family::ai_asic);
    CHECK(ah::parse_device_kind("CUDA GPU") == ah::device_kind::cuda_gpu); // parsing is loose
    CHECK(ah::parse_device_kind("cuda_gpu") == ah::device_kind::cuda_gpu);
    for (const auto& k : ah::device_kind_table) CHECK(ah::parse_device_kind(k.name) == k.id);
}

TEST_CASE("family") {
    CHECK(ah::parse_family("AI ASIC") == ah::family::ai_asic);
    CHECK(ah::parse_family("asic") == ah::family::ai_asic);
    CHECK(ah::parse_family("gpu") == ah::family::gpu);
    CHECK_FALSE(ah::parse_family("fpga").has_value());
}

TEST_CASE("vendor_from_id") {
    CHECK(ah::vendor_from_id(0x10de) == ah::vendor::nvidia);
    CHECK(ah::vendor_from_id(0x1002) == ah::vendor::amd);
    CHECK(ah::vendor_from_id(0x1022) == ah::vendor::amd);
    CHECK(ah::vendor_from_id(0x1da3) == ah::vendor::habana);
    CHECK(ah::vendor_from_id(0x1ae0) == ah::vendor::google);
    CHECK(ah::vendor_from_id(0x10005) == ah::vendor::mesa);
    CHECK(ah::vendor_from_id(0xdead) == ah::vendor::unknown);
    CHECK(ah::vendor_from_id(0) == ah::vendor::unknown);
}

TEST_CASE("interconnect_kind") {
    CHECK(ah::info(ah::interconnect_kind::nvlink).scope == ah::link_scope::intra_node);
    CHECK(ah::info(ah::interconnect_kind::infiniband).scope == ah::link_scope::inter_node);
    CHECK(ah::parse_interconnect_kind("RoCE v2") == ah::interconnect_kind::roce_v2);
}

TEST_CASE("dtype") {
    CHECK(ah::info(ah::dtype::fp4).bits == 4);
    CHECK(ah::parse_dtype("BF16") == ah::dtype::bf16);
}

// family_of reads a column copied from device_kind_table at compile time.
static_assert([] {
    for (const auto& row : ah::device_kind_table)
        if (ah::family_of(row.id) != row.fam) return false;
    return true;
}());
