#!/usr/bin/env python3
"""Turn llama-bench's JSON lines into rows of the calibration CSV's columns.

  to_calibration_csv.py bench.jsonl --hardware "H200 SXM 141GB" --device-key H200 \
      --bandwidth 4800 --bandwidth-source URL --engine "llama.cpp (...)" --date 2026-11-24 \
      --source "..." --first-id 9001 > measured.csv

One row per test: decode_tok_s for a tgN test, prefill_tok_s for a ppN test, named as the
published rows name them ("tg128", "pp512", "tg128 @ d4096"). The value is the median of
llama-bench's samples (its mean is in the notes, with every sample): the first of a
prompt test's samples is often slow while the GPU's clocks and libraries warm up.

The JSON lines of measure_batched.sh (llama-batched-bench, one line per batch size and
round) give one batch_decode_tok_s row per model, format and batch: the tokens all the
sequences decode together per second (S_TG), the median over the rounds, as test
"tgN @ dP" (each sequence decodes N tokens after its own P-token prompt) with the batch in
the batch column. Both kinds of line may be mixed in one file.
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
# synthetic_gguf.py's presets, which measure_batched.sh names in its lines.
PRESETS = {"llama-3-8b": MODELS["llama 8B"], "llama-3-70b": MODELS["llama 70B"], "llama-2-7b": MODELS["llama 7B"]}


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
    rows = []
    batched = {}  # (preset, format, pp, tg, pl, flash_attn) -> lines, in file order
    for r in runs:
        if "pl" in r:
            batched.setdefault((r["preset"], r["format"], r["pp"], r["tg"], r["pl"], r["flash_attn"]), []).append(r)
            continue
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
        rows.append([metric, "%.2f" % statistics.median(samples), model, params, fmt, test, 1,
                     "%s %s" % (a.date, r["test_time"]), notes])
    for (preset, fmt, pp, tg, pl, _), lines in batched.items():
        if preset not in PRESETS or fmt not in FORMATS.values():
            sys.exit("unknown model %r or format %r" % (preset, fmt))
        model, params = PRESETS[preset]
        samples = [x["speed_tg"] for x in lines]
        first = lines[0]
        notes = ("all %d sequences together (llama-batched-bench S_TG), median of %d rounds (%s); each sequence "
                 "prefilled its own %d-token prompt, then all decoded %d tokens together; per round %.3f s of "
                 "decoding at the median; n_batch %d, n_ubatch %d, flash_attn %d, KV cells %d. %s" % (
                     pl, len(samples), ", ".join("%.2f" % x for x in samples), pp, tg,
                     statistics.median(x["t_tg"] for x in lines), first["n_batch"], first["n_ubatch"],
                     first["flash_attn"], first["n_kv_max"], a.notes)).strip()
        rows.append(["batch_decode_tok_s", "%.2f" % statistics.median(samples), model, params, fmt,
                     "tg%d @ d%d" % (tg, pp), pl, a.date, notes])
    for i, (metric, value, model, params, fmt, test, batch, when, notes) in enumerate(rows):
        out.writerow([a.first_id + i, "throughput", "", metric, value, "tok/s", model, params, fmt, a.engine,
                      a.hardware, a.device_key, 1, a.bandwidth, a.bandwidth_source, test, "", batch, a.source,
                      when, "measured", notes])

if __name__ == "__main__":
    main()
