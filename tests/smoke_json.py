"""What the command smoke tests (bench_smoke.py, profile_smoke.py) share: run a command
that must succeed and print exactly one JSON object."""
import json
import subprocess
import sys


def one_json_line(cmd):
    """Runs cmd; exits the test unless it succeeds with one non-empty stdout line. Returns
    (the parsed object, the line)."""
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{cmd[1]} exited {out.returncode}: {out.stderr}{out.stdout}")
    lines = [l for l in out.stdout.splitlines() if l.strip()]
    if len(lines) != 1:
        sys.exit(f"expected one JSON line, got {len(lines)}: {out.stdout}")
    return json.loads(lines[0]), lines[0]
