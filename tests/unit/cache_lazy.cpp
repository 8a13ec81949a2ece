#include "ai_hwaccel/cache/lazy.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace ah = ai_hwaccel;

namespace {
// A machine with nothing on it: every file missing, every tool absent.
struct empty_machine {
    ah::file_read read_file(std::string_view, std::size_t = ah::default_read_cap) const {
        return {ah::read_status::not_found, {}};
    }
    std::optional<std::vector<std::string>> list_dir(std::string_view) const { return std::nullopt; }
    std::optional<std::string> read_link(std::string_view) const { return std::nullopt; }
    bool exists(std::string_view) const { return false; }
    std::optional<std::string> env(std::string_view) const { return std::nullopt; }
    ah::tool_result run(const ah::tool_request&) const { return {}; }
};
static_assert(ah::system_view<empty_machine>);

// Counts its runs; finds one device of each kind it is given.
template <ah::backend_id B, ah::device_kind... Kinds>
struct counting_probe {
    static constexpr ah::backend_id backend = B;
    std::atomic<int>* runs = nullptr;
    template <ah::system_view S>
    ah::probe_output probe(const S&) const {
        runs->fetch_add(1);
        ah::probe_output out;
        std::uint32_t i = 0;
        for (const auto k : {Kinds...}) {
            ah::accelerator_profile p;
            p.kind = k;
            p.index = i++;
            p.name = ah::to_string(B);
            out.devices.push_back(p);
        }
        out.warnings.push_back(ah::warning{ah::warning_kind::tool_not_found, B, "tool", "fake", 0});
        return out;
    }
};
using cuda_fake = counting_probe<ah::backend_id::cuda, ah::device_kind::cuda_gpu>;
using vulkan_fake = counting_probe<ah::backend_id::vulkan, ah::device_kind::vulkan_gpu>;
using apple_fake =
    counting_probe<ah::backend_id::apple, ah::device_kind::metal_gpu, ah::device_kind::apple_neural_engine>;
using npu_fake = counting_probe<ah::backend_id::intel_npu, ah::device_kind::intel_npu>;
using tpu_fake = counting_probe<ah::backend_id::tpu, ah::device_kind::tpu>;
static_assert(ah::backend_probe<cuda_fake, empty_machine>);

struct fakes {
    std::atomic<int> cuda{0}, vulkan{0}, apple{0}, npu{0}, tpu{0};
    std::tuple<cuda_fake, vulkan_fake, apple_fake, npu_fake, tpu_fake> probes() {
        return {cuda_fake{&cuda}, vulkan_fake{&vulkan}, apple_fake{&apple}, npu_fake{&npu}, tpu_fake{&tpu}};
    }
};
using fake_lazy = ah::lazy_registry<empty_machine, std::tuple<cuda_fake, vulkan_fake, apple_fake, npu_fake, tpu_fake>>;

ah::detector all_fakes() {
    return ah::detector::none()
        .with(ah::backend_id::cuda)
        .with(ah::backend_id::vulkan)
        .with(ah::backend_id::apple)
        .with(ah::backend_id::intel_npu)
        .with(ah::backend_id::tpu)
        .with_host();
}
} // namespace

TEST_CASE("backend_serves_family") {
    static_assert(ah::backend_serves_family(ah::backend_id::cuda, ah::family::gpu));
    static_assert(!ah::backend_serves_family(ah::backend_id::cuda, ah::family::npu));
    static_assert(ah::backend_serves_family(ah::backend_id::apple, ah::family::npu));
    static_assert(ah::backend_serves_family(ah::backend_id::apple, ah::family::gpu));
    static_assert(ah::backend_serves_family(ah::backend_id::tpu, ah::family::tpu));
    CHECK(ah::backend_serves_family(ah::backend_id::intel_npu, ah::family::npu));
}

TEST_CASE("lazy_registry::devices") {
    fakes f;
    fake_lazy lazy(empty_machine{}, all_fakes(), f.probes());
    CHECK_FALSE(lazy.probed(ah::family::gpu));
    CHECK(lazy.snapshot().empty());

    const auto gpus = lazy.devices(ah::family::gpu);
    CHECK(gpus.size() == 3); // cuda, vulkan, apple's Metal GPU
    CHECK(f.cuda == 1);
    CHECK(f.vulkan == 1);
    CHECK(f.apple == 1);
    CHECK(f.npu == 0); // not asked for
    CHECK(f.tpu == 0);
    CHECK(lazy.probed(ah::family::gpu));
    CHECK_FALSE(lazy.probed(ah::family::npu));

    CHECK(lazy.devices(ah::family::gpu).size() == 3);
    CHECK(f.cuda == 1); // served from what was found

    // The NPU family: the Intel NPU backend runs now; Apple's Neural Engine was already
    // found with its GPU, and Apple does not run again.
    const auto npus = lazy.devices(ah::family::npu);
    CHECK(npus.size() == 2);
    CHECK(f.npu == 1);
    CHECK(f.apple == 1);
    CHECK(f.tpu == 0);

    // The CPU family runs the host probes (here against an empty machine).
    CHECK_FALSE(lazy.probed(ah::family::cpu));
    CHECK(lazy.devices(ah::family::cpu).size() == 1);
    CHECK(lazy.probed(ah::family::cpu));

    lazy.probe_all();
    CHECK(f.tpu == 1);
    CHECK(f.cuda == 1);
    const auto reg = lazy.snapshot();
    CHECK(reg.size() == 7); // cpu + 3 GPUs + 2 NPUs + TPU
    // One warning per backend, none repeated.
    CHECK(reg.warnings().size() >= 5);
    std::size_t host_runs = 0;
    for (const auto& t : lazy.timings()) host_runs += t.name == "host";
    CHECK(host_runs == 1);
    CHECK(lazy.timings().size() == 6);
}

TEST_CASE("lazy_registry runs only the backends its detector allows") {
    fakes f;
    fake_lazy lazy(empty_machine{}, ah::detector::none().with(ah::backend_id::vulkan), f.probes());
    CHECK(lazy.devices(ah::family::gpu).size() == 1);
    CHECK(f.vulkan == 1);
    CHECK(f.cuda == 0);
    CHECK(lazy.devices(ah::family::cpu).empty()); // no host probes asked for
}

TEST_CASE("lazy_registry::devices from many threads") {
    fakes f;
    fake_lazy lazy(empty_machine{}, all_fakes(), f.probes());
    constexpr int n = 8;
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            // Half ask for GPUs, half for NPUs; both families need Apple's probe.
            const auto fam = i % 2 == 0 ? ah::family::gpu : ah::family::npu;
            const auto got = lazy.devices(fam);
            if (got.size() != (fam == ah::family::gpu ? 3u : 2u)) ++wrong;
            (void)lazy.snapshot();
            (void)lazy.probed(fam);
        });
    for (auto& t : threads) t.join();
    CHECK(wrong == 0);
    CHECK(f.cuda == 1);
    CHECK(f.vulkan == 1);
    CHECK(f.apple == 1);
    CHECK(f.npu == 1);
    CHECK(f.tpu == 0);
}

#if AI_HWACCEL_OS_LINUX
TEST_CASE("lazy_registry on a host_system") {
    // Deduces this build's probes; an empty machine tree finds a CPU and nothing else.
    ah::lazy_registry lazy{ah::host_system("/nonexistent/ai-hwaccel-machine")};
    static_assert(std::is_same_v<decltype(lazy), ah::lazy_registry<ah::host_system, ah::builtin_probes>>);
    CHECK(lazy.devices(ah::family::cpu).size() == 1);
    CHECK(lazy.devices(ah::family::tpu).empty());
}
#endif
