"""The benchmark definition of a machine's node pairs: one run definition per (CPU node, memory node)."""

from __future__ import annotations

from lxml import etree

from analysis.machine.numa import NumaError


def benchmark_for_nodes(template, nodes):
    """The benchmark definition `template` (XML text) with one run definition per
    (CPU node, memory node) pair of `nodes`, named cpuC-memM, in place of its own."""
    parser = etree.XMLParser(remove_blank_text=False)
    root = etree.fromstring(template.encode() if isinstance(template, str) else template, parser)
    old = root.findall("rundefinition")
    if not old:
        raise NumaError("benchmark definition has no <rundefinition> to replace")
    anchor = root.index(old[0])
    for element in old:
        root.remove(element)
    for k, (c, m) in enumerate((c, m) for c in nodes for m in nodes):
        element = etree.Element("rundefinition", name=f"cpu{c}-mem{m}")
        for name, value in (("--cpunode", c), ("--memnode", m)):
            option = etree.SubElement(element, "option", name=name)
            option.text = str(value)
        element.tail = "\n  "
        root.insert(anchor + k, element)
    doctype = root.getroottree().docinfo.doctype
    return etree.tostring(root.getroottree(), xml_declaration=True, encoding="UTF-8", doctype=doctype).decode()
