// ai-hwaccel io: the registry as Kubernetes node labels, in the feature-file format of
// Node Feature Discovery's `local` source.
//
// nfd-worker reads every file in /etc/kubernetes/node-feature-discovery/features.d/ and
// turns each `<prefix>/<name>=<value>` line into a node label (lines starting with '#'
// are comments; `# +expiry-time=<RFC 3339>` makes the lines after it expire). So a pod
// or a host job that runs detection and writes `to_nfd_features(registry)` there (with
// `write_file_atomically` from io/prometheus.hpp: NFD skips dot files since its PR 1353, the
// temporary name starts with one) lets the scheduler place work with a nodeSelector such as
// `ai-hwaccel.io/cuda_gpu.count: "8"`. Every label written is valid under Kubernetes'
// rules, which `is_valid_label_name` and `is_valid_label_value` implement; device names
// are made into valid values by `sanitize_label_value`. docs/exporters.md lists the labels;
// deploy/ holds a DaemonSet that runs it.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/io/prometheus.hpp"
#include "ai_hwaccel/registry.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

struct nfd_options {
    /// The label prefix (namespace): a DNS subdomain. NFD accepts any except
    /// kubernetes.io and its subdomains (feature.node.kubernetes.io and
    /// profile.node.kubernetes.io excepted): see nfd_allows_prefix.
    std::string prefix = "ai-hwaccel.io";
    /// Values less trustworthy than this are not used (see prometheus_options).
    origin min_origin = origin::catalogue;
    /// When set, a `# +expiry-time=` line: NFD drops the labels after this instant unless
    /// the file is rewritten (a node whose exporter stopped stops advertising devices).
    std::optional<std::chrono::sys_seconds> expiry_time;
};

namespace detail {
constexpr bool label_alnum(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
constexpr bool label_inner(char c) noexcept { return label_alnum(c) || c == '-' || c == '_' || c == '.'; }
/// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63 characters.
constexpr bool is_label_segment(std::string_view s) noexcept {
    if (s.empty() || s.size() > 63) return false;
    if (!label_alnum(s.front()) || !label_alnum(s.back())) return false;
    for (char c : s)
        if (!label_inner(c)) return false;
    return true;
}
/// A DNS subdomain as Kubernetes checks it (RFC 1123): at most 253 characters, dot-separated
/// parts of lower-case letters, digits and '-', each starting and ending alphanumeric.
constexpr bool is_dns_subdomain(std::string_view s) noexcept {
    if (s.empty() || s.size() > 253) return false;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = s.find('.', start);
        const std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
        if (part.empty()) return false;
        const auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
        if (!lower_alnum(part.front()) || !lower_alnum(part.back())) return false;
        for (char c : part)
            if (!lower_alnum(c) && c != '-') return false;
        if (dot == std::string_view::npos) return true;
        start = dot + 1;
    }
}
} // namespace detail

/// Whether NFD publishes labels under `prefix`: a DNS subdomain outside kubernetes.io and
/// its sub-namespaces, which nfd-master always denies, except feature.node.kubernetes.io
/// and profile.node.kubernetes.io and theirs, which it always allows (its master
/// configuration reference, denyLabelNs).
constexpr bool nfd_allows_prefix(std::string_view prefix) noexcept {
    const auto within = [prefix](std::string_view ns) {
        return prefix == ns ||
               (prefix.size() > ns.size() && prefix.ends_with(ns) && prefix[prefix.size() - ns.size() - 1] == '.');
    };
    if (!detail::is_dns_subdomain(prefix)) return false;
    return within("feature.node.kubernetes.io") || within("profile.node.kubernetes.io") || !within("kubernetes.io");
}
static_assert(nfd_allows_prefix("ai-hwaccel.io") && nfd_allows_prefix("feature.node.kubernetes.io") &&
              nfd_allows_prefix("gpu.profile.node.kubernetes.io") && nfd_allows_prefix("notkubernetes.io") &&
              !nfd_allows_prefix("kubernetes.io") && !nfd_allows_prefix("node.kubernetes.io") &&
              !nfd_allows_prefix("Ai-hwaccel.io"));

/// A Kubernetes label name (key): `[prefix/]name`, the prefix a DNS subdomain of at most
/// 253 characters, the name at most 63 characters of [A-Za-z0-9-_.] starting and ending
/// alphanumeric.
constexpr bool is_valid_label_name(std::string_view s) noexcept {
    const std::size_t slash = s.find('/');
    if (slash == std::string_view::npos) return detail::is_label_segment(s);
    const std::string_view name = s.substr(slash + 1);
    if (name.find('/') != std::string_view::npos) return false;
    return detail::is_dns_subdomain(s.substr(0, slash)) && detail::is_label_segment(name);
}

/// A Kubernetes label value: empty, or at most 63 characters of [A-Za-z0-9-_.] starting
/// and ending alphanumeric.
constexpr bool is_valid_label_value(std::string_view s) noexcept {
    return s.empty() || detail::is_label_segment(s);
}

/// `s` made into a valid label value, keeping what it can: every run of characters
/// outside [A-Za-z0-9-_.] (spaces, quotes, slashes, anything not ASCII) becomes one '-',
/// the ends are trimmed to alphanumerics, and the result is cut to 63 characters.
/// "NVIDIA H100 80GB HBM3" gives "NVIDIA-H100-80GB-HBM3"; a name with nothing usable
/// gives "" (which callers leave out).
inline std::string sanitize_label_value(std::string_view s) {
    std::string r;
    for (char c : s) {
        if (detail::label_inner(c) && c != '-') r += c;
        else if (r.empty() || r.back() != '-') r += '-';
    }
    const auto trim = [&r] {
        std::size_t b = 0;
        while (b < r.size() && !detail::label_alnum(r[b])) ++b;
        r.erase(0, b);
        while (!r.empty() && !detail::label_alnum(r.back())) r.pop_back();
    };
    trim();
    if (r.size() > 63) {
        r.resize(63);
        trim();
    }
    return r;
}

namespace detail {

// RFC 3339 has four-digit years only, and NFD reads a time it cannot parse as "now" (the
// labels after it never lapse): instants outside 0000-01-01 to 9999-12-31 are clamped.
inline std::string rfc3339_utc(std::chrono::sys_seconds t) {
    using namespace std::chrono;
    constexpr sys_seconds first{sys_days{year{0} / January / 1}};
    constexpr sys_seconds last{sys_days{year{9999} / December / 31} + hours{23} + minutes{59} + seconds{59}};
    t = std::clamp(t, first, last);
    const auto day = floor<days>(t);
    const year_month_day ymd{day};
    const hh_mm_ss<seconds> hms{t - day};
    std::array<char, 32> buf{};
    std::snprintf(buf.data(), buf.size(), "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                  static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                  static_cast<int>(hms.seconds().count()));
    return buf.data();
}

/// The value shared by every device of a group, as a label value, or "" when they differ
/// or one has none. Compared as the devices state them, before `sanitize_label_value`
/// makes "H100 (80GB)" and "H100/80GB" alike.
template <class Get>
std::string common_value(const std::vector<const accelerator_profile*>& devices, Get get) {
    if (devices.empty()) return {};
    const std::string first(get(*devices.front()));
    for (const auto* d : devices)
        if (const std::string v(get(*d)); v.empty() || v != first) return {};
    return sanitize_label_value(first);
}

} // namespace detail

namespace detail {
/// The labels written per device kind, as `<prefix>/<kind>.<suffix>`.
inline constexpr std::array<std::string_view, 7> nfd_kind_labels{
    "count", "memory-gib", "model", "vendor", "arch", "driver", "unified-memory"};
} // namespace detail

/// Every label name `to_nfd_features` can write with these options, whatever the machine:
/// for checking names and writing selectors without a machine at hand. Empty when the
/// prefix is not one NFD publishes under (nfd_allows_prefix).
inline std::vector<std::string> nfd_label_names(const nfd_options& opt = {}) {
    std::vector<std::string> names;
    if (!nfd_allows_prefix(opt.prefix)) return names;
    const std::string p = opt.prefix + "/";
    names.push_back(p + "version");
    names.push_back(p + "accelerator.count");
    for (const auto& f : family_table)
        if (f.id != family::cpu) names.push_back(p + "family." + std::string(f.name));
    for (const auto& k : device_kind_table) {
        if (k.id == device_kind::cpu) continue;
        for (auto suffix : detail::nfd_kind_labels) names.push_back(p + std::string(k.name) + "." + std::string(suffix));
    }
    for (const auto& k : interconnect_kind_table)
        if (k.id != interconnect_kind::none && k.id != interconnect_kind::pcie)
            names.push_back(p + "interconnect." + std::string(k.name));
    return names;
}

/// The registry as an NFD feature file: `<prefix>/<name>=<value>` lines, all valid
/// Kubernetes labels. Only available, non-software accelerators count; the CPU is left
/// to NFD's own cpu source. docs/exporters.md lists the labels.
inline std::string to_nfd_features(const accelerator_registry& reg, const nfd_options& opt = {}) {
    std::string out = "# ai-hwaccel ";
    out += version.text;
    out += ": accelerator labels for Node Feature Discovery (features.d)\n";
    if (opt.expiry_time) {
        out += "# +expiry-time=";
        out += detail::rfc3339_utc(*opt.expiry_time);
        out += '\n';
    }
    if (!nfd_allows_prefix(opt.prefix)) {
        out += "# ai-hwaccel: NFD publishes no label under this prefix (not a DNS subdomain, or kubernetes.io's); "
               "no labels written\n";
        return out;
    }
    // Every line passes the validators or is not written: a bad label would make NFD
    // reject it anyway, and the caller's other labels must still arrive.
    const auto label = [&](std::string_view name, std::string_view value) {
        std::string key = opt.prefix + "/";
        key += name;
        if (!is_valid_label_name(key) || value.empty() || !is_valid_label_value(value)) return;
        out += key;
        out += '=';
        out += value;
        out += '\n';
    };
    const auto number = [](std::uint64_t v) { return detail::decimal(v); };

    std::vector<const accelerator_profile*> accelerators;
    for (const auto& p : reg.all())
        if (p.is_accelerator()) accelerators.push_back(&p);

    label("version", sanitize_label_value(version.text));
    label("accelerator.count", number(accelerators.size()));
    for (const auto& f : family_table) {
        if (f.id == family::cpu) continue;
        for (const auto* p : accelerators)
            if (p->device_family() == f.id) {
                label("family." + std::string(f.name), "true");
                break;
            }
    }
    for (const auto& k : device_kind_table) {
        std::vector<const accelerator_profile*> devices;
        for (const auto* p : accelerators)
            if (p->kind == k.id) devices.push_back(p);
        if (devices.empty()) continue;
        const std::string kind(k.name);
        label(kind + ".count", number(devices.size()));
        // The smallest device's memory in whole GiB, rounded down (nvidia-smi's 81559 MiB
        // for an "80 GB" H100 is 79.6 GiB: 79), so that a pod asking for >= N GiB fits on
        // any of them. Left out unless every device's memory is known.
        std::optional<std::uint64_t> smallest;
        bool all_known = true;
        for (const auto* p : devices) {
            if (!p->memory_bytes || p->memory_bytes.from < opt.min_origin) {
                all_known = false;
                break;
            }
            if (!smallest || *p->memory_bytes < *smallest) smallest = *p->memory_bytes;
        }
        if (all_known && smallest)
            label(kind + ".memory-gib",
                  number(*smallest / units::gib));
        label(kind + ".model", detail::common_value(devices, [](const accelerator_profile& p) { return p.name.view(); }));
        label(kind + ".vendor", detail::common_value(devices, [](const accelerator_profile& p) {
                  return p.maker == vendor::unknown ? std::string_view{} : to_string(p.maker);
              }));
        label(kind + ".arch", detail::common_value(devices, [](const accelerator_profile& p) { return p.arch.view(); }));
        label(kind + ".driver",
              detail::common_value(devices, [](const accelerator_profile& p) { return p.driver_version.view(); }));
        bool unified = true;
        for (const auto* p : devices) unified = unified && p->unified_memory;
        if (unified) label(kind + ".unified-memory", "true");
    }
    // A network port that is down (no cable, no subnet manager) is no link of the node's:
    // pods that select the label would find no fabric.
    for (const auto& k : interconnect_kind_table) {
        if (k.id == interconnect_kind::none || k.id == interconnect_kind::pcie) continue;
        for (const auto& l : reg.system().interconnects)
            if (l.kind == k.id && (l.scope != link_scope::inter_node || port_active(l.state))) {
                label("interconnect." + std::string(k.name), "true");
                break;
            }
    }
    return out;
}

AI_HWACCEL_NAMESPACE_END
