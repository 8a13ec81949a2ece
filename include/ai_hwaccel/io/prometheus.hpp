// ai-hwaccel io: the registry as Prometheus metrics (text exposition format 0.0.4).
//
// `to_prometheus(registry)` writes what a scrape or node_exporter's textfile collector
// reads: per-device gauges (memory, utilization, temperature, power), one `_info` series
// per device carrying its names, host memory, and a count of detection warnings by kind.
// Families are written in a fixed order, each with `# HELP` and `# TYPE` and all of its
// samples together; series are unique (see `prometheus_options` for how); no timestamps
// (the textfile collector refuses them). A value nobody supplied is left out, never
// written as 0, so a dashboard shows a gap rather than a cold, idle, empty GPU.
//
// `write_file_atomically` puts text at a path the way both the textfile collector and
// Node Feature Discovery need: written to a hidden temporary file in the same folder,
// then renamed over the target, so a reader sees the old file or the new one, never half
// of one. docs/exporters.md lists every metric.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/registry.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define AI_HWACCEL_EXPORT_HAVE_UNISTD 1
#else
#define AI_HWACCEL_EXPORT_HAVE_UNISTD 0
#endif

AI_HWACCEL_NAMESPACE_BEGIN

struct prometheus_options {
    /// Values whose origin is less trustworthy than this are left out. The default keeps
    /// catalogue values (a card's memory size when its tool did not say) and drops
    /// estimates; `origin::sysfs` keeps only what the machine itself reported.
    origin min_origin = origin::catalogue;
    /// Also write the CPU's device series (its memory is the host's, already written as
    /// `ai_hwaccel_host_memory_*`).
    bool include_cpu = false;
    /// Labels added to every series, e.g. {"node", "gpu-17"}. Names are made valid
    /// (characters outside [a-zA-Z0-9_] become '_'); a name that clashes with one of
    /// ours, or starts with the reserved "__", gets the prefix "exported_" (as Prometheus
    /// does on a clash at scrape time); a repeated name keeps its first value.
    std::vector<std::pair<std::string, std::string>> extra_labels;
};

/// Whether `s` is a valid metric name: [a-zA-Z_:][a-zA-Z0-9_:]*.
constexpr bool is_valid_prometheus_name(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

/// Whether `s` is a valid label name: [a-zA-Z_][a-zA-Z0-9_]*.
constexpr bool is_valid_prometheus_label_name(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

namespace detail {

/// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one
/// (overlong forms, surrogates and code points above U+10FFFF are invalid).
constexpr std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned c = b(i);
    if (c < 0x80) return 1;
    std::size_t n;
    unsigned lo = 0x80, hi = 0xbf; // allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else
        return 0;
    if (i + n > s.size()) return 0;
    if (b(i + 1) < lo || b(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if (b(i + k) < 0x80 || b(i + k) > 0xbf) return 0;
    return n;
}

/// A label value as the text format writes it between quotes: backslash, double quote
/// and newline escaped; other control characters become spaces; bytes that are not
/// UTF-8 (a name cut inside a character, a tool printing Latin-1) become U+FFFD, since a
/// scraper rejects the whole exposition over one invalid byte.
inline void append_prometheus_label_value(std::string& out, std::string_view v) {
    for (std::size_t i = 0; i < v.size();) {
        const char c = v[i];
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += ' ';
        else {
            const std::size_t n = utf8_sequence_length(v, i);
            if (n == 0) {
                out += "\xef\xbf\xbd";
                ++i;
                continue;
            }
            out.append(v.substr(i, n));
            i += n;
            continue;
        }
        ++i;
    }
}

/// A sample value: integers exactly, other numbers in the shortest form that reads back
/// equal (std::to_chars), which Go's strconv.ParseFloat accepts.
inline void append_prometheus_number(std::string& out, double v) {
    std::array<char, 64> buf{};
    auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out.append(buf.data(), r.ptr);
}
inline void append_prometheus_number(std::string& out, std::uint64_t v) {
    std::array<char, 24> buf{};
    auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out.append(buf.data(), r.ptr);
}

inline std::string sanitize_prometheus_label_name(std::string_view s) {
    std::string r;
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        r += ok ? c : '_';
    }
    if (r.empty() || (r[0] >= '0' && r[0] <= '9')) r.insert(r.begin(), '_');
    return r;
}

using label_list = std::vector<std::pair<std::string_view, std::string_view>>;

/// Writes metric families: HELP and TYPE before a family's first sample, then its
/// samples. A family without samples is not written at all.
class prometheus_writer {
public:
    prometheus_writer(std::string& out, const std::vector<std::pair<std::string, std::string>>& extra)
        : out_(out), extra_(extra) {}

    void family(std::string_view name, std::string_view help) {
        name_ = name;
        help_ = help;
        started_ = false;
    }

    template <class Number>
    void sample(const label_list& labels, Number value) {
        if constexpr (std::is_floating_point_v<Number>)
            if (!std::isfinite(value)) return; // NaN or infinity from a tool is not a reading
        if (!started_) {
            out_ += "# HELP ";
            out_ += name_;
            out_ += ' ';
            for (char c : help_) out_ += c == '\n' ? ' ' : c;
            out_ += "\n# TYPE ";
            out_ += name_;
            out_ += " gauge\n";
            started_ = true;
        }
        out_ += name_;
        bool first = true;
        auto label = [&](std::string_view k, std::string_view v) {
            out_ += first ? '{' : ',';
            first = false;
            out_ += k;
            out_ += "=\"";
            append_prometheus_label_value(out_, v);
            out_ += '"';
        };
        for (const auto& [k, v] : labels) label(k, v);
        for (const auto& [k, v] : extra_) label(k, v);
        if (!first) out_ += '}';
        out_ += ' ';
        if constexpr (std::is_floating_point_v<Number>) append_prometheus_number(out_, static_cast<double>(value));
        else append_prometheus_number(out_, static_cast<std::uint64_t>(value));
        out_ += '\n';
    }

private:
    std::string& out_;
    const std::vector<std::pair<std::string, std::string>>& extra_;
    std::string_view name_, help_;
    bool started_ = false;
};

/// The extra labels made valid and unique, none clashing with `ours`: a name that is
/// taken (one of ours, or another given name that sanitizes or renames to it) is prefixed
/// with "exported_" until it is free, as Prometheus renames a scraped label that clashes
/// with a target's. A name given twice keeps its first value.
inline std::vector<std::pair<std::string, std::string>>
clean_extra_labels(const std::vector<std::pair<std::string, std::string>>& in,
                   std::initializer_list<std::string_view> ours) {
    std::vector<std::pair<std::string, std::string>> out;
    const auto taken = [&](const std::string& name) {
        // "le" and "quantile" belong to histograms and summaries: promtool's lint refuses
        // them on a gauge, so they are renamed as a clash with our own labels is.
        bool clash = name.starts_with("__") || name == "le"sv || name == "quantile"sv;
        for (auto o : ours) clash = clash || name == o;
        for (const auto& e : out) clash = clash || e.first == name;
        return clash;
    };
    for (std::size_t i = 0; i < in.size(); ++i) {
        bool repeat = false;
        for (std::size_t j = 0; j < i; ++j) repeat = repeat || in[j].first == in[i].first;
        if (repeat) continue;
        std::string name = sanitize_prometheus_label_name(in[i].first);
        while (taken(name)) name.insert(0, "exported_");
        out.emplace_back(std::move(name), in[i].second);
    }
    return out;
}

inline std::string decimal(std::uint64_t v) {
    std::string s;
    append_prometheus_number(s, v);
    return s;
}

} // namespace detail

/// The registry in Prometheus text exposition format 0.0.4 (`Content-Type: text/plain;
/// version=0.0.4`). Every metric is a gauge; docs/exporters.md lists them.
inline std::string to_prometheus(const accelerator_registry& reg, const prometheus_options& opt = {}) {
    using detail::label_list;
    std::string out;
    const auto extra = detail::clean_extra_labels(
        opt.extra_labels, {"kind", "index", "vendor", "name", "pci", "uuid", "driver", "arch", "software",
                           "model", "version"});
    detail::prometheus_writer w(out, extra);
    const auto keep = [&](const auto& s) { return s.has_value() && s.from >= opt.min_origin; };

    // Which devices get series, and the index label that makes each one unique: the
    // backend's index, "<index>.<stack>" for a stack of a multi-stack card (Level Zero's
    // notation), and "-<n>" after it for the n-th repeat of a (kind, index, stack), which a
    // correct registry never has but a hand-made one might.
    struct row {
        const accelerator_profile* p;
        std::string index;
    };
    std::vector<row> rows;
    for (const auto& p : reg.all()) {
        if (p.is_cpu() && !opt.include_cpu) continue;
        std::string index = detail::decimal(p.index);
        if (p.stack) index += "." + detail::decimal(*p.stack);
        std::uint64_t repeats = 0;
        for (const auto& r : rows)
            if (r.p->kind == p.kind && r.p->index == p.index && r.p->stack == p.stack) ++repeats;
        if (repeats > 0) index += "-" + detail::decimal(repeats);
        rows.push_back({&p, std::move(index)});
    }
    const auto id = [](const row& r) { return label_list{{"kind", to_string(r.p->kind)}, {"index", r.index}}; };

    w.family("ai_hwaccel_build_info", "The ai-hwaccel library that wrote these metrics; always 1.");
    w.sample(label_list{{"version", version.text}}, std::uint64_t{1});

    w.family("ai_hwaccel_device_info",
             "One device as detected; always 1. Labels: kind, index, vendor, name, pci, uuid, driver, "
             "arch, software (empty ones omitted).");
    for (const auto& r : rows) {
        const auto& p = *r.p;
        auto labels = id(r);
        labels.emplace_back("vendor", to_string(p.maker));
        if (!p.name.empty()) labels.emplace_back("name", p.name.view());
        const auto pci_text = p.pci ? p.pci->text() : std::array<char, 17>{};
        if (p.pci) labels.emplace_back("pci", std::string_view(pci_text.data()));
        if (!p.uuid.empty()) labels.emplace_back("uuid", p.uuid.view());
        if (!p.driver_version.empty()) labels.emplace_back("driver", p.driver_version.view());
        if (!p.arch.empty()) labels.emplace_back("arch", p.arch.view());
        labels.emplace_back("software", p.software ? "true" : "false");
        w.sample(labels, std::uint64_t{1});
    }

    w.family("ai_hwaccel_device_available",
             "1 when the device can be used, 0 when it was seen but cannot (driver error, hidden by a "
             "*_VISIBLE_DEVICES mask).");
    for (const auto& r : rows) w.sample(id(r), std::uint64_t{r.p->available ? 1u : 0u});

    const auto bytes_family = [&](std::string_view name, std::string_view help,
                                  sourced<std::uint64_t> accelerator_profile::*field) {
        w.family(name, help);
        for (const auto& r : rows)
            if (keep(r.p->*field)) w.sample(id(r), (r.p->*field).value);
    };
    const auto double_family = [&](std::string_view name, std::string_view help,
                                   sourced<double> accelerator_profile::*field, double divisor) {
        w.family(name, help);
        // Divided, not multiplied by 0.01: 57 / 100 prints 0.57, 57 * 0.01 0.5700000000000001.
        for (const auto& r : rows)
            if (keep(r.p->*field)) w.sample(id(r), (r.p->*field).value / divisor);
    };
    bytes_family("ai_hwaccel_device_memory_total_bytes", "Device memory in bytes.",
                 &accelerator_profile::memory_bytes);
    bytes_family("ai_hwaccel_device_memory_used_bytes", "Device memory in use, in bytes.",
                 &accelerator_profile::memory_used_bytes);
    bytes_family("ai_hwaccel_device_memory_free_bytes", "Device memory free, in bytes.",
                 &accelerator_profile::memory_free_bytes);
    double_family("ai_hwaccel_device_utilization_ratio",
                  "Busy fraction of the device as its tool reports it, 0 to 1 (percent / 100).",
                  &accelerator_profile::utilization_percent, 100.0);
    double_family("ai_hwaccel_device_temperature_celsius", "Device temperature in degrees Celsius.",
                  &accelerator_profile::temperature_c, 1.0);
    double_family("ai_hwaccel_device_power_draw_watts", "Power the device draws, in watts.",
                  &accelerator_profile::power_draw_watts, 1.0);
    double_family("ai_hwaccel_device_power_limit_watts",
                  "Power limit of the device in watts (its board power from the catalogue when the tool "
                  "does not say).",
                  &accelerator_profile::power_limit_watts, 1.0);

    // Available devices by kind, for every kind in the registry (0 when all are unavailable).
    w.family("ai_hwaccel_devices", "Available devices by kind (the CPU included when it is detected).");
    for (const auto& k : device_kind_table) {
        std::uint64_t seen = 0, available = 0;
        for (const auto& p : reg.all())
            if (p.kind == k.id) {
                ++seen;
                if (p.available) ++available;
            }
        if (seen > 0) w.sample(label_list{{"kind", k.name}}, available);
    }

    const auto& host = reg.host();
    if (!host.cpu.model.empty() || host.cpu.arch != cpu_arch::unknown) {
        w.family("ai_hwaccel_host_cpu_info", "The host CPU; always 1. Labels: model, vendor, arch.");
        label_list labels;
        if (!host.cpu.model.empty()) labels.emplace_back("model", host.cpu.model);
        labels.emplace_back("vendor", to_string(host.cpu.maker));
        labels.emplace_back("arch", to_string(host.cpu.arch));
        w.sample(labels, std::uint64_t{1});
    }
    const auto host_bytes = [&](std::string_view name, std::string_view help, const sourced<std::uint64_t>& v) {
        w.family(name, help);
        if (keep(v)) w.sample(label_list{}, v.value);
    };
    host_bytes("ai_hwaccel_host_memory_total_bytes", "Physical memory of the host in bytes (MemTotal).",
               host.memory.total_bytes);
    host_bytes("ai_hwaccel_host_memory_available_bytes", "Host memory available in bytes (MemAvailable).",
               host.memory.available_bytes);
    // A limit at or above the physical memory limits nothing: no sample, as the help says,
    // and none of what is left under it (which would be more than the host has).
    auto limit = host.memory.cgroup_limit_bytes;
    auto limit_free = host.memory.cgroup_free_bytes;
    if (limit && host.memory.total_bytes && *limit >= *host.memory.total_bytes) limit.reset();
    if (!limit) limit_free.reset();
    host_bytes("ai_hwaccel_host_memory_limit_bytes",
               "Memory limit in bytes of this process's cgroup or an ancestor (its container's or "
               "service's), where one is set below the physical total.",
               limit);
    host_bytes("ai_hwaccel_host_memory_limit_free_bytes",
               "Memory in bytes left under those cgroup limits: the least, over the cgroups with a "
               "limit, of the limit less the cgroup's working set.",
               limit_free);

    // Every kind, zeros included: `ai_hwaccel_warnings > 0` then has a series to compare.
    w.family("ai_hwaccel_warnings", "Warnings collected during detection, by kind.");
    for (const auto& k : warning_kind_table) {
        std::uint64_t n = 0;
        for (const auto& x : reg.warnings()) n += x.kind == k.id ? 1u : 0u;
        w.sample(label_list{{"kind", k.name}}, n);
    }
    return out;
}

/// What `write_file_atomically` did: `ok`, or why not.
struct file_write_result {
    bool ok = false;
    std::string message; ///< empty on success
    explicit operator bool() const noexcept { return ok; }
};

/// Writes `text` to `path` atomically: a new hidden file `.<name>.<unique>.tmp` in the
/// same folder (created exclusively, so a file or symlink already there is never opened
/// or followed; mode from the umask, normally 0644, which node_exporter and NFD need to
/// read it; `<name>` cut to its first 200 bytes, so any name that fits fits here too),
/// flushed to disk, then renamed over `path`. Readers see the old content or the new,
/// never a partial file; both the textfile collector (which reads only `*.prom`) and NFD
/// (which skips dot files since kubernetes-sigs/node-feature-discovery#1353, 2023)
/// ignore the temporary name. On failure the temporary
/// file is removed and `path` is untouched. A symlink at `path` is replaced, never
/// followed (an exporter run as root must not write where a planted link points); anything
/// else there that is no regular file (a device such as /dev/null, a FIFO, a socket, a
/// folder) is refused and left alone. Failures are reported in the result, not thrown
/// (only running out of memory throws).
inline file_write_result write_file_atomically(const std::filesystem::path& path, std::string_view text) {
    namespace fs = std::filesystem;
    {
        std::error_code ec;
        const auto type = fs::symlink_status(path, ec).type();
        if (!ec && type != fs::file_type::not_found && type != fs::file_type::regular &&
            type != fs::file_type::symlink)
            return {false, "'" + path.string() +
                               "' is not a regular file (a device, a FIFO, a socket or a folder); it is left alone"};
    }
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    const std::string name = path.filename().string();
    if (name.empty() || name == "."sv || name == ".."sv) return {false, "not a file name: '" + path.string() + "'"};
    static std::atomic<unsigned> counter{0}; // only makes names differ between calls
    const auto ticks =
        static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
#if AI_HWACCEL_EXPORT_HAVE_UNISTD
    const auto pid = static_cast<unsigned long long>(::getpid());
#else
    const unsigned long long pid = 0;
#endif
    // The temporary name must fit where `name` fits (NAME_MAX, 255 bytes on Linux): the
    // name's first 200 bytes and at most 47 of suffix.
    const std::string stem = name.substr(0, 200);
    for (int attempt = 0; attempt < 16; ++attempt) {
        const fs::path tmp = dir / ("." + stem + "." + std::to_string(pid) + "-" +
                                    std::to_string(ticks % 1000000007ull) + "-" + std::to_string(++counter) + ".tmp");
        // "x": fail if anything, a dangling symlink included, is already there.
        std::FILE* f = std::fopen(tmp.string().c_str(), "wbx");
        if (!f) {
            const int err = errno;
            std::error_code ec;
            if (fs::symlink_status(tmp, ec).type() != fs::file_type::not_found && !ec) continue;
            return {false, "cannot create '" + tmp.string() + "': " + std::generic_category().message(err)};
        }
        bool good = std::fwrite(text.data(), 1, text.size(), f) == text.size();
        good = std::fflush(f) == 0 && good;
#if AI_HWACCEL_EXPORT_HAVE_UNISTD
        good = ::fsync(::fileno(f)) == 0 && good;
#endif
        good = std::fclose(f) == 0 && good;
        std::error_code ec;
        if (!good) {
            fs::remove(tmp, ec);
            return {false, "cannot write '" + tmp.string() + "'"};
        }
        fs::rename(tmp, path, ec);
        if (ec) {
            const std::string why = ec.message();
            fs::remove(tmp, ec);
            return {false, "cannot rename onto '" + path.string() + "': " + why};
        }
        return {true, {}};
    }
    return {false, "cannot find a free temporary name in '" + dir.string() + "'"};
}

AI_HWACCEL_NAMESPACE_END

#undef AI_HWACCEL_EXPORT_HAVE_UNISTD
