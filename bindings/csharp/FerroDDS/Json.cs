// FerroDDS's JSON view for the C# binding: a reusable writer that generated code appends a
// sample's JSON text to, and a reader that generated code parses JSON text with, both
// without a document object in between (the JSON path of OpenDDSharp goes through one).
//
// The view is crates/ferrodds-cdr's (json.rs, dynamic/value.rs; docs/serialization.md,
// "JSON view"): structs as objects (base members first), enums by enumerator name,
// bitmasks as integers, unions as {"discriminator": d, "<branch>": v}, absent optionals as
// null, chars as one-character strings, non-finite floats as "NaN"/"Infinity"/"-Infinity",
// sequences and arrays as arrays but sequences of octets as base64 text (RFC 4648, padded;
// an array of integers is read too). `ferrodds idl --lang csharp` generates the calls.
// C# 7 as Mono's mcs compiles it, netstandard2.0 APIs only.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;
using System.Runtime.InteropServices;

namespace FerroDDS
{
    /// <summary>JSON text that is not a sample of the type, or a sample that has no JSON
    /// view: what is wrong, where in the text, and in which member.</summary>
    public sealed class JsonException : SampleException
    {
        /// <summary>An error; <paramref name="offset"/> is the index of the byte of the
        /// UTF-8 text it was found at, -1 when writing.</summary>
        public JsonException(string what, int offset = -1) : base(what)
        {
            Offset = offset;
        }

        /// <summary>The index of the byte of the UTF-8 text the error was found at; -1 for
        /// an error in writing.</summary>
        public int Offset { get; private set; }

        /// <inheritdoc/>
        protected override string Where
        {
            get { return Offset < 0 ? "" : " (at byte " + Offset + ")"; }
        }

        /// <summary>The error for a null where the IDL type has a value.</summary>
        public static JsonException Null()
        {
            return new JsonException("null where the IDL type has a value (only @optional members may be null)");
        }
    }

    /// <summary>A sample type's JSON view: what <c>ferrodds idl --lang csharp</c> generates
    /// beside <see cref="ITypeSupport{T}"/>, for the JSON path of the binding's writers and
    /// readers (<c>DataWriter.WriteJson</c>, <c>DataReader.TakeJson</c>).</summary>
    public interface IJsonSupport<T>
    {
        /// <summary><paramref name="sample"/> as FerroDDS's JSON view writes it.</summary>
        string ToJson(T sample);

        /// <summary><paramref name="sample"/>'s JSON into <paramref name="writer"/> (reset
        /// first), which allocates nothing once it has grown to the sample but a short string
        /// per float written.</summary>
        void ToJson(T sample, JsonWriter writer);

        /// <summary>The sample the JSON text <paramref name="json"/> describes: members in any
        /// order, unknown ones ignored, absent optionals null.</summary>
        T FromJson(string json);

        /// <summary>The sample the text of <paramref name="reader"/> describes (UTF-8 read as
        /// it is, without a string made of it), read into <paramref name="into"/> when it is
        /// not null: its nested objects, lists and arrays of octets of the same length filled
        /// in place.</summary>
        T FromJson(JsonReader reader, T into);
    }

    /// <summary>Appends a value of a generated type as JSON (the <c>_Json.Write_T</c>
    /// methods).</summary>
    public delegate void JsonWrite<T>(JsonWriter writer, T value);

    /// <summary>Reads a value of a generated type from JSON (the <c>_Json.Read_T</c>
    /// methods), into <paramref name="into"/> when it is not null.</summary>
    public delegate T JsonRead<T>(JsonReader reader, T into);

    /// <summary>A growable buffer of JSON text in UTF-8 (as it crosses to FerroDDS), reused
    /// from sample to sample: once it has grown to the largest sample, writing allocates
    /// nothing but a short string per float (its digits).</summary>
    public sealed class JsonWriter
    {
        // Always one byte more than `length`, for the NUL the C API wants.
        byte[] text;
        int length;

        /// <summary>An empty writer with room for <paramref name="capacity"/> bytes.</summary>
        public JsonWriter(int capacity = 256)
        {
            text = new byte[Math.Max(capacity, 16) + 1];
        }

        /// <summary>The bytes written.</summary>
        public int Length { get { return length; } }

        /// <summary>The buffer; its first <see cref="Length"/> bytes are the text.</summary>
        public byte[] Buffer { get { return text; } }

        /// <summary>Forgets what was written, keeping the buffer.</summary>
        public void Reset()
        {
            length = 0;
        }

        /// <summary>The text written.</summary>
        public override string ToString()
        {
            return Encoding.UTF8.GetString(text, 0, length);
        }

        /// <summary>The buffer with a NUL after the text.</summary>
        internal byte[] Utf8Z()
        {
            text[length] = 0;
            return text;
        }

        void Room(int more)
        {
            if (length + more + 1 > text.Length)
            {
                Array.Resize(ref text, Math.Max(2 * text.Length, length + more + 1));
            }
        }

        /// <summary>Appends <paramref name="s"/> as it is (punctuation and member names,
        /// which need no escape).</summary>
        public void Raw(string s)
        {
            Room(s.Length);
            for (int i = 0; i < s.Length; i++)
            {
                char c = s[i];
                if (c >= 0x80)
                {
                    Utf8(s, i, s.Length - i);
                    return;
                }
                text[length++] = (byte)c;
            }
        }

        /// <summary>Appends the ASCII character <paramref name="c"/>.</summary>
        public void Raw(char c)
        {
            if (c >= 0x80)
            {
                Utf8(c.ToString(), 0, 1);
                return;
            }
            Room(1);
            text[length++] = (byte)c;
        }

        void Utf8(string s, int from, int count)
        {
            Room(Encoding.UTF8.GetMaxByteCount(count));
            length += Encoding.UTF8.GetBytes(s, from, count, text, length);
        }

        /// <summary><c>null</c>: an absent optional.</summary>
        public void WriteNull() { Raw("null"); }

        /// <summary><c>true</c> or <c>false</c>.</summary>
        public void WriteBool(bool v) { Raw(v ? "true" : "false"); }

        /// <summary>A signed integer.</summary>
        public void WriteInt64(long v)
        {
            if (v < 0)
            {
                Raw('-');
                // -(v + 1) + 1 has no overflow at long.MinValue.
                WriteUInt64((ulong)(-(v + 1)) + 1);
            }
            else
            {
                WriteUInt64((ulong)v);
            }
        }

        /// <summary>An unsigned integer.</summary>
        public void WriteUInt64(ulong v)
        {
            Room(20);
            int start = length;
            do
            {
                text[length++] = (byte)('0' + (int)(v % 10));
                v /= 10;
            }
            while (v != 0);
            Array.Reverse(text, start, length - start);
        }

        /// <summary>A float64: a number that reads back as the same double (with a
        /// fraction or exponent, as FerroDDS writes floats), or "NaN", "Infinity",
        /// "-Infinity".</summary>
        public void WriteDouble(double v)
        {
            if (double.IsNaN(v))
            {
                Raw("\"NaN\"");
            }
            else if (double.IsPositiveInfinity(v))
            {
                Raw("\"Infinity\"");
            }
            else if (double.IsNegativeInfinity(v))
            {
                Raw("\"-Infinity\"");
            }
            else
            {
                // G17 always reads back as the same double ("R" does not on every runtime).
                string s = v.ToString("G17", CultureInfo.InvariantCulture);
                Raw(s);
                if (s.IndexOf('.') < 0 && s.IndexOf('E') < 0)
                {
                    Raw(".0");
                }
            }
        }

        /// <summary>A float32, as the float64 of the same value (as FerroDDS writes it).</summary>
        public void WriteSingle(float v) { WriteDouble(v); }

        /// <summary>A char: a one-character string.</summary>
        public void WriteChar(char c)
        {
            if (c >= 0x80)
            {
                // A lone UTF-16 unit: a string of one, as the encoder takes it (rare).
                WriteString(c.ToString());
                return;
            }
            Room(8);
            text[length++] = (byte)'"';
            if (c < 0x20 || c == '"' || c == '\\')
            {
                Escaped(c);
            }
            else
            {
                text[length++] = (byte)c;
            }
            Raw('"');
        }

        /// <summary>A string, escaped as JSON needs.</summary>
        public void WriteString(string s)
        {
            if (s == null)
            {
                throw JsonException.Null();
            }
            Room(s.Length + 2);
            text[length++] = (byte)'"';
            int i = 0;
            while (i < s.Length)
            {
                char c = s[i];
                if (c >= 0x80)
                {
                    // A run of non-ASCII characters (surrogate pairs stay whole) in UTF-8.
                    int end = i + 1;
                    while (end < s.Length && s[end] >= 0x80)
                    {
                        end++;
                    }
                    Utf8(s, i, end - i);
                    i = end;
                    continue;
                }
                if (c < 0x20 || c == '"' || c == '\\')
                {
                    Escaped(c);
                }
                else
                {
                    Room(1);
                    text[length++] = (byte)c;
                }
                i++;
            }
            Raw('"');
        }

        void Escaped(char c)
        {
            switch (c)
            {
                case '"': Raw("\\\""); return;
                case '\\': Raw("\\\\"); return;
                case '\n': Raw("\\n"); return;
                case '\r': Raw("\\r"); return;
                case '\t': Raw("\\t"); return;
                case '\b': Raw("\\b"); return;
                case '\f': Raw("\\f"); return;
            }
            Raw("\\u00");
            Raw(Hex[c >> 4]);
            Raw(Hex[c & 15]);
        }

        const string Hex = "0123456789abcdef";

        /// <summary>Throws unless dimension <paramref name="dimension"/> of
        /// <paramref name="array"/> has <paramref name="length"/> elements.</summary>
        public void CheckArray(Array array, int dimension, int length)
        {
            if (array == null)
            {
                throw JsonException.Null();
            }
            if (array.GetLength(dimension) != length)
            {
                throw new JsonException("dimension " + dimension + " of the array has " + array.GetLength(dimension) + " elements, not " + length);
            }
        }

        /// <summary>A sequence of octets: base64 text (RFC 4648, padded).</summary>
        public unsafe void WriteOctets(byte[] bytes)
        {
            if (bytes == null)
            {
                throw JsonException.Null();
            }
            int n = bytes.Length;
            Room(4 * ((n + 2) / 3) + 2);
            text[length++] = (byte)'"';
            fixed (byte* input = bytes)
            fixed (byte* output = text)
            fixed (byte* digits = Base64.Digits)
            fixed (ushort* pairs = Base64.Pairs)
            {
                byte* o = output + length;
                if (n >= Base64.NativeFrom)
                {
                    int written = Base64.Encode(input, n, o, text.Length - length);
                    if (written >= 0)
                    {
                        length += written;
                        text[length++] = (byte)'"';
                        return;
                    }
                }
                int i = 0;
                // Two digits per lookup: Mono's JIT pays for each operation.
                for (; i + 3 <= n; i += 3)
                {
                    int v = (input[i] << 16) | (input[i + 1] << 8) | input[i + 2];
                    *(ushort*)o = pairs[v >> 12];
                    *(ushort*)(o + 2) = pairs[v & 0xfff];
                    o += 4;
                }
                if (i < n)
                {
                    int v = input[i] << 16;
                    if (i + 1 < n)
                    {
                        v |= input[i + 1] << 8;
                    }
                    o[0] = digits[v >> 18];
                    o[1] = digits[(v >> 12) & 63];
                    o[2] = i + 1 < n ? digits[(v >> 6) & 63] : (byte)'=';
                    o[3] = (byte)'=';
                    o += 4;
                }
                length = (int)(o - output);
            }
            text[length++] = (byte)'"';
        }
    }

    static class Base64
    {
        // From this many bytes, octets are encoded and decoded by the native library (SIMD:
        // 64 KiB in a few microseconds, where the loops below take 49 to encode and 82 to
        // decode on Mono); below it the call costs more than the loop.
        internal const int NativeFrom = 128;

        // Declared here rather than in Native.cs: this file, Cdr.cs and TypeSupport.cs are
        // the runtime of generated code, which compiles without the rest of the binding.
        const string Lib = "ferrodds_c";
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] static extern unsafe int ferrodds_base64_encode(byte* bytes, UIntPtr size, byte* text, UIntPtr capacity);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] static extern unsafe int ferrodds_base64_decode(byte* text, UIntPtr size, byte* bytes, UIntPtr capacity);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] static extern unsafe int ferrodds_json_string_end(byte* text, UIntPtr size);

        // Whether the native library has the functions: false without it (the JSON code
        // works alone: the tests' vector driver runs it so), and the loops then do
        // everything.
        static readonly bool native = Probe();

        static unsafe bool Probe()
        {
            try
            {
                // Nothing to read or write: each call only has to be found.
                return ferrodds_base64_encode(null, UIntPtr.Zero, null, UIntPtr.Zero) == 0
                    && ferrodds_base64_decode(null, UIntPtr.Zero, null, UIntPtr.Zero) == 0
                    && ferrodds_json_string_end(null, UIntPtr.Zero) == 0;
            }
            catch (DllNotFoundException) { return false; }
            catch (EntryPointNotFoundException) { return false; }
        }

        /// <summary>The text's length, or -1 where the loop is to encode.</summary>
        internal static unsafe int Encode(byte* bytes, int size, byte* text, int capacity)
        {
            return native ? ferrodds_base64_encode(bytes, (UIntPtr)size, text, (UIntPtr)capacity) : -1;
        }

        /// <summary>The number of bytes decoded, or a negative number where the loop is to
        /// decode (the text is not base64, or the library is missing).</summary>
        internal static unsafe int Decode(byte* text, int size, byte* bytes, int capacity)
        {
            return native ? ferrodds_base64_decode(text, (UIntPtr)size, bytes, (UIntPtr)capacity) : -1;
        }

        /// <summary>The offset of the first quote or backslash, or -1 where the loop is to
        /// look.</summary>
        internal static unsafe int StringEnd(byte* text, int size)
        {
            return native ? ferrodds_json_string_end(text, (UIntPtr)size) : -1;
        }

        internal static readonly byte[] Digits = Encoding.ASCII.GetBytes("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");

        // Each 12 bits as their two digits, in memory order.
        internal static readonly ushort[] Pairs = MakePairs();

        // Each byte's value as the k-th digit of a group of four (256 entries for each k),
        // shifted into place; negative where the byte is no digit, so that a group's ORed
        // values are negative when any of its bytes is none.
        internal static readonly int[] Values = MakeValues();

        static ushort[] MakePairs()
        {
            var pairs = new ushort[4096];
            for (int i = 0; i < pairs.Length; i++)
            {
                byte first = Digits[i >> 6], second = Digits[i & 63];
                pairs[i] = BitConverter.IsLittleEndian ? (ushort)(first | (second << 8)) : (ushort)((first << 8) | second);
            }
            return pairs;
        }

        static int[] MakeValues()
        {
            var values = new int[4 * 256];
            for (int i = 0; i < values.Length; i++)
            {
                values[i] = int.MinValue;
            }
            for (int k = 0; k < 4; k++)
            {
                for (int i = 0; i < Digits.Length; i++)
                {
                    values[256 * k + Digits[i]] = i << (18 - 6 * k);
                }
            }
            return values;
        }
    }

    /// <summary>Reads JSON text in UTF-8; generated code calls it member by member and throws
    /// <see cref="JsonException"/> on anything that is not a sample of the type.</summary>
    public sealed class JsonReader
    {
        // Nesting beyond this is refused: hostile text must not overflow the stack.
        const int MaxDepth = 256;

        byte[] s;
        int start, end;
        int at;
        int depth;
        // The last string token: where its bytes are in `s` (no escapes), or the decoded
        // string (escapes).
        int tokenStart, tokenLength;
        string token;

        /// <summary>A reader of <paramref name="text"/>.</summary>
        public JsonReader(string text)
        {
            if (text == null)
            {
                throw new ArgumentNullException("text");
            }
            s = Encoding.UTF8.GetBytes(text);
            end = s.Length;
        }

        /// <summary>A reader of the <paramref name="count"/> bytes of UTF-8 at
        /// <paramref name="offset"/> of <paramref name="utf8"/> (not copied: they must not
        /// change while it reads).</summary>
        public JsonReader(byte[] utf8, int offset, int count)
        {
            if (utf8 == null)
            {
                throw new ArgumentNullException("utf8");
            }
            if (offset < 0 || count < 0 || offset > utf8.Length - count)
            {
                throw new ArgumentOutOfRangeException("count", "offset and count lie outside the array");
            }
            s = utf8;
            start = at = offset;
            end = offset + count;
        }

        /// <summary>Reads the <paramref name="size"/> bytes at <paramref name="data"/> from now
        /// on, copied into a buffer the reader keeps.</summary>
        internal unsafe void Load(byte* data, int size)
        {
            if (s == null || s.Length < size)
            {
                s = new byte[Math.Max(size, 2 * (s == null ? 0 : s.Length))];
            }
            if (size > 0)
            {
                System.Runtime.InteropServices.Marshal.Copy((IntPtr)data, s, 0, size);
            }
            start = at = depth = 0;
            end = size;
            token = null;
        }

        /// <summary>The error "expected <paramref name="what"/>" at the current byte.</summary>
        public JsonException Expected(string what)
        {
            SkipSpace();
            string found;
            if (at >= end)
            {
                found = "the end of the text";
            }
            else if (s[at] < 0x20 || s[at] >= 0x80)
            {
                found = "byte 0x" + s[at].ToString("x2");
            }
            else
            {
                found = "'" + (char)s[at] + "'";
            }
            return new JsonException("expected " + what + ", found " + found, at - start);
        }

        /// <summary>The error for a member the object just read lacks.</summary>
        public JsonException Missing()
        {
            return new JsonException("absent from the object", at - start);
        }

        void SkipSpace()
        {
            while (at < end)
            {
                byte c = s[at];
                if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                {
                    return;
                }
                at++;
            }
        }

        byte Peek()
        {
            SkipSpace();
            return at < end ? s[at] : (byte)0;
        }

        void Expect(char c, string what)
        {
            if (Peek() != c)
            {
                throw Expected(what);
            }
            at++;
        }

        /// <summary>Nothing but white space is left.</summary>
        public void End()
        {
            SkipSpace();
            if (at < end)
            {
                throw Expected("the end of the text");
            }
        }

        void Deeper()
        {
            if (++depth > MaxDepth)
            {
                throw new JsonException("nested deeper than " + MaxDepth, at - start);
            }
        }

        /// <summary><c>{</c>: an object begins.</summary>
        public void BeginObject()
        {
            Expect('{', "an object");
            Deeper();
        }

        /// <summary>Moves to the next member of the object begun (<paramref name="count"/>
        /// counts the members seen; start at 0), whose name <see cref="Is"/> then tests;
        /// false at the object's end.</summary>
        public bool NextMember(ref int count)
        {
            if (Peek() == '}')
            {
                at++;
                depth--;
                return false;
            }
            if (count > 0)
            {
                Expect(',', "',' or '}'");
            }
            count++;
            if (Peek() != '"')
            {
                throw Expected("a member name");
            }
            Token();
            Expect(':', "':'");
            return true;
        }

        /// <summary><c>[</c>: an array begins.</summary>
        public void BeginArray()
        {
            Expect('[', "an array");
            Deeper();
        }

        /// <summary>Moves to the next element of the array begun (<paramref name="count"/>
        /// counts the elements seen; start at 0); false at the array's end.</summary>
        public bool NextElement(ref int count)
        {
            if (Peek() == ']')
            {
                at++;
                depth--;
                return false;
            }
            if (count > 0)
            {
                Expect(',', "',' or ']'");
            }
            count++;
            return true;
        }

        /// <summary>Moves to element <paramref name="index"/> of an array of
        /// <paramref name="size"/> elements.</summary>
        public void Element(int index, int size)
        {
            byte c = Peek();
            if (c == ']' || (index > 0 && c != ','))
            {
                throw Expected("an array of " + size + " elements");
            }
            if (index > 0)
            {
                at++;
            }
        }

        /// <summary><c>]</c>: the end of an array of <paramref name="size"/> elements.</summary>
        public void EndArray(int size)
        {
            Expect(']', "an array of " + size + " elements");
            depth--;
        }

        /// <summary>Whether the last member name or enumerator read is
        /// <paramref name="name"/> (ASCII, as IDL identifiers are).</summary>
        public bool Is(string name)
        {
            if (token != null)
            {
                return token == name;
            }
            if (tokenLength != name.Length)
            {
                return false;
            }
            for (int i = 0; i < tokenLength; i++)
            {
                if (s[tokenStart + i] != name[i])
                {
                    return false;
                }
            }
            return true;
        }

        /// <summary>Reads a string as the token <see cref="Is"/> tests (an enumerator).</summary>
        public void ReadToken(string what)
        {
            if (Peek() != '"')
            {
                throw Expected(what);
            }
            Token();
        }

        // Reads the string at `at` into the token, decoding it only when it has escapes.
        void Token()
        {
            int first = at + 1;
            int i = first;
            while (i < end && s[i] != '"' && s[i] != '\\' && s[i] >= 0x20)
            {
                i++;
            }
            if (i < end && s[i] == '"')
            {
                tokenStart = first;
                tokenLength = i - first;
                token = null;
                at = i + 1;
            }
            else
            {
                token = ReadString();
            }
        }

        /// <summary><c>null</c> (an absent optional), read if it is there.</summary>
        public bool IsNull()
        {
            if (Peek() != 'n')
            {
                return false;
            }
            Literal("null");
            return true;
        }

        void Literal(string word)
        {
            for (int i = 0; i < word.Length; i++)
            {
                if (at + i >= end || s[at + i] != word[i])
                {
                    throw Expected(word);
                }
            }
            at += word.Length;
        }

        /// <summary>Skips one value of any kind (a member the type does not have).</summary>
        public void SkipValue()
        {
            switch ((char)Peek())
            {
                case '{':
                    BeginObject();
                    int members = 0;
                    while (NextMember(ref members))
                    {
                        SkipValue();
                    }
                    return;
                case '[':
                    BeginArray();
                    int elements = 0;
                    while (NextElement(ref elements))
                    {
                        SkipValue();
                    }
                    return;
                case '"':
                    Token();
                    return;
                case 't': Literal("true"); return;
                case 'f': Literal("false"); return;
                case 'n': Literal("null"); return;
                default:
                    ReadDouble();
                    return;
            }
        }

        /// <summary>A boolean.</summary>
        public bool ReadBool()
        {
            switch ((char)Peek())
            {
                case 't': Literal("true"); return true;
                case 'f': Literal("false"); return false;
                default: throw Expected("a boolean");
            }
        }

        /// <summary>An integer from <paramref name="min"/> to <paramref name="max"/>.</summary>
        public long ReadInt64(long min, long max)
        {
            bool negative = Peek() == '-';
            ulong magnitude;
            if (!Digits(negative ? 1 : 0, out magnitude)
                || (negative ? magnitude > (ulong)(-(min + 1)) + 1 : magnitude > (ulong)max))
            {
                throw Expected("an integer from " + min + " to " + max);
            }
            return negative ? (long)(0 - magnitude) : (long)magnitude;
        }

        /// <summary>An integer from 0 to <paramref name="max"/>.</summary>
        public ulong ReadUInt64(ulong max)
        {
            ulong v;
            if (Peek() == '-' || !Digits(0, out v) || v > max)
            {
                throw Expected("an integer from 0 to " + max);
            }
            return v;
        }

        // The digits of an integer after `skip` bytes (a sign), `at` moved past them: false
        // (and `at` unmoved) when there are none, when they overflow 64 bits, or when a
        // fraction or exponent follows.
        bool Digits(int skip, out ulong v)
        {
            v = 0;
            int i = at + skip;
            int first = i;
            while (i < end && s[i] >= '0' && s[i] <= '9')
            {
                ulong digit = (ulong)(s[i] - '0');
                if (v > (ulong.MaxValue - digit) / 10)
                {
                    return false;
                }
                v = v * 10 + digit;
                i++;
            }
            if (i == first || (i - first > 1 && s[first] == '0')
                || (i < end && (s[i] == '.' || s[i] == 'e' || s[i] == 'E')))
            {
                return false;
            }
            at = i;
            return true;
        }

        /// <summary>A float64: a number, or "NaN", "Infinity", "-Infinity".</summary>
        public double ReadDouble()
        {
            const string what = "a number, \"NaN\", \"Infinity\" or \"-Infinity\"";
            if (Peek() == '"')
            {
                int quote = at;
                Token();
                if (Is("NaN")) return double.NaN;
                if (Is("Infinity")) return double.PositiveInfinity;
                if (Is("-Infinity")) return double.NegativeInfinity;
                at = quote;
                throw Expected(what);
            }
            // JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
            int i = at;
            if (i < end && s[i] == '-') i++;
            int digits = i;
            while (i < end && s[i] >= '0' && s[i] <= '9') i++;
            bool ok = i > digits && !(i - digits > 1 && s[digits] == '0');
            if (ok && i < end && s[i] == '.')
            {
                int fraction = ++i;
                while (i < end && s[i] >= '0' && s[i] <= '9') i++;
                ok = i > fraction;
            }
            if (ok && i < end && (s[i] == 'e' || s[i] == 'E'))
            {
                i++;
                if (i < end && (s[i] == '+' || s[i] == '-')) i++;
                int exponent = i;
                while (i < end && s[i] >= '0' && s[i] <= '9') i++;
                ok = i > exponent;
            }
            double v;
            if (!ok || !double.TryParse(Encoding.ASCII.GetString(s, at, i - at), NumberStyles.Float, CultureInfo.InvariantCulture, out v)
                || double.IsInfinity(v))
            {
                throw Expected(what);
            }
            at = i;
            return v;
        }

        /// <summary>A float32 (the float64 read, rounded to the nearest float32).</summary>
        public float ReadSingle() { return (float)ReadDouble(); }

        /// <summary>A one-character string.</summary>
        public char ReadChar()
        {
            // An ASCII character without escape, read in place (no string made).
            if (Peek() == '"' && at + 2 < end && s[at + 2] == '"' && s[at + 1] >= 0x20
                && s[at + 1] < 0x80 && s[at + 1] != '"' && s[at + 1] != '\\')
            {
                char ascii = (char)s[at + 1];
                at += 3;
                return ascii;
            }
            int quote = at;
            string c = ReadString();
            if (c.Length != 1)
            {
                at = quote;
                throw Expected("a one-character string");
            }
            return c[0];
        }

        /// <summary>A string, its escapes decoded.</summary>
        public string ReadString()
        {
            if (Peek() != '"')
            {
                throw Expected("a string");
            }
            int first = ++at;
            int i = first;
            while (i < end && s[i] != '"' && s[i] != '\\' && s[i] >= 0x20)
            {
                i++;
            }
            if (i < end && s[i] == '"')
            {
                at = i + 1;
                return Encoding.UTF8.GetString(s, first, i - first);
            }
            var b = new StringBuilder(Encoding.UTF8.GetString(s, first, i - first));
            at = i;
            while (true)
            {
                if (at >= end)
                {
                    throw Expected("'\"'");
                }
                byte c = s[at];
                if (c == '"')
                {
                    at++;
                    return b.ToString();
                }
                if (c < 0x20)
                {
                    throw Expected("a character of a string (control characters must be escaped)");
                }
                if (c != '\\')
                {
                    int run = at;
                    while (at < end && s[at] != '"' && s[at] != '\\' && s[at] >= 0x20)
                    {
                        at++;
                    }
                    b.Append(Encoding.UTF8.GetString(s, run, at - run));
                    continue;
                }
                if (at + 1 >= end)
                {
                    throw Expected("an escape");
                }
                byte e = s[at + 1];
                at += 2;
                switch ((char)e)
                {
                    case '"': b.Append('"'); break;
                    case '\\': b.Append('\\'); break;
                    case '/': b.Append('/'); break;
                    case 'b': b.Append('\b'); break;
                    case 'f': b.Append('\f'); break;
                    case 'n': b.Append('\n'); break;
                    case 'r': b.Append('\r'); break;
                    case 't': b.Append('\t'); break;
                    case 'u':
                        int code = 0;
                        for (int k = 0; k < 4; k++)
                        {
                            int h = at < end ? HexDigit(s[at]) : -1;
                            if (h < 0)
                            {
                                throw Expected("four hexadecimal digits");
                            }
                            code = code * 16 + h;
                            at++;
                        }
                        b.Append((char)code);
                        break;
                    default:
                        at -= 1;
                        throw Expected("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
                }
            }
        }

        static int HexDigit(byte c)
        {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        }

        /// <summary>A sequence of octets: base64 text (RFC 4648, padded), or an array of
        /// integers from 0 to 255; read into <paramref name="into"/> when it has their length.</summary>
        public unsafe byte[] ReadOctets(byte[] into = null)
        {
            byte c = Peek();
            if (c == '[')
            {
                var list = new List<byte>();
                BeginArray();
                int n = 0;
                while (NextElement(ref n))
                {
                    list.Add((byte)ReadUInt64(255));
                }
                return list.ToArray();
            }
            const string what = "base64 text (RFC 4648, padded) or an array of integers";
            if (c != '"')
            {
                throw Expected(what);
            }
            int first = at + 1;
            int quote = first;
            fixed (byte* text = s)
            {
                if (end - first >= Base64.NativeFrom)
                {
                    // memchr in the native library; it stops at a backslash too, from where
                    // the loops below go on to the quote.
                    int found = Base64.StringEnd(text + first, end - first);
                    if (found >= 0)
                    {
                        quote = first + found;
                    }
                }
                // Eight bytes a step (a word has a '"' where its XOR with eight of them has
                // a zero byte): base64 text is long, and Mono's JIT pays for each step.
                const ulong ones = 0x0101010101010101UL, highs = 0x8080808080808080UL, quotes = 0x2222222222222222UL;
                // Four words a step while the text is long: half the steps' overhead again.
                while (quote + 32 <= end)
                {
                    ulong* w = (ulong*)(text + quote);
                    ulong x0 = w[0] ^ quotes, x1 = w[1] ^ quotes, x2 = w[2] ^ quotes, x3 = w[3] ^ quotes;
                    if (((((x0 - ones) & ~x0) | ((x1 - ones) & ~x1) | ((x2 - ones) & ~x2) | ((x3 - ones) & ~x3)) & highs) != 0)
                    {
                        break;
                    }
                    quote += 32;
                }
                while (quote + 8 <= end)
                {
                    ulong x = *(ulong*)(text + quote) ^ quotes;
                    if (((x - ones) & ~x & highs) != 0)
                    {
                        break;
                    }
                    quote += 8;
                }
                while (quote < end && text[quote] != '"')
                {
                    quote++;
                }
            }
            if (quote == end || (quote - first) % 4 != 0)
            {
                throw Expected(what);
            }
            int pad = quote - first >= 4 ? (s[quote - 1] == '=' ? (s[quote - 2] == '=' ? 2 : 1) : 0) : 0;
            int length = (quote - first) / 4 * 3 - pad;
            var result = into != null && into.Length == length ? into : new byte[length];
            int bad = -1;
            fixed (byte* text = s)
            fixed (byte* output = result)
            fixed (int* values = Base64.Values)
            {
                // Text the native decoder refuses is read again below, which says where it
                // goes wrong.
                if (length >= Base64.NativeFrom
                    && Base64.Decode(text + first, quote - first, output, length) == length)
                {
                    at = quote + 1;
                    return result;
                }
                // Whole groups of four digits; the last, padded one after.
                int groups = (quote - first) / 4 - (pad > 0 ? 1 : 0);
                byte* p = text + first;
                byte* o = output;
                int* v0 = values, v1 = values + 256, v2 = values + 512, v3 = values + 768;
                byte* last = p + 4 * groups;
                for (; p < last; p += 4, o += 3)
                {
                    int v = v0[p[0]] | v1[p[1]] | v2[p[2]] | v3[p[3]];
                    if (v < 0)
                    {
                        bad = (int)(p - text);
                        break;
                    }
                    o[0] = (byte)(v >> 16);
                    o[1] = (byte)(v >> 8);
                    o[2] = (byte)v;
                }
                if (bad < 0 && pad > 0)
                {
                    int v = values[p[0]] | values[256 + p[1]] | (pad == 1 ? values[512 + p[2]] : 0);
                    if (v < 0)
                    {
                        bad = (int)(p - text);
                    }
                    else
                    {
                        o[0] = (byte)(v >> 16);
                        if (pad == 1)
                        {
                            o[1] = (byte)(v >> 8);
                        }
                    }
                }
            }
            if (bad >= 0)
            {
                at = bad;
                throw Expected("a group of four base64 digits");
            }
            at = quote + 1;
            return result;
        }
    }

    /// <summary>JSON in and out for generated types: the <c>_Json</c> methods with the
    /// reader or writer made and the errors placed.</summary>
    public static class Json
    {
        /// <summary><paramref name="sample"/>'s JSON text, written by <paramref name="write"/>
        /// into <paramref name="writer"/> (reset first).</summary>
        public static void Write<T>(T sample, JsonWriter writer, string typeName, JsonWrite<T> write)
        {
            writer.Reset();
            try
            {
                write(writer, sample);
            }
            catch (JsonException e)
            {
                if (e.Path.Length == 0)
                {
                    e.Within(typeName, null);
                }
                throw;
            }
        }

        /// <summary>The sample the text of <paramref name="reader"/> holds, nothing after it,
        /// read into <paramref name="into"/> when it is not null.</summary>
        public static T Read<T>(JsonReader reader, string typeName, JsonRead<T> read, T into)
        {
            try
            {
                T value = read(reader, into);
                reader.End();
                return value;
            }
            catch (JsonException e)
            {
                if (e.Path.Length == 0)
                {
                    e.Within(typeName, null);
                }
                throw;
            }
        }
    }
}
