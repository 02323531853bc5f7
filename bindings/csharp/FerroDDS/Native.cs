// Every function of crates/ferrodds-c/include/ferrodds.h, declared once, and the structs it
// fills in, laid out as the header lays them out. Only blittable types cross (pointers,
// integers, bytes for C's bool, UTF-8 bytes for strings): nothing is marshalled per call, so
// writing a sample moves its bytes and nothing else. Strings are encoded by hand (Utf8.Z)
// rather than by the marshaller, whose LPStr is the ANSI code page on .NET Framework.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace FerroDDS
{
    /// <summary>A listener as the C API calls it (ferrodds_listener_fn).</summary>
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate void NativeListener(int entity, uint status, IntPtr arg);

    /// <summary>ferrodds_sample_info_t.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct NativeSampleInfo
    {
        public uint SampleState;
        public uint ViewState;
        public uint InstanceState;
        public byte ValidData;
        public long SourceTimestampNs;
        public fixed byte InstanceHandle[16];
        public fixed byte PublicationHandle[16];
        public long SequenceNumber;
    }

    /// <summary>ferrodds_sample_t: bytes lent by the reader, and their information.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct NativeSample
    {
        public byte* Data;
        public UIntPtr Size;
        public NativeSampleInfo Info;
    }

    /// <summary>ferrodds_matched_status_t.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct NativeMatchedStatus
    {
        public ulong TotalCount;
        public long TotalCountChange;
        public ulong CurrentCount;
        public long CurrentCountChange;
        public fixed byte LastHandle[16];
    }

    /// <summary>ferrodds_liveliness_changed_status_t.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct NativeLivelinessChangedStatus
    {
        public uint AliveCount;
        public uint NotAliveCount;
        public int AliveCountChange;
        public int NotAliveCountChange;
        public fixed byte LastPublicationHandle[16];
    }

    /// <summary>ferrodds_count_status_t.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct NativeCountStatus
    {
        public ulong TotalCount;
        public long TotalCountChange;
        public fixed byte LastInstanceHandle[16];
        public int LastReason;
    }

    internal static unsafe class Native
    {
        // Mono and .NET look for libferrodds_c.so (ferrodds_c.dll, libferrodds_c.dylib).
        private const string Lib = "ferrodds_c";
        private const CallingConvention C = CallingConvention.Cdecl;

        /// <summary>FERRODDS_INFINITY.</summary>
        internal const long Infinity = long.MaxValue;

        // Errors.
        [DllImport(Lib, CallingConvention = C)] internal static extern byte* ferrodds_last_error();
        [DllImport(Lib, CallingConvention = C)] internal static extern byte* ferrodds_strretcode(int code);

        // Entities.
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_participant(uint domainId, IntPtr qos);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_publisher(int participant, IntPtr qos);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_subscriber(int participant, IntPtr qos);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_topic(int participant, byte* name, int type);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_writer(int parent, int topic, IntPtr qos);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_reader(int parent, int topic, IntPtr qos);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_set_qos(int entity, IntPtr qos);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_userdata(IntPtr qos, IntPtr value, UIntPtr sz);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_get_datareaders(int subscriber, uint mask, int* readers, UIntPtr capacity);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_register_instance(int writer, byte* data, UIntPtr size, byte* handle);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_lookup_instance(int entity, byte* data, UIntPtr size, byte* handle);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_unregister_instance(int writer, byte* handle);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_dispose_instance(int writer, byte* handle);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_take_instance(int reader, NativeSample* samples, UIntPtr max, uint mask, byte* handle);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_read_instance(int reader, NativeSample* samples, UIntPtr max, uint mask, byte* handle);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_take_next_instance(int reader, NativeSample* samples, UIntPtr max, uint mask, byte* previous);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_read_next_instance(int reader, NativeSample* samples, UIntPtr max, uint mask, byte* previous);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_filtered_reader(int parent, int topic, IntPtr qos, byte* expression, byte** parameters, UIntPtr nparameters);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_delete(int entity);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_get_data_representation(int writer);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_get_parent(int entity);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_get_participant(int entity);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_get_guid(int entity, byte* guid);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_begin_coherent(int entity);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_end_coherent(int entity);

        // Types.
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_type_from_idl(byte* idl, byte* typeName);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_type_from_type_objects(byte** objects, UIntPtr* sizes, UIntPtr n, byte* typeName);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_get_type_object(int type, uint index, byte* buffer, UIntPtr capacity, UIntPtr* size);

        // QoS.
        [DllImport(Lib, CallingConvention = C)] internal static extern IntPtr ferrodds_create_qos();
        [DllImport(Lib, CallingConvention = C)] internal static extern void ferrodds_delete_qos(IntPtr qos);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_reliability(IntPtr qos, int kind, long maxBlockingTimeNs);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_durability(IntPtr qos, int kind);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_history(IntPtr qos, int kind, int depth);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_resource_limits(IntPtr qos, int maxSamples, int maxInstances, int maxSamplesPerInstance);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_deadline(IntPtr qos, long periodNs);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_lifespan(IntPtr qos, long durationNs);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_liveliness(IntPtr qos, int kind, long leaseDurationNs);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_ownership(IntPtr qos, int kind);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_ownership_strength(IntPtr qos, int strength);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_partition(IntPtr qos, uint n, byte** names);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_destination_order(IntPtr qos, int kind);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_time_based_filter(IntPtr qos, long minimumSeparationNs);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_data_representation(IntPtr qos, uint n, short* values);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_presentation(IntPtr qos, int accessScope, byte coherentAccess, byte orderedAccess);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_qset_writer_data_lifecycle(IntPtr qos, byte autodispose);

        // Writing.
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_write(int writer, byte* data, UIntPtr size);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_write_ts(int writer, byte* data, UIntPtr size, long timestampNs);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_request_buffer(int writer, UIntPtr size, byte** buffer);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_write_buffer(int writer, byte* buffer, UIntPtr size, long timestampNs);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_return_buffer(int writer, byte* buffer);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_dispose(int writer, byte* data, UIntPtr size);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_unregister(int writer, byte* data, UIntPtr size);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_write_json(int writer, byte* json);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_dispose_json(int writer, byte* json);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_unregister_json(int writer, byte* json);

        // Reading.
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_take(int reader, NativeSample* samples, UIntPtr max, uint mask);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_read(int reader, NativeSample* samples, UIntPtr max, uint mask);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_take_json(int reader, NativeSample* samples, UIntPtr max, uint mask);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_read_json(int reader, NativeSample* samples, UIntPtr max, uint mask);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_return_loan(int reader, NativeSample* samples, UIntPtr n);

        // Statuses and listeners.
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_get_matched_status(int entity, NativeMatchedStatus* status);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_get_liveliness_changed_status(int reader, NativeLivelinessChangedStatus* status);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_get_count_status(int entity, uint kind, NativeCountStatus* status);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_set_listener(int entity, uint mask, NativeListener listener, IntPtr arg);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_assert_liveliness(int entity);

        // Waiting.
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_readcondition(int reader, uint mask);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_querycondition(int reader, uint mask, byte* expression, byte** parameters, UIntPtr nparameters);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_statuscondition(int entity, uint mask);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_create_waitset(int participant);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_waitset_attach(int waitset, int entity, IntPtr arg);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_waitset_detach(int waitset, int entity);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_waitset_wait(int waitset, IntPtr* args, UIntPtr nargs, long timeoutNs);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_wait_for_matched(int entity, uint count, long timeoutNs);
        [DllImport(Lib, CallingConvention = C)] internal static extern int ferrodds_wait_for_acks(int writer, long timeoutNs);

        /// <summary><paramref name="rc"/> when it is not a failure; otherwise throws the
        /// failure, with this thread's last error (read at once: the next failing call on
        /// this thread replaces it).</summary>
        internal static int Check(int rc)
        {
            if (rc < 0)
            {
                throw DdsException.FromLastError(rc);
            }
            return rc;
        }

        /// <summary>The UTF-8 text at <paramref name="text"/> up to its NUL ("" for null).</summary>
        internal static string Text(byte* text)
        {
            if (text == null)
            {
                return "";
            }
            int n = 0;
            while (text[n] != 0)
            {
                n++;
            }
            return System.Text.Encoding.UTF8.GetString(text, n);
        }
    }

    /// <summary>Strings as C takes them.</summary>
    internal static class Utf8
    {
        /// <summary>Each of <paramref name="strings"/> as <see cref="Z(string)"/> makes it
        /// (none for a null list).</summary>
        internal static List<byte[]> Z(IList<string> strings)
        {
            var bytes = new List<byte[]>();
            if (strings != null)
            {
                foreach (var s in strings)
                {
                    bytes.Add(Z(s));
                }
            }
            return bytes;
        }

        /// <summary><paramref name="s"/> in UTF-8 with a NUL after it; null stays null, so
        /// that the C API names the missing argument.</summary>
        internal static byte[] Z(string s)
        {
            if (s == null)
            {
                return null;
            }
            var bytes = new byte[System.Text.Encoding.UTF8.GetByteCount(s) + 1];
            System.Text.Encoding.UTF8.GetBytes(s, 0, s.Length, bytes, 0);
            return bytes;
        }
    }
}
