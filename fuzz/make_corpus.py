#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into OUT/<target>/.

Seeds come from the real captures (../shared/fixtures/real, read only: each is copied
with the target's selector byte in front), from the fixture machines (tests/machines,
packed into fuzz_machine's record format; their expected.json files seed the JSON
reader), and, for the binary model formats, from small files this script writes itself.
Nothing under the source folders is ever modified.

usage: make_corpus.py --fixtures DIR --machines DIR --out DIR
"""
import argparse
import hashlib
import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_SEED = 1 << 20  # larger captures would only slow every execution down


def put(out_dir, data):
    os.makedirs(out_dir, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)


def fixture_files(root):
    """(folder of the capture, bytes) of every real capture, without the .source notes."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(".source") or fn == "README.md":
                continue
            p = os.path.join(dirpath, fn)
            if os.path.islink(p) or not os.path.isfile(p) or os.path.getsize(p) > MAX_SEED:
                continue
            rel = os.path.relpath(p, root)
            with open(p, "rb") as f:
                yield rel.split(os.sep)[0], rel, f.read()


# Which parsers of fuzz_parsers.cpp read the captures of each fixture folder.
PARSERS_FOR = {
    "proc-meminfo": ["cpu.parse_meminfo", "sysfs.for_each_key_value"],
    "gpu-numa-sysfs": ["topology.parse_node_meminfo"],
    "proc-cpuinfo": ["cpu.parse_cpuinfo"],
    "lscpu": ["cpu.parse_lscpu"],
    "lsblk": ["storage.parse_lsblk_json"],
    "container": ["environment.parse_proc_cgroup", "cpu.own_cgroup_path", "cpu.parse_cgroup_cpu_max",
                  "cpu.parse_cgroup_memory_limit"],
    "ibstat": ["fabric.parse_ibstat", "fabric.parse_ibstatus"],
    "infiniband-sysfs": ["fabric.parse_ibstat"],
    "pci-sysfs": ["sysfs.parse_hex_attribute", "topology.parse_pcie_link_speed", "topology.parse_pcie_link_width",
                  "core.parse_pci_address"],
    "nvidia-smi": ["nvidia.parse_nvidia_smi_query_csv", "nvidia.parse_nvidia_smi_list", "nvidia.parse_nvidia_smi_q",
                   "nvidia.parse_nvidia_smi_xml", "nvidia.parse_nvidia_smi_table", "nvidia.parse_nvidia_smi_topo",
                   "nvidia.parse_nvidia_smi_nvlink_status", "nvidia.parse_nvidia_proc_information"],
    "amdgpu-sysfs": ["amd.parse_kfd_node_properties", "amd.parse_pp_dpm_levels", "amd.parse_amdgpu_mem_info",
                     "amd.parse_sysfs_transcript"],
    "rocminfo": ["amd.parse_rocminfo"],
    "rocm-smi": ["amd.parse_rocm_smi"],
    "amd-smi": ["amd.parse_amd_smi_static", "amd.parse_amd_smi_topology", "amd.parse_amd_smi_xgmi",
                "amd.parse_amd_smi_dashboard"],
    "sysctl": ["apple.parse_sysctl", "apple.parse_sysctl_brand_string"],
    "system_profiler": ["apple.parse_system_profiler_text", "apple.parse_system_profiler_json"],
    "xpu-smi": ["intel_gpu.parse_xpu_smi_discovery_table", "intel_gpu.parse_xpu_smi_dump_csv",
                "intel_gpu.parse_xpu_smi_discovery_json"],
    "vulkaninfo": ["vulkan.parse_vulkaninfo", "vulkan.parse_vulkaninfo_json"],
    "tpu": ["tpu.parse_tpu_info", "tpu.parse_tpu_info_version", "tpu.parse_tpu_vfio_transcript"],
    "hl-smi": ["gaudi.parse_hl_smi_query_csv", "gaudi.parse_hl_smi_table", "gaudi.parse_hl_smi_log"],
    "neuron-ls": ["neuron.parse_neuron_ls", "neuron.parse_neuron_ls_topology", "neuron.parse_neuron_ls_json",
                  "neuron.parse_neuron_connected_devices"],
    "npu-sysfs": ["npu.parse_accel_class_listing", "npu.parse_accel_transcript", "npu.parse_dt_compatible"],
    "qaic-util": ["qualcomm.parse_qaic_util_query"],
    "gc-info": ["graphcore.parse_gc_info_list", "graphcore.parse_gc_monitor"],
    "block-sysfs": ["storage.parse_rotational", "storage.classify_block_device", "sysfs.parse_u64"],
    "k8s-env": ["environment.is_kubernetes_namespace"],
}

# Short values for the parsers of single sysfs values.
VALUE_SEEDS = {
    "sysfs.parse_u64": [b"0", b"18446744073709551615", b"18446744073709551616", b"42\n"],
    "sysfs.parse_i64": [b"-1", b"9223372036854775807", b"-9223372036854775808", b"--1"],
    "sysfs.parse_hex_attribute": [b"0x10de\n", b"0x1002", b"ffffffff", b"0x"],
    "sysfs.parse_cpulist": [b"0-15,32-47\n", b"0", b"", b"3-1", b"0-65535", b"1,1,1-2"],
    "sysfs.cpulist_count": [b"0-3,8,10-11", b"0-4294967295"],
    "sysfs.base_name": [b"/sys/bus/pci/drivers/nvidia", b"/", b"a//"],
    "sysfs.join_path": [b"/sys/class/drm\x00../../devices/pci0000:00/0000:00:01.0", b"/\x00../../.."],
    "topology.numa_dir_id": [b"node0", b"node4294967296", b"nodex"],
    "topology.parse_pci_uevent": [b"DRIVER=nvidia\nPCI_CLASS=30200\nPCI_ID=10DE:2330\nPCI_SUBSYS_ID=10DE:16C1\n"
                                  b"PCI_SLOT_NAME=0000:01:00.0\n"
                                  b"MODALIAS=pci:v000010DEd00002330sv000010DEsd000016C1bc03sc02i00\n",
                                  b"PCI_CLASS=60000\nPCI_ID=8086:0D57\nPCI_SUBSYS_ID=0000:0000\n",
                                  b"PCI_ID=10DE:12345\nDRIVER=\n"],
    "topology.parse_pcie_link_speed": [b"16.0 GT/s PCIe\n", b"2.5 GT/s", b"Unknown"],
    "topology.parse_pcie_link_width": [b"16\n", b"0", b"x8"],
    "system.parse_capture_index": [b"# captured\n0\tnvidia-smi-L.txt\tnvidia-smi -L\ntimeout\t-\trocm-smi\n"
                                   b"signal:9\tout\tamd-smi static\nnot-executable\t-\thl-smi\n"],
    "cpu.parse_cgroup_cpu_max": [b"max 100000\n", b"150000 100000", b"-1 0"],
    "cpu.parse_cgroup_cfs_quota": [b"150000\x00100000", b"-1\x00100000"],
    "cpu.parse_cgroup_memory_limit": [b"max\n", b"536870912", b"9223372036854771712"],
    "cpu.cgroup_stat": [b"anon 5368709120\nfile 1073741824\ninactive_file 1073741824\n\x00inactive_file",
                        b"cache 1610612736\ntotal_inactive_file 1073741824\n\x00total_inactive_file"],
    "environment.is_wsl_kernel": [b"5.15.90.1-microsoft-standard-WSL2"],
    "storage.parse_lsblk_size": [b"1.8T", b"512G", b"1000204886016"],
    "storage.classify_block_device": [b"nvme0n1\x00\x00Samsung SSD 980", b"sda\x00QEMU\x00QEMU HARDDISK"],
    "core.parse_pci_address": [b"0000:3b:00.0", b"3b:00.0", b"ffff:ff:1f.7", b"00000001:00:00.0"],
    "core.parse_backend": [b"cuda", b"ROCm", b"intel-npu"],
    "core.parse_quant_format": [b"Q4_K_M", b"fp8", b"MXFP4"],
    "core.find_device": [b"H100 SXM", b"NVIDIA GeForce RTX 4090", b"MI300X"],
    "formats.find_capture_format": [b"proc_cpuinfo", b"LSCPU", b"nvidia-smi-q-xml"],
    "vulkan.parse_vulkan_device_type": [b"PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"],
    # nvidia-smi underlines the header with terminal escapes, into a pipe too (driver 580).
    "nvidia.parse_nvidia_smi_topo": [b"\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
                                     b"GPU0\t X \tNV18\t0-15\t0\t\tN/A\nGPU1\tNV18\t X \t0-15\t0\t\tN/A\n"],
    "nvidia.jetson_module_gpu": [b"NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super\x00"
                                 b"nvidia,p3768-0000+p3767-0005\x00nvidia,p3767-0005\x00nvidia,tegra234\x00",
                                 b"\x00nvidia,p3737-0000+p3701-0005\x00nvidia,tegra234\x00",
                                 b"Raspberry Pi 5\x00raspberrypi,5-model-b\x00"],
    "npu.is_samsung_npu_compatible": [b"samsung,exynos-npu"],
    "npu.is_mediatek_mdla_compatible": [b"mediatek, mt8195-mdla", b"mtk,mdla"],
}


def parser_names():
    """The entries of fuzz_parsers.cpp's table, in order (the selector is the position)."""
    with open(os.path.join(HERE, "fuzz_parsers.cpp"), encoding="utf-8") as f:
        src = f.read()
    table = src[src.index("const entry parsers[] = {"):]
    return re.findall(r'^\s*\{"([\w.]+)",', table, re.M)


# --- tiny writers of the binary model formats -------------------------------------------

GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STRING, GGUF_ARRAY, GGUF_U64 = 4, 5, 6, 7, 8, 9, 10


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_value(t, v):
    if t == GGUF_U32:
        return struct.pack("<I", v)
    if t == GGUF_I32:
        return struct.pack("<i", v)
    if t == GGUF_F32:
        return struct.pack("<f", v)
    if t == GGUF_BOOL:
        return struct.pack("<B", v)
    if t == GGUF_U64:
        return struct.pack("<Q", v)
    if t == GGUF_STRING:
        return gguf_str(v)
    if t == GGUF_ARRAY:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(gguf_value(et, x) for x in items)
    raise ValueError(t)


def gguf(version, metadata, tensors):
    """metadata: [(key, type, value)]; tensors: [(name, dims, ggml_type)]."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(metadata))
    for key, t, v in metadata:
        out += gguf_str(key) + struct.pack("<I", t) + gguf_value(t, v)
    offset = 0
    for name, dims, ggml_type in tensors:
        out += gguf_str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ggml_type, offset)
        offset += 64
    return out


def gguf_seeds():
    arch = "llama"
    meta = [
        ("general.architecture", GGUF_STRING, arch),
        ("general.name", GGUF_STRING, "tiny"),
        ("general.file_type", GGUF_U32, 15),  # Q4_K_M
        (arch + ".block_count", GGUF_U32, 2),
        (arch + ".embedding_length", GGUF_U32, 64),
        (arch + ".attention.head_count", GGUF_U32, 4),
        (arch + ".attention.head_count_kv", GGUF_U32, 2),
        (arch + ".context_length", GGUF_U32, 2048),
        (arch + ".feed_forward_length", GGUF_U32, 128),
        ("tokenizer.ggml.tokens", GGUF_ARRAY, (GGUF_STRING, ["<s>", "</s>", "a"])),
        ("tokenizer.ggml.scores", GGUF_ARRAY, (GGUF_F32, [0.0, 0.5, 1.0])),
        ("general.flag", GGUF_BOOL, 1),
        ("general.size", GGUF_U64, 1 << 40),
        ("general.offset", GGUF_I32, -3),
    ]
    tensors = [("token_embd.weight", [64, 3], 0), ("blk.0.attn_q.weight", [64, 64], 12),
               ("blk.0.ffn_up.weight", [64, 128], 14), ("output_norm.weight", [64], 1),
               ("blk.1.attn_k.weight", [256, 32], 2), ("blk.1.ffn_down.weight", [32, 64], 8)]
    yield gguf(3, meta, tensors)
    yield gguf(2, meta[:4], tensors[:2])
    yield gguf(3, [], [])
    yield gguf(3, [("a", GGUF_ARRAY, (GGUF_ARRAY, []))], [("t", [1, 2, 3, 4], 30)])
    yield gguf(3, meta, tensors)[:100]  # truncated


def safetensors(header):
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + b"\0" * 16


def safetensors_seeds():
    header = {
        "__metadata__": {"format": "pt"},
        "model.embed_tokens.weight": {"dtype": "BF16", "shape": [32, 16], "data_offsets": [0, 1024]},
        "model.layers.0.self_attn.q_proj.weight": {"dtype": "F16", "shape": [16, 16], "data_offsets": [1024, 1536]},
        "model.layers.0.mlp.up_proj.weight": {"dtype": "F8_E4M3", "shape": [16, 32], "data_offsets": [1536, 2048]},
        "model.layers.1.mlp.down_proj.weight": {"dtype": "I8", "shape": [32, 16], "data_offsets": [2048, 2560]},
        "lm_head.weight": {"dtype": "F32", "shape": [32, 16], "data_offsets": [2560, 4608]},
    }
    yield safetensors(header)
    yield safetensors({"x": {"dtype": "U8", "shape": [], "data_offsets": [0, 1]}})
    yield struct.pack("<Q", 1 << 62) + b"{}"


def hf_configs():
    yield json.dumps({"_name_or_path": "tiny/llama", "model_type": "llama", "architectures": ["LlamaForCausalLM"],
                      "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                      "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 32,
                      "max_position_embeddings": 2048, "torch_dtype": "bfloat16"}).encode()
    yield json.dumps({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
                      "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
                      "num_local_experts": 8, "num_experts_per_tok": 2}).encode()
    yield json.dumps({"text_config": {"model_type": "gemma", "hidden_size": 8}, "model_type": "gemma3"}).encode()
    # Falcon's spellings (multi_query, num_kv_heads, new_decoder_architecture) and DBRX's
    # nested attn_config / ffn_config, shrunk.
    yield json.dumps({"model_type": "falcon", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                      "multi_query": True, "new_decoder_architecture": False, "vocab_size": 32}).encode()
    yield json.dumps({"model_type": "RefinedWeb", "n_layer": 2, "hidden_size": 64, "n_head": 4, "n_head_kv": 2,
                      "new_decoder_architecture": True, "ffn_hidden_size": 256}).encode()
    yield json.dumps({"model_type": "dbrx", "d_model": 64, "n_heads": 4, "n_layers": 2, "max_seq_len": 128,
                      "attn_config": {"kv_n_heads": 2}, "ffn_config": {"ffn_hidden_size": 96, "moe_num_experts": 4,
                                                                        "moe_top_k": 2}}).encode()


# --- disk cache files (cache/disk.hpp) -------------------------------------------------------

def cache_file(registry, written_at=1700000000 - 10):
    """A cache file around `registry` as fuzz_disk_cache.cpp expects it: its fixed host
    identity and clock, and placeholders it replaces with the library's version and
    backend mask."""
    return (b'{"format": "ai-hwaccel-registry-cache", "format_version": 2, "library_version": "@VERSION@", '
            b'"backends": @BACKENDS@, "hostname": "fuzz-host", "boot_id": "fuzz-boot", "process": "fuzz-process", '
            b'"written_at": '
            + str(written_at).encode() + b', "registry": ' + registry + b"}")


# --- CLI argument vectors -----------------------------------------------------------------

def cli_seeds(fixtures, machines):
    some_capture = os.path.join(fixtures, "proc-meminfo", "meminfo_1gb-vm_kernel3x.txt")
    some_machine = os.path.join(machines, "handmade-workstation-rtx4090")
    argvs = [
        [], ["--help"], ["version"], ["--version"], ["backends"], ["catalogue"], ["catalogue", "H100"],
        ["detect", "--json"], ["detect", "--only", "cpu,cuda", "--timings"], ["detect", "--skip", "vulkan", "--no-host"],
        ["detect", "--root", some_machine, "--json"], ["detect", "--frobnicate"],
        ["parse", some_capture], ["parse", "--json", some_capture], ["parse", "--list-formats"],
        ["parse", "--format", "lscpu", some_capture], ["parse", "-"],
        ["estimate", "--device", "H100 SXM", "--quant", "Q4_K_M", "--model", "llama-3.1-70b", "--context", "8k"],
        ["estimate", "--device", "RTX 4090", "--count", "2", "--params", "7e9", "--layers", "32", "--hidden", "4096",
         "--quant", "fp8", "--batch", "4", "--json"],
        ["estimate", "--device", "RTX 4090", "--model", "llama-3.1-70b", "--quant", "all"],
        ["estimate", "--device", "H100 SXM", "--count", "8", "--model", "mixtral-8x7b", "--quant", "Q4_K_M,bf16,,q4_k_m",
         "--json"],
        ["plan", "--model", "llama-3.1-8b", "--device", "MI300X", "--count", "8", "--quant", "auto"],
        ["plan", "--model", "llama-3.1-8b", "--root", some_machine, "--allow-cpu"],
        ["plan", "--device", "H100 SXM", "--count", "16", "--model", "llama-3.1-405b", "--quant", "bf16", "--spread"],
        ["training", "--model", "llama-3.1-8b", "--method", "qlora", "--json"],
        ["cost", "--model", "llama-3.1-70b", "--quant", "Q4_K_M"],
    ]
    for argv in argvs:
        yield b"\0".join(a.encode() for a in argv)


# --- fixture machines, packed for fuzz_machine ---------------------------------------------

def pack_machine(root):
    records = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = "/" + os.path.relpath(dirpath, root).replace(os.sep, "/").lstrip(".")
        rel_dir = rel_dir.rstrip("/") or ""
        for d in list(dirnames):
            p = os.path.join(dirpath, d)
            if os.path.islink(p):
                records.append(b"L" + (rel_dir + "/" + d).encode() + b"\n" + os.readlink(p).encode())
                dirnames.remove(d)
            elif not os.listdir(p):
                records.append(b"D" + (rel_dir + "/" + d).encode())
        for fn in sorted(filenames):
            p = os.path.join(dirpath, fn)
            path = (rel_dir + "/" + fn).encode()
            if rel_dir == "" and fn in ("expected.json", "README.md"):
                continue
            if os.path.islink(p):
                records.append(b"L" + path + b"\n" + os.readlink(p).encode())
                continue
            with open(p, "rb") as f:
                data = f.read()
            if b"\x1e" in data or b"\n" in path:
                continue  # cannot be framed; the machine is still usable without it
            records.append(b"F" + path + b"\n" + data)
    return b"\x1e".join(records)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--machines", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    names = parser_names()
    index = {n: i for i, n in enumerate(names)}
    counts = {}

    def seed(target, data):
        put(os.path.join(a.out, target), data)
        counts[target] = counts.get(target, 0) + 1

    for folder, _, data in fixture_files(a.fixtures):
        seed("capture", b"\xff" + data)  # 0xff: the target recognises the format itself
        for name in PARSERS_FOR.get(folder, []):
            if name in index:
                seed("parsers", bytes([index[name]]) + data)
    for name, values in VALUE_SEEDS.items():
        if name in index:
            for v in values:
                seed("parsers", bytes([index[name]]) + v)
    for i in range(len(names)):  # every parser at least once
        seed("parsers", bytes([i]))

    for g in gguf_seeds():
        seed("model_file", b"\x00" + g)
    for s in safetensors_seeds():
        seed("model_file", b"\x01" + s)
    for c in hf_configs():
        seed("model_file", b"\x03" + c)
        for s in safetensors_seeds():
            seed("model_file", b"\x02" + c + b"\x00" + s)

    for m in sorted(os.listdir(a.machines)):
        root = os.path.join(a.machines, m)
        if not os.path.isdir(root) or m == "parts":
            continue
        packed = pack_machine(root)
        if len(packed) <= 4 * MAX_SEED:
            seed("machine", packed)
        expected = os.path.join(root, "expected.json")
        if os.path.isfile(expected):
            with open(expected, "rb") as f:
                registry = f.read()
            seed("registry_json", registry)
            seed("disk_cache", cache_file(registry))
    seed("machine", b"F/proc/meminfo\nMemTotal: 1024 kB\n\x1eL/sys/class/drm/card0\n../../devices/x\x1eL/a\n/b\x1eL/b\n/a")
    seed("registry_json", b'{"schema_version": 1}')
    seed("disk_cache", cache_file(b'{"schema_version": 1}', written_at=1700000000 + 60))
    seed("disk_cache", b'{"format": "ai-hwaccel-registry-cache", "format_version": 3}')
    seed("disk_cache", cache_file(b'{"schema_version": 1}').replace(b'"fuzz-process"', b'"another-process"'))

    for s in cli_seeds(a.fixtures, a.machines):
        seed("cli", s)

    for target in sorted(counts):
        print(f"{target}: {counts[target]} seeds", file=sys.stderr)


if __name__ == "__main__":
    main()
