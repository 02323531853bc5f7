#!/bin/sh
# Builds the C# binding with Mono's C# compiler (Debian: apt-get install mono-devel):
#
#   bindings/csharp/build.sh [--tests] [OUTDIR]
#
# writes FerroDDS.dll (and its XML documentation) to OUTDIR (default bindings/csharp/bin),
# and with --tests the test programs ApiTests.exe and InteropPeer.exe beside it. Programs
# find libferrodds_c.so on the library path:
#
#   cargo build --release -p ferrodds-c
#   LD_LIBRARY_PATH=target/release mono bindings/csharp/bin/ApiTests.exe 0 write_take
#
# The library is C# 7 over netstandard2.0's API, so that FerroDDS/FerroDDS.csproj builds the
# same sources with the .NET SDK.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tests=false
if [ "${1:-}" = --tests ]; then
    tests=true
    shift
fi
out=${1:-$here/bin}
mkdir -p "$out"
mcs -nologo -target:library -langversion:7 -unsafe+ -optimize+ -warnaserror+ \
    -doc:"$out/FerroDDS.xml" -out:"$out/FerroDDS.dll" "$here"/FerroDDS/*.cs
if $tests; then
    for program in ApiTests InteropPeer; do
        mcs -nologo -langversion:7 -warnaserror+ -r:"$out/FerroDDS.dll" -out:"$out/$program.exe" \
            "$here/tests/$program.cs" "$here/tests/Reading.cs" "$here/tests/Check.cs"
    done
fi
