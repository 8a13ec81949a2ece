// ai-hwaccel core: small constexpr text helpers shared by the tables.
//
// ASCII-only on purpose: names in the tables are ASCII, and input that is not (a tool
// printing Latin-1, hostile bytes) must compare unequal rather than be transformed by a
// locale. Everything here is constexpr and allocation-free.
#pragma once

#include "ai_hwaccel/config.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <tuple>
#include <type_traits>

AI_HWACCEL_NAMESPACE_BEGIN

// The library writes a literal it uses as text "like this"sv: its length is then known when
// compiled. A plain literal passed as a string_view costs a call to string_view's
// constructor, strlen and all, at each use (GCC at -Os does not fold it), which across
// detection's hundreds of paths and names is a kilobyte and more of code.
using namespace std::string_view_literals;

namespace detail {

constexpr char ascii_lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr char ascii_upper(char c) noexcept {
    return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}
constexpr bool ascii_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
constexpr bool ascii_alnum(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

constexpr std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && ascii_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && ascii_space(s.back())) s.remove_suffix(1);
    return s;
}

/// The length of the terminal escape sequence that `s` starts with, 0 when it starts with
/// none: ESC '[' then parameter and intermediate bytes (0x20 to 0x3f) and one final byte
/// (0x40 to 0x7e), as ECMA-48 writes the colours and underlines of a terminal; or ESC and
/// one byte. An unfinished sequence ends where its bytes stop fitting.
constexpr std::size_t escape_length(std::string_view s) noexcept {
    if (s.empty() || s[0] != '\x1b') return 0;
    if (s.size() == 1) return 1;
    if (s[1] != '[') return 2;
    std::size_t i = 2;
    while (i < s.size() && s[i] >= 0x20 && s[i] <= 0x3f) ++i;
    return i < s.size() && s[i] >= 0x40 && s[i] <= 0x7e ? i + 1 : i;
}
static_assert(escape_length("\x1b[4mGPU0") == 4 && escape_length("\x1b[0m") == 4 && escape_length("\x1b[1;31m") == 7 &&
              escape_length("\x1b(B") == 2 && escape_length("\x1b[") == 2 && escape_length("\x1b[12") == 4 &&
              escape_length("\x1b") == 1 && escape_length("GPU0") == 0 && escape_length("") == 0);

constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

/// ASCII spaces and punctuation, which loose comparison ignores. Bytes above 0x7f are
/// never ignored: they are compared exactly, so "café" is not "caf".
constexpr bool loose_ignored(char c) noexcept {
    return static_cast<unsigned char>(c) < 0x80 && !ascii_alnum(c);
}

/// Compares two names ignoring ASCII case, spaces and punctuation, so "RTX 4090",
/// "rtx-4090" and "RTX4090" are one name. Used for people-written names.
constexpr bool loose_equals(std::string_view a, std::string_view b) noexcept {
    std::size_t i = 0, j = 0;
    for (;;) {
        while (i < a.size() && loose_ignored(a[i])) ++i;
        while (j < b.size() && loose_ignored(b[j])) ++j;
        if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
        if (ascii_lower(a[i]) != ascii_lower(b[j])) return false;
        ++i;
        ++j;
    }
}

/// Whether `s` is written as a decimal number ("-12", "81559", "3.5"): one that a parser
/// then refuses is too large for its type, not malformed.
constexpr bool looks_decimal(std::string_view s) noexcept {
    if (!s.empty() && s.front() == '-') s.remove_prefix(1);
    bool digit = false, dot = false;
    for (char c : s) {
        if (c >= '0' && c <= '9') digit = true;
        else if (c == '.' && !dot) dot = true;
        else return false;
    }
    return digit;
}
static_assert(looks_decimal("99999999999999999999999") && looks_decimal("-1") && looks_decimal("1.5") &&
              !looks_decimal("") && !looks_decimal("0x10") && !looks_decimal("1.2.3") && !looks_decimal("-"));

/// True when `needle` occurs in `hay`, ignoring ASCII case.
constexpr bool icontains(std::string_view hay, std::string_view needle) noexcept {
    if (needle.empty()) return true;
    if (needle.size() > hay.size()) return false;
    for (std::size_t i = 0; i + needle.size() <= hay.size(); ++i)
        if (iequals(hay.substr(i, needle.size()), needle)) return true;
    return false;
}

/// The position of `s` among `words`, a list of words each ended by a NUL ("cpu\0isa\0"sv
/// holds two), or npos when it is none of them. A `switch` on it does what a chain of
/// `s == "…"` tests does, in less code: one call instead of one per word.
constexpr std::size_t word_index(std::string_view s, std::string_view words) noexcept {
    std::size_t i = 0;
    for (std::size_t at = 0; at < words.size(); ++i) {
        const std::size_t end = words.find('\0', at);
        const std::size_t stop = end == std::string_view::npos ? words.size() : end;
        if (words.substr(at, stop - at) == s) return i;
        at = stop + 1;
    }
    return std::string_view::npos;
}
/// Whether `s` is one of `words` (a list as word_index reads it).
constexpr bool one_of(std::string_view s, std::string_view words) noexcept {
    return word_index(s, words) != std::string_view::npos;
}
static_assert(word_index("isa", "cpu\0isa\0"sv) == 1 && word_index("isa", "cpu\0isa"sv) == 1 &&
              !one_of("cp", "cpu\0isa\0"sv) && !one_of("", "cpu\0isa\0"sv) && one_of("cpu", "cpu\0"sv));

/// `Count` strings packed into one array of `Chars` characters, each found by its offset.
/// For the columns of a constexpr table that a program reads at run time: a table of
/// string_views costs, in a position-independent program, a 24-byte relocation per string
/// and a place in memory written at load time; this costs two bytes per string.
template <std::size_t Count, std::size_t Chars>
struct packed_strings {
    static_assert(Chars < UINT16_MAX, "packed_strings: offsets are 16 bits");
    std::array<char, Chars> chars{};
    std::array<std::uint16_t, Count + 1> at{}; ///< string i is [at[i], at[i + 1])

    static constexpr std::size_t size() noexcept { return Count; }
    constexpr std::string_view operator[](std::size_t i) const noexcept {
        return {chars.data() + at[i], static_cast<std::size_t>(at[i + 1] - at[i])};
    }
};

/// The total length of the strings `column(row)` gives for every row of `table`: the
/// `Chars` argument of pack_column.
template <class Table, class Column>
constexpr std::size_t column_chars(const Table& table, Column column) noexcept {
    std::size_t n = 0;
    for (const auto& row : table) n += column(row).size();
    return n;
}

/// Packs `column(row)` of every row of `table`, in table order.
template <std::size_t Chars, class Table, class Column>
constexpr auto pack_column(const Table& table, Column column) noexcept {
    packed_strings<std::tuple_size_v<Table>, Chars> out;
    std::size_t n = 0, i = 0;
    for (const auto& row : table) {
        out.at[i++] = static_cast<std::uint16_t>(n);
        for (const char c : column(row)) out.chars[n++] = c;
    }
    out.at[i] = static_cast<std::uint16_t>(n);
    return out;
}

} // namespace detail

/// A short fixed-capacity list (aliases, tool names, device kinds in the tables). Only the
/// first `size()` slots are ever read: GCC 12 cannot copy a value-initialized class object
/// out of a partially braced std::array inside a constant expression, and this type never
/// asks it to.
namespace detail {
// Deliberately not constexpr: reaching it while initializing a constexpr table makes the
// initializer non-constant, so an over-long list is a compile-time error.
inline void fixed_list_overflow() noexcept { AI_HWACCEL_ASSERT(false && "fixed_list: too many values"); }
} // namespace detail

template <class T, std::size_t N>
struct fixed_list {
    /// The smallest unsigned type that counts to N: the catalogue's lists of two-byte PCI
    /// ids take 14 bytes instead of 24.
    using count_type = std::conditional_t<(N < 256), std::uint8_t, std::size_t>;
    std::array<T, N> items{};
    count_type count = 0;

    constexpr fixed_list() noexcept = default;
    /// One constructor for every length: a variadic one would be instantiated once per
    /// distinct tuple of string-literal sizes, which costs compile time across the tables.
    constexpr fixed_list(std::initializer_list<T> values) noexcept {
        for (const T& v : values) {
            if (count == N) detail::fixed_list_overflow(); // not constexpr: a compile error in a table
            else items[count++] = v;
        }
    }

    constexpr const T* begin() const noexcept { return items.data(); }
    constexpr const T* end() const noexcept { return items.data() + count; }
    constexpr std::size_t size() const noexcept { return count; }
    constexpr bool empty() const noexcept { return count == 0; }
    constexpr T operator[](std::size_t i) const noexcept { return items[i]; }
    constexpr bool contains(const T& v) const noexcept {
        for (std::size_t i = 0; i < count; ++i)
            if (items[i] == v) return true;
        return false;
    }
};
/// A short fixed-capacity list of names, as the tables hold them (aliases, tools, paths):
/// fixed_list's interface, its names given as string literals (or other NUL-terminated
/// text that outlives the list) and kept as pointers. Half a string_view each, and no
/// count (the names run to the first empty slot): the device catalogue's six alias slots
/// take 48 bytes a row instead of 96, and a table of pointers costs its binary that much
/// less relocated data. Reading a name measures it.
template <std::size_t N>
struct name_list {
    std::array<const char*, N> items{}; ///< the names, then nullptr

    /// The names in order, each read as a string_view.
    struct iterator {
        using value_type = std::string_view;
        using difference_type = std::ptrdiff_t;
        using reference = std::string_view;
        const char* const* at = nullptr;
        constexpr std::string_view operator*() const noexcept { return *at; }
        constexpr iterator& operator++() noexcept {
            ++at;
            return *this;
        }
        constexpr iterator operator++(int) noexcept {
            iterator old = *this;
            ++at;
            return old;
        }
        friend constexpr bool operator==(iterator a, iterator b) noexcept { return a.at == b.at; }
    };

    constexpr name_list() noexcept = default;
    constexpr name_list(std::initializer_list<const char*> values) noexcept {
        std::size_t n = 0;
        for (const char* v : values) {
            if (n == N) detail::fixed_list_overflow(); // not constexpr: a compile error in a table
            else items[n++] = v;
        }
    }

    constexpr std::size_t size() const noexcept {
        std::size_t n = 0;
        while (n < N && items[n]) ++n;
        return n;
    }
    constexpr iterator begin() const noexcept { return {items.data()}; }
    constexpr iterator end() const noexcept { return {items.data() + size()}; }
    constexpr bool empty() const noexcept { return !items[0]; }
    constexpr std::string_view operator[](std::size_t i) const noexcept { return items[i]; }
    constexpr bool contains(std::string_view v) const noexcept {
        for (std::size_t i = 0; i < N && items[i]; ++i)
            if (std::string_view(items[i]) == v) return true;
        return false;
    }
};

/// A constant view of a table stored as a plain array: what std::span<const T> would be,
/// without <span>'s compile-time cost in the light headers.
template <class T>
struct table_ref {
    const T* first = nullptr;
    std::size_t count = 0;

    constexpr table_ref() noexcept = default;
    template <std::size_t N>
    constexpr table_ref(const T (&rows)[N]) noexcept : first(rows), count(N) {} // NOLINT

    constexpr const T* begin() const noexcept { return first; }
    constexpr const T* end() const noexcept { return first + count; }
    constexpr const T* data() const noexcept { return first; }
    constexpr std::size_t size() const noexcept { return count; }
    constexpr bool empty() const noexcept { return count == 0; }
    constexpr const T& operator[](std::size_t i) const noexcept { return first[i]; }
};

namespace detail {
/// Slot 0 is a row's name, slots 1… its aliases.
template <class Row>
constexpr std::string_view name_slot(const Row& r, std::size_t k) noexcept {
    return k == 0 ? std::string_view(r.name) : r.aliases[k - 1];
}
/// FNV-1a over exactly the bytes loose_equals compares (ASCII letters lowered): loosely
/// equal names hash equal.
constexpr std::uint64_t loose_hash(std::string_view s) noexcept {
    std::uint64_t h = 14695981039346656037ull;
    for (char c : s) {
        if (loose_ignored(c)) continue;
        h ^= static_cast<unsigned char>(ascii_lower(c));
        h *= 1099511628211ull;
    }
    return h;
}

/// True when no two names or aliases in a table (rows with `name` and `aliases`) are
/// equal as loose_equals sees them, and no name or alias is empty. Sorts hashes so that
/// it stays O(n log n) inside a constant expression; equal hashes are compared in full.
template <std::size_t Slots, class Table>
constexpr bool names_are_unique(const Table& t) noexcept {
    struct key {
        std::uint64_t hash;
        std::size_t row, slot;
    };
    std::array<key, Slots> keys{};
    std::size_t n = 0;
    for (std::size_t i = 0; i < t.size(); ++i)
        for (std::size_t k = 0; k <= t[i].aliases.size(); ++k) {
            const std::string_view s = name_slot(t[i], k);
            if (trim(s).empty() || n == Slots) return false;
            keys[n++] = key{loose_hash(s), i, k};
        }
    // Shell sort by hash: std::sort is constexpr in C++20 but would pull <algorithm> into
    // this light header.
    for (std::size_t gap = n / 2; gap > 0; gap /= 2)
        for (std::size_t i = gap; i < n; ++i)
            for (std::size_t j = i; j >= gap && keys[j - gap].hash > keys[j].hash; j -= gap) {
                const key tmp = keys[j];
                keys[j] = keys[j - gap];
                keys[j - gap] = tmp;
            }
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n && keys[j].hash == keys[i].hash; ++j)
            if (loose_equals(name_slot(t[keys[i].row], keys[i].slot), name_slot(t[keys[j].row], keys[j].slot)))
                return false;
    return true;
}
} // namespace detail

static_assert(detail::loose_equals("RTX 4090", "rtx-4090"));
static_assert(detail::loose_equals("H100 SXM", "h100sxm"));
static_assert(!detail::loose_equals("H100", "H100 SXM"));
static_assert(detail::trim("  x \n") == "x");
static_assert(detail::icontains("NVIDIA GeForce RTX 4090", "geforce"));

AI_HWACCEL_NAMESPACE_END
