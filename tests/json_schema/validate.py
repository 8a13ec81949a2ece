#!/usr/bin/env python3
"""Validate JSON that ai-hwaccel writes against the schemas in schema/.

  validate.py --schema-dir DIR --schema NAME [--exit-codes 0,1] [--expect-invalid] -- PROGRAM ARGS...
  validate.py --schema-dir DIR --schema NAME [--expect-invalid] --file DOCUMENT.json
  validate.py --schema-dir DIR --schema NAME --each DIR2 [--pass-over 1] -- PROGRAM ARGS... {}

Runs PROGRAM (or reads DOCUMENT), parses its standard output as JSON and validates it
against DIR/NAME.schema.json, with every schema of DIR available to cross-file $refs.
With --each, runs PROGRAM once per file under DIR2, the file's path in place of {};
runs that exit with a --pass-over code (a capture the program does not recognise) are
counted and passed over, any other failure fails.
Exit codes: 0 valid (or, with --expect-invalid, rejected for exactly one reason), 1 not, 2 usage or
the program failed, 77 python3-jsonschema is not installed (ctest reports a skip).
Standard library and jsonschema only; works with jsonschema 4.10 (Debian 12) and later.
"""
import argparse
import json
import pathlib
import subprocess
import sys

SKIP = 77


def load_schemas(directory):
    schemas = {}
    for path in sorted(pathlib.Path(directory).glob("*.schema.json")):
        with open(path, encoding="utf-8") as f:
            schema = json.load(f)
        schemas[path.name[: -len(".schema.json")]] = schema
    return schemas


def make_validator(jsonschema, schemas, name):
    schema = schemas[name]
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    try:  # jsonschema >= 4.18: the referencing library resolves $refs across files
        import referencing
        import referencing.jsonschema

        resources = [(s["$id"], referencing.Resource.from_contents(s)) for s in schemas.values()]
        registry = referencing.Registry().with_resources(resources)
        return cls(schema, registry=registry)
    except ImportError:  # older releases: a RefResolver with a store of every schema
        store = {s["$id"]: s for s in schemas.values()}
        resolver = jsonschema.RefResolver(schema["$id"], schema, store=store)
        return cls(schema, resolver=resolver)


def where(error):
    return "/" + "/".join(str(p) for p in error.absolute_path)


def run(command, allowed):
    """(stdout, exit code, None) when PROGRAM exited with an allowed code, else (None, code, why)."""
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if p.returncode not in allowed:
        return None, p.returncode, "exited with %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[:500])
    try:
        return p.stdout.decode("utf-8"), p.returncode, None  # strict: the output must be UTF-8
    except UnicodeDecodeError as e:
        return None, p.returncode, "output is not UTF-8: %s" % e


def codes(text):
    return {int(c) for c in text.split(",") if c}


def each(a, validator):
    files = sorted(p for p in pathlib.Path(a.each).rglob("*") if p.is_file())
    valid = passed_over = 0
    failures = []
    for path in files:
        command = [str(path) if arg == "{}" else arg for arg in a.command]
        text, rc, why = run(command, codes(a.exit_codes) | codes(a.pass_over))
        if text is not None and rc in codes(a.pass_over):
            passed_over += 1
            continue
        if text is None:
            failures.append("%s: %s" % (path, why))
            continue
        try:
            errors = list(validator.iter_errors(json.loads(text)))
        except ValueError as e:
            failures.append("%s: not JSON: %s" % (path, e))
            continue
        if errors:
            e = errors[0]
            failures.append("%s: %d error(s), first %s: %s" % (path, len(errors), where(e), e.message[:300]))
        else:
            valid += 1
    for f in failures[:20]:
        print(f)
    print("%d valid, %d failed, %d passed over (of %d files under %s)" % (valid, len(failures), passed_over, len(files), a.each))
    if valid == 0:
        print("nothing was validated")
        return 1
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schema-dir", required=True)
    ap.add_argument("--schema", required=True, help="registry, parse, estimate, plan, training, cost")
    ap.add_argument("--file", help="validate this file instead of a program's output")
    ap.add_argument("--exit-codes", default="0", help="exit codes of PROGRAM that are not failures")
    ap.add_argument("--each", help="run PROGRAM once per file under this folder ({} is the file)")
    ap.add_argument("--pass-over", default="", help="with --each: exit codes that mean 'not for me'")
    ap.add_argument("--expect-invalid", action="store_true", help="succeed only if the document is rejected")
    ap.add_argument("command", nargs="*")
    a = ap.parse_args()
    if bool(a.file) == bool(a.command):
        ap.error("give either --file or -- PROGRAM ARGS...")

    try:
        import jsonschema
    except ImportError as e:
        print("SKIP: python3-jsonschema is not installed (%s); apt-get install python3-jsonschema" % e)
        return SKIP

    schemas = load_schemas(a.schema_dir)
    if a.schema not in schemas:
        print("no schema %r in %s (have: %s)" % (a.schema, a.schema_dir, ", ".join(sorted(schemas))))
        return 2
    validator = make_validator(jsonschema, schemas, a.schema)

    if a.each:
        return each(a, validator)
    if a.file:
        what = a.file
        with open(a.file, encoding="utf-8") as f:
            text = f.read()
    else:
        what = " ".join(a.command)
        text, _, why = run(a.command, codes(a.exit_codes))
        if text is None:
            print("%s: %s" % (what, why))
            return 2
    try:
        doc = json.loads(text)
    except ValueError as e:
        print("%s: not JSON: %s" % (what, e))
        return 1

    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if a.expect_invalid:
        # Exactly one error: the one rule the document breaks on purpose. More means the
        # rest of it has gone stale against the schema and proves nothing.
        if len(errors) == 1:
            print("%s: rejected as expected: %s: %s" % (what, where(errors[0]), errors[0].message[:200]))
            return 0
        if not errors:
            print("%s: expected the %s schema to reject this document; it did not" % (what, a.schema))
        for e in errors[:20]:
            print("%s: %s: %s" % (what, where(e), e.message[:300]))
        if errors:
            print("%s: %d errors; a document here must break exactly one rule" % (what, len(errors)))
        return 1
    for e in errors[:20]:
        print("%s: %s: %s" % (what, where(e), e.message[:300]))
    if errors:
        print("%d error(s) against schema/%s.schema.json" % (len(errors), a.schema))
        return 1
    print("%s: valid against schema/%s.schema.json" % (what, a.schema))
    return 0


if __name__ == "__main__":
    sys.exit(main())
