/* ai-hwaccel C ABI.
 *
 * A small compiled library (libai_hwaccel_c) over the C++ headers, for programs written
 * in C or in any language with a C foreign-function interface. It detects the machine's
 * accelerators (and, on request, measures the host memory's bandwidth), describes them,
 * writes the registry as JSON, plans a catalogue model on a registry's devices or on a
 * cluster of several machines' registries, and
 * answers the simplest planning question: how much memory and how fast a catalogue model
 * runs on a catalogue device.
 *
 * Conventions:
 *  - C99. Every type is a plain C type; the registry is an opaque handle.
 *  - Functions never throw and never abort: failures come back as an ahw_status, and
 *    ahw_last_error() holds a message for the most recent failure on the calling thread.
 *  - Strings are either copied into fixed-size arrays inside structures the caller owns,
 *    borrowed from a registry (valid until ahw_registry_free), or allocated by the library
 *    and released with ahw_string_free. Each function says which.
 *  - Every value is an estimate or a reading as the C++ library describes it; a field
 *    that is unknown has its `*_known` flag at 0 and its value at 0.
 *  - Only symbols starting with `ahw_` are exported.
 *
 * The structures may gain fields only together with a new SONAME.
 */
#ifndef AI_HWACCEL_H
#define AI_HWACCEL_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(AHW_BUILDING_LIBRARY)
#define AHW_API __declspec(dllexport)
#else
#define AHW_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define AHW_API __attribute__((visibility("default")))
#else
#define AHW_API
#endif

/* C++ callers see that no function throws. */
#ifdef __cplusplus
#define AHW_NOEXCEPT noexcept
#else
#define AHW_NOEXCEPT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What a call returns. 0 is success; every other value is a failure. */
typedef enum ahw_status {
    AHW_OK = 0,
    AHW_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, a zero context or batch, … */
    AHW_ERR_OUT_OF_RANGE = 2,     /* an index past the end of a list */
    AHW_ERR_UNKNOWN_DEVICE = 3,   /* the name matches no catalogue device */
    AHW_ERR_UNKNOWN_MODEL = 4,    /* the id matches no catalogue model */
    AHW_ERR_UNKNOWN_QUANT = 5,    /* the name is no quantization format */
    AHW_ERR_UNSUPPORTED = 6,      /* not compiled into this build (JSON without nlohmann/json) */
    AHW_ERR_PARSE = 7,            /* input text could not be read */
    AHW_ERR_NO_MEMORY = 8,
    AHW_ERR_INTERNAL = 9,         /* an unexpected failure inside the library */
    AHW_ERR_MEASUREMENT = 10      /* a measurement could not be taken (ahw_last_error says why) */
} ahw_status;

/* Sizes of the text arrays in the structures below (terminating NUL included). Longer
 * values are cut at a character boundary of the array size - 1; none of the library's own
 * names is that long. */
#define AHW_SHORT_TEXT 32
#define AHW_NAME_TEXT 64
#define AHW_PCI_TEXT 20

/* The devices, host and warnings of one detection. Opaque; immutable once made. */
typedef struct ahw_registry ahw_registry;

/* One device, copied out of a registry. */
typedef struct ahw_device_info {
    char kind[AHW_SHORT_TEXT];   /* "cuda_gpu", "rocm_gpu", "cpu", … (stable table names) */
    char vendor[AHW_SHORT_TEXT]; /* "nvidia", "amd", "unknown", … */
    char name[AHW_NAME_TEXT];    /* as the device reports it */
    char pci[AHW_PCI_TEXT];      /* "0000:65:00.0", or "" when not a PCI device or unknown */
    uint32_t index;              /* the backend's own index for the device */
    uint64_t memory_bytes;       /* 0 when unknown */
    int memory_known;            /* 1 when memory_bytes is a value */
    char memory_origin[AHW_SHORT_TEXT]; /* "tool", "sysfs", "catalogue", "estimated", … or "none" */
    double memory_bandwidth_gbps; /* decimal GB/s; 0 when unknown */
    int bandwidth_known;
    int available;      /* seen and usable */
    int software;       /* a software renderer (llvmpipe, …): never an accelerator */
    int unified_memory; /* shares the host's memory */
    int stack;          /* which stack of a multi-stack card (a Max 1550 under Level Zero's
                           default FLAT hierarchy; its stacks share `pci`), -1 for a whole device */
} ahw_device_info;

/* One warning of a registry. `subject` and `message` are borrowed from the registry: they
 * stay valid until ahw_registry_free. */
typedef struct ahw_warning_info {
    char kind[AHW_SHORT_TEXT];    /* "tool_not_found", "tool_timed_out", … */
    char backend[AHW_SHORT_TEXT]; /* "cuda", …, or "" for host-level probes */
    const char* subject;          /* the tool or path concerned (may be "") */
    const char* message;          /* for people (may be "") */
    int32_t code;                 /* exit status or signal number where relevant, else 0 */
} ahw_warning_info;

/* A model served in one format on one device (every number an estimate). */
typedef struct ahw_estimate_result {
    char device[AHW_NAME_TEXT]; /* the catalogue's canonical device name */
    char model[AHW_NAME_TEXT];  /* the catalogue's model id ("llama-3.1-8b") */
    char quant[AHW_SHORT_TEXT]; /* the canonical format name ("BF16", "Q4_K_M") */
    uint64_t parameters;        /* the model's parameters */
    uint64_t weights_bytes;
    uint64_t kv_cache_bytes;
    uint64_t overhead_bytes;    /* compute buffers + runtime allowance */
    uint64_t total_bytes;       /* weights + KV cache + overhead */
    uint64_t device_memory_bytes; /* 0 when the catalogue gives none (unified memory) */
    uint64_t usable_bytes;      /* what the planner may fill: memory less its default headroom */
    double memory_bandwidth_gbps; /* the device's, decimal GB/s (0: unknown) */
    int format_supported;       /* 1 when the device runs the format natively or dequantized */
    int fits;                   /* 1 when supported and total_bytes <= usable_bytes */
    /* 0 = unknown, or the model does not fit (fits == 0) */
    double decode_tokens_per_second;  /* per sequence at depth `context` */
    double prefill_tokens_per_second; /* for a prompt of `context` tokens (the CLI's estimate
                                         and Python's estimate() default to 512) */
} ahw_estimate_result;

/* How a catalogue model would be deployed on a registry's devices (every number an
 * estimate). */
typedef struct ahw_plan_result {
    char model[AHW_NAME_TEXT];     /* the catalogue's model id */
    char quant[AHW_SHORT_TEXT];    /* the format planned (with "auto", the one chosen) */
    char outcome[AHW_SHORT_TEXT];  /* "fits", "too_large", "unsupported_format", "no_devices" */
    char strategy[AHW_SHORT_TEXT]; /* "single_device", "tensor_parallel", "pipeline_parallel",
                                      "tensor_pipeline", or "none" when it does not fit */
    char kind[AHW_SHORT_TEXT];     /* the kind of the devices used ("cuda_gpu", …) */
    int fits;                      /* 1 when at least one replica fits */
    uint32_t replicas;             /* data-parallel copies */
    uint32_t stages;               /* pipeline stages of one replica */
    uint32_t tensor_parallel;      /* widest tensor-parallel group of one replica */
    uint32_t devices;              /* devices used, every replica counted */
    uint64_t weights_bytes;        /* the model in that format, one replica */
    uint64_t kv_cache_bytes;
    uint64_t overhead_bytes;
    uint64_t total_bytes;
    uint64_t usable_bytes;         /* usable memory of the devices of that kind able to run it */
    double decode_tokens_per_second;  /* one replica, per sequence; 0 = unknown */
    double prefill_tokens_per_second; /* one replica; 0 = unknown */
    double aggregate_decode_tokens_per_second; /* every sequence of every replica together */
} ahw_plan_result;

/* What a plan over several nodes adds to its ahw_plan_result (ahw_plan_cluster). */
typedef struct ahw_cluster_result {
    uint32_t nodes;                       /* nodes given */
    uint32_t nodes_joined;                /* in the joined group the plan was made on */
    int joined;                           /* 1 when every node could be joined to the others */
    uint32_t nodes_per_replica;           /* nodes one replica spans */
    uint32_t inter_node_hops;             /* pipeline hops between nodes in one replica */
    char inter_node_link[AHW_SHORT_TEXT]; /* the slowest such hop's network ("infiniband",
                                             "ethernet", …); "" without one */
    double inter_node_gbps;               /* its speed each way, decimal GB/s */
    double decode_inter_node_seconds;     /* those hops' cost per decoded token */
} ahw_cluster_result;

/* The host memory's read bandwidth, as ahw_measure_memory_bandwidth measured it. */
typedef struct ahw_bandwidth_result {
    double gbps;              /* decimal GB/s of the fastest pass (> 0) */
    uint64_t bytes_per_pass;  /* bytes read in each pass, all threads together */
    uint32_t threads;         /* threads that read at once */
    uint32_t passes;          /* timed read passes */
    double fastest_seconds;   /* the pass `gbps` comes from */
    double slowest_seconds;   /* how far the other passes strayed */
} ahw_bandwidth_result;

/* The library's version, "major.minor.patch". Static storage; never NULL. */
AHW_API const char* ahw_version(void) AHW_NOEXCEPT;

/* A short stable name for a status ("ok", "unknown_device", …). Never NULL. */
AHW_API const char* ahw_status_name(ahw_status status) AHW_NOEXCEPT;

/* The message of the most recent failed call on this thread ("" when none has failed).
 * Thread-local storage owned by the library; valid until the next failing call on the
 * same thread. Successful calls leave it unchanged. */
AHW_API const char* ahw_last_error(void) AHW_NOEXCEPT;

/* Detects this machine (every backend compiled in). Never NULL except when memory runs
 * out; detection problems become warnings in the registry. Free with ahw_registry_free. */
AHW_API ahw_registry* ahw_detect(void) AHW_NOEXCEPT;

/* `count` (1 to 256) devices of catalogue device `device_name` ("H100 SXM", "rtx 3090"),
 * as if present, in a new registry `*out` to plan on with ahw_plan: each with the
 * catalogue's memory, bandwidth and peaks, joined as the device is built into machines
 * (the C++ catalogue_links: NVLink in pairs for bridged cards, in eights on HGX boards,
 * PCIe between the groups). `memory_bytes` gives each device that memory instead (0: the
 * catalogue's); a row without a memory size (Apple's unified memory, configured per
 * machine) needs it, or its devices fit nothing. On failure `*out` is NULL. Free with
 * ahw_registry_free. */
AHW_API ahw_status ahw_catalogue_registry(const char* device_name, uint32_t count, uint64_t memory_bytes,
                                          ahw_registry** out) AHW_NOEXCEPT;

/* Releases a registry. NULL is accepted and ignored. */
AHW_API void ahw_registry_free(ahw_registry* registry) AHW_NOEXCEPT;

/* Number of devices (available or not) and of warnings; 0 for NULL. */
AHW_API size_t ahw_device_count(const ahw_registry* registry) AHW_NOEXCEPT;
AHW_API size_t ahw_warning_count(const ahw_registry* registry) AHW_NOEXCEPT;

/* Answers about the available devices (0 for NULL): whether any is an accelerator (not
 * the CPU, not a software renderer); the memory of the available accelerators, and of every
 * available device, in bytes, a shared pool (unified memory) counted once. */
AHW_API int ahw_has_accelerator(const ahw_registry* registry) AHW_NOEXCEPT;
AHW_API uint64_t ahw_accelerator_memory(const ahw_registry* registry) AHW_NOEXCEPT;
AHW_API uint64_t ahw_total_memory(const ahw_registry* registry) AHW_NOEXCEPT;

/* The position of the most capable available device (the C++ best_available: accelerators
 * first, the CPU only when there is none), to pass to ahw_device_get. AHW_ERR_OUT_OF_RANGE
 * when no device is available. */
AHW_API ahw_status ahw_best_device(const ahw_registry* registry, size_t* index) AHW_NOEXCEPT;

/* Copies device `index` (0-based, in detection order) into `*out`. */
AHW_API ahw_status ahw_device_get(const ahw_registry* registry, size_t index,
                                  ahw_device_info* out) AHW_NOEXCEPT;

/* Describes warning `index` in `*out` (strings borrowed from the registry). */
AHW_API ahw_status ahw_warning_get(const ahw_registry* registry, size_t index,
                                   ahw_warning_info* out) AHW_NOEXCEPT;

/* Writes the registry as JSON (schema of io/json.hpp, two-space indent) into a new
 * NUL-terminated string `*out`, to be released with ahw_string_free. Returns
 * AHW_ERR_UNSUPPORTED, with `*out` set to NULL, when the library was built without
 * JSON support. */
AHW_API ahw_status ahw_registry_to_json(const ahw_registry* registry, char** out) AHW_NOEXCEPT;

/* Reads a registry from JSON text as ahw_registry_to_json writes it (a captured machine,
 * a registry sent by another host). On success `*out` is a new registry; on failure it is
 * NULL, the status is AHW_ERR_PARSE and ahw_last_error() says where and what. */
AHW_API ahw_status ahw_registry_from_json(const char* text, ahw_registry** out) AHW_NOEXCEPT;

/* Releases a string the library allocated. NULL is accepted and ignored. */
AHW_API void ahw_string_free(char* text) AHW_NOEXCEPT;

/* Memory and speed of catalogue model `model_id` ("llama-3.1-8b", "Llama 3.1 8B") in
 * format `quant_name` ("bf16", "Q4_K_M", …) on catalogue device `device_name` ("H100 SXM",
 * "mi300x"), with `context` tokens per sequence (> 0) and `batch` sequences (> 0) and an
 * fp16 KV cache. Names are matched as the C++ library matches them: case, spaces and
 * punctuation ignored. */
AHW_API ahw_status ahw_estimate(const char* device_name, const char* model_id, const char* quant_name,
                                uint32_t context, uint32_t batch, ahw_estimate_result* out) AHW_NOEXCEPT;

/* Plans catalogue model `model_id` on the registry's devices and links (the C++
 * plan_sharding, or plan_best_format when `quant_name` is NULL or "auto": the format of
 * highest quality that the planner fits), with `context` tokens per sequence (> 0) and
 * `batch` sequences (> 0). A comma-separated list ("Q4_K_M,Q5_K_M,Q8_0", the files one
 * has) chooses as "auto" does among the formats listed only (plan_options::formats);
 * `quant` in the result is the one chosen. A list naming no format, or "auto" among others,
 * is AHW_ERR_INVALID_ARGUMENT; an unknown name in it AHW_ERR_UNKNOWN_QUANT. The CPU takes
 * part only when `allow_cpu` is non-zero. A model that does not fit is still AHW_OK:
 * `fits` is 0 and `outcome` says why. */
AHW_API ahw_status ahw_plan(const ahw_registry* registry, const char* model_id, const char* quant_name,
                            uint32_t context, uint32_t batch, int allow_cpu, ahw_plan_result* out) AHW_NOEXCEPT;

/* ahw_plan over a cluster: `nodes` are `count` registries (> 0, none NULL), one per machine
 * (each one's ahw_detect, or ahw_registry_from_json of its `ai-hwaccel detect --json`),
 * named "node0", "node1", … in messages. Tensor parallelism stays inside a node, a model
 * larger than a node is a pipeline across nodes, and each hop between two nodes is priced
 * on the network they share (InfiniBand with InfiniBand, RoCE or Ethernet with each other)
 * (the C++ plan_cluster and plan_cluster_best_format). Nodes that share no network are not
 * joined unless `network_gbits` (Gb/s each way, as NICs are sold; 0 for none, else above
 * 0 and at most 100000) says what network to assume between them. `cluster_out` may be
 * NULL. A model that does not fit is still AHW_OK, as for ahw_plan. */
AHW_API ahw_status ahw_plan_cluster(const ahw_registry* const* nodes, size_t count, double network_gbits,
                                    const char* model_id, const char* quant_name, uint32_t context, uint32_t batch,
                                    int allow_cpu, ahw_plan_result* out, ahw_cluster_result* cluster_out) AHW_NOEXCEPT;

/* ahw_estimate on a device whose memory bandwidth is `bandwidth_gbps` (decimal GB/s, from
 * 0.001 to 1000000) rather than the catalogue's: a measured figure, or a part the catalogue
 * rates differently. Decode, which reads every weight per token, follows it; prefill follows
 * it only where the prompt's pass is bound by memory rather than by compute (a low figure);
 * memory does not. The result's memory_bandwidth_gbps is the figure given. */
AHW_API ahw_status ahw_estimate_at_bandwidth(const char* device_name, const char* model_id, const char* quant_name,
                                             uint32_t context, uint32_t batch, double bandwidth_gbps,
                                             ahw_estimate_result* out) AHW_NOEXCEPT;

/* Measures this machine's memory read bandwidth (the C++ measure_memory_bandwidth): each
 * of `threads` threads (0: one per CPU the process may run on; at most 1024) fills its
 * slice of a buffer of `buffer_bytes` (0: 2 GiB, or four times the CPUs' last-level caches
 * where that is more, at most a quarter of the memory available to the process, a
 * container's limit and the room left under it included, and at least 64 MiB; a size given
 * is used as given, and one the caches hold reads them, not the memory), then all of them
 * read their slices `passes` times (0: 5, at most 1000); the
 * fastest pass gives the figure. It takes every usable CPU for about a second. Arguments out of range give
 * AHW_ERR_INVALID_ARGUMENT; a measurement that cannot be taken (a buffer larger than the
 * memory available or that cannot be allocated, too small to give every thread a share, a
 * thread that cannot start) gives AHW_ERR_MEASUREMENT. Either way ahw_last_error() says
 * why and `*out` (when not NULL) is zeroed. */
AHW_API ahw_status ahw_measure_memory_bandwidth(uint64_t buffer_bytes, uint32_t threads, uint32_t passes,
                                                ahw_bandwidth_result* out) AHW_NOEXCEPT;

/* ahw_detect, then ahw_measure_memory_bandwidth with its defaults, the figure given to the
 * CPU devices (origin "measured" in the JSON) so that an estimate or plan on the CPU has a
 * decode rate. On success `*out` is a new registry (free with ahw_registry_free); when the
 * measurement fails the status is AHW_ERR_MEASUREMENT and `*out` is NULL (ahw_detect alone
 * still works). */
AHW_API ahw_status ahw_detect_measured(ahw_registry** out) AHW_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* AI_HWACCEL_H */
