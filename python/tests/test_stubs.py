"""The typed stubs (ai_hwaccel/_native.pyi) describe exactly what the built module exports.

No type checker is needed: the stub is parsed with `ast` and compared with the module's
own names, each class's members, and the parameter names of every function as pybind11
records them in its signature line.
"""

import ast
import inspect
import os
import re
import unittest

import ai_hwaccel
from ai_hwaccel import _native

STUB = os.path.join(os.path.dirname(ai_hwaccel.__file__), "_native.pyi")


def parse_stub():
    with open(STUB, encoding="utf-8") as f:
        return ast.parse(f.read(), STUB)


def public(name):
    return not name.startswith("_") or name == "__version__"


def stub_top_level(tree):
    """Top-level names: classes, functions, annotated or assigned variables."""
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names[t.id] = node
    return names


def stub_parameters(fn):
    """Parameter names of a stub function, without self."""
    args = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    return [a for a in args if a != "self"]


def native_parameters(obj):
    """Parameter names from pybind11's signature line, 'name(a: T, b: U = x) -> R'."""
    doc = (obj.__doc__ or "").strip().splitlines()
    if not doc:
        return None
    m = re.match(r"^\w+\((.*)\)\s*->", doc[0])
    if not m:
        return None
    names = []
    depth = 0
    current = ""
    for ch in m.group(1) + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            current = current.strip()
            if current:
                names.append(current.split(":")[0].split("=")[0].strip())
            current = ""
        else:
            current += ch
    return [n for n in names if n != "self"]


class StubMatchesModule(unittest.TestCase):
    def setUp(self):
        self.tree = parse_stub()
        self.top = stub_top_level(self.tree)

    def test_top_level_names(self):
        in_stub = {n for n in self.top if public(n)}
        in_module = {n for n in dir(_native) if public(n)}
        self.assertEqual(in_stub, in_module, "stub-only: %s; module-only: %s" %
                         (sorted(in_stub - in_module), sorted(in_module - in_stub)))

    def test_package_exports_everything(self):
        in_stub = {n for n in self.top if public(n)}
        self.assertEqual(set(ai_hwaccel.__all__), in_stub)
        for name in ai_hwaccel.__all__:
            self.assertIs(getattr(ai_hwaccel, name), getattr(_native, name))

    def test_class_members(self):
        for name, node in self.top.items():
            if not isinstance(node, ast.ClassDef) or not public(name):
                continue
            cls = getattr(_native, name)
            in_stub = {n.name for n in node.body if isinstance(n, ast.FunctionDef) and public(n.name)}
            in_class = {n for n in dir(cls) if public(n)}
            with self.subTest(cls=name):
                self.assertEqual(in_stub, in_class, "stub-only: %s; class-only: %s" %
                                 (sorted(in_stub - in_class), sorted(in_class - in_stub)))

    def test_properties_are_properties(self):
        for name, node in self.top.items():
            if not isinstance(node, ast.ClassDef) or not public(name):
                continue
            cls = getattr(_native, name)
            for fn in node.body:
                if not isinstance(fn, ast.FunctionDef) or not public(fn.name):
                    continue
                decorators = {d.id for d in fn.decorator_list if isinstance(d, ast.Name)}
                attr = inspect.getattr_static(cls, fn.name)
                with self.subTest(member=name + "." + fn.name):
                    self.assertEqual("property" in decorators, isinstance(attr, property))
                    self.assertEqual("staticmethod" in decorators, isinstance(attr, staticmethod))

    def test_parameter_names(self):
        checked = 0

        def check(qualified, stub_fn, obj):
            nonlocal checked
            native = native_parameters(obj)
            if native is None:
                return
            with self.subTest(function=qualified):
                self.assertEqual(stub_parameters(stub_fn), native)
            checked += 1

        for name, node in self.top.items():
            if isinstance(node, ast.FunctionDef) and public(name):
                check(name, node, getattr(_native, name))
            elif isinstance(node, ast.ClassDef) and public(name):
                cls = getattr(_native, name)
                for fn in node.body:
                    if isinstance(fn, ast.FunctionDef) and public(fn.name) and not fn.decorator_list \
                            and not fn.name.startswith("__"):
                        check(name + "." + fn.name, fn, getattr(cls, fn.name))
                    elif isinstance(fn, ast.FunctionDef) and any(
                            isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
                        check(name + "." + fn.name, fn, getattr(cls, fn.name))
        # The comparison must have happened: pybind11 writes a signature line for each.
        self.assertGreaterEqual(checked, 15)

    def test_stub_defaults_match(self):
        """Defaults in the stub are those of the module (as pybind11 prints them)."""
        for name, node in self.top.items():
            if not isinstance(node, ast.FunctionDef) or not public(name):
                continue
            doc = getattr(_native, name).__doc__.splitlines()[0]
            args = node.args
            for arg, default in zip(args.args[len(args.args) - len(args.defaults):], args.defaults):
                value = ast.literal_eval(default)
                shown = "None" if value is None else repr(value)
                with self.subTest(function=name, parameter=arg.arg):
                    self.assertRegex(doc, r"\b%s: [^=]+ = %s(?=[,)])" % (re.escape(arg.arg), re.escape(shown)))

    def test_cost_instance_keys(self):
        """_Instance lists exactly the keys cost() returns for an instance."""
        cls = self.top["_Instance"]
        fields = {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)}
        instance = ai_hwaccel.cost("llama-3.1-8b", "bf16")["instance"]
        self.assertIsNotNone(instance)
        self.assertEqual(fields, set(instance))


if __name__ == "__main__":
    unittest.main()
