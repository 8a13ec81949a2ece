// ai-hwaccel detect: Apple Silicon through system_profiler and sysctl.
//
// macOS describes the chip in two places: `system_profiler SPDisplaysDataType
// SPHardwareDataType` (the GPU's model, core count and Metal support; the chip, the CPU
// cores and the installed memory) and `sysctl` (hw.memsize, the exact byte count, and
// machdep.cpu.brand_string, "Apple M1" or an Intel brand). The parsers here read every
// form of those outputs into one `apple_machine` (what the tools said), from which
// `apple_devices` builds a `metal_gpu` and an `apple_neural_engine` profile. Neither is a
// separate pool of memory: both are marked unified_memory and carry the machine's memory,
// which the registry counts once however many unified devices share it (registry.hpp,
// `total_of`). The Neural Engine's presence and figures come from the device catalogue,
// never from a tool, since none reports it. Serial numbers, hardware UUIDs and
// provisioning ids are never read. Intel Macs yield no Apple device: their GPUs are
// AMD's or Intel's, not this backend's.
//
// The probe runs the tools only on macOS, or in a machine tree that replays captured
// outputs; on the live Linux host it does nothing. The whole header is empty unless the
// Apple backend is compiled in; its JSON parts also need AI_HWACCEL_JSON.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_APPLE

#include "ai_hwaccel/core/backend.hpp"
#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if AI_HWACCEL_JSON
#include <nlohmann/json.hpp>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// One GPU as system_profiler's SPDisplaysDataType lists it.
struct apple_gpu {
    std::string model;  ///< "Apple M1 Pro" (sppci_model, "Chipset Model")
    std::string vendor; ///< as printed: "sppci_vendor_Apple", "Apple (0x106b)"
    bool apple = false; ///< the vendor is Apple (an Apple Silicon GPU)
    std::optional<bool> built_in;  ///< "Bus: Built-In" / "spdisplays_builtin"
    sourced<std::uint32_t> cores;  ///< "Total Number of Cores" / sppci_cores
    std::string metal;             ///< Metal support, "Metal 3"
    friend bool operator==(const apple_gpu&, const apple_gpu&) = default;
};

/// What Apple's tools said about the machine; everything unknown until a tool says it.
struct apple_machine {
    std::string chip;           ///< "Apple M2 Pro": Apple Silicon only
    std::string cpu_brand;      ///< machdep.cpu.brand_string (Intel Macs too)
    std::string processor_name; ///< Intel Macs' "Processor Name" / cpu_type
    std::string machine_name;   ///< "MacBook Pro"
    std::string machine_model;  ///< "Mac14,7", "MacBookPro18,3"
    /// hw.memsize: the installed memory, exact.
    sourced<std::uint64_t> memsize_bytes;
    /// hw.memsize_usable: what the kernel may use (less than memsize).
    sourced<std::uint64_t> memsize_usable_bytes;
    /// system_profiler's "Memory: 16 GB" (whole binary gigabytes).
    sourced<std::uint64_t> profiler_memory_bytes;
    sourced<std::uint32_t> packages;          ///< hw.packages: CPU packages (sockets)
    sourced<std::uint32_t> cores;             ///< CPU cores, all kinds
    sourced<std::uint32_t> performance_cores; ///< "8 performance", hw.perflevel0.physicalcpu
    sourced<std::uint32_t> efficiency_cores;  ///< "2 efficiency", hw.perflevel1.physicalcpu
    sourced<std::uint32_t> threads;           ///< logical CPUs (machdep.cpu.thread_count)
    /// The CPU features the hw.optional flags sysctl printed say are there.
    cpu_features features{};
    std::vector<apple_gpu> gpus;

    /// The installed memory: hw.memsize when known, else system_profiler's figure.
    constexpr sourced<std::uint64_t> memory_bytes() const noexcept {
        return memsize_bytes ? memsize_bytes : profiler_memory_bytes;
    }
    /// An Apple Silicon machine, as far as the tools said.
    bool apple_silicon() const noexcept {
        if (!chip.empty()) return true;
        for (const auto& g : gpus)
            if (g.apple) return true;
        return false;
    }
    friend bool operator==(const apple_machine&, const apple_machine&) = default;
};

/// What one Apple parser read: the machine's facts, the devices they imply, problems.
struct apple_parse_result {
    apple_machine machine;
    std::vector<accelerator_profile> devices;
    std::vector<parse_problem> problems;
};

namespace detail::apple {

using detail::parsing::max_problems;
using detail::parsing::max_rows;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;

// Longest name or brand kept; longer ones are cut (and reported).
inline constexpr std::size_t max_text = 128;
// No Mac has more cores than this; a larger count is garbage.
inline constexpr std::uint64_t max_count = 4096;
// No Mac has more memory than this (Apple's largest ships with a few hundred GB).
inline constexpr std::uint64_t max_memory = std::uint64_t{64} << 40;

// Printable text, cut at max_text; a problem when it had to change.
inline std::string clean_text(std::string_view v, std::string_view what, std::size_t line, problem_sink& problems) {
    bool changed = false;
    std::string s = printable(v, changed, max_text);
    if (changed) problems.add(line, std::string(what) + ": not printable UTF-8, replaced by " + quote_value(s));
    else if (v.size() > max_text) problems.add(line, std::string(what) + ": longer than " + std::to_string(max_text) +
                                                         " characters, cut");
    return s;
}

// A whole count within max_count, or a problem.
inline sourced<std::uint32_t> read_count(std::string_view v, std::string_view what, std::size_t line,
                                         problem_sink& problems) {
    const auto n = parse_uint(trim(v));
    if (!n) {
        problems.add(line, std::string(what) + ": cannot read " + quote_value(v));
        return {};
    }
    if (*n > max_count) {
        problems.add(line, std::string(what) + ": " + quote_value(v) + " is out of range");
        return {};
    }
    return {static_cast<std::uint32_t>(*n), origin::tool};
}

// "16 GB", "512 MB", "1 TB", "1.5 TB" (a 2019 Mac Pro): system_profiler's memory figure.
// Apple's "GB" here is binary: a "36 GB" Mac reports hw.memsize 38654705664 = 36 × 2^30.
// A fraction is read to at most two decimals, whole bytes.
inline std::optional<std::uint64_t> memory_figure(std::string_view v) noexcept {
    v = trim(v);
    const auto sp = v.find(' ');
    if (sp == std::string_view::npos) return std::nullopt;
    std::string_view number = v.substr(0, sp);
    const std::string_view unit = trim(v.substr(sp + 1));
    unsigned shift = 0;
    if (unit == "MB"sv) shift = 20;
    else if (unit == "GB"sv) shift = 30;
    else if (unit == "TB"sv) shift = 40;
    else return std::nullopt;
    // Hundredths of the unit: "1.5" is 150, "16" is 1600.
    std::string_view fraction;
    if (const auto dot = number.find('.'); dot != std::string_view::npos) {
        fraction = number.substr(dot + 1);
        number = number.substr(0, dot);
        if (fraction.empty() || fraction.size() > 2 || !parse_uint(fraction)) return std::nullopt;
    }
    const auto whole = parse_uint(number);
    if (!whole || *whole > (max_memory >> shift)) return std::nullopt;
    std::uint64_t hundredths = *whole * 100;
    if (!fraction.empty()) hundredths += *parse_uint(fraction) * (fraction.size() == 1 ? 10 : 1);
    const std::uint64_t bytes = (hundredths << shift) / 100;
    if (bytes == 0 || bytes > max_memory) return std::nullopt;
    return bytes;
}

inline sourced<std::uint64_t> read_memory_figure(std::string_view v, std::size_t line, problem_sink& problems) {
    if (const auto b = memory_figure(v)) return {*b, origin::tool};
    problems.add(line, "memory: cannot read " + quote_value(v));
    return {};
}

// "10 (8 performance and 2 efficiency)", "4", or the JSON form "proc 10:8:2".
inline void read_cpu_cores(std::string_view v, std::size_t line, apple_machine& m, problem_sink& problems) {
    v = trim(v);
    sourced<std::uint32_t> total, perf, eff;
    bool ok = true;
    auto count = [&](std::string_view s, sourced<std::uint32_t>& into) {
        const auto n = parse_uint(trim(s));
        if (!n || *n > max_count) ok = false;
        else into = {static_cast<std::uint32_t>(*n), origin::tool};
    };
    if (v.starts_with("proc ")) {
        // "proc 10:8:2" (total, performance, efficiency); newer macOS writes four counts,
        // in an order not settled between releases ("proc 24:16:8:0" on an M2 Ultra,
        // "proc 12:0:8:4" on an M2 Pro): the total first, then the two neighbours that
        // add up to it are the performance and efficiency cores.
        std::string_view rest = v.substr(5);
        sourced<std::uint32_t> f[4];
        std::size_t n = 0;
        while (ok && n < 4) {
            const auto colon = rest.find(':');
            count(rest.substr(0, colon), f[n++]);
            if (colon == std::string_view::npos) break;
            rest.remove_prefix(colon + 1);
            if (n == 4) ok = false; // a fifth count
        }
        total = f[0];
        for (std::size_t i = 1; ok && i + 1 < n; ++i)
            if (*f[i] != 0 && *f[i + 1] != 0 && *f[i] + *f[i + 1] == *f[0]) {
                perf = f[i];
                eff = f[i + 1];
                break;
            }
    } else {
        const auto open = v.find('(');
        count(v.substr(0, open), total);
        if (ok && open != std::string_view::npos) {
            // "(8 performance and 2 efficiency)"
            std::string_view in = v.substr(open + 1);
            if (!in.ends_with(")")) ok = false;
            else {
                in.remove_suffix(1);
                const auto and_at = in.find(" and ");
                const std::string_view a = and_at == std::string_view::npos ? in : in.substr(0, and_at);
                const std::string_view b =
                    and_at == std::string_view::npos ? std::string_view{} : in.substr(and_at + 5);
                auto part = [&](std::string_view p) {
                    p = trim(p);
                    if (p.empty()) return;
                    const auto sp = p.find(' ');
                    const std::string_view kind = sp == std::string_view::npos ? std::string_view{} : p.substr(sp + 1);
                    if (iequals(kind, "performance")) count(p.substr(0, sp), perf);
                    else if (iequals(kind, "efficiency")) count(p.substr(0, sp), eff);
                    else ok = false;
                };
                part(a);
                part(b);
            }
        }
    }
    if (!ok || !total) {
        problems.add(line, "number of cores: cannot read " + quote_value(v));
        return;
    }
    m.cores = total;
    if (perf) m.performance_cores = perf;
    if (eff) m.efficiency_cores = eff;
}

// "spdisplays_metal3" -> "Metal 3"; other JSON codes lose their prefix only.
inline std::string metal_from_code(std::string_view code) {
    if (code.starts_with("spdisplays_")) code.remove_prefix(11);
    if (code.starts_with("metal") && code.size() > 5) {
        bool digits = true;
        for (char c : code.substr(5)) digits = digits && c >= '0' && c <= '9';
        if (digits) return "Metal " + std::string(code.substr(5));
    }
    return std::string(code);
}

inline bool vendor_is_apple(std::string_view v) noexcept { return icontains(v, "apple"); }

// The chip named by a CPU brand string, on Apple Silicon only ("Apple M1" yes, an Intel
// brand no).
inline bool is_apple_brand(std::string_view brand) noexcept { return brand.starts_with("Apple "); }

// A chip's name as Apple spells its SoCs ("Apple M5 Pro", "Apple A18 Pro"), not another
// Apple-named GPU ("Apple Paravirtual device") nor a virtual machine's chip ("Apple M1
// (Virtual)", as macOS guests and CI runners name theirs: no Neural Engine reaches them).
constexpr bool is_apple_soc(std::string_view chip) noexcept {
    return chip.size() >= 8 && chip.starts_with("Apple ") && (chip[6] == 'M' || chip[6] == 'A') && chip[7] >= '1' &&
           chip[7] <= '9' && chip.find("(Virtual)") == std::string_view::npos;
}
static_assert(is_apple_soc("Apple M2 Ultra") && !is_apple_soc("Apple M1 (Virtual)") &&
              !is_apple_soc("Apple Paravirtual device"));

// The catalogue's GPU row for a chip: by its core count when known; else the chip's only
// row, when it has exactly one (a chip with binned variants stays unmatched).
inline const device_spec* gpu_spec(std::string_view chip, const sourced<std::uint32_t>& cores) {
    if (chip.empty()) return nullptr;
    if (cores) {
        const device_spec* s = find_device(std::string(chip) + " " + std::to_string(*cores) + "-core GPU");
        return s && s->kind == device_kind::metal_gpu ? s : nullptr;
    }
    const device_spec* only = nullptr;
    std::size_t n = 0;
    const std::string prefix = std::string(chip) + " ";
    for (const auto& row : device_catalogue) {
        if (row.kind != device_kind::metal_gpu || !row.name.starts_with(prefix)) continue;
        std::string_view rest = row.name.substr(prefix.size());
        if (!rest.ends_with("-core GPU")) continue;
        rest.remove_suffix(9);
        if (!parse_uint(rest)) continue; // another chip ("Apple M1 Pro …" for "Apple M1")
        only = &row;
        ++n;
    }
    return n == 1 ? only : nullptr;
}

inline const device_spec* neural_engine_spec(std::string_view chip) {
    if (chip.empty()) return nullptr;
    const device_spec* s = find_device(std::string(chip) + " Neural Engine");
    return s && s->kind == device_kind::apple_neural_engine ? s : nullptr;
}

inline void problems_to_warnings(const std::vector<parse_problem>& problems, std::string_view subject,
                                 std::vector<warning>& out) {
    detail::parsing::problems_to_warnings(problems, backend_id::apple, subject, out);
}

// "key: value" -> key, value (both trimmed); nullopt without a colon.
struct key_value {
    std::string_view key, value;
};
inline std::optional<key_value> split_key(std::string_view line) noexcept {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    return key_value{trim(line.substr(0, colon)), trim(line.substr(colon + 1))};
}

inline std::size_t indent_of(std::string_view line) noexcept {
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    return i;
}

// A sysctl name: letters, digits, '_' and at least one '.', from a lowercase letter
// (Apple Silicon has upper case further in: "hw.optional.arm.FEAT_AES").
constexpr bool is_sysctl_name(std::string_view s) noexcept {
    if (s.empty() || !(s.front() >= 'a' && s.front() <= 'z') || s.back() == '.') return false;
    bool dot = false;
    for (char c : s) {
        if (c == '.') dot = true;
        else if (!(ascii_alnum(c) || c == '_')) return false;
    }
    return dot;
}

// The CPU feature a `sysctl hw.optional` flag stands for.
constexpr std::optional<cpu_feature> optional_feature(std::string_view key) noexcept {
    if (key == "hw.optional.neon"sv || key == "hw.optional.AdvSIMD"sv) return cpu_feature::neon;
    if (key == "hw.optional.neon_fp16"sv || key == "hw.optional.arm.FEAT_FP16"sv) return cpu_feature::asimd_fp16;
    if (key == "hw.optional.arm.FEAT_DotProd"sv) return cpu_feature::asimd_dotprod;
    if (key == "hw.optional.arm.FEAT_I8MM"sv) return cpu_feature::i8mm;
    if (key == "hw.optional.arm.FEAT_BF16"sv) return cpu_feature::arm_bf16;
    if (key == "hw.optional.arm.FEAT_SME"sv) return cpu_feature::sme;
    return std::nullopt;
}

// A shell prompt pasted with a capture ("$ sysctl hw.memsize"): not the tool's output.
constexpr bool is_prompt_line(std::string_view line) noexcept {
    return line.starts_with("$ ") || line.starts_with("% ");
}

} // namespace detail::apple

/// Folds `from` into `into`: values `into` lacks are taken; GPUs are taken when `into`
/// lists none. Lets a probe combine sysctl's and system_profiler's views.
inline void merge_apple_machine(apple_machine& into, const apple_machine& from) {
    auto text = [](std::string& a, const std::string& b) {
        if (a.empty()) a = b;
    };
    auto value = [](auto& a, const auto& b) {
        if (!a && b) a = b;
    };
    text(into.chip, from.chip);
    text(into.cpu_brand, from.cpu_brand);
    text(into.processor_name, from.processor_name);
    text(into.machine_name, from.machine_name);
    text(into.machine_model, from.machine_model);
    value(into.memsize_bytes, from.memsize_bytes);
    value(into.memsize_usable_bytes, from.memsize_usable_bytes);
    value(into.profiler_memory_bytes, from.profiler_memory_bytes);
    value(into.packages, from.packages);
    value(into.cores, from.cores);
    value(into.performance_cores, from.performance_cores);
    value(into.efficiency_cores, from.efficiency_cores);
    value(into.threads, from.threads);
    into.features.bits |= from.features.bits;
    if (into.gpus.empty()) into.gpus = from.gpus;
}

/// The devices an Apple Silicon machine has: one `metal_gpu` per Apple GPU listed (or one
/// named after the chip when no GPU list was read), and one `apple_neural_engine` (its
/// figures from the catalogue where it knows the chip's engine). Both carry the machine's memory with
/// unified_memory set, so totals count it once. Values read from the tools are
/// origin::tool (the GPU core count overrides the catalogue's); the rest comes from the
/// catalogue. An Intel Mac yields nothing.
inline std::vector<accelerator_profile> apple_devices(const apple_machine& m) {
    using namespace detail::apple;
    std::vector<accelerator_profile> out;
    const auto memory = m.memory_bytes();
    auto base = [&](device_kind kind, std::uint32_t index) {
        accelerator_profile p;
        p.kind = kind;
        p.maker = vendor::apple;
        p.index = index;
        p.unified_memory = true;
        if (memory) p.memory_bytes = {*memory, origin::tool};
        return p;
    };
    std::string chip = m.chip;
    auto add_gpu = [&](std::string_view name, const sourced<std::uint32_t>& cores) {
        accelerator_profile p = base(device_kind::metal_gpu, static_cast<std::uint32_t>(out.size()));
        p.name.assign(name); // cut at capacity without splitting UTF-8
        if (cores) p.compute_units = cores;
        // The chip names the catalogue row; a GPU model is the chip's name on Apple Silicon.
        if (const device_spec* s = gpu_spec(chip.empty() ? name : std::string_view(chip), cores)) p.apply_spec(*s);
        out.push_back(p);
    };
    for (const auto& g : m.gpus) {
        if (!g.apple || out.size() >= max_rows) continue;
        if (chip.empty() && g.model.starts_with("Apple ")) chip = g.model;
        add_gpu(g.model.empty() ? std::string_view(chip) : std::string_view(g.model), g.cores);
    }
    // No GPU list (sysctl or SPHardwareDataType alone): the chip implies its GPU. A list
    // without an Apple GPU is believed.
    if (m.gpus.empty() && !chip.empty()) add_gpu(chip, {});
    // Every Apple Silicon chip has a Neural Engine; one the catalogue does not know yet (a
    // newer chip) is listed without figures rather than left out.
    if (is_apple_soc(chip)) {
        accelerator_profile p = base(device_kind::apple_neural_engine, 0);
        p.name.assign(chip + " Neural Engine");
        if (const device_spec* s = neural_engine_spec(chip)) p.apply_spec(*s);
        out.push_back(p);
    }
    return out;
}

/// The host as Apple's tools describe it: memory (hw.memsize, else system_profiler's
/// figure), the CPU's name, maker, architecture and core counts.
inline host_info apple_host(const apple_machine& m) {
    host_info h;
    if (const auto mem = m.memory_bytes()) h.memory.total_bytes = {*mem, origin::tool};
    auto& c = h.cpu;
    if (!m.chip.empty()) {
        c.model = m.chip;
        c.maker = vendor::apple;
        c.arch = cpu_arch::aarch64;
    } else if (!m.cpu_brand.empty() || !m.processor_name.empty()) {
        c.model = !m.cpu_brand.empty() ? m.cpu_brand : m.processor_name;
        if (detail::icontains(c.model, "intel")) {
            c.maker = vendor::intel;
            c.arch = cpu_arch::x86_64;
        }
    }
    c.features = m.features;
    // Advanced SIMD is part of every AArch64 core (Arm ARM: FEAT_AdvSIMD is mandatory in
    // Armv8-A); the others only as the hw.optional flags say.
    if (c.arch == cpu_arch::aarch64) c.features.set(cpu_feature::neon);
    if (m.packages) c.sockets = *m.packages;
    if (m.cores) c.cores = *m.cores;
    if (m.threads) c.threads = *m.threads;
    else if (!m.chip.empty() && m.cores) c.threads = *m.cores; // Apple's cores run one thread each
    return h;
}

namespace detail::apple {
inline apple_parse_result finish(apple_parse_result r) {
    r.devices = apple_devices(r.machine);
    return r;
}
} // namespace detail::apple

/// Reads `sysctl <name>…` output ("hw.memsize: 38654705664" lines, as `sysctl` prints
/// without -n; `sysctl machdep.cpu` dumps; shell transcripts whose "$ sysctl …" prompt
/// lines are skipped). Mapped: hw.memsize, hw.memsize_usable, machdep.cpu.brand_string,
/// machdep.cpu.core_count, machdep.cpu.thread_count, hw.packages, hw.physicalcpu, hw.logicalcpu,
/// hw.perflevel0.physicalcpu (performance cores), hw.perflevel1.physicalcpu (efficiency
/// cores), and the CPU feature flags of `sysctl hw.optional` (hw.optional.neon,
/// hw.optional.AdvSIMD, hw.optional.neon_fp16, hw.optional.arm.FEAT_DotProd, FEAT_FP16,
/// FEAT_I8MM, FEAT_BF16, FEAT_SME: 1 when present); other names are ignored. A brand
/// string "Apple …" names the chip; an Intel brand names no Apple device.
inline apple_parse_result parse_sysctl(std::string_view text) {
    using namespace detail::apple;
    apple_parse_result r;
    problem_sink problems{r.problems};
    auto& m = r.machine;
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty() || is_prompt_line(line)) return true;
        const auto kv = split_key(line);
        if (!kv || !is_sysctl_name(kv->key)) {
            problems.add(number, "not a sysctl line: " + quote_value(line));
            return true;
        }
        const auto [key, value] = *kv;
        if (key == "hw.memsize"sv || key == "hw.memsize_usable"sv) {
            const auto n = parse_uint(value);
            if (!n) problems.add(number, std::string(key) + ": cannot read " + quote_value(value));
            else if (*n == 0 || *n > max_memory)
                problems.add(number, std::string(key) + ": " + quote_value(value) + " is out of range");
            else (key == "hw.memsize"sv ? m.memsize_bytes : m.memsize_usable_bytes) = {*n, origin::tool};
        } else if (key == "machdep.cpu.brand_string"sv) {
            m.cpu_brand = clean_text(value, key, number, problems);
            if (is_apple_brand(m.cpu_brand)) m.chip = m.cpu_brand;
        } else if (key == "hw.packages"sv) {
            if (auto c = read_count(value, key, number, problems)) m.packages = c;
        } else if (key == "machdep.cpu.core_count"sv || key == "hw.physicalcpu"sv) {
            if (auto c = read_count(value, key, number, problems)) m.cores = c;
        } else if (key == "machdep.cpu.thread_count"sv || key == "hw.logicalcpu"sv) {
            if (auto c = read_count(value, key, number, problems)) m.threads = c;
        } else if (key == "hw.perflevel0.physicalcpu"sv) {
            if (auto c = read_count(value, key, number, problems)) m.performance_cores = c;
        } else if (key == "hw.perflevel1.physicalcpu"sv) {
            if (auto c = read_count(value, key, number, problems)) m.efficiency_cores = c;
        } else if (const auto f = optional_feature(key)) {
            const auto flag = parse_uint(value);
            if (!flag || *flag > 1) problems.add(number, std::string(key) + ": cannot read " + quote_value(value));
            else if (*flag == 1) m.features.set(*f);
        }
        return true;
    });
    problems.finish();
    return detail::apple::finish(std::move(r));
}

/// Reads `sysctl -n machdep.cpu.brand_string`: one line, the brand ("Apple M1 Pro",
/// "Intel(R) Core(TM) i9-9980HK CPU @ 2.40GHz").
inline apple_parse_result parse_sysctl_brand_string(std::string_view text) {
    using namespace detail::apple;
    apple_parse_result r;
    problem_sink problems{r.problems};
    std::size_t number = 0, lines = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (++lines > 1) {
            problems.add(number, "more than one line: not a brand string alone");
            return false;
        }
        r.machine.cpu_brand = clean_text(line, "brand string", number, problems);
        if (is_apple_brand(r.machine.cpu_brand)) r.machine.chip = r.machine.cpu_brand;
        return true;
    });
    problems.finish();
    return detail::apple::finish(std::move(r));
}

/// Reads the text form of `system_profiler SPDisplaysDataType SPHardwareDataType` (either
/// or both, any -detailLevel, with or without the section headers): indented "Key: Value"
/// lines under "Graphics/Displays:" and "Hardware:". Each GPU is an indented "<name>:"
/// entry; the displays nested under it are skipped. Mapped keys: Chipset Model, Bus,
/// Total Number of Cores, Vendor, Metal Support (or Metal Family) for GPUs; Model Name,
/// Model Identifier, Chip, Processor Name, Total Number of Cores, Memory for the hardware.
/// Serial numbers and UUIDs are not read.
inline apple_parse_result parse_system_profiler_text(std::string_view text) {
    using namespace detail::apple;
    apple_parse_result r;
    problem_sink problems{r.problems};
    auto& m = r.machine;
    enum class section : std::uint8_t { unknown, displays, hardware, other };
    section sec = section::unknown;
    apple_gpu* gpu = nullptr;
    std::size_t gpu_indent = 0, gpu_key_indent = 0;
    bool gpu_key_indent_set = false;
    std::size_t number = 0;
    auto start_gpu = [&](std::string_view name, std::size_t indent) {
        if (m.gpus.size() >= max_rows) {
            gpu = nullptr;
            return;
        }
        m.gpus.emplace_back();
        gpu = &m.gpus.back();
        gpu->model = clean_text(name, "GPU name", number, problems);
        gpu_indent = indent;
        gpu_key_indent_set = false;
    };
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        if (detail::trim(raw).empty()) return true;
        const std::size_t indent = detail::apple::indent_of(raw);
        const std::string_view line = detail::trim(raw);
        const auto kv = split_key(line);
        if (!kv || kv->key.empty()) {
            problems.add(number, "not a \"Key: Value\" line: " + quote_value(line));
            return true;
        }
        const auto [key, value] = *kv;
        if (indent == 0 && value.empty()) { // a data type's header
            sec = key == "Graphics/Displays"sv ? section::displays
                  : key == "Hardware"sv        ? section::hardware
                                             : section::other;
            gpu = nullptr;
            return true;
        }
        if (sec == section::other) return true;
        if (sec == section::displays) {
            if (value.empty() && (!gpu || indent <= gpu_indent)) { // "    Apple M3:"
                start_gpu(key, indent);
                return true;
            }
            if (!gpu || indent <= gpu_indent) return true;
            if (!gpu_key_indent_set) {
                gpu_key_indent = indent;
                gpu_key_indent_set = true;
            }
            if (indent != gpu_key_indent) return true; // a display's details
        } else if (value.empty()) {
            return true; // "    Hardware Overview:"
        }
        // Keys of a GPU: under a GPU entry, or in a bare paste where a GPU key leads.
        const bool gpu_key = key == "Chipset Model"sv || key == "Bus"sv || key == "Vendor"sv || key == "Metal Support"sv ||
                             key == "Metal Family"sv || key == "Type"sv;
        const bool hw_key = key == "Model Name"sv || key == "Model Identifier"sv || key == "Chip"sv || key == "Memory"sv ||
                            key == "Processor Name"sv;
        if (sec == section::unknown) {
            if (gpu_key && !gpu) {
                sec = section::displays;
                start_gpu("", indent > 0 ? indent - 1 : 0);
                gpu_key_indent = indent;
                gpu_key_indent_set = true;
            } else if (hw_key) {
                sec = section::hardware;
            }
        }
        if (sec == section::displays && gpu) {
            if (key == "Chipset Model"sv) {
                gpu->model = clean_text(value, key, number, problems);
            } else if (key == "Bus"sv) {
                gpu->built_in = value == "Built-In"sv;
            } else if (key == "Vendor"sv) {
                gpu->vendor = clean_text(value, key, number, problems);
                gpu->apple = vendor_is_apple(value);
            } else if (key == "Total Number of Cores"sv) {
                if (auto c = read_count(value, "GPU cores", number, problems)) gpu->cores = c;
            } else if (key == "Metal Support"sv || (key == "Metal Family"sv && gpu->metal.empty())) {
                gpu->metal = clean_text(value, key, number, problems);
            }
            return true;
        }
        if (key == "Model Name"sv) m.machine_name = clean_text(value, key, number, problems);
        else if (key == "Model Identifier"sv) m.machine_model = clean_text(value, key, number, problems);
        else if (key == "Chip"sv) m.chip = clean_text(value, key, number, problems);
        else if (key == "Processor Name"sv) m.processor_name = clean_text(value, key, number, problems);
        else if (key == "Memory"sv) {
            if (auto b = read_memory_figure(value, number, problems)) m.profiler_memory_bytes = b;
        } else if (key == "Total Number of Cores"sv) {
            read_cpu_cores(value, number, m, problems);
        }
        return true;
    });
    // A GPU entry whose name is an Apple chip and that said nothing of its vendor.
    for (auto& g : m.gpus)
        if (g.vendor.empty() && g.model.starts_with("Apple M")) g.apple = true;
    problems.finish();
    return detail::apple::finish(std::move(r));
}

#if AI_HWACCEL_JSON
namespace detail::apple {

// A string member, or nullopt when absent; a problem when it is not a string.
inline std::optional<std::string_view> json_string(const nlohmann::json& j, const char* key, problem_sink& problems) {
    const auto it = j.find(key);
    if (it == j.end()) return std::nullopt;
    if (!it->is_string()) {
        problems.add(0, std::string(key) + ": not a string");
        return std::nullopt;
    }
    return std::string_view(it->get_ref<const std::string&>());
}

// A count given as a string ("16") or a number (16).
inline sourced<std::uint32_t> json_count(const nlohmann::json& j, const char* key, problem_sink& problems) {
    const auto it = j.find(key);
    if (it == j.end()) return {};
    if (it->is_number_unsigned()) {
        const auto n = it->get<std::uint64_t>();
        if (n <= max_count) return {static_cast<std::uint32_t>(n), origin::tool};
        problems.add(0, std::string(key) + ": " + std::to_string(n) + " is out of range");
        return {};
    }
    if (it->is_string()) return read_count(it->get_ref<const std::string&>(), key, 0, problems);
    problems.add(0, std::string(key) + ": not a count");
    return {};
}

inline void json_gpu(const nlohmann::json& j, apple_machine& m, problem_sink& problems) {
    apple_gpu g;
    auto model = json_string(j, "sppci_model", problems);
    if (!model) model = json_string(j, "_name", problems);
    if (model) g.model = clean_text(*model, "sppci_model", 0, problems);
    auto vendor_code = json_string(j, "spdisplays_vendor", problems);
    if (!vendor_code) vendor_code = json_string(j, "sppci_vendor", problems);
    if (vendor_code) {
        g.vendor = clean_text(*vendor_code, "spdisplays_vendor", 0, problems);
        g.apple = vendor_is_apple(*vendor_code);
    } else if (g.model.starts_with("Apple M")) {
        g.apple = true;
    }
    if (const auto bus = json_string(j, "sppci_bus", problems)) g.built_in = *bus == "spdisplays_builtin"sv;
    g.cores = json_count(j, "sppci_cores", problems);
    if (const auto metal = json_string(j, "spdisplays_mtlgpufamilysupport", problems)) {
        bool changed = false;
        g.metal = metal_from_code(printable(*metal, changed, max_text));
    }
    m.gpus.push_back(std::move(g));
}

inline void json_hardware(const nlohmann::json& j, apple_machine& m, problem_sink& problems) {
    if (const auto v = json_string(j, "chip_type", problems)) m.chip = clean_text(*v, "chip_type", 0, problems);
    if (const auto v = json_string(j, "cpu_type", problems)) m.processor_name = clean_text(*v, "cpu_type", 0, problems);
    if (const auto v = json_string(j, "machine_name", problems))
        m.machine_name = clean_text(*v, "machine_name", 0, problems);
    if (const auto v = json_string(j, "machine_model", problems))
        m.machine_model = clean_text(*v, "machine_model", 0, problems);
    if (const auto v = json_string(j, "physical_memory", problems))
        if (auto b = read_memory_figure(*v, 0, problems)) m.profiler_memory_bytes = b;
    if (const auto it = j.find("number_processors"); it != j.end()) {
        if (it->is_string()) read_cpu_cores(it->get_ref<const std::string&>(), 0, m, problems);
        else if (auto c = json_count(j, "number_processors", problems)) m.cores = c;
    }
}

} // namespace detail::apple

/// Reads `system_profiler -json SPDisplaysDataType SPHardwareDataType` (either or both):
/// one object holding a "SPDisplaysDataType" and/or a "SPHardwareDataType" array. Mapped:
/// sppci_model (else _name), spdisplays_vendor (or sppci_vendor), sppci_bus, sppci_cores
/// (string or number), spdisplays_mtlgpufamilysupport ("spdisplays_metal3" -> "Metal 3");
/// chip_type, cpu_type, machine_name, machine_model, physical_memory, number_processors
/// ("proc 10:8:2" = total:performance:efficiency). Serials and UUIDs are not read. Empty
/// input is no output, not a problem; text that is not such JSON is one.
inline apple_parse_result parse_system_profiler_json(std::string_view text) {
    using namespace detail::apple;
    apple_parse_result r;
    problem_sink problems{r.problems};
    if (detail::trim(text).empty()) return r;
    const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
        problems.add(0, j.is_discarded() ? "not JSON" : "not a JSON object");
        problems.finish();
        return r;
    }
    bool any = false;
    auto each = [&](const char* type, auto&& f) {
        const auto it = j.find(type);
        if (it == j.end()) return;
        any = true;
        if (!it->is_array()) {
            problems.add(0, std::string(type) + ": not an array");
            return;
        }
        std::size_t n = 0;
        for (const auto& e : *it) {
            if (++n > max_rows) {
                problems.add(0, std::string(type) + ": more than " + std::to_string(max_rows) +
                                    " entries; the rest ignored");
                break;
            }
            if (!e.is_object()) problems.add(0, std::string(type) + ": an entry is not an object");
            else f(e);
        }
    };
    each("SPDisplaysDataType", [&](const nlohmann::json& e) { json_gpu(e, r.machine, problems); });
    each("SPHardwareDataType", [&](const nlohmann::json& e) { json_hardware(e, r.machine, problems); });
    if (!any) problems.add(0, "neither SPDisplaysDataType nor SPHardwareDataType in the JSON");
    problems.finish();
    return detail::apple::finish(std::move(r));
}
#endif // AI_HWACCEL_JSON

// ---------------------------------------------------------------------------------------
// The probe

/// The sysctl run of the Apple probe, and of the host probes on a Mac (which has no /proc):
/// the memory, the CPU's brand, its packages, cores and threads. Without -n, so each value comes
/// with its name and reads like a captured `sysctl <name>` output.
inline tool_request apple_sysctl_request() {
    using namespace std::chrono_literals;
    return tool_request{{"sysctl", "hw.memsize", "machdep.cpu.brand_string", "hw.packages", "hw.physicalcpu", "hw.logicalcpu"}, 5s};
}

/// The system_profiler run of the Apple probe: JSON when this build reads JSON. It can
/// take seconds (it asks the window server about displays), hence the long timeout.
inline tool_request apple_system_profiler_request() {
    using namespace std::chrono_literals;
#if AI_HWACCEL_JSON
    return tool_request{{"system_profiler", "SPDisplaysDataType", "SPHardwareDataType", "-json"}, 15s};
#else
    return tool_request{{"system_profiler", "SPDisplaysDataType", "SPHardwareDataType"}, 15s};
#endif
}

namespace detail::apple {
// The tools exist on macOS only; elsewhere they are asked of a view that replays captured
// outputs, or of a test double (a view that cannot say, whose run() decides).
template <class S>
bool may_run_tools(const S& sys) {
#if AI_HWACCEL_OS_MACOS
    (void)sys;
    return true;
#else
    if constexpr (requires { { sys.replays_tools() } -> std::convertible_to<bool>; }) return sys.replays_tools();
    else return true;
#endif
}
} // namespace detail::apple

/// Apple Silicon's Metal GPU and Neural Engine, from sysctl and system_profiler.
struct apple_probe {
    static constexpr backend_id backend = backend_id::apple;

    template <system_view S>
    probe_output probe(const S& sys) const {
        probe_output out;
        if (!detail::apple::may_run_tools(sys)) return out;
        apple_machine m;

        const tool_request sysctl = apple_sysctl_request();
        tool_result sr = sys.run(sysctl);
        const bool sysctl_missing = tool_missing(sr, out.warnings);
        if (!sysctl_missing && report_tool_result(sysctl, sr, backend, out.warnings)) {
            auto parsed = parse_sysctl(sr.out);
            merge_apple_machine(m, parsed.machine);
            detail::apple::problems_to_warnings(parsed.problems, "sysctl", out.warnings);
        }

        const tool_request profiler = apple_system_profiler_request();
        tool_result pr = sys.run(profiler);
        const bool profiler_missing = tool_missing(pr, out.warnings);
        if (!profiler_missing && report_tool_result(profiler, pr, backend, out.warnings)) {
#if AI_HWACCEL_JSON
            auto parsed = parse_system_profiler_json(pr.out);
#else
            auto parsed = parse_system_profiler_text(pr.out);
#endif
            // system_profiler's view leads for the chip and GPUs; sysctl's exact memory stays.
            apple_machine merged = parsed.machine;
            merge_apple_machine(merged, m);
            if (m.memsize_bytes) merged.memsize_bytes = m.memsize_bytes;
            m = std::move(merged);
            detail::apple::problems_to_warnings(parsed.problems, "system_profiler", out.warnings);
        }

        // A missing tool matters only where the other one shows Apple Silicon.
        if (m.apple_silicon()) {
            for (const auto& [missing, tool] :
                 {std::pair{profiler_missing, "system_profiler"}, std::pair{sysctl_missing, "sysctl"}})
                if (missing)
                    out.warnings.push_back(warning{warning_kind::tool_not_found, backend, tool,
                                                   "Apple Silicon (" + m.chip + ") but " + tool +
                                                       " is not installed in any trusted folder",
                                                   0});
        }
        out.devices = apple_devices(m);
        return out;
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<apple_probe, host_system>);
#endif

// ---------------------------------------------------------------------------------------
// Capture formats

namespace detail::formats {

namespace apple_sniff {
// Whether some line, trimmed, starts with `key` followed by ':'.
constexpr bool has_trimmed_key(std::string_view t, std::string_view key) noexcept {
    bool found = false;
    each_line(t, [&](std::string_view line) {
        line = trim(line);
        if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ':') found = true;
        return !found;
    });
    return found;
}
} // namespace apple_sniff

#if AI_HWACCEL_JSON
// system_profiler -json SPDisplaysDataType / SPHardwareDataType -------------------------
inline int sniff_system_profiler_json(std::string_view t) noexcept {
    if (!first_non_blank_line(t).starts_with("{")) return 0;
    return t.find("\"SPDisplaysDataType\"") != std::string_view::npos ||
                   t.find("\"SPHardwareDataType\"") != std::string_view::npos
               ? 95
               : 0;
}
inline void parse_system_profiler_json_capture(std::string_view t, capture_parse& out) {
    auto r = parse_system_profiler_json(t);
    apple::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.machine == apple_machine{} && r.problems.empty()) nothing_found(out, "GPU or hardware entries");
    if (r.machine.memory_bytes() || !r.machine.chip.empty() || !r.machine.processor_name.empty())
        out.host = apple_host(r.machine);
    out.devices = std::move(r.devices);
}
#endif

// system_profiler SPDisplaysDataType / SPHardwareDataType (text) -------------------------
inline int sniff_system_profiler_text(std::string_view t) noexcept {
    using apple_sniff::has_trimmed_key;
    const auto first = first_non_blank_line(t);
    if (first == "Graphics/Displays:"sv || first == "Hardware:"sv) return 90;
    if (has_trimmed_key(t, "Model Identifier") && (has_trimmed_key(t, "Chip") || has_trimmed_key(t, "Processor Name")))
        return 80;
    if (has_trimmed_key(t, "Chipset Model") && (has_trimmed_key(t, "Metal Support") || has_trimmed_key(t, "Vendor")))
        return 80;
    return 0;
}
inline void parse_system_profiler_text_capture(std::string_view t, capture_parse& out) {
    auto r = parse_system_profiler_text(t);
    apple::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.machine == apple_machine{} && r.problems.empty()) nothing_found(out, "GPU or hardware entries");
    if (r.machine.memory_bytes() || !r.machine.chip.empty() || !r.machine.processor_name.empty())
        out.host = apple_host(r.machine);
    out.devices = std::move(r.devices);
}

// sysctl <name>… ("name: value" lines) ---------------------------------------------------
inline int sniff_sysctl(std::string_view t) noexcept {
    std::size_t mine = 0;
    bool other = false;
    each_line(t, [&](std::string_view line) {
        line = trim(line);
        if (line.empty() || apple::is_prompt_line(line)) return true;
        const auto colon = line.find(':');
        const std::string_view key = colon == std::string_view::npos ? line : line.substr(0, colon);
        if (colon != std::string_view::npos && apple::is_sysctl_name(key) &&
            (key.starts_with("hw.") || key.starts_with("machdep.")))
            ++mine;
        else other = true;
        return !other;
    });
    return mine > 0 && !other ? 90 : 0;
}
inline void parse_sysctl_capture(std::string_view t, capture_parse& out) {
    auto r = parse_sysctl(t);
    apple::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.machine == apple_machine{} && r.problems.empty()) nothing_found(out, "mapped sysctl values");
    out.host = apple_host(r.machine);
    out.devices = std::move(r.devices);
}

// sysctl -n machdep.cpu.brand_string -----------------------------------------------------
inline int sniff_sysctl_brand_string(std::string_view t) noexcept {
    std::size_t lines = 0;
    each_line(t, [&](std::string_view line) {
        if (!trim(line).empty()) ++lines;
        return lines < 2;
    });
    if (lines != 1) return 0;
    const auto line = first_non_blank_line(t);
    // "Apple M1", "Apple M2 Pro"
    if (line.starts_with("Apple M") && line.size() > 7 && line[7] >= '1' && line[7] <= '9' && line.size() < 40)
        return 60;
    // "Intel(R) Core(TM) i7-3820QM CPU @ 2.70GHz", as Intel brands its CPUs.
    if (line.starts_with("Intel(R) ") && line.find(" CPU @ ") != std::string_view::npos &&
        line.ends_with("GHz"))
        return 60;
    return 0;
}
inline void parse_sysctl_brand_string_capture(std::string_view t, capture_parse& out) {
    auto r = parse_sysctl_brand_string(t);
    apple::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.machine.cpu_brand.empty() && r.problems.empty()) nothing_found(out, "brand string");
    out.host = apple_host(r.machine);
    out.devices = std::move(r.devices);
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_APPLE
