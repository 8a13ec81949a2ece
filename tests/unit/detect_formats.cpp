#include "ai_hwaccel/detect/formats.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <string>

namespace ah = ai_hwaccel;

TEST_CASE("recognise_format: every real capture of a machine file, by itself") {
    struct row {
        const char* file;
        const char* format;
    };
    for (const auto& [file, format] : {
             row{"proc-cpuinfo/x86_i7-1370p-hybrid_hp-elitebook_full.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/x86_i7-8705g_block0.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/x86_ryzen7-1700_block0_truncated.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/x86_xeon-e5620_block15.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_graviton1-a1_first2blocks.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_graviton2-t4g.small_full.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_graviton3-c7g_head9.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_nvidia-jetson-tx1.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_pixel-2-xl_msm8998.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/armv7_raspberry-pi-3_bcm2709.txt", "proc-cpuinfo"},
             row{"proc-meminfo/meminfo_16gb-server_kernel3.14plus.txt", "proc-meminfo"},
             row{"proc-meminfo/meminfo_16gb-workstation_kernel5x_swap.txt", "proc-meminfo"},
             row{"proc-meminfo/meminfo_1gb-vm_kernel3x.txt", "proc-meminfo"},
             row{"proc-meminfo/meminfo_64gb-x86_kernel6x_zswap-unaccepted.txt", "proc-meminfo"},
             row{"proc-meminfo/meminfo_huawei-kunpeng920_arm64.txt", "proc-meminfo"},
             row{"lscpu/intel-i5-10400_cometlake_util-linux-2.39.txt", "lscpu"},
             row{"lscpu/lscpu_2x-epyc7742_old-format.txt", "lscpu"},
             row{"lscpu/lscpu_azure-vm_epyc-9v74_hypervisor-microsoft.txt", "lscpu"},
             row{"gpu-numa-sysfs/node250-meminfo_ac922-v100-gpu-memory-node.txt", "node-meminfo"},
#if AI_HWACCEL_JSON
             row{"lsblk/json_dell-server_nvme-raid_rota-false.json", "lsblk-json"},
             row{"lsblk/json_default-columns_majmin-mountpoints.json", "lsblk-json"},
             row{"lsblk/json_fsused_usb-virtual-media-rota-true.json", "lsblk-json"},
#endif
         }) {
        CAPTURE(file);
        const auto text = test::capture(file);
        if (!text) continue;
        const auto* f = ah::recognise_format(*text);
        REQUIRE(f != nullptr);
        CHECK(f->name == format);
        const auto r = ah::parse_capture(*text, *f);
        CHECK(r.format == format);
        CHECK(r.warnings.empty()); // a real capture earns no warning
        CHECK((r.host.has_value() || r.system.has_value()));
    }
}

TEST_CASE("parse_capture reads what the capture shows") {
    if (const auto t = test::capture("proc-meminfo/meminfo_1gb-vm_kernel3x.txt")) {
        const auto r = ah::parse_capture(*t, *ah::find_capture_format("proc-meminfo"));
        REQUIRE(r.host);
        CHECK(*r.host->memory.total_bytes == 1019732ull * 1024);
    }
    if (const auto t = test::capture("lscpu/lscpu_azure-vm_epyc-9v74_hypervisor-microsoft.txt")) {
        const auto r = ah::parse_capture(*t, *ah::find_capture_format("lscpu"));
        REQUIRE(r.host);
        CHECK(r.host->cpu.threads == 4);
        REQUIRE(r.system);
        CHECK(r.system->environment.hypervisor == "Microsoft");
    }
    if (const auto t = test::capture("gpu-numa-sysfs/node250-meminfo_ac922-v100-gpu-memory-node.txt")) {
        const auto r = ah::parse_capture(*t, *ah::recognise_format(*t));
        REQUIRE(r.host);
        REQUIRE(r.host->numa.size() == 1);
        CHECK(r.host->numa[0].id == 250);
        CHECK(r.host->numa[0].memory_bytes == 15728640ull * 1024);
    }
}

TEST_CASE("find_capture_format") {
    CHECK(ah::find_capture_format("proc-cpuinfo")->name == "proc-cpuinfo");
    CHECK(ah::find_capture_format("PROC_CPUINFO")->name == "proc-cpuinfo");
    CHECK(ah::find_capture_format("nvidia-smi-xyz") == nullptr);
    CHECK(ah::find_capture_format("") == nullptr);
}

TEST_CASE("recognise_format and parse_capture on what is not a capture") {
    CHECK(ah::recognise_format("") == nullptr);
    CHECK(ah::recognise_format("hello world\n") == nullptr);
    CHECK(ah::recognise_format(std::string(4096, '\xff')) == nullptr);
    CHECK(ah::recognise_format("{\"not\": \"lsblk\"}") == nullptr);
    // Forced to a format it is not in: a warning, never a crash.
    for (const auto& f : ah::capture_formats) {
        CAPTURE(f.name);
        for (std::string junk : {std::string(), std::string("\0\0\0", 3), std::string("MemTotal: 99999999999999999999999 kB"),
                                 std::string("processor : 0\nflags : \xff\xfe"), std::string(100000, '{'),
                                 std::string("Node 0 MemTotal: -1 kB")}) {
            const auto r = ah::parse_capture(junk, f);
            CHECK(r.format == f.name);
        }
        CHECK_FALSE(ah::parse_capture("", f).warnings.empty());
    }
}
