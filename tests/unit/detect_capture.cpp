#include "ai_hwaccel/detect/capture.hpp"

#include <doctest/doctest.h>

#include <string>

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
