// ai-hwaccel core: the shape of one row of the device catalogue.
//
// A device_spec is what the public spec sheet of a device says: memory, memory bandwidth,
// peak dense throughput per data type, the interconnect it ships with, board power, and
// the address of the page the numbers came from. Rows are aggregates written with
// designated initializers in core/catalogue/*.hpp; they are literal types, so the whole
// catalogue is a constant expression and every consistency check is a static_assert.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/units.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

/// Peak *dense* throughput per data type, in TFLOPS (TOPS for integer types), as the
/// vendor quotes it for the matrix/tensor units (sparsity figures are never used).
/// 0 means: not supported natively, or not published.
struct peak_throughput {
    double fp64 = 0;
    double fp32 = 0; ///< non-tensor (vector) FP32
    double tf32 = 0;
    double bf16 = 0;
    double fp16 = 0;
    double fp8 = 0;
    double int8 = 0;
    double fp6 = 0;
    double fp4 = 0;
    double int4 = 0;

    constexpr double operator[](dtype d) const noexcept {
        switch (d) {
        case dtype::fp64: return fp64;
        case dtype::fp32: return fp32;
        case dtype::tf32: return tf32;
        case dtype::bf16: return bf16;
        case dtype::fp16: return fp16;
        case dtype::fp8: return fp8;
        case dtype::int8: return int8;
        case dtype::fp6: return fp6;
        case dtype::fp4: return fp4;
        case dtype::int4: return int4;
        }
        return 0;
    }
    constexpr bool supports(dtype d) const noexcept { return (*this)[d] > 0; }
    /// Every figure times `f`: a partition's or a stack's share of its device's.
    constexpr peak_throughput scaled(double f) const noexcept {
        return {fp64 * f, fp32 * f, tf32 * f, bf16 * f, fp16 * f, fp8 * f, int8 * f, fp6 * f, fp4 * f, int4 * f};
    }
    friend constexpr bool operator==(const peak_throughput&, const peak_throughput&) noexcept = default;
    /// True when at least one figure is known (a row may publish none).
    constexpr bool any() const noexcept {
        return fp64 > 0 || fp32 > 0 || tf32 > 0 || bf16 > 0 || fp16 > 0 || fp8 > 0 || int8 > 0 || fp6 > 0 ||
               fp4 > 0 || int4 > 0;
    }
};

/// One device as its public specification describes it.
struct device_spec {
    /// Canonical name, vendor's spelling, unique in the catalogue ("NVIDIA H100 SXM5 80GB").
    std::string_view name{};
    /// Other spellings people and tools use ("H100 SXM", "NVIDIA H100 80GB HBM3"); matched
    /// loosely (case, spaces and punctuation ignored). Unused slots stay empty.
    name_list<6> aliases{};
    vendor maker = vendor::unknown;
    device_kind kind = device_kind::cpu;
    /// PCI device ids this row answers to (the vendor id comes from `maker`).
    fixed_list<std::uint16_t, 6> pci_device_ids{};
    /// Memory per device in bytes (binary: what vendors call "80 GB" of HBM is 80 GiB).
    std::uint64_t memory_bytes = 0;
    memory_type memory = memory_type::unknown;
    /// ECC is on by default and keeps its check bits in the memory itself, as on NVIDIA's
    /// data-centre GDDR boards: the driver then reports 15/16 of memory_bytes (a T4's 16 GiB
    /// shows as 15 360 MiB). See reported_memory_bytes.
    bool inline_ecc = false;
    /// The memory is the host's as well: an APU whose CPU cores and GPU share one pool of
    /// memory of a type other than `unified` (MI300A's HBM3). Profiles of such a device are
    /// unified_memory, as those of a `memory_type::unified` row are.
    bool shared_with_host = false;
    /// MiB the driver keeps of every such card's memory, as its tool's total shows where a
    /// capture in the fixtures says (reported_memory_bytes takes it off): nvidia-smi gives an
    /// H100 SXM's 80 GiB as 81 559 MiB, an H200's 141 GiB as 143 771 MiB, a GeForce RTX
    /// 4090's 24 GiB as 24 564 MiB. 0 elsewhere: the row's figure is then what is reported.
    /// (Held in the padding before the doubles: a row takes no more bytes for it.)
    std::uint16_t reserved_mib = 0;
    /// Peak memory bandwidth in decimal GB/s.
    double memory_bandwidth_gbps = 0;
    peak_throughput peak{};
    /// The device-to-device link it ships with, and its total bandwidth per device in
    /// decimal GB/s, both directions summed as vendors quote it (NVLink 4: 900).
    interconnect_kind link = interconnect_kind::none;
    double link_bandwidth_gbps = 0;
    /// Where that link is a full mesh, each device with links of its own to every other
    /// (AMD's 8-GPU xGMI platforms, the 8 Gaudi cards of an HLS box): the peers one device
    /// reaches, each over an equal share of its fabric bandwidth, so a group of t devices
    /// uses t - 1 of those shares. 0 behind a switch (NVSwitch), on a ring or torus, or
    /// where the topology is not known.
    std::uint8_t link_peers = 0;
    /// Where that link is a torus (Google's ICI): its dimensions, each chip linked to
    /// both neighbours along each, 2 x dims links sharing link_bandwidth_gbps. A group of
    /// fewer chips than an axis has no wraparound link, so it uses one link's single
    /// direction per axis it spans. 0 for any other link or where unknown.
    std::uint8_t link_torus_dims = 0;
    /// The most devices that link joins into one group as the device is built into
    /// machines: 2 for cards paired by a bridge, 4 for the fully connected quads of a
    /// hybrid cube mesh or a four-card hive, 8 for an 8-GPU board (NVSwitch, or a full
    /// mesh: link_peers + 1), 72 for an NVL72 rack, an instance's chips or a pod's for
    /// AWS's and Google's parts. Past it, devices reach each other over PCIe or the
    /// network. 0 where not known: no limit is assumed.
    std::uint16_t link_domain = 0;
    /// Host interface: PCIe generation and lane count (0 when not a PCIe device).
    std::uint8_t pcie_generation = 0;
    std::uint8_t pcie_lanes = 0;
    /// Maximum board/module power in watts (TDP/TBP), 0 when unpublished.
    double power_watts = 0;
    /// Compute capability or ISA target ("9.0", "gfx942"); "" when not applicable. A
    /// NUL-terminated literal held by its pointer, as `source` is.
    const char* arch = "";
    /// Streaming multiprocessors, compute units, Xe cores, GPU cores, NeuronCores… as the
    /// vendor counts them; 0 when unpublished.
    std::uint32_t compute_units = 0;
    /// Stacks: dies of one card, each with memory of its own, that runtimes may show as
    /// devices of their own (Level Zero's default FLAT hierarchy makes each of a Max 1550's
    /// two stacks a device with half the card's memory, bandwidth and compute). 0 or 1: the
    /// card is one device.
    std::uint8_t stacks = 0;
    /// Year of release.
    std::uint16_t year = 0;
    /// Where the numbers come from: the URL of the vendor's spec sheet or datasheet (or a
    /// reputable database entry when the vendor publishes none); "" without table sources
    /// (AI_HWACCEL_TABLE_SOURCES). A NUL-terminated literal, held by its pointer: 8 bytes a
    /// row where a string_view takes 16 (read it as `std::string_view(spec.source)`).
    const char* source = "";
};

/// The memory a device of row `s` reports with its default settings: memory_bytes, less
/// the sixteenth inline ECC keeps for its check bits where the row says so. What capacity
/// planning on a catalogue row (profile_from_spec, cloud instances) counts on.
constexpr std::uint64_t reported_memory_bytes(const device_spec& s) noexcept {
    const std::uint64_t bytes = s.inline_ecc ? s.memory_bytes / 16 * 15 : s.memory_bytes;
    const std::uint64_t kept = std::uint64_t{s.reserved_mib} << 20;
    return bytes > kept ? bytes - kept : 0;
}

AI_HWACCEL_NAMESPACE_END
