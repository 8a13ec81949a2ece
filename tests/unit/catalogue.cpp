#include "ai_hwaccel/core/catalogue.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

namespace ah = ai_hwaccel;

// Whole-catalogue consistency, proven at compile time: every row names its source and
// its device, numbers are within physical bounds, the maker agrees with the kind, narrower
// types are not slower than wider ones, and no two names or aliases collide.
static_assert(ah::detail::catalogue_rows_are_sane());
static_assert(ah::detail::catalogue_names_are_unique());
static_assert(ah::device_catalogue.size() >= 150);

TEST_CASE("device_catalogue") {
    std::size_t nvidia = 0, amd = 0, intel = 0, apple = 0, google = 0, amazon = 0;
    for (const auto& d : ah::device_catalogue) {
        CHECK(std::string_view(d.source).starts_with("http"));
        nvidia += d.maker == ah::vendor::nvidia;
        amd += d.maker == ah::vendor::amd && d.kind == ah::device_kind::rocm_gpu;
        intel += d.maker == ah::vendor::intel || d.maker == ah::vendor::habana;
        apple += d.maker == ah::vendor::apple;
        google += d.maker == ah::vendor::google;
        amazon += d.maker == ah::vendor::amazon;
    }
    CHECK(nvidia >= 60);
    CHECK(amd >= 25);
    CHECK(intel >= 10);
    CHECK(apple >= 30); // every M1–M4 GPU-core variant
    CHECK(google >= 4); // TPU v4, v5e, v5p, v6e
    CHECK(amazon == 5); // Inferentia 1/2, Trainium 1/2/3
}

TEST_CASE("find_device") {
    // As people write them.
    CHECK(ah::find_device("H100 SXM")->name == std::string_view("NVIDIA H100 SXM5 80GB"));
    CHECK(ah::find_device("rtx 4090")->memory_bytes == 24 * ah::units::gib);
    CHECK(ah::find_device("A100 PCIe 80GB")->memory_bandwidth_gbps > 1900);
    CHECK(ah::find_device("mi300x")->memory_bytes == 192 * ah::units::gib);
    CHECK(ah::find_device("Apple M2 Ultra 76-core")->compute_units == 76);
    CHECK(ah::find_device("Apple M2 Ultra 60-core")->compute_units == 60);
    // As tools print them (names from the real captures).
    CHECK(ah::find_device("NVIDIA H100 80GB HBM3") == ah::find_device("H100 SXM"));
    CHECK(ah::find_device("NVIDIA GeForce RTX 4090") == ah::find_device("RTX 4090"));
    CHECK(ah::find_device("NVIDIA A10") != nullptr);
    CHECK(ah::find_device("Tesla P100-PCIE-16GB") != nullptr);
    CHECK(ah::find_device("NVIDIA H100 NVL") != nullptr);
    CHECK(ah::find_device("NVIDIA L40S") != nullptr);
    CHECK(ah::find_device("AMD Instinct MI210") != nullptr);
    CHECK(ah::find_device("AMD Radeon RX 7900 XTX") != nullptr);
    // Vendor prefix optional either way.
    CHECK(ah::find_device("Instinct MI210") == ah::find_device("AMD Instinct MI210"));
    // Nothing for nonsense, and nothing for an ambiguous bare name.
    CHECK(ah::find_device("") == nullptr);
    CHECK(ah::find_device("GeForce RTX 9999") == nullptr);
    CHECK(ah::find_device("A100") == nullptr);
}

TEST_CASE("every row is found by its name, and only rows are in_catalogue") {
    for (const auto& row : ah::device_catalogue) {
        CAPTURE(row.name);
        CHECK(ah::find_device(row.name) == &row);
        CHECK(ah::in_catalogue(&row));
        // Loosely spelt, the same row (the plain compare is only a shortcut).
        std::string lower;
        for (char c : row.name) lower += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        CHECK(ah::find_device(" " + lower + " ") == &row);
    }
    const ah::device_spec copy = *ah::find_device("H100 SXM");
    CHECK_FALSE(ah::in_catalogue(&copy));
    CHECK_FALSE(ah::in_catalogue(nullptr));
}
static_assert(ah::in_catalogue(ah::find_device("NVIDIA H100 SXM5 80GB")));

TEST_CASE("find_devices_by_pci") {
    const auto h100 = ah::find_devices_by_pci(0x10de, 0x2330);
    REQUIRE(h100.size() == 1);
    CHECK(h100[0] == ah::find_device("H100 SXM"));
    CHECK(ah::find_devices_by_pci(0x10de, 0x26b9).size() >= 1); // L40S, from a real capture
    CHECK(ah::find_devices_by_pci(0x1002, 0x0000).empty());
    CHECK(ah::find_devices_by_pci(0xffff, 0x2330).empty());
    // Several boards share one chip id; all of them come back.
    CHECK(ah::find_devices_by_pci(0x1002, 0x744c).size() >= 2);
    // AMD's XDNA NPUs are PCI 1022:1502 and 1022:17f0 (the amdxdna driver's table), not
    // under its graphics id 0x1002 (before: found only under the pair that does not exist).
    for (const std::uint16_t id : {std::uint16_t{0x1502}, std::uint16_t{0x17f0}}) {
        CAPTURE(id);
        const auto npus = ah::find_devices_by_pci(0x1022, id);
        REQUIRE_FALSE(npus.empty());
        for (const auto* r : npus) CHECK(r->kind == ah::device_kind::amd_xdna_npu);
        CHECK(ah::find_devices_by_pci(0x1002, id).empty());
    }
    // GB300's ids (pci.ids: GB110 [GB300]).
    CHECK(ah::find_devices_by_pci(0x10de, 0x31c2).size() == 1);
    // Workstation boards with ids of their own (pci.ids: "Navi 48 [Radeon AI PRO R9700]",
    // "Battlemage G21 [Arc Pro B60]" and "[Arc Pro B50]"): one row each, by id and by the
    // name pci.ids gives, with the memory that sets them apart from the gaming boards.
    struct board {
        std::uint16_t vendor_id, device_id;
        std::string_view name;
        std::uint64_t gib;
    };
    for (const board b : {board{0x1002, 0x7551, "Navi 48 [Radeon AI PRO R9700]", 32},
                          board{0x8086, 0xe211, "Battlemage G21 [Arc Pro B60]", 24},
                          board{0x8086, 0xe212, "Battlemage G21 [Arc Pro B50]", 16}}) {
        CAPTURE(b.name);
        const auto rows = ah::find_devices_by_pci(b.vendor_id, b.device_id);
        REQUIRE(rows.size() == 1);
        CHECK(rows[0] == ah::find_device(b.name));
        CHECK(rows[0]->memory_bytes == b.gib * ah::units::gib);
        CHECK(rows[0]->memory_bandwidth_gbps > 0);
    }
}

TEST_CASE("find_device: NVIDIA's parts for China and the Tesla P40, by the names drivers give") {
    // Names as nvidia-smi and NVML print them in public captures and logs; ids from pci.ids.
    struct part {
        std::string_view reported;
        std::uint16_t device_id;
        std::string_view row;
        double bandwidth_gbps;
    };
    for (const part p : {part{"NVIDIA H20", 0x2329, "NVIDIA H20", 4000},
                         part{"NVIDIA H800 80GB HBM3", 0x2324, "NVIDIA H800 SXM5 80GB", 3350},
                         part{"NVIDIA A800-SXM4-80GB", 0x20f3, "NVIDIA A800 SXM4 80GB", 2039},
                         part{"NVIDIA L20", 0x26ba, "NVIDIA L20", 864},
                         part{"Tesla P40", 0x1b38, "NVIDIA Tesla P40", 346},
                         part{"NVIDIA RTX 5000 Ada Generation", 0x26b2, "NVIDIA RTX 5000 Ada Generation", 576}}) {
        CAPTURE(p.reported);
        const auto* row = ah::find_device(p.reported);
        REQUIRE(row != nullptr);
        CHECK(row->name == p.row);
        CHECK(row->memory_bandwidth_gbps == p.bandwidth_gbps);
        const auto by_id = ah::find_devices_by_pci(0x10de, p.device_id);
        REQUIRE(by_id.size() == 1);
        CHECK(by_id[0] == row);
    }
    // The short names do not swallow their neighbours'.
    CHECK(ah::find_device("NVIDIA H200")->name == std::string_view("NVIDIA H200 SXM 141GB"));
    CHECK(ah::find_device("NVIDIA L40")->name == std::string_view("NVIDIA L40"));
    CHECK(ah::find_device("NVIDIA H100 80GB HBM3")->name == std::string_view("NVIDIA H100 SXM5 80GB"));
    // The A800 and H800 are their siblings with NVLink cut to 400 GB/s.
    CHECK(ah::find_device("A800")->link_bandwidth_gbps == 400);
    CHECK(ah::find_device("H800")->link_bandwidth_gbps == 400);
    CHECK(ah::find_device("A800")->peak.bf16 == ah::find_device("A100 SXM4 80GB")->peak.bf16);
    // A P40 computes in FP32 (its FP16 runs at 1/64 of that): no fp16 figure, so F16
    // weights run converted and prefill is sized by the FP32 rate.
    const auto* p40 = ah::find_device("Tesla P40");
    CHECK(p40->peak.fp16 == 0);
    CHECK(p40->peak.fp32 == 12);
}

TEST_CASE("device_spec values") {
    const auto* mi300x = ah::find_device("MI300X");
    CHECK(mi300x->kind == ah::device_kind::rocm_gpu);
    CHECK(mi300x->memory_bandwidth_gbps == doctest::Approx(5300));
    CHECK(mi300x->arch == std::string_view("gfx942"));
    const auto* h100 = ah::find_device("H100 SXM");
    CHECK(h100->peak.bf16 == doctest::Approx(989.4).epsilon(0.01)); // dense, not sparse
    CHECK(h100->link == ah::interconnect_kind::nvlink);
    CHECK(h100->link_bandwidth_gbps == 900);
}
