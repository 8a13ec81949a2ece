// Writes, for every row of the calibration CSV, the physical inputs of the estimators
// (bytes read per decoded token, FLOPs per prompt token, bandwidth, peak, ...) as
// tab-separated values, so tools/calibrate.py can fit the constants of
// plan/throughput.hpp without re-implementing the catalogue. Built and run by the script:
//   c++ -std=c++20 -Iinclude -Itests/calibration tests/calibration/export_features.cpp
//   ./a.out CSV > tests/calibration/features.tsv
#include "calibration_rows.hpp"

#include "ai_hwaccel/plan/throughput.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace {
// Tokens in one prefill micro-batch of a prompt of `prompt` tokens (throughput_constants).
std::uint32_t ubatch_of(std::uint32_t prompt) {
    const std::uint32_t u = ai_hwaccel::throughput_constants{}.prefill_ubatch_tokens;
    const std::uint32_t p = prompt ? prompt : 1;
    return u && u < p ? u : p;
}
} // namespace

int main(int argc, char** argv) {
    namespace ah = ai_hwaccel;
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s calibration-measurements.csv\n", argv[0]);
        return 2;
    }
    const auto rows = calibration::read_rows(argv[1]);
    if (rows.empty()) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    std::printf("id\tmetric\tengine\tdevice\tmodel\tquant\ttest\tn_devices\tmeasured\tskip\tparams_only\t"
                "bw_gbps\tpeak_tflops\tvector_peak\tstages\tdequantizable\tlayers\tdecode_weight_bytes\tkv_bytes\t"
                "matmul_flops\tattention_flops\tubatch_weight_bytes\tcontext\testimate\tpeer\tbatch\n");
    for (const auto& r : rows) {
        // A prefill row's `context` column is its prompt (after prompt_start cached tokens).
        const std::uint32_t prompt = ah::prompt_tokens(r.shape);
        const std::uint32_t context = r.what == calibration::metric::prefill ? prompt : r.shape.context;
        const auto f = ah::prefill_flops_per_token(r.model, prompt, ah::prompt_start(r.shape));
        const auto rate = ah::prefill_compute_rate(r.device, r.quant);
        double estimate = 0, peer = 0;
        switch (r.what) {
        case calibration::metric::weights:
            estimate = static_cast<double>(ah::weight_bytes(r.model, r.quant));
            peer = calibration::peer_weight_bytes(r);
            break;
        case calibration::metric::kv_cache: estimate = static_cast<double>(ah::kv_cache_bytes(r.model, r.shape)); break;
        case calibration::metric::compute_buffer:
            estimate = static_cast<double>(ah::overhead_bytes(r.model, r.shape) - ah::runtime_allowance_bytes);
            break;
        case calibration::metric::decode:
            estimate = ah::estimate_throughput(r.device, r.model, r.quant, r.shape).decode_tokens_per_second;
            peer = calibration::peer_tokens_per_second(r);
            break;
        case calibration::metric::prefill:
            estimate = calibration::prefill_estimate(r);
            peer = calibration::peer_tokens_per_second(r);
            break;
        case calibration::metric::other: break;
        }
        auto clean = [](std::string s) {
            for (char& c : s)
                if (c == '\t' || c == '\n') c = ' ';
            return s;
        };
        std::printf("%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.6g\t%s\t%d\t%.6g\t%.6g\t%d\t%d\t%d\t%u\t%.10g\t%.10g\t%.10g\t%.10g\t%.10g\t%u\t%.6g\t%.6g\t%u\n",
                    r.id, std::string(calibration::metric_name(r.what)).c_str(), clean(r.engine).c_str(),
                    clean(r.device_name).c_str(), clean(r.model_name).c_str(), clean(r.quant_name).c_str(),
                    clean(r.test).c_str(), r.n_devices, r.measured, r.skip.c_str(), r.params_only ? 1 : 0,
                    r.device.memory_bandwidth_gbps.value_or(0), rate.peak_tflops, rate.vector ? 1 : 0,
                    r.what == calibration::metric::prefill ? r.n_devices : 1,
                    ah::info(r.quant).dequantizable ? 1 : 0, r.model.layers,
                    ah::detail::decode_weight_bytes(r.model, r.quant, r.shape.batch),
                    static_cast<double>(ah::kv_cache_bytes(r.model, r.shape)), f.matmul, f.attention,
                    // What one prefill micro-batch reads (a MoE model's routed share for its tokens).
                    ah::detail::decode_weight_bytes(r.model, r.quant, ubatch_of(prompt)), context, estimate, peer,
                    r.shape.batch);
    }
    return 0;
}
