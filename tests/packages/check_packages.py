#!/usr/bin/env python3
"""Checks that the packaging files agree with the sources they describe.

    check_packages.py --root DIR [--cmake-version X.Y.Z]   the checks below
    check_packages.py --root DIR --self-test               each check must catch a mismatch

versions: config.hpp's numbers and string, CMakeLists.txt's project() version (read from
          config.hpp, or given literally), ports/ai-hwaccel/vcpkg.json and conan/conanfile.py.
backends: CMakeLists.txt's AI_HWACCEL_BACKENDS, config.hpp's switches, the vcpkg features
          (and the portfile's feature -> option pairs) and the Conan options, one to one.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conan_stub  # noqa: E402

FILES = {
    "config": "include/ai_hwaccel/config.hpp",
    "cmake": "CMakeLists.txt",
    "vcpkg": "ports/ai-hwaccel/vcpkg.json",
    "portfile": "ports/ai-hwaccel/portfile.cmake",
    "conan": "conan/conanfile.py",
}


def read(root, key):
    with open(os.path.join(root, FILES[key]), encoding="utf-8") as f:
        return f.read()


def versions(root, cmake_version=None):
    """Returns a list of problems (empty when every version agrees)."""
    problems = []
    config = read(root, "config")
    numbers = {k: re.search(rf"#define AI_HWACCEL_VERSION_{k} (\d+)", config) for k in ("MAJOR", "MINOR", "PATCH")}
    text = re.search(r'#define AI_HWACCEL_VERSION_STRING "([^"]*)"', config)
    if not all(numbers.values()) or not text:
        return [f"{FILES['config']}: version macros not found"]
    header = text.group(1)
    joined = ".".join(numbers[k].group(1) for k in ("MAJOR", "MINOR", "PATCH"))
    if joined != header:
        problems.append(f"{FILES['config']}: numbers say {joined}, the string says {header}")
    found = {FILES["config"]: header}

    cmake = read(root, "cmake")
    project = re.search(r"project\(\s*ai_hwaccel\s+VERSION\s+(\S+)", cmake)
    if not project:
        problems.append(f"{FILES['cmake']}: no project(ai_hwaccel VERSION ...)")
    elif re.fullmatch(r"\d+\.\d+\.\d+", project.group(1)):
        found[FILES["cmake"]] = project.group(1)
    elif not re.search(r"file\(STRINGS[^)]*config\.hpp", cmake):
        problems.append(f"{FILES['cmake']}: project() version {project.group(1)} is neither "
                        "literal nor read from config.hpp")
    if cmake_version:
        found["the configured CMake project"] = cmake_version

    manifest = json.loads(read(root, "vcpkg"))
    keys = [k for k in ("version", "version-semver", "version-string", "version-date") if k in manifest]
    if len(keys) != 1:
        problems.append(f"{FILES['vcpkg']}: expected one version field, found {keys}")
    else:
        found[FILES["vcpkg"]] = manifest[keys[0]]

    _module, recipe = conan_stub.load_recipe(os.path.join(root, FILES["conan"]), "checked_conanfile")
    found[FILES["conan"]] = str(recipe.version)

    for where, version in found.items():
        if version != header:
            problems.append(f"{where} says {version}, {FILES['config']} says {header}")
    return problems


def backends(root):
    problems = []
    cmake = read(root, "cmake")
    match = re.search(r"set\(AI_HWACCEL_BACKENDS\s([^)]*)\)", cmake)
    if not match:
        return [f"{FILES['cmake']}: no set(AI_HWACCEL_BACKENDS ...)"]
    names = match.group(1).split()

    switches = re.findall(r"#ifndef AI_HWACCEL_BACKEND_(\w+)\n", read(root, "config"))
    if switches != names:
        problems.append(f"{FILES['config']} switches {switches} differ from CMake's {names}")

    manifest = json.loads(read(root, "vcpkg"))
    features = [f for f in manifest.get("features", {}) if f != "json"]
    wanted = [n.lower().replace("_", "-") for n in names]
    if sorted(features) != sorted(wanted):
        problems.append(f"{FILES['vcpkg']} features {features} differ from {wanted}")
    # The port's defaults mirror CMake's: every backend on.
    missing = [f for f in wanted if f not in manifest.get("default-features", [])]
    if missing:
        problems.append(f"{FILES['vcpkg']}: default-features lack {missing}")
    portfile = read(root, "portfile")
    pairs = dict(re.findall(r"^\s+([a-z0-9-]+)\s+AI_HWACCEL_BACKEND_(\w+)\s*$", portfile, re.M))
    expected_pairs = {n.lower().replace("_", "-"): n for n in names}
    if pairs != expected_pairs:
        problems.append(f"{FILES['portfile']}: feature -> option pairs {pairs}, expected {expected_pairs}")

    _module, recipe = conan_stub.load_recipe(os.path.join(root, FILES["conan"]), "checked_conanfile")
    options = dict(recipe.options)
    wanted_options = {n.lower() for n in names} | {"with_json"}
    if set(options) != wanted_options:
        problems.append(f"{FILES['conan']} options {sorted(options)} differ from {sorted(wanted_options)}")
    for name, values in options.items():
        if sorted(values) != [False, True] or recipe.default_options.get(name) is not True:
            problems.append(f"{FILES['conan']}: option {name} should be [True, False], default True")
    return problems


def check(root, cmake_version=None):
    return versions(root, cmake_version) + backends(root)


def self_test(root):
    """Each source of a version or backend name, changed alone, must be reported."""
    if check(root):
        print("self-test needs a tree that passes first", file=sys.stderr)
        return 1
    mutations = [
        ("config", r'(#define AI_HWACCEL_VERSION_STRING ")[^"]*', r"\g<1>9.9.9"),
        ("cmake", r"project\(ai_hwaccel VERSION \$\{_ai_hwaccel_version\}", "project(ai_hwaccel VERSION 9.9.9"),
        ("vcpkg", r'"version-semver": "[^"]*"', '"version-semver": "9.9.9"'),
        ("conan", r'^    version = "[^"]*"', '    version = "9.9.9"'),
        ("vcpkg", r'"groq": \{', '"groq-card": {'),
        ("portfile", r"tpu          AI_HWACCEL_BACKEND_TPU", "tpu          AI_HWACCEL_BACKEND_GAUDI"),
        ("conan", r'"samsung_npu", ', ""),
        ("cmake", r"GRAPHCORE GROQ", "GRAPHCORE GROQ FPGA"),
    ]
    failures = 0
    for key, pattern, replacement in mutations:
        with tempfile.TemporaryDirectory() as tmp:
            for rel in FILES.values():
                os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
                shutil.copy(os.path.join(root, rel), os.path.join(tmp, rel))
            path = os.path.join(tmp, FILES[key])
            text = open(path, encoding="utf-8").read()
            changed, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
            if count != 1:
                print(f"self-test: pattern {pattern!r} not found in {FILES[key]}", file=sys.stderr)
                failures += 1
                continue
            open(path, "w", encoding="utf-8").write(changed)
            problems = check(tmp)
            if not problems:
                print(f"self-test: a change to {FILES[key]} ({replacement!r}) went unnoticed",
                      file=sys.stderr)
                failures += 1
            else:
                print(f"caught: {FILES[key]} ({replacement!r}): {problems[0]}")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--cmake-version")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    if args.self_test:
        return self_test(root)
    problems = check(root, args.cmake_version)
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print("the version and the backend list agree across config.hpp, CMake, the vcpkg "
              "port and the Conan recipe")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
