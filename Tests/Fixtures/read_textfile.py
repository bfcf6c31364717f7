#!/usr/bin/env python3
"""Reads FILE over and over until STOPFILE exists, parsing each read with the Prometheus
client's parser; prints `reads N torn M satisfied-values V` and exits 1 if any read was
not a whole exposition (unparsable, or without reachd_path_satisfied)."""
import os
import sys

from prometheus_client.parser import text_string_to_metric_families

path, stop = sys.argv[1], sys.argv[2]
reads = torn = 0
values = set()
while not os.path.exists(stop):
    try:
        with open(path) as handle:
            text = handle.read()
    except FileNotFoundError:
        continue
    reads += 1
    try:
        samples = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples if not s.labels}
        values.add(samples["reachd_path_satisfied"])
        if "reachd_path_changes_total" not in samples:
            torn += 1
    except Exception:
        torn += 1
print(f"reads {reads} torn {torn} satisfied-values {sorted(values)}", flush=True)
sys.exit(1 if torn else 0)
