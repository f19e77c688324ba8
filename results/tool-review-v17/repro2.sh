source $W/fresh.sh f2 >/dev/null
ts apply --te-src ../te >/dev/null 2>&1
ts rebase --onto main3410 --te-src ../te 2>&1 | tail -2
git commit -qam "series on main3410"
ts pr --te-src ../te --identity "Real Person <real@person.org>" 2>&1 | grep -v '^\[te-series'
echo "rc=${PIPESTATUS[0]}"; ls pr-out 2>&1
