make_conflict_branch() { # branch 'conflict' in $TE: edits a line patch 0004 changes
  (cd $TE && git checkout -q -b conflict d0067d0da6cb01811b8072a7d304f0e00344ce2b &&
   sed -i 's/    input, and a view of the extra input is output\./    input, and a view of the extra input is returned (upstream edit)./' transformer_engine/pytorch/ops/basic/add_extra_input.py &&
   git -c user.name=Up -c user.email=up@x commit -qam "Upstream: reword AddExtraInput doc" && git checkout -q --detach)
}
