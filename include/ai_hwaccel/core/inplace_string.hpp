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
/// the cut would split: no half UTF-8 sequence is left at the end.
constexpr std::string_view utf8_prefix(std::string_view s, std::size_t cap) noexcept {
    if (s.size() <= cap) return s;
    std::size_t n = cap;
    while (n > 0 && utf8_continuation(s[n])) --n;
    return s.substr(0, n);
}
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
