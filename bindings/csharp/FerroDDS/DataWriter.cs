// Writers. A typed writer serializes each sample it writes into a buffer the C API lends
// (`ferrodds_request_buffer`), the one the native writer's history then keeps it in, so
// that the sample crosses without a copy; disposes, unregisters, registrations and
// samples smaller than 32 KiB (for which the lending does not pay) serialize into its one
// reused CdrWriter's managed buffer, and the C API copies them. Once that buffer has grown to the largest
// sample, writing allocates nothing of the binding's own.
using System;

namespace FerroDDS
{
    /// <summary>A writer of one topic: samples as JSON text (FerroDDS's JSON view of the
    /// type), and the writer's statuses. <see cref="DataWriter{T}"/> adds typed samples.</summary>
    public class DataWriter : Entity
    {
        internal DataWriter(int handle, Publisher publisher, Topic topic) : base(handle, publisher)
        {
            Topic = topic;
        }

        /// <summary>Its topic.</summary>
        public Topic Topic { get; private set; }

        /// <summary>Its publisher.</summary>
        public Publisher Publisher { get { return (Publisher)Parent; } }

        /// <summary>Its GUID.</summary>
        public InstanceHandle InstanceHandle { get { return Statuses.Guid(Handle); } }

        /// <summary>Writes the sample <paramref name="json"/> describes.</summary>
        public void WriteJson(string json) { Json(JsonChange.Write, json); }

        /// <summary>Writes the sample whose JSON <paramref name="json"/> holds (see
        /// <c>IJsonSupport.ToJson(sample, writer)</c>): the text goes to FerroDDS
        /// through a buffer the writer keeps, with no string made.</summary>
        public unsafe void WriteJson(JsonWriter json)
        {
            if (json == null)
            {
                throw new ArgumentNullException("json");
            }
            fixed (byte* text = json.Utf8Z())
            {
                Native.Check(Native.ferrodds_write_json(Handle, text));
            }
        }

        /// <summary>Disposes the instance of the sample <paramref name="json"/> describes
        /// (its key members are enough).</summary>
        public void DisposeJson(string json) { Json(JsonChange.Dispose, json); }

        /// <summary>Unregisters the instance of the sample <paramref name="json"/> describes
        /// (its key members are enough).</summary>
        public void UnregisterInstanceJson(string json) { Json(JsonChange.Unregister, json); }

        private enum JsonChange
        {
            Write,
            Dispose,
            Unregister,
        }

        private unsafe void Json(JsonChange change, string json)
        {
            fixed (byte* text = Utf8.Z(json))
            {
                switch (change)
                {
                    case JsonChange.Write:
                        Native.Check(Native.ferrodds_write_json(Handle, text));
                        break;
                    case JsonChange.Dispose:
                        Native.Check(Native.ferrodds_dispose_json(Handle, text));
                        break;
                    default:
                        Native.Check(Native.ferrodds_unregister_json(Handle, text));
                        break;
                }
            }
        }

        /// <summary>Waits up to <paramref name="maxWait"/> until every matched reliable
        /// reader acknowledged what was written: <see cref="ReturnCode.Ok"/>, or
        /// <see cref="ReturnCode.Timeout"/>.</summary>
        public ReturnCode WaitForAcknowledgments(Duration maxWait)
        {
            return Statuses.OkOrTimeout(Native.ferrodds_wait_for_acks(Handle, maxWait.ToNanoseconds()));
        }

        /// <summary>Waits up to <paramref name="timeout"/> until at least
        /// <paramref name="count"/> readers matched: <see cref="ReturnCode.Ok"/>, or
        /// <see cref="ReturnCode.Timeout"/>.</summary>
        public ReturnCode WaitForMatched(int count, Duration timeout)
        {
            return Statuses.OkOrTimeout(Native.ferrodds_wait_for_matched(Handle, (uint)Math.Max(count, 0), timeout.ToNanoseconds()));
        }

        /// <summary>PUBLICATION_MATCHED.</summary>
        public PublicationMatchedStatus GetPublicationMatchedStatus()
        {
            var m = Statuses.Matched(Handle);
            return new PublicationMatchedStatus
            {
                TotalCount = m.Total, TotalCountChange = m.TotalChange, CurrentCount = m.Current,
                CurrentCountChange = m.CurrentChange, LastSubscriptionHandle = m.Last,
            };
        }

        /// <summary>LIVELINESS_LOST.</summary>
        public LivelinessLostStatus GetLivelinessLostStatus()
        {
            var c = Statuses.Count(Handle, StatusMask.LivelinessLostStatus);
            return new LivelinessLostStatus { TotalCount = c.Total, TotalCountChange = c.TotalChange };
        }

        /// <summary>OFFERED_DEADLINE_MISSED.</summary>
        public OfferedDeadlineMissedStatus GetOfferedDeadlineMissedStatus()
        {
            var c = Statuses.Count(Handle, StatusMask.OfferedDeadlineMissedStatus);
            return new OfferedDeadlineMissedStatus { TotalCount = c.Total, TotalCountChange = c.TotalChange, LastInstanceHandle = c.LastInstance };
        }

        /// <summary>OFFERED_INCOMPATIBLE_QOS.</summary>
        public OfferedIncompatibleQosStatus GetOfferedIncompatibleQosStatus()
        {
            var c = Statuses.Count(Handle, StatusMask.OfferedIncompatibleQosStatus);
            return new OfferedIncompatibleQosStatus { TotalCount = c.Total, TotalCountChange = c.TotalChange, LastPolicyId = c.LastReason };
        }

        /// <summary>Changes its QoS to <paramref name="qos"/>: only the policies DDS lets
        /// change may differ (deadline, latency budget, partition, user/topic/group data,
        /// lifespan, ownership strength, the writer data lifecycle); matches follow the
        /// change. A <see cref="DdsException"/> with <see cref="ReturnCode.ImmutablePolicy"/>
        /// when another policy would change, and nothing changes.</summary>
        public void SetQos(DataWriterQos qos)
        {
            NativeQos.Create(qos, q => Native.ferrodds_set_qos(Handle, q));
        }

        /// <summary>Asserts its liveliness (MANUAL_BY_TOPIC).</summary>
        public void AssertLiveliness() { Native.Check(Native.ferrodds_assert_liveliness(Handle)); }

        /// <summary>Sets its listener for the statuses in <paramref name="mask"/> (null or
        /// <see cref="StatusMask.None"/> removes it).</summary>
        public void SetListener(DataWriterListener listener, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            SetListenerCore(listener, mask);
        }
    }

    /// <summary>A writer of <typeparamref name="T"/> samples, serialized by the topic's
    /// <see cref="ITypeSupport{T}"/>. Its calls may come from any thread.</summary>
    public sealed class DataWriter<T> : DataWriter
    {
        private readonly ITypeSupport<T> _typeSupport;
        // Reused for every sample; also the lock that keeps one sample in it at a time.
        private readonly CdrWriter _cdr = new CdrWriter();
        // The size of the last sample written (under the lock): the next one is serialized
        // into a lent buffer a little larger than that.
        private int _lastSize;

        // Below this size a sample is copied rather than serialized into a lent buffer: the
        // lending's second call into the C API costs about what the copy saves. (Round
        // trips between two C# processes, alternated with the copying binding, session 37,
        // 2-core Intel Xeon VM: 8 KiB 24.5 → 25.9 µs, 16 and 32 KiB the same, 64 KiB
        // 52.2 → 50.2 µs, 1 MiB 1,279 → 1,149 µs.)
        private const int LendFrom = 32 * 1024;

        internal DataWriter(int handle, Publisher publisher, Topic<T> topic, DataRepresentation representation)
            : base(handle, publisher, topic)
        {
            _typeSupport = topic.TypeSupport;
            Representation = representation;
        }

        /// <summary>The XCDR version it sends (DATA_REPRESENTATION's first, or the type's
        /// default).</summary>
        public DataRepresentation Representation { get; private set; }

        /// <summary>Writes <paramref name="sample"/>, stamped now.</summary>
        public void Write(T sample) { Send(Change.Write, sample, null); }

        /// <summary>Writes <paramref name="sample"/> stamped <paramref name="timestamp"/>.</summary>
        public void Write(T sample, Timestamp timestamp) { Send(Change.Write, sample, timestamp.ToNanoseconds()); }

        /// <summary>Disposes the instance of <paramref name="instance"/> (its key members count).</summary>
        public void Dispose(T instance) { Send(Change.Dispose, instance, null); }

        /// <summary>Unregisters the instance of <paramref name="instance"/> (its key members count).</summary>
        public void UnregisterInstance(T instance) { Send(Change.Unregister, instance, null); }

        /// <summary>Unregisters instance <paramref name="handle"/> (from
        /// <see cref="RegisterInstance"/> or <see cref="LookupInstance"/>); with
        /// <see cref="InstanceHandle.HandleNil"/>, the instance of <paramref name="instance"/>.</summary>
        public void UnregisterInstance(T instance, InstanceHandle handle)
        {
            if (handle.IsNil)
            {
                UnregisterInstance(instance);
                return;
            }
            ByHandle(handle, false);
        }

        /// <summary>Disposes instance <paramref name="handle"/>; with
        /// <see cref="InstanceHandle.HandleNil"/>, the instance of <paramref name="instance"/>.</summary>
        public void Dispose(T instance, InstanceHandle handle)
        {
            if (handle.IsNil)
            {
                Dispose(instance);
                return;
            }
            ByHandle(handle, true);
        }

        /// <summary>Registers the instance of <paramref name="instance"/> (its key members
        /// count): its handle, for <see cref="Dispose(T, InstanceHandle)"/> and
        /// <see cref="UnregisterInstance(T, InstanceHandle)"/> (DCPS
        /// <c>register_instance</c>).</summary>
        public unsafe InstanceHandle RegisterInstance(T instance)
        {
            byte* handle = stackalloc byte[16];
            SendTo(Change.Register, instance, null, handle);
            return InstanceHandle.From(handle);
        }

        /// <summary>The instance of <paramref name="instance"/> if this writer registered or
        /// wrote it, or <see cref="InstanceHandle.HandleNil"/> (DCPS <c>lookup_instance</c>).</summary>
        public unsafe InstanceHandle LookupInstance(T instance)
        {
            if (instance == null)
            {
                throw new ArgumentNullException("instance");
            }
            lock (_cdr)
            {
                _cdr.Reset();
                _typeSupport.Serialize(instance, _cdr, Representation);
                return Instances.Lookup(Handle, _cdr);
            }
        }

        private unsafe void ByHandle(InstanceHandle handle, bool dispose)
        {
            byte[] bytes = handle.ToArray();
            fixed (byte* h = bytes)
            {
                Native.Check(dispose ? Native.ferrodds_dispose_instance(Handle, h) : Native.ferrodds_unregister_instance(Handle, h));
            }
        }

        private enum Change
        {
            Write,
            Dispose,
            Unregister,
            Register,
        }

        private unsafe void Send(Change change, T sample, long? timestamp)
        {
            SendTo(change, sample, timestamp, null);
        }

        /// <summary>Serializes <paramref name="sample"/> into a buffer the C API lends and
        /// writes it there; false when the sample outgrew the buffer, and is whole in the
        /// CdrWriter's managed buffer instead (the caller writes it from there). Under the
        /// lock.</summary>
        private unsafe bool WriteLent(T sample, long? timestamp)
        {
            // Room for a sample somewhat larger than the last, so that one of a slowly
            // growing size does not fall back each time.
            int capacity = (int)Math.Min((long)_lastSize * 9 / 8 + 64, int.MaxValue);
            byte* buffer;
            Native.Check(Native.ferrodds_request_buffer(Handle, (UIntPtr)capacity, &buffer));
            _cdr.AttachNative(buffer, capacity);
            try
            {
                _typeSupport.Serialize(sample, _cdr, Representation);
            }
            catch
            {
                _cdr.DetachNative();
                _cdr.Reset();
                Native.ferrodds_return_buffer(Handle, buffer);
                throw;
            }
            _lastSize = _cdr.Length;
            if (!_cdr.InNative)
            {
                // Outgrown: the sample is in the managed buffer now (and stays there for
                // SendTo, which sees the writer no longer lent).
                Native.Check(Native.ferrodds_return_buffer(Handle, buffer));
                return false;
            }
            _cdr.DetachNative();
            int rc = Native.ferrodds_write_buffer(Handle, buffer, (UIntPtr)_cdr.Length, timestamp ?? -1);
            _cdr.Reset();
            Native.Check(rc);
            return true;
        }

        /// <summary>Serializes <paramref name="sample"/> and hands it to the C API for
        /// <paramref name="change"/>; a registration writes the instance's handle to
        /// <paramref name="handle"/>.</summary>
        private unsafe void SendTo(Change change, T sample, long? timestamp, byte* handle)
        {
            if (sample == null)
            {
                // No bytes to hand over: the C API would see an empty sample.
                throw new ArgumentNullException("sample");
            }
            lock (_cdr)
            {
                // (A negative timestamp, before 1970, goes the copying way, which refuses it:
                // to ferrodds_write_buffer it means now.)
                bool lend = change == Change.Write && _lastSize >= LendFrom
                    && (timestamp ?? 0) >= 0;
                if (lend && WriteLent(sample, timestamp))
                {
                    return;
                }
                if (!lend)
                {
                    _cdr.Reset();
                    _typeSupport.Serialize(sample, _cdr, Representation);
                }
                if (change == Change.Write)
                {
                    _lastSize = _cdr.Length;
                }
                var size = (UIntPtr)_cdr.Length;
                fixed (byte* data = _cdr.Buffer)
                {
                    switch (change)
                    {
                        case Change.Write:
                            Native.Check(timestamp.HasValue
                                ? Native.ferrodds_write_ts(Handle, data, size, timestamp.Value)
                                : Native.ferrodds_write(Handle, data, size));
                            break;
                        case Change.Dispose:
                            Native.Check(Native.ferrodds_dispose(Handle, data, size));
                            break;
                        case Change.Register:
                            Native.Check(Native.ferrodds_register_instance(Handle, data, size, handle));
                            break;
                        default:
                            Native.Check(Native.ferrodds_unregister(Handle, data, size));
                            break;
                    }
                }
            }
        }
    }

    /// <summary>Instances as the C API finds them, for writers and readers alike.</summary>
    internal static unsafe class Instances
    {
        /// <summary>The instance of the sample serialized in <paramref name="cdr"/> as
        /// <paramref name="entity"/> holds it, or nil.</summary>
        internal static InstanceHandle Lookup(int entity, CdrWriter cdr)
        {
            byte* handle = stackalloc byte[16];
            fixed (byte* data = cdr.Buffer)
            {
                int found = Native.Check(Native.ferrodds_lookup_instance(entity, data, (UIntPtr)cdr.Length, handle));
                return found == 1 ? InstanceHandle.From(handle) : InstanceHandle.HandleNil;
            }
        }
    }

    /// <summary>Statuses and waits, as the C API gives them, for writers and readers alike.</summary>
    internal static unsafe class Statuses
    {
        internal static ReturnCode OkOrTimeout(int rc)
        {
            if (rc == -(int)ReturnCode.Timeout)
            {
                return ReturnCode.Timeout;
            }
            Native.Check(rc);
            return ReturnCode.Ok;
        }

        internal static InstanceHandle Guid(int handle)
        {
            byte* guid = stackalloc byte[16];
            Native.Check(Native.ferrodds_get_guid(handle, guid));
            return InstanceHandle.From(guid);
        }

        /// <summary>PUBLICATION_MATCHED or SUBSCRIPTION_MATCHED, as the C API gives it.</summary>
        internal struct MatchedCounts
        {
            internal long Total, TotalChange, Current, CurrentChange;
            internal InstanceHandle Last;
        }

        /// <summary>A total-count status, as the C API gives it.</summary>
        internal struct Counts
        {
            internal long Total, TotalChange;
            internal InstanceHandle LastInstance;
            internal int LastReason;
        }

        internal static MatchedCounts Matched(int handle)
        {
            NativeMatchedStatus s;
            Native.Check(Native.ferrodds_get_matched_status(handle, &s));
            return new MatchedCounts
            {
                Total = (long)s.TotalCount,
                TotalChange = s.TotalCountChange,
                Current = (long)s.CurrentCount,
                CurrentChange = s.CurrentCountChange,
                Last = InstanceHandle.From(s.LastHandle),
            };
        }

        internal static Counts Count(int handle, StatusMask kind)
        {
            NativeCountStatus s;
            Native.Check(Native.ferrodds_get_count_status(handle, (uint)kind, &s));
            return new Counts
            {
                Total = (long)s.TotalCount,
                TotalChange = s.TotalCountChange,
                LastInstance = InstanceHandle.From(s.LastInstanceHandle),
                LastReason = s.LastReason,
            };
        }
    }
}
