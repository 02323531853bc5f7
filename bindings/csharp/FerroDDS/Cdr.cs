// CDR encoding for the C# binding: a growable, reusable buffer that generated type
// supports serialize into (so that writing a sample allocates nothing once the buffer has
// grown to the sample's size), and a reader over received bytes.
//
// The rules are crates/ferrodds-cdr's (encoder.rs, decoder.rs, member.rs, encapsulation.rs,
// sample.rs), which write what Cyclone DDS writes; spec references are to DDS-XTypes 1.3.
// `ferrodds idl --lang csharp` generates the calls; docs/idl.md describes the output.
// C# 7 as Mono's mcs compiles it, netstandard2.0 APIs only.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace FerroDDS
{
    /// <summary>How a type may evolve (XTypes 7.2.2.4.4), which decides its encoding.</summary>
    public enum Extensibility
    {
        /// <summary>Members back to back.</summary>
        Final,
        /// <summary>Members may be appended: a DHEADER in XCDR2.</summary>
        Appendable,
        /// <summary>Members carry their ids: EMHEADERs in XCDR2, a parameter list in XCDR1.</summary>
        Mutable,
    }

    /// <summary>A sample that cannot be read or written: what is wrong, and in which member
    /// (<see cref="CdrException"/> for CDR bytes, <see cref="JsonException"/> for JSON
    /// text).</summary>
    public abstract class SampleException : Exception
    {
        string type = "";
        string members = "";

        /// <summary>An error saying <paramref name="what"/>.</summary>
        protected SampleException(string what) : base(what)
        {
            What = what;
        }

        /// <summary>What is wrong.</summary>
        public string What { get; private set; }

        /// <summary>The member the error is in, <c>module::Type.member.member</c>.</summary>
        public string Path
        {
            get { return members.Length == 0 ? type : type + "." + members; }
        }

        /// <summary>Where in the input, as " (at ...)", or empty.</summary>
        protected abstract string Where { get; }

        /// <inheritdoc/>
        public override string Message
        {
            get { return Path.Length == 0 ? What + Where : Path + ": " + What + Where; }
        }

        /// <summary>Records that the error happened in <paramref name="member"/> (null: in
        /// the type itself) of <paramref name="typeName"/>; generated code calls this as the
        /// error leaves each type, innermost first.</summary>
        public void Within(string typeName, string member)
        {
            type = typeName;
            if (member != null)
            {
                members = members.Length == 0 ? member : member + "." + members;
            }
        }
    }

    /// <summary>Bytes that are not a sample of the type, or a sample that cannot be encoded:
    /// what is wrong, where in the bytes, and in which member.</summary>
    public sealed class CdrException : SampleException
    {
        /// <summary>An error; <paramref name="offset"/> counts from the first byte of the
        /// encapsulation header, -1 when encoding.</summary>
        public CdrException(string what, int offset = -1) : base(what)
        {
            Offset = offset;
        }

        /// <summary>Where in the serialized sample (from the first byte of its
        /// encapsulation header); -1 for an encoding error.</summary>
        public int Offset { get; private set; }

        /// <inheritdoc/>
        protected override string Where
        {
            get { return Offset < 0 ? "" : " (at byte " + Offset + ")"; }
        }

        /// <summary>The error for a null where the IDL type has a value.</summary>
        public static CdrException Null()
        {
            return new CdrException("null where the IDL type has a value (only @optional members may be null)");
        }

        internal static CdrException TooMany(string what, long count, long bound, int offset)
        {
            return new CdrException(what + " of " + count + " exceeds its bound " + bound, offset);
        }
    }

    /// <summary>Appends a value of a generated type (the <c>_Cdr.Write_T</c> methods).</summary>
    public delegate void CdrWrite<T>(CdrWriter writer, T value);

    /// <summary>Reads into a fresh value of a generated type (the <c>_Cdr.Read_T</c>
    /// methods).</summary>
    public delegate void CdrRead<T>(ref CdrReader reader, T value);

    /// <summary>A member header being written or read (an EMHEADER, an XCDR1 parameter, an
    /// optional member's presence).</summary>
    public struct CdrMember
    {
        readonly uint id;
        readonly bool mustUnderstand;
        // Writing: where the length to fill in is. Reading: the end of the enclosing window.
        internal readonly int Length;
        // XCDR1: the alignment origin outside the parameter, to restore after it.
        internal readonly int Origin;
        // XCDR1 members of mutable types are padded to 4; optionals are not.
        internal readonly bool Pad;

        internal CdrMember(uint id, bool mustUnderstand, int length, int origin, bool pad)
        {
            this.id = id;
            this.mustUnderstand = mustUnderstand;
            Length = length;
            Origin = origin;
            Pad = pad;
        }

        /// <summary>The member id.</summary>
        public uint Id { get { return id; } }

        /// <summary>True when the writer marked the member must-understand.</summary>
        public bool MustUnderstand { get { return mustUnderstand; } }
    }

    // Reinterprets a float's bits without the allocation of BitConverter.GetBytes.
    [StructLayout(LayoutKind.Explicit)]
    struct FloatBits
    {
        [FieldOffset(0)] public float Float;
        [FieldOffset(0)] public int Int;
    }

    static class Wire
    {
        // XTypes 7.4.1.2.1: XCDR1 parameter ids and flags.
        internal const int PidExtended = 0x3f01;
        internal const int PidListEnd = 0x3f02;
        internal const int PidMustUnderstand = 0x4000;
        internal const int PidImplementationSpecific = 0x8000;
        internal const uint ExtendedMustUnderstand = 0x40000000;
        // XTypes 7.4.3.5.4: the EMHEADER's must-understand flag, and the id mask.
        internal const uint EmheaderMustUnderstand = 0x80000000;
        internal const uint MaxMemberId = 0x0fffffff;

        // Strict both ways: a lone surrogate is not UTF-8, and invalid UTF-8 is not text.
        internal static readonly UTF8Encoding Utf8 = new UTF8Encoding(false, true);

        internal static bool ValidUtf16(string s)
        {
            for (int i = 0; i < s.Length; i++)
            {
                if (char.IsHighSurrogate(s[i]) && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]))
                {
                    i++;
                }
                else if (char.IsSurrogate(s[i]))
                {
                    return false;
                }
            }
            return true;
        }
    }

    /// <summary>A reusable output buffer for one serialized sample at a time.</summary>
    public sealed unsafe class CdrWriter
    {
        // Where alignment counts from: the first byte after the encapsulation header, or
        // inside an XCDR1 parameter the first byte of its value (XTypes 7.4.1.2.1).
        int origin;
        int maxAlign = 8;
        bool xcdr2;

        /// <summary>The bytes written so far are <c>Buffer[0..Length)</c>.</summary>
        public byte[] Buffer { get; private set; }

        /// <summary>How many bytes of <see cref="Buffer"/> hold the sample.</summary>
        public int Length { get; private set; }

        // Where the bytes go while the writer is lent native memory (a DataWriter's writes:
        // the buffer the native writer's history keeps the sample in, so that it crosses
        // without a copy), and how much of it; null: to Buffer.
        byte* native;
        int nativeCapacity;

        /// <summary>Writes the next sample into the <paramref name="capacity"/> bytes at
        /// <paramref name="at"/>, until <see cref="DetachNative"/>. A sample that outgrows
        /// them goes on in <see cref="Buffer"/>, with what was written moved there
        /// (<see cref="InNative"/> is false then).</summary>
        internal void AttachNative(byte* at, int capacity)
        {
            native = at;
            nativeCapacity = capacity;
            Length = 0;
        }

        /// <summary>Back to <see cref="Buffer"/>.</summary>
        internal void DetachNative()
        {
            native = null;
            nativeCapacity = 0;
        }

        /// <summary>Whether the bytes written so far are in the native memory of
        /// <see cref="AttachNative"/>.</summary>
        internal bool InNative { get { return native != null; } }

        void Set(int at, byte value)
        {
            if (native != null)
            {
                native[at] = value;
            }
            else
            {
                Buffer[at] = value;
            }
        }

        /// <summary>A writer whose buffer starts at <paramref name="capacity"/> bytes.</summary>
        public CdrWriter(int capacity = 256)
        {
            Buffer = new byte[Math.Max(capacity, 16)];
        }

        /// <summary>Starts the next sample (the buffer is kept).</summary>
        public void Reset()
        {
            Length = 0;
        }

        /// <summary>Makes room for <paramref name="count"/> more bytes.</summary>
        public void Reserve(int count)
        {
            int needed = checked(Length + count);
            if (native != null)
            {
                if (needed <= nativeCapacity)
                {
                    return;
                }
                // Outgrown: the sample goes on in managed memory.
                if (needed > Buffer.Length)
                {
                    Buffer = new byte[Math.Max(needed, Buffer.Length * 2)];
                }
                Marshal.Copy((IntPtr)native, Buffer, 0, Length);
                DetachNative();
                return;
            }
            if (needed > Buffer.Length)
            {
                var grown = new byte[Math.Max(needed, Buffer.Length * 2)];
                System.Buffer.BlockCopy(Buffer, 0, grown, 0, Length);
                Buffer = grown;
            }
        }

        /// <summary>Appends <paramref name="count"/> bytes of <paramref name="source"/> from
        /// <paramref name="offset"/>.</summary>
        public void WriteBytes(byte[] source, int offset, int count)
        {
            Reserve(count);
            if (native != null)
            {
                Marshal.Copy(source, offset, (IntPtr)(native + Length), count);
            }
            else
            {
                System.Buffer.BlockCopy(source, offset, Buffer, Length, count);
            }
            Length += count;
        }

        /// <summary>True when the sample being written is XCDR2.</summary>
        public bool IsXcdr2 { get { return xcdr2; } }

        /// <summary>Appends the encapsulation header of a type of extensibility
        /// <paramref name="extensibility"/> in <paramref name="representation"/>, little
        /// endian (XTypes 7.6.3.1.2); returns where the sample starts, for
        /// <see cref="EndSample"/>.</summary>
        public int BeginSample(DataRepresentation representation, Extensibility extensibility)
        {
            if (representation != DataRepresentation.Xcdr1 && representation != DataRepresentation.Xcdr2)
            {
                throw new CdrException("unknown data representation " + (int)representation);
            }
            xcdr2 = representation == DataRepresentation.Xcdr2;
            maxAlign = xcdr2 ? 4 : 8;
            byte id;
            if (xcdr2)
            {
                // PLAIN_CDR2, DELIMITED_CDR2, PL_CDR2 (little endian).
                id = (byte)(extensibility == Extensibility.Final ? 0x07 : extensibility == Extensibility.Appendable ? 0x09 : 0x0b);
            }
            else
            {
                // CDR_LE or PL_CDR_LE.
                id = (byte)(extensibility == Extensibility.Mutable ? 0x03 : 0x01);
            }
            int start = Length;
            Reserve(4);
            Set(Length, 0);
            Set(Length + 1, id);
            Set(Length + 2, 0);
            Set(Length + 3, 0);
            Length += 4;
            origin = Length;
            return start;
        }

        /// <summary>Pads the sample begun at <paramref name="start"/> to a multiple of 4 bytes
        /// and counts the padding in the options' low two bits, as Cyclone DDS's C writer
        /// does.</summary>
        public void EndSample(int start)
        {
            int pad = (start - Length) & 3;
            Zeros(pad);
            Set(start + 3, (byte)pad);
        }

        /// <summary>Drops what was written of the sample begun at <paramref name="start"/>
        /// (after an error).</summary>
        public void AbandonSample(int start)
        {
            Length = start;
        }

        void Zeros(int count)
        {
            if (count == 0)
            {
                return;
            }
            Reserve(count);
            // The buffer is reused: old bytes must not show through the padding.
            if (native != null)
            {
                for (int i = 0; i < count; i++)
                {
                    native[Length + i] = 0;
                }
            }
            else
            {
                Array.Clear(Buffer, Length, count);
            }
            Length += count;
        }

        /// <summary>Pads to a multiple of <paramref name="size"/>, capped at 8 (XCDR1) or 4
        /// (XCDR2).</summary>
        public void Align(int size)
        {
            int a = size < maxAlign ? size : maxAlign;
            Zeros((origin - Length) & (a - 1));
        }

        void Put(int size, ulong value)
        {
            Align(size);
            Reserve(size);
            if (native != null)
            {
                byte* at = native + Length;
                for (int i = 0; i < size; i++)
                {
                    at[i] = (byte)(value >> (8 * i));
                }
            }
            else
            {
                for (int i = 0; i < size; i++)
                {
                    Buffer[Length + i] = (byte)(value >> (8 * i));
                }
            }
            Length += size;
        }

        /// <summary>Writes a boolean.</summary>
        public void WriteBool(bool value) { Put(1, value ? 1UL : 0UL); }

        /// <summary>Writes an octet or uint8.</summary>
        public void WriteOctet(byte value) { Put(1, value); }

        /// <summary>Writes an int8.</summary>
        public void WriteInt8(sbyte value) { Put(1, (byte)value); }

        /// <summary>Writes an IDL char (one byte: U+0000 to U+00FF).</summary>
        public void WriteChar(char value)
        {
            if (value > 0xff)
            {
                throw new CdrException("char U+" + ((int)value).ToString("X4") + " does not fit the 8-bit IDL char");
            }
            Put(1, value);
        }

        /// <summary>Writes a wchar (one UTF-16 code unit, not a surrogate).</summary>
        public void WriteWChar(char value)
        {
            if (char.IsSurrogate(value))
            {
                throw new CdrException("wchar U+" + ((int)value).ToString("X4") + " is a UTF-16 surrogate");
            }
            Put(2, value);
        }

        /// <summary>Writes an int16.</summary>
        public void WriteInt16(short value) { Put(2, (ushort)value); }

        /// <summary>Writes a uint16.</summary>
        public void WriteUInt16(ushort value) { Put(2, value); }

        /// <summary>Writes an int32.</summary>
        public void WriteInt32(int value) { Put(4, (uint)value); }

        /// <summary>Writes a uint32.</summary>
        public void WriteUInt32(uint value) { Put(4, value); }

        /// <summary>Writes an int64.</summary>
        public void WriteInt64(long value) { Put(8, (ulong)value); }

        /// <summary>Writes a uint64.</summary>
        public void WriteUInt64(ulong value) { Put(8, value); }

        /// <summary>Writes a float.</summary>
        public void WriteFloat(float value)
        {
            var bits = new FloatBits { Float = value };
            Put(4, (uint)bits.Int);
        }

        /// <summary>Writes a double.</summary>
        public void WriteDouble(double value) { Put(8, (ulong)BitConverter.DoubleToInt64Bits(value)); }

        /// <summary>Writes an enum's value in <paramref name="size"/> bytes (1, 2 or 4, from
        /// its @bit_bound; XTypes 7.4.3.4.6).</summary>
        public void WriteEnum(int value, int size) { Put(size, (uint)value); }

        static void CheckBound(long count, long bound, string what)
        {
            if (bound >= 0 && count > bound)
            {
                throw CdrException.TooMany(what, count, bound, -1);
            }
        }

        /// <summary>Writes a string: its length with the NUL, the UTF-8 bytes, the NUL; at
        /// most <paramref name="bound"/> bytes (a negative bound: unbounded).</summary>
        public void WriteString(string value, int bound)
        {
            if (value == null)
            {
                throw CdrException.Null();
            }
            int nul = value.IndexOf('\0');
            if (nul >= 0)
            {
                throw new CdrException("NUL at character " + nul + " of a string");
            }
            int count;
            try
            {
                count = Wire.Utf8.GetByteCount(value);
            }
            catch (EncoderFallbackException)
            {
                throw new CdrException("a string holds a lone UTF-16 surrogate, which UTF-8 cannot encode");
            }
            CheckBound(count, bound, "string");
            Put(4, (uint)count + 1);
            Reserve(count + 1);
            if (native != null)
            {
                fixed (char* chars = value)
                {
                    Wire.Utf8.GetBytes(chars, value.Length, native + Length, count);
                }
            }
            else
            {
                Wire.Utf8.GetBytes(value, 0, value.Length, Buffer, Length);
            }
            Set(Length + count, 0);
            Length += count + 1;
        }

        /// <summary>Writes a wstring: XCDR2 its length in bytes, XCDR1 in code units (no
        /// portable layout exists there; ferrodds-cdr's choice), then the UTF-16 code
        /// units, no terminator; at most <paramref name="bound"/> code units.</summary>
        public void WriteWString(string value, int bound)
        {
            if (value == null)
            {
                throw CdrException.Null();
            }
            if (!Wire.ValidUtf16(value))
            {
                throw new CdrException("a wstring holds a lone UTF-16 surrogate");
            }
            CheckBound(value.Length, bound, "wstring");
            Put(4, (uint)value.Length * (xcdr2 ? 2u : 1u));
            for (int i = 0; i < value.Length; i++)
            {
                Put(2, value[i]);
            }
        }

        /// <summary>Writes a sequence of octets (or uint8): count and bytes.</summary>
        public void WriteOctets(byte[] value, int bound)
        {
            if (value == null)
            {
                throw CdrException.Null();
            }
            CheckBound(value.Length, bound, "sequence");
            Put(4, (uint)value.Length);
            WriteBytes(value, 0, value.Length);
        }

        // A DHEADER or NEXTINT to fill in later with the number of bytes after it.
        int BeginLength()
        {
            Align(4);
            int at = Length;
            Zeros(4);
            return at;
        }

        void EndLength(int at)
        {
            uint length = (uint)(Length - at - 4);
            for (int i = 0; i < 4; i++)
            {
                Set(at + i, (byte)(length >> (8 * i)));
            }
        }

        /// <summary>Opens a struct or union: XCDR2 appendable and mutable types get a DHEADER.
        /// Pass the result to <see cref="EndAggregate"/>.</summary>
        public int BeginAggregate(Extensibility extensibility)
        {
            return xcdr2 && extensibility != Extensibility.Final ? BeginLength() : -1;
        }

        /// <summary>Closes what <see cref="BeginAggregate"/> opened: ends an XCDR1 parameter
        /// list, fills the DHEADER.</summary>
        public void EndAggregate(int token, Extensibility extensibility)
        {
            if (extensibility == Extensibility.Mutable && !xcdr2)
            {
                Align(4);
                Put(2, Wire.PidListEnd | Wire.PidMustUnderstand);
                Put(2, 0);
            }
            if (token >= 0)
            {
                EndLength(token);
            }
        }

        /// <summary>Opens an array or sequence: in XCDR2 a DHEADER unless the elements are
        /// primitive (enums, bitmasks and strings are not). Pass the result to
        /// <see cref="EndCollection"/>.</summary>
        public int BeginCollection(bool primitiveElements)
        {
            return xcdr2 && !primitiveElements ? BeginLength() : -1;
        }

        /// <summary>Opens a sequence: its DHEADER (<see cref="BeginCollection"/>) and count,
        /// at most <paramref name="bound"/> elements (negative: unbounded).</summary>
        public int BeginSequence<T>(List<T> items, int bound, bool primitiveElements)
        {
            if (items == null)
            {
                throw CdrException.Null();
            }
            CheckBound(items.Count, bound, "sequence");
            int token = BeginCollection(primitiveElements);
            Put(4, (uint)items.Count);
            return token;
        }

        /// <summary>Closes what <see cref="BeginCollection"/> opened.</summary>
        public void EndCollection(int token)
        {
            if (token >= 0)
            {
                EndLength(token);
            }
        }

        /// <summary>Refuses a null array, or one whose dimension
        /// <paramref name="dimension"/> is not the IDL's <paramref name="length"/>.</summary>
        public void CheckArray(Array array, int dimension, int length)
        {
            if (array == null)
            {
                throw CdrException.Null();
            }
            int found = array.GetLength(dimension);
            if (found != length)
            {
                throw new CdrException("dimension " + dimension + " of an array has " + found + " elements, the IDL " + length);
            }
        }

        /// <summary>Writes the header of member <paramref name="id"/> of a mutable type: XCDR2
        /// an EMHEADER with length code <paramref name="lengthCode"/> (and a NEXTINT for code
        /// 4; XTypes 7.4.3.5.4), XCDR1 an extended parameter header (7.4.1.2.1), as Cyclone DDS
        /// writes them. The member follows, then <see cref="EndMember"/>.</summary>
        public CdrMember BeginMember(uint id, bool mustUnderstand, int lengthCode)
        {
            Align(4);
            if (!xcdr2)
            {
                return BeginParameter(id, mustUnderstand, true);
            }
            uint m = mustUnderstand ? Wire.EmheaderMustUnderstand : 0;
            Put(4, m | ((uint)lengthCode << 28) | (id & Wire.MaxMemberId));
            return new CdrMember(id, mustUnderstand, lengthCode == 4 ? BeginLength() : -1, -1, false);
        }

        /// <summary>Begins an @optional member of a final or appendable type: XCDR2 a presence
        /// flag; XCDR1 a parameter header whose length is the value's, 0 when absent, with no
        /// padding after the value (XTypes 7.4.1.1.2). The value follows when
        /// <paramref name="present"/>, then <see cref="EndMember"/>.</summary>
        public CdrMember BeginOptional(uint id, bool mustUnderstand, bool present)
        {
            if (xcdr2)
            {
                WriteBool(present);
                return new CdrMember(id, mustUnderstand, -1, -1, false);
            }
            return BeginParameter(id, mustUnderstand, false);
        }

        CdrMember BeginParameter(uint id, bool mustUnderstand, bool pad)
        {
            Align(4);
            Put(2, Wire.PidExtended | Wire.PidMustUnderstand);
            Put(2, 8);
            Put(4, (mustUnderstand ? Wire.ExtendedMustUnderstand : 0) | (id & Wire.MaxMemberId));
            int lengthAt = Length;
            Zeros(4);
            var member = new CdrMember(id, mustUnderstand, lengthAt, origin, pad);
            origin = Length;
            return member;
        }

        /// <summary>Finishes a member begun with <see cref="BeginMember"/> or
        /// <see cref="BeginOptional"/>, filling in its length.</summary>
        public void EndMember(CdrMember member)
        {
            if (member.Pad)
            {
                Align(4);
            }
            if (member.Origin >= 0)
            {
                origin = member.Origin;
            }
            if (member.Length >= 0)
            {
                EndLength(member.Length);
            }
        }
    }

    /// <summary>Reads one serialized sample: XCDR1 or XCDR2, either byte order. Every read
    /// checks what remains first, and lengths read from the input are checked against the
    /// bytes that remain before anything is allocated; malformed input gives a
    /// <see cref="CdrException"/>, never another exception. A struct, passed by
    /// <c>ref</c>, so that reading a sample allocates only the sample.</summary>
    public struct CdrReader
    {
        /// <summary>How deep structs and unions may nest: only recursive types can nest
        /// without bound, and each level costs stack.</summary>
        public const int MaxDepth = 128;

        readonly byte[] data;
        // Reading out of native memory (a sample a take lends): `data` is a scratch buffer
        // filled from it as the reading goes (`filled`: where the bytes there end), so that
        // a sequence of octets goes from native memory straight into its array, never
        // through `data`. The reading only moves forward, past what it skips unfilled.
        readonly IntPtr native;
        readonly int limit;
        int filled;
        // How much the next fill copies at least: it doubles, so that a sample of small
        // values takes a few copies, and one of a few values and a long sequence of octets
        // little more than those values.
        int fillAhead;
        // The encapsulation header's first byte: error offsets count from it.
        readonly int start;
        readonly bool bigEndian;
        readonly bool xcdr2;
        readonly int maxAlign;
        int pos;
        // The end of the current window (a DHEADER's object, a member, the sample).
        int end;
        int origin;
        int depth;
        // Cyclone DDS 0.10 leaves out the DHEADER of an appendable type's key-only sample.
        bool noDHeader;

        /// <summary>A reader over the <paramref name="length"/> bytes at
        /// <paramref name="offset"/> of <paramref name="data"/>, which start with the
        /// encapsulation header; the padding its options count is not read.</summary>
        public CdrReader(byte[] data, int offset, int length) : this(data, offset, length, false, IntPtr.Zero)
        {
        }

        internal CdrReader(byte[] data, int offset, int length, bool withoutDHeader) : this(data, offset, length, withoutDHeader, IntPtr.Zero)
        {
        }

        // A reader of native memory when `native` is not zero: it holds the `length` bytes
        // (and stays there while the reader reads), `data` is its scratch buffer, `offset` 0.
        internal CdrReader(byte[] data, int offset, int length, bool withoutDHeader, IntPtr native)
        {
            if (data == null || offset < 0 || length < 0 || offset > data.Length - length)
            {
                throw new CdrException("no sample: " + length + " bytes at offset " + offset + " of a buffer of " + (data == null ? "null" : data.Length.ToString()));
            }
            if (length < 4)
            {
                throw new CdrException("encapsulation header needs 4 bytes, " + length + " remain", 0);
            }
            this.native = native;
            limit = offset + length;
            fillAhead = FirstFill;
            if (native == IntPtr.Zero)
            {
                filled = int.MaxValue;
            }
            else
            {
                filled = Math.Min(length, FirstFill);
                Marshal.Copy(native, data, 0, filled);
            }
            int id = data[offset] << 8 | data[offset + 1];
            // CDR_BE/LE, PL_CDR_BE/LE, CDR2_BE/LE, D_CDR2_BE/LE, PL_CDR2_BE/LE: whatever the
            // type's extensibility, as peers differ in which they send (D_CDR2 for final).
            if (id > 0x0b || id == 4 || id == 5)
            {
                throw new CdrException("unsupported encapsulation 0x" + id.ToString("x4"), 0);
            }
            int padding = data[offset + 3] & 3;
            if (padding > length - 4)
            {
                throw new CdrException("the options count " + padding + " bytes of padding after a body of " + (length - 4), 2);
            }
            this.data = data;
            start = offset;
            bigEndian = (id & 1) == 0;
            xcdr2 = id >= 6;
            maxAlign = xcdr2 ? 4 : 8;
            pos = offset + 4;
            origin = pos;
            end = offset + length - padding;
            depth = 0;
            noDHeader = withoutDHeader;
        }

        /// <summary>True when reading XCDR2.</summary>
        public bool IsXcdr2 { get { return xcdr2; } }

        /// <summary>True when the current window (a DHEADER's object, a member, the sample)
        /// is used up.</summary>
        public bool AtEnd { get { return pos >= end; } }

        /// <summary>An error at the current position.</summary>
        public CdrException Error(string what)
        {
            return new CdrException(what, pos - start);
        }

        CdrException Short(string what, long needed)
        {
            return Error(what + " needs " + needed + " bytes, " + (end - pos) + " remain");
        }

        /// <summary>Skips padding to a multiple of <paramref name="size"/>, capped at 8
        /// (XCDR1) or 4 (XCDR2).</summary>
        public void Align(int size)
        {
            int a = size < maxAlign ? size : maxAlign;
            int pad = (origin - pos) & (a - 1);
            if (pad > end - pos)
            {
                throw Short("alignment padding", pad);
            }
            pos += pad;
        }

        ulong Get(int size, string what)
        {
            Align(size);
            if (size > end - pos)
            {
                throw Short(what, size);
            }
            if (pos + size > filled)
            {
                Fill(pos + size);
            }
            ulong value = 0;
            for (int i = 0; i < size; i++)
            {
                int shift = bigEndian ? 8 * (size - 1 - i) : 8 * i;
                value |= (ulong)data[pos + i] << shift;
            }
            pos += size;
            return value;
        }

        /// <summary>Reads a boolean (0 or 1).</summary>
        public bool ReadBool()
        {
            byte b = (byte)Get(1, "boolean");
            if (b > 1)
            {
                pos--;
                throw Error("boolean " + b + " is neither 0 nor 1");
            }
            return b == 1;
        }

        /// <summary>Reads an octet or uint8.</summary>
        public byte ReadOctet() { return (byte)Get(1, "octet"); }

        /// <summary>Reads an int8.</summary>
        public sbyte ReadInt8() { return (sbyte)Get(1, "int8"); }

        /// <summary>Reads an IDL char (one byte, as U+0000 to U+00FF).</summary>
        public char ReadChar() { return (char)Get(1, "char"); }

        /// <summary>Reads a wchar.</summary>
        public char ReadWChar()
        {
            char c = (char)Get(2, "wchar");
            if (char.IsSurrogate(c))
            {
                pos -= 2;
                throw Error("wchar U+" + ((int)c).ToString("X4") + " is a UTF-16 surrogate");
            }
            return c;
        }

        /// <summary>Reads an int16.</summary>
        public short ReadInt16() { return (short)Get(2, "int16"); }

        /// <summary>Reads a uint16.</summary>
        public ushort ReadUInt16() { return (ushort)Get(2, "uint16"); }

        /// <summary>Reads an int32.</summary>
        public int ReadInt32() { return (int)Get(4, "int32"); }

        /// <summary>Reads a uint32.</summary>
        public uint ReadUInt32() { return (uint)Get(4, "uint32"); }

        /// <summary>Reads an int64.</summary>
        public long ReadInt64() { return (long)Get(8, "int64"); }

        /// <summary>Reads a uint64.</summary>
        public ulong ReadUInt64() { return Get(8, "uint64"); }

        /// <summary>Reads a float.</summary>
        public float ReadFloat()
        {
            var bits = new FloatBits { Int = (int)Get(4, "float") };
            return bits.Float;
        }

        /// <summary>Reads a double.</summary>
        public double ReadDouble() { return BitConverter.Int64BitsToDouble((long)Get(8, "double")); }

        /// <summary>Reads an enum's value of <paramref name="size"/> bytes (1- and 2-byte
        /// values are unsigned, as Cyclone DDS reads them).</summary>
        public int ReadEnum(int size) { return (int)Get(size, "enum"); }

        /// <summary>The error for an enum value that names no enumerator; the position is
        /// moved back to the value.</summary>
        public CdrException UnknownEnumerator(string typeName, int value, int size)
        {
            pos -= size;
            return Error("value " + value + " is no enumerator of " + typeName);
        }

        /// <summary>Reads an element count and checks it against what remains (each element
        /// takes at least <paramref name="minElementSize"/> bytes, at least 1 counted) and
        /// against <paramref name="bound"/> (negative: unbounded).</summary>
        public int ReadCount(int minElementSize, int bound)
        {
            return Count("sequence length", minElementSize, bound);
        }

        int Count(string what, int minElementSize, long bound)
        {
            uint count = (uint)Get(4, what);
            long needed = (long)count * Math.Max(minElementSize, 1);
            if (needed > end - pos)
            {
                pos -= 4;
                throw Error(what + " " + count + " claims " + needed + " bytes, " + (end - pos - 4) + " remain");
            }
            if (bound >= 0 && count > bound)
            {
                throw CdrException.TooMany(what, count, bound, pos - 4 - start);
            }
            return (int)count;
        }

        /// <summary>Reads a string: length with the NUL, UTF-8 bytes, NUL; at most
        /// <paramref name="bound"/> bytes (negative: unbounded).</summary>
        public string ReadString(int bound)
        {
            int at = pos;
            int length = Count("string length", 1, -1);
            if (length == 0)
            {
                pos -= 4;
                throw Error("string length 0 (the NUL counts)");
            }
            int text = pos;
            pos += length;
            if (pos > filled)
            {
                Fill(text, pos);
            }
            if (data[text + length - 1] != 0)
            {
                pos--;
                throw Error("string not terminated by NUL (found 0x" + data[pos].ToString("x2") + ")");
            }
            int nul = Array.IndexOf(data, (byte)0, text, length - 1);
            if (nul >= 0)
            {
                pos = nul;
                throw Error("NUL inside a string");
            }
            if (bound >= 0 && length - 1 > bound)
            {
                throw CdrException.TooMany("string", length - 1, bound, at - start);
            }
            try
            {
                return Wire.Utf8.GetString(data, text, length - 1);
            }
            catch (DecoderFallbackException e)
            {
                pos = text + Math.Max(e.Index, 0);
                throw Error("invalid UTF-8 in a string");
            }
        }

        /// <summary>Reads a wstring (see <see cref="CdrWriter.WriteWString"/>) of at most
        /// <paramref name="bound"/> code units.</summary>
        public string ReadWString(int bound)
        {
            int at = pos;
            int units;
            if (xcdr2)
            {
                int bytes = Count("wstring length", 1, -1);
                if (bytes % 2 != 0)
                {
                    pos -= 4;
                    throw Error("wstring of an odd " + bytes + " bytes");
                }
                units = bytes / 2;
            }
            else
            {
                units = Count("wstring length", 2, -1);
            }
            if (bound >= 0 && units > bound)
            {
                throw CdrException.TooMany("wstring", units, bound, at - start);
            }
            var chars = new char[units];
            for (int i = 0; i < units; i++)
            {
                chars[i] = (char)Get(2, "wstring");
            }
            var s = new string(chars);
            if (!Wire.ValidUtf16(s))
            {
                pos = at;
                throw Error("a wstring holds a lone UTF-16 surrogate");
            }
            return s;
        }

        /// <summary>Reads a sequence of octets (or uint8) of at most
        /// <paramref name="bound"/> elements.</summary>
        public byte[] ReadOctets(int bound)
        {
            return ReadOctets(bound, null);
        }

        /// <summary><see cref="ReadOctets(int)"/>, into <paramref name="reuse"/> when it has
        /// the length read (a sample read into again keeps its arrays).</summary>
        public byte[] ReadOctets(int bound, byte[] reuse)
        {
            int count = ReadCount(1, bound);
            var bytes = reuse != null && reuse.Length == count ? reuse : new byte[count];
            int have = Math.Min(Math.Max(filled - pos, 0), count);
            System.Buffer.BlockCopy(data, pos, bytes, 0, have);
            if (have < count)
            {
                // Out of native memory into the array: the scratch buffer is not filled
                // there, and the reading never comes back.
                Marshal.Copy(IntPtr.Add(native, pos + have), bytes, have, count - have);
                filled = pos + count;
            }
            pos += count;
            return bytes;
        }

        // The first fill of the scratch buffer from native memory: the encapsulation header
        // and the values before a first long sequence of octets, in most types.
        const int FirstFill = 64;

        // Fills the scratch buffer from native memory to at least `to`, from `pos`.
        void Fill(int to)
        {
            Fill(pos, to);
        }

        // Fills the scratch buffer from native memory over [from, to) at least (what is
        // before `filled` is there already; what lies between it and `from` was skipped).
        void Fill(int from, int to)
        {
            from = Math.Max(from, filled);
            to = (int)Math.Min(Math.Max(to, (long)from + fillAhead), limit);
            if (to > from)
            {
                Marshal.Copy(IntPtr.Add(native, from), data, from, to - from);
            }
            filled = to;
            fillAhead = Math.Min(fillAhead * 2, 1 << 20);
        }

        // Narrows the window to the next `length` bytes; returns the outer window's end.
        int Limit(long length, int lengthAt, string what)
        {
            if (length > end - pos)
            {
                int remaining = end - pos;
                pos = lengthAt;
                throw Error(what + " " + length + " exceeds the " + remaining + " bytes that remain");
            }
            int outer = end;
            end = pos + (int)length;
            return outer;
        }

        // Moves to the end of the window (skipping what was not read) and widens it back.
        void Restore(int outerEnd)
        {
            pos = end;
            end = outerEnd;
        }

        int BeginDelimited(string what)
        {
            if (noDHeader)
            {
                noDHeader = false;
                return end;
            }
            int at = pos;
            uint length = (uint)Get(4, what);
            return Limit(length, at, what);
        }

        /// <summary>Opens a struct or union: counts a level of nesting, and in XCDR2 reads the
        /// DHEADER of an appendable or mutable type and narrows the window to it. Pass the
        /// result to <see cref="EndAggregate"/>.</summary>
        public int BeginAggregate(Extensibility extensibility)
        {
            if (depth >= MaxDepth)
            {
                throw Error("structs and unions nested deeper than " + MaxDepth);
            }
            depth++;
            return xcdr2 && extensibility != Extensibility.Final ? BeginDelimited("DHEADER") : -1;
        }

        /// <summary>Closes what <see cref="BeginAggregate"/> opened, skipping members a newer
        /// version of the type appended.</summary>
        public void EndAggregate(int token)
        {
            if (token >= 0)
            {
                Restore(token);
            }
            depth--;
        }

        /// <summary>Opens an array or sequence: in XCDR2 its DHEADER unless the elements are
        /// primitive. Pass the result to <see cref="EndCollection"/>.</summary>
        public int BeginCollection(bool primitiveElements)
        {
            return xcdr2 && !primitiveElements ? BeginDelimited("collection DHEADER") : -1;
        }

        /// <summary>Closes what <see cref="BeginCollection"/> opened.</summary>
        public void EndCollection(int token)
        {
            if (token >= 0)
            {
                Restore(token);
            }
        }

        // What gives a member's length under each EMHEADER length code, for errors.
        static readonly string[] LengthCodes =
        {
            "member (EMHEADER length code 0: 1 byte)",
            "member (EMHEADER length code 1: 2 bytes)",
            "member (EMHEADER length code 2: 4 bytes)",
            "member (EMHEADER length code 3: 8 bytes)",
            "member length NEXTINT (EMHEADER length code 4: NEXTINT bytes)",
            "member length NEXTINT (EMHEADER length code 5: 4 + NEXTINT bytes)",
            "member length NEXTINT (EMHEADER length code 6: 4 + 4 x NEXTINT bytes)",
            "member length NEXTINT (EMHEADER length code 7: 4 + 8 x NEXTINT bytes)",
        };

        /// <summary>Reads the next member header of a mutable type and narrows the window to
        /// the member; false at the end of the members. Call <see cref="EndMember"/> after
        /// the member, read or not.</summary>
        public bool NextMember(out CdrMember member)
        {
            member = default(CdrMember);
            if (!xcdr2)
            {
                while (true)
                {
                    // Tolerated: a list that ends with the input instead of PID_LIST_END.
                    if (AtEnd)
                    {
                        return false;
                    }
                    bool vendor;
                    if (!NextParameter(out member, out vendor))
                    {
                        return false;
                    }
                    if (!vendor)
                    {
                        return true;
                    }
                    EndMember(member);
                }
            }
            if (AtEnd)
            {
                return false;
            }
            Align(4);
            int headerAt = pos;
            uint header = (uint)Get(4, "EMHEADER");
            uint id = header & Wire.MaxMemberId;
            int lengthCode = (int)((header >> 28) & 7);
            long length;
            int lengthAt = headerAt;
            if (lengthCode < 4)
            {
                length = 1L << lengthCode;
            }
            else if (lengthCode == 4)
            {
                lengthAt = pos;
                length = (uint)Get(4, "NEXTINT");
            }
            else
            {
                // Codes 5-7: the NEXTINT is also the member's first word (its DHEADER, length
                // or count), so it stays in the member's window.
                lengthAt = pos;
                long next = (uint)Get(4, "NEXTINT");
                pos = lengthAt;
                length = 4 + next * (lengthCode == 5 ? 1 : lengthCode == 6 ? 4 : 8);
            }
            int outer = Limit(length, lengthAt, LengthCodes[lengthCode]);
            member = new CdrMember(id, (header & Wire.EmheaderMustUnderstand) != 0, outer, -1, false);
            return true;
        }

        // One XCDR1 parameter header, short or extended (XTypes 7.4.1.2.1); false at
        // PID_LIST_END. Vendor parameters (short, implementation-specific) are not members.
        bool NextParameter(out CdrMember member, out bool vendor)
        {
            member = default(CdrMember);
            vendor = false;
            Align(4);
            int pid = (int)Get(2, "parameter id");
            int shortLengthAt = pos;
            int shortLength = (int)Get(2, "parameter length");
            int shortId = pid & 0x3fff;
            if (shortId == Wire.PidListEnd)
            {
                return false;
            }
            uint id;
            bool mustUnderstand;
            long length;
            int lengthAt;
            if (shortId == Wire.PidExtended)
            {
                if (shortLength != 8)
                {
                    pos = shortLengthAt;
                    throw Error("extended parameter header of length " + shortLength + ", not 8");
                }
                uint extended = (uint)Get(4, "extended parameter id");
                id = extended & Wire.MaxMemberId;
                // Bit 30 is the flag; Cyclone's Python binding sets bit 31 for optionals.
                mustUnderstand = (extended & (Wire.ExtendedMustUnderstand | Wire.EmheaderMustUnderstand)) != 0;
                lengthAt = pos;
                length = (uint)Get(4, "extended parameter length");
            }
            else
            {
                id = (uint)shortId;
                mustUnderstand = (pid & Wire.PidMustUnderstand) != 0;
                lengthAt = shortLengthAt;
                length = shortLength;
                vendor = (pid & Wire.PidImplementationSpecific) != 0;
            }
            int outer = Limit(length, lengthAt, "parameter length");
            member = new CdrMember(id, mustUnderstand, outer, origin, false);
            origin = pos;
            return true;
        }

        /// <summary>Begins an @optional member of a final or appendable type (see
        /// <see cref="CdrWriter.BeginOptional"/>); true when the value follows. Call
        /// <see cref="EndMember"/> after it.</summary>
        public bool BeginOptional(out CdrMember member)
        {
            if (xcdr2)
            {
                member = new CdrMember(0, false, -1, -1, false);
                return ReadBool();
            }
            bool vendor;
            if (!NextParameter(out member, out vendor))
            {
                throw Error("PID_LIST_END where an optional member's parameter belongs");
            }
            return !AtEnd;
        }

        /// <summary>Finishes a member after <see cref="NextMember"/> or
        /// <see cref="BeginOptional"/>, skipping whatever of it was not read.</summary>
        public void EndMember(CdrMember member)
        {
            if (member.Origin >= 0)
            {
                origin = member.Origin;
            }
            if (member.Length >= 0)
            {
                Restore(member.Length);
            }
        }

        /// <summary>The error for an unknown member the writer marked must-understand.</summary>
        public CdrException UnknownMember(CdrMember member)
        {
            return Error("unknown member id " + member.Id + " is marked must-understand");
        }

        /// <summary>The error for a member that comes twice.</summary>
        public CdrException DuplicateMember(CdrMember member)
        {
            return Error("member id " + member.Id + " comes twice");
        }

        /// <summary>The error for a key member that a mutable type's encoding leaves out.</summary>
        public CdrException MissingKey()
        {
            return Error("key member missing");
        }
    }

    /// <summary>What the generated type supports share: samples with their encapsulation
    /// header.</summary>
    public static class Cdr
    {
        /// <summary>Appends <paramref name="sample"/> with its encapsulation header, padded
        /// to 4 bytes; on error the writer is left as it was.</summary>
        public static void Serialize<T>(T sample, CdrWriter writer, DataRepresentation representation, Extensibility extensibility, string typeName, CdrWrite<T> write)
        {
            if (writer == null)
            {
                throw new ArgumentNullException("writer");
            }
            int start = writer.Length;
            try
            {
                writer.BeginSample(representation, extensibility);
                write(writer, sample);
                writer.EndSample(start);
            }
            catch (CdrException e)
            {
                writer.AbandonSample(start);
                e.Within(typeName, null);
                throw;
            }
        }

        /// <summary>The sample in the <paramref name="length"/> bytes at
        /// <paramref name="offset"/>. For a keyed type (<paramref name="readKey"/> not
        /// null), bytes that are not a whole sample but exactly its key members are read as
        /// a key-only sample (a dispose or unregister: the type's encoding with only its key
        /// members), in either form peers write it when <paramref name="headerlessKeyForm"/>
        /// (a keyed appendable type: Cyclone DDS 11 puts a DHEADER in front of the keys in
        /// XCDR2, 0.10 does not). A mutable type needs no <paramref name="readKey"/>: its
        /// absent members keep their defaults anyway.</summary>
        public static T Deserialize<T>(byte[] data, int offset, int length, string typeName, CdrRead<T> read, CdrRead<T> readKey, bool headerlessKeyForm) where T : new()
        {
            return Deserialize(data, offset, length, typeName, read, readKey, headerlessKeyForm, default(T));
        }

        /// <summary><see cref="Deserialize{T}(byte[], int, int, string, CdrRead{T}, CdrRead{T}, bool)"/>
        /// into <paramref name="into"/> when it is not null: every member is overwritten in
        /// place (nested objects and arrays too), so that reading allocates nothing new. A
        /// key-only sample is read into a new object, and so is a sample
        /// <paramref name="into"/> cannot hold (a member the application set to null, an
        /// array of other dimensions).</summary>
        public static T Deserialize<T>(byte[] data, int offset, int length, string typeName, CdrRead<T> read, CdrRead<T> readKey, bool headerlessKeyForm, T into) where T : new()
        {
            try
            {
                return ReadSample(data, offset, length, IntPtr.Zero, read, into);
            }
            catch (CdrException e)
            {
                e.Within(typeName, null);
                T key;
                if (readKey == null || !TryKey(data, offset, length, readKey, headerlessKeyForm, out key))
                {
                    throw;
                }
                return key;
            }
        }

        /// <summary><see cref="Deserialize{T}(byte[], int, int, string, CdrRead{T}, CdrRead{T}, bool, T)"/>
        /// of the <paramref name="length"/> bytes at <paramref name="data"/> in native memory
        /// (which stay there while it reads), with <paramref name="scratch"/> (at least as
        /// long; overwritten) for what is read a value at a time: a sequence of octets goes
        /// from native memory straight into its array. Bytes that are no whole sample are
        /// copied into <paramref name="scratch"/> and read there again, for the key-only
        /// form and the error's member.</summary>
        public static T Deserialize<T>(IntPtr data, int length, byte[] scratch, string typeName, CdrRead<T> read, CdrRead<T> readKey, bool headerlessKeyForm, T into) where T : new()
        {
            if (data == IntPtr.Zero || scratch == null || length < 0 || length > scratch.Length)
            {
                throw new CdrException("no sample: " + length + " bytes at " + (data == IntPtr.Zero ? "null" : "0x" + data.ToString("x")) + " with a scratch buffer of " + (scratch == null ? "null" : scratch.Length.ToString()));
            }
            try
            {
                return ReadSample(scratch, 0, length, data, read, into);
            }
            catch (CdrException)
            {
            }
            Marshal.Copy(data, scratch, 0, length);
            return Deserialize(scratch, 0, length, typeName, read, readKey, headerlessKeyForm, into);
        }

        // The sample read into `into` when it can hold it, else into a new one (a reader over
        // `data`, or over `native` with `data` its scratch buffer).
        static T ReadSample<T>(byte[] data, int offset, int length, IntPtr native, CdrRead<T> read, T into) where T : new()
        {
            if (into != null)
            {
                try
                {
                    var again = new CdrReader(data, offset, length, false, native);
                    read(ref again, into);
                    return into;
                }
                catch (NullReferenceException)
                {
                }
                catch (IndexOutOfRangeException)
                {
                }
            }
            var reader = new CdrReader(data, offset, length, false, native);
            var sample = new T();
            read(ref reader, sample);
            return sample;
        }

        static bool TryKey<T>(byte[] data, int offset, int length, CdrRead<T> readKey, bool headerlessKeyForm, out T key) where T : new()
        {
            key = new T();
            bool read = false, exact = false, xcdr2 = false;
            try
            {
                var reader = new CdrReader(data, offset, length);
                xcdr2 = reader.IsXcdr2;
                readKey(ref reader, key);
                read = true;
                exact = reader.AtEnd;
            }
            catch (CdrException)
            {
            }
            // Keys that do not end where the sample does are not a key-only sample: a
            // whole sample cut short, or (keyed appendable, XCDR2) a first key word read as
            // a DHEADER.
            if (read && exact)
            {
                return true;
            }
            if (headerlessKeyForm && xcdr2)
            {
                try
                {
                    var reader = new CdrReader(data, offset, length, true);
                    var headerless = new T();
                    readKey(ref reader, headerless);
                    key = headerless;
                    return true;
                }
                catch (CdrException)
                {
                }
            }
            return false;
        }
    }
}
