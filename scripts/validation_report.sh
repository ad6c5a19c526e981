#!/usr/bin/env bash
# Runs the validation suite and regenerates docs/validation.md from its results.
#   scripts/validation_report.sh [BUILD_DIR]      (default: $FABRICSIM_BUILD_DIR or build/)
# 1. builds (scripts/build.sh) unless the build folder is given and already built;
# 2. asks ctest for the tests labelled `validation` (tests/validation_labels.cmake) and
#    runs them, each test binary once with those tests (--gtest_filter), with
#    --gtest_output=json: pass/fail and time of every test, and each check's measured
#    and expected values, source and tolerance (recorded by tests/validation.h);
# 3. writes docs/validation.md. Exit status 1 if any validation test failed, a labelled
#    name is unknown to ctest or a test in tests/*.cpp makes a check without the label
#    (the document is still written, with the failures marked).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-${FABRICSIM_BUILD_DIR:-$ROOT/build}}"
if [ ! -x "$BUILD/tests/test_fabric" ]; then
  FABRICSIM_BUILD_DIR="$BUILD" "$ROOT/scripts/build.sh"
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

ctest --test-dir "$BUILD" -L validation --show-only=json-v1 >"$TMP/listed.json"

"$PY" - "$ROOT" "$TMP" <<'PYEOF'
import json, os, re, sys, datetime, subprocess

root, tmp = sys.argv[1], sys.argv[2]

def md(s):
    return str(s).replace("|", "\\|")

# The labelled tests, by binary: one process per binary, all binaries at once.
listed = json.load(open(os.path.join(tmp, "listed.json")))["tests"]
by_binary = {}
for t in listed:
    cwd = next((p["value"] for p in t.get("properties", []) if p["name"] == "WORKING_DIRECTORY"), None)
    by_binary.setdefault((t["command"][0], cwd), []).append(t["name"])
runs = []
for i, ((binary, cwd), names) in enumerate(sorted(by_binary.items(), key=lambda b: b[0][0])):
    out = os.path.join(tmp, f"{i}.json")
    log = open(os.path.join(tmp, f"{i}.log"), "w")
    proc = subprocess.Popen([binary, "--gtest_filter=" + ":".join(names), f"--gtest_output=json:{out}"],
                            cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    runs.append((binary, names, out, proc))
run_failed = []
results = {}
for binary, names, out, proc in runs:
    if proc.wait() != 0:
        run_failed.append(os.path.basename(binary))
    if os.path.exists(out):
        for suite in json.load(open(out))["testsuites"]:
            for t in suite["testsuite"]:
                results[f"{suite['name']}.{t['name']}"] = t

# Every labelled test's pass/fail, and the checks it reports (validation_check_N properties).
order = {n: i for i, n in enumerate(re.findall(r"^\s+([A-Za-z0-9_]+\.[A-Za-z0-9_]+)\s*$",
                                               open(os.path.join(root, "tests", "validation_labels.cmake")).read(),
                                               re.M))}
tests = []
checks = []
for t in listed:
    name = t["name"]
    r = results.get(name)
    if r is None:
        tests.append((name, "no result", 0.0))
        continue
    status = "fail" if r.get("failures") else ("pass" if r.get("result") == "COMPLETED" else r.get("result", "?").lower())
    tests.append((name, status, float(r.get("time", "0s").rstrip("s"))))
    keys = sorted((k for k in r if k.startswith("validation_check_")), key=lambda k: int(k.rsplit("_", 1)[1]))
    for n, k in enumerate(keys):
        c = json.loads(r[k])
        checks.append({**c, "test": name, "group": c["section"], "order": (order.get(name, len(order)), n),
                       "status": "pass" if c["within"] else "FAIL"})
tests.sort()

# Names in validation_labels.cmake that ctest does not know (renamed or removed tests).
known = {t["name"] for t in listed}
missing = [n for n in order if n not in known]

# Tests in tests/*.cpp that make a check (tests/validation.h) but are not labelled: their
# rows would be missing from the report.
unlabelled = []
for cpp in sorted(os.listdir(os.path.join(root, "tests"))):
    if cpp.endswith(".cpp"):
        text = open(os.path.join(root, "tests", cpp)).read()
        heads = [(m.start(), f"{m.group(1)}.{m.group(2)}")
                 for m in re.finditer(r"^TEST(?:_F)?\((\w+), (\w+)\)", text, re.M)]
        for m in re.finditer(r"\bexpect_(?:near|relative|within)\(\{", text):
            test = next((n for pos, n in reversed(heads) if pos < m.start()), cpp)
            if test not in order and test not in unlabelled:
                unlabelled.append(test)

try:
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", root, "status", "--porcelain"], capture_output=True, text=True).stdout.strip()
    if commit and dirty:
        commit += " + local changes"
except OSError:
    commit = "?"

n_fail_checks = sum(1 for c in checks if c["status"] != "pass")
n_fail_tests = sum(1 for t in tests if t[1] not in ("run", "pass", "passed"))
out = []
out.append("# Validation")
out.append("")
out.append("Generated by `scripts/validation_report.sh` (do not edit by hand) on "
           f"{datetime.date.today().isoformat()}, commit {commit}.")
out.append("")
out.append("`ctest -L validation` runs every check below. Each reproduces a closed form or a published "
           "result with a stated tolerance; a measured value outside it fails the test. Each check is made "
           "once, by one of the tier tests labelled `validation` in `tests/validation_labels.cmake` (listed at "
           "the end), which records its values through `tests/validation.h`.")
out.append("")
out.append(f"Summary: {len(checks) - n_fail_checks} of {len(checks)} checks within tolerance; "
           f"{len(tests) - n_fail_tests} of {len(tests)} validation tests passed.")
if missing:
    out.append("")
    out.append("**Labelled tests that no longer exist** (renamed or removed; update tests/validation_labels.cmake): "
               + ", ".join(f"`{m}`" for m in missing))
if unlabelled:
    out.append("")
    out.append("**Tests that make a check but are not labelled** (add them to tests/validation_labels.cmake): "
               + ", ".join(f"`{u}`" for u in unlabelled))
titles = {"Phy": "PHY: data rates, serialization, FEC (hw/phy.h)",
          "Fabric": "Zero-load latency and the credit loop (one switch, end to end)",
          "Switch": "Switch throughput: classic results for the buffer organisations (16 x 16, uniform Bernoulli)",
          "Collectives": "Collectives: ring AllReduce bound, nccl-tests bus bandwidth",
          "Nic": "NIC: perftest closed form, DCQCN, PFC",
          "Training": "Training iterations: a generated job at zero contention against the alpha-beta model"}
checks.sort(key=lambda c: (list(titles).index(c["group"]) if c["group"] in titles else len(titles), c["order"]))
groups = []
for c in checks:
    if c["group"] not in groups:
        groups.append(c["group"])
for g in groups:
    out.append("")
    out.append(f"## {titles.get(g, g)}")
    out.append("")
    out.append("| check | source | expected | measured | tolerance | result |")
    out.append("|---|---|---|---|---|---|")
    for c in checks:
        if c["group"] != g:
            continue
        unit = f" {c['unit']}" if c["unit"] else ""
        status = "pass" if c["status"] == "pass" else f"**{c['status']}**"
        out.append(f"| {md(c['check'])} | {md(c['source'])} | {md(c['expected'])}{md(unit)} | "
                   f"{md(c['measured'])}{md(unit)} | {md(c['tolerance'])} | {status} |")
out.append("")
out.append("## All tests labelled `validation`")
out.append("")
out.append("| test | result | time [s] |")
out.append("|---|---|---|")
for name, status, t in tests:
    s = "pass" if status in ("run", "pass", "passed") else f"**{status}**"
    out.append(f"| `{name}` | {s} | {t:.2f} |")
out.append("")
out.append("Regenerate: `scripts/validation_report.sh [BUILD_DIR]`.")
out.append("")
with open(os.path.join(root, "docs", "validation.md"), "w") as f:
    f.write("\n".join(out))
print(f"validation: {len(checks) - n_fail_checks}/{len(checks)} checks, "
      f"{len(tests) - n_fail_tests}/{len(tests)} tests passed; wrote docs/validation.md")
for c in checks:
    if c["status"] != "pass":
        print(f"  FAILED check {c['test']}: measured {c['measured']} expected {c['expected']} ({c['tolerance']})")
for name, status, t in tests:
    if status not in ("run", "pass", "passed"):
        print(f"  FAILED test {name}: {status}")
for m in missing:
    print(f"  labelled test not found: {m}")
for u in unlabelled:
    print(f"  makes a check but is not labelled validation: {u}")
for b in run_failed:
    print(f"  {b}: the test binary exited with a failure")
sys.exit(1 if (n_fail_checks or n_fail_tests or missing or unlabelled or run_failed) else 0)
PYEOF
