#include "ai_hwaccel/detect/merge.hpp"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;
using namespace ah::literals;

namespace {

ah::accelerator_profile gpu(ah::device_kind kind, std::uint32_t index, std::string_view uuid = {},
                            std::optional<ah::pci_address> pci = std::nullopt) {
    ah::accelerator_profile p;
    p.kind = kind;
    p.index = index;
    p.uuid = uuid;
    p.pci = pci;
    const std::string name = "GPU " + std::to_string(index);
    p.name = std::string_view(name);
    return p;
}

struct env_map {
    std::map<std::string, std::string, std::less<>> vars;
    std::optional<std::string> operator()(std::string_view name) const {
        if (auto it = vars.find(name); it != vars.end()) return it->second;
        return std::nullopt;
    }
};

std::vector<bool> availability(const std::vector<ah::accelerator_profile>& ps) {
    std::vector<bool> v;
    for (const auto& p : ps) v.push_back(p.available);
    return v;
}

} // namespace

TEST_CASE("merge_duplicates: the same card through two backends is one device") {
    const auto addr = *ah::parse_pci_address("0000:01:00.0");
    auto cuda = gpu(ah::device_kind::cuda_gpu, 0, "GPU-5a7c3e2f-1b2c-4d5e-8f90-0a1b2c3d4e5f", addr);
    cuda.memory_bytes = {24_GiB, ah::origin::tool};
    cuda.memory_bandwidth_gbps = {1008.0, ah::origin::catalogue};
    auto vk = gpu(ah::device_kind::vulkan_gpu, 3, "5A7C3E2F1B2C4D5E8F900A1B2C3D4E5F");
    vk.memory_bytes = {23_GiB, ah::origin::sysfs};  // less trustworthy than the tool: ignored
    vk.compute_units = {128, ah::origin::tool};     // unknown to the first view: taken
    vk.driver_version = "1.3.277";
    auto other = gpu(ah::device_kind::vulkan_gpu, 4, "00000000-0000-0000-0000-000000000000");
    auto other2 = gpu(ah::device_kind::vulkan_gpu, 5, "00000000-0000-0000-0000-000000000000");
    std::vector<ah::accelerator_profile> ps{ah::accelerator_profile{}, cuda, vk, other, other2};
    ps[0].name = "CPU";
    CHECK(ah::merge_duplicates(ps) == 1);
    REQUIRE(ps.size() == 4); // all-zero UUIDs mean "unknown", never "the same"
    CHECK(ps[1].kind == ah::device_kind::cuda_gpu);
    CHECK(ps[1].index == 0);
    CHECK(*ps[1].memory_bytes == 24_GiB);
    CHECK(*ps[1].compute_units == 128);
    CHECK(ps[1].driver_version.view() == "1.3.277");

    // By PCI address where only one side names a UUID.
    auto a = gpu(ah::device_kind::rocm_gpu, 0, "", addr);
    auto b = gpu(ah::device_kind::vulkan_gpu, 0, "ffff", addr);
    std::vector<ah::accelerator_profile> two{a, b};
    CHECK(ah::merge_duplicates(two) == 1);
    CHECK(two[0].uuid.view() == "ffff");
    // Different addresses are different devices even with equal UUIDs.
    auto c = gpu(ah::device_kind::rocm_gpu, 1, "GPU-1234567890", *ah::parse_pci_address("0000:02:00.0"));
    auto d = gpu(ah::device_kind::rocm_gpu, 2, "GPU-1234567890", *ah::parse_pci_address("0000:03:00.0"));
    std::vector<ah::accelerator_profile> distinct{c, d};
    CHECK(ah::merge_duplicates(distinct) == 0);
    // One address, two UUIDs that differ: two devices (compute partitions may share a
    // function), not one with the other's figures folded in. Before, merged.
    auto part0 = gpu(ah::device_kind::rocm_gpu, 0, "GPU-aaaaaaaaaaaaaaaa", addr);
    auto part1 = gpu(ah::device_kind::rocm_gpu, 1, "GPU-bbbbbbbbbbbbbbbb", addr);
    std::vector<ah::accelerator_profile> partitions{part0, part1};
    CHECK(ah::merge_duplicates(partitions) == 0);
}

TEST_CASE("merge_duplicates: one card seen three ways folds whole, in any order") {
    // hand-made: A knows the UUID, B the PCI address, C both. Folding C into whichever
    // came first gives it the key the other needs; before, the one passed over stayed.
    const auto addr = *ah::parse_pci_address("0000:01:00.0");
    const auto a = gpu(ah::device_kind::cuda_gpu, 0, "GPU-5a7c3e2f-1b2c-4d5e-8f90-0a1b2c3d4e5f");
    const auto b = gpu(ah::device_kind::vulkan_gpu, 1, "", addr);
    const auto c = gpu(ah::device_kind::rocm_gpu, 2, "GPU-5a7c3e2f-1b2c-4d5e-8f90-0a1b2c3d4e5f", addr);
    for (const auto& order : {std::vector{a, b, c}, std::vector{b, a, c}, std::vector{c, a, b}, std::vector{a, c, b}}) {
        auto ps = order;
        CHECK(ah::merge_duplicates(ps) == 2);
        CHECK(ps.size() == 1);
    }
}

TEST_CASE("merge_duplicates: a graphics API's heap does not replace a vendor view's memory") {
    // An integrated Intel GPU given the host's 62.6 GiB (sysfs) and 47.1 GiB free, and the
    // Vulkan driver's 31.3 GiB heap for it (tool, but a heap: the vendor view's total is
    // kept, as the README says). Before, the heap replaced it.
    const auto addr = *ah::parse_pci_address("0000:00:02.0");
    auto igpu = gpu(ah::device_kind::intel_gpu, 0, "", addr);
    igpu.unified_memory = true;
    igpu.memory_bytes = {67164057600, ah::origin::sysfs};
    igpu.memory_free_bytes = {50569248768, ah::origin::sysfs};
    auto vk = gpu(ah::device_kind::vulkan_gpu, 0, "", addr);
    vk.memory_bytes = {33580670976, ah::origin::tool};
    vk.compute_units = {96, ah::origin::tool};
    std::vector<ah::accelerator_profile> ps{igpu, vk};
    CHECK(ah::merge_duplicates(ps) == 1);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].memory_bytes == ah::sourced<std::uint64_t>{67164057600, ah::origin::sysfs});
    CHECK(ps[0].memory_free_bytes == ah::sourced<std::uint64_t>{50569248768, ah::origin::sysfs});
    CHECK(*ps[0].compute_units == 96); // the rest merges as before
    // A 4 GiB Radeon: amdgpu's VRAM total, not RADV's device-local heap 16 MiB short of it
    // (the real capture vulkaninfo/full-not-summary_rx5500xt_radv_mesa23.1.txt).
    const auto card = *ah::parse_pci_address("0000:03:00.0");
    auto rocm = gpu(ah::device_kind::rocm_gpu, 0, "", card);
    rocm.memory_bytes = {4_GiB, ah::origin::sysfs};
    auto radv = gpu(ah::device_kind::vulkan_gpu, 0, "", card);
    radv.memory_bytes = {4278190080, ah::origin::tool};
    std::vector<ah::accelerator_profile> amd{rocm, radv};
    ah::merge_duplicates(amd);
    REQUIRE(amd.size() == 1);
    CHECK(*amd[0].memory_bytes == 4_GiB);
    // A vendor view that knows no memory takes the heap.
    rocm.memory_bytes = {};
    std::vector<ah::accelerator_profile> unknown{rocm, radv};
    ah::merge_duplicates(unknown);
    CHECK(*unknown[0].memory_bytes == 4278190080);
}

TEST_CASE("merge_duplicates: free memory stays within the total kept") {
    // Totals from two views can differ: a vendor view that knows no total takes the heap,
    // and a free figure above it is held to it.
    const auto addr = *ah::parse_pci_address("0000:00:02.0");
    auto igpu = gpu(ah::device_kind::intel_gpu, 0, "", addr);
    igpu.unified_memory = true;
    igpu.memory_free_bytes = {50569248768, ah::origin::sysfs};
    auto vk = gpu(ah::device_kind::vulkan_gpu, 0, "", addr);
    vk.memory_bytes = {33580670976, ah::origin::tool};
    std::vector<ah::accelerator_profile> ps{igpu, vk};
    CHECK(ah::merge_duplicates(ps) == 1);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].memory_bytes == ah::sourced<std::uint64_t>{33580670976, ah::origin::tool});
    CHECK(ps[0].memory_free_bytes == ah::sourced<std::uint64_t>{33580670976, ah::origin::sysfs});
    // Free under the total kept is left alone, whichever view gave it.
    vk.memory_free_bytes = {1_GiB, ah::origin::tool};
    std::vector<ah::accelerator_profile> again{igpu, vk};
    ah::merge_duplicates(again);
    CHECK(again[0].memory_free_bytes == ah::sourced<std::uint64_t>{1_GiB, ah::origin::tool});
    igpu.memory_free_bytes = {2_GiB, ah::origin::sysfs};
    igpu.memory_bytes = {67164057600, ah::origin::sysfs};
    std::vector<ah::accelerator_profile> lower{igpu, gpu(ah::device_kind::vulkan_gpu, 0, "", addr)};
    ah::merge_duplicates(lower);
    CHECK(lower[0].memory_free_bytes == ah::sourced<std::uint64_t>{2_GiB, ah::origin::sysfs});
}

TEST_CASE("merge_duplicates: a Vulkan view at a card's PCI address is that card, whatever its UUID") {
    // RADV writes the PCI address into deviceUUID (the real capture above:
    // 00000000-0300-0000-0000-000000000000 at bus 3); amdgpu's unique_id is another number.
    const auto card = *ah::parse_pci_address("0000:03:00.0");
    auto rocm = gpu(ah::device_kind::rocm_gpu, 0, "4fe81514950cd6cd", card);
    auto radv = gpu(ah::device_kind::vulkan_gpu, 0, "00000000-0300-0000-0000-000000000000", card);
    std::vector<ah::accelerator_profile> ps{rocm, radv};
    CHECK(ah::merge_duplicates(ps) == 1);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].kind == ah::device_kind::rocm_gpu);
    CHECK(ps[0].uuid.view() == "4fe81514950cd6cd");
    // Two vendor views of one function with different UUIDs stay two (partitions).
    std::vector<ah::accelerator_profile> parts{rocm, gpu(ah::device_kind::rocm_gpu, 1, "1111222233334444", card)};
    CHECK(ah::merge_duplicates(parts) == 0);
}

#if AI_HWACCEL_BACKEND_VULKAN
TEST_CASE("merge_duplicates: Dozen's view of a card (Vulkan over Direct3D 12) folds into the card's own") {
    // WSL: nvidia-smi's GPU, and Mesa's Dozen device for it, which names no PCI address
    // and wraps the adapter's name (dzn_device.c); hand-made from the public reports of
    // WSL's vulkaninfo (deviceName = Microsoft Direct3D12 (NVIDIA GeForce RTX 3080)).
    auto cuda = gpu(ah::device_kind::cuda_gpu, 0, "GPU-5a7c3e2f-1b2c-4d5e-8f90-0a1b2c3d4e5f",
                    *ah::parse_pci_address("0000:01:00.0"));
    cuda.maker = ah::vendor::nvidia;
    cuda.pci_device_id = 0x2206;
    cuda.memory_bytes = {10_GiB, ah::origin::tool};
    auto dozen = gpu(ah::device_kind::vulkan_gpu, 1, "0123456789abcdef0123456789abcdef");
    dozen.name = "Microsoft Direct3D12 (NVIDIA GeForce RTX 3080)";
    dozen.maker = ah::vendor::nvidia;
    dozen.pci_device_id = 0x2206;
    dozen.memory_bytes = {9_GiB, ah::origin::tool};
    auto llvmpipe = gpu(ah::device_kind::vulkan_gpu, 2);
    llvmpipe.software = true;
    std::vector<ah::accelerator_profile> ps{cuda, dozen, llvmpipe};
    CHECK(ah::merge_duplicates(ps) == 1);
    REQUIRE(ps.size() == 2);
    CHECK(ps[0].kind == ah::device_kind::cuda_gpu);
    CHECK(*ps[0].memory_bytes == 10_GiB);
    CHECK(ps[0].uuid.view() == "GPU-5a7c3e2f-1b2c-4d5e-8f90-0a1b2c3d4e5f");
    // Windows on Arm: the Adreno through Qualcomm's own driver and through Dozen; no PCI id.
    auto adreno = gpu(ah::device_kind::vulkan_gpu, 0);
    adreno.name = "Qualcomm(R) Adreno(TM) X1-85 GPU";
    adreno.maker = ah::vendor::qualcomm;
    auto wrapped = gpu(ah::device_kind::vulkan_gpu, 1);
    wrapped.name = "Microsoft Direct3D12 (Qualcomm(R) Adreno(TM) X1-85 GPU)";
    wrapped.maker = ah::vendor::qualcomm;
    std::vector<ah::accelerator_profile> arm{adreno, wrapped};
    CHECK(ah::merge_duplicates(arm) == 1);
    REQUIRE(arm.size() == 1);
    CHECK(arm[0].name.view() == "Qualcomm(R) Adreno(TM) X1-85 GPU");
    // Alone (no other view of the card), Dozen's device is the card.
    std::vector<ah::accelerator_profile> alone{dozen};
    CHECK(ah::merge_duplicates(alone) == 0);
    CHECK(alone.size() == 1);
    // Two cards and one Dozen device: which one it is cannot be told, nothing pairs.
    auto cuda1 = cuda;
    cuda1.index = 1;
    cuda1.uuid = "GPU-00000000-1111-2222-3333-444444444444";
    cuda1.pci = *ah::parse_pci_address("0000:02:00.0");
    std::vector<ah::accelerator_profile> two{cuda, cuda1, dozen};
    CHECK(ah::merge_duplicates(two) == 0);
}
#endif

TEST_CASE("uuid_key") {
    CHECK(ah::detail::uuid_key("GPU-5A7C3E2F-1B2C") == "5a7c3e2f1b2c");
    CHECK(ah::detail::uuid_key("MIG-abcdef01") == "abcdef01");
    // R450/R460's MIG UUIDs: the GPU's UUID and the instance, which tells instances apart.
    CHECK(ah::detail::uuid_key("MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/1/0") ==
          "5c89852cd268c3f31b07005d5ae1dc3f/1/0");
    CHECK(ah::detail::uuid_key("MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/1/1") !=
          ah::detail::uuid_key("MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/1/0"));
    // rocm-smi's unique id, amdgpu's unique_id and rocminfo's UUID of one board.
    CHECK(ah::detail::uuid_key("0x67c63ac3c3c637f9") == "67c63ac3c3c637f9");
    CHECK(ah::detail::uuid_key("0x67c63ac3c3c637f9") == ah::detail::uuid_key("GPU-67c63ac3c3c637f9"));
    CHECK(ah::detail::uuid_key("67C63AC3C3C637F9") == "67c63ac3c3c637f9");
    CHECK(ah::detail::uuid_key("0x0000000000000000").empty());
    CHECK(ah::detail::uuid_key("not a uuid").empty());
    CHECK(ah::detail::uuid_key("0000-0000-0000").empty());
    CHECK(ah::detail::uuid_key("").empty());
}

#if AI_HWACCEL_BACKEND_CUDA && AI_HWACCEL_BACKEND_ROCM && AI_HWACCEL_BACKEND_NEURON && AI_HWACCEL_BACKEND_GAUDI
TEST_CASE("apply_visibility: CUDA_VISIBLE_DEVICES") {
    auto four = [] {
        std::vector<ah::accelerator_profile> ps;
        for (std::uint32_t i = 0; i < 4; ++i)
            ps.push_back(gpu(ah::device_kind::cuda_gpu, i, "GPU-" + std::to_string(i) + "aaaaaaaa-0000-4000-8000-00000000000" + std::to_string(i)));
        ps.push_back(gpu(ah::device_kind::rocm_gpu, 0)); // other backends are untouched
        return ps;
    };
    auto run = [&](std::string value) {
        auto ps = four();
        std::vector<ah::warning> w;
        ah::apply_visibility(ps, env_map{{{"CUDA_VISIBLE_DEVICES", value}}}, w);
        return std::pair{availability(ps), w};
    };
    CHECK(run("1,3").first == std::vector<bool>{false, true, false, true, true});
    CHECK(run(" 2 ").first == std::vector<bool>{false, false, true, false, true});
    CHECK(run("").first == std::vector<bool>{false, false, false, false, true}); // empty hides all
    CHECK(run("-1").first == std::vector<bool>{false, false, false, false, true});
    CHECK(run("0,7,1").first == std::vector<bool>{true, false, false, false, true}); // stops at 7
    CHECK(run("GPU-3aaa").first == std::vector<bool>{false, false, false, true, true}); // unique prefix
    CHECK(run("GPU-3aaaaaaaa-0000-4000-8000-000000000003,0").first == std::vector<bool>{true, false, false, true, true});
    const auto [avail, w] = run("1");
    // Three hidden, and first the order the index was read in: the GPUs' names differ.
    REQUIRE(w.size() == 4);
    CHECK(w[0].kind == ah::warning_kind::disagreement);
    CHECK(w[1].kind == ah::warning_kind::hidden_by_mask);
    CHECK(w[1].subject == "CUDA_VISIBLE_DEVICES");
    CHECK(w[1].message == "device 0 (GPU 0) hidden by CUDA_VISIBLE_DEVICES=\"1\"");
    // Unset: everything visible, nothing said.
    auto ps = four();
    std::vector<ah::warning> none;
    ah::apply_visibility(ps, env_map{}, none);
    CHECK(none.empty());
    CHECK(availability(ps) == std::vector<bool>(5, true));
}

TEST_CASE("apply_visibility: HIP_VISIBLE_DEVICES counts among what ROCR_VISIBLE_DEVICES left") {
    std::vector<ah::accelerator_profile> ps;
    for (std::uint32_t i = 0; i < 4; ++i) ps.push_back(gpu(ah::device_kind::rocm_gpu, i));
    std::vector<ah::warning> w;
    ah::apply_visibility(ps, env_map{{{"ROCR_VISIBLE_DEVICES", "1,2,3"}, {"HIP_VISIBLE_DEVICES", "0,9,2"}}}, w);
    // ROCR leaves 1,2,3; HIP's 0 and 2 are the 1st and 3rd of those; 9 names nothing.
    CHECK(availability(ps) == std::vector<bool>{false, true, false, true});
    CHECK(w.size() == 2);
}

TEST_CASE("apply_visibility: NEURON_RT_VISIBLE_CORES and HABANA_VISIBLE_DEVICES") {
    std::vector<ah::accelerator_profile> ps;
    for (std::uint32_t i = 0; i < 4; ++i) {
        ps.push_back(gpu(ah::device_kind::aws_trainium, i));
        ps.back().compute_units = {2, ah::origin::tool}; // 2 NeuronCores per device
    }
    for (std::uint32_t i = 0; i < 2; ++i) ps.push_back(gpu(ah::device_kind::gaudi, i));
    std::vector<ah::warning> w;
    ah::apply_visibility(ps, env_map{{{"NEURON_RT_VISIBLE_CORES", "2-3,7"}, {"HABANA_VISIBLE_DEVICES", "all"}}}, w);
    CHECK(availability(ps) == std::vector<bool>{false, true, false, true, true, true});
    std::vector<ah::warning> w2;
    ah::apply_visibility(ps, env_map{{{"HABANA_VISIBLE_DEVICES", "1"}}}, w2);
    CHECK(availability(ps) == std::vector<bool>{false, true, false, true, false, true});
    // Garbage hides everything it cannot name rather than crashing.
    std::vector<ah::warning> w3;
    ah::apply_visibility(ps, env_map{{{"NEURON_RT_VISIBLE_CORES", "9-2,\xff,99999999999999"}}}, w3);
    CHECK(availability(ps) == std::vector<bool>{false, false, false, false, false, true});
}
#endif
