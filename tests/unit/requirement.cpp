#include "ai_hwaccel/core/requirement.hpp"
#include "ai_hwaccel/core/catalogue.hpp"

#include <doctest/doctest.h>

namespace ah = ai_hwaccel;
using namespace ah::literals;

namespace {
ah::accelerator_profile spec(const char* name) { return ah::profile_from_spec(*ah::find_device(name)); }
ah::accelerator_profile cpu() {
    ah::accelerator_profile p;
    p.memory_bytes = {64_GiB, ah::origin::sysfs};
    return p;
}
} // namespace

TEST_CASE("requirement::satisfied_by") {
    const auto h100 = spec("H100 SXM");
    const auto mi300x = spec("MI300X");
    const auto v5p = spec("TPU v5p");
    CHECK(ah::requirement::none().satisfied_by(cpu()));
    CHECK_FALSE(ah::requirement::any_accelerator().satisfied_by(cpu()));
    CHECK(ah::requirement::any_accelerator().satisfied_by(h100));
    CHECK(ah::requirement::gpu().satisfied_by(mi300x));
    CHECK_FALSE(ah::requirement::gpu().satisfied_by(v5p));
    CHECK(ah::requirement::gpu_or_tpu().satisfied_by(v5p));
    CHECK(ah::requirement::tpu().satisfied_by(v5p));
    CHECK_FALSE(ah::requirement::tpu(4).satisfied_by(v5p)); // chip count unknown: not 4
    CHECK(ah::requirement::gaudi().satisfied_by(spec("Gaudi 3 HL-325L")));
    CHECK_FALSE(ah::requirement::gaudi().satisfied_by(h100));
    CHECK(ah::requirement::aws_neuron().satisfied_by(spec("Trainium2")));
    CHECK_FALSE(ah::requirement::aws_neuron().satisfied_by(h100));
}

TEST_CASE("requirement refinements") {
    const auto h100 = spec("H100 SXM");
    const auto rtx4090 = spec("RTX 4090");
    const auto a100 = spec("A100 SXM4 80GB");
    const auto r = ah::requirement::gpu().with_memory(40_GiB).with_native(ah::dtype::fp8);
    CHECK(r.satisfied_by(h100));
    CHECK_FALSE(r.satisfied_by(rtx4090)); // 24 GiB
    CHECK_FALSE(r.satisfied_by(a100));    // no fp8
    CHECK(ah::requirement::gpu().with_vendor(ah::vendor::amd).satisfied_by(spec("MI300X")));
    CHECK_FALSE(ah::requirement::gpu().with_vendor(ah::vendor::amd).satisfied_by(h100));
    CHECK(ah::requirement::gpu().with_bandwidth(3000).satisfied_by(h100));
    CHECK_FALSE(ah::requirement::gpu().with_bandwidth(3000).satisfied_by(rtx4090));
    CHECK_FALSE(ah::requirement::any_accelerator().for_training().satisfied_by(spec("Inferentia2")));
    auto gone = h100;
    gone.available = false;
    CHECK_FALSE(ah::requirement::none().satisfied_by(gone));
    // A device whose memory nobody knows does not have "at least 1 byte".
    ah::accelerator_profile unknown;
    unknown.kind = ah::device_kind::intel_npu;
    CHECK_FALSE(ah::requirement::any_accelerator().with_memory(1).satisfied_by(unknown));
    CHECK(ah::requirement::any_accelerator().satisfied_by(unknown));
}
