// ai-hwaccel core: a string with its storage inside the object.
//
// Profiles keep device names, UUIDs and versions in inplace_string<N> rather than
// std::string so that a profile is a literal type: a registry of profiles can be built,
// queried and planned over in a constant expression, and embedded builds never allocate
// for it. Text longer than the capacity is cut at a byte boundary that does not split a
// UTF-8 sequence, and `assign` says when that happened.
#pragma once

#include "ai_hwaccel/config.hpp"

#include <cstddef>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {
/// A UTF-8 continuation byte (10xxxxxx): not the first byte of a character.
constexpr bool utf8_continuation(char c) noexcept { return (static_cast<unsigned char>(c) & 0xC0u) == 0x80u; }

/// The first `cap` bytes of `s` (all of it when shorter), less the start of a character
/// the cut would split: no half UTF-8 sequence is left at the end. A character has three
/// continuation bytes at most, so the cut moves back three bytes at most: a run of stray
/// continuation bytes (no character at all) is cut there, not dropped whole.
constexpr std::string_view utf8_prefix(std::string_view s, std::size_t cap) noexcept {
    if (s.size() <= cap) return s;
    std::size_t n = cap;
    for (int k = 0; k < 3 && n > 0 && utf8_continuation(s[n]); ++k) --n;
    return s.substr(0, n);
}
static_assert(utf8_prefix("ab\xE2\x82\xAC", 3) == "ab" && utf8_prefix("ab\xE2\x82\xAC", 4) == "ab");
static_assert(utf8_prefix("\x80\x80\x80\x80\x80\x80", 5).size() == 2); // no character: three bytes back

/// The length of the well-formed UTF-8 character that starts at `s[i]` (RFC 3629: no
/// overlong forms, no surrogates, nothing above U+10FFFF), or 0 where none does: a stray
/// continuation byte, a bad lead byte, a sequence cut short or malformed.
constexpr std::size_t utf8_length_at(std::string_view s, std::size_t i) noexcept {
    if (i >= s.size()) return 0;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) return 1;
    std::size_t extra = 0;
    unsigned char lo = 0x80, hi = 0xBF; // the range of the first continuation byte
    if (c >= 0xC2 && c <= 0xDF) {
        extra = 1;
    } else if (c == 0xE0) {
        extra = 2;
        lo = 0xA0; // below: an overlong form
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
        extra = 2;
    } else if (c == 0xED) {
        extra = 2;
        hi = 0x9F; // above: a surrogate
    } else if (c == 0xF0) {
        extra = 3;
        lo = 0x90; // below: an overlong form
    } else if (c >= 0xF1 && c <= 0xF3) {
        extra = 3;
    } else if (c == 0xF4) {
        extra = 3;
        hi = 0x8F; // above: past U+10FFFF
    } else {
        return 0;
    }
    if (s.size() - i <= extra) return 0;
    for (std::size_t k = 1; k <= extra; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if (k == 1 ? (b < lo || b > hi) : !utf8_continuation(s[i + k])) return 0;
    }
    return extra + 1;
}
static_assert(utf8_length_at("\xC3\xA9", 0) == 2 && utf8_length_at("\xF0\x9F\x98\x80", 0) == 4);
static_assert(utf8_length_at("\xC0\x80", 0) == 0 && utf8_length_at("\xED\xA0\x80", 0) == 0);
static_assert(utf8_length_at("\xF4\x90\x80\x80", 0) == 0 && utf8_length_at("\xE2\x82", 0) == 0);
} // namespace detail

template <std::size_t Capacity>
class inplace_string {
    static_assert(Capacity > 0 && Capacity < 256, "inplace_string: capacity must be 1..255");

public:
    constexpr inplace_string() noexcept = default;
    constexpr inplace_string(std::string_view s) noexcept { assign(s); } // NOLINT: implicit by design
    constexpr inplace_string(const char* s) noexcept { assign(std::string_view(s)); }

    /// Copies `s`, cutting it to capacity; returns false when it had to cut.
    constexpr bool assign(std::string_view s) noexcept {
        const bool cut = s.size() > Capacity;
        const std::string_view kept = detail::utf8_prefix(s, Capacity);
        const std::size_t n = kept.size();
        for (std::size_t i = 0; i < n; ++i) data_[i] = kept[i];
        for (std::size_t i = n; i <= Capacity; ++i) data_[i] = '\0';
        size_ = static_cast<unsigned char>(n);
        return !cut;
    }

    constexpr std::string_view view() const noexcept { return {data_, size_}; }
    constexpr operator std::string_view() const noexcept { return view(); } // NOLINT
    constexpr const char* c_str() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    static constexpr std::size_t capacity() noexcept { return Capacity; }

    friend constexpr bool operator==(const inplace_string& a, const inplace_string& b) noexcept {
        return a.view() == b.view();
    }
    friend constexpr bool operator==(const inplace_string& a, std::string_view b) noexcept {
        return a.view() == b;
    }

private:
    char data_[Capacity + 1]{};
    unsigned char size_ = 0;
};

static_assert(inplace_string<4>("abcdef").view() == "abcd");
static_assert(inplace_string<8>("abc").size() == 3);
static_assert(inplace_string<3>("a\xc3\xa9z").view() == "a\xc3\xa9");
static_assert(inplace_string<2>("a\xc3\xa9").view() == "a"); // never half a code point

AI_HWACCEL_NAMESPACE_END
