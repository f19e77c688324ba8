add_hand_text() { # add hand-written text to patch 0004 in the project and commit
  (cd $T && python3 - <<'PY'
import glob
p=glob.glob("patches/0004-*.patch")[0]; l=open(p).read().split("\n")
i=l.index("---"); l.insert(i+1,"NOTE-BELOW-DASHES: reviewer, see thread")
d=[k for k,x in enumerate(l) if x.startswith("diff --git a/tests/")][0]; l.insert(d,"NOTE-AFTER-DOCS: text after the docs file")
h=[k for k,x in enumerate(l) if x.startswith("Date: ")][0]; l.insert(h+1,"X-Review-Note: hand header")
if l[-1]=="": l.insert(len(l)-1,"NOTE-AT-END: trailing text")
open(p,"w").write("\n".join(l))
PY
  git commit -qam "hand notes in 0004")
}
