#!/bin/sh
# Builds the Cyclone DDS (C) shape application: build.sh OUTDIR -> OUTDIR/cyclone_c_shape
# (ShapeType.idl compiled by idlc at build time, nothing generated is kept in the repository).
# Needs Debian's cyclonedds-dev (dds/dds.h, libddsc.so), cyclonedds-tools (idlc) and gcc.
# Does nothing when OUTDIR/cyclone_c_shape is newer than its sources. Safe to run concurrently.
set -eu

if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
case $0 in */*) src=${0%/*} ;; *) src=. ;; esac
src=$(cd "$src" && pwd)
out=$1
bin=$out/cyclone_c_shape

if ! command -v idlc >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1 \
   || [ ! -f /usr/include/dds/dds.h ]; then
  echo "cyclone_c_shape: Cyclone DDS C development files not found (needs idlc, /usr/include/dds/dds.h, gcc: apt-get install cyclonedds-dev cyclonedds-tools gcc)" >&2
  exit 1
fi

if [ -x "$bin" ] && [ "$bin" -nt "$src/shape_main.c" ] && [ "$bin" -nt "$src/ShapeType.idl" ] \
   && [ "$bin" -nt "$src/build.sh" ]; then
  exit 0
fi

mkdir -p "$out"
gen=$out/gen.$$
trap 'rm -rf "$gen" "$bin.tmp.$$"' EXIT
mkdir -p "$gen"
idlc -o "$gen" "$src/ShapeType.idl"
gcc -std=gnu11 -O2 -Wall -Wextra -o "$bin.tmp.$$" -I"$gen" \
  "$src/shape_main.c" "$gen/ShapeType.c" -lddsc -pthread
mv -f "$bin.tmp.$$" "$bin"
