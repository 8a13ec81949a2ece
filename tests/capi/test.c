/* The C ABI as a C program meets it: detection of this machine, a registry read from a
 * captured machine, JSON both ways, an estimate checked against physical bounds, and
 * every error path. Written in C99 and compiled as C, so the header is proven to be C.
 *
 * usage: capi_test [MACBOOK_JSON WORKSTATION_JSON [IB_NODE_JSON HGX_JSON [INF2_JSON]]]
 *   the files are the expected.json of tests/machines/handmade-macbook-pro-m1pro,
 *   handmade-workstation-rtx4090, handmade-ib-cluster-node-8gpu,
 *   handmade-hgx-h100-8gpu-nvswitch and handmade-inf2-host (each checked when given). */
#include "ai_hwaccel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, \
                    #cond, ahw_last_error());                                                \
            ++failures;                                                                      \
        }                                                                                    \
    } while (0)

/* The whole file as a NUL-terminated string, or NULL. */
static char* read_file(const char* path) {
    FILE* f = fopen(path, "rb");
    char* buf;
    long size;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    buf = (char*)malloc((size_t)size + 1);
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[size] = '\0';
    fclose(f);
    return buf;
}

/* A registry read from a JSON file, or NULL: where the file cannot be read or parsed (a
 * failed check), and where the library was built without JSON (nothing to check). */
static ahw_registry* load_registry(const char* path) {
    char* text = read_file(path);
    ahw_registry* reg = NULL;
    ahw_status s;
    CHECK(text != NULL);
    if (!text) return NULL;
    s = ahw_registry_from_json(text, &reg);
    free(text);
    if (s == AHW_ERR_UNSUPPORTED) return NULL;
    CHECK(s == AHW_OK && reg != NULL);
    return reg;
}

static void print_registry(const ahw_registry* reg) {
    size_t i;
    for (i = 0; i < ahw_device_count(reg); ++i) {
        ahw_device_info d;
        CHECK(ahw_device_get(reg, i, &d) == AHW_OK);
        printf("  %-12s %-8s %-44s", d.kind, d.vendor, d.name);
        if (d.memory_known) printf(" %6.1f GiB (%s)", (double)d.memory_bytes / (1024.0 * 1024 * 1024), d.memory_origin);
        if (d.bandwidth_known) printf(" %7.1f GB/s", d.memory_bandwidth_gbps);
        if (d.pci[0]) printf(" pci %s", d.pci);
        printf("%s%s\n", d.available ? "" : " (unavailable)", d.software ? " (software)" : "");
    }
    for (i = 0; i < ahw_warning_count(reg); ++i) {
        ahw_warning_info w;
        CHECK(ahw_warning_get(reg, i, &w) == AHW_OK);
        printf("  warning: %s%s%s: %s: %s\n", w.backend, w.backend[0] ? ": " : "", w.subject, w.kind, w.message);
    }
}

/* This machine: whatever it holds, the registry is consistent and the CPU is in it. */
static void test_detect(void) {
    ahw_registry* reg = ahw_detect();
    ahw_device_info d;
    ahw_warning_info w;
    size_t i, cpus = 0;
    CHECK(reg != NULL);
    if (!reg) return;
    printf("this machine (%lu devices, %lu warnings):\n", (unsigned long)ahw_device_count(reg),
           (unsigned long)ahw_warning_count(reg));
    print_registry(reg);
    CHECK(ahw_device_count(reg) >= 1);
    for (i = 0; i < ahw_device_count(reg); ++i) {
        CHECK(ahw_device_get(reg, i, &d) == AHW_OK);
        CHECK(d.kind[0] != '\0' && d.vendor[0] != '\0');
        CHECK(d.memory_known == 0 || d.memory_known == 1);
        CHECK(d.memory_known || d.memory_bytes == 0);
        CHECK(d.bandwidth_known || d.memory_bandwidth_gbps == 0);
        CHECK(strlen(d.name) < sizeof d.name && strlen(d.pci) < sizeof d.pci);
        if (strcmp(d.kind, "cpu") == 0) ++cpus;
    }
    CHECK(cpus == 1);
    /* The CPU is always there and available, so there is a best device. */
    {
        size_t best = 0;
        CHECK(ahw_best_device(reg, &best) == AHW_OK);
        CHECK(ahw_device_get(reg, best, &d) == AHW_OK && d.available == 1);
        CHECK(ahw_has_accelerator(reg) == (strcmp(d.kind, "cpu") != 0));
        CHECK(ahw_total_memory(reg) >= ahw_accelerator_memory(reg));
        CHECK(ahw_best_device(reg, NULL) == AHW_ERR_INVALID_ARGUMENT);
    }
    /* A small model in Q4_K_M fits this machine when the CPU may take part. */
    {
        ahw_plan_result p;
        CHECK(ahw_plan(reg, "llama-3.2-1b", "q4_k_m", 4096, 1, 1, &p) == AHW_OK);
        printf("plan llama-3.2-1b Q4_K_M, CPU allowed: %s on %s\n", p.outcome, p.kind[0] ? p.kind : "-");
        CHECK(p.fits == 1 && p.devices >= 1 && strcmp(p.quant, "Q4_K_M") == 0);
    }
    /* Past the end: an error, nothing written. */
    memset(&d, 0x5a, sizeof d);
    CHECK(ahw_device_get(reg, ahw_device_count(reg), &d) == AHW_ERR_OUT_OF_RANGE);
    CHECK(strstr(ahw_last_error(), "ahw_device_get") != NULL);
    CHECK(d.kind[0] == 0x5a);
    CHECK(ahw_warning_get(reg, ahw_warning_count(reg), &w) == AHW_ERR_OUT_OF_RANGE);
    ahw_registry_free(reg);
}

/* JSON out, JSON in, JSON out again: the same text. */
static void test_json_round_trip(void) {
    ahw_registry* reg = ahw_detect();
    ahw_registry* back = NULL;
    char* first = NULL;
    char* second = NULL;
    ahw_status s = ahw_registry_to_json(reg, &first);
    if (s == AHW_ERR_UNSUPPORTED) {
        printf("JSON: not compiled in (%s)\n", ahw_last_error());
        CHECK(first == NULL);
        CHECK(ahw_registry_from_json("{}", &back) == AHW_ERR_UNSUPPORTED && back == NULL);
        ahw_registry_free(reg);
        return;
    }
    CHECK(s == AHW_OK && first != NULL);
    if (first) {
        CHECK(strstr(first, "\"schema_version\"") != NULL);
        CHECK(ahw_registry_from_json(first, &back) == AHW_OK && back != NULL);
        CHECK(ahw_device_count(back) == ahw_device_count(reg));
        CHECK(ahw_warning_count(back) == ahw_warning_count(reg));
        CHECK(ahw_registry_to_json(back, &second) == AHW_OK && second != NULL);
        if (second) CHECK(strcmp(first, second) == 0);
    }
    ahw_string_free(first);
    ahw_string_free(second);
    ahw_registry_free(back);
    ahw_registry_free(reg);

    /* Malformed, foreign and newer documents are refused with a message. */
    back = (ahw_registry*)&back; /* must be reset to NULL on failure */
    CHECK(ahw_registry_from_json("{\"devices\": [", &back) == AHW_ERR_PARSE);
    CHECK(back == NULL);
    CHECK(strstr(ahw_last_error(), "invalid JSON") != NULL);
    CHECK(ahw_registry_from_json("[1, 2, 3]", &back) == AHW_ERR_PARSE && back == NULL);
    CHECK(ahw_registry_from_json("{\"schema_version\": 999999}", &back) == AHW_ERR_PARSE && back == NULL);
    CHECK(strstr(ahw_last_error(), "schema_version") != NULL);

    /* A registry without devices has no best device and no memory. */
    CHECK(ahw_registry_from_json("{\"schema_version\": 1}", &back) == AHW_OK && back != NULL);
    {
        size_t best = 7;
        CHECK(ahw_device_count(back) == 0 && ahw_has_accelerator(back) == 0 && ahw_total_memory(back) == 0);
        CHECK(ahw_best_device(back, &best) == AHW_ERR_OUT_OF_RANGE && best == 7);
        CHECK(strstr(ahw_last_error(), "no device") != NULL);
    }
    ahw_registry_free(back);
}

/* A captured MacBook: the CPU's memory from sysctl, unified memory, no warning, no PCI. */
static void test_macbook(const char* path) {
    ahw_registry* reg = load_registry(path);
    ahw_device_info d;
    ahw_warning_info w;
    if (!reg) return;
    printf("%s:\n", path);
    print_registry(reg);
    CHECK(ahw_device_count(reg) == 3);
    CHECK(ahw_device_get(reg, 0, &d) == AHW_OK);
    CHECK(strcmp(d.kind, "cpu") == 0 && strcmp(d.name, "Apple M1 Pro") == 0);
    CHECK(d.memory_known && d.memory_bytes == 16ull * 1024 * 1024 * 1024 && strcmp(d.memory_origin, "tool") == 0);
    CHECK(ahw_device_get(reg, 1, &d) == AHW_OK);
    CHECK(strcmp(d.kind, "metal_gpu") == 0 && strcmp(d.vendor, "apple") == 0);
    CHECK(strcmp(d.name, "Apple M1 Pro") == 0);
    CHECK(d.memory_known && d.memory_bytes == 16ull * 1024 * 1024 * 1024 && strcmp(d.memory_origin, "tool") == 0);
    CHECK(d.bandwidth_known && d.memory_bandwidth_gbps == 200.0);
    CHECK(d.unified_memory == 1 && d.available == 1 && d.software == 0 && d.pci[0] == '\0');
    /* The GPU and the Neural Engine share the 16 GiB: counted once. */
    {
        size_t best = 99;
        CHECK(ahw_has_accelerator(reg) == 1);
        CHECK(ahw_accelerator_memory(reg) == 16ull * 1024 * 1024 * 1024);
        CHECK(ahw_total_memory(reg) == 16ull * 1024 * 1024 * 1024);
        CHECK(ahw_best_device(reg, &best) == AHW_OK && best == 1);
    }
    CHECK(ahw_warning_count(reg) == 0);
    CHECK(ahw_warning_get(reg, 0, &w) == AHW_ERR_OUT_OF_RANGE);
    ahw_registry_free(reg);
}

/* A captured Inferentia host without neuron-ls: one warning, with its backend. */
static void test_warning(const char* path) {
    ahw_registry* reg = load_registry(path);
    ahw_warning_info w;
    if (!reg) return;
    CHECK(ahw_warning_count(reg) == 1);
    CHECK(ahw_warning_get(reg, 0, &w) == AHW_OK);
    CHECK(strcmp(w.kind, "tool_not_found") == 0 && strcmp(w.backend, "neuron") == 0);
    CHECK(strcmp(w.subject, "neuron-ls") == 0 && strstr(w.message, "neuron-ls is not installed") != NULL && w.code == 0);
    ahw_registry_free(reg);
}

/* Two Max 1550 cards: each stack a device of 64 GiB, the card's PCI address and its stack. */
static void test_stacks(const char* path) {
    ahw_registry* reg = load_registry(path);
    ahw_device_info d;
    size_t i;
    if (!reg) return;
    CHECK(ahw_device_count(reg) == 5);
    CHECK(ahw_device_get(reg, 0, &d) == AHW_OK && strcmp(d.kind, "cpu") == 0 && d.stack == -1);
    for (i = 1; i < 5; ++i) {
        CHECK(ahw_device_get(reg, i, &d) == AHW_OK);
        CHECK(strcmp(d.kind, "intel_gpu") == 0 && d.stack == (int)((i - 1) % 2));
        CHECK(strcmp(d.pci, i < 3 ? "0000:29:00.0" : "0000:9a:00.0") == 0);
        CHECK(d.memory_known && d.memory_bytes == 64ull * 1024 * 1024 * 1024);
    }
    ahw_registry_free(reg);
}

/* A captured workstation: PCI addresses come through as text. */
static void test_workstation(const char* path) {
    ahw_registry* reg = load_registry(path);
    ahw_device_info d;
    if (!reg) return;
    printf("%s:\n", path);
    print_registry(reg);
    CHECK(ahw_device_get(reg, 1, &d) == AHW_OK);
    CHECK(strcmp(d.kind, "cuda_gpu") == 0 && strcmp(d.pci, "0000:01:00.0") == 0);
    CHECK(ahw_device_get(reg, 3, &d) == AHW_OK);
    CHECK(d.software == 1);
    /* The RTX 4090 is the best device; the software renderer counts for nothing. */
    {
        size_t best = 99;
        const unsigned long long gib = 1024ull * 1024 * 1024;
        CHECK(ahw_has_accelerator(reg) == 1);
        CHECK(ahw_best_device(reg, &best) == AHW_OK && best == 1);
        printf("accelerator memory %.1f GiB, all devices %.1f GiB\n", (double)ahw_accelerator_memory(reg) / (double)gib,
               (double)ahw_total_memory(reg) / (double)gib);
        /* The RTX 4090's 24 GiB and the 62.6 GiB of host memory the integrated GPU is given. */
        CHECK(ahw_accelerator_memory(reg) >= 86 * gib && ahw_accelerator_memory(reg) < 87 * gib);
        CHECK(ahw_total_memory(reg) > ahw_accelerator_memory(reg));
    }
    /* Plans on the captured workstation: Llama 3.1 8B fits the RTX 4090 whole; 70B in BF16
     * fits nothing (140 GB of weights); the 4090 cannot hold 70B even in its smallest
     * format. */
    {
        ahw_plan_result p;
        CHECK(ahw_plan(reg, "llama-3.1-8b", "auto", 4096, 1, 0, &p) == AHW_OK);
        printf("plan llama-3.1-8b auto: %s %s on %s, %u device(s), decode %.1f tok/s\n", p.outcome, p.quant, p.kind,
               p.devices, p.decode_tokens_per_second);
        CHECK(p.fits == 1 && strcmp(p.outcome, "fits") == 0 && strcmp(p.model, "llama-3.1-8b") == 0);
        CHECK(strcmp(p.kind, "cuda_gpu") == 0 && strcmp(p.strategy, "single_device") == 0);
        CHECK(p.replicas == 1 && p.stages == 1 && p.tensor_parallel == 1 && p.devices == 1);
        CHECK(p.total_bytes == p.weights_bytes + p.kv_cache_bytes + p.overhead_bytes);
        CHECK(p.total_bytes <= p.usable_bytes);
        CHECK(p.decode_tokens_per_second > 0 && p.prefill_tokens_per_second > p.decode_tokens_per_second);
        CHECK(p.aggregate_decode_tokens_per_second == p.decode_tokens_per_second);

        CHECK(ahw_plan(reg, "llama-3.1-70b", "bf16", 4096, 1, 0, &p) == AHW_OK);
        CHECK(p.fits == 0 && strcmp(p.outcome, "too_large") == 0 && strcmp(p.quant, "BF16") == 0);
        CHECK(strcmp(p.strategy, "none") == 0 && p.devices == 0 && p.decode_tokens_per_second == 0);
        CHECK(p.weights_bytes > 100ull * 1000 * 1000 * 1000);

        CHECK(ahw_plan(reg, "llama-3.1-405b", NULL, 4096, 1, 0, &p) == AHW_OK);
        CHECK(p.fits == 0 && strcmp(p.outcome, "too_large") == 0);
    }
    ahw_registry_free(reg);
}

/* Two 8 x H100 nodes with InfiniBand (400 Gb/s ports: 50 GB/s each way) and one without
 * an inter-node port. Llama 3.1 405B in bf16 (about 759 GiB) needs two nodes (576 GiB each
 * after the headroom): across the two IB nodes it is 8-way tensor parallel in each and one
 * hop between; the IB node and the bare one are not joined unless a network is assumed. */
static void test_cluster(const char* ib_path, const char* bare_path) {
    ahw_registry* ib = load_registry(ib_path);
    ahw_registry* bare = ib ? load_registry(bare_path) : NULL;
    ahw_plan_result p;
    ahw_cluster_result c;
    if (!ib || !bare) {
        ahw_registry_free(ib);
        return;
    }
    {
        const ahw_registry* both_ib[2];
        const ahw_registry* mixed[2];
        both_ib[0] = ib;
        both_ib[1] = ib;
        mixed[0] = ib;
        mixed[1] = bare;

        CHECK(ahw_plan_cluster(both_ib, 2, 0, "llama-3.1-405b", "bf16", 4096, 1, 0, &p, &c) == AHW_OK);
        printf("cluster 405B bf16 on 2 IB nodes: %s %s tp %u x %u stage(s), %u hop(s) over %s at %.1f GB/s, "
               "decode %.1f tok/s\n", p.outcome, p.strategy, p.tensor_parallel, p.stages, c.inter_node_hops,
               c.inter_node_link, c.inter_node_gbps, p.decode_tokens_per_second);
        CHECK(p.fits == 1 && strcmp(p.strategy, "tensor_pipeline") == 0);
        CHECK(p.tensor_parallel == 8 && p.stages == 2 && p.devices == 16);
        CHECK(c.nodes == 2 && c.nodes_joined == 2 && c.joined == 1 && c.nodes_per_replica == 2);
        CHECK(c.inter_node_hops == 1 && strcmp(c.inter_node_link, "infiniband") == 0 && c.inter_node_gbps == 50.0);
        CHECK(c.decode_inter_node_seconds > 0 && c.decode_inter_node_seconds < 1.0 / p.decode_tokens_per_second);

        CHECK(ahw_plan_cluster(mixed, 2, 0, "llama-3.1-405b", "bf16", 4096, 1, 0, &p, &c) == AHW_OK);
        CHECK(p.fits == 0 && c.joined == 0 && c.nodes_joined == 1 && c.inter_node_hops == 0);
        CHECK(strcmp(c.inter_node_link, "") == 0);
        /* 25 Gb/s assumed between them: joined, the hop at 3.125 GB/s each way. */
        CHECK(ahw_plan_cluster(mixed, 2, 25, "llama-3.1-405b", "bf16", 4096, 1, 0, &p, &c) == AHW_OK);
        CHECK(p.fits == 1 && c.joined == 1 && strcmp(c.inter_node_link, "ethernet") == 0);
        CHECK(c.inter_node_gbps == 3.125);
        /* auto, unjoined: a smaller format on the IB node alone; cluster_out may be NULL. */
        CHECK(ahw_plan_cluster(mixed, 2, 0, "llama-3.1-405b", NULL, 4096, 1, 0, &p, NULL) == AHW_OK);
        CHECK(p.fits == 1 && strcmp(p.quant, "BF16") != 0 && p.devices <= 8);
        /* A list over the joined IB nodes: the best of the formats listed. */
        CHECK(ahw_plan_cluster(both_ib, 2, 0, "llama-3.1-405b", "q4_k_m,q8_0", 4096, 1, 0, &p, &c) == AHW_OK);
        CHECK(p.fits == 1 && strcmp(p.quant, "Q8_0") == 0 && c.joined == 1);
        CHECK(ahw_plan_cluster(both_ib, 2, 0, "llama-3.1-405b", "q8_0,auto", 4096, 1, 0, &p, &c) ==
              AHW_ERR_INVALID_ARGUMENT);

        CHECK(ahw_plan_cluster(NULL, 2, 0, "llama-3.1-405b", NULL, 4096, 1, 0, &p, &c) == AHW_ERR_INVALID_ARGUMENT);
        CHECK(ahw_plan_cluster(mixed, 0, 0, "llama-3.1-405b", NULL, 4096, 1, 0, &p, &c) == AHW_ERR_INVALID_ARGUMENT);
        mixed[1] = NULL;
        CHECK(ahw_plan_cluster(mixed, 2, 0, "llama-3.1-405b", NULL, 4096, 1, 0, &p, &c) == AHW_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ahw_last_error(), "nodes[1]") != NULL);
        CHECK(ahw_plan_cluster(both_ib, 2, -1, "llama-3.1-405b", NULL, 4096, 1, 0, &p, &c) ==
              AHW_ERR_INVALID_ARGUMENT);
        CHECK(ahw_plan_cluster(both_ib, 2, 0, "no-such-model-1b", NULL, 4096, 1, 0, &p, &c) == AHW_ERR_UNKNOWN_MODEL);
        CHECK(ahw_plan_cluster(both_ib, 2, 0, "llama-3.1-405b", "q4_k_x", 4096, 1, 0, &p, &c) ==
              AHW_ERR_UNKNOWN_QUANT);
        CHECK(ahw_plan_cluster(both_ib, 2, 0, "llama-3.1-405b", NULL, 0, 1, 0, &p, &c) == AHW_ERR_INVALID_ARGUMENT);
    }
    ahw_registry_free(ib);
    ahw_registry_free(bare);
}

/* Llama 3.1 8B in bf16 on an H100 SXM: fits, and decodes below the memory roofline. */
static void test_estimate(void) {
    ahw_estimate_result r;
    double roofline;
    CHECK(ahw_estimate("H100 SXM", "llama-3.1-8b", "bf16", 4096, 1, &r) == AHW_OK);
    printf("estimate: %s on %s in %s: %.2f GiB total (weights %.2f GiB), usable %.2f GiB, fits %d, "
           "decode %.1f tok/s, prefill %.0f tok/s\n",
           r.model, r.device, r.quant, (double)r.total_bytes / (1024.0 * 1024 * 1024),
           (double)r.weights_bytes / (1024.0 * 1024 * 1024), (double)r.usable_bytes / (1024.0 * 1024 * 1024), r.fits,
           r.decode_tokens_per_second, r.prefill_tokens_per_second);
    CHECK(strcmp(r.model, "llama-3.1-8b") == 0 && strcmp(r.quant, "BF16") == 0);
    CHECK(strstr(r.device, "H100") != NULL);
    /* bf16 is two bytes per weight, exactly. */
    CHECK(r.parameters > 7000000000ull && r.parameters < 9000000000ull);
    CHECK(r.weights_bytes == 2 * r.parameters);
    CHECK(r.total_bytes == r.weights_bytes + r.kv_cache_bytes + r.overhead_bytes);
    CHECK(r.kv_cache_bytes > 0 && r.overhead_bytes > 0);
    CHECK(r.device_memory_bytes > r.usable_bytes && r.usable_bytes > r.total_bytes);
    CHECK(r.format_supported == 1 && r.fits == 1);
    /* Decode reads every weight per token: it cannot beat bandwidth / weight bytes, and a
     * sane model of a memory-bound decoder lands within a few times of that bound. */
    CHECK(r.memory_bandwidth_gbps > 0);
    roofline = r.memory_bandwidth_gbps * 1e9 / (double)r.weights_bytes;
    CHECK(r.decode_tokens_per_second > 0.25 * roofline);
    CHECK(r.decode_tokens_per_second < roofline);
    /* Prefill is compute-bound and batches the prompt: far faster than decode. */
    CHECK(r.prefill_tokens_per_second > 10 * r.decode_tokens_per_second);

    /* A longer context costs proportionally more KV cache, and decodes slower. */
    {
        ahw_estimate_result longer;
        CHECK(ahw_estimate("h100-sxm", "Llama 3.1 8B", "BF16", 8192, 1, &longer) == AHW_OK);
        CHECK(longer.kv_cache_bytes == 2 * r.kv_cache_bytes);
        CHECK(longer.decode_tokens_per_second < r.decode_tokens_per_second);
    }
    /* 405B in bf16 (810 GB of weights) cannot fit one 80 GB device. */
    {
        ahw_estimate_result big;
        CHECK(ahw_estimate("H100 SXM", "llama-3.1-405b", "bf16", 4096, 1, &big) == AHW_OK);
        CHECK(big.fits == 0 && big.total_bytes > big.device_memory_bytes);
        /* no speed for what does not fit, as the CLI and Python have it */
        CHECK(big.decode_tokens_per_second == 0 && big.prefill_tokens_per_second == 0);
    }
}

/* A bandwidth in place of the catalogue's moves decode, which reads every weight per
 * token, and nothing else. */
static void test_estimate_at_bandwidth(void) {
    ahw_estimate_result rated, slower;
    double ratio;
    CHECK(ahw_estimate("RTX 4090", "llama-3.1-8b", "q4_k_m", 4096, 1, &rated) == AHW_OK);
    CHECK(ahw_estimate_at_bandwidth("RTX 4090", "llama-3.1-8b", "q4_k_m", 4096, 1, rated.memory_bandwidth_gbps / 2,
                                    &slower) == AHW_OK);
    CHECK(slower.memory_bandwidth_gbps == rated.memory_bandwidth_gbps / 2);
    CHECK(slower.total_bytes == rated.total_bytes && slower.fits == rated.fits);
    CHECK(slower.prefill_tokens_per_second == rated.prefill_tokens_per_second);
    /* Half the bandwidth: slower, but not below half (the per-layer fixed cost stays). */
    ratio = slower.decode_tokens_per_second / rated.decode_tokens_per_second;
    printf("RTX 4090 at half its bandwidth: decode %.1f -> %.1f tok/s\n", rated.decode_tokens_per_second,
           slower.decode_tokens_per_second);
    CHECK(ratio > 0.5 && ratio < 0.75);
    CHECK(ahw_estimate_at_bandwidth("RTX 4090", "llama-3.1-8b", "q4_k_m", 4096, 1, 0.0, &slower) ==
          AHW_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ahw_last_error(), "bandwidth_gbps") != NULL);
    CHECK(ahw_estimate_at_bandwidth("RTX 4090", "llama-3.1-8b", "q4_k_m", 4096, 1, -5.0, &slower) ==
          AHW_ERR_INVALID_ARGUMENT);
    /* The range of the CLI's --bandwidth: below 1 MB/s decode would round to 0 ("unknown"). */
    CHECK(ahw_estimate_at_bandwidth("RTX 4090", "llama-3.1-8b", "q4_k_m", 4096, 1, 1e-320, &slower) ==
          AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_estimate_at_bandwidth("RTX 4090", "llama-3.1-8b", "q4_k_m", 4096, 1, 2e6, &slower) ==
          AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_estimate_at_bandwidth("RTX 4090", "llama-3.1-8b", "q4_k_m", 4096, 1, 0.001, &slower) == AHW_OK);
    CHECK(slower.fits == 1 && slower.decode_tokens_per_second > 0);
    /* Where the prompt's pass is bound by memory, prefill follows the bandwidth too. */
    {
        ahw_estimate_result h100, slow;
        CHECK(ahw_estimate_at_bandwidth("H100 SXM", "llama-3.1-8b", "bf16", 4096, 1, 300.0, &slow) == AHW_OK);
        CHECK(ahw_estimate("H100 SXM", "llama-3.1-8b", "bf16", 4096, 1, &h100) == AHW_OK);
        CHECK(slow.prefill_tokens_per_second < h100.prefill_tokens_per_second);
    }
    CHECK(ahw_estimate_at_bandwidth("no such accelerator 9000", "llama-3.1-8b", "q4_k_m", 4096, 1, 100.0, &slower) ==
          AHW_ERR_UNKNOWN_DEVICE);
    CHECK(strstr(ahw_last_error(), "ahw_estimate_at_bandwidth") != NULL);
}

/* This machine's memory, read: a small buffer for the figure's fields, then detection with
 * the default measurement given to the CPU. */
static void test_bandwidth(void) {
    ahw_bandwidth_result b;
    ahw_registry* reg = NULL;
    size_t i, cpus_with_bandwidth = 0;
    CHECK(ahw_measure_memory_bandwidth(8u << 20, 2, 2, &b) == AHW_OK);
    printf("memory bandwidth, 8 MiB by 2 threads: %.1f GB/s\n", b.gbps);
    CHECK(b.gbps > 0 && b.threads == 2 && b.passes == 2);
    CHECK(b.bytes_per_pass == (8u << 20));
    CHECK(b.fastest_seconds > 0 && b.fastest_seconds <= b.slowest_seconds);
    /* What cannot be measured, and arguments out of range: a status and a reason. */
    memset(&b, 0x5a, sizeof b);
    CHECK(ahw_measure_memory_bandwidth(16, 4, 1, &b) == AHW_ERR_MEASUREMENT);
    CHECK(strstr(ahw_last_error(), "nothing to read") != NULL);
    CHECK(b.gbps == 0 && b.threads == 0);
    CHECK(ahw_measure_memory_bandwidth(0, 0, 1001, &b) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ahw_last_error(), "passes") != NULL);
    CHECK(ahw_measure_memory_bandwidth(0, 5000, 1, &b) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_measure_memory_bandwidth(0, 0, 0, NULL) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(ahw_status_name(AHW_ERR_MEASUREMENT), "measurement_failed") == 0);

    CHECK(ahw_detect_measured(NULL) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_detect_measured(&reg) == AHW_OK);
    CHECK(reg != NULL);
    if (!reg) return;
    for (i = 0; i < ahw_device_count(reg); ++i) {
        ahw_device_info d;
        CHECK(ahw_device_get(reg, i, &d) == AHW_OK);
        if (strcmp(d.kind, "cpu") != 0) continue;
        printf("CPU memory bandwidth, measured: %.1f GB/s\n", d.memory_bandwidth_gbps);
        if (d.bandwidth_known && d.memory_bandwidth_gbps > 0) ++cpus_with_bandwidth;
    }
    CHECK(cpus_with_bandwidth == 1);
    ahw_registry_free(reg);
}

/* Described devices: a registry of catalogue devices, linked as they are built into
 * machines, planned on like a detected one. */
static void test_catalogue_registry(void) {
    ahw_registry* reg = (ahw_registry*)&reg;
    ahw_plan_result p;
    ahw_device_info d;
    size_t i;
    /* 16 H100 SXM are two HGX boards: tensor parallel on a board's NVSwitch, the boards
     * as pipeline stages. */
    CHECK(ahw_catalogue_registry("H100 SXM", 16, 0, &reg) == AHW_OK && reg != NULL);
    if (!reg) return;
    CHECK(ahw_device_count(reg) == 16 && ahw_has_accelerator(reg));
    CHECK(ahw_accelerator_memory(reg) == 16ull * 81559 * 1024 * 1024); /* as nvidia-smi reports 80 GiB */
    for (i = 0; i < ahw_device_count(reg); ++i) {
        CHECK(ahw_device_get(reg, i, &d) == AHW_OK);
        CHECK(d.index == i && strcmp(d.kind, "cuda_gpu") == 0 && strcmp(d.memory_origin, "catalogue") == 0);
        CHECK(d.memory_bandwidth_gbps == 3350);
    }
    CHECK(ahw_plan(reg, "llama-3.1-405b", "bf16", 4096, 1, 0, &p) == AHW_OK);
    CHECK(p.fits == 1 && strcmp(p.strategy, "tensor_pipeline") == 0);
    CHECK(p.tensor_parallel == 8 && p.stages == 2 && p.devices == 16 && p.replicas == 1);
    CHECK(p.decode_tokens_per_second > 0);
    /* "auto" takes BF16 there; a list chooses among its formats only, the most bits first
     * (spaces, repeats and empty items aside), so Q8_0 and not the Q4_K_M listed first. */
    CHECK(ahw_plan(reg, "llama-3.1-405b", NULL, 4096, 1, 0, &p) == AHW_OK);
    CHECK(p.fits == 1 && strcmp(p.quant, "BF16") == 0);
    CHECK(ahw_plan(reg, "llama-3.1-405b", "Q4_K_M, q8_0,,Q4_K_M", 4096, 1, 0, &p) == AHW_OK);
    CHECK(p.fits == 1 && strcmp(p.quant, "Q8_0") == 0 && p.tensor_parallel == 8);
    /* A list of one is that format, chosen as a list is: */
    CHECK(ahw_plan(reg, "llama-3.1-405b", "q4_k_m,", 4096, 1, 0, &p) == AHW_OK);
    CHECK(p.fits == 1 && strcmp(p.quant, "Q4_K_M") == 0);
    /* and a list none of whose formats fits says so. */
    CHECK(ahw_plan(reg, "llama-3.1-405b", "fp32,fp32", 4096, 1, 0, &p) == AHW_OK);
    CHECK(p.fits == 0 && strcmp(p.quant, "FP32") == 0 && strcmp(p.outcome, "too_large") == 0);
    CHECK(ahw_plan(reg, "llama-3.1-405b", "auto,q8_0", 4096, 1, 0, &p) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ahw_last_error(), "auto") != NULL);
    CHECK(ahw_plan(reg, "llama-3.1-405b", " , ,", 4096, 1, 0, &p) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ahw_last_error(), "names no format") != NULL);
    CHECK(ahw_plan(reg, "llama-3.1-405b", "q8_0, q9_9", 4096, 1, 0, &p) == AHW_ERR_UNKNOWN_QUANT);
    CHECK(strstr(ahw_last_error(), "'q9_9'") != NULL);
    ahw_registry_free(reg);
    /* RTX 3090s are bridged in pairs: four never make one tensor-parallel group. */
    CHECK(ahw_catalogue_registry("rtx 3090", 4, 0, &reg) == AHW_OK && reg != NULL);
    CHECK(ahw_plan(reg, "llama-3.1-70b", "q8_0", 4096, 1, 0, &p) == AHW_OK);
    CHECK(p.fits == 1 && p.tensor_parallel == 2 && p.stages == 2);
    ahw_registry_free(reg);
    /* Apple's unified memory is configured per machine: without a size nothing fits, with
     * one the machine's memory is the device's. */
    CHECK(ahw_catalogue_registry("M2 Ultra 76-core", 1, 0, &reg) == AHW_OK && reg != NULL);
    CHECK(ahw_plan(reg, "llama-3.1-8b", "q4_k_m", 4096, 1, 0, &p) == AHW_OK && p.fits == 0);
    ahw_registry_free(reg);
    CHECK(ahw_catalogue_registry("M2 Ultra 76-core", 1, 192ull << 30, &reg) == AHW_OK && reg != NULL);
    CHECK(ahw_device_get(reg, 0, &d) == AHW_OK && d.memory_bytes == (192ull << 30));
    CHECK(strcmp(d.memory_origin, "user") == 0);
    CHECK(ahw_plan(reg, "llama-3.1-8b", "q4_k_m", 4096, 1, 0, &p) == AHW_OK && p.fits == 1);
    ahw_registry_free(reg);
    /* One device; then what is refused, with *out NULL and a reason. */
    CHECK(ahw_catalogue_registry("MI300X", 1, 0, &reg) == AHW_OK && ahw_device_count(reg) == 1);
    ahw_registry_free(reg);
    reg = (ahw_registry*)&reg;
    CHECK(ahw_catalogue_registry("H100 SXM", 0, 0, &reg) == AHW_ERR_INVALID_ARGUMENT && reg == NULL);
    CHECK(strstr(ahw_last_error(), "count") != NULL);
    CHECK(ahw_catalogue_registry("H100 SXM", 257, 0, &reg) == AHW_ERR_INVALID_ARGUMENT && reg == NULL);
    CHECK(ahw_catalogue_registry("no such accelerator 9000", 2, 0, &reg) == AHW_ERR_UNKNOWN_DEVICE && reg == NULL);
    CHECK(strstr(ahw_last_error(), "no such accelerator 9000") != NULL);
    CHECK(ahw_catalogue_registry(NULL, 2, 0, &reg) == AHW_ERR_INVALID_ARGUMENT && reg == NULL);
    CHECK(ahw_catalogue_registry("H100 SXM", 2, 0, NULL) == AHW_ERR_INVALID_ARGUMENT);
}

static void test_errors(void) {
    ahw_estimate_result r;
    ahw_device_info d;
    ahw_warning_info w;
    char* json = (char*)&json;
    ahw_registry* reg = NULL;

    CHECK(ahw_estimate("no such accelerator 9000", "llama-3.1-8b", "bf16", 4096, 1, &r) == AHW_ERR_UNKNOWN_DEVICE);
    CHECK(strstr(ahw_last_error(), "no such accelerator 9000") != NULL);
    CHECK(ahw_estimate("H100 SXM", "no-such-model-1b", "bf16", 4096, 1, &r) == AHW_ERR_UNKNOWN_MODEL);
    CHECK(strstr(ahw_last_error(), "no-such-model-1b") != NULL);
    CHECK(ahw_estimate("H100 SXM", "llama-3.1-8b", "q4_k_x", 4096, 1, &r) == AHW_ERR_UNKNOWN_QUANT);
    CHECK(strstr(ahw_last_error(), "q4_k_x") != NULL);
    CHECK(ahw_estimate(NULL, "llama-3.1-8b", "bf16", 4096, 1, &r) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_estimate("H100 SXM", NULL, "bf16", 4096, 1, &r) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_estimate("H100 SXM", "llama-3.1-8b", NULL, 4096, 1, &r) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_estimate("H100 SXM", "llama-3.1-8b", "bf16", 4096, 1, NULL) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_estimate("H100 SXM", "llama-3.1-8b", "bf16", 0, 1, &r) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_estimate("H100 SXM", "llama-3.1-8b", "bf16", 4096, 0, &r) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_estimate("", "llama-3.1-8b", "bf16", 4096, 1, &r) == AHW_ERR_UNKNOWN_DEVICE);

    {
        ahw_plan_result p;
        ahw_registry* empty = NULL;
        CHECK(ahw_registry_from_json("{\"schema_version\": 1}", &empty) == AHW_OK);
        CHECK(ahw_plan(NULL, "llama-3.1-8b", "auto", 4096, 1, 0, &p) == AHW_ERR_INVALID_ARGUMENT);
        CHECK(ahw_plan(empty, NULL, "auto", 4096, 1, 0, &p) == AHW_ERR_INVALID_ARGUMENT);
        CHECK(ahw_plan(empty, "llama-3.1-8b", "auto", 4096, 1, 0, NULL) == AHW_ERR_INVALID_ARGUMENT);
        CHECK(ahw_plan(empty, "llama-3.1-8b", "auto", 0, 1, 0, &p) == AHW_ERR_INVALID_ARGUMENT);
        CHECK(ahw_plan(empty, "llama-3.1-8b", "auto", 4096, 0, 0, &p) == AHW_ERR_INVALID_ARGUMENT);
        CHECK(ahw_plan(empty, "no-such-model-1b", "auto", 4096, 1, 0, &p) == AHW_ERR_UNKNOWN_MODEL);
        CHECK(strstr(ahw_last_error(), "ahw_plan") != NULL && strstr(ahw_last_error(), "no-such-model-1b") != NULL);
        CHECK(ahw_plan(empty, "llama-3.1-8b", "q4_k_x", 4096, 1, 0, &p) == AHW_ERR_UNKNOWN_QUANT);
        /* No device: a plan that says so. */
        /* "auto" in any case, as the CLI and Python take it. */
        CHECK(ahw_plan(empty, "llama-3.1-8b", "AUTO", 4096, 1, 0, &p) == AHW_OK);
        CHECK(ahw_plan(empty, "llama-3.1-8b", "Auto", 4096, 1, 0, &p) == AHW_OK);
        CHECK(ahw_plan(empty, "llama-3.1-8b", "bf16", 4096, 1, 0, &p) == AHW_OK);
        CHECK(p.fits == 0 && strcmp(p.outcome, "no_devices") == 0);
        ahw_registry_free(empty);
    }
    CHECK(ahw_device_count(NULL) == 0 && ahw_warning_count(NULL) == 0);
    CHECK(ahw_has_accelerator(NULL) == 0 && ahw_accelerator_memory(NULL) == 0 && ahw_total_memory(NULL) == 0);
    {
        size_t best = 7;
        CHECK(ahw_best_device(NULL, &best) == AHW_ERR_INVALID_ARGUMENT && best == 7);
    }
    CHECK(ahw_device_get(NULL, 0, &d) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_warning_get(NULL, 0, &w) == AHW_ERR_INVALID_ARGUMENT);
    reg = ahw_detect();
    CHECK(ahw_device_get(reg, 0, NULL) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_warning_get(reg, 0, NULL) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_registry_to_json(reg, NULL) == AHW_ERR_INVALID_ARGUMENT);
    ahw_registry_free(reg);
    CHECK(ahw_registry_to_json(NULL, &json) == AHW_ERR_INVALID_ARGUMENT && json == NULL);
    CHECK(ahw_registry_from_json(NULL, &reg) == AHW_ERR_INVALID_ARGUMENT);
    CHECK(ahw_registry_from_json("{}", NULL) == AHW_ERR_INVALID_ARGUMENT);
    ahw_registry_free(NULL);
    ahw_string_free(NULL);

    /* A long message is cut at a character boundary: no half of a multi-byte character. */
    {
        char name[1000];
        size_t i, len;
        const unsigned char* e;
        int offset;
        for (offset = 368; offset < 376; ++offset) {
            memset(name, 'x', sizeof name);
            for (i = (size_t)offset; i + 3 < sizeof name; i += 3) memcpy(name + i, "\xe2\x82\xac", 3); /* U+20AC */
            name[sizeof name - 1] = '\0';
            CHECK(ahw_estimate(name, "llama-3.1-8b", "bf16", 4096, 1, &r) == AHW_ERR_UNKNOWN_DEVICE);
            e = (const unsigned char*)ahw_last_error();
            len = strlen((const char*)e);
            /* The text ends with whole characters: a last lead byte has all its continuations. */
            i = len;
            while (i > 0 && (e[i - 1] & 0xC0) == 0x80) --i;
            CHECK(i > 0 && (e[i - 1] < 0x80 || (e[i - 1] >= 0xE0 && len - i == 2) || (e[i - 1] < 0xE0 && len - i == 1)));
        }
    }

    /* Status names are distinct and stable. */
    CHECK(strcmp(ahw_status_name(AHW_OK), "ok") == 0);
    CHECK(strcmp(ahw_status_name(AHW_ERR_UNKNOWN_DEVICE), "unknown_device") == 0);
    CHECK(strcmp(ahw_status_name(AHW_ERR_UNSUPPORTED), "unsupported") == 0);
    CHECK(strcmp(ahw_status_name((ahw_status)12345), "unknown_status") == 0);
}

int main(int argc, char** argv) {
    const char* v = ahw_version();
    printf("ai_hwaccel_c %s\n", v);
    CHECK(v != NULL && strchr(v, '.') != NULL);
    test_detect();
    test_json_round_trip();
    if (argc > 2) {
        test_macbook(argv[1]);
        test_workstation(argv[2]);
    }
    if (argc > 4) test_cluster(argv[3], argv[4]);
    if (argc > 5) test_warning(argv[5]);
    if (argc > 6) test_stacks(argv[6]);
    test_estimate();
    test_estimate_at_bandwidth();
    test_bandwidth();
    test_catalogue_registry();
    test_errors();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
