"""Detection and the registry from Python: this machine, the fixture machines, JSON."""

import glob
import os
import pathlib
import tempfile
import threading
import unittest

import ai_hwaccel as ah

HERE = os.path.dirname(os.path.abspath(__file__))
MACHINES = os.environ.get("AI_HWACCEL_MACHINES_DIR",
                          os.path.join(HERE, os.pardir, os.pardir, "tests", "machines"))


def machines():
    return sorted(glob.glob(os.path.join(MACHINES, "handmade-*")) + glob.glob(os.path.join(MACHINES, "captured-*")))


ORIGINS = {"tool", "sysfs", "user", "measured", "catalogue", "estimated"}


class ThisMachine(unittest.TestCase):
    def test_measure_memory_bandwidth(self):
        m = ah.measure_memory_bandwidth(buffer_bytes=4 << 20, threads=2, passes=2)
        self.assertEqual(set(m), {"gbps", "bytes_per_pass", "threads", "passes", "fastest_seconds",
                                  "slowest_seconds", "cache_bytes", "note"})
        # 4 MiB is under four times any server's last-level caches: said, where Linux says them.
        if m["cache_bytes"] > (1 << 20):
            self.assertIn("last-level caches", m["note"])
        self.assertGreater(m["gbps"], 0)
        self.assertEqual(m["threads"], 2)
        self.assertEqual(m["passes"], 2)
        self.assertEqual(m["bytes_per_pass"], 4 << 20)
        self.assertAlmostEqual(m["gbps"], m["bytes_per_pass"] / m["fastest_seconds"] / 1e9, places=6)
        with self.assertRaisesRegex(RuntimeError, "gives 4 threads nothing to read"):
            ah.measure_memory_bandwidth(buffer_bytes=16, threads=4)
        with self.assertRaises(ValueError):
            ah.measure_memory_bandwidth(passes=0)
        # Past the measurement's limits (1000 passes, 1024 threads): ValueError, not RuntimeError.
        with self.assertRaises(ValueError):
            ah.measure_memory_bandwidth(passes=1001)
        with self.assertRaises(ValueError):
            ah.measure_memory_bandwidth(threads=2000)

    def test_detect_measure_bandwidth(self):
        cpu = [d for d in ah.detect(measure_bandwidth=True).devices if d.is_cpu][0]
        self.assertEqual(cpu.bandwidth_origin, "measured")
        self.assertGreater(cpu.bandwidth_gbps, 0)
        with self.assertRaises(ValueError):
            ah.detect(root=machines()[0], measure_bandwidth=True)

    def test_detect_lists_the_cpu(self):
        reg = ah.detect()
        self.assertIsInstance(reg, ah.Registry)
        cpus = [d for d in reg.devices if d.is_cpu]
        self.assertEqual(len(cpus), 1)
        self.assertEqual(cpus[0].kind, "cpu")
        self.assertEqual(len(reg), len(reg.devices))
        self.assertEqual([d.name for d in reg], [d.name for d in reg.devices])

    def test_values_and_origins_go_together(self):
        for d in ah.detect().devices:
            for value, origin in [(d.memory_bytes, d.memory_origin), (d.bandwidth_gbps, d.bandwidth_origin),
                                  (d.compute_units, d.compute_units_origin), (d.numa_node, d.numa_node_origin),
                                  (d.temperature_c, d.temperature_origin)]:
                self.assertEqual(value is None, origin is None)
                if origin is not None:
                    self.assertIn(origin, ORIGINS)

    def test_host_memory_agrees_with_meminfo(self):
        try:
            with open("/proc/meminfo", encoding="ascii") as f:
                total_kib = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
        except (OSError, StopIteration):
            self.skipTest("no /proc/meminfo")
        host = ah.detect().host
        self.assertEqual(host["memory"]["total_bytes"], total_kib * 1024)

    def test_not_a_directory(self):
        with tempfile.NamedTemporaryFile() as f:
            with self.assertRaises(NotADirectoryError):
                ah.detect(root=f.name)
        with self.assertRaises(NotADirectoryError):
            ah.detect(root=os.path.join(HERE, "no such folder"))
        # Only None means this machine: an empty root (an unset variable) is no directory,
        # and a NUL would cut the path short.
        with self.assertRaises(NotADirectoryError):
            ah.detect(root="")
        with self.assertRaises(ValueError):
            ah.detect(root=HERE + "\0junk")
        with self.assertRaises(TypeError):
            ah.detect(root=17)

    def test_root_is_any_path(self):
        # str, bytes and os.PathLike, as os functions take them; a name that is not UTF-8
        # reached through os.fsdecode() is the same folder (before: TypeError for a Path,
        # ValueError for the decoded name, UnicodeDecodeError in a bytes root's message).
        with tempfile.TemporaryDirectory() as d:
            odd = os.path.join(os.fsencode(d), b"tree\xff")
            os.mkdir(odd)
            for root in (d, pathlib.Path(d), os.fsencode(d), odd, os.fsdecode(odd)):
                with self.subTest(root=root):
                    self.assertFalse(ah.detect(root=root).has_accelerator())
        with self.assertRaisesRegex(NotADirectoryError, "is not a directory"):
            ah.detect(root=b"/nonexistent\xff")
        # Names given as bytes that are not UTF-8: a ValueError about the argument (before,
        # a UnicodeDecodeError while the error message itself was made).
        for call in (lambda: ah.model(b"\xff"), lambda: ah.catalogue_device(b"\xff"),
                     lambda: ah.bits_per_weight(b"\xff")):
            with self.assertRaisesRegex(ValueError, "bytes that are not UTF-8 text"):
                call()

    def test_empty_tree_warns_instead_of_raising(self):
        with tempfile.TemporaryDirectory() as d:
            reg = ah.detect(root=d)
        self.assertTrue(all(isinstance(w, ah.WarningInfo) for w in reg.warnings))
        self.assertFalse(reg.has_accelerator())


@unittest.skipUnless(machines(), "no fixture machines in " + MACHINES)
class FixtureMachines(unittest.TestCase):
    def detect_machine(self, name):
        """The registry of tests/machines/<name>; the test is skipped when the tree is absent."""
        root = os.path.join(MACHINES, name)
        if not os.path.isdir(root):
            self.skipTest("machine absent")
        return ah.detect(root=root)

    def test_json_is_the_expected_registry(self):
        if not ah.json_support:
            self.skipTest("built without nlohmann/json")
        for m in machines():
            with self.subTest(machine=os.path.basename(m)):
                with open(os.path.join(m, "expected.json"), encoding="utf-8") as f:
                    expected = f.read()
                reg = ah.detect(root=m)
                # The CLI's `detect --root M --json` is the same text plus a newline.
                self.assertEqual(reg.to_json() + "\n", expected)
                self.assertEqual(ah.Registry.from_json(expected), reg)

    def test_hgx_node(self):
        reg = self.detect_machine("handmade-hgx-h100-8gpu-nvswitch")
        gpus = reg.accelerators()
        self.assertEqual(len(gpus), 8)
        for g in gpus:
            self.assertEqual(g.kind, "cuda_gpu")
            self.assertEqual(g.vendor, "nvidia")
            self.assertEqual(g.memory_origin, "tool")
            self.assertIsNotNone(g.pci)
            self.assertIsNotNone(g.uuid)
            self.assertIsNotNone(g.spec)
        # Totals: the accelerators' own memory adds up; the CPU's is counted on top once.
        self.assertEqual(reg.total_accelerator_memory(), sum(g.memory_bytes for g in gpus))
        self.assertGreater(reg.total_memory(), reg.total_accelerator_memory())
        self.assertIn(reg.best_available().name, {g.name for g in gpus})
        kinds = {link.kind for link in reg.interconnects}
        self.assertTrue(kinds & {"nvlink", "nvswitch"}, kinds)

    def test_stacks_of_a_card(self):
        reg = self.detect_machine("handmade-max1550-2card-xe")
        gpus = reg.accelerators()
        self.assertEqual([(g.pci, g.stack) for g in gpus],
                         [("0000:29:00.0", 0), ("0000:29:00.0", 1), ("0000:9a:00.0", 0), ("0000:9a:00.0", 1)])
        self.assertEqual({g.memory_bytes for g in gpus}, {64 << 30})
        self.assertIsNone(reg.devices[0].stack)  # the CPU

    def test_pod_memory_under_its_cgroup_limit(self):
        reg = self.detect_machine("handmade-k8s-pod-graviton2-cgroup-v1")
        memory = reg.host["memory"]
        self.assertEqual(memory["cgroup_limit_bytes"], 512 << 20)
        # The limit less the pod's working set (384 MiB in use, 64 MiB inactive page cache).
        self.assertEqual(memory["cgroup_free_bytes"], 192 << 20)
        cpu = [d for d in reg.devices if d.is_cpu][0]
        self.assertEqual(cpu.memory_bytes, 512 << 20)
        self.assertEqual(cpu.memory_free_bytes, 192 << 20)

    def test_unified_memory_counted_once(self):
        reg = self.detect_machine("handmade-macbook-pro-m1pro")
        shared = [d for d in reg.available() if d.unified_memory or d.is_cpu]
        self.assertGreater(len(shared), 1)
        self.assertEqual(reg.total_memory(), max(d.memory_bytes or 0 for d in shared))

    def test_detection_in_threads(self):
        # Detection releases the GIL; several at once give the same registry as one.
        m = machines()[0]
        alone = ah.detect(root=m)
        results = [None] * 4

        def run(i):
            results[i] = ah.detect(root=m)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(results))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in results:
            self.assertEqual(r, alone)


class RegistryValue(unittest.TestCase):
    def test_built_from_devices(self):
        h100 = ah.catalogue_device("H100 SXM")
        reg = ah.Registry([h100, h100])
        self.assertEqual(len(reg), 2)
        self.assertEqual(reg.total_memory(), 2 * h100.memory_bytes)
        self.assertEqual(len(reg.accelerators()), 2)
        bigger = reg.what_if_add([ah.catalogue_device("MI300X")])
        self.assertEqual(len(bigger), 3)
        self.assertEqual(len(reg), 2)  # unchanged
        self.assertEqual(bigger.best_available().vendor, "amd")
        self.assertNotEqual(reg, bigger)
        self.assertEqual(ah.Registry(), ah.Registry([]))
        self.assertIsNone(ah.Registry().best_available())

    def test_registry_is_not_hashable(self):
        with self.assertRaises(TypeError):
            hash(ah.Registry())

    @unittest.skipUnless(ah.json_support, "built without nlohmann/json")
    def test_json_round_trip_and_errors(self):
        reg = ah.catalogue_registry("MI300X", 4)
        text = reg.to_json(indent=-1)
        self.assertNotIn("\n", text)
        # nlohmann read past its indent buffer beyond 1024 (a crash at 100000).
        with self.assertRaisesRegex(ValueError, "indent: 100000 is more than 64"):
            reg.to_json(indent=100000)
        self.assertEqual(ah.Registry.from_json(reg.to_json(indent=64)), reg)
        back = ah.Registry.from_json(text)
        self.assertEqual(back, reg)
        self.assertEqual([d.spec for d in back], [d.spec for d in reg])
        for bad, why in [("", "invalid JSON"), ("{}", "schema_version"), ("[1, 2]", ""),
                         ('{"schema_version": 999}', "schema_version")]:
            with self.subTest(text=bad):
                with self.assertRaises(ValueError) as cm:
                    ah.Registry.from_json(bad)
                self.assertIn(why, str(cm.exception))

    def test_wrong_types(self):
        with self.assertRaises(TypeError):
            ah.Registry([1, 2])
        with self.assertRaises(TypeError):
            ah.detect(root=3)


if __name__ == "__main__":
    unittest.main()
