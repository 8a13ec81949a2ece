#!/usr/bin/env python3
"""Turn llama-bench's JSON lines into rows of the calibration CSV's columns.

  to_calibration_csv.py bench.jsonl --hardware "H200 SXM 141GB" --device-key H200 \
      --bandwidth 4800 --bandwidth-source URL --engine "llama.cpp (...)" --date 2026-11-24 \
      --source "..." --first-id 9001 > measured.csv

One row per test: decode_tok_s for a tgN test, prefill_tok_s for a ppN test, named as the
published rows name them ("tg128", "pp512", "tg128 @ d4096"). The value is the median of
llama-bench's samples (its mean is in the notes, with every sample): the first of a
prompt test's samples is often slow while the GPU's clocks and libraries warm up.
Python 3 standard library only.
"""

import argparse
import csv
import json
import statistics
import sys

COLUMNS = ["id", "section", "group", "metric", "value", "unit", "model", "params_b", "quant", "engine", "hardware",
           "device_key", "n_devices", "mem_bw_gbps_per_device", "bw_source", "test", "ctx_tokens", "batch",
           "source_url", "source_locator", "confidence", "notes"]

# llama-bench's model_type ("llama 8B Q4_K - Medium") to the CSV's model and format names.
MODELS = {"llama 8B": ("Llama-3-8B", 8.03), "llama 70B": ("Llama-3-70B", 70.55), "llama 7B": ("Llama-2-7B", 6.74)}
FORMATS = {"Q4_K - Medium": "Q4_K_M", "F16": "F16", "Q8_0": "Q8_0"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jsonl")
    for name in ["hardware", "device-key", "bandwidth", "bandwidth-source", "engine", "date", "source"]:
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--first-id", type=int, default=9001)
    ap.add_argument("--notes", default="")
    a = ap.parse_args()

    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(COLUMNS)
    with open(a.jsonl, encoding="utf-8") as f:
        runs = [json.loads(line) for line in f if line.strip()]
    for i, r in enumerate(runs):
        kind = r["model_type"]
        arch = next((k for k in MODELS if kind.startswith(k + " ")), None)
        fmt = next((v for k, v in FORMATS.items() if kind.endswith(" " + k)), None)
        if arch is None or fmt is None:
            sys.exit("unknown model type %r" % kind)
        model, params = MODELS[arch]
        if r["n_gen"] > 0:
            metric, test = "decode_tok_s", "tg%d" % r["n_gen"]
        else:
            metric, test = "prefill_tok_s", "pp%d" % r["n_prompt"]
        if r["n_depth"]:
            test += " @ d%d" % r["n_depth"]
        samples = r["samples_ts"]
        notes = ("median of %d llama-bench samples (%s); mean %.2f, sd %.2f; n_batch %d, n_ubatch %d, "
                 "flash_attn %s, KV %s/%s. %s" % (len(samples), ", ".join("%.2f" % s for s in samples), r["avg_ts"],
                                                  r["stddev_ts"], r["n_batch"], r["n_ubatch"], r["flash_attn"],
                                                  r["type_k"], r["type_v"], a.notes)).strip()
        out.writerow([a.first_id + i, "throughput", "", metric, "%.2f" % statistics.median(samples), "tok/s", model,
                      params, fmt, a.engine, a.hardware, a.device_key, 1, a.bandwidth, a.bandwidth_source, test, "",
                      1, a.source, "%s %s" % (a.date, r["test_time"]), "measured", notes])


if __name__ == "__main__":
    main()
