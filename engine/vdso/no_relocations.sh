#!/bin/sh
# Fails (and removes the file) if the vDSO given has relocations: the loaders that take a
# vDSO (glibc's setup_vdso, Go's runtime) never apply any.
if readelf -rW "$1" | grep -q 'There are no relocations'; then
	exit 0
fi
echo "$1 has relocations" >&2
rm -f "$1"
exit 1
