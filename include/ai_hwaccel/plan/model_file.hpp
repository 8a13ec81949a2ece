// ai-hwaccel plan: what a model file's header says about the model.
//
// Two readers of file headers, both bounded and distrustful of every size the file
// states:
//   - GGUF (llama.cpp; versions 2 and 3, little-endian), laid out as ggml's docs/gguf.md
//     describes: magic "GGUF", u32 version, u64 tensor count, u64 metadata count, the
//     typed key/value pairs, then one info per tensor (name, dims, ggml type, offset).
//     The reader takes the architecture from the metadata and counts parameters exactly
//     from the tensor infos (and bytes per ggml type from the block layouts).
//   - safetensors (Hugging Face): u64 little-endian header length, then that many bytes
//     of JSON naming each tensor's dtype and shape; plus, optionally, the model's
//     config.json for the architecture. These need nlohmann/json (AI_HWACCEL_JSON).
//
// Results own their text: `model_description` keeps the strings and hands out a
// `model_spec` whose views point into it through `spec()`, so copies and moves are safe
// (a spec must not outlive the description it came from). Hostile input is reported in
// `problems`, never trusted: lengths past the end, giant counts, nested arrays, negative
// or overflowing dimensions, duplicate keys and wrong types each stop or skip what they
// touch, and no allocation is larger than the input, but for JSON (a safetensors header, a
// config.json), which nlohmann/json holds as a tree: for hostile input (a long array of
// small numbers) about fifteen times its text (a 20 MB header of "0,": 318 MB resident
// at most), so some 1.5 GB for a header at the 100 MiB cap the safetensors format allows.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/inplace_string.hpp"
#include "ai_hwaccel/core/quantization.hpp"
#include "ai_hwaccel/plan/model.hpp"
#include "ai_hwaccel/plan/models.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#if AI_HWACCEL_JSON
#include <nlohmann/json.hpp>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// Something wrong with a model file; `offset` is the byte where it was seen.
struct model_file_problem {
    std::uint64_t offset = 0;
    std::string message;
    friend bool operator==(const model_file_problem&, const model_file_problem&) = default;
};

/// A model read from a file: owns its strings; `spec()` is a view into this object.
struct model_description {
    std::string id;     ///< as found ("general.name", or config.json's _name_or_path)
    std::string name;
    std::string family; ///< GGUF general.architecture or config.json model_type
    std::string source; ///< the file it came from, when read from disk
    model_spec shape;   ///< numbers only: its string views are ignored
    model_spec spec() const noexcept {
        model_spec s = shape;
        s.id = id;
        s.name = name;
        s.family = family;
        s.source = source;
        return s;
    }
};

/// Elements and bytes stored in one tensor type (a ggml type number or a safetensors dtype).
struct tensor_type_total {
    int ggml_type = -1;    ///< GGUF: ggml_type; -1 for safetensors
    std::string dtype;     ///< "Q4_K", "BF16", …
    std::uint64_t tensors = 0;
    std::uint64_t elements = 0;
    std::uint64_t bytes = 0;
    bool bytes_known = true; ///< false when the type's block layout is not known here
};

struct model_file_info {
    std::string_view format;       ///< "gguf" or "safetensors"
    std::uint32_t version = 0;     ///< GGUF version
    std::optional<model_description> model;
    int gguf_file_type = -1;       ///< general.file_type (llama_ftype), -1 if absent
    std::optional<quant_format> quant; ///< from gguf_file_type, when core knows it
    std::uint64_t tensor_count = 0;    ///< as the header states it (the files' headers, summed)
    std::uint64_t tensors_read = 0;    ///< tensor infos actually read
    std::uint64_t parameters = 0;      ///< sum of element counts of the tensors read
    bool parameters_exact = false;     ///< every tensor of the model was read and counted
    /// A file of a model split by gguf-split (split.count > 1): its 0-based number, the
    /// number of files and the tensors they hold together; 0 for a whole model. The
    /// counts above are then this file's alone (read_gguf_file reads the other files).
    std::uint64_t split_index = 0;
    std::uint64_t split_count = 0;
    std::uint64_t split_tensors = 0;
    std::vector<tensor_type_total> by_type;
    std::vector<model_file_problem> problems;
};

namespace detail::model_files {

inline constexpr std::size_t max_problems = 32;
inline constexpr std::uint64_t max_key_length = 65535;      // gguf.md: keys are < 2^16 bytes
inline constexpr std::uint64_t max_string_length = 1u << 24; // one metadata string
inline constexpr std::uint64_t max_tensor_name = 4096;
inline constexpr std::uint32_t max_dims = 8;
inline constexpr int max_array_depth = 3;

inline void add_problem(model_file_info& r, std::uint64_t offset, std::string message) {
    if (r.problems.size() < max_problems) r.problems.push_back({offset, std::move(message)});
}

/// Text safe to show: at most `cap` bytes, cut between UTF-8 characters; control bytes,
/// DEL and bytes that start no well-formed character become '?'.
inline std::string printable(std::string_view s, std::size_t cap = 256) {
    s = utf8_prefix(s, cap);
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_length_at(s, i);
        if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f))) {
            out += '?';
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

/// A bounded little-endian reader. Every read checks what is left; after the first
/// failure it stays failed and reads return zeros.
class cursor {
  public:
    explicit cursor(std::span<const std::byte> b) noexcept : bytes_(b) {}
    std::uint64_t offset() const noexcept { return pos_; }
    std::uint64_t left() const noexcept { return bytes_.size() - pos_; }
    bool ok() const noexcept { return ok_; }
    bool need(std::uint64_t n) noexcept {
        if (!ok_ || n > left()) ok_ = false;
        return ok_;
    }
    template <class T>
    T get() noexcept {
        if (!need(sizeof(T))) return T{};
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i)
            v |= static_cast<std::uint64_t>(std::to_integer<unsigned>(bytes_[pos_ + i])) << (8 * i);
        pos_ += sizeof(T);
        if constexpr (sizeof(T) == 8)
            return static_cast<T>(v);
        else
            return static_cast<T>(static_cast<std::make_unsigned_t<T>>(v));
    }
    bool skip(std::uint64_t n) noexcept {
        if (!need(n)) return false;
        pos_ += n;
        return true;
    }
    /// A u64-length string; nullopt when the length passes the end or `cap`.
    std::optional<std::string_view> str(std::uint64_t cap) noexcept {
        const auto n = get<std::uint64_t>();
        if (!ok_ || n > cap || !need(n)) {
            ok_ = false;
            return std::nullopt;
        }
        std::string_view s(reinterpret_cast<const char*>(bytes_.data()) + pos_, static_cast<std::size_t>(n));
        pos_ += n;
        return s;
    }

  private:
    std::span<const std::byte> bytes_;
    std::uint64_t pos_ = 0;
    bool ok_ = true;
};

// gguf.md gguf_metadata_value_type.
enum gguf_value : std::uint32_t {
    gv_u8 = 0, gv_i8 = 1, gv_u16 = 2, gv_i16 = 3, gv_u32 = 4, gv_i32 = 5, gv_f32 = 6,
    gv_bool = 7, gv_string = 8, gv_array = 9, gv_u64 = 10, gv_i64 = 11, gv_f64 = 12,
};
constexpr std::uint64_t gguf_scalar_size(std::uint32_t t) noexcept {
    switch (t) {
    case gv_u8: case gv_i8: case gv_bool: return 1;
    case gv_u16: case gv_i16: return 2;
    case gv_u32: case gv_i32: case gv_f32: return 4;
    case gv_u64: case gv_i64: case gv_f64: return 8;
    default: return 0;
    }
}

/// A metadata value as far as this reader cares: an integer, a string, or an array's
/// element type and length.
struct gguf_scalar {
    std::uint32_t type = 0;
    bool is_int = false;
    bool negative = false;
    std::uint64_t u = 0;
    std::string_view text;
    std::uint32_t array_type = 0;
    std::uint64_t array_length = 0;
    /// An array of integers (per-layer values such as head_count_kv): the largest and the
    /// sum (saturating), and whether one was negative.
    bool array_of_ints = false;
    bool array_negative = false;
    std::uint64_t array_max = 0;
    std::uint64_t array_sum = 0;
};

/// Reads (or skips) one value of type `t`. Arrays are walked, never stored; element
/// counts are bounded by the bytes left, so a giant count ends at the end of the input.
inline bool gguf_value_read(cursor& c, std::uint32_t t, int depth, gguf_scalar& out, model_file_info& r) {
    out.type = t;
    switch (t) {
    case gv_u8: out.is_int = true; out.u = c.get<std::uint8_t>(); break;
    case gv_u16: out.is_int = true; out.u = c.get<std::uint16_t>(); break;
    case gv_u32: out.is_int = true; out.u = c.get<std::uint32_t>(); break;
    case gv_u64: out.is_int = true; out.u = c.get<std::uint64_t>(); break;
    case gv_i8: case gv_i16: case gv_i32: case gv_i64: {
        std::int64_t v = 0;
        if (t == gv_i8) v = c.get<std::int8_t>();
        if (t == gv_i16) v = c.get<std::int16_t>();
        if (t == gv_i32) v = c.get<std::int32_t>();
        if (t == gv_i64) v = c.get<std::int64_t>();
        out.is_int = true;
        out.negative = v < 0;
        out.u = v < 0 ? 0 : static_cast<std::uint64_t>(v);
        break;
    }
    case gv_f32: case gv_f64: case gv_bool: c.skip(gguf_scalar_size(t)); break;
    case gv_string: {
        const auto s = c.str(max_string_length);
        if (s) out.text = *s;
        break;
    }
    case gv_array: {
        if (depth >= max_array_depth) {
            add_problem(r, c.offset(), "arrays nested too deep");
            return false;
        }
        const auto et = c.get<std::uint32_t>();
        const auto n = c.get<std::uint64_t>();
        if (!c.ok()) break;
        out.array_type = et;
        out.array_length = n;
        if (const auto size = gguf_scalar_size(et)) {
            if (n > c.left() / size) {
                add_problem(r, c.offset(), "array of " + std::to_string(n) + " elements runs past the end");
                c.skip(c.left() + 1);
                return false;
            }
            if (et == gv_u8 || et == gv_u16 || et == gv_u32 || et == gv_u64 || et == gv_i8 || et == gv_i16 ||
                et == gv_i32 || et == gv_i64) {
                out.array_of_ints = true;
                gguf_scalar e;
                for (std::uint64_t i = 0; i < n; ++i) {
                    gguf_value_read(c, et, depth + 1, e, r); // a scalar: bounded by the check above
                    out.array_negative = out.array_negative || e.negative;
                    out.array_max = e.u > out.array_max ? e.u : out.array_max;
                    out.array_sum = out.array_sum + e.u < out.array_sum ? ~std::uint64_t{0} : out.array_sum + e.u;
                }
            } else {
                c.skip(n * size);
            }
        } else if (et == gv_string || et == gv_array) {
            // Each element takes at least 8 bytes (a length), so the loop is bounded by the input.
            gguf_scalar inner;
            for (std::uint64_t i = 0; i < n && c.ok(); ++i)
                if (!gguf_value_read(c, et, depth + 1, inner, r)) return false;
        } else {
            add_problem(r, c.offset(), "array of unknown value type " + std::to_string(et));
            return false;
        }
        break;
    }
    default:
        add_problem(r, c.offset(), "unknown metadata value type " + std::to_string(t));
        return false;
    }
    if (!c.ok()) {
        add_problem(r, c.offset(), "truncated metadata value");
        return false;
    }
    return true;
}

/// ggml block layouts (ggml-common.h block_* structs; the uniform rows match
/// core/quantization.hpp's quant_table, which static_asserts them; the ternary TQ1_0 and
/// TQ2_0, which that table does not list, are 54 and 66 bytes per 256 weights by
/// ggml-common.h's static_asserts). 0 = unknown here.
struct ggml_layout {
    int type;
    std::string_view name;
    unsigned block_weights;
    unsigned block_bytes;
};
inline constexpr ggml_layout ggml_layouts[] = {
    {0, "F32", 1, 4},       {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},    {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},    {8, "Q8_0", 32, 34},    {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},  {11, "Q3_K", 256, 110}, {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210}, {15, "Q8_K", 256, 292}, {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74},
    {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50}, {20, "IQ4_NL", 32, 18}, {21, "IQ3_S", 256, 110},
    {22, "IQ2_S", 256, 82}, {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},     {25, "I16", 1, 2},
    {26, "I32", 1, 4},      {27, "I64", 1, 8},      {28, "F64", 1, 8},      {29, "IQ1_M", 256, 56},
    {30, "BF16", 1, 2},     {34, "TQ1_0", 256, 54}, {35, "TQ2_0", 256, 66}, {39, "MXFP4", 32, 17},
};
constexpr const ggml_layout* find_ggml_layout(std::uint32_t type) noexcept {
    for (const auto& l : ggml_layouts)
        if (static_cast<std::uint32_t>(l.type) == type) return &l;
    return nullptr;
}
// The uniform GGUF formats agree with core's table.
// (Compared by content: GCC's sanitizers make pointer comparisons non-constant.)
constexpr bool ggml_layouts_match_core() noexcept {
    for (const auto& q : quant_table) {
        if (q.ggml_type < 0 || q.block_weights == 0) continue;
        bool found = false;
        for (const auto& l : ggml_layouts)
            if (l.type == q.ggml_type)
                found = l.block_weights == q.block_weights && l.block_bytes == q.block_bytes;
        if (!found) return false;
    }
    return true;
}
static_assert(ggml_layouts_match_core());

// Rows of by_type beyond this are one "other types" row (real files use a handful of
// types; a hostile one could name a new one per tensor and make the search quadratic).
inline constexpr std::size_t max_type_rows = 64;
inline constexpr int other_types = -2;

inline tensor_type_total& type_slot(std::vector<tensor_type_total>& v, int ggml_type, std::string_view dtype) {
    for (auto& t : v)
        if (t.ggml_type == ggml_type && t.dtype == dtype) return t;
    if (v.size() >= max_type_rows) {
        for (auto& t : v)
            if (t.ggml_type == other_types) return t;
        v.push_back({other_types, "other types", 0, 0, 0, false});
        return v.back();
    }
    v.push_back({ggml_type, std::string(dtype), 0, 0, 0, true});
    return v.back();
}

inline void report_other_types(model_file_info& r) {
    for (const auto& t : r.by_type)
        if (t.ggml_type == other_types)
            add_problem(r, 0, "tensors of more than " + std::to_string(max_type_rows) + " types: " +
                                  std::to_string(t.tensors) + " of the rest counted as other types, bytes unknown");
}

/// Multiplies dimensions; nullopt on overflow.
inline std::optional<std::uint64_t> element_product(std::span<const std::uint64_t> dims) noexcept {
    std::uint64_t n = 1;
    for (auto d : dims) {
        if (d != 0 && n > ~std::uint64_t{0} / d) return std::nullopt;
        n *= d;
    }
    return n;
}

inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// What the tensor infos tell beyond the totals of model_file_info.
struct tensor_tally {
    bool has_output = false, has_embedding = false, has_ffn_gate = false, has_ffn_up = false;
    bool all_counted = true;
    std::uint64_t expert_elements = 0;
    /// Output rows (ne1) of the first dense ffn_up: twice the FFN width where the gate and
    /// up projections are one fused tensor (llama.cpp's phi3 and chatglm layouts).
    std::uint64_t ffn_up_rows = 0;
};

/// Counts `count` tensor infos at `c` into `r` (tensors_read, parameters, by_type) and
/// `t`; `where` starts each problem's message ("" for the first file of a split model).
inline void count_tensor_infos(cursor& c, std::uint64_t count, model_file_info& r, tensor_tally& t,
                               std::string_view where) {
    for (std::uint64_t i = 0; i < count; ++i) {
        const auto at = c.offset();
        const auto tname = c.str(max_tensor_name);
        const auto n_dims = c.get<std::uint32_t>();
        if (!tname || !c.ok()) {
            add_problem(r, at, std::string(where) + "truncated tensor info " + std::to_string(i) + " of " + std::to_string(count));
            t.all_counted = false;
            break;
        }
        if (n_dims > max_dims) {
            add_problem(r, at, std::string(where) + "tensor " + printable(*tname) + " has " + std::to_string(n_dims) + " dimensions");
            t.all_counted = false;
            break; // the layout of what follows is unknowable
        }
        std::uint64_t dims[max_dims] = {};
        bool negative = false;
        for (std::uint32_t d = 0; d < n_dims; ++d) {
            dims[d] = c.get<std::uint64_t>();
            if (dims[d] >> 63) negative = true; // ggml stores int64_t
        }
        const auto type = c.get<std::uint32_t>();
        c.get<std::uint64_t>(); // data offset: not needed to count
        if (!c.ok()) {
            add_problem(r, at, std::string(where) + "truncated tensor info " + std::to_string(i) + " of " + std::to_string(count));
            t.all_counted = false;
            break;
        }
        ++r.tensors_read;
        const auto elements = element_product(std::span<const std::uint64_t>(dims, n_dims));
        if (negative || !elements) {
            add_problem(r, at, std::string(where) + "tensor " + printable(*tname) + (negative ? " has a negative dimension" : "'s size overflows"));
            t.all_counted = false;
            continue;
        }
        const auto* layout = find_ggml_layout(type);
        auto& slot = type_slot(r.by_type, static_cast<int>(type), layout ? layout->name : "type " + std::to_string(type));
        ++slot.tensors;
        slot.elements = detail::sat_add(slot.elements, *elements);
        if (!layout || layout->block_weights == 0) {
            slot.bytes_known = false;
        } else if (n_dims > 0 && dims[0] % layout->block_weights != 0) {
            add_problem(r, at, std::string(where) + "tensor " + printable(*tname) + ": row not a whole number of blocks");
            slot.bytes_known = false;
        } else {
            slot.bytes = detail::sat_add(slot.bytes, detail::sat_mul(*elements / layout->block_weights, layout->block_bytes));
        }
        r.parameters = detail::sat_add(r.parameters, *elements);
        if (*tname == "output.weight"sv) t.has_output = true;
        if (tname->find("ffn_gate") != std::string::npos) t.has_ffn_gate = true;
        if (tname->find("ffn_up") != std::string::npos) t.has_ffn_up = true;
        if (t.ffn_up_rows == 0 && n_dims == 2 && ends_with(*tname, ".ffn_up.weight")) t.ffn_up_rows = dims[1];
        if (*tname == "token_embd.weight"sv) t.has_embedding = true;
        if (ends_with(*tname, "_exps.weight")) t.expert_elements = detail::sat_add(t.expert_elements, *elements);
    }
}

/// The header of a later file of a split model (gguf-split writes the metadata into the
/// first file and only the split.* keys into the others): its tensor count and its
/// split.no, with `c` left at its tensor infos; nullopt, reported, when it is not one.
struct later_file {
    std::uint64_t tensors = 0;
    std::uint64_t split_no = 0;
};
inline std::optional<later_file> read_later_header(cursor& c, model_file_info& r, std::string_view where) {
    const auto fail = [&](std::string what) {
        add_problem(r, c.offset(), std::string(where) + what);
        return std::nullopt;
    };
    std::byte magic[4] = {};
    for (auto& b : magic) b = static_cast<std::byte>(c.get<std::uint8_t>());
    if (!c.ok() || std::memcmp(magic, "GGUF", 4) != 0) return fail("not a GGUF file (no \"GGUF\" magic)");
    const auto version = c.get<std::uint32_t>();
    later_file out;
    out.tensors = c.get<std::uint64_t>();
    const auto kv_count = c.get<std::uint64_t>();
    if (!c.ok()) return fail("truncated header");
    if (version != 2 && version != 3) return fail("unsupported GGUF version " + std::to_string(version));
    bool numbered = false;
    for (std::uint64_t i = 0; i < kv_count; ++i) {
        const auto key = c.str(max_key_length);
        const auto type = c.get<std::uint32_t>();
        if (!key || !c.ok()) return fail("truncated metadata");
        gguf_scalar v;
        if (!gguf_value_read(c, type, 0, v, r)) return std::nullopt;
        if (*key == "split.no"sv && v.is_int && !v.negative) {
            out.split_no = v.u;
            numbered = true;
        }
    }
    if (!numbered) return fail("no split.no: not a file of a split model");
    return out;
}

/// The bytes of a later file of a split model that its header takes (up to the end of its
/// tensor infos), or all of them when that cannot be told: what read_gguf reads of it.
inline std::size_t later_header_size(std::span<const std::byte> bytes) {
    cursor c(bytes);
    model_file_info scratch;
    const auto h = read_later_header(c, scratch, "");
    if (!h || !c.ok()) return bytes.size();
    tensor_tally t;
    count_tensor_infos(c, h->tensors, scratch, t, "");
    return c.ok() && t.all_counted && c.offset() <= bytes.size() ? static_cast<std::size_t>(c.offset()) : bytes.size();
}

} // namespace detail::model_files

/// Reads a GGUF header from the first bytes of a file (the caller decides how many; the
/// tensor infos of large models take a few MB after a vocabulary of a few MB). Never
/// throws except std::bad_alloc; everything wrong lands in `problems`.
///
/// A model that gguf-split cut into files (split.count > 1) is read whole from the first
/// bytes of each: `bytes` the first file's, `more_files` the others' in order. Given only
/// some of them, the counts are those files' and the sizes are estimated from the shape,
/// with a problem that says so.
inline model_file_info read_gguf(std::span<const std::byte> bytes,
                                 std::span<const std::span<const std::byte>> more_files = {}) {
    using namespace detail::model_files;
    model_file_info r;
    r.format = "gguf";
    cursor c(bytes);
    if (bytes.size() < 4 || std::memcmp(bytes.data(), "GGUF", 4) != 0) {
        add_problem(r, 0, "not a GGUF file (no \"GGUF\" magic)");
        return r;
    }
    c.skip(4);
    const auto file_version = c.get<std::uint32_t>();
    if (!c.ok()) {
        add_problem(r, 4, "truncated header");
        return r;
    }
    r.version = file_version;
    if (file_version != 2 && file_version != 3) {
        // A byte-swapped 2 or 3 is a big-endian file, which gguf.md allows but cannot mark.
        const bool swapped = file_version == 0x02000000u || file_version == 0x03000000u;
        add_problem(r, 4, swapped ? "big-endian GGUF is not supported"
                                  : "unsupported GGUF version " + std::to_string(file_version));
        return r;
    }
    r.tensor_count = c.get<std::uint64_t>();
    const auto kv_count = c.get<std::uint64_t>();
    if (!c.ok()) {
        add_problem(r, c.offset(), "truncated header");
        return r;
    }

    // The keys this reader wants; the first occurrence wins and a repeat is a problem.
    std::string arch;
    std::string name;
    struct wanted {
        std::string_view suffix; // after "<arch>."
        std::uint64_t value = 0;
        bool seen = false;
        std::uint64_t layer_sum = 0, layer_count = 0; // given per layer: the sum and count (value: the largest)
    };
    wanted arch_keys[] = {
        {"block_count"}, {"embedding_length"}, {"feed_forward_length"}, {"attention.head_count"},
        {"attention.head_count_kv"}, {"attention.key_length"}, {"context_length"}, {"expert_count"},
        {"expert_used_count"}, {"expert_feed_forward_length"}, {"attention.kv_lora_rank"},
        {"rope.dimension_count"}, {"attention.sliding_window"}, {"attention.value_length"},
        {"attention.key_length_mla"},
    };
    enum { k_blocks, k_embd, k_ff, k_heads, k_heads_kv, k_key_len, k_ctx, k_experts, k_experts_used,
           k_expert_ff, k_kv_lora, k_rope_dims, k_swa, k_value_len, k_key_len_mla };
    // Values of <arch>.* keys can arrive before general.architecture: keep them by full key.
    struct pending {
        std::string key;
        std::uint64_t value;
        std::uint64_t layer_sum = 0, layer_count = 0;
    };
    std::vector<pending> arch_values;
    bool seen_arch = false, seen_name = false, seen_ftype = false, seen_tokens = false;
    std::uint64_t vocab = 0;
    // gguf-split's keys: this file is shard split_no (0-based) of split_count, which
    // together hold split_tensors tensors.
    struct split_key {
        std::string_view key;
        std::uint64_t value = 0;
        bool seen = false;
    } split[] = {{"split.no"}, {"split.count"}, {"split.tensors.count"}};

    for (std::uint64_t i = 0; i < kv_count; ++i) {
        const auto key_at = c.offset();
        const auto key = c.str(max_key_length);
        const auto type = c.get<std::uint32_t>();
        if (!key || !c.ok()) {
            add_problem(r, key_at, "truncated metadata (key " + std::to_string(i) + " of " + std::to_string(kv_count) + ")");
            return r;
        }
        gguf_scalar v;
        if (!gguf_value_read(c, type, 0, v, r)) return r;
        auto check_dup = [&](bool& seen) {
            if (seen) add_problem(r, key_at, "duplicate key " + printable(*key));
            const bool first = !seen;
            seen = true;
            return first;
        };
        auto wrong_type = [&](std::string_view expected) {
            add_problem(r, key_at, printable(*key) + " is not " + std::string(expected));
        };
        if (*key == "general.architecture"sv) {
            if (!check_dup(seen_arch)) continue;
            if (type != gv_string) wrong_type("a string");
            else arch = printable(v.text, 64);
        } else if (*key == "general.name"sv) {
            if (!check_dup(seen_name)) continue;
            if (type != gv_string) wrong_type("a string");
            else name = printable(v.text);
        } else if (*key == "general.file_type"sv) {
            if (!check_dup(seen_ftype)) continue;
            if (!v.is_int || v.negative || v.u > 0x7fffffff) wrong_type("a small non-negative integer");
            else r.gguf_file_type = static_cast<int>(v.u);
        } else if (*key == "tokenizer.ggml.tokens"sv) {
            if (!check_dup(seen_tokens)) continue;
            if (type != gv_array) wrong_type("an array");
            else vocab = v.array_length;
        } else if (key->starts_with("split.")) {
            for (auto& k : split)
                if (*key == k.key) {
                    if (!check_dup(k.seen)) break;
                    if (!v.is_int || v.negative) wrong_type("a non-negative integer");
                    else k.value = v.u;
                }
        } else if (key->find('.') != std::string_view::npos && key->substr(0, 8) != "general."sv &&
                   key->substr(0, 10) != "tokenizer."sv) {
            // Candidate <arch>.<suffix>: keep integers for the suffixes we want.
            const auto dot = key->find('.');
            const auto suffix = key->substr(dot + 1);
            for (const auto& w : arch_keys)
                if (suffix == w.suffix) {
                    bool dup = false;
                    for (const auto& p : arch_values)
                        if (p.key == *key) dup = true;
                    if (dup) {
                        add_problem(r, key_at, "duplicate key " + printable(*key));
                        break;
                    }
                    if (type == gv_array && v.array_of_ints && !v.array_negative && v.array_max <= 0xffffffffu &&
                        v.array_length > 0) {
                        // Per layer (head_count_kv of OpenELM, Jamba's 0 for its Mamba layers):
                        // the largest, and the sum for the KV cache.
                        if (arch_values.size() < 64)
                            arch_values.push_back({std::string(*key), v.array_max, v.array_sum, v.array_length});
                        break;
                    }
                    if (!v.is_int || v.negative || v.u > 0xffffffffu) {
                        wrong_type(type == gv_array ? "a 32-bit non-negative integer or an array of them"
                                                    : "a 32-bit non-negative integer");
                        break;
                    }
                    if (arch_values.size() < 64) arch_values.push_back({std::string(*key), v.u});
                    break;
                }
        }
    }

    if (arch.empty()) add_problem(r, c.offset(), "no general.architecture");
    for (const auto& p : arch_values)
        if (!arch.empty() && p.key.size() > arch.size() + 1 && p.key.compare(0, arch.size(), arch) == 0 &&
            p.key[arch.size()] == '.')
            for (auto& w : arch_keys)
                if (std::string_view(p.key).substr(arch.size() + 1) == w.suffix && !w.seen) {
                    w.value = p.value;
                    w.layer_sum = p.layer_sum;
                    w.layer_count = p.layer_count;
                    w.seen = true;
                }
    if (r.gguf_file_type >= 0) r.quant = quant_format_from_gguf_file_type(r.gguf_file_type);

    // Tensor infos: counted, never stored one by one.
    tensor_tally tally;
    count_tensor_infos(c, r.tensor_count, r, tally, "");
    r.parameters_exact = tally.all_counted && r.tensors_read == r.tensor_count;
    const auto& [split_no, split_count, split_tensors] = split;
    const bool shard = split_count.seen && split_count.value > 1;
    if (shard) {
        r.split_index = split_no.value;
        r.split_count = split_count.value;
        r.split_tensors = split_tensors.value;
        // The other files' tensors, in order after the first.
        std::uint64_t files = 1;
        for (std::size_t k = 0; split_no.value == 0 && k < more_files.size() && files < split_count.value; ++k) {
            const std::string where = "file " + std::to_string(files + 1) + ": ";
            cursor more(more_files[k]);
            const auto h = read_later_header(more, r, where);
            if (!h) break;
            if (h->split_no != files) {
                add_problem(r, 0, where + "split.no is " + std::to_string(h->split_no) + ", not " + std::to_string(files));
                break;
            }
            r.tensor_count = detail::sat_add(r.tensor_count, h->tensors);
            count_tensor_infos(more, h->tensors, r, tally, where);
            ++files;
        }
        r.parameters_exact = split_no.value == 0 && files == split_count.value && split_tensors.seen &&
                             r.tensor_count == split_tensors.value && tally.all_counted &&
                             r.tensors_read == r.tensor_count;
        if (!r.parameters_exact)
            add_problem(r, 0, "file " + std::to_string(split_no.value + 1) + " of the " +
                                  std::to_string(split_count.value) + " of a split model" +
                                  (files > 1 ? " and the " + std::to_string(files - 1) + " after it" : std::string()) +
                                  ": " + std::to_string(r.tensors_read) + " of its " +
                                  std::to_string(split_tensors.value) + " tensors read, sizes estimated from the shape");
    }

    report_other_types(r);
    if (arch.empty()) return r;
    model_description m;
    m.family = arch;
    m.name = name.empty() ? arch : name;
    m.id = m.name;
    auto& s = m.shape;
    auto u32 = [&](int k) { return static_cast<std::uint32_t>(arch_keys[k].value); };
    s.layers = u32(k_blocks);
    s.hidden_size = u32(k_embd);
    s.attention_heads = u32(k_heads);
    s.kv_heads = arch_keys[k_heads_kv].seen ? u32(k_heads_kv) : u32(k_heads);
    s.head_dim = u32(k_key_len);
    s.context_length = u32(k_ctx);
    s.experts = u32(k_experts);
    s.experts_per_token = u32(k_experts_used);
    s.intermediate_size = s.experts && arch_keys[k_expert_ff].seen ? u32(k_expert_ff) : u32(k_ff);
    s.vocab_size = vocab > 0xffffffffu ? 0 : static_cast<std::uint32_t>(vocab);
    // The KV cache. llama.cpp caches DeepSeek's latent vector only for files that give the
    // per-head key length beside it (key_length_mla, written since its MLA rework:
    // llama_hparams::is_mla); older DeepSeek 2/3 files, MiniCPM3's and PLM's cache every
    // head's keys and values, whose lengths may differ (value_length).
    const std::uint64_t key_length =
        s.head_dim ? s.head_dim : (s.attention_heads ? s.hidden_size / s.attention_heads : 0);
    const std::uint64_t value_length = arch_keys[k_value_len].seen ? u32(k_value_len) : key_length;
    const std::uint64_t per_head = key_length + value_length;
    const auto& kv = arch_keys[k_heads_kv];
    auto set_values = [&](std::uint64_t v) {
        if (v > 0 && v <= 0xffffffffu) s.kv_values_per_token_per_layer = static_cast<std::uint32_t>(v);
        else if (v > 0xffffffffu) add_problem(r, c.offset(), "KV cache values per token and layer past 2^32");
    };
    if (arch_keys[k_kv_lora].seen && u32(k_kv_lora) > 0 && arch_keys[k_key_len_mla].seen && u32(k_key_len_mla) > 0) {
        set_values(std::uint64_t{u32(k_kv_lora)} + u32(k_rope_dims));
        s.latent_kv_cache = true;
        s.head_dim = u32(k_key_len_mla); // key_length is then the latent vector's
    } else if (kv.layer_count > 0 && kv.layer_sum != detail::sat_mul(kv.value, kv.layer_count)) {
        // KV heads that differ by layer: kv_heads is the largest (a layer's cache, tensor
        // parallelism), and the values cached per token and layer their mean, rounded up.
        const std::uint64_t layers = s.layers ? s.layers : kv.layer_count;
        const std::uint64_t total = detail::sat_mul(per_head, kv.layer_sum);
        set_values(total / layers + (total % layers ? 1 : 0));
    } else if (value_length != key_length) {
        set_values(detail::sat_mul(s.kv_heads, per_head));
    }
    if (arch_keys[k_heads_kv].layer_count > 0 && s.layers && arch_keys[k_heads_kv].layer_count != s.layers)
        add_problem(r, c.offset(), arch + ".attention.head_count_kv lists " +
                                       std::to_string(arch_keys[k_heads_kv].layer_count) + " layers, block_count " +
                                       std::to_string(s.layers));
    // Sliding-window attention: the window, on the layers each architecture gives it
    // (llama.cpp's swa patterns; transformers' layer_types defaults): Gemma 2 and gpt-oss
    // alternate, starting with a windowed layer; Gemma 3 makes every sixth layer global;
    // Cohere 2 every fourth. An architecture not known here keeps full attention on every
    // layer (the cache is then overstated, never understated).
    if (arch_keys[k_swa].seen && u32(k_swa) > 0) {
        std::uint32_t every = 0; // one global layer in `every`
        if (arch == "gemma2"sv || arch == "gpt-oss"sv) every = 2;
        else if (arch == "gemma3"sv) every = 6;
        else if (arch == "cohere2"sv) every = 4;
        if (every) {
            s.sliding_window = u32(k_swa);
            s.sliding_window_layers = s.layers - s.layers / every;
        }
    }
    // output.weight may be in a file not read.
    s.tied_embeddings = tally.has_embedding && !tally.has_output && (!shard || r.parameters_exact);
    // Up projections without gates are a plain FFN, unless gate and up are one tensor of
    // twice the width (Phi-3, GLM).
    const bool fused_gate = s.intermediate_size > 0 && tally.ffn_up_rows == 2 * std::uint64_t{s.intermediate_size};
    s.gated_ffn = tally.has_ffn_gate || !tally.has_ffn_up || fused_gate;
    if (s.layers == 0) add_problem(r, c.offset(), "no " + arch + ".block_count");
    if (s.attention_heads && s.kv_heads && s.attention_heads % s.kv_heads != 0)
        add_problem(r, c.offset(), "head_count is not a multiple of head_count_kv");
    if (s.experts_per_token > s.experts) add_problem(r, c.offset(), "expert_used_count exceeds expert_count");
    if (r.parameters_exact) {
        s.parameters = r.parameters;
        s.active_parameters = s.parameters;
        if (s.experts > 0 && s.experts_per_token <= s.experts) {
            // Only experts_per_token of every expert_count experts are read per token.
            const auto idle = tally.expert_elements / s.experts * (s.experts - s.experts_per_token);
            s.active_parameters = s.parameters - (idle < s.parameters ? idle : 0);
        }
    } else {
        s.parameters = estimate_parameters(s);
        s.active_parameters = s.is_moe() ? estimate_active_parameters(s) : s.parameters;
    }
    r.model = std::move(m);
    return r;
}

namespace detail::model_files {

/// The first `max_bytes` of a stream, read in growing pieces: a small file costs what it
/// holds, not the cap.
inline std::vector<std::byte> read_prefix(std::istream& in, std::uint64_t max_bytes) {
    std::vector<std::byte> buf;
    std::size_t piece = 64u << 10;
    while (in && buf.size() < max_bytes) {
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(piece, max_bytes - buf.size()));
        const auto at = buf.size();
        buf.resize(at + want);
        in.read(reinterpret_cast<char*>(buf.data() + at), static_cast<std::streamsize>(want));
        buf.resize(at + static_cast<std::size_t>(in.gcount()));
        if (piece < (16u << 20)) piece *= 2;
    }
    return buf;
}

/// The name of file `n` (1-based) of `count` beside `path`, which is one of a set named
/// "<prefix>-00001-of-00003<extension>" (gguf-split's, and Hugging Face's sharded
/// checkpoints'); nullopt when `path` is not named that way.
inline std::optional<std::filesystem::path> numbered_file(const std::filesystem::path& path, std::uint64_t n,
                                                          std::uint64_t count, std::string_view extension) {
    const std::string name = path.filename().string();
    const std::string tail = "-00000-of-00000" + std::string(extension);
    if (name.size() <= tail.size() || count > 99999 || n > count) return std::nullopt;
    const std::string_view end = std::string_view(name).substr(name.size() - tail.size());
    for (std::size_t i = 0; i < tail.size(); ++i) {
        const bool digit_place = (i >= 1 && i <= 5) || (i >= 10 && i <= 14);
        if (digit_place ? !(end[i] >= '0' && end[i] <= '9') : end[i] != tail[i]) return std::nullopt;
    }
    char numbers[16] = {};
    std::snprintf(numbers, sizeof numbers, "%05u-of-%05u", static_cast<unsigned>(n), static_cast<unsigned>(count));
    return path.parent_path() / (name.substr(0, name.size() - tail.size()) + "-" + numbers + std::string(extension));
}

/// The number of files a name of that form states ("-00001-of-00004.safetensors": 4); 0
/// for any other name.
inline std::uint64_t numbered_file_count(const std::filesystem::path& path, std::string_view extension) {
    const std::string name = path.filename().string();
    const std::size_t tail = 15 + extension.size();
    if (name.size() <= tail) return 0;
    std::uint64_t n = 0;
    for (char ch : std::string_view(name).substr(name.size() - tail + 10, 5)) {
        if (ch < '0' || ch > '9') return 0;
        n = n * 10 + static_cast<std::uint64_t>(ch - '0');
    }
    return numbered_file(path, 1, n, extension) ? n : 0;
}

} // namespace detail::model_files

/// Reads at most `max_bytes` of a file and parses them as GGUF. A file shorter than the
/// header it declares reports the truncation as a problem. A file of a model gguf-split
/// cut up ("<prefix>-00002-of-00003.gguf") is read with the others beside it, from the
/// first: the model is described whole (see read_gguf).
inline model_file_info read_gguf_file(const std::filesystem::path& path, std::size_t max_bytes = 64u << 20) {
    using namespace detail::model_files;
    const auto open = [&](const std::filesystem::path& p) -> std::optional<std::vector<std::byte>> {
        std::ifstream in(p, std::ios::binary);
        if (!in) return std::nullopt;
        return read_prefix(in, max_bytes);
    };
    auto given = open(path);
    if (!given) {
        model_file_info r;
        r.format = "gguf";
        add_problem(r, 0, "cannot open " + path.string());
        return r;
    }
    auto r = read_gguf(*given);
    if (r.split_count > 1 && numbered_file(path, 1, r.split_count, ".gguf")) {
        // Every file of the model, from the first; a missing one ends the list there.
        std::vector<std::vector<std::byte>> files;
        std::vector<std::string> missing;
        for (std::uint64_t n = 1; n <= r.split_count; ++n) {
            const auto p = *numbered_file(path, n, r.split_count, ".gguf");
            auto bytes = n == r.split_index + 1 ? std::move(given) : open(p);
            if (!bytes) {
                missing.push_back(p.string());
                break;
            }
            // A later file's header is all that is read of it: the rest of its prefix (tensor
            // data) is let go before the next file is read, so that a model of many files
            // holds one prefix at a time, not max_bytes a file.
            if (n > 1) {
                bytes->resize(later_header_size(*bytes));
                bytes->shrink_to_fit();
            }
            files.push_back(std::move(*bytes));
        }
        if (!files.empty()) {
            std::vector<std::span<const std::byte>> more(files.begin() + 1, files.end());
            r = read_gguf(files.front(), more);
        }
        for (const auto& m : missing) add_problem(r, 0, "cannot open " + m);
    }
    if (r.model) r.model->source = path.string();
    return r;
}

#if AI_HWACCEL_JSON
namespace detail::model_files {

/// Refuses JSON nested deeper than `limit` before nlohmann sees it (its parser and
/// destructor would work through any depth, but there is no reason to let them).
inline bool json_depth_ok(std::string_view text, int limit) noexcept {
    int depth = 0;
    bool in_string = false, escape = false;
    for (char ch : text) {
        if (in_string) {
            if (escape) escape = false;
            else if (ch == '\\') escape = true;
            else if (ch == '"') in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            if (++depth > limit) return false;
        } else if (ch == ']' || ch == '}') {
            --depth;
        }
    }
    return true;
}

/// A JSON value as a u32 (non-negative integer, or an integral float such as 4096.0).
inline std::optional<std::uint32_t> json_u32(const nlohmann::json& j) {
    if (j.is_number_unsigned()) {
        const auto v = j.get<std::uint64_t>();
        if (v <= 0xffffffffu) return static_cast<std::uint32_t>(v);
    } else if (j.is_number_integer()) {
        const auto v = j.get<std::int64_t>();
        if (v >= 0 && v <= 0xffffffff) return static_cast<std::uint32_t>(v);
    } else if (j.is_number_float()) {
        const auto v = j.get<double>();
        if (v >= 0 && v <= 4294967295.0 && static_cast<double>(static_cast<std::uint32_t>(v)) == v)
            return static_cast<std::uint32_t>(v);
    }
    return std::nullopt;
}

struct dtype_size {
    std::string_view name;
    unsigned bits;
};
// safetensors dtypes (the Rust crate's Dtype enum). Sub-byte types are packed.
inline constexpr dtype_size safetensors_dtypes[] = {
    {"BOOL", 8}, {"U8", 8}, {"I8", 8}, {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},
    {"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32}, {"U32", 32},
    {"F32", 32}, {"F64", 64}, {"I64", 64}, {"U64", 64}, {"F4", 4}, {"F6_E2M3", 6}, {"F6_E3M2", 6},
    {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"C64", 64},
};

} // namespace detail::model_files

/// Reads a Hugging Face config.json for the architecture. Multimodal configs that keep
/// the language model under "text_config" (Gemma 3, Llama 4…) are read from there.
inline std::optional<model_description> parse_hf_config(std::string_view text, std::vector<model_file_problem>& problems) {
    using namespace detail::model_files;
    auto problem = [&](std::string m) {
        if (problems.size() < max_problems) problems.push_back({0, std::move(m)});
    };
    if (text.size() > (16u << 20) || !json_depth_ok(text, 64)) {
        problem("config.json too large or nested too deep");
        return std::nullopt;
    }
    const auto doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        problem("config.json is not a JSON object");
        return std::nullopt;
    }
    const nlohmann::json* cfg = &doc;
    if (!doc.contains("num_hidden_layers")) {
        const auto it = doc.find("text_config");
        if (it != doc.end() && it->is_object()) cfg = &*it;
    }
    // The first of `keys` in `in` (default: the config), or 0.
    auto u32_in = [&](const nlohmann::json& in, std::initializer_list<const char*> keys) -> std::uint32_t {
        for (const char* k : keys) {
            const auto it = in.find(k);
            if (it == in.end() || it->is_null()) continue;
            if (const auto v = json_u32(*it)) return *v;
            problem(std::string(k) + " is not a 32-bit non-negative integer");
            return 0;
        }
        return 0;
    };
    auto u32 = [&](std::initializer_list<const char*> keys) { return u32_in(*cfg, keys); };
    // DBRX keeps its attention and FFN settings in nested objects.
    static const nlohmann::json no_object = nlohmann::json::object();
    auto object_at = [&](const char* k) -> const nlohmann::json& {
        const auto it = cfg->find(k);
        return it != cfg->end() && it->is_object() ? *it : no_object;
    };
    const auto& attn_config = object_at("attn_config");
    const auto& ffn_config = object_at("ffn_config");
    auto text_of = [](const nlohmann::json& j, const char* k) -> std::string {
        const auto it = j.find(k);
        return it != j.end() && it->is_string() ? printable(it->get_ref<const std::string&>()) : std::string();
    };
    model_description m;
    m.family = text_of(*cfg, "model_type");
    if (m.family.empty()) m.family = text_of(doc, "model_type");
    m.name = text_of(doc, "_name_or_path");
    m.id = m.name;
    auto& s = m.shape;
    s.layers = u32({"num_hidden_layers", "n_layer", "num_layers", "n_layers"});
    s.hidden_size = u32({"hidden_size", "n_embd", "d_model"});
    s.attention_heads = u32({"num_attention_heads", "n_head", "n_heads"});
    // Falcon writes num_kv_heads (older configs n_head_kv), DBRX attn_config.kv_n_heads.
    // multi_query (Falcon 7B, GPT-BigCode) means one KV head, except in Falcon's "new
    // decoder architecture", which reads num_kv_heads (as transformers' FalconAttention).
    s.kv_heads = u32({"num_key_value_heads", "num_kv_heads", "n_head_kv"});
    if (s.kv_heads == 0) s.kv_heads = u32_in(attn_config, {"kv_n_heads"});
    const auto flag = [&](const char* k) {
        const auto it = cfg->find(k);
        return it != cfg->end() && it->is_boolean() && it->get<bool>();
    };
    if (flag("multi_query") && !flag("new_decoder_architecture")) s.kv_heads = 1;
    if (s.kv_heads == 0) s.kv_heads = s.attention_heads; // absent: plain multi-head attention
    s.head_dim = u32({"head_dim"});
    s.vocab_size = u32({"vocab_size"});
    s.context_length = u32({"max_position_embeddings", "n_positions", "max_seq_len"});
    s.experts = u32({"num_local_experts", "num_experts", "n_routed_experts"});
    if (s.experts == 0) s.experts = u32_in(ffn_config, {"moe_num_experts"});
    s.experts_per_token = s.experts ? u32({"num_experts_per_tok", "experts_per_token"}) : 0;
    if (s.experts && s.experts_per_token == 0) s.experts_per_token = u32_in(ffn_config, {"moe_top_k"});
    s.intermediate_size = s.experts ? u32({"moe_intermediate_size", "intermediate_size"}) : u32({"intermediate_size"});
    if (s.intermediate_size == 0) s.intermediate_size = u32_in(ffn_config, {"ffn_hidden_size"});
    // Architectures whose FFN is one up and one down projection with no gate (Falcon, GPT-2
    // and GPT-BigCode, GPT-NeoX, GPT-J, Phi-1/2, StarCoder2, BLOOM, OPT); its width is
    // ffn_hidden_size, n_inner or ffn_dim where given, else four times the hidden size.
    static constexpr std::string_view plain_ffn_families[] = {
        "falcon", "RefinedWeb", "RefinedWebModel", "gpt2", "gpt_bigcode", "gpt_neox",
        "gptj", "phi", "starcoder2", "bloom", "opt"};
    bool plain_ffn = false;
    for (const auto f : plain_ffn_families) plain_ffn = plain_ffn || m.family == f;
    if (plain_ffn) {
        s.gated_ffn = false;
        if (s.intermediate_size == 0) s.intermediate_size = u32({"ffn_hidden_size", "n_inner", "ffn_dim"});
        if (s.intermediate_size == 0 && s.hidden_size <= 0xffffffffu / 4) s.intermediate_size = 4 * s.hidden_size;
    }
    // Low-rank KV projections (kv_lora_rank). vLLM and SGLang cache DeepSeek V2/V3's latent
    // vector (and Kimi K2's, the same architecture); MiniCPM3 and PLM, which project the
    // same way, are served with every head's keys and values cached.
    if (const auto lora = u32({"kv_lora_rank"})) {
        const std::uint64_t rope = u32({"qk_rope_head_dim"});
        const std::uint64_t key = rope + u32({"qk_nope_head_dim"});
        const std::uint64_t value = u32({"v_head_dim"});
        if (s.head_dim == 0 && key > 0 && key <= 0xffffffffu) s.head_dim = static_cast<std::uint32_t>(key);
        const bool latent = m.family.starts_with("deepseek") || m.family.starts_with("kimi");
        const std::uint64_t values = latent ? lora + rope : detail::sat_mul(s.kv_heads, key + (value ? value : key));
        if (values <= 0xffffffffu) s.kv_values_per_token_per_layer = static_cast<std::uint32_t>(values);
        else problem("KV cache values per token and layer past 2^32");
        s.latent_kv_cache = latent;
    }
    const auto window = u32({"sliding_window"});
    const auto use_window = cfg->find("use_sliding_window");
    const bool window_off = use_window != cfg->end() && use_window->is_boolean() && !use_window->get<bool>();
    const auto types = cfg->find("layer_types");
    const bool typed = types != cfg->end() && types->is_array();
    const auto count_types = [&](std::string_view kind) {
        std::uint32_t n = 0;
        for (const auto& t : *types)
            if (t.is_string() && t.get_ref<const std::string&>() == kind) ++n;
        return n;
    };
    // Llama 4's chunked attention caches at most one chunk on the layers that use it:
    // those whose no_rope_layers entry is 1, by default all but every fourth
    // (transformers' Llama4TextConfig; an empty list means the default).
    const auto chunk = u32({"attention_chunk_size"});
    // A window only where llama.cpp, whose cache memory.hpp follows, builds one (as a GGUF
    // of the model reads): the families it windows, and layers a config types one by one.
    // Mistral 7B v0.1, Phi-3 and StarCoder2 declare a window that llama.cpp ignores.
    static constexpr std::string_view windowed_families[] = {"gemma2", "gemma3", "gemma3_text", "cohere2", "gpt_oss"};
    bool windowed = typed;
    for (const auto f : windowed_families) windowed = windowed || m.family == f;
    if (window && !window_off && windowed) {
        s.sliding_window = window;
        // Every pattern-th layer is global: the config's pattern, else transformers' default
        // for the family, which Google's configs leave out (Gemma 2 alternates, windowed
        // first; Gemma 3 has 6; Cohere 2 4, gpt-oss 2).
        std::uint32_t pattern = u32({"sliding_window_pattern"});
        if (pattern == 0 && (m.family == "cohere2"sv)) pattern = 4;
        if (pattern == 0 && (m.family == "gpt_oss"sv)) pattern = 2;
        if (pattern == 0 && m.family == "gemma2"sv) pattern = 2;
        if (pattern == 0 && (m.family == "gemma3"sv || m.family == "gemma3_text"sv)) pattern = 6;
        const std::uint32_t sliding =
            typed ? count_types("sliding_attention") : pattern ? s.layers - s.layers / pattern : s.layers;
        s.sliding_window_layers = sliding > s.layers ? s.layers : sliding;
    } else if (chunk && (m.family == "llama4"sv || m.family == "llama4_text"sv)) {
        s.sliding_window = chunk;
        std::uint32_t chunked = 0;
        const auto no_rope = cfg->find("no_rope_layers");
        if (typed) {
            chunked = count_types("chunked_attention");
        } else if (no_rope != cfg->end() && no_rope->is_array() && !no_rope->empty()) {
            for (const auto& v : *no_rope)
                if (v.is_number_integer() && v.get<std::int64_t>() == 1) ++chunked;
        } else {
            const auto interval = u32({"no_rope_layer_interval"});
            chunked = s.layers - s.layers / (interval ? interval : 4);
        }
        s.sliding_window_layers = chunked > s.layers ? s.layers : chunked;
    }
    // A key a config leaves out holds the default of the family's transformers class
    // (save_pretrained writes only what differs from it): Gemma 3's text model has a
    // 262,208-token vocabulary and 131,072 positions; Gemma, GPT-2, GPT-BigCode, BLOOM, OPT,
    // Falcon and Cohere tie their embeddings (the others here, Llama's and most since, not).
    const bool gemma3 = m.family == "gemma3"sv || m.family == "gemma3_text"sv;
    if (gemma3 && s.vocab_size == 0 && !cfg->contains("vocab_size")) s.vocab_size = 262208;
    if (gemma3 && s.context_length == 0 && !cfg->contains("max_position_embeddings")) s.context_length = 131072;
    static constexpr std::string_view tied_by_default[] = {
        "gemma", "gemma2", "gemma3", "gemma3_text", "gpt2", "gpt_bigcode", "bloom", "opt",
        "falcon", "RefinedWeb", "RefinedWebModel", "cohere", "cohere2"};
    for (const auto f : tied_by_default) s.tied_embeddings = s.tied_embeddings || m.family == f;
    for (const nlohmann::json* j : {cfg, &doc}) {
        const auto tie = j->find("tie_word_embeddings");
        if (tie != j->end() && tie->is_boolean()) {
            s.tied_embeddings = tie->get<bool>();
            break;
        }
    }
    if (s.layers == 0 || s.hidden_size == 0) problem("config.json gives no num_hidden_layers / hidden_size");
    if (s.attention_heads && s.kv_heads && s.attention_heads % s.kv_heads != 0)
        problem("num_attention_heads is not a multiple of num_key_value_heads");
    if (s.experts_per_token > s.experts) problem("num_experts_per_tok exceeds the expert count");
    s.parameters = estimate_parameters(s);
    s.active_parameters = s.is_moe() ? estimate_active_parameters(s) : s.parameters;
    return m;
}

namespace detail::model_files {

/// Counts one safetensors header into `r` (tensor_count, tensors_read, parameters,
/// by_type); `where` starts each problem's message. Returns whether every tensor was
/// counted.
inline bool count_safetensors(std::span<const std::byte> bytes, model_file_info& r, std::uint64_t header_cap,
                              std::string_view where) {
    cursor c(bytes);
    const auto n = c.get<std::uint64_t>();
    if (!c.ok()) {
        add_problem(r, 0, std::string(where) + "truncated: no header length");
        return false;
    }
    if (n > header_cap) {
        add_problem(r, 0, std::string(where) + "header length " + std::to_string(n) + " exceeds the cap of " + std::to_string(header_cap));
        return false;
    }
    if (n > c.left()) {
        add_problem(r, 8, std::string(where) + "truncated: header of " + std::to_string(n) + " bytes, " + std::to_string(c.left()) + " present");
        return false;
    }
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8, static_cast<std::size_t>(n));
    if (!json_depth_ok(text, 16)) {
        add_problem(r, 8, std::string(where) + "header JSON nested too deep");
        return false;
    }
    const auto doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        add_problem(r, 8, std::string(where) + "header is not a JSON object");
        return false;
    }
    bool all_counted = true, packed = false;
    for (const auto& [tname, t] : doc.items()) {
        if (tname == "__metadata__"sv) continue;
        ++r.tensor_count;
        const auto what = "tensor " + printable(tname);
        if (!t.is_object()) {
            add_problem(r, 8, std::string(where) + what + " is not an object");
            all_counted = false;
            continue;
        }
        const auto dt = t.find("dtype");
        const auto shape = t.find("shape");
        if (dt == t.end() || !dt->is_string() || shape == t.end() || !shape->is_array()) {
            add_problem(r, 8, std::string(where) + what + ": missing or bad dtype/shape");
            all_counted = false;
            continue;
        }
        if (shape->size() > max_dims) {
            add_problem(r, 8, std::string(where) + what + " has " + std::to_string(shape->size()) + " dimensions, more than " +
                                  std::to_string(max_dims));
            all_counted = false;
            continue;
        }
        std::uint64_t dims[max_dims] = {};
        std::size_t nd = 0;
        bool bad = false;
        for (const auto& d : *shape) {
            if (d.is_number_unsigned()) dims[nd++] = d.get<std::uint64_t>();
            else if (d.is_number_integer() && d.get<std::int64_t>() >= 0) dims[nd++] = static_cast<std::uint64_t>(d.get<std::int64_t>());
            else bad = true;
        }
        const auto elements = bad ? std::nullopt : element_product(std::span<const std::uint64_t>(dims, nd));
        if (!elements) {
            add_problem(r, 8, std::string(where) + what + (bad ? ": shape holds a negative or non-integer dimension" : ": size overflows"));
            all_counted = false;
            continue;
        }
        ++r.tensors_read;
        const auto& dtype = dt->get_ref<const std::string&>();
        unsigned bits = 0;
        for (const auto& d : safetensors_dtypes)
            if (d.name == dtype) bits = d.bits;
        auto& slot = type_slot(r.by_type, -1, bits ? std::string_view(dtype) : std::string_view(printable(dtype, 32)));
        ++slot.tensors;
        slot.elements = detail::sat_add(slot.elements, *elements);
        std::optional<std::uint64_t> size;
        const auto offs = t.find("data_offsets");
        if (offs != t.end() && offs->is_array() && offs->size() == 2 && (*offs)[0].is_number_unsigned() &&
            (*offs)[1].is_number_unsigned() && (*offs)[1].get<std::uint64_t>() >= (*offs)[0].get<std::uint64_t>())
            size = (*offs)[1].get<std::uint64_t>() - (*offs)[0].get<std::uint64_t>();
        if (bits) {
            const auto from_shape =
                detail::sat_add(detail::sat_mul(*elements / 8, bits), ((*elements % 8) * bits + 7) / 8);
            if (size && *size != from_shape) add_problem(r, 8, std::string(where) + what + ": data_offsets disagree with shape x dtype");
            slot.bytes = detail::sat_add(slot.bytes, size ? *size : from_shape);
        } else if (size) {
            slot.bytes = detail::sat_add(slot.bytes, *size);
        } else {
            slot.bytes_known = false;
        }
        r.parameters = detail::sat_add(r.parameters, *elements);
        // Quantized checkpoints store several weights in each element: GPTQ/AWQ's I32
        // qweight (eight 4-bit weights), gpt-oss's MXFP4 U8 *_blocks (two), bitsandbytes' U8
        // weights beside their absmax.
        const std::string_view name(tname);
        packed = packed || ends_with(name, "qweight") || ends_with(name, "_blocks") || ends_with(name, ".absmax");
    }
    if (packed) {
        add_problem(r, 8, std::string(where) + "quantized tensors hold several weights an element (GPTQ/AWQ qweight, "
                                               "MXFP4 blocks, bitsandbytes): their elements are not the parameter count");
        all_counted = false;
    }
    return all_counted;
}

/// Describes the model by its config.json; a checkpoint counted whole gives the exact
/// parameter count, and the estimate's active share is scaled to it.
inline void attach_config(model_file_info& r, std::string_view config_json) {
    std::vector<model_file_problem> ps;
    r.model = parse_hf_config(config_json, ps);
    for (auto& p : ps) add_problem(r, 0, "config.json: " + p.message);
    if (!r.model || !r.parameters_exact || r.parameters == 0) return;
    auto& s = r.model->shape;
    const auto est_total = s.parameters, est_active = s.active_parameters;
    if (r.parameters < est_total / 2) {
        // Under half of what the shape holds: one file of a sharded checkpoint
        // ("model-00001-of-00004.safetensors") read alone, not the model.
        add_problem(r, 0, "the tensors hold " + std::to_string(r.parameters) + " parameters, under half of the " +
                              std::to_string(est_total) + " config.json's shape holds (one file of a sharded "
                              "checkpoint?): sizes estimated from the shape");
        r.parameters_exact = false;
        return;
    }
    s.parameters = r.parameters;
    s.active_parameters = r.parameters;
    // The active share, below 1 (a config with more experts a token than experts, which
    // is reported, has none; a product at 2^64 is no count).
    if (s.is_moe() && est_total > 0 && est_active < est_total) {
        const double active = static_cast<double>(r.parameters) * (static_cast<double>(est_active) / static_cast<double>(est_total));
        if (active < 0x1p64) s.active_parameters = static_cast<std::uint64_t>(active);
    }
}

} // namespace detail::model_files

/// Reads a safetensors header (and, when given, the model's config.json text). Parameter
/// counts come from the tensor shapes; bytes per dtype from data_offsets when they are
/// consistent, else from the shape. A header whose tensors hold under half of what the
/// config's shape does is taken for one file of a sharded checkpoint: its count is not
/// the model's (read every file with read_safetensors_shards).
inline model_file_info read_safetensors(std::span<const std::byte> bytes,
                                        std::optional<std::string_view> config_json = std::nullopt,
                                        std::uint64_t header_cap = 100u << 20) {
    using namespace detail::model_files;
    model_file_info r;
    r.format = "safetensors";
    r.parameters_exact = count_safetensors(bytes, r, header_cap, "");
    report_other_types(r);
    if (config_json) attach_config(r, *config_json);
    return r;
}

/// Reads every file of a sharded checkpoint ("model-00001-of-00004.safetensors" …), the
/// headers in `files`, as one model.
inline model_file_info read_safetensors_shards(std::span<const std::span<const std::byte>> files,
                                               std::optional<std::string_view> config_json = std::nullopt,
                                               std::uint64_t header_cap = 100u << 20) {
    using namespace detail::model_files;
    model_file_info r;
    r.format = "safetensors";
    bool all = !files.empty();
    for (std::size_t k = 0; k < files.size(); ++k) {
        const std::string where = files.size() > 1 ? "file " + std::to_string(k + 1) + ": " : std::string();
        all = count_safetensors(files[k], r, header_cap, where) && all;
    }
    r.parameters_exact = all;
    report_other_types(r);
    if (config_json) attach_config(r, *config_json);
    return r;
}

/// Reads a .safetensors file's header (at most `header_cap` + 8 bytes) and, optionally,
/// a config.json beside it. A file of a sharded checkpoint ("model-00002-of-00004
/// .safetensors") is read with every other file of it beside it, as one model.
inline model_file_info read_safetensors_file(const std::filesystem::path& path,
                                             std::optional<std::filesystem::path> config = std::nullopt,
                                             std::uint64_t header_cap = 100u << 20) {
    using namespace detail::model_files;
    // The length, then as much of the header as the file holds (never what the length
    // claims before it is there).
    const auto header_of = [&](const std::filesystem::path& p) -> std::optional<std::vector<std::byte>> {
        std::ifstream in(p, std::ios::binary);
        if (!in) return std::nullopt;
        std::vector<std::byte> buf = read_prefix(in, 8);
        if (buf.size() == 8) {
            std::uint64_t n = 0;
            for (int i = 0; i < 8; ++i)
                n |= static_cast<std::uint64_t>(std::to_integer<unsigned>(buf[static_cast<std::size_t>(i)])) << (8 * i);
            if (n <= header_cap) {
                auto header = read_prefix(in, n);
                buf.insert(buf.end(), header.begin(), header.end());
            }
        }
        return buf;
    };
    std::vector<std::vector<std::byte>> headers;
    std::vector<std::string> missing;
    const std::uint64_t count = numbered_file_count(path, ".safetensors");
    if (count > 1) {
        for (std::uint64_t n = 1; n <= count; ++n) {
            const auto p = *numbered_file(path, n, count, ".safetensors");
            if (auto h = header_of(p)) headers.push_back(std::move(*h));
            else missing.push_back(p.string());
        }
    } else if (auto h = header_of(path)) {
        headers.push_back(std::move(*h));
    } else {
        missing.push_back(path.string());
    }
    if (headers.empty()) {
        model_file_info fail;
        fail.format = "safetensors";
        add_problem(fail, 0, "cannot open " + path.string());
        return fail;
    }
    std::optional<std::string> cfg_text;
    if (config) {
        std::ifstream cin(*config, std::ios::binary);
        if (cin) {
            const auto t = read_prefix(cin, 16u << 20);
            cfg_text = std::string(reinterpret_cast<const char*>(t.data()), t.size());
        }
    }
    const auto cfg = cfg_text ? std::optional<std::string_view>(*cfg_text) : std::nullopt;
    model_file_info r;
    if (count > 1) {
        const std::vector<std::span<const std::byte>> spans(headers.begin(), headers.end());
        r = read_safetensors_shards(spans, std::nullopt, header_cap);
        // A missing file leaves the count short: the shape's estimate, said so.
        if (!missing.empty()) r.parameters_exact = false;
        for (const auto& m : missing) add_problem(r, 0, "cannot open " + m + ", a file of this checkpoint");
        if (cfg) attach_config(r, *cfg);
    } else {
        r = read_safetensors(headers.front(), cfg, header_cap);
    }
    if (config && !cfg_text) add_problem(r, 0, "cannot open " + config->string());
    if (r.model) r.model->source = path.string();
    return r;
}
#endif // AI_HWACCEL_JSON

AI_HWACCEL_NAMESPACE_END
