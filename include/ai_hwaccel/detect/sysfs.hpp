// ai-hwaccel detect: reading kernel interfaces.
//
// The pieces every host probe needs: whole numbers and "key: value" lines as /proc
// prints them, sysfs hexadecimal attributes, the kernel's cpulist format
// ("0-15,32-47"), a read that tells "absent" (the machine lacks the feature: no warning)
// from "unreadable" (a warning), and symlink resolution that also works on captured
// trees, where a version control system may have stored a sysfs link as a small file
// holding the link's target.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {
/// Parses a whole decimal unsigned number (no sign, no blanks); nullopt on overflow.
constexpr std::optional<std::uint64_t> parse_u64(std::string_view s) noexcept {
    if (s.empty() || s.size() > 20) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto d = static_cast<std::uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10) return std::nullopt;
        v = v * 10 + d;
    }
    return v;
}

/// Parses a whole decimal number with an optional leading '-' ("-1" is sysfs's "none").
constexpr std::optional<std::int64_t> parse_i64(std::string_view s) noexcept {
    const bool negative = !s.empty() && s.front() == '-';
    if (negative) s.remove_prefix(1);
    const auto v = parse_u64(s);
    if (!v || *v > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    const auto i = static_cast<std::int64_t>(*v);
    return negative ? -i : i;
}

/// The number of a DRM card's folder: "card12" → 12; "card0-DP-1", "renderD128", "version",
/// and numbers past five digits (no kernel makes that many cards) → none.
constexpr std::optional<std::uint32_t> drm_card_number(std::string_view n) noexcept {
    if (n.size() <= 4 || n.size() > 9 || !n.starts_with("card")) return std::nullopt;
    const auto v = parse_u64(n.substr(4));
    if (!v) return std::nullopt;
    return static_cast<std::uint32_t>(*v);
}
static_assert(drm_card_number("card0") == 0u && drm_card_number("card12") == 12u && !drm_card_number("card0-DP-1") &&
              !drm_card_number("card") && !drm_card_number("renderD128") && !drm_card_number("card184467440737095516160"));

/// The name of a device no catalogue row and no driver names: its maker's words and its PCI
/// device id ("AMD GPU [0x7480]").
inline std::string unknown_device_name(std::string_view what, std::uint16_t device_id) {
    constexpr char digits[] = "0123456789abcdef";
    std::string s(what);
    s += " [0x";
    for (int shift = 12; shift >= 0; shift -= 4) s += digits[(device_id >> shift) & 0xf];
    s += ']';
    return s;
}

/// The warning for a number a sysfs file holds that did not parse: one written as a number
/// is past what its type holds (as a value past 2^64); anything else is malformed.
constexpr warning_kind unparsed_number(std::string_view text) noexcept {
    return looks_decimal(trim(text)) ? warning_kind::value_out_of_range : warning_kind::parse_error;
}

/// One line of "key : value" text, blanks around both trimmed; a line without a colon is
/// all key.
struct key_value_line {
    std::string_view key, value;
    bool has_colon = false;
};

/// Takes the first line off `text` (which must not be empty) and splits it.
constexpr key_value_line next_key_value(std::string_view& text) noexcept {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return {trim(line), {}, false};
    return {trim(line.substr(0, colon)), trim(line.substr(colon + 1)), true};
}

/// Calls f(key, value, has_colon) for every "key : value" line (blanks around both trimmed).
/// The splitting is a function of its own, so that each caller's copy of the loop is short.
template <class F>
constexpr void for_each_key_value(std::string_view text, F&& f) {
    while (!text.empty()) {
        const auto kv = next_key_value(text);
        f(kv.key, kv.value, kv.has_colon);
    }
}

/// A sysfs hexadecimal attribute, "0x10de\n" → 0x10de (the "0x" is optional).
constexpr std::optional<std::uint32_t> parse_hex_attribute(std::string_view s) noexcept {
    s = trim(s);
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
    return parse_hex32(s);
}

/// A count, an id or a CPU number in decimal. Every unsigned number that detection prints
/// goes through this one type, so the program holds one copy of the conversion, not one
/// per integer type.
inline std::string to_decimal(std::uint64_t n) { return std::to_string(n); }

/// `parts` one after another: concat({dir, "/ports/", to_decimal(n)}). One function for
/// every such string, where chains of `+` would instantiate an operator for each mix of
/// temporaries and references they meet.
inline std::string concat(std::initializer_list<std::string_view> parts) {
    std::size_t size = 0;
    for (const auto p : parts) size += p.size();
    std::string out;
    out.reserve(size);
    for (const auto p : parts) out += p;
    return out;
}

/// `pattern` with each "{}" in it replaced by the next of `numbers`, in decimal:
/// with_numbers("{} socket(s), {} core(s)", {2, 96}). A message with numbers in it is then
/// one call where it is written, not a chain of appends and temporaries. A "{}" past the
/// last number stays as it is.
inline std::string with_numbers(std::string_view pattern, std::initializer_list<std::uint64_t> numbers) {
    std::string out;
    auto next = numbers.begin();
    for (auto at = pattern.find("{}"sv); at != std::string_view::npos && next != numbers.end();
         at = pattern.find("{}"sv)) {
        out += pattern.substr(0, at);
        out += to_decimal(*next++);
        pattern.remove_prefix(at + 2);
    }
    out += pattern;
    return out;
}


inline void add_warning(std::vector<warning>& warnings, warning_kind kind, std::string_view subject,
                        std::string message) {
    warnings.push_back(warning{kind, std::nullopt, std::string(subject), std::move(message), 0});
}
/// The same for a fixed message: its string is made here, not at each of the many callers.
inline void add_warning(std::vector<warning>& warnings, warning_kind kind, std::string_view subject,
                        const char* message) {
    add_warning(warnings, kind, subject, std::string(message));
}
/// A warning that quotes the value it is about, cut to 40 characters:
/// "<what> '<value>'" ("not a PCIe link speed: '8.0 GT/s PCIe'").
inline void add_value_warning(std::vector<warning>& warnings, warning_kind kind, std::string_view subject,
                              std::string_view what, std::string_view value) {
    std::string message(what);
    message += " '";
    message += value.substr(0, 40);
    message += '\'';
    add_warning(warnings, kind, subject, std::move(message));
}

/// Reads a file whose absence is normal (a feature the machine lacks): nullopt and no
/// warning when it is missing; nullopt and a warning when it exists but cannot be read;
/// its first `cap` bytes and a warning when it is longer.
template <system_view S>
std::optional<std::string> read_optional_file(const S& sys, std::string_view path, std::size_t cap,
                                              std::vector<warning>& warnings) {
    auto r = sys.read_file(path, cap);
    switch (r.status) {
    case read_status::ok: return std::move(r.data);
    case read_status::truncated:
        add_warning(warnings, warning_kind::output_truncated, path, "file larger than the read cap; parsed its start");
        return std::move(r.data);
    case read_status::not_found: return std::nullopt;
    case read_status::permission_denied:
        add_warning(warnings, warning_kind::permission_denied, path, "not readable");
        return std::nullopt;
    case read_status::error: break;
    }
    add_warning(warnings, warning_kind::read_error, path, "unreadable");
    return std::nullopt;
}

/// Lists a folder whose absence is normal, as read_optional_file reads a file: nullopt
/// and no warning when nothing is there; nullopt and a warning when something is there
/// that cannot be listed (a link looping back on itself, a folder without permission, a
/// file where a folder belongs). The view answers a failed listing with nothing more, so
/// the cause is asked of a read of the same path: only "not found" is silent.
template <system_view S>
std::optional<std::vector<std::string>> list_optional_dir(const S& sys, std::string_view path,
                                                          std::vector<warning>& warnings) {
    auto names = sys.list_dir(path);
    if (names) return names;
    switch (sys.read_file(path, 0).status) {
    case read_status::not_found: break;
    case read_status::permission_denied:
        add_warning(warnings, warning_kind::permission_denied, path, "folder not listable");
        break;
    default:
        add_warning(warnings, warning_kind::read_error, path,
                    "present but not listable (a link that loops, or not a folder)");
        break;
    }
    return std::nullopt;
}

/// Sorts the names of a listed folder with `less`. The probes pass plain functions, never
/// lambdas, so that one copy of the sort serves every order they need. A heap sort: the
/// lists are short, and it compiles to half the code of std::sort's introsort, which
/// counts in the smallest builds (BENCHMARKS.md, binary size).
inline void sort_names(std::vector<std::string>& names, bool (*less)(const std::string&, const std::string&)) {
    std::make_heap(names.begin(), names.end(), less);
    std::sort_heap(names.begin(), names.end(), less);
}

/// Sorts numbers, as sort_names sorts names: one heap sort for every list detection
/// sorts (CPU ranges, port numbers).
inline void sort_numbers(std::vector<std::uint64_t>& numbers) {
    std::make_heap(numbers.begin(), numbers.end());
    std::sort_heap(numbers.begin(), numbers.end());
}

/// Plain string order, as a function for sort_names.
inline bool name_less(const std::string& a, const std::string& b) { return a < b; }

/// How many different strings `keys` holds (sorting it in passing). The CPU probes count
/// packages and cores with it, their ids written as strings: that reuses the names' sort.
inline std::size_t count_distinct(std::vector<std::string>& keys) {
    sort_names(keys, name_less);
    return static_cast<std::size_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
}

/// The last component of a path ("/a/b/" → "b").
constexpr std::string_view base_name(std::string_view path) noexcept {
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// `target` seen from directory `dir`: an absolute target replaces `dir`; "." and ".."
/// are folded, never above "/". The result is absolute and has no trailing slash.
inline std::string join_path(std::string_view dir, std::string_view target) {
    std::string out; // a slash before each component: ".." cuts at the last slash
    auto push = [&](std::string_view p) {
        while (!p.empty()) {
            const auto slash = p.find('/');
            const std::string_view part = p.substr(0, slash);
            p = slash == std::string_view::npos ? std::string_view{} : p.substr(slash + 1);
            if (part.empty() || part == "."sv) continue;
            if (part == ".."sv) {
                if (!out.empty()) out.resize(out.rfind('/'));
            } else {
                out += '/';
                out += part;
            }
        }
    };
    if (target.empty() || target.front() != '/') push(dir);
    push(target);
    return out.empty() ? std::string("/") : out;
}

/// Whether `s` could be a relative sysfs link target as a version control system stores
/// it when it cannot make links: one line of printable ASCII that starts with "../".
constexpr bool looks_like_stored_link(std::string_view s) noexcept {
    if (s.size() < 4 || !s.starts_with("../")) return false;
    for (char c : s)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return false;
    return true;
}

/// Where the sysfs link `path` points, as an absolute path; nullopt when `path` is not a
/// link. In a captured tree a link may have been stored as a small file holding its
/// target (git does this where links cannot be made); such a file is followed as well.
/// The target is joined lexically, which is exact when the folders above `path` are not
/// links themselves (/sys/block/<name>); elsewhere only the target's last name is sure.
template <system_view S>
std::optional<std::string> resolve_sysfs_link(const S& sys, std::string_view path) {
    const std::string parent = join_path(path, ".."sv);
    if (auto target = sys.read_link(path)) return join_path(parent, *target);
    const auto r = sys.read_file(path, 4096);
    if (r.status != read_status::ok) return std::nullopt;
    std::string_view t = r.data;
    if (!t.empty() && t.back() == '\n') t.remove_suffix(1);
    if (!looks_like_stored_link(t)) return std::nullopt;
    return join_path(parent, t);
}
} // namespace detail

/// The largest CPU number parse_cpulist accepts by default. Kernels are configured for a
/// few thousand CPUs at most (NR_CPUS); the cap leaves room for that and keeps a hostile
/// "0-4294967295" from allocating gigabytes.
inline constexpr std::uint32_t cpulist_max_cpus = 1u << 16;

namespace detail {
/// A range of CPUs as cpulist_ranges keeps it: first << 32 | last, which sorts as the pair
/// does.
constexpr std::uint32_t range_first(std::uint64_t r) noexcept { return static_cast<std::uint32_t>(r >> 32); }
constexpr std::uint32_t range_last(std::uint64_t r) noexcept { return static_cast<std::uint32_t>(r); }

/// The ranges of a cpulist, sorted and merged (see range_first); nullopt when it is not one.
inline std::optional<std::vector<std::uint64_t>> cpulist_ranges(std::string_view text, std::uint32_t max_cpus) {
    text = trim(text);
    std::vector<std::uint64_t> ranges;
    if (text.empty()) return ranges;
    while (true) {
        const auto comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        const auto dash = item.find('-');
        const auto first = parse_u64(item.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : parse_u64(item.substr(dash + 1));
        if (!first || !last || *first > *last || *last >= max_cpus) return std::nullopt;
        ranges.push_back(*first << 32 | *last);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
        if (ranges.size() > max_cpus) return std::nullopt; // more items than CPUs: not a real list
    }
    sort_numbers(ranges);
    std::size_t kept = 0; // merged in place: ranges[0, kept) are done
    for (const auto r : ranges) {
        if (kept == 0 || range_first(r) > std::uint64_t{range_last(ranges[kept - 1])} + 1) {
            ranges[kept++] = r; // a range of its own
            continue;
        }
        std::uint64_t& joined = ranges[kept - 1]; // r overlaps or adjoins it
        if (range_last(r) > range_last(joined)) joined = joined >> 32 << 32 | range_last(r);
    }
    ranges.erase(ranges.begin() + static_cast<std::ptrdiff_t>(kept), ranges.end());
    return ranges;
}
} // namespace detail

/// The kernel's cpulist format ("0-3,8,10-11", as /sys/devices/system/cpu/online,
/// node*/cpulist and Cpus_allowed_list print it) → the CPU numbers, sorted, each once.
/// Blank text is the empty set (a CPU-less NUMA node prints an empty line). nullopt for
/// anything else than numbers, "a-b" ranges and commas, for reversed ranges, and for CPU
/// numbers at or above `max_cpus`.
inline std::optional<std::vector<std::uint32_t>> parse_cpulist(std::string_view text,
                                                              std::uint32_t max_cpus = cpulist_max_cpus) {
    const auto ranges = detail::cpulist_ranges(text, max_cpus);
    if (!ranges) return std::nullopt;
    std::size_t count = 0; // at most max_cpus: the ranges are disjoint and below it
    for (const auto r : *ranges) count += std::size_t{detail::range_last(r)} - detail::range_first(r) + 1;
    std::vector<std::uint32_t> cpus(count);
    std::size_t at = 0;
    for (const auto r : *ranges)
        for (std::uint64_t c = detail::range_first(r); c <= detail::range_last(r); ++c)
            cpus[at++] = static_cast<std::uint32_t>(c);
    return cpus;
}

/// How many CPUs a cpulist names, without listing them; nullopt when it is not a cpulist.
inline std::optional<std::uint32_t> cpulist_count(std::string_view text, std::uint32_t max_cpus = cpulist_max_cpus) {
    const auto ranges = detail::cpulist_ranges(text, max_cpus);
    if (!ranges) return std::nullopt;
    std::uint32_t n = 0;
    for (const auto r : *ranges) n += detail::range_last(r) - detail::range_first(r) + 1;
    return n;
}

namespace detail {
/// How many CPUs two cpulists both name (a task's Cpus_allowed_list and the online mask);
/// `a`'s count when `b` is not a cpulist, nullopt when `a` is not one.
inline std::optional<std::uint32_t> cpulist_common_count(std::string_view a, std::string_view b) {
    const auto x = cpulist_ranges(a, cpulist_max_cpus);
    if (!x) return std::nullopt;
    const auto y = cpulist_ranges(b, cpulist_max_cpus);
    if (!y) return cpulist_count(a);
    std::uint32_t n = 0;
    for (std::size_t i = 0, j = 0; i < x->size() && j < y->size();) {
        const auto xf = range_first((*x)[i]), xl = range_last((*x)[i]);
        const auto yf = range_first((*y)[j]), yl = range_last((*y)[j]);
        const auto first = xf > yf ? xf : yf;
        const auto last = xl < yl ? xl : yl;
        if (first <= last) n += last - first + 1;
        if (xl < yl) ++i;
        else ++j;
    }
    return n;
}
} // namespace detail

static_assert(detail::parse_i64("-1") == -1);
static_assert(!detail::parse_i64("--1"));
static_assert(detail::parse_hex_attribute("0x10de\n") == 0x10deu);
static_assert(detail::base_name("/sys/bus/pci/drivers/nvidia") == "nvidia");

AI_HWACCEL_NAMESPACE_END
