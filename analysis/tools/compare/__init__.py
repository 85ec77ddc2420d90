"""Did it get faster or slower: repeated runs by invocation (repeated, reruns), one run per task (pairing, paired*), the generic report of any result files."""
