"""Whether a FHIR Bundle gives back every element of another's VisionPrescriptions.

usage: contains.py SOURCE EXPORT
For each VisionPrescription of SOURCE, the one in EXPORT with the same business identifier (or
id) must contain every element it has: objects member by member, arrays element by element (each
source element matched by its own export element, in any order), numbers by value. A reference
is compared by what it resolves to in its own Bundle: the same resource type, and for a
Practitioner every element of it. Prints what is missing and exits 1; exits 0 when nothing is.
"""
import json
import sys


def index(bundle):
    names = {}
    for entry in bundle.get("entry", []):
        resource = entry["resource"]
        if "fullUrl" in entry:
            names[entry["fullUrl"]] = resource
        if "id" in resource:
            names[resource["resourceType"] + "/" + resource["id"]] = resource
    return names


def resolve(reference, names):
    if reference in names:
        return names[reference]
    tail = "/".join(reference.split("/")[-2:])
    return names.get(tail)


def contains(source, exported, path, src_names, exp_names, missing):
    if isinstance(source, dict):
        if not isinstance(exported, dict):
            missing.append(path)
            return
        for key, value in source.items():
            if key == "reference" and isinstance(value, str):
                target, got = resolve(value, src_names), resolve(exported.get("reference", ""), exp_names)
                if target is None:
                    if exported.get("reference") != value:
                        missing.append(path + ".reference")
                elif got is None or got["resourceType"] != target["resourceType"]:
                    missing.append(path + ".reference (resolves to " + target["resourceType"] + ")")
                elif target["resourceType"] == "Practitioner":
                    contains(target, got, path + "->Practitioner", src_names, exp_names, missing)
                continue
            if key not in exported:
                missing.append(path + "." + key)
            else:
                contains(value, exported[key], path + "." + key, src_names, exp_names, missing)
    elif isinstance(source, list):
        if not isinstance(exported, list):
            missing.append(path)
            return
        used = set()
        for i, item in enumerate(source):
            closest = None
            for j, candidate in enumerate(exported):
                if j in used:
                    continue
                trial = []
                contains(item, candidate, "%s[%d]" % (path, i), src_names, exp_names, trial)
                if not trial:
                    used.add(j)
                    break
                if closest is None or len(trial) < len(closest):
                    closest = trial
            else:
                # Unmatched: what the closest export element lacks, else the element itself.
                missing.extend(closest or ["%s[%d] = %s" % (path, i, json.dumps(item)[:120])])
    elif isinstance(source, bool) or isinstance(exported, bool):
        if source is not exported:
            missing.append(path)
    elif isinstance(source, (int, float)):
        if not isinstance(exported, (int, float)) or abs(source - exported) > 1e-9:
            missing.append("%s: %s, exported %s" % (path, source, exported))
    elif source != exported:
        missing.append("%s: %r, exported %r" % (path, source, exported))


def key(resource):
    ids = [(i.get("system"), i.get("value")) for i in resource.get("identifier", []) if i.get("system") != "urn:rxvault:prescription"]
    return ids[0] if ids else ("id", resource.get("id"))


def main():
    source, exported = (json.load(open(p)) for p in sys.argv[1:3])
    src_names, exp_names = index(source), index(exported)
    mine = {key(r): r for r in exp_names.values() if r["resourceType"] == "VisionPrescription"}
    missing, checked = [], 0
    for entry in source["entry"]:
        resource = entry["resource"]
        if resource["resourceType"] != "VisionPrescription":
            continue
        checked += 1
        if key(resource) not in mine:
            missing.append("VisionPrescription %s is not in the export" % (key(resource),))
            continue
        contains(resource, mine[key(resource)], "VisionPrescription/" + resource.get("id", "?"), src_names, exp_names, missing)
    for line in missing:
        print(line)
    print("%d prescription(s) checked, %d element(s) missing" % (checked, len(missing)))
    sys.exit(1 if missing else 0)


main()
