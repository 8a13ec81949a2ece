// ai-hwaccel core: units.
//
// Byte sizes come in two families and the library never mixes them silently: binary
// (KiB, MiB, GiB, TiB = 2^10…2^40) for memory capacities, which is what drivers report and
// what vendors mean by "80 GB" of HBM, and decimal (kB, MB, GB, TB = 10^3…10^12) for
// bandwidths, disk sizes and cloud price sheets. Bandwidths are always decimal GB/s.
// Link rates helpers (PCIe, InfiniBand) convert signalling rates into usable GB/s.
#pragma once

#include "ai_hwaccel/config.hpp"

#include <cstdint>

AI_HWACCEL_NAMESPACE_BEGIN

namespace units {

inline constexpr std::uint64_t kib = std::uint64_t{1} << 10;
inline constexpr std::uint64_t mib = std::uint64_t{1} << 20;
inline constexpr std::uint64_t gib = std::uint64_t{1} << 30;
inline constexpr std::uint64_t tib = std::uint64_t{1} << 40;

inline constexpr std::uint64_t kb = 1'000;
inline constexpr std::uint64_t mb = 1'000'000;
inline constexpr std::uint64_t gb = 1'000'000'000;
inline constexpr std::uint64_t tb = 1'000'000'000'000;

inline constexpr double bits_per_byte = 8.0;

/// Bytes of `n` binary gibibytes; `n` may be fractional (0.5 GiB).
constexpr std::uint64_t gibibytes(double n) noexcept {
    return static_cast<std::uint64_t>(n * static_cast<double>(gib));
}
constexpr std::uint64_t mebibytes(double n) noexcept {
    return static_cast<std::uint64_t>(n * static_cast<double>(mib));
}
/// Bytes of `n` decimal gigabytes.
constexpr std::uint64_t gigabytes(double n) noexcept {
    return static_cast<std::uint64_t>(n * static_cast<double>(gb));
}

constexpr double to_gib(std::uint64_t bytes) noexcept {
    return static_cast<double>(bytes) / static_cast<double>(gib);
}
constexpr double to_gb(std::uint64_t bytes) noexcept {
    return static_cast<double>(bytes) / static_cast<double>(gb);
}

/// Gigabits per second (link rates as vendors print them) to gigabytes per second.
constexpr double gbit_to_gbyte(double gbit_per_s) noexcept { return gbit_per_s / bits_per_byte; }

/// PCIe generation → per-lane transfer rate in GT/s (0 for an unknown generation).
constexpr double pcie_transfer_rate_gts(int generation) noexcept {
    switch (generation) {
    case 1: return 2.5;
    case 2: return 5.0;
    case 3: return 8.0;
    case 4: return 16.0;
    case 5: return 32.0;
    case 6: return 64.0;
    case 7: return 128.0;
    default: return 0.0;
    }
}

/// Line-code efficiency of a PCIe link at a given rate: 8b/10b up to 5 GT/s, 128b/130b for
/// 8–32 GT/s. Gen 6 and later use FLIT mode (242/256 payload per FLIT).
constexpr double pcie_encoding_efficiency(double rate_gts) noexcept {
    if (rate_gts <= 0.0) return 0.0;
    if (rate_gts < 8.0) return 8.0 / 10.0;
    if (rate_gts < 64.0) return 128.0 / 130.0;
    return 242.0 / 256.0;
}

/// Usable one-direction bandwidth of a PCIe link in decimal GB/s, before protocol
/// (TLP/DLLP) overhead: rate × lanes × encoding / 8.
constexpr double pcie_bandwidth_gbps(double rate_gts, int lanes) noexcept {
    if (lanes <= 0) return 0.0;
    return rate_gts * lanes * pcie_encoding_efficiency(rate_gts) / bits_per_byte;
}
constexpr double pcie_bandwidth_gbps_for_generation(int generation, int lanes) noexcept {
    return pcie_bandwidth_gbps(pcie_transfer_rate_gts(generation), lanes);
}

/// Inverse of pcie_transfer_rate_gts: 16.0 → 4, otherwise 0.
constexpr int pcie_generation_for_rate(double rate_gts) noexcept {
    for (int g = 1; g <= 7; ++g)
        if (pcie_transfer_rate_gts(g) == rate_gts) return g;
    return 0;
}

} // namespace units

namespace literals {
constexpr std::uint64_t operator""_KiB(unsigned long long n) noexcept { return n * units::kib; }
constexpr std::uint64_t operator""_MiB(unsigned long long n) noexcept { return n * units::mib; }
constexpr std::uint64_t operator""_GiB(unsigned long long n) noexcept { return n * units::gib; }
constexpr std::uint64_t operator""_TiB(unsigned long long n) noexcept { return n * units::tib; }
constexpr std::uint64_t operator""_kB(unsigned long long n) noexcept { return n * units::kb; }
constexpr std::uint64_t operator""_MB(unsigned long long n) noexcept { return n * units::mb; }
constexpr std::uint64_t operator""_GB(unsigned long long n) noexcept { return n * units::gb; }
constexpr std::uint64_t operator""_TB(unsigned long long n) noexcept { return n * units::tb; }
} // namespace literals

// Compile-time checks of the unit arithmetic.
static_assert(units::gib == 1'073'741'824);
static_assert(units::gibibytes(0.5) == 512 * units::mib);
static_assert(units::pcie_bandwidth_gbps_for_generation(3, 16) > 15.75 &&
              units::pcie_bandwidth_gbps_for_generation(3, 16) < 15.76);
static_assert(units::pcie_bandwidth_gbps_for_generation(4, 16) > 31.50 &&
              units::pcie_bandwidth_gbps_for_generation(4, 16) < 31.51);
static_assert(units::pcie_bandwidth_gbps_for_generation(2, 1) == 0.5);
static_assert(units::pcie_generation_for_rate(16.0) == 4);
static_assert(units::pcie_generation_for_rate(3.0) == 0);
static_assert(units::gbit_to_gbyte(400.0) == 50.0);

AI_HWACCEL_NAMESPACE_END
