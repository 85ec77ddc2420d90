"""The kernel's list syntax ('0-3,8,10-11'), used for CPUs, NUMA nodes and load levels alike."""


def parse_int_list(text):
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]; '' -> []. Raises ValueError on anything else
    (a range running backwards, a negative number, text)."""
    numbers = []
    for part in (text or "").strip().split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        low, high = int(low), int(high or low)
        if low < 0 or high < low:
            raise ValueError(f"'{part}' is not a range like 0-3")
        numbers.extend(range(low, high + 1))
    return numbers
