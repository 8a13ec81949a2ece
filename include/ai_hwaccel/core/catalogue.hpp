// ai-hwaccel core: the device catalogue.
//
// Every device with public specifications that a backend can report, one device_spec per
// row (rows live in core/catalogue/<vendor>.hpp, each citing its source). Detection uses
// the catalogue to fill in what a tool does not report (bandwidth, peak throughput),
// marking those values origin::catalogue; planning uses it to describe devices that are
// not present ("an H100 SXM").
//
// Consistency checks over the whole catalogue (unique names and aliases, a source on every
// row, plausible numbers) are constexpr functions. The test suite static_asserts them; an
// includer can too by defining AI_HWACCEL_CHECK_TABLES=1, at some cost in compile time.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/device_spec.hpp"
#include "ai_hwaccel/core/text.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {
// A plain array: its size is deduced from the rows and nothing is copied at compile time.
inline constexpr device_spec catalogue_rows[] = {
#include "ai_hwaccel/core/catalogue/nvidia.inc"
#include "ai_hwaccel/core/catalogue/amd.inc"
#include "ai_hwaccel/core/catalogue/intel.inc"
#include "ai_hwaccel/core/catalogue/apple.inc"
#include "ai_hwaccel/core/catalogue/asic.inc"
};
} // namespace detail

/// All catalogue rows, grouped by vendor (NVIDIA, AMD, Intel, Apple, then ASICs and NPUs).
inline constexpr table_ref<device_spec> device_catalogue{detail::catalogue_rows};

namespace detail {
constexpr std::string_view without_vendor_prefix(std::string_view s) noexcept {
    s = trim(s);
    for (std::string_view p : {"NVIDIA ", "AMD ", "Intel ", "Apple ", "Google ", "AWS ",
                               "Qualcomm ", "Habana "})
        if (s.size() > p.size() && iequals(s.substr(0, p.size()), p)) return s.substr(p.size());
    return s;
}
} // namespace detail

/// Looks a device up by the name a person or a tool writes: the canonical name or any
/// alias, ignoring case, spaces and punctuation ("rtx-4090", "H100 SXM", "MI300X"), with
/// or without the vendor's name in front. Returns nullptr when nothing matches.
constexpr const device_spec* find_device(std::string_view name) noexcept {
    name = detail::trim(name);
    if (name.empty()) return nullptr;
    // A canonical name as written (what JSON documents hold) is found by a plain compare:
    // names and aliases are loosely unique (catalogue_names_are_unique), so no other row
    // answers to it and the loose pass below would return the same row.
    for (const auto& row : device_catalogue)
        if (row.name == name) return &row;
    for (const auto& row : device_catalogue) {
        if (detail::loose_equals(row.name, name)) return &row;
        for (const auto& a : row.aliases)
            if (detail::loose_equals(a, name)) return &row;
    }
    const auto bare = detail::without_vendor_prefix(name);
    for (const auto& row : device_catalogue) {
        if (detail::loose_equals(detail::without_vendor_prefix(row.name), bare)) return &row;
        for (const auto& a : row.aliases)
            if (detail::loose_equals(detail::without_vendor_prefix(a), bare)) return &row;
    }
    return nullptr;
}

/// Whether `s` is a row of device_catalogue, not a device_spec of the caller's own: only a
/// row is found again by its name (find_device(s->name) == s, as names are unique).
constexpr bool in_catalogue(const device_spec* s) noexcept {
    if (s == nullptr) return false;
    for (const auto& row : device_catalogue)
        if (&row == s) return true;
    return false;
}

/// Rows answering to a PCI vendor/device id pair. Several rows can share an id (memory
/// variants of one board), so all of them are returned, in catalogue order. AMD's
/// graphics carry its graphics vendor id (0x1002), its XDNA NPUs the id of its processors
/// (0x1022, which the amdxdna driver binds).
constexpr fixed_list<const device_spec*, 8> find_devices_by_pci(std::uint32_t vendor_id,
                                                                std::uint16_t device_id) noexcept {
    fixed_list<const device_spec*, 8> out;
    if (device_id == 0) return out;
    for (const auto& row : device_catalogue) {
        const std::uint32_t row_vendor = row.kind == device_kind::amd_xdna_npu ? 0x1022u : info(row.maker).vendor_id;
        if (row_vendor != vendor_id) continue;
        if (!row.pci_device_ids.contains(device_id)) continue;
        if (out.count < out.items.size()) out.items[out.count++] = &row;
    }
    return out;
}

namespace detail {
/// Every row names its source and its device; numbers are within physical bounds.
constexpr bool catalogue_rows_are_sane() noexcept {
    for (const auto& r : device_catalogue) {
        if (trim(r.name).empty() || r.name != trim(r.name)) return false;
        if (AI_HWACCEL_TABLE_SOURCES && !(std::string_view(r.source).starts_with("https://") ||
                                          std::string_view(r.source).starts_with("http://")))
            return false;
        if (r.memory_bytes > 16 * units::tib) return false;
        if (r.memory != memory_type::unified && r.memory != memory_type::sram && r.memory_bytes == 0)
            return false;
        if (r.memory_bandwidth_gbps < 0 || r.memory_bandwidth_gbps > 100'000'000) return false;
        for (auto d : {dtype::fp64, dtype::fp32, dtype::tf32, dtype::bf16, dtype::fp16, dtype::fp8,
                       dtype::int8, dtype::fp6, dtype::fp4, dtype::int4})
            if (r.peak[d] < 0 || r.peak[d] > 1'000'000) return false;
        if (r.pcie_generation > 7 || (r.pcie_lanes != 0 && r.pcie_lanes > 32)) return false;
        if ((r.link_peers != 0 || r.link_torus_dims != 0) &&
            (r.link == interconnect_kind::none || !(r.link_bandwidth_gbps > 0) || r.link_torus_dims > 3))
            return false;
        // A link's group holds at least two devices, a full mesh exactly its peers and one,
        // and only a link faster than PCIe has one.
        if (r.link_domain != 0 &&
            (r.link_domain < 2 || r.link == interconnect_kind::none || r.link == interconnect_kind::pcie))
            return false;
        if (r.link_peers != 0 && r.link_domain != r.link_peers + 1) return false;
        if (r.year != 0 && (r.year < 2010 || r.year > 2030)) return false;
        if (family_of(r.kind) == family::cpu) return false;
        for (std::uint16_t id : r.pci_device_ids)
            if (id == 0 || id == 0xffff) return false;
        // The kind says which vendor's stack reports it; rows must agree with it.
        const vendor expected = info(r.kind).default_vendor;
        if (expected != vendor::unknown && r.maker != expected) return false;
        // Narrower types run at least as fast as wider ones on the same matrix units.
        if (r.peak.fp8 != 0 && r.peak.bf16 > r.peak.fp8) return false;
        if (r.peak.fp4 != 0 && r.peak.fp8 > r.peak.fp4) return false;
    }
    return true;
}
/// No two rows share a name or alias (compared as find_device compares them).
constexpr bool catalogue_names_are_unique() noexcept {
    return names_are_unique<std::size(catalogue_rows) * 7>(device_catalogue);
}
} // namespace detail

#if AI_HWACCEL_CHECK_TABLES
static_assert(detail::catalogue_rows_are_sane(), "device_catalogue: a row is incomplete");
static_assert(detail::catalogue_names_are_unique(), "device_catalogue: duplicate name or alias");
#endif

AI_HWACCEL_NAMESPACE_END
