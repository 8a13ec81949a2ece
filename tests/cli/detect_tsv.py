#!/usr/bin/env python3
"""`ai-hwaccel detect --tsv`, --family, --sort and --json on a fixture machine, checked
against the machine's reviewed expected.json.

    detect_tsv.py PROGRAM SOURCE_DIR MACHINE_DIR

Every TSV cell of every column must say what expected.json says of that device (bytes,
GB/s, true/false, empty when unknown); the default columns and the header are the
documented ones; --family keeps exactly the devices of those families (families read
from include/ai_hwaccel/core/taxonomy.hpp), in detection order; --sort orders as
docs/cli.md says (known values first either way, text ignoring case, ties in detection
order); --json with --family and --sort holds the same devices in the same order.
Exits 0 when all holds, 1 listing what does not.
"""
import json
import os
import re
import subprocess
import sys

DEFAULT_TSV = ("row index kind family vendor name memory memory_origin bandwidth bandwidth_origin "
               "pci numa driver available software").split()
ALL_COLUMNS = ("row index kind family vendor name memory memory_origin memory_used memory_free "
               "bandwidth bandwidth_origin pci numa driver arch uuid spec compute_units temperature "
               "power utilization available software unified").split()


def families_of_kinds(source_dir):
    """device kind name -> family name, from the device_kind_table in taxonomy.hpp."""
    text = open(os.path.join(source_dir, "include/ai_hwaccel/core/taxonomy.hpp"), encoding="utf-8").read()
    rows = re.findall(r'\{device_kind::\w+,\s*"(\w+)",\s*"[^"]*",\s*family::(\w+),', text)
    if len(rows) < 10:
        raise SystemExit("cannot read the device kinds from taxonomy.hpp")
    return dict(rows)


def sourced(device, field):
    v = device.get(field)
    return None if v is None else v["value"]


def origin(device, field):
    v = device.get(field)
    return "" if v is None else v["origin"]


def expected_value(col, row, d, family):
    """What the TSV should hold for column `col` of device d (row `row`), as a string or a
    float (compared numerically)."""
    def num(field):
        v = sourced(d, field)
        return "" if v is None else float(v)

    def boolean(v):
        return "true" if v else "false"
    return {
        "row": str(row),
        "index": str(d["index"]),
        "kind": d["kind"],
        "family": family[d["kind"]],
        "vendor": d["vendor"],
        "name": d["name"],
        "memory": num("memory_bytes"),
        "memory_origin": origin(d, "memory_bytes"),
        "memory_used": num("memory_used_bytes"),
        "memory_free": num("memory_free_bytes"),
        "bandwidth": num("memory_bandwidth_gbps"),
        "bandwidth_origin": origin(d, "memory_bandwidth_gbps"),
        "pci": d["pci"] or "",
        "numa": num("numa_node"),
        "driver": d["driver_version"],
        "arch": d["arch"],
        "uuid": d["uuid"],
        "spec": d["spec"] or "",
        "compute_units": num("compute_units"),
        "temperature": num("temperature_c"),
        "power": num("power_draw_watts"),
        "utilization": num("utilization_percent"),
        "available": boolean(d["available"]),
        "software": boolean(d["software"]),
        "unified": boolean(d["unified_memory"]),
    }[col]


def run(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8")


def parse_tsv(text):
    lines = text.split("\n")
    if lines[-1] != "":
        raise ValueError("the TSV does not end with a newline")
    table = [line.split("\t") for line in lines[:-1]]
    width = len(table[0])
    for i, r in enumerate(table):
        if len(r) != width:
            raise ValueError(f"line {i + 1} has {len(r)} fields, the header {width}")
    return table[0], table[1:]


def sort_order(devices, keys, family):
    """Row numbers in the order docs/cli.md describes for --sort KEYS."""
    def key_value(col, row):
        v = expected_value(col, row, devices[row], family)
        if v == "":
            return None
        if col in ("memory_origin", "bandwidth_origin"):
            return ["estimated", "catalogue", "measured", "user", "sysfs", "tool"].index(v)
        if col in ("row", "index"):
            return int(v)
        if col in ("available", "software", "unified"):
            return 1 if v == "true" else 0
        if col == "pci":
            dom, bus, rest = v.split(":")
            dev, fn = rest.split(".")
            return (int(dom, 16), int(bus, 16), int(dev, 16), int(fn, 16))
        return v.lower() if isinstance(v, str) else v

    order = list(range(len(devices)))
    # Python's sort is stable: sort by the last key first.
    for spec in reversed(keys):
        desc = spec.startswith("-")
        col = spec.lstrip("-")
        known = [r for r in order if key_value(col, r) is not None]
        unknown = [r for r in order if key_value(col, r) is None]
        known.sort(key=lambda r: key_value(col, r), reverse=desc)  # stable, reversed or not
        order = known + unknown
    return order


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    program, source_dir, machine = sys.argv[1:]
    family = families_of_kinds(source_dir)
    expected = json.load(open(os.path.join(machine, "expected.json"), encoding="utf-8"))
    devices = expected["devices"]
    failures = []
    detect = [program, "detect", "--root", machine]

    def check_rows(what, header, rows, order, columns):
        if header != columns:
            failures.append(f"{what}: header {header}, expected {columns}")
            return
        if len(rows) != len(order):
            failures.append(f"{what}: {len(rows)} rows, expected {len(order)}")
            return
        for line, row in zip(rows, order):
            for col, got in zip(columns, line):
                want = expected_value(col, row, devices[row], family)
                ok = got != "" and float(got) == want if isinstance(want, float) else got == want
                if not ok:
                    failures.append(f"{what}: row {row} column {col}: {got!r}, expected {want!r}")

    # The default TSV, then every column.
    code, out, err = run(detect + ["--tsv"])
    if code != 0:
        failures.append(f"--tsv: exit {code}: {err}")
    else:
        header, rows = parse_tsv(out)
        check_rows("--tsv", header, rows, list(range(len(devices))), DEFAULT_TSV)
    code, out, err = run(detect + ["--tsv", "--columns", ",".join(ALL_COLUMNS)])
    if code != 0:
        failures.append(f"--tsv --columns (all): exit {code}: {err}")
    else:
        header, rows = parse_tsv(out)
        check_rows("--tsv --columns (all)", header, rows, list(range(len(devices))), ALL_COLUMNS)
    if "\x1b" in out:
        failures.append("--tsv holds an escape sequence")

    # --family: each family on the machine, and one that is not (exit 1, header only).
    present = sorted({family[d["kind"]] for d in devices})
    for f in present:
        order = [i for i, d in enumerate(devices) if family[d["kind"]] == f]
        code, out, err = run(detect + ["--tsv", "--family", f, "--columns", "row,kind,family,name"])
        if code != 0:
            failures.append(f"--family {f}: exit {code}: {err}")
            continue
        header, rows = parse_tsv(out)
        check_rows(f"--family {f}", header, rows, order, ["row", "kind", "family", "name"])
    absent = [f for f in ("cpu", "gpu", "npu", "tpu", "ai_asic") if f not in present]
    if absent:
        code, out, err = run(detect + ["--tsv", "--family", absent[0]])
        if code != 1 or out.count("\n") != 1 or f"no device of family {absent[0]}" not in err:
            failures.append(f"--family {absent[0]} (none there): exit {code}, {out.count(chr(10))} lines, {err!r}")

    # --sort, by several keys and directions.
    for keys in (["-memory", "name"], ["memory"], ["pci"], ["-pci"], ["name"], ["-kind", "-row"], ["numa", "-index"],
                 ["-bandwidth_origin", "row"], ["-available", "software"]):
        order = sort_order(devices, keys, family)
        cols = ["row", "name"] + [k.lstrip("-") for k in keys if k.lstrip("-") not in ("row", "name")]
        code, out, err = run(detect + ["--tsv", "--sort", ",".join(keys), "--columns", ",".join(cols)])
        if code != 0:
            failures.append(f"--sort {','.join(keys)}: exit {code}: {err}")
            continue
        header, rows = parse_tsv(out)
        check_rows(f"--sort {','.join(keys)}", header, rows, order, cols)

    # --json sees the same devices as the table: filtered and sorted.
    f = family[devices[-1]["kind"]]
    code, out, err = run(detect + ["--json", "--family", f, "--sort", "-memory,-row"])
    if code == 2 and "no JSON support" in err:
        print("this build has no JSON support: --json not checked")
    elif code != 0:
        failures.append(f"--json --family {f}: exit {code}: {err}")
    else:
        got = json.loads(out)
        order = [r for r in sort_order(devices, ["-memory", "-row"], family) if family[devices[r]["kind"]] == f]
        want = [devices[r] for r in order]
        if got["devices"] != want:
            failures.append(f"--json --family {f} --sort -memory,-row: devices differ from expected.json's, "
                            f"filtered and sorted: got {[d['name'] for d in got['devices']]}, "
                            f"want {[d['name'] for d in want]}")
        for k in ("host", "system", "warnings", "schema_version"):
            if got.get(k) != expected.get(k):
                failures.append(f"--json --family: '{k}' differs from expected.json")

    for f in failures:
        print("FAIL:", f)
    print(f"{os.path.basename(machine)}: {len(devices)} devices, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
