# upstream branch 'up' in te-src: #3410 merged, then a change to the line patch 0003 changes in sequential.py
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/te-src
git fetch -q $T/proj/fork series
PRE=$(git log --format=%H --grep='Reduce Grouped MLP' -1 FETCH_HEAD)
git checkout -q -b up d0067d0da6cb01811b8072a7d304f0e00344ce2b
git cherry-pick $PRE >/dev/null
sed -i 's/groups\[idx\] = OperationFuser(group)$/groups[idx] = OperationFuser(group)  # upstream/' transformer_engine/pytorch/ops/sequential.py
git commit -qam "Upstream change to sequential.py"
cd $T/proj
