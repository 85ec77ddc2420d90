"""
`timekit lint`: check benchmark definitions, table configs and task files before BenchExec runs them.

BenchExec silently ignores a misspelled element or option and reads a task file only when it runs
it, so a typo costs a whole run. Each problem is one line `FILE:LINE: what is wrong (what to do)`.
The DTDs are BenchExec 3.35's own (see dtd/NOTICE.md).
"""

import re
from pathlib import Path

import yaml
from lxml import etree

from analysis.core.errors import UserError

DTD_DIR = Path(__file__).parent / "dtd"
ROOTS = {"benchmark": "benchmark.dtd", "table": "table.dtd"}
TASK_KEYS = {"format_version", "input_files", "properties", "options", "required_files"}


class LintError(UserError):
    """A file the kit was asked to use is invalid (one line for the user)."""


def check_xml(path):
    """Problems of a benchmark definition or table config: syntax, root element, DTD."""
    path = Path(path)
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    try:
        tree = etree.parse(str(path), parser)
    except OSError as e:
        return [f"{path}: cannot read ({e})"]
    except etree.XMLSyntaxError as e:
        return [f"{path}:{e.lineno}: malformed XML: {e.msg}"]
    root = tree.getroot().tag
    if root not in ROOTS:
        return [f"{path}:{tree.getroot().sourceline}: root element <{root}> is neither <benchmark> nor <table>"]
    dtd = etree.DTD(str(DTD_DIR / ROOTS[root]))
    if dtd.validate(tree):
        return []
    return [f"{path}:{e.line}: not valid against BenchExec's {ROOTS[root]}: {e.message} "
            "(BenchExec would silently ignore it)" for e in dtd.error_log.filter_from_errors()]


def check_task(path):
    """Problems of a task-definition file (format 2.0): YAML syntax, fields, input files that exist."""
    path = Path(path)
    try:
        content = yaml.safe_load(path.read_text())
    except OSError as e:
        return [f"{path}: cannot read ({e.strerror})"]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        return [f"{path}{where}: malformed YAML: {getattr(e, 'problem', None) or e}"]
    if not isinstance(content, dict):
        return [f"{path}: a task file must be a YAML mapping with format_version and input_files"]
    problems = []
    if content.get("format_version") not in ("1.0", "2.0"):
        problems.append(f"{path}: format_version must be the string '2.0' (quoted: a bare 2.0 is a number in YAML), "
                        f"got {content.get('format_version')!r}")
    unknown = sorted(map(str, set(content) - TASK_KEYS))  # YAML keys may be None or numbers
    if unknown:
        problems.append(f"{path}: unknown field(s) {', '.join(unknown)} (allowed: {', '.join(sorted(TASK_KEYS))})")
    inputs = content.get("input_files")
    if inputs is None:
        problems.append(f"{path}: input_files is missing")
    else:
        names = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            problems.append(f"{path}: input_files must be a path or a list of paths")
        else:
            for name in names:
                if not any((path.parent).glob(name)):
                    problems.append(f"{path}: input file {name} does not exist (relative to the task file)")
    properties = content.get("properties", [])
    if not isinstance(properties, list) or not all(isinstance(p, dict) and "property_file" in p for p in properties):
        problems.append(f"{path}: properties must be a list of mappings with property_file")
    return problems


def check(paths):
    """Problems of every given file (.xml as BenchExec XML, .yml/.yaml as task files)."""
    problems = []
    for path in map(Path, paths):
        if path.suffix == ".xml":
            problems += check_xml(path)
        elif path.suffix in (".yml", ".yaml"):
            problems += check_task(path)
        else:
            problems.append(f"{path}: not a benchmark/table XML or task YAML file")
    return [re.sub(r"\s*\n\s*", " ", problem) for problem in problems]  # parsers' messages can span lines


def require_valid(paths):
    """Raise LintError with the first problem (the runner checks its inputs before it starts)."""
    problems = check(paths)
    if problems:
        more = f" (and {len(problems) - 1} more; run: timekit lint FILE)" if len(problems) > 1 else ""
        raise LintError(problems[0] + more)
