#include "ai_hwaccel/detect/cuda.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#if AI_HWACCEL_BACKEND_CUDA

#include "ai_hwaccel/detect/detect.hpp"

namespace ah = ai_hwaccel;

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;

// The exact command line the probe's capture is keyed by.
constexpr const char* query_command =
    "nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,pci.device_id,memory.total,memory.used,memory.free,"
    "compute_cap,driver_version,power.limit,power.draw,temperature.gpu,utilization.gpu,clocks.max.memory,"
    "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,mig.mode.current "
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
                  "81559, 1, 81003, 9.0, 550.90.07, 700.00, 71.50, 33, 0, 2619, 5, 5, 16, 16, Disabled\n"
                  "1, GPU-66666666-7777-8888-9999-000000000000, NVIDIA A10, 00000000:07:00.0, 0x223610DE, "
                  "23028, 0, 22563, 8.6, 550.90.07, [N/A], 15.2, 30, 0, [Not Supported], 1, 4, 16, 16, [N/A]\n"
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
    SUBCASE("tool absent on a Jetson Orin (JetPack 5): its GPU from the device tree, no warning") {
        // Hand-made: the nvgpu platform device's compatible and the root compatible of an AGX
        // Orin 64GB developer kit (carrier p3737-0000, module p3701-0005), NUL-terminated.
        using namespace std::string_literals;
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tq.csv\tnvidia-smi -L\n");
        dir.write("sys/devices/platform/gpu.0/of_node/compatible", "nvidia,ga10b\0"s);
        dir.write("sys/firmware/devicetree/base/compatible",
                  "nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0"s);
        dir.write("proc/meminfo", "MemTotal:       65231200 kB\nMemAvailable:   60233084 kB\n");
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        const auto& d = out.devices[0];
        CHECK(d.name.view() == "Orin (nvgpu)");
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA Jetson AGX Orin 64GB");
        CHECK(d.memory_bytes.value_or(0) == 65231200ull * 1024);
        CHECK(d.memory_bandwidth_gbps.value_or(0) == doctest::Approx(204.8));
        CHECK(d.arch.view() == "8.7");
        // Without /proc/meminfo the module's nominal memory (the row's) stands.
        std::filesystem::remove(dir.path() / "proc/meminfo");
        const auto nominal = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(nominal.devices.size() == 1);
        CHECK(nominal.devices[0].memory_bytes.value_or(0) == 64ull << 30);
        CHECK(nominal.devices[0].memory_bytes.from == ah::origin::catalogue);
        // Another GPU there (a Xavier's gv11b), or none: nothing is listed.
        dir.write("sys/devices/platform/gpu.0/of_node/compatible", "nvidia,gv11b\0"s);
        CHECK(ah::cuda_probe{}.probe(ah::host_system(dir.path().string())).devices.empty());
        std::filesystem::remove_all(dir.path() / "sys/devices/platform");
        CHECK(ah::cuda_probe{}.probe(ah::host_system(dir.path().string())).devices.empty());
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


namespace {

// One hand-made row of the probe's query: index, UUID, name, bus id, PCI id, memory, MIG.
std::string query_row(int index, const std::string& name, const std::string& bus, const char* pci_id,
                      int mib_total, const char* cc, const char* mig = "[N/A]") {
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-%08d-0000-0000-0000-000000000000", index);
    return std::to_string(index) + ", " + uuid + ", " + name + ", " + bus + ", " + pci_id + ", " +
           std::to_string(mib_total) + ", 0, " + std::to_string(mib_total) + ", " + cc +
           ", 535.161.08, 700.00, 70.00, 30, 0, 2619, 5, 5, 16, 16, " + mig + "\n";
}

// A machine tree whose tools are the given (command line, output) pairs.
void replay(test::scratch_dir& dir, const std::vector<std::pair<std::string, std::string>>& runs) {
    std::string index;
    int n = 0;
    for (const auto& [command, output] : runs) {
        const std::string file = "out" + std::to_string(n++) + ".txt";
        dir.write("ai-hwaccel-tools/" + file, output);
        index += "0\t" + file + "\t" + command + "\n";
    }
    dir.write("ai-hwaccel-tools/index", index);
}

} // namespace

TEST_CASE("cuda_probe: MIG instances are the devices CUDA sees") {
    const auto list = test::capture("nvidia-smi/L_a100-80gb-sxm4_mig-7x1g.10gb.txt");
    if (!list) return;
    test::scratch_dir dir;
    // Hand-made query row for the capture's GPU, in MIG mode.
    replay(dir, {{query_command, query_row(0, "NVIDIA A100-SXM4-80GB", "00000000:07:00.0", "0x20B210DE", 81920,
                                           "8.0", "Enabled")},
                 {"nvidia-smi -L", *list}});
    const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
    INFO(test::warnings_text(out.warnings));
    CHECK(out.warnings.empty());
    REQUIRE(out.devices.size() == 8);
    CHECK_FALSE(out.devices[0].available); // the whole GPU: not usable by CUDA in MIG mode
    CHECK(out.devices[0].memory_bytes.has_value());
    for (std::size_t i = 1; i < 8; ++i) {
        const auto& m = out.devices[i];
        CHECK(m.available);
        CHECK(m.name.view() == "NVIDIA A100-SXM4-80GB MIG 1g.10gb");
        CHECK(m.uuid.view().starts_with("MIG-"));
        CHECK(m.arch.view() == "8.0");
        CHECK_FALSE(m.memory_bytes.has_value()); // "10gb" is a product size, not a measurement
    }
    CHECK(out.devices[1].uuid.view() == "MIG-feb88891-0321-5fef-9c87-d4af3b54259e");
}

TEST_CASE("cuda_probe: a GPU in MIG mode is not usable whole, even when nvidia-smi -L prints nothing") {
    test::scratch_dir dir;
    replay(dir, {{query_command, query_row(0, "NVIDIA A100-SXM4-80GB", "00000000:07:00.0", "0x20B210DE", 81920,
                                           "8.0", "Enabled") +
                                     query_row(1, "NVIDIA A100-SXM4-80GB", "00000000:0F:00.0", "0x20B210DE", 81920,
                                               "8.0", "Disabled")},
                 {"nvidia-smi -L", ""}});
    const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
    INFO(test::warnings_text(out.warnings));
    REQUIRE(out.devices.size() == 2);
    CHECK_FALSE(out.devices[0].available);
    CHECK(out.devices[1].available);
    REQUIRE(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 1);
    CHECK(out.warnings[0].message == "exited with status 0 but printed nothing");
}

TEST_CASE("cuda_probe: topo -m or nvlink -s exiting 0 with nothing is said") {
    const auto topo = test::capture("nvidia-smi/topo-m_2x-nv12_8x-mlx5.txt");
    if (!topo) return;
    const std::string rows =
        query_row(0, "NVIDIA A100-SXM4-80GB", "00000000:07:00.0", "0x20B210DE", 81920, "8.0") +
        query_row(1, "NVIDIA A100-SXM4-80GB", "00000000:0F:00.0", "0x20B210DE", 81920, "8.0");
    SUBCASE("topo -m: no links, a parse error") {
        test::scratch_dir dir;
        replay(dir, {{query_command, rows}, {"nvidia-smi topo -m", ""}});
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.size() == 2);
        CHECK(out.links.empty());
        CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 1);
    }
    SUBCASE("nvlink -s: the pair kept at the catalogue's speed, a parse error") {
        test::scratch_dir dir;
        replay(dir, {{query_command, rows}, {"nvidia-smi topo -m", *topo}, {"nvidia-smi nvlink -s", ""}});
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        INFO(test::warnings_text(out.warnings));
        REQUIRE(out.links.size() == 1);
        CHECK(out.links[0].bandwidth_gbps.from != ah::origin::tool);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 1);
    }
}

TEST_CASE("cuda_probe: CUDA_VISIBLE_DEVICES counts the MIG instances, not their parent") {
    // CUDA does not number a MIG-enabled GPU, only its instances: index 0 is the first
    // instance, which stays usable; the others are hidden.
    const auto list = test::capture("nvidia-smi/L_a100-80gb-pcie_mig-2x3g.40gb.txt");
    if (!list) return;
    test::scratch_dir dir;
    replay(dir, {{query_command, query_row(0, "NVIDIA A100 80GB PCIe", "00000000:17:00.0", "0x20B510DE", 81920,
                                           "8.0", "Enabled")},
                 {"nvidia-smi -L", *list}});
    dir.write("proc/self/environ", std::string("CUDA_VISIBLE_DEVICES=0") + '\0');
    const auto reg = ah::detector::none().with(ah::backend_id::cuda).parallel(false).run(ah::host_system(dir.path().string()));
    const auto devices = reg.all();
    REQUIRE(devices.size() == 3);
    CHECK_FALSE(devices[0].available); // the parent
    CHECK(devices[1].available);
    CHECK(devices[1].name.view().ends_with("MIG 3g.40gb"));
    CHECK_FALSE(devices[2].available);
    CHECK(test::count_kind(reg.warnings(), ah::warning_kind::hidden_by_mask) == 1);
}

TEST_CASE("cuda_probe: CUDA_VISIBLE_DEVICES indices over unlike GPUs") {
    // CUDA orders unlike GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; the indices
    // are read in nvidia-smi's PCI order, and said to be. Alike GPUs, a PCI order or UUIDs:
    // nothing to say.
    test::scratch_dir dir;
    replay(dir, {{query_command, query_row(0, "NVIDIA GeForce RTX 3060", "00000000:01:00.0", "0x250310DE", 12288, "8.6") +
                                     query_row(1, "NVIDIA GeForce RTX 4090", "00000000:02:00.0", "0x268410DE", 24564, "8.9")}});
    const auto run = [&](const std::string& environ_text) {
        dir.write("proc/self/environ", environ_text);
        return ah::detector::none().with(ah::backend_id::cuda).parallel(false).run(ah::host_system(dir.path().string()));
    };
    const std::string nul(1, '\0');
    auto reg = run("CUDA_VISIBLE_DEVICES=0" + nul);
    CHECK(test::count_kind(reg.warnings(), ah::warning_kind::disagreement) == 1);
    CHECK(reg.all()[0].available);
    reg = run("CUDA_VISIBLE_DEVICES=0" + nul + "CUDA_DEVICE_ORDER=PCI_BUS_ID" + nul);
    CHECK(test::count_kind(reg.warnings(), ah::warning_kind::disagreement) == 0);
    reg = run("CUDA_VISIBLE_DEVICES=GPU-00000001" + nul);
    CHECK(test::count_kind(reg.warnings(), ah::warning_kind::disagreement) == 0);
    CHECK(reg.all()[1].available);
    CHECK_FALSE(reg.all()[0].available);
}

TEST_CASE("cuda_probe: an nvidia-smi older than R510, which knows no compute_cap") {
    // What such an nvidia-smi prints for the whole query (on stdout, status 2; quoted in
    // NVIDIA/TensorRT-LLM#735 and canonical/inference-snaps#89); asked again without the
    // field, it answers, and the catalogue gives the architecture.
    const std::string short_command = ah::command_line_of(ah::nvidia_smi_query_request("compute_cap").argv);
    CHECK(short_command.find("compute_cap") == std::string::npos);
    test::scratch_dir dir;
    dir.write("ai-hwaccel-tools/refused.txt", "Field \"compute_cap\" is not a valid field to query.\n\n");
    dir.write("ai-hwaccel-tools/rows.csv", "0, GPU-00000000-0000-0000-0000-000000000000, Tesla V100-SXM2-16GB, "
                                           "00000000:3B:00.0, 0x1DB110DE, 16160, 0, 16160, 470.82.01, 300.00, 40.00, "
                                           "30, 0, 877, 3, 3, 16, 16, [N/A]\n");
    dir.write("ai-hwaccel-tools/index", std::string("2\trefused.txt\t") + query_command + "\n0\trows.csv\t" +
                                            short_command + "\n");
    const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
    INFO(test::warnings_text(out.warnings));
    CHECK(out.warnings.empty());
    REQUIRE(out.devices.size() == 1);
    CHECK(out.devices[0].name.view() == "Tesla V100-SXM2-16GB");
    CHECK(*out.devices[0].memory_bytes == 16160 * mib);
    REQUIRE(out.devices[0].spec != nullptr);
    CHECK(out.devices[0].arch.view() == "7.0");
}

TEST_CASE("cuda_probe: nvidia-smi failing says why from stdout, and the driver's files list the GPUs") {
    // nvidia-smi prints its reasons on stdout (status 18: driver and library differ).
    test::scratch_dir dir;
    dir.write("ai-hwaccel-tools/fail.txt", "Failed to initialize NVML: Driver/library version mismatch\n");
    dir.write("ai-hwaccel-tools/index", std::string("18\tfail.txt\t") + query_command + "\n");
    dir.write("proc/driver/nvidia/gpus/0000:01:00.0/information",
              "Model: \t\t NVIDIA GeForce RTX 4090\nBus Location: \t 0000:01:00.0\nDevice Minor: \t 0\n");
    dir.write("sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n");
    dir.write("sys/bus/pci/devices/0000:01:00.0/device", "0x2684\n");
    dir.write("sys/bus/pci/devices/0000:01:00.0/class", "0x030000\n");
    const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
    REQUIRE(out.warnings.size() == 1);
    CHECK(out.warnings[0].kind == ah::warning_kind::tool_failed);
    CHECK(out.warnings[0].message == "exited with status 18: Failed to initialize NVML: Driver/library version mismatch");
    REQUIRE(out.devices.size() == 1);
    CHECK(out.devices[0].name.view() == "NVIDIA GeForce RTX 4090");
}

TEST_CASE("cuda_probe: a GPU nvidia-smi cannot open is listed unavailable, and the others' rows are kept") {
    // One GPU needs a reset (its fields say so), another has fallen off the bus (nvidia-smi
    // prints "Unable to determine the device handle…" in place of its row and exits non-zero).
    // Hand-made rows in the shape of the 8 x H100 machine's.
    const std::string row0 = "0, GPU-11111111-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3, 00000000:19:00.0, "
                             "0x233010DE, 81559, 0, 81004, 9.0, 535.161.08, 700.00, 70.00, 30, 0, 2619, 5, 5, 16, "
                             "16, Disabled\n";
    const std::string row1 = "1, GPU-22222222-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3, 00000000:3B:00.0, "
                             "0x233010DE, [GPU requires reset], [GPU requires reset], [GPU requires reset], 9.0, "
                             "535.161.08, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n";
    const std::string lost = "Unable to determine the device handle for GPU0000:4C:00.0: Unknown Error\n";
    const std::string row3 = "3, GPU-44444444-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3, 00000000:5D:00.0, "
                             "0x233010DE, 81559, 0, 81004, 9.0, 535.161.08, 700.00, 70.00, 30, 0, 2619, 5, 5, 16, "
                             "16, Disabled\n";
    test::scratch_dir dir;
    dir.write("ai-hwaccel-tools/rows.csv", row0 + row1 + lost + row3);
    dir.write("ai-hwaccel-tools/index", std::string("15\trows.csv\t") + query_command + "\n");
    dir.write("proc/driver/nvidia/gpus/0000:4c:00.0/information",
              "Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t 0000:4c:00.0\nDevice Minor: \t 2\n");
    const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
    INFO(test::warnings_text(out.warnings));
    REQUIRE(out.devices.size() == 4);
    CHECK(out.devices[0].available);
    CHECK(*out.devices[0].memory_bytes == 81559 * mib);
    CHECK_FALSE(out.devices[1].available);
    CHECK_FALSE(out.devices[2].available);
    CHECK(out.devices[2].index == 2);
    CHECK(out.devices[2].name.view() == "NVIDIA H100 80GB HBM3"); // from the driver's files
    CHECK(out.devices[3].available);
    CHECK(out.devices[3].index == 3);
    CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 0);
    REQUIRE(test::count_kind(out.warnings, ah::warning_kind::probe_failed) == 2);
    REQUIRE(test::count_kind(out.warnings, ah::warning_kind::tool_failed) == 1);
    for (const auto& w : out.warnings) {
        if (w.kind == ah::warning_kind::tool_failed)
            CHECK(w.message == "exited with status 15: Unable to determine the device handle for GPU0000:4C:00.0: "
                               "Unknown Error; the rows it printed are kept");
        if (w.kind == ah::warning_kind::probe_failed)
            CHECK((w.message == "GPU 1 (0000:3b:00.0): memory.total reported \"[GPU requires reset]\"; listed, not used" ||
                   w.message == "GPU 2 (0000:4c:00.0): nvidia-smi cannot open it: \"Unknown Error\"; listed, not used"));
    }
}

namespace {
// A host whose nvidia-smi names a GPU it cannot open on stderr, with an error status.
struct lost_gpu_view : ah::host_system {
    using ah::host_system::host_system;
    ah::tool_result run(const ah::tool_request& request) const {
        auto r = ah::host_system::run(request);
        if (r.status == ah::tool_status::exited && r.out.find("GPU-1111") != std::string::npos) {
            r.exit_code = 15;
            r.err = "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error\n";
        }
        return r;
    }
};
} // namespace

TEST_CASE("cuda_probe: a GPU nvidia-smi names on stderr as lost fills the gap in the indices") {
    test::scratch_dir dir;
    dir.write("ai-hwaccel-tools/rows.csv",
              "0, GPU-11111111-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3, 00000000:19:00.0, 0x233010DE, "
              "81559, 0, 81004, 9.0, 535.161.08, 700.00, 70.00, 30, 0, 2619, 5, 5, 16, 16, Disabled\n"
              "2, GPU-33333333-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3, 00000000:4C:00.0, 0x233010DE, "
              "81559, 0, 81004, 9.0, 535.161.08, 700.00, 70.00, 30, 0, 2619, 5, 5, 16, 16, Disabled\n");
    dir.write("ai-hwaccel-tools/index", std::string("0\trows.csv\t") + query_command + "\n");
    const auto out = ah::cuda_probe{}.probe(lost_gpu_view(dir.path().string()));
    INFO(test::warnings_text(out.warnings));
    REQUIRE(out.devices.size() == 3);
    CHECK(out.devices[2].index == 1);
    CHECK_FALSE(out.devices[2].available);
    REQUIRE(out.devices[2].pci.has_value());
    CHECK(*out.devices[2].pci == *ah::parse_pci_address("0000:3b:00.0"));
    CHECK(out.devices[0].available);
    CHECK(out.devices[1].available);
    CHECK(test::count_kind(out.warnings, ah::warning_kind::probe_failed) == 1);
    REQUIRE(test::count_kind(out.warnings, ah::warning_kind::tool_failed) == 1);
    for (const auto& w : out.warnings)
        if (w.kind == ah::warning_kind::tool_failed)
            CHECK(w.message == "exited with status 15: Unable to determine the device handle for GPU 0000:3B:00.0: "
                               "Unknown Error; the rows it printed are kept");
}

// A GB10 (DGX Spark) shares the system's memory: nvidia-smi prints "[N/A]" in every memory
// column (as public output of the GB10 shows; this row is hand-made in that shape, with the
// bus address and PCI id a DGX Spark's nvidia-smi and lspci print). The probe gives it
// MemTotal and MemAvailable, here from a real arm64 /proc/meminfo.
TEST_CASE("cuda_probe: a GPU sharing the system's memory is given the host's") {
    const auto meminfo = test::capture("proc-meminfo/meminfo_huawei-kunpeng920_arm64.txt");
    if (!meminfo) return;
    const std::string gb10 = "0, GPU-00000000-0000-0000-0000-000000000000, NVIDIA GB10, 0000000F:01:00.0, 0x2E1210DE, "
                             "[N/A], [N/A], [N/A], 12.1, 580.95.05, [N/A], 4.50, 39, 0, [N/A], [N/A], [N/A], "
                             "[N/A], [N/A], [N/A]\n";
    SUBCASE("meminfo readable") {
        test::scratch_dir dir;
        replay(dir, {{query_command, gb10}});
        dir.write("proc/meminfo", *meminfo);
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        const auto& d = out.devices[0];
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA GB10");
        CHECK(d.unified_memory);
        CHECK(d.memory_bytes.value_or(0) == 527031224ull * 1024);
        CHECK(d.memory_bytes.from == ah::origin::sysfs);
        CHECK(d.memory_free_bytes.value_or(0) == 478155232ull * 1024);
        CHECK(d.memory_bandwidth_gbps.value_or(0) == 273);
    }
    SUBCASE("meminfo missing: the memory stays unknown, nothing else changes") {
        test::scratch_dir dir;
        replay(dir, {{query_command, gb10}});
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(out.devices.size() == 1);
        CHECK_FALSE(out.devices[0].memory_bytes.has_value());
        CHECK(out.devices[0].unified_memory);
    }
    SUBCASE("a Jetson's integrated GPU (nvgpu): the module from the device tree, the memory shared") {
        // JetPack 6's nvidia-smi names an Orin's GPU "Orin (nvgpu)" and prints "[N/A]" for
        // its memory (public reports of it, e.g. vllm-cli pull request 11); the rest of this
        // row is hand-made (compute capability 8.7, driver 540.4.0 as JetPack 6.1 reports).
        // The device tree's root compatible is the Orin Nano developer kit's.
        const std::string orin = "0, [N/A], Orin (nvgpu), [N/A], [N/A], [N/A], [N/A], [N/A], 8.7, 540.4.0, "
                                 "[N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n";
        using namespace std::string_literals;
        const auto compatible = "nvidia,p3768-0000+p3767-0005\0nvidia,p3767-0005\0nvidia,tegra234\0"s;
        for (const char* dt : {"sys/firmware/devicetree/base/compatible", "proc/device-tree/compatible", ""}) {
            CAPTURE(dt);
            test::scratch_dir dir;
            replay(dir, {{query_command, orin}});
            dir.write("proc/meminfo", *meminfo);
            if (*dt) dir.write(dt, compatible);
            const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
            INFO(test::warnings_text(out.warnings));
            REQUIRE(out.devices.size() == 1);
            const auto& d = out.devices[0];
            CHECK(d.name.view() == "Orin (nvgpu)");
            CHECK(d.unified_memory);
            CHECK(d.memory_bytes.value_or(0) == 527031224ull * 1024);
            CHECK(d.memory_free_bytes.value_or(0) == 478155232ull * 1024);
            if (*dt) { // the module's row: its bandwidth and peaks
                REQUIRE(d.spec != nullptr);
                CHECK(d.spec->name == "NVIDIA Jetson Orin Nano 8GB");
                CHECK(d.memory_bandwidth_gbps.value_or(0) == 68);
                CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
                CHECK(d.peak.int8 == doctest::Approx(20.5));
            } else { // no device tree: the sharing alone is known
                CHECK(d.spec == nullptr);
                CHECK_FALSE(d.memory_bandwidth_gbps.has_value());
            }
        }
        // The same board flashed for JetPack 6.2's Super modes: its model says so.
        test::scratch_dir dir;
        replay(dir, {{query_command, orin}});
        dir.write("proc/meminfo", *meminfo);
        dir.write("sys/firmware/devicetree/base/compatible", compatible);
        dir.write("sys/firmware/devicetree/base/model", "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"s +
                                                            '\0');
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(out.devices.size() == 1);
        REQUIRE(out.devices[0].spec != nullptr);
        CHECK(out.devices[0].spec->name == "NVIDIA Jetson Orin Nano 8GB Super");
        CHECK(out.devices[0].memory_bandwidth_gbps.value_or(0) == doctest::Approx(102.4));
    }
    SUBCASE("a Jetson Thor: one GPU name for both modules, the module from the device tree") {
        // JetPack 7's nvidia-smi names the GPU of both Thor modules "NVIDIA Thor" and prints
        // "[N/A]" for its memory (public reports: jetson_stats issue 885, vllm-playground pull
        // request 11); compute capability 11.0 and driver 595.78 as JetPack 7.2 reports them,
        // the rest hand-made. Root compatibles: the AGX Thor developer kit's (carrier
        // p4071-0000, module p3834-0008, jetson_stats issue 711) and a T4000 (p3834-0000) on
        // the same carrier, as meta-tegra's machine configuration names it.
        const std::string thor = "0, [N/A], NVIDIA Thor, [N/A], [N/A], [N/A], [N/A], [N/A], 11.0, 595.78, "
                                 "[N/A], [N/A], [N/A], 0, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n";
        using namespace std::string_literals;
        const std::pair<std::string, std::string_view> boards[] = {
            {"nvidia,p4071-0000+p3834-0008\0nvidia,p3834-0008\0nvidia,tegra264\0"s, "NVIDIA Jetson T5000"},
            {"nvidia,p4071-0000+p3834-0000\0nvidia,p3834-0000\0nvidia,tegra264\0"s, "NVIDIA Jetson T4000"},
            {"nvidia,p4071-0000+p3834-0009\0nvidia,tegra264\0"s, ""}, // a module with no row
            {"", ""},                                                     // no device tree
        };
        for (const auto& board : boards) {
            const std::string& compatible = board.first;
            const std::string_view row = board.second;
            CAPTURE(row);
            test::scratch_dir dir;
            replay(dir, {{query_command, thor}});
            dir.write("proc/meminfo", *meminfo);
            if (!compatible.empty()) dir.write("proc/device-tree/compatible", compatible);
            const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
            INFO(test::warnings_text(out.warnings));
            CHECK(out.warnings.empty());
            REQUIRE(out.devices.size() == 1);
            const auto& d = out.devices[0];
            CHECK(d.name.view() == "NVIDIA Thor");
            CHECK(d.arch.view() == "11.0");
            CHECK(d.unified_memory); // known from the name alone
            CHECK(d.memory_bytes.value_or(0) == 527031224ull * 1024);
            CHECK(d.memory_bytes.from == ah::origin::sysfs);
            if (row.empty()) {
                CHECK(d.spec == nullptr);
                CHECK_FALSE(d.memory_bandwidth_gbps.has_value());
                continue;
            }
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == row);
            CHECK(d.memory_bandwidth_gbps.value_or(0) == 273);
            CHECK(d.peak.fp4 == doctest::Approx(row == "NVIDIA Jetson T5000" ? 1035 : 600));
        }
    }
    SUBCASE("a GPU with memory of its own is left as nvidia-smi says") {
        test::scratch_dir dir;
        replay(dir, {{query_command, query_row(0, "NVIDIA H100 80GB HBM3", "00000000:19:00.0", "0x233010DE", 81559,
                                               "9.0")}});
        dir.write("proc/meminfo", *meminfo);
        const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].memory_bytes.value_or(0) == 81559 * mib);
        CHECK_FALSE(out.devices[0].unified_memory);
    }
}

TEST_CASE("cuda_probe: NVLink pairs from topo -m, their speed from nvlink -s") {
    const auto topo = test::capture("nvidia-smi/topo-m_2x-nv12_8x-mlx5.txt");
    const auto nvlink = test::capture("nvidia-smi/nvlink-status_a100.txt");
    if (!topo || !nvlink) return;
    test::scratch_dir dir;
    // Hand-made: two A100 SXM4 rows for the real two-GPU topology; the real nvlink status
    // (of an 8-GPU A100 machine) gives every GPU 12 links of 25 GB/s.
    replay(dir, {{query_command, query_row(0, "NVIDIA A100-SXM4-80GB", "00000000:07:00.0", "0x20B210DE", 81920, "8.0") +
                                     query_row(1, "NVIDIA A100-SXM4-80GB", "00000000:0F:00.0", "0x20B210DE", 81920,
                                               "8.0")},
                 {"nvidia-smi topo -m", *topo},
                 {"nvidia-smi nvlink -s", *nvlink}});
    const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
    INFO(test::warnings_text(out.warnings));
    CHECK(out.warnings.empty());
    REQUIRE(out.devices.size() == 2);
    for (const auto& d : out.devices) {
        REQUIRE(d.numa_node.has_value()); // "NUMA Affinity 1"
        CHECK(*d.numa_node == 1);
    }
    REQUIRE(out.links.size() == 1);
    const auto& l = out.links[0];
    CHECK(l.kind == ah::interconnect_kind::nvlink);
    CHECK(l.scope == ah::link_scope::intra_node);
    CHECK(l.devices == std::vector<std::uint32_t>{0, 1});
    REQUIRE(l.bandwidth_gbps.has_value());
    CHECK(*l.bandwidth_gbps == doctest::Approx(600.0)); // 12 links x 25 GB/s x 2 directions
    CHECK(l.bandwidth_gbps.from == ah::origin::tool);
}

TEST_CASE("cuda_probe: eight GPUs behind NVSwitch are one fabric, not 28 pairs") {
    test::scratch_dir dir;
    // Hand-made: an HGX H100 (bus ids of the real 8x H100 `-q` capture) whose topo -m shows
    // NV18 between every pair, as NVSwitch systems print it; no nvlink -s capture, so the
    // fabric's bandwidth is the catalogue's per-GPU NVLink figure.
    const char* buses[] = {"19", "3B", "4C", "5D", "9B", "BB", "CB", "DB"};
    std::string q, t = "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tCPU Affinity\tNUMA Affinity\n";
    for (int i = 0; i < 8; ++i) {
        q += query_row(i, "NVIDIA H100 80GB HBM3", std::string("00000000:") + buses[i] + ":00.0", "0x233010DE", 81559,
                       "9.0");
        t += "GPU" + std::to_string(i);
        for (int j = 0; j < 8; ++j) t += i == j ? "\t X " : "\tNV18";
        t += i < 4 ? "\t0-47,96-143\t0\n" : "\t48-95,144-191\t1\n";
    }
    t += "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n";
    replay(dir, {{query_command, q}, {"nvidia-smi topo -m", t}});
    const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
    INFO(test::warnings_text(out.warnings));
    CHECK(out.warnings.empty());
    REQUIRE(out.devices.size() == 8);
    CHECK(*out.devices[0].numa_node == 0);
    CHECK(*out.devices[7].numa_node == 1);
    REQUIRE(out.links.size() == 1);
    const auto& f = out.links[0];
    CHECK(f.kind == ah::interconnect_kind::nvswitch);
    CHECK(f.devices.size() == 8);
    REQUIRE(f.bandwidth_gbps.has_value());
    CHECK(*f.bandwidth_gbps == 900);
    CHECK(f.bandwidth_gbps.from == ah::origin::catalogue);
}

TEST_CASE("cuda_probe: without nvidia-smi the driver's files still find the cards") {
    test::scratch_dir dir;
    // Hand-made, in the layout of nv-procfs.c (NVIDIA's open kernel modules).
    dir.write("proc/driver/nvidia/gpus/0000:01:00.0/information",
              "Model: \t\t NVIDIA GeForce RTX 4090\nIRQ:   \t\t 187\n"
              "GPU UUID: \t GPU-4f1a2b3c-5d6e-7f80-91a2-b3c4d5e6f708\nVideo BIOS: \t 95.02.3c.00.ad\n"
              "Bus Type: \t PCIe\nDMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\n"
              "Bus Location: \t 0000:01:00.0\nDevice Minor: \t 0\nGPU Excluded:\t No\n");
    dir.write("sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n");
    dir.write("sys/bus/pci/devices/0000:01:00.0/device", "0x2684\n");
    dir.write("sys/bus/pci/devices/0000:01:00.0/class", "0x030000\n");
    const auto out = ah::cuda_probe{}.probe(ah::host_system(dir.path().string()));
    REQUIRE(out.devices.size() == 1);
    const auto& d = out.devices[0];
    CHECK(d.name.view() == "NVIDIA GeForce RTX 4090");
    CHECK(d.uuid.view() == "GPU-4f1a2b3c-5d6e-7f80-91a2-b3c4d5e6f708");
    CHECK(d.pci_device_id == 0x2684);
    REQUIRE(d.spec != nullptr);
    CHECK(d.memory_bytes.from == ah::origin::catalogue);
    CHECK_FALSE(d.memory_used_bytes.has_value());
    REQUIRE(out.warnings.size() == 1);
    CHECK(out.warnings[0].kind == ah::warning_kind::tool_not_found);
    CHECK(out.warnings[0].message.find("driver's files") != std::string::npos);
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
    through_nvml.nvml_needs_driver = false; // this machine has no NVIDIA driver
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
    p.nvml_needs_driver = false;
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

TEST_CASE("cuda_probe: NVML is not looked for where no NVIDIA driver shows") {
    // The stand-in would refuse to start and so warn, were it loaded.
    scoped_env mode("AI_HWACCEL_FAKE_NVML_MODE", "init-fails");
    ah::cuda_probe p;
    p.nvml.library = AI_HWACCEL_FAKE_NVML;
    const auto sys = live_without_tools();
    const bool driver = sys.exists("/proc/driver/nvidia") || sys.exists("/dev/nvidiactl") || sys.exists("/dev/dxg");
    const auto out = p.probe(sys);
    bool nvml_warned = false;
    for (const auto& w : out.warnings) nvml_warned = nvml_warned || w.subject == "NVML";
    CHECK(nvml_warned == driver);
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
