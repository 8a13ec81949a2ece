// ai-hwaccel core: PCI addresses and link descriptions.
//
// A PCI address (domain:bus:device.function) is how the same physical device is
// recognised when several backends report it: nvidia-smi prints "00000000:65:00.0",
// sysfs names it "0000:65:00.0", vulkaninfo gives ids and a UUID. Parsing is constexpr and
// strict: anything that is not hexadecimal in the right places is rejected.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/units.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

struct pci_address {
    std::uint32_t domain = 0;
    std::uint8_t bus = 0;
    std::uint8_t device = 0;   ///< 0..31
    std::uint8_t function = 0; ///< 0..7

    friend constexpr bool operator==(const pci_address&, const pci_address&) noexcept = default;
    friend constexpr auto operator<=>(const pci_address&, const pci_address&) noexcept = default;

    /// The device and function fit their 5 and 3 bits: an address a bus can have, which
    /// text() spells and parse_pci_address reads back.
    constexpr bool valid() const noexcept { return device <= 31 && function <= 7; }

    /// Canonical sysfs spelling, "dddd:bb:dd.f": the domain in at least four digits, more
    /// only where it needs them ("10000:e1:00.0" behind Intel VMD).
    constexpr std::array<char, 17> text() const noexcept {
        constexpr char hex[] = "0123456789abcdef";
        std::array<char, 17> out{};
        std::size_t i = 0;
        int domain_digits = 4; // as sysfs spells it ("%04x"): Intel VMD's domains are 10000 and up
        while (domain_digits < 8 && (domain >> (4 * domain_digits)) != 0) ++domain_digits;
        for (int d = domain_digits - 1; d >= 0; --d) out[i++] = hex[(domain >> (4 * d)) & 0xf];
        out[i++] = ':';
        out[i++] = hex[bus >> 4];
        out[i++] = hex[bus & 0xf];
        out[i++] = ':';
        out[i++] = hex[(device >> 4) & 0xf];
        out[i++] = hex[device & 0xf];
        out[i++] = '.';
        out[i++] = hex[function & 0x7];
        return out;
    }
};

namespace detail {
constexpr int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
/// Parses exactly `s` as hexadecimal into at most 32 bits.
constexpr std::optional<std::uint32_t> parse_hex32(std::string_view s) noexcept {
    if (s.empty() || s.size() > 8) return std::nullopt;
    std::uint32_t v = 0;
    for (char c : s) {
        const int h = hex_value(c);
        if (h < 0) return std::nullopt;
        v = (v << 4) | static_cast<std::uint32_t>(h);
    }
    return v;
}
} // namespace detail

/// Parses "dddd:bb:dd.f" with a domain of 4 to 8 digits (nvidia-smi prints 8, sysfs at
/// least 4: "10000:e1:00.0" behind Intel VMD), or "bb:dd.f" (lspci's short form, domain
/// 0). Surrounding blanks are ignored.
constexpr std::optional<pci_address> parse_pci_address(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
        s.remove_suffix(1);
    pci_address a;
    const auto dot = s.rfind('.');
    if (dot == std::string_view::npos || dot + 2 != s.size()) return std::nullopt;
    const auto fn = detail::hex_value(s[dot + 1]);
    if (fn < 0 || fn > 7) return std::nullopt;
    a.function = static_cast<std::uint8_t>(fn);
    const std::string_view head = s.substr(0, dot);
    const auto c2 = head.rfind(':');
    if (c2 == std::string_view::npos) return std::nullopt;
    const auto dev = detail::parse_hex32(head.substr(c2 + 1));
    if (!dev || head.size() - c2 - 1 != 2 || *dev > 31) return std::nullopt;
    a.device = static_cast<std::uint8_t>(*dev);
    const std::string_view rest = head.substr(0, c2);
    const auto c1 = rest.rfind(':');
    const std::string_view bus_text = c1 == std::string_view::npos ? rest : rest.substr(c1 + 1);
    const auto bus = detail::parse_hex32(bus_text);
    if (!bus || bus_text.size() != 2) return std::nullopt;
    a.bus = static_cast<std::uint8_t>(*bus);
    if (c1 != std::string_view::npos) {
        const std::string_view dom_text = rest.substr(0, c1);
        if (dom_text.size() < 4 || dom_text.size() > 8) return std::nullopt;
        const auto dom = detail::parse_hex32(dom_text);
        if (!dom) return std::nullopt;
        a.domain = *dom;
    }
    return a;
}

/// One PCIe link state: generation and lane count (0 = unknown).
struct pcie_link {
    std::uint8_t generation = 0;
    std::uint8_t width = 0;

    friend constexpr bool operator==(const pcie_link&, const pcie_link&) noexcept = default;
    constexpr bool known() const noexcept { return generation != 0 && width != 0; }
    /// One-direction usable bandwidth in GB/s (0 when unknown).
    constexpr double bandwidth_gbps() const noexcept {
        return units::pcie_bandwidth_gbps_for_generation(generation, width);
    }
};

static_assert(parse_pci_address("0000:65:00.0") == pci_address{0, 0x65, 0, 0});
static_assert(parse_pci_address("00000000:C1:00.1") == pci_address{0, 0xc1, 0, 1});
static_assert(parse_pci_address("3b:00.0") == pci_address{0, 0x3b, 0, 0});
static_assert(!parse_pci_address("0000:65:00.8"));
static_assert(!parse_pci_address("0000:65:0.0"));
static_assert(!parse_pci_address("zz:00.0"));
static_assert(!parse_pci_address(""));
static_assert(pci_address{0, 0x65, 0, 0}.text()[0] == '0' && pci_address{0, 0x65, 0, 0}.text()[5] == '6');
static_assert(pci_address{0, 0, 31, 7}.valid() && !pci_address{0, 0, 32, 0}.valid() && !pci_address{0, 0, 0, 8}.valid());

AI_HWACCEL_NAMESPACE_END
