"""
What the user asked for, as data: the commands with hyperfine's parameter lists expanded, the
options every run gets, and the names BenchExec files are labelled with.
"""

import itertools
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from analysis.core.errors import UserError

# BenchExec builds file names from run definition names: keep them to characters no shell or glob reads
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+,-]+")
NAME_LENGTH = 60


class CommandError(UserError):
    """Commands or their options cannot be measured as given (one line for the user)."""


OUTPUTS = ("null", "pipe", "inherit")   # cmdrun's --output besides a file name


@dataclass
class Options:
    """What every run of every command gets (the tool_info.command options, and the plan)."""

    runs: int = 10            # measured runs per command in one benchexec invocation
    warmup: int = 0           # runs before them in the same invocation, discarded
    prepare: str = ""         # before each execution, not timed
    shell: str = "sh"         # `none`: the command is split into words and executed directly
    repeat: int = 1           # executions per BenchExec run (--repeat K)
    cwd: str = ""             # where the commands run: the directory timekit was started in
    parameters: list = field(default_factory=list)  # [[name, [values]]], in the order given
    ignore_failure: bool = False   # hyperfine's --ignore-failure: runs that exit non-zero are measured
    output: str = "null"      # where the commands' stdout goes (cmdrun's --output): null, pipe, inherit, a file

    @property
    def timed_by_cmdrun(self):
        """Whether cmdrun's per-execution figures are the measurement (BenchExec's include more)."""
        return self.repeat > 1 or bool(self.prepare)

    def to_dict(self):
        return asdict(self)


def is_definition(argument):
    """A benchmark definition is one word ending in .xml (an existing file, or a missing one that
    the definition path reports); anything else is a shell command."""
    text = str(argument)
    return text.endswith(".xml") and (Path(text).is_file() or not any(c.isspace() for c in text))


def parse_parameters(pairs):
    """hyperfine's `-L NAME a,b,c` (repeatable) -> [[name, [values]]]."""
    parameters = []
    for name, values in pairs or []:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise CommandError(f"-L {name}: a parameter name is letters, digits and _, e.g. -L size 10,100")
        if name in [p[0] for p in parameters]:
            raise CommandError(f"-L {name} is given twice; give its values once, separated by commas")
        split = values.split(",")
        if not all(split):
            raise CommandError(f"-L {name} {values!r}: an empty value; separate the values by single commas")
        parameters.append([name, split])
    return parameters


def combinations(parameters):
    """Every assignment of the parameter lists ({} when there are none), first list outermost."""
    names = [name for name, _ in parameters]
    return [dict(zip(names, values)) for values in itertools.product(*(v for _, v in parameters))]


def used_parameters(template, options):
    """The parameter lists a command (or --prepare) refers to: a command without {size} is not run
    once per size."""
    return [[name, values] for name, values in options.parameters
            if "{" + name + "}" in template or "{" + name + "}" in options.prepare]


def substitute(template, assignment):
    """`{name}` replaced by its value for the declared names only (other braces are the shell's)."""
    for name, value in assignment.items():
        template = template.replace("{" + name + "}", value)
    return template


def check_parameters(templates, options):
    """Every -L name must appear in some command (or in --prepare), or the list would do nothing."""
    for name, _ in options.parameters:
        if not any("{" + name + "}" in t for t in [*templates, options.prepare]):
            raise CommandError(f"-L {name}: no command contains {{{name}}}")


def slug(text):
    """A name for files: the command's characters that are safe in a path, at most NAME_LENGTH."""
    text = re.sub(r"^(\./)+", "", text.strip())
    text = re.sub(r"-{2,}", "-", _UNSAFE.sub("-", text))
    return text.strip("-.")[:NAME_LENGTH].rstrip("-.") or "command"


def unique(names):
    """The names with -2, -3, ... added where one repeats."""
    seen, out = {}, []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return out


def assignment_label(assignment):
    """'size=10,mode=fast' ('' without parameters): a run definition's name in `ab`."""
    return ",".join(f"{k}={slug(v)}" for k, v in assignment.items())


@dataclass
class Command:
    """One concrete command: what runs, its template and parameters, its --prepare (with the same
    parameters), its run definition's name, and its label: what tables and summaries call it
    (its -n/--command-name, else a short automatic one; '' in records older than labels)."""

    text: str
    template: str
    assignment: dict
    prepare: str
    name: str
    label: str = ""


def names_given(names, count):
    """hyperfine's -n/--command-name: one per command, in order (None: none given); fewer leave
    the rest to automatic labels."""
    names = list(names or ())
    if len(names) > count:
        raise CommandError(f"{len(names)} --command-name given for {count} command(s); give at most one per command")
    if not all(n.strip() for n in names):
        raise CommandError("--command-name: an empty name; give each command a word or two, e.g. -n old -n new")
    return names + [None] * (count - len(names))


def labelled(name, assignment):
    """A name for one assignment of the parameters: {NAME} replaced (as hyperfine does), else the
    assignment added, so that the commands of one template stay apart."""
    text = substitute(name, assignment)
    return text if text != name or not assignment else f"{name} {assignment_label(assignment)}"


def check_labels(labels):
    """Labels stand for their commands in tables: two commands must not share one."""
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise CommandError(f"--command-name: {twice[0]!r} would name two commands; give each command its own name")


def expand(templates, options, names=None):
    """The concrete commands of the templates, in order: each template with every assignment;
    labelled by its name (`names`: -n, one per template), else #1, #2, ... in that order."""
    if not templates or not all(t.strip() for t in templates):
        raise CommandError("give one or more commands, e.g. timekit bench './my-program --fast'")
    check_text([*templates, options.prepare])
    check_parameters(templates, options)
    given = names_given(names, len(templates))
    concrete = [(t, a, substitute(t, a), name) for t, name in zip(templates, given)
                for a in combinations(used_parameters(t, options))]
    labels = [labelled(name, a) if name else f"#{k}" for k, (_, a, _, name) in enumerate(concrete, start=1)]
    check_labels(labels)
    slugs = unique([slug(text) for _, _, text, _ in concrete])
    return [Command(text, t, a, substitute(options.prepare, a), name, label)
            for (t, a, text, _), name, label in zip(concrete, slugs, labels)]


def check_text(commands):
    """Commands as BenchExec can carry them: a definition is XML text, so a byte that is not UTF-8
    (Python keeps it from argv as a lone surrogate) cannot reach the run; one line says where."""
    for command in commands:
        bad = next((k for k, c in enumerate(command or "") if "\udc80" <= c <= "\udcff"), None)
        if bad is not None:
            raw = command[bad].encode("utf-8", "surrogateescape")
            raise CommandError(f"{command.encode('utf-8', 'surrogateescape')!r}: byte {raw!r} at position {bad} is not "
                               "UTF-8, which a BenchExec definition (XML) cannot hold; put the command in a script and "
                               "time `sh SCRIPT`")
