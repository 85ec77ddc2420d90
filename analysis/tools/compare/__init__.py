"""Did it get faster or slower: repeated runs by invocation (repeated, reruns), one run per task
(pairing, paired*), and the generic report of any result files."""
