#!/usr/bin/env python3
"""Detection on this machine against the system's own tools.

Runs `ai-hwaccel detect --json` and compares the host it reports with /proc/meminfo,
nproc, lscpu and hwloc (lstopo / hwloc-calc). Where the tools agree with each other, the
registry must agree with them. Where they disagree, the registry must say so: a
`disagreement` warning naming what it chose. A tool that is not installed is skipped
with a note (the test still checks the rest).

usage: check_host.py PATH/TO/ai-hwaccel
"""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

failures = []
notes = []


def run(argv, env=None):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, check=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        notes.append(f"skipped {argv[0]}: {e}")
        return None


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: registry says {got!r}, expected {want!r}")
    else:
        notes.append(f"agrees: {what} = {got!r}")


def disagreement_mentions(reg, *words):
    for w in reg["warnings"]:
        if w["kind"] == "disagreement" and all(x.lower() in (w["subject"] + " " + w["message"]).lower() for x in words):
            return True
    return False


def main():
    cli = sys.argv[1]
    reg = json.loads(subprocess.run([cli, "detect", "--json"], capture_output=True, text=True, timeout=120,
                                    check=True).stdout)
    host = reg["host"]
    cpu = host["cpu"]

    # /proc/meminfo: the registry's total is MemTotal.
    with open("/proc/meminfo") as f:
        meminfo = {l.split(":")[0]: l.split(":")[1].split() for l in f if ":" in l}
    mem_total = int(meminfo["MemTotal"][0]) * 1024
    check("memory total (bytes) vs /proc/meminfo", host["memory"]["total_bytes"]["value"], mem_total)

    # nproc: the CPUs this process may use (affinity), without OpenMP's overrides.
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    out = run(["nproc"], env)
    nproc = int(out) if out is not None else None

    # lscpu and hwloc: logical CPUs, cores, sockets, NUMA nodes.
    lscpu = {}
    out = run(["lscpu"], {"LC_ALL": "C", "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    if out is not None:
        for line in out.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                lscpu[k.strip()] = v.strip()
    hw = {}
    if shutil.which("hwloc-calc"):
        # The whole machine (--disallowed: also what cgroups keep from this process), and
        # separately what this process may use.
        for kind in ("pu", "core", "package", "numanode"):
            out = run(["hwloc-calc", "--disallowed", "--number-of", kind, "all"])
            if out is not None:
                hw[kind] = int(out)
        out = run(["hwloc-calc", "--number-of", "pu", "all"])
        if out is not None:
            hw["allowed_pu"] = int(out)
    else:
        notes.append("skipped hwloc-calc: not installed (Debian package hwloc)")
    numa_memory = None
    if shutil.which("lstopo-no-graphics"):
        out = run(["lstopo-no-graphics", "--disallowed", "--of", "xml"])
        if out is not None:
            root = ET.fromstring(out)
            numa_memory = sum(int(o.get("local_memory", "0")) for o in root.iter("object")
                              if o.get("type") == "NUMANode")

    def compare(what, registry_value, sources):
        values = {name: v for name, v in sources.items() if v is not None}
        if not values:
            return
        if len(set(values.values())) == 1:
            check(f"{what} vs {', '.join(values)}", registry_value, next(iter(values.values())))
        elif registry_value not in values.values():
            failures.append(f"{what}: the tools disagree ({values}) and the registry sides with none: {registry_value}")
        else:
            notes.append(f"tools disagree on {what} ({values}); the registry says {registry_value}")

    def lscpu_int(key):
        try:
            return int(lscpu[key])
        except (KeyError, ValueError):
            return None

    per_socket = lscpu_int("Core(s) per socket")
    sockets = lscpu_int("Socket(s)")
    online = lscpu.get("On-line CPU(s) list")
    online_count = None
    if online:
        online_count = 0
        for part in online.split(","):
            lo, _, hi = part.partition("-")
            online_count += int(hi or lo) - int(lo) + 1
    compare("threads (online logical CPUs)", cpu["threads"], {"lscpu": online_count, "hwloc": hw.get("pu")})
    compare("usable threads", cpu["usable_threads"], {"nproc": nproc, "hwloc": hw.get("allowed_pu")})
    compare("cores", cpu["cores"],
            {"lscpu": per_socket * sockets if per_socket and sockets else None, "hwloc": hw.get("core")})
    compare("sockets", cpu["sockets"], {"lscpu": sockets, "hwloc": hw.get("package")})
    numa_nodes = len(host["numa"])
    compare("numa nodes", numa_nodes, {"lscpu": lscpu_int("NUMA node(s)"), "hwloc": hw.get("numanode")})

    # Memory by NUMA node (hwloc reads the nodes' meminfo) against /proc/meminfo.
    if numa_memory is not None and numa_nodes:
        registry_numa = sum(n["memory_bytes"] for n in host["numa"])
        apart = abs(numa_memory - mem_total) > mem_total / 100
        # A lone node short of MemTotal: the kernel has pages it has not yet handed to the
        # node (lazy struct-page initialisation; the node's meminfo grows as memory is
        # touched). The registry gives the node all the memory there is.
        lone_short = apart and numa_nodes == 1 and numa_memory < mem_total
        if lone_short:
            check("memory of the lone NUMA node (hwloc: %d, short of MemTotal)" % numa_memory, registry_numa,
                  mem_total)
        # hwloc rounds node memory to pages; allow 1 %.
        elif abs(registry_numa - numa_memory) > numa_memory / 100:
            failures.append(f"numa memory: registry {registry_numa}, hwloc {numa_memory}")
        else:
            notes.append(f"agrees: memory of the NUMA nodes = {registry_numa} (hwloc {numa_memory})")
        if apart and not lone_short and not disagreement_mentions(reg, "numa"):
            failures.append(f"hwloc's NUMA nodes hold {numa_memory} bytes but /proc/meminfo says {mem_total}, "
                            "and the registry explains nothing")
        elif apart and not lone_short:
            notes.append(f"NUMA nodes ({numa_memory}) and /proc/meminfo ({mem_total}) disagree; the registry says why")

    for n in notes:
        print(n)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
