resolve_markers() { # keep the 'theirs' side (the patch) of every conflict in file $1
  python3 - "$1" <<'PY'
import sys,re
p=sys.argv[1]; out=[]; st=0
for x in open(p).read().splitlines(True):
    if x.startswith("<<<<<<<"): st=1; continue
    if st==1 and x.startswith("|||||||"): st=3; continue
    if st in (1,3) and x.startswith("======="): st=2; continue
    if st==2 and x.startswith(">>>>>>>"): st=0; continue
    if st in (1,3): continue
    out.append(x)
open(p,"w").write("".join(out))
PY
}
