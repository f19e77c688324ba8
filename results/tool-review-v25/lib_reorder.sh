# move commit matching $2 to just before commit matching $1 in fork (interactive rebase over series)
reorder_before() { # $1 = target subject substring, $2 = moved subject substring
  local base=$(git -C $T/fork rev-parse series~11)
  (cd $T/fork && A="$1" B="$2" GIT_SEQUENCE_EDITOR='python3 -c "
import sys,os;p=sys.argv[1];l=open(p).read().splitlines(True)
ia=[i for i,x in enumerate(l) if os.environ[\"A\"] in x][0]
ib=[i for i,x in enumerate(l) if os.environ[\"B\"] in x][0]
x=l.pop(ib); ia=[i for i,x in enumerate(l) if os.environ[\"A\"] in x][0]; l.insert(ia,x); open(p,\"w\").write(\"\".join(l))"' git rebase -q -i $base)
}
