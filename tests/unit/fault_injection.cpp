// Fault injection: detection against broken tools and broken system files.
//
// Real processes: the misbehaving tool (tests/tools/fake_tool.cpp) stands in for
// nvidia-smi, hl-smi and neuron-ls, run by the real runner, and hangs, crashes, fails,
// prints nothing, garbage, invalid UTF-8, numbers past 2^64 or 100 MB. Machine trees:
// sysfs and /proc files that are empty, unreadable, symlink loops or nonsense, and
// captured tool runs that timed out or were killed. Each case must end with a typed
// warning that names the tool or file, and a registry whose CPU and host facts are intact
// wherever the fault left them readable; nothing throws, nothing hangs.
#include "ai_hwaccel/detect/detect.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kib = 1024;

// The /proc files of a small, healthy machine (hand-made), so that the CPU's facts can be
// checked after every fault elsewhere.
constexpr const char* cpuinfo_text = "processor\t: 0\n"
                                     "vendor_id\t: GenuineIntel\n"
                                     "model name\t: Test CPU @ 2.00GHz\n"
                                     "physical id\t: 0\n"
                                     "core id\t\t: 0\n"
                                     "cpu cores\t: 2\n"
                                     "flags\t\t: fpu sse sse2 avx avx2\n"
                                     "\n"
                                     "processor\t: 1\n"
                                     "vendor_id\t: GenuineIntel\n"
                                     "model name\t: Test CPU @ 2.00GHz\n"
                                     "physical id\t: 0\n"
                                     "core id\t\t: 1\n"
                                     "cpu cores\t: 2\n"
                                     "flags\t\t: fpu sse sse2 avx avx2\n";
constexpr const char* meminfo_text = "MemTotal:       16384000 kB\nMemFree:         1000000 kB\n"
                                     "MemAvailable:    8192000 kB\n";

#if AI_HWACCEL_BACKEND_CUDA
// nvidia-smi's query, as the probe asks for it, one row per GPU (hand-made values).
std::string nvidia_row(const std::string& name, const std::string& memory_total) {
    return "0, GPU-11111111-2222-3333-4444-555555555555, " + name + ", 00000000:18:00.0, 0x233010DE, " + memory_total +
           ", 1, 81003, 9.0, 550.90.07, 700.00, 71.50, 33, 0, 2619, 5, 5, 16, 16, Disabled\n";
}
#endif

// A machine tree holding the healthy /proc files.
struct machine_tree {
    test::scratch_dir dir;
    machine_tree() {
        dir.write("proc/cpuinfo", cpuinfo_text);
        dir.write("proc/meminfo", meminfo_text);
    }
    std::string root() const { return dir.path().string(); }
    fs::path at(const std::string& relative) const { return dir.path() / relative; }
    // A symbolic link at `relative` pointing at `target` (taken as it is, relative or not).
    void link(const std::string& relative, const std::string& target) const {
        fs::create_directories(at(relative).parent_path());
        fs::create_symlink(target, at(relative));
    }
};

// Sets AI_HWACCEL_FAKE_TOOL_MODE for the fake tool while it lives (the runner hands this
// process's environment on to the tools it starts).
class fake_mode {
public:
    explicit fake_mode(const std::string& mode) { ::setenv("AI_HWACCEL_FAKE_TOOL_MODE", mode.c_str(), 1); }
    ~fake_mode() { ::unsetenv("AI_HWACCEL_FAKE_TOOL_MODE"); }
    fake_mode(const fake_mode&) = delete;
    fake_mode& operator=(const fake_mode&) = delete;
};

// A machine tree's files with live tools: reads go below the tree, tools are run for real,
// looked up only in `bin`, with their time limits cut to `limit` so that a hung tool costs
// a fraction of a second (the probes ask for 10 s and more).
struct tree_with_live_tools : ah::host_system {
    ah::tool_search search;
    std::chrono::milliseconds limit;
    tree_with_live_tools(std::string root, const fs::path& bin, std::chrono::milliseconds l)
        : ah::host_system(std::move(root)), search{bin.string(), false}, limit(l) {}
    ah::tool_result run(const ah::tool_request& request) const {
        ah::tool_request cut = request;
        cut.timeout = std::min(cut.timeout, limit);
        return ah::run_tool(cut, search);
    }
};
static_assert(ah::system_view<tree_with_live_tools>);

// A folder holding the fake tool under each of `names`.
struct tool_bin {
    test::scratch_dir dir;
    explicit tool_bin(std::initializer_list<const char*> names) {
        for (const char* n : names) fs::copy_file(AI_HWACCEL_FAKE_TOOL, dir.path() / n);
    }
};

const ah::warning* find_warning(std::span<const ah::warning> ws, ah::warning_kind k, std::string_view subject) {
    const auto it = std::find_if(ws.begin(), ws.end(), [&](const ah::warning& w) {
        return w.kind == k && (w.subject == subject || w.subject.find(subject) != std::string::npos ||
                               w.message.find(subject) != std::string::npos);
    });
    return it == ws.end() ? nullptr : &*it;
}

// The CPU leads the registry with the healthy tree's facts.
void check_cpu_intact(const ah::accelerator_registry& reg) {
    REQUIRE(reg.size() >= 1);
    CHECK(reg.all()[0].is_cpu());
    CHECK(reg.host().cpu.model == "Test CPU @ 2.00GHz");
    CHECK(reg.host().cpu.threads == 2);
    REQUIRE(reg.host().memory.total_bytes);
    CHECK(*reg.host().memory.total_bytes == 16384000 * kib);
}

struct live_case {
    const char* tool;
    ah::backend_id backend;
};
constexpr live_case live_tools[] = {
    {"nvidia-smi", ah::backend_id::cuda},
    {"hl-smi", ah::backend_id::gaudi},
    {"neuron-ls", ah::backend_id::neuron},
};

// Runs the whole detection (every probe this build has, as the CLI does) on a healthy tree
// whose vendor tools all misbehave as `mode` says, and checks that each tool's probe gave
// a `kind` warning naming it. Returns the registry for further checks.
ah::accelerator_registry detect_with_broken_tools(const std::string& mode, ah::warning_kind kind,
                                                  std::chrono::milliseconds limit = 10s) {
    machine_tree tree;
    tool_bin bin{"nvidia-smi", "hl-smi", "neuron-ls"};
    const tree_with_live_tools sys(tree.root(), bin.dir.path(), limit);
    const fake_mode m(mode);
    const auto reg = ah::detector::all().run(sys);
    INFO(test::warnings_text(reg.warnings()));
    check_cpu_intact(reg);
    for (const auto& c : live_tools) {
        if (!ah::backend_table[static_cast<std::size_t>(c.backend)].compiled) continue;
        const std::string tool = c.tool;
        CAPTURE(tool);
        const auto* w = find_warning(reg.warnings(), kind, c.tool);
        REQUIRE(w != nullptr);
        CHECK(w->backend == c.backend);
        CHECK(w->subject == c.tool);
    }
    return reg;
}

} // namespace

// ---------------------------------------------------------------------------------------
// Live tools, through the real runner

TEST_CASE("fault injection: a vendor tool that hangs is killed at its time limit") {
    // The probes' own limits are 10 s and more; the view cuts them to 200 ms.
    const auto reg = detect_with_broken_tools("sleep-forever", ah::warning_kind::tool_timed_out, 200ms);
    // The warning states the probe's limit, not the shortened one.
    const auto* w = find_warning(reg.warnings(), ah::warning_kind::tool_timed_out, "nvidia-smi");
    if (w) CHECK(w->message.find("10 s") != std::string::npos);
}

TEST_CASE("fault injection: a vendor tool killed by a signal") {
    const auto reg = detect_with_broken_tools("signal 11", ah::warning_kind::tool_signalled);
    for (const auto& w : reg.warnings())
        if (w.kind == ah::warning_kind::tool_signalled) CHECK(w.code == 11);
}

TEST_CASE("fault injection: a vendor tool that exits non-zero") {
    const auto reg = detect_with_broken_tools("exit 3", ah::warning_kind::tool_failed);
    for (const auto& w : reg.warnings())
        if (w.kind == ah::warning_kind::tool_failed) CHECK(w.code == 3);
}

TEST_CASE("fault injection: a vendor tool that exits 0 and prints nothing") {
    detect_with_broken_tools("empty", ah::warning_kind::parse_error);
}

TEST_CASE("fault injection: a vendor tool that prints garbage bytes") {
    detect_with_broken_tools("garbage 65536", ah::warning_kind::parse_error);
}

TEST_CASE("fault injection: a vendor tool that prints invalid UTF-8 and NUL bytes") {
    test::scratch_dir data;
    data.write("out", std::string("\xff\xfe\xc3\x28 \xed\xa0\x80 \xf8\x88\x80\x80\x80\n\0\0\0,\0, \xc0\xaf\n", 26));
    detect_with_broken_tools("cat " + (data.path() / "out").string(), ah::warning_kind::parse_error);
}

TEST_CASE("fault injection: a vendor tool that prints 100 MB is cut at its cap") {
    detect_with_broken_tools("spew 100000000", ah::warning_kind::output_truncated);
}

#if AI_HWACCEL_BACKEND_CUDA
TEST_CASE("fault injection: nvidia-smi rows with invalid UTF-8, NUL bytes and numbers past 2^64") {
    machine_tree tree;
    tool_bin bin{"nvidia-smi"};
    const tree_with_live_tools sys(tree.root(), bin.dir.path(), 10s);
    test::scratch_dir data;
    ah::cuda_probe probe;

    SUBCASE("memory.total past 2^64") {
        data.write("out", nvidia_row("NVIDIA H100 80GB HBM3", "99999999999999999999999"));
        const fake_mode m("cat " + (data.path() / "out").string());
        const auto out = probe.probe(sys);
        INFO(test::warnings_text(out.warnings));
        // A number no device reports, not a malformed one.
        const auto* w = find_warning(out.warnings, ah::warning_kind::value_out_of_range, "nvidia-smi");
        REQUIRE(w != nullptr);
        CHECK(w->backend == ah::backend_id::cuda);
        CHECK(w->message.find("memory.total") != std::string::npos);
        // Never a wrapped or clamped figure.
        for (const auto& d : out.devices)
            if (d.memory_bytes) CHECK(d.memory_bytes.from != ah::origin::tool);
        const auto reg = ah::detector::all().run(sys);
        check_cpu_intact(reg);
        CHECK(find_warning(reg.warnings(), ah::warning_kind::value_out_of_range, "nvidia-smi") != nullptr);
    }
    SUBCASE("a name with invalid UTF-8 and NUL bytes") {
        data.write("out", nvidia_row(std::string("NVIDIA \xff\xfe\0\0 H100", 15), "81559"));
        const fake_mode m("cat " + (data.path() / "out").string());
        const auto out = probe.probe(sys);
        INFO(test::warnings_text(out.warnings));
        CHECK(find_warning(out.warnings, ah::warning_kind::parse_error, "nvidia-smi") != nullptr);
        for (const auto& d : out.devices) {
            const auto name = d.name.view();
            CHECK(name.find('\0') == std::string_view::npos);
            CHECK(name.find('\xff') == std::string_view::npos);
        }
    }
}

#endif

// The parsers themselves: a number past 2^64 is a value out of range (as a memory size no
// device has), a word where a number belongs is a parse error.
namespace {
template <class Result>
bool has_problem(const Result& r, ah::warning_kind kind, std::string_view field) {
    return std::any_of(r.problems.begin(), r.problems.end(), [&](const ah::parse_problem& p) {
        return p.kind == kind && p.message.find(field) != std::string::npos;
    });
}
} // namespace

#if AI_HWACCEL_BACKEND_CUDA
TEST_CASE("fault injection: nvidia-smi CSV numbers past 2^64 and words where numbers belong") {
    const auto r = ah::parse_nvidia_smi_query_csv("index, memory.total [MiB], power.draw [W]\n"
                                                  "99999999999999999999999, 81559 MiB, 70 W\n"
                                                  "1, 99999999999999999999999 MiB, lots W\n");
    INFO(r.problems.size());
    CHECK(has_problem(r, ah::warning_kind::value_out_of_range, "index"));
    CHECK(has_problem(r, ah::warning_kind::value_out_of_range, "memory.total"));
    CHECK(has_problem(r, ah::warning_kind::parse_error, "power.draw"));
}
#endif

#if AI_HWACCEL_BACKEND_GAUDI
TEST_CASE("fault injection: hl-smi CSV numbers past 2^64 and words where numbers belong") {
    const auto r = ah::parse_hl_smi_query_csv("index, memory.total [MiB], temperature.aip [C]\n"
                                              "99999999999999999999999, 98304 MiB, 30 C\n"
                                              "1, 99999999999999999999999 MiB, warm C\n");
    CHECK(has_problem(r, ah::warning_kind::value_out_of_range, "index"));
    CHECK(has_problem(r, ah::warning_kind::value_out_of_range, "memory.total"));
    CHECK(has_problem(r, ah::warning_kind::parse_error, "temperature.aip"));
}
#endif

// ---------------------------------------------------------------------------------------
// Machine trees

namespace {

// An AMD GPU bound to amdgpu, as /sys/class/drm/card0 shows it (hand-made values).
void write_amdgpu_card(const machine_tree& t) {
    const std::string dev = "sys/class/drm/card0/device/";
    t.dir.write(dev + "vendor", "0x1002\n");
    t.dir.write(dev + "device", "0x740f\n");
    t.dir.write(dev + "mem_info_vram_used", "1048576\n");
    t.dir.write(dev + "product_name", "AMD Instinct MI210\n");
    t.dir.write("sys/bus/pci/drivers/amdgpu/.keep", "");
    t.link(dev + "driver", "../../../../bus/pci/drivers/amdgpu");
}

ah::accelerator_registry detect_tree(const machine_tree& t) { return ah::detector::all().run(ah::host_system(t.root())); }

} // namespace

#if AI_HWACCEL_BACKEND_ROCM
TEST_CASE("fault injection: an amdgpu card whose mem_info_vram_total is empty") {
    machine_tree tree;
    write_amdgpu_card(tree);
    tree.dir.write("sys/class/drm/card0/device/mem_info_vram_total", "");
    const auto reg = detect_tree(tree);
    INFO(test::warnings_text(reg.warnings()));
    check_cpu_intact(reg);
    const auto* w = find_warning(reg.warnings(), ah::warning_kind::parse_error, "mem_info_vram_total");
    REQUIRE(w != nullptr);
    CHECK(w->backend == ah::backend_id::rocm);
    // The card is still listed, without a memory figure from the kernel.
    const auto gpus = std::count_if(reg.all().begin(), reg.all().end(),
                                    [](const ah::accelerator_profile& p) { return p.kind == ah::device_kind::rocm_gpu; });
    CHECK(gpus == 1);
}

TEST_CASE("fault injection: sysfs values past 2^64") {
    machine_tree tree;
    write_amdgpu_card(tree);
    tree.dir.write("sys/class/drm/card0/device/mem_info_vram_total", "99999999999999999999999\n");
    tree.dir.write("sys/bus/pci/devices/0000:03:00.0/vendor", "0x1002\n");
    tree.dir.write("sys/bus/pci/devices/0000:03:00.0/class", "0x030000\n");
    tree.dir.write("sys/bus/pci/devices/0000:03:00.0/numa_node", "99999999999999999999999\n");
    const auto reg = detect_tree(tree);
    INFO(test::warnings_text(reg.warnings()));
    check_cpu_intact(reg);
    CHECK(find_warning(reg.warnings(), ah::warning_kind::value_out_of_range, "mem_info_vram_total") != nullptr);
    CHECK(find_warning(reg.warnings(), ah::warning_kind::value_out_of_range, "0000:03:00.0/numa_node") != nullptr);
    for (const auto& d : reg.all())
        if (d.kind == ah::device_kind::rocm_gpu && d.memory_bytes) CHECK(d.memory_bytes.from != ah::origin::sysfs);
}

#endif

TEST_CASE("fault injection: unreadable files (mode 000)") {
    machine_tree tree;
    write_amdgpu_card(tree);
    tree.dir.write("sys/class/drm/card0/device/mem_info_vram_total", "68702699520\n");
    if (::geteuid() == 0) {
        // Root reads whatever the mode says; the same denials through a view instead.
        MESSAGE("running as root: mode 000 denies nothing, so the denials come from the view");
        test::denying_view sys(tree.root());
        sys.denied = {"/proc/cpuinfo", "/sys/class/drm/card0/device/mem_info_vram_total"};
        const auto reg = ah::detector::all().run(sys);
        INFO(test::warnings_text(reg.warnings()));
        REQUIRE(reg.size() >= 1);
        CHECK(reg.all()[0].is_cpu());
        CHECK(*reg.host().memory.total_bytes == 16384000 * kib); // meminfo was readable
        CHECK(find_warning(reg.warnings(), ah::warning_kind::permission_denied, "/proc/cpuinfo") != nullptr);
        if (AI_HWACCEL_BACKEND_ROCM)
            CHECK(find_warning(reg.warnings(), ah::warning_kind::permission_denied, "mem_info_vram_total") != nullptr);
        return;
    }
    fs::permissions(tree.at("proc/cpuinfo"), fs::perms::none);
    fs::permissions(tree.at("sys/class/drm/card0/device/mem_info_vram_total"), fs::perms::none);
    const auto reg = detect_tree(tree);
    INFO(test::warnings_text(reg.warnings()));
    REQUIRE(reg.size() >= 1);
    CHECK(reg.all()[0].is_cpu());
    CHECK(*reg.host().memory.total_bytes == 16384000 * kib);
    CHECK(find_warning(reg.warnings(), ah::warning_kind::permission_denied, "/proc/cpuinfo") != nullptr);
    if (AI_HWACCEL_BACKEND_ROCM)
        CHECK(find_warning(reg.warnings(), ah::warning_kind::permission_denied, "mem_info_vram_total") != nullptr);
}

TEST_CASE("fault injection: symbolic link loops") {
    machine_tree tree;
    SUBCASE("a PCI function's link in a loop") {
        // /sys/bus/pci/devices/0000:01:00.0 -> ../../../devices/loop-b -> …/0000:01:00.0
        tree.link("sys/bus/pci/devices/0000:01:00.0", "../../../devices/loop-b");
        tree.link("sys/devices/loop-b", "../bus/pci/devices/0000:01:00.0");
        const auto reg = detect_tree(tree);
        INFO(test::warnings_text(reg.warnings()));
        check_cpu_intact(reg);
        CHECK(find_warning(reg.warnings(), ah::warning_kind::read_error, "0000:01:00.0") != nullptr);
        CHECK(reg.system().pci_devices.empty());
    }
    SUBCASE("a folder the probes list is a loop") {
        tree.link("sys/bus/pci/devices", "devices-b");
        tree.link("sys/bus/pci/devices-b", "devices");
        tree.link("sys/class/drm", "drm-b");
        tree.link("sys/class/drm-b", "drm");
        const auto reg = detect_tree(tree);
        INFO(test::warnings_text(reg.warnings()));
        check_cpu_intact(reg);
        CHECK(reg.size() == 1);
        CHECK(find_warning(reg.warnings(), ah::warning_kind::read_error, "/sys/bus/pci/devices") != nullptr);
        if (AI_HWACCEL_BACKEND_ROCM || AI_HWACCEL_BACKEND_INTEL_GPU) // the probes that list DRM cards
            CHECK(find_warning(reg.warnings(), ah::warning_kind::read_error, "/sys/class/drm") != nullptr);
    }
    SUBCASE("a folder that is absent, or a file where a folder belongs") {
        tree.dir.write("sys/block", "not a folder\n");
        const auto reg = detect_tree(tree);
        INFO(test::warnings_text(reg.warnings()));
        check_cpu_intact(reg);
        CHECK(find_warning(reg.warnings(), ah::warning_kind::read_error, "/sys/block") != nullptr);
        // Absent folders are normal (no NUMA, no PCI bus in a container): no warning.
        CHECK(find_warning(reg.warnings(), ah::warning_kind::read_error, "/sys/devices/system/node") == nullptr);
        CHECK(find_warning(reg.warnings(), ah::warning_kind::read_error, "/sys/bus/pci/devices") == nullptr);
    }
    SUBCASE("a DRM card's device link in a loop") {
        tree.link("sys/class/drm/card0/device", "device-b");
        tree.link("sys/class/drm/card0/device-b", "device");
        const auto reg = detect_tree(tree);
        INFO(test::warnings_text(reg.warnings()));
        check_cpu_intact(reg);
        if (AI_HWACCEL_BACKEND_ROCM) // the ROCm probe reads the DRM cards
            CHECK(find_warning(reg.warnings(), ah::warning_kind::read_error, "card0/device") != nullptr);
    }
}

TEST_CASE("fault injection: /proc/meminfo without MemTotal") {
    machine_tree tree;
    tree.dir.write("proc/meminfo", "MemFree:         1000000 kB\nMemAvailable:    8192000 kB\n");
    const auto reg = detect_tree(tree);
    INFO(test::warnings_text(reg.warnings()));
    REQUIRE(reg.size() >= 1);
    CHECK(reg.all()[0].is_cpu());
    CHECK(reg.host().cpu.model == "Test CPU @ 2.00GHz");
    CHECK_FALSE(reg.host().memory.total_bytes);
    const auto* w = find_warning(reg.warnings(), ah::warning_kind::parse_error, "/proc/meminfo");
    REQUIRE(w != nullptr);
    CHECK(w->subject == "/proc/meminfo");
}

TEST_CASE("fault injection: /proc/cpuinfo empty or binary") {
    machine_tree tree;
    SUBCASE("empty") { tree.dir.write("proc/cpuinfo", ""); }
    SUBCASE("binary") {
        std::string bytes;
        for (int i = 0; i < 4096; ++i) bytes += static_cast<char>((i * 131 + 7) & 0xff);
        tree.dir.write("proc/cpuinfo", bytes);
    }
    const auto reg = detect_tree(tree);
    INFO(test::warnings_text(reg.warnings()));
    REQUIRE(reg.size() >= 1);
    CHECK(reg.all()[0].is_cpu());
    CHECK(*reg.host().memory.total_bytes == 16384000 * kib);
    const auto* w = find_warning(reg.warnings(), ah::warning_kind::parse_error, "/proc/cpuinfo");
    REQUIRE(w != nullptr);
    CHECK(w->subject == "/proc/cpuinfo");
}

TEST_CASE("fault injection: a PCI function whose class is garbage") {
    machine_tree tree;
    tree.dir.write("sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n");
    tree.dir.write("sys/bus/pci/devices/0000:01:00.0/device", "0x2330\n");
    tree.dir.write("sys/bus/pci/devices/0000:01:00.0/class", std::string("\x01\xfe garbage\0\n", 12));
    const auto reg = detect_tree(tree);
    INFO(test::warnings_text(reg.warnings()));
    check_cpu_intact(reg);
    const auto* w = find_warning(reg.warnings(), ah::warning_kind::parse_error, "0000:01:00.0/class");
    REQUIRE(w != nullptr);
    CHECK(w->subject == "/sys/bus/pci/devices/0000:01:00.0/class");
    // The function is still listed, with the ids that were readable.
    REQUIRE(reg.system().pci_devices.size() == 1);
    CHECK(reg.system().pci_devices[0].vendor_id == 0x10de);
}

#if AI_HWACCEL_BACKEND_CUDA && AI_HWACCEL_BACKEND_GAUDI
TEST_CASE("fault injection: replayed tool runs that timed out or were killed") {
    machine_tree tree;
    const std::string query = ah::command_line_of(ah::nvidia_smi_query_request().argv);
    const std::string hl = ah::command_line_of(ah::hl_smi_query_request().argv);
    SUBCASE("timeout") {
        tree.dir.write("ai-hwaccel-tools/index", "timeout\t-\t" + query + "\ntimeout\t-\t" + hl + "\n");
        const auto reg = detect_tree(tree);
        INFO(test::warnings_text(reg.warnings()));
        check_cpu_intact(reg);
        for (const std::string tool : {"nvidia-smi", "hl-smi"}) {
            CAPTURE(tool);
            const auto* w = find_warning(reg.warnings(), ah::warning_kind::tool_timed_out, tool);
            REQUIRE(w != nullptr);
            CHECK(w->subject == tool);
        }
    }
    SUBCASE("signal") {
        tree.dir.write("ai-hwaccel-tools/index", "signal:11\t-\t" + query + "\nsignal:9\t-\t" + hl + "\n");
        const auto reg = detect_tree(tree);
        INFO(test::warnings_text(reg.warnings()));
        check_cpu_intact(reg);
        const auto* w = find_warning(reg.warnings(), ah::warning_kind::tool_signalled, "nvidia-smi");
        REQUIRE(w != nullptr);
        CHECK(w->code == 11);
        CHECK(w->backend == ah::backend_id::cuda);
        w = find_warning(reg.warnings(), ah::warning_kind::tool_signalled, "hl-smi");
        REQUIRE(w != nullptr);
        CHECK(w->code == 9);
    }
    SUBCASE("an index line that names a missing output") {
        tree.dir.write("ai-hwaccel-tools/index", "0\tgone.csv\t" + query + "\n");
        const auto reg = detect_tree(tree);
        INFO(test::warnings_text(reg.warnings()));
        check_cpu_intact(reg);
        CHECK(find_warning(reg.warnings(), ah::warning_kind::tool_not_executable, "nvidia-smi") != nullptr);
    }
}
#endif
