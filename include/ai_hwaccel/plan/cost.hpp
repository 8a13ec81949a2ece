// ai-hwaccel plan: a catalogue of cloud instances with accelerators, and what a model costs
// to serve on them.
//
// One `cloud_instance` per row: provider, instance type, the region its price is for, the
// on-demand price per hour in USD with the price's date and the public page it was read
// from, the accelerator (a device catalogue row that `find_device` resolves; a
// static_assert below holds every row to that), how many, the host's vCPUs and memory
// (in the unit the source uses: binary GiB or decimal GB, never mixed), and the links
// between the accelerators. A row whose price could not be read from a public source is
// not in the table: nothing here is guessed.
//
// Prices move. Each row says when its price was seen: `price_date` is the calendar date
// the source gives. Rows read from a machine-generated price list pinned at a commit name
// the commit in `price_snapshot`; when a dated public page shows the same price (to the
// precision it prints), or quotes lines of the same generation of the list (lines that
// change at every generation, repeated digit for digit), that page is
// `price_date_source` and its date is `price_date`.
// A row no dated source confirms is left out (a static_assert holds every row to a date).
// A generated list that states its own date (Google's below) is a dated source like any
// page: the commit is in its URL, the date is its own.
//
// `cheapest_instance` picks the lowest hourly price among the rows whose accelerators,
// together, hold the model (plan/memory.hpp's estimate), and estimates what a million
// output tokens cost there from plan/throughput.hpp's decode estimate. Both figures are
// estimates; the assumptions are in `cost_assumptions`, each documented.
//
// How this differs from plan_sharding (plan/shard.hpp), which `estimate --count N` and
// `plan` use. The cost model answers "which row is cheapest" over the whole table, in a
// constant expression, so it keeps a closed form instead of planning each row:
// - Fit: the model's whole memory estimate, plus the runtime and activation buffers of
//   each accelerator past the first, against N x device memory x
//   `usable_memory_fraction` (default 0.9, the planner's 10 % headroom). plan_sharding
//   also needs a whole number of layers per device, and a pipeline (a row without a fast
//   fabric) keeps the embedding on its first stage and the output head on its last, both
//   of them the one matrix for a model that ties them. So near the boundary a row may fit
//   here and not there, by up to one layer's bytes (its weights and its KV cache) per
//   accelerator plus that matrix: 4 x L4 (g2-standard-48) hold Command R in BF16 at an
//   8192-token context here with 4.1 GiB to spare, and plan_sharding fits it on no layout
//   of them. Plan the chosen row with plan_sharding where the answer must be the planner's.
// - Decode rate: the instance serves as many replicas of the model as it holds (as
//   plan_sharding replicates, and as a serving fleet runs data parallel). A replica takes
//   the fewest accelerators that hold one copy, or more where that serves faster (at most
//   63 more): its w accelerators split each layer t ways (tensor parallel, t the largest
//   divisor of w that splits the attention heads as plan_sharding's rule does) and are
//   w / t pipeline stages of t. Each of the t ranks holds and reads its whole KV heads:
//   all of a latent cache (MLA), one head's copy where the KV heads are fewer than the
//   ranks. Those copies must fit the replica's memory beside the rest of the model, so a
//   long context narrows the split. The t ranks decode as one device with t x the
//   bandwidth and peak times a scaling efficiency (0.8 fabric, 0.5 PCIe) that reads the
//   weights once and the cache as many times as the ranks hold it; pipeline stages add
//   memory, not speed. The instance's rate is the replicas' sum.
//   plan_sharding instead adds a fixed all-reduce latency per layer and a hop latency per
//   stage to the single-device time, and splits tensor parallel only inside a fast-link
//   island. On rows joined by a fast fabric the two agree within 0.83 to 1.73 times over
//   the catalogue's models (bf16, fp8, int4, Q4_K_M, Q8_0 at four shapes; the high end is
//   compute-bound decode of a latent cache at 131k tokens, where the planner scales its
//   compute with the cache's share of the bytes). On PCIe rows (g5.12xlarge, g6, g2) this
//   model keeps tensor parallel at 0.5, as vLLM and TGI serve on PCIe cards, where
//   plan_sharding lays out a llama.cpp-style pipeline at about one card's rate: there
//   they differ by about t x 0.5 (Llama 3.1 70B in BF16 on g6.48xlarge: 6.5 tokens/s
//   here, 1.7 from the planner).
// - Formats: `runs_format` below keeps llama.cpp's GGUF block formats on GPUs; the
//   planner's `support_for` lets any device that dequantizes run them.
// Planning every row with plan_sharding would make each row's answer the planner's, but
// its plan holds room for 256 devices and its links are heap values (names, device
// lists), so the table-wide search would no longer fit the compile-time evaluation
// budget that `static_assert(cheapest_instance(...))` relies on.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/quantization.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/plan/memory.hpp"
#include "ai_hwaccel/plan/model.hpp"
#include "ai_hwaccel/plan/throughput.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

enum class instance_provider : std::uint8_t { aws, gcp, azure, lambda, coreweave, oci };
inline constexpr std::size_t cloud_provider_count = 6;
constexpr std::string_view to_string(instance_provider p) noexcept {
    switch (p) {
    case instance_provider::aws: return "aws";
    case instance_provider::gcp: return "gcp";
    case instance_provider::azure: return "azure";
    case instance_provider::lambda: return "lambda";
    case instance_provider::coreweave: return "coreweave";
    case instance_provider::oci: return "oci";
    }
    return "aws";
}
constexpr std::optional<instance_provider> parse_instance_provider(std::string_view s) noexcept {
    for (auto p : {instance_provider::aws, instance_provider::gcp, instance_provider::azure, instance_provider::lambda,
                   instance_provider::coreweave, instance_provider::oci})
        if (detail::loose_equals(to_string(p), s)) return p;
    return std::nullopt;
}

/// The unit a provider quotes host memory in. AWS and Azure write GiB; Google writes GB
/// for its machine types. Kept as published, converted only by `host_memory_bytes`.
enum class memory_unit : std::uint8_t { gib, gb };

/// One instance type at one region's on-demand price.
struct cloud_instance {
    std::string_view name{}; ///< the provider's instance type ("p5.48xlarge")
    instance_provider provider = instance_provider::aws;
    std::string_view region{}; ///< the region the price is for ("us-east-1")
    double price_per_hour_usd = 0; ///< on-demand, Linux, whole instance
    /// ISO 8601 date (YYYY-MM-DD) the source gives for the price (for a `price_snapshot`
    /// row, the date of `price_date_source`, which shows the same price).
    std::string_view price_date{};
    std::string_view price_snapshot{}; ///< commit of a generated price list, else empty
    std::string_view price_source{};   ///< URL the price was read from
    /// For a `price_snapshot` row with a `price_date`: the dated public page that shows
    /// the same price (rounded as it prints it), or lines of the same generation of the
    /// list, which the date is taken from.
    std::string_view price_date_source{};
    /// Canonical name of a device catalogue row (resolved with find_device).
    std::string_view accelerator{};
    std::uint32_t accelerator_count = 0;
    std::uint32_t vcpus = 0;
    double host_memory = 0; ///< in `host_memory_unit`
    memory_unit host_memory_unit = memory_unit::gib;
    /// The link between the instance's accelerators; `none` for a single device, `pcie`
    /// where the provider publishes no device-to-device link.
    interconnect_kind interconnect = interconnect_kind::none;
    /// How many accelerators one `interconnect` group joins where it joins fewer than all
    /// of them (NVLink bridges pairing PCIe cards: 2), the rest crossing PCIe; 0: all.
    std::uint32_t link_group = 0;
    /// Network between instances (EFA, InfiniBand) in Gbit/s as providers quote it
    /// (decimal, one direction); 0 when the row's sources do not say.
    double network_gbit_per_s = 0;
    /// Where the count, vCPUs, memory and links come from when not from price_source.
    std::string_view spec_source{};

    constexpr std::uint64_t host_memory_bytes() const noexcept {
        const double unit = host_memory_unit == memory_unit::gib ? static_cast<double>(units::gib)
                                                                 : static_cast<double>(units::gb);
        const double bytes = host_memory * unit;
        if (!(bytes > 0)) return 0;
        return bytes >= 1.8e19 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(bytes);
    }
    /// The accelerator's catalogue row, nullptr if the name does not resolve.
    constexpr const device_spec* device() const noexcept { return find_device(accelerator); }
};

namespace detail {
inline constexpr std::size_t no_device = ~std::size_t{0};
/// find_device's answer as an index into device_catalogue (no_device when none). Constant
/// evaluation compares it with an integer, never the pointer with nullptr: GCC with
/// -fsanitize=undefined refuses that comparison in a constant expression.
constexpr std::size_t device_index(std::string_view name) noexcept {
    const device_spec* p = find_device(name);
    for (std::size_t i = 0; i < device_catalogue.size(); ++i)
        if (&device_catalogue[i] == p) return i;
    return no_device;
}
} // namespace detail

namespace detail {
// SkyPilot's catalogue of AWS prices, read from the AWS price list API by a bot and
// committed to GitHub; the file carries no date, so its commit is the snapshot. Its
// columns: InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, GpuInfo,
// Price, SpotPrice, Region, AvailabilityZone (host memory in GiB, as EC2 reports it).
inline constexpr std::string_view skypilot_aws_commit = "001367d22a0033fac286a8c71aeac7109e431bcb";
inline constexpr std::string_view skypilot_aws_csv =
    "https://github.com/skypilot-org/skypilot-catalog/blob/001367d22a0033fac286a8c71aeac7109e431bcb/"
    "catalogs/v7/aws/vms.csv";
// AWS's Capacity Blocks pricing page lists GPU count, vCPUs, instance memory (GiB) and
// network performance for p5, p4d and trn1 (its prices are reservation fees, not used).
inline constexpr std::string_view aws_capacity_blocks = "https://aws.amazon.com/ec2/capacityblocks/pricing/";
// Dated `sky show-gpus` outputs quoted in SkyPilot's tracker. show-gpus prints the
// cheapest on-demand price over regions (SkyPilot pull request 472), rounded to 0.001,
// and the host memory of its AWS catalogue (MemoryGiB above) with a "GB" label.
inline constexpr std::string_view skypilot_issue_3434 = "https://github.com/skypilot-org/skypilot/issues/3434";
inline constexpr std::string_view skypilot_pr_3430 = "https://github.com/skypilot-org/skypilot/pull/3430";
// SkyPilot's Lambda catalogue as changed by a dated pull request; columns InstanceType,
// AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price, Region.
inline constexpr std::string_view skypilot_catalog_pr_15 = "https://github.com/skypilot-org/skypilot-catalog/pull/15";
// AWS on-demand prices by region, one file per instance family, generated from
// instances.vantage.sh's data and committed with the data's date on their second line
// ("// Last updated: 2025-11-30"); each URL pins the commit read. The P4 and P5 prices are
// those AWS set in its June 2025 cut to P4 and P5 on-demand prices.
inline constexpr std::string_view aws_gpu_g6 =
    "https://github.com/tsaol/aws-gpu/blob/2d0108c7bd261c8e40493fbd35135437bd6c9099/data/g6_instances.js";
inline constexpr std::string_view aws_gpu_g6_date = "2025-11-30";
inline constexpr std::string_view aws_gpu_p4d =
    "https://github.com/tsaol/aws-gpu/blob/50d6dce986c1398499e6f79a9f8953c8258febee/data/p4d_instances.js";
inline constexpr std::string_view aws_gpu_p4d_date = "2025-11-30";
inline constexpr std::string_view aws_gpu_p4de =
    "https://github.com/tsaol/aws-gpu/blob/9aa17db4c2e3719fd6dd92740cae54406927415b/data/p4de_instances.js";
inline constexpr std::string_view aws_gpu_p4de_date = "2025-12-21";
inline constexpr std::string_view aws_gpu_p5 =
    "https://github.com/tsaol/aws-gpu/blob/2d0108c7bd261c8e40493fbd35135437bd6c9099/data/p5_instances.js";
inline constexpr std::string_view aws_gpu_p5_date = "2025-11-30";
inline constexpr std::string_view aws_gpu_trn1 =
    "https://github.com/tsaol/aws-gpu/blob/9aa17db4c2e3719fd6dd92740cae54406927415b/data/trn1_instances.js";
inline constexpr std::string_view aws_gpu_trn1_date = "2025-12-21";
// SkyPilot's Azure catalogue as generated by its fetcher (columns: InstanceType,
// AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price, SpotPrice, Region,
// Generation), read at a pinned commit; the file itself carries no date. It is dated by
// pull request 79, whose review on 2024-08-27 quotes lines of the catalogue as it stood
// (the NC96ads_A100_v4 rows of four regions and the NCC40ads_H100_v5 row): this file
// repeats them digit for digit, spot prices included, which change from one fetch to the
// next, so it is that fetch.
inline constexpr std::string_view skypilot_azure_commit = "098741e70562f65d7af1cceb81e33b284f742604";
inline constexpr std::string_view skypilot_azure_csv =
    "https://github.com/skypilot-org/skypilot-catalog/blob/098741e70562f65d7af1cceb81e33b284f742604/catalogs/v6/"
    "azure/vms.csv";
inline constexpr std::string_view skypilot_azure_date = "2024-08-27";
inline constexpr std::string_view skypilot_catalog_pr_79 = "https://github.com/skypilot-org/skypilot-catalog/pull/79";
// Google Compute Engine prices per machine type and region, generated from Google's
// billing catalogue by a script and committed; unlike SkyPilot's lists it dates itself:
// its `generated:` line at this commit reads "Thu Mar  6 03:53:56 2025". Each machine
// type lists `cost: <region>: hour:` (on demand, the whole VM: vCPUs, memory and its
// GPUs), then `cpu`, the GPU count and `ram` (GB, as Google gives it).
inline constexpr std::string_view gcp_pricing_date = "2025-03-06";
inline constexpr std::string_view gcp_pricing_yml =
    "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/"
    "0166a59ebba7c36f2cc8c931d9f258dcebc44776/pricing.yml";
// Azure's VM sizes (vCPUs, memory, GPUs) as Aspire's list of AKS node sizes prints them.
inline constexpr std::string_view azure_nc_a100_v4_sizes =
    "https://aspire.dev/reference/api/csharp/aspire.hosting.azure.kubernetes/standardncadsa100v4/fields.md";
// Microsoft's page of the NC H100 v5 sizes: H100 NVL GPUs of 94 GB, one or two per VM, and
// up to 640 GiB of system memory.
inline constexpr std::string_view azure_nc_h100_v5_sizes =
    "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/ncadsh100v5-series";

// Rows. Host memory is what the source gives (AWS, Azure and Lambda: GiB; Google: GB).
// The interconnect is the accelerator's own link from the device catalogue where the
// instance joins all its devices with it (HGX boards with NVSwitch, which every 8-way
// SXM instance is built on; Trainium's NeuronLink); PCIe otherwise.
inline constexpr cloud_instance instance_rows[] = {
    // ---- AWS (prices from the SkyPilot snapshot above unless a row says otherwise)
    // sky show-gpus --cloud aws A10G, 2024-04-07: cheapest region us-east-2.
    {.name = "g5.xlarge", .provider = instance_provider::aws, .region = "us-east-2",
     .price_per_hour_usd = 1.006, .price_date = "2024-04-07", .price_source = skypilot_pr_3430,
     .accelerator = "NVIDIA A10G", .accelerator_count = 1, .vcpus = 4, .host_memory = 16,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::none,
     .spec_source = skypilot_aws_csv},
    {.name = "g5.12xlarge", .provider = instance_provider::aws, .region = "us-east-2",
     .price_per_hour_usd = 5.672, .price_date = "2024-04-07", .price_source = skypilot_pr_3430,
     .accelerator = "NVIDIA A10G", .accelerator_count = 4, .vcpus = 48, .host_memory = 192,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::pcie,
     .spec_source = skypilot_aws_csv},
    // sky show-gpus L4, 2024-04-09: g6.xlarge cheapest in us-east-1.
    {.name = "g6.xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 0.805, .price_date = "2024-04-09", .price_source = skypilot_issue_3434,
     .accelerator = "NVIDIA L4", .accelerator_count = 1, .vcpus = 4, .host_memory = 16,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::none,
     .spec_source = skypilot_aws_csv},
    // The same output shows g6.2xlarge at $0.978, the snapshot's 0.9776 rounded.
    {.name = "g6.2xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 0.9776, .price_date = "2024-04-09", .price_snapshot = skypilot_aws_commit,
     .price_source = skypilot_aws_csv, .price_date_source = skypilot_issue_3434,
     .accelerator = "NVIDIA L4", .accelerator_count = 1, .vcpus = 8, .host_memory = 32,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::none},
    {.name = "g6.24xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 6.6752, .price_date = aws_gpu_g6_date, .price_snapshot = skypilot_aws_commit,
     .price_source = skypilot_aws_csv, .price_date_source = aws_gpu_g6,
     .accelerator = "NVIDIA L4", .accelerator_count = 4, .vcpus = 96, .host_memory = 384,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::pcie},
    {.name = "g6.48xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 13.3504, .price_date = aws_gpu_g6_date, .price_snapshot = skypilot_aws_commit,
     .price_source = skypilot_aws_csv, .price_date_source = aws_gpu_g6,
     .accelerator = "NVIDIA L4", .accelerator_count = 8, .vcpus = 192, .host_memory = 768,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::pcie},
    // P4 and P5 prices after AWS's June 2025 on-demand price cut, from the dated files
    // above (us-east-1). They supersede the SkyPilot snapshot's older prices for these
    // types (p4d 32.7726, p4de 40.96575, p5 98.32), which `sky show-gpus --cloud aws -a`
    // printed as "$ 32.773" and "$ 40.966" for the first two on 2024-09-28
    // (https://github.com/skypilot-org/skypilot/issues/4019).
    {.name = "p4d.24xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 21.957642, .price_date = aws_gpu_p4d_date, .price_source = aws_gpu_p4d,
     .accelerator = "NVIDIA A100 SXM4 40GB", .accelerator_count = 8, .vcpus = 96, .host_memory = 1152,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::nvswitch,
     .network_gbit_per_s = 400, .spec_source = aws_capacity_blocks},
    {.name = "p4de.24xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 27.44705, .price_date = aws_gpu_p4de_date, .price_source = aws_gpu_p4de,
     .accelerator = "NVIDIA A100 SXM4 80GB", .accelerator_count = 8, .vcpus = 96, .host_memory = 1152,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::nvswitch,
     .spec_source = skypilot_aws_csv},
    {.name = "p5.48xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 55.04, .price_date = aws_gpu_p5_date, .price_source = aws_gpu_p5,
     .accelerator = "NVIDIA H100 SXM5 80GB", .accelerator_count = 8, .vcpus = 192, .host_memory = 2048,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::nvswitch,
     .network_gbit_per_s = 3200, .spec_source = aws_capacity_blocks},
    // dstack's `dstack offer` output in a merged pull request, dated by its description;
    // the SkyPilot snapshot's older price for this type (84.8) is superseded by it.
    {.name = "p5en.48xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 63.296, .price_date = "2026-08-06",
     .price_source = "https://github.com/dstackai/dstack/pull/4110",
     .accelerator = "NVIDIA H200 SXM 141GB", .accelerator_count = 8, .vcpus = 192, .host_memory = 2048,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::nvswitch,
     .spec_source = skypilot_aws_csv},
    {.name = "trn1.2xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 1.34375, .price_date = aws_gpu_trn1_date, .price_snapshot = skypilot_aws_commit,
     .price_source = skypilot_aws_csv, .price_date_source = aws_gpu_trn1,
     .accelerator = "AWS Trainium", .accelerator_count = 1, .vcpus = 8, .host_memory = 32,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::none},
    {.name = "trn1.32xlarge", .provider = instance_provider::aws, .region = "us-east-1",
     .price_per_hour_usd = 21.5, .price_date = aws_gpu_trn1_date, .price_snapshot = skypilot_aws_commit,
     .price_source = skypilot_aws_csv, .price_date_source = aws_gpu_trn1,
     .accelerator = "AWS Trainium", .accelerator_count = 16, .vcpus = 128, .host_memory = 512,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::neuronlink,
     .network_gbit_per_s = 800, .spec_source = aws_capacity_blocks},

    // ---- Google Cloud: `sky show-gpus --all-regions A100 --cloud gcp` output quoted in a
    // review comment; SkyPilot prints the machine type's memory as Google does, in GB.
    {.name = "a2-highgpu-1g", .provider = instance_provider::gcp, .region = "us-central1",
     .price_per_hour_usd = 3.673, .price_date = "2023-12-30",
     .price_source = "https://github.com/skypilot-org/skypilot/pull/2892",
     .accelerator = "NVIDIA A100 SXM4 40GB", .accelerator_count = 1, .vcpus = 12, .host_memory = 85,
     .host_memory_unit = memory_unit::gb, .interconnect = interconnect_kind::none},
    // Google's price list at a dated commit (gcp_pricing_yml): us-central1's `hour:` for
    // each machine type, with its `cpu`, GPU count and `ram`. The A2 and A3 8- and 16-GPU
    // types are HGX boards joined by NVSwitch; G2's L4 cards have no device link.
    {.name = "a2-ultragpu-1g", .provider = instance_provider::gcp, .region = "us-central1",
     .price_per_hour_usd = 5.06879789041096, .price_date = gcp_pricing_date, .price_source = gcp_pricing_yml,
     .accelerator = "NVIDIA A100 SXM4 80GB", .accelerator_count = 1, .vcpus = 12, .host_memory = 170,
     .host_memory_unit = memory_unit::gb, .interconnect = interconnect_kind::none},
    {.name = "a2-ultragpu-8g", .provider = instance_provider::gcp, .region = "us-central1",
     .price_per_hour_usd = 40.5503831232877, .price_date = gcp_pricing_date, .price_source = gcp_pricing_yml,
     .accelerator = "NVIDIA A100 SXM4 80GB", .accelerator_count = 8, .vcpus = 96, .host_memory = 1360,
     .host_memory_unit = memory_unit::gb, .interconnect = interconnect_kind::nvswitch},
    {.name = "a2-megagpu-16g", .provider = instance_provider::gcp, .region = "us-central1",
     .price_per_hour_usd = 55.739504, .price_date = gcp_pricing_date, .price_source = gcp_pricing_yml,
     .accelerator = "NVIDIA A100 SXM4 40GB", .accelerator_count = 16, .vcpus = 96, .host_memory = 1360,
     .host_memory_unit = memory_unit::gb, .interconnect = interconnect_kind::nvswitch},
    {.name = "a3-highgpu-8g", .provider = instance_provider::gcp, .region = "us-central1",
     .price_per_hour_usd = 88.4899999025753, .price_date = gcp_pricing_date, .price_source = gcp_pricing_yml,
     .accelerator = "NVIDIA H100 SXM5 80GB", .accelerator_count = 8, .vcpus = 208, .host_memory = 1872,
     .host_memory_unit = memory_unit::gb, .interconnect = interconnect_kind::nvswitch},
    {.name = "g2-standard-4", .provider = instance_provider::gcp, .region = "us-central1",
     .price_per_hour_usd = 0.706832255, .price_date = gcp_pricing_date, .price_source = gcp_pricing_yml,
     .accelerator = "NVIDIA L4", .accelerator_count = 1, .vcpus = 4, .host_memory = 16,
     .host_memory_unit = memory_unit::gb, .interconnect = interconnect_kind::none},
    {.name = "g2-standard-48", .provider = instance_provider::gcp, .region = "us-central1",
     .price_per_hour_usd = 4.001665148, .price_date = gcp_pricing_date, .price_source = gcp_pricing_yml,
     .accelerator = "NVIDIA L4", .accelerator_count = 4, .vcpus = 48, .host_memory = 192,
     .host_memory_unit = memory_unit::gb, .interconnect = interconnect_kind::pcie},

    // ---- Azure: a line of SkyPilot's Azure catalogue quoted in a review thread (columns:
    // type, GPU, count, vCPUs, memory GiB, GPU, price, spot price, region). The NC A100 v4
    // series carries A100 PCIe 80GB cards.
    {.name = "Standard_NC96ads_A100_v4", .provider = instance_provider::azure, .region = "westus2",
     .price_per_hour_usd = 14.692, .price_date = "2024-08-27",
     .price_source = skypilot_catalog_pr_79,
     .accelerator = "NVIDIA A100 PCIe 80GB", .accelerator_count = 4, .vcpus = 96, .host_memory = 880,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::nvlink, .link_group = 2,
     .spec_source = "https://learn.microsoft.com/en-us/azure/virtual-machines/nc-a100-v4-series"},
    // The catalogue lines a dated pull request description quotes (same columns). Its GPU
    // count for this size (12) is wrong; Microsoft's size list gives 8 GPUs, 96 vCPUs and
    // 1900 of memory, which Azure's size pages state in GiB (the ND MI300X v5 page's
    // "Memory: GiB" column reads 1850 where the same list prints "1850 GB").
    {.name = "Standard_ND96isr_H100_v5", .provider = instance_provider::azure, .region = "northcentralus",
     .price_per_hour_usd = 117.984, .price_date = "2023-12-06",
     .price_source = "https://github.com/skypilot-org/skypilot-catalog/pull/50",
     .accelerator = "NVIDIA H100 SXM5 80GB", .accelerator_count = 8, .vcpus = 96, .host_memory = 1900,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::nvswitch,
     .spec_source = "https://aspire.dev/reference/api/csharp/aspire.hosting.azure.kubernetes/standardndsh100v5/"
                    "fields.md"},
    // East US prices from SkyPilot's Azure catalogue (skypilot_azure_csv, dated through
    // pull request 79). The NC A100 v4 sizes carry A100 PCIe 80GB cards, which Microsoft's
    // series page (nc-a100-v4-series.md: "NVIDIA NVLink Interconnect: Supported") joins by
    // NVLink; the bridge joins two cards, so the two-GPU size is one NVLink pair and the
    // four-GPU size two pairs over PCIe (link_group 2: a four-way group crosses PCIe). The
    // NC H100 v5 sizes carry H100 NVL 94GB cards; the series page names no link, but the
    // two-GPU size's pair is NVLink-joined (Azure/azhpc-images issue 443: nvidia-smi shows
    // the links, which NCCL uses; issue 332: "NCCL detects the NVlink connectivity").
    // Within a series and region the price is per GPU: the two-GPU sizes cost twice the
    // one-GPU sizes.
    {.name = "Standard_NC24ads_A100_v4", .provider = instance_provider::azure, .region = "eastus",
     .price_per_hour_usd = 3.673, .price_date = skypilot_azure_date, .price_snapshot = skypilot_azure_commit,
     .price_source = skypilot_azure_csv, .price_date_source = skypilot_catalog_pr_79,
     .accelerator = "NVIDIA A100 PCIe 80GB", .accelerator_count = 1, .vcpus = 24, .host_memory = 220,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::none,
     .spec_source = azure_nc_a100_v4_sizes},
    {.name = "Standard_NC48ads_A100_v4", .provider = instance_provider::azure, .region = "eastus",
     .price_per_hour_usd = 7.346, .price_date = skypilot_azure_date, .price_snapshot = skypilot_azure_commit,
     .price_source = skypilot_azure_csv, .price_date_source = skypilot_catalog_pr_79,
     .accelerator = "NVIDIA A100 PCIe 80GB", .accelerator_count = 2, .vcpus = 48, .host_memory = 440,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::nvlink,
     .spec_source = azure_nc_a100_v4_sizes},
    {.name = "Standard_NC40ads_H100_v5", .provider = instance_provider::azure, .region = "eastus",
     .price_per_hour_usd = 6.98, .price_date = skypilot_azure_date, .price_snapshot = skypilot_azure_commit,
     .price_source = skypilot_azure_csv, .price_date_source = skypilot_catalog_pr_79,
     .accelerator = "NVIDIA H100 NVL 94GB", .accelerator_count = 1, .vcpus = 40, .host_memory = 320,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::none,
     .spec_source = azure_nc_h100_v5_sizes},
    {.name = "Standard_NC80adis_H100_v5", .provider = instance_provider::azure, .region = "eastus",
     .price_per_hour_usd = 13.96, .price_date = skypilot_azure_date, .price_snapshot = skypilot_azure_commit,
     .price_source = skypilot_azure_csv, .price_date_source = skypilot_catalog_pr_79,
     .accelerator = "NVIDIA H100 NVL 94GB", .accelerator_count = 2, .vcpus = 80, .host_memory = 640,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::nvlink,
     .spec_source = azure_nc_h100_v5_sizes},

    // ---- Lambda: SkyPilot's Lambda catalogue as a dated pull request changed it.
    {.name = "gpu_1x_a10", .provider = instance_provider::lambda, .region = "us-east-1",
     .price_per_hour_usd = 0.6, .price_date = "2023-02-03", .price_source = skypilot_catalog_pr_15,
     .accelerator = "NVIDIA A10", .accelerator_count = 1, .vcpus = 30, .host_memory = 200,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::none},
    // The pull request adds this type; the catalogue's GPU memory field for it (40 GiB) is
    // the one its review questions, the name says 80 GB SXM4.
    {.name = "gpu_8x_a100_80gb_sxm4", .provider = instance_provider::lambda, .region = "australia-southeast-1",
     .price_per_hour_usd = 12.0, .price_date = "2023-02-03", .price_source = skypilot_catalog_pr_15,
     .accelerator = "NVIDIA A100 SXM4 80GB", .accelerator_count = 8, .vcpus = 240, .host_memory = 1800,
     .host_memory_unit = memory_unit::gib, .interconnect = interconnect_kind::nvswitch},
};
} // namespace detail

/// Every priced instance, grouped by provider.
inline constexpr table_ref<cloud_instance> instance_catalogue{detail::instance_rows};

/// Looks an instance type up by name (case, spaces and punctuation ignored).
constexpr const cloud_instance* find_instance(std::string_view name) noexcept {
    for (const auto& row : instance_catalogue)
        if (detail::loose_equals(row.name, name)) return &row;
    return nullptr;
}

namespace detail {
constexpr bool is_iso_date(std::string_view s) noexcept {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
    for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u})
        if (s[i] < '0' || s[i] > '9') return false;
    const int month = (s[5] - '0') * 10 + (s[6] - '0');
    const int day = (s[8] - '0') * 10 + (s[9] - '0');
    return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}
constexpr bool is_commit(std::string_view s) noexcept {
    if (s.size() != 40) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}
/// Every row prices something real: a resolvable accelerator, a positive price with its
/// date, an https source, plausible host figures.
constexpr bool instance_rows_are_sane() noexcept {
    for (const auto& r : instance_catalogue) {
        if (r.name.empty() || r.region.empty()) return false;
        if (!(r.price_per_hour_usd > 0 && r.price_per_hour_usd < 10'000)) return false;
        const bool dated = is_iso_date(r.price_date);
        if (!dated) return false;
        if (!r.price_snapshot.empty() && !is_commit(r.price_snapshot)) return false;
        // A snapshot carries no date of its own: a dated one names the page the date is from.
        if (dated && !r.price_snapshot.empty() && !r.price_date_source.starts_with("https://")) return false;
        if (!r.price_date_source.empty() && !(dated && r.price_date_source.starts_with("https://"))) return false;
        if (!r.price_source.starts_with("https://")) return false;
        if (!r.spec_source.empty() && !r.spec_source.starts_with("https://")) return false;
        const std::size_t d = device_index(r.accelerator);
        if (d == no_device || device_catalogue[d].name != r.accelerator) return false; // canonical, resolves
        if (r.accelerator_count == 0 || r.accelerator_count > 64) return false;
        if (r.vcpus == 0 || !(r.host_memory > 0)) return false;
        if (r.accelerator_count == 1 && r.interconnect != interconnect_kind::none) return false;
        if (r.accelerator_count > 1 && r.interconnect == interconnect_kind::none) return false;
        // A link group holds 2 or more accelerators, fewer than all, and divides them.
        if (r.link_group != 0 && (r.link_group < 2 || r.link_group >= r.accelerator_count ||
                                  r.accelerator_count % r.link_group != 0))
            return false;
    }
    return true;
}
constexpr bool instance_names_are_unique() noexcept {
    for (std::size_t i = 0; i < instance_catalogue.size(); ++i)
        for (std::size_t j = i + 1; j < instance_catalogue.size(); ++j)
            if (loose_equals(instance_catalogue[i].name, instance_catalogue[j].name)) return false;
    return true;
}
} // namespace detail
static_assert(detail::instance_rows_are_sane(), "instance_catalogue: a row is unpriced, undated or unresolved");
static_assert(detail::instance_names_are_unique(), "instance_catalogue: duplicate instance type");

/// Assumptions behind the cost estimate. None is fitted to measurements; each is a stated
/// modelling choice a caller can change.
struct cost_assumptions {
    /// Tensor-parallel decode over t devices joined by a switched or direct device fabric
    /// (NVLink, NVSwitch, NeuronLink, ICI, XGMI, Infinity Fabric) is modelled as one device
    /// with t x the memory bandwidth and compute, times this efficiency: the all-reduce
    /// after each layer costs time the single device would not spend.
    double fabric_scaling_efficiency = 0.8;
    /// The same over PCIe (or no published device link): all-reduces cross the host bus.
    double pcie_scaling_efficiency = 0.5;
    /// Instance memory usable for the model, as a fraction of the accelerators' total
    /// (the rest is left to the driver, allocator fragmentation, other processes). 0.9 is
    /// plan_options::memory_headroom's 10 % (vLLM's default gpu_memory_utilization), so
    /// an instance fits here when the planner would find the memory on its devices.
    double usable_memory_fraction = 0.9;
    /// llama.cpp's block formats (Q4_K_M, Q8_0, …) run on GPUs only: the Neuron and TPU
    /// stacks do not load GGUF. When false, the quant table's `dequantizable` decides.
    bool gguf_on_gpus_only = true;
};

/// What serving a model on one instance would look like. Every number is an estimate.
struct instance_cost_estimate {
    const cloud_instance* instance = nullptr; ///< nullptr: nothing fits (see cheapest_instance)
    bool fits = false;           ///< the model fits the instance's accelerators and they run the format
    bool format_supported = false;
    /// estimate_memory(...).total_bytes(), plus device_overhead_bytes for each accelerator
    /// past the first (each holds its own runtime and activation buffers)
    std::uint64_t required_bytes = 0;
    std::uint64_t available_bytes = 0; ///< accelerators x memory x usable_memory_fraction
    /// Output tokens per second for the whole instance: the per-sequence decode rate of
    /// one replica's tensor-parallel group (the header's model, estimate_throughput's
    /// formula with each rank's share of the KV cache) x the batch x the replicas.
    double decode_tokens_per_second = 0;
    /// Copies of the model served side by side, each on `replica_accelerators`; 0 when it
    /// does not fit.
    std::uint32_t replicas = 0;
    /// Accelerators of one replica: at least the fewest that hold the model, more where
    /// a wider split serves faster (see cost_assumptions); 0 when it does not fit.
    std::uint32_t replica_accelerators = 0;
    /// Of a replica's accelerators, those that split each layer (tensor parallel); the
    /// replica is replica_accelerators / tensor_parallel pipeline stages of that width.
    /// 0 when it does not fit.
    std::uint32_t tensor_parallel = 0;
    double price_per_hour_usd = 0;
    /// price per hour / (decode tokens per second x 3600) x 1e6; 0 when unknown.
    double usd_per_million_output_tokens = 0;

    /// An instance was chosen (fits is only ever true with `instance` set).
    constexpr bool found() const noexcept { return fits; }
};

namespace detail {
constexpr bool runs_format(const device_spec& d, quant_format q, const cost_assumptions& a) noexcept {
    const auto& qi = info(q);
    const bool gguf = qi.scheme == quant_scheme::gguf_block || qi.scheme == quant_scheme::gguf_mix;
    if (gguf && a.gguf_on_gpus_only) return family_of(d.kind) == family::gpu;
    if (d.peak.supports(qi.native_compute)) return true;
    // fp16 weights run as bf16 where a device has no fp16 units (TPUs): same size.
    if (qi.native_compute == dtype::fp16 && d.peak.supports(dtype::bf16)) return true;
    if (dequantized_on_gpus_only(q)) return family_of(d.kind) == family::gpu;
    return qi.dequantizable;
}
/// `t` accelerators like `one` as one device for tensor-parallel decode: t x bandwidth
/// and t x peak, times the scaling efficiency.
constexpr accelerator_profile tensor_parallel_profile(const accelerator_profile& one, std::uint32_t t,
                                                      interconnect_kind link, const cost_assumptions& a) noexcept {
    accelerator_profile p = one;
    if (t <= 1) return p;
    const double eff = is_device_fabric(link) ? a.fabric_scaling_efficiency : a.pcie_scaling_efficiency;
    const double scale = static_cast<double>(t) * eff;
    p.memory_bandwidth_gbps = {p.memory_bandwidth_gbps.value_or(0) * scale, origin::estimated};
    p.peak.fp64 *= scale;
    p.peak.fp32 *= scale;
    p.peak.tf32 *= scale;
    p.peak.bf16 *= scale;
    p.peak.fp16 *= scale;
    p.peak.fp8 *= scale;
    p.peak.int8 *= scale;
    p.peak.fp6 *= scale;
    p.peak.fp4 *= scale;
    p.peak.int4 *= scale;
    p.peak_from = origin::estimated;
    return p;
}
/// `v` as bytes: rounded down, 0 for a negative value or NaN, 2^64 - 1 past it.
constexpr std::uint64_t saturated_bytes(double v) noexcept {
    if (!(v > 0)) return 0;
    if (v >= 1.8e19) return ~std::uint64_t{0};
    return static_cast<std::uint64_t>(v);
}
/// How a replica lays out on its `k` accelerators: `tensor` of them split each layer
/// (tensor parallel), the rest of k in pipeline stages of that width; `cache_copies` is
/// how many copies of the KV cache the tensor-parallel ranks hold together, t x
/// rank_kv_share (1 when the heads divide evenly, t for a latent cache).
struct replica_layout {
    std::uint32_t tensor = 1;
    double cache_copies = 1;
};
/// A replica on `k` accelerators split `t` ways, t dividing k (equal pipeline stages of t):
/// the split must divide the attention (tensor_parallel_splits, the planner's rule), and
/// the copies of the KV cache it makes (rank_kv_share) must still fit the k accelerators'
/// `room` bytes beside the rest of the replica's `need`. `tensor` is 0 where it does not.
/// A latent cache (MLA) is whole on every rank, so a long context narrows the split; t = 1
/// (a pipeline) always fits, since `need` fits `room`.
constexpr replica_layout replica_layout_at(const model_spec& m, std::uint32_t k, std::uint32_t t, std::uint64_t need,
                                           double room, std::uint64_t kv_bytes) noexcept {
    if (t <= 1) return {};
    if (k % t != 0 || !tensor_parallel_splits(m.attention_heads, m.cache_heads(), t)) return {0, 0};
    const double copies = static_cast<double>(t) * rank_kv_share(m.cache_heads(), t);
    const double extra = static_cast<double>(kv_bytes) * (copies - 1.0);
    if (static_cast<double>(need) + extra > room) return {0, 0};
    return {t, copies};
}
} // namespace detail

/// Estimates serving `m` at format `q` and shape `s` on instance `row`: whether it fits
/// and what a million output tokens cost at the estimated decode rate. An estimate.
/// Assumptions out of range (a memory fraction or an efficiency not in (0, 1], or not a
/// number) fit nothing; nor does a model without layers or size (plan_sharding's
/// bad_model).
constexpr instance_cost_estimate estimate_instance_cost(const cloud_instance& row, const model_spec& m, quant_format q,
                                                        const inference_shape& s = {},
                                                        const cost_assumptions& a = {}) noexcept {
    instance_cost_estimate e;
    e.instance = &row;
    e.price_per_hour_usd = row.price_per_hour_usd;
    const std::size_t index = detail::device_index(row.accelerator);
    if (index == detail::no_device || row.accelerator_count == 0) return e;
    if (m.layers == 0 || (m.parameters == 0 && m.hidden_size == 0)) return e;
    const auto fraction = [](double f) { return f > 0 && f <= 1; }; // false for NaN
    if (!fraction(a.usable_memory_fraction) || !fraction(a.fabric_scaling_efficiency) ||
        !fraction(a.pcie_scaling_efficiency))
        return e;
    const device_spec& d = device_catalogue[index];
    // Every accelerator past the first holds its own runtime and activation buffers, as
    // plan_sharding charges them.
    e.required_bytes = detail::sat_add(estimate_memory(m, q, s).total_bytes(),
                                       detail::sat_mul(device_overhead_bytes(m, s), row.accelerator_count - 1));
    // What the driver reports, not the spec sheet's figure: inline ECC keeps a sixteenth.
    const double per_device = static_cast<double>(reported_memory_bytes(d));
    const double total = per_device * static_cast<double>(row.accelerator_count);
    e.available_bytes = detail::saturated_bytes(total * a.usable_memory_fraction);
    e.format_supported = detail::runs_format(d, q, a);
    e.fits = e.format_supported && e.required_bytes > 0 && e.required_bytes <= e.available_bytes;
    if (!e.fits) return e;
    // The fewest accelerators that hold one copy: the same test with k of them.
    const std::uint64_t one = estimate_memory(m, q, s).total_bytes();
    const auto need = [&](std::uint32_t k) {
        return detail::sat_add(one, detail::sat_mul(device_overhead_bytes(m, s), k - 1));
    };
    const auto room = [&](std::uint32_t k) { return per_device * k * a.usable_memory_fraction; };
    std::uint32_t fewest = 1;
    for (; fewest < row.accelerator_count; ++fewest)
        if (static_cast<double>(need(fewest)) <= room(fewest)) break;
    inference_shape one_batch = s; // a batch of 0 is read as 1, as estimate_throughput does
    if (one_batch.batch == 0) one_batch.batch = 1;
    const std::uint64_t kv = kv_cache_bytes(m, one_batch);
    const double read = decode_bytes_per_token(m, q, one_batch); // weights and one copy of the cache
    // The profile's name is the catalogue row's name already, which is all
    // estimate_throughput reads through `spec`; dropping the pointer keeps its null test
    // out of constant evaluation, which GCC refuses under -fsanitize=undefined.
    accelerator_profile one_device = profile_from_spec(d);
    one_device.spec = nullptr;
    // Replicas of `width` accelerators each, for every width from the fewest up (at most
    // 64 of them), each split every way that fits, from the widest tensor-parallel split
    // to a pipeline (t = 1): a wider replica may split into more ranks (the fewest may be a
    // count the heads do not divide), fewer replicas fit, and a split over a slow link can
    // be slower than a pipeline. The fastest in all wins; among equals the narrowest
    // replica, then the widest split.
    const std::uint32_t widest =
        row.accelerator_count - fewest > 63 ? fewest + 63 : row.accelerator_count;
    for (std::uint32_t width = fewest; width <= widest; ++width) {
        for (std::uint32_t t = width; t >= 1; --t) {
            const auto layout = detail::replica_layout_at(m, width, t, need(width), room(width), kv);
            if (layout.tensor == 0) continue;
            // A split wider than one link group (two NVLink-bridged pairs) crosses PCIe.
            const interconnect_kind link =
                row.link_group != 0 && layout.tensor > row.link_group ? interconnect_kind::pcie : row.interconnect;
            const auto device = detail::tensor_parallel_profile(one_device, layout.tensor, link, a);
            // The t ranks read the weights once between them and each its share of the
            // cache: as one device of t x the bandwidth, the cache counts cache_copies times.
            const double bytes = read + static_cast<double>(kv) * (layout.cache_copies - 1.0);
            const std::uint32_t replicas = row.accelerator_count / width;
            const double rate =
                detail::decode_rate(device, m, q, one_batch, bytes, throughput_constants{}).tokens_per_second *
                static_cast<double>(one_batch.batch) * static_cast<double>(replicas);
            if (e.replicas != 0 && !(rate > e.decode_tokens_per_second)) continue;
            e.replicas = replicas;
            e.replica_accelerators = width;
            e.tensor_parallel = layout.tensor;
            e.decode_tokens_per_second = rate;
        }
    }
    if (e.decode_tokens_per_second > 0)
        e.usd_per_million_output_tokens = row.price_per_hour_usd / (e.decode_tokens_per_second * 3600.0) * 1e6;
    return e;
}

/// What `cheapest_instance` minimizes.
enum class cost_objective : std::uint8_t {
    price_per_hour,           ///< the cheapest instance to rent that holds the model
    price_per_million_tokens, ///< the cheapest per estimated output token
};

/// The cheapest instance in `rows` whose accelerators together hold the model and run the
/// format. When none does, the result has `instance == nullptr` and `found() == false`:
/// nothing is chosen silently. Ties keep the earlier row. All figures are estimates.
constexpr instance_cost_estimate cheapest_instance(const model_spec& m, quant_format q, const inference_shape& s = {},
                                                   cost_objective objective = cost_objective::price_per_hour,
                                                   const cost_assumptions& a = {},
                                                   table_ref<cloud_instance> rows = instance_catalogue) noexcept {
    instance_cost_estimate best;
    for (const auto& row : rows) {
        const auto e = estimate_instance_cost(row, m, q, s, a);
        if (!e.fits) continue;
        if (objective == cost_objective::price_per_million_tokens && !(e.usd_per_million_output_tokens > 0))
            continue;
        const double key = objective == cost_objective::price_per_hour ? e.price_per_hour_usd
                                                                       : e.usd_per_million_output_tokens;
        // A caller's row without a usable price (0, negative, NaN, infinite) is no candidate:
        // a NaN would otherwise win every later comparison.
        if (!(key > 0) || key > std::numeric_limits<double>::max()) continue;
        const double best_key = objective == cost_objective::price_per_hour ? best.price_per_hour_usd
                                                                            : best.usd_per_million_output_tokens;
        if (!best.found() || key < best_key) best = e;
    }
    if (!best.found()) {
        // Report the requirement even when nothing fits.
        best = instance_cost_estimate{};
        best.required_bytes = estimate_memory(m, q, s).total_bytes();
    }
    return best;
}

// Compile-time examples: every row resolves; an 8-GPU H100 instance holds a 70B model at
// fp16 (about 141 GB of weights) and a single L4 (24 GiB) does not.
static_assert(find_instance("p5.48xlarge")->device()->memory_bytes == 80 * units::gib);
static_assert(find_instance("P5.48XLARGE")->price_per_hour_usd == 55.04);
static_assert(find_instance("a2-highgpu-1g")->host_memory_bytes() == 85 * units::gb);
static_assert(find_instance("g6.2xlarge")->host_memory_bytes() == 32 * units::gib);

AI_HWACCEL_NAMESPACE_END
