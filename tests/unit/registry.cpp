#include "ai_hwaccel/registry.hpp"
#include "ai_hwaccel/core/catalogue.hpp"

#include <doctest/doctest.h>

#include <range/v3/range/conversion.hpp>

#include <vector>

namespace ah = ai_hwaccel;
using namespace ah::literals;

namespace {
ah::accelerator_profile spec(const char* name, std::uint32_t index = 0) {
    return ah::profile_from_spec(*ah::find_device(name), index);
}
ah::accelerator_profile cpu(std::uint64_t mem) {
    ah::accelerator_profile p;
    p.name = "Test CPU";
    p.memory_bytes = {mem, ah::origin::sysfs};
    p.unified_memory = true;
    return p;
}
/// A laptop GPU with 2 GiB of fast-ish memory.
ah::accelerator_profile small_gpu() {
    ah::accelerator_profile p;
    p.kind = ah::device_kind::cuda_gpu;
    p.name = "Laptop GPU";
    p.memory_bytes = {2_GiB, ah::origin::tool};
    p.memory_bandwidth_gbps = {112, ah::origin::estimated};
    return p;
}
} // namespace

TEST_CASE("accelerator_registry::available") {
    auto gone = spec("RTX 4090", 1);
    gone.available = false;
    const ah::accelerator_registry r({cpu(64_GiB), spec("RTX 4090", 0), gone});
    CHECK(r.size() == 3);
    CHECK(ranges::distance(r.available()) == 2);
    CHECK(ranges::distance(r.accelerators()) == 1);
    CHECK(ranges::distance(r.by_family(ah::family::gpu)) == 1);
    CHECK(ranges::distance(r.by_family(ah::family::cpu)) == 1);
    CHECK(ranges::distance(r.by_kind(ah::device_kind::rocm_gpu)) == 0);
    const auto gpus = r.by_family(ah::family::gpu) | ranges::to<std::vector>();
    REQUIRE(gpus.size() == 1);
    CHECK(gpus[0].index == 0);
}

TEST_CASE("accelerator_registry::best_available") {
    // Ranked by what a device can do, not by its type: an MI300X beats a small CUDA GPU.
    const ah::accelerator_registry r({cpu(512_GiB), small_gpu(), spec("MI300X")});
    CHECK(r.best_available()->kind == ah::device_kind::rocm_gpu);
    // The CPU only when there is no accelerator.
    const ah::accelerator_registry only_cpu({cpu(16_GiB)});
    CHECK(only_cpu.best_available()->is_cpu());
    CHECK_FALSE(ah::accelerator_registry{}.best_available().has_value());
    // Bigger and faster wins among GPUs; a software renderer never does.
    auto llvmpipe = small_gpu();
    llvmpipe.kind = ah::device_kind::vulkan_gpu;
    llvmpipe.software = true;
    llvmpipe.memory_bytes = {512_GiB, ah::origin::tool};
    const ah::accelerator_registry mixed({llvmpipe, spec("RTX 4090"), spec("H100 SXM"), small_gpu()});
    CHECK(mixed.best_available()->name.view() == ah::find_device("H100 SXM")->name);
}

TEST_CASE("accelerator_registry::total_memory") {
    const ah::accelerator_registry r({cpu(64_GiB), spec("RTX 4090", 0), spec("RTX 4090", 1)});
    CHECK(r.total_memory() == 64_GiB + 48_GiB);
    CHECK(r.total_accelerator_memory() == 48_GiB);
    // Apple Silicon: CPU, Metal GPU and Neural Engine share one pool, counted once.
    auto metal = spec("Apple M2 Max 38-core");
    metal.memory_bytes = {64_GiB, ah::origin::tool};
    ah::accelerator_profile ane;
    ane.kind = ah::device_kind::apple_neural_engine;
    ane.unified_memory = true;
    ane.memory_bytes = {64_GiB, ah::origin::tool};
    const ah::accelerator_registry mac({cpu(64_GiB), metal, ane});
    CHECK(metal.unified_memory);
    CHECK(mac.total_memory() == 64_GiB);
    CHECK(mac.total_accelerator_memory() == 64_GiB);
    CHECK(ah::accelerator_registry{}.total_memory() == 0);
}

TEST_CASE("accelerator_registry::has_accelerator") {
    CHECK_FALSE(ah::accelerator_registry({cpu(8_GiB)}).has_accelerator());
    CHECK(ah::accelerator_registry({cpu(8_GiB), spec("TPU v5e")}).has_accelerator());
    auto off = spec("TPU v5e");
    off.available = false;
    CHECK_FALSE(ah::accelerator_registry({cpu(8_GiB), off}).has_accelerator());
}

TEST_CASE("accelerator_registry::satisfying") {
    const ah::accelerator_registry r({cpu(64_GiB), spec("H100 SXM"), spec("A100 SXM4 80GB"), spec("RTX 4090")});
    CHECK(r.count(ah::requirement::gpu()) == 3);
    CHECK(r.count(ah::requirement::gpu().with_memory(40_GiB)) == 2);
    CHECK(r.count(ah::requirement::gpu().with_native(ah::dtype::fp8)) == 2); // H100, RTX 4090
    CHECK(r.count(ah::requirement::tpu()) == 0);
    CHECK(r.count(ah::requirement::none()) == 4);
}

TEST_CASE("accelerator_registry::what_if_add") {
    const ah::accelerator_registry base({cpu(64_GiB)}, {ah::warning{ah::warning_kind::tool_not_found,
                                                                   ah::backend_id::cuda, "nvidia-smi", "", 0}});
    const std::vector extra{spec("H100 SXM", 0), spec("H100 SXM", 1)};
    const std::vector links{ah::interconnect{ah::interconnect_kind::nvlink, ah::link_scope::intra_node,
                                             "NVLink", "", {900, ah::origin::user}, {0, 1}}};
    const auto more = base.what_if_add(extra, links);
    CHECK(more.size() == 3);
    CHECK(more.total_accelerator_memory() == 160_GiB);
    CHECK(more.system().interconnects.size() == 1);
    CHECK(more.warnings().size() == 1); // the real machine's warnings still apply
    CHECK(base.size() == 1);            // the original is untouched
    const auto no_links = base.what_if_add(extra);
    CHECK(no_links.system().interconnects.empty()); // no invented NVLink
}

TEST_CASE("accelerator_registry::what_if_remove") {
    const ah::accelerator_registry r({cpu(64_GiB), spec("RTX 4090", 0), spec("H100 SXM", 1)});
    const auto fewer = r.what_if_remove([](const ah::accelerator_profile& p) { return p.index == 1 && !p.is_cpu(); });
    CHECK(fewer.size() == 2);
    CHECK(fewer.best_available()->name.view() == ah::find_device("RTX 4090")->name);
    const auto none = r.what_if_remove([](const ah::accelerator_profile&) { return true; });
    CHECK(none.empty()); // nothing is re-detected behind the caller's back
}

TEST_CASE("accelerator_registry::what_if_replace") {
    ah::accelerator_registry r({cpu(64_GiB)});
    r.system().environment.cloud = ah::cloud_provider::aws;
    const auto swapped = r.what_if_replace({spec("Trainium2", 0)});
    CHECK(swapped.size() == 1);
    CHECK(swapped.system().environment.cloud == ah::cloud_provider::aws);
}

TEST_CASE("accelerator_registry::find_uuid") {
    auto a = spec("RTX 4090", 0);
    a.uuid = "GPU-12345678-aaaa-bbbb-cccc-1234567890ab";
    a.pci = ah::parse_pci_address("0000:65:00.0");
    const ah::accelerator_registry r({cpu(64_GiB), a});
    CHECK(r.find_uuid("GPU-12345678-aaaa-bbbb-cccc-1234567890ab")->index == 0);
    CHECK_FALSE(r.find_uuid("GPU-nope").has_value());
    CHECK_FALSE(r.find_uuid("").has_value()); // the CPU's empty UUID is not a match
    CHECK(r.find_pci(*ah::parse_pci_address("00000000:65:00.0"))->uuid == a.uuid);
}

TEST_CASE("capability_score") {
    CHECK(ah::capability_score(spec("MI300X")) > ah::capability_score(spec("H100 SXM")));
    CHECK(ah::capability_score(spec("H100 SXM")) > ah::capability_score(spec("RTX 4090")));
    CHECK(ah::capability_score(spec("RTX 4090")) > ah::capability_score(small_gpu()));
    CHECK(ah::capability_score(ah::accelerator_profile{}) == 0);
    static_assert(ah::capability_score(ah::profile_from_spec(*ah::find_device("H100 SXM"))) > 0);
}

TEST_CASE("accelerator_registry equality") {
    const ah::accelerator_registry a({cpu(64_GiB), spec("RTX 4090")});
    auto b = a;
    CHECK(a == b);
    b.add(spec("RTX 4090", 1));
    CHECK_FALSE(a == b);
    CHECK(ah::accelerator_registry::schema_version >= 1);
}
