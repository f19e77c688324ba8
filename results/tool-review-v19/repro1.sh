#!/bin/bash
# F1: a legacy 8-bit locale (de_DE.ISO-8859-1): a non-ASCII commit message makes export
# fail with an internal error (UnicodeEncodeError) or refuse a subject that round-trips fine.
source "$(dirname "$0")/fresh.sh" l1
mkdir -p /tmp/h32loc; [ -d /tmp/h32loc/de_DE.ISO-8859-1 ] || localedef -i de_DE -f ISO-8859-1 /tmp/h32loc/de_DE.ISO-8859-1
L1() { LOCPATH=/tmp/h32loc LANG=de_DE.ISO-8859-1 "$@"; }
ts apply --te-src $TE >/dev/null 2>&1
cd fork && echo "# note" >> transformer_engine/pytorch/ops/__init__.py
git -c user.name='Jürgen Müller' -c user.email=jm@example.com commit -qam "[PyTorch] Note the fuser's naïve path

The op list gets a note → for readers.

Signed-off-by: Jürgen Müller <jm@example.com>"
cd ..
echo "== (a) UTF-8 locale: export --dry-run"; ts export --dry-run 2>&1 | tail -2
echo "== (a) ISO-8859-1 locale: export --dry-run"; L1 ts export --dry-run; echo rc=$?
# the same message without the arrow (every character has a Latin-1 form)
git -C fork commit -q --amend -m "[PyTorch] Note the fuser's naïve path

The op list gets a note for readers.

Signed-off-by: Jürgen Müller <jm@example.com>"
echo "== (b) ISO-8859-1 locale: export"; L1 ts export; echo rc=$?
echo "== (b) UTF-8 locale: export"; ts export | tail -2; echo rc=$?
echo "== (c) ISO-8859-1 locale, nothing changed since the UTF-8 export: export --dry-run"; L1 ts export --dry-run; echo rc=$?
