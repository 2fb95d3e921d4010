"""Structure-aware damage to a .pt2's model JSON, for tests that check every damaged archive
compiles or is refused in one line: numbers replaced by extremes, values swapped for other types,
anywhere or under chosen parts of the JSON."""

import json
import zipfile

REPLACEMENTS = [-1, 0, 2**62, -(2**62), 3.5, "x", None, [], {}, True, {"as_int": 1}, {"as_tensor": {"name": "x"}}]


def _paths(node, prefix):
    yield prefix
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _paths(child, prefix + (key,))


def _at(model_json, path):
    for key in path:
        model_json = model_json[key]
    return model_json


def json_mutations(model_json, rng, count, under=((),)):
    """`count` copies of `model_json`, each with one value replaced, inside one of the paths `under`
    (tuples of keys; the whole JSON by default)."""
    candidates = [p for root in under for p in _paths(_at(model_json, root), tuple(root)) if len(p) > len(root)]
    for _ in range(count):
        model = json.loads(json.dumps(model_json))
        path = rng.choice(candidates)
        _at(model, path[:-1])[path[-1]] = rng.choice(REPLACEMENTS)
        yield model


def model_json_entry(pt2):
    with zipfile.ZipFile(pt2) as archive:
        return next(n for n in archive.namelist() if n.endswith("models/model.json"))


def read_model_json(pt2):
    with zipfile.ZipFile(pt2) as archive:
        return json.loads(archive.read(model_json_entry(pt2)))


def with_model_json(src, dst, model_json):
    """Copies archive `src` to `dst` with its model JSON replaced."""
    entry = model_json_entry(src)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            zout.writestr(item, json.dumps(model_json).encode() if item.filename == entry else zin.read(item.filename))
    return dst
