// How much memory fine-tuning takes: QLoRA of Llama 3.1 70B against a full fine-tune of
// Llama 3.1 8B, on one device each, and whether they fit a 24 GiB RTX 4090 or an 80 GiB
// H100. All catalogue data, no detection: the output is deterministic and checked by the
// tests. Every number is an estimate (see plan/training.hpp for where each term comes from).
#include <ai_hwaccel/core.hpp>
#include <ai_hwaccel/plan/models.hpp>
#include <ai_hwaccel/plan/training.hpp>

#include <cstdio>
#include <string_view>

namespace ah = ai_hwaccel;

namespace {
double gib(std::uint64_t bytes) { return ah::units::to_gib(bytes); }

void report(std::string_view title, const ah::model_spec& m, const ah::training_setup& t) {
    const ah::training_memory e = ah::estimate_training_memory(m, t);
    std::printf("%.*s\n", static_cast<int>(title.size()), title.data());
    std::printf("  trainable parameters %14llu\n", static_cast<unsigned long long>(e.trainable_parameters));
    std::printf("  weights              %8.2f GiB\n", gib(e.weights_bytes));
    std::printf("  gradients            %8.2f GiB\n", gib(e.gradients_bytes));
    std::printf("  optimizer states     %8.2f GiB\n", gib(e.optimizer_bytes));
    std::printf("  activations          %8.2f GiB\n", gib(e.activations_bytes));
    std::printf("  buffers              %8.2f GiB\n", gib(e.buffers_bytes));
    std::printf("  peak per device      %8.2f GiB\n", gib(e.peak_memory_bytes));
    for (const char* name : {"RTX 4090", "H100 SXM"}) {
        const ah::device_spec* d = ah::find_device(name);
        if (!d) continue;
        const std::uint64_t memory = ah::reported_memory_bytes(*d); // what its driver reports
        const bool fits = ah::training_fits(m, t, memory);
        const std::uint32_t longest = ah::max_training_seq_len(m, t, memory);
        std::printf("  on %-8s (%3.0f GiB): %-12s longest sequence that fits: %u tokens\n", name, gib(memory),
                    fits ? "fits," : "does not fit,", longest);
    }
    std::printf("\n");
}
} // namespace

int main() {
    const ah::model_spec* big = ah::find_model("llama-3.1-70b");
    const ah::model_spec* small = ah::find_model("llama-3.1-8b");
    if (!big || !small) return 1;

    // QLoRA as the paper ran it (Dettmers et al. 2023, and its qlora.py): NF4 base, rank-64
    // adapters on every linear layer, gradient checkpointing, AdamW on the adapters only.
    ah::training_setup qlora;
    qlora.method = ah::training_method::qlora;
    qlora.lora_rank = 64;
    qlora.seq_len = 2048;
    qlora.gradient_checkpointing = true;
    report("QLoRA, Llama 3.1 70B, rank 64, 2048 tokens, gradient checkpointing", *big, qlora);

    // A full fine-tune with mixed-precision AdamW: 16 bytes per parameter before
    // activations, which is what rules out one consumer card.
    ah::training_setup full;
    full.method = ah::training_method::full;
    full.seq_len = 2048;
    full.gradient_checkpointing = true;
    report("Full fine-tune, Llama 3.1 8B, mixed bf16 AdamW, 2048 tokens, gradient checkpointing", *small, full);

    // The same full fine-tune sharded over 8 devices with ZeRO stage 3 (FSDP FULL_SHARD).
    ah::training_setup sharded = full;
    sharded.devices = 8;
    sharded.zero = ah::zero_stage::parameters;
    report("Full fine-tune, Llama 3.1 8B, ZeRO-3 over 8 devices", *small, sharded);
    return 0;
}
