# te-src main: #3410 + an upstream edit of sequential.py that conflicts with patch 0003
mk_conflict() {
  local f=transformer_engine/pytorch/ops/fuser.py
  git -C $T/te-src checkout -q main
  git -C $T/proj/fork show HEAD~11:$f > $T/te-src/$f
  git -C $T/te-src commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)"
  sed -i 's/groups\[idx\] = OperationFuser(group)$/groups[idx] = OperationFuser(group)  # upstream/' $T/te-src/transformer_engine/pytorch/ops/sequential.py
  git -C $T/te-src commit -qam "Upstream: touch sequential.py"
}
