#include "ai_hwaccel/detect/detect.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <fstream>

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
