"""Which machines a result file was measured on, from its `<systeminfo>` and BenchExec's limits.
Times from two different machines differ for reasons no change of the program explains, so a
comparison names both machines where they differ, before its table."""

from __future__ import annotations

from dataclasses import dataclass, field

LIMITS = ("timelimit", "memlimit", "cpuCores")   # <result> attributes: BenchExec's limits per run


@dataclass(frozen=True)
class Machine:
    host: str
    cpu_model: str = ""
    cores: str = ""
    memory: int = 0          # bytes
    kernel: str = ""

    @property
    def kind(self):
        """What makes two hosts measure alike: their hardware and kernel (memory to 1 GiB)."""
        return (self.cpu_model, self.cores, round(self.memory / 2**30), self.kernel)

    def describe(self):
        parts = [self.cpu_model, f"{self.cores} cores" if self.cores else "",
                 f"{self.memory / 2**30:.0f} GiB" if self.memory else "", self.kernel]
        return f"{self.host} ({', '.join(p for p in parts if p)})" if any(parts) else self.host


@dataclass(frozen=True)
class Measured:
    """The machines of one side (first as recorded first) and its limits; empty when not recorded."""
    machines: tuple = ()
    limits: dict = field(default_factory=dict)

    def kinds(self):
        return {m.kind for m in self.machines}

    def describe(self):
        if not self.machines:
            return "not recorded"
        first, more = self.machines[0], len(self.machines) - 1
        kinds = len(self.kinds())
        text = first.describe()
        if more:
            text += f" and {more} more host{'s' if more > 1 else ''}" + (f" ({kinds} kinds of machine in all)" if kinds > 1 else "")
        return text

    def to_dict(self):
        return {"machines": [dict(vars(m)) for m in self.machines], "limits": dict(self.limits)}


def _machine(info):
    try:
        memory = int(info.get("ram") or 0)
    except ValueError:
        memory = 0
    return Machine(host=info.get("hostname") or "?", cpu_model=info.get("cpu_model") or "",
                   cores=info.get("cpu_cores") or "", memory=memory, kernel=info.get("os") or "")


def of_tables(tables):
    """The Measured of result tables (one side). Where the runs name their `host` column, only the
    hosts they ran on count; else every <systeminfo> the files carry."""
    seen, machines, limits = set(), [], {}
    for table in tables:
        ran_on = set(table.text_columns.get("host", ()).tolist()) if "host" in table.text_columns else None
        for info in table.systeminfo:
            machine = _machine(info)
            if machine.host in seen or (ran_on and machine.host not in ran_on):
                continue
            seen.add(machine.host)
            machines.append(machine)
        for name in LIMITS:
            value = table.attributes.get(name)
            if value:
                limits.setdefault(name, value)
    return Measured(tuple(machines), limits)


def differences(base, new):
    """What differs between two sides' machines and limits, as phrases; [] when nothing does or
    when a side recorded no machine."""
    found = []
    if base.machines and new.machines:
        single = len(base.machines) == len(new.machines) == 1
        if base.kinds() != new.kinds() or (single and base.machines[0].host != new.machines[0].host):
            found.append(f"base ran on {base.describe()}, new on {new.describe()}")
    for name in LIMITS:
        if name in base.limits and name in new.limits and base.limits[name] != new.limits[name]:
            found.append(f"{name} {base.limits[name]} against {new.limits[name]}")
    return found


def warning(base, new):
    """One line before a comparison's table, or '' where the machines and limits agree."""
    found = differences(base, new)
    return ("warning: base and new were measured on different machines or limits, so a change may be "
            "the machine's: " + "; ".join(found)) if found else ""


def environment(sides):
    """Rows for a report's Environment section: {label: Measured} -> {row title: text}; one row
    where every side was measured on the same machines, and the limits only for two sides."""
    rows = {}
    described = {label: m.describe() for label, m in sides.items() if m.machines}
    if len(set(described.values())) == 1:
        rows["measured on"] = next(iter(described.values()))
    else:
        rows.update({f"measured on ({label})": text for label, text in described.items()})
    labels = list(sides)
    for label, measured in sides.items():
        if measured.limits and len(labels) == 2:
            rows[f"BenchExec limits ({label})"] = ", ".join(f"{k} {v}" for k, v in measured.limits.items())
    if len(labels) == 2:
        found = differences(sides[labels[0]], sides[labels[1]])
        if found:
            rows["machines differ"] = "; ".join(found)
    return rows


def changes(labelled):
    """One warning line where the machine changes along result sets in order, [(label, Measured)]; else ''."""
    steps = [f"{later} on {now.describe()}" for (_, before), (later, now) in zip(labelled, labelled[1:])
             if differences(before, now)]
    if not steps:
        return ""
    first, measured = labelled[0]
    return ("warning: the result sets were measured on different machines or limits, so a change may be the "
            f"machine's: {first} on {measured.describe()}; from " + "; from ".join(steps))
