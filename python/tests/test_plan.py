"""Planning from Python: catalogue lookups, estimate, plan, training, cost, errors.

Where the CLI is available (AI_HWACCEL_CLI, set by ctest), each answer is compared with
`ai-hwaccel <command> --json` for the same question: the two front ends share the
planner, so they must agree to the CLI's rounding (rates to 0.01 token/s).
"""

import collections.abc
import json
import os
import subprocess
import types
import unittest

import ai_hwaccel as ah

CLI = os.environ.get("AI_HWACCEL_CLI")


def cli(*args):
    out = subprocess.run([CLI, *args, "--json"], capture_output=True, text=True, check=False)
    return json.loads(out.stdout)


class Catalogue(unittest.TestCase):
    def test_device_lookup(self):
        h100 = ah.catalogue_device("H100 SXM")
        self.assertIs(type(h100), ah.Device)
        self.assertEqual(h100.spec, h100.name)
        self.assertEqual(ah.catalogue_device(h100.name).name, h100.name)  # canonical name resolves
        self.assertIn(h100.name, ah.catalogue())
        self.assertEqual(h100.memory_origin, "catalogue")
        self.assertEqual(h100.vendor, "nvidia")
        self.assertEqual(h100.family, "gpu")
        self.assertGreater(h100.bandwidth_gbps, 0)
        self.assertEqual(h100.peak_origin, "catalogue")
        self.assertTrue(all(v > 0 for v in h100.peak_tflops.values()))
        self.assertTrue(h100.is_accelerator)
        override = ah.catalogue_device("H100 SXM", memory_bytes=123456789)
        self.assertEqual((override.memory_bytes, override.memory_origin), (123456789, "user"))

    def test_every_catalogue_name_resolves_to_itself(self):
        for name in ah.catalogue():
            self.assertEqual(ah.catalogue_device(name).name, name)

    def test_catalogue_registry_links(self):
        reg = ah.catalogue_registry("H100 SXM", 8)
        self.assertEqual([d.index for d in reg], list(range(8)))
        self.assertEqual(len(reg.interconnects), 1)
        self.assertEqual(sorted(reg.interconnects[0].devices), list(range(8)))
        self.assertEqual(len(ah.catalogue_registry("H100 SXM", 1).interconnects), 0)
        # Past one 8-GPU board, a second board: NVLink within each, PCIe between them.
        reg = ah.catalogue_registry("H100 SXM", 16)
        self.assertEqual([sorted(l.devices) for l in reg.interconnects], [list(range(8)), list(range(8, 16))])
        # Bridged cards come in pairs; an odd one out has no link.
        reg = ah.catalogue_registry("RTX 3090", 5)
        self.assertEqual([sorted(l.devices) for l in reg.interconnects], [[0, 1], [2, 3]])
        self.assertEqual(len(ah.catalogue_registry("RTX 4090", 4).interconnects), 0)

    def test_models(self):
        ids = [m.id for m in ah.models()]
        self.assertEqual(len(ids), len(set(ids)))
        for m in ah.models():
            self.assertEqual(ah.model(m.id).id, m.id)
            self.assertGreater(m.parameters, 0)
            self.assertGreaterEqual(m.parameters, m.active_parameters)
            self.assertEqual(m.is_moe, m.experts > 0)
        self.assertEqual(ah.model("meta-llama/Llama-3.1-8B-Instruct").id, "llama-3.1-8b")
        # Falcon's FFN has no gate; Llama's has one. Llama 3.2 1B ties its embeddings.
        self.assertFalse(ah.model("falcon-7b").gated_ffn)
        self.assertTrue(ah.model("llama-3.1-8b").gated_ffn)
        self.assertTrue(ah.model("llama-3.2-1b").tied_embeddings)
        self.assertEqual(ah.model("Command R+").id, "command-r-plus")

    def test_quant_formats(self):
        names = ah.quant_formats()
        self.assertIn("Q4_K_M", names)
        self.assertEqual(ah.bits_per_weight("bf16"), 16)
        self.assertLess(ah.bits_per_weight("Q4_K_M"), ah.bits_per_weight("Q8_0"))


class Errors(unittest.TestCase):
    def test_unknown_names_raise_value_error(self):
        cases = [
            (lambda: ah.catalogue_device("no such card"), "no such card"),
            (lambda: ah.model("no-such-model"), "no-such-model"),
            (lambda: ah.estimate("H100 SXM", "llama-3.1-8b", "Q9_Z"), "Q9_Z"),
            (lambda: ah.estimate("H100 SXM", "no-such-model", "fp16"), "no-such-model"),
            (lambda: ah.training("llama-3.1-8b", "sorcery"), "sorcery"),
            (lambda: ah.training("llama-3.1-8b", "full", optimizer="lion9"), "lion9"),
            (lambda: ah.cost("llama-3.1-8b", "fp16", objective="cheap"), "cheap"),
            (lambda: ah.plan(ah.Registry(), "llama-3.1-8b", quant="int3"), "int3"),
        ]
        for call, word in cases:
            with self.subTest(word=word):
                with self.assertRaises(ValueError) as cm:
                    call()
                self.assertIn(word, str(cm.exception))

    def test_numbers_out_of_range(self):
        for call in [lambda: ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", context=0),
                     lambda: ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", count=0),
                     lambda: ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", context=1024, prompt=2048),
                     lambda: ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", headroom=1.0),
                     lambda: ah.plan(ah.catalogue_registry("H100 SXM", 1), "llama-3.1-8b", headroom=-0.1),
                     lambda: ah.plan(ah.catalogue_registry("H100 SXM", 1), "llama-3.1-8b", context=1024, prompt=2048),
                     lambda: ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", context=4096, prompt_depth=4096),
                     lambda: ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", context=4096, prompt=1024,
                                         prompt_depth=3584),
                     lambda: ah.plan(ah.catalogue_registry("H100 SXM", 1), "llama-3.1-8b", prompt_depth=-1),
                     lambda: ah.training("llama-3.1-8b", "full", zero=4),
                     lambda: ah.training("llama-3.1-8b", "full", rank=8),
                     lambda: ah.training("llama-3.1-8b", "lora", policy="full"),
                     lambda: ah.catalogue_registry("H100 SXM", 100000),
                     lambda: ah.Model.custom(7e9, 0, 4096)]:
            with self.assertRaises((ValueError, TypeError)):
                call()

    def test_text_without_utf8_raises_value_error(self):
        # A lone surrogate has no UTF-8 form: a ValueError naming the argument.
        bad = "\udcff"
        h100 = ah.catalogue_registry("H100 SXM", 1)
        for call, word in [(lambda: ah.plan(h100, bad), "model"),
                           (lambda: ah.estimate(bad, "llama-3.1-8b", "fp16"), "device"),
                           (lambda: ah.plan({bad: h100}, "llama-3.1-8b"), "node"),
                           (lambda: ah.memory(bad, "fp16"), "model")]:
            with self.subTest(word=word):
                with self.assertRaises(ValueError) as cm:
                    call()
                self.assertIn(word, str(cm.exception))

    def test_text_without_utf8_in_any_text_argument(self):
        # Names, formats, methods: every str argument, not only those read as a device or model.
        bad = "\udcff"
        for call in [lambda: ah.catalogue_device(bad), lambda: ah.catalogue_registry(bad, 2),
                     lambda: ah.model(bad), lambda: ah.estimate("H100 SXM", "llama-3.1-8b", bad),
                     lambda: ah.training("llama-3.1-8b", bad), lambda: ah.cost("llama-3.1-8b", bad),
                     lambda: ah.bits_per_weight(bad), lambda: ah.Registry.from_json(bad)]:
            with self.subTest(call=call):
                with self.assertRaises(ValueError) as cm:
                    call()
                self.assertIn("Unicode", str(cm.exception))

    def test_numbers_past_64_bits_raise_value_error(self):
        # Out of range is a ValueError naming the argument, however far out the number is.
        for call, word in [(lambda: ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", context=2**70), "context"),
                           (lambda: ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", memory_bytes=2**64),
                            "memory_bytes"),
                           (lambda: ah.catalogue_device("H100 SXM", memory_bytes=-2**70), "memory_bytes"),
                           (lambda: ah.catalogue_registry("H100 SXM", 2**64), "count"),
                           (lambda: ah.Model.custom(10**20), "parameters"),
                           (lambda: ah.training("llama-3.1-8b", "full", seq=-2**70), "seq"),
                           (lambda: ah.memory("llama-3.1-8b", "fp16", batch=2**100), "batch")]:
            with self.subTest(word=word):
                with self.assertRaises(ValueError) as cm:
                    call()
                self.assertIn(word, str(cm.exception))

    def test_wrong_types_raise_type_error(self):
        with self.assertRaises(TypeError):
            ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", context=1.5)
        with self.assertRaises(TypeError):
            ah.estimate("H100 SXM", "llama-3.1-8b", "fp16", context="4096")
        with self.assertRaises(TypeError):
            ah.estimate("H100 SXM", "llama-3.1-8b", 8)
        with self.assertRaises(TypeError):
            ah.estimate(42, "llama-3.1-8b", "fp16")
        with self.assertRaises(TypeError):
            ah.plan("H100 SXM", "llama-3.1-8b")
        with self.assertRaises(TypeError):
            ah.memory(3.5, "fp16")

    def test_unified_memory_needs_a_size(self):
        apple = next((n for n in ah.catalogue() if n.startswith("Apple M")), None)
        if apple is None or ah.catalogue_device(apple).memory_bytes is not None:
            self.skipTest("no Apple row without memory")
        with self.assertRaises(ValueError) as cm:
            ah.estimate(apple, "llama-3.1-8b", "Q4_K_M")
        self.assertIn("memory_bytes", str(cm.exception))
        e = ah.estimate(apple, "llama-3.1-8b", "Q4_K_M", memory_bytes=64 << 30)
        self.assertTrue(e["fits"])


class Estimates(unittest.TestCase):
    def test_memory_parts(self):
        m = ah.memory("llama-3.1-8b", "bf16")
        self.assertEqual(m["weights_bytes"], 2 * ah.model("llama-3.1-8b").parameters)
        self.assertEqual(m["total_bytes"], m["weights_bytes"] + m["kv_cache_bytes"] + m["overhead_bytes"])
        longer = ah.memory("llama-3.1-8b", "bf16", context=8192)
        self.assertEqual(longer["kv_cache_bytes"], 2 * m["kv_cache_bytes"])
        q8 = ah.memory("llama-3.1-8b", "bf16", kv_cache="q8_0")
        self.assertLess(q8["kv_cache_bytes"], m["kv_cache_bytes"])

    def test_estimate_single_device(self):
        e = ah.estimate("RTX 4090", "llama-3.1-8b", "Q4_K_M")
        self.assertTrue(e["fits"])
        self.assertEqual(e["strategy"], "single_device")
        self.assertGreater(e["decode_tokens_per_second"], 0)
        self.assertGreater(e["prefill_tokens_per_second"], e["decode_tokens_per_second"])
        self.assertEqual(e["memory"], ah.memory("llama-3.1-8b", "Q4_K_M"))
        # A Device or a Model object gives the same answer as their names.
        same = ah.estimate(ah.catalogue_device("RTX 4090"), ah.model("llama-3.1-8b"), "Q4_K_M")
        self.assertEqual(same, e)
        # Smaller weights decode faster on the same memory bandwidth.
        q8 = ah.estimate("RTX 4090", "llama-3.1-8b", "Q8_0")
        self.assertLess(q8["decode_tokens_per_second"], e["decode_tokens_per_second"])

    def test_bandwidth_given(self):
        # Apple did not publish the M1's bandwidth: decode is unknown until it is given.
        m1 = dict(memory_bytes=16 << 30)
        self.assertIsNone(ah.estimate("Apple M1 8-core", "llama-2-7b", "Q4_0", **m1)["decode_tokens_per_second"])
        e = ah.estimate("Apple M1 8-core", "llama-2-7b", "Q4_0", bandwidth_gbps=68.25, **m1)
        self.assertGreater(e["decode_tokens_per_second"], 0)
        d = ah.catalogue_device("Apple M1 8-core", bandwidth_gbps=68.25, **m1)
        self.assertEqual((d.bandwidth_gbps, d.bandwidth_origin), (68.25, "user"))
        self.assertEqual(ah.estimate(d, "llama-2-7b", "Q4_0"), e)
        reg = ah.catalogue_registry("RTX 4090", 2, bandwidth_gbps=500)
        self.assertEqual({x.bandwidth_gbps for x in reg.devices}, {500})
        # Half the bandwidth (the 4090's is 1008 GB/s) doubles the time spent reading; the
        # fixed cost per layer and token (124 us, 32 layers) stays.
        full = ah.estimate("RTX 4090", "llama-3.1-8b", "Q4_K_M")["decode_tokens_per_second"]
        half = ah.estimate("RTX 4090", "llama-3.1-8b", "Q4_K_M", bandwidth_gbps=504)["decode_tokens_per_second"]
        fixed = 32 * 124e-6
        self.assertAlmostEqual(1 / half - fixed, 2 * (1 / full - fixed), delta=1e-6)
        for bad in (0, -1, float("nan"), 2e6, 0.0009):
            with self.assertRaisesRegex(ValueError, "bandwidth_gbps"):
                ah.catalogue_device("RTX 4090", bandwidth_gbps=bad)

    def test_estimate_does_not_fit(self):
        e = ah.estimate("RTX 4090", "llama-3.1-70b", "bf16")
        self.assertFalse(e["fits"])
        self.assertIsNone(e["decode_tokens_per_second"])
        self.assertTrue(e["reason"])
        self.assertGreater(e["memory"]["total_bytes"], e["usable_bytes"])

    def test_estimate_several_devices(self):
        e = ah.estimate("H100 SXM", "llama-3.1-70b", "bf16", count=2)
        self.assertTrue(e["fits"])
        self.assertEqual(e["count"], 2)
        self.assertNotEqual(e["link"], "none")
        self.assertEqual(e["tensor_parallel"] * e["stages"], 2)
        self.assertEqual(e["link_group"], 2)
        # 16 H100 SXM are two boards: tensor parallel inside one, stages across the two.
        e = ah.estimate("H100 SXM", "llama-3.1-405b", "bf16", count=16)
        self.assertTrue(e["fits"])
        self.assertEqual(e["link_group"], 8)
        self.assertEqual((e["tensor_parallel"], e["stages"]), (8, 2))
        self.assertEqual(ah.estimate("RTX 4090", "llama-3.1-8b", "Q4_K_M", count=2)["link_group"], 0)

    def test_custom_model(self):
        custom = ah.Model.custom(8030261248, 32, 4096, kv_heads=8, vocab=128256)
        self.assertEqual(custom.head_dim, 128)
        catalogue = ah.model("llama-3.1-8b")
        self.assertEqual(ah.memory(custom, "bf16")["kv_cache_bytes"],
                         ah.memory(catalogue, "bf16")["kv_cache_bytes"])
        self.assertFalse(ah.estimate("H100 SXM", custom, "bf16")["shape"]["assumed"])

    def test_custom_model_by_size_alone(self):
        # The rest of the shape is assumed, said so, and agrees with the CLI's.
        m = ah.Model.custom(70_000_000_000)
        self.assertGreater(m.layers, 0)
        self.assertEqual(m.parameters, 70_000_000_000)
        e = ah.estimate("H100 SXM", m, "bf16", count=2)
        self.assertTrue(e["shape"]["assumed"])
        self.assertEqual(e["shape"]["layers"], m.layers)
        self.assertEqual(ah.Model.custom(13_000_000_000, layers=40).layers, 40)
        with self.assertRaises(ValueError):
            ah.Model.custom(13_000_000_000, heads=40)


class Plans(unittest.TestCase):
    def test_plan_prompt(self):
        # A pipeline of two cards: a 4096-token prompt's micro-batches overlap on the two,
        # a 512-token prompt (one micro-batch) runs through one card after the other.
        cards = [ah.catalogue_registry("RTX 4090", 2).devices[i] for i in range(2)]
        long = ah.plan(cards, "llama-3-70b", quant="Q4_K_M", context=4096)
        short = ah.plan(cards, "llama-3-70b", quant="Q4_K_M", context=4096, prompt=512)
        self.assertEqual(long["prompt"], 4096)  # the default: the context
        self.assertEqual(short["prompt"], 512)
        self.assertEqual(long["stages"], 2)
        self.assertEqual([s["first_layer"] for s in long["shards"]], [s["first_layer"] for s in short["shards"]])
        self.assertGreater(long["prefill_tokens_per_second"], short["prefill_tokens_per_second"])
        self.assertEqual(long["decode_tokens_per_second"], short["decode_tokens_per_second"])

    def test_prompt_after_a_filled_cache(self):
        # The same 512-token prompt after 4096 cached tokens attends to them too: slower;
        # decode is at the context either way. The default prompt is what the depth leaves.
        fresh = ah.estimate("H100 SXM", "llama-3.1-8b", "bf16", context=8192, prompt=512)
        after = ah.estimate("H100 SXM", "llama-3.1-8b", "bf16", context=8192, prompt=512, prompt_depth=4096)
        self.assertEqual((fresh["prompt_depth"], after["prompt_depth"]), (0, 4096))
        self.assertLess(after["prefill_tokens_per_second"], fresh["prefill_tokens_per_second"])
        self.assertEqual(after["decode_tokens_per_second"], fresh["decode_tokens_per_second"])
        planned = ah.plan(ah.catalogue_registry("H100 SXM", 1), "llama-3.1-8b", quant="bf16", context=8192,
                          prompt_depth=6144)
        self.assertEqual((planned["prompt"], planned["prompt_depth"]), (2048, 6144))

    def test_plan_on_described_devices(self):
        reg = ah.catalogue_registry("H100 SXM", 8)
        p = ah.plan(reg, "llama-3.1-70b", quant="bf16")
        self.assertTrue(p["fits"])
        self.assertEqual(p["quant_chosen"], "given")
        self.assertEqual(p["kind"], "cuda_gpu")
        for s in p["shards"]:
            self.assertTrue(s["fits"])
            self.assertLessEqual(s["total_bytes"], s["usable_bytes"])
            self.assertEqual(s["name"], reg.devices[s["device"]].name)
        # Every layer is placed once per replica.
        for r in range(p["replicas"]):
            stages = {}
            for s in p["shards"]:
                if s["replica"] == r:
                    stages[s["stage"]] = (s["first_layer"], s["last_layer"])
            ranges = [stages[k] for k in sorted(stages)]
            self.assertEqual(ranges[0][0], 0)
            self.assertEqual(ranges[-1][1], ah.model("llama-3.1-70b").layers)
            for a, b in zip(ranges, ranges[1:]):
                self.assertEqual(a[1], b[0])

    def test_quant_list_picks_among_those_given(self):
        # Two RTX 4090s (48 GB) hold 70B in Q4_K_M (about 40 GiB of weights), not in Q8_0.
        two = ah.catalogue_registry("RTX 4090", 2)
        p = ah.plan(two, "llama-3.1-70b", quant="Q8_0, Q4_K_M,Q2_K")
        self.assertTrue(p["fits"])
        self.assertEqual(p["quant"], "Q4_K_M")
        self.assertEqual(p["quant_chosen"], "auto_from_list")
        # Past auto's 16 bits when listed: FP32 (32 GB) does not fit one card, BF16 does.
        self.assertEqual(ah.plan(ah.catalogue_registry("RTX 4090", 1), "llama-3.1-8b", quant="fp32,bf16")["quant"],
                         "BF16")
        none = ah.plan(ah.catalogue_registry("RTX 4090", 1), "llama-3.1-70b", quant="Q8_0,Q6_K")
        self.assertFalse(none["fits"])
        self.assertIn("not even in Q6_K", none["reason"])
        for bad in ("Q8_0,auto", ",", "Q8_0,Q9_K"):
            with self.assertRaises(ValueError):
                ah.plan(two, "llama-3.1-70b", quant=bad)

    def test_auto_quant_picks_what_fits(self):
        one = ah.plan(ah.catalogue_registry("RTX 4090", 1), "llama-3.1-70b")
        self.assertEqual(one["quant_chosen"], "auto")
        if one["fits"]:
            self.assertLess(ah.bits_per_weight(one["quant"]), 16)
        eight = ah.plan(ah.catalogue_registry("H100 SXM", 8), "llama-3.1-70b")
        self.assertTrue(eight["fits"])
        self.assertGreaterEqual(ah.bits_per_weight(eight["quant"]), ah.bits_per_weight(one["quant"]))

    def test_plan_on_a_cluster(self):
        # Two 8 x H100 nodes as a dict of node names to Registries. 405B in bf16 (about 759
        # GiB) is more than one node holds after the headroom (576 GiB): 8-way tensor
        # parallel in each node, one pipeline hop between them.
        def node():
            reg = ah.catalogue_registry("H100 SXM", 8)
            return ah.Registry.from_json(reg.to_json())
        nodes = {"gpu01": node(), "gpu02": node()}
        # Described nodes have no network: not joined unless one is assumed.
        alone = ah.plan(nodes, "llama-3.1-405b", quant="bf16")
        self.assertFalse(alone["fits"])
        self.assertFalse(alone["cluster"]["joined"])
        self.assertIn("not joined", alone["reason"])
        p = ah.plan(nodes, "llama-3.1-405b", quant="bf16", network_gbits=400)
        self.assertTrue(p["fits"])
        self.assertEqual((p["tensor_parallel"], p["stages"]), (8, 2))
        c = p["cluster"]
        self.assertTrue(c["joined"])
        self.assertEqual(c["network_assumed_gbps"], 50.0)  # 400 Gb/s each way: 50 GB/s one direction
        self.assertEqual(c["nodes_per_replica"], 2)
        self.assertEqual(c["inter_node_hops"], 1)
        self.assertEqual(c["inter_node_link"]["gbps"], 50.0)
        # The caller's network_gbits, not a port that was detected: assumed (before, False).
        self.assertTrue(c["inter_node_link"]["assumed"])
        self.assertEqual([n["name"] for n in c["nodes"]], ["gpu01", "gpu02"])
        self.assertTrue(all(n["considered"] and n["devices_used"] == 8 for n in c["nodes"]))
        self.assertEqual({s["node"] for s in p["shards"] if s["stage"] == 0}, {"gpu01"})
        self.assertEqual({s["node"] for s in p["shards"] if s["stage"] == 1}, {"gpu02"})
        self.assertEqual(sorted(s["index"] for s in p["shards"] if s["node"] == "gpu02"), list(range(8)))
        # Any Mapping, as the stub types it (before: a dict alone; a MappingProxyType was
        # "not a Registry" and a Mapping class leaked a KeyError).
        class Nodes(collections.abc.Mapping):
            def __init__(self, d): self.d = d
            def __getitem__(self, k): return self.d[k]
            def __iter__(self): return iter(self.d)
            def __len__(self): return len(self.d)
        for other in (types.MappingProxyType(nodes), Nodes(nodes)):
            with self.subTest(mapping=type(other).__name__):
                q = ah.plan(other, "llama-3.1-405b", quant="bf16", network_gbits=400)
                self.assertEqual((q["fits"], q["stages"]), (True, 2))
        # One machine's plan has no cluster and no node.
        one = ah.plan(ah.catalogue_registry("H100 SXM", 8), "llama-3.1-70b", quant="bf16")
        self.assertIsNone(one["cluster"])
        self.assertTrue(all(s["node"] is None for s in one["shards"]))
        # auto on the unjoined nodes: the best format one node holds.
        best = ah.plan(nodes, "llama-3.1-405b")
        self.assertTrue(best["fits"])
        self.assertLess(ah.bits_per_weight(best["quant"]), 16)
        self.assertEqual(best["cluster"]["nodes_per_replica"], 1)
        # spread=True: one copy over both nodes (a 70B model one node holds).
        spread = ah.plan(nodes, "llama-3.1-70b", quant="bf16", network_gbits=400, spread=True)
        self.assertTrue(spread["spread"])
        self.assertEqual(spread["replicas"], 1)
        self.assertEqual(spread["cluster"]["nodes_per_replica"], 2)
        with self.assertRaises(ValueError):
            ah.plan(ah.catalogue_registry("H100 SXM", 8), "llama-3.1-70b", network_gbits=400)
        with self.assertRaises(ValueError):
            ah.plan(nodes, "llama-3.1-70b", network_gbits=0)
        with self.assertRaises(ValueError):
            ah.plan({}, "llama-3.1-70b")
        with self.assertRaises(TypeError):
            ah.plan({"a": ah.catalogue_device("H100 SXM")}, "llama-3.1-70b")

    def test_list_of_devices_and_single_device(self):
        d = ah.catalogue_device("MI300X")
        self.assertEqual(ah.plan(d, "llama-3.1-8b", quant="bf16")["strategy"], "single_device")
        self.assertTrue(ah.plan([d, d], "llama-3.1-8b", quant="bf16")["fits"])

    def test_cpu_only_when_allowed(self):
        reg = ah.detect()
        if reg.has_accelerator():
            self.skipTest("this machine has an accelerator")
        p = ah.plan(reg, "llama-3.2-1b" if any(m.id == "llama-3.2-1b" for m in ah.models()) else "llama-3.1-8b",
                    quant="Q4_K_M")
        self.assertFalse(p["fits"])
        self.assertTrue(p["cpu_excluded"])
        self.assertIn("allow_cpu", p["reason"])

    def test_nothing(self):
        p = ah.plan(ah.Registry(), "llama-3.1-8b")
        self.assertFalse(p["fits"])
        self.assertEqual(p["outcome"], "no_devices")
        self.assertEqual(p["shards"], [])


class TrainingAndCost(unittest.TestCase):
    def test_training(self):
        full = ah.training("llama-3.1-8b", "full")
        qlora = ah.training("llama-3.1-8b", "qlora")
        self.assertLess(qlora["peak_memory_bytes"], full["peak_memory_bytes"])
        self.assertLess(qlora["trainable_parameters"], full["trainable_parameters"])
        self.assertEqual(full["trainable_parameters"], ah.model("llama-3.1-8b").parameters)
        b = full["breakdown"]
        self.assertEqual(b["total_bytes"], sum(v for k, v in b.items() if k != "total_bytes"))
        zero3 = ah.training("llama-3.1-8b", "full", devices=8, zero=3)
        self.assertLess(zero3["breakdown"]["optimizer_bytes"], b["optimizer_bytes"])
        self.assertEqual(ah.training("llama-3.1-8b", "dpo", policy="lora")["policy"], "lora")
        self.assertIsNone(full["rank"])
        self.assertEqual(ah.training("llama-3.1-8b", "lora", rank=64)["rank"], 64)
        for key in ("device", "device_memory_bytes", "fits"):  # the CLI's keys, null without --device
            self.assertIn(key, full)
            self.assertIsNone(full[key])

    def test_cost(self):
        c = ah.cost("llama-3.1-70b", "fp8")
        self.assertTrue(c["fits"])
        inst = c["instance"]
        self.assertTrue(inst["fits"])
        # The instance's requirement adds each further accelerator's own buffers.
        self.assertLessEqual(inst["required_bytes"], inst["available_bytes"])
        if inst["accelerator_count"] > 1:
            self.assertGreater(inst["required_bytes"], c["required_bytes"])
        else:
            self.assertEqual(inst["required_bytes"], c["required_bytes"])
        every = ah.cost("llama-3.1-70b", "fp8", all_instances=True)
        fitting = [i for i in every["instances"] if i["fits"]]
        self.assertEqual(inst["price_per_hour_usd"], min(i["price_per_hour_usd"] for i in fitting))
        self.assertNotIn("instances", c)
        # Replicas: at least one where it fits, none where it does not, never more copies
        # than accelerators.
        for i in every["instances"]:
            if i["fits"]:
                self.assertGreaterEqual(i["replicas"], 1)
                self.assertLessEqual(i["replicas"], i["accelerator_count"])
            else:
                self.assertEqual(i["replicas"], 0)
        by_tokens = ah.cost("llama-3.1-70b", "fp8", objective="tokens")
        self.assertLessEqual(by_tokens["instance"]["usd_per_million_output_tokens"],
                             min(i["usd_per_million_output_tokens"] for i in fitting
                                 if i["usd_per_million_output_tokens"]))


@unittest.skipUnless(CLI and os.access(CLI, os.X_OK), "AI_HWACCEL_CLI not set (ctest sets it)")
class AgreesWithTheCli(unittest.TestCase):
    def assert_rate(self, ours, theirs):
        if theirs is None:
            self.assertIsNone(ours)
        else:
            self.assertAlmostEqual(ours, theirs, delta=0.0051)

    def test_estimate_bandwidth(self):
        ours = ah.estimate("Apple M1 8-core", "llama-2-7b", "Q4_0", memory_bytes=16 << 30, bandwidth_gbps=68.25)
        theirs = cli("estimate", "--device", "Apple M1 8-core", "--model", "llama-2-7b", "--quant", "Q4_0",
                     "--memory", "16GiB", "--bandwidth", "68.25")
        self.assert_rate(ours["decode_tokens_per_second"], theirs["decode_tokens_per_second"])

    def test_estimate(self):
        for device, model, quant, count, context in [("RTX 4090", "llama-3.1-8b", "Q4_K_M", 1, 4096),
                                                     ("H100 SXM", "llama-3.1-70b", "fp8", 4, 8192),
                                                     ("MI300X", "mixtral-8x7b", "bf16", 2, 32768),
                                                     ("RTX 4090", "llama-3.1-70b", "bf16", 1, 4096)]:
            with self.subTest(device=device, model=model, quant=quant, count=count):
                ours = ah.estimate(device, model, quant, context=context, count=count)
                theirs = cli("estimate", "--device", device, "--model", model, "--quant", quant,
                             "--count", str(count), "--context", str(context))
                self.assertEqual(set(ours), set(theirs))
                for key in ours:
                    if key.endswith("tokens_per_second"):
                        self.assert_rate(ours[key], theirs[key])
                    else:
                        self.assertEqual(ours[key], theirs[key], key)

    def test_prompt_after_a_filled_cache(self):
        # The same prompt after a filled cache, through both; the deepest prefills slowest,
        # so an agreement that ignored the depth would show.
        prefill = {}
        for depth in (0, 3072, 28672):
            with self.subTest(depth=depth):
                ours = ah.estimate("H100 SXM", "llama-3.1-8b", "bf16", context=32768, prompt=1024,
                                   prompt_depth=depth)
                theirs = cli("estimate", "--device", "H100 SXM", "--model", "llama-3.1-8b", "--quant", "bf16",
                             "--context", "32768", "--prompt", "1024", "--prompt-depth", str(depth))
                self.assertEqual((ours["prompt"], ours["prompt_depth"]), (1024, depth))
                self.assertEqual((theirs["prompt"], theirs["prompt_depth"]), (1024, depth))
                self.assert_rate(ours["prefill_tokens_per_second"], theirs["prefill_tokens_per_second"])
                self.assert_rate(ours["decode_tokens_per_second"], theirs["decode_tokens_per_second"])
                prefill[depth] = theirs["prefill_tokens_per_second"]
                planned = ah.plan(ah.catalogue_registry("H100 SXM", 2), "llama-3.1-70b", quant="bf16",
                                  context=32768, prompt=1024, prompt_depth=depth)
                cli_plan = cli("plan", "--device", "H100 SXM", "--count", "2", "--model", "llama-3.1-70b",
                               "--quant", "bf16", "--context", "32768", "--prompt", "1024",
                               "--prompt-depth", str(depth))
                self.assertEqual((planned["prompt_depth"], cli_plan["prompt_depth"]), (depth, depth))
                self.assert_rate(planned["prefill_tokens_per_second"], cli_plan["prefill_tokens_per_second"])
        self.assertLess(prefill[28672], prefill[3072])
        self.assertLess(prefill[3072], prefill[0])

    def test_headroom(self):
        # 23.5 GiB on a 24 GiB card: fits with 1 % kept free, not with the default 10 %.
        for headroom, fits in [(0.1, False), (0.01, True)]:
            with self.subTest(headroom=headroom):
                ours = ah.plan(ah.catalogue_registry("RTX 4090", 1), "llama-3.1-8b", quant="bf16", context=32768,
                               batch=2, headroom=headroom)
                theirs = cli("plan", "--device", "RTX 4090", "--model", "llama-3.1-8b", "--quant", "bf16",
                             "--context", "32768", "--batch", "2", "--headroom", str(headroom))
                self.assertEqual(ours["fits"], fits)
                for key in ("fits", "usable_bytes", "memory_headroom"):
                    self.assertEqual(ours[key], theirs[key], key)
        est = ah.estimate("RTX 4090", "llama-3.1-8b", "bf16", headroom=0.0)
        self.assertEqual(est["usable_bytes"], est["device_memory_bytes"])
        self.assertEqual(est["memory_headroom"], 0.0)

    def test_plan(self):
        for device, count, model, quant in [("H100 SXM", 8, "llama-3.1-405b", "fp8"),
                                            ("RTX 4090", 2, "llama-3.1-70b", "auto"),
                                            ("L4", 1, "llama-3.1-405b", "auto")]:
            with self.subTest(device=device, model=model):
                ours = ah.plan(ah.catalogue_registry(device, count), model, quant=quant)
                theirs = cli("plan", "--device", device, "--count", str(count), "--model", model, "--quant", quant)
                # How the CLI came by its devices: described here, nothing measured.
                self.assertEqual(theirs.pop("devices_from"), "described")
                self.assertIsNone(theirs.pop("measured_bandwidth_gbps"))
                # Clusters are planned from Python, not by the CLI: one machine has neither.
                self.assertIsNone(ours.pop("cluster"))
                for s in ours["shards"]:
                    self.assertIsNone(s.pop("node"))
                self.assertEqual(set(ours), set(theirs))
                # A tensor-parallel plan names its link; a single device has none.
                self.assertEqual(ours["tensor_link"] is None, ours["tensor_parallel"] <= 1)
                self.assertFalse(ours["truncated"])
                for key in ours:
                    if key.endswith("tokens_per_second"):
                        self.assert_rate(ours[key], theirs[key])
                    elif key == "reason" and ours[key] is not None:
                        self.assertEqual(ours[key].split(" (")[0], theirs[key].split(" (")[0])
                    else:
                        self.assertEqual(ours[key], theirs[key], key)

    def test_plan_on_a_captured_machine(self):
        # As test_detect.py finds them: the variable ctest sets, else the checkout's own.
        here = os.path.dirname(os.path.abspath(__file__))
        machines = os.environ.get("AI_HWACCEL_MACHINES_DIR",
                                  os.path.join(here, os.pardir, os.pardir, "tests", "machines"))
        m = os.path.join(machines, "handmade-mi300x-4gpu-xgmi")
        if not os.path.isdir(m):
            self.skipTest("machine absent")
        ours = ah.plan(ah.detect(root=m), "llama-3.1-405b", quant="fp8")
        theirs = cli("plan", "--root", m, "--model", "llama-3.1-405b", "--quant", "fp8")
        for key in ("fits", "strategy", "tensor_parallel", "stages", "replicas", "memory", "usable_bytes"):
            self.assertEqual(ours[key], theirs[key], key)
        self.assertEqual([s["total_bytes"] for s in ours["shards"]], [s["total_bytes"] for s in theirs["shards"]])
        self.assert_rate(ours["decode_tokens_per_second"], theirs["decode_tokens_per_second"])

        # free_memory=True is --free-memory: the busy TPU v5p chips of that capture hold
        # Llama 3.1 70B in a smaller format than the idle ones.
        tpu = os.path.join(machines, "handmade-tpu-v5p-host")
        if not os.path.isdir(tpu):
            return
        reg = ah.detect(root=tpu)
        idle = ah.plan(reg, "llama-3.1-70b")
        busy = ah.plan(reg, "llama-3.1-70b", free_memory=True)
        self.assertFalse(idle["free_memory"])
        self.assertTrue(busy["free_memory"])
        self.assertLess(ah.bits_per_weight(busy["quant"]), ah.bits_per_weight(idle["quant"]))
        self.assertLess(busy["usable_bytes"], idle["usable_bytes"])
        theirs = cli("plan", "--root", tpu, "--model", "llama-3.1-70b", "--free-memory")
        for key in ("quant", "fits", "strategy", "tensor_parallel", "usable_bytes", "free_memory"):
            self.assertEqual(busy[key], theirs[key], key)

    def test_training(self):
        ours = ah.training("llama-3.1-70b", "qlora", seq=4096, batch=2, rank=32, checkpointing=True)
        theirs = cli("training", "--model", "llama-3.1-70b", "--method", "qlora", "--seq", "4096", "--batch", "2",
                     "--rank", "32", "--checkpointing")
        # Without --device the CLI writes device, device_memory_bytes and fits as null, and
        # Python's dict has the same keys (before, it had none of the three).
        self.assertEqual(ours, theirs)

    def test_cost(self):
        ours = ah.cost("llama-3.1-70b", "Q4_K_M", objective="tokens", all_instances=True)
        theirs = cli("cost", "--model", "llama-3.1-70b", "--quant", "Q4_K_M", "--objective", "tokens", "--all")
        self.assertEqual(set(ours), set(theirs))
        self.assertEqual(ours["instance"]["name"], theirs["instance"]["name"])
        self.assertEqual(set(ours["instance"]), set(theirs["instance"]))
        self.assertEqual([i["name"] for i in ours["instances"]], [i["name"] for i in theirs["instances"]])
        self.assertEqual([i["price_date_source"] for i in ours["instances"]],
                         [i["price_date_source"] for i in theirs["instances"]])
        self.assertEqual([i["fits"] for i in ours["instances"]], [i["fits"] for i in theirs["instances"]])
        for a, b in zip(ours["instances"], theirs["instances"]):
            self.assert_rate(a["decode_tokens_per_second"], b["decode_tokens_per_second"])
        # headroom= is --headroom: less kept free, more of every instance available.
        roomy = ah.cost("llama-3.1-70b", "Q4_K_M", all_instances=True, headroom=0.0)
        theirs = cli("cost", "--model", "llama-3.1-70b", "--quant", "Q4_K_M", "--all", "--headroom", "0")
        self.assertEqual(roomy["memory_headroom"], theirs["memory_headroom"])
        self.assertEqual([i["available_bytes"] for i in roomy["instances"]],
                         [i["available_bytes"] for i in theirs["instances"]])
        for a, b in zip(roomy["instances"], ours["instances"]):
            self.assertGreater(a["available_bytes"], b["available_bytes"])
        with self.assertRaises(ValueError):
            ah.cost("llama-3.1-70b", "Q4_K_M", headroom=1.5)


if __name__ == "__main__":
    unittest.main()
