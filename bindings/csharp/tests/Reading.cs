// The test type, with its type support written by hand until `ferrodds idl --lang csharp`
// generates them: demo::Reading { @key long id; string text; }, final (and, for the
// representation tests, demo::AppendableReading, the same members appendable). The bytes
// are those of crates/ferrodds-c/tests/c/api_test.c: XCDR1 `00 01 00 01 | 07 00 00 00 |
// 03 00 00 00 | 68 69 00 | 00` for { 7, "hi" }.
using System;
using System.Text;
using FerroDDS;

namespace FerroDDS.Tests
{
    public sealed class Reading : IEquatable<Reading>
    {
        public int Id;
        public string Text = "";

        public Reading() { }

        public Reading(int id, string text)
        {
            Id = id;
            Text = text;
        }

        public bool Equals(Reading other) { return other != null && Id == other.Id && Text == other.Text; }
        public override bool Equals(object obj) { return Equals(obj as Reading); }
        public override int GetHashCode() { return Id; }
        public override string ToString() { return "Reading { " + Id + ", \"" + Text + "\" }"; }
    }

    public sealed class ReadingTypeSupport : ITypeSupport<Reading>
    {
        private readonly bool _appendable;

        // One sample at a time per thread: the writer serializes under its own lock, and a
        // type support may serve several writers.
        [ThreadStatic] private static byte[] _scratch;

        public ReadingTypeSupport(bool appendable = false)
        {
            _appendable = appendable;
        }

        public string TypeName { get { return _appendable ? "demo::AppendableReading" : "demo::Reading"; } }

        public string Idl
        {
            get
            {
                return "module demo {\n  @" + (_appendable ? "appendable struct AppendableReading" : "final struct Reading")
                    + " {\n    @key long id;\n    string text;\n  };\n};\n";
            }
        }

        public void Serialize(Reading sample, CdrWriter writer, DataRepresentation representation)
        {
            int textBytes = Encoding.UTF8.GetByteCount(sample.Text);
            // XCDR2 of an appendable struct: a DHEADER (the body's size) before the members.
            bool delimited = _appendable && representation == DataRepresentation.Xcdr2;
            int members = 4 + 4 + textBytes + 1;
            int body = (delimited ? 4 : 0) + members;
            int padding = (4 - body % 4) % 4;
            int total = 4 + body + padding;
            if (_scratch == null || _scratch.Length < total)
            {
                _scratch = new byte[Math.Max(total, 64)];
            }
            byte[] b = _scratch;
            // The encapsulation: CDR_LE, CDR2_LE or D_CDR2_LE; its options count the padding.
            b[0] = 0;
            b[1] = representation == DataRepresentation.Xcdr1 ? (byte)0x01 : delimited ? (byte)0x09 : (byte)0x07;
            b[2] = 0;
            b[3] = (byte)padding;
            int at = 4;
            if (delimited)
            {
                at = Int32(b, at, members);
            }
            at = Int32(b, at, sample.Id);
            at = Int32(b, at, textBytes + 1);
            at += Encoding.UTF8.GetBytes(sample.Text, 0, sample.Text.Length, b, at);
            Array.Clear(b, at, 1 + padding);
            writer.WriteBytes(b, 0, total);
        }

        public Reading Deserialize(byte[] data, int offset, int length)
        {
            int end = offset + length;
            if (length < 8)
            {
                throw new FormatException("a demo::Reading takes at least 8 bytes, not " + length);
            }
            // Odd encapsulation kinds are little endian (CDR_LE 1, CDR2_LE 7, D_CDR2_LE 9).
            bool little = (data[offset + 1] & 1) == 1;
            int at = offset + 4;
            if (data[offset + 1] == 0x08 || data[offset + 1] == 0x09)
            {
                at += 4;
            }
            var sample = new Reading { Id = Int32(data, at, little) };
            at += 4;
            // A key-only sample (a dispose) ends after the key.
            if (end - at >= 4)
            {
                int n = Int32(data, at, little);
                if (n < 1 || at + 4 + n > end)
                {
                    throw new FormatException("a string of " + n + " bytes in " + (end - at - 4));
                }
                sample.Text = Encoding.UTF8.GetString(data, at + 4, n - 1);
            }
            return sample;
        }

        private static int Int32(byte[] b, int at, int value)
        {
            b[at] = (byte)value;
            b[at + 1] = (byte)(value >> 8);
            b[at + 2] = (byte)(value >> 16);
            b[at + 3] = (byte)(value >> 24);
            return at + 4;
        }

        private static int Int32(byte[] b, int at, bool little)
        {
            return little
                ? b[at] | b[at + 1] << 8 | b[at + 2] << 16 | b[at + 3] << 24
                : b[at + 3] | b[at + 2] << 8 | b[at + 1] << 16 | b[at] << 24;
        }
    }
}
