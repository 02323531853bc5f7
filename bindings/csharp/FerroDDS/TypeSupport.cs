// What the FerroDDS C# binding needs of a sample type. `ferrodds idl --lang csharp`
// generates, for each struct of an IDL file, the C# class and a type support implementing
// ITypeSupport<T>; the binding (DataWriter<T>, DataReader<T>) calls nothing else of it.
namespace FerroDDS
{
    /// <summary>The XCDR version a writer sends (DATA_REPRESENTATION).</summary>
    public enum DataRepresentation
    {
        /// <summary>XCDR version 1 (Cyclone DDS's default for final and appendable types).</summary>
        Xcdr1 = 0,
        /// <summary>XCDR version 2.</summary>
        Xcdr2 = 2,
    }

    /// <summary>A sample type's name, its IDL, and its CDR code.</summary>
    public interface ITypeSupport<T>
    {
        /// <summary>The registered type name, <c>module::Name</c>.</summary>
        string TypeName { get; }

        /// <summary>IDL text that declares the type and every type it uses; the binding
        /// registers the type from it (<c>ferrodds_create_type_from_idl</c>).</summary>
        string Idl { get; }

        /// <summary>Appends <paramref name="sample"/> to <paramref name="writer"/>: the
        /// encapsulation header, then the body in <paramref name="representation"/>, little
        /// endian, padded to a multiple of 4 bytes with the header's options counting the
        /// padding — byte for byte what Cyclone DDS and Rust FerroDDS write.</summary>
        void Serialize(T sample, CdrWriter writer, DataRepresentation representation);

        /// <summary>The sample serialized in <paramref name="length"/> bytes at
        /// <paramref name="offset"/> of <paramref name="data"/> (encapsulation header first;
        /// XCDR1 or XCDR2, either byte order). For a sample that holds only a key (a
        /// dispose), the key members are set and the others left at their defaults.</summary>
        T Deserialize(byte[] data, int offset, int length);

        /// <summary><see cref="Deserialize(byte[], int, int)"/> into <paramref name="into"/>
        /// (a sample made or read before) when it is not null, every member overwritten in
        /// place, so that nothing new is allocated; the sample read, which is
        /// <paramref name="into"/> unless the bytes hold a key only or
        /// <paramref name="into"/> could not hold them.</summary>
        T Deserialize(byte[] data, int offset, int length, T into);
    }

    /// <summary>What <c>ferrodds idl --lang csharp</c> generates beside
    /// <see cref="ITypeSupport{T}"/>: a sample read straight out of native memory (the
    /// bytes a take lends), so that a sequence of octets is copied once, into its array.
    /// Readers use it when a type support has it, and
    /// <c>ITypeSupport.Deserialize(data, offset, length, into)</c> otherwise.</summary>
    public interface INativeCdrSupport<T>
    {
        /// <summary><c>ITypeSupport.Deserialize(data, offset, length, into)</c> of the
        /// <paramref name="length"/> bytes at <paramref name="data"/>, which stay there
        /// while it reads, with <paramref name="scratch"/> (at least
        /// <paramref name="length"/> bytes, its contents overwritten) for the bytes read one
        /// by one.</summary>
        T Deserialize(System.IntPtr data, int length, byte[] scratch, T into);
    }
}
