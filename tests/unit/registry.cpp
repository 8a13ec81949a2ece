#include "ai_hwaccel/registry.hpp"
#include "ai_hwaccel/core/catalogue.hpp"

#include <doctest/doctest.h>

#include <range/v3/range/conversion.hpp>

#include <cstddef>
#include <limits>
#include <map>
#include <thread>
#include <utility>
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

// Every query answered again the slow way, from all(), and compared with the registry's
// own answer: the registry answers from an index it keeps beside the profiles, and this
// catches an index that a mutation left stale. Views are compared by address, so a view
// that yields the right number of the wrong profiles fails too.
template <class Rng>
std::vector<const ah::accelerator_profile*> addresses(Rng&& rng) {
    std::vector<const ah::accelerator_profile*> out;
    for (const ah::accelerator_profile& p : rng) out.push_back(&p);
    return out;
}
template <class Pred>
std::vector<const ah::accelerator_profile*> addresses_where(const ah::accelerator_registry& r, Pred pred) {
    std::vector<const ah::accelerator_profile*> out;
    for (const ah::accelerator_profile& p : r.all())
        if (pred(p)) out.push_back(&p);
    return out;
}
std::uint64_t slow_total(const ah::accelerator_registry& r, bool accelerators_only) {
    // Discrete memory adds up; unified views: the largest on each known NUMA node add up
    // (past node 7, every view), against the largest of no known node (the CPU's among them).
    std::uint64_t discrete = 0, pool = 0, past = 0;
    std::map<std::int32_t, std::uint64_t> nodes;
    for (const ah::accelerator_profile& p : r.all()) {
        if (!p.available || (accelerators_only && !p.is_accelerator())) continue;
        const std::uint64_t bytes = p.memory_bytes.value_or(0);
        if (!p.unified_memory && !p.is_cpu()) discrete += bytes;
        else if (p.is_cpu() || !p.numa_node || *p.numa_node < 0) pool = std::max(pool, bytes);
        else if (*p.numa_node >= 8) past += bytes;
        else nodes[*p.numa_node] = std::max(nodes[*p.numa_node], bytes);
    }
    std::uint64_t on_nodes = past;
    for (const auto& n : nodes) on_nodes += n.second;
    return discrete + std::max(pool, on_nodes);
}
const ah::accelerator_profile* slow_best(const ah::accelerator_registry& r) {
    const ah::accelerator_profile* best = nullptr;
    for (const bool accelerators_only : {true, false}) {
        double score = -1;
        for (const ah::accelerator_profile& p : r.all()) {
            if (!p.available || (accelerators_only && !p.is_accelerator())) continue;
            if (ah::capability_score(p) > score) {
                best = &p;
                score = ah::capability_score(p);
            }
        }
        if (best) return best;
    }
    return nullptr;
}
void check_queries(const ah::accelerator_registry& r) {
    const auto available = addresses_where(r, [](const ah::accelerator_profile& p) { return p.available; });
    CHECK(addresses(r.available()) == available);
    CHECK(static_cast<std::size_t>(ranges::distance(r.available())) == available.size());
    const auto accelerators =
        addresses_where(r, [](const ah::accelerator_profile& p) { return p.is_accelerator(); });
    CHECK(addresses(r.accelerators()) == accelerators);
    CHECK(static_cast<std::size_t>(ranges::distance(r.accelerators())) == accelerators.size());
    CHECK(r.has_accelerator() == !accelerators.empty());
    for (const auto& f : ah::family_table) {
        CAPTURE(f.name);
        CHECK(addresses(r.by_family(f.id)) == addresses_where(r, [&](const ah::accelerator_profile& p) {
                  return p.available && p.device_family() == f.id;
              }));
    }
    for (const auto& k : ah::device_kind_table) {
        CAPTURE(k.name);
        CHECK(addresses(r.by_kind(k.id)) == addresses_where(r, [&](const ah::accelerator_profile& p) {
                  return p.available && p.kind == k.id;
              }));
    }
    CHECK(r.total_memory() == slow_total(r, false));
    CHECK(r.total_accelerator_memory() == slow_total(r, true));
    const auto* best = slow_best(r);
    REQUIRE(r.best_available().has_value() == (best != nullptr));
    if (best) CHECK(r.best_available()->name == best->name);
    if (best) CHECK(r.best_available()->index == best->index);
    // Its position: the very profile the slow walk found.
    REQUIRE(r.best_available_position().has_value() == (best != nullptr));
    if (best) CHECK(&r.all()[*r.best_available_position()] == best);
}

/// CPU, two GPUs of different strength, one unavailable GPU, a TPU, a software renderer.
std::vector<ah::accelerator_profile> mixed_profiles() {
    auto gone = spec("MI300X", 7);
    gone.available = false;
    auto llvmpipe = small_gpu();
    llvmpipe.kind = ah::device_kind::vulkan_gpu;
    llvmpipe.software = true;
    return {cpu(64_GiB), spec("RTX 4090", 0), gone, spec("H100 SXM", 1), spec("TPU v5e", 0), llvmpipe};
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
    CHECK(mixed.best_available_position() == 2u);
    CHECK(r.best_available_position() == 2u);
    CHECK(only_cpu.best_available_position() == 0u);
    CHECK_FALSE(ah::accelerator_registry{}.best_available_position().has_value());
}

TEST_CASE("accelerator_registry::total_memory") {
    const ah::accelerator_registry r({cpu(64_GiB), spec("RTX 4090", 0), spec("RTX 4090", 1)});
    constexpr std::uint64_t rtx4090 = 24564ull << 20; // what its driver reports of 24 GiB
    CHECK(r.total_memory() == 64_GiB + 2 * rtx4090);
    CHECK(r.total_accelerator_memory() == 2 * rtx4090);
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
    // Four MI300A APUs, each on the NUMA node of its socket, as amd-smi lists them on a
    // real node (fixture amd-smi/static_4x-mi300a_rocm6.2.txt: NODE 0 to 3, 64 289 MB
    // each): four pools, one each, not one (before, 64 GB for the node's four APUs). The
    // host's memory holds every node's: the larger of the two counts.
    std::vector<ah::accelerator_profile> apus;
    for (std::int32_t n = 0; n < 4; ++n) {
        auto a = spec("MI300A", static_cast<std::uint32_t>(n));
        a.memory_bytes = {64289ull << 20, ah::origin::tool};
        a.numa_node = {n, ah::origin::sysfs};
        apus.push_back(a);
    }
    REQUIRE(apus[0].unified_memory);
    const ah::accelerator_registry node(apus);
    CHECK(node.total_accelerator_memory() == 4 * (64289ull << 20));
    auto with_cpu = apus;
    with_cpu.push_back(cpu(500_GiB));
    CHECK(ah::accelerator_registry(with_cpu).total_memory() == 500_GiB);
    with_cpu.back() = cpu(200_GiB);
    CHECK(ah::accelerator_registry(with_cpu).total_memory() == 4 * (64289ull << 20));
    // Two views on one node (an iGPU and an NPU of a one-node desktop) are one pool.
    auto igpu = apus[0], npu = apus[1];
    npu.numa_node = igpu.numa_node;
    CHECK(ah::accelerator_registry({igpu, npu}).total_accelerator_memory() == (64289ull << 20));
    // Described (a what-if), each APU is a socket of its own, as they are built.
    const auto described = ah::described_registry(ah::profile_from_spec(*ah::find_device("MI300A")), 4);
    CHECK(described.total_accelerator_memory() == 4 * ah::reported_memory_bytes(*ah::find_device("MI300A")));
    CHECK(*described.all()[3].numa_node == 3);
    // Nodes past the eight the index keeps apart are still counted (each view).
    std::vector<ah::accelerator_profile> many;
    for (std::int32_t n = 0; n < 12; ++n) {
        auto a = apus[0];
        a.index = static_cast<std::uint32_t>(n);
        a.numa_node = {n, ah::origin::sysfs};
        many.push_back(a);
    }
    CHECK(ah::accelerator_registry(many).total_accelerator_memory() == 12 * (64289ull << 20));
    // Figures no machine has (a registry read from JSON may claim them) saturate, never wrap.
    auto huge = spec("H100 SXM", 0);
    huge.memory_bytes = {std::uint64_t{1} << 63, ah::origin::tool};
    auto huge2 = huge;
    huge2.index = 1;
    const ah::accelerator_registry big({cpu(64_GiB), huge, huge2});
    CHECK(big.total_accelerator_memory() == UINT64_MAX);
    CHECK(big.total_memory() == UINT64_MAX);
    huge.memory_bytes = {UINT64_MAX - 1, ah::origin::tool};
    CHECK(ah::accelerator_registry({cpu(64_GiB), huge}).total_memory() == UINT64_MAX);
    CHECK(ah::accelerator_registry({cpu(64_GiB), huge}).total_accelerator_memory() == UINT64_MAX - 1);
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
    CHECK(more.total_accelerator_memory() == 2 * (81559ull << 20)); // as nvidia-smi reports an H100
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
    // Unknown bandwidth ranks low, not last: far more memory outscores a known rate.
    auto unknown_rate = spec("H100 SXM");
    unknown_rate.memory_bandwidth_gbps.reset();
    auto tiny = small_gpu();
    tiny.memory_bytes = {1_GiB, ah::origin::user};
    tiny.memory_bandwidth_gbps = {50, ah::origin::user};
    CHECK(ah::capability_score(unknown_rate) > ah::capability_score(tiny));
    CHECK(ah::capability_score(unknown_rate) < ah::capability_score(spec("H100 SXM")));
    // Figures that are not numbers score 0 (a C++ caller can set them; JSON cannot), and
    // such a device is still the best of a registry that holds nothing else.
    auto nan_rate = spec("H100 SXM");
    nan_rate.memory_bandwidth_gbps = {std::numeric_limits<double>::quiet_NaN(), ah::origin::user};
    CHECK(ah::capability_score(nan_rate) == 0);
    auto nan_peak = spec("H100 SXM");
    nan_peak.peak.bf16 = nan_peak.peak.fp16 = std::numeric_limits<double>::quiet_NaN();
    CHECK(ah::capability_score(nan_peak) > 0);
    const ah::accelerator_registry only_nan({nan_rate});
    REQUIRE(only_nan.best_available().has_value());
    CHECK(only_nan.best_available()->name == nan_rate.name);
    const ah::accelerator_registry nan_first({nan_rate, spec("RTX 4090", 1)});
    CHECK(nan_first.best_available()->index == 1);
}

TEST_CASE("accelerator_registry equality") {
    const ah::accelerator_registry a({cpu(64_GiB), spec("RTX 4090")});
    auto b = a;
    CHECK(a == b);
    b.add(spec("RTX 4090", 1));
    CHECK_FALSE(a == b);
    CHECK(ah::accelerator_registry::schema_version >= 1);
}

TEST_CASE("accelerator_registry views are sized") {
    const ah::accelerator_registry r(mixed_profiles());
    CHECK(ranges::size(r.available()) == 5);
    CHECK(ranges::size(r.accelerators()) == 3);
    CHECK(ranges::size(r.by_family(ah::family::gpu)) == 3); // the software renderer is available
    CHECK(ranges::size(r.by_family(static_cast<ah::family>(200))) == 0);
    CHECK(ranges::distance(r.by_kind(static_cast<ah::device_kind>(200))) == 0);
}

// Each member that changes the profiles must leave every query agreeing with all().
TEST_CASE("accelerator_registry queries after each change") {
    SUBCASE("constructed, empty") {
        check_queries(ah::accelerator_registry{});
        check_queries(ah::accelerator_registry(mixed_profiles()));
    }
    SUBCASE("add") {
        ah::accelerator_registry r;
        for (auto& p : mixed_profiles()) {
            r.add(p);
            check_queries(r);
        }
        CHECK(r.best_available()->name.view() == ah::find_device("H100 SXM")->name);
        // More than any initial capacity, so the index grows while profiles are added.
        for (std::uint32_t i = 0; i < 40; ++i) r.add(spec(i % 3 == 0 ? "MI300X" : "RTX 4090", 10 + i));
        check_queries(r);
        CHECK(r.best_available()->name.view() == ah::find_device("MI300X")->name);
        CHECK(r.best_available()->index == 10); // the first of the equals
    }
    SUBCASE("add, no profile") {
        ah::accelerator_registry r(mixed_profiles());
        const auto total = r.total_memory();
        r.add(ah::warning{ah::warning_kind::tool_not_found, ah::backend_id::cuda, "nvidia-smi", "", 0});
        r.add(ah::interconnect{ah::interconnect_kind::nvlink, ah::link_scope::intra_node, "NVLink", "",
                               {900, ah::origin::user}, {0, 1}});
        r.host().numa.push_back(ah::numa_node{0, 1_GiB, "0-7"});
        check_queries(r);
        CHECK(r.total_memory() == total);
    }
    SUBCASE("add, unavailable") {
        ah::accelerator_registry r({cpu(16_GiB)});
        auto off = spec("H100 SXM");
        off.available = false;
        r.add(off);
        check_queries(r);
        CHECK_FALSE(r.has_accelerator());
        CHECK(r.best_available()->is_cpu());
    }
    SUBCASE("what_if_add") {
        const ah::accelerator_registry r(mixed_profiles());
        const std::vector extra{spec("MI300X", 2), spec("Apple M2 Max 38-core")};
        const auto more = r.what_if_add(extra);
        check_queries(more);
        check_queries(r);
        CHECK(more.best_available()->name.view() == ah::find_device("MI300X")->name);
        CHECK(r.best_available()->name.view() == ah::find_device("H100 SXM")->name);
    }
    SUBCASE("what_if_remove") {
        const ah::accelerator_registry r(mixed_profiles());
        // Removing profiles moves the ones behind them: positions must be recomputed.
        const auto fewer =
            r.what_if_remove([](const ah::accelerator_profile& p) { return p.is_cpu() || !p.available; });
        check_queries(fewer);
        CHECK(fewer.total_memory() == r.total_memory() - 64_GiB);
        const auto no_h100 = r.what_if_remove([](const ah::accelerator_profile& p) {
            return p.kind == ah::device_kind::cuda_gpu && p.index == 1;
        });
        check_queries(no_h100);
        CHECK(no_h100.best_available()->name.view() != ah::find_device("H100 SXM")->name);
        const auto none = r.what_if_remove([](const ah::accelerator_profile&) { return true; });
        check_queries(none);
        CHECK_FALSE(none.best_available().has_value());
        check_queries(r);
    }
    SUBCASE("what_if_replace") {
        const ah::accelerator_registry r(mixed_profiles());
        const auto swapped = r.what_if_replace({spec("Trainium2", 0), cpu(32_GiB)});
        check_queries(swapped);
        CHECK(swapped.total_memory() == ah::find_device("Trainium2")->memory_bytes + 32_GiB);
        check_queries(r.what_if_replace({}));
    }
    SUBCASE("copy and assignment") {
        const ah::accelerator_registry r(mixed_profiles());
        auto copy = r;
        copy.add(spec("MI300X", 3));
        check_queries(copy);
        check_queries(r);
        CHECK(copy.total_memory() > r.total_memory());
        ah::accelerator_registry assigned({cpu(8_GiB)});
        assigned = copy;
        check_queries(assigned);
        CHECK(assigned.total_memory() == copy.total_memory());
        // Views of the copy yield the copy's profiles, not the original's.
        CHECK(&copy.available()[0] == &copy.all()[0]);
    }
    SUBCASE("move") {
        ah::accelerator_registry r(mixed_profiles());
        const auto total = r.total_memory();
        ah::accelerator_registry moved(std::move(r));
        check_queries(moved);
        CHECK(moved.total_memory() == total);
        check_queries(r); // NOLINT(bugprone-use-after-move): a moved-from registry is empty
        CHECK(r.total_memory() == 0);
        ah::accelerator_registry assigned({cpu(8_GiB)});
        assigned = std::move(moved);
        check_queries(assigned);
        CHECK(assigned.total_memory() == total);
        check_queries(moved); // NOLINT(bugprone-use-after-move)
        CHECK_FALSE(moved.best_available().has_value());
    }
}

// Queries only read: one registry answers several threads at once (run under TSan too).
TEST_CASE("accelerator_registry read from several threads") {
    ah::accelerator_registry r(mixed_profiles());
    for (std::uint32_t i = 0; i < 64; ++i) r.add(spec("H100 SXM", 10 + i));
    const ah::accelerator_registry& shared = r;
    std::vector<std::uint64_t> totals(4);
    std::vector<std::size_t> gpus(4);
    {
        std::vector<std::thread> readers;
        for (std::size_t t = 0; t < totals.size(); ++t)
            readers.emplace_back([&shared, &totals, &gpus, t] {
                for (int n = 0; n < 100; ++n) {
                    totals[t] = shared.total_memory() + (shared.best_available() ? 1 : 0);
                    gpus[t] = static_cast<std::size_t>(ranges::distance(shared.by_family(ah::family::gpu)));
                }
            });
        for (auto& th : readers) th.join();
    }
    for (std::size_t t = 0; t < totals.size(); ++t) {
        CHECK(totals[t] == shared.total_memory() + 1);
        CHECK(gpus[t] == 67); // RTX 4090, H100 SXM, the software renderer, 64 more H100s
    }
}

TEST_CASE("described_registry") {
    // Sixteen H100 SXM as if present: copies indexed in order, two boards' NVLink.
    auto h100 = ah::profile_from_spec(*ah::find_device("H100 SXM"));
    const auto reg = ah::described_registry(h100, 16);
    REQUIRE(reg.size() == 16);
    for (std::uint32_t i = 0; i < 16; ++i) {
        CHECK(reg.all()[i].index == i);
        CHECK(reg.all()[i].name == h100.name);
        CHECK(reg.all()[i].memory_bytes == h100.memory_bytes);
    }
    CHECK(reg.total_accelerator_memory() == 16 * *h100.memory_bytes);
    CHECK(reg.system().interconnects == ah::catalogue_links(*h100.spec, 16));
    // A value set by hand is copied to every device.
    h100.memory_bytes = {64ull << 30, ah::origin::user};
    const auto smaller = ah::described_registry(h100, 3);
    CHECK(smaller.total_accelerator_memory() == 3 * (64ull << 30));
    // Without a catalogue row, no link is known; none is listed.
    ah::accelerator_profile bare;
    bare.kind = ah::device_kind::cuda_gpu;
    CHECK(ah::described_registry(bare, 4).system().interconnects.empty());
    CHECK(ah::described_registry(bare, 0).size() == 0);
}
