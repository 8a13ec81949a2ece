#include "ai_hwaccel/detect/cuda.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#if AI_HWACCEL_BACKEND_CUDA

namespace ah = ai_hwaccel;

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;

// The exact command line the probe's capture is keyed by.
constexpr const char* query_command =
    "nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,pci.device_id,memory.total,memory.used,memory.free,"
    "compute_cap,driver_version,power.limit,power.draw,temperature.gpu,utilization.gpu,clocks.max.memory,"
    "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max "
    "--format=csv,noheader,nounits";

} // namespace

static_assert(ah::backend_probe<ah::cuda_probe, ah::host_system>);
static_assert(ah::descriptor_of<ah::cuda_probe>().name == "cuda");

TEST_CASE("cuda_probe") {
    const auto request = ah::nvidia_smi_query_request();
    CHECK(ah::command_line_of(request.argv) == query_command);
    CHECK(request.timeout == std::chrono::seconds(10));

    SUBCASE("a captured query (hand-made q.csv)") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", std::string("0\tq.csv\t") + query_command + "\n");
        // Hand-made: an H100 SXM and a GPU whose power limit and memory clock are unavailable.
        dir.write("ai-hwaccel-tools/q.csv",
                  "0, GPU-11111111-2222-3333-4444-555555555555, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 0x233010DE, "
                  "81559, 1, 81003, 9.0, 550.90.07, 700.00, 71.50, 33, 0, 2619, 5, 5, 16, 16\n"
                  "1, GPU-66666666-7777-8888-9999-000000000000, NVIDIA A10, 00000000:07:00.0, 0x223610DE, "
                  "23028, 0, 22563, 8.6, 550.90.07, [N/A], 15.2, 30, 0, [Not Supported], 1, 4, 16, 16\n"
                  "garbage\n");
        const ah::host_system sys(dir.path().string());
        const auto out = ah::cuda_probe{}.probe(sys);
        REQUIRE(out.devices.size() == 2);
        CHECK(out.devices[0].name.view() == "NVIDIA H100 80GB HBM3");
        CHECK(*out.devices[0].memory_bytes == 81559 * mib);
        CHECK(out.devices[0].driver_version.view() == "550.90.07");
        CHECK(out.devices[0].pci_device_id == 0x2330);
        CHECK(out.devices[1].index == 1);
        CHECK(out.devices[1].name.view() == "NVIDIA A10");
        // power.limit unavailable from the tool: the catalogue's, marked as such.
        CHECK(out.devices[1].power_limit_watts.from != ah::origin::tool);
        REQUIRE(out.warnings.size() == 1); // the garbage line
        CHECK(out.warnings[0].kind == ah::warning_kind::parse_error);
        CHECK(out.warnings[0].backend == ah::backend_id::cuda);
        CHECK(out.warnings[0].subject == "nvidia-smi");
    }
    SUBCASE("tool absent, no NVIDIA card: nothing to say") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tq.csv\tnvidia-smi -L\n");
        dir.write("sys/bus/pci/devices/0000:00:02.0/vendor", "0x8086\n"); // an Intel iGPU
        dir.write("sys/bus/pci/devices/0000:00:02.0/class", "0x030000\n");
        dir.write("sys/bus/pci/devices/0000:00:1f.3/vendor", "0x10de\n"); // NVIDIA, not a GPU (audio)
        dir.write("sys/bus/pci/devices/0000:00:1f.3/class", "0x040300\n");
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.warnings.empty());
    }
    SUBCASE("tool absent, an NVIDIA card on the bus: tool_not_found") {
        test::scratch_dir dir;
        dir.write("sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n");
        dir.write("sys/bus/pci/devices/0000:01:00.0/class", "0x030200\n");
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_not_found);
        CHECK(out.warnings[0].backend == ah::backend_id::cuda);
        CHECK(out.warnings[0].message.find("0000:01:00.0") != std::string::npos);
    }
    SUBCASE("exit status 9") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", std::string("9\t-\t") + query_command + "\n");
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_failed);
        CHECK(out.warnings[0].code == 9);
    }
    SUBCASE("timeout") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", std::string("timeout\t-\t") + query_command + "\n");
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_timed_out);
    }
}


#if AI_HWACCEL_OS_LINUX && defined(AI_HWACCEL_FAKE_NVML)
namespace {

// Sets an environment variable for one scope.
struct scoped_env {
    std::string name;
    scoped_env(const char* n, const std::string& v) : name(n) { ::setenv(n, v.c_str(), 1); }
    ~scoped_env() { ::unsetenv(name.c_str()); }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;
};

// Every field a profile carries, compared one by one so a failure names the field.
void check_same(const ah::accelerator_profile& a, const ah::accelerator_profile& b) {
    CHECK(a.kind == b.kind);
    CHECK(a.index == b.index);
    CHECK(a.available == b.available);
    CHECK(a.software == b.software);
    CHECK(a.unified_memory == b.unified_memory);
    CHECK(a.maker == b.maker);
    CHECK(a.name.view() == b.name.view());
    CHECK(a.uuid.view() == b.uuid.view());
    CHECK(a.pci == b.pci);
    CHECK(a.pci_device_id == b.pci_device_id);
    CHECK(a.arch.view() == b.arch.view());
    CHECK(a.driver_version.view() == b.driver_version.view());
    CHECK(a.memory_bytes == b.memory_bytes);
    CHECK(a.memory_used_bytes == b.memory_used_bytes);
    CHECK(a.memory_free_bytes == b.memory_free_bytes);
    CHECK(a.memory_bandwidth_gbps == b.memory_bandwidth_gbps);
    CHECK(a.peak_from == b.peak_from);
    CHECK(a.compute_units == b.compute_units);
    CHECK(a.pcie_current == b.pcie_current);
    CHECK(a.pcie_max == b.pcie_max);
    CHECK(a.temperature_c == b.temperature_c);
    CHECK(a.power_draw_watts == b.power_draw_watts);
    CHECK(a.power_limit_watts == b.power_limit_watts);
    CHECK(a.utilization_percent == b.utilization_percent);
    CHECK(a.spec == b.spec);
}

// A live view that finds no tools at all (no PATH, no vendor folders).
ah::host_system live_without_tools() {
    ah::tool_search none;
    none.path = std::string();
    none.vendor_dirs = false;
    return ah::host_system(std::string(), none);
}

} // namespace

TEST_CASE("cuda_probe: NVML and nvidia-smi give the same devices for one fixture") {
    const std::string machine = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-workstation-rtx4090";
    const std::string csv = machine + "/ai-hwaccel-tools/nvidia-smi-query.csv";
    scoped_env data("AI_HWACCEL_FAKE_NVML_DATA", csv);

    ah::cuda_probe through_nvml;
    through_nvml.nvml.library = AI_HWACCEL_FAKE_NVML;
    const auto a = through_nvml.probe(live_without_tools());
    INFO(test::warnings_text(a.warnings));
    CHECK(a.warnings.empty());

    const auto b = ah::cuda_probe{}.probe(ah::host_system(machine)); // replays nvidia-smi
    CHECK(b.warnings.empty());
    REQUIRE(a.devices.size() == 1);
    REQUIRE(b.devices.size() == 1);
    check_same(a.devices[0], b.devices[0]);
    CHECK(a.devices[0].name.view() == "NVIDIA GeForce RTX 4090");
    CHECK(*a.devices[0].memory_bytes == 24564 * mib);
    CHECK(a.devices[0].memory_bytes.from == ah::origin::tool);
}

TEST_CASE("cuda_probe: a failing NVML falls back to nvidia-smi and says why") {
    const std::string machine = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-workstation-rtx4090";
    scoped_env data("AI_HWACCEL_FAKE_NVML_DATA", machine + "/ai-hwaccel-tools/nvidia-smi-query.csv");
    scoped_env mode("AI_HWACCEL_FAKE_NVML_MODE", "init-fails");
    ah::cuda_probe p;
    p.nvml.library = AI_HWACCEL_FAKE_NVML;
    const auto out = p.probe(live_without_tools()); // and no nvidia-smi either
    CHECK(out.devices.empty());
    // The first warning is NVML's; a machine with an NVIDIA card adds nvidia-smi's absence.
    REQUIRE(!out.warnings.empty());
    CHECK(out.warnings[0].kind == ah::warning_kind::tool_failed);
    CHECK(out.warnings[0].subject == "NVML");
    CHECK(out.warnings[0].message.find("Driver Not Loaded") != std::string::npos);
    CHECK(out.warnings[0].message.find("nvidia-smi instead") != std::string::npos);
}

TEST_CASE("cuda_probe: no NVML on the machine is not worth a warning") {
    ah::cuda_probe p;
    p.nvml.library = "/nonexistent/libnvidia-ml.so.1";
    const auto out = p.probe(live_without_tools());
    CHECK(out.devices.empty());
    for (const auto& w : out.warnings) CHECK(w.subject != "NVML");
}

TEST_CASE("cuda_probe: a machine tree never loads NVML") {
    scoped_env mode("AI_HWACCEL_FAKE_NVML_MODE", "init-fails"); // would warn if loaded
    test::scratch_dir dir;
    ah::cuda_probe p;
    p.nvml.library = AI_HWACCEL_FAKE_NVML;
    const auto out = p.probe(ah::host_system(dir.path().string()));
    CHECK(out.devices.empty());
    CHECK(out.warnings.empty());
}
#endif

#endif // AI_HWACCEL_BACKEND_CUDA
