#include "ai_hwaccel/detect/cpu.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

namespace ah = ai_hwaccel;
using ah::cpu_feature;

TEST_CASE("parse_meminfo") {
    // Every real capture: MemTotal and MemAvailable as printed, in KiB.
    struct expected {
        const char* file;
        std::uint64_t total_kib, available_kib;
    };
    for (const auto& e : {expected{"meminfo_16gb-server_kernel3.14plus.txt", 16268680, 8366284},
                          expected{"meminfo_16gb-workstation_kernel5x_swap.txt", 16337408, 9319948},
                          expected{"meminfo_1gb-vm_kernel3x.txt", 1019732, 710280},
                          expected{"meminfo_64gb-x86_kernel6x_zswap-unaccepted.txt", 65589900, 49384032},
                          expected{"meminfo_huawei-kunpeng920_arm64.txt", 527031224, 478155232}}) {
        CAPTURE(e.file);
        const auto text = test::capture(std::string("proc-meminfo/") + e.file);
        if (!text) continue;
        const auto m = ah::parse_meminfo(*text);
        CHECK(*m.total_bytes == e.total_kib * 1024);
        CHECK(*m.available_bytes == e.available_kib * 1024);
        CHECK(m.total_bytes.from == ah::origin::sysfs);
    }
}

TEST_CASE("parse_meminfo hostile input") {
    CHECK_FALSE(ah::parse_meminfo("").total_bytes.has_value());
    CHECK_FALSE(ah::parse_meminfo("MemFree: 5 kB\n").total_bytes.has_value());
    CHECK_FALSE(ah::parse_meminfo("MemTotal: 99999999999999999999999 kB\n").total_bytes.has_value());
    CHECK_FALSE(ah::parse_meminfo("MemTotal: 18446744073709551615 kB\n").total_bytes.has_value()); // × 1024 overflows
    CHECK_FALSE(ah::parse_meminfo("MemTotal: -5 kB\n").total_bytes.has_value());
    CHECK_FALSE(ah::parse_meminfo("MemTotal: 5 GB\n").total_bytes.has_value()); // unknown unit
    CHECK(*ah::parse_meminfo("MemTotal:\t12 kB").total_bytes == 12 * 1024);  // no final newline
    CHECK(*ah::parse_meminfo("junk\n\xff\xfe\nMemTotal: 1 kB\r\n").total_bytes == 1024);
}

TEST_CASE("parse_cgroup_memory_limit") {
    CHECK_FALSE(ah::parse_cgroup_memory_limit("max\n").has_value());
    CHECK(ah::parse_cgroup_memory_limit("8589934592\n") == 8589934592ull);
    CHECK_FALSE(ah::parse_cgroup_memory_limit("9223372036854771712\n").has_value()); // v1 "unlimited"
    CHECK_FALSE(ah::parse_cgroup_memory_limit("").has_value());
    CHECK_FALSE(ah::parse_cgroup_memory_limit("12x").has_value());
}

TEST_CASE("parse_cpuinfo x86") {
    if (auto text = test::capture("proc-cpuinfo/x86_i7-1370p-hybrid_hp-elitebook_full.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.model == "13th Gen Intel(R) Core(TM) i7-1370P");
        CHECK(c.maker == ah::vendor::intel);
        CHECK(c.arch == ah::cpu_arch::x86_64);
        CHECK(c.threads == 20);
        CHECK(c.cores == 14); // 6 P-cores + 8 E-cores
        CHECK(c.sockets == 1);
        CHECK(c.features.has(cpu_feature::avx2));
        CHECK(c.features.has(cpu_feature::avx_vnni));
        CHECK_FALSE(c.features.has(cpu_feature::avx512f)); // hybrid parts have none
    }
    if (auto text = test::capture("proc-cpuinfo/x86_ryzen7-1700_block0_truncated.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.model == "AMD Ryzen 7 1700 Eight-Core Processor");
        CHECK(c.maker == ah::vendor::amd);
        CHECK(c.features.has(cpu_feature::avx2));
        CHECK_FALSE(c.features.has(cpu_feature::avx512f));
    }
    if (auto text = test::capture("proc-cpuinfo/x86_i7-8705g_block0.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.model == "Intel(R) Core(TM) i7-8705G CPU @ 3.10GHz");
        CHECK(c.threads == 1); // one block of the capture
        CHECK(c.features.has(cpu_feature::avx2));
        CHECK(c.features.has(cpu_feature::fma));
        CHECK(c.features.has(cpu_feature::f16c));
        CHECK_FALSE(c.features.has(cpu_feature::avx512f));
    }
    if (auto text = test::capture("proc-cpuinfo/x86_xeon-e5620_block15.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.model == "Intel(R) Xeon(R) CPU           E5620  @ 2.40GHz"); // as printed
        CHECK_FALSE(c.features.has(cpu_feature::avx2)); // Westmere
    }
}

TEST_CASE("parse_cpuinfo arm") {
    if (auto text = test::capture("proc-cpuinfo/arm64_graviton3-c7g_head9.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.arch == ah::cpu_arch::aarch64);
        CHECK(c.maker == ah::vendor::arm); // implementer 0x41
        CHECK(c.features.has(cpu_feature::neon));
        CHECK(c.features.has(cpu_feature::sve));
        CHECK(c.features.has(cpu_feature::asimd_dotprod));
        CHECK_FALSE(c.features.has(cpu_feature::sve2));
        CHECK(c.model.empty()); // arm64 /proc/cpuinfo names no model
    }
    if (auto text = test::capture("proc-cpuinfo/arm64_graviton2-t4g.small_full.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.threads == 2);
        CHECK(c.features.has(cpu_feature::asimd_fp16));
        CHECK_FALSE(c.features.has(cpu_feature::sve));
    }
    for (const char* file : {"proc-cpuinfo/arm64_graviton1-a1_first2blocks.txt", "proc-cpuinfo/arm64_nvidia-jetson-tx1.txt"}) {
        CAPTURE(file);
        if (auto text = test::capture(file)) {
            const auto c = ah::parse_cpuinfo(*text);
            CHECK(c.arch == ah::cpu_arch::aarch64);
            CHECK(c.maker == ah::vendor::arm);
            CHECK(c.features.has(cpu_feature::neon));
            CHECK_FALSE(c.features.has(cpu_feature::asimd_dotprod));
            CHECK(c.threads == (std::string_view(file).find("tx1") != std::string_view::npos ? 4u : 2u));
        }
    }
    if (auto text = test::capture("proc-cpuinfo/arm64_pixel-2-xl_msm8998.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.threads == 8);
        CHECK(c.maker == ah::vendor::qualcomm); // implementer 0x51
    }
    if (auto text = test::capture("proc-cpuinfo/armv7_raspberry-pi-3_bcm2709.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.arch == ah::cpu_arch::arm);
        CHECK(c.model == "ARMv7 Processor rev 4 (v7l)");
        CHECK(c.threads == 4);
        CHECK(c.features.has(cpu_feature::neon));
    }
}

TEST_CASE("parse_cpuinfo hostile input") {
    CHECK(ah::parse_cpuinfo("").threads == 0);
    CHECK(ah::parse_cpuinfo("processor\nflags avx2\n").threads == 0); // no colons: not lines we read
    const auto c = ah::parse_cpuinfo("processor : 0\nflags : avx2x avx\nflags : avx2\n");
    CHECK(c.threads == 1);
    CHECK_FALSE(c.features.has(cpu_feature::avx2)); // whole words only; first flags line wins
    CHECK(ah::parse_cpuinfo(std::string(100000, ':')).threads == 0);
}
