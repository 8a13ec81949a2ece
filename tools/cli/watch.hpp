// ai-hwaccel CLI: `watch`, the devices' live values refreshed, with deltas and alerts.
//
// Included by main.cpp after its helpers (usage_error, error, out, str, fmt, no_json,
// parse_options). Each
// refresh is a whole detection; the values shown are the profile's live ones (memory used
// and free, utilisation, temperature, power draw), the same the Prometheus export writes.
// docs/cli-gather.md documents the alert grammar and the exit status.
#pragma once

#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/io/json.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <poll.h>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

namespace watch_cli {

constexpr std::string_view watch_help =
    "usage: ai-hwaccel watch [--interval SECONDS] [--count N] [--root DIR] [--alert EXPR]... [--json]\n"
    "\n"
    "Detects again every interval and prints each device's live values (memory used and free,\n"
    "utilisation, temperature, power draw) with the change since the previous refresh.\n"
    "\n"
    "  --interval S     seconds between refreshes (default 2; 0.5 and 0 allowed)\n"
    "  --count N        stop after N refreshes (default: until interrupted)\n"
    "  --root DIR       watch a captured machine tree instead (as detect --root)\n"
    "  --alert EXPR     METRIC OP VALUE, e.g. temperature>85, memory_used>90%, power>=400W\n"
    "                   metrics: temperature (C), power (W), utilization (%), memory_used,\n"
    "                   memory_free (bytes, KiB/MiB/GiB/TiB, KB/MB/GB/TB, or % of the memory)\n"
    "                   operators: > >= < <=; repeatable; a bad EXPR is a usage error\n"
    "  --json           one JSON object per refresh, one per line (JSON Lines)\n"
    "\n"
    "An alert that fires prints a line on stderr; the exit status is then 3 (0 otherwise).\n"
    "SIGINT and SIGTERM end the watch after the refresh being printed.\n";

namespace ah = ai_hwaccel;

enum class metric : std::uint8_t { temperature, power, utilization, memory_used, memory_free };

constexpr std::string_view metric_name(metric m) noexcept {
    switch (m) {
    case metric::temperature: return "temperature";
    case metric::power: return "power";
    case metric::utilization: return "utilization";
    case metric::memory_used: return "memory_used";
    case metric::memory_free: return "memory_free";
    }
    return "?";
}

struct alert {
    std::string text; // as given
    metric what = metric::temperature;
    std::string op;
    double value = 0;
    bool percent = false; // memory as a share of the device's memory
};

// METRIC OP NUMBER [UNIT], blanks allowed around each part.
std::optional<alert> parse_alert(std::string_view s) {
    alert a;
    a.text = str(s);
    s = ah::detail::trim(s);
    std::size_t i = 0;
    while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_')) ++i;
    const auto name = s.substr(0, i);
    bool found = false;
    for (auto m : {metric::temperature, metric::power, metric::utilization, metric::memory_used, metric::memory_free})
        if (ah::detail::iequals(metric_name(m), name)) {
            a.what = m;
            found = true;
        }
    if (ah::detail::iequals(name, "utilisation")) {
        a.what = metric::utilization;
        found = true;
    }
    if (!found) return std::nullopt;
    s = ah::detail::trim(s.substr(i));
    for (std::string_view op : {">=", "<=", ">", "<"})
        if (s.starts_with(op)) {
            a.op = str(op);
            break;
        }
    if (a.op.empty()) return std::nullopt;
    s = ah::detail::trim(s.substr(a.op.size()));
    std::size_t n = 0;
    while (n < s.size() && ((s[n] >= '0' && s[n] <= '9') || s[n] == '.')) ++n;
    if (n == 0) return std::nullopt;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + n, a.value);
    if (ec != std::errc{} || p != s.data() + n || !std::isfinite(a.value)) return std::nullopt;
    const auto unit = ah::detail::trim(s.substr(n));
    const bool memory = a.what == metric::memory_used || a.what == metric::memory_free;
    // A share is 0 to 100 %, with or without its unit: past that a rule could never fire
    // (or always would).
    if (a.what == metric::utilization && a.value > 100) return std::nullopt;
    if (unit.empty()) return a;
    if (unit == "%") {
        if (a.what == metric::utilization) return a;
        if (!memory) return std::nullopt;
        a.percent = true;
        return a.value <= 100 ? std::optional<alert>(a) : std::nullopt;
    }
    // Units in any case, as --memory reads them elsewhere (a bit-rate makes no sense here).
    const auto is = [&](std::string_view u) { return ah::detail::iequals(unit, u); };
    if ((a.what == metric::temperature && is("C")) || (a.what == metric::power && is("W"))) return a;
    if (!memory) return std::nullopt;
    struct suffix {
        std::string_view name;
        double factor;
    };
    for (const auto& u : {suffix{"B", 1}, suffix{"KiB", 1024.0}, suffix{"MiB", 1048576.0}, suffix{"GiB", 1073741824.0},
                          suffix{"TiB", 1099511627776.0}, suffix{"KB", 1e3}, suffix{"MB", 1e6}, suffix{"GB", 1e9},
                          suffix{"TB", 1e12}})
        if (is(u.name)) {
            a.value *= u.factor;
            return a;
        }
    return std::nullopt;
}

// One device's live values at one refresh.
struct sample {
    std::string key; // how a device is found again at the next refresh
    std::string name;
    std::string kind;
    std::uint32_t index = 0;
    std::optional<double> memory_total, memory_used, memory_free, utilization, temperature, power;
};

std::optional<double> value_of(const ah::sourced<double>& v) { return v ? std::optional<double>(*v) : std::nullopt; }
std::optional<double> value_of(const ah::sourced<std::uint64_t>& v) {
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

// The devices but the CPU. A device is keyed by its PCI function, which survives the
// renumbering of the others when one vanishes and a vendor tool that stops answering (the
// PCI scan then finds the device); else by its UUID; else by kind, index and name. An
// ordinal tells apart devices that share a key (partitions of one PCI function).
std::vector<sample> take(const ah::accelerator_registry& reg) {
    std::vector<sample> out;
    std::map<std::string, unsigned> seen;
    for (const auto& p : reg.all()) {
        if (p.is_cpu()) continue;
        sample s;
        s.name = str(p.name.view());
        s.kind = str(ah::to_string(p.kind));
        s.index = p.index;
        if (p.pci)
            s.key = s.kind + " pci " + p.pci->text().data();
        else if (!p.uuid.empty())
            s.key = s.kind + " uuid " + str(p.uuid.view());
        else
            s.key = s.kind + " " + std::to_string(p.index) + " " + s.name;
        s.key += " #" + std::to_string(seen[s.key]++);
        s.memory_total = value_of(p.memory_bytes);
        s.memory_used = value_of(p.memory_used_bytes);
        s.memory_free = value_of(p.memory_free_bytes);
        s.utilization = value_of(p.utilization_percent);
        s.temperature = value_of(p.temperature_c);
        s.power = value_of(p.power_draw_watts);
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<double> get(const sample& s, metric m) {
    switch (m) {
    case metric::temperature: return s.temperature;
    case metric::power: return s.power;
    case metric::utilization: return s.utilization;
    case metric::memory_used: return s.memory_used;
    case metric::memory_free: return s.memory_free;
    }
    return std::nullopt;
}

bool fires(const alert& a, const sample& s, double& seen) {
    auto v = get(s, a.what);
    if (!v) return false;
    if (a.percent) {
        if (!s.memory_total || *s.memory_total <= 0) return false;
        v = *v / *s.memory_total * 100.0;
    }
    seen = *v;
    if (a.op == ">") return *v > a.value;
    if (a.op == ">=") return *v >= a.value;
    if (a.op == "<") return *v < a.value;
    return *v <= a.value;
}

// "12.3 GiB (+0.0)", "-" when unknown; the delta only when both refreshes know the value.
std::string cell(std::optional<double> v, std::optional<double> before, bool has_before, double scale, const char* f,
                 const char* unit) {
    if (!v) return "-";
    std::string s = fmt(f, *v / scale) + unit;
    if (has_before && before) s += " (" + fmt("%+.1f", (*v - *before) / scale) + ")";
    return s;
}

// Bytes as fmt_bytes prints them (a size that is not zero never shows as "0.0 GiB"), and
// the change since the last refresh the same way.
std::string bytes_cell(std::optional<double> v, std::optional<double> before, bool has_before) {
    if (!v) return "-";
    // The values are byte counts read as doubles: below 2^64, but for a device claiming
    // 2^64 - 1 (which rounds to 2^64).
    const auto text = [](double x) { return fmt_bytes(x < 0x1p64 ? static_cast<std::uint64_t>(x) : UINT64_MAX); };
    std::string s = text(*v).text;
    if (has_before && before) {
        const bool less = *v < *before;
        s += less ? " (-" : " (+";
        s += text(less ? *before - *v : *v - *before).text;
        s += ')';
    }
    return s;
}

// Whether the reader of stdout has gone (the far end of a pipe closed), waiting up to
// `timeout_ms` for it: poll reports that as an error on the descriptor without a write.
// Files and terminals never report it.
bool reader_gone(int timeout_ms) {
    pollfd p{STDOUT_FILENO, 0, 0};
    return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

volatile std::sig_atomic_t stop_requested = 0;
void on_stop_signal(int) { stop_requested = 1; }

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

int cmd_watch(std::span<const std::string_view> args) {
    double interval = 2;
    std::uint64_t count = 0; // 0: until stopped
    std::string root;
    std::vector<alert> alerts;
    options o;
    std::string why;
    if (!parse_options(args, "watch", {{"--interval"}, {"--count"}, {"--root"}, {"--alert", true, true}, {"--json", false}},
                       o, why))
        return usage_error(why);
    const bool json = o.has("--json"), have_root = o.has("--root");
    root = str(o.get("--root").value_or(""));
    for (const auto v : o.all("--alert")) {
        auto parsed = parse_alert(v);
        if (!parsed) return usage_error("--alert: '" + str(v) + "' is not METRIC OP VALUE (e.g. temperature>85)");
        alerts.push_back(std::move(*parsed));
    }
    if (const auto v = o.get("--interval")) {
        std::size_t n = 0;
        while (n < v->size() && (((*v)[n] >= '0' && (*v)[n] <= '9') || (*v)[n] == '.')) ++n;
        const auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), interval);
        if (n != v->size() || ec != std::errc{} || p != v->data() + v->size() || interval > 86400)
            return usage_error("--interval: '" + str(*v) + "' is not a number of seconds from 0 to 86400");
    }
    if (const auto v = o.get("--count")) {
        bool digits = v->size() < 20;
        for (char c : *v) digits = digits && c >= '0' && c <= '9';
        const auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), count);
        if (!digits || ec != std::errc{} || p != v->data() + v->size() || count == 0)
            return usage_error("--count: '" + str(*v) + "' is not a positive whole number");
    }
#if !AI_HWACCEL_JSON
    if (json) return no_json();
#endif
    if (have_root) {
        struct stat st {};
        if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return usage_error("--root: '" + root + "' is not a directory");
    }
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    // A reader that goes away must not take the exit status with it (3 when an alert
    // fired): the failed write, or poll while waiting, ends the watch instead.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, nullptr);

    const ah::host_system sys(root);
    std::map<std::string, sample> previous;
    std::set<std::string> told; // the warnings of the previous refresh, as printed
    bool fired = false;
    for (std::uint64_t n = 1; !stop_requested; ++n) {
        const auto reg = ah::detect(sys);
        const auto now = take(reg);
        const bool has_before = n > 1;
        const std::string when = utc_now();
        errno = 0; // what a failed write of this refresh leaves is its reason
        // A tool that starts failing leaves the live values unknown ("-"): say why, once
        // for as long as it lasts, as detect does.
        std::set<std::string> warned;
        for (const auto& w : reg.warnings()) {
            auto said = ah::to_string(w);
            if (!told.contains(said)) print_warnings(std::span<const ah::warning>(&w, 1));
            warned.insert(std::move(said));
        }
        told = std::move(warned);
        std::set<std::string_view> present;
        for (const auto& s : now) present.insert(s.key);
#if AI_HWACCEL_JSON
        nlohmann::json doc;
        if (json) {
            doc["refresh"] = n;
            doc["time"] = when;
            doc["devices"] = nlohmann::json::array();
            doc["removed"] = nlohmann::json::array();
            for (const auto& [key, s] : previous)
                if (!present.contains(key))
                    doc["removed"].push_back({{"index", s.index}, {"kind", s.kind}, {"name", s.name}});
            doc["warnings"] = reg.warnings();
        }
#endif
        if (!json) {
            std::printf("refresh %llu at %s\n", static_cast<unsigned long long>(n), when.c_str());
            if (now.empty()) std::printf("  no devices besides the CPU\n");
            for (const auto& [key, s] : previous)
                if (!present.contains(key))
                    std::printf("  %-3u %-12s %s gone since refresh %llu\n", s.index, s.kind.c_str(),
                                fit(s.name, 34).c_str(), static_cast<unsigned long long>(n - 1));
        }
        for (const auto& s : now) {
            const auto it = previous.find(s.key);
            const sample* before = it == previous.end() ? nullptr : &it->second;
            const auto b = [&](metric m) { return before ? get(*before, m) : std::nullopt; };
#if AI_HWACCEL_JSON
            if (json) {
                // Memory in whole bytes, the rest as reported.
                const auto num = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
                const auto bytes = [](std::optional<double> v) {
                    return v ? nlohmann::json(static_cast<std::uint64_t>(*v)) : nlohmann::json(nullptr);
                };
                const auto diff = [&](metric m) {
                    const auto x = get(s, m), y = b(m);
                    if (!x || !y) return nlohmann::json(nullptr);
                    if (m == metric::memory_used || m == metric::memory_free)
                        return nlohmann::json(static_cast<std::int64_t>(*x) - static_cast<std::int64_t>(*y));
                    return nlohmann::json(*x - *y);
                };
                nlohmann::json d = {{"index", s.index},
                                    {"kind", s.kind},
                                    {"name", s.name},
                                    {"memory_bytes", bytes(s.memory_total)},
                                    {"memory_used_bytes", bytes(s.memory_used)},
                                    {"memory_free_bytes", bytes(s.memory_free)},
                                    {"utilization_percent", num(s.utilization)},
                                    {"temperature_c", num(s.temperature)},
                                    {"power_draw_watts", num(s.power)}};
                if (before)
                    d["delta"] = {{"memory_used_bytes", diff(metric::memory_used)},
                                  {"memory_free_bytes", diff(metric::memory_free)},
                                  {"utilization_percent", diff(metric::utilization)},
                                  {"temperature_c", diff(metric::temperature)},
                                  {"power_draw_watts", diff(metric::power)}};
                else
                    d["delta"] = nullptr;
                doc["devices"].push_back(std::move(d));
            }
#endif
            if (!json) {
                const bool hb = has_before && before;
                std::printf("  %-3u %-12s %s used %-20s free %-20s util %-14s temp %-14s power %s\n", s.index,
                            s.kind.c_str(), fit(s.name, 34).c_str(),
                            bytes_cell(s.memory_used, b(metric::memory_used), hb).c_str(),
                            bytes_cell(s.memory_free, b(metric::memory_free), hb).c_str(),
                            cell(s.utilization, b(metric::utilization), hb, 1, "%.1f", "%").c_str(),
                            cell(s.temperature, b(metric::temperature), hb, 1, "%.1f", " C").c_str(),
                            cell(s.power, b(metric::power), hb, 1, "%.1f", " W").c_str());
            }
            for (const auto& a : alerts) {
                double seen = 0;
                if (!fires(a, s, seen)) continue;
                fired = true;
                // Memory as the table shows it (the rule may name any unit).
                const bool memory = !a.percent && (a.what == metric::memory_used || a.what == metric::memory_free);
                std::fprintf(stderr, "ai-hwaccel: alert %s: refresh %llu, %s %u %s: %.*s is %s%s\n", a.text.c_str(),
                             static_cast<unsigned long long>(n), s.kind.c_str(), s.index, s.name.c_str(),
                             len(metric_name(a.what)), metric_name(a.what).data(),
                             (memory ? bytes_cell(seen, {}, false) : fmt("%.1f", seen)).c_str(), a.percent ? "%" : "");
            }
        }
#if AI_HWACCEL_JSON
        if (json) {
            out(doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
            out("\n");
        }
#endif
        std::fflush(stdout);
        std::fflush(stderr);
        // Nobody reads any more (a closed pipe, a full disk): stop rather than refresh for
        // nobody; main reports it, with the reason kept here (errno may be gone by then).
        if (std::ferror(stdout)) {
            stdout_write_errno = errno;
            break;
        }
        previous.clear();
        for (const auto& s : now) previous[s.key] = s;
        if (count != 0 && n >= count) break;
        // Wait in short steps so that a signal ends the watch promptly, and a reader that
        // goes away during the wait ends it at once rather than at the next write.
        using clock = std::chrono::steady_clock;
        const auto until = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(interval));
        while (!stop_requested) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()).count();
            if (left <= 0) break;
            if (reader_gone(static_cast<int>(std::min<decltype(left)>(left, 100)))) return fired ? 3 : 1;
        }
    }
    return fired ? 3 : 0;
}

} // namespace watch_cli

} // namespace
