#include "ai_hwaccel/core/text.hpp"

#include <doctest/doctest.h>

#include <array>
#include <string_view>

namespace ah = ai_hwaccel;

TEST_CASE("loose_equals") {
    CHECK(ah::detail::loose_equals("NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090"));
    CHECK(ah::detail::loose_equals("", "--"));
    CHECK_FALSE(ah::detail::loose_equals("MI300X", "MI300A"));
    CHECK_FALSE(ah::detail::loose_equals("MI300", "MI300X"));
    // Bytes above 0x7f are compared exactly: never skipped, never case-folded.
    CHECK_FALSE(ah::detail::loose_equals("caf\xc3\xa9", "caf"));
    CHECK_FALSE(ah::detail::loose_equals("caf\xc3\xa9", "CAF\xc3\x89"));
    CHECK(ah::detail::loose_equals("caf\xc3\xa9", "CAF \xc3\xa9"));
    CHECK(ah::detail::loose_hash("Caf\xc3\xa9") == ah::detail::loose_hash("c-af\xc3\xa9"));
}

TEST_CASE("fixed_list") {
    constexpr ah::name_list<3> l{"a", "bb"};
    static_assert(l.size() == 2 && l[1] == "bb" && l.contains("a") && !l.contains("c"));
    constexpr ah::name_list<3> empty{};
    static_assert(empty.empty() && empty.begin() == empty.end());
    // Full: the names run to the end, with no slot left for an end mark.
    constexpr ah::name_list<3> full{"a", "bb", "ccc"};
    static_assert(full.size() == 3 && full.contains("ccc") && !full.empty() && full[2] == "ccc");
    std::size_t n = 0;
    for (const auto name : full) n += name.size();
    CHECK(n == 6);
    // Only the pointers: no count beside them.
    static_assert(sizeof(ah::name_list<6>) == 6 * sizeof(const char*));
}

namespace {
struct row {
    std::string_view name;
    ah::name_list<2> aliases;
};
} // namespace

TEST_CASE("names_are_unique") {
    constexpr std::array<row, 2> good{{{"RTX 4090", {"AD102"}}, {"RTX 4080", {"AD103"}}}};
    static_assert(ah::detail::names_are_unique<6>(good));
    constexpr std::array<row, 2> clash_across_rows{{{"RTX 4090", {}}, {"RTX 4080", {"rtx-4090"}}}};
    static_assert(!ah::detail::names_are_unique<6>(clash_across_rows));
    constexpr std::array<row, 1> clash_within_row{{{"H100 SXM", {"h100sxm"}}}};
    static_assert(!ah::detail::names_are_unique<6>(clash_within_row));
    constexpr std::array<row, 1> empty_alias{{{"X", {""}}}};
    static_assert(!ah::detail::names_are_unique<6>(empty_alias));
    CHECK(ah::detail::names_are_unique<6>(good));
}

// pack_column: every string back, in order, empty ones included, in a constant expression.
static_assert([] {
    constexpr std::array<std::string_view, 4> column{"cuda", "", "Intel GPU (oneAPI)", "x"};
    constexpr auto same = [](std::string_view s) { return s; };
    constexpr auto packed = ah::detail::pack_column<ah::detail::column_chars(column, same)>(column, same);
    static_assert(packed.size() == 4 && packed.chars.size() == 23);
    for (std::size_t i = 0; i < column.size(); ++i)
        if (packed[i] != column[i]) return false;
    return true;
}());

static_assert(ai_hwaccel::detail::ascii_upper('a') == 'A' && ai_hwaccel::detail::ascii_upper('_') == '_' &&
              ai_hwaccel::detail::ascii_upper('Z') == 'Z');
