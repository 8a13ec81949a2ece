// ai-hwaccel io: the registry as JSON, through nlohmann/json (an optional dependency).
//
// `to_json`/`from_json` for every public data type, found by ADL, so `nlohmann::json j =
// registry;` and `j.get<accelerator_registry>()` work; `to_json_string` writes a registry;
// `registry_from_json` reads one back without throwing, whatever the text holds, and says
// what is wrong when it cannot. When <nlohmann/json.hpp> is not available (or
// AI_HWACCEL_JSON is 0) this header is an empty shell: it stays includable, so umbrella
// headers and the self-containment test need no special case, and code that uses it fails
// at the first name it uses. Check `#if AI_HWACCEL_JSON` to compile JSON code conditionally.
//
// The shape (schema_version 1), also as a JSON Schema (draft 2020-12) in
// schema/registry.schema.json, which the tests validate real output against; docs/json.md
// is the reader's guide. Keys are snake_case and stable; nlohmann::json keeps object keys
// sorted, so the text is deterministic. Every key is always written.
//
//   registry  {"schema_version": 1, "devices": [profile…], "warnings": [warning…],
//              "host": host, "system": system}
//   profile   {"kind": device_kind, "index": u32, "available": bool, "software": bool,
//              "unified_memory": bool, "vendor": vendor, "name": str, "uuid": str,
//              "pci": pci_address | null, "stack": u8 | null, "pci_device_id": u16, "arch": str,
//              "driver_version": str, "memory_bytes": S<u64>, "memory_used_bytes": S<u64>,
//              "memory_free_bytes": S<u64>, "memory_bandwidth_gbps": S<number>,
//              "peak_tflops": peak, "peak_origin": origin, "compute_units": S<u32>,
//              "chips": S<u32>, "pcie_current": S<link>, "pcie_max": S<link>,
//              "numa_node": S<i32>, "temperature_c": S<number>,
//              "power_draw_watts": S<number>, "power_limit_watts": S<number>,
//              "utilization_percent": S<number>, "spec": str | null}
//   S<T>      a sourced<T>: null when empty, else {"value": T, "origin": origin}, origin never
//             "none". (An object rather than a pair so it reads without the docs; null
//             rather than a missing key so every profile has every key.)
//   peak      {"<dtype>": number, …}: TFLOPS (TOPS for integer types), non-zero entries only
//   link      {"generation": u8, "width": u8}                 (a pcie_link)
//   pci_address "dddd:bb:dd.f", lower-case hex; the domain in at least four digits, more
//             only above 0xffff ("10000:e1:00.0" behind Intel VMD), as sysfs names it
//   spec      the catalogue row's canonical name; re-linked with find_device on input.
//             Written as null when the profile has no spec or its spec is not a catalogue
//             row (a caller-made device_spec cannot be re-linked).
//   warning   {"kind": warning_kind, "backend": backend_id | null, "subject": str,
//              "message": str, "code": i32}
//   host      {"cpu": cpu, "memory": memory, "numa": [{"id": u32, "memory_bytes": u64,
//              "cpus": str}…]}
//   cpu       {"model": str, "vendor": vendor, "arch": cpu_arch, "sockets": u32,
//              "cores": u32, "threads": u32, "usable_threads": u32, "cpu_quota": number,
//              "features": [cpu_feature…]}
//   memory    {"total_bytes": S<u64>, "available_bytes": S<u64>, "cgroup_limit_bytes": S<u64>,
//              "cgroup_free_bytes": S<u64>}
//   system    {"pci_devices": [pci_device…], "interconnects": [interconnect…],
//              "storage": [storage…], "environment": environment}
//   pci_device {"address": pci_address, "class_code": u32, "vendor_id": u16,
//              "device_id": u16, "subsystem_vendor_id": u16, "subsystem_device_id": u16,
//              "link_current": S<link>, "link_max": S<link>, "numa_node": i32, "driver": str}
//   interconnect {"kind": interconnect_kind, "scope": link_scope, "name": str,
//              "state": str, "bandwidth_gbps": S<number>, "devices": [u32…]}
//   storage   {"name": str, "model": str, "kind": storage_kind, "size_bytes": u64,
//              "read_bandwidth_gbps": S<number>}
//   environment {"container": container_runtime, "kubernetes": bool,
//              "kubernetes_namespace": str, "wsl": bool, "hypervisor": str,
//              "cloud": cloud_provider, "instance_type": str, "region": str, "zone": str}
//
// Enums are written as their stable table names (to_string) and read back only in exactly
// that spelling: the CLI's loose matching is for people, this format has one spelling.
// Byte counts and ids are JSON integers (exact to 2^64-1); GB/s, watts, TFLOPS are numbers.
//
// Reading is strict about what is there and lenient about what is not. A present key must
// have the right type, a known name, and a value its field can hold (integers in range,
// numbers finite), or the whole read fails; whether a value is plausible is detection's
// business, not the reader's. Required: schema_version, and the keys that say what a
// record is (a profile's, warning's and interconnect's "kind", a PCI device's "address", a
// storage device's "name", a NUMA node's "id", a link's "generation" and "width", a
// sourced value's "value" and "origin"); any other missing key keeps the type's default.
// An object that names a key twice is refused when read from text (JSON leaves its
// meaning to the reader).
//
// Versions: schema_version is the format's major version. Within one, a later release
// only adds keys to objects; unknown keys are ignored, so its documents read here (and
// write back without them). A release that removes or retypes a key, or adds a name to an
// enum (which an older reader could not hold), raises schema_version; a newer one is
// refused: "written by a newer ai-hwaccel (schema N); this build reads up to M". Strings
// longer than an inplace_string's capacity are refused, never cut; arrays are limited to
// json_max_array_size elements.
//
// Writing never fails. Strings that are not valid UTF-8 (a tool printing Latin-1) are
// written with each offending byte replaced by '?', so the output is valid JSON and reads
// back (those bytes changed, the length kept); a NaN or infinite number, which JSON cannot
// spell, is written as unknown (null, or 0 where 0 means none), and so are values the
// reader refuses as impossible, so that a written document always reads: a peak rate not
// above 0, a PCI class code past 24 bits, a profile's PCI address whose device or
// function no bus can have (a system PCI device with such an address, which it is known
// by, is left out). Otherwise to_json_string → registry_from_json gives back an equal
// registry.
//
// Errors: registry_from_json never throws (except std::bad_alloc) and reports
// "<JSON pointer>: <what is wrong>". The ADL from_json overloads, which nlohmann calls
// from get<>(), throw json_error (a nlohmann::json::exception, id 599) when
// AI_HWACCEL_EXCEPTIONS is 1 and call std::abort() when it is 0, as nlohmann itself does
// under JSON_NOEXCEPTION; in builds without exceptions use registry_from_json. Nothing here
// needs exceptions or RTTI: the reader checks every type before it reads a value.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_JSON

#include "ai_hwaccel/core/backend.hpp"
#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/device_spec.hpp"
#include "ai_hwaccel/core/inplace_string.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/registry.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// The most elements registry_from_json accepts in any one array (devices, warnings, PCI
/// devices, …): far above any real machine, low enough that a hostile document cannot make
/// the reader allocate without bound.
inline constexpr std::size_t json_max_array_size = std::size_t{1} << 16;

namespace detail::json_io {

using json = nlohmann::json;

// --- Enum names ------------------------------------------------------------------------
// One reader for every enum: the value whose to_string is exactly `s`. Table-driven enums
// bring their count; the rest are switches whose to_string falls back to a known name, and
// the checks below fail to compile when one of them grows an enumerator this count misses
// (its name would then differ from the fallback).
template <class E>
struct enum_traits;
#define AI_HWACCEL_DETAIL_JSON_ENUM(E, N, WHAT)                                                \
    template <>                                                                                \
    struct enum_traits<E> {                                                                    \
        static constexpr std::size_t count = N;                                                \
        static constexpr std::string_view what = WHAT;                                         \
    };
AI_HWACCEL_DETAIL_JSON_ENUM(family, family_count, "family")
AI_HWACCEL_DETAIL_JSON_ENUM(vendor, vendor_count, "vendor")
AI_HWACCEL_DETAIL_JSON_ENUM(device_kind, device_kind_count, "device_kind")
AI_HWACCEL_DETAIL_JSON_ENUM(dtype, dtype_count, "dtype")
AI_HWACCEL_DETAIL_JSON_ENUM(memory_type, memory_type_count, "memory_type")
AI_HWACCEL_DETAIL_JSON_ENUM(interconnect_kind, interconnect_kind_count, "interconnect_kind")
AI_HWACCEL_DETAIL_JSON_ENUM(warning_kind, warning_kind_count, "warning_kind")
AI_HWACCEL_DETAIL_JSON_ENUM(backend_id, backend_count, "backend")
AI_HWACCEL_DETAIL_JSON_ENUM(cpu_feature, cpu_feature_count, "cpu_feature")
AI_HWACCEL_DETAIL_JSON_ENUM(link_scope, 2, "link_scope")
AI_HWACCEL_DETAIL_JSON_ENUM(origin, 7, "origin")
AI_HWACCEL_DETAIL_JSON_ENUM(cpu_arch, 7, "cpu_arch")
AI_HWACCEL_DETAIL_JSON_ENUM(storage_kind, 7, "storage_kind")
AI_HWACCEL_DETAIL_JSON_ENUM(container_runtime, 6, "container_runtime")
AI_HWACCEL_DETAIL_JSON_ENUM(cloud_provider, 6, "cloud_provider")
#undef AI_HWACCEL_DETAIL_JSON_ENUM

/// The first value past the counted ones names nothing new: to_string falls back to the
/// first name (a switch's default) or the last (link_scope's two-way choice).
template <class E>
constexpr bool count_is_complete() noexcept {
    constexpr auto n = enum_traits<E>::count;
    const auto past = to_string(static_cast<E>(n));
    return past == to_string(static_cast<E>(0)) || past == to_string(static_cast<E>(n - 1));
}
static_assert(count_is_complete<link_scope>());
static_assert(count_is_complete<origin>());
static_assert(count_is_complete<cpu_arch>());
static_assert(count_is_complete<storage_kind>());
static_assert(count_is_complete<container_runtime>());
static_assert(count_is_complete<cloud_provider>());

template <class E>
constexpr std::optional<E> enum_from_name(std::string_view s) noexcept {
    for (std::size_t i = 0; i < enum_traits<E>::count; ++i) {
        const auto e = static_cast<E>(i);
        if (to_string(e) == s) return e;
    }
    return std::nullopt;
}
static_assert(enum_from_name<device_kind>("cuda_gpu") == device_kind::cuda_gpu);
static_assert(enum_from_name<memory_type>("HBM3e") == memory_type::hbm3e);
static_assert(!enum_from_name<memory_type>("hbm3e")); // exact spelling only
static_assert(enum_from_name<link_scope>("inter_node") == link_scope::inter_node);
static_assert(!enum_from_name<origin>("bogus"));

template <class E>
json enum_to_json(E e) {
    return json(std::string(to_string(e)));
}

// --- Text ------------------------------------------------------------------------------
/// `s` with every byte that does not start a well-formed UTF-8 sequence (RFC 3629: no
/// overlong forms, no surrogates, nothing above U+10FFFF) replaced by '?'. Same length,
/// so an inplace_string's text still fits its capacity when read back.
inline std::string valid_utf8(std::string_view s) {
    std::string out(s);
    for (std::size_t i = 0; i < s.size();) {
        if (const std::size_t n = utf8_length_at(s, i)) {
            i += n;
        } else {
            out[i++] = '?';
        }
    }
    return out;
}

/// A short, printable-ASCII rendering of untrusted text for an error message.
inline std::string excerpt(std::string_view s) {
    constexpr std::size_t limit = 64;
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
    }
    if (s.size() > limit) out += "...";
    out += '"';
    return out;
}

inline const char* describe(const json& j) noexcept {
    switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a non-integer number";
    case json::value_t::binary: return "binary data";
    case json::value_t::discarded: return "a discarded value";
    }
    return "an unknown value";
}

// --- Writing ---------------------------------------------------------------------------
template <class T>
json sourced_to_json(const sourced<T>& s) {
    // NaN or infinity has no JSON spelling: such a reading is written as unknown.
    if constexpr (std::is_floating_point_v<T>)
        if (!std::isfinite(s.value)) return nullptr;
    if (!s.has_value()) return nullptr;
    json j = json::object();
    j["value"] = s.value;
    j["origin"] = enum_to_json(s.from);
    return j;
}

// --- Reading ---------------------------------------------------------------------------
/// Reads JSON values into our types, tracking where it is (a JSON pointer) so that the
/// first failure can say exactly what and where. Never throws on content: every read checks
/// the type before touching the value.
class reader {
public:
    /// One step of the path to the value being read: `key`, or array element `index - 1`.
    struct step {
        std::string_view key;
        std::size_t index = 0;
    };

    const std::string& error() const noexcept { return error_; }

    /// Leaves the step it entered on scope exit.
    class scope {
    public:
        explicit scope(std::vector<step>& path) noexcept : path_(path) {}
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;
        ~scope() { path_.pop_back(); }

    private:
        std::vector<step>& path_;
    };
    // The path is kept as steps (a key seen in the document or written here, which outlives
    // the read, or an array index) and spelled out only for an error: most reads succeed.
    [[nodiscard]] scope enter(std::string_view key) {
        path_.push_back({key, 0});
        return scope(path_);
    }
    [[nodiscard]] scope enter(std::size_t index) {
        path_.push_back({{}, index + 1});
        return scope(path_);
    }

    bool fail(std::string_view what) {
        if (error_.empty()) {
            error_ = path_.empty() ? std::string("document") : valid_utf8(pointer());
            error_ += ": ";
            error_ += what;
        }
        return false;
    }
    bool expected(std::string_view what, const json& got) {
        std::string m = "expected ";
        m += what;
        m += ", got ";
        m += describe(got);
        return fail(m);
    }

    // Reads member `key` of object `obj` into `out` when present; a missing key keeps
    // `out` as it is.
    template <class T>
    bool field(const json& obj, const char* key, T& out) {
        const auto it = obj.find(key);
        if (it == obj.end()) return true;
        const auto s = enter(key);
        return read(*it, out);
    }
    bool object(const json& j) { return j.is_object() || expected("an object", j); }
    // An object that has every key in `keys`: the ones that say what a record is (its kind,
    // its address, its name). Everything else a record holds may be missing and keeps its
    // default, as an unknown value would.
    bool object_with(const json& j, std::initializer_list<const char*> keys) {
        if (!object(j)) return false;
        for (const char* k : keys)
            if (!j.contains(k)) return fail(std::string("missing required key \"") + k + '"');
        return true;
    }

    // --- Scalars ---
    bool read(const json& j, bool& out) {
        const auto* b = j.get_ptr<const json::boolean_t*>();
        if (b == nullptr) return expected("a boolean", j);
        out = *b;
        return true;
    }
    template <class I>
        requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
    bool read(const json& j, I& out) {
        using lim = std::numeric_limits<I>;
        if (const auto* u = j.get_ptr<const json::number_unsigned_t*>()) {
            if (*u > static_cast<std::uint64_t>(lim::max())) return out_of_range(std::to_string(*u), out);
            out = static_cast<I>(*u);
            return true;
        }
        if (const auto* s = j.get_ptr<const json::number_integer_t*>()) {
            if constexpr (std::is_unsigned_v<I>) {
                if (*s < 0 || static_cast<std::uint64_t>(*s) > static_cast<std::uint64_t>(lim::max()))
                    return out_of_range(std::to_string(*s), out);
            } else {
                if (*s < static_cast<std::int64_t>(lim::min()) || *s > static_cast<std::int64_t>(lim::max()))
                    return out_of_range(std::to_string(*s), out);
            }
            out = static_cast<I>(*s);
            return true;
        }
        // JSON Schema counts 85520809984.0 as an integer, and writers such as Python's json
        // write sizes so: a number with no fraction is one, up to 2^53 (where doubles stop
        // holding every integer).
        if (const auto* f = j.get_ptr<const json::number_float_t*>();
            f && std::isfinite(*f) && *f == std::floor(*f) && std::fabs(*f) <= 9007199254740992.0) {
            if (*f < static_cast<double>(lim::min()) || *f > static_cast<double>(lim::max()))
                return out_of_range(j.dump(), out);
            out = static_cast<I>(*f);
            return true;
        }
        return expected(std::is_unsigned_v<I> ? "a non-negative integer" : "an integer", j);
    }
    bool read(const json& j, double& out) {
        double v = 0;
        if (const auto* f = j.get_ptr<const json::number_float_t*>()) v = *f;
        else if (const auto* u = j.get_ptr<const json::number_unsigned_t*>()) v = static_cast<double>(*u);
        else if (const auto* s = j.get_ptr<const json::number_integer_t*>()) v = static_cast<double>(*s);
        else return expected("a number", j);
        if (!std::isfinite(v)) return fail("number out of range (not finite)");
        out = v;
        return true;
    }
    bool read(const json& j, std::string& out) {
        const auto* s = j.get_ptr<const json::string_t*>();
        if (s == nullptr) return expected("a string", j);
        out = *s;
        return true;
    }
    template <std::size_t N>
    bool read(const json& j, inplace_string<N>& out) {
        const auto* s = j.get_ptr<const json::string_t*>();
        if (s == nullptr) return expected("a string", j);
        if (s->size() > N)
            return fail("string of " + std::to_string(s->size()) + " bytes is longer than the " +
                        std::to_string(N) + " this field holds");
        out.assign(*s);
        return true;
    }
    template <class E>
        requires std::is_enum_v<E>
    bool read(const json& j, E& out) {
        const auto* s = j.get_ptr<const json::string_t*>();
        if (s == nullptr) return expected("a string (" + std::string(enum_traits<E>::what) + " name)", j);
        const auto e = enum_from_name<E>(*s);
        if (!e) return fail("unknown " + std::string(enum_traits<E>::what) + " " + excerpt(*s));
        out = *e;
        return true;
    }

    // --- Small compounds ---
    template <class T>
    bool read(const json& j, sourced<T>& out) {
        if (j.is_null()) {
            out = sourced<T>{};
            return true;
        }
        if (!j.is_object()) return expected("null or an object {\"value\", \"origin\"}", j);
        const auto o = j.find("origin");
        const auto v = j.find("value");
        if (o == j.end()) return fail("missing \"origin\"");
        if (v == j.end()) return fail("missing \"value\"");
        origin from = origin::none;
        {
            const auto s = enter("origin");
            if (!read(*o, from)) return false;
            if (from == origin::none) return fail("origin \"none\" with a value (write null for no value)");
        }
        T value{};
        {
            const auto s = enter("value");
            if (!read(*v, value)) return false;
        }
        out = sourced<T>{value, from};
        return true;
    }
    bool read(const json& j, pci_address& out) {
        const auto* s = j.get_ptr<const json::string_t*>();
        if (s == nullptr) return expected("a PCI address string \"dddd:bb:dd.f\"", j);
        const auto a = parse_pci_address(*s);
        if (!a) return fail("not a PCI address: " + excerpt(*s));
        out = *a;
        return true;
    }
    bool read(const json& j, std::optional<pci_address>& out) {
        if (j.is_null()) {
            out.reset();
            return true;
        }
        pci_address a;
        if (!read(j, a)) return false;
        out = a;
        return true;
    }
    bool read(const json& j, std::optional<std::uint8_t>& out) {
        if (j.is_null()) {
            out.reset();
            return true;
        }
        std::uint8_t v = 0;
        if (!read(j, v)) return false;
        out = v;
        return true;
    }
    bool read(const json& j, std::optional<backend_id>& out) {
        if (j.is_null()) {
            out.reset();
            return true;
        }
        backend_id b{};
        if (!read(j, b)) return false;
        out = b;
        return true;
    }
    bool read(const json& j, pcie_link& out) {
        return object_with(j, {"generation", "width"}) && field(j, "generation", out.generation) &&
               field(j, "width", out.width);
    }
    bool read(const json& j, peak_throughput& out) {
        const auto* obj = j.get_ptr<const json::object_t*>();
        if (obj == nullptr) return expected("an object of dtype: number", j);
        out = {};
        for (const auto& [key, value] : *obj) {
            const auto s = enter(key);
            const auto d = enum_from_name<dtype>(key);
            if (!d) return fail("unknown dtype " + excerpt(key));
            double v = 0;
            if (!read(value, v)) return false;
            // A rate is positive (the schema's exclusiveMinimum 0); the writer leaves 0 out.
            if (!(v > 0)) return fail("a peak rate must be positive, got " + value.dump());
            set(out, *d, v);
        }
        return true;
    }
    bool read(const json& j, cpu_features& out) {
        if (!j.is_array()) return expected("an array of cpu_feature names", j);
        out = {};
        std::size_t i = 0;
        for (const auto& e : j) {
            const auto s = enter(i++);
            cpu_feature f{};
            if (!read(e, f)) return false;
            out.set(f);
        }
        return true;
    }
    template <class T>
    bool read(const json& j, std::vector<T>& out) {
        if (!j.is_array()) return expected("an array", j);
        if (j.size() > json_max_array_size)
            return fail("array of " + std::to_string(j.size()) + " elements is longer than the " +
                        std::to_string(json_max_array_size) + " accepted");
        out.clear();
        out.reserve(j.size());
        std::size_t i = 0;
        for (const auto& e : j) {
            const auto s = enter(i++);
            T v{};
            if (!read(e, v)) return false;
            out.push_back(std::move(v));
        }
        return true;
    }

    // --- Records ---
    bool read(const json& j, accelerator_profile& p) {
        if (!object_with(j, {"kind"})) return false;
        std::optional<std::string> spec_name;
        if (const auto it = j.find("spec"); it != j.end() && !it->is_null()) {
            const auto s = enter("spec");
            std::string name;
            if (!read(*it, name)) return false;
            spec_name = std::move(name);
        }
        const bool ok =
            field(j, "kind", p.kind) && field(j, "index", p.index) && field(j, "available", p.available) &&
            field(j, "software", p.software) && field(j, "unified_memory", p.unified_memory) &&
            field(j, "vendor", p.maker) && field(j, "name", p.name) && field(j, "uuid", p.uuid) &&
            field(j, "pci", p.pci) && field(j, "stack", p.stack) && field(j, "pci_device_id", p.pci_device_id) &&
            field(j, "arch", p.arch) && field(j, "driver_version", p.driver_version) &&
            field(j, "memory_bytes", p.memory_bytes) && field(j, "memory_used_bytes", p.memory_used_bytes) &&
            field(j, "memory_free_bytes", p.memory_free_bytes) &&
            field(j, "memory_bandwidth_gbps", p.memory_bandwidth_gbps) &&
            field(j, "peak_tflops", p.peak) && field(j, "peak_origin", p.peak_from) &&
            field(j, "compute_units", p.compute_units) && field(j, "chips", p.chips) &&
            field(j, "pcie_current", p.pcie_current) && field(j, "pcie_max", p.pcie_max) &&
            field(j, "numa_node", p.numa_node) && field(j, "temperature_c", p.temperature_c) &&
            field(j, "power_draw_watts", p.power_draw_watts) &&
            field(j, "power_limit_watts", p.power_limit_watts) &&
            field(j, "utilization_percent", p.utilization_percent);
        if (!ok) return false;
        p.spec = nullptr;
        if (spec_name) {
            p.spec = find_device(*spec_name);
            if (p.spec == nullptr) {
                const auto s = enter("spec");
                return fail("no catalogue device named " + excerpt(*spec_name));
            }
            fill_from_spec(j, p);
        }
        return true;
    }
    // A device written by hand that names its catalogue row and leaves a figure out means
    // the row's (origin catalogue), as a detected device is completed; a key that is there,
    // null included, stays as written (the writer writes every key: a round trip is exact).
    static void fill_from_spec(const json& j, accelerator_profile& p) {
        accelerator_profile row = p;
        row.apply_spec(*p.spec);
        const auto absent = [&](const char* key) { return j.find(key) == j.end(); };
        if (absent("vendor")) p.maker = row.maker;
        if (absent("name")) p.name = p.spec->name;
        if (absent("memory_bytes")) p.memory_bytes = row.memory_bytes;
        if (absent("memory_bandwidth_gbps")) p.memory_bandwidth_gbps = row.memory_bandwidth_gbps;
        if (absent("peak_tflops") && absent("peak_origin")) {
            p.peak = row.peak;
            p.peak_from = row.peak_from;
        }
        if (absent("compute_units")) p.compute_units = row.compute_units;
        if (absent("arch")) p.arch = row.arch;
        if (absent("power_limit_watts")) p.power_limit_watts = row.power_limit_watts;
        if (absent("unified_memory")) p.unified_memory = row.unified_memory;
    }
    bool read(const json& j, warning& w) {
        return object_with(j, {"kind"}) && field(j, "kind", w.kind) && field(j, "backend", w.backend) &&
               field(j, "subject", w.subject) && field(j, "message", w.message) && field(j, "code", w.code);
    }
    bool read(const json& j, cpu_info& c) {
        return object(j) && field(j, "model", c.model) && field(j, "vendor", c.maker) &&
               field(j, "arch", c.arch) && field(j, "sockets", c.sockets) && field(j, "cores", c.cores) &&
               field(j, "threads", c.threads) && field(j, "usable_threads", c.usable_threads) &&
               field(j, "cpu_quota", c.cpu_quota) && field(j, "features", c.features);
    }
    bool read(const json& j, memory_info& m) {
        return object(j) && field(j, "total_bytes", m.total_bytes) &&
               field(j, "available_bytes", m.available_bytes) &&
               field(j, "cgroup_limit_bytes", m.cgroup_limit_bytes) &&
               field(j, "cgroup_free_bytes", m.cgroup_free_bytes);
    }
    bool read(const json& j, numa_node& n) {
        return object_with(j, {"id"}) && field(j, "id", n.id) && field(j, "memory_bytes", n.memory_bytes) &&
               field(j, "cpus", n.cpus);
    }
    bool read(const json& j, host_info& h) {
        return object(j) && field(j, "cpu", h.cpu) && field(j, "memory", h.memory) && field(j, "numa", h.numa);
    }
    bool read(const json& j, pci_device& d) {
        if (!(object_with(j, {"address"}) && field(j, "address", d.address) && field(j, "class_code", d.class_code)))
            return false;
        if (d.class_code > 0xFFFFFFu) {
            const auto s = enter("class_code");
            return fail("a PCI class code has 24 bits, got " + std::to_string(d.class_code));
        }
        return field(j, "vendor_id", d.vendor_id) &&
               field(j, "device_id", d.device_id) &&
               field(j, "subsystem_vendor_id", d.subsystem_vendor_id) &&
               field(j, "subsystem_device_id", d.subsystem_device_id) &&
               field(j, "link_current", d.link_current) && field(j, "link_max", d.link_max) &&
               field(j, "numa_node", d.numa_node) && field(j, "driver", d.driver);
    }
    bool read(const json& j, interconnect& l) {
        return object_with(j, {"kind"}) && field(j, "kind", l.kind) && field(j, "scope", l.scope) &&
               field(j, "name", l.name) && field(j, "state", l.state) &&
               field(j, "bandwidth_gbps", l.bandwidth_gbps) && field(j, "devices", l.devices);
    }
    bool read(const json& j, storage_device& d) {
        return object_with(j, {"name"}) && field(j, "name", d.name) && field(j, "model", d.model) &&
               field(j, "kind", d.kind) && field(j, "size_bytes", d.size_bytes) &&
               field(j, "read_bandwidth_gbps", d.read_bandwidth_gbps);
    }
    bool read(const json& j, runtime_environment& e) {
        return object(j) && field(j, "container", e.container) && field(j, "kubernetes", e.kubernetes) &&
               field(j, "kubernetes_namespace", e.kubernetes_namespace) && field(j, "wsl", e.wsl) &&
               field(j, "hypervisor", e.hypervisor) && field(j, "cloud", e.cloud) &&
               field(j, "instance_type", e.instance_type) && field(j, "region", e.region) &&
               field(j, "zone", e.zone);
    }
    bool read(const json& j, system_io& io) {
        return object(j) && field(j, "pci_devices", io.pci_devices) &&
               field(j, "interconnects", io.interconnects) && field(j, "storage", io.storage) &&
               field(j, "environment", io.environment);
    }
    bool read(const json& j, accelerator_registry& r) {
        if (!object(j)) return false;
        const auto version = j.find("schema_version");
        if (version == j.end()) return fail("missing schema_version");
        {
            const auto s = enter("schema_version");
            std::int64_t v = 0;
            if (!read(*version, v)) return false;
            if (v > accelerator_registry::schema_version)
                return fail("written by a newer ai-hwaccel (schema " + std::to_string(v) +
                            "); this build reads up to " + std::to_string(accelerator_registry::schema_version));
            if (v < 1) return fail("unsupported schema_version " + std::to_string(v));
        }
        std::vector<accelerator_profile> devices;
        std::vector<warning> warnings;
        host_info host;
        system_io io;
        if (!(field(j, "devices", devices) && field(j, "warnings", warnings) && field(j, "host", host) &&
              field(j, "system", io)))
            return false;
        r = accelerator_registry(std::move(devices), std::move(warnings), std::move(host), std::move(io));
        return true;
    }

private:
    template <class I>
    bool out_of_range(const std::string& text, const I&) {
        using lim = std::numeric_limits<I>;
        return fail("integer out of range: " + text + " (expected " + std::to_string(lim::min()) + ".." +
                    std::to_string(lim::max()) + ")");
    }
    static void set(peak_throughput& p, dtype d, double v) noexcept {
        switch (d) {
        case dtype::fp64: p.fp64 = v; break;
        case dtype::fp32: p.fp32 = v; break;
        case dtype::tf32: p.tf32 = v; break;
        case dtype::bf16: p.bf16 = v; break;
        case dtype::fp16: p.fp16 = v; break;
        case dtype::fp8: p.fp8 = v; break;
        case dtype::int8: p.int8 = v; break;
        case dtype::fp6: p.fp6 = v; break;
        case dtype::fp4: p.fp4 = v; break;
        case dtype::int4: p.int4 = v; break;
        }
    }

    /// The path as a JSON pointer (RFC 6901: "~" as "~0", "/" as "~1"); keys come from the
    /// input, so each is cut to 64 bytes and control characters become '?'.
    std::string pointer() const {
        constexpr std::size_t limit = 64;
        std::string out;
        for (const step& st : path_) {
            out += '/';
            if (st.index != 0) {
                out += std::to_string(st.index - 1);
                continue;
            }
            for (char c : st.key.substr(0, limit)) {
                if (c == '~') out += "~0";
                else if (c == '/') out += "~1";
                else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += '?';
                else out += c;
            }
        }
        return out;
    }

    std::vector<step> path_;
    std::string error_;
};

} // namespace detail::json_io

#if AI_HWACCEL_EXCEPTIONS
/// What the from_json overloads (and so `j.get<T>()`) throw on input they cannot read. A
/// nlohmann::json::exception, so code that catches nlohmann's exceptions catches it too;
/// what() is "[ai_hwaccel.json_error] <JSON pointer>: <what is wrong>".
class json_error : public nlohmann::json::exception {
public:
    explicit json_error(const std::string& message)
        : exception(599, ("[ai_hwaccel.json_error] " + message).c_str()) {}
};
#endif

namespace detail::json_io {

/// What the ADL from_json overloads do with a failed read (see the header comment).
[[noreturn]] inline void conversion_failed(const std::string& message) {
#if AI_HWACCEL_EXCEPTIONS
    throw json_error(message);
#else
    (void)message;
    std::abort();
#endif
}

template <class T>
void read_or_raise(const json& j, T& out) {
    reader r;
    T v{};
    if (!r.read(j, v)) conversion_failed(r.error());
    out = std::move(v);
}

/// Records why nlohmann's parser refused a text; everything else is accepted and dropped.
class parse_error_recorder final : public nlohmann::json_sax<json> {
public:
    std::string message;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const json::exception& ex) override {
        // nlohmann quotes the offending token, which may be long or not UTF-8.
        // Cut first, then made valid: a cut inside a character leaves no stray byte.
        std::string_view what = ex.what();
        const bool cut = what.size() > 240;
        message = valid_utf8(what.substr(0, 240));
        if (cut) message += "...";
        return false;
    }
};

/// Builds the DOM of JSON text as nlohmann::json::parse does, through nlohmann's SAX
/// reader, and stops at the first key an object names twice: JSON leaves such an object to
/// the reader and nlohmann's own DOM keeps the last value, so a reader that let
/// {"schema_version": 9, "schema_version": 1} through would read past a newer version.
/// (nlohmann's parser callback could watch the keys too, but it scans an array after
/// each object that ends in it: quadratic in the objects of an array.)
class unique_key_dom {
public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    explicit unique_key_dom(json& root) : root_(&root) {}

    std::string duplicate; ///< the first key named twice, or empty

    bool null() { return put(nullptr) != nullptr; }
    bool boolean(bool v) { return put(v) != nullptr; }
    bool number_integer(number_integer_t v) { return put(v) != nullptr; }
    bool number_unsigned(number_unsigned_t v) { return put(v) != nullptr; }
    bool number_float(number_float_t v, const string_t&) { return put(v) != nullptr; }
    bool string(string_t& v) { return put(std::move(v)) != nullptr; }
    bool binary(binary_t& v) { return put(json::binary(std::move(v))) != nullptr; }
    bool start_object(std::size_t) {
        open_.push_back(put(json::object()));
        return true;
    }
    bool key(string_t& k) {
        json& object = *open_.back();
        if (object.contains(k)) {
            duplicate = k;
            return false;
        }
        member_ = &object[k];
        return true;
    }
    bool end_object() {
        open_.pop_back();
        return true;
    }
    bool start_array(std::size_t) {
        open_.push_back(put(json::array()));
        return true;
    }
    bool end_array() {
        open_.pop_back();
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const json::exception&) { return false; }

private:
    // Where a value goes: the root, the end of the open array, or the member whose key
    // came last. A container stays where it is while it is open (nothing is added to its
    // parent meanwhile), so the pointers in open_ hold.
    json* put(json&& v) {
        if (open_.empty()) {
            *root_ = std::move(v);
            return root_;
        }
        json& top = *open_.back();
        if (top.is_array()) {
            top.push_back(std::move(v));
            return &top.back();
        }
        *member_ = std::move(v);
        return member_;
    }

    json* root_;
    std::vector<json*> open_;
    json* member_ = nullptr;
};

/// Parses JSON text as nlohmann::json::parse does without exceptions (a discarded value
/// on an error), and puts in `duplicate` the first key an object names twice, for which
/// it also gives a discarded value (unique_key_dom).
inline json parse_unique_keys(const char* first, const char* last, std::string& duplicate) {
    json j;
    unique_key_dom dom(j);
    if (!json::sax_parse(first, last, &dom)) {
        duplicate = std::move(dom.duplicate);
        return json(json::value_t::discarded);
    }
    return j;
}
/// The message for a key named twice: the key quoted, cut to 80 bytes.
inline std::string duplicate_key_message(const std::string& key) {
    return "invalid JSON: an object names \"" + valid_utf8(std::string_view(key).substr(0, 80)) + "\" twice";
}

} // namespace detail::json_io

// ---------------------------------------------------------------------------------------
// ADL hooks for nlohmann/json. Enums are strings; the rest as in the header comment.

#define AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(E)                                                   \
    inline void to_json(nlohmann::json& j, E e) { j = detail::json_io::enum_to_json(e); }      \
    inline void from_json(const nlohmann::json& j, E& e) { detail::json_io::read_or_raise(j, e); }
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(family)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(vendor)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(device_kind)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(dtype)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(memory_type)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(interconnect_kind)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(link_scope)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(origin)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(warning_kind)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(backend_id)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(cpu_feature)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(cpu_arch)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(storage_kind)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(container_runtime)
AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS(cloud_provider)
#undef AI_HWACCEL_DETAIL_JSON_ENUM_HOOKS

template <class T>
void to_json(nlohmann::json& j, const sourced<T>& s) {
    j = detail::json_io::sourced_to_json(s);
}
template <class T>
void from_json(const nlohmann::json& j, sourced<T>& s) {
    detail::json_io::read_or_raise(j, s);
}

template <std::size_t N>
void to_json(nlohmann::json& j, const inplace_string<N>& s) {
    j = detail::json_io::valid_utf8(s.view());
}
template <std::size_t N>
void from_json(const nlohmann::json& j, inplace_string<N>& s) {
    detail::json_io::read_or_raise(j, s);
}

inline void to_json(nlohmann::json& j, const pci_address& a) { j = std::string(a.text().data()); }
inline void from_json(const nlohmann::json& j, pci_address& a) { detail::json_io::read_or_raise(j, a); }

inline void to_json(nlohmann::json& j, const pcie_link& l) {
    j = nlohmann::json::object();
    j["generation"] = l.generation;
    j["width"] = l.width;
}
inline void from_json(const nlohmann::json& j, pcie_link& l) { detail::json_io::read_or_raise(j, l); }

inline void to_json(nlohmann::json& j, const peak_throughput& p) {
    j = nlohmann::json::object();
    for (const auto& row : dtype_table)
        if (p[row.id] > 0 && std::isfinite(p[row.id])) j[std::string(row.name)] = p[row.id];
}
inline void from_json(const nlohmann::json& j, peak_throughput& p) { detail::json_io::read_or_raise(j, p); }

inline void to_json(nlohmann::json& j, const cpu_features& f) {
    j = nlohmann::json::array();
    for (const auto& row : cpu_feature_table)
        if (f.has(row.id)) j.push_back(std::string(row.name));
}
inline void from_json(const nlohmann::json& j, cpu_features& f) { detail::json_io::read_or_raise(j, f); }

inline void to_json(nlohmann::json& j, const accelerator_profile& p) {
    j = nlohmann::json::object();
    j["kind"] = p.kind;
    j["index"] = p.index;
    j["available"] = p.available;
    j["software"] = p.software;
    j["unified_memory"] = p.unified_memory;
    j["vendor"] = p.maker;
    j["name"] = p.name;
    j["uuid"] = p.uuid;
    // An address no bus can have (device past 31, function past 7) is written as unknown.
    j["pci"] = p.pci && p.pci->valid() ? nlohmann::json(*p.pci) : nlohmann::json(nullptr);
    j["stack"] = p.stack ? nlohmann::json(*p.stack) : nlohmann::json(nullptr);
    j["pci_device_id"] = p.pci_device_id;
    j["arch"] = p.arch;
    j["driver_version"] = p.driver_version;
    j["memory_bytes"] = p.memory_bytes;
    j["memory_used_bytes"] = p.memory_used_bytes;
    j["memory_free_bytes"] = p.memory_free_bytes;
    j["memory_bandwidth_gbps"] = p.memory_bandwidth_gbps;
    j["peak_tflops"] = p.peak;
    j["peak_origin"] = p.peak_from;
    j["compute_units"] = p.compute_units;
    j["chips"] = p.chips;
    j["pcie_current"] = p.pcie_current;
    j["pcie_max"] = p.pcie_max;
    j["numa_node"] = p.numa_node;
    j["temperature_c"] = p.temperature_c;
    j["power_draw_watts"] = p.power_draw_watts;
    j["power_limit_watts"] = p.power_limit_watts;
    j["utilization_percent"] = p.utilization_percent;
    // Only a catalogue row can be found again by name.
    const bool linkable = in_catalogue(p.spec);
    j["spec"] = linkable ? nlohmann::json(std::string(p.spec->name)) : nlohmann::json(nullptr);
}
inline void from_json(const nlohmann::json& j, accelerator_profile& p) { detail::json_io::read_or_raise(j, p); }

inline void to_json(nlohmann::json& j, const warning& w) {
    using detail::json_io::valid_utf8;
    j = nlohmann::json::object();
    j["kind"] = w.kind;
    j["backend"] = w.backend ? nlohmann::json(*w.backend) : nlohmann::json(nullptr);
    j["subject"] = valid_utf8(w.subject);
    j["message"] = valid_utf8(w.message);
    j["code"] = w.code;
}
inline void from_json(const nlohmann::json& j, warning& w) { detail::json_io::read_or_raise(j, w); }

inline void to_json(nlohmann::json& j, const cpu_info& c) {
    j = nlohmann::json::object();
    j["model"] = detail::json_io::valid_utf8(c.model);
    j["vendor"] = c.maker;
    j["arch"] = c.arch;
    j["sockets"] = c.sockets;
    j["cores"] = c.cores;
    j["threads"] = c.threads;
    j["usable_threads"] = c.usable_threads;
    j["cpu_quota"] = std::isfinite(c.cpu_quota) ? c.cpu_quota : 0.0;
    j["features"] = c.features;
}
inline void from_json(const nlohmann::json& j, cpu_info& c) { detail::json_io::read_or_raise(j, c); }

inline void to_json(nlohmann::json& j, const memory_info& m) {
    j = nlohmann::json::object();
    j["total_bytes"] = m.total_bytes;
    j["available_bytes"] = m.available_bytes;
    j["cgroup_limit_bytes"] = m.cgroup_limit_bytes;
    j["cgroup_free_bytes"] = m.cgroup_free_bytes;
}
inline void from_json(const nlohmann::json& j, memory_info& m) { detail::json_io::read_or_raise(j, m); }

inline void to_json(nlohmann::json& j, const numa_node& n) {
    j = nlohmann::json::object();
    j["id"] = n.id;
    j["memory_bytes"] = n.memory_bytes;
    j["cpus"] = detail::json_io::valid_utf8(n.cpus);
}
inline void from_json(const nlohmann::json& j, numa_node& n) { detail::json_io::read_or_raise(j, n); }

inline void to_json(nlohmann::json& j, const host_info& h) {
    j = nlohmann::json::object();
    j["cpu"] = h.cpu;
    j["memory"] = h.memory;
    j["numa"] = h.numa;
}
inline void from_json(const nlohmann::json& j, host_info& h) { detail::json_io::read_or_raise(j, h); }

inline void to_json(nlohmann::json& j, const pci_device& d) {
    j = nlohmann::json::object();
    j["address"] = d.address;
    j["class_code"] = d.class_code <= 0xFFFFFFu ? d.class_code : 0u; // 0: unknown (the reader refuses more)
    j["vendor_id"] = d.vendor_id;
    j["device_id"] = d.device_id;
    j["subsystem_vendor_id"] = d.subsystem_vendor_id;
    j["subsystem_device_id"] = d.subsystem_device_id;
    j["link_current"] = d.link_current;
    j["link_max"] = d.link_max;
    j["numa_node"] = d.numa_node;
    j["driver"] = detail::json_io::valid_utf8(d.driver);
}
inline void from_json(const nlohmann::json& j, pci_device& d) { detail::json_io::read_or_raise(j, d); }

inline void to_json(nlohmann::json& j, const interconnect& l) {
    using detail::json_io::valid_utf8;
    j = nlohmann::json::object();
    j["kind"] = l.kind;
    j["scope"] = l.scope;
    j["name"] = valid_utf8(l.name);
    j["state"] = valid_utf8(l.state);
    j["bandwidth_gbps"] = l.bandwidth_gbps;
    j["devices"] = l.devices;
}
inline void from_json(const nlohmann::json& j, interconnect& l) { detail::json_io::read_or_raise(j, l); }

inline void to_json(nlohmann::json& j, const storage_device& d) {
    using detail::json_io::valid_utf8;
    j = nlohmann::json::object();
    j["name"] = valid_utf8(d.name);
    j["model"] = valid_utf8(d.model);
    j["kind"] = d.kind;
    j["size_bytes"] = d.size_bytes;
    j["read_bandwidth_gbps"] = d.read_bandwidth_gbps;
}
inline void from_json(const nlohmann::json& j, storage_device& d) { detail::json_io::read_or_raise(j, d); }

inline void to_json(nlohmann::json& j, const runtime_environment& e) {
    using detail::json_io::valid_utf8;
    j = nlohmann::json::object();
    j["container"] = e.container;
    j["kubernetes"] = e.kubernetes;
    j["kubernetes_namespace"] = valid_utf8(e.kubernetes_namespace);
    j["wsl"] = e.wsl;
    j["hypervisor"] = valid_utf8(e.hypervisor);
    j["cloud"] = e.cloud;
    j["instance_type"] = valid_utf8(e.instance_type);
    j["region"] = valid_utf8(e.region);
    j["zone"] = valid_utf8(e.zone);
}
inline void from_json(const nlohmann::json& j, runtime_environment& e) { detail::json_io::read_or_raise(j, e); }

inline void to_json(nlohmann::json& j, const system_io& io) {
    j = nlohmann::json::object();
    // A PCI device is known by its address: one no bus can have leaves the entry out.
    auto& devices = j["pci_devices"] = nlohmann::json::array();
    for (const auto& d : io.pci_devices)
        if (d.address.valid()) devices.push_back(d);
    j["interconnects"] = io.interconnects;
    j["storage"] = io.storage;
    j["environment"] = io.environment;
}
inline void from_json(const nlohmann::json& j, system_io& io) { detail::json_io::read_or_raise(j, io); }

inline void to_json(nlohmann::json& j, const accelerator_registry& r) {
    j = nlohmann::json::object();
    j["schema_version"] = accelerator_registry::schema_version;
    auto& devices = j["devices"] = nlohmann::json::array();
    for (const auto& p : r.all()) devices.push_back(nlohmann::json(p));
    auto& warnings = j["warnings"] = nlohmann::json::array();
    for (const auto& w : r.warnings()) warnings.push_back(nlohmann::json(w));
    j["host"] = r.host();
    j["system"] = r.system();
}
inline void from_json(const nlohmann::json& j, accelerator_registry& r) { detail::json_io::read_or_raise(j, r); }

// ---------------------------------------------------------------------------------------
// Text in, text out.

/// Spaces per level to_json_string writes at most: nlohmann's serializer (3.11) grows its
/// indent buffer once per level, so an indent past 1024 reads beyond it.
inline constexpr int max_json_indent = 64;

/// The registry as JSON text. `indent` < 0 writes one line; otherwise nlohmann's pretty
/// printing with that many spaces per level, at most max_json_indent (more is written as
/// that many).
inline std::string to_json_string(const accelerator_registry& r, int indent = 2) {
    if (indent > max_json_indent) indent = max_json_indent;
    const nlohmann::json j = r;
    // Strings were made valid UTF-8 on the way in, so `replace` never fires; it is there so
    // that writing can never throw (or abort, without exceptions).
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The outcome of reading a registry: the registry, or why there is none.
struct registry_json_result {
    std::optional<accelerator_registry> registry; ///< set on success
    std::string error;                            ///< empty on success, else "<where>: <what>"

    bool ok() const noexcept { return registry.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
};

/// Reads a registry from parsed JSON. Never throws (except std::bad_alloc). A template
/// taking exactly nlohmann::json, so that a string argument picks the text overload below
/// instead of being ambiguous between the two.
template <class Json>
    requires std::is_same_v<Json, nlohmann::json>
registry_json_result registry_from_json(const Json& j) {
    registry_json_result out;
    detail::json_io::reader r;
    accelerator_registry reg;
    if (r.read(j, reg)) out.registry = std::move(reg);
    else out.error = r.error();
    return out;
}

/// Reads a registry from JSON text (as to_json_string writes it). Refuses, with a message:
/// text that is not JSON (including invalid UTF-8, NUL bytes and numbers beyond a double's
/// range), an object naming a key twice, a missing or newer schema_version, values of the
/// wrong type, unknown names, integers out of their field's range, over-long strings or
/// arrays, unknown catalogue devices. Never throws (except std::bad_alloc) and never aborts, whatever the bytes.
inline registry_json_result registry_from_json(std::string_view text) {
    // nlohmann's lexer takes a NUL byte for the end of the input and would ignore whatever
    // follows; JSON text never holds one (inside strings it must be escaped).
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
        registry_json_result out;
        out.error = "invalid JSON: NUL byte at offset " + std::to_string(nul);
        return out;
    }
    const char* const first = text.data();
    const char* const last = first + text.size();
    std::string duplicate;
    const auto j = detail::json_io::parse_unique_keys(first, last, duplicate);
    if (!duplicate.empty()) {
        registry_json_result out;
        out.error = detail::json_io::duplicate_key_message(duplicate);
        return out;
    }
    if (j.is_discarded()) {
        // Parse once more with a recorder to learn why; only failures pay for it.
        detail::json_io::parse_error_recorder why;
        (void)nlohmann::json::sax_parse(first, last, &why);
        registry_json_result out;
        out.error = "invalid JSON: " + (why.message.empty() ? std::string("parse error") : why.message);
        return out;
    }
    return registry_from_json(j);
}

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_JSON
