#!/usr/bin/env python3
"""Evaluates yaql expressions with the reference implementation (yaql 2.0).

Fuel's functions are registered as nailgun's yaql extensions registered
them: each takes its argument as an expression, evaluated over the node's
current deployment data ($%new) and over the data of its last successful
run ($%old). toYaml and toJson are nailgun's serializers.

Input (stdin, JSON):
  {"fixtures": [{"name", "new", "old", "has_old", "node", "common"}],
   "exprs": ["…", …]}
Output (stdout, JSON): {"results": [[{"value": v} | {"error": "…"}, …]
                                    per expression, one per fixture]}
"""
import json
import sys

import yaml
import yaql
from yaql.language import specs, utils, yaqltypes

_UNDEFINED = object()


def plain(v):
    """Turns yaql's output into plain JSON data: tuples and iterators into
    lists, sets into lists in a canonical order."""
    if isinstance(v, (str, bytes)) or v is None or isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, utils.MappingType):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (set, frozenset)):
        items = [plain(x) for x in v]
        return sorted(items, key=lambda x: json.dumps(x, sort_keys=True, separators=(',', ':')))
    if utils.is_iterable(v):
        return [plain(x) for x in v]
    return v


def get_new(context, expression):
    return plain(expression(context['$%new']))


def get_old(context, expression):
    old = context['$%old'] if context['$%has_old'] else {}
    try:
        return plain(expression(old))
    except Exception:
        return _UNDEFINED


def changed_(context, expression):
    if not context['$%has_old']:
        return True
    new = get_new(context, expression)
    old = get_old(context, expression)
    return old is _UNDEFINED or new != old


@specs.parameter('expression', yaqltypes.Lambda())
@specs.name('changed')
def changed(context, expression):
    return changed_(context, expression)


@specs.parameter('expressions', yaqltypes.Lambda())
@specs.name('changedAny')
def changed_any(context, *expressions):
    return any([changed_(context, e) for e in expressions])


@specs.parameter('expressions', yaqltypes.Lambda())
@specs.name('changedAll')
def changed_all(context, *expressions):
    return all([changed_(context, e) for e in expressions])


def diff(a, b):
    if isinstance(a, dict):
        b = b if isinstance(b, dict) else {}
        return {k: v for k, v in a.items() if k not in b}
    if isinstance(a, list):
        b = b if isinstance(b, list) else []
        return [x for x in a if x not in b]
    raise TypeError('expected a list or a dict')


@specs.parameter('expression', yaqltypes.Lambda())
@specs.name('added')
def added(context, expression):
    new = get_new(context, expression)
    old = get_old(context, expression)
    return diff(new, None if old is _UNDEFINED else old)


@specs.parameter('expression', yaqltypes.Lambda())
@specs.name('deleted')
def deleted(context, expression):
    new = get_new(context, expression)
    old = get_old(context, expression)
    if old is _UNDEFINED or old is None:
        if isinstance(new, (dict, list)):
            return type(new)()
        raise TypeError('expected a list or a dict')
    return diff(old, new)


@specs.parameter('expression', yaqltypes.Lambda())
@specs.name('new')
def new_(context, expression):
    return get_new(context, expression)


@specs.parameter('expression', yaqltypes.Lambda())
@specs.name('old')
def old_(context, expression):
    old = get_old(context, expression)
    return None if old is _UNDEFINED else old


@specs.name('toYaml')
@specs.extension_method
def to_yaml(data):
    return yaml.safe_dump(plain(data), default_flow_style=False)


@specs.name('toJson')
@specs.extension_method
def to_json(data):
    return json.dumps(plain(data), sort_keys=True)


def main():
    req = json.load(sys.stdin)
    engine = yaql.factory.YaqlFactory().create()
    results = []
    parsed = []
    for src in req['exprs']:
        try:
            parsed.append(engine(src))
        except Exception as e:  # reported per fixture below
            parsed.append(e)
    base = yaql.create_context()
    for fn in (changed, changed_any, changed_all, added, deleted,
               new_, old_, to_yaml, to_json):
        base.register_function(fn)
    conv = utils.convert_input_data
    fixtures = []
    for fx in req['fixtures']:
        ctx = base.create_child_context()
        ctx['$%new'] = conv(fx['new'])
        ctx['$%old'] = conv(fx['old'])
        ctx['$%has_old'] = fx['has_old']
        ctx['$node'] = conv(fx['node'])
        ctx['$common'] = conv(fx['common'])
        fixtures.append((fx, ctx))
    for expr in parsed:
        row = []
        for fx, ctx in fixtures:
            if isinstance(expr, Exception):
                row.append({'error': 'parse: %s' % expr})
                continue
            try:
                row.append({'value': plain(expr.evaluate(data=fx['new'], context=ctx.create_child_context()))})
            except Exception as e:
                row.append({'error': '%s: %s' % (type(e).__name__, e)})
        results.append(row)
    json.dump({'results': results}, sys.stdout)


if __name__ == '__main__':
    main()
