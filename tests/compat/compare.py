#!/usr/bin/env python3
"""CPython's filesystem regression tests, bare and under cordon (issue 28).

Runs the modules below with `python3 -m test -jN --junit-xml` twice, each in a
fresh workspace: once bare, once under `cordon run --profile workspace-write
--approvals deny`. A case that passes bare and fails, never runs or skips
under cordon is a divergence (a test skips when cordon refuses what it
probes: xattrs). Divergences that pass on one retry under cordon are
reported as flaky; the rest must match an entry of the allowlist
(allowlist.ini beside this file) or the run fails.

  compare.py --cordon BIN [--launcher PROG] [--python PY] [--allowlist FILE]
             [--jobs N] [--keep] [MODULE...]

Exit: 0 no unlisted divergence; 1 unlisted divergences; 125 bad input or a
pass that could not run at all.
"""

import argparse
import configparser
import fnmatch
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

MODULES = ["test_os", "test_shutil", "test_tempfile", "test_pathlib", "test_glob",
           "test_fileio", "test_posix", "test_stat", "test_filecmp", "test_tarfile",
           "test_zipfile", "test_subprocess"]
HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {"refusal": ("rule", "why"), "bug": ("rule", "repro")}


def die(msg):
    print(f"compare.py: {msg}", file=sys.stderr)
    sys.exit(125)


def load_allowlist(path):
    """Each section is a case id or fnmatch pattern; kind=refusal needs rule
    and why, kind=bug needs rule and repro; `only = moby` limits an entry to
    runs under --launcher. Every problem is fatal."""
    cp = configparser.ConfigParser(interpolation=None, comment_prefixes=("#",),
                                   inline_comment_prefixes=None)
    cp.optionxform = str
    try:
        with open(path, encoding="utf-8") as f:
            cp.read_file(f)
    except (OSError, configparser.Error) as e:
        die(f"allowlist {path}: {e}")
    entries = []
    for name in cp.sections():
        sec = cp[name]
        kind = sec.get("kind", "")
        if kind not in KINDS:
            die(f"allowlist [{name}]: kind must be one of {', '.join(KINDS)}")
        for key in KINDS[kind]:
            if not sec.get(key, "").strip():
                die(f"allowlist [{name}]: kind={kind} needs '{key}'")
        entries.append({"pattern": name, "kind": kind, "rule": sec["rule"].strip(),
                        "only": sec.get("only", "").strip(), "hits": []})
    return entries


def outcomes(xml_path):
    """{case id: 'pass'|'fail'|'skip'} from regrtest's JUnit XML, and
    {case id: the first line of its failure or skip message}."""
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError) as e:
        return None, str(e)
    res = {}
    for tc in root.iter("testcase"):
        name = tc.get("name")
        res[name] = "pass"
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                res[name] = "skip" if child.tag == "skipped" else "fail"
                text = (child.get("message") or child.text or "").strip()
                WHY[name] = text.splitlines()[-1][:300] if text else ""
                break
    return res, None


# Why a case did not pass, from the last pass that ran it: printed for the
# divergences, so that an intermittent one says what the test saw.
WHY = {}


def cordon_lines(log_path, limit=20):
    """The distinct lines cordon itself printed into a pass's log."""
    seen = []
    with open(log_path, "rb") as f:
        for raw in f:
            line = raw.decode(errors="replace").rstrip()
            if line.startswith("cordon:") and line not in seen:
                seen.append(line)
    return seen[:limit]


def run_pass(label, argv_prefix, python, modules, jobs, root, match=None):
    """One regrtest run in a fresh workspace ROOT/label (labels of one length:
    the tests' paths must be as long bare as under cordon, AF_UNIX's 108 bytes
    are near). Returns (outcomes, secs,
    log path). The test files go to WS/work (--tempdir), so they live in the
    workspace; tempfile's files go to TMPDIR (cordon's private one, or a fresh
    dir bare)."""
    ws = os.path.join(root, label)
    os.makedirs(os.path.join(ws, "work"))
    xml = os.path.join(ws, "junit.xml")
    log = os.path.join(root, label + ".log")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    # cordon's run record, audit log and journal go to the scratch root,
    # not the developer's state home.
    env["XDG_STATE_HOME"] = os.path.join(root, "state")
    if not argv_prefix:
        tmp = os.path.join(root, label + ".tmp")
        os.makedirs(tmp)
        env["TMPDIR"] = tmp
    cmd = list(argv_prefix) + [python, "-m", "test", f"-j{jobs}", "--tempdir",
                               os.path.join(ws, "work"), "--junit-xml", xml]
    if match:
        matchfile = os.path.join(ws, "match.txt")
        with open(matchfile, "w", encoding="utf-8") as f:
            f.write("".join(c + "\n" for c in match))
        cmd += ["--matchfile", matchfile]
    cmd += modules
    t0 = time.monotonic()
    with open(log, "wb") as out:
        subprocess.run(cmd, cwd=ws, env=env, stdout=out, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, check=False)
    secs = time.monotonic() - t0
    res, err = outcomes(xml)
    if res is None:
        with open(log, "rb") as f:
            tail = f.read()[-3000:].decode(errors="replace")
        die(f"{label} pass wrote no results ({err}); command: {' '.join(cmd)}\n{tail}")
    return res, secs, log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cordon", required=True)
    ap.add_argument("--launcher", default="", help="program to start cordon through")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--allowlist", default=os.path.join(HERE, "allowlist.ini"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the workspaces and logs")
    ap.add_argument("modules", nargs="*")
    a = ap.parse_args()
    modules = a.modules or MODULES
    a.cordon = os.path.abspath(a.cordon)
    if a.launcher:
        a.launcher = os.path.abspath(a.launcher)
        if not os.access(a.launcher, os.X_OK):
            die(f"launcher {a.launcher} is not executable")
    if not os.access(a.cordon, os.X_OK):
        die(f"cordon binary {a.cordon} is not executable")
    probe = subprocess.run([a.python, "-c", "import test.test_os, test.test_tarfile"],
                           capture_output=True, check=False)
    if probe.returncode != 0:
        die(f"{a.python} has no CPython test suite (apt-get install libpython3.11-testsuite)")
    context = "moby" if a.launcher else "host"
    allow = [e for e in load_allowlist(a.allowlist) if e["only"] in ("", context)]

    # Short, whatever TMPDIR says: test_pathlib binds a Unix socket at
    # ROOT/LABEL/work/test_python_PID\u00e6/test_python_worker_PID\u00e6/@test_PID_tmp\u00e6/mysock
    # and skips when that passes AF_UNIX's 108 bytes. With a longer root the
    # cases passed bare while PIDs had 4 digits and skipped under cordon once
    # they reached 5 (an intermittent divergence).
    root = tempfile.mkdtemp(prefix="cc-", dir="/tmp")
    longest = len(os.fsencode(os.path.join(
        root, "bare", "work", "test_python_%s\u00e6" % ("9" * 7),
        "test_python_worker_%s\u00e6" % ("9" * 7), "@test_%s_tmp\u00e6" % ("9" * 7), "mysock")))
    if longest >= 108:
        die(f"scratch root {root} is too long for the tests' Unix socket names ({longest} bytes)")
    os.chmod(root, 0o755)
    # The runs' journals and private caches stay in the scratch tree, not
    # in the developer's state home.
    state = os.path.join(root, "state")
    os.mkdir(state, 0o700)
    os.environ["XDG_STATE_HOME"] = state
    cordon = ([a.launcher] if a.launcher else []) + [
        a.cordon, "run", "--profile", "workspace-write", "--approvals", "deny",
        "--workspace"]
    try:
        bare, bare_s, _ = run_pass("bare", [], a.python, modules, a.jobs, root)
        ws = os.path.join(root, "cord")
        under, cordon_s, cordon_log = run_pass(
            "cord", cordon + [ws, "--"], a.python, modules, a.jobs, root)
        # Skipped counts as not passed: a test skips when cordon refuses what
        # it probes (xattrs), and that refusal must be listed too.
        diverged = sorted(c for c, r in bare.items()
                          if r == "pass" and under.get(c, "missing") != "pass")

        unlisted, flaky = [], []
        for case in diverged:
            hit = next((e for e in allow if fnmatch.fnmatchcase(case, e["pattern"])), None)
            if hit:
                hit["hits"].append(case)
            else:
                unlisted.append(case)
        retry_s = 0.0
        if unlisted:
            mods = sorted({c.split(".")[1] for c in unlisted if c.startswith("test.")})
            wr = os.path.join(root, "rtry")
            again, retry_s, _ = run_pass("rtry", cordon + [wr, "--"], a.python,
                                         mods or modules, a.jobs, root, unlisted)
            flaky = [c for c in unlisted if again.get(c) == "pass"]
            unlisted = [c for c in unlisted if c not in flaky]

        print(f"bare:   {len(bare)} cases, {sum(r == 'pass' for r in bare.values())} passed, "
              f"{sum(r == 'fail' for r in bare.values())} failed ({bare_s:.0f} s)")
        print(f"cordon: {len(under)} cases, {sum(r == 'pass' for r in under.values())} passed, "
              f"{sum(r == 'fail' for r in under.values())} failed ({cordon_s:.0f} s"
              + (f", retry {retry_s:.0f} s" if retry_s else "") + ")")
        for kind, title in (("refusal", "allowlisted policy refusals"),
                            ("bug", "KNOWN DIVERGENCES (bugs, to fix)")):
            hits = [(e, c) for e in allow if e["kind"] == kind for c in e["hits"]]
            if hits:
                print(f"{title}: {len(hits)}")
                for e, c in hits:
                    print(f"  {c}: {under.get(c, 'missing')}  [{e['rule']}]")
        stale = [e["pattern"] for e in allow if not e["hits"]]
        if stale:
            print("allowlist entries that matched nothing (remove them if this holds):")
            for p in stale:
                print(f"  {p}")
        if flaky:
            print(f"FLAKY under cordon (failed, then passed on a retry): {len(flaky)}")
            for c in flaky:
                print(f"  {c}")
        if unlisted:
            print(f"DIVERGENCES (pass bare, fail under cordon, not allowlisted): {len(unlisted)}")
            for c in unlisted:
                print(f"  {c}: {under.get(c, 'did not run')}: {WHY.get(c, '')}")
            print(f"cordon pass log: {cordon_log}; what cordon printed there:")
            for line in cordon_lines(cordon_log):
                print(f"  {line}")
            a.keep = True
            return 1
        print("no unlisted divergence")
        return 0
    finally:
        if a.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
