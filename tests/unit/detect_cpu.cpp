#include "ai_hwaccel/detect/cpu.hpp"
#include "ai_hwaccel/detect/formats.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace ah = ai_hwaccel;
using namespace ah::literals;
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
        CHECK(c.model == "Arm Neoverse-V1"); // no model line: named from implementer 0x41, part 0xd40
    }
    if (auto text = test::capture("proc-cpuinfo/arm64_graviton2-t4g.small_full.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.threads == 2);
        CHECK(c.model == "Arm Neoverse-N1"); // Graviton2
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
            // Graviton (first generation) is a Cortex-A72, the Jetson TX1 a Cortex-A57.
            CHECK(c.model == (std::string_view(file).find("tx1") != std::string_view::npos ? "Arm Cortex-A57"
                                                                                            : "Arm Cortex-A72"));
        }
    }
    if (auto text = test::capture("proc-cpuinfo/arm64_pixel-2-xl_msm8998.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.threads == 8);
        CHECK(c.maker == ah::vendor::qualcomm); // implementer 0x51
        // Two core types, listed in processor order: cpu0-3 part 0x801, cpu4-7 part 0x800.
        CHECK(c.model == "Qualcomm Kryo-2XX-Silver + Qualcomm Kryo-2XX-Gold");
    }
    if (auto text = test::capture("proc-cpuinfo/armv7_raspberry-pi-3_bcm2709.txt")) {
        const auto c = ah::parse_cpuinfo(*text);
        CHECK(c.arch == ah::cpu_arch::arm);
        // The 32-bit kernel's model line is generic; the core's IDs name a Cortex-A53.
        CHECK(c.model == "Arm Cortex-A53");
        CHECK(c.threads == 4);
        CHECK(c.features.has(cpu_feature::neon));
    }
}

TEST_CASE("arm_cores table and model names") {
    CHECK(ah::arm_core_name(0x41, 0xd0c) == "Arm Neoverse-N1");
    CHECK(ah::arm_core_name(0x41, 0xd4f) == "Arm Neoverse-V2"); // Grace, Graviton4, Axion
    CHECK(ah::arm_core_name(0x48, 0xd01) == "HiSilicon Kunpeng-920"); // HiSilicon's 0xd01
    CHECK(ah::arm_core_name(0x41, 0xd01) == "Arm Cortex-A32"); // Arm's 0xd01: parts are per implementer
    CHECK(ah::arm_core_name(0x6d, 0xd49) == "Microsoft Azure-Cobalt-100");
    CHECK(ah::arm_core_name(0x41, 0xfff).empty());
    CHECK(ah::arm_core_name(0x99, 0xd0c).empty());
    CHECK(ah::arm_core_name(0x141, 0xd0c).empty()); // not an 8-bit implementer code
    CHECK(ah::arm_core_name(0x41, 0x1d0c).empty()); // not a 12-bit part number
    CHECK(ah::arm_implementer_vendor(0x4e) == ah::vendor::nvidia);
    CHECK(ah::arm_implementer_vendor(0x48) == ah::vendor::unknown); // HiSilicon: no vendor of its own
    CHECK(ah::arm_implementer_vendor(0x99) == ah::vendor::unknown);
    static_assert(ah::arm_core_name(0xc0, 0xac3) == "Ampere Ampere-1");
    // Every row of the table is found by its own IDs, under its implementer's name.
    for (const auto& core : ah::arm_cores) {
        CAPTURE(core.name);
        const auto name = ah::arm_core_name(core.implementer, core.part);
        CHECK(name.ends_with(core.name));
        CHECK(name.size() > core.name.size() + 1);
    }

    const auto cpu = [](std::string_view text) { return ah::parse_cpuinfo(text); };
    // A part the table does not know, or an implementer, names nothing; a known implementer
    // still gives the vendor.
    CHECK(cpu("processor : 0\nCPU implementer : 0x41\nCPU architecture: 8\nCPU part : 0xd99\n").model.empty());
    CHECK(cpu("processor : 0\nCPU implementer : 0x41\nCPU part : 0xd99\n").maker == ah::vendor::arm);
    CHECK(cpu("processor : 0\nCPU implementer : 0x7a\nCPU part : 0x001\n").model.empty());
    CHECK(cpu("processor : 0\nCPU implementer : 0x7a\nCPU part : 0x001\n").maker == ah::vendor::unknown);
    // Garbage IDs, and a part with no implementer before it, name nothing.
    CHECK(cpu("processor : 0\nCPU implementer : banana\nCPU part : 0xd0c\n").model.empty());
    CHECK(cpu("processor : 0\nCPU part : 0xd0c\n").model.empty());
    CHECK(cpu("processor : 0\nCPU implementer : 0x41\nCPU part : 0xd0c0\n").model.empty());
    // A model line wins, unless it is 32-bit Arm's generic one.
    CHECK(cpu("processor : 0\nmodel name : Custom SoC\nCPU implementer : 0x41\nCPU part : 0xd0c\n").model ==
          "Custom SoC");
    // Big and little cores, each type once, in the order the processors list them.
    std::string big_little;
    for (int i = 0; i < 8; ++i)
        big_little += "processor : " + std::to_string(i) + "\nCPU implementer : 0x41\nCPU part : " +
                      (i < 6 ? "0xd05" : "0xd0b") + "\n\n";
    CHECK(cpu(big_little).model == "Arm Cortex-A55 + Arm Cortex-A76");
    // parse_cpuinfo joins the implementer's name to the core's itself: for every row of the
    // table it gives what arm_core_name gives.
    for (const auto& core : ah::arm_cores) {
        CAPTURE(core.name);
        char ids[96];
        std::snprintf(ids, sizeof ids, "processor : 0\nCPU implementer : 0x%02x\nCPU part : 0x%03x\n",
                      unsigned{core.implementer}, unsigned{core.part});
        CHECK(cpu(ids).model == ah::arm_core_name(core.implementer, core.part));
    }
    // More core types than any chip has is not a listing to name.
    std::string mixed;
    for (int i = 0; i < 9; ++i) mixed += "processor : 0\nCPU implementer : 0x41\nCPU part : 0xd0" + std::to_string(i) + "\n";
    CHECK(cpu(mixed).model.empty());
    CHECK(cpu(mixed).maker == ah::vendor::arm);
}

TEST_CASE("parse_cpuinfo hostile input") {
    CHECK(ah::parse_cpuinfo("").threads == 0);
    CHECK(ah::parse_cpuinfo("processor\nflags avx2\n").threads == 0); // no colons: not lines we read
    const auto c = ah::parse_cpuinfo("processor : 0\nflags : avx2x avx\nflags : avx2\n");
    CHECK(c.threads == 1);
    CHECK_FALSE(c.features.has(cpu_feature::avx2)); // whole words only; first flags line wins
    CHECK(ah::parse_cpuinfo(std::string(100000, ':')).threads == 0);
}

TEST_CASE("parse_cpuinfo: POWER, RISC-V, s390x and early AArch64 kernels (hand-made, kernel formats)") {
    // POWER (arch/powerpc/kernel/setup-common.c): "cpu" names the core, up to a comma.
    const auto power = ah::parse_cpuinfo("processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\n"
                                         "clock\t\t: 2750.000000MHz\nrevision\t: 2.2 (pvr 004e 1202)\n\n"
                                         "processor\t: 1\ncpu\t\t: POWER9 (architected), altivec supported\n"
                                         "clock\t\t: 2750.000000MHz\nrevision\t: 2.2 (pvr 004e 1202)\n\n"
                                         "timebase\t: 512000000\nplatform\t: pSeries\n");
    CHECK(power.model == "POWER9 (architected)");
    // The other spellings of the model line (hand-made): "Model Name" and MIPS's "cpu model";
    // the first model line read is the one kept.
    CHECK(ah::parse_cpuinfo("processor : 0\nModel Name : Some Arm SoC\n").model == "Some Arm SoC");
    CHECK(ah::parse_cpuinfo("system type : MT7621\nprocessor : 0\ncpu model : MIPS 1004Kc V2.15\n").model ==
          "MIPS 1004Kc V2.15");
    CHECK(ah::parse_cpuinfo("processor : 0\nmodel name : First\ncpu model : Second\nuarch : Third\n").model ==
          "First");
    CHECK(power.arch == ah::cpu_arch::ppc64le);
    CHECK(power.threads == 2);
    // RISC-V (arch/riscv/kernel/cpu.c): "isa", "mmu", and since Linux 6.1 "uarch".
    const auto riscv = ah::parse_cpuinfo("processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdc_zicntr_zicsr\n"
                                         "mmu\t\t: sv39\nuarch\t\t: sifive,u74-mc\n\n"
                                         "processor\t: 1\nhart\t\t: 2\nisa\t\t: rv64imafdc_zicntr_zicsr\n"
                                         "mmu\t\t: sv39\nuarch\t\t: sifive,u74-mc\n");
    CHECK(riscv.model == "sifive,u74-mc");
    CHECK(riscv.arch == ah::cpu_arch::riscv64);
    CHECK(riscv.threads == 2);
    // s390x (arch/s390/kernel/processor.c): one numbered "processor N:" line per CPU.
    const auto z = ah::parse_cpuinfo(
        "vendor_id       : IBM/S390\n# processors    : 2\nbogomips per cpu: 3033.00\n"
        "features\t: esan3 zarch stfle msa ldisp eimm dfp edat etf3eh highgprs te vx sie\n"
        "processor 0: version = FF,  identification = 0133E8,  machine = 2964\n"
        "processor 1: version = FF,  identification = 0133E8,  machine = 2964\n");
    CHECK(z.arch == ah::cpu_arch::s390x);
    CHECK(z.threads == 2);
    CHECK(z.model == "IBM Z machine type 2964");
    // Arm64 kernels before 3.18 spell the architecture out.
    const auto early = ah::parse_cpuinfo("Processor\t: AArch64 Processor rev 0 (aarch64)\nprocessor\t: 0\n"
                                         "Features\t: fp asimd aes pmull sha1 sha2 crc32\nCPU implementer\t: 0x41\n"
                                         "CPU architecture: AArch64\nCPU variant\t: 0x1\nCPU part\t: 0xd07\n");
    CHECK(early.arch == ah::cpu_arch::aarch64);
    CHECK(early.model == "Arm Cortex-A57");
    // Each is also recognised as /proc/cpuinfo by the capture reader.
    for (const auto* text : {"processor\t: 0\ncpu\t\t: POWER10\n", "processor\t: 0\nisa\t\t: rv64imafdc\n",
                             "vendor_id       : IBM/S390\nprocessor 0: version = FF\n"}) {
        CAPTURE(text);
        const auto* f = ah::recognise_format(text);
        REQUIRE(f != nullptr);
        CHECK(f->name == "proc-cpuinfo");
    }
}

TEST_CASE("parse_cpuinfo: sockets and cores of two packages") {
    // Core ids restart in each package; two threads of package 1 share core 0.
    std::string text;
    const std::pair<const char*, const char*> ids[] = {{"0", "0"}, {"0", "1"}, {"1", "0"}, {"1", "0"}};
    for (const auto& [package, core] : ids)
        text += std::string("processor : x\nphysical id : ") + package + "\ncore id : " + core + "\n\n";
    const auto c = ah::parse_cpuinfo(text);
    CHECK(c.threads == 4);
    CHECK(c.sockets == 2);
    CHECK(c.cores == 3);
}

// ---------------------------------------------------------------------------------------
// lscpu

TEST_CASE("parse_lscpu") {
    if (auto text = test::capture("lscpu/intel-i5-10400_cometlake_util-linux-2.39.txt")) {
        // Flat layout with CRLF line ends (as stored in its source).
        const auto l = ah::parse_lscpu(*text);
        CHECK(l.cpu.model == "Intel(R) Core(TM) i5-10400 CPU @ 2.90GHz");
        CHECK(l.cpu.maker == ah::vendor::intel);
        CHECK(l.cpu.arch == ah::cpu_arch::x86_64);
        CHECK(l.cpu.threads == 12);
        CHECK(l.threads_per_core == 2);
        CHECK(l.cores_per_socket == 6);
        CHECK(l.cpu.sockets == 1);
        CHECK(l.cpu.cores == 6);
        CHECK(l.numa_node_count == 1);
        REQUIRE(l.numa.size() == 1);
        CHECK(l.numa[0] == ah::numa_node{0, 0, "0-11"});
        CHECK(l.cpu.features.has(cpu_feature::avx2));
        CHECK(l.cpu.features.has(cpu_feature::fma));
        CHECK(l.cpu.features.has(cpu_feature::f16c));
        CHECK_FALSE(l.cpu.features.has(cpu_feature::avx512f));
        CHECK(l.hypervisor_vendor.empty());
    }
    if (auto text = test::capture("lscpu/lscpu_2x-epyc7742_old-format.txt")) {
        // util-linux 2.3x: topology lines before the model name.
        const auto l = ah::parse_lscpu(*text);
        CHECK(l.cpu.model == "AMD EPYC 7742 64-Core Processor");
        CHECK(l.cpu.maker == ah::vendor::amd);
        CHECK(l.cpu.threads == 128);
        CHECK(l.threads_per_core == 1); // SMT off
        CHECK(l.cores_per_socket == 64);
        CHECK(l.cpu.sockets == 2);
        CHECK(l.cpu.cores == 128);
        CHECK(l.numa_node_count == 2);
        REQUIRE(l.numa.size() == 2);
        CHECK(l.numa[0] == ah::numa_node{0, 0, "0-63"});
        CHECK(l.numa[1] == ah::numa_node{1, 0, "64-127"});
        CHECK(l.cpu.features.has(cpu_feature::avx2));
        CHECK_FALSE(l.cpu.features.has(cpu_feature::avx512f)); // Zen 2
    }
    if (auto text = test::capture("lscpu/lscpu_azure-vm_epyc-9v74_hypervisor-microsoft.txt")) {
        const auto l = ah::parse_lscpu(*text);
        CHECK(l.cpu.model == "AMD EPYC 9V74 80-Core Processor");
        CHECK(l.cpu.maker == ah::vendor::amd);
        CHECK(l.cpu.threads == 4);
        CHECK(l.threads_per_core == 2);
        CHECK(l.cores_per_socket == 2);
        CHECK(l.cpu.sockets == 1);
        CHECK(l.cpu.cores == 2);
        CHECK(l.hypervisor_vendor == "Microsoft");
        REQUIRE(l.numa.size() == 1);
        CHECK(l.numa[0].cpus == "0-3");
        CHECK(l.cpu.features.has(cpu_feature::avx2));
        CHECK_FALSE(l.cpu.features.has(cpu_feature::avx512f)); // the VM's flags list none
    }
}

TEST_CASE("parse_lscpu: s390x books and drawers, an unknown model (hand-made)") {
    // The topology lines of util-linux's expected output for a z/VM guest
    // (tests/expected/lscpu/lscpu-s390-zvm): no Socket(s), sockets per book and books.
    const auto z = ah::parse_lscpu("Architecture:        s390x\n"
                                   "CPU(s):              4\n"
                                   "On-line CPU(s) list: 0-3\n"
                                   "Thread(s) per core:  1\n"
                                   "Core(s) per socket:  1\n"
                                   "Socket(s) per book:  1\n"
                                   "Book(s):             4\n"
                                   "Vendor ID:           IBM/S390\n");
    CHECK(z.cpu.cores == 4);
    CHECK(z.cpu.sockets == 4);
    // The same with drawers (an LPAR): 2 sockets a book, 2 books a drawer, 2 drawers.
    const auto lpar = ah::parse_lscpu("CPU(s): 32\nThread(s) per core: 2\nCore(s) per socket: 2\n"
                                      "Socket(s) per book: 2\nBook(s) per drawer: 2\nDrawer(s): 2\n");
    CHECK(lpar.cpu.sockets == 8);
    CHECK(lpar.cpu.cores == 16);
    // New util-linux prints "-" for an Arm core it has no name for: no model, not "-".
    const auto unnamed = ah::parse_lscpu("Architecture: aarch64\nVendor ID: ARM\nModel name: -\n");
    CHECK(unnamed.cpu.model.empty());
}

TEST_CASE("parse_lscpu new layout, hybrid Arm (hand-made)") {
    // Synthetic, in the indented util-linux 2.37+ layout: two CPU types, no sockets.
    const auto l = ah::parse_lscpu("Architecture:             aarch64\n"
                                   "  CPU op-mode(s):         32-bit, 64-bit\n"
                                   "CPU(s):                   8\n"
                                   "  On-line CPU(s) list:    0-5\n"
                                   "  Off-line CPU(s) list:   6,7\n"
                                   "Vendor ID:                ARM\n"
                                   "  Model name:             Cortex-A55\n"
                                   "    Thread(s) per core:   1\n"
                                   "    Core(s) per cluster:  4\n"
                                   "    Socket(s):            -\n"
                                   "    Cluster(s):           1\n"
                                   "    Flags:                fp asimd asimdhp asimddp\n"
                                   "  Model name:             Cortex-A76\n"
                                   "    Thread(s) per core:   1\n"
                                   "    Core(s) per cluster:  4\n"
                                   "    Socket(s):            -\n"
                                   "    Cluster(s):           1\n"
                                   "    Flags:                fp asimd asimddp i8mm\n"
                                   "Caches (sum of all):\n"
                                   "  L1d:                    384 KiB (8 instances)\n"
                                   "NUMA:\n"
                                   "  NUMA node(s):           1\n"
                                   "  NUMA node0 CPU(s):      0-7\n"
                                   "Vulnerabilities:\n"
                                   "  Itlb multihit:          Not affected\n");
    CHECK(l.cpu.arch == ah::cpu_arch::aarch64);
    CHECK(l.cpu.maker == ah::vendor::arm);
    CHECK(l.cpu.model == "Cortex-A55");
    CHECK(l.cpu.threads == 6); // online ones
    CHECK(l.cpu.cores == 8);
    CHECK(l.cpu.sockets == 1);
    CHECK(l.cores_per_socket == 4);
    CHECK(l.cpu.features.has(cpu_feature::neon));
    CHECK(l.cpu.features.has(cpu_feature::asimd_dotprod));
    CHECK_FALSE(l.cpu.features.has(cpu_feature::asimd_fp16)); // not on every core type
    CHECK_FALSE(l.cpu.features.has(cpu_feature::i8mm));
    CHECK(l.numa.size() == 1);
    // lscpu names Arm implementers as util-linux's lscpu-arm.c spells them: Microsoft's
    // Cobalt 100 is Microsoft's, as /proc/cpuinfo's implementer 0x6d says (before: unknown).
    CHECK(ah::parse_lscpu("Architecture: aarch64\nVendor ID: Microsoft\nModel name: Neoverse-N2\n").cpu.maker ==
          ah::vendor::microsoft);
}

TEST_CASE("parse_lscpu hostile input") {
    CHECK(ah::parse_lscpu("") == ah::lscpu_info{});
    CHECK(ah::parse_lscpu(std::string(100000, ':')) == ah::lscpu_info{});
    CHECK(ah::parse_lscpu("\xff\xfe\x00\x01garbage\n::\n") == ah::lscpu_info{});
    const auto big = ah::parse_lscpu("CPU(s): 1000000000000000000000000000000\n"
                                     "Core(s) per socket: 4294967295\n"
                                     "Socket(s): 4294967295\n"
                                     "Thread(s) per core: -1\n"
                                     "NUMA node(s): 99999999999999999999\n"
                                     "NUMA node0 CPU(s): 0-4294967295\n"
                                     "NUMA nodeX CPU(s): 0\n"
                                     "NUMA node CPU(s): 0\n"
                                     "Architecture: \xff\n");
    CHECK(big.cpu.threads == 0);
    CHECK(big.cpu.cores == 0);   // counts beyond any machine are unknown
    CHECK(big.cpu.sockets == 0);
    CHECK(big.threads_per_core == 0);
    CHECK(big.numa_node_count == 0);
    CHECK(big.numa.empty());
    CHECK(big.cpu.arch == ah::cpu_arch::unknown);
    // A truncated capture: what is there is kept.
    const auto cut = ah::parse_lscpu("Architecture:        x86_64\nCPU(s):              16\nModel na");
    CHECK(cut.cpu.threads == 16);
    CHECK(cut.cpu.model.empty());
    std::string many;
    for (int i = 0; i < 20000; ++i) many += "Model name: X\nCore(s) per socket: 1\n";
    CHECK(ah::parse_lscpu(many).cpu.cores == 20000);
    const auto edge = ah::parse_lscpu("Core(s) per socket: 65536\nSocket(s): 65536\n"); // 2^32 cores: too many
    CHECK(edge.cpu.cores == 0);
    CHECK(edge.cpu.sockets == 65536);
}

// ---------------------------------------------------------------------------------------
// cgroup CPU limits

TEST_CASE("parse_cgroup_cpu_max") {
    CHECK(ah::parse_cgroup_cpu_max("max 100000\n") == 0.0);
    CHECK(ah::parse_cgroup_cpu_max("max") == 0.0);
    CHECK(ah::parse_cgroup_cpu_max("250000 100000\n") == 2.5);
    CHECK(ah::parse_cgroup_cpu_max("50000 100000") == 0.5);
    for (const char* bad : {"", "garbage", "max abc", "0 100000", "100000 0", "-1 100000", "100000", "100000 -1",
                            "1000000000000000000000000000000 100000", "1000000000000 1", "250000  x", "\xff"}) {
        CAPTURE(bad);
        CHECK_FALSE(ah::parse_cgroup_cpu_max(bad).has_value());
    }
}

TEST_CASE("parse_cgroup_cfs_quota") {
    CHECK(ah::parse_cgroup_cfs_quota("-1\n", "100000\n") == 0.0);
    CHECK(ah::parse_cgroup_cfs_quota("250000\n", "100000\n") == 2.5);
    CHECK_FALSE(ah::parse_cgroup_cfs_quota("-2", "100000").has_value());
    CHECK_FALSE(ah::parse_cgroup_cfs_quota("x", "100000").has_value());
    CHECK_FALSE(ah::parse_cgroup_cfs_quota("100000", "0").has_value());
    CHECK_FALSE(ah::parse_cgroup_cfs_quota("100000", "").has_value());
    CHECK_FALSE(ah::parse_cgroup_cfs_quota("1000000000000000000000000000000", "100000").has_value());
}

// ---------------------------------------------------------------------------------------
// probe_host

namespace {
using test::denying_view;

std::string cpuinfo_with(int processors) {
    std::string s;
    for (int i = 0; i < processors; ++i) s += "processor\t: " + std::to_string(i) + "\nmodel name\t: Test CPU\n\n";
    return s;
}

void write_basics(const test::scratch_dir& root, int processors) {
    root.write("proc/cpuinfo", cpuinfo_with(processors));
    root.write("proc/meminfo", "MemTotal: 1024 kB\nMemAvailable: 512 kB\n");
}
} // namespace

TEST_CASE("probe_host: online, usable threads, NUMA") {
    test::scratch_dir root;
    write_basics(root, 8);
    root.write("sys/devices/system/cpu/online", "0-7\n");
    root.write("proc/self/status", "Name:\tcat\nCpus_allowed:\tff\nCpus_allowed_list:\t0-1,4\nMems_allowed_list:\t0\n");
    root.write("sys/devices/system/node/node0/cpulist", "0-7\n");
    root.write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 1024 kB\n");
    std::vector<ah::warning> w;
    const auto [host, cpu] = ah::probe_host(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
    CHECK(host.cpu.threads == 8);
    CHECK(host.cpu.usable_threads == 3);
    CHECK(host.cpu.cpu_quota == 0);
    REQUIRE(host.numa.size() == 1);
    CHECK(host.numa[0] == ah::numa_node{0, 1024 * 1024, "0-7"});
    CHECK(cpu.name.view() == "Test CPU");
}

TEST_CASE("probe_host: NUMA nodes and MemTotal disagree") {
    test::scratch_dir root;
    write_basics(root, 2); // MemTotal 1024 kB
    root.write("sys/devices/system/node/node0/cpulist", "0-1\n");
    root.write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 65536 kB\n");
    std::vector<ah::warning> w;
    const auto host = ah::probe_host(ah::host_system(root.path().string()), w).first;
    CHECK(host.numa[0].memory_bytes == 65536u * 1024); // both kept as read
    CHECK(*host.memory.total_bytes == 1024u * 1024);
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::disagreement);
    CHECK(w[0].message.find("NUMA") != std::string::npos);
    // Within 1 %: no warning.
    root.write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 1020 kB\n");
    w.clear();
    ah::probe_host(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
}

TEST_CASE("probe_host: nodes short of MemTotal (pages the kernel has yet to hand to a node)") {
    // What a Firecracker guest booted with deferred_init=lazy shows: node 0's meminfo counts
    // only the pages initialised so far (12.2 of 23.5 GiB on the development VM) and grows as
    // memory is first touched.
    test::scratch_dir root;
    write_basics(root, 2); // MemTotal 1024 kB
    root.write("sys/devices/system/node/node0/cpulist", "0-1\n");
    root.write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 512 kB\n");
    std::vector<ah::warning> w;
    auto host = ah::probe_host(ah::host_system(root.path().string()), w).first;
    CHECK(w.empty());
    REQUIRE(host.numa.size() == 1);
    CHECK(host.numa[0].memory_bytes == 1024u * 1024); // a lone node holds all the memory there is
    CHECK(*host.memory.total_bytes == 1024u * 1024);

    // Two nodes short of it: which node the rest belongs to is unknown, so both stay as read.
    root.write("sys/devices/system/node/node0/cpulist", "0\n");
    root.write("sys/devices/system/node/node1/cpulist", "1\n");
    root.write("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal: 256 kB\n");
    w.clear();
    host = ah::probe_host(ah::host_system(root.path().string()), w).first;
    REQUIRE(host.numa.size() == 2);
    CHECK(host.numa[0].memory_bytes == 512u * 1024);
    CHECK(host.numa[1].memory_bytes == 256u * 1024);
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::disagreement);
    CHECK(w[0].message.find("not yet initialised") != std::string::npos);

    // A node whose meminfo is unreadable is not stretched over the whole memory.
    std::filesystem::remove_all(root.path() / "sys/devices/system/node/node1");
    root.write("sys/devices/system/node/node0/meminfo", "garbage\n");
    w.clear();
    host = ah::probe_host(ah::host_system(root.path().string()), w).first;
    REQUIRE(host.numa.size() == 1);
    CHECK(host.numa[0].memory_bytes == 0);
}

TEST_CASE("probe_host: /proc/cpuinfo and the online mask disagree") {
    test::scratch_dir root;
    write_basics(root, 4); // e.g. LXCFS showing the container's share
    root.write("sys/devices/system/cpu/online", "0-63\n");
    std::vector<ah::warning> w;
    const auto [host, cpu] = ah::probe_host(ah::host_system(root.path().string()), w);
    CHECK(host.cpu.threads == 64); // sysfs kept
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::disagreement);
    CHECK(w[0].subject == "/sys/devices/system/cpu/online");
    CHECK(w[0].message.find("4 processors") != std::string::npos);
    CHECK(w[0].message.find("the online mask 64; using the online mask") != std::string::npos);
}

TEST_CASE("probe_host: sockets and cores from the sysfs topology") {
    test::scratch_dir root;
    write_basics(root, 4); // no "physical id" lines: cpuinfo does not know, no disagreement
    root.write("sys/devices/system/cpu/online", "0-3\n");
    const std::pair<int, int> ids[] = {{0, 0}, {0, 1}, {-1, 0}, {-1, 0}}; // package -1 as some Arm kernels print
    for (int n = 0; n < 4; ++n) {
        const std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(n) + "/topology/";
        root.write(dir + "physical_package_id", std::to_string(ids[n].first) + "\n");
        root.write(dir + "core_id", std::to_string(ids[n].second) + "\n");
    }
    std::vector<ah::warning> w;
    const auto [host, cpu] = ah::probe_host(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
    CHECK(host.cpu.threads == 4);
    CHECK(host.cpu.sockets == 2);
    CHECK(host.cpu.cores == 3);
}

TEST_CASE("probe_host: Arm core ids restart in each cluster (hand-made device-tree topology)") {
    // What drivers/base/arch_topology.c gives a device-tree board with two clusters of four
    // cores (RK3588-like): package 0 throughout, core_id 0-3 in each cluster, cluster_id apart.
    test::scratch_dir root;
    std::string cpuinfo;
    for (int n = 0; n < 8; ++n)
        cpuinfo += "processor\t: " + std::to_string(n) + "\nCPU implementer\t: 0x41\nCPU architecture: 8\n\n";
    root.write("proc/cpuinfo", cpuinfo);
    root.write("proc/meminfo", "MemTotal: 1024 kB\n");
    root.write("sys/devices/system/cpu/online", "0-7\n");
    for (int n = 0; n < 8; ++n) {
        const std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(n) + "/topology/";
        root.write(dir + "physical_package_id", "0\n");
        root.write(dir + "core_id", std::to_string(n % 4) + "\n");
        root.write(dir + "cluster_id", std::to_string(n / 4) + "\n");
    }
    std::vector<ah::warning> w;
    auto host = ah::probe_host(ah::host_system(root.path().string()), w).first;
    CHECK(w.empty());
    CHECK(host.cpu.arch == ah::cpu_arch::aarch64);
    CHECK(host.cpu.sockets == 1);
    CHECK(host.cpu.cores == 8);
    // A kernel before 6.0 on a device-tree board gives each cluster's id as its package id
    // (and, before 5.16, has no cluster_id): the ids still tell the cores apart. (The
    // sockets are then the clusters, 2 here: see probe_cpu_topology.)
    for (int n = 0; n < 8; ++n) {
        const std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(n) + "/topology/";
        std::filesystem::remove(root.path() / (dir + "cluster_id"));
        root.write(dir + "physical_package_id", std::to_string(n / 4) + "\n");
    }
    host = ah::probe_host(ah::host_system(root.path().string()), w).first;
    CHECK(host.cpu.cores == 8);
}

TEST_CASE("probe_host: usable threads are at most the CPUs online") {
    // Cpus_allowed_list is the task's raw mask: without a cpuset it names every possible
    // CPU, offline and hot-pluggable ones too, which sched_getaffinity leaves out.
    test::scratch_dir root;
    write_basics(root, 4);
    root.write("sys/devices/system/cpu/online", "0-3\n");
    root.write("proc/self/status", "Cpus_allowed_list:\t0-7\n");
    std::vector<ah::warning> w;
    auto host = ah::probe_host(ah::host_system(root.path().string()), w).first;
    CHECK(w.empty());
    CHECK(host.cpu.threads == 4);
    CHECK(host.cpu.usable_threads == 4);
    root.write("proc/self/status", "Cpus_allowed_list:\t1,3\n"); // a cpuset narrows it
    CHECK(ah::probe_host(ah::host_system(root.path().string()), w).first.cpu.usable_threads == 2);
    CHECK(w.empty());
    // Offline CPUs inside the mask: four of 0-11 offline (SMT switched off, say) and a task
    // mask of 0-7 (taskset) leave the task 0-3 alone, not 8 CPUs.
    write_basics(root, 8);
    root.write("sys/devices/system/cpu/online", "0-3,8-11\n");
    root.write("proc/self/status", "Cpus_allowed_list:\t0-7\n");
    host = ah::probe_host(ah::host_system(root.path().string()), w).first;
    CHECK(w.empty());
    CHECK(host.cpu.threads == 8);
    CHECK(host.cpu.usable_threads == 4);
    CHECK(ah::detail::cpulist_common_count("0-7", "0-3,8-11") == 4u);
    CHECK(ah::detail::cpulist_common_count("1,3,5-9", "0-5,9") == 4u);
    CHECK(ah::detail::cpulist_common_count("0-3", "x") == 4u);
    CHECK_FALSE(ah::detail::cpulist_common_count("x", "0-3"));
}

TEST_CASE("probe_host: a model name that is not printable text is cleaned, and said") {
    test::scratch_dir root;
    root.write("proc/cpuinfo", "processor\t: 0\nmodel name\t: Intel\xff\xfe \x1b]0;pwned\x07\x1b[2J Xeon\n"
                               "flags\t\t: fpu sse2\n");
    root.write("proc/meminfo", "MemTotal: 1024 kB\n");
    std::vector<ah::warning> w;
    const auto [host, cpu] = ah::probe_host(ah::host_system(root.path().string()), w);
    CHECK(host.cpu.model == "Intel?? ?]0;pwned??[2J Xeon");
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::parse_error);
    CHECK(w[0].subject == "/proc/cpuinfo");
    CHECK(cpu.name.view().find('\x1b') == std::string_view::npos);
}

TEST_CASE("probe_host: numbers past 2^64 and CPUs past the cap are out of range, not garbage") {
    test::scratch_dir root;
    root.write("proc/cpuinfo", cpuinfo_with(2));
    root.write("proc/meminfo", "MemTotal: 99999999999999999999999 kB\n");
    root.write("sys/devices/system/cpu/online", "0-70000\n");
    std::vector<ah::warning> w;
    ah::probe_host(ah::host_system(root.path().string()), w);
    INFO(test::warnings_text(w));
    REQUIRE(w.size() == 2);
    {
        // The task's mask past the cap too: out of range, as the online mask (before: garbage).
        test::scratch_dir mask;
        write_basics(mask, 2);
        mask.write("proc/self/status", "Cpus_allowed_list:\t0-100000\n");
        std::vector<ah::warning> mw;
        ah::probe_host(ah::host_system(mask.path().string()), mw);
        REQUIRE(mw.size() == 1);
        CHECK(mw[0].kind == ah::warning_kind::value_out_of_range);
        CHECK(mw[0].subject == "/proc/self/status");
    }
    CHECK(w[0].kind == ah::warning_kind::value_out_of_range);
    CHECK(w[0].subject == "/sys/devices/system/cpu/online");
    CHECK(w[1].kind == ah::warning_kind::value_out_of_range);
    CHECK(w[1].subject == "/proc/meminfo");
    // Words where the number belongs stay parse errors.
    root.write("proc/meminfo", "MemTotal: lots kB\n");
    w.clear();
    ah::probe_host(ah::host_system(root.path().string()), w);
    REQUIRE(w.size() == 2);
    CHECK(w[1].kind == ah::warning_kind::parse_error);
    CHECK(w[1].message == "MemTotal is not a number of kB");
}

TEST_CASE("probe_host: a hugetlb pool is not the CPU's memory") {
    test::scratch_dir root;
    write_basics(root, 2);
    root.write("proc/meminfo", "MemTotal: 1048576 kB\nMemAvailable: 131072 kB\nHugePages_Total: 400\n"
                               "Hugepagesize: 2048 kB\nHugetlb: 819200 kB\n");
    std::vector<ah::warning> w;
    auto [host, cpu] = ah::probe_host(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
    CHECK(*host.memory.total_bytes == 1048576u * 1024); // the host's memory as the kernel reports it
    CHECK(*cpu.memory_bytes == (1048576u - 819200u) * 1024);
    CHECK(*cpu.memory_free_bytes == 131072u * 1024);
    // Without the Hugetlb line (kernels before 4.16): pages × size of the default pool.
    root.write("proc/meminfo", "MemTotal: 1048576 kB\nMemAvailable: 131072 kB\nHugePages_Total: 400\n"
                               "Hugepagesize: 2048 kB\n");
    std::tie(host, cpu) = ah::probe_host(ah::host_system(root.path().string()), w);
    CHECK(*cpu.memory_bytes == (1048576u - 400u * 2048u) * 1024);
    // A pool as large as the memory (a hostile or broken file) is ignored.
    root.write("proc/meminfo", "MemTotal: 1024 kB\nHugetlb: 99999999999999999 kB\n");
    std::tie(host, cpu) = ah::probe_host(ah::host_system(root.path().string()), w);
    CHECK(*cpu.memory_bytes == 1024u * 1024);
    CHECK(w.empty());
}

TEST_CASE("parse_meminfo's hugetlb pool on the real captures (no pools) and hostile input") {
    const auto pool = [](std::string_view text) {
        std::uint64_t bytes = 1;
        ah::detail::parse_meminfo_and_pool(text, bytes);
        return bytes;
    };
    for (const char* file : {"meminfo_16gb-server_kernel3.14plus.txt", "meminfo_16gb-workstation_kernel5x_swap.txt",
                             "meminfo_64gb-x86_kernel6x_zswap-unaccepted.txt", "meminfo_huawei-kunpeng920_arm64.txt"}) {
        CAPTURE(file);
        if (const auto text = test::capture(std::string("proc-meminfo/") + file)) CHECK(pool(*text) == 0);
    }
    CHECK(pool("HugePages_Total: 4\nHugepagesize: 1048576 kB\n") == 4ull << 30);
    CHECK(pool("Hugetlb: 2048 kB\nHugePages_Total: 4\nHugepagesize: 1048576 kB\n") == 2048u * 1024); // every size
    CHECK(pool("HugePages_Total: 99999999999999999999\nHugepagesize: 2048 kB\n") == 0);
    CHECK(pool("HugePages_Total: 9007199254740993\nHugepagesize: 1048576 kB\n") == 0);
    CHECK(pool("Hugetlb: 99999999999999999 kB\n") == 0);
    CHECK(pool("") == 0);
}

TEST_CASE("probe_host: cgroup v2 CPU quota, own cgroup and ancestors") {
    test::scratch_dir root;
    write_basics(root, 4);
    root.write("sys/fs/cgroup/cpu.max", "250000 100000\n"); // what a container sees at its root
    std::vector<ah::warning> w;
    CHECK(ah::probe_host(ah::host_system(root.path().string()), w).first.cpu.cpu_quota == 2.5);
    // Host view: our cgroup is /a/b; b has no quota, a has 1.5 CPUs.
    root.write("proc/self/cgroup", "0::/a/b\n");
    root.write("sys/fs/cgroup/a/b/cpu.max", "max 100000\n");
    root.write("sys/fs/cgroup/a/cpu.max", "150000 100000\n");
    CHECK(ah::probe_host(ah::host_system(root.path().string()), w).first.cpu.cpu_quota == 1.5);
    root.write("sys/fs/cgroup/a/b/cpu.max", "50000 100000\n"); // the smaller one wins
    CHECK(ah::probe_host(ah::host_system(root.path().string()), w).first.cpu.cpu_quota == 0.5);
    CHECK(w.empty());
    // Garbage is a parse error; the others still count. ".." cannot climb out of the mount.
    root.write("proc/self/cgroup", "0::/a/b/../../../../etc\n");
    root.write("sys/fs/cgroup/cpu.max", "lots\n");
    CHECK(ah::probe_host(ah::host_system(root.path().string()), w).first.cpu.cpu_quota == 0);
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::parse_error);
    CHECK(w[0].subject == "/sys/fs/cgroup/cpu.max");
    // A quota of a millionth of a CPU over a period of 11 days: numbers the kernel refuses
    // (a period of 1 ms to 1 s, a quota of 1 ms at least), not a limit. Before, accepted.
    w.clear();
    root.write("sys/fs/cgroup/cpu.max", "1 1000000000000\n");
    CHECK(ah::probe_host(ah::host_system(root.path().string()), w).first.cpu.cpu_quota == 0);
    REQUIRE(w.size() == 1);
    CHECK(w[0].message == "not 'max <period>' or '<quota> <period>' as the kernel takes them");
}

TEST_CASE("probe_host: cgroup v1 CPU quota") {
    test::scratch_dir root;
    write_basics(root, 4);
    root.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    root.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    std::vector<ah::warning> w;
    CHECK(ah::probe_host(ah::host_system(root.path().string()), w).first.cpu.cpu_quota == 0);
    // Docker without a cgroup namespace: /proc/self/cgroup names /docker/<id>, the mount
    // shows the container's own cgroup at its root.
    root.write("proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n");
    root.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "200000\n");
    CHECK(ah::probe_host(ah::host_system(root.path().string()), w).first.cpu.cpu_quota == 2.0);
    CHECK(w.empty());

    test::scratch_dir other; // only the "cpu" mount
    write_basics(other, 4);
    other.write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "50000\n");
    other.write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    CHECK(ah::probe_host(ah::host_system(other.path().string()), w).first.cpu.cpu_quota == 0.5);
    other.write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "0\n");
    CHECK(ah::probe_host(ah::host_system(other.path().string()), w).first.cpu.cpu_quota == 0);
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::parse_error); // a period the kernel refuses
}

TEST_CASE("probe_host: cgroup memory limit, own cgroup and ancestors") {
    const auto limit = [](const test::scratch_dir& root, std::vector<ah::warning>& w) {
        return ah::probe_host(ah::host_system(root.path().string()), w).first.memory.cgroup_limit_bytes;
    };
    std::vector<ah::warning> w;
    test::scratch_dir v2;
    write_basics(v2, 4);
    CHECK_FALSE(limit(v2, w));
    // A service under systemd (MemoryMax= on its unit, 4 GiB on the slice above it): no
    // cgroup namespace, so the limits sit on the process's own cgroup and its parents, and
    // the mount's root (the host's) has no memory.max at all.
    v2.write("proc/self/cgroup", "0::/system.slice/llm.service\n");
    v2.write("sys/fs/cgroup/system.slice/llm.service/memory.max", "max\n");
    v2.write("sys/fs/cgroup/system.slice/memory.max", "4294967296\n");
    CHECK(limit(v2, w) == ah::sourced<std::uint64_t>{4_GiB, ah::origin::sysfs});
    v2.write("sys/fs/cgroup/system.slice/llm.service/memory.max", "2147483648\n"); // the smaller wins
    CHECK(limit(v2, w).value_or(0) == 2_GiB);
    CHECK(w.empty());
    // Garbage (words, bytes that are not UTF-8) is a parse error, a number past 2^64 out
    // of range, and the others still count.
    for (std::string_view bad : {"lots\n", "\xff\xfe\n", "184467440737095516160\n"}) {
        w.clear();
        v2.write("sys/fs/cgroup/system.slice/memory.max", std::string(bad));
        CHECK(limit(v2, w).value_or(0) == 2_GiB);
        REQUIRE(w.size() == 1);
        CHECK(w[0].kind == (bad.starts_with("1") ? ah::warning_kind::value_out_of_range : ah::warning_kind::parse_error));
        CHECK(w[0].subject == "/sys/fs/cgroup/system.slice/memory.max");
    }

    // cgroup v1: the memory controller's own line; Docker without a cgroup namespace names
    // /docker/<id> there while the mount shows the container's cgroup at its root.
    w.clear();
    test::scratch_dir v1;
    write_basics(v1, 4);
    v1.write("proc/self/cgroup", "4:cpu,cpuacct:/\n3:memory:/docker/abc\n");
    v1.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"); // none
    CHECK_FALSE(limit(v1, w));
    v1.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "536870912\n");
    CHECK(limit(v1, w).value_or(0) == 512_MiB);
    // The host's view of the same container: its limit on /docker/abc.
    v1.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    v1.write("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "1073741824\n");
    CHECK(limit(v1, w).value_or(0) == 1_GiB);
    CHECK(w.empty());
    // Once a v2 memory.max is seen, v1's files are not read.
    v1.write("sys/fs/cgroup/memory.max", "max\n");
    CHECK_FALSE(limit(v1, w));
    CHECK(w.empty());
}

TEST_CASE("probe_host: a CPU's free memory is the room left under its cgroup's limits") {
    const auto free_bytes = [](const test::scratch_dir& root, std::vector<ah::warning>& w) {
        return ah::probe_host(ah::host_system(root.path().string()), w).second.memory_free_bytes.value_or(0);
    };
    std::vector<ah::warning> w;
    test::scratch_dir v2;
    v2.write("proc/cpuinfo", cpuinfo_with(4));
    v2.write("proc/meminfo", "MemTotal: 67108864 kB\nMemAvailable: 50331648 kB\n"); // 64 GiB, 48 free
    CHECK(free_bytes(v2, w) == 48_GiB);
    // A service (MemoryMax=8G) using 6 GiB, 1 GiB of it inactive page cache the kernel would
    // reclaim first: 3 GiB left, whatever the machine has free.
    v2.write("proc/self/cgroup", "0::/system.slice/llm.service\n");
    v2.write("sys/fs/cgroup/system.slice/llm.service/memory.max", "8589934592\n");
    v2.write("sys/fs/cgroup/system.slice/llm.service/memory.current", "6442450944\n");
    v2.write("sys/fs/cgroup/system.slice/llm.service/memory.stat",
             "anon 5368709120\nfile 1073741824\nactive_anon 5368709120\ninactive_anon 0\n"
             "active_file 0\ninactive_file 1073741824\n");
    CHECK(free_bytes(v2, w) == 3_GiB);
    // Its slice holds 16 GiB and is using 15 of them (other services): 1 GiB left there.
    v2.write("sys/fs/cgroup/system.slice/memory.max", "17179869184\n");
    v2.write("sys/fs/cgroup/system.slice/memory.current", "16106127360\n");
    CHECK(free_bytes(v2, w) == 1_GiB);
    // Without memory.stat the usage counts whole; usage over the limit (the kernel lets it
    // pass for a moment) leaves nothing.
    v2.write("sys/fs/cgroup/system.slice/memory.current", "20000000000\n");
    CHECK(free_bytes(v2, w) == 0);
    // Inactive pages past the usage (counters read at different moments) leave the limit.
    v2.write("sys/fs/cgroup/system.slice/memory.max", "max\n");
    v2.write("sys/fs/cgroup/system.slice/llm.service/memory.current", "1073741824\n");
    v2.write("sys/fs/cgroup/system.slice/llm.service/memory.stat", "inactive_file 2147483648\n");
    CHECK(free_bytes(v2, w) == 8_GiB);
    CHECK(w.empty());
    // A usage that is not a number: a parse error, the room unknown, free as the limit bounds it.
    v2.write("sys/fs/cgroup/system.slice/llm.service/memory.current", "lots\n");
    CHECK(free_bytes(v2, w) == 8_GiB);
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::parse_error);
    CHECK(w[0].subject == "/sys/fs/cgroup/system.slice/llm.service/memory.current");

    // cgroup v1 (Docker, seen from inside): the hierarchical total_inactive_file counts, not
    // the cgroup's own inactive_file.
    w.clear();
    test::scratch_dir v1;
    v1.write("proc/cpuinfo", cpuinfo_with(4));
    v1.write("proc/meminfo", "MemTotal: 67108864 kB\nMemAvailable: 50331648 kB\n");
    v1.write("proc/self/cgroup", "3:memory:/docker/abc\n");
    v1.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "4294967296\n");
    v1.write("sys/fs/cgroup/memory/memory.usage_in_bytes", "3221225472\n");
    v1.write("sys/fs/cgroup/memory/memory.stat", "cache 1610612736\nrss 1610612736\ninactive_file 0\n"
                                                  "total_cache 1610612736\ntotal_inactive_file 1073741824\n");
    CHECK(free_bytes(v1, w) == 2_GiB);
    // No limit: the usage is not read, and the machine's available memory stands.
    v1.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    CHECK(free_bytes(v1, w) == 48_GiB);
    CHECK(w.empty());
}

TEST_CASE("probe_host: bad and unreadable CPU files") {
    test::scratch_dir root;
    write_basics(root, 4);
    root.write("sys/devices/system/cpu/online", "0-4294967295\n");
    root.write("proc/self/status", "Cpus_allowed_list:\t\xff\n");
    root.write("sys/fs/cgroup/cpu.max", "1 2\n");
    denying_view sys(root.path().string());
    sys.denied.insert("/sys/fs/cgroup/cpu.max");
    std::vector<ah::warning> w;
    const auto host = ah::probe_host(sys, w).first;
    CHECK(host.cpu.threads == 4); // cpuinfo's count stands
    CHECK(host.cpu.usable_threads == 0);
    CHECK(host.cpu.cpu_quota == 0);
    REQUIRE(w.size() == 3);
    CHECK(w[0].kind == ah::warning_kind::parse_error);
    CHECK(w[0].subject == "/sys/devices/system/cpu/online");
    CHECK(w[1].kind == ah::warning_kind::parse_error);
    CHECK(w[1].subject == "/proc/self/status");
    CHECK(w[2].kind == ah::warning_kind::permission_denied);
    CHECK(w[2].subject == "/sys/fs/cgroup/cpu.max");
}
