// ai-hwaccel detect: client NPUs (Intel NPU, AMD XDNA, Samsung Exynos NPU, MediaTek APU).
//
// Intel's and AMD's NPUs are PCI functions driven by DRM compute-accelerator drivers: each
// one is /sys/class/accel/accel<N> (its `device` link is the PCI function) with the node
// /dev/accel/accel<N>, and the bound driver's name says whose it is (`intel_vpu`, the
// upstream drivers/accel/ivpu; `amdxdna`, drivers/accel/amdxdna). The shared walker here
// reads those folders; the Intel and AMD probes keep the nodes of their own driver. Both
// drivers publish a few attributes on the PCI function (verified in the kernel sources
// named where they are read). These NPUs work from the host's memory: a profile says
// unified_memory, and the probe gives it the host's memory (MemTotal, as OpenVINO's NPU
// plugin reports for an integrated NPU); peak TOPS come from the catalogue.
//
// Samsung's Exynos NPU and MediaTek's APU (MDLA) have no upstream driver; their vendors'
// Android kernels register platform drivers matched by device-tree compatible strings.
// The probes for them look only for those documented strings in the device tree and
// leave every figure unknown: nothing public says what such a system can be asked.
//
// Also here: pure readers for what people publish about these devices (an `ls -la` of
// /sys/class/accel, shell transcripts of the device's attribute files) and their capture
// formats. Parsers never throw for any input. The whole header is empty unless one of
// the four backends is compiled in; each vendor's parts sit under its own switch.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA || AI_HWACCEL_BACKEND_SAMSUNG_NPU ||              \
    AI_HWACCEL_BACKEND_MEDIATEK_APU

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/cpu.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

#if AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA

// ---------------------------------------------------------------------------------------
// What an accel node's device folder says

/// The facts of one DRM accel node's PCI function that the profile has no field for, or
/// that decide how the profile is filled. Every value is unknown until its file is read.
struct accel_device_facts {
    std::string node;   ///< "accel0"; for a folder reached without a node, its PCI address
    std::string driver; ///< bound driver ("intel_vpu", "amdxdna"); empty when unknown
    std::optional<pci_address> pci;
    std::uint16_t vendor_id = 0, device_id = 0;
    std::uint16_t subsystem_vendor_id = 0, subsystem_device_id = 0;
    std::optional<std::uint8_t> revision; ///< PCI revision: AMD tells XDNA platforms apart by it
    bool device_node = true; ///< /dev/accel/accel<N> present (false: the process cannot open it)

    // intel_vpu (drivers/accel/ivpu/ivpu_sysfs.c)
    std::optional<std::uint64_t> busy_time_us;             ///< npu_busy_time_us, since boot
    std::optional<std::uint64_t> memory_utilization_bytes; ///< npu_memory_utilization
    std::optional<std::uint32_t> max_frequency_mhz;        ///< npu_max_frequency_mhz
    std::optional<std::uint32_t> current_frequency_mhz;    ///< npu_current_frequency_mhz (0 while idle)
    std::string sched_mode;                                ///< "HW" or "OS"

    // amdxdna (drivers/accel/amdxdna/amdxdna_sysfs.c)
    std::string vbnv;       ///< the driver's platform name ("NPU Strix Halo", older "RyzenAI-npu5")
    std::string fw_version; ///< "major.minor.sub.build"
    std::optional<std::uint32_t> device_type;

    // Power management, as the PCI core publishes it.
    std::string power_state;    ///< power_state: "D0", "D3hot", …
    std::string runtime_status; ///< power/runtime_status: "active", "suspended", …
    friend bool operator==(const accel_device_facts&, const accel_device_facts&) = default;
};

namespace detail::npu {

using detail::parsing::max_problems;
using detail::parsing::max_rows;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;
using detail::parsing::value_problem;

inline constexpr std::uint16_t pci_vendor_intel = 0x8086;
inline constexpr std::uint16_t pci_vendor_amd = 0x1022;
inline constexpr std::string_view accel_class_dir = "/sys/class/accel";
inline constexpr std::size_t attr_cap = 4096;

/// The device kind a DRM accel driver stands for in this build; nullopt for drivers of
/// other backends (habanalabs, qaic, …) and for backends compiled out.
constexpr std::optional<device_kind> kind_of_driver(std::string_view driver) noexcept {
#if AI_HWACCEL_BACKEND_INTEL_NPU
    if (driver == "intel_vpu"sv) return device_kind::intel_npu;
#endif
#if AI_HWACCEL_BACKEND_AMD_XDNA
    if (driver == "amdxdna"sv) return device_kind::amd_xdna_npu;
#endif
    (void)driver;
    return std::nullopt;
}

/// "accel12" → 12; nullopt for anything else.
constexpr std::optional<std::uint32_t> accel_index(std::string_view name) noexcept {
    if (name.size() <= 5 || name.size() > 10 || !name.starts_with("accel")) return std::nullopt;
    const auto n = detail::parse_u64(name.substr(5));
    if (!n || *n > 0xffff) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}
static_assert(accel_index("accel0") == 0u && accel_index("accel12") == 12u && !accel_index("accel") &&
              !accel_index("accel0x") && !accel_index("card0"));

/// A whole decimal attribute value ("1900\n"); nullopt for anything else.
constexpr std::optional<std::uint64_t> attribute_number(std::string_view v) noexcept {
    return detail::parse_u64(detail::trim(v));
}

inline bool set_text(std::string& field, std::string_view v, std::size_t cap = 64) {
    bool changed = false;
    v = detail::trim(v);
    field = printable(v, changed, cap);
    return !changed && v.size() <= cap;
}

/// AMD XDNA: the catalogue row by PCI revision, as amdxdna's own (device, revision) table
/// tells platforms apart (amdxdna_pci_drv.c: 0x17f0 rev 0x10 = npu4 "NPU Strix", 0x11 =
/// npu5 "NPU Strix Halo", 0x20 = npu6 "NPU Krackan"; 0x1502 rev 0 = npu1, which Phoenix
/// and Hawk Point share, so no row can be picked for it). Else by the driver's platform
/// name (vbnv), in its current and its older spelling.
constexpr std::string_view xdna_row_name(std::uint16_t device, std::optional<std::uint8_t> revision,
                                         std::string_view vbnv) noexcept {
    if (device == 0x17f0 && revision) {
        if (*revision == 0x10) return "AMD XDNA 2 NPU (Strix Point)";
        if (*revision == 0x11) return "AMD XDNA 2 NPU (Strix Halo)";
        return {};
    }
    vbnv = detail::trim(vbnv);
    if (vbnv == "NPU Strix"sv || vbnv == "RyzenAI-npu4"sv) return "AMD XDNA 2 NPU (Strix Point)";
    if (vbnv == "NPU Strix Halo"sv || vbnv == "RyzenAI-npu5"sv) return "AMD XDNA 2 NPU (Strix Halo)";
    return {};
}

/// Folds one attribute file of an accel device folder into the facts; `name` is the path
/// below the device folder ("npu_busy_time_us", "power/runtime_status"). Returns a
/// problem (value_out_of_range for a number no device reports, as one past 2^64), or
/// nothing when the value is fine or the file is not one the library reads.
inline value_problem apply_device_file(std::string_view name, std::string_view value, accel_device_facts& f) {
    const auto bad = [&] {
        return value_problem(std::string(name) + ": not understood: " + quote_value(detail::trim(value)));
    };
    const auto out_of_range = [&] {
        return value_problem(std::string(name) + ": " + quote_value(detail::trim(value)) + " is out of range",
                             warning_kind::value_out_of_range);
    };
    auto number = [&](auto& field, std::uint64_t max) -> value_problem {
        const auto v = attribute_number(value);
        if (!v) return looks_decimal(detail::trim(value)) ? out_of_range() : bad();
        if (*v > max) return out_of_range();
        field = static_cast<std::remove_reference_t<decltype(*field)>>(*v);
        return {};
    };
    auto text = [&](std::string& field) -> value_problem { return set_text(field, value) ? value_problem() : bad(); };
    auto hex16 = [&](std::uint16_t& field) -> value_problem {
        const auto v = detail::parse_hex_attribute(value);
        if (!v || *v > 0xffff) return bad();
        field = static_cast<std::uint16_t>(*v);
        return {};
    };
    if (name == "npu_busy_time_us"sv) return number(f.busy_time_us, UINT64_MAX);
    if (name == "npu_memory_utilization"sv) return number(f.memory_utilization_bytes, 1ull << 50);
    if (name == "npu_max_frequency_mhz"sv) return number(f.max_frequency_mhz, 1'000'000);
    if (name == "npu_current_frequency_mhz"sv) return number(f.current_frequency_mhz, 1'000'000);
    if (name == "device_type"sv) return number(f.device_type, 0xffff);
    if (name == "sched_mode"sv) return text(f.sched_mode);
    if (name == "vbnv"sv) return text(f.vbnv);
    if (name == "fw_version"sv) return text(f.fw_version);
    if (name == "power_state"sv) return text(f.power_state);
    if (name == "power/runtime_status"sv) return text(f.runtime_status);
    if (name == "vendor"sv) return hex16(f.vendor_id);
    if (name == "device"sv) return hex16(f.device_id);
    if (name == "subsystem_vendor"sv) return hex16(f.subsystem_vendor_id);
    if (name == "subsystem_device"sv) return hex16(f.subsystem_device_id);
    if (name == "revision"sv) {
        const auto v = detail::parse_hex_attribute(value);
        if (!v || *v > 0xff) return bad();
        f.revision = static_cast<std::uint8_t>(*v);
        return {};
    }
    if (name.empty()) { // the folder itself: `readlink -f` prints the PCI function's path
        if (const auto a = parse_pci_address(detail::base_name(detail::trim(value)))) f.pci = *a;
        return {};
    }
    if (name == "driver"sv) { // a link's target, as readlink prints it
        const auto d = detail::base_name(detail::trim(value));
        return d.empty() || !set_text(f.driver, d) ? bad() : value_problem();
    }
    if (name == "uevent"sv) {
        const auto u = parse_pci_uevent(value);
        if (u.driver) set_text(f.driver, *u.driver);
        if (u.vendor_id) {
            f.vendor_id = *u.vendor_id;
            f.device_id = *u.device_id;
        }
        if (u.subsystem_vendor_id) {
            f.subsystem_vendor_id = *u.subsystem_vendor_id;
            f.subsystem_device_id = *u.subsystem_device_id;
        }
        if (u.slot) f.pci = *u.slot;
        if (u.bad.empty()) return {};
        return value_problem("uevent: a line not understood: " + quote_value(u.bad));
    }
    return {};
}

} // namespace detail::npu

/// The profile of an accel node from its facts: the kind from the driver (nullopt for a
/// driver this build does not handle), PCI address and id, the index from the node's
/// number, the NPU's allocated buffers as memory in use, unified memory (it works from
/// the host's RAM, whose size the probe adds from /proc/meminfo: the facts hold none),
/// completed from the catalogue (by PCI id for Intel; by PCI revision or platform name
/// for AMD, whose ids are shared by several platforms). Unavailable when the node exists
/// but /dev/accel/accel<N> does not.
inline std::optional<accelerator_profile> npu_profile_from_facts(const accel_device_facts& f) {
    using namespace detail::npu;
    const auto kind = kind_of_driver(f.driver);
    if (!kind) return std::nullopt;
    accelerator_profile p;
    p.kind = *kind;
    p.maker = info(*kind).default_vendor;
    p.index = accel_index(f.node).value_or(0);
    p.pci = f.pci;
    p.pci_device_id = f.device_id;
    p.unified_memory = true;
    p.available = f.device_node;
    if (f.memory_utilization_bytes) p.memory_used_bytes = {*f.memory_utilization_bytes, origin::sysfs};
    const device_spec* spec = nullptr;
    if (*kind == device_kind::intel_npu) {
        const auto rows = find_devices_by_pci(pci_vendor_intel, f.device_id);
        if (rows.size() == 1) spec = rows[0];
    } else {
        if (const auto name = xdna_row_name(f.device_id, f.revision, f.vbnv); !name.empty()) spec = find_device(name);
        if (spec && f.device_id != 0 && !spec->pci_device_ids.contains(f.device_id)) spec = nullptr;
    }
    if (spec && spec->kind == *kind) {
        p.apply_spec(*spec);
        p.name = spec->name;
    } else if (!f.vbnv.empty()) {
        p.name.assign(f.vbnv); // the driver's own platform name, where no row matches
    } else if (f.device_id != 0) {
        p.name.assign(detail::unknown_device_name(*kind == device_kind::intel_npu ? "Intel NPU" : "AMD NPU", f.device_id));
    }
    return p;
}

// ---------------------------------------------------------------------------------------
// `ls -la /sys/class/accel`

/// One "accel<N> -> ../../devices/…/<pci>/accel/accel<N>" line of a listing.
struct accel_listing_entry {
    std::string name; ///< "accel0"
    std::uint32_t index = 0;
    std::string target;             ///< the link's target as printed
    std::optional<pci_address> pci; ///< the PCI function the target passes through
    friend bool operator==(const accel_listing_entry&, const accel_listing_entry&) = default;
};

struct accel_listing_result {
    std::vector<accel_listing_entry> entries;
    std::vector<parse_problem> problems;
};

/// Reads `ls -l`/`ls -la` of /sys/class/accel (or `ls -l` with any options that keep the
/// long format): the "total" line, "." and "..", and one link line per node. The listing
/// names the nodes and their PCI functions, not their drivers, so it gives no device kind.
inline accel_listing_result parse_accel_class_listing(std::string_view text) {
    using namespace detail::npu;
    accel_listing_result r;
    problem_sink problems{r.problems};
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty() || line.starts_with("total ")) return true;
        if (r.entries.size() >= max_rows) {
            problems.add(number, "more than " + std::to_string(max_rows) + " nodes; the rest ignored");
            return false;
        }
        const auto arrow = line.find(" -> ");
        if (arrow == std::string_view::npos) {
            // "." and "..", and plain entries some kernels add; only links are nodes.
            const auto sp = line.rfind(' ');
            const auto name = sp == std::string_view::npos ? line : line.substr(sp + 1);
            if (name != "."sv && name != ".."sv && !(line.front() == 'd' || line.front() == '-'))
                problems.add(number, "not a listing line: " + quote_value(line));
            return true;
        }
        const auto head = detail::trim(line.substr(0, arrow));
        const auto sp = head.rfind(' ');
        const auto name = sp == std::string_view::npos ? head : head.substr(sp + 1);
        const auto target = detail::trim(line.substr(arrow + 4));
        const auto index = accel_index(name);
        if (!index) return true; // another entry of the class folder
        if (std::ranges::any_of(r.entries, [&](const accel_listing_entry& x) { return x.index == *index; })) {
            problems.add(number, std::string(name) + " listed twice; the second line ignored");
            return true;
        }
        accel_listing_entry e;
        e.name = std::string(name);
        e.index = *index;
        bool changed = false;
        e.target = printable(target, changed, 512);
        // The PCI function: the last path component before "/accel/" that is an address.
        std::string_view rest = target;
        while (!rest.empty()) {
            const auto slash = rest.find('/');
            const auto part = rest.substr(0, slash);
            if (const auto a = parse_pci_address(part)) e.pci = *a;
            if (part == "accel"sv || slash == std::string_view::npos) break;
            rest.remove_prefix(slash + 1);
        }
        if (changed) problems.add(number, "link target not printable: " + quote_value(target));
        r.entries.push_back(std::move(e));
        return true;
    });
    problems.finish();
    return r;
}

// ---------------------------------------------------------------------------------------
// Shell transcripts of accel device attributes

/// What `parse_accel_transcript` read: the devices whose driver this build handles, and
/// the facts of every device folder the transcript shows, in order of first appearance.
struct accel_transcript_result {
    std::vector<accelerator_profile> devices;
    std::vector<accel_device_facts> facts;
    std::vector<parse_problem> problems;
};

namespace detail::npu {

// "$ cat …", "# readlink -f …", "user@host:~$ cat …", "[user@host ~]$ cat …" (Fedora's
// and RHEL's default): the command, or nullopt.
constexpr std::optional<std::string_view> prompt_command(std::string_view line) noexcept {
    for (std::string_view mark : {"$ ", "# "}) {
        const auto at = line.find(mark);
        if (at == std::string_view::npos) continue;
        const auto before = line.substr(0, at);
        // A bare prompt, one after user@host:dir, or one after [user@host dir].
        const bool bracketed = before.size() > 2 && before.front() == '[' && before.back() == ']' &&
                               before.find(']') == before.size() - 1;
        if (at != 0 && !bracketed && before.find_first_of(" \t") != std::string_view::npos) continue;
        if (at != 0 && before.find('@') == std::string_view::npos) continue;
        return trim(line.substr(at + mark.size()));
    }
    return std::nullopt;
}
static_assert(prompt_command("[me@box ~]$ cat x") == "cat x" && prompt_command("me@box:~$ cat x") == "cat x");
static_assert(prompt_command("$ cat x") == "cat x" && !prompt_command("a b$ cat x") && !prompt_command("[a b]x$ c"));

// Whether a line of a shell loop ends it: "done", or a one-line loop's "…; done".
constexpr bool ends_loop(std::string_view line) noexcept {
    line = trim(line);
    if (line.ends_with(';')) line.remove_suffix(1);
    return line == "done"sv || line.ends_with("; done"sv) || line.ends_with(";done"sv);
}
static_assert(ends_loop("done") && ends_loop("for f in a; do cat $f; done") && !ends_loop("undone"));

// A shell word without quotes ("\"$ACCEL/$f\"" → "$ACCEL/$f").
constexpr std::string_view unquote(std::string_view w) noexcept {
    w = trim(w);
    if (w.size() >= 2 && (w.front() == '"' || w.front() == '\'') && w.back() == w.front()) w = w.substr(1, w.size() - 2);
    return w;
}

constexpr bool is_var_name(std::string_view s) noexcept {
    if (s.empty() || (s.front() >= '0' && s.front() <= '9')) return false;
    for (char c : s)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return true;
}

// "NAME=value" or "export NAME=value" (typed at a prompt or shown in a script): the name
// and the value as written.
constexpr std::optional<std::pair<std::string_view, std::string_view>> assignment(std::string_view line) noexcept {
    line = trim(line);
    if (line.starts_with("export ")) line = trim(line.substr(7));
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || !is_var_name(line.substr(0, eq))) return std::nullopt;
    return std::pair{line.substr(0, eq), line.substr(eq + 1)};
}

// The device folder and the file below it: "/sys/class/accel/accel0/device/power/x" →
// {"accel0", "power/x"}; "/sys/bus/pci/devices/0000:00:0b.0/npu_busy_time_us" →
// {"0000:00:0b.0", "npu_busy_time_us"}. {"", ""} when the path names neither.
inline std::pair<std::string, std::string> split_device_path(std::string_view path) {
    std::vector<std::string_view> parts;
    while (!path.empty() && parts.size() < 64) {
        const auto slash = path.find('/');
        if (slash != 0) parts.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) break;
        path.remove_prefix(slash + 1);
    }
    std::size_t at = parts.size();
    for (std::size_t i = 0; i < parts.size(); ++i)
        if (accel_index(parts[i])) at = i; // the node, whichever way the path reached it
    if (at == parts.size())
        for (std::size_t i = 0; i < parts.size(); ++i)
            if (parse_pci_address(parts[i])) at = i;
    if (at == parts.size()) return {};
    std::size_t first = at + 1;
    if (accel_index(parts[at]) && first < parts.size() && parts[first] == "device"sv) ++first;
    std::string rest;
    for (std::size_t i = first; i < parts.size(); ++i) {
        if (!rest.empty()) rest += '/';
        rest += parts[i];
    }
    return {std::string(parts[at]), rest};
}

// Fills what `into` does not know from `from` (facts about the same device).
inline void fold_facts(accel_device_facts& into, const accel_device_facts& from) {
    const auto text = [](std::string& a, const std::string& b) {
        if (a.empty()) a = b;
    };
    const auto id = [](std::uint16_t& a, std::uint16_t b) {
        if (a == 0) a = b;
    };
    const auto number = [](auto& a, const auto& b) {
        if (!a) a = b;
    };
    text(into.driver, from.driver);
    id(into.vendor_id, from.vendor_id);
    id(into.device_id, from.device_id);
    id(into.subsystem_vendor_id, from.subsystem_vendor_id);
    id(into.subsystem_device_id, from.subsystem_device_id);
    number(into.revision, from.revision);
    number(into.busy_time_us, from.busy_time_us);
    number(into.memory_utilization_bytes, from.memory_utilization_bytes);
    number(into.max_frequency_mhz, from.max_frequency_mhz);
    number(into.current_frequency_mhz, from.current_frequency_mhz);
    number(into.device_type, from.device_type);
    for (auto m : {&accel_device_facts::sched_mode, &accel_device_facts::vbnv, &accel_device_facts::fw_version,
                   &accel_device_facts::power_state, &accel_device_facts::runtime_status})
        text(into.*m, from.*m);
}

} // namespace detail::npu

/// Reads a shell transcript of an accel device's files as people paste them: commands
/// after a "$ " or "# " prompt (`cat <file>`, `readlink [-f] <file>`, the output on the
/// following lines, a blank line ending it), shell variables set to a folder
/// ("ACCEL=/sys/class/accel/accel0/device") and used in later paths, and a `for f in …`
/// loop over file names whose body prints "== $f ==" before each file (on one line or
/// several). Files are grouped by their device folder (accel<N>, or the PCI address; a
/// PCI folder that a node's uevent or link names joins that node); each group's facts
/// become a profile when its driver is one this build handles.
inline accel_transcript_result parse_accel_transcript(std::string_view text) {
    using namespace detail::npu;
    accel_transcript_result r;
    problem_sink problems{r.problems};
    std::vector<std::pair<std::string, std::string>> vars;
    std::string loop_prefix; // "$ACCEL/" as the loop's cat names it, expanded
    struct open_file {
        std::string path;
        std::string value;
        std::size_t line = 0;
    };
    std::optional<open_file> current;

    auto expand = [&](std::string_view w) {
        std::string out;
        for (std::size_t i = 0; i < w.size();) {
            if (w[i] != '$') {
                out += w[i++];
                continue;
            }
            std::size_t j = i + 1;
            const bool brace = j < w.size() && w[j] == '{';
            if (brace) ++j;
            std::size_t k = j;
            while (k < w.size() && is_var_name(w.substr(j, k - j + 1))) ++k;
            const auto name = w.substr(j, k - j);
            const auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& v) { return v.first == name; });
            if (it == vars.end() || name.empty()) {
                out += w[i++];
                continue;
            }
            out += it->second;
            i = k + (brace && k < w.size() && w[k] == '}' ? 1 : 0);
        }
        return out;
    };
    auto facts_for = [&](const std::string& node) -> accel_device_facts* {
        for (auto& f : r.facts)
            if (f.node == node) return &f;
        if (r.facts.size() >= max_rows) return nullptr;
        accel_device_facts f;
        f.node = node;
        if (const auto a = parse_pci_address(node)) f.pci = *a;
        r.facts.push_back(std::move(f));
        return &r.facts.back();
    };
    auto flush = [&] {
        if (!current) return;
        open_file f = std::move(*current);
        current.reset();
        if (f.value.empty()) {
            problems.add(f.line, "no output shown for " + quote_value(f.path));
            return;
        }
        const auto [node, name] = split_device_path(f.path);
        if (node.empty()) {
            // A file of no device folder is not this reader's, but a path through a
            // variable the transcript never set may well have been one.
            if (f.path.find('$') != std::string::npos)
                problems.add(f.line, "a variable the transcript does not set: " + quote_value(f.path));
            return;
        }
        accel_device_facts* facts = facts_for(node);
        if (!facts) return;
        if (auto p = apply_device_file(name, f.value, *facts); !p.empty()) problems.add_problem(f.line, std::move(p));
    };

    // A `for` loop: its body's `cat "$ACCEL/$f"` gives the folder of the "== $f ==" headers
    // it prints. Returns whether the loop goes on past this line.
    auto loop_line = [&](std::string_view line) {
        const auto cat = line.find("cat ");
        if (cat != std::string_view::npos) {
            std::string_view w = line.substr(cat + 4);
            w = w.substr(0, w.find(';'));
            w = unquote(w);
            const auto dollar = w.rfind('$');
            if (dollar != std::string_view::npos && w.substr(0, dollar).ends_with("/"))
                loop_prefix = expand(w.substr(0, dollar));
        }
        return !ends_loop(line);
    };
    auto set_variable = [&](std::string_view name, std::string_view value) {
        value = unquote(value);
        if (vars.size() < 64 && value.starts_with("/")) vars.emplace_back(std::string(name), expand(value));
    };

    std::size_t number = 0;
    bool in_loop = false;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        if (number > 64 * max_rows) {
            problems.add(number, "more lines than a transcript has; the rest ignored");
            return false;
        }
        const auto line = detail::trim(raw);
        if (line.empty()) {
            flush();
            return true;
        }
        if (const auto cmd = prompt_command(line)) {
            flush();
            in_loop = false;
            if (cmd->starts_with("for ") && cmd->find(" in ") != std::string_view::npos) {
                in_loop = loop_line(*cmd);
                return true;
            }
            if (const auto a = assignment(*cmd)) {
                set_variable(a->first, a->second);
                return true;
            }
            const auto sp = cmd->find(' ');
            const auto verb = cmd->substr(0, sp);
            std::string_view arg = sp == std::string_view::npos ? std::string_view{} : detail::trim(cmd->substr(sp));
            if (verb == "readlink"sv && arg.starts_with("-")) {
                const auto sp2 = arg.find(' ');
                arg = sp2 == std::string_view::npos ? std::string_view{} : detail::trim(arg.substr(sp2));
            }
            if ((verb == "cat"sv || verb == "readlink"sv) && !arg.empty() && arg.find(' ') == std::string_view::npos)
                current = open_file{expand(unquote(arg)), {}, number};
            return true;
        }
        if (line.starts_with("for ") && line.find(" in ") != std::string_view::npos) {
            flush();
            in_loop = loop_line(line);
            return true;
        }
        if (in_loop) {
            // The loop's body, "echo "== $f =="; cat "$ACCEL/$f"", to its "done"; typed
            // at a terminal, each line after bash's "> " continuation prompt.
            in_loop = loop_line(line.starts_with("> ") ? line.substr(2) : line);
            return true;
        }
        if (line.starts_with("== ") && line.ends_with(" ==")
 && line.size() > 6 && !loop_prefix.empty()) {
            flush();
            current = open_file{loop_prefix + std::string(detail::trim(line.substr(3, line.size() - 6))), {}, number};
            return true;
        }
        if (!current) {
            if (const auto a = assignment(line)) {
                set_variable(a->first, a->second);
                return true;
            }
            problems.add(number, "output outside any file: " + quote_value(line));
            return true;
        }
        bool changed = false;
        if (!current->value.empty()) current->value += '\n';
        if (current->value.size() < 64 * 1024) current->value += printable(line, changed, 4096);
        return true;
    });
    flush();
    // One device read both through its node and through its PCI folder is one device:
    // the folder's facts join the node's whose PCI address it is.
    for (std::size_t i = 0; i < r.facts.size();) {
        const auto& folder = r.facts[i];
        const auto node = std::find_if(r.facts.begin(), r.facts.end(), [&](const accel_device_facts& n) {
            return accel_index(n.node) && n.pci && n.pci == folder.pci;
        });
        if (accel_index(folder.node) || node == r.facts.end()) {
            ++i;
            continue;
        }
        fold_facts(*node, folder);
        r.facts.erase(r.facts.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (const auto& f : r.facts)
        if (auto p = npu_profile_from_facts(f)) r.devices.push_back(*p);
    problems.finish();
    return r;
}

// ---------------------------------------------------------------------------------------
// The shared walker

namespace detail::npu {

// The node's PCI function: the name its `device` link points to, else PCI_SLOT_NAME from
// the folder's uevent (trees where links were copied as folders).
template <system_view S>
std::optional<pci_address> device_pci_address(const S& sys, const std::string& device, accel_device_facts& f,
                                              std::vector<warning>& warnings) {
    if (const auto target = detail::resolve_sysfs_link(sys, device))
        if (const auto a = parse_pci_address(detail::base_name(*target))) return a;
    if (const auto uevent = detail::read_optional_file(sys, device + "/uevent", attr_cap, warnings)) {
        accel_device_facts scratch;
        apply_device_file("uevent", *uevent, scratch);
        if (f.driver.empty()) f.driver = scratch.driver;
        return scratch.pci;
    }
    return std::nullopt;
}

} // namespace detail::npu

/// Every DRM accel node of the machine whose bound driver is `driver`, by node number,
/// with the attributes the library reads from its PCI function. Nodes of other drivers
/// are skipped without a word (they are other backends' devices); a machine without
/// /sys/class/accel gives an empty list and no warning.
template <system_view S>
std::vector<accel_device_facts> probe_accel_nodes(const S& sys, std::string_view driver,
                                                  std::vector<warning>& warnings) {
    using namespace detail::npu;
    std::vector<accel_device_facts> out;
    const auto names = sys.list_dir(accel_class_dir);
    if (!names) return out;
    std::vector<std::pair<std::uint32_t, std::string>> order;
    for (const auto& n : *names)
        if (const auto i = accel_index(n)) order.emplace_back(*i, n);
    std::sort(order.begin(), order.end());
    const bool has_dev = sys.exists("/dev");
    for (const auto& [index, name] : order) {
        if (out.size() >= max_rows) break;
        const std::string device = std::string(accel_class_dir) + "/" + name + "/device";
        accel_device_facts f;
        f.node = name;
        if (const auto target = detail::resolve_sysfs_link(sys, device + "/driver"))
            f.driver = std::string(detail::base_name(*target));
        if (!f.driver.empty() && f.driver != driver) continue; // another backend's node
        f.pci = device_pci_address(sys, device, f, warnings);
        if (f.driver != driver) continue;
        // A machine tree without /dev says nothing about nodes; a live host without the
        // node (a container that did not get it) cannot use the device.
        f.device_node = !has_dev || sys.exists("/dev/accel/" + name);
        for (std::string_view file : {"vendor", "device", "revision", "subsystem_vendor", "subsystem_device",
                                      "npu_busy_time_us", "npu_memory_utilization", "npu_max_frequency_mhz",
                                      "npu_current_frequency_mhz", "sched_mode", "vbnv", "fw_version", "device_type",
                                      "power_state", "power/runtime_status"}) {
            const std::string path = device + "/" + std::string(file);
            const auto text = detail::read_optional_file(sys, path, attr_cap, warnings);
            if (!text) continue;
            if (auto p = apply_device_file(file, *text, f); !p.empty())
                detail::add_warning(warnings, p.kind, path, std::move(p.message));
        }
        out.push_back(std::move(f));
    }
    return out;
}

namespace detail::npu {
template <system_view S>
probe_output probe_driver(const S& sys, std::string_view driver, backend_id backend) {
    probe_output out;
    for (const auto& f : probe_accel_nodes(sys, driver, out.warnings))
        if (auto p = npu_profile_from_facts(f)) out.devices.push_back(*p);
    detail::size_shared_memory(sys, out.devices);
    for (auto& w : out.warnings)
        if (!w.backend) w.backend = backend;
    return out;
}
} // namespace detail::npu

#endif // AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA

#if AI_HWACCEL_BACKEND_INTEL_NPU
/// Intel NPUs (Meteor Lake and later): the DRM accel nodes bound to intel_vpu. Reads
/// sysfs only; runs no tool.
struct intel_npu_probe {
    static constexpr backend_id backend = backend_id::intel_npu;
    template <system_view S>
    probe_output probe(const S& sys) const {
        return detail::npu::probe_driver(sys, "intel_vpu", backend);
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<intel_npu_probe, host_system>);
#endif
#endif

#if AI_HWACCEL_BACKEND_AMD_XDNA
/// AMD XDNA NPUs (Ryzen AI): the DRM accel nodes bound to amdxdna. Reads sysfs only.
struct amd_xdna_probe {
    static constexpr backend_id backend = backend_id::amd_xdna;
    template <system_view S>
    probe_output probe(const S& sys) const {
        return detail::npu::probe_driver(sys, "amdxdna", backend);
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<amd_xdna_probe, host_system>);
#endif
#endif

// ---------------------------------------------------------------------------------------
// Device-tree NPUs (Samsung, MediaTek)

#if AI_HWACCEL_BACKEND_SAMSUNG_NPU || AI_HWACCEL_BACKEND_MEDIATEK_APU

/// A device-tree `compatible` property (NUL-separated strings, as the kernel exposes it
/// under /sys/firmware/devicetree/base) → its strings; empty pieces dropped, at most 32.
inline std::vector<std::string> parse_dt_compatible(std::string_view text) {
    std::vector<std::string> out;
    while (!text.empty() && out.size() < 32) {
        const auto nul = text.find('\0');
        const auto piece = text.substr(0, nul);
        bool changed = false;
        if (!piece.empty()) out.push_back(detail::parsing::printable(piece, changed, 256));
        if (nul == std::string_view::npos) break;
        text.remove_prefix(nul + 1);
    }
    return out;
}

namespace detail::npu {

inline constexpr std::size_t dt_max_nodes = 8192;
inline constexpr std::size_t dt_property_cap = 4096;

/// The device-tree nodes (folders down to `depth` levels below the root) whose
/// `compatible` holds a string `match` accepts and whose `status` is not "disabled"
/// (the device-tree convention for a node that is described but not present).
template <system_view S, class Match>
std::vector<std::string> dt_nodes_matching(const S& sys, Match&& match, std::vector<warning>& warnings,
                                           int depth = 2) {
    std::vector<std::string> found;
    std::string root = "/sys/firmware/devicetree/base";
    if (!sys.exists(root)) root = "/proc/device-tree";
    std::vector<std::pair<std::string, int>> todo{{root, 0}};
    std::size_t visited = 0;
    while (!todo.empty() && visited < dt_max_nodes) {
        auto [dir, level] = std::move(todo.back());
        todo.pop_back();
        ++visited;
        const auto names = sys.list_dir(dir);
        if (!names) continue;
        bool has_compatible = false;
        for (const auto& n : *names) {
            if (n == "compatible"sv) has_compatible = true;
            // Properties are files, child nodes folders: recurse into what lists.
            else if (level < depth && n != "__symbols__"sv && n != "__overlays__"sv && n.find('/') == std::string::npos)
                if (sys.list_dir(dir + "/" + n)) todo.emplace_back(dir + "/" + n, level + 1);
        }
        if (!has_compatible || level == 0) continue;
        const auto text = detail::read_optional_file(sys, dir + "/compatible", dt_property_cap, warnings);
        if (!text) continue;
        bool hit = false;
        for (const auto& c : parse_dt_compatible(*text)) hit = hit || match(std::string_view(c));
        if (!hit) continue;
        if (const auto status = detail::read_optional_file(sys, dir + "/status", dt_property_cap, warnings)) {
            std::string_view s = *status;
            while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) s.remove_suffix(1);
            if (s == "disabled"sv) continue;
        }
        found.push_back(dir);
    }
    std::sort(found.begin(), found.end());
    return found;
}

template <system_view S, class Match>
probe_output probe_dt(const S& sys, Match&& match, device_kind kind, backend_id backend) {
    probe_output out;
    const auto nodes = dt_nodes_matching(sys, match, out.warnings);
    for (std::size_t i = 0; i < nodes.size() && i < detail::parsing::max_rows; ++i) {
        accelerator_profile p;
        p.kind = kind;
        p.maker = info(kind).default_vendor;
        p.index = static_cast<std::uint32_t>(i);
        p.unified_memory = true; // SoC NPUs work from the system's memory
        out.devices.push_back(p);
    }
    for (auto& w : out.warnings)
        if (!w.backend) w.backend = backend;
    return out;
}

} // namespace detail::npu
#endif

#if AI_HWACCEL_BACKEND_SAMSUNG_NPU
/// Whether a compatible string is the Exynos NPU's: the vendor driver (drivers/vision/npu,
/// npu-device.c in Samsung's Android kernels) matches exactly "samsung,exynos-npu".
constexpr bool is_samsung_npu_compatible(std::string_view c) noexcept { return c == "samsung,exynos-npu"sv; }

/// Samsung Exynos NPUs: device-tree nodes the vendor's NPU driver binds to. What the
/// NPU can do is not published anywhere this library could read, so only the presence
/// is reported; every figure stays unknown.
struct samsung_npu_probe {
    static constexpr backend_id backend = backend_id::samsung_npu;
    template <system_view S>
    probe_output probe(const S& sys) const {
        return detail::npu::probe_dt(sys, is_samsung_npu_compatible, device_kind::samsung_npu, backend);
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<samsung_npu_probe, host_system>);
#endif
#endif

#if AI_HWACCEL_BACKEND_MEDIATEK_APU
/// Whether a compatible string is a MediaTek deep-learning accelerator's (MDLA, the APU's
/// NPU cores). MediaTek's Android kernels (apusys, the mdla driver) match "mediatek,mdla"
/// and "mtk,mdla" on older SoCs and "mediatek, mt<N>-mdla" (with that blank, as the
/// driver's table spells it) or "mtk,mt<N>-mdla" on newer ones.
constexpr bool is_mediatek_mdla_compatible(std::string_view c) noexcept {
    if (c == "mediatek,mdla"sv || c == "mtk,mdla"sv) return true;
    if (!c.ends_with("-mdla")) return false;
    if (c.starts_with("mediatek, mt") || c.starts_with("mediatek,mt") || c.starts_with("mtk,mt")) return true;
    return false;
}

/// MediaTek APUs: device-tree nodes of MDLA cores. Only the presence is reported (one
/// profile per MDLA node); every figure stays unknown for the same reason as Samsung's.
struct mediatek_apu_probe {
    static constexpr backend_id backend = backend_id::mediatek_apu;
    template <system_view S>
    probe_output probe(const S& sys) const {
        return detail::npu::probe_dt(sys, is_mediatek_mdla_compatible, device_kind::mediatek_apu, backend);
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<mediatek_apu_probe, host_system>);
#endif
#endif

// ---------------------------------------------------------------------------------------
// Capture formats

#if AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA
namespace detail::formats {

// ls -la /sys/class/accel ----------------------------------------------------------------
inline int sniff_accel_class_listing(std::string_view t) noexcept {
    if (!first_non_blank_line(t).starts_with("total ")) return 0;
    bool node = false, other = false;
    each_line(t, [&](std::string_view raw) {
        const auto line = trim(raw);
        if (line.empty() || line.starts_with("total ")) return true;
        const auto arrow = line.find(" -> ");
        if (arrow != std::string_view::npos) {
            const auto head = trim(line.substr(0, arrow));
            const auto sp = head.rfind(' ');
            const auto name = sp == std::string_view::npos ? head : head.substr(sp + 1);
            const auto target = line.substr(arrow + 4);
            if (npu::accel_index(name) && target.find("/accel/") != std::string_view::npos) node = true;
            else other = true;
        }
        return true;
    });
    return node && !other ? 90 : 0;
}
inline void parse_accel_class_listing_capture(std::string_view t, capture_parse& out) {
    auto r = parse_accel_class_listing(t);
    parsing::problems_to_warnings(r.problems, std::nullopt, out.format, out.warnings);
    if (r.entries.empty()) {
        if (r.problems.empty()) nothing_found(out, "accel nodes");
        return;
    }
    // The listing names PCI functions, not drivers: they go to the system's PCI list.
    system_io s;
    for (const auto& e : r.entries) {
        if (!e.pci) continue;
        pci_device d;
        d.address = *e.pci;
        s.pci_devices.push_back(d);
    }
    out.system = std::move(s);
}

// Shell transcripts of an accel node's device attributes -------------------------------------
inline int sniff_accel_transcript(std::string_view t) noexcept {
    bool accel = false, npu_file = false;
    each_line(t, [&](std::string_view raw) {
        const auto cmd = npu::prompt_command(trim(raw));
        if (!cmd) return true;
        accel = accel || cmd->find("/sys/class/accel/accel") != std::string_view::npos;
        for (std::string_view f : {"/npu_busy_time_us", "/npu_max_frequency_mhz", "/npu_memory_utilization",
                                   "/npu_current_frequency_mhz", "/vbnv", "/fw_version"})
            npu_file = npu_file || cmd->find(f) != std::string_view::npos;
        return true;
    });
    return accel && npu_file ? 85 : 0;
}
inline void parse_accel_transcript_capture(std::string_view t, capture_parse& out) {
    auto r = parse_accel_transcript(t);
    parsing::problems_to_warnings(r.problems, std::nullopt, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "NPU device files");
    out.devices = std::move(r.devices);
}

} // namespace detail::formats
#endif

AI_HWACCEL_NAMESPACE_END

#endif // any client-NPU backend
