#!/bin/sh
# Builds the C# binding with Mono's C# compiler (Debian: apt-get install mono-devel):
#
#   bindings/csharp/build.sh [--tests] [OUTDIR]
#
# writes FerroDDS.dll (and its XML documentation) to OUTDIR (default bindings/csharp/bin),
# and with --tests the test programs ApiTests.exe and InteropPeer.exe beside it, over the
# C# the IDL compiler generates for the tests' types into OUTDIR/demo.cs. Programs find
# libferrodds_c.so on the library path:
#
#   cargo build --release -p ferrodds-c -p ferrodds-cli
#   target/release/ferrodds idl --lang csharp -o bindings/csharp/bin bindings/csharp/tests/demo.idl
#   bindings/csharp/build.sh --tests
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
    [ -f "$out/demo.cs" ] || { echo "build.sh: no $out/demo.cs: generate it from tests/demo.idl first" >&2; exit 1; }
    for program in ApiTests InteropPeer; do
        mcs -nologo -langversion:7 -warnaserror+ -r:"$out/FerroDDS.dll" -out:"$out/$program.exe" \
            "$here/tests/$program.cs" "$here/tests/Reading.cs" "$here/tests/Check.cs" "$out/demo.cs"
    done
fi
