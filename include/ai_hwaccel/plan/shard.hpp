// ai-hwaccel plan: which quantization to serve a model in, and how to spread it over devices.
//
// `suggest_quantization` picks the format of highest quality (most bits per weight, from
// core/quantization.hpp's table) whose memory (plan/memory.hpp) fits the devices that can
// run it, preferring a format the devices compute in natively over one they dequantize.
// Bits stand for quality except where llama.cpp's own figures say otherwise: Q5_1 and
// Q4_1 add more perplexity than Q5_K_M and Q4_K_M in more bits, so they are not
// candidates unless asked for (superseded_by).
// `plan_sharding` lays a model out on devices: one device, tensor parallel inside a group
// joined by a fast intra-node link (NVLink, NVSwitch, XGMI, ICI, NeuronLink, Gaudi RoCE),
// pipeline parallel across slower links (PCIe, inter-node InfiniBand/RoCE), tensor inside
// nodes and pipeline across them, and data-parallel replicas of the smallest layout that
// fits when devices remain. Where a fast-linked group as wide as the heads allow cannot
// hold the model (each device holds a rounded-up share of the KV heads, all of them when
// they are fewer than the devices), narrower groups are tried, down to a pipeline over
// single devices: a link never makes a model stop fitting. Layers are real ranges
// [first, last) split in proportion to what each stage can hold; the token embedding sits
// on the first stage and the output head on the last. Stages follow the devices' order,
// or, when that does not hold the model, the stage of most memory comes first and the
// stage of least last. A device that could hold neither end (a card mostly taken by other
// work, with plan_options::count_memory_in_use) takes no part in a pipeline. A model that
// fits nowhere gets `fits == false` and the reason; the CPU is used only when
// `plan_options::allow_cpu` says so.
//
// suggest_quantization's fit test is a layer pipeline over the devices of one kind that
// can hold either end, largest first and smallest last, and knows no links; the planner's
// tensor-parallel groups split the embedding, output head, logits buffer and KV heads
// across ranks, so with fast links it can hold a format of more bits than the test
// allows, or one where the test finds none. `plan_best_format` answers with the planner:
// it starts from suggest_quantization's format, plans the candidates of more bits (best
// first), then that format, then the smaller ones, and returns the first that fits with
// its plan. This is what `plan --quant auto` uses.
//
// Everything here is an estimate, `constexpr`, and returns fixed-capacity values (at most
// `max_plan_devices` devices per plan), so a build that knows its devices can
// `static_assert` that its model fits.
//
// Memory per device (bytes):
//   usable   = memory_bytes x (1 - memory_headroom); on an Apple GPU at most Metal's
//              working set (2/3 of the memory up to 32 GiB, 3/4 from 64 GiB). With
//              plan_options::count_memory_in_use, the memory the device reports in use
//              or not free (the more of the two) is taken off memory_bytes first
//              (usable_memory)
//   weights  = layers x ceil(layer_weight_bytes / t) + embedding/head share / t
//   kv cache = kv_cache_bytes x layers / model layers x ceil(kv_heads / t) / kv_heads
//              (a latent cache, DeepSeek's MLA, is one vector all heads read: every rank
//              holds all of it, as vLLM and SGLang do). A model with sliding-window
//              layers among full ones (Gemma 2 and 3, gpt-oss, Llama 4) puts one full
//              layer in every p (layers / full layers, rounded down): a stage short of
//              the whole model holds the cache of ceil(layers / p) full layers (at most
//              all of them) and windowed ones for the rest, the most any run of its
//              length can hold
//   overhead = runtime allowance + activation buffers on every device, + the logits
//              buffer / t on the last stage (plan/memory.hpp's overhead_bytes, split)
// where t is the tensor-parallel degree of the device's stage.
//
// Throughput of one replica, one decode step of the batch (seconds, all estimates):
//   stage j compute   = max over its devices d of
//                       (1/decode_tok_s(d) - layers x c) x r_j + layers_j x c
//                       decode_tok_s(d): estimate_throughput of the whole model on d (per
//                       sequence); c: its fixed cost per layer and token
//                       (throughput_constants::decode_seconds_per_layer), paid by every
//                       device for each of its layers; r_j = bytes one rank of stage j
//                       reads per token / bytes the model reads per token: its blocks'
//                       weights (MoE: the share of the routed experts the batch goes to)
//                       and the output head on the last stage, each / t_j, + their KV
//                       cache x the rank's share of it (ceil(kv_heads / t_j) / kv_heads;
//                       all of a latent cache), as the memory above holds it.
//   tensor all-reduce = layers_j x 2 x (2 (t-1)/t x hidden x a x batch / B_tp + L_tp)
//                       (two all-reduces per layer, after attention and after the MLP,
//                       ring algorithm; a = activation bytes, B_tp one-direction GB/s:
//                       the island's link, and on a full mesh (device_spec::link_peers:
//                       AMD xGMI, Gaudi scale-up RoCE) only the t-1 of its `peers`
//                       shares that stay inside the group, B x (t-1) / peers; on a TPU
//                       torus below 16 chips, one link's direction per axis spanned,
//                       B x axes / (2 dims); see group_link)
//   pipeline hop      = hidden x a x batch / B_pp + L_pp    (between consecutive stages)
//   decode tok/s      = 1 / (sum of stage compute + all-reduces + hops), per sequence
// Pipeline stages run one after another for a single sequence: splitting across stages
// adds hops and never multiplies speed; tensor parallelism divides the bytes each device
// reads and adds the all-reduces. Prefill, compute-bound, divides stage j's share f_j of
// the model's bytes by t_j (each rank computes its own heads) with prefill_tok_s and the
// bandwidth terms only (latencies are paid once per micro-batch, not per token), and
// a prompt longer than one micro-batch overlaps the stages, llama.cpp-style
// (pipelined_prefill_seconds in throughput.hpp: micro-batches of a batch follow each other
// through the stages).
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/quantization.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/plan/memory.hpp"
#include "ai_hwaccel/plan/model.hpp"
#include "ai_hwaccel/plan/throughput.hpp"

#include <array>
#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>

AI_HWACCEL_NAMESPACE_BEGIN

/// Devices one plan can hold; further devices are ignored (`shard_plan::truncated`).
inline constexpr std::size_t max_plan_devices = 256;

/// How one replica of the model is laid out.
enum class shard_strategy : std::uint8_t {
    none,              ///< no plan: the model fits nowhere (see plan_outcome)
    single_device,     ///< the whole model on one device
    tensor_parallel,   ///< every layer split across a fast-linked group
    pipeline_parallel, ///< consecutive layer ranges on devices joined by slower links
    tensor_pipeline,   ///< tensor parallel inside fast-linked groups, pipeline across them
};
constexpr std::string_view to_string(shard_strategy s) noexcept {
    switch (s) {
    case shard_strategy::none: return "none";
    case shard_strategy::single_device: return "single_device";
    case shard_strategy::tensor_parallel: return "tensor_parallel";
    case shard_strategy::pipeline_parallel: return "pipeline_parallel";
    case shard_strategy::tensor_pipeline: return "tensor_pipeline";
    }
    return "none";
}

/// Why a plan or a quantization choice does (not) fit.
enum class plan_outcome : std::uint8_t {
    fits,
    no_devices,         ///< no available device with known memory (the CPU only if allowed)
    unsupported_format, ///< devices exist, but none runs the format natively or dequantized
    too_large,          ///< the devices that run it cannot hold it, each its share and its overhead
    bad_model,          ///< the model has no layers or no size
};
constexpr std::string_view to_string(plan_outcome o) noexcept {
    switch (o) {
    case plan_outcome::fits: return "fits";
    case plan_outcome::no_devices: return "no_devices";
    case plan_outcome::unsupported_format: return "unsupported_format";
    case plan_outcome::too_large: return "too_large";
    case plan_outcome::bad_model: return "bad_model";
    }
    return "no_devices";
}
/// A sentence for people.
constexpr std::string_view describe(plan_outcome o) noexcept {
    switch (o) {
    case plan_outcome::fits: return "the model fits";
    case plan_outcome::no_devices:
        return "no available device with known memory (the CPU counts only when allowed)";
    case plan_outcome::unsupported_format:
        return "no device runs this format natively or by dequantizing it";
    case plan_outcome::too_large:
        return "the model does not fit in the usable memory of the devices that can run it, each holding its share and its own runtime overhead";
    case plan_outcome::bad_model: return "the model description has no layers or no parameters";
    }
    return "";
}

/// How a device runs a weight format.
enum class format_support : std::uint8_t { none, dequantized, native };

namespace detail {
/// llama.cpp's own formats (GGUF block types and their mixes) are loaded by llama.cpp
/// alone, whose backends are CPUs and GPUs (CUDA, HIP, Metal, Vulkan, SYCL): a TPU,
/// Trainium, Inferentia, Gaudi or NPU stack does not load them.
constexpr bool llama_cpp_only(const quant_info& r) noexcept {
    return r.scheme == quant_scheme::gguf_block || r.scheme == quant_scheme::gguf_mix;
}
/// A superseding format (superseded_by) runs wherever the one it supersedes does.
constexpr bool supersession_keeps_support() noexcept {
    for (const auto& r : quant_table) {
        const auto& by = info(superseded_by(r.id));
        if (llama_cpp_only(by) != llama_cpp_only(r) || by.native_compute != r.native_compute ||
            by.dequantizable != r.dequantizable)
            return false;
    }
    return true;
}
static_assert(supersession_keeps_support());
constexpr bool runs_llama_cpp(device_kind k) noexcept {
    const auto f = family_of(k);
    return f == family::gpu || f == family::cpu;
}

/// support_for's test (its rules are documented there), with the format's row looked up
/// once, so that scans over many devices reuse it.
struct support_test {
    quant_format q = quant_format::fp16;
    const quant_info* row = nullptr;
    double peak_throughput::*native = nullptr; ///< the peak of row->native_compute
    bool llama_cpp = false;                    ///< a llama.cpp format: CPUs and GPUs only
    bool gpus_dequantize = false;              ///< dequantized on GPUs only (FP8, NVFP4)

    constexpr explicit support_test(quant_format f) noexcept
        : q(f), row(&info(f)), llama_cpp(llama_cpp_only(*row)), gpus_dequantize(dequantized_on_gpus_only(f)) {
        switch (row->native_compute) {
        case dtype::fp64: native = &peak_throughput::fp64; break;
        case dtype::fp32: native = &peak_throughput::fp32; break;
        case dtype::tf32: native = &peak_throughput::tf32; break;
        case dtype::bf16: native = &peak_throughput::bf16; break;
        case dtype::fp16: native = &peak_throughput::fp16; break;
        case dtype::fp8: native = &peak_throughput::fp8; break;
        case dtype::int8: native = &peak_throughput::int8; break;
        case dtype::fp6: native = &peak_throughput::fp6; break;
        case dtype::fp4: native = &peak_throughput::fp4; break;
        case dtype::int4: native = &peak_throughput::int4; break;
        }
    }
    constexpr format_support operator()(const accelerator_profile& d) const noexcept {
        if (llama_cpp && !runs_llama_cpp(d.kind)) return format_support::none;
        if (native ? d.peak.*native > 0 : d.supports(row->native_compute)) return format_support::native;
        if (gpus_dequantize && family_of(d.kind) != family::gpu) return format_support::none;
        if ((d.is_cpu() || d.peak_from == origin::none) && row->scheme == quant_scheme::plain_float &&
            (q == quant_format::fp32 || q == quant_format::fp16 || q == quant_format::bf16))
            return format_support::dequantized;
        if (!row->dequantizable && q != quant_format::fp16 && q != quant_format::fp32) return format_support::none;
        if (d.is_cpu() || d.peak_from == origin::none) return format_support::dequantized;
        if (d.supports(dtype::fp16) || d.supports(dtype::bf16) || d.supports(dtype::fp32))
            return format_support::dequantized;
        return format_support::none;
    }
};
} // namespace detail

/// Whether `d` runs format `q`: natively when it computes in the format's
/// `native_compute` type; by dequantizing when the format is `dequantizable` and the
/// device computes in 16- or 32-bit floats (or its peak rates are unknown: the runtimes
/// that dequantize, llama.cpp above all, run on any GPU they support). A CPU runs the
/// 16/32-bit float formats and every dequantizable one. FP16 and FP32 weights run
/// wherever a dequantized format does, converted to the float type the device computes
/// in: an Apple GPU's catalogue row has no fp16 figure, yet F16 files run on it, and a
/// TPU multiplies fp16 checkpoints in bf16 (as cost.hpp's runs_format has it). BF16
/// weights need a bf16 rate where the device's rates are known; where none is (a WSE-3,
/// an M4 GPU), all three float formats run, as FP16 does. llama.cpp's formats (Q4_K_M, IQ2_XS, …) run on CPUs and GPUs
/// only, whatever the device computes in (cost.hpp's `gguf_on_gpus_only` likewise).
constexpr format_support support_for(const accelerator_profile& d, quant_format q) noexcept {
    return detail::support_test(q)(d);
}

/// Inputs to planning besides devices and model. Every constant is documented with where
/// its value comes from.
struct plan_options {
    /// Fraction of each device's memory left free for the driver, the allocator's
    /// fragmentation and other processes. 0.10 follows vLLM's default
    /// `gpu_memory_utilization = 0.9`. Applies to unified memory too (the OS keeps more,
    /// which the device's reported memory already excludes where a tool reports it); an
    /// Apple GPU is further held to Metal's working set (detail::shard::metal_working_set).
    double memory_headroom = 0.10;
    /// Plan for the devices as they are now, shared with whatever else runs: the memory
    /// each cannot give now (accelerator_profile::memory_used_bytes or its memory less
    /// memory_free_bytes, whichever is more; a CPU's free memory is MemAvailable) is taken
    /// off before the headroom. Off: every device's whole memory, what a dedicated
    /// deployment gets. A device that reports neither figure keeps its whole memory.
    bool count_memory_in_use = false;
    /// Use CPU profiles as devices. Off: a model that does not fit the accelerators is
    /// reported as not fitting, never moved to the CPU silently.
    bool allow_cpu = false;
    /// Replicate the smallest layout that fits over the devices left (data parallel).
    bool data_parallel = true;
    /// Put one replica on every usable device of the chosen kind (lowest latency per
    /// sequence) instead of the smallest layout that fits; a model with fewer layers than
    /// there are tensor-parallel units gets one stage per layer, on the units that hold
    /// most, and the rest stay unused.
    bool spread = false;
    /// suggest_quantization considers formats up to this many bits per weight: 16 by
    /// default, since checkpoints are published in 16 bits and fp32 only doubles memory.
    double max_bits_per_weight = 16.0;
    /// suggest_quantization's candidates; empty: every row of quant_table up to
    /// max_bits_per_weight but the ones another supersedes (superseded_by).
    fixed_list<quant_format, quant_format_count> formats{};
    /// Bytes of one activation value exchanged between devices (fp16/bf16 activations).
    double activation_bytes = 2.0;
    /// Fixed cost of one all-reduce on a fast intra-node link, seconds. Assumed, not
    /// fitted: the calibration data hold no tensor-parallel measurement. Order of
    /// magnitude of a small-message NCCL/RCCL all-reduce over NVLink or XGMI.
    double tensor_allreduce_latency_s = 10e-6;
    /// Fixed cost of one pipeline hop per decode step, seconds. Fitted: the median over
    /// the 40 pairs of calibration rows (shared/data/calibration-measurements.csv) where
    /// llama.cpp measured the same model, format and test on 1 and on N GPUs (layer split
    /// over PCIe) of (1/tok_s(N) - 1/tok_s(1)) / (N - 1) = 208.6 us. Script:
    ///   rows with metric decode_tok_s keyed by (engine, hardware, model, quant, test,
    ///   ctx_tokens, batch); for each key with n_devices 1 and N > 1, collect
    ///   (1/v[N] - 1/v[1]) / (N - 1); take the median.
    double pipeline_hop_latency_s = 208.6e-6;
    /// One-direction GB/s assumed for a device whose host link is unknown: PCIe 3.0 x16
    /// (the slowest link a data-centre accelerator ships with).
    double unknown_pcie_gbps = 15.75;
    /// Passed to estimate_throughput.
    throughput_constants throughput{};
    /// The host of each device given to the planner, by position (plan_cluster sets it;
    /// positions past its end are host 0). A host's unified memory, or its CPU's, is one
    /// pool that its devices share, so of those devices only the largest of each host
    /// takes part. Empty: every device is on one host. Not owned: it must outlive the call.
    std::span<const std::uint32_t> hosts{};
};

/// One device's part of a plan.
struct device_shard {
    std::uint16_t device = 0; ///< position in the `devices` given to the planner
    std::uint32_t index = 0;  ///< that profile's accelerator_profile::index
    std::uint16_t replica = 0;
    std::uint16_t stage = 0;       ///< pipeline stage inside the replica
    std::uint16_t tensor_rank = 0; ///< rank inside the stage's tensor-parallel group
    std::uint16_t tensor_size = 1; ///< devices sharing each of the stage's layers
    std::uint32_t first_layer = 0; ///< the stage's layers: [first_layer, last_layer)
    std::uint32_t last_layer = 0;
    bool embeddings = false;  ///< holds (its share of) the token embedding
    bool output_head = false; ///< holds (its share of) the output head
    std::uint64_t weights_bytes = 0;
    std::uint64_t kv_cache_bytes = 0;
    std::uint64_t overhead_bytes = 0;
    std::uint64_t usable_bytes = 0; ///< usable_memory(device, options)
    bool fits = false;

    constexpr std::uint32_t layers() const noexcept { return last_layer - first_layer; }
    constexpr std::uint64_t total_bytes() const noexcept {
        return detail::sat_add(detail::sat_add(weights_bytes, kv_cache_bytes), overhead_bytes);
    }
};

/// A link the plan uses, as the planner understood it.
struct plan_link {
    interconnect_kind kind = interconnect_kind::none;
    double gbps = 0; ///< one direction, decimal GB/s
};

/// A list of at most `N` values, read like fixed_list (`size()`, `[i]`, iteration over the
/// first `size()`), whose unused slots are not set at run time. A plan has room for
/// max_plan_devices devices and most use a few: setting all 256 slots on every call cost
/// more than planning. In a constant expression every slot is set, as constant
/// evaluation requires. `T` is trivially copyable, so a copy copies the slots' bytes.
template <class T, std::size_t N>
class slot_list {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    union slot {
        constexpr slot() noexcept {} // leaves `value` unset
        T value;
    };

public:
    /// Walks the slots, giving their values.
    class iterator {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using pointer = const T*;
        using reference = const T&;

        constexpr iterator() noexcept = default;
        constexpr explicit iterator(const slot* s) noexcept : s_(s) {}
        constexpr const T& operator*() const noexcept { return s_->value; }
        constexpr const T* operator->() const noexcept { return &s_->value; }
        constexpr const T& operator[](difference_type i) const noexcept { return s_[i].value; }
        constexpr iterator& operator++() noexcept { return ++s_, *this; }
        constexpr iterator operator++(int) noexcept { return iterator(s_++); }
        constexpr iterator& operator--() noexcept { return --s_, *this; }
        constexpr iterator operator--(int) noexcept { return iterator(s_--); }
        constexpr iterator& operator+=(difference_type n) noexcept { return s_ += n, *this; }
        constexpr iterator& operator-=(difference_type n) noexcept { return s_ -= n, *this; }
        friend constexpr iterator operator+(iterator a, difference_type n) noexcept { return a += n; }
        friend constexpr iterator operator+(difference_type n, iterator a) noexcept { return a += n; }
        friend constexpr iterator operator-(iterator a, difference_type n) noexcept { return a -= n; }
        friend constexpr difference_type operator-(iterator a, iterator b) noexcept { return a.s_ - b.s_; }
        friend constexpr bool operator==(iterator a, iterator b) noexcept { return a.s_ == b.s_; }
        friend constexpr auto operator<=>(iterator a, iterator b) noexcept { return a.s_ <=> b.s_; }

    private:
        const slot* s_ = nullptr;
    };

    std::size_t count = 0; ///< slots in use

    constexpr slot_list() noexcept {
        if (std::is_constant_evaluated())
            for (auto& s : slots_) std::construct_at(&s.value);
    }

    constexpr iterator begin() const noexcept { return iterator(slots_.data()); }
    constexpr iterator end() const noexcept { return iterator(slots_.data() + count); }
    constexpr std::size_t size() const noexcept { return count; }
    static constexpr std::size_t capacity() noexcept { return N; }
    constexpr bool empty() const noexcept { return count == 0; }
    constexpr bool full() const noexcept { return count == N; }
    constexpr const T& operator[](std::size_t i) const noexcept { return slots_[i].value; }
    constexpr T& operator[](std::size_t i) noexcept { return slots_[i].value; }
    /// Sets the next slot to `T{}` and gives it; the list must not be full().
    constexpr T& emplace_back() noexcept { return *std::construct_at(&slots_[count++].value); }
    /// Appends `v`; false (and nothing appended) when the list is full.
    constexpr bool push_back(const T& v) noexcept {
        if (full()) return false;
        std::construct_at(&slots_[count++].value, v);
        return true;
    }

private:
    std::array<slot, N> slots_;
};

/// A deployment plan (every number an estimate).
struct shard_plan {
    bool fits = false;
    plan_outcome outcome = plan_outcome::no_devices;
    shard_strategy strategy = shard_strategy::none; ///< of each replica (replica 0's)
    quant_format quant = quant_format::fp16;
    device_kind kind = device_kind::cpu; ///< the devices used (one software stack)
    std::uint32_t replicas = 0;          ///< data-parallel copies (> 1: data parallel)
    std::uint32_t stages = 0;            ///< pipeline stages of replica 0
    std::uint32_t tensor_parallel = 0;   ///< widest tensor-parallel group of replica 0
    /// Devices used, replica by replica, stage by stage.
    slot_list<device_shard, max_plan_devices> devices{};
    /// The whole model once (plan/memory.hpp), and what the considered devices offer.
    memory_estimate memory{};
    std::uint64_t usable_bytes = 0;         ///< all devices of the kind considered
    std::uint64_t largest_device_bytes = 0; ///< usable bytes of the largest one
    std::uint32_t candidate_devices = 0;    ///< devices of that kind able to run the format
    bool cpu_excluded = false;  ///< a CPU was present but not allowed
    bool truncated = false;     ///< more than max_plan_devices devices were given
    plan_link tensor_link{};    ///< replica 0's tensor-parallel link (slowest group)
    plan_link pipeline_link{};  ///< replica 0's slowest pipeline hop
    /// Replica 0, one sequence (batch as given): decode tokens per second at the shape's
    /// context, and prefill tokens per second of a prompt of prompt_tokens(shape).
    double decode_tokens_per_second = 0;
    double prefill_tokens_per_second = 0;
    /// Tokens per second of every sequence of every replica together: each replica decodes
    /// a batch of shape.batch sequences (replicas serve independent requests).
    double aggregate_decode_tokens_per_second = 0;
    /// Replica 0, seconds per decoded token: compute, all-reduces, pipeline hops.
    double decode_compute_seconds = 0;
    double decode_tensor_seconds = 0;
    double decode_pipeline_seconds = 0;
    constexpr bool is_data_parallel() const noexcept { return replicas > 1; }
};

/// The format suggest_quantization chose.
struct quantization_choice {
    bool fits = false;
    plan_outcome outcome = plan_outcome::no_devices;
    quant_format format = quant_format::fp16;
    format_support support = format_support::none; ///< native: every device counted runs it natively
    device_kind kind = device_kind::cpu;            ///< the devices counted (one software stack)
    std::uint32_t devices = 0;                      ///< how many
    std::uint64_t usable_bytes = 0;                 ///< their combined usable memory
    memory_estimate memory{};                       ///< the model in that format
    bool cpu_excluded = false;
};

/// The format plan_best_format chose and plan_sharding's plan of it.
struct format_plan {
    /// From the plan when it fits: `support` says how the plan's devices run the format,
    /// `devices` and `usable_bytes` count every device of its kind able to run it.
    quantization_choice choice{};
    shard_plan plan{};
};

namespace detail::shard {

using pos_t = std::uint16_t;
using pos_list = std::array<pos_t, max_plan_devices>;

constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) noexcept {
    return b == 0 ? a : a / b + (a % b != 0);
}
constexpr std::uint64_t scaled(std::uint64_t bytes, double f) noexcept {
    const double v = static_cast<double>(bytes) * f;
    if (!(v > 0)) return 0;
    if (v >= 1.8e19) return ~std::uint64_t{0};
    return static_cast<std::uint64_t>(v);
}
/// The share of a device's memory the headroom leaves to a plan.
constexpr double kept_share(const plan_options& o) noexcept {
    const double h = o.memory_headroom < 0 ? 0 : (o.memory_headroom > 1 ? 1 : o.memory_headroom);
    return 1.0 - h;
}
constexpr std::uint64_t usable_of(std::uint64_t memory_bytes, const plan_options& o) noexcept {
    return scaled(memory_bytes, kept_share(o));
}
/// What Metal lets one process keep resident on an Apple GPU (recommendedMaxWorkingSetSize),
/// of the machine's `memory`: llama.cpp's Metal backend logs it, and allocations past it
/// fail or page. Apple publishes no formula; the values logged are two thirds of the
/// memory up to 32 GiB (10922.67 MB of 16 GiB: llama-cpp-python issue 687; 21845.34 MB of
/// 32 GiB: llama.cpp pull request 2011) and three quarters from 64 GiB (49152 MiB of
/// 64 GiB: llama.cpp issue 1870; 73728 MB of 96 GiB: issue 3213). Between the two, the
/// smaller share is taken.
constexpr std::uint64_t metal_working_set(std::uint64_t memory) noexcept {
    return memory < 64 * units::gib ? memory / 3 * 2 : memory / 4 * 3;
}
/// The bytes of `d` not to be had now: what its tools report used, or its memory less what
/// they report free, whichever is more (a driver's reserved memory is neither used nor
/// free: 616 MiB of an H200 on driver 580); at most its memory, 0 when they report neither.
constexpr std::uint64_t in_use_bytes(const accelerator_profile& d) noexcept {
    const std::uint64_t memory = d.memory_bytes.value_or(0);
    std::uint64_t in_use = d.memory_used_bytes.value_or(0);
    if (d.memory_free_bytes && *d.memory_free_bytes < memory && memory - *d.memory_free_bytes > in_use)
        in_use = memory - *d.memory_free_bytes;
    return in_use < memory ? in_use : memory;
}
/// The bytes of `d` a plan may fill (see usable_memory).
/// `keep`: kept_share(options), worked out once for a scan over many devices.
constexpr std::uint64_t usable_kept(const accelerator_profile& d, double keep, bool count_in_use) noexcept {
    const std::uint64_t memory = d.memory_bytes.value_or(0);
    const std::uint64_t u = scaled(count_in_use ? memory - in_use_bytes(d) : memory, keep);
    if (d.kind != device_kind::metal_gpu || !d.unified_memory) return u;
    const std::uint64_t metal = metal_working_set(memory);
    return metal < u ? metal : u;
}
constexpr std::uint64_t usable(const accelerator_profile& d, const plan_options& o) noexcept {
    return usable_kept(d, kept_share(o), o.count_memory_in_use);
}
/// usable() over a scan of many devices: devices of one model report one memory size, so
/// the last device's figure serves again when nothing it depends on differs.
struct usable_scan {
    double keep;
    bool count_in_use;
    std::uint64_t memory = 0, last = 0;
    bool metal = false, any = false;
    constexpr explicit usable_scan(const plan_options& o) noexcept
        : keep(kept_share(o)), count_in_use(o.count_memory_in_use) {}
    constexpr std::uint64_t operator()(const accelerator_profile& d) noexcept {
        const std::uint64_t m = d.memory_bytes.value_or(0);
        const bool on_metal = d.kind == device_kind::metal_gpu && d.unified_memory;
        if (!any || count_in_use || m != memory || on_metal != metal) {
            last = usable_kept(d, keep, count_in_use);
            memory = m;
            metal = on_metal;
            any = true;
        }
        return last;
    }
};

/// What the model needs, computed once per (model, format, shape).
struct needs {
    std::uint32_t layers = 0;
    std::uint32_t heads = 0;
    std::uint32_t kv_heads = 0;
    std::uint32_t hidden = 0;
    bool tied = false;
    std::uint64_t layer_weights = 0; ///< one block
    std::uint64_t kv_total = 0;      ///< every layer
    std::uint64_t embed = 0;         ///< first stage
    std::uint64_t head = 0;          ///< last stage
    std::uint64_t non_layer = 0;     ///< embed + head as stored on one device
    std::uint64_t ov_device = 0;     ///< overhead on every device
    std::uint64_t ov_logits = 0;     ///< overhead on the last stage only
    double layer_read = 0;           ///< bytes one block reads per token (weights + KV)
    double layer_kv_read = 0;        ///< of which its KV cache
    double head_read = 0;            ///< bytes the output head reads per token
    double full_read = 0;
    memory_estimate memory{};
    /// A model some of whose layers, not all, attend only to a window shorter than the
    /// context (Gemma 2 and 3, gpt-oss, Llama 4): a full layer's cache and a windowed one's
    /// differ, so a stage's cache depends on which layers it holds. Every such model puts
    /// one full layer in every `full_every` (the same ratio its counts give): a run of k
    /// layers holds at most ceil(k / full_every) of them, which is what a stage is charged.
    /// full_every 0: every layer's cache is alike (kv_total / layers each).
    std::uint64_t kv_full_layer = 0;
    std::uint64_t kv_window_layer = 0;
    std::uint32_t full_layers = 0;
    std::uint32_t full_every = 0;
};

/// `same_model`: the needs of `m` and `s` in another format, whose KV cache and overhead
/// (which do not depend on the format) are taken over.
constexpr needs needs_of(const model_spec& m, quant_format q, const inference_shape& s,
                         const needs* same_model = nullptr) noexcept {
    needs n;
    const auto w = split_weights(m, q); // estimate_memory's weights, and where they sit
    if (same_model) {
        n = *same_model;
        n.memory.weights_bytes = w.total; // what estimate_memory would differ in
    } else {
        n.layers = m.layers;
        n.heads = m.attention_heads;
        // A latent cache is one vector per token that every head reads: it does not divide.
        n.kv_heads = m.cache_heads();
        n.hidden = m.hidden_size;
        n.tied = m.tied_embeddings;
        n.memory = {.weights_bytes = w.total, .kv_cache_bytes = kv_cache_bytes(m, s), .overhead_bytes = overhead_bytes(m, s)};
        n.kv_total = n.memory.kv_cache_bytes;
        if (m.sliding_window_layers > 0 && m.sliding_window_layers < m.layers && m.sliding_window < s.context) {
            n.full_layers = m.layers - m.sliding_window_layers;
            n.full_every = m.layers / n.full_layers;
            n.kv_full_layer = layer_kv_cache_bytes(m, s);
            n.kv_window_layer = ai_hwaccel::weight_bytes(
                sat_mul(m.kv_values_per_token(), detail::tokens_cached(m, s, true)), s.kv_cache);
        }
        n.ov_device = device_overhead_bytes(m, s);
        n.ov_logits = n.memory.overhead_bytes > n.ov_device ? n.memory.overhead_bytes - n.ov_device : 0;
    }
    n.layer_weights = w.layer;
    n.non_layer = w.non_layer;
    if (n.tied) {
        n.embed = n.head = n.non_layer; // each end of a split needs the shared matrix
    } else {
        n.embed = w.embedding; // the first stage's
        n.head = n.non_layer - n.embed;
    }
    // MoE: a decode step reads the share of each block's routed experts its batch goes to.
    double read = static_cast<double>(n.layer_weights);
    if (w.experts != 0) read -= static_cast<double>(w.experts) * (1.0 - detail::routed_share(m, s.batch));
    const double layers = n.layers ? static_cast<double>(n.layers) : 1.0;
    n.layer_kv_read = static_cast<double>(n.kv_total) / layers;
    n.layer_read = read + n.layer_kv_read;
    n.head_read = static_cast<double>(n.head);
    n.full_read = layers * n.layer_read + n.head_read;
    return n;
}

/// Scratch tables of the planner (the arrays of `work`, `group`, `index_map`, `layout`,
/// `planner`, `member_list`, sized for max_plan_devices) are left unset at run time: every
/// path writes a slot before it reads it, and what must start cleared is cleared for the
/// devices at hand only. A constant expression may not hold an unset value, so there they
/// start cleared.
template <class T>
constexpr void clear_if_constant_evaluated(T& t) noexcept {
    if (std::is_constant_evaluated()) t = T{};
}

/// A stage: `size` devices starting at `begin` in an ordering of device positions.
struct stage_ref {
    std::uint16_t begin;
    std::uint16_t size;
};

/// Memory one device of a stage needs for `layers` layers.
struct stage_bytes {
    std::uint64_t weights = 0, kv = 0, overhead = 0;
    constexpr std::uint64_t total() const noexcept { return sat_add(sat_add(weights, kv), overhead); }
};

constexpr double kv_share(const needs& n, std::uint32_t t) noexcept { return rank_kv_share(n.kv_heads, t); }

constexpr std::uint64_t fixed_weights(const needs& n, bool first, bool last, std::uint32_t t) noexcept {
    std::uint64_t w = 0;
    if (first && last) w = n.non_layer;
    else if (first) w = n.embed;
    else if (last) w = n.head;
    return ceil_div(w, t);
}

/// Full-attention layers a stage of `layers` layers is charged for (needs::full_every).
constexpr std::uint64_t full_layers_in(const needs& n, std::uint32_t layers) noexcept {
    const std::uint64_t most = ceil_div(layers, n.full_every);
    return most < n.full_layers ? most : n.full_layers;
}

/// KV cache bytes of `layers` layers on a device holding `share` of each layer's cache.
constexpr std::uint64_t stage_kv(const needs& n, std::uint32_t layers, double share) noexcept {
    if (n.full_every == 0 || layers >= n.layers) {
        const double frac = n.layers ? static_cast<double>(layers) / static_cast<double>(n.layers) : 1.0;
        return scaled(n.kv_total, frac * share);
    }
    const std::uint64_t full = full_layers_in(n, layers);
    return sat_add(sat_mul(full, scaled(n.kv_full_layer, share)),
                   sat_mul(layers - full, scaled(n.kv_window_layer, share)));
}

constexpr stage_bytes bytes_for(const needs& n, std::uint32_t layers, bool first, bool last,
                                std::uint32_t t) noexcept {
    stage_bytes b;
    b.weights = sat_add(sat_mul(layers, ceil_div(n.layer_weights, t)), fixed_weights(n, first, last, t));
    b.kv = stage_kv(n, layers, kv_share(n, t));
    b.overhead = sat_add(n.ov_device, last ? ceil_div(n.ov_logits, t) : 0);
    return b;
}

/// Bytes of one more layer on each device of a stage of `t` devices.
constexpr std::uint64_t per_layer(const needs& n, std::uint32_t t) noexcept {
    const std::uint64_t per_kv = n.layers ? scaled(ceil_div(n.kv_total, n.layers), kv_share(n, t)) + 1 : 0;
    return sat_add(ceil_div(n.layer_weights, t), per_kv);
}

/// What layers cost on each device of a stage of `t` devices, beyond its fixed bytes: `per`
/// bytes each, or, for a model of windowed layers (needs::full_every), bytes(k) for k of
/// them. Both are at least what bytes_for gives (one byte a layer over, for its rounding).
struct layer_cost {
    std::uint64_t per = 0;
    std::uint32_t layers = 0;
    std::uint32_t t = 1;
    const needs* windowed = nullptr; ///< the model's needs when they are windowed
    constexpr std::uint64_t bytes(std::uint32_t k) const noexcept {
        const needs& n = *windowed;
        return sat_add(sat_add(sat_mul(k, ceil_div(n.layer_weights, t)), stage_kv(n, k, kv_share(n, t))), k);
    }
};
constexpr layer_cost layer_cost_of(const needs& n, std::uint32_t t) noexcept {
    return {per_layer(n, t), n.layers, t, n.full_every != 0 ? &n : nullptr};
}

/// layers_in for a windowed model: a search, as the cost of a layer depends on how many
/// there are.
constexpr std::uint32_t windowed_layers_in(std::uint64_t room, const layer_cost& c) noexcept {
    std::uint32_t lo = 0, hi = c.layers; // bytes(lo) fits; bytes grows with k
    while (lo < hi) {
        const std::uint32_t mid = lo + (hi - lo + 1) / 2;
        if (c.bytes(mid) <= room) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/// The most layers (at most `c.layers`) that fit in `cap` bytes when `fixed` bytes are
/// needed whatever the layer count; 0 also when `cap` does not hold `fixed` (callers that
/// place a stage test that apart: see holds_either_end).
constexpr std::uint64_t layers_in(std::uint64_t cap, std::uint64_t fixed, const layer_cost& c) noexcept {
    if (cap < fixed) return 0;
    if (c.windowed) [[unlikely]]
        return windowed_layers_in(cap - fixed, c);
    if (c.per == 0) return c.layers;
    const std::uint64_t m = (cap - fixed) / c.per;
    return m > c.layers ? c.layers : m;
}

/// Whether `cap` bytes hold either end of a pipeline, given the fixed bytes of each place
/// (by first + 2 x last): the embedding, or the output head and the logits, with the
/// overhead every stage has. A device that cannot is left out of pipelines, middle stages
/// included (a middle stage needs less, but which devices end up in the middle depends on
/// their order).
constexpr bool holds_either_end(const std::array<std::uint64_t, 4>& fixed, std::uint64_t cap) noexcept {
    return cap >= fixed[1] && cap >= fixed[2];
}

/// The most layers a stage of one device holding `cap` bytes can take, with what does not
/// depend on the device worked out once.
struct one_device_layers {
    layer_cost cost{};
    std::array<std::uint64_t, 4> fixed{}; ///< by first + 2 x last
    std::uint32_t layers = 0;
    constexpr std::uint64_t operator()(std::uint64_t cap, bool first, bool last) const noexcept {
        return layers_in(cap, fixed[(first ? 1u : 0u) + (last ? 2u : 0u)], cost);
    }
    constexpr bool can_end(std::uint64_t cap) const noexcept { return holds_either_end(fixed, cap); }
};
constexpr one_device_layers one_device(const needs& n) noexcept {
    one_device_layers r;
    r.cost = layer_cost_of(n, 1);
    for (unsigned i = 0; i < 4; ++i) r.fixed[i] = bytes_for(n, 0, (i & 1u) != 0, (i & 2u) != 0, 1).total();
    r.layers = n.layers;
    return r;
}

/// The most layers a stage of `t` devices, the smallest holding `cap` bytes, can take; what
/// depends only on `t` (bytes per layer, fixed bytes of each position in the pipeline) is
/// kept for the last few degrees asked for.
struct stage_layers {
    struct entry {
        std::uint32_t t = 0; ///< 0: empty
        layer_cost cost{};
        std::array<std::uint64_t, 4> fixed{}; ///< by first + 2 x last
    };
    std::array<entry, 8> slots{};

    constexpr const entry& of(const needs& n, std::uint32_t t) noexcept {
        auto& e = slots[t % slots.size()];
        if (e.t != t) {
            e.t = t;
            e.cost = layer_cost_of(n, t);
            for (unsigned i = 0; i < 4; ++i) e.fixed[i] = bytes_for(n, 0, (i & 1u) != 0, (i & 2u) != 0, t).total();
        }
        return e;
    }
    constexpr std::uint64_t operator()(const needs& n, std::uint64_t cap, bool first, bool last,
                                       std::uint32_t t) noexcept {
        const auto& e = of(n, t);
        return layers_in(cap, e.fixed[(first ? 1u : 0u) + (last ? 2u : 0u)], e.cost);
    }
    /// holds_either_end for a stage of `t` devices.
    constexpr bool can_end(const needs& n, std::uint64_t cap, std::uint32_t t) noexcept {
        return holds_either_end(of(n, t).fixed, cap);
    }
    /// Whether one stage of `t` devices, the smallest holding `cap` bytes, holds the whole
    /// model: what `pack` answers for a single stage.
    constexpr bool holds_all(const needs& n, std::uint64_t cap, std::uint32_t t) noexcept {
        return n.layers > 0 && (*this)(n, cap, true, true, t) >= n.layers;
    }
};

struct work {
    pos_list order;                                  ///< device positions in the group, by stage
    std::array<std::uint64_t, max_plan_devices> cap; ///< usable bytes by position in the group
};

constexpr std::uint64_t stage_cap(const work& w, stage_ref s) noexcept {
    std::uint64_t c = ~std::uint64_t{0};
    for (std::uint16_t i = 0; i < s.size; ++i) {
        const auto v = w.cap[w.order[s.begin + i]];
        if (v < c) c = v;
    }
    return c;
}

/// The layers each of `k` stages, in this order, can hold (into `layers_out`; their
/// usable bytes into `caps`), summed; 0 when a stage cannot hold what its place needs
/// whatever its layers (a stage that cannot hold its embedding, head or overhead holds no
/// layout at all, not one with no layers).
constexpr std::uint64_t stage_room(const needs& n, stage_layers& fit, const work& w, const stage_ref* st,
                                   std::size_t k, std::uint32_t* layers_out, std::uint64_t* caps) noexcept {
    std::uint64_t total = 0;
    bool whole = true;
    for (std::size_t j = 0; j < k; ++j) {
        const auto cap = caps[j] = stage_cap(w, st[j]);
        const auto& e = fit.of(n, st[j].size);
        const auto fixed = e.fixed[(j == 0 ? 1u : 0u) + (j + 1 == k ? 2u : 0u)];
        if (cap < fixed) {
            whole = false;
            continue;
        }
        const auto m = layers_in(cap, fixed, e.cost);
        layers_out[j] = static_cast<std::uint32_t>(m); // at most n.layers
        total += m;
    }
    return whole ? total : 0;
}

/// Splits the layers over `k` stages in proportion to what each can hold (largest
/// remainder rounding). False when they cannot hold them all. The stages stay in their
/// order when that holds the model; otherwise the stage of most memory goes first and the
/// stage of least last (the others in their order), the order suggest_quantization
/// tests: the ends hold the embedding and the output head, whatever their layers. `rem`
/// is scratch for `k` values; `layers_out` is meaningful only when the answer is true.
constexpr bool pack(const needs& n, stage_layers& fit, const work& w, stage_ref* st, std::size_t k,
                    std::uint32_t* layers_out, std::uint64_t* rem) noexcept {
    if (k == 0 || n.layers == 0) return false;
    std::uint64_t total = stage_room(n, fit, w, st, k, layers_out, rem);
    if (total < n.layers) {
        std::size_t most = 0, least = 0; // by the usable bytes stage_room left in rem
        for (std::size_t j = 1; j < k; ++j) {
            if (rem[j] > rem[most]) most = j;
            if (rem[j] <= rem[least]) least = j;
        }
        if (most == least || (most == 0 && least + 1 == k)) return false; // the order tried
        const stage_ref first = st[most];
        for (std::size_t j = most; j > 0; --j) st[j] = st[j - 1];
        st[0] = first;
        if (least < most) ++least; // moved up one by the shift
        const stage_ref last = st[least];
        for (std::size_t j = least; j + 1 < k; ++j) st[j] = st[j + 1];
        st[k - 1] = last;
        total = stage_room(n, fit, w, st, k, layers_out, rem);
        if (total < n.layers) return false;
    }
    std::uint64_t given = 0;
    for (std::size_t j = 0; j < k; ++j) {
        const std::uint64_t x = std::uint64_t{n.layers} * layers_out[j];
        layers_out[j] = static_cast<std::uint32_t>(x / total);
        rem[j] = x % total;
        given += layers_out[j];
    }
    while (given < n.layers) { // at most k rounds; a stage with rem > 0 is below its limit
        std::size_t best = k;
        for (std::size_t j = 0; j < k; ++j)
            if (rem[j] > 0 && (best == k || rem[j] > rem[best])) best = j;
        if (best == k) break;
        ++layers_out[best];
        rem[best] = 0;
        ++given;
    }
    return given == n.layers;
}

/// Whether `t` ranks can split the attention (tensor_parallel_splits).
constexpr bool tp_splits(const needs& nd, std::size_t t) noexcept {
    return tensor_parallel_splits(nd.heads, nd.kv_heads, t);
}

/// Largest tensor-parallel degree <= n that splits the attention (tp_splits).
constexpr std::uint16_t tp_degree(const needs& nd, std::size_t n) noexcept {
    for (std::size_t t = n; t >= 2; --t)
        if (tp_splits(nd, t)) return static_cast<std::uint16_t>(t);
    return 1;
}

/// plan_link without default values, for tables that start unset.
struct link_speed {
    interconnect_kind kind;
    double gbps;
    constexpr operator plan_link() const noexcept { return {kind, gbps}; } // NOLINT
};

/// The devices of one kind that a plan may use, their fast-link islands and link speeds.
struct group {
    device_kind kind = device_kind::cpu;
    pos_list pos; ///< positions in the caller's span
    std::size_t count = 0;
    pos_list root; ///< island representative (index into pos): its smallest member
    std::array<link_speed, max_plan_devices> island_link; ///< by root
};

constexpr double pcie_gbps(const accelerator_profile& d, const plan_options& o) noexcept {
    const double b = d.pcie_bandwidth_gbps();
    return b > 0 ? b : o.unknown_pcie_gbps;
}

constexpr std::size_t find_root(const group& g, std::size_t i) noexcept {
    while (g.root[i] != i) i = g.root[i];
    return i;
}

/// The group's members sorted by accelerator_profile::index (equal indices in group
/// order), so that a link's devices are found by binary search.
struct index_map {
    pos_list member;
    std::array<std::uint32_t, max_plan_devices> index;
    std::size_t count = 0;
    bool identity = false; ///< member i has index i (no table needed)
};

constexpr index_map make_index_map(const group& g, std::span<const accelerator_profile> devs) noexcept {
    index_map m;
    clear_if_constant_evaluated(m);
    m.count = g.count;
    m.identity = true;
    for (std::size_t i = 0; i < g.count && m.identity; ++i) m.identity = devs[g.pos[i]].index == i;
    if (m.identity) return m;
    for (std::size_t i = 0; i < g.count; ++i) {
        const std::uint32_t idx = devs[g.pos[i]].index;
        std::size_t at = i;
        while (at > 0 && m.index[at - 1] > idx) {
            m.index[at] = m.index[at - 1];
            m.member[at] = m.member[at - 1];
            --at;
        }
        m.index[at] = idx;
        m.member[at] = static_cast<pos_t>(i);
    }
    return m;
}

/// The first member (in group order) whose profile has `index`; `m.count` when none.
constexpr std::size_t member_of(const index_map& m, std::uint32_t index) noexcept {
    if (m.identity) return index < m.count ? index : m.count;
    std::size_t lo = 0, hi = m.count;
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (m.index[mid] < index) lo = mid + 1;
        else hi = mid;
    }
    return lo < m.count && m.index[lo] == index ? m.member[lo] : m.count;
}

constexpr bool island_link_kind(const interconnect& l) noexcept {
    return l.scope == link_scope::intra_node && is_device_fabric(l.kind);
}

constexpr void build_islands(group& g, std::span<const accelerator_profile> devs,
                             std::span<const interconnect> links, const plan_options& o) noexcept {
    for (std::size_t i = 0; i < g.count; ++i) {
        g.root[i] = static_cast<pos_t>(i);
        g.island_link[i] = {interconnect_kind::none, 0};
    }
    bool any = false;
    for (const auto& l : links) any = any || island_link_kind(l);
    if (!any) return;
    const index_map im = make_index_map(g, devs);
    for (const auto& l : links) {
        if (!island_link_kind(l)) continue;
        std::size_t first = g.count;
        for (auto idx : l.devices) {
            const auto i = member_of(im, idx);
            if (i == g.count) continue;
            if (first == g.count) {
                first = i;
                continue;
            }
            const auto a = find_root(g, first), b = find_root(g, i);
            if (a != b) g.root[a > b ? a : b] = static_cast<pos_t>(a < b ? a : b);
        }
    }
    for (std::size_t i = 0; i < g.count; ++i) g.root[i] = static_cast<pos_t>(find_root(g, i));
    // One-direction speed of each island: the slowest fast link touching it (vendors quote
    // both directions summed); unknown speeds fall back to the catalogue's link, then PCIe.
    // Links are visited in order for every island, so the first of equally slow links wins.
    for (const auto& l : links) {
        if (!island_link_kind(l)) continue;
        for (auto idx : l.devices) {
            const auto i = member_of(im, idx);
            if (i == g.count) continue;
            const auto r = g.root[i];
            const auto& d = devs[g.pos[r]];
            double bw = l.bandwidth_gbps ? *l.bandwidth_gbps / 2 : 0;
            if (!(bw > 0) && d.spec && d.spec->link_bandwidth_gbps > 0) bw = d.spec->link_bandwidth_gbps / 2;
            if (!(bw > 0)) bw = pcie_gbps(d, o);
            auto& best = g.island_link[r];
            if (best.kind == interconnect_kind::none || bw < best.gbps) best = {l.kind, bw};
        }
    }
}

/// One replica found by `search`: the first `devices` entries of `dev` and the first
/// `stages` of `stage` and `layers` are set.
struct layout {
    bool found = false;
    shard_strategy strategy = shard_strategy::none;
    std::size_t stages = 0;
    std::size_t devices = 0;
    pos_list dev;                                  ///< indices into group::pos, by stage
    std::array<stage_ref, max_plan_devices> stage; ///< into dev
    std::array<std::uint32_t, max_plan_devices> layers;
};

constexpr double device_bw(const accelerator_profile& d) noexcept { return d.memory_bandwidth_gbps.value_or(0); }

/// The link a tensor-parallel group of `t` devices like `d` uses of its island's link `lk`
/// (one direction):
/// - on a full mesh (device_spec::link_peers), the t - 1 peer links inside the group, each
///   an equal share of the device's fabric;
/// - on a torus (device_spec::link_torus_dims), groups of fewer than 16 chips (the
///   shortest axis with a wraparound link on a 2D TPU torus; a 3D one has them where
///   each axis is a multiple of 4 long, so 64 chips) form a block of 2, 2 x 2, 2 x 4 or
///   2 x 2 x 2 chips: per axis the block spans, one link's single direction (a ring
///   without wraparound runs out along one direction of each link and back along the
///   other), each link 1 / (2 x dims) of the chip's fabric;
/// - behind a switch, or where the topology is unknown, all of it.
constexpr plan_link group_link(plan_link lk, const accelerator_profile& d, std::size_t t) noexcept {
    if (!d.spec || d.spec->link != lk.kind || t < 2) return lk;
    if (const std::size_t peers = d.spec->link_peers; peers != 0) {
        if (t - 1 < peers) lk.gbps = lk.gbps * static_cast<double>(t - 1) / static_cast<double>(peers);
    } else if (const std::size_t dims = d.spec->link_torus_dims; dims != 0 && t < 16) {
        std::size_t axes = 0;
        for (std::size_t n = 1; n < t && axes < dims; n *= 2) ++axes;
        lk.gbps = lk.gbps * static_cast<double>(axes) / static_cast<double>(2 * dims);
    }
    return lk;
}

/// What `search` needs across the replicas of one plan. The devices not yet used form
/// units: the available devices of each island, largest first, cut into tensor-parallel
/// groups (a device without a fast link is a unit of one). A replica uses devices of few
/// islands, so each island keeps its units and its best candidates, and only the islands
/// a replica took devices from are worked out again.
struct planner {
    work w;             ///< order: island s's unused devices, largest first, from slot begin[s]
    pos_list sorted;    ///< island s's devices, largest first (stable), from slot begin[s]
    pos_list island_of; ///< island number by group position (islands numbered by root)
    std::size_t islands = 0;
    /// The islands that had unused devices when last worked out, in order: a used device
    /// stays used, so an island found empty is not visited again.
    pos_list live;
    std::size_t live_count = 0;
    /// Most devices in one tensor-parallel unit: lowered when nothing fits (see plan_group).
    std::size_t unit_cap = max_plan_devices;
    std::array<bool, max_plan_devices> used;  ///< by group position (cleared by `start`)
    std::array<bool, max_plan_devices> alone; ///< by group position: holds the whole model
    // By island number.
    pos_list begin, size, left, units; ///< slots, devices, unused devices, units
    pos_list able;                     ///< units that can end a pipeline (stage_layers::can_end)
    std::array<bool, max_plan_devices> stale;
    std::array<double, max_plan_devices> single_bw; ///< the fastest unused device that holds it all
    pos_list single_at;                             ///< its slot; max_plan_devices: none
    pos_list tp_t;    ///< smallest tensor-parallel degree of a unit that holds it all (0: none)
    pos_list tp_unit; ///< the first unit with that degree (its first slot)
    // By slot: island s's units from begin[s], and what each holds as a middle stage plus
    // one; 0 for a unit that cannot end a pipeline, which is never picked for one.
    std::array<stage_ref, max_plan_devices> unit;
    std::array<std::uint64_t, max_plan_devices> room;
    // Scratch of one search.
    pos_list all;  ///< the slots of every unit, in unit order
    pos_list rank; ///< indices into all, most room first (the first of equals first)
    /// By index into all: the unit's room (at most the model's layers + 1), -1 once ranked.
    std::array<std::int64_t, max_plan_devices> unranked_room;
    std::array<bool, max_plan_devices> pick; ///< by unit (cleared by `start`)
    std::array<stage_ref, max_plan_devices> st;
    std::array<std::uint32_t, max_plan_devices> tmp;
    std::array<std::uint64_t, max_plan_devices> rem;
    stage_layers fit{};
    layout best;
};

/// Lowers P.unit_cap below the widest unit of any island and marks every island to be
/// worked out again; false when every unit is a single device already.
constexpr bool narrow_units(planner& P) noexcept {
    std::size_t widest = 0;
    for (std::size_t i = 0; i < P.islands; ++i)
        if (P.units[i] > 0 && P.unit[P.begin[i]].size > widest) widest = P.unit[P.begin[i]].size;
    if (widest <= 1) return false;
    P.unit_cap = widest - 1;
    for (std::size_t i = 0; i < P.islands; ++i) P.stale[i] = true;
    return true;
}

/// The usable bytes of a group's devices together.
constexpr std::uint64_t group_usable(const group& g, std::span<const accelerator_profile> devs,
                                     const plan_options& o) noexcept {
    usable_scan usable_of_scan(o);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < g.count; ++i) sum = sat_add(sum, usable_of_scan(devs[g.pos[i]]));
    return sum;
}

/// Numbers the islands by their root, files each island's devices largest first.
constexpr void start(planner& P, const group& g, const needs& n) noexcept {
    for (std::size_t i = 0; i < g.count; ++i) { // islands and units are at most g.count
        P.used[i] = P.pick[i] = false;
        P.size[i] = P.left[i] = 0;
    }
    for (std::size_t i = 0; i < g.count; ++i) {
        if (g.root[i] == i) {
            P.island_of[i] = static_cast<pos_t>(P.islands++);
        } else {
            P.island_of[i] = P.island_of[g.root[i]]; // the root is the smallest member
        }
        ++P.size[P.island_of[i]];
        P.alone[i] = P.fit.holds_all(n, P.w.cap[i], 1);
    }
    std::size_t at = 0;
    for (std::size_t s = 0; s < P.islands; ++s) {
        P.begin[s] = static_cast<pos_t>(at);
        at += P.size[s];
        P.stale[s] = true;
        P.live[s] = static_cast<pos_t>(s);
    }
    P.live_count = P.islands;
    for (std::size_t i = 0; i < g.count; ++i) {
        const auto s = P.island_of[i];
        const std::size_t first = P.begin[s];
        std::size_t j = first + P.left[s]++;
        // insertion by usable bytes, largest first (stable)
        while (j > first && P.w.cap[P.sorted[j - 1]] < P.w.cap[i]) {
            P.sorted[j] = P.sorted[j - 1];
            --j;
        }
        P.sorted[j] = static_cast<pos_t>(i);
    }
}

/// Works island `s` out again from its unused devices.
constexpr void refresh(planner& P, const group& g, std::span<const accelerator_profile> devs, const needs& n,
                       std::size_t s) noexcept {
    const std::size_t first = P.begin[s];
    std::size_t end = first;
    for (std::size_t j = first; j < first + P.size[s]; ++j)
        if (!P.used[P.sorted[j]]) P.w.order[end++] = P.sorted[j];
    P.left[s] = static_cast<pos_t>(end - first);
    std::size_t nu = 0, able = 0;
    for (std::size_t at = first; at < end;) {
        const auto t = tp_degree(n, end - at < P.unit_cap ? end - at : P.unit_cap);
        const stage_ref u{static_cast<std::uint16_t>(at), t};
        const auto cap = stage_cap(P.w, u);
        P.unit[first + nu] = u;
        P.room[first + nu] = P.fit.can_end(n, cap, t) ? P.fit(n, cap, false, false, t) + 1 : 0;
        able += P.room[first + nu] != 0;
        ++nu;
        at += t;
    }
    P.units[s] = static_cast<pos_t>(nu);
    P.able[s] = static_cast<pos_t>(able);
    // The fastest device that holds the model alone (the first of equals).
    double best_bw = -1;
    P.single_at[s] = static_cast<pos_t>(max_plan_devices);
    for (std::size_t j = first; j < end; ++j) {
        if (!P.alone[P.w.order[j]]) continue;
        const double bw = device_bw(devs[g.pos[P.w.order[j]]]);
        if (bw > best_bw) {
            best_bw = bw;
            P.single_at[s] = static_cast<pos_t>(j);
        }
    }
    P.single_bw[s] = best_bw;
    // The smallest tensor-parallel degree inside one unit that holds the model.
    P.tp_t[s] = 0;
    for (std::size_t k = first; k < first + nu; ++k) {
        const auto un = P.unit[k];
        for (std::uint16_t t = 2; t <= un.size && (P.tp_t[s] == 0 || t < P.tp_t[s]); ++t) {
            if (!tp_splits(n, t)) continue;
            if (!P.fit.holds_all(n, stage_cap(P.w, {un.begin, t}), t)) continue;
            P.tp_t[s] = t;
            P.tp_unit[s] = un.begin;
            break;
        }
    }
    P.stale[s] = false;
}

constexpr void set_tensor(layout& out, const work& w, std::uint16_t begin, std::uint16_t t, const needs& n) noexcept {
    out.found = true;
    out.strategy = shard_strategy::tensor_parallel;
    out.stages = 1;
    out.devices = t;
    for (std::uint16_t i = 0; i < t; ++i) out.dev[i] = w.order[begin + i];
    out.stage[0] = {0, t};
    out.layers[0] = n.layers;
}

/// The smallest layout that fits among the devices not yet used (or, with `spread`, the
/// one using all of them), in `P.best`. Preference at equal device count: one device,
/// then tensor parallel, then pipeline.
constexpr void search(planner& P, const group& g, std::span<const accelerator_profile> devs, const needs& n,
                      const plan_options& o) noexcept {
    layout& best = P.best;
    best.found = false;
    // One pass over the islands works out the stale ones and finds (a) the fastest single
    // device that holds everything (the first of equals) and (b) the smallest
    // tensor-parallel degree inside one unit that fits (the first of equals); spread
    // looks for neither unless one device is left.
    std::size_t devices_left = 0, unit_count = 0, able_count = 0;
    std::size_t one_island = P.islands, tp_island = P.islands;
    double single_bw = -1;
    std::size_t kept = 0;
    for (std::size_t x = 0; x < P.live_count; ++x) {
        const std::size_t s = P.live[x];
        if (P.stale[s]) refresh(P, g, devs, n, s);
        if (P.left[s] == 0) continue; // no units, nothing to offer
        P.live[kept++] = static_cast<pos_t>(s);
        devices_left += P.left[s];
        unit_count += P.units[s];
        able_count += P.able[s];
        if (P.single_at[s] != max_plan_devices && P.single_bw[s] > single_bw) {
            single_bw = P.single_bw[s];
            one_island = s;
        }
        if (P.tp_t[s] != 0 && (tp_island == P.islands || P.tp_t[s] < P.tp_t[tp_island])) tp_island = s;
    }
    P.live_count = kept;
    if (devices_left == 0) return;

    std::size_t best_devices = ~std::size_t{0};
    // Spread takes one device when no pipeline can be built.
    if (one_island != P.islands && (!o.spread || devices_left == 1 || able_count < 2)) {
        best.found = true;
        best.strategy = shard_strategy::single_device;
        best.stages = best.devices = 1;
        best.dev[0] = P.w.order[P.single_at[one_island]];
        best.stage[0] = {0, 1};
        best.layers[0] = n.layers;
        best_devices = 1;
    }
    if (!o.spread) {
        // A unit of one device holds no tensor-parallel group, so (a) beats (b) outright.
        if (best_devices != 1 && tp_island != P.islands) {
            best_devices = P.tp_t[tp_island];
            set_tensor(best, P.w, P.tp_unit[tp_island], P.tp_t[tp_island], n);
        }
    } else if (able_count == 1) { // the one unit that can take part, whole
        for (std::size_t x = 0; x < P.live_count; ++x)
            for (std::size_t k = P.begin[P.live[x]]; k < P.begin[P.live[x]] + P.units[P.live[x]]; ++k) {
                const auto un = P.unit[k];
                if (P.room[k] != 0 && un.size > 1 && P.fit.holds_all(n, stage_cap(P.w, un), un.size)) {
                    set_tensor(best, P.w, un.begin, un.size, n);
                    return;
                }
            }
    }
    // (c) pipeline over units, taking the units that hold most first. k units hold k
    // devices or more: nothing to find when that is no smaller than what was found. Spread
    // takes every unit but one stage per layer at most: a stage without layers would only
    // add a hop. Units that cannot end a pipeline (room 0) rank last and are never taken.
    const std::size_t k_first = o.spread ? (able_count < n.layers ? able_count : (n.layers > 2 ? n.layers : 2)) : 2;
    if (able_count < 2 || k_first >= best_devices) return;
    std::size_t nu = 0;
    bool in_order = true; // no unit holds more than the one before it
    for (std::size_t x = 0; x < P.live_count; ++x) { // an island left out has no units
        const std::size_t s = P.live[x];
        for (std::size_t k = P.begin[s]; k < P.begin[s] + P.units[s]; ++k) {
            if (nu > 0 && P.room[k] > P.room[P.all[nu - 1]]) in_order = false;
            P.unranked_room[nu] = static_cast<std::int64_t>(P.room[k]);
            P.all[nu++] = static_cast<pos_t>(k);
        }
    }
    // The units by room, most first, the first of equals first, ranked only as far as the
    // search reads: most searches stop after a few units. Units in that order already (a
    // cluster of one card model) are their own ranking. Otherwise the first few are picked
    // one by one (a pass over the units each); the rest, if wanted, are inserted in one
    // pass, after the picked ones, all of which have at least as much room (and, where
    // equal, come first).
    std::size_t ranked = 0;
    if (in_order) {
        for (; ranked < nu; ++ranked) P.rank[ranked] = static_cast<pos_t>(ranked);
    }
    const auto rank_through = [&](std::size_t count) {
        constexpr std::size_t picked_one_by_one = 8;
        while (ranked < count && ranked < picked_one_by_one) {
            std::size_t top = 0;
            std::int64_t most = -1;
            for (std::size_t i = 0; i < nu; ++i)
                if (P.unranked_room[i] > most) {
                    most = P.unranked_room[i];
                    top = i;
                }
            P.unranked_room[top] = -1;
            P.rank[ranked++] = static_cast<pos_t>(top);
        }
        if (ranked >= count) return;
        const std::size_t first = ranked;
        for (std::size_t i = 0; i < nu; ++i) {
            if (P.unranked_room[i] < 0) continue;
            std::size_t at = ranked++;
            while (at > first && P.room[P.all[P.rank[at - 1]]] < P.room[P.all[i]]) {
                P.rank[at] = P.rank[at - 1];
                --at;
            }
            P.rank[at] = static_cast<pos_t>(i);
        }
    };
    const auto unit_at = [&](std::size_t i) { return P.unit[P.all[i]]; };
    std::size_t devices = 0;
    rank_through(k_first - 1);
    for (std::size_t k = 0; k < k_first - 1; ++k) devices += unit_at(P.rank[k]).size;
    for (std::size_t k = k_first; k <= able_count; ++k) {
        rank_through(k);
        devices += unit_at(P.rank[k - 1]).size;
        if (devices >= best_devices) break;
        // the chosen units, in device order (unit order follows the islands)
        for (std::size_t i = 0; i < k; ++i) P.pick[P.rank[i]] = true;
        std::size_t ns = 0;
        for (std::size_t i = 0; i < unit_count; ++i)
            if (P.pick[i]) {
                P.st[ns++] = unit_at(i);
                P.pick[i] = false;
            }
        if (!pack(n, P.fit, P.w, P.st.data(), ns, P.tmp.data(), P.rem.data())) continue;
        best.found = true;
        bool tensor = false;
        std::size_t at = 0;
        for (std::size_t j = 0; j < ns; ++j) {
            best.stage[j] = {static_cast<std::uint16_t>(at), P.st[j].size};
            best.layers[j] = P.tmp[j];
            for (std::uint16_t i = 0; i < P.st[j].size; ++i) best.dev[at++] = P.w.order[P.st[j].begin + i];
            if (P.st[j].size > 1) tensor = true;
        }
        best.stages = ns;
        best.devices = at;
        best.strategy = tensor ? shard_strategy::tensor_pipeline : shard_strategy::pipeline_parallel;
        break;
    }
}

/// Seconds per token a device needs for the whole model, and for prefill.
struct device_speed {
    double decode_s = 0;
    double prefill_s = 0;
};
constexpr device_speed speed_of(const accelerator_profile& d, const model_spec& m, quant_format q,
                                const inference_shape& s, const plan_options& o) noexcept {
    const auto t = estimate_throughput(d, m, q, s, o.throughput);
    device_speed r;
    r.decode_s = t.decode_tokens_per_second > 0 ? 1.0 / t.decode_tokens_per_second : 0;
    r.prefill_s = t.prefill_tokens_per_second > 0 ? 1.0 / t.prefill_tokens_per_second : 0;
    return r;
}

constexpr bool same_bits(double a, double b) noexcept {
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

/// Every peak rate of `p` and `q` equal, bit for bit.
constexpr bool same_peaks(const peak_throughput& p, const peak_throughput& q) noexcept {
    return same_bits(p.fp64, q.fp64) && same_bits(p.fp32, q.fp32) && same_bits(p.tf32, q.tf32) &&
           same_bits(p.bf16, q.bf16) && same_bits(p.fp16, q.fp16) && same_bits(p.fp8, q.fp8) &&
           same_bits(p.int8, q.int8) && same_bits(p.fp6, q.fp6) && same_bits(p.fp4, q.fp4) &&
           same_bits(p.int4, q.int4);
}

/// Whether estimate_throughput reads the same values from both profiles (bandwidth, peaks,
/// maker, name, catalogue row), so that their speeds are equal.
constexpr bool same_speed_inputs(const accelerator_profile& a, const accelerator_profile& b) noexcept {
    if (&a == &b) return true;
    return same_bits(device_bw(a), device_bw(b)) && a.maker == b.maker && a.spec == b.spec &&
           same_peaks(a.peak, b.peak) && a.name.view() == b.name.view();
}

/// speed_of for the devices of one plan: a cluster holds few distinct device types.
struct speed_cache {
    static constexpr std::size_t slots = 8;
    std::array<const accelerator_profile*, slots> dev{};
    std::array<device_speed, slots> speed{};
    std::size_t count = 0;
    std::size_t next = 0;
    std::size_t last = 0; ///< the slot that answered last

    constexpr device_speed get(const accelerator_profile& d, const model_spec& m, quant_format q,
                               const inference_shape& s, const plan_options& o) noexcept {
        if (count > 0 && same_speed_inputs(*dev[last], d)) return speed[last];
        for (std::size_t i = 0; i < count; ++i)
            if (same_speed_inputs(*dev[i], d)) {
                last = i;
                return speed[i];
            }
        const auto r = speed_of(d, m, q, s, o);
        last = count < slots ? count++ : next++ % slots;
        dev[last] = &d;
        speed[last] = r;
        return r;
    }
};

/// The link between two stages: their island's fast link when both sit in one island;
/// otherwise an inter-node network that lists one of their devices, capped by the devices'
/// PCIe; otherwise PCIe. A NIC port as detected lists no device: it leads out of the
/// machine and carries no hop between two of its devices.
constexpr plan_link hop_link(const group& g, std::span<const accelerator_profile> devs,
                             std::span<const interconnect> links, std::size_t a, std::size_t b,
                             const plan_options& o) noexcept {
    // Inside an island the hop crosses one device-to-device link: one peer's share on a
    // full mesh, one link's direction on a torus.
    if (g.root[a] == g.root[b] && g.island_link[g.root[a]].kind != interconnect_kind::none)
        return group_link(g.island_link[g.root[a]], devs[g.pos[a]], 2);
    const auto& da = devs[g.pos[a]];
    const auto& db = devs[g.pos[b]];
    const double pcie = pcie_gbps(da, o) < pcie_gbps(db, o) ? pcie_gbps(da, o) : pcie_gbps(db, o);
    plan_link best{};
    for (const auto& l : links) {
        if (l.scope != link_scope::inter_node) continue;
        bool applies = false;
        for (auto idx : l.devices)
            if (idx == da.index || idx == db.index) {
                applies = true;
                break;
            }
        if (!applies) continue;
        double bw = l.bandwidth_gbps ? *l.bandwidth_gbps / 2 : pcie;
        if (bw > pcie) bw = pcie;
        if (best.kind == interconnect_kind::none || bw > best.gbps) best = {l.kind, bw};
    }
    if (best.kind != interconnect_kind::none) return best;
    return {interconnect_kind::pcie, pcie};
}

/// Plans one kind of device into `p` (a fresh plan but for quant, memory, cpu_excluded and
/// truncated). `g.pos` holds the candidates.
constexpr void plan_group(shard_plan& p, group& g, std::span<const accelerator_profile> devs,
                          std::span<const interconnect> links, const model_spec& m, quant_format q,
                          const inference_shape& s, const needs& n, const plan_options& o) noexcept {
    p.quant = q;
    p.kind = g.kind;
    p.memory = n.memory;
    p.candidate_devices = static_cast<std::uint32_t>(g.count);
    planner P;
    clear_if_constant_evaluated(P);
    usable_scan usable_of_scan(o);
    for (std::size_t i = 0; i < g.count; ++i) {
        const auto c = usable_of_scan(devs[g.pos[i]]);
        P.w.cap[i] = c;
        p.usable_bytes = sat_add(p.usable_bytes, c);
        if (c > p.largest_device_bytes) p.largest_device_bytes = c;
    }
    build_islands(g, devs, links, o);
    start(P, g, n);
    speed_cache speeds;
    // What the last stage seen in each position holds and reads (replicas repeat their
    // stages, so these and the link terms below are worked out again only when they differ
    // from the last replica's: the divisions dominate a replica's cost).
    struct stage_memo {
        std::uint32_t layers = 0, t = 0; ///< t == 0: empty
        stage_bytes bytes{};
        double frac = 0;      ///< the stage's share of the bytes read per token
        double rank_frac = 0; ///< one rank's
    };
    std::array<stage_memo, 4> memo{};
    struct tensor_memo {
        double bw = 0;
        std::uint32_t layers = 0, t = 0; ///< t == 0: empty
        double decode = 0, prefill = 0;  ///< seconds the stage's all-reduces add
    } tm;
    struct hop_memo {
        double gbps = 0;
        bool set = false;
        double decode = 0, prefill = 0; ///< seconds the hop adds
    } hm;
    const double batch = s.batch ? static_cast<double>(s.batch) : 1.0;
    const double act = static_cast<double>(n.hidden) * o.activation_bytes * batch;
    while (true) {
        search(P, g, devs, n, o);
        const layout& L = P.best;
        if (!L.found) {
            // A tensor-parallel group holds more than its share of what does not divide
            // (KV heads fewer than its ranks, each rank's rounded-up part), so a narrower
            // group, down to a pipeline over single devices, can fit where the island's
            // widest does not: a fast link must never make a model stop fitting. Further
            // replicas only repeat a layout that fits, so this is for the first one.
            // Narrower units cannot help where the devices together hold less than the
            // model needs on one device.
            if (p.replicas == 0 && p.usable_bytes >= n.memory.total_bytes() && narrow_units(P)) continue;
            break;
        }
        const auto replica = static_cast<std::uint16_t>(p.replicas);
        double compute = 0, tensor = 0, hops = 0, prefill = 0, prefill_slowest = 0;
        // A device whose rate is unknown (no bandwidth, no peak) leaves the plan's unknown:
        // the links' times alone are no rate.
        bool decode_unknown = false, prefill_unknown = false;
        plan_link tl{}, pl{};
        std::uint32_t first = 0;
        for (std::size_t j = 0; j < L.stages; ++j) {
            const auto st = L.stage[j];
            const bool is_first = j == 0, is_last = j + 1 == L.stages;
            auto& mb = memo[(is_first ? 1u : 0u) + (is_last ? 2u : 0u)];
            if (mb.t != st.size || mb.layers != L.layers[j]) {
                mb.layers = L.layers[j];
                mb.t = st.size;
                mb.bytes = bytes_for(n, L.layers[j], is_first, is_last, st.size);
                // The stage's share of the bytes read per token, and one rank's: the weights
                // divide among the ranks, the KV cache only as far as its heads do.
                const double kv_frac = n.full_read > 0 ? L.layers[j] * n.layer_kv_read / n.full_read : 0;
                mb.frac = n.full_read > 0
                              ? (L.layers[j] * n.layer_read + (is_last ? n.head_read : 0)) / n.full_read
                              : 0;
                mb.rank_frac = (mb.frac - kv_frac) / st.size + kv_frac * kv_share(n, st.size);
            }
            const auto b = mb.bytes;
            double stage_s = 0, stage_p = 0;
            device_speed last{};
            double dec = 0, pre = 0; // of a device as fast as `last`
            for (std::uint16_t i = 0; i < st.size; ++i) {
                const std::size_t gi = L.dev[st.begin + i];
                const auto& d = devs[g.pos[gi]];
                const auto sp = speeds.get(d, m, q, s, o);
                if (i == 0 || !same_bits(sp.decode_s, last.decode_s) || !same_bits(sp.prefill_s, last.prefill_s)) {
                    last = sp;
                    // The per-layer fixed cost is paid by every device for each of its
                    // layers; the rest (bytes, or compute) divides with the device's share.
                    const double fixed = o.throughput.decode_seconds_per_layer * n.layers;
                    const double variable = sp.decode_s > fixed ? sp.decode_s - fixed : 0;
                    dec = variable * mb.rank_frac +
                          (sp.decode_s > 0 ? o.throughput.decode_seconds_per_layer * L.layers[j] : 0);
                    pre = sp.prefill_s * mb.frac / st.size;
                }
                decode_unknown = decode_unknown || !(sp.decode_s > 0);
                prefill_unknown = prefill_unknown || !(sp.prefill_s > 0);
                if (dec > stage_s) stage_s = dec;
                if (pre > stage_p) stage_p = pre;
                if (!p.devices.full()) {
                    device_shard& ds = p.devices.emplace_back();
                    ds.device = g.pos[gi];
                    ds.index = d.index;
                    ds.replica = replica;
                    ds.stage = static_cast<std::uint16_t>(j);
                    ds.tensor_rank = i;
                    ds.tensor_size = st.size;
                    ds.first_layer = first;
                    ds.last_layer = first + L.layers[j];
                    ds.embeddings = is_first;
                    ds.output_head = is_last;
                    ds.weights_bytes = b.weights;
                    ds.kv_cache_bytes = b.kv;
                    ds.overhead_bytes = b.overhead;
                    ds.usable_bytes = P.w.cap[gi];
                    ds.fits = ds.total_bytes() <= ds.usable_bytes;
                }
                P.used[gi] = true;
                P.stale[P.island_of[gi]] = true;
            }
            compute += stage_s;
            if (st.size > 1) {
                const auto lk = group_link(g.island_link[g.root[L.dev[st.begin]]], devs[g.pos[L.dev[st.begin]]],
                                           st.size);
                const double bw = (lk.gbps > 0 ? lk.gbps : o.unknown_pcie_gbps) * 1e9;
                if (tm.t != st.size || tm.layers != L.layers[j] || !same_bits(tm.bw, bw)) {
                    const double t = st.size;
                    const double bytes_term = 2.0 * (t - 1) / t * act / bw;
                    tm = {bw, L.layers[j], st.size, L.layers[j] * 2.0 * (bytes_term + o.tensor_allreduce_latency_s),
                          L.layers[j] * 2.0 * bytes_term / batch};
                }
                tensor += tm.decode;
                stage_p += tm.prefill;
                if (tl.kind == interconnect_kind::none || lk.gbps < tl.gbps) tl = lk;
            }
            if (!is_last) {
                const auto lk = hop_link(g, devs, links, L.dev[st.begin], L.dev[L.stage[j + 1].begin], o);
                if (!hm.set || !same_bits(hm.gbps, lk.gbps))
                    hm = {lk.gbps, true, act / (lk.gbps * 1e9) + o.pipeline_hop_latency_s, act / (lk.gbps * 1e9) / batch};
                hops += hm.decode;
                stage_p += hm.prefill;
                if (pl.kind == interconnect_kind::none || lk.gbps < pl.gbps) pl = lk;
            }
            prefill += stage_p;
            if (stage_p > prefill_slowest) prefill_slowest = stage_p;
            first += L.layers[j];
        }
        // A prompt longer than a micro-batch keeps several stages busy at once.
        prefill = pipelined_prefill_seconds(prefill, prefill_slowest, prompt_tokens(s), o.throughput);
        // estimate_throughput's rates are per sequence: one decode step of the whole
        // batch takes 1 / rate, and the step's messages carry every sequence.
        const double step = compute + tensor + hops;
        const double tps = compute > 0 && !decode_unknown ? 1.0 / step : 0;
        if (p.replicas == 0) {
            p.strategy = L.strategy;
            p.stages = static_cast<std::uint32_t>(L.stages);
            for (std::size_t j = 0; j < L.stages; ++j)
                if (L.stage[j].size > p.tensor_parallel) p.tensor_parallel = L.stage[j].size;
            p.tensor_link = tl;
            p.pipeline_link = pl;
            p.decode_tokens_per_second = tps;
            p.prefill_tokens_per_second = prefill > 0 && !prefill_unknown ? 1.0 / prefill : 0;
            p.decode_compute_seconds = compute;
            p.decode_tensor_seconds = tensor;
            p.decode_pipeline_seconds = hops;
        }
        p.aggregate_decode_tokens_per_second += tps * batch;
        ++p.replicas;
        if (!o.data_parallel || o.spread) break;
    }
    p.fits = p.replicas > 0;
    p.outcome = p.fits ? plan_outcome::fits : plan_outcome::too_large;
}

/// Whether a device may take part at all (format aside).
constexpr bool usable_device(const accelerator_profile& d, const plan_options& o) noexcept {
    if (!d.available || d.software) return false;
    if (d.is_cpu() && !o.allow_cpu) return false;
    return true;
}

constexpr bool pooled_memory(const accelerator_profile& d) noexcept { return d.unified_memory || d.is_cpu(); }
constexpr std::uint32_t host_of(const plan_options& o, std::size_t position) noexcept {
    return position < o.hosts.size() ? o.hosts[position] : 0;
}
/// The memory pool a pooled device (pooled_memory) draws from: its host's, and on a host
/// of several, the NUMA node's it is on where it knows one (each of a node's four MI300A
/// APUs has its socket's HBM, on a node of its own; an Apple GPU and its Neural Engine,
/// which know none, share theirs).
constexpr std::uint64_t pool_of(std::span<const accelerator_profile> devs, const plan_options& o,
                                std::size_t position) noexcept {
    const auto& numa = devs[position].numa_node;
    const std::uint64_t node = numa && *numa >= 0 ? static_cast<std::uint64_t>(*numa) + 1 : 0;
    return std::uint64_t{host_of(o, position)} << 32 | node;
}

/// Groups the devices of one kind able to run `q` (`native_only`: natively), with shared
/// memory pools counted once: of the unified-memory devices of one pool (pool_of) only the
/// largest is kept, as accelerator_registry::total_memory counts them.
constexpr group group_of(std::span<const accelerator_profile> devs, device_kind kind, quant_format q,
                         bool native_only, const plan_options& o) noexcept {
    group g;
    clear_if_constant_evaluated(g);
    g.kind = kind;
    const support_test support(q);
    for (std::size_t i = 0; i < devs.size() && i < max_plan_devices; ++i) {
        const auto& d = devs[i];
        if (d.kind != kind || !usable_device(d, o) || d.memory_bytes.value_or(0) == 0) continue;
        const auto sup = support(d);
        if (sup == format_support::none || (native_only && sup != format_support::native)) continue;
        if (pooled_memory(d)) {
            // This pool's device already kept, if any (a scan only where pools exist).
            const auto pool = pool_of(devs, o, i);
            std::size_t at = 0;
            while (at < g.count && !(pooled_memory(devs[g.pos[at]]) && pool_of(devs, o, g.pos[at]) == pool)) ++at;
            if (at < g.count) {
                if (devs[g.pos[at]].memory_bytes.value_or(0) < d.memory_bytes.value_or(0))
                    g.pos[at] = static_cast<pos_t>(i);
                continue;
            }
        }
        g.pos[g.count++] = static_cast<pos_t>(i);
    }
    return g;
}

/// A set of device kinds (any value of device_kind's underlying type). A flag a kind:
/// setting one costs a store, which the scans over every device do.
struct kind_set {
    std::array<bool, 256> flags{};
    constexpr bool operator[](device_kind k) const noexcept { return flags[static_cast<std::uint8_t>(k)]; }
    constexpr void insert(device_kind k) noexcept { flags[static_cast<std::uint8_t>(k)] = true; }
};

/// Distinct kinds among the devices, in order of appearance.
struct kind_list {
    std::array<device_kind, 256> kinds; ///< the first `count` (a kind of each value at most)
    std::size_t count = 0;
    bool cpu_excluded = false;
    bool any_memory = false;
    kind_set seen{};
    /// A device of the kind (any in the span) has a known memory bandwidth.
    kind_set estimable{};
};
/// Whether support_test answers alike for `a` and `b` (whose kinds are equal) for every
/// format: the same peak rates, bit for bit, from equally unknown sources.
constexpr bool same_support(const accelerator_profile& a, const accelerator_profile& b) noexcept {
    return (a.peak_from == origin::none) == (b.peak_from == origin::none) && same_peaks(a.peak, b.peak);
}

/// What suggest_quantization reads of the devices that may take part (usable, with known
/// memory, among the first max_plan_devices), gathered once. Neighbours alike in all of it
/// (kind, usable bytes, same_support; no shared pool) form one run, so that a scan
/// per format visits each run once: a cluster is mostly runs of one model.
struct member_list {
    std::array<std::uint64_t, max_plan_devices> usable; ///< usable(d, options) of each
    pos_list pos;                                       ///< the first one's position in the span
    pos_list size;                                      ///< devices in the run
    std::array<device_kind, max_plan_devices> kind;
    std::array<bool, max_plan_devices> pooled; ///< unified memory or a CPU (a run of one): counted once a host
    std::size_t count = 0;                     ///< runs
};

/// Every format, most bits per weight first, table order among equals (a stable sort).
inline constexpr auto formats_by_bits = [] {
    std::array<quant_format, quant_format_count> out{};
    std::size_t n = 0;
    for (const auto& row : quant_table) {
        std::size_t at = n++;
        while (at > 0 && bits_per_weight(out[at - 1]) < row.bits_per_weight) {
            out[at] = out[at - 1];
            --at;
        }
        out[at] = row.id;
    }
    return out;
}();

/// `members`: filled with the devices that may take part, when given.
constexpr kind_list kinds_of(std::span<const accelerator_profile> devs, const plan_options& o,
                             member_list* members = nullptr) noexcept {
    kind_list k;
    clear_if_constant_evaluated(k);
    usable_scan usable_of_scan(o);
    for (std::size_t i = 0; i < devs.size(); ++i) {
        const auto& d = devs[i];
        if (d.memory_bandwidth_gbps && *d.memory_bandwidth_gbps > 0) k.estimable.insert(d.kind);
        if (i >= max_plan_devices) continue;
        if (d.is_cpu() && d.available && !o.allow_cpu) k.cpu_excluded = true;
        if (!usable_device(d, o) || d.memory_bytes.value_or(0) == 0) continue;
        k.any_memory = true;
        if (!k.seen[d.kind]) {
            k.seen.insert(d.kind);
            k.kinds[k.count++] = d.kind;
        }
        if (!members) continue;
        auto& l = *members;
        const std::uint64_t cap = usable_of_scan(d);
        const bool pooled = pooled_memory(d);
        if (const std::size_t r = l.count - 1; l.count > 0 && !pooled && !l.pooled[r] && l.kind[r] == d.kind &&
                                               l.usable[r] == cap && same_support(devs[l.pos[r]], d)) {
            ++l.size[r];
            continue;
        }
        const std::size_t at = l.count++;
        l.usable[at] = cap;
        l.pos[at] = static_cast<pos_t>(i);
        l.size[at] = 1;
        l.kind[at] = d.kind;
        l.pooled[at] = pooled;
    }
    return k;
}

/// The usable bytes of the group group_of would build, without building it: what
/// suggest_quantization needs to know whether the model fits.
struct capacity {
    std::size_t count = 0;
    std::uint64_t usable = 0;  ///< all of them
    /// Of the `count`, those that can end a pipeline (one_device_layers::can_end): the
    /// pipeline capacity_holds tests is theirs, and the next three describe them.
    std::size_t able = 0;
    std::uint64_t largest = 0;
    std::uint64_t smallest = 0;
    std::uint64_t middle = 0;  ///< layers each holds as a middle stage, summed
    bool dequantized = false;  ///< a device of the kind dequantizes `q` (counted or not)
    one_device_layers layers{}; ///< set with `middle`
};

/// `get_needs()` gives the model's needs when the first member is found (nullptr: count
/// and sum only, `middle` stays 0).
template <class GetNeeds>
constexpr capacity capacity_of(std::span<const accelerator_profile> devs, const member_list& l, device_kind kind,
                               quant_format q, bool native_only, const plan_options& o, GetNeeds&& get_needs) noexcept {
    capacity c;
    bool with_layers = false;
    std::uint64_t last_cap = 0, last_layers = 0; // equal devices hold equal layers
    bool any_pooled = false;
    const support_test support(q);
    const auto add = [&](std::uint64_t cap, std::size_t devices) { // `devices` alike
        if (c.count == 0)
            if (const needs* n = get_needs()) {
                c.layers = one_device(*n);
                with_layers = true;
            }
        c.count += devices;
        c.usable = sat_add(c.usable, sat_mul(cap, devices));
        if (!with_layers || !c.layers.can_end(cap)) return;
        const bool first = c.able == 0;
        if (first) c.largest = c.smallest = cap;
        if (cap > c.largest) c.largest = cap;
        if (cap < c.smallest) c.smallest = cap;
        c.able += devices;
        if (first || cap != last_cap) {
            last_cap = cap;
            last_layers = c.layers(cap, false, false);
        }
        c.middle += last_layers * devices;
    };
    const auto takes_part = [&](std::size_t i) {
        if (l.kind[i] != kind) return false;
        const auto sup = support(devs[l.pos[i]]);
        return sup != format_support::none && (!native_only || sup == format_support::native);
    };
    for (std::size_t i = 0; i < l.count; ++i) {
        if (l.kind[i] != kind) continue;
        const auto sup = support(devs[l.pos[i]]);
        if (sup == format_support::dequantized) c.dequantized = true;
        if (sup == format_support::none || (native_only && sup != format_support::native)) continue;
        if (l.pooled[i]) {
            any_pooled = true;
            continue;
        }
        add(l.usable[i], l.size[i]);
    }
    // Each pool's largest device (the first of equals), as group_of keeps it.
    for (std::size_t i = 0; any_pooled && i < l.count; ++i) {
        if (!l.pooled[i] || !takes_part(i)) continue;
        const auto pool = pool_of(devs, o, l.pos[i]);
        bool largest = true;
        for (std::size_t j = 0; j < l.count && largest; ++j)
            if (j != i && l.pooled[j] && pool_of(devs, o, l.pos[j]) == pool && takes_part(j) &&
                (l.usable[j] > l.usable[i] || (l.usable[j] == l.usable[i] && j < i)))
                largest = false;
        if (largest) add(l.usable[i], 1);
    }
    return c;
}

/// Whether the model fits the devices as a layer-granular pipeline over all of them that
/// can end one (capacity::able), largest first (what plan_sharding can always build, links
/// aside). Whether the k largest
/// devices hold it only gets easier as k grows — the stage that was last becomes a middle
/// stage, which needs no output head and no logits buffer, and the new last stage holds
/// zero layers or more — so trying all of them answers for every k. The first stage is the
/// largest device and the last the smallest; the order of the others does not matter.
constexpr bool capacity_holds(const capacity& c) noexcept {
    const auto& f = c.layers;
    if (c.able == 0 || f.layers == 0) return false;
    if (c.able == 1) return f(c.largest, true, true) >= f.layers;
    const std::uint64_t total = f(c.largest, true, false) + f(c.smallest, false, true) + c.middle -
                                f(c.largest, false, false) - f(c.smallest, false, false);
    return total >= f.layers;
}

/// Formats another supersedes (superseded_by), by quant_format value. A superseding format
/// has no more bits, so it is a candidate wherever the one it replaces would be, and it
/// runs wherever that one does.
inline constexpr auto superseded = [] {
    std::array<bool, quant_format_count> out{};
    for (const auto& row : quant_table) out[static_cast<std::size_t>(row.id)] = superseded_by(row.id) != row.id;
    return out;
}();

/// suggest_quantization's candidates, most bits first, table order among equals: the
/// formats of `options.formats` when given; otherwise every format of at most
/// `options.max_bits_per_weight` bits that no other supersedes.
struct candidate_list {
    std::array<quant_format, quant_format_count> formats{};
    std::size_t count = 0;
};
/// The candidates without options.formats at any bit limit: a limit cuts a prefix.
inline constexpr candidate_list unlimited_candidates = [] {
    candidate_list c;
    for (const auto f : formats_by_bits)
        if (!superseded[static_cast<std::size_t>(f)]) c.formats[c.count++] = f;
    return c;
}();
/// The candidates for `o`: a view of unlimited_candidates, or of `storage` filled with
/// o.formats in the candidates' order.
constexpr std::span<const quant_format> candidates_of(const plan_options& o, candidate_list& storage) noexcept {
    if (o.formats.empty()) {
        const auto& all = unlimited_candidates;
        std::size_t first = 0;
        while (first < all.count && bits_per_weight(all.formats[first]) > o.max_bits_per_weight) ++first;
        return {all.formats.data() + first, all.count - first};
    }
    storage.count = 0;
    for (const auto f : formats_by_bits)
        if (o.formats.contains(f)) storage.formats[storage.count++] = f;
    return {storage.formats.data(), storage.count};
}

/// native when every device of the plan computes in its format, dequantized otherwise.
constexpr format_support plan_support(std::span<const accelerator_profile> devs, const shard_plan& p) noexcept {
    if (p.devices.empty()) return format_support::none;
    const support_test support(p.quant);
    for (const auto& s : p.devices)
        if (support(devs[s.device]) != format_support::native) return format_support::dequantized;
    return format_support::native;
}

} // namespace detail::shard

/// The bytes of `d` a plan may fill: its memory (less what it reports in use, with
/// plan_options::count_memory_in_use) less the headroom, and on an Apple GPU no more than
/// Metal's working set. device_shard::usable_bytes holds this for each device of a plan.
constexpr std::uint64_t usable_memory(const accelerator_profile& d, const plan_options& options = {}) noexcept {
    return detail::shard::usable(d, options);
}

/// Lays `m` out in format `q` on `devices` (see the header comment). `links` are the
/// registry's interconnects (accelerator_registry::system().interconnects); without them
/// every device is its own island and multi-device plans are pipelines. Devices of one
/// kind only (one software stack) are combined; among kinds that fit, the plan with the
/// fastest decode wins.
constexpr shard_plan plan_sharding(std::span<const accelerator_profile> devices,
                                   std::span<const interconnect> links, const model_spec& m,
                                   quant_format q, const inference_shape& shape = {},
                                   const plan_options& options = {}) noexcept {
    using namespace detail::shard;
    shard_plan best;
    best.quant = q;
    best.truncated = devices.size() > max_plan_devices;
    const auto kinds = kinds_of(devices, options);
    best.cpu_excluded = kinds.cpu_excluded;
    if (m.layers == 0 || (m.parameters == 0 && m.hidden_size == 0)) {
        best.outcome = plan_outcome::bad_model;
        return best;
    }
    const needs n = needs_of(m, q, shape);
    best.memory = n.memory;
    if (!kinds.any_memory) return best; // no_devices
    best.outcome = plan_outcome::unsupported_format;
    bool have = false;
    for (std::size_t k = 0; k < kinds.count; ++k) {
        group g = group_of(devices, kinds.kinds[k], q, false, options);
        if (g.count == 0) continue;
        // Once a plan fits, only a plan that fits can replace it, and no plan fits on
        // devices that together hold less than the model needs on one (plan_group).
        if (have && best.fits && group_usable(g, devices, options) < n.memory.total_bytes()) continue;
        if (!have) { // the first plan is kept whatever it says: plan it in place
            plan_group(best, g, devices, links, m, q, shape, n, options);
            have = true;
            continue;
        }
        shard_plan p;
        p.cpu_excluded = best.cpu_excluded;
        p.truncated = best.truncated;
        plan_group(p, g, devices, links, m, q, shape, n, options);
        const bool better = (p.fits && !best.fits) ||
                            (p.fits == best.fits &&
                             (p.fits ? p.decode_tokens_per_second > best.decode_tokens_per_second
                                     : p.usable_bytes > best.usable_bytes));
        if (better) best = p;
    }
    return best;
}

/// The format of highest quality that fits (see the header comment). Candidates are
/// `options.formats` (default: every format up to `options.max_bits_per_weight` bits but
/// those another supersedes, see candidates_of), ordered by bits per weight; among formats
/// of equal bits, one every counted device runs natively wins over one they dequantize,
/// then table order. The devices counted are the devices of one kind that run the format;
/// the format fits when its memory, split by layers, fits their usable memory. Nothing
/// fits: `fits == false`, the outcome says why, and `format`/`memory` describe the
/// smallest candidate some device runs (the smallest candidate when none runs any).
constexpr quantization_choice suggest_quantization(std::span<const accelerator_profile> devices,
                                                   const model_spec& m, const inference_shape& shape = {},
                                                   const plan_options& options = {}) noexcept {
    using namespace detail::shard;
    quantization_choice out;
    member_list members;
    clear_if_constant_evaluated(members);
    const auto kinds = kinds_of(devices, options, &members);
    out.cpu_excluded = kinds.cpu_excluded;
    if (m.layers == 0 || (m.parameters == 0 && m.hidden_size == 0)) {
        out.outcome = plan_outcome::bad_model;
        return out;
    }

    // Candidates, most bits first (table order among equals).
    candidate_list storage;
    const auto cand = candidates_of(options, storage);
    const std::size_t nc = cand.size();
    if (nc == 0) return out;
    std::size_t smallest_run = nc; // the smallest candidate some device runs; nc: none
    const auto smallest = [&] {
        out.format = cand[smallest_run < nc ? smallest_run : nc - 1];
        out.memory = estimate_memory(m, out.format, shape);
        return out;
    };
    if (!kinds.any_memory) return smallest();
    out.outcome = plan_outcome::unsupported_format;
    bool runnable = false;
    // Device kinds whose speed can be estimated (memory bandwidth known) are tried first,
    // for every format: an integrated GPU with a large share of system memory and no
    // known bandwidth must not win over the discrete card beside it by holding a bigger
    // format. The others are tried only when nothing fits the first.
    const auto& estimable = kinds.estimable;
    // What does not depend on the format (KV cache, overhead) is worked out once.
    needs first_needs{};
    bool have_first = false;
    for (int tier = 0; tier < 2; ++tier) {
        for (std::size_t lo = 0; lo < nc;) {
            std::size_t hi = lo;
            while (hi < nc && bits_per_weight(cand[hi]) == bits_per_weight(cand[lo])) ++hi;
            std::array<bool, quant_format_count> dequantized{}; // some device dequantizes cand[c]
            for (int pass = 0; pass < 2; ++pass) {
                const bool native_only = pass == 0;
                for (std::size_t c = lo; c < hi; ++c) {
                    // The second pass adds the devices that dequantize; without them the
                    // groups are the first pass's, which did not fit.
                    if (!native_only && !dequantized[c]) continue;
                    needs n{};
                    bool have_needs = false;
                    const auto get_needs = [&]() -> const needs* {
                        if (!have_needs) {
                            n = needs_of(m, cand[c], shape, have_first ? &first_needs : nullptr);
                            have_needs = true;
                            if (!have_first) {
                                first_needs = n;
                                have_first = true;
                            }
                        }
                        return &n;
                    };
                    bool found = false;
                    for (std::size_t k = 0; k < kinds.count; ++k) {
                        if (estimable[kinds.kinds[k]] != (tier == 0)) continue;
                        const auto cap =
                            capacity_of(devices, members, kinds.kinds[k], cand[c], native_only, options, get_needs);
                        if (cap.dequantized) dequantized[c] = true;
                        if (cap.count == 0) continue;
                        runnable = true;
                        if (smallest_run == nc || c > smallest_run) smallest_run = c;
                        if (!capacity_holds(cap)) continue;
                        if (found && cap.usable <= out.usable_bytes) continue;
                        found = true;
                        out.fits = true;
                        out.outcome = plan_outcome::fits;
                        out.format = cand[c];
                        out.support = native_only ? format_support::native : format_support::dequantized;
                        out.kind = kinds.kinds[k];
                        out.devices = static_cast<std::uint32_t>(cap.count);
                        out.usable_bytes = cap.usable;
                        out.memory = n.memory;
                    }
                    if (found) return out;
                }
            }
            lo = hi;
        }
    }
    if (runnable) out.outcome = plan_outcome::too_large;
    return smallest();
}

/// The format of highest quality that plan_sharding fits on `devices` joined by `links`,
/// and its plan (see the header comment). The candidates and their order are
/// suggest_quantization's; its answer is where the search starts: the candidates of more
/// bits are planned first, best first, then its format, then, only when none of those
/// fits, the smaller ones. Among formats of equal bits its format comes first, then one
/// every device of the plan runs natively, then table order. As there, a plan on a device
/// kind whose speed cannot be estimated (no memory bandwidth known) is taken only when no
/// candidate plans on the others. Nothing fits: `choice` is suggest_quantization's (why,
/// and the smallest candidate a device runs) and `plan` that format's.
constexpr format_plan plan_best_format(std::span<const accelerator_profile> devices,
                                       std::span<const interconnect> links, const model_spec& m,
                                       const inference_shape& shape = {}, const plan_options& options = {}) noexcept {
    using namespace detail::shard;
    format_plan out;
    out.choice = suggest_quantization(devices, m, shape, options);
    candidate_list storage;
    const auto cand = candidates_of(options, storage);
    // No candidate, no model, no device, or no device running any candidate: the planner
    // would say the same of every format.
    if (cand.empty() || (out.choice.outcome != plan_outcome::fits && out.choice.outcome != plan_outcome::too_large)) {
        out.plan = plan_sharding(devices, links, m, out.choice.format, shape, options);
        return out;
    }
    const auto kinds = kinds_of(devices, options);
    bool any_estimable = false;
    for (std::size_t k = 0; k < kinds.count; ++k) any_estimable = any_estimable || kinds.estimable[kinds.kinds[k]];
    const auto take = [&](const shard_plan& p) {
        auto& c = out.choice;
        c.fits = true;
        c.outcome = plan_outcome::fits;
        c.format = p.quant;
        c.support = plan_support(devices, p);
        c.kind = p.kind;
        c.devices = p.candidate_devices;
        c.usable_bytes = p.usable_bytes;
        c.memory = p.memory;
        c.cpu_excluded = p.cpu_excluded;
        out.plan = p;
        return out;
    };
    const quant_format suggested = out.choice.format;
    const bool suggested_fits = out.choice.fits;
    const auto plan_of = [&](quant_format q) { return plan_sharding(devices, links, m, q, shape, options); };
    // A fit kept while a better one may follow is kept by its format and planned again
    // when taken: rarer than copying a plan each time.
    quant_format unestimable = suggested; // the first format that fits on a kind of unknown speed
    bool have_unestimable = false;
    for (std::size_t lo = 0; lo < cand.size();) {
        std::size_t hi = lo;
        while (hi < cand.size() && bits_per_weight(cand[hi]) == bits_per_weight(cand[lo])) ++hi;
        // The suggestion heads its bits' formats.
        std::array<quant_format, quant_format_count> order{};
        std::size_t n = 0;
        for (std::size_t c = lo; c < hi; ++c)
            if (suggested_fits && cand[c] == suggested) order[n++] = suggested;
        for (std::size_t c = lo; c < hi; ++c)
            if (!suggested_fits || cand[c] != suggested) order[n++] = cand[c];
        quant_format first = suggested; // of these bits, the first that fits, not all natively
        bool have_first = false;
        for (std::size_t c = 0; c < n; ++c) {
            const shard_plan p = plan_of(order[c]);
            if (!p.fits) continue;
            if (any_estimable && !kinds.estimable[p.kind]) {
                if (!have_unestimable) unestimable = order[c];
                have_unestimable = true;
                continue;
            }
            if ((suggested_fits && order[c] == suggested) || plan_support(devices, p) == format_support::native)
                return take(p);
            if (!have_first) first = order[c];
            have_first = true;
        }
        if (have_first) return take(plan_of(first));
        lo = hi;
    }
    if (have_unestimable) return take(plan_of(unestimable));
    // Nothing plans: the smallest candidate, as suggest_quantization describes it.
    // The suggestion's format is then the smallest candidate a device runs.
    const quant_format smallest = out.choice.fits ? cand.back() : out.choice.format;
    out.plan = plan_of(smallest);
    if (out.choice.fits) { // its fit test and the planner disagree: the planner's word
        const bool cpu_excluded = out.choice.cpu_excluded;
        out.choice = quantization_choice{};
        out.choice.outcome = out.plan.outcome;
        out.choice.format = smallest;
        out.choice.memory = out.plan.memory;
        out.choice.cpu_excluded = cpu_excluded;
    }
    return out;
}

AI_HWACCEL_NAMESPACE_END
