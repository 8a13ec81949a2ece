#include "ai_hwaccel/detect/npu.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#if AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA || AI_HWACCEL_BACKEND_SAMSUNG_NPU ||              \
    AI_HWACCEL_BACKEND_MEDIATEK_APU

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;

namespace {

[[maybe_unused]] std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

// A hand-made machine tree: accel nodes laid out as the kernel does (the PCI function's
// folder under /sys/devices, the node inside it, /sys/class/accel linking to the node).
struct fake_accel_host {
    test::scratch_dir dir;
    fs::path root = dir.path();
    void link(const std::string& at, const std::string& target) const {
        fs::create_directories((root / at).parent_path());
        fs::create_symlink(target, root / at);
    }
    static std::string fn(const std::string& pci) { return "sys/devices/pci0000:00/" + pci; }
    // accel<n> on PCI function `pci`, bound to `driver` ("" for none).
    void node(int n, const std::string& pci, const std::string& vendor, const std::string& device,
              const std::string& driver) const {
        const auto f = fn(pci);
        dir.write(f + "/vendor", vendor + "\n");
        dir.write(f + "/device", device + "\n");
        if (!driver.empty()) link(f + "/driver", "../../../bus/pci/drivers/" + driver);
        const std::string a = "accel" + std::to_string(n);
        link(f + "/accel/" + a + "/device", "../../../" + pci);
        link("sys/class/accel/" + a, "../../devices/pci0000:00/" + pci + "/accel/" + a);
    }
};

} // namespace

#if AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA

TEST_CASE("detail::npu helpers") {
    using namespace ah::detail::npu;
    CHECK(accel_index("accel3") == 3u);
    CHECK_FALSE(accel_index("accel"));
    CHECK_FALSE(accel_index("accel99999999999999999999"));
    CHECK(xdna_row_name(0x17f0, 0x10, "") == "AMD XDNA 2 NPU (Strix Point)");
    CHECK(xdna_row_name(0x17f0, 0x11, "") == "AMD XDNA 2 NPU (Strix Halo)");
    CHECK(xdna_row_name(0x17f0, 0x20, "NPU Krackan").empty()); // no catalogue row yet
    CHECK(xdna_row_name(0x17f0, std::nullopt, "NPU Strix Halo") == "AMD XDNA 2 NPU (Strix Halo)");
    CHECK(xdna_row_name(0x17f0, std::nullopt, "RyzenAI-npu4") == "AMD XDNA 2 NPU (Strix Point)");
    CHECK(xdna_row_name(0x1502, 0x00, "NPU Phoenix").empty()); // Phoenix and Hawk Point share it
    CHECK(split_device_path("/sys/class/accel/accel0/device/power/runtime_status") ==
          std::pair<std::string, std::string>{"accel0", "power/runtime_status"});
    CHECK(split_device_path("/sys/devices/pci0000:00/0000:00:0b.0/npu_busy_time_us") ==
          std::pair<std::string, std::string>{"0000:00:0b.0", "npu_busy_time_us"});
    CHECK(split_device_path("/proc/meminfo").first.empty());
}

TEST_CASE("parse_accel_class_listing") {
    SUBCASE("real capture: Strix Halo, one XDNA node") {
        const auto t = test::capture("npu-sysfs/ls-sys-class-accel_strix-halo-xdna.txt");
        if (!t) return;
        const auto r = ah::parse_accel_class_listing(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.entries.size() == 1);
        CHECK(r.entries[0].name == "accel0");
        CHECK(r.entries[0].index == 0);
        CHECK(r.entries[0].target == "../../devices/pci0000:00/0000:00:08.2/0000:c6:00.1/accel/accel0");
        CHECK(r.entries[0].pci == ah::pci_address{0, 0xc6, 0, 1});
    }
    SUBCASE("hand-made: two nodes, another entry, garbage") {
        const auto r = ah::parse_accel_class_listing(
            "total 0\n"
            "lrwxrwxrwx 1 root root 0 Jan 1 00:00 accel0 -> ../../devices/pci0000:00/0000:00:0b.0/accel/accel0\n"
            "lrwxrwxrwx 1 root root 0 Jan 1 00:00 accel1 -> ../../devices/platform/foo/accel/accel1\n"
            "-r--r--r-- 1 root root 4096 Jan 1 00:00 version\n"
            "garbage\xff\n");
        REQUIRE(r.entries.size() == 2);
        CHECK(r.entries[0].pci == ah::pci_address{0, 0, 0x0b, 0});
        CHECK_FALSE(r.entries[1].pci); // not a PCI device
        CHECK(r.problems.size() == 1);
    }
    SUBCASE("hand-made: a node listed twice is reported, not counted twice") {
        const auto r = ah::parse_accel_class_listing(
            "lrwxrwxrwx 1 root root 0 Jan 1 00:00 accel0 -> ../../devices/pci0000:00/0000:00:0b.0/accel/accel0\n"
            "lrwxrwxrwx 1 root root 0 Jan 1 00:00 accel0 -> ../../devices/pci0000:00/0000:00:0c.0/accel/accel0\n");
        REQUIRE(r.entries.size() == 1);
        CHECK(r.entries[0].pci == ah::pci_address{0, 0, 0x0b, 0});
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0].message == "accel0 listed twice; the second line ignored");
    }
    SUBCASE("hostile input") {
        for (std::string s : {std::string(), std::string(1 << 20, 'x'), std::string("\0\0\0", 3),
                              std::string("accel0 -> ") + std::string(100000, '/'), std::string(5000, '\n')}) {
            const auto r = ah::parse_accel_class_listing(s);
            CHECK(r.problems.size() <= ah::detail::parsing::max_problems + 1);
        }
        std::string many;
        for (int i = 0; i < 3000; ++i) many += "l 1 r r 0 J 1 0 accel" + std::to_string(i % 9000) + " -> ../a/accel/x\n";
        const auto r = ah::parse_accel_class_listing(many);
        CHECK(r.entries.size() == ah::detail::parsing::max_rows);
    }
}

TEST_CASE("parse_accel_transcript") {
#if AI_HWACCEL_BACKEND_INTEL_NPU
    SUBCASE("real capture: Lunar Lake accel0 attributes") {
        const auto t = test::capture("npu-sysfs/session_lunar-lake_accel0-device-attributes.txt");
        if (!t) return;
        const auto r = ah::parse_accel_transcript(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.facts.size() == 1);
        const auto& f = r.facts[0];
        CHECK(f.node == "accel0");
        CHECK(f.driver == "intel_vpu");
        CHECK(f.pci == ah::pci_address{0, 0, 0x0b, 0});
        CHECK(f.vendor_id == 0x8086);
        CHECK(f.device_id == 0x643e);
        CHECK(f.subsystem_vendor_id == 0x17aa);
        CHECK(f.subsystem_device_id == 0x2339);
        CHECK(f.max_frequency_mhz == 1900u);
        CHECK(f.current_frequency_mhz == 0u);
        CHECK(f.busy_time_us == 979473u);
        CHECK(f.memory_utilization_bytes == 68714496u);
        CHECK(f.power_state == "D3hot");
        CHECK(f.runtime_status == "suspended");
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.kind == ah::device_kind::intel_npu);
        CHECK(d.maker == ah::vendor::intel);
        CHECK(d.index == 0);
        CHECK(d.available);
        CHECK(d.name.view() == "Intel NPU (Lunar Lake)");
        CHECK(d.pci == ah::pci_address{0, 0, 0x0b, 0});
        CHECK(d.pci_device_id == 0x643e);
        CHECK(d.unified_memory);
        CHECK_FALSE(d.memory_bytes.has_value()); // the host's memory; never invented
        CHECK(*d.memory_used_bytes == 68714496u);
        CHECK(d.memory_used_bytes.from == ah::origin::sysfs);
        CHECK(d.peak.int8 == doctest::Approx(48));
        CHECK(d.peak_from == ah::origin::catalogue);
        CHECK(d.arch.view() == "40xx");
        CHECK_FALSE(d.pcie_current.has_value()); // "Unknown", 0, 255: no PCIe link
        CHECK_FALSE(d.pcie_max.has_value());
    }
#endif
#if AI_HWACCEL_BACKEND_AMD_XDNA
    SUBCASE("hand-made: an amdxdna node read by its PCI folder, with grep-less cats") {
        const auto r = ah::parse_accel_transcript("user@box:~$ cat /sys/bus/pci/devices/0000:c6:00.1/vbnv\n"
                                                  "NPU Strix Halo\n"
                                                  "user@box:~$ cat /sys/bus/pci/devices/0000:c6:00.1/fw_version\n"
                                                  "1.1.0.12\n"
                                                  "user@box:~$ readlink /sys/bus/pci/devices/0000:c6:00.1/driver\n"
                                                  "../../../../bus/pci/drivers/amdxdna\n"
                                                  "user@box:~$ cat /sys/bus/pci/devices/0000:c6:00.1/device\n"
                                                  "0x17f0\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.kind == ah::device_kind::amd_xdna_npu);
        CHECK(d.name.view() == "AMD XDNA 2 NPU (Strix Halo)");
        CHECK(d.pci == ah::pci_address{0, 0xc6, 0, 1});
        CHECK(r.facts[0].fw_version == "1.1.0.12");
    }
#endif
    SUBCASE("hand-made: a driver of another backend gives facts, no device") {
        const auto r = ah::parse_accel_transcript("$ readlink -f /sys/class/accel/accel0/device/driver\n"
                                                  "/sys/bus/pci/drivers/habanalabs\n");
        CHECK(r.problems.empty());
        REQUIRE(r.facts.size() == 1);
        CHECK(r.facts[0].driver == "habanalabs");
        CHECK(r.devices.empty());
    }
    SUBCASE("hand-made: values not understood, output with no file") {
        const auto r = ah::parse_accel_transcript("$ cat /sys/class/accel/accel0/device/npu_busy_time_us\n"
                                                  "lots\n"
                                                  "$ cat /sys/class/accel/accel0/device/npu_max_frequency_mhz\n"
                                                  "99999999999999999999999\n"
                                                  "$ cat /sys/class/accel/accel0/device/uevent\n"
                                                  "PCI_ID=zz:yy\n"
                                                  "\n"
                                                  "stray output\n"
                                                  "$ cat /sys/class/accel/accel0/device/vbnv\n");
        REQUIRE(r.problems.size() == 5);
        CHECK(r.problems[0].kind == ah::warning_kind::parse_error);        // "lots"
        CHECK(r.problems[1].kind == ah::warning_kind::value_out_of_range); // past 2^64
        REQUIRE(r.facts.size() == 1);
        CHECK_FALSE(r.facts[0].busy_time_us);
        CHECK_FALSE(r.facts[0].max_frequency_mhz);
        // Past what an NPU reports, though a uint64_t holds it: out of range too.
        const auto big = ah::parse_accel_transcript("$ cat /sys/class/accel/accel0/device/npu_memory_utilization\n"
                                                    "18446744073709551615\n");
        REQUIRE(big.problems.size() == 1);
        CHECK(big.problems[0].kind == ah::warning_kind::value_out_of_range);
    }
    SUBCASE("hand-made: the Lunar Lake session typed other ways reads the same values") {
        // Before, each of these lost values without a word (or, for the bracketed prompt,
        // with a problem per line).
        const std::string driver = "$ readlink -f /sys/class/accel/accel0/device/driver\n/sys/bus/pci/drivers/intel_vpu\n\n";
        const std::string body = "== npu_busy_time_us ==\n979473\n== npu_memory_utilization ==\n68714496\n";
        const std::string loop = "for f in npu_busy_time_us npu_memory_utilization; do echo \"== $f ==\"; cat \"$ACCEL/$f\"; done\n";
        const std::string cases[] = {
            // the variable set at a prompt, with or without export
            driver + "$ ACCEL=/sys/class/accel/accel0/device\n$ cat $ACCEL/npu_busy_time_us\n979473\n"
                     "$ cat $ACCEL/npu_memory_utilization\n68714496\n",
            driver + "$ export ACCEL=/sys/class/accel/accel0/device\n$ cat $ACCEL/npu_busy_time_us\n979473\n"
                     "$ cat $ACCEL/npu_memory_utilization\n68714496\n",
            // the loop on one line, without a prompt and at one
            driver + "ACCEL=/sys/class/accel/accel0/device\n" + loop + body,
            driver + "$ ACCEL=/sys/class/accel/accel0/device\n$ " + loop + body,
            // the loop typed over several lines at a terminal: bash's "> " prompts
            driver + "$ ACCEL=/sys/class/accel/accel0/device\n$ for f in npu_busy_time_us npu_memory_utilization\n"
                     "> do echo \"== $f ==\"; cat \"$ACCEL/$f\"\n> done\n" + body,
            // Fedora's and RHEL's prompt
            "[me@box ~]$ readlink -f /sys/class/accel/accel0/device/driver\n/sys/bus/pci/drivers/intel_vpu\n"
            "[me@box ~]$ cat /sys/class/accel/accel0/device/npu_busy_time_us\n979473\n"
            "[me@box ~]$ cat /sys/class/accel/accel0/device/npu_memory_utilization\n68714496\n",
            // the node's folder and its PCI function's, as its uevent or its link names it
            "$ cat /sys/class/accel/accel0/device/uevent\nDRIVER=intel_vpu\nPCI_SLOT_NAME=0000:00:0b.0\n\n"
            "$ cat /sys/bus/pci/devices/0000:00:0b.0/npu_busy_time_us\n979473\n"
            "$ cat /sys/bus/pci/devices/0000:00:0b.0/npu_memory_utilization\n68714496\n",
            driver + "$ readlink -f /sys/class/accel/accel0/device\n/sys/devices/pci0000:00/0000:00:0b.0\n"
                     "$ cat /sys/bus/pci/devices/0000:00:0b.0/npu_busy_time_us\n979473\n"
                     "$ cat /sys/bus/pci/devices/0000:00:0b.0/npu_memory_utilization\n68714496\n",
        };
        for (std::size_t i = 0; i < std::size(cases); ++i) {
            CAPTURE(i);
            const auto r = ah::parse_accel_transcript(cases[i]);
            INFO(problems_of(r.problems));
            CHECK(r.problems.empty());
            REQUIRE(r.facts.size() == 1);
            CHECK(r.facts[0].node == "accel0");
            CHECK(r.facts[0].driver == "intel_vpu");
            CHECK(r.facts[0].busy_time_us == 979473u);
            CHECK(r.facts[0].memory_utilization_bytes == 68714496u);
        }
        // A path through a variable the transcript never sets is said, not dropped.
        const auto r = ah::parse_accel_transcript("$ cat $ACCEL/npu_busy_time_us\n979473\n");
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0].message.find("a variable the transcript does not set") != std::string::npos);
    }
    SUBCASE("hostile input") {
        std::string bin;
        for (int i = 0; i < 4096; ++i) bin += static_cast<char>(i * 37);
        for (std::string s : {std::string(), std::string(1 << 20, 'x'), bin,
                              std::string("$ cat /sys/class/accel/accel0/device/vbnv\n") + std::string(1 << 20, 'v'),
                              std::string("A=/x\n$ cat $A$A$A$A$A$A$A$A$A/accel0/vbnv\nz\n"),
                              std::string("for f in a; do\n cat \"$f\"\ndone\n== a ==\n1\n")}) {
            const auto r = ah::parse_accel_transcript(s);
            CHECK(r.problems.size() <= ah::detail::parsing::max_problems + 1);
        }
        std::string many;
        for (int i = 0; i < 3000; ++i) many += "$ cat /sys/class/accel/accel" + std::to_string(i) + "/device/vbnv\nx\n";
        CHECK(ah::parse_accel_transcript(many).facts.size() == ah::detail::parsing::max_rows);
    }
}

TEST_CASE("npu_profile_from_facts") {
    ah::accel_device_facts f;
    f.node = "accel2";
    CHECK_FALSE(ah::npu_profile_from_facts(f)); // no driver: no kind
#if AI_HWACCEL_BACKEND_AMD_XDNA
    f.driver = "amdxdna";
    f.device_id = 0x17f0;
    f.revision = 0x10;
    auto p = ah::npu_profile_from_facts(f);
    REQUIRE(p);
    CHECK(p->index == 2);
    CHECK(p->name.view() == "AMD XDNA 2 NPU (Strix Point)");
    CHECK(p->peak.int8 == doctest::Approx(50));
    f.revision = 0x20;
    f.vbnv = "NPU Krackan";
    p = ah::npu_profile_from_facts(f);
    REQUIRE(p);
    CHECK(p->spec == nullptr);
    CHECK(p->name.view() == "NPU Krackan"); // the driver's own name where no row exists
    f.device_id = 0x1502;
    f.revision = 0;
    f.vbnv.clear();
    p = ah::npu_profile_from_facts(f);
    REQUIRE(p);
    CHECK(p->spec == nullptr); // Phoenix or Hawk Point: the kernel cannot tell
#endif
}

TEST_CASE("probe_accel_nodes") {
    SUBCASE("no /sys/class/accel: nothing, no warning") {
        test::scratch_dir dir;
        std::vector<ah::warning> w;
        CHECK(ah::probe_accel_nodes(ah::host_system(dir.path().string()), "intel_vpu", w).empty());
        CHECK(w.empty());
    }
    SUBCASE("hand-made tree: links copied as files, uevent gives the address") {
        fake_accel_host h;
        // A tree whose links were stored as small files holding their targets.
        h.dir.write("sys/class/accel/accel0/device/driver", "../../../bus/pci/drivers/intel_vpu\n");
        h.dir.write("sys/class/accel/accel0/device/uevent", "DRIVER=intel_vpu\nPCI_SLOT_NAME=0000:00:0b.0\n");
        h.dir.write("sys/class/accel/accel0/device/device", "0x7d1d\n");
        std::vector<ah::warning> w;
        const auto nodes = ah::probe_accel_nodes(ah::host_system(h.root.string()), "intel_vpu", w);
        CHECK(w.empty());
        REQUIRE(nodes.size() == 1);
        CHECK(nodes[0].pci == ah::pci_address{0, 0, 0x0b, 0});
        CHECK(nodes[0].device_id == 0x7d1d);
        CHECK(nodes[0].device_node); // no /dev in the tree: nothing said about nodes
    }
}

#endif // INTEL_NPU || AMD_XDNA

#if AI_HWACCEL_BACKEND_INTEL_NPU
static_assert(ah::backend_probe<ah::intel_npu_probe, ah::host_system>);
static_assert(ah::descriptor_of<ah::intel_npu_probe>().name == "intel_npu");

TEST_CASE("intel_npu_probe") {
    SUBCASE("hand-made tree: two NPUs, a Gaudi node, an unbound node, garbage") {
        fake_accel_host h;
        const auto& d = h.dir;
        h.node(0, "0000:00:0b.0", "0x8086", "0x643e", "intel_vpu");
        h.node(1, "0000:33:00.0", "0x1da3", "0x1020", "habanalabs"); // another backend's
        h.node(2, "0000:00:0c.0", "0x8086", "0x7d1d", "");            // no driver bound
        h.node(3, "0000:80:0b.0", "0x8086", "0xb03e", "intel_vpu");   // Panther Lake: no row
        const auto a = fake_accel_host::fn("0000:00:0b.0");
        d.write(a + "/npu_busy_time_us", "979473\n");
        d.write(a + "/npu_memory_utilization", "68714496\n");
        d.write(a + "/npu_max_frequency_mhz", "1950\n");
        d.write(a + "/npu_current_frequency_mhz", "1950\n");
        d.write(a + "/sched_mode", "HW\n");
        d.write(a + "/power/runtime_status", "active\n");
        d.write(a + "/subsystem_vendor", "0x17aa\n");
        const auto b = fake_accel_host::fn("0000:80:0b.0");
        d.write(b + "/npu_busy_time_us", "-5\n");
        d.write(b + "/npu_memory_utilization", "\xff\xfe\n");
        d.write("dev/accel/accel0", "");
        // /dev exists and has accel0 but not accel3: accel3 cannot be opened.
        const auto out = ah::intel_npu_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        REQUIRE(out.warnings.size() == 2);
        for (const auto& w : out.warnings) CHECK(w.backend == ah::backend_id::intel_npu);
        CHECK(out.warnings[0].kind == ah::warning_kind::value_out_of_range); // -5: a number no NPU reports
        CHECK(out.warnings[1].kind == ah::warning_kind::parse_error);        // not a number
        REQUIRE(out.devices.size() == 2);
        const auto& n = out.devices[0];
        CHECK(n.index == 0);
        CHECK(n.available);
        CHECK(n.name.view() == "Intel NPU (Lunar Lake)");
        CHECK(n.pci == ah::pci_address{0, 0, 0x0b, 0});
        CHECK(*n.memory_used_bytes == 68714496u);
        CHECK_FALSE(n.memory_bytes); // the tree has no /proc/meminfo: the host's size is unknown
        CHECK_FALSE(n.memory_free_bytes);
        CHECK(n.unified_memory);
        const auto& p = out.devices[1];
        CHECK(p.index == 3);
        CHECK_FALSE(p.available);
        CHECK(p.pci_device_id == 0xb03e);
        CHECK(p.spec == nullptr);
        CHECK(p.kind == ah::device_kind::intel_npu);
        CHECK(out.links.empty());

        std::vector<ah::warning> w;
        const auto facts = ah::probe_accel_nodes(ah::host_system(h.root.string()), "intel_vpu", w);
        REQUIRE(facts.size() == 2);
        CHECK(facts[0].sched_mode == "HW");
        CHECK(facts[0].max_frequency_mhz == 1950u);
        CHECK(facts[0].runtime_status == "active");
        CHECK(facts[0].subsystem_vendor_id == 0x17aa);
    }
    SUBCASE("machine tree: handmade-laptop-intel-npu") {
        const std::string root = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-laptop-intel-npu";
        if (!fs::exists(root)) {
            MESSAGE("skipped: machine tree not assembled");
            return;
        }
        const ah::host_system sys(root);
        const auto out = ah::intel_npu_probe{}.probe(sys);
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        const auto& d = out.devices[0];
        CHECK(d.kind == ah::device_kind::intel_npu);
        CHECK(d.name.view() == "Intel NPU (Lunar Lake)");
        CHECK(d.pci == ah::pci_address{0, 0, 0x0b, 0});
        CHECK(d.pci_device_id == 0x643e);
        CHECK(d.available);
        CHECK(d.unified_memory);
        // The host's memory, as OpenVINO's NPU plugin gives an integrated NPU: MemTotal
        // 16337408 kB, MemAvailable 9319948 kB in the tree's /proc/meminfo.
        CHECK(d.memory_bytes == ah::sourced<std::uint64_t>{16337408ull * 1024, ah::origin::sysfs});
        CHECK(d.memory_free_bytes == ah::sourced<std::uint64_t>{9319948ull * 1024, ah::origin::sysfs});
        CHECK(*d.memory_used_bytes == 68714496u);
        CHECK(d.peak.int8 == doctest::Approx(48));
        std::vector<ah::warning> w;
        const auto facts = ah::probe_accel_nodes(sys, "intel_vpu", w);
        REQUIRE(facts.size() == 1);
        CHECK(facts[0].max_frequency_mhz == 1900u);
        CHECK(facts[0].busy_time_us == 979473u);
        CHECK(facts[0].power_state == "D3hot");
        CHECK(facts[0].runtime_status == "suspended");
#if AI_HWACCEL_BACKEND_AMD_XDNA
        CHECK(ah::amd_xdna_probe{}.probe(sys).devices.empty());
#endif
    }
}
#endif // AI_HWACCEL_BACKEND_INTEL_NPU

#if AI_HWACCEL_BACKEND_AMD_XDNA
static_assert(ah::backend_probe<ah::amd_xdna_probe, ah::host_system>);
static_assert(ah::descriptor_of<ah::amd_xdna_probe>().name == "amd_xdna");

TEST_CASE("amd_xdna_probe") {
    SUBCASE("hand-made tree: an Intel NPU the catalogue lacks (Panther Lake's 0xb03e) is named by its id") {
        fake_accel_host h;
        h.node(0, "0000:00:0b.0", "0x8086", "0xb03e", "intel_vpu");
        const auto out = ah::intel_npu_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].spec == nullptr);
        CHECK(out.devices[0].name.view() == "Intel NPU [0xb03e]");
    }
    SUBCASE("hand-made tree: Strix Point by revision, Phoenix left unmatched") {
        fake_accel_host h;
        h.node(0, "0000:c5:00.1", "0x1022", "0x17f0", "amdxdna");
        h.node(1, "0000:65:00.1", "0x1022", "0x1502", "amdxdna");
        h.node(2, "0000:00:0b.0", "0x8086", "0x643e", "intel_vpu"); // Intel's: skipped
        h.dir.write(fake_accel_host::fn("0000:c5:00.1") + "/revision", "0x10\n");
        h.dir.write(fake_accel_host::fn("0000:c5:00.1") + "/fw_version", "1.0.0.166\n");
        h.dir.write(fake_accel_host::fn("0000:65:00.1") + "/revision", "0x00\n");
        h.dir.write(fake_accel_host::fn("0000:65:00.1") + "/vbnv", "NPU Phoenix\n");
        const auto out = ah::amd_xdna_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 2);
        CHECK(out.devices[0].name.view() == "AMD XDNA 2 NPU (Strix Point)");
        CHECK(out.devices[0].maker == ah::vendor::amd);
        CHECK(out.devices[0].arch.view() == "XDNA2");
        CHECK(out.devices[1].spec == nullptr);
        CHECK(out.devices[1].name.view() == "NPU Phoenix");
        CHECK(out.devices[1].pci == ah::pci_address{0, 0x65, 0, 1});
        for (const auto& d : out.devices) CHECK_FALSE(d.memory_bytes); // no /proc/meminfo

        // With the host's memory readable, every NPU on it works from it; a MemTotal alone
        // leaves free memory unknown, and a MemTotal the parser rejects leaves all unknown.
        h.dir.write("proc/meminfo", "MemFree: 1000 kB\nMemTotal:       32768000 kB\n");
        const auto sized = ah::amd_xdna_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(sized.devices.size() == 2);
        CHECK(sized.warnings.empty());
        for (const auto& d : sized.devices) {
            CHECK(d.memory_bytes == ah::sourced<std::uint64_t>{32768000ull * 1024, ah::origin::sysfs});
            CHECK_FALSE(d.memory_free_bytes);
        }
        for (std::string_view bad : {"MemTotal: 99999999999999999999 kB\n", "MemTotal: 12 pages\n", "\xff\xfe\n", ""}) {
            h.dir.write("proc/meminfo", std::string(bad));
            const auto unsized = ah::amd_xdna_probe{}.probe(ah::host_system(h.root.string()));
            REQUIRE(unsized.devices.size() == 2);
            for (const auto& d : unsized.devices) CHECK_FALSE(d.memory_bytes);
        }
    }
    SUBCASE("machine tree: handmade-laptop-ryzen-ai-xdna") {
        const std::string root = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-laptop-ryzen-ai-xdna";
        if (!fs::exists(root)) {
            MESSAGE("skipped: machine tree not assembled");
            return;
        }
        const ah::host_system sys(root);
        const auto out = ah::amd_xdna_probe{}.probe(sys);
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        const auto& d = out.devices[0];
        CHECK(d.kind == ah::device_kind::amd_xdna_npu);
        CHECK(d.name.view() == "AMD XDNA 2 NPU (Strix Halo)");
        CHECK(d.pci == ah::pci_address{0, 0xc6, 0, 1});
        CHECK(d.pci_device_id == 0x17f0);
        CHECK(d.index == 0);
        CHECK(d.available);
        CHECK(d.unified_memory);
        CHECK(d.memory_bytes == ah::sourced<std::uint64_t>{65589900ull * 1024, ah::origin::sysfs}); // MemTotal
        CHECK(d.memory_free_bytes == ah::sourced<std::uint64_t>{49384032ull * 1024, ah::origin::sysfs});
        CHECK_FALSE(d.memory_used_bytes);
        CHECK(d.peak_from == ah::origin::catalogue); // the Strix Halo row's 50 TOPS
        CHECK(d.peak.int8 == doctest::Approx(50));
#if AI_HWACCEL_BACKEND_INTEL_NPU
        CHECK(ah::intel_npu_probe{}.probe(sys).devices.empty());
#endif
    }
}
#endif // AI_HWACCEL_BACKEND_AMD_XDNA

#if AI_HWACCEL_BACKEND_SAMSUNG_NPU || AI_HWACCEL_BACKEND_MEDIATEK_APU
TEST_CASE("parse_dt_compatible") {
    using v = std::vector<std::string>;
    CHECK(ah::parse_dt_compatible(std::string("samsung,exynos-npu\0", 19)) == v{"samsung,exynos-npu"});
    CHECK(ah::parse_dt_compatible(std::string("a\0b\0\0c", 6)) == v{"a", "b", "c"});
    CHECK(ah::parse_dt_compatible("").empty());
    std::string many;
    for (int i = 0; i < 100; ++i) many += std::string("x\0", 2);
    CHECK(ah::parse_dt_compatible(many).size() == 32);
    CHECK(ah::parse_dt_compatible("\xff\xfe").size() == 1);
}
#endif

#if AI_HWACCEL_BACKEND_SAMSUNG_NPU
static_assert(ah::backend_probe<ah::samsung_npu_probe, ah::host_system>);
TEST_CASE("samsung_npu_probe") {
    // Hand-made device trees; the node name and compatible as in Samsung's Exynos DTS.
    test::scratch_dir dir;
    const std::string base = "sys/firmware/devicetree/base/";
    dir.write(base + "compatible", std::string("samsung,exynos-npu\0", 19)); // the root's: ignored
    dir.write(base + "npu_exynos/compatible", std::string("samsung,exynos-npu\0", 19));
    dir.write(base + "npu_exynos/status", std::string("okay\0", 5));
    dir.write(base + "soc/npu@0/compatible", std::string("samsung,exynos-npu\0", 19));
    dir.write(base + "soc/npu@0/status", std::string("disabled\0", 9)); // described, not present
    dir.write(base + "soc/dsp@1/compatible", std::string("samsung,exynos-dsp\0", 19));
    const auto out = ah::samsung_npu_probe{}.probe(ah::host_system(dir.path().string()));
    INFO(test::warnings_text(out.warnings));
    CHECK(out.warnings.empty());
    REQUIRE(out.devices.size() == 1);
    CHECK(out.devices[0].kind == ah::device_kind::samsung_npu);
    CHECK(out.devices[0].maker == ah::vendor::samsung);
    CHECK_FALSE(out.devices[0].memory_bytes);
    CHECK(out.devices[0].peak_from == ah::origin::none);
    test::scratch_dir empty;
    CHECK(ah::samsung_npu_probe{}.probe(ah::host_system(empty.path().string())).devices.empty());
}
#endif

#if AI_HWACCEL_BACKEND_MEDIATEK_APU
static_assert(ah::backend_probe<ah::mediatek_apu_probe, ah::host_system>);
TEST_CASE("mediatek_apu_probe") {
    CHECK(ah::is_mediatek_mdla_compatible("mediatek,mdla"));
    CHECK(ah::is_mediatek_mdla_compatible("mtk,mdla"));
    CHECK(ah::is_mediatek_mdla_compatible("mediatek, mt6885-mdla"));
    CHECK(ah::is_mediatek_mdla_compatible("mtk,mt5896-mdla"));
    CHECK_FALSE(ah::is_mediatek_mdla_compatible("mediatek,apusys_power"));
    // Hand-made: two MDLA cores under /proc/device-tree (no /sys/firmware copy).
    test::scratch_dir dir;
    dir.write("proc/device-tree/soc/mdla@19000000/compatible", std::string("mediatek, mt6885-mdla\0", 22));
    dir.write("proc/device-tree/soc/mdla@19100000/compatible", std::string("mediatek, mt6885-mdla\0", 22));
    dir.write("proc/device-tree/soc/apu_power/compatible", std::string("mediatek,apusys_power\0", 22));
    const auto out = ah::mediatek_apu_probe{}.probe(ah::host_system(dir.path().string()));
    CHECK(out.warnings.empty());
    REQUIRE(out.devices.size() == 2);
    CHECK(out.devices[1].index == 1);
    CHECK(out.devices[0].kind == ah::device_kind::mediatek_apu);
}
#endif

#if AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA
TEST_CASE("detail::formats: NPU sniffers and capture parsers") {
    namespace f = ah::detail::formats;
    // Captures are their format's by path prefix.
    const test::sniffer_row rows[] = {
        {"listing", f::sniff_accel_class_listing, "npu-sysfs/ls-sys-class-accel"},
        {"transcript", f::sniff_accel_transcript, "npu-sysfs/session_"},
    };
    test::check_sniffers(rows, 2);

    if (const auto t = test::capture("npu-sysfs/ls-sys-class-accel_strix-halo-xdna.txt")) {
        ah::capture_parse out;
        out.format = "accel-class-listing";
        f::parse_accel_class_listing_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.empty()); // the listing does not say whose the node is
        REQUIRE(out.system);
        REQUIRE(out.system->pci_devices.size() == 1);
        CHECK(out.system->pci_devices[0].address == ah::pci_address{0, 0xc6, 0, 1});
    }
#if AI_HWACCEL_BACKEND_INTEL_NPU
    if (const auto t = test::capture("npu-sysfs/session_lunar-lake_accel0-device-attributes.txt")) {
        ah::capture_parse out;
        out.format = "accel-sysfs-transcript";
        f::parse_accel_transcript_capture(*t, out);
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].name.view() == "Intel NPU (Lunar Lake)");
        CHECK(*out.devices[0].memory_used_bytes == 68714496u);
    }
#endif
    for (auto parse : {f::parse_accel_class_listing_capture, f::parse_accel_transcript_capture}) {
        ah::capture_parse out;
        out.format = "x";
        parse("", out);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 1);
        CHECK(out.devices.empty());
    }
    CHECK(f::sniff_accel_class_listing("total 0\n") == 0);
    CHECK(f::sniff_accel_transcript("$ cat /sys/class/accel/accel0/device/uevent\nDRIVER=qaic\n") == 0);
}
#endif

#endif // any client-NPU backend
