#!/usr/bin/env python3
"""Checks the NFD side of the exporters with rules written here, not the library's.

1. deploy/nfd-daemonset.yaml is valid YAML with the shape a cluster accepts: a DaemonSet
   whose selector matches its pods, that mounts NFD's features.d folder from the host and
   runs `ai-hwaccel export nfd --output` into it (a name NFD reads: no leading dot);
   every label key and value in the manifest is valid under Kubernetes' rules.
2. Every label name the exporter can write, with the manifest's prefix, is a valid
   Kubernetes label name in a namespace NFD accepts.
3. The feature file of every fixture machine given: comment, `# +expiry-time=` (RFC 3339)
   and `name=value` lines only, each label valid, listed in (2), written once, under NFD's
   64 KiB limit.

Exit 0 when all hold, 1 with the list of problems, 77 (skipped) without python3-yaml.
"""
import argparse
import datetime
import os
import re
import shlex
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("skipped: python3-yaml is not installed")
    sys.exit(77)

FEATURES_D = "/etc/kubernetes/node-feature-discovery/features.d"
# Kubernetes (apimachinery validation): a qualified name and a label value.
DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = re.compile(rf"^{DNS_LABEL}(\.{DNS_LABEL})*$")
NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

problems = []


def problem(text):
    problems.append(text)


def label_name_ok(key):
    parts = key.split("/")
    if len(parts) > 2:
        return False
    name = parts[-1]
    if len(name) > 63 or not NAME_PART.match(name):
        return False
    if len(parts) == 2:
        prefix = parts[0]
        return 0 < len(prefix) <= 253 and bool(DNS_SUBDOMAIN.match(prefix))
    return True


def label_value_ok(value):
    return isinstance(value, str) and len(value) <= 63 and bool(VALUE.match(value))


def nfd_namespace_ok(key):
    """nfd-master always denies kubernetes.io and *.kubernetes.io, except its own."""
    prefix = key.split("/")[0] if "/" in key else ""
    if prefix in ("feature.node.kubernetes.io", "profile.node.kubernetes.io") or prefix.endswith(
            (".feature.node.kubernetes.io", ".profile.node.kubernetes.io")):
        return True
    return prefix != "" and prefix != "kubernetes.io" and not prefix.endswith(".kubernetes.io")


def walk_labels(node, where):
    """Every label map in a manifest: metadata.labels, matchLabels, nodeSelector."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("labels", "matchLabels", "nodeSelector") and isinstance(v, dict):
                for lk, lv in v.items():
                    if not label_name_ok(str(lk)):
                        problem(f"{where}.{k}: invalid label name {lk!r}")
                    if not label_value_ok(lv):
                        problem(f"{where}.{k}: invalid label value {lv!r} (for {lk})")
            walk_labels(v, f"{where}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            walk_labels(v, f"{where}[{i}]")


def check_manifest(path):
    """Returns the export command's options, as a dict."""
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    by_kind = {}
    for i, d in enumerate(docs):
        if not isinstance(d, dict) or "apiVersion" not in d or "kind" not in d or "metadata" not in d:
            problem(f"document {i}: not a Kubernetes object")
            continue
        by_kind.setdefault(d["kind"], []).append(d)
        walk_labels(d, d["kind"])
    ds_list = by_kind.get("DaemonSet", [])
    if len(ds_list) != 1:
        problem(f"expected one DaemonSet, found {len(ds_list)}")
        return {}
    ds = ds_list[0]
    if ds["apiVersion"] != "apps/v1":
        problem(f"DaemonSet apiVersion {ds['apiVersion']}")
    ns = ds["metadata"].get("namespace")
    if ns and ns not in [n["metadata"]["name"] for n in by_kind.get("Namespace", [])] + ["default", "kube-system"]:
        problem(f"DaemonSet namespace {ns} is not created by the manifest")
    spec = ds["spec"]
    selector = spec["selector"]["matchLabels"]
    pod_labels = spec["template"]["metadata"]["labels"]
    if not selector or any(pod_labels.get(k) != v for k, v in selector.items()):
        problem("the DaemonSet's selector does not match its pod template's labels")
    pod = spec["template"]["spec"]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    containers = pod.get("containers", [])
    if len(containers) != 1:
        problem("expected one container")
        return {}
    c = containers[0]
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    if FEATURES_D not in mounts:
        problem(f"the container does not mount {FEATURES_D}")
    else:
        vol = volumes.get(mounts[FEATURES_D]["name"], {})
        if vol.get("hostPath", {}).get("path") != FEATURES_D:
            problem(f"{FEATURES_D} is not the host's folder (hostPath)")
        if mounts[FEATURES_D].get("readOnly"):
            problem(f"{FEATURES_D} is mounted read-only")
    script = " ".join(c.get("command", []) + c.get("args", []))
    m = re.search(r"ai-hwaccel\s+export\s+nfd((?:\s+(?:\\\n\s*)?--[a-z-]+\s+\S+)*)", script)
    if not m:
        problem("the container does not run `ai-hwaccel export nfd`")
        return {}
    words = shlex.split(m.group(1).replace("\\\n", " "))
    options = dict(zip(words[0::2], words[1::2]))
    allowed = {"--prefix", "--expiry-seconds", "--output", "--root"}
    for k in options:
        if k not in allowed:
            problem(f"unknown export option {k}")
    out = options.get("--output", "")
    if os.path.dirname(out) != FEATURES_D or os.path.basename(out).startswith("."):
        problem(f"--output {out!r} is not a file NFD reads in {FEATURES_D}")
    return options


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        problem(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def check_feature_file(text, machine, names):
    if len(text.encode()) > 64 * 1024:
        problem(f"{machine}: feature file over NFD's 64 KiB limit")
    seen = set()
    labels = 0
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{machine}:{n}"
        if line.startswith("# +expiry-time="):
            stamp = line.split("=", 1)[1]
            try:
                datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")
            except ValueError:
                problem(f"{where}: expiry time {stamp!r} is not RFC 3339 UTC")
            continue
        if line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            problem(f"{where}: no '=' in {line!r}")
        if not label_name_ok(key) or not nfd_namespace_ok(key):
            problem(f"{where}: invalid label name {key!r}")
        if not label_value_ok(value) or value == "":
            problem(f"{where}: invalid label value {value!r}")
        if key not in names:
            problem(f"{where}: {key!r} is not among the names nfd-names lists")
        if key in seen:
            problem(f"{where}: {key!r} written twice")
        seen.add(key)
        labels += 1
    if labels == 0:
        problem(f"{machine}: no labels")
    return labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exporter", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("machines", nargs="*")
    a = ap.parse_args()
    options = check_manifest(a.manifest)
    prefix = options.get("--prefix", "ai-hwaccel.io")
    names = run([a.exporter, "nfd-names", "--prefix", prefix]).splitlines()
    if len(names) < 10:
        problem(f"nfd-names listed only {len(names)} names")
    for key in names:
        if not label_name_ok(key) or not nfd_namespace_ok(key):
            problem(f"the exporter can write the invalid label name {key!r}")
    if len(set(names)) != len(names):
        problem("nfd-names lists a name twice")
    total = 0
    for m in a.machines:
        args = [a.exporter, "nfd", "--root", m, "--prefix", prefix]
        if "--expiry-seconds" in options:
            args += ["--expiry-seconds", options["--expiry-seconds"]]
        text = run(args)
        if "--expiry-seconds" in options and "# +expiry-time=" not in text:
            problem(f"{m}: no expiry time")
        total += check_feature_file(text, os.path.basename(m), set(names))
    if problems:
        print("\n".join(problems))
        return 1
    print(f"ok: manifest, {len(names)} possible label names, {total} labels on {len(a.machines)} machines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
