#!/bin/bash
source /work/tool-review-v25/common.sh; set +e
cat >> $HOME/.gitconfig <<'C'
[am]
	messageid = true
	threeWay = false
	keepcr = false
[mailinfo]
	scissors = true
[diff]
	noprefix = true
	mnemonicPrefix = true
	algorithm = patience
	renames = copies
	context = 1
	interHunkContext = 5
	indentHeuristic = false
[format]
	signature = HOSTILE
	coverLetter = true
	numbered = true
	signOff = true
	thread = shallow
	suffix = .diff
	headers = "X-Hostile: 1\n"
[core]
	quotePath = false
	commentChar = ";"
	abbrev = 20
[commit]
	gpgSign = true
	verbose = true
[apply]
	whitespace = error-all
[notes]
	displayRef = refs/notes/te-series
[log]
	decorate = full
	showRoot = true
[gc]
	auto = 1
[pull]
	rebase = true
[merge]
	conflictStyle = zdiff3
[status]
	showUntrackedFiles = no
[advice]
	detachedHead = true
[trailer]
	separators = ":#"
C
ts apply --te-src $TE 2>&1 | grep -v "git am -3"; echo apply=$?
ts export; echo export=$?; git -C $T status --short
git -C $T/fork log -3 --format=%B | head -20
