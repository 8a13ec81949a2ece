#include "ai_hwaccel/detect/capture.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

namespace ah = ai_hwaccel;
namespace fmt = ah::detail::formats;

TEST_CASE("capture helpers: key lines and the first line") {
    CHECK(fmt::has_key_line("processor\t: 0\nflags : avx\n", "processor"));
    CHECK(fmt::has_key_line("a: 1\r\nMemTotal:  5 kB\r\n", "MemTotal"));
    CHECK_FALSE(fmt::has_key_line("processors: 2\n", "processor")); // the whole key only
    CHECK_FALSE(fmt::has_key_line("processor 0\n", "processor"));   // no colon
    CHECK_FALSE(fmt::has_key_line("", "processor"));
    CHECK(fmt::first_non_blank_line("\n  \r\n  MemTotal: 1 kB\nx\n") == "MemTotal: 1 kB");
    CHECK(fmt::first_non_blank_line("\n\n").empty());
    CHECK(fmt::first_non_blank_line(std::string("\0x", 2)) == std::string("\0x", 2));
}

TEST_CASE("capture helpers: nothing_found names the format") {
    ah::capture_parse out;
    out.format = "lscpu";
    fmt::nothing_found(out, "CPU description");
    REQUIRE(out.warnings.size() == 1);
    CHECK(out.warnings[0].kind == ah::warning_kind::parse_error);
    CHECK(out.warnings[0].subject == "lscpu");
    CHECK(out.warnings[0].message == "no CPU description found in the input");
}

TEST_CASE("printable: well-formed UTF-8 kept, every other byte a '?'") {
    using ah::detail::parsing::printable;
    bool changed = true;
    CHECK(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", changed) == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    CHECK_FALSE(changed);
    // Each of these decodes to something RFC 3629 forbids; a JSON reader refuses them.
    const char* const bad[] = {
        "\xc0\xaf",         // an overlong '/'
        "\xe0\x80\xaf",     // the same, in three bytes
        "\xed\xa0\x80",     // a surrogate (U+D800)
        "\xf4\x90\x80\x80", // past U+10FFFF
        "\xf8\x88\x80\x80", // a five-byte lead
        "\xe2\x82",         // cut short
        "\x80",             // a continuation byte alone
    };
    for (const char* b : bad) {
        const std::string_view in(b);
        CAPTURE(in.size());
        const auto out = printable(in, changed);
        CHECK(changed);
        CHECK(out == std::string(in.size(), '?'));
    }
    CHECK(printable("a\tb\x7f", changed) == "a?b?");
    CHECK(changed);
    // The cap never splits a character: one byte past it, the whole character goes.
    CHECK(printable("ab\xc3\xa9", changed, 3) == "ab");
    CHECK_FALSE(changed);
    CHECK(printable("ab\xc3\xa9", changed, 4) == "ab\xc3\xa9");
    // A run of stray continuation bytes is no character: the cut moves back three bytes at
    // most (a character's continuation), so the value is shown as '?'s, not dropped whole.
    CHECK(printable(std::string(50, '\x80'), changed, 40) == std::string(37, '?'));
    CHECK(changed);
    CHECK(printable("abc" + std::string(60, '\x80'), changed, 40) == "abc" + std::string(34, '?'));
}
