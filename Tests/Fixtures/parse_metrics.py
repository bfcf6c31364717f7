#!/usr/bin/env python3
"""Parses a Prometheus text exposition (stdin) with the Prometheus client's own parser and
prints one line per sample: `name{label="value",...} value`, labels sorted, families' types
as `# TYPE name type` lines; exits 1 (with the parser's error) on text it refuses."""
import sys

from prometheus_client.parser import text_string_to_metric_families

text = sys.stdin.read()
try:
    for family in text_string_to_metric_families(text):
        print(f"# TYPE {family.name} {family.type}")
        for sample in family.samples:
            labels = ",".join(f'{key}="{value}"' for key, value in sorted(sample.labels.items()))
            print(f"{sample.name}{{{labels}}} {sample.value:g}")
except Exception as error:  # the parser raises ValueError and friends
    print(f"unparsable: {error}", file=sys.stderr)
    sys.exit(1)
