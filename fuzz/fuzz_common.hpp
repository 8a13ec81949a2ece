// Shared by the fuzz targets: the input as text, and a selector byte that lets one
// target reach many parsers (libFuzzer mutates the byte like any other, so every parser
// gets its share of the run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) noexcept {
    return size == 0 ? std::string_view{} : std::string_view(reinterpret_cast<const char*>(data), size);
}

/// The first byte picks a parser, the rest is its input. Empty input: selector 0, no text.
struct selected {
    std::uint8_t selector = 0;
    std::string_view text;
};

inline selected select(const std::uint8_t* data, std::size_t size) noexcept {
    if (size == 0) return {};
    return {data[0], as_text(data + 1, size - 1)};
}

/// Splits `text` at its first NUL into two inputs (for parsers that take two strings).
inline std::pair<std::string_view, std::string_view> split_nul(std::string_view text) noexcept {
    const auto nul = text.find('\0');
    if (nul == std::string_view::npos) return {text, {}};
    return {text.substr(0, nul), text.substr(nul + 1)};
}

/// Keeps the optimiser from dropping a result the harness does not otherwise use.
template <class T>
inline void consume(const T& value) noexcept {
    asm volatile("" : : "g"(&value) : "memory");
}

} // namespace fuzz
