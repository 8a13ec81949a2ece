// ai-hwaccel for Python: the pybind11 extension `ai_hwaccel._native`.
//
// One translation unit, so the module builds in one compiler run. It wraps the library's
// own types where Python code keeps them (Device = accelerator_profile, Registry =
// accelerator_registry, Model = model_spec, WarningInfo = warning, Interconnect =
// interconnect) and answers the planning questions with plain dicts whose keys follow the
// CLI's --json documents (docs/cli-plan.md), unrounded. Typed stubs: ai_hwaccel/_native.pyi.
//
// Error mapping: an unknown device, model, format, method or optimizer, and a number out
// of range, raise ValueError with the message; a wrong argument type raises TypeError; a
// --root that is not a directory raises NotADirectoryError. Detection itself never raises
// (its problems are the registry's warnings) and runs with the GIL released.
#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core.hpp"
#include "ai_hwaccel/detect/bandwidth.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/io/json.hpp"
#include "ai_hwaccel/plan/cluster.hpp"
#include "ai_hwaccel/plan/cost.hpp"
#include "ai_hwaccel/plan/memory.hpp"
#include "ai_hwaccel/plan/models.hpp"
#include "ai_hwaccel/plan/shard.hpp"
#include "ai_hwaccel/plan/throughput.hpp"
#include "ai_hwaccel/plan/training.hpp"
#include "ai_hwaccel/registry.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <utility>
#include <vector>

namespace py = pybind11;
namespace ah = ai_hwaccel;

// --- argument types ------------------------------------------------------------------------
// pybind11's own casters answer a str without a UTF-8 form (a lone surrogate, "\udcff")
// and an int past 64 bits with TypeError ("incompatible function arguments"), as if the
// type were wrong; these two let such values reach the documented ValueError.

/// A str (or bytes) argument as UTF-8 text.
struct utf8_text : std::string {};

/// An int argument (anything with __index__, not a float) in 64 bits, or how far out it is.
struct whole_arg {
    long long value = 0;
    int overflow = 0;  ///< -1 below, +1 above what 64 signed bits hold (PyLong_AsLongLongAndOverflow)
    std::string text;  ///< the number as Python prints it, when it overflows
};

namespace pybind11::detail {
template <>
struct type_caster<whole_arg> {
    PYBIND11_TYPE_CASTER(whole_arg, const_name("int"));
    bool load(handle src, bool) {
        if (!src || PyFloat_Check(src.ptr()) || !PyIndex_Check(src.ptr())) return false;
        const auto number = reinterpret_steal<object>(PyNumber_Index(src.ptr()));
        if (!number) {
            PyErr_Clear();
            return false;
        }
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return false;
        }
        value = whole_arg{v, overflow, overflow != 0 ? std::string(py::str(number)) : std::string()};
        return true;
    }
    static handle cast(const whole_arg& w, return_value_policy, handle) { return PyLong_FromLongLong(w.value); }
};
} // namespace pybind11::detail

namespace {

// --- values ------------------------------------------------------------------------------

/// Text from the library as a Python str. Tools may print bytes that are not UTF-8
/// (Latin-1 device names); those become U+FFFD instead of raising UnicodeDecodeError.
py::str text(std::string_view s) {
    PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
    if (!o) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(o);
}

py::object text_or_none(std::string_view s) { return s.empty() ? py::object(py::none()) : py::object(text(s)); }

template <class T>
py::object value_of(const ah::sourced<T>& s) {
    return s ? py::cast(s.value) : py::object(py::none());
}
template <class T>
py::object origin_of(const ah::sourced<T>& s) {
    return s ? py::object(text(ah::to_string(s.from))) : py::object(py::none());
}
py::object link_of(const ah::sourced<ah::pcie_link>& s) {
    if (!s) return py::none();
    return py::make_tuple(static_cast<unsigned>(s->generation), static_cast<unsigned>(s->width));
}
/// A rate: the number, or None when unknown (0 means "not known" in plan/).
py::object rate(double v) { return v > 0 ? py::object(py::float_(v)) : py::object(py::none()); }

py::dict peak_dict(const ah::peak_throughput& p) {
    py::dict d;
    for (const auto& row : ah::dtype_table)
        if (p[row.id] > 0) d[text(row.name)] = p[row.id];
    return d;
}

py::dict memory_dict(const ah::memory_estimate& m) {
    py::dict d;
    d["weights_bytes"] = m.weights_bytes;
    d["kv_cache_bytes"] = m.kv_cache_bytes;
    d["overhead_bytes"] = m.overhead_bytes;
    d["total_bytes"] = m.total_bytes();
    return d;
}

// --- arguments ---------------------------------------------------------------------------

/// `v` when it lies in [lo, hi]; else ValueError naming the argument.
long long in_range(const char* name, const whole_arg& v, long long lo, long long hi) {
    if (v.overflow != 0 || v.value < lo || v.value > hi)
        throw py::value_error(std::string(name) + ": " + (v.overflow != 0 ? v.text : std::to_string(v.value)) +
                              " is not a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return v.value;
}
std::uint32_t whole(const char* name, const whole_arg& v, long long lo, long long hi) {
    return static_cast<std::uint32_t>(in_range(name, v, lo, hi));
}
constexpr long long most = 0x7fffffffffffffffLL;

/// prompt_depth, then prompt, as the CLI's --prompt-depth and --prompt: the tokens cached
/// before the prompt and the prompt's length, together at most the context `ctx`; no prompt
/// given is `def`, at most what the depth leaves of the context.
std::pair<std::uint32_t, std::uint32_t> prompt_of(const std::optional<whole_arg>& prompt, const whole_arg& depth,
                                                  std::uint32_t ctx, std::uint32_t def) {
    const auto d = whole("prompt_depth", depth, 0, 1 << 24);
    if (d >= ctx)
        throw py::value_error("prompt_depth: " + std::to_string(d) + " leaves no room in the context (" +
                              std::to_string(ctx) + ") for a prompt");
    const std::uint32_t room = ctx - d;
    return {prompt ? whole("prompt", *prompt, 1, room) : (def < room ? def : room), d};
}

ah::quant_format quant_of(const std::string& name) {
    if (const auto q = ah::parse_quant_format(name)) return *q;
    std::string known;
    for (const auto& row : ah::quant_table) known += (known.empty() ? "" : ", ") + std::string(row.name);
    throw py::value_error("unknown quantization format '" + name + "' (known: " + known + ")");
}

/// A str as UTF-8 text; one that has none (a lone surrogate, "\udcff") is a ValueError
/// naming `what`, not pybind11's cast error.
std::string utf8_of(const py::handle& h, std::string_view what) {
    std::string s;
    try {
        s = h.cast<std::string>();
    } catch (const py::cast_error&) {
        throw py::value_error(std::string(what) + ": not valid Unicode text (it has no UTF-8 form)");
    }
    // bytes arrive as they are: text that is not UTF-8 would make every message quoting
    // it fail to decode (a UnicodeDecodeError about the message, not the argument).
    if (PyBytes_Check(h.ptr()))
        for (std::size_t i = 0; i < s.size();) {
            const std::size_t n = ah::detail::utf8_length_at(s, i);
            if (n == 0) throw py::value_error(std::string(what) + ": bytes that are not UTF-8 text");
            i += n;
        }
    return s;
}

} // namespace

namespace pybind11::detail {
template <>
struct type_caster<utf8_text> {
    PYBIND11_TYPE_CASTER(utf8_text, const_name("str"));
    bool load(handle src, bool) {
        if (!src || !(PyUnicode_Check(src.ptr()) || PyBytes_Check(src.ptr()))) return false;
        static_cast<std::string&>(value) = utf8_of(src, "a text argument");
        return true;
    }
    static handle cast(const utf8_text& s, return_value_policy, handle) {
        return PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
    }
};
} // namespace pybind11::detail

namespace {

const ah::device_spec& spec_of(const std::string& name) {
    if (const auto* d = ah::find_device(name)) return *d;
    throw py::value_error("unknown device '" + name + "' (ai_hwaccel.catalogue() lists the known names)");
}

ah::model_spec model_of(const py::handle& h) {
    if (py::isinstance<ah::model_spec>(h)) return h.cast<ah::model_spec>();
    if (py::isinstance<py::str>(h)) {
        const auto name = utf8_of(h, "model");
        if (const auto* m = ah::find_model(name)) return *m;
        throw py::value_error("unknown model '" + name + "' (ai_hwaccel.models() lists the known ids)");
    }
    throw py::type_error("model: expected a Model or a model id (str)");
}

/// `bandwidth_gbps` as given (None stays None): 0.001 to 10^6 decimal GB/s.
std::optional<double> bandwidth_of(std::optional<double> gbps) {
    if (gbps && !(*gbps >= 0.001 && *gbps <= 1e6))
        throw py::value_error("bandwidth_gbps: must be from 0.001 to 1000000");
    return gbps;
}

/// A catalogue device as if present; a row that gives no memory size (unified memory,
/// configured per machine) gets `memory_bytes` when given, and one that gives no memory
/// bandwidth (Apple's M1) `bandwidth_gbps` (both override the row). A row that states no
/// peak leaves the peaks unknown (apply_spec already does), so runtimes that dequantize
/// may use it.
ah::accelerator_profile described(const ah::device_spec& spec, std::uint32_t index, std::optional<std::uint64_t> memory,
                                  std::optional<double> bandwidth = std::nullopt) {
    auto p = ah::profile_from_spec(spec, index);
    if (memory) {
        if (*memory == 0) throw py::value_error("memory_bytes: must be positive");
        p.memory_bytes = {*memory, ah::origin::user};
    }
    if (bandwidth_of(bandwidth)) p.memory_bandwidth_gbps = {*bandwidth, ah::origin::user};
    return p;
}

ah::accelerator_profile device_of(const py::handle& h, std::optional<std::uint64_t> memory,
                                  std::optional<double> bandwidth) {
    if (py::isinstance<ah::accelerator_profile>(h)) {
        auto p = h.cast<ah::accelerator_profile>();
        if (memory) {
            if (*memory == 0) throw py::value_error("memory_bytes: must be positive");
            p.memory_bytes = {*memory, ah::origin::user};
        }
        if (bandwidth_of(bandwidth)) p.memory_bandwidth_gbps = {*bandwidth, ah::origin::user};
        return p;
    }
    if (py::isinstance<py::str>(h)) return described(spec_of(utf8_of(h, "device")), 0, memory, bandwidth);
    throw py::type_error("device: expected a Device or a catalogue device name (str)");
}

// --- Device ------------------------------------------------------------------------------

std::string device_repr(const ah::accelerator_profile& p) {
    std::string s = "<Device " + std::string(ah::to_string(p.kind)) + " #" + std::to_string(p.index) + " '" +
                    std::string(p.name.view()) + "'";
    if (p.memory_bytes) s += " " + std::to_string(*p.memory_bytes) + " bytes";
    if (!p.available) s += " unavailable";
    return s + ">";
}

void bind_device(py::module_& m) {
    using P = ah::accelerator_profile;
    py::class_<P>(m, "Device", "One device as the library knows it; every sourced value carries its origin.")
        .def_property_readonly("kind", [](const P& p) { return text(ah::to_string(p.kind)); })
        .def_property_readonly("family", [](const P& p) { return text(ah::to_string(p.device_family())); })
        .def_property_readonly("vendor", [](const P& p) { return text(ah::to_string(p.maker)); })
        .def_property_readonly("backend", [](const P& p) -> py::object {
            const auto b = p.backend();
            return b ? py::object(text(ah::to_string(*b))) : py::object(py::none());
        })
        .def_property_readonly("index", [](const P& p) { return p.index; })
        .def_property_readonly("name", [](const P& p) { return text(p.name.view()); })
        .def_property_readonly("uuid", [](const P& p) { return text_or_none(p.uuid.view()); })
        .def_property_readonly("pci", [](const P& p) -> py::object {
            return p.pci ? py::object(text(p.pci->text().data())) : py::object(py::none());
        })
        .def_property_readonly("stack",
                               [](const P& p) { return p.stack ? py::cast(int{*p.stack}) : py::object(py::none()); })
        .def_property_readonly("pci_device_id",
                               [](const P& p) { return p.pci_device_id ? py::cast(p.pci_device_id) : py::object(py::none()); })
        .def_property_readonly("arch", [](const P& p) { return text_or_none(p.arch.view()); })
        .def_property_readonly("driver_version", [](const P& p) { return text_or_none(p.driver_version.view()); })
        .def_property_readonly("available", [](const P& p) { return p.available; })
        .def_property_readonly("software", [](const P& p) { return p.software; })
        .def_property_readonly("unified_memory", [](const P& p) { return p.unified_memory; })
        .def_property_readonly("is_accelerator", [](const P& p) { return p.is_accelerator(); })
        .def_property_readonly("is_cpu", [](const P& p) { return p.is_cpu(); })
        .def_property_readonly("memory_bytes", [](const P& p) { return value_of(p.memory_bytes); })
        .def_property_readonly("memory_origin", [](const P& p) { return origin_of(p.memory_bytes); })
        .def_property_readonly("memory_used_bytes", [](const P& p) { return value_of(p.memory_used_bytes); })
        .def_property_readonly("memory_used_origin", [](const P& p) { return origin_of(p.memory_used_bytes); })
        .def_property_readonly("memory_free_bytes", [](const P& p) { return value_of(p.memory_free_bytes); })
        .def_property_readonly("memory_free_origin", [](const P& p) { return origin_of(p.memory_free_bytes); })
        .def_property_readonly("bandwidth_gbps", [](const P& p) { return value_of(p.memory_bandwidth_gbps); })
        .def_property_readonly("bandwidth_origin", [](const P& p) { return origin_of(p.memory_bandwidth_gbps); })
        .def_property_readonly("peak_tflops", [](const P& p) { return peak_dict(p.peak); })
        .def_property_readonly("peak_origin", [](const P& p) -> py::object {
            return p.peak_from == ah::origin::none ? py::object(py::none()) : py::object(text(ah::to_string(p.peak_from)));
        })
        .def_property_readonly("compute_units", [](const P& p) { return value_of(p.compute_units); })
        .def_property_readonly("compute_units_origin", [](const P& p) { return origin_of(p.compute_units); })
        .def_property_readonly("chips", [](const P& p) { return value_of(p.chips); })
        .def_property_readonly("chips_origin", [](const P& p) { return origin_of(p.chips); })
        .def_property_readonly("pcie_current", [](const P& p) { return link_of(p.pcie_current); })
        .def_property_readonly("pcie_current_origin", [](const P& p) { return origin_of(p.pcie_current); })
        .def_property_readonly("pcie_max", [](const P& p) { return link_of(p.pcie_max); })
        .def_property_readonly("pcie_max_origin", [](const P& p) { return origin_of(p.pcie_max); })
        .def_property_readonly("pcie_bandwidth_gbps", [](const P& p) { return rate(p.pcie_bandwidth_gbps()); })
        .def_property_readonly("numa_node", [](const P& p) { return value_of(p.numa_node); })
        .def_property_readonly("numa_node_origin", [](const P& p) { return origin_of(p.numa_node); })
        .def_property_readonly("temperature_c", [](const P& p) { return value_of(p.temperature_c); })
        .def_property_readonly("temperature_origin", [](const P& p) { return origin_of(p.temperature_c); })
        .def_property_readonly("power_draw_watts", [](const P& p) { return value_of(p.power_draw_watts); })
        .def_property_readonly("power_draw_origin", [](const P& p) { return origin_of(p.power_draw_watts); })
        .def_property_readonly("power_limit_watts", [](const P& p) { return value_of(p.power_limit_watts); })
        .def_property_readonly("power_limit_origin", [](const P& p) { return origin_of(p.power_limit_watts); })
        .def_property_readonly("utilization_percent", [](const P& p) { return value_of(p.utilization_percent); })
        .def_property_readonly("utilization_origin", [](const P& p) { return origin_of(p.utilization_percent); })
        .def_property_readonly("spec", [](const P& p) -> py::object {
            return p.spec ? py::object(text(p.spec->name)) : py::object(py::none());
        })
        .def_property_readonly("capability_score", [](const P& p) { return ah::capability_score(p); })
        .def("__repr__", &device_repr);
}

// --- WarningInfo, Interconnect -----------------------------------------------------------

void bind_records(py::module_& m) {
    using W = ah::warning;
    py::class_<W>(m, "WarningInfo", "Something detection could not do, as a typed record (never raised).")
        .def_property_readonly("kind", [](const W& w) { return text(ah::to_string(w.kind)); })
        .def_property_readonly("backend", [](const W& w) -> py::object {
            return w.backend ? py::object(text(ah::to_string(*w.backend))) : py::object(py::none());
        })
        .def_property_readonly("subject", [](const W& w) { return text(w.subject); })
        .def_property_readonly("message", [](const W& w) { return text(w.message); })
        .def_property_readonly("code", [](const W& w) { return w.code; })
        .def("__str__", [](const W& w) { return text(ah::to_string(w)); })
        .def("__repr__", [](const W& w) { return text("<WarningInfo " + ah::to_string(w) + ">"); });

    using I = ah::interconnect;
    py::class_<I>(m, "Interconnect", "A link between devices (NVLink, XGMI, …) or a network port (InfiniBand, RoCE).")
        .def_property_readonly("kind", [](const I& l) { return text(ah::to_string(l.kind)); })
        .def_property_readonly("scope", [](const I& l) { return text(ah::to_string(l.scope)); })
        .def_property_readonly("name", [](const I& l) { return text(l.name); })
        .def_property_readonly("state", [](const I& l) { return text(l.state); })
        .def_property_readonly("bandwidth_gbps", [](const I& l) { return value_of(l.bandwidth_gbps); })
        .def_property_readonly("bandwidth_origin", [](const I& l) { return origin_of(l.bandwidth_gbps); })
        .def_property_readonly("devices", [](const I& l) { return l.devices; })
        .def("__repr__", [](const I& l) {
            return text("<Interconnect " + std::string(ah::to_string(l.kind)) + " '" + l.name + "' " +
                        std::to_string(l.devices.size()) + " devices>");
        });
}

// --- Model -------------------------------------------------------------------------------

ah::model_spec custom_model(const whole_arg& parameters, std::optional<whole_arg> layers, std::optional<whole_arg> hidden,
                            std::optional<whole_arg> heads, std::optional<whole_arg> kv_heads, const whole_arg& vocab) {
    const auto parameter_count = in_range("parameters", parameters, 1, most);
    const auto vocab_size = whole("vocab", vocab, 0, 0xffffffffLL);
    if (!layers || !hidden) {
        // The rest of the shape in the catalogue's typical proportions, as the CLI does.
        if (heads || kv_heads) throw py::value_error("heads and kv_heads need layers and hidden");
        ah::model_spec m = ah::assume_dense_shape(static_cast<std::uint64_t>(parameter_count),
                                                  layers ? whole("layers", *layers, 1, 100000) : 0,
                                                  hidden ? whole("hidden", *hidden, 1, 1 << 24) : 0);
        m.id = "custom";
        m.name = "custom model";
        m.family = "custom";
        m.vocab_size = vocab_size;
        return m;
    }
    const auto l = whole("layers", *layers, 1, 100000);
    const auto h = whole("hidden", *hidden, 1, 1 << 24);
    std::uint32_t nh = 0;
    if (heads) {
        nh = whole("heads", *heads, 1, h);
        if (h % nh != 0) throw py::value_error("heads: " + std::to_string(nh) + " does not divide hidden");
    } else {
        nh = h % 128 == 0 ? h / 128 : h % 64 == 0 ? h / 64 : 1; // head dimension 128, else 64, else one head
    }
    std::uint32_t kv = nh;
    if (kv_heads) {
        kv = whole("kv_heads", *kv_heads, 1, nh);
        if (nh % kv != 0) throw py::value_error("kv_heads: " + std::to_string(kv) + " does not divide the heads");
    }
    ah::model_spec m;
    m.id = "custom";
    m.name = "custom model";
    m.family = "custom";
    m.parameters = static_cast<std::uint64_t>(parameter_count);
    m.active_parameters = m.parameters;
    m.layers = l;
    m.hidden_size = h;
    m.attention_heads = nh;
    m.kv_heads = kv;
    m.head_dim = h / nh;
    m.vocab_size = vocab_size;
    return m;
}

void bind_model(py::module_& m) {
    using M = ah::model_spec;
    py::class_<M>(m, "Model", "A decoder-only transformer's shape: a catalogue row or Model.custom(...).")
        .def_property_readonly("id", [](const M& x) { return text(x.id); })
        .def_property_readonly("name", [](const M& x) { return text(x.name); })
        .def_property_readonly("family", [](const M& x) { return text(x.family); })
        .def_property_readonly("parameters", [](const M& x) { return x.parameters; })
        .def_property_readonly("active_parameters", [](const M& x) { return x.active_parameters; })
        .def_property_readonly("layers", [](const M& x) { return x.layers; })
        .def_property_readonly("hidden_size", [](const M& x) { return x.hidden_size; })
        .def_property_readonly("intermediate_size", [](const M& x) { return x.intermediate_size; })
        .def_property_readonly("attention_heads", [](const M& x) { return x.attention_heads; })
        .def_property_readonly("kv_heads", [](const M& x) { return x.kv_heads; })
        .def_property_readonly("head_dim", [](const M& x) { return x.head_dim; })
        .def_property_readonly("vocab_size", [](const M& x) { return x.vocab_size; })
        .def_property_readonly("context_length", [](const M& x) { return x.context_length; })
        .def_property_readonly("experts", [](const M& x) { return x.experts; })
        .def_property_readonly("experts_per_token", [](const M& x) { return x.experts_per_token; })
        .def_property_readonly("is_moe", [](const M& x) { return x.is_moe(); })
        .def_property_readonly("tied_embeddings", [](const M& x) { return x.tied_embeddings; })
        .def_property_readonly("gated_ffn", [](const M& x) { return x.gated_ffn; })
        .def_property_readonly("source", [](const M& x) { return text_or_none(x.source); })
        .def_static("custom", &custom_model, py::arg("parameters"), py::arg("layers") = py::none(),
                    py::arg("hidden") = py::none(), py::arg("heads") = py::none(), py::arg("kv_heads") = py::none(),
                    py::arg("vocab") = 0,
                    "A model described by hand (head dimension 128 when heads is not given); without layers "
                    "and hidden the rest of the shape is assumed (the catalogue's typical proportions).")
        .def("__repr__", [](const M& x) {
            return text("<Model " + std::string(x.id) + " " + std::to_string(x.parameters) + " parameters>");
        });
}

// --- Registry ----------------------------------------------------------------------------

template <class Rng>
py::list device_list(Rng&& rng) {
    py::list out;
    for (const ah::accelerator_profile& p : rng) out.append(py::cast(p));
    return out;
}

py::dict host_dict(const ah::host_info& h) {
    py::dict cpu;
    cpu["model"] = text(h.cpu.model);
    cpu["vendor"] = text(ah::to_string(h.cpu.maker));
    cpu["arch"] = text(ah::to_string(h.cpu.arch));
    cpu["sockets"] = h.cpu.sockets;
    cpu["cores"] = h.cpu.cores;
    cpu["threads"] = h.cpu.threads;
    cpu["usable_threads"] = h.cpu.usable_threads;
    cpu["cpu_quota"] = h.cpu.cpu_quota;
    py::dict mem;
    mem["total_bytes"] = value_of(h.memory.total_bytes);
    mem["available_bytes"] = value_of(h.memory.available_bytes);
    mem["cgroup_limit_bytes"] = value_of(h.memory.cgroup_limit_bytes);
    mem["cgroup_free_bytes"] = value_of(h.memory.cgroup_free_bytes);
    mem["usable_bytes"] = h.memory.usable_bytes();
    py::dict d;
    d["cpu"] = cpu;
    d["memory"] = mem;
    d["numa_nodes"] = h.numa.size();
    return d;
}

#if !AI_HWACCEL_JSON
[[noreturn]] void no_json() {
    throw std::runtime_error("this build of ai_hwaccel has no JSON support (nlohmann/json was not found)");
}
#endif

std::string to_json(const ah::accelerator_registry& r, int indent) {
#if AI_HWACCEL_JSON
    if (indent > ah::max_json_indent)
        throw py::value_error("indent: " + std::to_string(indent) + " is more than " +
                              std::to_string(ah::max_json_indent) + " spaces per level");
    return ah::to_json_string(r, indent);
#else
    (void)r;
    (void)indent;
    no_json();
#endif
}

ah::accelerator_registry from_json(const utf8_text& s) {
#if AI_HWACCEL_JSON
    auto res = ah::registry_from_json(std::string_view(s));
    if (!res) throw py::value_error("not a registry: " + res.error);
    return std::move(*res.registry);
#else
    (void)s;
    no_json();
#endif
}

void bind_registry(py::module_& m) {
    using R = ah::accelerator_registry;
    py::class_<R>(m, "Registry", "What detection found: devices, warnings, host, links.")
        .def(py::init([](std::vector<ah::accelerator_profile> devices) { return R(std::move(devices)); }),
             py::arg("devices") = std::vector<ah::accelerator_profile>{})
        .def_property_readonly("devices", [](const R& r) { return device_list(r.all()); })
        .def_property_readonly("warnings", [](const R& r) {
            py::list out;
            for (const auto& w : r.warnings()) out.append(py::cast(w));
            return out;
        })
        .def_property_readonly("interconnects", [](const R& r) { return r.system().interconnects; })
        .def_property_readonly("host", [](const R& r) { return host_dict(r.host()); })
        .def("available", [](const R& r) { return device_list(r.available()); })
        .def("accelerators", [](const R& r) { return device_list(r.accelerators()); })
        .def("has_accelerator", &R::has_accelerator)
        .def("best_available", &R::best_available)
        .def("total_memory", &R::total_memory)
        .def("total_accelerator_memory", &R::total_accelerator_memory)
        .def("what_if_add",
             [](const R& r, const std::vector<ah::accelerator_profile>& extra) { return r.what_if_add(extra); },
             py::arg("devices"))
        .def("to_json", &to_json, py::arg("indent") = 2)
        .def_static("from_json", &from_json, py::arg("text"))
        .def("__len__", &R::size)
        .def("__iter__", [](const R& r) { return py::iter(device_list(r.all())); })
        .def("__eq__", [](const R& a, const py::object& b) -> py::object {
            if (!py::isinstance<R>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
            return py::bool_(a == b.cast<const R&>());
        })
        .def("__repr__", [](const R& r) {
            return "<Registry " + std::to_string(r.size()) + " devices, " + std::to_string(r.warnings().size()) +
                   " warnings>";
        });
    // Defining __eq__ leaves a class unhashable in Python (a registry is a mutable value).
    m.attr("Registry").attr("__hash__") = py::none();
}

// --- detection ---------------------------------------------------------------------------

/// measure_memory_bandwidth, without the GIL; raises RuntimeError with the reason when
/// nothing was measured (the caller asked for a figure).
ah::bandwidth_measurement measured_bandwidth(const ah::bandwidth_options& o) {
    ah::bandwidth_measurement m;
    {
        py::gil_scoped_release unlocked;
        m = ah::measure_memory_bandwidth(o);
    }
    if (!m.ok()) throw std::runtime_error("the memory bandwidth was not measured: " + m.error);
    return m;
}

ah::accelerator_registry detect(const py::object& root, bool measure_bandwidth) {
    // None is this machine; any path names a tree, so "" (an unset variable, say) is no
    // directory rather than this machine, and a NUL would cut the path short. A path is
    // what os.fspath() takes (str, bytes, pathlib.Path), in the file system's encoding as
    // Python's own os functions take it (a name os.fsdecode() made is that name again).
    std::string r;
    py::object shown; // the path as text for messages: os.fsdecode's, never a decoding error
    if (!root.is_none()) {
        const auto os = py::module_::import("os");
        if (!py::isinstance<py::str>(root) && !py::isinstance<py::bytes>(root) && !py::hasattr(root, "__fspath__"))
            throw py::type_error("root: expected a path (str, bytes or os.PathLike) or None");
        const py::bytes encoded = os.attr("fsencode")(os.attr("fspath")(root));
        r = std::string(encoded);
        shown = os.attr("fsdecode")(encoded);
    }
    if (!root.is_none() && r.find('\0') != std::string::npos)
        throw py::value_error("root: the path holds a NUL character");
    if (!root.is_none()) {
        struct stat st {};
        if (::stat(r.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
            const py::str message = py::str("root: '{}' is not a directory").format(shown);
            PyErr_SetObject(PyExc_NotADirectoryError, message.ptr());
            throw py::error_already_set();
        }
        if (measure_bandwidth) throw py::value_error("measure_bandwidth measures this machine, not a root");
    }
    ah::accelerator_registry reg;
    {
        py::gil_scoped_release unlocked; // probes run tools and read files: let other threads run
        reg = ah::detect(ah::host_system(std::move(r)));
    }
    if (!measure_bandwidth) return reg;
    return ah::apply_cpu_bandwidth(reg, measured_bandwidth(ah::bandwidth_options_for(reg.host())));
}

py::dict measure_memory_bandwidth(const whole_arg& buffer_bytes, const whole_arg& threads, const whole_arg& passes) {
    // 0 bytes: the default size; 0 threads: one per usable CPU.
    const auto bytes = in_range("buffer_bytes", buffer_bytes, 0, most);
    // The measurement's own limits: out of them is a ValueError, as every number here.
    const auto thread_count = in_range("threads", threads, 0, ah::detail::membw::most_threads);
    const auto pass_count = in_range("passes", passes, 1, ah::detail::membw::most_passes);
    // What the host probe reads of the memory (MemAvailable, a container's limit) bounds
    // the buffer, as the CLI's measurement is bounded.
    std::vector<ah::warning> ignored;
    ah::bandwidth_options o = ah::bandwidth_options_for(ah::probe_host(ah::host_system(), ignored).first);
    o.buffer_bytes = static_cast<std::uint64_t>(bytes);
    o.threads = static_cast<std::uint32_t>(thread_count);
    o.passes = static_cast<std::uint32_t>(pass_count);
    const auto m = measured_bandwidth(o);
    py::dict d;
    d["gbps"] = m.gbps;
    d["bytes_per_pass"] = m.bytes_per_pass;
    d["threads"] = m.threads;
    d["passes"] = m.passes;
    d["fastest_seconds"] = m.fastest_seconds;
    d["slowest_seconds"] = m.slowest_seconds;
    d["cache_bytes"] = m.cache_bytes;
    d["note"] = m.note;
    return d;
}

// --- planning ----------------------------------------------------------------------------

/// A Registry (its devices and links), a list of Devices (no links: each its own island),
/// or one Device.
ah::accelerator_registry devices_of(const py::handle& h) {
    if (py::isinstance<ah::accelerator_registry>(h)) return h.cast<ah::accelerator_registry>();
    if (py::isinstance<ah::accelerator_profile>(h))
        return ah::accelerator_registry({h.cast<ah::accelerator_profile>()});
    if (py::isinstance<py::str>(h)) throw py::type_error("devices: expected a Registry or a list of Devices, not str");
    try {
        return ah::accelerator_registry(h.cast<std::vector<ah::accelerator_profile>>());
    } catch (const py::cast_error&) {
        throw py::type_error("devices: expected a Registry, a Device or a list of Devices");
    }
}

std::string strategy(const ah::shard_plan& p) { return std::string(ah::to_string(p.strategy)); }

// plan_options::memory_headroom from the `headroom` argument (a fraction, as the CLI's --headroom 0.05).
double headroom_of(double h) {
    if (!(h >= 0 && h < 1)) throw py::value_error("headroom: must be a fraction from 0 to below 1 (e.g. 0.05)");
    return h;
}

py::dict estimate(const py::handle& device, const py::handle& model, const utf8_text& quant, const whole_arg& context,
                  const whole_arg& batch, const whole_arg& count, std::optional<whole_arg> prompt,
                  std::optional<whole_arg> memory_bytes, double headroom, std::optional<double> bandwidth_gbps,
                  const whole_arg& prompt_depth) {
    std::optional<std::uint64_t> mem;
    if (memory_bytes) {
        mem = static_cast<std::uint64_t>(in_range("memory_bytes", *memory_bytes, 1, most));
    }
    const auto proto = device_of(device, mem, bandwidth_gbps);
    const auto m = model_of(model);
    const auto q = quant_of(quant);
    const auto ctx = whole("context", context, 1, 1 << 24);
    const auto b = whole("batch", batch, 1, 65536);
    const auto n = whole("count", count, 1, static_cast<long long>(ah::max_plan_devices));
    const auto [pr, depth] = prompt_of(prompt, prompt_depth, ctx, 512);
    if (!proto.memory_bytes)
        throw py::value_error("the memory of " + std::string(proto.name.view()) +
                              " is not known (the catalogue gives none for unified memory): pass memory_bytes");

    const auto reg = ah::described_registry(proto, n);
    ah::plan_options po;
    po.memory_headroom = headroom_of(headroom);
    po.spread = true; // one replica over every device given
    const ah::inference_shape shape{.context = ctx, .batch = b, .prompt = pr, .prompt_depth = depth};
    const auto links = std::span<const ah::interconnect>(reg.system().interconnects);
    const auto plan = ah::plan_sharding(reg.all(), links, m, q, shape, po);
    std::uint64_t usable = 0;
    for (const auto& p : reg.all()) usable += ah::usable_memory(p, po);

    py::dict d;
    d["device"] = text(proto.name.view());
    d["count"] = n;
    d["device_memory_bytes"] = proto.memory_bytes.value_or(0);
    d["link"] = text(n > 1 && !reg.system().interconnects.empty() ? ah::to_string(reg.system().interconnects[0].kind)
                     : n > 1                                      ? std::string_view("pcie")
                                                                  : std::string_view("none"));
    d["link_group"] = reg.system().interconnects.empty() ? 0 : reg.system().interconnects[0].devices.size();
    d["model"] = text(m.id);
    d["parameters"] = m.parameters;
    d["active_parameters"] = m.parameters_per_token();
    py::dict model_shape;
    model_shape["layers"] = m.layers;
    model_shape["hidden_size"] = m.hidden_size;
    model_shape["attention_heads"] = m.attention_heads;
    model_shape["kv_heads"] = m.kv_heads ? m.kv_heads : m.attention_heads;
    model_shape["latent_kv_values"] = m.latent_kv_cache ? m.kv_values_per_token_per_layer : 0;
    model_shape["assumed"] = ah::shape_is_assumed(m);
    d["shape"] = model_shape;
    d["quant"] = text(ah::to_string(q));
    d["context"] = ctx;
    d["prompt"] = pr;
    d["prompt_depth"] = depth;
    d["batch"] = b;
    d["fits"] = plan.fits;
    d["reason"] = plan.fits ? py::object(py::none()) : py::object(text(ah::describe(plan.outcome)));
    d["strategy"] = strategy(plan);
    d["tensor_parallel"] = plan.tensor_parallel;
    d["stages"] = plan.stages;
    d["decode_tokens_per_second"] = rate(plan.fits ? plan.decode_tokens_per_second : 0);
    d["prefill_tokens_per_second"] = rate(plan.fits ? plan.prefill_tokens_per_second : 0);
    d["memory"] = memory_dict(ah::estimate_memory(m, q, shape));
    d["usable_bytes"] = usable;
    d["memory_headroom"] = po.memory_headroom;
    d["estimate"] = true;
    return d;
}

// A cluster's nodes from a dict of node names to Registries; nullopt for any other value.
std::optional<std::vector<ah::cluster_node>> nodes_of(const py::handle& h) {
    // A dict, or any collections.abc.Mapping (the stub's type), read through its items().
    const auto mapping = py::module_::import("collections.abc").attr("Mapping");
    if (!py::isinstance<py::dict>(h) && PyObject_IsInstance(h.ptr(), mapping.ptr()) != 1) return std::nullopt;
    std::vector<ah::cluster_node> nodes;
    for (const auto& item : h.attr("items")()) {
        const auto pair = item.cast<py::tuple>();
        const py::handle k = pair[0], v = pair[1];
        if (!py::isinstance<py::str>(k)) throw py::type_error("devices: a cluster's node names must be str");
        if (!py::isinstance<ah::accelerator_registry>(v))
            throw py::type_error("devices: a cluster maps node names to Registries (ai_hwaccel.detect() on each "
                                 "node, or Registry.from_json of its detect --json)");
        nodes.push_back({utf8_of(k, "devices: a node's name"), v.cast<ah::accelerator_registry>()});
    }
    if (nodes.empty()) throw py::value_error("devices: a cluster needs one node or more");
    return nodes;
}

py::dict plan(const py::handle& devices, const py::handle& model, const utf8_text& quant, const whole_arg& context,
              const whole_arg& batch, bool allow_cpu, bool free_memory, double headroom, std::optional<whole_arg> prompt,
              bool spread, std::optional<double> network_gbits, const whole_arg& prompt_depth) {
    const auto nodes = nodes_of(devices);
    if (network_gbits && !nodes) throw py::value_error("network_gbits joins nodes: devices must be a cluster (a mapping of node names)");
    if (network_gbits && !(*network_gbits > 0 && *network_gbits <= 1e5))
        throw py::value_error("network_gbits: must be above 0 and at most 100000 (Gb/s each way, e.g. 400)");
    std::optional<ah::cluster_view> cluster;
    ah::accelerator_registry reg;
    if (nodes) {
        cluster = ah::make_cluster(*nodes);
    } else {
        reg = devices_of(devices);
    }
    const std::span<const ah::accelerator_profile> all = cluster ? std::span(cluster->devices) : reg.all();
    const std::span<const ah::interconnect> links =
        cluster ? std::span(cluster->links) : std::span<const ah::interconnect>(reg.system().interconnects);
    const auto m = model_of(model);
    // "Q4_K_M,Q5_K_M,Q8_0": auto among those formats only (plan_options::formats), as the
    // CLI's plan --quant takes a list.
    const bool from_list = quant.find(',') != std::string::npos;
    const auto listed = from_list ? ah::parse_quant_list(quant) : ah::quant_list{};
    if (ah::detail::iequals(listed.unknown, "auto"))
        throw py::value_error("quant: 'auto' chooses among every format; a list names the formats to choose "
                              "among, so give one or the other");
    if (!listed.unknown.empty()) quant_of(std::string(listed.unknown)); // raises, with the known names
    if (from_list && listed.formats.empty()) throw py::value_error("quant: no format in '" + quant + "'");
    const bool automatic = from_list || ah::detail::iequals(quant, "auto");
    ah::quant_format q{};
    if (!automatic) q = quant_of(quant);
    const auto ctx = whole("context", context, 1, 1 << 24);
    const auto [pr, depth] = prompt_of(prompt, prompt_depth, ctx, ctx);
    const ah::inference_shape shape{
        .context = ctx, .batch = whole("batch", batch, 1, 65536), .prompt = pr, .prompt_depth = depth};
    ah::plan_options po;
    po.allow_cpu = allow_cpu;
    po.count_memory_in_use = free_memory;
    po.memory_headroom = headroom_of(headroom);
    po.spread = spread;
    po.formats = listed.formats;
    ah::cluster_options co;
    co.fallback_network_gbps = network_gbits ? *network_gbits * 2 / 8 : 0; // both directions, GB/s
    // "auto": the best format the planner fits on these devices and links (or this
    // cluster), with its plan.
    const auto plan_with = [&](const ah::plan_options& opts) {
        auto copts = co;
        copts.plan = opts;
        return ah::plan_deployment(cluster ? &*cluster : nullptr, all, links, m,
                                   automatic ? std::nullopt : std::optional(q), shape, copts);
    };
    const ah::deployment_plan result = plan_with(po);
    const auto& choice = result.choice;
    const auto& p = result.plan;
    const auto& cp = result.cluster;
    q = p.quant;
    const auto outcome = p.fits ? p.outcome : (choice && !choice->fits ? choice->outcome : p.outcome);
    std::string reason;
    if (!p.fits) {
        reason = cp && !cp->reason.empty() ? cp->reason : std::string(ah::describe(outcome));
        // allow_cpu is suggested only where it would make the model fit.
        if (p.cpu_excluded || (choice && choice->cpu_excluded)) {
            auto with_cpu = po;
            with_cpu.allow_cpu = true;
            if (plan_with(with_cpu).plan.fits) reason += " (with allow_cpu=True, which lets the plan use the CPU, it fits)";
        }
        if (choice && !choice->fits && outcome == ah::plan_outcome::too_large)
            reason += "; not even in " + std::string(ah::to_string(q)) + ", the smallest format tried";
    }

    py::dict d;
    d["model"] = text(m.id);
    d["parameters"] = m.parameters;
    d["active_parameters"] = m.parameters_per_token();
    d["quant"] = text(ah::to_string(q));
    d["quant_chosen"] = from_list ? "auto_from_list" : automatic ? "auto" : "given";
    d["spread"] = spread;
    d["context"] = shape.context;
    d["prompt"] = shape.prompt;
    d["prompt_depth"] = shape.prompt_depth;
    d["batch"] = shape.batch;
    d["fits"] = p.fits;
    d["outcome"] = text(ah::to_string(outcome));
    d["reason"] = p.fits ? py::object(py::none()) : py::object(text(reason));
    d["strategy"] = strategy(p);
    d["kind"] = p.fits ? py::object(text(ah::to_string(p.kind))) : py::object(py::none());
    d["replicas"] = p.replicas;
    d["stages"] = p.stages;
    d["tensor_parallel"] = p.tensor_parallel;
    d["decode_tokens_per_second"] = rate(p.decode_tokens_per_second);
    d["aggregate_decode_tokens_per_second"] = rate(p.aggregate_decode_tokens_per_second);
    d["prefill_tokens_per_second"] = rate(p.prefill_tokens_per_second);
    d["decode_compute_seconds"] = p.decode_compute_seconds;
    d["decode_tensor_seconds"] = p.decode_tensor_seconds;
    d["decode_pipeline_seconds"] = p.decode_pipeline_seconds;
    const auto link = [](const ah::plan_link& l) -> py::object {
        if (l.kind == ah::interconnect_kind::none) return py::none();
        py::dict x;
        x["kind"] = text(ah::to_string(l.kind));
        x["gbps"] = l.gbps;
        return x;
    };
    d["tensor_link"] = link(p.tensor_link);
    d["pipeline_link"] = link(p.pipeline_link);
    d["memory"] = memory_dict(p.memory);
    d["usable_bytes"] = p.usable_bytes;
    d["largest_device_bytes"] = p.largest_device_bytes;
    d["candidate_devices"] = p.candidate_devices;
    d["truncated"] = p.truncated;
    d["cpu_excluded"] = p.cpu_excluded;
    d["free_memory"] = free_memory;
    d["memory_headroom"] = po.memory_headroom;
    if (cp) {
        // The cluster: its nodes, whether they were joined, the hops between them (docs/python.md).
        py::dict c;
        py::list ns;
        for (std::size_t n = 0; n < cluster->nodes.size(); ++n) {
            py::dict e;
            e["name"] = text(cluster->nodes[n].name);
            ah::node_usage u;
            bool considered = false;
            for (const auto& x : cp->per_node)
                if (x.node == n) {
                    u = x;
                    considered = true;
                }
            e["considered"] = considered;
            e["devices"] = considered ? u.devices : 0;
            e["devices_used"] = considered ? u.devices_used : 0;
            e["planned_bytes"] = considered ? u.planned_bytes : 0;
            e["usable_bytes"] = considered ? u.usable_bytes : 0;
            e["capacity_bytes"] = considered ? u.capacity_bytes : 0;
            e["fits"] = considered && u.fits;
            ns.append(e);
        }
        c["nodes"] = ns;
        c["joined"] = cp->joined;
        // As every other gbps of the plan: one direction (network_gbits / 8).
        c["network_assumed_gbps"] = co.fallback_network_gbps > 0 ? py::object(py::float_(co.fallback_network_gbps / 2))
                                                                 : py::object(py::none());
        c["nodes_per_replica"] = cp->nodes_per_replica;
        c["inter_node_hops"] = cp->inter_node_hops;
        if (cp->inter_node_hops > 0) {
            py::dict l;
            l["kind"] = text(ah::to_string(cp->inter_node_link.kind));
            l["gbps"] = cp->inter_node_link.gbps;
            l["assumed"] = cp->inter_node_link_assumed;
            c["inter_node_link"] = l;
        } else {
            c["inter_node_link"] = py::none();
        }
        c["decode_inter_node_seconds"] = cp->decode_inter_node_seconds;
        py::list notes;
        for (const auto& n : cluster->fabric_notes) notes.append(text(n));
        c["notes"] = notes;
        d["cluster"] = c;
    } else {
        d["cluster"] = py::none();
    }
    py::list shards;
    for (const auto& s : p.devices) {
        py::dict e;
        e["device"] = s.device;
        e["index"] = cluster ? cluster->homes[s.device].local_index : s.index;
        e["node"] = cluster ? py::object(text(cluster->nodes[cluster->node_of(s.device)].name)) : py::object(py::none());
        e["name"] = s.device < all.size() ? text(all[s.device].name.view()) : text("");
        e["replica"] = s.replica;
        e["stage"] = s.stage;
        e["tensor_rank"] = s.tensor_rank;
        e["tensor_size"] = s.tensor_size;
        e["first_layer"] = s.first_layer;
        e["last_layer"] = s.last_layer;
        e["embeddings"] = s.embeddings;
        e["output_head"] = s.output_head;
        e["weights_bytes"] = s.weights_bytes;
        e["kv_cache_bytes"] = s.kv_cache_bytes;
        e["overhead_bytes"] = s.overhead_bytes;
        e["total_bytes"] = s.total_bytes();
        e["usable_bytes"] = s.usable_bytes;
        e["fits"] = s.fits;
        shards.append(e);
    }
    d["shards"] = shards;
    d["estimate"] = true;
    return d;
}

py::dict memory(const py::handle& model, const utf8_text& quant, const whole_arg& context, const whole_arg& batch,
                const utf8_text& kv_cache) {
    const auto m = model_of(model);
    const ah::inference_shape shape{whole("context", context, 1, 1 << 24), whole("batch", batch, 1, 65536),
                                    quant_of(kv_cache)};
    return memory_dict(ah::estimate_memory(m, quant_of(quant), shape));
}

ah::training_optimizer optimizer_of(const std::string& s) {
    using O = ah::training_optimizer;
    for (auto [name, o] : {std::pair{"adamw", O::adamw}, std::pair{"adamw_8bit", O::adamw_8bit},
                           std::pair{"sgd", O::sgd}, std::pair{"sgd_momentum", O::sgd_momentum}})
        if (ah::detail::loose_equals(s, name)) return o;
    throw py::value_error("unknown optimizer '" + s + "' (adamw, adamw_8bit, sgd, sgd_momentum)");
}
std::string_view optimizer_name(ah::training_optimizer o) {
    switch (o) {
    case ah::training_optimizer::adamw: return "adamw";
    case ah::training_optimizer::adamw_8bit: return "adamw_8bit";
    case ah::training_optimizer::sgd_momentum: return "sgd_momentum";
    case ah::training_optimizer::sgd: return "sgd";
    }
    return "adamw";
}

py::dict training(const py::handle& model, const utf8_text& method, const whole_arg& seq, const whole_arg& batch, const whole_arg& devices,
                  const whole_arg& zero, std::optional<whole_arg> rank, bool checkpointing, const utf8_text& optimizer,
                  std::optional<utf8_text> policy) {
    const auto m = model_of(model);
    const auto how = ah::parse_training_method(method);
    if (!how)
        throw py::value_error("unknown training method '" + method + "' (full, lora, qlora, prefix, dpo, rlhf, distillation)");
    ah::training_setup t;
    t.method = *how;
    const bool multi_model = t.method == ah::training_method::dpo || t.method == ah::training_method::rlhf ||
                             t.method == ah::training_method::distillation;
    if (policy) {
        if (!multi_model) throw py::value_error("policy applies to dpo, rlhf and distillation");
        const auto pm = ah::parse_training_method(*policy);
        if (!pm || (*pm != ah::training_method::full && *pm != ah::training_method::lora && *pm != ah::training_method::qlora))
            throw py::value_error("policy: '" + *policy + "' is not full, lora or qlora");
        t.policy_method = *pm;
    }
    const bool adapters = t.method == ah::training_method::lora || t.method == ah::training_method::qlora ||
                          (multi_model && t.policy_method != ah::training_method::full);
    if (rank && !adapters) throw py::value_error("rank applies to lora and qlora (or policy lora/qlora)");
    t.seq_len = whole("seq", seq, 1, 1 << 24);
    t.micro_batch = whole("batch", batch, 1, 65536);
    t.devices = whole("devices", devices, 1, 1 << 20);
    t.zero = static_cast<ah::zero_stage>(whole("zero", zero, 0, 3));
    if (rank) t.lora_rank = whole("rank", *rank, 1, 65536);
    t.gradient_checkpointing = checkpointing;
    t.opt = optimizer_of(optimizer);

    const auto e = ah::estimate_training_memory(m, t);
    py::dict d;
    d["model"] = text(m.id);
    d["parameters"] = m.parameters;
    d["method"] = text(ah::to_string(t.method));
    d["policy"] = multi_model ? py::object(text(ah::to_string(t.policy_method))) : py::object(py::none());
    d["seq"] = t.seq_len;
    d["batch"] = t.micro_batch;
    d["devices"] = t.devices;
    d["zero"] = static_cast<unsigned>(t.zero);
    d["rank"] = adapters ? py::cast(t.lora_rank) : py::object(py::none());
    d["checkpointing"] = t.gradient_checkpointing;
    d["optimizer"] = text(optimizer_name(t.opt));
    d["trainable_parameters"] = e.trainable_parameters;
    d["peak_memory_bytes"] = e.peak_memory_bytes;
    py::dict parts;
    parts["weights_bytes"] = e.weights_bytes;
    parts["frozen_models_bytes"] = e.frozen_models_bytes;
    parts["gradients_bytes"] = e.gradients_bytes;
    parts["optimizer_bytes"] = e.optimizer_bytes;
    parts["activations_bytes"] = e.activations_bytes;
    parts["buffers_bytes"] = e.buffers_bytes;
    parts["total_bytes"] = e.total_bytes();
    d["breakdown"] = parts;
    d["host_memory_bytes"] = e.host_memory_bytes;
    d["estimate"] = true;
    // The CLI's keys for a --device, which this has no counterpart of: null there too.
    d["device"] = py::none();
    d["device_memory_bytes"] = py::none();
    d["fits"] = py::none();
    return d;
}

py::dict instance_dict(const ah::instance_cost_estimate& e) {
    const auto& r = *e.instance;
    py::dict d;
    d["name"] = text(r.name);
    d["provider"] = text(ah::to_string(r.provider));
    d["region"] = text(r.region);
    d["price_per_hour_usd"] = r.price_per_hour_usd;
    d["price_date"] = text_or_none(r.price_date);
    d["price_snapshot"] = text_or_none(r.price_snapshot);
    d["price_source"] = text(r.price_source);
    d["price_date_source"] = text_or_none(r.price_date_source);
    d["accelerator"] = text(r.accelerator);
    d["accelerator_count"] = r.accelerator_count;
    d["required_bytes"] = e.required_bytes;
    d["available_bytes"] = e.available_bytes;
    d["format_supported"] = e.format_supported;
    d["fits"] = e.fits;
    d["decode_tokens_per_second"] = rate(e.decode_tokens_per_second);
    d["replicas"] = e.replicas;
    d["replica_accelerators"] = e.replica_accelerators;
    d["tensor_parallel"] = e.tensor_parallel;
    d["usd_per_million_output_tokens"] = rate(e.usd_per_million_output_tokens);
    return d;
}

py::dict cost(const py::handle& model, const utf8_text& quant, const whole_arg& context, const whole_arg& batch,
              const utf8_text& objective, bool all_instances, double headroom) {
    const auto m = model_of(model);
    const auto q = quant_of(quant);
    const ah::inference_shape shape{whole("context", context, 1, 1 << 24), whole("batch", batch, 1, 65536)};
    ah::cost_objective obj{};
    if (objective == "hour") obj = ah::cost_objective::price_per_hour;
    else if (objective == "tokens") obj = ah::cost_objective::price_per_million_tokens;
    else throw py::value_error("objective: '" + objective + "' is not 'hour' or 'tokens'");
    ah::cost_assumptions assumptions;
    assumptions.usable_memory_fraction = 1.0 - headroom_of(headroom);
    const auto best = ah::cheapest_instance(m, q, shape, obj, assumptions);
    py::dict d;
    d["model"] = text(m.id);
    d["parameters"] = m.parameters;
    d["active_parameters"] = m.parameters_per_token();
    d["quant"] = text(ah::to_string(q));
    d["context"] = shape.context;
    d["batch"] = shape.batch;
    d["objective"] = objective;
    d["required_bytes"] = ah::estimate_memory(m, q, shape).total_bytes();
    d["memory_headroom"] = headroom;
    d["fits"] = best.found();
    d["instance"] = best.found() ? py::object(instance_dict(best)) : py::object(py::none());
    if (all_instances) {
        py::list rows;
        for (const auto& row : ah::instance_catalogue)
            rows.append(instance_dict(ah::estimate_instance_cost(row, m, q, shape, assumptions)));
        d["instances"] = rows;
    }
    d["estimate"] = true;
    return d;
}

} // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() = "ai_hwaccel: find the AI accelerators on a machine and plan model deployment on them "
              "(C++ library bindings; every planning figure is an estimate)";
    m.attr("__version__") = AI_HWACCEL_VERSION_STRING;
    m.attr("json_support") = py::bool_(AI_HWACCEL_JSON != 0);

    bind_device(m);
    bind_records(m);
    bind_model(m);
    bind_registry(m);

    m.def("detect", &detect, py::arg("root") = py::none(), py::arg("measure_bandwidth") = false,
          "Detects this machine's devices, or a captured machine tree's (root: its folder). Never raises for "
          "what the machine does; problems are Registry.warnings. Releases the GIL while it runs. "
          "measure_bandwidth=True also measures this machine's memory read rate (about a second) and gives it "
          "to the CPU (origin 'measured'); RuntimeError when it cannot be measured.");
    m.def("measure_memory_bandwidth", &measure_memory_bandwidth, py::arg("buffer_bytes") = 0, py::arg("threads") = 0,
          py::arg("passes") = 5,
          "How fast this process reads memory, in decimal GB/s: every usable CPU (threads=0) reads its slice of a "
          "buffer (0: 2 GiB or four times the CPUs' last-level caches, at most a quarter of the memory available: "
          "MemAvailable or the container's limit), `passes` times; the fastest pass counts. A dict of gbps, "
          "bytes_per_pass, threads, passes, fastest_seconds, slowest_seconds, cache_bytes (the last-level caches, 0 "
          "unknown) and note (why the figure may be partly the caches'; empty when not); RuntimeError with the "
          "reason when nothing could be measured.");
    m.def(
        "catalogue_device",
        [](const utf8_text& name, std::optional<whole_arg> memory_bytes, std::optional<double> bandwidth_gbps) {
            std::optional<std::uint64_t> mem;
            if (memory_bytes) {
                mem = static_cast<std::uint64_t>(in_range("memory_bytes", *memory_bytes, 1, most));
            }
            return described(spec_of(name), 0, mem, bandwidth_gbps);
        },
        py::arg("name"), py::arg("memory_bytes") = py::none(), py::arg("bandwidth_gbps") = py::none(),
        "A catalogue device as if present (\"H100 SXM\", \"RTX 4090\", \"MI300X\").");
    m.def(
        "catalogue_registry",
        [](const utf8_text& name, const whole_arg& count, std::optional<whole_arg> memory_bytes,
           std::optional<double> bandwidth_gbps) {
            std::optional<std::uint64_t> mem;
            if (memory_bytes) {
                mem = static_cast<std::uint64_t>(in_range("memory_bytes", *memory_bytes, 1, most));
            }
            const auto n = whole("count", count, 1, static_cast<long long>(ah::max_plan_devices));
            return ah::described_registry(described(spec_of(name), 0, mem, bandwidth_gbps), n);
        },
        py::arg("name"), py::arg("count") = 1, py::arg("memory_bytes") = py::none(), py::arg("bandwidth_gbps") = py::none(),
        "count catalogue devices joined by the device's own link (NVLink, XGMI, …; PCIe when it has none).");
    m.def("catalogue", [] {
        py::list out;
        for (const auto& row : ah::device_catalogue) out.append(text(row.name));
        return out;
    }, "The canonical names of the device catalogue's rows.");
    m.def("model", [](const utf8_text& id) { return model_of(py::str(id)); }, py::arg("id"),
          "A catalogue model by id or by the name people write (\"llama-3.1-70b\", \"meta-llama/Llama-3.1-8B\").");
    m.def("models", [] {
        py::list out;
        for (const auto& row : ah::model_catalogue) out.append(py::cast(row));
        return out;
    }, "Every model of the catalogue.");
    m.def("quant_formats", [] {
        py::list out;
        for (const auto& row : ah::quant_table) out.append(text(row.name));
        return out;
    }, "The canonical names of the quantization formats.");
    m.def("bits_per_weight", [](const utf8_text& quant) { return ah::bits_per_weight(quant_of(quant)); },
          py::arg("quant"), "True bits per weight of a format, block scales included.");
    m.def("memory", &memory, py::arg("model"), py::arg("quant"), py::arg("context") = 4096, py::arg("batch") = 1,
          py::arg("kv_cache") = "fp16", "Memory to serve a model: weights, KV cache, overhead (bytes, estimates).");
    m.def("estimate", &estimate, py::arg("device"), py::arg("model"), py::arg("quant"), py::arg("context") = 4096,
          py::arg("batch") = 1, py::arg("count") = 1, py::arg("prompt") = py::none(), py::arg("memory_bytes") = py::none(),
          py::arg("headroom") = ah::plan_options{}.memory_headroom, py::arg("bandwidth_gbps") = py::none(),
          py::arg("prompt_depth") = 0,
          "Memory and decode/prefill tokens per second of a model on count such devices (estimates); headroom is "
          "the share of each device's memory left free; prompt_depth is the tokens already cached when the prompt "
          "comes (it attends to them too).");
    m.def("plan", &plan, py::arg("devices"), py::arg("model"), py::arg("quant") = "auto", py::arg("context") = 4096,
          py::arg("batch") = 1, py::arg("allow_cpu") = false, py::arg("free_memory") = false,
          py::arg("headroom") = ah::plan_options{}.memory_headroom, py::arg("prompt") = py::none(),
          py::arg("spread") = false, py::arg("network_gbits") = py::none(), py::arg("prompt_depth") = 0,
          "Lays a model out on devices (a Registry, a Device or a list of Devices), or on a cluster (a dict of "
          "node names to Registries: tensor parallel inside nodes, pipeline across them over the network they "
          "share); quant='auto' picks the highest-quality format that fits, and a comma-separated list "
          "('Q4_K_M,Q5_K_M,Q8_0') the highest-quality of those that fits; free_memory=True plans on the "
          "memory free now (what each device has in use or not free taken off); prompt is the prompt length of the "
          "prefill rate (default: the context, less prompt_depth, the tokens already cached before it); "
          "spread=True lays one copy over every device; network_gbits "
          "(Gb/s each way) is a network assumed between nodes that share none.");
    m.def("training", &training, py::arg("model"), py::arg("method"), py::arg("seq") = 2048, py::arg("batch") = 1,
          py::arg("devices") = 1, py::arg("zero") = 0, py::arg("rank") = py::none(), py::arg("checkpointing") = false,
          py::arg("optimizer") = "adamw", py::arg("policy") = py::none(),
          "Memory per device of fine-tuning a model (estimates).");
    m.def("cost", &cost, py::arg("model"), py::arg("quant"), py::arg("context") = 4096, py::arg("batch") = 1,
          py::arg("objective") = "hour", py::arg("all_instances") = false,
          py::arg("headroom") = ah::plan_options{}.memory_headroom,
          "The cheapest cloud instance that holds a model, by price per hour or per output token (estimates); "
          "headroom is the share of each accelerator's memory left free.");
}
