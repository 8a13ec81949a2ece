// ai-hwaccel C ABI: the implementation of capi/include/ai_hwaccel.h over the C++ headers.
//
// Every exported function is noexcept and runs its body inside `guarded`, which turns any
// exception into a status and a thread-local message: a C caller can never see one. The
// message buffer is a fixed array, so recording an error cannot itself fail.
#include "ai_hwaccel.h"

#include <ai_hwaccel/ai_hwaccel.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ah = ai_hwaccel;

// The opaque handle of the header: a registry, immutable once made.
struct ahw_registry {
    ah::accelerator_registry reg;
};

namespace {

thread_local char last_error_text[512] = "";

// How many bytes of `s` fit in `most` without splitting a UTF-8 character.
std::size_t utf8_prefix(std::string_view s, std::size_t most) noexcept {
    if (s.size() <= most) return s.size();
    std::size_t n = most;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n; // s[n] starts the cut-off part
    return n;
}

void set_error(std::string_view what) noexcept {
    const std::size_t n = utf8_prefix(what, sizeof last_error_text - 1);
    std::memcpy(last_error_text, what.data(), n);
    last_error_text[n] = '\0';
}

// "<function>: <what>", cut to the buffer at a character boundary; never allocates.
ahw_status fail(ahw_status status, const char* function, std::string_view what) noexcept {
    char buf[sizeof last_error_text];
    const int width = static_cast<int>(utf8_prefix(what, 400));
    const int n = std::snprintf(buf, sizeof buf, "%s: %.*s", function, width, what.data());
    std::size_t len = n > 0 ? static_cast<std::size_t>(n) : 0;
    if (len >= sizeof buf) len = sizeof buf - 1;
    set_error(std::string_view(buf, len));
    return status;
}

// Runs `body` (which returns an ahw_status), turning every exception into a status.
template <class F>
ahw_status guarded(const char* function, F&& body) noexcept {
    try {
        return std::forward<F>(body)();
    } catch (const std::bad_alloc&) {
        return fail(AHW_ERR_NO_MEMORY, function, "out of memory");
    } catch (const std::exception& e) {
        return fail(AHW_ERR_INTERNAL, function, e.what());
    } catch (...) {
        return fail(AHW_ERR_INTERNAL, function, "unknown exception");
    }
}

// Copies `s` into a fixed array, NUL-terminated, cut before an incomplete UTF-8 sequence.
template <std::size_t N>
void copy_text(char (&out)[N], std::string_view s) noexcept {
    const std::size_t n = utf8_prefix(s, N - 1); // a multi-byte character is never split
    std::memcpy(out, s.data(), n);
    out[n] = '\0';
}

std::string quoted(const char* s) { return std::string("'") + s + "'"; }

// ahw_estimate and ahw_estimate_at_bandwidth: `bandwidth_gbps` > 0 replaces the
// catalogue's memory bandwidth (origin user, as the CLI's --bandwidth).
ahw_status estimate(const char* fn, const char* device_name, const char* model_id, const char* quant_name,
                    uint32_t context, uint32_t batch, double bandwidth_gbps, ahw_estimate_result* out) {
    if (!device_name || !model_id || !quant_name || !out)
        return fail(AHW_ERR_INVALID_ARGUMENT, fn, "device_name, model_id, quant_name and out must not be NULL");
    if (context == 0 || batch == 0) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "context and batch must be > 0");
    const ah::device_spec* spec = ah::find_device(device_name);
    if (!spec) return fail(AHW_ERR_UNKNOWN_DEVICE, fn, "no catalogue device named " + quoted(device_name));
    const ah::model_spec* model = ah::find_model(model_id);
    if (!model) return fail(AHW_ERR_UNKNOWN_MODEL, fn, "no catalogue model named " + quoted(model_id));
    const auto quant = ah::parse_quant_format(quant_name);
    if (!quant) return fail(AHW_ERR_UNKNOWN_QUANT, fn, "no quantization format named " + quoted(quant_name));

    const ah::inference_shape shape{.context = context, .batch = batch};
    ah::accelerator_profile device = ah::profile_from_spec(*spec);
    if (bandwidth_gbps > 0) device.memory_bandwidth_gbps = {bandwidth_gbps, ah::origin::user};
    const ah::memory_estimate memory = ah::estimate_memory(*model, *quant, shape);
    const ah::throughput_estimate speed = ah::estimate_throughput(device, *model, *quant, shape);
    // "Fits" is the planner's answer for this one device, headroom included.
    const ah::plan_options options{};
    const ah::shard_plan plan =
        ah::plan_sharding(std::span<const ah::accelerator_profile>(&device, 1), {}, *model, *quant, shape, options);

    ahw_estimate_result r{};
    copy_text(r.device, spec->name);
    copy_text(r.model, model->id);
    copy_text(r.quant, ah::to_string(*quant));
    r.parameters = model->parameters;
    r.weights_bytes = memory.weights_bytes;
    r.kv_cache_bytes = memory.kv_cache_bytes;
    r.overhead_bytes = memory.overhead_bytes;
    r.total_bytes = memory.total_bytes();
    r.device_memory_bytes = device.memory_bytes.value_or(0);
    r.usable_bytes = ah::usable_memory(device, options);
    r.memory_bandwidth_gbps = device.memory_bandwidth_gbps.value_or(0);
    r.format_supported = ah::support_for(device, *quant) != ah::format_support::none ? 1 : 0;
    r.fits = plan.fits ? 1 : 0;
    // A model that does not fit runs at no speed; the CLI and Python say null there.
    r.decode_tokens_per_second = plan.fits ? speed.decode_tokens_per_second : 0;
    r.prefill_tokens_per_second = plan.fits ? speed.prefill_tokens_per_second : 0;
    *out = r;
    return AHW_OK;
}

// The measurement with the defaults sized from what the host probe reads of the memory
// (MemAvailable, a container's limit), as the CLI and Python measure.
ah::bandwidth_measurement measure(std::uint64_t buffer_bytes, std::uint32_t threads, std::uint32_t passes) {
    std::vector<ah::warning> ignored;
    auto o = ah::bandwidth_options_for(ah::probe_host(ah::host_system(), ignored).first);
    o.buffer_bytes = buffer_bytes;
    o.threads = threads;
    if (passes != 0) o.passes = passes;
    return ah::measure_memory_bandwidth(o);
}

// What ahw_plan and ahw_plan_cluster read of their arguments: the model, the format (none:
// "auto", or the best among a comma-separated list, which options.formats holds), the
// shape and the options.
struct plan_request {
    const ah::model_spec* model = nullptr;
    std::optional<ah::quant_format> quant;
    ah::inference_shape shape{};
    ah::plan_options options{};
};
ahw_status plan_request_of(const char* fn, const char* model_id, const char* quant_name, uint32_t context,
                           uint32_t batch, int allow_cpu, plan_request& q) {
    if (context == 0 || batch == 0) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "context and batch must be > 0");
    q.model = ah::find_model(model_id);
    if (!q.model) return fail(AHW_ERR_UNKNOWN_MODEL, fn, "no catalogue model named " + quoted(model_id));
    const std::string_view name = quant_name != nullptr ? std::string_view(quant_name) : "auto";
    if (name.find(',') != std::string_view::npos) {
        const auto list = ah::parse_quant_list(name);
        if (ah::detail::iequals(list.unknown, "auto"))
            return fail(AHW_ERR_INVALID_ARGUMENT, fn,
                        "\"auto\" chooses among every format and a list names the formats to choose among: "
                        "give one or the other");
        if (!list.unknown.empty())
            return fail(AHW_ERR_UNKNOWN_QUANT, fn, "no quantization format named " + quoted(std::string(list.unknown).c_str()));
        if (list.formats.empty())
            return fail(AHW_ERR_INVALID_ARGUMENT, fn, "the format list " + quoted(quant_name) + " names no format");
        q.options.formats = list.formats;
    } else if (!ah::detail::iequals(name, "auto")) {
        q.quant = ah::parse_quant_format(name);
        if (!q.quant) return fail(AHW_ERR_UNKNOWN_QUANT, fn, "no quantization format named " + quoted(quant_name));
    }
    q.shape = {.context = context, .batch = batch};
    q.options.allow_cpu = allow_cpu != 0;
    return AHW_OK;
}

ahw_plan_result plan_result_of(const ah::model_spec& model, const ah::deployment_plan& d) {
    const auto& plan = d.plan;
    // Nothing fits with "auto": the choice says why (too large even in the smallest format).
    const auto outcome = plan.fits || !d.choice ? plan.outcome : d.choice->outcome;
    ahw_plan_result r{};
    copy_text(r.model, model.id);
    copy_text(r.quant, ah::to_string(plan.quant));
    copy_text(r.outcome, ah::to_string(outcome));
    copy_text(r.strategy, ah::to_string(plan.fits ? plan.strategy : ah::shard_strategy::none));
    if (plan.fits) copy_text(r.kind, ah::to_string(plan.kind));
    r.fits = plan.fits ? 1 : 0;
    r.replicas = plan.replicas;
    r.stages = plan.stages;
    r.tensor_parallel = plan.tensor_parallel;
    r.devices = static_cast<uint32_t>(plan.devices.size());
    r.weights_bytes = plan.memory.weights_bytes;
    r.kv_cache_bytes = plan.memory.kv_cache_bytes;
    r.overhead_bytes = plan.memory.overhead_bytes;
    r.total_bytes = plan.memory.total_bytes();
    r.usable_bytes = plan.usable_bytes;
    r.decode_tokens_per_second = plan.decode_tokens_per_second;
    r.prefill_tokens_per_second = plan.prefill_tokens_per_second;
    r.aggregate_decode_tokens_per_second = plan.aggregate_decode_tokens_per_second;
    return r;
}

} // namespace

extern "C" {

AHW_API const char* ahw_version(void) noexcept { return ah::version.text; }

AHW_API const char* ahw_status_name(ahw_status status) noexcept {
    // A C caller may pass any int. In C++ an enumeration without a fixed underlying type
    // holds only the values of its smallest bit-field (0..15 here), so the value is read as
    // the integer it is before it is compared.
    std::underlying_type_t<ahw_status> value;
    static_assert(sizeof value == sizeof status);
    std::memcpy(&value, &status, sizeof value);
    switch (value) {
    case AHW_OK: return "ok";
    case AHW_ERR_INVALID_ARGUMENT: return "invalid_argument";
    case AHW_ERR_OUT_OF_RANGE: return "out_of_range";
    case AHW_ERR_UNKNOWN_DEVICE: return "unknown_device";
    case AHW_ERR_UNKNOWN_MODEL: return "unknown_model";
    case AHW_ERR_UNKNOWN_QUANT: return "unknown_quant";
    case AHW_ERR_UNSUPPORTED: return "unsupported";
    case AHW_ERR_PARSE: return "parse_error";
    case AHW_ERR_NO_MEMORY: return "no_memory";
    case AHW_ERR_INTERNAL: return "internal_error";
    case AHW_ERR_MEASUREMENT: return "measurement_failed";
    }
    return "unknown_status";
}

AHW_API const char* ahw_last_error(void) noexcept { return last_error_text; }

AHW_API ahw_registry* ahw_detect(void) noexcept {
    ahw_registry* out = nullptr;
    (void)guarded("ahw_detect", [&] {
        out = new ahw_registry{ah::detect()};
        return AHW_OK;
    });
    return out;
}

AHW_API void ahw_registry_free(ahw_registry* registry) noexcept { delete registry; }

AHW_API size_t ahw_device_count(const ahw_registry* registry) noexcept {
    return registry ? registry->reg.size() : 0;
}

AHW_API size_t ahw_warning_count(const ahw_registry* registry) noexcept {
    return registry ? registry->reg.warnings().size() : 0;
}

AHW_API int ahw_has_accelerator(const ahw_registry* registry) noexcept {
    return registry && registry->reg.has_accelerator() ? 1 : 0;
}

AHW_API uint64_t ahw_accelerator_memory(const ahw_registry* registry) noexcept {
    return registry ? registry->reg.total_accelerator_memory() : 0;
}

AHW_API uint64_t ahw_total_memory(const ahw_registry* registry) noexcept {
    return registry ? registry->reg.total_memory() : 0;
}

AHW_API ahw_status ahw_best_device(const ahw_registry* registry, size_t* index) noexcept {
    return guarded("ahw_best_device", [&] {
        if (!registry || !index) return fail(AHW_ERR_INVALID_ARGUMENT, "ahw_best_device", "registry and index must not be NULL");
        const auto best = registry->reg.best_available_position();
        if (!best) return fail(AHW_ERR_OUT_OF_RANGE, "ahw_best_device", "no device is available");
        *index = *best;
        return AHW_OK;
    });
}

AHW_API ahw_status ahw_device_get(const ahw_registry* registry, size_t index,
                                  ahw_device_info* out) noexcept {
    return guarded("ahw_device_get", [&] {
        if (!registry || !out) return fail(AHW_ERR_INVALID_ARGUMENT, "ahw_device_get", "registry and out must not be NULL");
        const auto all = registry->reg.all();
        if (index >= all.size())
            return fail(AHW_ERR_OUT_OF_RANGE, "ahw_device_get",
                        "index " + std::to_string(index) + " of " + std::to_string(all.size()) + " devices");
        const ah::accelerator_profile& p = all[index];
        ahw_device_info d{};
        copy_text(d.kind, ah::to_string(p.kind));
        copy_text(d.vendor, ah::to_string(p.maker));
        copy_text(d.name, p.name.view());
        if (p.pci) copy_text(d.pci, std::string_view(p.pci->text().data()));
        d.index = p.index;
        d.memory_known = p.memory_bytes.has_value() ? 1 : 0;
        d.memory_bytes = p.memory_bytes.value_or(0);
        copy_text(d.memory_origin, ah::to_string(p.memory_bytes.from));
        d.bandwidth_known = p.memory_bandwidth_gbps.has_value() ? 1 : 0;
        d.memory_bandwidth_gbps = p.memory_bandwidth_gbps.value_or(0);
        d.available = p.available ? 1 : 0;
        d.software = p.software ? 1 : 0;
        d.unified_memory = p.unified_memory ? 1 : 0;
        d.stack = p.stack ? int{*p.stack} : -1;
        *out = d;
        return AHW_OK;
    });
}

AHW_API ahw_status ahw_warning_get(const ahw_registry* registry, size_t index,
                                   ahw_warning_info* out) noexcept {
    return guarded("ahw_warning_get", [&] {
        if (!registry || !out) return fail(AHW_ERR_INVALID_ARGUMENT, "ahw_warning_get", "registry and out must not be NULL");
        const auto all = registry->reg.warnings();
        if (index >= all.size())
            return fail(AHW_ERR_OUT_OF_RANGE, "ahw_warning_get",
                        "index " + std::to_string(index) + " of " + std::to_string(all.size()) + " warnings");
        const ah::warning& w = all[index];
        ahw_warning_info i{};
        copy_text(i.kind, ah::to_string(w.kind));
        if (w.backend) copy_text(i.backend, ah::to_string(*w.backend));
        i.subject = w.subject.c_str();
        i.message = w.message.c_str();
        i.code = w.code;
        *out = i;
        return AHW_OK;
    });
}

AHW_API ahw_status ahw_registry_to_json(const ahw_registry* registry, char** out) noexcept {
    return guarded("ahw_registry_to_json", [&] {
        if (!out) return fail(AHW_ERR_INVALID_ARGUMENT, "ahw_registry_to_json", "out must not be NULL");
        *out = nullptr;
        if (!registry) return fail(AHW_ERR_INVALID_ARGUMENT, "ahw_registry_to_json", "registry must not be NULL");
#if AI_HWACCEL_JSON
        const std::string text = ah::to_json_string(registry->reg);
        auto* buf = static_cast<char*>(std::malloc(text.size() + 1));
        if (!buf) return fail(AHW_ERR_NO_MEMORY, "ahw_registry_to_json", "out of memory");
        std::memcpy(buf, text.c_str(), text.size() + 1);
        *out = buf;
        return AHW_OK;
#else
        return fail(AHW_ERR_UNSUPPORTED, "ahw_registry_to_json", "built without JSON support (nlohmann/json)");
#endif
    });
}

AHW_API ahw_status ahw_registry_from_json(const char* text, ahw_registry** out) noexcept {
    return guarded("ahw_registry_from_json", [&] {
        if (!out) return fail(AHW_ERR_INVALID_ARGUMENT, "ahw_registry_from_json", "out must not be NULL");
        *out = nullptr;
        if (!text) return fail(AHW_ERR_INVALID_ARGUMENT, "ahw_registry_from_json", "text must not be NULL");
#if AI_HWACCEL_JSON
        auto read = ah::registry_from_json(std::string_view(text));
        if (!read) return fail(AHW_ERR_PARSE, "ahw_registry_from_json", read.error);
        *out = new ahw_registry{std::move(*read.registry)};
        return AHW_OK;
#else
        return fail(AHW_ERR_UNSUPPORTED, "ahw_registry_from_json", "built without JSON support (nlohmann/json)");
#endif
    });
}

AHW_API void ahw_string_free(char* text) noexcept { std::free(text); }

AHW_API ahw_status ahw_catalogue_registry(const char* device_name, uint32_t count, uint64_t memory_bytes,
                                          ahw_registry** out) noexcept {
    return guarded("ahw_catalogue_registry", [&] {
        constexpr const char* fn = "ahw_catalogue_registry";
        if (!out) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "out must not be NULL");
        *out = nullptr;
        if (!device_name) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "device_name must not be NULL");
        if (count == 0 || count > ah::max_plan_devices)
            return fail(AHW_ERR_INVALID_ARGUMENT, fn,
                        "count must be from 1 to " + std::to_string(ah::max_plan_devices) + ", not " +
                            std::to_string(count));
        const ah::device_spec* spec = ah::find_device(device_name);
        if (!spec) return fail(AHW_ERR_UNKNOWN_DEVICE, fn, "no catalogue device named " + quoted(device_name));
        auto device = ah::profile_from_spec(*spec);
        if (memory_bytes != 0) device.memory_bytes = {memory_bytes, ah::origin::user};
        *out = new ahw_registry{ah::described_registry(device, count)};
        return AHW_OK;
    });
}

AHW_API ahw_status ahw_estimate(const char* device_name, const char* model_id, const char* quant_name,
                                uint32_t context, uint32_t batch, ahw_estimate_result* out) noexcept {
    return guarded("ahw_estimate", [&] {
        return estimate("ahw_estimate", device_name, model_id, quant_name, context, batch, 0, out);
    });
}

AHW_API ahw_status ahw_plan(const ahw_registry* registry, const char* model_id, const char* quant_name,
                            uint32_t context, uint32_t batch, int allow_cpu, ahw_plan_result* out) noexcept {
    return guarded("ahw_plan", [&] {
        constexpr const char* fn = "ahw_plan";
        if (!registry || !model_id || !out)
            return fail(AHW_ERR_INVALID_ARGUMENT, fn, "registry, model_id and out must not be NULL");
        plan_request q;
        if (const auto s = plan_request_of(fn, model_id, quant_name, context, batch, allow_cpu, q); s != AHW_OK)
            return s;
        ah::cluster_options co;
        co.plan = q.options;
        *out = plan_result_of(*q.model, ah::plan_deployment(nullptr, registry->reg.all(),
                                                            registry->reg.system().interconnects, *q.model, q.quant,
                                                            q.shape, co));
        return AHW_OK;
    });
}

AHW_API ahw_status ahw_plan_cluster(const ahw_registry* const* nodes, size_t count, double network_gbits,
                                    const char* model_id, const char* quant_name, uint32_t context, uint32_t batch,
                                    int allow_cpu, ahw_plan_result* out, ahw_cluster_result* cluster_out) noexcept {
    return guarded("ahw_plan_cluster", [&] {
        constexpr const char* fn = "ahw_plan_cluster";
        if (!nodes || !model_id || !out)
            return fail(AHW_ERR_INVALID_ARGUMENT, fn, "nodes, model_id and out must not be NULL");
        if (count == 0) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "count must be > 0");
        for (size_t i = 0; i < count; ++i)
            if (!nodes[i]) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "nodes[" + std::to_string(i) + "] is NULL");
        if (!(network_gbits >= 0 && network_gbits <= 1e5))
            return fail(AHW_ERR_INVALID_ARGUMENT, fn, "network_gbits must be 0 (none) or above 0 and at most 100000");
        plan_request q;
        if (const auto s = plan_request_of(fn, model_id, quant_name, context, batch, allow_cpu, q); s != AHW_OK)
            return s;
        std::vector<ah::cluster_node> list;
        list.reserve(count);
        for (size_t i = 0; i < count; ++i) list.push_back({"node" + std::to_string(i), nodes[i]->reg});
        const auto view = ah::make_cluster(list);
        ah::cluster_options co;
        co.plan = q.options;
        co.fallback_network_gbps = network_gbits * 2 / 8; // both directions, GB/s (core/system_io.hpp)
        const auto d = ah::plan_deployment(&view, {}, {}, *q.model, q.quant, q.shape, co);
        const auto& cp = *d.cluster;
        *out = plan_result_of(*q.model, d);
        if (cluster_out) {
            ahw_cluster_result c{};
            c.nodes = static_cast<uint32_t>(count);
            c.nodes_joined = static_cast<uint32_t>(cp.nodes_considered.size());
            c.joined = cp.joined ? 1 : 0;
            c.nodes_per_replica = cp.nodes_per_replica;
            c.inter_node_hops = cp.inter_node_hops;
            if (cp.inter_node_hops > 0) {
                copy_text(c.inter_node_link, ah::to_string(cp.inter_node_link.kind));
                c.inter_node_gbps = cp.inter_node_link.gbps;
            }
            c.decode_inter_node_seconds = cp.decode_inter_node_seconds;
            *cluster_out = c;
        }
        return AHW_OK;
    });
}

AHW_API ahw_status ahw_estimate_at_bandwidth(const char* device_name, const char* model_id, const char* quant_name,
                                             uint32_t context, uint32_t batch, double bandwidth_gbps,
                                             ahw_estimate_result* out) noexcept {
    return guarded("ahw_estimate_at_bandwidth", [&] {
        constexpr const char* fn = "ahw_estimate_at_bandwidth";
        // As the CLI's --bandwidth and Python's bandwidth_gbps take it: a smaller figure would
        // give a decode rate that rounds to 0, which reads as "unknown".
        if (!(bandwidth_gbps >= 0.001 && bandwidth_gbps <= 1e6))
            return fail(AHW_ERR_INVALID_ARGUMENT, fn, "bandwidth_gbps must be from 0.001 to 1000000");
        return estimate(fn, device_name, model_id, quant_name, context, batch, bandwidth_gbps, out);
    });
}

AHW_API ahw_status ahw_measure_memory_bandwidth(uint64_t buffer_bytes, uint32_t threads, uint32_t passes,
                                                ahw_bandwidth_result* out) noexcept {
    return guarded("ahw_measure_memory_bandwidth", [&] {
        constexpr const char* fn = "ahw_measure_memory_bandwidth";
        if (!out) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "out must not be NULL");
        *out = ahw_bandwidth_result{};
        if (passes > 1000) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "passes must be 0 (5) or 1 to 1000");
        if (threads > 1024) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "threads must be 0 (one per usable CPU) to 1024");
        const auto m = measure(buffer_bytes, threads, passes);
        if (!m.ok()) return fail(AHW_ERR_MEASUREMENT, fn, m.error);
        out->gbps = m.gbps;
        out->bytes_per_pass = m.bytes_per_pass;
        out->threads = m.threads;
        out->passes = m.passes;
        out->fastest_seconds = m.fastest_seconds;
        out->slowest_seconds = m.slowest_seconds;
        return AHW_OK;
    });
}

AHW_API ahw_status ahw_detect_measured(ahw_registry** out) noexcept {
    return guarded("ahw_detect_measured", [&] {
        constexpr const char* fn = "ahw_detect_measured";
        if (!out) return fail(AHW_ERR_INVALID_ARGUMENT, fn, "out must not be NULL");
        *out = nullptr;
        const auto reg = ah::detect();
        const auto m = ah::measure_memory_bandwidth(ah::bandwidth_options_for(reg.host()));
        if (!m.ok()) return fail(AHW_ERR_MEASUREMENT, fn, m.error);
        *out = new ahw_registry{ah::apply_cpu_bandwidth(reg, m)};
        return AHW_OK;
    });
}

} // extern "C"
