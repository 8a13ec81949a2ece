# The planning commands of the CLI (estimate, plan, training, cost), as a user meets them.
# Included by tests/CMakeLists.txt: runs in its scope (ai_hwaccel_cli, AI_HWACCEL_JSON_FOUND,
# expect_exit_code.cmake). Every case runs on catalogue devices, catalogue models or a
# fixture machine tree, never on what this machine has. Values matched are the ones a
# reader can justify: a 70B model in bf16 (141 GB of weights) needs more than one 80 GB
# H100 and fits eight joined by NVLink, which the planner splits tensor-parallel; the
# Llama 3.1 70B row has 80 layers; an RTX 4090 has 24 GiB.

set(_exit "${CMAKE_CURRENT_SOURCE_DIR}/expect_exit_code.cmake")
set(_hgx "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-hgx-h100-8gpu-nvswitch")

# A test that the CLI exits with EXPECTED: cli_plan_exit(<name> <code> <args>...)
function(cli_plan_exit name code)
  add_test(NAME ${name}
           COMMAND "${CMAKE_COMMAND}" -DPROGRAM=$<TARGET_FILE:ai_hwaccel_cli> "-DARGS=${ARGN}" -DEXPECTED=${code}
                   -P "${_exit}")
endfunction()
# A test whose output (stdout and stderr) must match REGEX: cli_plan_output(<name> <regex> <args>...)
function(cli_plan_output name regex)
  add_test(NAME ${name} COMMAND ai_hwaccel_cli ${ARGN})
  set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${regex}")
endfunction()

# ---- estimate -------------------------------------------------------------------------------
cli_plan_output(cli_plan_estimate_human
  "device: 8 x NVIDIA H100 SXM5 80GB\n.*model: Llama 3.1 70B \\(llama-3.1-70b\\).*fits: yes\nstrategy: tensor_parallel.*decode: [0-9.]+ tok/s per sequence\nprefill: [0-9.]+ tok/s"
  estimate --device "H100 SXM" --count 8 --model llama-3.1-70b --quant bf16)
# Names as people write them resolve (each fits an 8B model at Q4_K_M; the Apple chip with
# the memory of the machine, which its catalogue row cannot know).
cli_plan_output(cli_plan_estimate_rtx4090 "device: NVIDIA GeForce RTX 4090\n.*fits: yes"
  estimate --device "RTX 4090" --model llama-3.1-8b --quant Q4_K_M)
cli_plan_output(cli_plan_estimate_a100_pcie "device: NVIDIA A100 PCIe 80GB\n.*fits: yes"
  estimate --device "A100 PCIe 80GB" --model llama-3.1-8b --quant Q8_0)
cli_plan_output(cli_plan_estimate_mi300x "device: AMD Instinct MI300X\n.*fits: yes"
  estimate --device MI300X --model llama-3.1-8b --quant fp8)
cli_plan_output(cli_plan_estimate_m2_ultra "device: Apple M2 Ultra 76-core GPU\n.*fits: yes"
  estimate --device "Apple M2 Ultra 76-core" --memory 192GiB --model llama-3.1-70b --quant Q4_K_M)
# A mixture of experts says what one token reads (Mixtral: 2 of its 8 experts); DeepSeek's
# latent attention caches one vector of kv_lora_rank + rope dimensions (512 + 64) per token
# and layer, not heads.
cli_plan_output(cli_plan_estimate_moe
  "model: Mixtral 8x7B \\(mixtral-8x7b\\), 46\\.70 B parameters \\(12\\.88 B active: 2 of 8 experts per token\\)\nlayers: 32, hidden 4096, 32 attention heads, 8 KV heads\n"
  estimate --device "H100 SXM" --model mixtral-8x7b --quant Q4_K_M)
cli_plan_output(cli_plan_estimate_latent_kv
  "37\\.00 B active: 8 of 256 experts per token\\)\nlayers: 61, hidden 7168, 128 attention heads, latent KV \\(576 values per token and layer\\)\n"
  estimate --device "H100 SXM" --count 8 --model deepseek-v3 --quant Q4_K_M)
cli_plan_output(cli_plan_estimate_by_hand "model: custom model \\(custom\\), 70.00 B parameters.*context 8192 tokens, prompt 1024 tokens"
  estimate --device "H100 SXM" --count 2 --params 70B --layers 80 --hidden 8192 --kv-heads 8 --quant bf16 --context 8k --prompt 1k)
# A parameter count alone: the rest of the shape is assumed, and the output says so; the
# layers and hidden size given are kept.
cli_plan_output(cli_plan_estimate_params_only
  "model: custom model \\(custom\\), 70.00 B parameters\nlayers: [0-9]+, hidden [0-9]+, [0-9]+ attention heads, [0-9]+ KV heads \\(assumed:.*fits: yes"
  estimate --device "H100 SXM" --count 2 --params 70B --quant bf16)
cli_plan_output(cli_plan_estimate_by_hand_not_assumed "layers: 80, hidden 8192, 64 attention heads, 8 KV heads\n"
  estimate --device "H100 SXM" --count 2 --params 70B --layers 80 --hidden 8192 --kv-heads 8 --quant bf16)
cli_plan_output(cli_plan_estimate_layers_only "layers: 40, hidden [0-9]+, .*\\(assumed:"
  estimate --device "H100 SXM" --params 13B --layers 40 --quant bf16)
cli_plan_exit(cli_plan_estimate_heads_without_shape 2 estimate --device "H100 SXM" --params 13B --heads 40 --quant bf16)
cli_plan_exit(cli_plan_estimate_shape_without_params 2 estimate --device "H100 SXM" --layers 40 --hidden 5120 --quant bf16)
# One 80 GB H100 cannot hold 141 GB of bf16 weights: exit 1, with the reason.
cli_plan_exit(cli_plan_estimate_fits_nowhere 1 estimate --device "H100 SXM" --model llama-3.1-70b --quant bf16)
cli_plan_output(cli_plan_estimate_fits_nowhere_message "fits: no: the model does not fit"
  estimate --device "H100 SXM" --model llama-3.1-70b --quant bf16)
# Errors: exit code 2 and a message that says what is wrong.
cli_plan_exit(cli_plan_estimate_unknown_option 2 estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --frobnicate)
cli_plan_output(cli_plan_estimate_unknown_option_message "unknown option '--frobnicate' for estimate"
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --frobnicate)
# An empty list suggests what each command takes: `all` for estimate, `auto` for plan.
cli_plan_output(cli_plan_empty_quant_list_message "no format given \\(e\\.g\\. Q4_K_M, or Q4_K_M,Q8_0, or auto\\)"
  plan --device "H100 SXM" --model llama-3.1-8b --quant ,)
cli_plan_output(cli_plan_estimate_empty_quant_list_message "or Q4_K_M,Q8_0, or all\\)"
  estimate --device "H100 SXM" --model llama-3.1-8b --quant ,)
cli_plan_exit(cli_plan_estimate_bad_number 2 estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --context 4x)
cli_plan_output(cli_plan_estimate_bad_number_message "--context: '4x' is not a token count"
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --context 4x)
cli_plan_exit(cli_plan_estimate_zero_count 2 estimate --device "H100 SXM" --count 0 --model llama-3.1-8b --quant bf16)
cli_plan_exit(cli_plan_estimate_bad_params 2 estimate --device "H100 SXM" --params 70Q --layers 80 --hidden 8192 --quant bf16)
cli_plan_exit(cli_plan_estimate_unknown_device 2 estimate --device "H100 SMX" --model llama-3.1-8b --quant bf16)
cli_plan_output(cli_plan_estimate_unknown_device_message
  "unknown device 'H100 SMX'; close catalogue names: .*\"NVIDIA H100 SXM5 80GB\""
  estimate --device "H100 SMX" --model llama-3.1-8b --quant bf16)
cli_plan_exit(cli_plan_estimate_unknown_model 2 estimate --device "H100 SXM" --model llama-9-8b --quant bf16)
cli_plan_output(cli_plan_estimate_unknown_model_message "unknown model 'llama-9-8b'; close model ids: .*\"llama-3.1-8b\""
  estimate --device "H100 SXM" --model llama-9-8b --quant bf16)
cli_plan_exit(cli_plan_estimate_unknown_quant 2 estimate --device "H100 SXM" --model llama-3.1-8b --quant Q9_K)
# A rate the catalogue cannot back says which figure is missing: Apple states no compute
# rate for the M3 Max GPU, so its prefill is unknown while decode follows its bandwidth.
cli_plan_output(cli_plan_estimate_prefill_unknown_why
  "decode: [0-9.]+ tok/s per sequence\nprefill: unknown \\(no peak compute rate is known for Apple M3 Max 40-core GPU\\)"
  estimate --device "Apple M3 Max 40-core" --memory 128GiB --model llama-3.1-8b --quant Q4_K_M)
# A context past the model's own is planned with a note (Falcon 180B: 2048 tokens).
cli_plan_output(cli_plan_estimate_context_note "note: a context of 4096 tokens is past the 2048 tokens Falcon 180B was trained for"
  estimate --device "H100 SXM" --count 8 --model falcon-180b --quant bf16)
# estimate takes formats, not auto, and points to plan for the best one (and to all).
cli_plan_output(cli_plan_estimate_quant_auto "estimate takes formats, not auto; .*ai-hwaccel plan --device.*--quant all"
  estimate --device "H100 SXM" --model llama-3.1-8b --quant auto)
cli_plan_exit(cli_plan_estimate_quant_auto_exit 2 estimate --device "H100 SXM" --model llama-3.1-8b --quant auto)
cli_plan_exit(cli_plan_estimate_quant_auto_in_list 2 estimate --device "H100 SXM" --model llama-3.1-8b --quant Q4_K_M,auto)
# Several formats make a table, a row each. All of them, most bits per weight first: a 70B
# model on one 24 GiB RTX 4090 fits in none of the 16-, 8- or 4-bit formats (141, 70, about
# 40 GB of weights) and in the 1.56-bit IQ1_S (about 14 GiB), the last row.
cli_plan_output(cli_plan_estimate_all_formats
  "\nformat +bits/w +weights +total +fits +strategy +decode/seq +prefill\nFP32 +32\\.00 [^\n]* no: memory [^\n]*\nBF16 +16\\.00 [^\n]* no: memory .*\nQ4_K_M +4\\.90 [^\n]* no: memory .*\nIQ1_S +1\\.56 [^\n]* yes +single_device +[0-9.]+ tok/s +[0-9.]+ tok/s\nno: memory: the model does not fit"
  estimate --device "RTX 4090" --model llama-3.1-70b --quant all)
cli_plan_exit(cli_plan_estimate_all_formats_exit 0 estimate --device "RTX 4090" --model llama-3.1-70b --quant all)
# A list keeps its order and drops a repeat (q4_k_m is Q4_K_M): two rows, both on eight
# NVLinked H100s, tensor-parallel over the eight.
cli_plan_output(cli_plan_estimate_format_list
  "\nQ4_K_M +4\\.90 [^\n]* yes +tensor_parallel 8 +[0-9.]+ tok/s +[0-9.]+ tok/s\nBF16 +16\\.00 [^\n]* yes +tensor_parallel 8 [^\n]*\ntotal: "
  estimate --device "H100 SXM" --count 8 --model llama-3.1-70b --quant Q4_K_M,bf16,q4_k_m)
# llama.cpp's formats load on CPUs and GPUs only: a TPU runs Q4_K_M neither natively nor
# dequantized; the reason is spelled out once below the table.
cli_plan_output(cli_plan_estimate_format_list_unsupported
  "\nQ4_K_M [^\n]* no: format +- [^\n]*\nBF16 [^\n]* yes [^\n]*\nno: format: no device runs this format"
  estimate --device "TPU v5p" --model llama-3.1-8b --quant Q4_K_M,bf16)
# NVFP4 weights run dequantized (vLLM's Marlin, W4A16) on a GPU without FP4 units.
cli_plan_output(cli_plan_estimate_nvfp4_dequantized "\nNVFP4 [^\n]* yes [^\n]*\nQ4_K_M [^\n]* yes "
  estimate --device "RTX 4090" --model llama-3.1-8b --quant nvfp4,Q4_K_M)
# A rate the catalogue cannot back is "unknown" in the table and explained below it.
cli_plan_output(cli_plan_estimate_format_list_unknown_rate
  "\nQ8_0 [^\n]* yes [^\n]* unknown\ntotal: [^\n]*\nprefill: unknown \\(no peak compute rate is known for Apple M3 Max 40-core GPU\\)"
  estimate --device "Apple M3 Max 40-core" --memory 128GiB --model llama-3.1-8b --quant Q4_K_M,Q8_0)
# None fits: exit code 1, and the message says how many formats were tried.
cli_plan_exit(cli_plan_estimate_format_list_fits_nowhere 1
  estimate --device "RTX 4090" --model llama-3.1-405b --quant bf16,fp8)
cli_plan_output(cli_plan_estimate_format_list_fits_nowhere_message "fits nowhere: in none of the 2 formats"
  estimate --device "RTX 4090" --model llama-3.1-405b --quant bf16,fp8)
cli_plan_exit(cli_plan_estimate_format_list_empty 2 estimate --device "RTX 4090" --model llama-3.1-8b --quant ",")
cli_plan_exit(cli_plan_estimate_format_list_unknown 2 estimate --device "RTX 4090" --model llama-3.1-8b --quant Q4_K_M,Q9_K)
# Hub names of the catalogue's other publishers: DBRX (MoE, 131.6 B from its config, a
# token reading 4 of its 16 experts) at Q4_K_M (about 74 GiB) fits four H100s; "Command R+"
# is the 104 B model, not Command R.
cli_plan_output(cli_plan_estimate_dbrx "model: DBRX \\(dbrx\\), 131.60 B parameters \\(36\\.47 B active: 4 of 16 experts per token\\)\n.*fits: yes"
  estimate --device "H100 SXM" --count 4 --model databricks/dbrx-instruct --quant Q4_K_M)
cli_plan_output(cli_plan_estimate_command_r_plus "model: Command R\\+ \\(command-r-plus\\), 103.81 B parameters"
  estimate --device "H100 SXM" --count 4 --model "Command R+" --quant Q4_K_M)
cli_plan_exit(cli_plan_estimate_prompt_past_context 2
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --context 1024 --prompt 2048)
cli_plan_exit(cli_plan_plan_prompt_past_context 2
  plan --device "RTX 4090" --count 2 --model llama-3-70b --quant Q4_K_M --context 1024 --prompt 2048)
cli_plan_output(cli_plan_plan_prompt "strategy: pipeline_parallel.*\nprefill: [0-9.]+ tok/s \\(a prompt of 512 tokens\\)"
  plan --device "RTX 4090" --count 2 --model llama-3-70b --quant Q4_K_M --prompt 512)
cli_plan_output(cli_plan_plan_prompt_default "\nprefill: [0-9.]+ tok/s \\(a prompt of 2048 tokens\\)"
  plan --device "RTX 4090" --count 2 --model llama-3-70b --quant Q4_K_M --context 2k)
# A prompt after earlier turns: the shape says so, and the prompt and the cached tokens
# share the context (the default prompt takes what the depth leaves of it).
cli_plan_output(cli_plan_estimate_prompt_depth "shape: context 8192 tokens, prompt 512 tokens after 4096 cached"
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --context 8k --prompt 512 --prompt-depth 4k)
cli_plan_output(cli_plan_plan_prompt_depth_default "\nprefill: [0-9.]+ tok/s \\(a prompt of 1024 tokens after 1024 cached\\)"
  plan --device "RTX 4090" --count 2 --model llama-3-70b --quant Q4_K_M --context 2k --prompt-depth 1024)
cli_plan_exit(cli_plan_estimate_prompt_depth_full 2
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --context 4096 --prompt-depth 4096)
cli_plan_exit(cli_plan_estimate_prompt_and_depth_past_context 2
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --context 4096 --prompt 1024 --prompt-depth 3584)
cli_plan_exit(cli_plan_estimate_prompt_depth_not_a_count 2
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --prompt-depth -5)
cli_plan_exit(cli_plan_estimate_prompt_depth_zero 0
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --prompt-depth 0)
cli_plan_exit(cli_plan_estimate_memory_needed 2 estimate --device "Apple M2 Ultra 76-core" --model llama-3.1-8b --quant Q4_K_M)
cli_plan_exit(cli_plan_estimate_model_and_params 2
  estimate --device "H100 SXM" --model llama-3.1-8b --params 8B --layers 32 --hidden 4096 --quant bf16)

# ---- plan -----------------------------------------------------------------------------------
cli_plan_output(cli_plan_plan_described
  "devices: 2 x NVIDIA GeForce RTX 4090 \\(described; link: pcie\\).*strategy: pipeline_parallel.*0 +NVIDIA GeForce RTX 4090 .* 0-[0-9]+\\+emb .*1 +NVIDIA GeForce RTX 4090 .* [0-9]+-79\\+head"
  plan --device "RTX 4090" --count 2 --model llama-3.1-70b --quant Q4_K_M)
# Described devices are linked as they are built into machines: 16 H100 SXM are two HGX
# boards of eight, so tensor parallelism stays on one board's NVSwitch and the two boards
# are pipeline stages (one NVLink domain of sixteen does not exist); RTX 3090s are bridged
# in pairs, so four of them never run one tensor-parallel group of four.
cli_plan_output(cli_plan_plan_described_boards
  "devices: 16 x NVIDIA H100 SXM5 80GB \\(described; link: nvlink in groups of 8, PCIe between them\\)\n.*strategy: tensor_pipeline: 16 device\\(s\\) per replica \\(tensor-parallel 8, 2 stage\\(s\\)\\); tensor link nvlink 450 GB/s; pipeline link pcie "
  plan --device "H100 SXM" --count 16 --model llama-3.1-405b --quant bf16)
cli_plan_output(cli_plan_estimate_described_pairs
  "link: nvlink in groups of 2, PCIe between them\n.*strategy: tensor_pipeline: 4 device\\(s\\) per replica \\(tensor-parallel 2, 2 stage\\(s\\)\\); tensor link nvlink"
  estimate --device "RTX 3090" --count 4 --model llama-3.1-70b --quant Q8_0)
cli_plan_output(cli_plan_plan_fits_nowhere_message "fits: no: the model does not fit"
  plan --device "RTX 4090" --model llama-3.1-405b --quant bf16)
cli_plan_exit(cli_plan_plan_fits_nowhere 1 plan --device "RTX 4090" --model llama-3.1-405b --quant bf16)
cli_plan_exit(cli_plan_plan_unknown_option 2 plan --model llama-3.1-8b --frobnicate)
cli_plan_exit(cli_plan_plan_bad_number 2 plan --device "RTX 4090" --count two --model llama-3.1-8b)
cli_plan_exit(cli_plan_plan_unknown_device 2 plan --device "RTX 4009" --model llama-3.1-8b)
cli_plan_output(cli_plan_plan_unknown_device_message "unknown device 'RTX 4009'; close catalogue names: \"NVIDIA GeForce RTX 4090\""
  plan --device "RTX 4009" --model llama-3.1-8b)
cli_plan_exit(cli_plan_plan_unknown_model 2 plan --device "RTX 4090" --model gpt-9)
cli_plan_exit(cli_plan_plan_root_and_device 2 plan --root "${_hgx}" --device "RTX 4090" --model llama-3.1-8b)
cli_plan_exit(cli_plan_plan_root_missing 2 plan --root /nonexistent/ai-hwaccel --model llama-3.1-8b)
# --quant auto takes the planner's word, links included. Qwen3 32B, 32k tokens x 8
# sequences, on two A100 40GB joined by NVLink: 64 GiB of KV cache beside 72 GiB usable
# leaves room for the smallest format (IQ1_S) only tensor parallel, which splits the
# embedding, output head and logits buffer over both cards. A layer pipeline cannot, so
# the suggestion alone found no format that fits.
cli_plan_output(cli_plan_plan_auto_tensor_parallel
  "quantization: IQ1_S \\(auto: the highest-quality format that fits\\).*strategy: tensor_parallel"
  plan --device "A100 SXM4 40GB" --count 2 --model qwen3-32b --context 32k --batch 8)
# A list is auto among those formats only (the GGUF files one has): two RTX 4090s (48 GB)
# hold 70B in Q4_K_M (about 40 GiB of weights) but not in Q8_0 (70 GiB), so Q4_K_M is
# chosen over Q2_K, a stage on each card; on one card neither Q8_0 nor Q6_K fits, and the
# smallest tried is named.
cli_plan_output(cli_plan_plan_quant_list
  "quantization: Q4_K_M \\(auto among the formats given: the highest-quality format that fits\\)\n.*strategy: pipeline_parallel: 2 device"
  plan --device "RTX 4090" --count 2 --model llama-3.1-70b --quant Q8_0,Q4_K_M,Q2_K)
cli_plan_output(cli_plan_plan_quant_list_fits_nowhere "not even in Q6_K, the smallest format tried"
  plan --device "RTX 4090" --model llama-3.1-70b --quant Q8_0,Q6_K)
cli_plan_exit(cli_plan_plan_quant_list_fits_nowhere_exit 1 plan --device "RTX 4090" --model llama-3.1-70b --quant Q8_0,Q6_K)
# A list may reach past auto's 16 bits: FP32 (32 GB) does not fit one 24 GiB card, BF16 does.
cli_plan_output(cli_plan_plan_quant_list_fp32 "quantization: BF16 \\(auto among the formats given: "
  plan --device "RTX 4090" --model llama-3.1-8b --quant fp32,bf16)
cli_plan_exit(cli_plan_plan_quant_list_with_auto 2 plan --device "RTX 4090" --model llama-3.1-8b --quant Q8_0,auto)
cli_plan_exit(cli_plan_plan_quant_list_unknown 2 plan --device "RTX 4090" --model llama-3.1-8b --quant Q8_0,Q9_K)
# Apple's catalogue rows give an M1 Pro GPU no fp16 figure, yet F16 files run on it:
# Llama 3.2 1B in 16 bits (2.9 GiB) on the 16 GiB MacBook stays in 16 bits, and F16 asked
# for by name fits, with a prefill rate from the GPU's fp32 (vector) peak.
cli_plan_output(cli_plan_plan_auto_fp16_apple "quantization: FP16 \\(auto: the highest-quality format that fits\\)"
  plan --root "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-macbook-pro-m1pro" --model llama-3.2-1b)
cli_plan_output(cli_plan_estimate_fp16_apple "device: Apple M1 Pro 16-core GPU\n.*fits: yes\n.*prefill: [0-9.]+ tok/s"
  estimate --device "M1 Pro 16-core" --memory 16GiB --model llama-3.2-1b --quant f16)

# Nothing to plan on: no format was tried, and --allow-cpu is not suggested where the CPU
# (its memory unknown in an empty tree) would not hold the model either. On a laptop whose
# CPU would, it is.
file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/cli_plan_empty_root")
cli_plan_output(cli_plan_plan_nothing_to_plan_on
  "quantization: IQ1_S \\(auto: the smallest format; no device to try it on\\)\n.*fits: no: no available device"
  plan --root "${CMAKE_CURRENT_BINARY_DIR}/cli_plan_empty_root" --model llama-3.1-8b)
set_tests_properties(cli_plan_plan_nothing_to_plan_on PROPERTIES FAIL_REGULAR_EXPRESSION "allow-cpu|smallest format tried")
cli_plan_output(cli_plan_plan_cpu_would_hold_it "fits: no: .*\\(with --allow-cpu, which lets the plan use the CPU, it fits\\)"
  plan --root "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-laptop-llvmpipe-only" --model llama-3.1-8b)
cli_plan_output(cli_plan_plan_cpu_would_not_hold_it "fits: no: no available device"
  plan --root "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-laptop-llvmpipe-only" --model llama-3.1-405b --quant bf16)
set_tests_properties(cli_plan_plan_cpu_would_not_hold_it PROPERTIES FAIL_REGULAR_EXPRESSION "allow-cpu")

# ---- training -------------------------------------------------------------------------------
cli_plan_output(cli_plan_training_human
  "method: lora, rank 16.*trainable parameters: [0-9]+\n.*peak memory per device: [0-9.]+ GiB"
  training --model llama-3.1-8b --method lora --seq 2k)
# Full fine-tuning of 70B with Adam holds 16 B per parameter: more than 1 TB, not one H100.
cli_plan_exit(cli_plan_training_fits_nowhere 1 training --model llama-3.1-70b --method full --device "H100 SXM")
cli_plan_output(cli_plan_training_fits_nowhere_message "training does not fit NVIDIA H100 SXM5 80GB"
  training --model llama-3.1-70b --method full --device "H100 SXM")
# An L4 with ECC on reports 23,034 MiB of its 24 GiB, and training is judged against that,
# as estimate and plan judge: full fine-tuning of Llama 3.2 1B at 2k needs about 23.8 GiB.
cli_plan_output(cli_plan_training_reported_memory "does not fit NVIDIA L4.*22\\.5 GiB"
  training --model llama-3.2-1b --method full --seq 2048 --device L4)
cli_plan_exit(cli_plan_training_unknown_option 2 training --model llama-3.1-8b --method lora --frobnicate)
cli_plan_exit(cli_plan_training_bad_zero 2 training --model llama-3.1-8b --method full --zero 4)
cli_plan_exit(cli_plan_training_bad_method 2 training --model llama-3.1-8b --method sft2)
cli_plan_exit(cli_plan_training_rank_without_adapters 2 training --model llama-3.1-8b --method full --rank 8)
cli_plan_exit(cli_plan_training_unknown_device 2 training --model llama-3.1-8b --method lora --device "H100 SMX")
cli_plan_exit(cli_plan_training_unknown_model 2 training --model llama-9-8b --method lora)

# Falcon 7B has one KV head (multi-query attention); a size under 0.05 GiB is not "0.0 GiB"
# (1 MB less the 10 % headroom: 0.9 MiB).
cli_plan_output(cli_plan_estimate_one_kv_head "71 attention heads, 1 KV head\n"
  estimate --device "RTX 4090" --model falcon-7b --quant Q4_K_M)
cli_plan_output(cli_plan_estimate_small_memory "usable memory: 0\\.9 MiB"
  estimate --device "RTX 4090" --memory 1MB --model llama-3.1-8b --quant Q4_K_M)
# A fraction of a byte is no size, with or without the unit.
cli_plan_exit(cli_plan_estimate_memory_fraction_of_byte 2
  estimate --device "RTX 4090" --memory 1.5b --model llama-3.1-8b --quant Q4_K_M)

# ---- cost -----------------------------------------------------------------------------------
cli_plan_output(cli_plan_cost_human
  "needs [0-9.]+ GiB\ncheapest by price per hour: [^ ]+ \\((aws|gcp|azure|lambda|coreweave|oci), [^)]+\\)\n.*price: \\$[0-9.]+ per hour on demand \\((price of [0-9-]+|price list at commit [0-9a-f]+); https://"
  cost --model llama-3.1-8b --quant Q4_K_M)
cli_plan_output(cli_plan_cost_all "instance +provider +region +USD/hour.*cheapest by"
  cost --model llama-3.1-8b --quant Q4_K_M --all)
# The cheapest instance by price per hour has one accelerator, so one replica.
cli_plan_output(cli_plan_cost_replicas "decode: [0-9.]+ tok/s for the instance \\(1 replica of 1 accelerator, tensor parallel 1; estimate\\)"
  cost --model llama-3.1-8b --quant Q4_K_M)
# The no* legend where a row is marked so (Trainium does not load llama.cpp's formats), and
# only there (every accelerator of the catalogue runs BF16).
cli_plan_output(cli_plan_cost_all_unsupported_legend "trn1[^\n]+ no\\* .*\\(no\\*: the instance's accelerators do not run Q4_K_M\\)"
  cost --model llama-3.1-8b --quant Q4_K_M --all)
# A100s run FP8 weights dequantized (W8A16): p4d fits an 8B model in FP8.
cli_plan_output(cli_plan_cost_fp8_on_a100 "\np4d\\.24xlarge [^\n]+ yes "
  cost --model llama-3.1-8b --quant fp8 --all)
cli_plan_output(cli_plan_cost_all_no_legend "instance +provider +region"
  cost --model llama-3.1-8b --quant bf16 --all)
set_tests_properties(cli_plan_cost_all_no_legend PROPERTIES FAIL_REGULAR_EXPRESSION "no\\*")
# DeepSeek V3 in fp32 is 2.7 TB of weights: no instance in the catalogue holds it.
cli_plan_exit(cli_plan_cost_fits_nowhere 1 cost --model deepseek-v3 --quant fp32)
cli_plan_output(cli_plan_cost_fits_nowhere_message "no instance in the catalogue holds deepseek-v3"
  cost --model deepseek-v3 --quant fp32)
cli_plan_exit(cli_plan_cost_unknown_option 2 cost --model llama-3.1-8b --quant Q4_K_M --frobnicate)
cli_plan_exit(cli_plan_cost_bad_objective 2 cost --model llama-3.1-8b --quant Q4_K_M --objective cheapest)
cli_plan_exit(cli_plan_cost_bad_number 2 cost --model llama-3.1-8b --quant Q4_K_M --batch -1)
cli_plan_exit(cli_plan_cost_unknown_model 2 cost --model llama-9-8b --quant Q4_K_M)

# ---- --spread -------------------------------------------------------------------------------
# One copy over all eight H100s: 8-way tensor parallel over their NVLink, one replica (the
# default is the fewest devices that hold 70B in bf16, two, copied four times).
cli_plan_output(cli_plan_spread
  "strategy: tensor_parallel: 8 device\\(s\\) per replica \\(tensor-parallel 8, 1 stage\\(s\\)\\).*\\(spread over every device\\)\n"
  plan --device "H100 SXM" --count 8 --model llama-3.1-70b --quant bf16 --spread)

# ---- JSON documents -------------------------------------------------------------------------
if(AI_HWACCEL_JSON_FOUND)
  cli_plan_output(cli_plan_estimate_json
    "\"count\": 8,.*\"decode_tokens_per_second\": [0-9.]+,.*\"device\": \"NVIDIA H100 SXM5 80GB\",.*\"estimate\": true,\n  \"fits\": true,.*\"kv_cache_bytes\": [0-9]+,.*\"total_bytes\": [0-9]+,.*\"weights_bytes\": [0-9]+.*\"model\": \"llama-3.1-70b\",.*\"prefill_tokens_per_second\": [0-9.]+,.*\"strategy\": \"tensor_parallel\""
    estimate --device "H100 SXM" --count 8 --model llama-3.1-70b --quant bf16 --json)
  cli_plan_output(cli_plan_estimate_json_link_group
    "\"link\": \"nvlink\",\n  \"link_group\": 8,"
    estimate --device "H100 SXM" --count 12 --model llama-3.1-70b --quant bf16 --json)
  # DeepSeek V3: a token reads 37 B of its 671 B parameters; its latent attention caches
  # 512 + 64 values per token and layer. A dense model reads all of its parameters.
  cli_plan_output(cli_plan_estimate_json_moe
    "\"active_parameters\": 37000000000,\n.*\"latent_kv_values\": 576,"
    estimate --device "H100 SXM" --count 8 --model deepseek-v3 --quant Q4_K_M --json)
  cli_plan_output(cli_plan_estimate_json_dense
    "\"active_parameters\": 8030261248,\n.*\"parameters\": 8030261248,.*\"latent_kv_values\": 0,"
    estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --json)
  cli_plan_output(cli_plan_estimate_json_prompt_depth "\"prompt\": 512,\n  \"prompt_depth\": 4096,"
    estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --context 8k --prompt 512 --prompt-depth 4k --json)
  cli_plan_output(cli_plan_plan_json_prompt_depth "\"prompt\": 1024,\n  \"prompt_depth\": 1024,"
    plan --device "RTX 4090" --count 2 --model llama-3-70b --quant Q4_K_M --context 2k --prompt-depth 1k --json)
  cli_plan_output(cli_plan_plan_json_quant_list "\"quant\": \"Q4_K_M\",\n  \"quant_chosen\": \"auto_from_list\","
    plan --device "RTX 4090" --count 2 --model llama-3.1-70b --quant Q8_0,Q4_K_M,Q2_K --json)
  # Not fitting still prints the document, fits false and rates null.
  cli_plan_output(cli_plan_estimate_json_fits_nowhere
    "\"decode_tokens_per_second\": null,.*\"fits\": false,.*\"strategy\": \"none\""
    estimate --device "H100 SXM" --model llama-3.1-70b --quant bf16 --json)
  cli_plan_exit(cli_plan_estimate_json_fits_nowhere_exit 1
    estimate --device "H100 SXM" --model llama-3.1-70b --quant bf16 --json)
  # Several formats: the shared fields once, each format's own under "formats". Rates are
  # rounded to 0.01 and print so: no "4616.7300000000005" (a rounding to hundredths that
  # multiplied by 0.01 printed such tails; over every format of four devices one shows).
  cli_plan_output(cli_plan_estimate_json_formats
    "\"formats\": \\[\n    {\n      \"bits_per_weight\": 4\\.8993[0-9]*,\n      \"decode_tokens_per_second\": [0-9.]+,.*\"quant\": \"Q4_K_M\",.*\"bits_per_weight\": 16\\.0,.*\"quant\": \"BF16\",.*\"usable_bytes\": [0-9]+\n}"
    estimate --device "RTX 4090" --model llama-3.1-8b --quant Q4_K_M,bf16 --json)
  foreach(_dev IN ITEMS "RTX 4090" "H100 SXM" "MI300X" "A100 PCIe 80GB")
    string(MAKE_C_IDENTIFIER "${_dev}" _id)
    add_test(NAME cli_plan_estimate_json_rates_rounded_${_id}
             COMMAND ai_hwaccel_cli estimate --device "${_dev}" --model llama-3.1-8b --quant all --json)
    set_tests_properties(cli_plan_estimate_json_rates_rounded_${_id} PROPERTIES
      PASS_REGULAR_EXPRESSION "\"prefill_tokens_per_second\": [0-9]+"
      FAIL_REGULAR_EXPRESSION "tokens_per_second\": [0-9]+\\.[0-9][0-9][0-9]")
  endforeach()
  # The captured HGX machine: eight H100s on NVSwitch, 70B in bf16 with data-parallel
  # replicas of a tensor-parallel layout; every shard holds all 80 layers.
  cli_plan_output(cli_plan_plan_json_root
    "\"devices_from\": \"detected\",.*\"fits\": true,.*\"quant\": \"BF16\",\n  \"quant_chosen\": \"auto\",.*\"first_layer\": 0,.*\"last_layer\": 80,.*\"strategy\": \"tensor_parallel\""
    plan --root "${_hgx}" --model llama-3.1-70b --json)
  # Llama 3.1 70B at 128k context on eight TPU v5e chips (115 GiB usable): INT8 (70 GiB
  # of weights, 40 GiB of KV cache) fits tensor parallel over ICI. llama.cpp's formats
  # (Q8_0, Q6_K) are not candidates on a TPU.
  cli_plan_output(cli_plan_plan_json_auto_tensor_parallel
    "\"fits\": true,.*\"quant\": \"INT8\",\n  \"quant_chosen\": \"auto\",.*\"strategy\": \"tensor_parallel\""
    plan --device "TPU v5e" --count 8 --model llama-3.1-70b --context 128k --json)
  cli_plan_output(cli_plan_plan_json_fits_nowhere "\"fits\": false,.*\"outcome\": \"too_large\",.*\"shards\": \\[\\]"
    plan --device "RTX 4090" --model llama-3.1-405b --quant bf16 --json)
  # The links and the parts of a decode step: 405B in BF16 on two 8-GPU boards is tensor
  # parallel over each board's NVLink and a pipeline over PCIe between them.
  cli_plan_output(cli_plan_plan_json_links
    "\"candidate_devices\": 16,.*\"decode_compute_seconds\": [0-9.e-]+,\n  \"decode_pipeline_seconds\": [0-9.e-]+,\n  \"decode_tensor_seconds\": [0-9.e-]+,.*\"pipeline_link\": {\n    \"gbps\": [0-9.]+,\n    \"kind\": \"pcie\"\n  },.*\"tensor_link\": {\n    \"gbps\": 450\\.0,\n    \"kind\": \"nvlink\"\n  },\n  \"tensor_parallel\": 8,\n  \"truncated\": false"
    plan --device "H100 SXM" --count 16 --model llama-3.1-405b --quant bf16 --json)
  cli_plan_output(cli_plan_plan_json_no_links "\"pipeline_link\": null,.*\"tensor_link\": null"
    plan --device "RTX 4090" --model llama-3.1-8b --quant Q4_K_M --json)
  cli_plan_output(cli_plan_training_json
    "\"breakdown\": {\n    \"activations_bytes\": [0-9]+,.*\"optimizer_bytes\": [0-9]+,.*\"device\": \"NVIDIA GeForce RTX 4090\",.*\"fits\": (true|false),.*\"method\": \"qlora\",.*\"peak_memory_bytes\": [0-9]+,.*\"trainable_parameters\": [0-9]+"
    training --model llama-3.1-8b --method qlora --device "RTX 4090" --json)
  cli_plan_output(cli_plan_cost_json
    "\"fits\": true,\n  \"instance\": {.*\"price_per_hour_usd\": [0-9.]+,.*\"price_source\": \"https://.*\"usd_per_million_output_tokens\": [0-9.]+.*\"objective\": \"tokens\""
    cost --model llama-3.1-8b --quant Q4_K_M --objective tokens --json)
  cli_plan_output(cli_plan_cost_json_all "\"instances\": \\[\n    {"
    cost --model llama-3.1-8b --quant Q4_K_M --all --json)
endif()
# Narrowing the table: providers and price dates.
cli_plan_output(cli_plan_cost_provider "cheapest by price per hour: [^ ]+ \\(gcp, "
  cost --model llama-3.1-8b --quant bf16 --provider gcp)
cli_plan_exit(cli_plan_cost_provider_unknown 2 cost --model llama-3.1-8b --quant bf16 --provider ibm)
# An empty name in the list is refused wherever it stands.
cli_plan_exit(cli_plan_cost_provider_trailing_comma 2 cost --model llama-3.1-8b --quant bf16 --provider aws,)
cli_plan_exit(cli_plan_cost_provider_leading_comma 2 cost --model llama-3.1-8b --quant bf16 --provider ,aws)
# A date after every row's leaves no row: said so, not that no instance holds the model.
cli_plan_output(cli_plan_cost_since_no_rows "no catalogue row is priced on or after 2999-01-01"
  cost --model llama-3.1-8b --quant bf16 --since 2999-01-01)
cli_plan_exit(cli_plan_cost_since_bad 2 cost --model llama-3.1-8b --quant bf16 --since 2024-1-1)
cli_plan_exit(cli_plan_cost_since_future 1 cost --model llama-3.1-8b --quant bf16 --since 2999-01-01)

# ---- options and names as users write them -----------------------------------------------------
# `--name=VALUE` is read as `--name VALUE`, as detect reads it; an empty value or one that
# is the next option is missing, not taken.
cli_plan_output(cli_plan_estimate_equals "device: NVIDIA H100 SXM5 80GB\n.*shape: context 8192 tokens, prompt 1024 tokens.*fits: yes"
  estimate "--device=H100 SXM" --model=llama-3.1-8b --quant=bf16 --context=8k --prompt=1k)
cli_plan_exit(cli_plan_estimate_equals_empty 2 estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --context=)
cli_plan_output(cli_plan_estimate_value_is_option "--context needs a value"
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --context --json)
cli_plan_output(cli_plan_estimate_equals_flag "--json takes no value"
  estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --json=yes)
# A name that several catalogue devices answer to is ambiguous, and the message lists them
# (not "unknown device"); a run-together name finds the device it names.
cli_plan_exit(cli_plan_estimate_ambiguous_device 2 estimate --device H100 --model llama-3.1-8b --quant bf16)
cli_plan_output(cli_plan_estimate_ambiguous_device_message
  "device 'H100' could be any of [0-9]+ catalogue devices: [^\n]*\"NVIDIA H100 SXM5 80GB\""
  estimate --device H100 --model llama-3.1-8b --quant bf16)
cli_plan_output(cli_plan_estimate_run_together_device "\"Intel Gaudi 3 HL-325L\""
  estimate --device gaudi3 --model llama-3.1-8b --quant bf16)
# Two digits swapped are one typo: the device meant comes first. (No ';' in the regex: it
# would make two expressions, either of which passes.)
cli_plan_output(cli_plan_estimate_swapped_digits "close catalogue names: \"NVIDIA GeForce RTX 4090\""
  estimate --device "RTX 4009" --model llama-3.1-8b --quant bf16)
# A date the calendar does not have is a bad value, not a bound compared as text.
cli_plan_exit(cli_plan_cost_since_no_such_day 2 cost --model llama-3.1-8b --quant bf16 --since 2024-02-30)
cli_plan_exit(cli_plan_cost_since_month_13 2 cost --model llama-3.1-8b --quant bf16 --since 2024-13-01)
cli_plan_exit(cli_plan_cost_since_leap_day 0 cost --model llama-3.1-8b --quant bf16 --since 2024-02-29)
# A provider the price catalogue has no row of (none for OCI in plan/cost.hpp as this is
# written: change the provider here when one is added) finds nothing, and the message
# says why instead of "no instance holds the model".
cli_plan_exit(cli_plan_cost_provider_without_rows 1 cost --model llama-3.1-8b --quant bf16 --provider oci)
cli_plan_output(cli_plan_cost_provider_without_rows_message "the catalogue has no instance of oci \\(its providers: aws"
  cost --model llama-3.1-8b --quant bf16 --provider oci)
# --free-memory plans on what the devices have free now. The captured TPU v5p host's two
# busiest chips hold 58 and 60 GiB of their 95 GiB: Llama 3.1 70B in BF16 fits the idle
# host (tensor parallel over pairs), and in INT8 over all four chips when what is in use
# is taken off.
set(_tpu "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-tpu-v5p-host")
cli_plan_output(cli_plan_plan_whole_memory "quantization: BF16 \\(auto"
  plan --root "${_tpu}" --model llama-3.1-70b)
cli_plan_output(cli_plan_plan_free_memory "quantization: INT8 \\(auto.*tensor-parallel 4"
  plan --root "${_tpu}" --model llama-3.1-70b --free-memory)
cli_plan_output(cli_plan_plan_free_memory_bf16 "fits: no: the model does not fit"
  plan --root "${_tpu}" --model llama-3.1-70b --quant bf16 --free-memory)
cli_plan_exit(cli_plan_plan_free_memory_described 2 plan --device "RTX 4090" --model llama-3.1-8b --free-memory)
# --bandwidth gives described devices the memory bandwidth their row lacks (Apple did not
# publish the M1's): decode goes from unknown to a rate. Bad values and --bandwidth without
# --device are usage errors.
cli_plan_output(cli_plan_estimate_no_bandwidth "decode: unknown \\(no memory bandwidth is known for Apple M1 8-core GPU\\)"
  estimate --device "Apple M1 8-core" --memory 16GiB --model llama-2-7b --quant q4_0)
cli_plan_output(cli_plan_estimate_bandwidth "decode: [0-9.]+ tok/s per sequence"
  estimate --device "Apple M1 8-core" --memory 16GiB --bandwidth 68.25 --model llama-2-7b --quant q4_0)
cli_plan_output(cli_plan_estimate_bandwidth_unit "decode: [0-9.]+ tok/s per sequence"
  estimate --device "Apple M1 8-core" --memory 16GiB --bandwidth 68.25GB/s --model llama-2-7b --quant q4_0)
cli_plan_output(cli_plan_estimate_bandwidth_bad "--bandwidth: 'fast' is not a bandwidth in GB/s from 0.001"
  estimate --device "RTX 4090" --bandwidth fast --model llama-3.1-8b --quant q4_k_m)
cli_plan_exit(cli_plan_estimate_bandwidth_zero 2 estimate --device "RTX 4090" --bandwidth 0 --model llama-3.1-8b --quant q4_k_m)
# Below 1 MB/s a decode rate would round to 0, which reads as unknown: refused.
cli_plan_exit(cli_plan_estimate_bandwidth_tiny 2 estimate --device "RTX 4090" --bandwidth 0.0009 --model llama-3.1-8b --quant q4_k_m)
cli_plan_output(cli_plan_plan_bandwidth_needs_device "--bandwidth needs --device NAME"
  plan --model llama-3.1-8b --bandwidth 100)
cli_plan_output(cli_plan_plan_bandwidth "decode: [0-9.]+ tok/s per sequence"
  plan --device "Apple M1 8-core" --memory 16GiB --bandwidth 68.25 --model llama-2-7b)
# --measure-bandwidth measures this machine, for the CPU: not for described devices, not for
# a captured tree, and not without --allow-cpu (the CPU would not be in the plan).
cli_plan_output(cli_plan_plan_measure_described "--measure-bandwidth measures this machine's memory; it cannot be combined with --device"
  plan --device "RTX 4090" --model llama-3.1-8b --allow-cpu --measure-bandwidth)
cli_plan_exit(cli_plan_plan_measure_described_exit 2 plan --device "RTX 4090" --model llama-3.1-8b --allow-cpu --measure-bandwidth)
cli_plan_output(cli_plan_plan_measure_root "it cannot be combined with --root"
  plan --root "${_tpu}" --model llama-3.1-8b --allow-cpu --measure-bandwidth)
cli_plan_output(cli_plan_plan_measure_needs_cpu "--measure-bandwidth gives the CPU a decode rate; it needs --allow-cpu"
  plan --model llama-3.1-8b --measure-bandwidth)
# The one case here that runs on this machine: its CPU, given the bandwidth measured, gets
# a decode rate (a 1B model in Q4_K_M, under 1 GiB, fits any machine that runs the suite).
cli_plan_output(cli_plan_plan_measure_this_machine
  "memory bandwidth: [0-9.]+ GB/s, measured \\([0-9]+ thread\\(s\\) reading .*decode: [0-9.]+ tok/s per sequence"
  plan --model llama-3.2-1b --quant q4_k_m --allow-cpu --measure-bandwidth)
# estimate's usable memory is the planner's: an Apple GPU keeps Metal's working set,
# 2/3 of a 16 GiB machine.
cli_plan_output(cli_plan_estimate_metal_usable "usable memory: 10\\.7 GiB \\(after a 10 % headroom, within Metal's working set\\)"
  estimate --device "Apple M1 Pro 16-core" --memory 16GiB --model llama-3.2-1b --quant bf16)
# MXFP4 on a dense model is Q8_0 in llama.cpp's files, and the text says so; a mixture of
# experts keeps its experts in MXFP4 and needs no word.
cli_plan_output(cli_plan_estimate_mxfp4_dense "quantization: MXFP4\nMXFP4: llama.cpp's MXFP4 files keep MXFP4 for expert tensors"
  estimate --device B200 --model llama-3.1-8b --quant MXFP4)
cli_plan_output(cli_plan_estimate_mxfp4_moe "quantization: MXFP4\nshape:"
  estimate --device B200 --model gpt-oss-20b --quant MXFP4)
# --headroom: the share of each device's memory left free, as a percentage or a fraction.
# Llama 3.1 8B in BF16 at 32k tokens x 2 (23.5 GiB) fits a 24 GiB card only with less
# than the default 10 % kept free.
cli_plan_output(cli_plan_estimate_headroom_none "usable memory: 24\\.0 GiB \\(after a 0 % headroom\\)"
  estimate --device "RTX 4090" --model llama-3.1-8b --quant bf16 --headroom 0)
# "-0" is no headroom, not a negative zero in the text ("after a -0 % headroom" before).
cli_plan_output(cli_plan_estimate_headroom_minus_zero "usable memory: 24\\.0 GiB \\(after a 0 % headroom\\)"
  estimate --device "RTX 4090" --model llama-3.1-8b --quant bf16 --headroom -0)
cli_plan_output(cli_plan_estimate_headroom_percent "usable memory: 22\\.8 GiB \\(after a 5 % headroom\\)"
  estimate --device "RTX 4090" --model llama-3.1-8b --quant bf16 --headroom 5%)
cli_plan_exit(cli_plan_plan_headroom_default 1 plan --device "RTX 4090" --model llama-3.1-8b --quant bf16 --context 32k --batch 2)
cli_plan_exit(cli_plan_plan_headroom_small 0
  plan --device "RTX 4090" --model llama-3.1-8b --quant bf16 --context 32k --batch 2 --headroom 0.01)
cli_plan_output(cli_plan_headroom_bad "--headroom: '10' is not a share of memory from 0 to below 1"
  plan --device "RTX 4090" --model llama-3.1-8b --headroom 10)
cli_plan_exit(cli_plan_headroom_bad_exit 2 estimate --device "RTX 4090" --model llama-3.1-8b --quant bf16 --headroom 100%)
# cost --headroom: the instance keeps that share of its accelerators' memory free (2 x 80 GiB
# A100 whole at 0, 144 GiB at the default 10 %).
cli_plan_output(cli_plan_cost_headroom "2 x NVIDIA A100 PCIe 80GB, 160\\.0 GiB usable for the model"
  cost --model llama-3.1-70b --quant bf16 --headroom 0)
cli_plan_output(cli_plan_cost_headroom_default "2 x NVIDIA A100 PCIe 80GB, 144\\.0 GiB usable for the model"
  cost --model llama-3.1-70b --quant bf16)
cli_plan_exit(cli_plan_cost_headroom_bad 2 cost --model llama-3.1-70b --quant bf16 --headroom 1)
