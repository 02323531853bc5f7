// The C# half of crates/ferrodds-idl/tests/csharp_vectors.rs: reads cases, one a line, and
// prints one result line per case, which the Rust test compares with Cyclone DDS's bytes.
//
//   decode <id> <type> <extensibility> <hex>
//       the sample in <hex> (encapsulation header first), written again:
//       "<id> ok <xcdr1 le hex> <xcdr2 le hex>"; read out of native memory too (as a take
//       reads what it is lent), which must give the same
//   default <id> <type> <extensibility>
//       a value made by the type's constructor, written likewise
//   idl <id> <type> <extensibility>
//       a struct's TypeName and Idl: "<id> ok <TypeName> <hex of the Idl's UTF-8>"
//   api <id> vec::U final
//       the generated union API: "<id> ok"
//   hostile <id> <type> <extensibility> <hex>
//       every truncation of <hex> and every byte of it changed, read (and what reads
//       written): "<id> ok <count>", or "<id> crash <what>" when anything but a
//       CdrException escapes or the read out of native memory ends otherwise
//   tojson <id> <type> <extensibility> <hex>
//       the sample in <hex>, as the generated _Json code writes it: "<id> ok <hex of the
//       JSON's UTF-8>"
//   fromjson <id> <type> <extensibility> <hex of JSON>
//       the sample the JSON text holds, read by the generated _Json code and written in
//       CDR as "decode" writes it
//   jsonhostile <id> <type> <extensibility> <hex of JSON>
//       every truncation of the text and every character of it changed, read: "<id> ok
//       <count>", or "<id> crash <what>" when anything but a JsonException escapes
// A case that fails prints "<id> error <message>". Structs go through their generated
// <Name>TypeSupport (the binding's ITypeSupport<T>), unions through FerroDDS.Cdr with the
// generated _Cdr methods.
using System;
using System.IO;
using System.Text;
using FerroDDS;

interface ICodec
{
    string TypeName { get; }
    string Idl { get; }
    object Read(byte[] data, int offset, int length);
    object ReadInto(byte[] data, int offset, int length, object into);
    object ReadNative(IntPtr data, int length, byte[] scratch, object into);
    object Fresh();
    void Write(object value, CdrWriter writer, DataRepresentation representation);
    string ToJson(object value);
    object FromJson(string text, object into);
}

sealed class TypeSupportCodec<T> : ICodec where T : new()
{
    readonly ITypeSupport<T> support;

    public TypeSupportCodec(ITypeSupport<T> support)
    {
        this.support = support;
    }

    public string TypeName { get { return support.TypeName; } }

    public string Idl { get { return support.Idl; } }

    public object Read(byte[] data, int offset, int length) { return support.Deserialize(data, offset, length); }

    public object ReadInto(byte[] data, int offset, int length, object into) { return support.Deserialize(data, offset, length, (T)into); }

    public object ReadNative(IntPtr data, int length, byte[] scratch, object into)
    {
        return ((INativeCdrSupport<T>)support).Deserialize(data, length, scratch, (T)into);
    }

    public object Fresh() { return new T(); }

    public void Write(object value, CdrWriter writer, DataRepresentation representation)
    {
        support.Serialize((T)value, writer, representation);
    }

    public string ToJson(object value) { return ((IJsonSupport<T>)support).ToJson((T)value); }

    public object FromJson(string text, object into)
    {
        var json = (IJsonSupport<T>)support;
        return into == null ? json.FromJson(text) : json.FromJson(new JsonReader(text), (T)into);
    }
}

sealed class UnionCodec<T> : ICodec where T : new()
{
    readonly string name;
    readonly Extensibility extensibility;
    readonly CdrWrite<T> write;
    readonly CdrRead<T> read;
    readonly JsonWrite<T> writeJson;
    readonly JsonRead<T> readJson;

    public UnionCodec(string name, Extensibility extensibility, CdrWrite<T> write, CdrRead<T> read, JsonWrite<T> writeJson, JsonRead<T> readJson)
    {
        this.name = name;
        this.extensibility = extensibility;
        this.write = write;
        this.read = read;
        this.writeJson = writeJson;
        this.readJson = readJson;
    }

    public string ToJson(object value)
    {
        var writer = new JsonWriter();
        Json.Write((T)value, writer, name, writeJson);
        return writer.ToString();
    }

    public object FromJson(string text, object into) { return Json.Read(new JsonReader(text), name, readJson, (T)into); }

    public string TypeName { get { return name; } }

    public string Idl { get { throw new InvalidOperationException("unions have no type support"); } }

    public object Read(byte[] data, int offset, int length)
    {
        return Cdr.Deserialize(data, offset, length, name, read, null, false);
    }

    public object ReadInto(byte[] data, int offset, int length, object into)
    {
        return Cdr.Deserialize(data, offset, length, name, read, null, false, (T)into);
    }

    public object ReadNative(IntPtr data, int length, byte[] scratch, object into)
    {
        return Cdr.Deserialize(data, length, scratch, name, read, null, false, (T)into);
    }

    public object Fresh() { return new T(); }

    public void Write(object value, CdrWriter writer, DataRepresentation representation)
    {
        Cdr.Serialize((T)value, writer, representation, extensibility, name, write);
    }
}

static class VectorDriver
{
    static readonly CdrWriter writer = new CdrWriter(16);
    // The last value of each type read, to read the next one of the type into.
    static readonly System.Collections.Generic.Dictionary<string, object> lastOf = new System.Collections.Generic.Dictionary<string, object>();
    static readonly System.Collections.Generic.Dictionary<string, object> lastJsonOf = new System.Collections.Generic.Dictionary<string, object>();

    static int Main(string[] args)
    {
        var output = new StringBuilder();
        foreach (var line in File.ReadAllLines(args[0]))
        {
            var f = line.Split(' ');
            if (f.Length < 4)
            {
                continue;
            }
            try
            {
                var codec = CodecOf(f[2], (Extensibility)Enum.Parse(typeof(Extensibility), f[3], true));
                switch (f[0])
                {
                    case "decode":
                        var data = Hex(f[4]);
                        string written = Both(codec, codec.Read(data, 0, data.Length));
                        // The same bytes inside a larger buffer read the same.
                        var inside = new byte[data.Length + 8];
                        Buffer.BlockCopy(data, 0, inside, 5, data.Length);
                        string again = Both(codec, codec.Read(inside, 5, data.Length));
                        if (again != written)
                        {
                            throw new Exception("read at offset 5: " + again + ", at 0: " + written);
                        }
                        // Read into the value of this type read before (another vector's,
                        // whose members must not show through), it reads the same.
                        object previous;
                        if (lastOf.TryGetValue(f[2], out previous))
                        {
                            string reused = Both(codec, codec.ReadInto(data, 0, data.Length, previous));
                            if (reused != written)
                            {
                                throw new Exception("read into an earlier value: " + reused + ", into a new one: " + written);
                            }
                        }
                        // Out of native memory, fresh and into the earlier value.
                        string native = Both(codec, Native(codec, data, data.Length, null));
                        if (native != written)
                        {
                            throw new Exception("read out of native memory: " + native + ", out of an array: " + written);
                        }
                        if (previous != null)
                        {
                            string reused = Both(codec, Native(codec, data, data.Length, codec.ReadInto(data, 0, data.Length, codec.Fresh())));
                            string nativeReused = Both(codec, Native(codec, data, data.Length, previous));
                            if (nativeReused != reused)
                            {
                                throw new Exception("read out of native memory into an earlier value: " + nativeReused + ", out of an array: " + reused);
                            }
                        }
                        lastOf[f[2]] = codec.Read(data, 0, data.Length);
                        output.Append(f[1]).Append(" ok ").Append(written).Append('\n');
                        break;
                    case "default":
                        output.Append(f[1]).Append(" ok ").Append(Both(codec, codec.Fresh())).Append('\n');
                        break;
                    case "idl":
                        output.Append(f[1]).Append(" ok ").Append(codec.TypeName).Append(' ')
                            .Append(Hex(Encoding.UTF8.GetBytes(codec.Idl), 0, Encoding.UTF8.GetByteCount(codec.Idl))).Append('\n');
                        break;
                    case "api":
                        UnionApi();
                        output.Append(f[1]).Append(" ok\n");
                        break;
                    case "hostile":
                        output.Append(f[1]).Append(' ').Append(Hostile(codec, Hex(f[4]))).Append('\n');
                        break;
                    case "tojson":
                        var sample = Hex(f[4]);
                        var json = Encoding.UTF8.GetBytes(codec.ToJson(codec.Read(sample, 0, sample.Length)));
                        output.Append(f[1]).Append(" ok ").Append(Hex(json, 0, json.Length)).Append('\n');
                        break;
                    case "fromjson":
                        var text = Encoding.UTF8.GetString(Hex(f[4]));
                        string fromJson = Both(codec, codec.FromJson(text, null));
                        // Read into the value of this type read before (another vector's),
                        // it reads the same.
                        object earlier;
                        if (lastJsonOf.TryGetValue(f[2], out earlier))
                        {
                            string reused = Both(codec, codec.FromJson(text, earlier));
                            if (reused != fromJson)
                            {
                                throw new Exception("JSON read into an earlier value: " + reused + ", into a new one: " + fromJson);
                            }
                        }
                        lastJsonOf[f[2]] = codec.FromJson(text, null);
                        output.Append(f[1]).Append(" ok ").Append(fromJson).Append('\n');
                        break;
                    case "jsonhostile":
                        output.Append(f[1]).Append(' ').Append(HostileJson(codec, Encoding.UTF8.GetString(Hex(f[4])))).Append('\n');
                        break;
                }
            }
            catch (Exception e)
            {
                output.Append(f[1]).Append(" error ").Append(e.ToString().Replace('\n', ' ')).Append('\n');
            }
        }
        Console.Write(output.ToString());
        return 0;
    }

    // The value in XCDR1 and XCDR2; the writer is reused (old bytes must not show through),
    // and the value written after three bytes must come out the same (alignment counts from
    // the sample's start).
    static string Both(ICodec codec, object value)
    {
        var result = new StringBuilder();
        foreach (var representation in new[] { DataRepresentation.Xcdr1, DataRepresentation.Xcdr2 })
        {
            writer.Reset();
            codec.Write(value, writer, representation);
            string alone = Hex(writer.Buffer, 0, writer.Length);
            writer.Reset();
            writer.WriteBytes(new byte[] { 0xa5, 0xa5, 0xa5 }, 0, 3);
            codec.Write(value, writer, representation);
            string after = Hex(writer.Buffer, 3, writer.Length - 3);
            if (after != alone)
            {
                throw new Exception("written after 3 bytes: " + after + ", alone: " + alone);
            }
            result.Append(result.Length == 0 ? "" : " ").Append(alone);
        }
        return result.ToString();
    }

    static void Expect(bool holds, string what)
    {
        if (!holds)
        {
            throw new Exception("expected " + what);
        }
    }

    // vec::U: case 1, 2: int32 a; case 3: string b; default: double c.
    static void UnionApi()
    {
        var u = new vec.U();
        Expect(u.Discriminator == 1 && u.a == 0, "a new union to hold its first branch");
        u.Discriminator = 2;
        Expect(u.a == 0, "a discriminator of the same branch to keep it");
        u.c = 1.5;
        Expect(u.Discriminator == 0 && u.c == 1.5, "the default branch to take a value no label names");
        try
        {
            Expect(u.a < 0, "no value");
        }
        catch (InvalidOperationException)
        {
        }
        u.Discriminator = 3;
        Expect(u.b == "", "a discriminator of another branch to select it at its default");
        u.a = 7;
        Expect(u.Discriminator == 1 && u.a == 7, "setting a branch to select it by its first label");
        var e = new vec.UE();
        e.p = new vec.Point { x = 1, y = 2 };
        Expect(e.Discriminator == vec.Color.BLUE, "an enum label");
        e.Discriminator = vec.Color.GREEN;
        writer.Reset();
        Cdr.Serialize(e, writer, DataRepresentation.Xcdr2, Extensibility.Final, "vec::UE", vec._Cdr.Write_UE);
        Expect(Hex(writer.Buffer, 0, writer.Length) == "0007000001000000", "no branch for GREEN");
    }

    static string Hostile(ICodec codec, byte[] data)
    {
        int count = 0;
        for (int variant = 0; variant < 3 * data.Length; variant++)
        {
            int at = variant % data.Length;
            // Truncated bytes in an array of their own size: a read past them would throw.
            var copy = new byte[variant < data.Length ? at : data.Length];
            Buffer.BlockCopy(data, 0, copy, 0, copy.Length);
            switch (variant / data.Length)
            {
                case 0: break;
                case 1: copy[at] ^= 0xff; break;
                default: copy[at] ^= 0x01; break;
            }
            string fromArray, fromNative;
            try
            {
                fromArray = Outcome(codec, () => codec.Read(copy, 0, copy.Length));
                fromNative = Outcome(codec, () => Native(codec, copy, copy.Length, null));
            }
            catch (Exception e)
            {
                return "crash " + variant + ": " + e.ToString().Replace('\n', ' ');
            }
            if (fromNative != fromArray)
            {
                return "crash " + variant + ": out of native memory " + fromNative + ", out of an array " + fromArray;
            }
            count++;
        }
        return "ok " + count;
    }

    // What reading gives: the value written in XCDR2, or the CdrException's message.
    static string Outcome(ICodec codec, Func<object> read)
    {
        try
        {
            object value = read();
            writer.Reset();
            codec.Write(value, writer, DataRepresentation.Xcdr2);
            return "value " + Hex(writer.Buffer, 0, writer.Length);
        }
        catch (CdrException e)
        {
            return "error " + e.Message;
        }
    }

    // The first `length` bytes of `data` read out of native memory (as a take reads the
    // bytes it is lent), with a scratch buffer that holds garbage: a byte read from it that
    // was not copied in first shows.
    static object Native(ICodec codec, byte[] data, int length, object into)
    {
        IntPtr at = System.Runtime.InteropServices.Marshal.AllocHGlobal(Math.Max(length, 1));
        try
        {
            System.Runtime.InteropServices.Marshal.Copy(data, 0, at, length);
            var scratch = new byte[length + 7];
            for (int i = 0; i < scratch.Length; i++)
            {
                scratch[i] = 0xa5;
            }
            return codec.ReadNative(at, length, scratch, into);
        }
        finally
        {
            System.Runtime.InteropServices.Marshal.FreeHGlobal(at);
        }
    }

    // Every truncation of the text, and each character replaced by others that break it
    // differently, read: a JsonException or a value (written again), never anything else.
    static string HostileJson(ICodec codec, string text)
    {
        const string replacements = "\"{}[],:0-.e\\ax";
        int count = 0;
        for (int variant = 0; variant < (replacements.Length + 1) * text.Length; variant++)
        {
            int at = variant % text.Length;
            int kind = variant / text.Length;
            string changed = kind == 0 ? text.Substring(0, at)
                : text.Substring(0, at) + replacements[kind - 1] + text.Substring(at + 1);
            try
            {
                object value = codec.FromJson(changed, null);
                writer.Reset();
                codec.Write(value, writer, DataRepresentation.Xcdr2);
                codec.ToJson(value);
            }
            catch (JsonException)
            {
            }
            catch (CdrException)
            {
                // A value the JSON holds that CDR cannot (a string past its bound).
            }
            catch (Exception e)
            {
                return "crash " + variant + " (" + changed + "): " + e.ToString().Replace('\n', ' ');
            }
            count++;
        }
        // Nested deeper than any type: refused, not a stack overflow.
        try
        {
            codec.FromJson("{\"_deep\":" + new string('[', 100000), null);
        }
        catch (JsonException)
        {
        }
        catch (Exception e)
        {
            return "crash nesting: " + e.ToString().Replace('\n', ' ');
        }
        return "ok " + count;
    }

    static ICodec CodecOf(string idlName, Extensibility extensibility)
    {
        var assembly = typeof(VectorDriver).Assembly;
        string name = idlName.Replace("::", ".");
        int dot = name.LastIndexOf('.');
        string scope = dot < 0 ? "" : name.Substring(0, dot + 1);
        string simple = name.Substring(dot + 1);
        Type type = assembly.GetType(name, true);
        Type support = assembly.GetType(name + "TypeSupport");
        if (support != null)
        {
            var codecType = typeof(TypeSupportCodec<>).MakeGenericType(type);
            return (ICodec)Activator.CreateInstance(codecType, Activator.CreateInstance(support));
        }
        Type cdr = assembly.GetType(scope + "_Cdr", true);
        var write = Delegate.CreateDelegate(typeof(CdrWrite<>).MakeGenericType(type), cdr.GetMethod("Write_" + simple));
        var read = Delegate.CreateDelegate(typeof(CdrRead<>).MakeGenericType(type), cdr.GetMethod("Read_" + simple));
        Type json = assembly.GetType(scope + "_Json", true);
        var writeJson = Delegate.CreateDelegate(typeof(JsonWrite<>).MakeGenericType(type), json.GetMethod("Write_" + simple));
        var readJson = Delegate.CreateDelegate(typeof(JsonRead<>).MakeGenericType(type), json.GetMethod("Read_" + simple));
        var unionType = typeof(UnionCodec<>).MakeGenericType(type);
        return (ICodec)Activator.CreateInstance(unionType, idlName, extensibility, write, read, writeJson, readJson);
    }

    static byte[] Hex(string hex)
    {
        var bytes = new byte[hex.Length / 2];
        for (int i = 0; i < bytes.Length; i++)
        {
            bytes[i] = Convert.ToByte(hex.Substring(2 * i, 2), 16);
        }
        return bytes;
    }

    static string Hex(byte[] bytes, int offset, int count)
    {
        var s = new StringBuilder(2 * count);
        for (int i = offset; i < offset + count; i++)
        {
            s.Append(bytes[i].ToString("x2"));
        }
        return s.ToString();
    }
}
