// ai-hwaccel detect: the host's CPU and memory.
//
// Pure parsers for /proc/cpuinfo, `lscpu`, /proc/meminfo and cgroup memory and CPU limits
// (string_view in, data out, never throw), and the probe that feeds them from a
// system_view. /proc/cpuinfo differs by architecture: x86 prints "model name", "flags",
// "physical id", "core id"; arm64 prints "Features", "CPU implementer" and usually no
// model name at all. The kernel's cpulist format is parsed by parse_cpulist
// (detect/sysfs.hpp) and the NUMA nodes are read by probe_numa (detect/topology.hpp).
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/units.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {
/// The features named in a flags line (x86's "fpu vme … avx2 …" when `arm` is false,
/// Arm's "fp asimd …" when true); whole space-separated words only.
constexpr cpu_features cpu_features_from_flags(std::string_view flags, bool arm) noexcept {
    cpu_features features;
    while (!flags.empty()) {
        const auto sp = flags.find_first_of(" \t");
        const std::string_view word = trim(flags.substr(0, sp));
        flags = sp == std::string_view::npos ? std::string_view{} : flags.substr(sp + 1);
        if (word.empty()) continue;
        for (std::size_t i = 0; i < cpu_feature_count; ++i)
            if (((cpu_arm_features >> i) & 1u) == (arm ? 1u : 0u) && word == cpu_proc_flags[i])
                features.set(static_cast<cpu_feature>(i));
        if (arm && word == "neon"sv) features.set(cpu_feature::neon); // 32-bit Arm's name for it
    }
    return features;
}
} // namespace detail

namespace detail {
/// parse_meminfo, also giving the bytes of MemTotal held in hugetlb pools: the
/// `Hugetlb:` line (every page size, Linux 4.16 and later), else HugePages_Total ×
/// Hugepagesize (the default size only); 0 when it cannot be had. Pool pages serve only
/// hugetlbfs and MAP_HUGETLB mappings, not ordinary allocations or a model file's pages
/// (Documentation/admin-guide/mm/hugetlbpage.rst).
inline memory_info parse_meminfo_and_pool(std::string_view text, std::uint64_t& hugetlb_bytes) {
    memory_info m;
    std::uint64_t pool = 0, pages = 0, page_kib = 0;
    bool has_pool = false;
    for_each_key_value(text, [&](std::string_view key, std::string_view value, bool) {
        const auto sp = value.find(' ');
        const std::string_view unit = sp == std::string_view::npos ? ""sv : trim(value.substr(sp));
        const auto n = parse_u64(value.substr(0, sp));
        if (!n) return;
        std::uint64_t mul = 1;
        if (unit == "kB"sv) mul = units::kib;
        else if (!unit.empty()) return;
        if (*n > UINT64_MAX / mul) return;
        const sourced<std::uint64_t> bytes{*n * mul, origin::sysfs};
        if (key == "MemTotal"sv) m.total_bytes = bytes;
        else if (key == "MemAvailable"sv) m.available_bytes = bytes;
        else if (key == "Hugetlb"sv) pool = *bytes, has_pool = true;
        else if (key == "HugePages_Total"sv) pages = *n;
        else if (key == "Hugepagesize"sv) page_kib = *n;
    });
    const bool fits = page_kib != 0 && pages <= UINT64_MAX / units::kib / page_kib;
    hugetlb_bytes = has_pool ? pool : fits ? pages * page_kib * units::kib : 0;
    return m;
}
} // namespace detail

/// /proc/meminfo → total and available bytes (values are in kB, meaning KiB).
/// A missing MemTotal leaves total empty; the caller decides what to warn.
inline memory_info parse_meminfo(std::string_view text) {
    std::uint64_t hugetlb = 0;
    return detail::parse_meminfo_and_pool(text, hugetlb);
}

namespace detail {
/// Gives the devices that work from the system's memory and have no size of their own
/// (unified_memory, memory unknown or only a catalogue row's nominal figure) what the
/// system has: MemTotal as their memory, MemAvailable as free, from /proc/meminfo, read
/// once and only when such a device is there. Their tools report no size (nvidia-smi's
/// "[N/A]" on a GB10 or a Jetson) or have nothing to report it through (the NPU drivers'
/// sysfs), and their runtimes allocate from the system's pages: CUDA on those boards, and
/// OpenVINO's NPU plugin, which gives an integrated NPU the host's RAM as its total. The
/// registry counts such a pool once. Unreadable, the memory stays the row's, or unknown.
/// A cgroup memory limit is deliberately not applied to them (it is to the CPU): the
/// driver's allocations are not charged to the cgroup. Public measurements on a GB10: a
/// process under MemoryMax=8G allocated 12 GiB through CUDA and was never killed, its
/// memory.current growing by page tables alone (Blackwellboy/model-serving-minefield
/// issue 57); `docker --memory 4g` let cuDF reach 8 GB (graphistry/pygraphistry pull 1671).
template <system_view S>
void size_shared_memory(const S& sys, std::vector<accelerator_profile>& devices) {
    std::optional<memory_info> m;
    for (auto& d : devices) {
        if (!d.unified_memory || (d.memory_bytes && d.memory_bytes.from != origin::catalogue)) continue;
        if (!m) {
            const file_read r = sys.read_file("/proc/meminfo", 1u << 16);
            m = r.ok() ? parse_meminfo(r.data) : memory_info{};
        }
        if (m->total_bytes) d.memory_bytes = m->total_bytes;
        if (!d.memory_free_bytes) d.memory_free_bytes = m->available_bytes;
    }
}
} // namespace detail

namespace detail {
/// cgroup v1 reports "no limit" as PAGE_COUNTER_MAX pages, about 2^63 bytes: a memory limit
/// from here up is none.
inline constexpr std::uint64_t cgroup_unlimited = std::uint64_t{1} << 62;
} // namespace detail

/// A cgroup memory limit file: v2 memory.max ("max" = none) or v1 memory.limit_in_bytes
/// (a page-rounded huge number = none). Returns the limit in bytes, if there is one.
inline std::optional<std::uint64_t> parse_cgroup_memory_limit(std::string_view text) noexcept {
    text = detail::trim(text);
    if (text == "max"sv) return std::nullopt;
    const auto n = detail::parse_u64(text);
    if (!n || *n >= detail::cgroup_unlimited) return std::nullopt;
    return n;
}

// ---------------------------------------------------------------------------------------
// Arm cores by MIDR

/// An Arm core as its Main ID Register names it: the implementer code (the licensee that
/// designed the core) and that implementer's part number, both printed by arm64
/// /proc/cpuinfo ("CPU implementer : 0x41", "CPU part : 0xd0c"), which names no model.
struct arm_core {
    std::uint8_t implementer;
    std::uint16_t part;
    std::string_view name; ///< "Neoverse-N1": lscpu's spelling, or the kernel's where lscpu has none
};

/// An implementer code, the name it goes by, and the vendor it maps to (unknown for
/// implementers the vendor enumeration does not list).
struct arm_implementer {
    std::uint8_t id;
    std::string_view name;
    vendor maker;
};

/// Implementer codes. Sources: Linux arch/arm64/include/asm/cputype.h (ARM_CPU_IMP_*),
/// util-linux sys-utils/lscpu-arm.c (hw_implementer).
inline constexpr std::array<arm_implementer, 16> arm_implementers{{
    {0x41, "Arm", vendor::arm},
    {0x42, "Broadcom", vendor::unknown},
    {0x43, "Cavium", vendor::unknown},
    {0x46, "Fujitsu", vendor::unknown},
    {0x48, "HiSilicon", vendor::unknown},
    {0x4e, "NVIDIA", vendor::nvidia},
    {0x50, "Applied Micro", vendor::unknown},
    {0x51, "Qualcomm", vendor::qualcomm},
    {0x53, "Samsung", vendor::samsung},
    {0x56, "Marvell", vendor::unknown},
    {0x61, "Apple", vendor::apple},
    {0x63, "Arm China", vendor::unknown},
    {0x69, "Intel", vendor::intel},
    {0x6d, "Microsoft", vendor::microsoft},
    {0x70, "Phytium", vendor::unknown},
    {0xc0, "Ampere", vendor::unknown},
}};

/// Cores by implementer and part: the ones servers, boards and SoCs that run inference
/// ship with. Sources: Linux arch/arm64/include/asm/cputype.h (*_CPU_PART_*),
/// util-linux sys-utils/lscpu-arm.c, Arm's technical reference manuals (MIDR_EL1).
/// Parts are numbered per implementer: HiSilicon's 0xd01 is not Arm's.
inline constexpr std::array<arm_core, 80> arm_cores{{
    // Arm Cortex-A (application cores of boards, phones and laptops)
    {0x41, 0xd01, "Cortex-A32"},
    {0x41, 0xd02, "Cortex-A34"},
    {0x41, 0xd03, "Cortex-A53"},
    {0x41, 0xd04, "Cortex-A35"},
    {0x41, 0xd05, "Cortex-A55"},
    {0x41, 0xd06, "Cortex-A65"},
    {0x41, 0xd07, "Cortex-A57"},
    {0x41, 0xd08, "Cortex-A72"},
    {0x41, 0xd09, "Cortex-A73"},
    {0x41, 0xd0a, "Cortex-A75"},
    {0x41, 0xd0b, "Cortex-A76"},
    {0x41, 0xd0d, "Cortex-A77"},
    {0x41, 0xd0e, "Cortex-A76AE"},
    {0x41, 0xd41, "Cortex-A78"},
    {0x41, 0xd42, "Cortex-A78AE"},
    {0x41, 0xd43, "Cortex-A65AE"},
    {0x41, 0xd44, "Cortex-X1"},
    {0x41, 0xd46, "Cortex-A510"},
    {0x41, 0xd47, "Cortex-A710"},
    {0x41, 0xd48, "Cortex-X2"},
    {0x41, 0xd4b, "Cortex-A78C"},
    {0x41, 0xd4c, "Cortex-X1C"},
    {0x41, 0xd4d, "Cortex-A715"},
    {0x41, 0xd4e, "Cortex-X3"},
    {0x41, 0xd80, "Cortex-A520"},
    {0x41, 0xd81, "Cortex-A720"},
    {0x41, 0xd82, "Cortex-X4"},
    {0x41, 0xd85, "Cortex-X925"},
    {0x41, 0xd87, "Cortex-A725"},
    {0x41, 0xd8c, "C1-Ultra"},
    // Arm Neoverse (servers: Graviton 2-4, Ampere Altra, Grace, Axion, Cobalt)
    {0x41, 0xd0c, "Neoverse-N1"},
    {0x41, 0xd40, "Neoverse-V1"},
    {0x41, 0xd49, "Neoverse-N2"},
    {0x41, 0xd4a, "Neoverse-E1"},
    {0x41, 0xd4f, "Neoverse-V2"},
    {0x41, 0xd83, "Neoverse-V3AE"},
    {0x41, 0xd84, "Neoverse-V3"},
    {0x41, 0xd8e, "Neoverse-N3"},
    // Broadcom, Cavium and Marvell
    {0x42, 0x516, "ThunderX2"},
    {0x43, 0x0a1, "ThunderX-88XX"},
    {0x43, 0x0a2, "ThunderX-81XX"},
    {0x43, 0x0a3, "ThunderX-83XX"},
    {0x43, 0x0af, "ThunderX2-99xx"},
    {0x43, 0x0b8, "ThunderX3-T110"},
    // Fujitsu, HiSilicon, Phytium, Ampere
    {0x46, 0x001, "A64FX"},
    {0x48, 0xd01, "Kunpeng-920"},
    {0x48, 0xd40, "Cortex-A76"},
    {0x70, 0x662, "FTC662"},
    {0x70, 0x663, "FTC663"},
    {0xc0, 0xac3, "Ampere-1"},
    {0xc0, 0xac4, "Ampere-1a"},
    // NVIDIA (Jetson TX2, Xavier)
    {0x4e, 0x000, "Denver"},
    {0x4e, 0x003, "Denver-2"},
    {0x4e, 0x004, "Carmel"},
    {0x4e, 0x010, "Olympus"}, // Vera
    // Qualcomm (Snapdragon phones and laptops, Centriq servers)
    {0x51, 0x001, "Oryon"},
    {0x51, 0x201, "Kryo"},
    {0x51, 0x205, "Kryo"},
    {0x51, 0x211, "Kryo"},
    {0x51, 0x800, "Kryo-2XX-Gold"},
    {0x51, 0x801, "Kryo-2XX-Silver"},
    {0x51, 0x802, "Kryo-3XX-Gold"},
    {0x51, 0x803, "Kryo-3XX-Silver"},
    {0x51, 0x804, "Kryo-4XX-Gold"},
    {0x51, 0x805, "Kryo-4XX-Silver"},
    {0x51, 0xc00, "Falkor"},
    // Apple (Asahi Linux on M1 and M2)
    {0x61, 0x022, "Icestorm-M1"},
    {0x61, 0x023, "Firestorm-M1"},
    {0x61, 0x024, "Icestorm-M1-Pro"},
    {0x61, 0x025, "Firestorm-M1-Pro"},
    {0x61, 0x028, "Icestorm-M1-Max"},
    {0x61, 0x029, "Firestorm-M1-Max"},
    {0x61, 0x032, "Blizzard-M2"},
    {0x61, 0x033, "Avalanche-M2"},
    {0x61, 0x034, "Blizzard-M2-Pro"},
    {0x61, 0x035, "Avalanche-M2-Pro"},
    {0x61, 0x038, "Blizzard-M2-Max"},
    {0x61, 0x039, "Avalanche-M2-Max"},
    // Samsung
    {0x53, 0x001, "Exynos-M1"},
    // Microsoft (Azure Cobalt 100: a Neoverse-N2 under Microsoft's own code)
    {0x6d, 0xd49, "Azure-Cobalt-100"},
}};

namespace detail {
constexpr bool arm_tables_well_formed() noexcept {
    for (std::size_t i = 0; i < arm_cores.size(); ++i) {
        if (arm_cores[i].name.empty()) return false; // an array declared longer than its rows
        for (std::size_t j = 0; j < i; ++j)
            if (arm_cores[j].implementer == arm_cores[i].implementer && arm_cores[j].part == arm_cores[i].part)
                return false;
    }
    for (const auto& c : arm_cores) {
        bool known = false;
        for (const auto& i : arm_implementers) known = known || i.id == c.implementer;
        if (!known) return false;
    }
    for (std::size_t i = 0; i < arm_implementers.size(); ++i)
        if (arm_implementers[i].name.empty() || (i > 0 && arm_implementers[i - 1].id >= arm_implementers[i].id))
            return false;
    return true;
}
#if AI_HWACCEL_CHECK_TABLES // the test build checks; includers may (config.hpp)
static_assert(arm_tables_well_formed(), "arm_cores: a blank or repeated row, or an implementer not listed");
#endif

// What detection reads at run time, built from the tables at compile time: the keys, the
// vendors and the names packed, not the tables of string_views themselves, which would
// cost a relocation per name (see packed_strings). Detection joins an implementer's name
// to its core's; arm_core_name's "Arm Neoverse-N1" strings are packed as well, for the
// programs that ask for them.
inline constexpr auto arm_core_keys = [] {
    std::array<std::uint32_t, arm_cores.size()> keys{};
    for (std::size_t i = 0; i < arm_cores.size(); ++i)
        keys[i] = std::uint32_t{arm_cores[i].implementer} << 16 | arm_cores[i].part;
    return keys;
}();
inline constexpr auto arm_implementer_vendors = [] {
    std::array<std::pair<std::uint8_t, vendor>, arm_implementers.size()> out{};
    for (std::size_t i = 0; i < arm_implementers.size(); ++i) out[i] = {arm_implementers[i].id, arm_implementers[i].maker};
    return out;
}();
/// The row of arm_implementers for an implementer code (its size when none), found in
/// arm_implementer_vendors: the same codes in the same order, without the names' pointers.
constexpr std::size_t arm_implementer_index(std::uint32_t id) noexcept {
    std::size_t i = 0;
    while (i < arm_implementer_vendors.size() && arm_implementer_vendors[i].first != id) ++i;
    return i;
}
constexpr std::string_view arm_core_maker_name(const arm_core& c) noexcept {
    return arm_implementers[arm_implementer_index(c.implementer)].name;
}
inline constexpr auto arm_core_short_names =
    pack_column<column_chars(arm_cores, [](const arm_core& c) { return c.name; })>(
        arm_cores, [](const arm_core& c) { return c.name; });
inline constexpr auto arm_implementer_names =
    pack_column<column_chars(arm_implementers, [](const arm_implementer& i) { return i.name; })>(
        arm_implementers, [](const arm_implementer& i) { return i.name; });
inline constexpr auto arm_core_full_names = [] {
    constexpr std::size_t chars = [] {
        std::size_t n = 0;
        for (const auto& c : arm_cores) n += arm_core_maker_name(c).size() + 1 + c.name.size();
        return n;
    }();
    packed_strings<arm_cores.size(), chars> out;
    std::size_t n = 0;
    for (std::size_t i = 0; i < arm_cores.size(); ++i) {
        out.at[i] = static_cast<std::uint16_t>(n);
        for (const char ch : arm_core_maker_name(arm_cores[i])) out.chars[n++] = ch;
        out.chars[n++] = ' ';
        for (const char ch : arm_cores[i].name) out.chars[n++] = ch;
    }
    out.at[arm_cores.size()] = static_cast<std::uint16_t>(n);
    return out;
}();

constexpr std::size_t arm_core_index(std::uint32_t implementer, std::uint32_t part) noexcept {
    std::size_t i = 0;
    if (implementer <= 0xff && part <= 0xfff)
        while (i < arm_core_keys.size() && arm_core_keys[i] != (implementer << 16 | part)) ++i;
    else
        i = arm_core_keys.size();
    return i;
}
} // namespace detail

/// The vendor an implementer code maps to; unknown where the enumeration has none (or the
/// code is not listed).
constexpr vendor arm_implementer_vendor(std::uint32_t implementer) noexcept {
    for (const auto& [id, maker] : detail::arm_implementer_vendors)
        if (id == implementer) return maker;
    return vendor::unknown;
}

/// The core's name with its implementer's, "Arm Neoverse-N1", "HiSilicon Kunpeng-920"; empty
/// when the table does not know the part.
constexpr std::string_view arm_core_name(std::uint32_t implementer, std::uint32_t part) noexcept {
    const auto i = detail::arm_core_index(implementer, part);
    return i < arm_cores.size() ? detail::arm_core_full_names[i] : std::string_view{};
}

namespace detail {
/// The Arm IDs of /proc/cpuinfo's processors: each block's "CPU implementer" and "CPU
/// part", kept as the distinct core types in the order they first appear. Eight at most:
/// no chip mixes more, so a listing with more is not a real one.
struct arm_core_tally {
    static constexpr std::uint32_t none = ~std::uint32_t{0};
    std::array<std::uint32_t, 8> keys{}; ///< implementer << 16 | part
    std::size_t size = 0;
    bool too_many = false;
    std::uint32_t implementer = none;       ///< of the processor being read
    std::uint32_t first_implementer = none; ///< of the first processor that names one

    /// One "CPU implementer" (`is_part` false) or "CPU part" line's value.
    constexpr void read(bool is_part, std::string_view value) noexcept {
        const auto id = parse_hex_attribute(value).value_or(none);
        if (!is_part) {
            implementer = id <= 0xff ? id : none;
            if (first_implementer == none) first_implementer = implementer;
            return;
        }
        if (implementer == none || id > 0xfff) return; // parts are 12 bits
        const std::uint32_t key = implementer << 16 | id;
        for (std::size_t i = 0; i < size; ++i)
            if (keys[i] == key) return;
        if (size == keys.size()) too_many = true;
        else keys[size++] = key;
    }
};

/// Fills in what arm64 /proc/cpuinfo does not print: the vendor, from the implementer, and
/// the model, from the cores: "Arm Neoverse-N1", or "Arm Cortex-A55 + Arm Cortex-A76" for a
/// chip of several core types. 32-bit Arm's generic model line ("ARMv7 Processor rev 4
/// (v7l)") gives way too; a core the table does not know leaves the model as it was
/// (lscpu prints "-" then).
inline void name_arm_cpu(cpu_info& c, const arm_core_tally& t) {
    if (c.maker == vendor::unknown && t.first_implementer != arm_core_tally::none)
        c.maker = arm_implementer_vendor(t.first_implementer);
    if ((!c.model.empty() && !c.model.starts_with("ARMv")) || t.size == 0 || t.too_many) return;
    std::array<std::size_t, arm_core_tally{}.keys.size()> cores{};
    for (std::size_t i = 0; i < t.size; ++i)
        if ((cores[i] = arm_core_index(t.keys[i] >> 16, t.keys[i] & 0xffffu)) == arm_cores.size()) return;
    c.model.clear();
    for (std::size_t i = 0; i < t.size; ++i) {
        if (i > 0) c.model += " + ";
        // arm_core_name's text, implementer and core joined here (a core's implementer is
        // always listed: arm_tables_well_formed).
        c.model += arm_implementer_names[arm_implementer_index(t.keys[i] >> 16)];
        c.model += ' ';
        c.model += arm_core_short_names[cores[i]];
    }
}
} // namespace detail

/// /proc/cpuinfo → model, vendor, topology and the ISA features that matter for inference.
inline cpu_info parse_cpuinfo(std::string_view text) {
    cpu_info c{};
    std::vector<std::string> packages;
    std::vector<std::string> cores; // package and core id, a line break between (no value holds one)
    std::uint32_t processors = 0;
    std::string current_package;
    std::string_view flags;
    bool arm_flags = false;
    detail::arm_core_tally arm;
    std::string s390_machine;
    // The keys read, in the order of `keys` below.
    enum class line : std::size_t {
        processor, model_name, arm_model_name, cpu_model, cpu, uarch, isa, vendor_id,
        implementer, part, physical_id, core_id, x86_flags, arm_features, architecture
    };
    detail::for_each_key_value(text, [&](std::string_view key, std::string_view value, bool has_colon) {
        if (!has_colon) return;
        constexpr auto keys = "processor\0model name\0Model Name\0cpu model\0cpu\0uarch\0isa\0vendor_id\0"
                              "CPU implementer\0CPU part\0physical id\0core id\0flags\0Features\0"
                              "CPU architecture\0"sv;
        switch (static_cast<line>(detail::word_index(key, keys))) {
        case line::processor:
            ++processors;
            current_package.clear();
            break;
        case line::model_name:
        case line::arm_model_name:
        case line::cpu_model:
        case line::uarch: // RISC-V: "uarch : sifive,u74-mc" (Linux 6.1 and later)
            if (c.model.empty()) c.model = std::string(value);
            break;
        case line::cpu:
            if (!c.model.empty()) break;
            // POWER: "cpu : POWER9 (architected), altivec supported" (arch/powerpc/kernel/setup-common.c);
            // the model is what precedes the first comma.
            c.model = std::string(detail::trim(value.substr(0, value.find(','))));
            // The maker stays unknown: the vendor table has no IBM.
            if (value.starts_with("POWER"sv) || value.find("PPC"sv) != std::string_view::npos)
                c.arch = cpu_arch::ppc64le;
            break;
        case line::isa:
            if (value.starts_with("rv64"sv)) c.arch = cpu_arch::riscv64; // RISC-V: "isa : rv64imafdc_zicsr…"
            break;
        case line::vendor_id:
            if (c.maker != vendor::unknown) break;
            if (value == "GenuineIntel"sv) c.maker = vendor::intel;
            else if (value == "AuthenticAMD"sv) c.maker = vendor::amd;
            else if (value == "IBM/S390"sv) c.arch = cpu_arch::s390x;
            break;
        case line::implementer:
        case line::part:
            // The implementer code names the licensee that designed the core (0x41 Arm,
            // 0x48 HiSilicon, 0x51 Qualcomm…), the part that licensee's core.
            arm.read(key == "CPU part"sv, value);
            break;
        case line::physical_id:
            current_package = std::string(value);
            packages.push_back(std::string(value));
            break;
        case line::core_id:
            cores.push_back(detail::concat({current_package, "\n"sv, value}));
            break;
        case line::x86_flags:
        case line::arm_features:
            if (!flags.empty()) break;
            flags = value;
            // "flags" is x86's spelling (32-bit x86 is not a target), "Features" Arm's.
            if (key == "flags"sv) c.arch = cpu_arch::x86_64;
            else arm_flags = true;
            break;
        case line::architecture:
            if (c.arch != cpu_arch::unknown) break;
            // 8 and later are AArch64 cores; /proc/cpuinfo of a 32-bit kernel says 7.
            if (const auto v = detail::parse_u64(value)) c.arch = *v >= 8 ? cpu_arch::aarch64 : cpu_arch::arm;
            else if (value == "AArch64"sv) c.arch = cpu_arch::aarch64; // kernels before 3.18 spell it out
            break;
        default:
            if (key.starts_with("processor "sv) && detail::parse_u64(key.substr(10))) {
                // s390x: one "processor N: version = FF,  identification = …,  machine = 2964"
                // line per CPU (arch/s390/kernel/processor.c).
                ++processors;
                if (const auto at = value.find("machine = "sv); at != std::string_view::npos && s390_machine.empty())
                    s390_machine = std::string(detail::trim(value.substr(at + 10, value.find(',', at) - at - 10)));
            }
            break;
        }
    });
    if (c.model.empty() && !s390_machine.empty()) c.model = "IBM Z machine type " + s390_machine;
    c.threads = processors;
    c.sockets =
        packages.empty() ? (processors ? 1u : 0u) : static_cast<std::uint32_t>(detail::count_distinct(packages));
    c.cores = cores.empty() ? processors : static_cast<std::uint32_t>(detail::count_distinct(cores));
    c.features = detail::cpu_features_from_flags(flags, arm_flags);
    detail::name_arm_cpu(c, arm);
    return c;
}

// ---------------------------------------------------------------------------------------
// lscpu

/// What `lscpu` prints that cpu_info does not hold, and cpu_info itself.
struct lscpu_info {
    cpu_info cpu; ///< model, vendor, architecture, sockets, cores, threads (online), features
    std::uint32_t threads_per_core = 0;
    std::uint32_t cores_per_socket = 0; ///< of the first CPU type listed (hybrid parts list several)
    std::uint32_t numa_node_count = 0;  ///< "NUMA node(s)"
    /// From the "NUMA nodeN CPU(s)" lines: ids and cpulists; lscpu prints no memory sizes.
    std::vector<numa_node> numa;
    std::string hypervisor_vendor; ///< "Hypervisor vendor" ("KVM", "Microsoft"), empty on bare metal
    friend bool operator==(const lscpu_info&, const lscpu_info&) = default;
};

namespace detail {
constexpr cpu_arch parse_cpu_arch(std::string_view s) noexcept {
    if (s == "x86_64"sv || s == "amd64"sv) return cpu_arch::x86_64;
    if (s == "aarch64"sv || s == "arm64"sv) return cpu_arch::aarch64;
    if (s == "riscv64"sv) return cpu_arch::riscv64;
    if (s == "ppc64le"sv) return cpu_arch::ppc64le;
    if (s == "s390x"sv) return cpu_arch::s390x;
    if (s.starts_with("arm")) return cpu_arch::arm; // armv7l, armv6l, armv8l (32-bit)
    return cpu_arch::unknown;
}

/// lscpu's "Vendor ID": the x86 CPUID vendor string, or on Arm the implementer's name as
/// util-linux's lscpu-arm.c spells it (the vendors of arm_implementers that the vendor
/// enumeration lists: Microsoft's Cobalt and Intel's Arm cores too).
constexpr vendor cpu_vendor_from_id(std::string_view s) noexcept {
    if (s == "GenuineIntel"sv || s == "Intel"sv) return vendor::intel;
    if (s == "AuthenticAMD"sv) return vendor::amd;
    if (s == "ARM"sv) return vendor::arm;
    if (s == "Qualcomm"sv) return vendor::qualcomm;
    if (s == "Apple"sv) return vendor::apple;
    if (s == "NVIDIA"sv) return vendor::nvidia;
    if (s == "Samsung"sv) return vendor::samsung;
    if (s == "Microsoft"sv) return vendor::microsoft;
    return vendor::unknown;
}
static_assert(cpu_vendor_from_id("Microsoft") == vendor::microsoft && cpu_vendor_from_id("Ampere") == vendor::unknown);

/// A count as lscpu prints it; "-" (unknown, new util-linux on Arm), garbage and counts
/// beyond any machine (more than cpulist_max_cpus) are nullopt.
constexpr std::optional<std::uint32_t> parse_count(std::string_view s) noexcept {
    const auto n = parse_u64(s);
    if (!n || *n > cpulist_max_cpus) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}
} // namespace detail

/// `lscpu` output → CPU description. Both layouts: the flat one of older util-linux
/// (topology lines may come before "Model name") and the newer one, indented and grouped,
/// with one "Model name" block per CPU type on hybrid Arm parts and "Core(s) per cluster"
/// / "Socket(s): -" where the firmware names no sockets. CRLF line ends are tolerated.
/// Cores are the sum over CPU types of cores per socket (or cluster) × sockets (or
/// clusters); threads are the online CPUs (or "CPU(s)" when no online list is printed).
/// s390x counts sockets per book, books (per drawer) and drawers instead of sockets.
/// A model of "-" (a core lscpu does not know) is no model.
inline lscpu_info parse_lscpu(std::string_view text) {
    struct block {
        bool has_model = false;
        std::optional<std::uint32_t> threads_per_core, cores_per_unit, sockets, clusters;
        std::uint32_t sockets_per_book = 0, books = 1, drawers = 1; // s390x; 0: not given
    };
    lscpu_info out;
    std::vector<block> blocks;
    std::optional<std::uint32_t> cpus_total, cpus_online;
    bool seen_flags = false;
    auto current = [&]() -> block& {
        if (blocks.empty()) blocks.emplace_back();
        return blocks.back();
    };
    detail::for_each_key_value(text, [&](std::string_view key, std::string_view value, bool has_colon) {
        if (!has_colon) return;
        if (key == "Architecture"sv) {
            out.cpu.arch = detail::parse_cpu_arch(value);
        } else if (key == "CPU(s)"sv) {
            cpus_total = detail::parse_count(value);
        } else if (key == "On-line CPU(s) list"sv) {
            cpus_online = cpulist_count(value);
        } else if (key == "Vendor ID"sv) {
            if (out.cpu.maker == vendor::unknown) out.cpu.maker = detail::cpu_vendor_from_id(value);
        } else if (key == "Model name"sv) {
            if (blocks.empty() || blocks.back().has_model) blocks.emplace_back();
            blocks.back().has_model = true;
            if (out.cpu.model.empty() && value != "-"sv) out.cpu.model = std::string(value);
        } else if (key == "Thread(s) per core"sv) {
            current().threads_per_core = detail::parse_count(value);
        } else if (key == "Core(s) per socket"sv || key == "Core(s) per cluster"sv) {
            current().cores_per_unit = detail::parse_count(value);
        } else if (key == "Socket(s)"sv) {
            current().sockets = detail::parse_count(value);
        } else if (key == "Cluster(s)"sv) {
            current().clusters = detail::parse_count(value);
        } else if (key == "Socket(s) per book"sv) {
            current().sockets_per_book = detail::parse_count(value).value_or(0);
        } else if (key == "Book(s)"sv || key == "Book(s) per drawer"sv) {
            current().books = detail::parse_count(value).value_or(1);
        } else if (key == "Drawer(s)"sv) {
            current().drawers = detail::parse_count(value).value_or(1);
        } else if (key == "NUMA node(s)"sv) {
            out.numa_node_count = detail::parse_count(value).value_or(0);
        } else if (key.starts_with("NUMA node") && key.size() > 16 && key.ends_with(" CPU(s)")) {
            const auto id = detail::parse_count(key.substr(9, key.size() - 16));
            if (id && parse_cpulist(value)) out.numa.push_back(numa_node{*id, 0, std::string(value)});
        } else if (key == "Flags"sv) {
            // Hybrid parts print one line per CPU type: keep what every type has.
            // lscpu prints "Architecture" first; Arm kernels also say "aarch64"/"armv7l".
            const bool arm = out.cpu.arch == cpu_arch::aarch64 || out.cpu.arch == cpu_arch::arm;
            const auto f = detail::cpu_features_from_flags(value, arm);
            out.cpu.features.bits = seen_flags ? (out.cpu.features.bits & f.bits) : f.bits;
            seen_flags = true;
        } else if (key == "Hypervisor vendor"sv) {
            out.hypervisor_vendor = std::string(value);
        }
    });
    std::uint64_t cores = 0;
    std::uint32_t sockets = 0;
    for (auto b : blocks) {
        // Each count is at most cpulist_max_cpus (2^16): the product fits 64 bits.
        const std::uint64_t books = std::uint64_t{b.sockets_per_book} * b.books * b.drawers;
        if (!b.sockets && books != 0 && books <= cpulist_max_cpus) b.sockets = static_cast<std::uint32_t>(books);
        const std::uint32_t units = b.sockets ? *b.sockets : b.clusters.value_or(1);
        if (b.cores_per_unit) cores += std::uint64_t{*b.cores_per_unit} * units;
        if (b.sockets && *b.sockets > sockets) sockets = *b.sockets;
    }
    if (!blocks.empty()) {
        out.threads_per_core = blocks.front().threads_per_core.value_or(0);
        out.cores_per_socket = blocks.front().cores_per_unit.value_or(0);
    }
    out.cpu.threads = cpus_online ? *cpus_online : cpus_total.value_or(0);
    out.cpu.cores = cores <= UINT32_MAX ? static_cast<std::uint32_t>(cores) : 0;
    out.cpu.sockets = sockets != 0 ? sockets : (out.cpu.threads != 0 ? 1u : 0u);
    return out;
}

// ---------------------------------------------------------------------------------------
// cgroup CPU limits

namespace detail {
/// quota/period in CPUs, or nullopt when either is outside what the kernel accepts (a
/// period of 1 ms to 1 s, a quota of at least 1 ms: kernel/sched/core.c's
/// min_cfs_quota_period and max_cfs_quota_period, in microseconds here) or the ratio is
/// beyond any machine.
constexpr std::optional<double> cpu_quota_ratio(std::uint64_t quota, std::uint64_t period) noexcept {
    if (quota < 1000 || period < 1000 || period > 1'000'000) return std::nullopt;
    const double cpus = static_cast<double>(quota) / static_cast<double>(period);
    if (cpus > static_cast<double>(cpulist_max_cpus)) return std::nullopt;
    return cpus;
}
} // namespace detail


/// cgroup v2 `cpu.max` → the quota in CPUs: "max 100000" → 0 (no quota), "250000 100000"
/// → 2.5. nullopt when the text is neither.
constexpr std::optional<double> parse_cgroup_cpu_max(std::string_view text) noexcept {

    text = detail::trim(text);
    const auto sp = text.find(' ');
    const std::string_view quota = text.substr(0, sp);
    const std::string_view period = sp == std::string_view::npos ? std::string_view{} : detail::trim(text.substr(sp));
    if (quota == "max"sv) {

        if (!period.empty() && !detail::parse_u64(period)) return std::nullopt;
        return 0.0;
    }
    const auto q = detail::parse_u64(quota);
    const auto p = detail::parse_u64(period);
    if (!q || !p) return std::nullopt;
    return detail::cpu_quota_ratio(*q, *p);
}

/// cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us` → the quota in CPUs: quota "-1"
/// → 0 (no quota), 250000 / 100000 → 2.5. nullopt when either is not a number.
constexpr std::optional<double> parse_cgroup_cfs_quota(std::string_view quota, std::string_view period) noexcept {
    const auto q = detail::parse_i64(detail::trim(quota));
    const auto p = detail::parse_u64(detail::trim(period));
    if (!q || !p) return std::nullopt;
    if (*q == -1) return 0.0;
    if (*q < 0) return std::nullopt;
    return detail::cpu_quota_ratio(static_cast<std::uint64_t>(*q), *p);
}

static_assert(parse_cgroup_cpu_max("max 100000\n") == 0.0);
static_assert(!parse_cgroup_cpu_max("1 1000000000000\n") && !parse_cgroup_cpu_max("500 100000\n"));
static_assert(parse_cgroup_cpu_max("250000 100000\n") == 2.5);
static_assert(parse_cgroup_cfs_quota("-1\n", "100000\n") == 0.0);

namespace detail {
/// This process's cgroup path from /proc/self/cgroup: the v2 line ("0::/path") when
/// `controller` is empty, else the v1 line whose controller list names `controller`.
inline std::optional<std::string> own_cgroup_path(std::string_view proc_cgroup, std::string_view controller) {
    while (!proc_cgroup.empty()) {
        const auto nl = proc_cgroup.find('\n');
        const std::string_view line = trim(proc_cgroup.substr(0, nl));
        proc_cgroup = nl == std::string_view::npos ? std::string_view{} : proc_cgroup.substr(nl + 1);
        const auto c1 = line.find(':');
        const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) continue;
        std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
        const std::string_view path = line.substr(c2 + 1);
        if (path.empty() || path.front() != '/') continue;
        if (controller.empty()) {
            if (line.substr(0, c1) == "0"sv && controllers.empty()) return std::string(path);
            continue;
        }
        while (!controllers.empty()) {
            const auto comma = controllers.find(',');
            if (controllers.substr(0, comma) == controller) return std::string(path);
            controllers = comma == std::string_view::npos ? std::string_view{} : controllers.substr(comma + 1);
        }
    }
    return std::nullopt;
}

/// `mount` + `path`, then each parent of `path` up to `mount` itself: where a cgroup's
/// limits and its ancestors' are, whether or not the process sees a cgroup namespace.
inline std::vector<std::string> cgroup_dirs(std::string_view mount, std::string_view path) {
    std::vector<std::string> dirs;
    std::string p = join_path("/"sv, path);
    for (int depth = 0; depth < 64; ++depth) {
        dirs.push_back(concat({mount, p == "/"sv ? ""sv : std::string_view(p)}));
        if (p == "/"sv) break;
        p = join_path(p, ".."sv);
    }
    return dirs;
}

/// The limits of this process's cgroup: the smallest set on it or on any ancestor.
struct cgroup_limits {
    double cpu_quota = 0; ///< in CPUs; 0 = none
    std::optional<std::uint64_t> memory_bytes;
    /// The least room left under any of those memory limits: the limit less the cgroup's
    /// working set (its usage less the page cache the kernel would reclaim first, the
    /// inactive file pages, as the kubelet and `docker stats` count it).
    std::optional<std::uint64_t> memory_free_bytes;
};

/// A counter of a cgroup's memory.stat ("inactive_file 1713283072" lines), if present.
constexpr std::optional<std::uint64_t> cgroup_stat(std::string_view text, std::string_view key) noexcept {
    while (!text.empty()) {
        const std::string_view line = next_key_value(text).key; // no colon: the whole line
        if (line.size() > key.size() && line[key.size()] == ' ' && line.starts_with(key))
            return parse_u64(trim(line.substr(key.size())));
    }
    return std::nullopt;
}
static_assert(cgroup_stat("active_file 1\ninactive_file 2\n", "inactive_file") == 2u);
static_assert(!cgroup_stat("total_inactive_file 2\n", "inactive_file"));

/// Reads the CPU quota (v2 cpu.max, else v1's cfs_quota_us over cfs_period_us) and the
/// memory limit (v2 memory.max, else v1's memory.limit_in_bytes) on this process's cgroup
/// and each of its ancestors. The cgroup is the process's line in /proc/self/cgroup
/// (`self`, if read) for the controller, v2's line for v2: a container with its own cgroup
/// namespace (or v1's bind mount of its cgroup) sees its limits at the mount's root, a
/// service or a container without either has them on its own cgroup's directory.
/// Where a memory limit is set, the room left under it is the limit less the usage there
/// (v2 memory.current, v1 memory.usage_in_bytes) less the inactive file pages memory.stat
/// counts; a usage that is not a number is a parse error and leaves the room unknown.
template <system_view S>
cgroup_limits probe_cgroup_limits(const S& sys, const std::optional<std::string>& self,
                                  std::vector<warning>& warnings) {
    enum class limit : std::uint8_t { cpu_max, cfs_quota, memory };
    struct place {
        std::string_view mount, controller, file;
        limit what;
    };
    // For each limit the first place where its file is seen is the one read.
    static constexpr place places[] = {
        {"/sys/fs/cgroup", "", "cpu.max", limit::cpu_max},
        // Distributions mount v1's controller as cpu,cpuacct and link cpu to it (or the reverse).
        {"/sys/fs/cgroup/cpu,cpuacct", "cpu", "cpu.cfs_quota_us", limit::cfs_quota},
        {"/sys/fs/cgroup/cpu", "cpu", "cpu.cfs_quota_us", limit::cfs_quota},
        {"/sys/fs/cgroup", "", "memory.max", limit::memory},
        {"/sys/fs/cgroup/memory", "memory", "memory.limit_in_bytes", limit::memory},
    };
    // One copy of a read in a cgroup's directory: the walk reads up to three files there.
    const auto read_in = [&](const std::string& dir, std::string_view file, std::size_t cap) {
        return read_optional_file(sys, join_path(dir, file), cap, warnings);
    };
    cgroup_limits r;
    bool cpu_seen = false, memory_seen = false;
    for (const auto& p : places) {
        bool& seen = p.what == limit::memory ? memory_seen : cpu_seen;
        if (seen) continue;
        const auto own = self ? own_cgroup_path(*self, p.controller) : std::nullopt;
        for (const auto& dir : cgroup_dirs(p.mount, own ? std::string_view(*own) : "/"sv)) {
            const auto text = read_in(dir, p.file, 256);
            if (!text) continue;
            seen = true;
            const char* problem = nullptr;
            warning_kind kind = warning_kind::parse_error; // what `problem` is
            std::string_view file = p.file; // the one `problem` is about
            if (p.what == limit::memory) {
                // "max" or v1's page-rounded 2^63 is no limit; anything else not a number is bad.
                const std::string_view value = trim(*text);
                const auto n = parse_u64(value);
                if (!n && value != "max"sv) {
                    problem = "not 'max' or a number of bytes";
                    kind = unparsed_number(value);
                }
                if (n && *n < cgroup_unlimited) {
                    if (!r.memory_bytes || *n < *r.memory_bytes) r.memory_bytes = n;
                    // v2's counters count the cgroup's descendants too; v1's hierarchical
                    // one is total_inactive_file (its inactive_file is the cgroup's own).
                    const bool v2 = p.controller.empty();
                    const std::string_view usage = v2 ? "memory.current"sv : "memory.usage_in_bytes"sv;
                    std::optional<std::uint64_t> set;
                    if (const auto used = read_in(dir, usage, 256)) {
                        set = parse_u64(trim(*used));
                        if (!set) {
                            file = usage;
                            problem = "not a number of bytes; the room left under the limit is not known";
                        }
                    }
                    if (set) {
                        if (const auto stat = read_in(dir, "memory.stat"sv, 16 * 1024))
                            if (const auto c = cgroup_stat(*stat, v2 ? "inactive_file"sv : "total_inactive_file"sv))
                                *set -= *c < *set ? *c : *set;
                        const std::uint64_t room = *n > *set ? *n - *set : 0;
                        if (!r.memory_free_bytes || room < *r.memory_free_bytes) r.memory_free_bytes = room;
                    }
                }
            } else {
                std::optional<double> q;
                if (p.what == limit::cpu_max) {
                    q = parse_cgroup_cpu_max(*text);
                    problem = "not 'max <period>' or '<quota> <period>' as the kernel takes them";
                } else if (const auto period = read_in(dir, "cpu.cfs_period_us"sv, 256)) {
                    q = parse_cgroup_cfs_quota(*text, *period);
                    problem = "not a quota and period in microseconds as the kernel takes them";
                } else {
                    continue;
                }
                if (q) problem = nullptr;
                if (q && *q > 0 && (r.cpu_quota == 0 || *q < r.cpu_quota)) r.cpu_quota = *q;
            }
            if (problem) add_warning(warnings, kind, join_path(dir, file), problem);
        }
    }
    return r;
}
} // namespace detail

// ---------------------------------------------------------------------------------------
// The probe

/// Sockets and physical cores from each online CPU's sysfs topology
/// (/sys/devices/system/cpu/cpuN/topology/{physical_package_id,core_id}): the kernel's own
/// view, and the only one on Arm, whose /proc/cpuinfo names neither. Used only when every
/// online CPU has both files; x86's /proc/cpuinfo prints the same ids, so a difference
/// there is reported. Elsewhere a core id is unique only within its cluster: on
/// device-tree Arm boards (Jetson, RK3588) the kernel numbers each cluster's cores from 0,
/// so `cluster_id`, where the kernel has it, is part of a core's identity there. Such a
/// board has one package, but kernels before 6.0 give each cluster's id as its package id
/// ("arch_topology: Don't set cluster identifier as physical package identifier"): there
/// the cores are right and the sockets are the clusters (telling a device-tree board from
/// an Arm server would take a lookup the minimal program has no room for).
template <system_view S>
void probe_cpu_topology(const S& sys, std::string_view online_list, cpu_info& cpu, std::vector<warning>& warnings) {
    const auto cpus = parse_cpulist(online_list);

    if (!cpus || cpus->empty()) return;
    const bool ids_per_cluster = cpu.arch != cpu_arch::x86_64;
    std::vector<std::string> packages; // ids as text, counted as parse_cpuinfo counts its own
    std::vector<std::string> cores;    // "package core", or "package cluster core"
    for (const auto n : *cpus) {
        std::string dir = "/sys/devices/system/cpu/cpu";
        dir += detail::to_decimal(n);
        dir += "/topology/";
        const auto pkg = sys.read_file(dir + "physical_package_id", 64);
        const auto core = sys.read_file(dir + "core_id", 64);
        if (!pkg.ok() || !core.ok()) return; // no topology (old kernel, captured tree without it)
        const auto p = detail::parse_i64(detail::trim(pkg.data));
        const auto c = detail::parse_i64(detail::trim(core.data));
        if (!p || !c) {
            const bool big = detail::unparsed_number(p ? core.data : pkg.data) == warning_kind::value_out_of_range;
            detail::add_warning(warnings, big ? warning_kind::value_out_of_range : warning_kind::parse_error, dir,
                                big ? "topology id past 2^63" : "topology ids are not numbers");
            return;
        }
        // Counted only, so written as unsigned: distinct ids stay distinct (-1, which
        // firmware without the table gives, is one id as any other).
        packages.push_back(detail::to_decimal(static_cast<std::uint64_t>(*p)));
        std::string key = packages.back();
        if (ids_per_cluster) {
            key += ' ';
            if (const auto id = sys.read_file(dir + "cluster_id", 64); id.ok()) // Linux 5.16 and later
                key += detail::trim(id.data);
        }
        key += ' ';
        key += detail::to_decimal(static_cast<std::uint64_t>(*c));
        cores.push_back(std::move(key));
    }
    const auto sockets = static_cast<std::uint32_t>(detail::count_distinct(packages));
    const auto physical = static_cast<std::uint32_t>(detail::count_distinct(cores));
    const bool cpuinfo_knows = cpu.arch == cpu_arch::x86_64 && cpu.sockets != 0;
    if (cpuinfo_knows && (cpu.sockets != sockets || cpu.cores != physical)) {
        detail::add_warning(warnings, warning_kind::disagreement, "/sys/devices/system/cpu"sv,
                            detail::with_numbers("/proc/cpuinfo counts {} socket(s) and {} core(s), the sysfs "
                                                 "topology {} and {}; using sysfs, which describes the online CPUs"sv,
                                                 {cpu.sockets, cpu.cores, sockets, physical}));

    }
    cpu.sockets = sockets;
    cpu.cores = physical;
}

/// Reads the host's CPU (online and usable threads, CPU quota), memory, cgroup limits and
/// NUMA nodes through `sys`, adding warnings for what could not be read. Returns the host
/// description and the CPU's profile.
template <system_view S>
std::pair<host_info, accelerator_profile> probe_host(const S& sys, std::vector<warning>& warnings) {
    host_info host{};
    auto note = [&](warning_kind k, std::string_view path, const char* msg) {
        detail::add_warning(warnings, k, path, msg);
    };

    auto read_reporting = [&](std::string_view path) -> std::optional<std::string> {
        auto r = sys.read_file(path, default_read_cap);
        if (r.status == read_status::truncated)
            note(warning_kind::output_truncated, path, "file larger than the read cap; parsed its start");
        if (r.ok()) return std::move(r.data);
        if (r.status == read_status::permission_denied)
            note(warning_kind::permission_denied, path, "not readable");
        else
            note(warning_kind::read_error, path, r.status == read_status::not_found ? "missing" : "unreadable");
        return std::nullopt;
    };

    if (auto text = read_reporting("/proc/cpuinfo"sv)) {
        host.cpu = parse_cpuinfo(*text);
        // Every architecture's kernel writes a "processor" entry per CPU (s390x: "processor 0:");
        // a file without the word is empty or not /proc/cpuinfo at all.
        if (host.cpu.threads == 0 && text->find("processor") == std::string::npos)
            note(warning_kind::parse_error, "/proc/cpuinfo"sv, "no processor entries");
        // The model string is the firmware's or a hypervisor's (QEMU's model-id): it goes
        // to terminals and JSON, so only printable UTF-8 is kept.
        bool changed = false;
        std::string shown = detail::parsing::printable(host.cpu.model, changed);
        if (changed) {
            note(warning_kind::parse_error, "/proc/cpuinfo"sv, "model name not printable UTF-8; '?' put in");
            host.cpu.model = std::move(shown);
        }
    }
    // The kernel's online mask is the authority on how many CPUs run; /proc/cpuinfo can be
    // virtualised (LXCFS shows the container's share) or cut short.
    constexpr std::string_view online_path = "/sys/devices/system/cpu/online";
    std::optional<std::string> online_list;
    if (auto text = detail::read_optional_file(sys, online_path, 64 * 1024, warnings)) {
        const auto online = cpulist_count(*text);
        if (!online || *online == 0) {
            if (!online && detail::cpulist_ranges(*text, UINT32_MAX))
                detail::add_warning(warnings, warning_kind::value_out_of_range, online_path,
                                    detail::with_numbers("names CPUs past {}, more than any kernel supports"sv,
                                                         {cpulist_max_cpus}));
            else
                note(warning_kind::parse_error, online_path, "not a cpulist");
        } else {
            online_list = *text;
            if (host.cpu.threads != 0 && host.cpu.threads != *online) {
                detail::add_warning(warnings, warning_kind::disagreement, online_path,
                                    detail::with_numbers("/proc/cpuinfo lists {} processors, the online mask {}; "
                                                         "using the online mask, the kernel's own count (cpuinfo "
                                                         "may be virtualised or cut short)"sv,
                                                         {host.cpu.threads, *online}));
            }
            host.cpu.threads = *online;
            probe_cpu_topology(sys, *text, host.cpu, warnings);
        }
    }
    // What this process may run on: its affinity mask, which cgroup cpusets narrow, at
    // most the CPUs online (a task's mask names every possible CPU, offline and
    // hot-pluggable ones too, where no cpuset narrows it).
    constexpr std::string_view status_path = "/proc/self/status"sv;
    if (auto text = detail::read_optional_file(sys, status_path, 64 * 1024, warnings)) {
        detail::for_each_key_value(*text, [&](std::string_view key, std::string_view value, bool has_colon) {
            if (!has_colon || key != "Cpus_allowed_list"sv) return;
            auto n = cpulist_count(value);
            if (!n || *n == 0) {
                // CPUs past what any kernel supports are out of range; anything else is garbage.
                note(!n && detail::cpulist_ranges(value, UINT32_MAX) ? warning_kind::value_out_of_range
                                                                      : warning_kind::parse_error,
                     status_path, "Cpus_allowed_list is not a cpulist of CPUs a kernel supports");
                return;
            }
            // The mask keeps CPUs that are offline (sched_getaffinity leaves them out):
            // only those online count.
            if (online_list) n = detail::cpulist_common_count(value, *online_list);
            if (host.cpu.threads != 0 && *n > host.cpu.threads) n = host.cpu.threads;
            host.cpu.usable_threads = *n;
        });
    }
    const auto self_cgroup = detail::read_optional_file(sys, "/proc/self/cgroup"sv, 64 * 1024, warnings);
    const auto limits = detail::probe_cgroup_limits(sys, self_cgroup, warnings);
    host.cpu.cpu_quota = limits.cpu_quota;

    std::uint64_t hugetlb = 0;
    if (auto text = read_reporting("/proc/meminfo"sv)) {
        host.memory = detail::parse_meminfo_and_pool(*text, hugetlb);
        if (!host.memory.total_bytes) {
            std::optional<std::string_view> total; // the MemTotal line's value, when there is one
            detail::for_each_key_value(*text, [&](std::string_view key, std::string_view value, bool has_colon) {
                if (has_colon && key == "MemTotal"sv && !total) total = value;
            });
            const auto number = total ? total->substr(0, total->find(' ')) : std::string_view{};
            if (!total) note(warning_kind::parse_error, "/proc/meminfo"sv, "no MemTotal line");
            else if (detail::unparsed_number(number) == warning_kind::value_out_of_range)
                note(warning_kind::value_out_of_range, "/proc/meminfo"sv, "MemTotal past 2^64 bytes");
            else
                note(warning_kind::parse_error, "/proc/meminfo"sv, "MemTotal is not a number of kB");
        }
    }
    if (limits.memory_bytes) host.memory.cgroup_limit_bytes = {*limits.memory_bytes, origin::sysfs};
    if (limits.memory_free_bytes) host.memory.cgroup_free_bytes = {*limits.memory_free_bytes, origin::sysfs};
    const std::size_t warnings_before_numa = warnings.size();
    host.numa = probe_numa(sys, warnings);
    // The nodes' sizes add up to MemTotal on a plain kernel. Nodes over it mean a virtualised
    // /proc/meminfo (LXCFS gives a container its limit). Nodes short of it mean pages the kernel
    // counts but has not yet handed to a node: a guest booted with lazy struct-page
    // initialisation (Firecracker's deferred_init=lazy) grows its node as memory is first
    // touched. A lone node holds all the memory there is, so it is given MemTotal; several
    // nodes stay as read, with a warning.
    if (!host.numa.empty() && host.memory.total_bytes && warnings.size() == warnings_before_numa) {
        std::uint64_t nodes = 0;
        for (const auto& n : host.numa) nodes += n.memory_bytes;
        const std::uint64_t total = *host.memory.total_bytes;
        const std::uint64_t gap = nodes > total ? nodes - total : total - nodes;
        if (gap > total / 100 && nodes < total && host.numa.size() == 1) {
            host.numa.front().memory_bytes = total;
        } else if (gap > total / 100) {
            detail::add_warning(warnings, warning_kind::disagreement, "/sys/devices/system/node"sv,
                                detail::with_numbers("the NUMA nodes hold {} bytes, /proc/meminfo's MemTotal says "
                                                     "{}; the memory total stays MemTotal, the memory the kernel "
                                                     "manages (nodes short of it: pages not yet initialised or "
                                                     "handed to a node; nodes over it: a /proc/meminfo virtualised, "
                                                     "e.g. by LXCFS)"sv,
                                                     {nodes, total}));

        }
    }

    accelerator_profile cpu;
    cpu.kind = device_kind::cpu;
    cpu.maker = host.cpu.maker;
    cpu.name = host.cpu.model.empty() ? "CPU"sv : std::string_view(host.cpu.model);
    // Under a cgroup limit the CPU's memory is the limit, and what is free is what the
    // machine has available and the cgroup has room for, whichever is less. A hugetlb pool
    // is out of both: MemTotal counts it, ordinary allocations cannot use it, MemAvailable
    // already leaves it out. (The host's memory stays MemTotal, as the kernel reports it.)
    std::uint64_t usable = host.memory.usable_bytes();
    if (const auto total = host.memory.total_bytes.value_or(0); hugetlb != 0 && hugetlb < total) {
        const std::uint64_t outside_pool = total - hugetlb;
        if (usable > outside_pool) usable = outside_pool;
    }
    if (usable != 0) cpu.memory_bytes = {usable, origin::sysfs};
    if (const auto& a = host.memory.available_bytes) {
        std::uint64_t free = usable != 0 && usable < *a ? usable : *a;
        if (const auto& room = host.memory.cgroup_free_bytes; room && *room < free) free = *room;
        cpu.memory_free_bytes = {free, a.from};
    }
    if (host.cpu.cores != 0) cpu.compute_units = {host.cpu.cores, origin::sysfs};
    return {std::move(host), std::move(cpu)};
}

AI_HWACCEL_NAMESPACE_END
