// ai-hwaccel: build configuration.
//
// Every user switch of the library lives here, each one `#ifndef`-defaulted so that a
// definition on the command line, from CMake, or in the file named by
// AI_HWACCEL_CONFIG_FILE wins. This header also holds the version (the only place it is
// written) and the inline ABI namespace that folds the version and the compiled-in
// backend set into every mangled name, so two translation units built with different
// backend switches cannot silently share symbols. See docs in README.md, "Configuration".
#pragma once

#ifdef AI_HWACCEL_CONFIG_FILE
#include AI_HWACCEL_CONFIG_FILE
#endif

// ---------------------------------------------------------------------------------------
// Version: the one place it is written. tools/ and the CMake project read it from here.
#define AI_HWACCEL_VERSION_MAJOR 0
#define AI_HWACCEL_VERSION_MINOR 1
#define AI_HWACCEL_VERSION_PATCH 0
#define AI_HWACCEL_VERSION_STRING "0.1.0"

// ---------------------------------------------------------------------------------------
// Backends. Each AI_HWACCEL_BACKEND_<NAME> is 0 or 1. AI_HWACCEL_BACKENDS_NONE=1 makes
// every backend default to 0 (embedded builds then switch on only what they need).
#ifndef AI_HWACCEL_BACKENDS_NONE
#define AI_HWACCEL_BACKENDS_NONE 0
#endif
#if AI_HWACCEL_BACKENDS_NONE
#define AI_HWACCEL_DETAIL_BACKEND_DEFAULT 0
#else
#define AI_HWACCEL_DETAIL_BACKEND_DEFAULT 1
#endif

#ifndef AI_HWACCEL_BACKEND_CUDA
#define AI_HWACCEL_BACKEND_CUDA AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_ROCM
#define AI_HWACCEL_BACKEND_ROCM AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_INTEL_GPU
#define AI_HWACCEL_BACKEND_INTEL_GPU AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_APPLE
#define AI_HWACCEL_BACKEND_APPLE AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_VULKAN
#define AI_HWACCEL_BACKEND_VULKAN AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_TPU
#define AI_HWACCEL_BACKEND_TPU AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_GAUDI
#define AI_HWACCEL_BACKEND_GAUDI AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_NEURON
#define AI_HWACCEL_BACKEND_NEURON AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_INTEL_NPU
#define AI_HWACCEL_BACKEND_INTEL_NPU AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_AMD_XDNA
#define AI_HWACCEL_BACKEND_AMD_XDNA AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_QUALCOMM
#define AI_HWACCEL_BACKEND_QUALCOMM AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_CEREBRAS
#define AI_HWACCEL_BACKEND_CEREBRAS AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_GRAPHCORE
#define AI_HWACCEL_BACKEND_GRAPHCORE AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_GROQ
#define AI_HWACCEL_BACKEND_GROQ AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_SAMSUNG_NPU
#define AI_HWACCEL_BACKEND_SAMSUNG_NPU AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_MEDIATEK_APU
#define AI_HWACCEL_BACKEND_MEDIATEK_APU AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif
#ifndef AI_HWACCEL_BACKEND_WINDOWS
#define AI_HWACCEL_BACKEND_WINDOWS AI_HWACCEL_DETAIL_BACKEND_DEFAULT
#endif

// Each switch must be exactly 0 or 1: the ABI tag below pastes them as digits.
#define AI_HWACCEL_DETAIL_CHECK_BIT(x) ((x) == 0 || (x) == 1)
#if !(AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_CUDA) &&                                \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_ROCM) &&                                \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_INTEL_GPU) &&                           \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_APPLE) &&                               \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_VULKAN) &&                              \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_TPU) &&                                 \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_GAUDI) &&                               \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_NEURON) &&                              \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_INTEL_NPU) &&                           \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_AMD_XDNA) &&                            \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_QUALCOMM) &&                            \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_CEREBRAS) &&                            \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_GRAPHCORE) &&                           \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_GROQ) &&                                \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_SAMSUNG_NPU) &&                         \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_MEDIATEK_APU) &&                        \
      AI_HWACCEL_DETAIL_CHECK_BIT(AI_HWACCEL_BACKEND_WINDOWS))
#error "ai_hwaccel: every AI_HWACCEL_BACKEND_<NAME> must be defined as 0 or 1"
#endif
#undef AI_HWACCEL_DETAIL_CHECK_BIT

// ---------------------------------------------------------------------------------------
// Exceptions. Detection never throws whatever this says; the switch only decides what
// the few programmer-error paths (AI_HWACCEL_ASSERT) and the throwing convenience
// overloads do. Defaults to what the compiler was told.
#ifndef AI_HWACCEL_EXCEPTIONS
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define AI_HWACCEL_EXCEPTIONS 1
#else
#define AI_HWACCEL_EXCEPTIONS 0
#endif
#endif

// JSON support through nlohmann/json (io/ headers only; the core never needs it).
// Defaults to on when <nlohmann/json.hpp> is reachable.
#ifndef AI_HWACCEL_JSON
#if defined(__has_include)
#if __has_include(<nlohmann/json.hpp>)
#define AI_HWACCEL_JSON 1
#else
#define AI_HWACCEL_JSON 0
#endif
#else
#define AI_HWACCEL_JSON 0
#endif
#endif

// 1: the device and model catalogues keep each row's source, the URL its figures come
// from (`device_spec::source`, `model_spec::source`); 0 leaves the texts out of the
// program, every such field empty, for programs that never show them (the CLI: about
// 13 KB). The cloud instances keep their price sources, which `cost` prints. Set it alike
// in every translation unit of a program.
#ifndef AI_HWACCEL_TABLE_SOURCES
#define AI_HWACCEL_TABLE_SOURCES 1
#endif
#if AI_HWACCEL_TABLE_SOURCES
#define AI_HWACCEL_SOURCE(text) text
#else
#define AI_HWACCEL_SOURCE(text) ""
#endif

// Programmer-error checks. Override to route them into your own assertion machinery.
#ifndef AI_HWACCEL_ASSERT
#include <cassert>
#define AI_HWACCEL_ASSERT(cond) assert(cond)
#endif

// 1: the whole-catalogue checks of core/catalogue.hpp run as
// static_asserts in every translation unit; 0 leaves them to the test suite, which sets 1.
#ifndef AI_HWACCEL_CHECK_TABLES
#define AI_HWACCEL_CHECK_TABLES 0
#endif

// ---------------------------------------------------------------------------------------
// Target operating system: what this build can do, never what the machine has.
#if defined(__linux__)
#define AI_HWACCEL_OS_LINUX 1
#else
#define AI_HWACCEL_OS_LINUX 0
#endif
#if defined(__APPLE__)
#define AI_HWACCEL_OS_MACOS 1
#else
#define AI_HWACCEL_OS_MACOS 0
#endif
#if defined(_WIN32)
#define AI_HWACCEL_OS_WINDOWS 1
#else
#define AI_HWACCEL_OS_WINDOWS 0
#endif

// ---------------------------------------------------------------------------------------
// ABI namespace: ai_hwaccel::v<major>_<minor>_<patch>_b<backend bits>. The backend bits
// are the seventeen 0/1 switches above, in backend-table order, pasted as digits.
#define AI_HWACCEL_DETAIL_CAT2(a, b) a##b
#define AI_HWACCEL_DETAIL_CAT(a, b) AI_HWACCEL_DETAIL_CAT2(a, b)
#define AI_HWACCEL_DETAIL_ABI_NAME(ma, mi, pa, b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10,  \
                                   b11, b12, b13, b14, b15, b16)                             \
    v##ma##_##mi##_##pa##_b##b0##b1##b2##b3##b4##b5##b6##b7##b8##b9##b10##b11##b12##b13##b14##b15##b16
#define AI_HWACCEL_DETAIL_ABI_EXPAND(...) AI_HWACCEL_DETAIL_ABI_NAME(__VA_ARGS__)

#ifndef AI_HWACCEL_ABI_NAMESPACE
#define AI_HWACCEL_ABI_NAMESPACE                                                             \
    AI_HWACCEL_DETAIL_ABI_EXPAND(                                                            \
        AI_HWACCEL_VERSION_MAJOR, AI_HWACCEL_VERSION_MINOR, AI_HWACCEL_VERSION_PATCH,        \
        AI_HWACCEL_BACKEND_CUDA, AI_HWACCEL_BACKEND_ROCM, AI_HWACCEL_BACKEND_INTEL_GPU,      \
        AI_HWACCEL_BACKEND_APPLE, AI_HWACCEL_BACKEND_VULKAN, AI_HWACCEL_BACKEND_TPU,         \
        AI_HWACCEL_BACKEND_GAUDI, AI_HWACCEL_BACKEND_NEURON, AI_HWACCEL_BACKEND_INTEL_NPU,   \
        AI_HWACCEL_BACKEND_AMD_XDNA, AI_HWACCEL_BACKEND_QUALCOMM, AI_HWACCEL_BACKEND_CEREBRAS, \
        AI_HWACCEL_BACKEND_GRAPHCORE, AI_HWACCEL_BACKEND_GROQ,                               \
        AI_HWACCEL_BACKEND_SAMSUNG_NPU, AI_HWACCEL_BACKEND_MEDIATEK_APU,                     \
        AI_HWACCEL_BACKEND_WINDOWS)
#endif

#define AI_HWACCEL_NAMESPACE_BEGIN                                                           \
    namespace ai_hwaccel {                                                                   \
    inline namespace AI_HWACCEL_ABI_NAMESPACE {
#define AI_HWACCEL_NAMESPACE_END                                                             \
    }                                                                                        \
    }

#include <cstdint>

AI_HWACCEL_NAMESPACE_BEGIN

/// The library version, as numbers and as text.
struct version_info {
    int major;
    int minor;
    int patch;
    const char* text;
};
inline constexpr version_info version{AI_HWACCEL_VERSION_MAJOR, AI_HWACCEL_VERSION_MINOR,
                                      AI_HWACCEL_VERSION_PATCH, AI_HWACCEL_VERSION_STRING};

/// Bit i is set when backend i (in `backend_id` order) is compiled into this build.
inline constexpr std::uint32_t compiled_backend_mask =
    (std::uint32_t{AI_HWACCEL_BACKEND_CUDA} << 0) | (std::uint32_t{AI_HWACCEL_BACKEND_ROCM} << 1) |
    (std::uint32_t{AI_HWACCEL_BACKEND_INTEL_GPU} << 2) |
    (std::uint32_t{AI_HWACCEL_BACKEND_APPLE} << 3) |
    (std::uint32_t{AI_HWACCEL_BACKEND_VULKAN} << 4) | (std::uint32_t{AI_HWACCEL_BACKEND_TPU} << 5) |
    (std::uint32_t{AI_HWACCEL_BACKEND_GAUDI} << 6) |
    (std::uint32_t{AI_HWACCEL_BACKEND_NEURON} << 7) |
    (std::uint32_t{AI_HWACCEL_BACKEND_INTEL_NPU} << 8) |
    (std::uint32_t{AI_HWACCEL_BACKEND_AMD_XDNA} << 9) |
    (std::uint32_t{AI_HWACCEL_BACKEND_QUALCOMM} << 10) |
    (std::uint32_t{AI_HWACCEL_BACKEND_CEREBRAS} << 11) |
    (std::uint32_t{AI_HWACCEL_BACKEND_GRAPHCORE} << 12) |
    (std::uint32_t{AI_HWACCEL_BACKEND_GROQ} << 13) |
    (std::uint32_t{AI_HWACCEL_BACKEND_SAMSUNG_NPU} << 14) |
    (std::uint32_t{AI_HWACCEL_BACKEND_MEDIATEK_APU} << 15) |
    (std::uint32_t{AI_HWACCEL_BACKEND_WINDOWS} << 16);

AI_HWACCEL_NAMESPACE_END
