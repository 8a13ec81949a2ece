#include "ai_hwaccel/core/inplace_string.hpp"

#include <doctest/doctest.h>

#include <string>

namespace ah = ai_hwaccel;

TEST_CASE("inplace_string") {
    ah::inplace_string<8> s;
    CHECK(s.empty());
    CHECK(s.assign("12345678"));
    CHECK(s.view() == "12345678");
    CHECK(std::string(s.c_str()) == "12345678");
    CHECK_FALSE(s.assign("123456789")); // cut, and says so
    CHECK(s.size() == 8);
    CHECK(s.assign("ab"));
    CHECK(s.view() == "ab");
    CHECK(s.c_str()[2] == '\0'); // no stale bytes after a shorter assign
    CHECK(s == std::string_view("ab"));
    // A multi-byte character straddling the cut is dropped whole.
    ah::inplace_string<4> u;
    CHECK_FALSE(u.assign("abc\xe2\x82\xac"));
    CHECK(u.view() == "abc");
    // Embedded NUL and arbitrary bytes are kept as bytes.
    CHECK(s.assign(std::string_view("a\0b", 3)));
    CHECK(s.size() == 3);
}
