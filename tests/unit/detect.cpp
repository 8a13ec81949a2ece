#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/io/json.hpp"
#include "ai_hwaccel/plan/models.hpp"
#include "ai_hwaccel/plan/shard.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;
using namespace ah::literals;

TEST_CASE("detect(system_view)") {
    // A container on a 64 GiB machine with an 8 GiB cgroup v2 limit: real /proc captures,
    // a hand-made memory.max.
    const auto cpuinfo = test::capture("proc-cpuinfo/x86_i7-1370p-hybrid_hp-elitebook_full.txt");
    const auto meminfo = test::capture("proc-meminfo/meminfo_64gb-x86_kernel6x_zswap-unaccepted.txt");
    if (!cpuinfo || !meminfo) return;
    test::scratch_dir root;
    root.write("proc/cpuinfo", *cpuinfo);
    root.write("proc/meminfo", *meminfo);
    root.write("sys/fs/cgroup/memory.max", "8589934592\n");
    const auto reg = ah::detect(ah::host_system(root.path().string()));
    REQUIRE(reg.size() == 1);
    const auto& cpu = reg.all()[0];
    CHECK(cpu.is_cpu());
    CHECK(cpu.name.view() == "13th Gen Intel(R) Core(TM) i7-1370P");
    CHECK(*cpu.memory_bytes == 8_GiB); // the container's limit, not the host's RAM
    CHECK(*cpu.compute_units == 14);
    CHECK(*reg.host().memory.total_bytes == 65589900ull * 1024);
    CHECK(reg.warnings().empty());
    CHECK_FALSE(reg.has_accelerator());
}

TEST_CASE("detect(system_view): a cgroup's limit bounds the CPU's free memory") {
    // The 64 GiB host of the first case (MemAvailable 49384032 kB, about 47 GiB) and
    // hand-made limits: the CPU's memory is the limit, and no more than that is free.
    const auto meminfo = test::capture("proc-meminfo/meminfo_64gb-x86_kernel6x_zswap-unaccepted.txt");
    if (!meminfo) return;
    const auto cpu_memory = [&](std::string_view meminfo_text, std::string_view path, std::string_view limit) {
        test::scratch_dir root;
        root.write("proc/cpuinfo", "processor : 0\n");
        root.write("proc/meminfo", std::string(meminfo_text));
        if (!path.empty()) root.write(std::string(path), std::string(limit));
        const auto reg = ah::detect(ah::host_system(root.path().string()));
        return std::pair{reg.all()[0].memory_bytes, reg.all()[0].memory_free_bytes};
    };
    const ah::sourced<std::uint64_t> available{49384032ull * 1024, ah::origin::sysfs};
    const ah::sourced<std::uint64_t> eight{8_GiB, ah::origin::sysfs};
    CHECK(cpu_memory(*meminfo, "sys/fs/cgroup/memory.max", "8589934592\n") == std::pair{eight, eight});
    CHECK(cpu_memory(*meminfo, "sys/fs/cgroup/memory/memory.limit_in_bytes", "8589934592\n") == std::pair{eight, eight});
    // A limit above what the host has free, none ("max"), none at all: MemAvailable.
    CHECK(cpu_memory(*meminfo, "sys/fs/cgroup/memory.max", "137438953472\n").second == available);
    CHECK(cpu_memory(*meminfo, "sys/fs/cgroup/memory.max", "137438953472\n").first.value_or(0) == 65589900ull * 1024);
    CHECK(cpu_memory(*meminfo, "sys/fs/cgroup/memory.max", "max\n").second == available);
    CHECK(cpu_memory(*meminfo, "", "").second == available);
    // No MemTotal, a limit: the limit bounds MemAvailable still; no limit: MemAvailable.
    const std::string no_total = "MemAvailable:   49384032 kB\n";
    CHECK(cpu_memory(no_total, "sys/fs/cgroup/memory.max", "8589934592\n") == std::pair{eight, eight});
    CHECK(cpu_memory(no_total, "", "").second == available);
    CHECK_FALSE(cpu_memory(no_total, "", "").first);
}

TEST_CASE("detect(system_view) with nothing readable") {
    test::scratch_dir empty;
    const auto reg = ah::detect(ah::host_system(empty.path().string()));
    REQUIRE(reg.size() == 1); // still a CPU profile, with what is unknown left unknown
    CHECK_FALSE(reg.all()[0].memory_bytes.has_value());
    REQUIRE(reg.warnings().size() == 2);
    CHECK(reg.warnings()[0].kind == ah::warning_kind::read_error);
    CHECK(reg.warnings()[0].subject == "/proc/cpuinfo");
    CHECK(reg.warnings()[1].subject == "/proc/meminfo");
}

TEST_CASE("detect(system_view) with a meminfo lacking MemTotal") {
    test::scratch_dir root;
    root.write("proc/cpuinfo", "processor : 0\n");
    root.write("proc/meminfo", "MemFree: 10 kB\n");
    const auto reg = ah::detect(ah::host_system(root.path().string()));
    REQUIRE(reg.warnings().size() == 1);
    CHECK(reg.warnings()[0].kind == ah::warning_kind::parse_error);
}

TEST_CASE("detect()") {
    // This machine: agrees with /proc/meminfo and with the number of online CPUs.
    const auto reg = ah::detect();
    REQUIRE_FALSE(reg.empty());
    const auto& host = reg.host();
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    while (meminfo >> key && key != "MemTotal:") {}
    meminfo >> kib;
    CHECK(*host.memory.total_bytes == kib * 1024);
    CHECK(host.cpu.threads == static_cast<std::uint32_t>(::sysconf(_SC_NPROCESSORS_CONF)));
}

// ---------------------------------------------------------------------------------------
// The orchestrator

namespace {

using namespace std::chrono_literals;

// A machine tree whose environment is given (the live process's is not touched).
struct env_system : ah::host_system {
    using ah::host_system::host_system;
    std::map<std::string, std::string, std::less<>> vars;
    std::optional<std::string> env(std::string_view name) const {
        if (auto it = vars.find(name); it != vars.end()) return it->second;
        return std::nullopt;
    }
};

ah::accelerator_profile device(ah::device_kind kind, std::uint32_t index, std::string_view pci) {
    ah::accelerator_profile p;
    p.kind = kind;
    p.index = index;
    p.pci = ah::parse_pci_address(pci);
    p.name = kind == ah::device_kind::cuda_gpu ? "NVIDIA GeForce RTX 4090" : "RTX 4090 (Vulkan)";
    return p;
}

template <ah::backend_id B>
struct scripted_probe {
    static constexpr ah::backend_id backend = B;
    std::vector<ah::accelerator_profile> devices;
    template <ah::system_view S>
    ah::probe_output probe(const S&) const {
        ah::probe_output out;
        out.devices = devices;
        return out;
    }
};

// Runs one tool through the view and reports it, like a real backend probe.
template <ah::backend_id B>
struct tool_probe {
    static constexpr ah::backend_id backend = B;
    std::vector<std::string> argv;
    std::chrono::milliseconds timeout = 10s;
    template <ah::system_view S>
    ah::probe_output probe(const S& sys) const {
        ah::probe_output out;
        ah::tool_request rq{argv, timeout, std::size_t{1} << 20, std::size_t{64} << 10};
        if (auto text = ah::run_reporting(sys, rq, B, out.warnings)) {
            ah::accelerator_profile p;
            p.kind = ah::device_kind::gaudi;
            p.name = "from tool";
            out.devices.push_back(p);
        }
        return out;
    }
};

struct throwing_probe {
    static constexpr ah::backend_id backend = ah::backend_id::groq;
    template <ah::system_view S>
    ah::probe_output probe(const S&) const {
        throw std::runtime_error("out of luck");
    }
};

bool has_warning(const ah::accelerator_registry& r, ah::warning_kind k, std::optional<ah::backend_id> b = {}) {
    for (const auto& w : r.warnings())
        if (w.kind == k && (!b || w.backend == b)) return true;
    return false;
}

} // namespace

TEST_CASE("detector: none() starts from nothing, all() from everything compiled") {
    const auto none = ah::detector::none();
    CHECK(none.mask() == 0);
    CHECK_FALSE(none.host());
    test::scratch_dir root;
    const auto empty = none.run_timed(ah::host_system(root.path().string()));
    CHECK(empty.registry.empty());
    CHECK(empty.registry.warnings().empty());
    CHECK(empty.timings.empty());

    const auto all = ah::detector::all();
    CHECK(all.host());
    CHECK(all.mask() == ah::compiled_backend_mask);
    CHECK(all.requested(ah::backend_id::cuda) == ah::is_compiled(ah::backend_id::cuda));
    auto some = ah::detector::all().without(ah::backend_id::cuda).with_host(false);
    CHECK_FALSE(some.requested(ah::backend_id::cuda));
    CHECK_FALSE(some.host());
}

TEST_CASE("detector: probes run, are timed, and a device seen twice is one") {
    test::scratch_dir root;
    root.write("proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\n");
    root.write("proc/meminfo", "MemTotal: 1024 kB\n");
    const ah::host_system sys(root.path().string());
    scripted_probe<ah::backend_id::cuda> cuda{{device(ah::device_kind::cuda_gpu, 0, "0000:01:00.0")}};
    scripted_probe<ah::backend_id::vulkan> vulkan{{device(ah::device_kind::vulkan_gpu, 0, "0000:01:00.0"),
                                                  device(ah::device_kind::vulkan_gpu, 1, "0000:02:00.0")}};
    const auto t = ah::detector::all().run_timed_with(sys, cuda, vulkan);
    const auto& reg = t.registry;
    REQUIRE(reg.size() == 3); // CPU, the 4090 once, the other Vulkan device
    CHECK(reg.all()[0].is_cpu());
    CHECK(reg.all()[1].kind == ah::device_kind::cuda_gpu);
    CHECK(reg.all()[2].index == 1);
    REQUIRE(t.timings.size() == 3);
    CHECK(t.timings[0].name == "host");
    CHECK(t.timings[1].name == "cuda");
    CHECK(t.timings[1].devices == 1);
    CHECK(t.timings[2].name == "vulkan");
    CHECK(t.timings[2].devices == 2);
    for (const auto& timing : t.timings) CHECK(timing.state == ah::probe_state::ran);

    // Only requested backends run, and the same result comes without threads.
    const auto only = ah::detector::none().with(ah::backend_id::vulkan).parallel(false).run_timed_with(sys, cuda, vulkan);
    CHECK(only.registry.size() == 2);
    REQUIRE(only.timings.size() == 1);
    CHECK(only.timings[0].name == "vulkan");
}

TEST_CASE("detector: visibility variables come from the system view") {
    test::scratch_dir root;
    env_system sys(root.path().string());
    sys.vars["CUDA_VISIBLE_DEVICES"] = "1";
    scripted_probe<ah::backend_id::cuda> cuda{{device(ah::device_kind::cuda_gpu, 0, "0000:01:00.0"),
                                              device(ah::device_kind::cuda_gpu, 1, "0000:02:00.0")}};
    auto reg = ah::detector::none().with(ah::backend_id::cuda).run_timed_with(sys, cuda).registry;
    REQUIRE(reg.size() == 2);
    CHECK_FALSE(reg.all()[0].available);
    CHECK(reg.all()[1].available);
    CHECK(has_warning(reg, ah::warning_kind::hidden_by_mask, ah::backend_id::cuda));
    reg = ah::detector::none().with(ah::backend_id::cuda).honour_visibility(false).run_timed_with(sys, cuda).registry;
    CHECK(reg.all()[0].available);
}

TEST_CASE("detector: every way a tool fails is a typed warning, and detection returns") {
    // Real processes: the fake tool under five vendor names, misbehaving five ways, each
    // run by its own probe in parallel.
    test::scratch_dir bin;
    for (const char* name : {"hang-smi", "crash-smi", "fail-smi", "spew-smi", "ok-smi"})
        std::filesystem::copy_file(AI_HWACCEL_FAKE_TOOL, bin.path() / name);
    bin.write("noexec-smi", "not a program");
    const ah::host_system sys("", ah::tool_search{"relative/bin:" + bin.path().string(), false});
    using ah::backend_id;
    tool_probe<backend_id::cuda> hang{{"hang-smi", "sleep-forever"}, 500ms};
    tool_probe<backend_id::rocm> crash{{"crash-smi", "signal", "6"}};
    tool_probe<backend_id::intel_gpu> fail{{"fail-smi", "exit", "2"}};
    tool_probe<backend_id::tpu> spew{{"spew-smi", "spew", "100000000"}};
    tool_probe<backend_id::gaudi> ok{{"ok-smi", "exit", "0"}};
    tool_probe<backend_id::neuron> missing{{"missing-smi"}};
    tool_probe<backend_id::qualcomm> noexec{{"noexec-smi"}};
    const auto t = ah::detector::all().with_host(false).run_timed_with(sys, hang, crash, fail, spew, ok, missing, noexec, throwing_probe{});
    const auto& reg = t.registry;
    CHECK(has_warning(reg, ah::warning_kind::tool_timed_out, backend_id::cuda));
    CHECK(has_warning(reg, ah::warning_kind::tool_signalled, backend_id::rocm));
    CHECK(has_warning(reg, ah::warning_kind::tool_failed, backend_id::intel_gpu));
    CHECK(has_warning(reg, ah::warning_kind::output_truncated, backend_id::tpu));
    CHECK(has_warning(reg, ah::warning_kind::tool_not_found, backend_id::neuron));
    CHECK(has_warning(reg, ah::warning_kind::tool_not_executable, backend_id::qualcomm));
    CHECK(has_warning(reg, ah::warning_kind::probe_failed, backend_id::groq));
    // The relative PATH entry: said once, though seven tools were looked up.
    CHECK(std::count_if(reg.warnings().begin(), reg.warnings().end(),
                        [](const ah::warning& w) { return w.kind == ah::warning_kind::unsafe_path_ignored; }) == 1);
    // The clean tool and the cut one still produced their devices.
    CHECK(reg.size() == 2);
    REQUIRE(t.timings.size() == 8);
    CHECK(t.timings.back().state == ah::probe_state::failed);
    CHECK(t.timings[0].elapsed >= 500ms); // the hung tool took its whole timeout…
    CHECK(t.elapsed < 500ms + 20s);       // …and detection still returned
}

// ---------------------------------------------------------------------------------------
// Fixture machines (tests/machines): each detected end to end through the orchestrator.
// The values checked here are read off the machine's files by hand (README.md there);
// expected.json holds the whole registry, compared by the machine_* CLI tests.

namespace {
ah::host_system machine(const std::string& name) {
    return ah::host_system(std::string(AI_HWACCEL_MACHINES_DIR) + "/" + name);
}
} // namespace

TEST_CASE("fixture machine: a Kubernetes pod on Graviton2 with cgroup v1 limits") {
    const auto t = ah::detector::all().run_timed(machine("handmade-k8s-pod-graviton2-cgroup-v1"));
    const auto& reg = t.registry;
    CHECK(reg.warnings().empty());
    REQUIRE(reg.size() == 1);
    const auto& cpu = reg.all()[0];
    CHECK(cpu.is_cpu());
    CHECK(*cpu.memory_bytes == 512_MiB); // the pod's limit, not the node's 1 GB
    const auto& host = reg.host();
    CHECK(host.cpu.arch == ah::cpu_arch::aarch64);
    CHECK(host.cpu.maker == ah::vendor::arm);
    CHECK(host.cpu.model == "Arm Neoverse-N1");
    CHECK(cpu.name.view() == "Arm Neoverse-N1"); // the CPU device is named after it
    CHECK(host.cpu.threads == 2);
    CHECK(host.cpu.usable_threads == 2);
    CHECK(host.cpu.cpu_quota == doctest::Approx(1.5));
    CHECK(host.cpu.features.has(ah::cpu_feature::neon));
    CHECK(host.cpu.features.has(ah::cpu_feature::asimd_dotprod));
    CHECK_FALSE(host.cpu.features.has(ah::cpu_feature::sve)); // Neoverse N1 has none
    CHECK(*host.memory.total_bytes == 1019732ull * 1024);
    const auto& env = reg.system().environment;
    CHECK(env.container == ah::container_runtime::docker);
    CHECK(env.kubernetes);
    CHECK(env.kubernetes_namespace == "ml-serving");
    CHECK(env.cloud == ah::cloud_provider::aws);
    CHECK(env.instance_type == "t4g.micro");
    REQUIRE(reg.system().storage.size() == 1);
    CHECK(reg.system().storage[0].size_bytes == 8_GiB);
    CHECK(reg.system().storage[0].kind == ah::storage_kind::virtual_disk); // EBS: a network volume
}

TEST_CASE("fixture machine: a two-socket Kunpeng 920 server with four NUMA nodes") {
    const auto reg = ah::detect(machine("handmade-numa-2socket-kunpeng920"));
    CHECK(reg.warnings().empty());
    const auto& host = reg.host();
    CHECK(host.cpu.model == "HiSilicon Kunpeng-920"); // implementer 0x48, part 0xd01
    CHECK(host.cpu.maker == ah::vendor::unknown);
    CHECK(host.cpu.sockets == 2);
    CHECK(host.cpu.cores == 128);
    CHECK(host.cpu.threads == 128);
    CHECK(*host.memory.total_bytes == 527031224ull * 1024);
    REQUIRE(host.numa.size() == 4);
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < 4; ++i) {
        CHECK(host.numa[i].id == i);
        CHECK(host.numa[i].cpus == std::to_string(32 * i) + "-" + std::to_string(32 * i + 31));
        sum += host.numa[i].memory_bytes;
    }
    CHECK(sum == *host.memory.total_bytes);
    REQUIRE(reg.system().pci_devices.size() == 1);
    const auto& nic = reg.system().pci_devices[0];
    CHECK(nic.vendor_id == 0x15b3);
    CHECK(nic.numa_node == 2);
    CHECK(nic.driver == "mlx5_core");
    CHECK(*nic.link_max == ah::pcie_link{3, 16});
    CHECK(reg.system().environment.cloud == ah::cloud_provider::none);
    CHECK(reg.system().environment.container == ah::container_runtime::none);
}

namespace {
// The devices at one PCI address.
std::vector<const ah::accelerator_profile*> with_pci(const ah::accelerator_registry& reg, std::string_view address) {
    std::vector<const ah::accelerator_profile*> out;
    for (const auto& d : reg.all())
        if (d.pci && d.pci == ah::parse_pci_address(address)) out.push_back(&d);
    return out;
}
} // namespace

TEST_CASE("fixture machine: a workstation with an RTX 4090 and a SATA disk") {
    const auto reg = ah::detect(machine("handmade-workstation-rtx4090"));
    CHECK(reg.warnings().empty());
    const auto& host = reg.host();
    CHECK(host.cpu.model == "13th Gen Intel(R) Core(TM) i7-1370P");
    CHECK(host.cpu.cores == 14); // 6 P-cores with two threads, 8 E-cores with one
    CHECK(host.cpu.threads == 20);
    CHECK(host.cpu.features.has(ah::cpu_feature::avx_vnni));
    CHECK_FALSE(host.cpu.features.has(ah::cpu_feature::avx512f));
    CHECK(*reg.all()[0].memory_bytes == 65589900ull * 1024);
#if AI_HWACCEL_BACKEND_CUDA
    // The card, through the CUDA probe replaying the tree's nvidia-smi capture; its Vulkan
    // view (same UUID, same PCI address) merged into it: one device, not two.
    const auto rtx = with_pci(reg, "0000:01:00.0");
    REQUIRE(rtx.size() == 1);
    const auto& gpu = *rtx[0];
    CHECK(gpu.kind == ah::device_kind::cuda_gpu);
    CHECK(gpu.available); // CUDA_VISIBLE_DEVICES=0 in the captured environment keeps it
    CHECK(gpu.name.view() == "NVIDIA GeForce RTX 4090");
    CHECK(*gpu.memory_bytes == 24564_MiB);
    CHECK(gpu.memory_bytes.from == ah::origin::tool);
    CHECK(gpu.memory_bandwidth_gbps.from == ah::origin::catalogue);
    CHECK(*gpu.pcie_max == ah::pcie_link{4, 16});
    CHECK(gpu.driver_version.view() == "550.54.14"); // nvidia-smi's, not Vulkan's packed form
    CHECK(reg.has_accelerator());
#endif
#if AI_HWACCEL_BACKEND_INTEL_GPU
    // The iGPU from i915 sysfs, its Vulkan view (ANV) merged by PCI address.
    const auto igpu = with_pci(reg, "0000:00:02.0");
    REQUIRE(igpu.size() == 1);
    CHECK(igpu[0]->kind == ah::device_kind::intel_gpu);
    CHECK(igpu[0]->unified_memory); // shares the host's memory: not counted twice
#endif
#if AI_HWACCEL_BACKEND_VULKAN
    // llvmpipe is listed, marked as software, and is no accelerator.
    std::size_t software = 0;
    for (const auto& d : reg.all()) {
        if (!d.software) continue;
        ++software;
        CHECK(d.kind == ah::device_kind::vulkan_gpu);
        CHECK_FALSE(d.is_accelerator());
    }
    CHECK(software == 1);
#endif
#if AI_HWACCEL_BACKEND_CUDA && AI_HWACCEL_BACKEND_INTEL_GPU && AI_HWACCEL_BACKEND_VULKAN
    CHECK(reg.size() == 4); // CPU, RTX 4090, iGPU, llvmpipe
#endif
    const auto& pci = reg.system().pci_devices;
    REQUIRE(pci.size() == 2);
    CHECK(pci[0].address == *ah::parse_pci_address("0000:00:02.0"));
    CHECK(pci[0].driver == "i915");
    CHECK(pci[1].device_id == 0x2684);
    CHECK(*pci[1].link_current == ah::pcie_link{1, 16}); // idling at 2.5 GT/s
    CHECK(*pci[1].link_max == ah::pcie_link{4, 16});
    REQUIRE(reg.system().storage.size() == 1);
    CHECK(reg.system().storage[0].name == "sda");
    CHECK(reg.system().storage[0].kind == ah::storage_kind::hdd);
    CHECK(reg.system().environment.container == ah::container_runtime::none);
    // The captured environment, not this process's, is what the tree's masks read.
    CHECK(machine("handmade-workstation-rtx4090").env("CUDA_VISIBLE_DEVICES") == "0");
}

#if AI_HWACCEL_BACKEND_CUDA
TEST_CASE("fixture machine: an HGX H100 node, eight GPUs behind NVSwitch") {
    const auto reg = ah::detect(machine("handmade-hgx-h100-8gpu-nvswitch"));
    INFO(test::warnings_text(reg.warnings()));
    CHECK(reg.warnings().empty());
    std::size_t gpus = 0;
    for (const auto& d : reg.all()) {
        if (d.kind != ah::device_kind::cuda_gpu) continue;
        ++gpus;
        CHECK(d.name.view() == "NVIDIA H100 80GB HBM3");
        CHECK(*d.memory_bytes == 81559_MiB);
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA H100 SXM5 80GB");
        REQUIRE(d.numa_node.has_value());
        CHECK(*d.numa_node == (d.index < 4 ? 0 : 1)); // from topo -m's NUMA Affinity
    }
    CHECK(gpus == 8);
    CHECK(reg.host().cpu.sockets == 2);
    REQUIRE(reg.system().interconnects.size() == 1);
    const auto& fabric = reg.system().interconnects[0];
    CHECK(fabric.kind == ah::interconnect_kind::nvswitch);
    CHECK(fabric.devices == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(*fabric.bandwidth_gbps == 900);
    CHECK(reg.system().environment.hypervisor.empty());
}
#endif

#if AI_HWACCEL_BACKEND_ROCM
TEST_CASE("fixture machine: four MI300X in one XGMI hive") {
    const auto reg = ah::detect(machine("handmade-mi300x-4gpu-xgmi"));
    INFO(test::warnings_text(reg.warnings()));
    CHECK(reg.warnings().empty());
    std::vector<std::uint32_t> cards;
    for (const auto& d : reg.all()) {
        if (d.kind != ah::device_kind::rocm_gpu) continue;
        cards.push_back(d.index);
        CHECK(d.name.view() == "AMD Instinct MI300X OAM");
        CHECK(*d.memory_bytes == 206141652992ull);
        CHECK(d.memory_bytes.from == ah::origin::sysfs);
        CHECK(d.arch.view() == "gfx942");
        CHECK(*d.compute_units == 304); // 1216 SIMDs, 4 per CU
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "AMD Instinct MI300X");
        CHECK_FALSE(d.unified_memory);
    }
    CHECK(cards == std::vector<std::uint32_t>{1, 2, 3, 4});
    REQUIRE(reg.system().interconnects.size() == 1);
    const auto& hive = reg.system().interconnects[0];
    CHECK(hive.kind == ah::interconnect_kind::xgmi);
    CHECK(hive.scope == ah::link_scope::intra_node);
    CHECK(hive.devices == cards);
}
#endif

#if AI_HWACCEL_BACKEND_APPLE && AI_HWACCEL_JSON
TEST_CASE("fixture machine: a MacBook Pro with an M1 Pro, unified memory counted once") {
    const auto reg = ah::detect(machine("handmade-macbook-pro-m1pro"));
    const ah::accelerator_profile* gpu = nullptr;
    const ah::accelerator_profile* ane = nullptr;
    for (const auto& d : reg.all()) {
        if (d.kind == ah::device_kind::metal_gpu) gpu = &d;
        if (d.kind == ah::device_kind::apple_neural_engine) ane = &d;
    }
    REQUIRE(gpu != nullptr);
    REQUIRE(ane != nullptr);
    CHECK(gpu->name.view() == "Apple M1 Pro");
    CHECK(*gpu->compute_units == 16); // system_profiler's sppci_cores
    CHECK(gpu->compute_units.from == ah::origin::tool);
    CHECK(gpu->unified_memory);
    CHECK(ane->unified_memory);
    CHECK(*gpu->memory_bytes == 16_GiB); // hw.memsize
    // One pool of 16 GiB, whichever way it is summed: not 32 (GPU + ANE) or 48 (+ CPU).
    CHECK(reg.total_memory() == 16_GiB);
    CHECK(reg.total_accelerator_memory() == 16_GiB);
    // A Mac has no /proc: the CPU and the memory are sysctl's, and nothing is missing.
    INFO(test::warnings_text(reg.warnings()));
    CHECK(reg.warnings().empty());
    CHECK(reg.all().front().name.view() == "Apple M1 Pro");
    CHECK(*reg.host().memory.total_bytes == 16_GiB);
}
#endif

#if AI_HWACCEL_BACKEND_CUDA
TEST_CASE("fixture machine: a DGX Spark, whose GB10 shares the system's memory") {
    const auto reg = ah::detect(machine("handmade-dgx-spark-gb10"));
    INFO(test::warnings_text(reg.warnings()));
    CHECK(reg.warnings().empty());
    const ah::accelerator_profile* gpu = nullptr;
    for (const auto& d : reg.all())
        if (d.kind == ah::device_kind::cuda_gpu) gpu = &d;
    REQUIRE(gpu != nullptr);
    REQUIRE(gpu->spec != nullptr);
    CHECK(gpu->spec->name == "NVIDIA GB10");
    CHECK(gpu->unified_memory);
    // nvidia-smi says "[N/A]": the memory is /proc/meminfo's, MemTotal and MemAvailable.
    CHECK(*gpu->memory_bytes == 131334144ull * 1024);
    CHECK(gpu->memory_bytes.from == ah::origin::sysfs);
    CHECK(*gpu->memory_free_bytes == 121602180ull * 1024);
    CHECK(*gpu->memory_bandwidth_gbps == 273);
    REQUIRE(gpu->pci);
    CHECK(gpu->pci->domain == 0xf);
    // One pool, counted once: the GPU's memory is the CPU's.
    CHECK(reg.total_memory() == 131334144ull * 1024);
    CHECK(reg.host().cpu.cores == 20);
}
#endif

#if AI_HWACCEL_BACKEND_CUDA
TEST_CASE("fixture machine: a Jetson Orin Nano developer kit, its GPU told apart by the device tree") {
    const auto reg = ah::detect(machine("handmade-jetson-orin-nano-devkit"));
    INFO(test::warnings_text(reg.warnings()));
    CHECK(reg.warnings().empty());
    REQUIRE(reg.size() == 2);
    const auto& gpu = reg.all()[1];
    CHECK(gpu.kind == ah::device_kind::cuda_gpu);
    CHECK(gpu.name.view() == "Orin (nvgpu)"); // every Orin module's GPU is named so
    REQUIRE(gpu.spec != nullptr);
    CHECK(gpu.spec->name == "NVIDIA Jetson Orin Nano 8GB"); // module p3767-0005
    CHECK(gpu.unified_memory);
    CHECK(*gpu.memory_bytes == 7650336ull * 1024);
    CHECK(gpu.memory_bytes.from == ah::origin::sysfs);
    CHECK(*gpu.memory_free_bytes == 5123456ull * 1024);
    CHECK(*gpu.memory_bandwidth_gbps == 68);
    CHECK(gpu.arch.view() == "8.7");
    CHECK_FALSE(gpu.pci);
    // One pool, counted once.
    CHECK(reg.total_memory() == 7650336ull * 1024);
    CHECK(reg.host().cpu.cores == 6);
    // A model that fits is planned on the GPU, with a speed (the row gives the bandwidth).
    const auto plan = ah::plan_sharding(reg.all(), reg.system().interconnects, *ah::find_model("llama-3.2-3b"),
                                        ah::quant_format::q4_k_m);
    CHECK(plan.fits);
    CHECK(plan.kind == ah::device_kind::cuda_gpu);
    CHECK(plan.decode_tokens_per_second > 0);
}
#endif

#if AI_HWACCEL_BACKEND_CUDA
TEST_CASE("fixture machine: a Jetson AGX Thor developer kit, its module told by the device tree") {
    const auto reg = ah::detect(machine("handmade-jetson-agx-thor-devkit"));
    INFO(test::warnings_text(reg.warnings()));
    CHECK(reg.warnings().empty());
    REQUIRE(reg.size() == 2);
    const auto& gpu = reg.all()[1];
    CHECK(gpu.kind == ah::device_kind::cuda_gpu);
    CHECK(gpu.name.view() == "NVIDIA Thor"); // both Thor modules' GPU is named so
    REQUIRE(gpu.spec != nullptr);
    CHECK(gpu.spec->name == "NVIDIA Jetson T5000"); // module p3834-0008
    CHECK(gpu.unified_memory);
    CHECK(*gpu.memory_bytes == 127883468ull * 1024);
    CHECK(gpu.memory_bytes.from == ah::origin::sysfs);
    CHECK(*gpu.memory_free_bytes == 117356940ull * 1024);
    CHECK(*gpu.memory_bandwidth_gbps == 273);
    CHECK(gpu.arch.view() == "11.0");
    CHECK_FALSE(gpu.pci);
    CHECK(reg.total_memory() == 127883468ull * 1024); // one pool, counted once
    CHECK(reg.host().cpu.cores == 14);
    // A 70B model in 8 bits fits the module's memory, and has a decode rate from the row's
    // bandwidth: at most 273 GB/s over the weights read per token.
    const auto& m = *ah::find_model("llama-3.1-70b");
    const auto plan = ah::plan_sharding(reg.all(), reg.system().interconnects, m, ah::quant_format::fp8_e4m3);
    CHECK(plan.fits);
    CHECK(plan.kind == ah::device_kind::cuda_gpu);
    CHECK(plan.decode_tokens_per_second > 0);
    CHECK(plan.decode_tokens_per_second < 273e9 / (static_cast<double>(m.parameters) * 1.0));
}
#endif

#if AI_HWACCEL_BACKEND_VULKAN
TEST_CASE("fixture machine: a laptop whose only Vulkan device is llvmpipe") {
    const auto reg = ah::detect(machine("handmade-laptop-llvmpipe-only"));
    INFO(test::warnings_text(reg.warnings()));
    CHECK(reg.warnings().empty());
    REQUIRE(reg.size() == 2);
    const auto& soft = reg.all()[1];
    CHECK(soft.kind == ah::device_kind::vulkan_gpu);
    CHECK(soft.software);
    CHECK(soft.name.view() == "llvmpipe (LLVM 15.0.6, 256 bits)");
    CHECK_FALSE(reg.has_accelerator()); // listed, never counted
    CHECK(reg.total_accelerator_memory() == 0);
}
#endif

#if AI_HWACCEL_JSON
namespace {
// Counts the reads of each file, from the detector's parallel probes.
class read_counter final : public ah::system_observer {
public:
    std::size_t reads(const std::string& path) const {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto it = count_.find(path);
        return it == count_.end() ? 0 : it->second;
    }
    void on_read(std::string_view path, const ah::file_read&) override {
        const std::lock_guard<std::mutex> lock(mutex_);
        ++count_[std::string(path)];
    }
    void on_list(std::string_view, const std::optional<std::vector<std::string>>&) override {}
    void on_link(std::string_view, const std::optional<std::string>&) override {}
    void on_exists(std::string_view, bool) override {}
    void on_env(std::string_view, const std::optional<std::string>&) override {}
    void on_run(const ah::tool_request&, const ah::tool_result&) override {}

private:
    mutable std::mutex mutex_;
    std::map<std::string, std::size_t> count_;
};
} // namespace

TEST_CASE("detector: the probes of one detection share one walk of the PCI bus") {
    // The TPU host: the host probes and the TPU, Gaudi, Qualcomm, Neuron and NVIDIA
    // fallback walks all list the bus. Through a host_system the walk is shared: each
    // function's files are read once, in parallel or not, with the same registry as a
    // view that shares nothing (counting_view derives from host_system, and a copy of its
    // host_system part would not be a counting_view, so it is never shared).
    const std::string root = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-tpu-v5p-host";
    const std::string vendor = "/sys/bus/pci/devices/0000:00:04.0/vendor";
    test::counting_view unshared(root);
    const auto alone = ah::detect(unshared);
    const auto walks = static_cast<std::size_t>(std::count(unshared.read.begin(), unshared.read.end(), vendor));
    CHECK(walks >= 3);
    for (const bool parallel : {true, false}) {
        CAPTURE(parallel);
        read_counter counter;
        const auto shared = ah::detector::all().parallel(parallel).run(ah::host_system(root).observed_by(counter));
        CHECK(counter.reads(vendor) == 1);
        CHECK(shared == alone);
    }
}

TEST_CASE("captured-h200-firecracker-vm: a real machine, as `ai-hwaccel gather` wrote it") {
    // An NVIDIA H200 in a Firecracker VM (16 vCPUs of an Intel Xeon, Linux 6.18), gathered
    // on this project's device machine with nvidia-smi and vulkaninfo there;
    // tests/machines/README.md says what it holds.
    const auto m = machine("captured-h200-firecracker-vm");
    const auto reg = ah::detect(m);
    REQUIRE(reg.size() == 2); // Vulkan's view of the card merged into the CUDA one
    const auto& gpu = reg.all()[1];
    CHECK(gpu.kind == ah::device_kind::cuda_gpu);
    CHECK(gpu.name.view() == "NVIDIA H200");
    CHECK(gpu.uuid.view() == "GPU-dfeff0e1-f84d-5d67-2198-55aa17e58eb9");
    CHECK(*gpu.memory_bytes == 143771ull * 1024 * 1024);
    CHECK(*gpu.memory_used_bytes == 0);
    CHECK(*gpu.memory_free_bytes == 143156ull * 1024 * 1024);
    CHECK(*gpu.pci == ah::pci_address{0, 0, 6, 0});
    CHECK(*gpu.pcie_current == ah::pcie_link{5, 16});
    CHECK(gpu.driver_version.view() == "580.159.04");
    REQUIRE(gpu.spec != nullptr);
    CHECK(gpu.spec->name == "NVIDIA H200 SXM 141GB"); // 0x2335 and 700 W: the SXM board
    // vulkaninfo alone: the same card, by the UUID nvidia-smi prints (without its "GPU-")
    // and by PCI address, with the device-local heap the size nvidia-smi gives.
    const auto vk = ah::vulkan_probe{}.probe(m);
    CHECK(vk.warnings.empty());
    REQUIRE(vk.devices.size() == 1);
    CHECK(vk.devices[0].kind == ah::device_kind::vulkan_gpu);
    CHECK("GPU-" + std::string(vk.devices[0].uuid.view()) == gpu.uuid.view());
    CHECK(vk.devices[0].pci == gpu.pci);
    CHECK(vk.devices[0].memory_bytes == gpu.memory_bytes);
    const auto& host = reg.host();
    CHECK(host.cpu.model == "Intel(R) Xeon(R) Processor");
    CHECK(host.cpu.cores == 16);
    CHECK(host.cpu.sockets == 1);
    CHECK(*host.memory.total_bytes == 131981020ull * 1024);
    // The kernel's node 0 counted 4.6 GiB of the 126 GiB MemTotal counts (struct pages
    // initialised lazily); the VM's only node holds all of it.
    REQUIRE(host.numa.size() == 1);
    CHECK(host.numa[0].memory_bytes == *host.memory.total_bytes);
    CHECK(reg.warnings().empty());
    CHECK(reg.system().pci_devices.size() == 7);
    CHECK(reg.system().storage.size() == 2);
}

TEST_CASE("fixture machines: the registry equals the reviewed expected.json") {
    // Every machine in the folder, so a new one cannot be left out.
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(AI_HWACCEL_MACHINES_DIR))
        if (test::is_fixture_machine(e)) names.push_back(e.path().filename().string());
    CHECK(names.size() >= 17);
    for (const auto& name : names) {
        CAPTURE(name);
        const auto text = test::read_file(std::string(AI_HWACCEL_MACHINES_DIR) + "/" + name + "/expected.json");
        REQUIRE(text);
        const auto expected = ah::registry_from_json(*text);
        REQUIRE_MESSAGE(expected.ok(), expected.error);
        CHECK(ah::detect(machine(name)) == *expected.registry);
    }
}
#endif
