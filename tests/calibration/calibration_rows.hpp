// Reads /work/shared/data/calibration-measurements.csv (or the copy the build points
// AI_HWACCEL_CALIBRATION_CSV at) and maps each row to what the estimators take: a device
// profile, a model_spec, a format and a shape. Shared by tests/unit/plan_throughput.cpp
// (which reports errors and asserts the targets) and tests/calibration/export_features.cpp
// (which writes the per-row physical inputs tools/calibrate.py fits on).
//
// Mapping rules (no row is looked up by its answer):
//  - model: the CSV name with any " (...)" remark and the word "family" removed, through
//    find_model. A name the catalogue lacks becomes a bare parameter count from
//    `params_b` for file sizes only, where bytes follow parameters; throughput also
//    depends on the layer count (fixed per-layer costs) and the attention shape, so such
//    throughput rows are skipped.
//  - format: parse_quant_format on `quant` with remarks removed; unknown → skipped.
//  - device: find_device on `hardware`, then `device_key`; the bandwidth is the CSV's
//    `mem_bw_gbps_per_device` (the device's spec figure), the peaks the catalogue's.
//  - shape: `tgN` decodes from an empty cache, so its mean depth is N/2; `tgN @ dD` is
//    D + N/2; `ppN` is a prompt of N tokens, `ppN @ dD` one after D cached tokens
//    (inference_shape::prompt_depth); generation tests without a length get depth 64.
//    `batch_decode_tok_s` is the tokens of `batch` sequences decoded together, all of them
//    per second (llama-batched-bench's S_TG); it is mapped to a decode row of that batch
//    and measured per sequence (the value / batch), as the estimator gives it.
//    Multi-device rows are kept: llama.cpp's default layer split runs the layers one
//    device after another, so single-sequence decode and a one-micro-batch prefill take
//    the single-device time; a longer prompt pipelines its micro-batches over the devices,
//    n equal stages of 1/n of that time each (prefill_estimate).
#pragma once

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/quantization.hpp"
#include "ai_hwaccel/plan/memory.hpp"
#include "ai_hwaccel/plan/models.hpp"
#include "ai_hwaccel/plan/throughput.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace calibration {

namespace ah = ai_hwaccel;

enum class metric { decode, prefill, weights, kv_cache, compute_buffer, other };

struct row {
    int id = 0;
    metric what = metric::other;
    std::string metric_name, engine, model_name, quant_name, device_name, test;
    double measured = 0; ///< tok/s, or bytes
    int n_devices = 1;
    double params_b = 0;
    // What the estimators take; `skip` says why a row cannot be mapped.
    std::string skip;
    bool params_only = false; ///< model built from params_b
    ah::model_spec model{};
    ah::quant_format quant = ah::quant_format::fp16;
    ah::inference_shape shape{};
    ah::accelerator_profile device{};
};

inline std::vector<std::string> split_csv_line(std::string_view line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(cur);
            cur.clear();
        } else if (c != '\r') {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

inline double to_double(std::string_view s) {
    s = ah::detail::trim(s);
    double v = 0;
    std::string tmp(s);
    std::istringstream in(tmp);
    in.imbue(std::locale::classic());
    if (!(in >> v)) return 0;
    return v;
}

/// "Llama-3.2-3B (llama 3B)" → "Llama-3.2-3B"; "Llama-3-8B family" → "Llama-3-8B".
inline std::string clean_name(std::string_view s) {
    if (auto p = s.find(" ("); p != std::string_view::npos) s = s.substr(0, p);
    if (auto p = s.find(" family"); p != std::string_view::npos) s = s.substr(0, p);
    // "-qat": quantization-aware training of the same architecture.
    if (s.size() > 4 && ah::detail::iequals(s.substr(s.size() - 4), "-qat")) s = s.substr(0, s.size() - 4);
    return std::string(ah::detail::trim(s));
}

inline std::optional<std::uint32_t> leading_uint(std::string_view s) {
    std::uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p == s.data()) return std::nullopt;
    return v;
}

inline double bytes_of(double v, std::string_view unit) {
    if (unit.substr(0, 3) == "GiB") return v * 1073741824.0;
    if (unit.substr(0, 3) == "MiB") return v * 1048576.0;
    // "GB as labelled (matches GiB ...)" and "GB (vLLM label; bytes/2^30)": GiB really.
    if (unit.find("GiB") != std::string_view::npos || unit.find("2^30") != std::string_view::npos)
        return v * 1073741824.0;
    if (unit.substr(0, 2) == "GB") return v * 1e9;
    return 0;
}

inline std::string engine_key(std::string_view engine) {
    auto e = std::string(ah::detail::trim(engine));
    if (auto p = e.find_first_of(" ("); p != std::string::npos) e = e.substr(0, p);
    if (e == "llama.cpp" || e == "ik_llama.cpp") return e;
    return e;
}

inline void map_row(row& r, const std::vector<std::string>& f, const std::vector<std::string>& h) {
    auto col = [&](std::string_view name) -> std::string_view {
        for (std::size_t i = 0; i < h.size() && i < f.size(); ++i)
            if (h[i] == name) return f[i];
        return {};
    };
    r.id = static_cast<int>(to_double(col("id")));
    r.metric_name = std::string(col("metric"));
    r.engine = engine_key(col("engine"));
    r.model_name = std::string(col("model"));
    r.quant_name = std::string(col("quant"));
    r.test = std::string(col("test"));
    r.params_b = to_double(col("params_b"));
    const auto nd = to_double(col("n_devices"));
    r.n_devices = nd >= 1 ? static_cast<int>(nd) : 1;
    const double value = to_double(col("value"));
    const std::string_view unit = col("unit");
    const bool throughput = col("section") == "throughput";

    const double batch = to_double(col("batch"));
    if (r.metric_name == "decode_tok_s") r.what = metric::decode, r.measured = value;
    else if (r.metric_name == "batch_decode_tok_s" && batch >= 1 && batch <= 1e6)
        r.what = metric::decode, r.measured = value / batch, r.shape.batch = static_cast<std::uint32_t>(batch);
    else if (r.metric_name == "decode_ms_per_token") r.what = metric::decode, r.measured = value > 0 ? 1000.0 / value : 0;
    else if (r.metric_name == "prefill_tok_s") r.what = metric::prefill, r.measured = value;
    else if (r.metric_name == "model_file_size" || (r.metric_name == "weights" && !throughput))
        r.what = metric::weights, r.measured = bytes_of(value, unit);
    else if (r.metric_name == "kv_cache") r.what = metric::kv_cache, r.measured = bytes_of(value, unit);
    else if (r.metric_name == "compute_buffer" && col("test").find("Host") == std::string_view::npos)
        r.what = metric::compute_buffer, r.measured = bytes_of(value, unit); // a device's buffer only
    if (r.what == metric::other) {
        r.skip = "metric not estimated";
        return;
    }
    if (!(r.measured > 0)) {
        r.skip = "no value";
        return;
    }

    // Model.
    const std::string mname = clean_name(r.model_name);
    if (const auto* m = ah::find_model(mname)) {
        r.model = *m;
    } else if (r.params_b > 0 && r.what == metric::weights) {
        r.params_only = true;
        r.model = ah::model_spec{};
        r.model.parameters = static_cast<std::uint64_t>(r.params_b * 1e9);
        r.model.active_parameters = r.model.parameters;
    } else {
        r.skip = r.params_b > 0 ? "model not in catalogue (throughput needs its shape)"
                                : "model not in catalogue, no parameter count";
        return;
    }

    // Format.
    std::string q = clean_name(r.quant_name);
    if (auto p = q.find(' '); p != std::string::npos) q = q.substr(0, p);
    if (q == "INT8" && r.quant_name.find("W8A8") != std::string::npos) q = "int8";
    const auto fmt = ah::parse_quant_format(q);
    if (r.what != metric::kv_cache && r.what != metric::compute_buffer) {
        if (!fmt) {
            r.skip = "format not in quant_table";
            return;
        }
        r.quant = *fmt;
    }

    // Shape.
    const auto ctx = to_double(col("ctx_tokens"));
    if (ctx > 0) r.shape.context = static_cast<std::uint32_t>(ctx);
    const std::string_view t = r.test;
    if (r.what == metric::decode) {
        std::uint32_t depth = 64;
        if (t.substr(0, 2) == "tg") {
            const auto n = leading_uint(t.substr(2));
            if (n) depth = *n / 2;
            if (auto p = t.find("@ d"); p != std::string_view::npos)
                if (auto d = leading_uint(t.substr(p + 3))) depth += *d;
        }
        r.shape.context = depth ? depth : 1;
    } else if (r.what == metric::prefill) {
        std::uint32_t n = 512, d = 0;
        if (t.substr(0, 2) == "pp")
            if (auto v = leading_uint(t.substr(2))) n = *v;
        // A prompt after a filled cache ("pp512 @ d4096") attends to those tokens as well.
        if (auto p = t.find("@ d"); p != std::string_view::npos)
            if (auto v = leading_uint(t.substr(p + 3))) d = *v;
        r.shape.prompt = n;
        r.shape.prompt_depth = d;
        r.shape.context = n + d;
    }

    // Device.
    if (r.what == metric::decode || r.what == metric::prefill) {
        const ah::device_spec* spec = ah::find_device(clean_name(col("hardware")));
        if (!spec) spec = ah::find_device(col("hardware"));
        if (!spec) spec = ah::find_device(col("device_key"));
        r.device_name = std::string(col("device_key").empty() ? col("hardware") : col("device_key"));
        if (spec) r.device = ah::profile_from_spec(*spec);
        const double bw = to_double(col("mem_bw_gbps_per_device"));
        if (bw > 0) r.device.memory_bandwidth_gbps = {bw, ah::origin::user};
        if (!r.device.memory_bandwidth_gbps) {
            r.skip = "device bandwidth unknown";
            return;
        }
    }
}

/// All rows of the CSV, mapped. Empty when the file cannot be read.
inline std::vector<row> read_rows(const std::string& path) {
    std::vector<row> out;
    std::ifstream in(path);
    if (!in) return out;
    std::string line;
    if (!std::getline(in, line)) return out;
    const auto header = split_csv_line(line);
    std::string pending;
    while (std::getline(in, line)) {
        pending += line;
        // A quoted field may span lines: wait for balanced quotes.
        if (std::count(pending.begin(), pending.end(), '"') % 2 != 0) {
            pending += '\n';
            continue;
        }
        const auto fields = split_csv_line(pending);
        pending.clear();
        if (fields.size() < 5) continue;
        row r;
        map_row(r, fields, header);
        out.push_back(std::move(r));
    }
    return out;
}

/// The reference peer's formulas (reference-peer.md §3.2, §3.6): decode and prefill both
/// 1e9 / params x a per-type multiplier x 32 / bits, bits one of 32/16/8/4 (the nearest);
/// weights params x bits / 8 (its estimate_memory adds 20 % on top, meant for the rest).
/// Prefill tokens per second for a prefill row: one device's rate, or over n_devices equal
/// devices in llama.cpp's layer split, n stages of 1/n of one device's time each, overlapped
/// by pipelined_prefill_seconds (no link time: the rows' devices sit on PCIe, where the
/// activations of a token are a few KiB).
inline double prefill_estimate(const row& r) {
    const double one = ah::estimate_throughput(r.device, r.model, r.quant, r.shape).prefill_tokens_per_second;
    if (!(one > 0) || r.n_devices <= 1) return one;
    const double t = 1.0 / one;
    return 1.0 / ah::pipelined_prefill_seconds(t, t / r.n_devices, ah::prompt_tokens(r.shape));
}

inline double peer_bits(ah::quant_format q) {
    const double b = ah::bits_per_weight(q);
    if (b >= 24) return 32;
    if (b >= 12) return 16;
    if (b >= 6) return 8;
    return 4;
}
inline double peer_multiplier(const ah::accelerator_profile& d) {
    switch (d.maker) {
    case ah::vendor::nvidia: return 20; // CudaGpu
    case ah::vendor::amd: return 15;    // RocmGpu
    case ah::vendor::apple: return 12;  // MetalGpu
    default: return 20;                 // the devices in the file are GPUs
    }
}
inline double peer_tokens_per_second(const row& r) {
    const double params = static_cast<double>(r.model.parameters);
    return params > 0 ? 1e9 / params * peer_multiplier(r.device) * 32.0 / peer_bits(r.quant) : 0;
}
inline double peer_weight_bytes(const row& r) {
    return static_cast<double>(r.model.parameters) * peer_bits(r.quant) / 8.0;
}

inline std::string_view metric_name(metric m) {
    switch (m) {
    case metric::decode: return "decode_tok_s";
    case metric::prefill: return "prefill_tok_s";
    case metric::weights: return "weights_bytes";
    case metric::kv_cache: return "kv_cache_bytes";
    case metric::compute_buffer: return "compute_buffer_bytes";
    case metric::other: return "other";
    }
    return "other";
}

} // namespace calibration
