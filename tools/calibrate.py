#!/usr/bin/env python3
"""Fit the constants of include/ai_hwaccel/plan/throughput.hpp and report the errors.

Python 3 standard library only. Steps:
 1. Build and run tests/calibration/export_features.cpp (the library's own model and
    device catalogues, format table and memory formulas) over the calibration CSV; it
    writes one line of physical inputs per row (bytes read per decoded token, FLOPs per
    prompt token, bandwidth, peak...). With --features FILE an existing table is used
    instead (tests/calibration/features.tsv is committed beside the report).
 2. Fit, on the TRAINING half (llama.cpp rows of the devices at even positions in the
    sorted list of device names; the odd ones are held out, so the held-out figures are
    for devices the fit never saw), by grid search then coordinate refinement on the sum
    of squared log errors:
      decode : 1 / (bytes / (bw x e_bw) + layers x t_layer)
      prefill: 1 / max((matmul + attention / e_att) / (peak x e_pf x (f_dq if dequantized)),
                       ubatch weights / ubatch / (bw x e_bw)),   (what one micro-batch's
                                                                 tokens use, read once)
               over n devices (layer split) with U micro-batches per batch: t x (1 + (U-1)/n) / U
 3. Report median and worst absolute percentage error per metric and engine on the
    held-out half and on all rows, ours beside the reference peer's formulas, into
    tests/calibration/REPORT.md (or --report FILE).
 4. Judge the library's own estimate (its defaults, the constants above), row by row, on
    measurements of our own that the fit never sees (--check CSV, in the same columns;
    default tests/calibration/h200/llama-cpp-h200.csv, llama.cpp on an H200 timed by
    benchmarks/llama_cpp/measure.sh and measure_batched.sh). Their features go to
    tests/calibration/h200/features.tsv; --check-features FILE reads such a table instead
    (with --features, the committed one).

Regenerate: python3 tools/calibrate.py   (from the repository root)
"""

import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CSV = "/work/shared/data/calibration-measurements.csv"
UBATCH = 512
BATCH = 2048


def build_features(csv_path, cxx):
    exe = os.path.join(tempfile.mkdtemp(prefix="ai_hwaccel_cal"), "export_features")
    cmd = [cxx, "-std=c++20", "-O1", "-I" + os.path.join(ROOT, "include"),
           "-I" + os.path.join(ROOT, "tests", "calibration"),
           os.path.join(ROOT, "tests", "calibration", "export_features.cpp"), "-o", exe]
    subprocess.run(cmd, check=True)
    out = subprocess.run([exe, csv_path], check=True, capture_output=True, text=True).stdout
    return out


def parse_features(text):
    rows = list(csv.DictReader(text.splitlines(), delimiter="\t"))
    num = ["measured", "bw_gbps", "peak_tflops", "decode_weight_bytes", "kv_bytes", "matmul_flops",
           "attention_flops", "ubatch_weight_bytes", "estimate", "peer"]
    for r in rows:
        for k in num:
            r[k] = float(r[k])
        for k in ["id", "n_devices", "params_only", "vector_peak", "stages", "dequantizable", "layers", "context"]:
            r[k] = int(r[k])
        r["batch"] = int(r.get("batch") or 1)  # sequences decoded together (tables before it: 1)
    return rows


def decode_pred(r, c):
    bw = r["bw_gbps"] * 1e9 * c["e_bw"]
    if bw <= 0:
        return 0.0
    t = (r["decode_weight_bytes"] + r["kv_bytes"]) / bw + r["layers"] * c["t_layer"]
    return 1.0 / t if t > 0 else 0.0


def prefill_pred(r, c):
    e = c["e_vec"] if r["vector_peak"] else c["e_pf"]
    flops = r["peak_tflops"] * 1e12 * e * (c["f_dq"] if r["dequantizable"] else 1.0)
    if flops <= 0:
        return 0.0
    compute = (r["matmul_flops"] + r["attention_flops"] / c["e_att"]) / flops
    bw = r["bw_gbps"] * 1e9 * c["e_bw"]
    ub = min(max(r["context"], 1), UBATCH)
    memory = r["ubatch_weight_bytes"] / ub / bw if bw > 0 else 0.0
    t = max(compute, memory)
    # llama.cpp's layer split over `stages` equal devices: the micro-batches of a batch
    # (UBATCH of BATCH tokens) overlap across the stages (pipelined_prefill_seconds).
    n = r["stages"]
    u = math.ceil(min(BATCH, r["context"]) / ub)
    if n > 1 and u > 1:
        t = (t + (u - 1) * t / n) / u
    return 1.0 / t if t > 0 else 0.0


def pipelined(r):
    """A prefill row whose prompt overlaps across the devices of a layer split."""
    return r["stages"] > 1 and r["context"] > UBATCH


def loss(rows, pred, c):
    s = 0.0
    for r in rows:
        p = pred(r, c)
        if p <= 0:
            return float("inf")
        s += math.log(p / r["measured"]) ** 2
    return s


def fit(rows, pred, c, keys, grids):
    """Grid search over `keys`, then coordinate refinement by golden-section-like shrinking."""
    best = dict(c)
    best_l = float("inf")

    def rec(i, cur):
        nonlocal best, best_l
        if i == len(keys):
            l_ = loss(rows, pred, cur)
            if l_ < best_l:
                best_l, best = l_, dict(cur)
            return
        for v in grids[i]:
            cur[keys[i]] = v
            rec(i + 1, cur)

    rec(0, dict(c))
    step = {k: (g[1] - g[0]) if len(g) > 1 else abs(best[k]) * 0.1 or 1e-6 for k, g in zip(keys, grids)}
    for _ in range(60):
        improved = False
        for k in keys:
            for sgn in (1, -1):
                trial = dict(best)
                trial[k] = best[k] + sgn * step[k]
                if trial[k] < 0:
                    continue
                l_ = loss(rows, pred, trial)
                if l_ < best_l:
                    best_l, best, improved = l_, trial, True
        if not improved:
            for k in keys:
                step[k] /= 2
    return best


def ape(pred, measured):
    return abs(pred - measured) / measured * 100.0


def summary(errs):
    if not errs:
        return "n/a", "n/a", 0
    return "%.1f %%" % statistics.median(errs), "%.1f %%" % max(errs), len(errs)


def check_kind(r):
    """How a row of our own measurements is grouped in the check's summary."""
    if r["metric"] == "decode_tok_s":
        return "decode, %s" % ("one sequence" if r["batch"] <= 1 else "several sequences together")
    if r["metric"] == "prefill_tok_s":
        return "prefill, %s" % ("after a filled cache" if "@ d" in r["test"] else "from an empty cache")
    return r["metric"]


def check_table(w, rows):
    """Our own measurements, row by row: the library's estimate (its defaults, the constants
    above: a test holds them equal), judged, never fitted on."""
    scored = [r for r in rows if not r["skip"] and r["estimate"] > 0]
    w("## Our own measurements (judged, never fitted on)")
    w("")
    w("Measured by this project with `benchmarks/llama_cpp/measure.sh` and `measure_batched.sh`")
    w("(see their README); rows in `tests/calibration/h200/llama-cpp-h200.csv`, the tools' output")
    w("beside them. \"ours\" is the library's own estimate with its default constants (the fit")
    w("above). A batch's rates are per sequence (the measured total / batch). Error is")
    w("ours / measured - 1: positive when the estimate is too fast.")
    w("")
    w("| id | model | format | device | test | batch | measured tok/s | ours | error | peer |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    for r in scored:
        p = r["estimate"]
        w("| %d | %s | %s | %s | %s | %d | %.1f | %.1f | %+.1f %% | %.1f |" % (
            r["id"], r["model"], r["quant"], r["device"], r["test"], r["batch"], r["measured"], p,
            (p / r["measured"] - 1) * 100, r["peer"]))
    w("")
    # As ratios: an absolute percentage error caps a low estimate at 100 % (the peer's
    # 20 tok/s for a 9000 tok/s prompt would look better than a 2x overestimate).
    kinds = []
    for r in scored:
        if check_kind(r) not in kinds:
            kinds.append(check_kind(r))
    for kind in kinds:
        for who, get in (("ours", lambda r: r["estimate"]), ("peer", lambda r: r["peer"])):
            ratios = sorted(get(r) / r["measured"] for r in scored if check_kind(r) == kind and get(r) > 0)
            if ratios:
                w("- %s, %s: estimate / measured median %.3g, from %.3g to %.3g (%d rows)." % (
                    kind, who, statistics.median(ratios), ratios[0], ratios[-1], len(ratios)))
    w("")
    skipped = [r for r in rows if r["skip"]]
    if skipped:
        w("Not scored: %s." % "; ".join("%d (%s)" % (r["id"], r["skip"]) for r in skipped))
        w("")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", default=os.environ.get("AI_HWACCEL_CALIBRATION_CSV", DEFAULT_CSV))
    ap.add_argument("--features", help="use this features table instead of building the exporter")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--report", default=os.path.join(ROOT, "tests", "calibration", "REPORT.md"))
    ap.add_argument("--features-out", default=os.path.join(ROOT, "tests", "calibration", "features.tsv"))
    ap.add_argument("--check", default=os.path.join(ROOT, "tests", "calibration", "h200", "llama-cpp-h200.csv"),
                    help="our own measurements to judge the fit on, never to fit on ('' for none)")
    ap.add_argument("--check-features", help="use this features table for --check instead of building the exporter")
    ap.add_argument("--check-features-out", default=os.path.join(ROOT, "tests", "calibration", "h200", "features.tsv"))
    args = ap.parse_args()

    if args.features:
        text = open(args.features, encoding="utf-8").read()
    else:
        text = build_features(args.csv, args.cxx)
        with open(args.features_out, "w", encoding="utf-8") as f:
            f.write(text)
    rows = parse_features(text)
    check_rows = []
    if args.features and not args.check_features and os.path.exists(args.check_features_out):
        args.check_features = args.check_features_out  # no compiler: the committed table
    if args.check_features:
        check_rows = parse_features(open(args.check_features, encoding="utf-8").read())
    elif args.check:
        check_text = build_features(args.check, args.cxx)
        with open(args.check_features_out, "w", encoding="utf-8") as f:
            f.write(check_text)
        check_rows = parse_features(check_text)

    usable = [r for r in rows if not r["skip"]]
    lcpp = [r for r in usable if r["engine"] == "llama.cpp"]
    devices = sorted({r["device"] for r in lcpp if r["metric"] in ("decode_tok_s", "prefill_tok_s")})
    train_devices = set(devices[0::2])
    # decode_pred has no compute side, which a batch of sequences reaches: single sequences only.
    dec = [r for r in lcpp if r["metric"] == "decode_tok_s" and r["batch"] <= 1]
    pre = [r for r in lcpp if r["metric"] == "prefill_tok_s" and r["peak_tflops"] > 0]
    dec_train = [r for r in dec if r["device"] in train_devices]
    # Prompts pipelined over several devices are judged, not fitted on: the overlap has no
    # constant of its own, and the device constants are what one device does.
    pre_train = [r for r in pre if r["device"] in train_devices and not pipelined(r)]

    c = {"e_bw": 0.6, "t_layer": 0.0, "e_pf": 0.3, "f_dq": 1.0, "e_att": 0.5, "e_vec": 0.3}  # start of the search
    c = fit(dec_train, decode_pred, c, ["e_bw", "t_layer"],
            [[0.3 + 0.05 * i for i in range(15)], [i * 5e-6 for i in range(21)]])
    c = fit(pre_train, prefill_pred, c, ["e_pf", "f_dq", "e_att", "e_vec"],
            [[0.05 + 0.05 * i for i in range(16)], [0.3 + 0.1 * i for i in range(10)],
             [0.02 + 0.04 * i for i in range(15)], [0.1 + 0.1 * i for i in range(10)]])

    def ours(r):
        if r["metric"] == "decode_tok_s":
            return decode_pred(r, c)
        if r["metric"] == "prefill_tok_s":
            return prefill_pred(r, c)
        return r["estimate"]

    lines = []
    w = lines.append
    w("# Calibration report (generated: do not edit)")
    w("")
    w("Regenerate from the repository root with `python3 tools/calibrate.py` (builds")
    w("`tests/calibration/export_features.cpp`, writes `tests/calibration/features.tsv` and this")
    w("file); `python3 tools/calibrate.py --features tests/calibration/features.tsv` refits")
    w("from the committed table without a compiler. Data: `calibration-measurements.csv`")
    w("(%d rows). Throughput constants are fitted on the llama.cpp rows of the training" % len(rows))
    w("devices (every other device name in sorted order) and judged on the other devices.")
    w("")
    w("## Fitted constants (`throughput_constants` defaults)")
    w("")
    w("| constant | value | fitted on |")
    w("|---|---|---|")
    w("| decode_bandwidth_efficiency | %.3f | %d decode rows |" % (c["e_bw"], len(dec_train)))
    w("| decode_seconds_per_layer | %.3g | %d decode rows |" % (c["t_layer"], len(dec_train)))
    w("| prefill_compute_efficiency | %.3f | %d prefill rows |" % (c["e_pf"], len(pre_train)))
    w("| prefill_dequantized_factor | %.3f | %d prefill rows |" % (c["f_dq"], len(pre_train)))
    w("| prefill_attention_efficiency | %.3f | %d prefill rows |" % (c["e_att"], len(pre_train)))
    w("| prefill_vector_efficiency | %.3f | %d of those rows (peak = a vector fp32 rate) |"
      % (c["e_vec"], sum(1 for r in pre_train if r["vector_peak"])))
    w("")
    w("Prefill rows of a prompt longer than one micro-batch on several devices (%d, llama.cpp's"
      % sum(1 for r in pre if pipelined(r)))
    w("layer split pipelining the micro-batches) are judged but not fitted on.")
    w("")
    w("Training devices: %s." % ", ".join(sorted(train_devices)))
    w("")
    w("Held-out devices: %s." % ", ".join(d for d in devices if d not in train_devices))
    w("")

    def table(title, subset):
        w("## " + title)
        w("")
        w("Absolute percentage error; the reference peer's formulas (reference-peer.md §3.2,")
        w("§3.6: tok/s = 1e9 / params x type multiplier x 32 / bits for decode and prefill alike;")
        w("weights = params x bits / 8 with bits in {32, 16, 8, 4}; no KV cache term) beside ours.")
        w("")
        w("| metric | engine | rows | ours median | ours worst | peer median | peer worst |")
        w("|---|---|---|---|---|---|---|")
        keys = sorted({(r["metric"], r["engine"]) for r in subset})
        for m, e in keys:
            rs = [r for r in subset if r["metric"] == m and r["engine"] == e]
            rs = [r for r in rs if ours(r) > 0]  # both judged on the rows ours can estimate
            ours_e = [ape(ours(r), r["measured"]) for r in rs]
            peer_e = [ape(r["peer"], r["measured"]) for r in rs if r["peer"] > 0]
            om, ow, n = summary(ours_e)
            pm, pw, _ = summary(peer_e)
            w("| %s | %s | %d | %s | %s | %s | %s |" % (m, e, n, om, ow, pm, pw))
        w("")

    held = [r for r in usable if r["metric"] not in ("decode_tok_s", "prefill_tok_s") or r["device"] not in train_devices]
    table("Held-out devices (throughput) and all memory rows", held)
    table("All rows", usable)

    w("## Rows not scored")
    w("")
    reasons = {}
    for r in rows:
        if r["skip"]:
            reasons.setdefault((r["metric"], r["skip"]), []).append(r["id"])
    for r in usable:
        if r["metric"] == "prefill_tok_s" and r["peak_tflops"] <= 0:
            reasons.setdefault((r["metric"], "device peak FLOPS not in the catalogue"), []).append(r["id"])
    w("| metric | reason | rows | ids |")
    w("|---|---|---|---|")
    for (m, why), ids in sorted(reasons.items()):
        shown = ", ".join(str(i) for i in ids[:12]) + (" ..." if len(ids) > 12 else "")
        w("| %s | %s | %d | %s |" % (m, why, len(ids), shown))
    w("")
    w("Rows built from `params_b` alone (model not in the catalogue): %s."
      % (", ".join(str(r["id"]) for r in usable if r["params_only"]) or "none"))
    w("")
    if check_rows:
        check_table(w, check_rows)

    with open(args.report, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    print("\nconstants:", {k: float("%.4g" % v) for k, v in c.items()}, file=sys.stderr)


if __name__ == "__main__":
    main()
