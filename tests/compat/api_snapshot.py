"""The public API of cliver-core 0.3.0a5, as a JSON snapshot, and the check that ours keeps it.

Regenerate the committed snapshot from the wheel (extracted, or its ``pip download`` unzipped)::

    python tests/compat/api_snapshot.py --ref-dir /tmp/cc/x --out tests/compat/api_0.3.0a5.json

``--ref-dir`` is put first on ``sys.path`` and the script fails unless ``cliver_core`` (version
0.3.0a5) is imported from it. Without ``--out`` the JSON goes to stdout
(``tests/test_cliver_compat_api.py`` compares that with the committed file).

What is recorded, per module of :data:`FULL_MODULES`: its public names (``__all__`` where it has
one, else the functions, classes and constants its source defines at top level); for each
function its parameters (name, kind, default as ``repr`` when it is a simple value) and whether
it is sync, ``async`` or an async generator; for each class its kind (class, dataclass, pydantic
model, enum), its bases (those of cliver_core, the builtins and ``Enum``), its constructor's
parameters (not for pydantic models: their fields say it), its fields in order with defaults,
its enum members and values, its public methods (with their parameters), properties and
class attributes. An object reachable under several modules is described once, at its home,
and elsewhere as ``{"same_as": "<module>.<name>"}`` (ours must be that very object too).
:data:`NAME_MODULES` (outside what ours re-implements in depth) record names only.
``cliver_core.tools`` also records each builtin tool's name, description, parameters and
safety.

:func:`check` compares the importable ``cliver_core`` (ours) with a snapshot, by these rules:
every name exists; ours may add names, fields, enum members, methods; a signature may gain
parameters only with defaults (at the end of the positional ones, or keyword-only); it may not
drop, rename or reorder a positional parameter, turn a keyword parameter positional-only or
keyword-only into positional-only, drop ``*args`` / ``**kwargs``, change a simple default,
or make an optional parameter required; sync / ``async`` / async-generator must match; a
dataclass stays a dataclass, a pydantic model a pydantic model, an enum an enum; an exception
gains no builtin exception base (``SkillError`` a ``ValueError`` would be caught by the
``except ValueError`` of a 0.3.0a5 program).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import dataclasses
import enum
import importlib
import inspect
import json
import logging
import sys
import types
import typing
from pathlib import Path
from typing import Any

REF_VERSION = "0.3.0a5"
SNAPSHOT = Path(__file__).with_name(f"api_{REF_VERSION}.json")

#: modules whose signatures are pinned
FULL_MODULES = (
    "cliver_core",
    "cliver_core.agent",
    "cliver_core.bindings",
    "cliver_core.events",
    "cliver_core.messages",
    "cliver_core.provider",
    "cliver_core.skill",
    "cliver_core.skill_tools",
    "cliver_core.tool",
    "cliver_core.tools",
    "cliver_core.policy",
    "cliver_core.errors",
    "cliver_core.presets",
    "cliver_core.capabilities",
    "cliver_core.util",
)
#: modules whose names only are pinned
NAME_MODULES = (
    "cliver_core.provider.providers",
    "cliver_core.media",
    "cliver_core.media_jobs",
    "cliver_core.pipeline",
    "cliver_core.mcp",
    "cliver_core.local",
)

REQUIRED = "<required>"
FACTORY = "<factory>"
OBJECT = "<object>"

_PARAM_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}
_POSITIONAL = ("positional_only", "positional_or_keyword")


# -- description -------------------------------------------------------------------------------


def simple_repr(value: Any) -> str | None:
    """``repr`` of a value that reads the same in every run (``None`` for any other value)."""
    if value is None or isinstance(value, bool | int | float | str | enum.Enum):
        return repr(value)
    if isinstance(value, tuple | list):
        parts = [simple_repr(v) for v in value]
        if all(p is not None for p in parts):
            inner = ", ".join(typing.cast(list[str], parts))
            if isinstance(value, tuple):
                return f"({inner}{',' if len(value) == 1 else ''})"
            return f"[{inner}]"
    if isinstance(value, frozenset | set):
        parts = [simple_repr(v) for v in value]
        if all(p is not None for p in parts):
            inner = ", ".join(sorted(typing.cast(list[str], parts)))
            return f"{type(value).__name__}({{{inner}}})" if value else f"{type(value).__name__}()"
    if isinstance(value, dict) and not value:
        return "{}"
    return None


def _json_value(value: Any) -> Any:
    """A constant as JSON (sets sorted), or ``None`` when it is not plain data."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return repr(value)
    if isinstance(value, tuple | list):
        items = [_json_value(v) for v in value]
        return None if any(i is None for i in items) else items
    if isinstance(value, frozenset | set):
        items = [_json_value(v) for v in value]
        return None if any(i is None for i in items) else sorted(items, key=repr)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        items = {k: _json_value(v) for k, v in value.items()}
        return None if any(i is None for i in items.values()) else items
    return None


def describe_params(sig: inspect.Signature, *, drop_first: bool = False) -> list[dict[str, str]]:
    params = list(sig.parameters.values())
    if drop_first and params and _PARAM_KINDS[params[0].kind] in _POSITIONAL:
        params = params[1:]
    out = []
    for p in params:
        entry = {"name": p.name, "kind": _PARAM_KINDS[p.kind]}
        if p.default is not inspect.Parameter.empty:
            entry["default"] = simple_repr(p.default) or OBJECT
        out.append(entry)
    return out


def flavor(fn: Any) -> str:
    fn = inspect.unwrap(fn)
    if inspect.isasyncgenfunction(fn):
        return "asyncgen"
    if inspect.iscoroutinefunction(fn):
        return "async"
    return "sync"


def _is_alias(obj: Any) -> bool:
    if isinstance(obj, type):
        return False
    return typing.get_origin(obj) is not None or isinstance(obj, types.UnionType)


def _is_pydantic(cls: type) -> bool:
    return any(
        c.__module__.startswith("pydantic") and c.__name__ == "BaseModel" for c in cls.__mro__
    )


def class_kind(cls: type) -> str:
    if issubclass(cls, enum.Enum):
        return "enum"
    if _is_pydantic(cls):
        return "pydantic"
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    return "class"


def _own(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "cliver_core"


def class_bases(cls: type) -> list[str]:
    names = []
    for c in cls.__mro__[1:]:
        if _own(c) or (c.__module__ == "builtins" and c is not object) or c is enum.Enum:
            names.append(c.__name__)
    return names


def class_fields(cls: type) -> list[list[str]] | None:
    kind = class_kind(cls)
    fields: list[list[str]] = []
    if kind == "pydantic":
        for name, info in cls.model_fields.items():  # type: ignore[attr-defined]
            if name.startswith("_"):
                continue
            if info.default_factory is not None:
                default = FACTORY
            elif info.is_required():
                default = REQUIRED
            else:
                default = simple_repr(info.default) or OBJECT
            fields.append([name, default])
        return fields
    if kind == "dataclass":
        for f in dataclasses.fields(cls):
            if f.name.startswith("_") or not f.init:
                continue
            if f.default_factory is not dataclasses.MISSING:
                default = FACTORY
            elif f.default is dataclasses.MISSING:
                default = REQUIRED
            else:
                default = simple_repr(f.default) or OBJECT
            fields.append([f.name, default])
        return fields
    return None


def _class_members(cls: type) -> tuple[dict[str, Any], dict[str, Any]]:
    """The public methods and class attributes cliver_core defines on ``cls`` and its
    cliver_core bases (not those of pydantic, Enum, Exception or object)."""
    field_names = {f[0] for f in class_fields(cls) or []}
    methods: dict[str, Any] = {}
    attributes: dict[str, Any] = {}
    for owner in reversed(cls.__mro__):
        if not _own(owner):
            continue
        for name, raw in vars(owner).items():
            if name.startswith("_") or name in field_names:
                continue
            if issubclass(cls, enum.Enum) and name in cls.__members__:
                continue
            if _is_pydantic(cls) and name.startswith("model_") and not callable(raw):
                continue
            if isinstance(raw, property):
                methods[name] = {"kind": "property"}
            elif isinstance(raw, classmethod | staticmethod):
                fn = getattr(cls, name)
                methods[name] = {
                    "kind": type(raw).__name__,
                    "flavor": flavor(raw.__func__),
                    "params": describe_params(inspect.signature(fn)),
                }
            elif inspect.isfunction(raw):
                methods[name] = {
                    "kind": "method",
                    "flavor": flavor(raw),
                    "params": describe_params(inspect.signature(raw), drop_first=True),
                }
            elif not callable(raw):
                attributes[name] = simple_repr(raw) or OBJECT
    return methods, attributes


def class_init(cls: type) -> list[dict[str, str]] | None:
    if class_kind(cls) in ("pydantic", "enum"):
        return None
    try:
        return describe_params(inspect.signature(cls))
    except (TypeError, ValueError):  # an __init__ the builtins give (exceptions)
        return None


def describe_object(obj: Any) -> dict[str, Any]:
    if isinstance(obj, types.ModuleType):
        return {"kind": "module", "name": obj.__name__}
    if _is_alias(obj):
        return {"kind": "alias"}
    if isinstance(obj, type):
        methods, attributes = _class_members(obj)
        entry: dict[str, Any] = {"kind": class_kind(obj), "bases": class_bases(obj)}
        init = class_init(obj)
        if init is not None:
            entry["init"] = init
        fields = class_fields(obj)
        if fields is not None:
            entry["fields"] = fields
        if issubclass(obj, enum.Enum):
            entry["members"] = {m.name: _json_value(m.value) for m in obj}
        entry["methods"] = dict(sorted(methods.items()))
        entry["attributes"] = dict(sorted(attributes.items()))
        return entry
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return {
            "kind": "function",
            "flavor": flavor(obj),
            "params": describe_params(inspect.signature(obj)),
        }
    return {"kind": "value", "type": type(obj).__name__, "value": _json_value(obj)}


def _defined_names(module: types.ModuleType) -> list[str]:
    """The public names a module's source binds at top level (defs, classes, assignments):
    its public names when it has no ``__all__`` (imports are the module's business)."""
    tree = ast.parse(inspect.getsource(module))
    names: list[str] = []
    for node in tree.body:
        found: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found = [node.name]
        elif isinstance(node, ast.Assign):
            found = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found = [node.target.id]
        for name in found:
            if name.startswith("_") or name in names:
                continue
            if isinstance(getattr(module, name, None), logging.Logger | typing.TypeVar):
                continue
            names.append(name)
    return names


def public_names(module: types.ModuleType) -> list[str]:
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return list(declared)
    return _defined_names(module)


def _describe_tools(module: types.ModuleType) -> list[dict[str, Any]]:
    return [
        {
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters,
            "safety": t.safety,
        }
        for t in module.discover_builtin_tools()
    ]


def describe_api() -> dict[str, Any]:
    """The snapshot of the importable ``cliver_core``."""
    modules = {name: importlib.import_module(name) for name in (*FULL_MODULES, *NAME_MODULES)}
    names = {name: public_names(mod) for name, mod in modules.items()}

    # each shared object (class, function) is described at one home: of the pinned modules
    # exporting it, the one nearest the module defining it (that module itself, else its
    # closest pinned parent package: cliver_core.capabilities for
    # cliver_core.capabilities.embed.embed), else the first in FULL_MODULES order
    homes: dict[int, str] = {}
    exporters: dict[int, list[str]] = {}
    for mod_name in FULL_MODULES:
        for name in names[mod_name]:
            obj = getattr(modules[mod_name], name)
            if isinstance(obj, type) or inspect.isfunction(obj):
                exporters.setdefault(id(obj), []).append(mod_name)
    for mod_name in FULL_MODULES:
        for name in names[mod_name]:
            obj = getattr(modules[mod_name], name)
            if id(obj) in homes or id(obj) not in exporters:
                continue
            defining = getattr(obj, "__module__", "") or ""
            near = [m for m in exporters[id(obj)] if defining == m or defining.startswith(m + ".")]
            home = max(near, key=len) if near else exporters[id(obj)][0]
            homes[id(obj)] = f"{home}.{name}"

    out: dict[str, Any] = {}
    for mod_name in FULL_MODULES:
        entries: dict[str, Any] = {}
        for name in names[mod_name]:
            obj = getattr(modules[mod_name], name)
            here = f"{mod_name}.{name}"
            home = homes.get(id(obj))
            if home is not None and home != here:
                entries[name] = {"same_as": home}
            else:
                entries[name] = describe_object(obj)
        module_entry: dict[str, Any] = {"detail": "signatures", "names": entries}
        if mod_name == "cliver_core.tools":
            module_entry["builtin_tools"] = _describe_tools(modules[mod_name])
        out[mod_name] = module_entry
    for mod_name in NAME_MODULES:
        out[mod_name] = {"detail": "names", "names": names[mod_name]}
    return out


def snapshot() -> dict[str, Any]:
    version = _version()
    return {
        "about": (
            f"The public API of cliver-core {version}, generated from its wheel by "
            "tests/compat/api_snapshot.py; checked against ours by "
            "tests/test_cliver_compat_api.py. Do not edit by hand."
        ),
        "package": "cliver-core",
        "version": version,
        "modules": describe_api(),
    }


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cliver-core")
    except PackageNotFoundError:
        return "unknown"


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


# -- the check ---------------------------------------------------------------------------------


def check_params(where: str, ref: list[dict[str, str]], ours: list[dict[str, str]]) -> list[str]:
    """What ``ours`` breaks of the call forms ``ref`` accepts."""
    problems: list[str] = []
    ref_pos = [p for p in ref if p["kind"] in _POSITIONAL]
    our_pos = [p for p in ours if p["kind"] in _POSITIONAL]
    by_name = {p["name"]: p for p in ours}

    def same_default(r: dict[str, str], o: dict[str, str], label: str) -> None:
        if "default" not in r:
            return
        if "default" not in o:
            problems.append(
                f"{where}: parameter {label} is optional in {REF_VERSION} "
                f"(default {r['default']}) but required in ours"
            )
        elif r["default"] != OBJECT and o["default"] != r["default"]:
            problems.append(
                f"{where}: parameter {label} default is {r['default']} in "
                f"{REF_VERSION}, {o['default']} in ours"
            )

    for i, r in enumerate(ref_pos):
        label = f"{r['name']!r} (position {i})"
        if i >= len(our_pos):
            if any(p["kind"] == "var_positional" for p in ours):
                continue
            problems.append(f"{where}: positional parameter {label} is missing in ours")
            continue
        o = our_pos[i]
        if r["kind"] == "positional_or_keyword":
            if o["name"] != r["name"]:
                problems.append(f"{where}: positional parameter {label} is {o['name']!r} in ours")
                continue
            if o["kind"] == "positional_only":
                problems.append(f"{where}: parameter {label} is positional-only in ours")
        same_default(r, o, label)
    for o in our_pos[len(ref_pos) :]:
        if "default" not in o:
            problems.append(f"{where}: ours adds a required positional parameter {o['name']!r}")
    for r in ref:
        if r["kind"] == "keyword_only":
            o = by_name.get(r["name"])
            label = repr(r["name"])
            if o is None:
                problems.append(f"{where}: keyword parameter {label} is missing in ours")
            elif o["kind"] not in ("keyword_only", "positional_or_keyword"):
                problems.append(f"{where}: keyword parameter {label} is {o['kind']} in ours")
            else:
                same_default(r, o, label)
        elif r["kind"] in ("var_positional", "var_keyword") and not any(
            p["kind"] == r["kind"] for p in ours
        ):
            star = "*" if r["kind"] == "var_positional" else "**"
            problems.append(f"{where}: ours drops {star}{r['name']}")
    ref_names = {r["name"] for r in ref}
    for o in ours:
        if o["kind"] == "keyword_only" and "default" not in o and o["name"] not in ref_names:
            problems.append(f"{where}: ours adds a required keyword parameter {o['name']!r}")
    return problems


def _check_fields(where: str, ref: list[list[str]], ours: list[list[str]] | None) -> list[str]:
    if ours is None:
        return [f"{where}: ours has no fields"]
    problems: list[str] = []
    positions = {name: i for i, (name, _) in enumerate(ours)}
    our_defaults = dict((name, default) for name, default in ours)
    last = -1
    for name, default in ref:
        if name not in positions:
            problems.append(f"{where}: field {name!r} is missing in ours")
            continue
        if positions[name] < last:
            problems.append(f"{where}: field {name!r} is out of {REF_VERSION}'s order in ours")
        last = max(last, positions[name])
        mine = our_defaults[name]
        if default == REQUIRED:
            continue
        if mine == REQUIRED:
            problems.append(
                f"{where}: field {name!r} is optional in {REF_VERSION} but required in ours"
            )
        elif default not in (FACTORY, OBJECT) and mine != default:
            problems.append(
                f"{where}: field {name!r} default is {default} in {REF_VERSION}, {mine} in ours"
            )
    ref_names = {name for name, _ in ref}
    for name, default in ours:
        if name not in ref_names and default == REQUIRED:
            problems.append(f"{where}: ours adds a required field {name!r}")
    return problems


def _check_class(where: str, ref: dict[str, Any], cls: type) -> list[str]:
    problems: list[str] = []
    kind = class_kind(cls)
    if kind != ref["kind"]:
        problems.append(f"{where}: is a {ref['kind']} in {REF_VERSION}, a {kind} in ours")
    bases = class_bases(cls)
    missing = [b for b in ref["bases"] if b not in bases]
    if missing:
        problems.append(f"{where}: ours does not derive from {missing} (ours: {bases})")
    if "BaseException" in ref["bases"]:
        # an exception may not gain a builtin exception base: an ``except ValueError``
        # written around other code would start catching it
        added = [
            b for b in bases
            if b not in ref["bases"] and isinstance(getattr(builtins, b, None), type)
            and issubclass(getattr(builtins, b), BaseException)
        ]  # fmt: skip
        if added:
            problems.append(f"{where}: ours adds the builtin exception bases {added}")
    if "init" in ref:
        try:
            init = describe_params(inspect.signature(cls))
        except (TypeError, ValueError) as e:
            problems.append(f"{where}: ours has no constructor signature ({e})")
        else:
            problems += check_params(f"{where}()", ref["init"], init)
    if "fields" in ref:
        problems += _check_fields(where, ref["fields"], class_fields(cls))
    if "members" in ref:
        if not issubclass(cls, enum.Enum):
            problems.append(f"{where}: ours is not an enum")
        else:
            for name, value in ref["members"].items():
                if name not in cls.__members__:
                    problems.append(f"{where}: enum member {name} is missing in ours")
                elif _json_value(cls.__members__[name].value) != value:
                    problems.append(
                        f"{where}.{name}: value {value!r} in {REF_VERSION}, "
                        f"{cls.__members__[name].value!r} in ours"
                    )
    for name, m in ref["methods"].items():
        problems += _check_method(f"{where}.{name}", m, cls, name)
    for name, value in ref["attributes"].items():
        if not hasattr(cls, name):
            problems.append(f"{where}.{name}: class attribute missing in ours")
        elif value != OBJECT and simple_repr(getattr(cls, name)) != value:
            problems.append(
                f"{where}.{name}: is {value} in {REF_VERSION}, "
                f"{simple_repr(getattr(cls, name)) or OBJECT} in ours"
            )
    return problems


def _check_method(where: str, ref: dict[str, Any], cls: type, name: str) -> list[str]:
    raw = inspect.getattr_static(cls, name, None)
    if raw is None:
        return [f"{where}: missing in ours"]
    if ref["kind"] == "property":
        if not isinstance(raw, property) and not _is_descriptor_attr(raw):
            return [f"{where}: a property in {REF_VERSION}, {type(raw).__name__} in ours"]
        return []
    if isinstance(raw, classmethod | staticmethod):
        kind, fn, bound = type(raw).__name__, raw.__func__, getattr(cls, name)
        params = describe_params(inspect.signature(bound))
    elif callable(raw):
        kind, fn = "method", raw
        params = describe_params(inspect.signature(raw), drop_first=True)
    else:
        return [f"{where}: a {ref['kind']} in {REF_VERSION}, {type(raw).__name__} in ours"]
    problems = []
    class_level = ("classmethod", "staticmethod")
    if kind != ref["kind"] and not (kind in class_level and ref["kind"] in class_level):
        problems.append(f"{where}: a {ref['kind']} in {REF_VERSION}, a {kind} in ours")
    if flavor(fn) != ref["flavor"]:
        problems.append(f"{where}: {ref['flavor']} in {REF_VERSION}, {flavor(fn)} in ours")
    return problems + check_params(f"{where}()", ref["params"], params)


def _is_descriptor_attr(raw: Any) -> bool:
    # pydantic computed fields, functools.cached_property and the like read as attributes
    return hasattr(raw, "__get__") and not inspect.isfunction(raw)


def check_entry(
    where: str, ref: dict[str, Any], obj: Any, resolve: Any, lookup: Any = None
) -> list[str]:
    """What ours' ``obj`` breaks of its snapshot entry ``ref``; ``lookup(path)`` gives the
    snapshot entry a ``same_as`` names (to check ``obj`` itself when that one is missing)."""
    if "same_as" in ref:
        target = resolve(ref["same_as"])
        if target is _MISSING:
            problem = f"{where}: should be {ref['same_as']}, which is missing in ours"
            home = lookup(ref["same_as"]) if lookup is not None else None
            if home is None or "same_as" in home:
                return [problem]
            return [problem, *check_entry(where, home, obj, resolve)]
        if target is not obj:
            return [f"{where}: is not the same object as {ref['same_as']} in ours"]
        return []
    kind = ref["kind"]
    if kind == "module":
        if not isinstance(obj, types.ModuleType) or obj.__name__ != ref["name"]:
            return [f"{where}: should be the module {ref['name']}"]
        return []
    if kind == "alias":
        return []
    if kind == "value":
        if ref["value"] is not None and _json_value(obj) != ref["value"]:
            return [f"{where}: is {ref['value']!r} in {REF_VERSION}, {_json_value(obj)!r} in ours"]
        return []
    if kind == "function":
        if isinstance(obj, type) or not callable(obj):
            return [f"{where}: a function in {REF_VERSION}, {type(obj).__name__} in ours"]
        problems = []
        if flavor(obj) != ref["flavor"]:
            problems.append(f"{where}: {ref['flavor']} in {REF_VERSION}, {flavor(obj)} in ours")
        try:
            params = describe_params(inspect.signature(obj))
        except (TypeError, ValueError) as e:
            return [*problems, f"{where}: no signature in ours ({e})"]
        return problems + check_params(f"{where}()", ref["params"], params)
    if not isinstance(obj, type):
        return [f"{where}: a class in {REF_VERSION}, {type(obj).__name__} in ours"]
    return _check_class(where, ref, obj)


_MISSING = object()


def _resolve(path: str) -> Any:
    """``module.name`` of ours (``_MISSING`` when it is not there)."""
    module_name, _, name = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except Exception:
        return _MISSING
    return getattr(module, name, _MISSING)


def check_module(
    module_name: str, ref: dict[str, Any], snapshot_modules: dict[str, Any] | None = None
) -> list[str]:
    """What ours breaks of ``ref`` (one module's snapshot entry); ``snapshot_modules`` (the
    snapshot's ``modules``) resolves ``same_as`` entries whose target ours lacks."""

    def lookup(path: str) -> Any:
        home_module, _, home_name = path.rpartition(".")
        entry = (snapshot_modules or {}).get(home_module, {})
        found = entry.get("names", {})
        return found.get(home_name) if isinstance(found, dict) else None

    try:
        module = importlib.import_module(module_name)
    except Exception as e:
        return [f"{module_name}: cannot import it from ours ({type(e).__name__}: {e})"]
    problems: list[str] = []
    if ref["detail"] == "names":
        for name in ref["names"]:
            if not hasattr(module, name):
                problems.append(f"{module_name}.{name}: missing in ours")
        return problems
    for name, entry in ref["names"].items():
        where = f"{module_name}.{name}"
        try:
            obj = getattr(module, name)
        except AttributeError:
            problems.append(f"{where}: missing in ours")
            continue
        except Exception as e:
            problems.append(f"{where}: reading it fails in ours ({type(e).__name__}: {e})")
            continue
        try:
            problems += check_entry(where, entry, obj, _resolve, lookup)
        except Exception as e:  # an introspection surprise is a finding, not a crash
            problems.append(f"{where}: cannot compare ({type(e).__name__}: {e})")
    if "builtin_tools" in ref:
        problems += _check_tools(module_name, ref["builtin_tools"], module)
    return problems


def _check_tools(module_name: str, ref: list[dict[str, Any]], module: Any) -> list[str]:
    try:
        ours = _describe_tools(module)
    except Exception as e:
        return [f"{module_name}.discover_builtin_tools(): fails in ours ({type(e).__name__}: {e})"]
    problems = []
    ref_names = [t["name"] for t in ref]
    our_names = [t["name"] for t in ours]
    if ref_names != our_names:
        problems.append(
            f"{module_name}.discover_builtin_tools(): names {ref_names} in "
            f"{REF_VERSION}, {our_names} in ours"
        )
    by_name = {t["name"]: t for t in ours}
    for tool in ref:
        mine = by_name.get(tool["name"])
        if mine is None:
            continue
        for key in ("description", "parameters", "safety"):
            if mine[key] != tool[key]:
                problems.append(
                    f"builtin tool {tool['name']!r}: {key} is {tool[key]!r} in "
                    f"{REF_VERSION}, {mine[key]!r} in ours"
                )
    return problems


# -- command line ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ref-dir",
        required=True,
        help="the folder holding the 0.3.0a5 wheel's cliver_core (unzipped)",
    )
    parser.add_argument("--out", type=Path, help="write the snapshot here (default: stdout)")
    args = parser.parse_args(argv)
    ref_dir = Path(args.ref_dir).resolve()
    sys.path.insert(0, str(ref_dir))
    import cliver_core

    origin = Path(cliver_core.__file__).resolve()
    if not origin.is_relative_to(ref_dir):
        parser.error(f"cliver_core was imported from {origin}, not from {ref_dir}")
    if _version() != REF_VERSION:
        parser.error(f"{ref_dir} holds cliver-core {_version()}, not {REF_VERSION}")
    text = render(snapshot())
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
