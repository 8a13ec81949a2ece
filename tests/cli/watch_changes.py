#!/usr/bin/env python3
"""`ai-hwaccel watch` on a machine that changes between refreshes.

    watch_changes.py PROGRAM MACHINE_DIR WORK_DIR

MACHINE_DIR is the hand-made HGX tree (eight H100s answered by a captured nvidia-smi
query). Each case copies it to WORK_DIR, starts a watch, waits for the first refresh to
be printed, then edits the copy during the wait before the next refresh:

- a GPU vanishes and nvidia-smi numbers the rest again, as it does: the watch says which
  device went, and the survivors keep their deltas (matched by PCI function, not index);
- nvidia-smi starts failing: the warning reaches stderr once while it lasts, the JSON
  lines carry it, and the devices (found by the PCI scan instead) are still matched;
- a GPU uses 10 MiB: the table and a memory alert show 10.0 MiB, not 0.0 GiB;
- the reader of a pipe goes away: the watch ends with status 1 and no message rather than
  refreshing for nobody, and during a long wait it ends at once, keeping status 3 for an
  alert that fired, rather than at its next write.

Exits 0 when all holds, 1 listing what does not.
"""
import json
import os
import shutil
import signal
import subprocess
import sys

WAIT = "4"  # seconds between refreshes: the edits take milliseconds


def fresh_copy(machine, work, name):
    tree = os.path.join(work, name)
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(machine, tree, symlinks=True)
    return tree


def query_csv(tree):
    return os.path.join(tree, "ai-hwaccel-tools", "nvidia-smi-query.csv")


def drop_gpu_1(tree):
    """GPU 1 gone, the others numbered again from 0; GPU 0 now uses 10 GiB."""
    path = query_csv(tree)
    rows = open(path, encoding="utf-8").read().splitlines()
    del rows[1]
    rows = [str(i) + row[row.index(","):] for i, row in enumerate(rows)]
    rows[0] = rows[0].replace(", 0, 81004,", ", 10240, 70764,")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")


def break_nvidia_smi(tree):
    """The captured query now exits with status 9 (the index's first column)."""
    path = os.path.join(tree, "ai-hwaccel-tools", "index")
    lines = open(path, encoding="utf-8").read().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "nvidia-smi-query.csv" in line)
    lines[at] = "9" + lines[at][lines[at].index("\t"):]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)


def gone_and_renumbered(program, machine, work, problems):
    tree = fresh_copy(machine, work, "gone")
    p = subprocess.Popen([program, "watch", "--root", tree, "--count", "2", "--interval", WAIT],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = [p.stdout.readline() for _ in range(9)]  # the heading and eight GPUs
    drop_gpu_1(tree)
    rest, err = p.communicate(timeout=120)
    if p.returncode != 0 or err:
        problems.append(f"gone: exit code {p.returncode}, stderr {err!r}")
    if not first[0].startswith("refresh 1"):
        problems.append(f"gone: first refresh not printed first: {first[0]!r}")
    lines = rest.splitlines()
    gone = [line for line in lines if "gone since refresh 1" in line]
    if len(gone) != 1 or not gone[0].split()[0] == "1":
        problems.append(f"gone: expected one 'gone' line for GPU 1, got {gone}")
    rows = [line for line in lines if " used " in line]
    if len(rows) != 7:
        problems.append(f"gone: {len(rows)} devices at refresh 2, expected 7")
    for row in rows:
        index = row.split()[0]
        want = "used 10.0 GiB (+10.0 GiB)" if index == "0" else "used 0.0 GiB (+0.0 GiB)"
        if want not in row:
            problems.append(f"gone: GPU {index} at refresh 2 lacks '{want}': {row.strip()}")


def gone_in_json(program, machine, work, problems):
    tree = fresh_copy(machine, work, "gone-json")
    p = subprocess.Popen([program, "watch", "--root", tree, "--count", "2", "--interval", WAIT, "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    drop_gpu_1(tree)
    rest, err = p.communicate(timeout=120)
    docs = [json.loads(line) for line in [first] + rest.splitlines()]
    if p.returncode != 0 or len(docs) != 2:
        problems.append(f"gone (JSON): exit code {p.returncode}, {len(docs)} JSON lines")
        return
    if docs[0]["removed"]:
        problems.append(f"gone (JSON): removed at refresh 1: {docs[0]['removed']}")
    removed = docs[1]["removed"]
    if len(removed) != 1 or removed[0]["index"] != 1 or removed[0]["kind"] != "cuda_gpu":
        problems.append(f"gone (JSON): expected GPU 1 removed at refresh 2, got {removed}")
    if len(docs[1]["devices"]) != 7 or any(d["delta"] is None for d in docs[1]["devices"]):
        problems.append("gone (JSON): the seven survivors are not all matched to refresh 1")


def tool_starts_failing(program, machine, work, problems):
    tree = fresh_copy(machine, work, "failing")
    p = subprocess.Popen([program, "watch", "--root", tree, "--count", "3", "--interval", WAIT, "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    break_nvidia_smi(tree)
    rest, err = p.communicate(timeout=120)
    docs = [json.loads(line) for line in [first] + rest.splitlines()]
    if p.returncode != 0 or len(docs) != 3:
        problems.append(f"failing: exit code {p.returncode}, {len(docs)} JSON lines")
        return
    said = [line for line in err.splitlines() if "tool_failed" in line and "nvidia-smi" in line]
    if len(said) != 1 or "exited with status 9" not in said[0]:
        problems.append(f"failing: expected the nvidia-smi failure once on stderr, got {err!r}")
    if docs[0]["warnings"]:
        problems.append(f"failing: warnings at refresh 1: {docs[0]['warnings']}")
    for doc in docs[1:]:
        if not any(w.get("kind") == "tool_failed" for w in doc["warnings"]):
            problems.append(f"failing: refresh {doc['refresh']} carries no tool_failed warning")
        if doc["removed"] or len(doc["devices"]) != 8:
            problems.append(f"failing: refresh {doc['refresh']}: {len(doc['devices'])} devices, "
                            f"removed {doc['removed']}")
        if any(d["delta"] is None for d in doc["devices"]):
            problems.append(f"failing: refresh {doc['refresh']}: a device not matched to the previous refresh")
        if any(d["memory_used_bytes"] is not None for d in doc["devices"]):
            problems.append(f"failing: refresh {doc['refresh']}: live values without nvidia-smi")


def small_memory(program, machine, work, problems):
    """GPU 0 uses 10 MiB: shown as such, and an alert on it says so (before, "0.0 GiB",
    in an alert that fired on more than 0)."""
    tree = fresh_copy(machine, work, "small")
    path = query_csv(tree)
    rows = open(path, encoding="utf-8").read().splitlines()
    rows[0] = rows[0].replace(", 0, 81004,", ", 10, 80994,")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    p = subprocess.run([program, "watch", "--root", tree, "--count", "1", "--interval", "0",
                        "--alert", "memory_used>0"], capture_output=True, text=True, timeout=120)
    row = next((line for line in p.stdout.splitlines() if line.split()[:1] == ["0"]), "")
    if p.returncode != 3 or "used 10.0 MiB" not in row:
        problems.append(f"small: exit code {p.returncode}, GPU 0 row {row.strip()!r}")
    if "memory_used is 10.0 MiB" not in p.stderr:
        problems.append(f"small: the alert does not give 10.0 MiB: {p.stderr!r}")


def reader_gone(program, machine, problems, interval, alert, expected):
    """The reader closes the pipe after the first line; SIGPIPE is ignored in the reader,
    as under many supervisors, and the child inherits that."""
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    p = subprocess.Popen([program, "watch", "--root", machine, "--interval", interval] + alert,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, restore_signals=False)
    p.stdout.readline()
    p.stdout.close()
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        problems.append(f"reader gone (interval {interval}): the watch still runs")
        return
    err = p.stderr.read().decode("utf-8", "replace")
    said = [line for line in err.splitlines() if "alert" not in line]
    if rc != expected or said:
        problems.append(f"reader gone (interval {interval}): exit code {rc}, expected {expected}; stderr {said}")


def main():
    program, machine, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    problems = []
    gone_and_renumbered(program, machine, work, problems)
    small_memory(program, machine, work, problems)
    json_build = subprocess.run([program, "watch", "--root", machine, "--count", "1", "--interval", "0", "--json"],
                                capture_output=True).returncode == 0
    if json_build:
        gone_in_json(program, machine, work, problems)
        tool_starts_failing(program, machine, work, problems)
    # Refreshing at once, no alert: the next write fails, status 1, no message.
    reader_gone(program, machine, problems, "0", [], 1)
    # Ten minutes to the next refresh, an alert fired: poll sees it at once, status 3.
    reader_gone(program, machine, problems, "600", ["--alert", "temperature>25"], 3)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
