#!/bin/sh
# Builds the Cyclone DDS side of scripts/bench-scale: build.sh OUTDIR -> OUTDIR/cyclone_scale_node
# (ShapeType.idl of the Cyclone shape application, compiled by idlc at build time).
# Needs Debian's cyclonedds-dev, cyclonedds-tools (idlc) and gcc.
set -eu
case $0 in */*) src=${0%/*} ;; *) src=. ;; esac
src=$(cd "$src" && pwd)
out=$1
mkdir -p "$out"
gen=$out/gen.$$
trap 'rm -rf "$gen"' EXIT
mkdir -p "$gen"
idlc -o "$gen" "$src/../../tests/interop/cyclone_c_shape/ShapeType.idl"
gcc -std=gnu11 -O2 -Wall -Wextra -o "$out/cyclone_scale_node" -I"$gen" \
  "$src/cyclone_scale_node.c" "$gen/ShapeType.c" -lddsc -pthread
