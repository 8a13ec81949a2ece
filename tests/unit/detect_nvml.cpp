#include "ai_hwaccel/detect/nvml.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#if AI_HWACCEL_BACKEND_CUDA && AI_HWACCEL_OS_LINUX && defined(AI_HWACCEL_FAKE_NVML)

namespace ah = ai_hwaccel;

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;

// Sets (or, given nullptr, clears) a variable, and puts back what it was.
struct scoped_env {
    std::string name;
    std::optional<std::string> before;
    scoped_env(const char* n, const char* v) : name(n) {
        if (const char* old = std::getenv(n)) before = old;
        if (v) ::setenv(n, v, 1);
        else ::unsetenv(n);
    }
    ~scoped_env() {
        if (before) ::setenv(name.c_str(), before->c_str(), 1);
        else ::unsetenv(name.c_str());
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;
};

ah::nvml_options fake(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    ah::nvml_options o;
    o.library = AI_HWACCEL_FAKE_NVML;
    o.timeout = timeout;
    return o;
}

// Hand-made: an H100 SXM whose power limit is unavailable and an A10.
constexpr const char* two_gpus =
    "0, GPU-11111111-2222-3333-4444-555555555555, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 0x233010DE, "
    "81559, 1, 81003, 9.0, 550.90.07, [N/A], 71.50, 33, 7, 2619, 5, 5, 16, 16, Disabled\n"
    "1, GPU-66666666-7777-8888-9999-000000000000, NVIDIA A10, 00000000:07:00.0, 0x223610DE, "
    "23028, 0, 22563, 8.6, 550.90.07, 150.00, 15.20, 30, 0, 6251, 1, 4, 16, 16, [N/A]\n";

std::string served_file(const test::scratch_dir& dir) {
    dir.write("gpus.csv", two_gpus);
    return (dir.path() / "gpus.csv").string();
}
// The stand-in library serving two_gpus from a scratch file, misbehaving as `how` says
// (AI_HWACCEL_FAKE_NVML_MODE; nullptr: not at all).
struct served_gpus {
    test::scratch_dir dir;
    scoped_env data{"AI_HWACCEL_FAKE_NVML_DATA", served_file(dir).c_str()};
    scoped_env mode;
    explicit served_gpus(const char* how = nullptr) : mode("AI_HWACCEL_FAKE_NVML_MODE", how) {}
};

} // namespace

TEST_CASE("query_nvml: every field read through the C ABI") {
    const served_gpus served;
    const auto r = ah::query_nvml(fake());
    INFO(r.detail);
    REQUIRE(r.status == ah::nvml_status::ok);
    CHECK(r.warnings.empty());
    REQUIRE(r.devices.size() == 2);
    const auto& h = r.devices[0];
    CHECK(h.kind == ah::device_kind::cuda_gpu);
    CHECK(h.maker == ah::vendor::nvidia);
    CHECK(h.index == 0);
    CHECK(h.name.view() == "NVIDIA H100 80GB HBM3");
    CHECK(h.uuid.view() == "GPU-11111111-2222-3333-4444-555555555555");
    REQUIRE(h.pci);
    CHECK(*h.pci == ah::pci_address{0, 0x18, 0, 0});
    CHECK(h.pci_device_id == 0x2330);
    CHECK(*h.memory_bytes == 81559 * mib);
    CHECK(h.memory_bytes.from == ah::origin::tool);
    CHECK(*h.memory_used_bytes == 1 * mib);
    CHECK(*h.memory_free_bytes == 81003 * mib);
    CHECK(h.arch.view() == "9.0");
    CHECK(h.driver_version.view() == "550.90.07");
    CHECK(*h.power_draw_watts == doctest::Approx(71.5));
    CHECK(h.power_limit_watts.from != ah::origin::tool); // NOT_SUPPORTED: the catalogue's, if any
    CHECK(*h.temperature_c == 33);
    CHECK(*h.utilization_percent == 7);
    CHECK(h.pcie_current->generation == 5);
    CHECK(h.pcie_max->width == 16);
    REQUIRE(h.spec != nullptr); // matched by PCI id
    CHECK(h.memory_bandwidth_gbps.from == ah::origin::catalogue);
    CHECK(r.devices[1].name.view() == "NVIDIA A10");
    CHECK(*r.devices[1].power_limit_watts == doctest::Approx(150.0));
    CHECK(r.devices[1].pcie_current->generation == 1); // idling
    CHECK(r.devices[1].pcie_max->generation == 4);
}

TEST_CASE("query_nvml: the memory the driver reserves is neither used nor free") {
    // The H100 row: 81559 MiB, 1 used, 81003 free, so 555 MiB reserved by the driver.
    const served_gpus served;
    SUBCASE("nvmlDeviceGetMemoryInfo_v2: used as nvidia-smi prints it") {
        const auto r = ah::query_nvml(fake());
        REQUIRE(r.devices.size() == 2);
        CHECK(*r.devices[0].memory_used_bytes == 1 * mib);
        CHECK(*r.devices[0].memory_free_bytes == 81003 * mib);
    }
    SUBCASE("without it, the first call: the reserved memory counts as used") {
        scoped_env mode("AI_HWACCEL_FAKE_NVML_MODE", "no-memory-v2");
        const auto r = ah::query_nvml(fake());
        INFO(r.detail);
        REQUIRE(r.status == ah::nvml_status::ok);
        CHECK(r.warnings.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(*r.devices[0].memory_bytes == 81559 * mib);
        CHECK(*r.devices[0].memory_used_bytes == 556 * mib);
        CHECK(*r.devices[0].memory_free_bytes == 81003 * mib);
    }
}

TEST_CASE("query_nvml: the PCI address as older drivers' nvmlDeviceGetPciInfo_v2 fills it") {
    // Before v3 the address was the 16-byte busId at the start of the struct, and the
    // 32-byte field after the ids did not exist: the address was lost.
    const served_gpus served("pci-v2");
    const auto r = ah::query_nvml(fake());
    REQUIRE(r.status == ah::nvml_status::ok);
    REQUIRE(r.devices.size() == 2);
    for (const auto& d : r.devices) CHECK(d.pci.has_value());
    CHECK(*r.devices[0].pci == *ah::parse_pci_address("0000:18:00.0"));
    CHECK(*r.devices[1].pci == *ah::parse_pci_address("0000:07:00.0"));
}

TEST_CASE("query_nvml: a GPU that cannot be opened stays listed, unavailable") {
    const served_gpus served("lost-gpu");
    const auto r = ah::query_nvml(fake());
    REQUIRE(r.status == ah::nvml_status::ok);
    REQUIRE(r.devices.size() == 2);
    CHECK(r.devices[0].available);
    CHECK_FALSE(r.devices[1].available);
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].kind == ah::warning_kind::probe_failed);
    CHECK(r.warnings[0].message.find("GPU is lost") != std::string::npos);
}

TEST_CASE("query_nvml: impossible memory figures are refused") {
    const served_gpus served("huge");
    const auto r = ah::query_nvml(fake());
    REQUIRE(r.status == ah::nvml_status::ok);
    REQUIRE(r.devices.size() == 2);
    CHECK(r.devices[0].memory_bytes.from == ah::origin::catalogue); // not the tool's 4 EiB
    CHECK(test::count_kind(r.warnings, ah::warning_kind::value_out_of_range) == 2);
}

TEST_CASE("query_nvml: a wedged driver is abandoned at the time limit") {
    const served_gpus served("hang");
    const auto r = ah::query_nvml(fake(std::chrono::milliseconds(200)));
    CHECK(r.status == ah::nvml_status::timed_out);
    CHECK(r.devices.empty());
    CHECK(r.detail.find("200 ms") != std::string::npos);
}

TEST_CASE("query_nvml: a stopped detection leaves a wedged driver at once, not at the time limit") {
    // A background detection cancelled (async.hpp) while nvmlInit or a device call hangs.
    // The limit is ten minutes: a query that ignored the stop would end timed_out, not
    // cancelled (and hold the suite that long).
    const served_gpus served("hang");
    std::stop_source stop;
    const auto o = fake(std::chrono::minutes(10));
    std::thread cancel([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        stop.request_stop();
    });
    const auto r = ah::query_nvml(o, stop.get_token());
    cancel.join();
    CHECK(r.status == ah::nvml_status::cancelled);
    CHECK(r.devices.empty());
    // Stopped before it starts: the library is not even opened.
    CHECK(ah::query_nvml(o, stop.get_token()).status == ah::nvml_status::cancelled);
}

TEST_CASE("query_nvml: failures that leave NVML unused") {
    SUBCASE("init refused") {
        scoped_env mode("AI_HWACCEL_FAKE_NVML_MODE", "init-fails");
        const auto r = ah::query_nvml(fake());
        CHECK(r.status == ah::nvml_status::init_failed);
        CHECK(r.detail.find("Driver Not Loaded (9)") != std::string::npos);
    }
    SUBCASE("an entry point missing (a driver too old)") {
        ah::nvml_options o;
        o.library = AI_HWACCEL_FAKE_NVML_OLD;
        const auto r = ah::query_nvml(o);
        CHECK(r.status == ah::nvml_status::missing_symbol);
        CHECK(r.detail.find("nvmlDeviceGetName") != std::string::npos);
    }
    SUBCASE("no library") {
        ah::nvml_options o;
        o.library = "/nonexistent/libnvidia-ml.so.1";
        CHECK(ah::query_nvml(o).status == ah::nvml_status::library_not_found);
    }
    SUBCASE("a relative library path is refused, never searched") {
        ah::nvml_options o;
        o.library = "lib/libnvidia-ml.so.1";
        CHECK(ah::query_nvml(o).status == ah::nvml_status::unsafe_search_path);
    }
    SUBCASE("a relative LD_LIBRARY_PATH entry keeps a bare soname from loading") {
        // ld.so splits the list at ';' as at ':', and an empty entry is the current folder.
        for (const char* list : {"/usr/lib:.:/opt/lib", "/usr/lib;.", "/usr/lib;", "/usr/lib::/opt/lib", "lib", ""}) {
            CAPTURE(list);
            scoped_env ld("LD_LIBRARY_PATH", list);
            ah::nvml_options o;
            o.library = "libnvidia-ml.so.1";
            CHECK(ah::query_nvml(o).status == ah::nvml_status::unsafe_search_path);
        }
    }
    SUBCASE("absolute entries, $ORIGIN among them, do not") {
        for (const char* list : {"/nonexistent", "/a;/b:/c", "$ORIGIN/../lib", "${ORIGIN}:/x", "$ORIGIN"}) {
            CAPTURE(list);
            scoped_env ld("LD_LIBRARY_PATH", list);
            ah::nvml_options o;
            o.library = "libnvidia-ml-none.so.1";
            CHECK(ah::query_nvml(o).status == ah::nvml_status::library_not_found);
        }
        CHECK_FALSE(ah::detail::nvml::absolute_search_list("$ORIGINAL/lib"));
        CHECK_FALSE(ah::detail::nvml::absolute_search_list("$LIB/nvidia"));
    }
}

// ld.so reads LD_LIBRARY_PATH once, when the program starts: clearing the variable later
// leaves the current folder in its list. tests/CMakeLists.txt runs this case again in a
// program started with LD_LIBRARY_PATH=. (nvml_loader_path_at_start); run alone it only
// checks that the loader's list of an ordinary start is taken for safe.
TEST_CASE("NVML: the loader's search list as it was at start, not the variable now") {
    const bool started_relative = std::getenv("AI_HWACCEL_TEST_STARTED_WITH_RELATIVE_LD_PATH") != nullptr;
    const char* now = std::getenv("LD_LIBRARY_PATH");
    if (!started_relative && now) return; // someone else's list: nothing to say about it
    scoped_env cleared("LD_LIBRARY_PATH", nullptr);
    ah::nvml_options o;
    o.library = "libnvidia-ml-none.so.1";
    CHECK(ah::query_nvml(o).status ==
          (started_relative ? ah::nvml_status::unsafe_search_path : ah::nvml_status::library_not_found));
}

#endif
