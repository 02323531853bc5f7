// The DCPS infrastructure values: times, instance handles, state and status masks, sample
// information and communication statuses. Structs, so that taking samples and reading
// statuses allocates nothing of the binding's own.
using System;
using System.Text;

namespace FerroDDS
{
    /// <summary>A DDS Duration_t: seconds and nanoseconds, or infinite.</summary>
    public struct Duration : IEquatable<Duration>
    {
        /// <summary>The seconds of an infinite duration.</summary>
        public const int InfiniteSeconds = int.MaxValue;
        /// <summary>The nanoseconds of an infinite duration.</summary>
        public const uint InfiniteNanoseconds = int.MaxValue;

        /// <summary>Whole seconds.</summary>
        public int Seconds;
        /// <summary>Nanoseconds past <see cref="Seconds"/>.</summary>
        public uint NanoSeconds;

        /// <summary>A duration of <paramref name="seconds"/> and <paramref name="nanoseconds"/>.</summary>
        public Duration(int seconds, uint nanoseconds)
        {
            Seconds = seconds;
            NanoSeconds = nanoseconds;
        }

        /// <summary>The infinite duration.</summary>
        public static Duration Infinite { get { return new Duration(InfiniteSeconds, InfiniteNanoseconds); } }

        /// <summary>No time at all.</summary>
        public static Duration Zero { get { return new Duration(0, 0); } }

        /// <summary>Whether it is <see cref="Infinite"/>.</summary>
        public bool IsInfinite { get { return Seconds == InfiniteSeconds && NanoSeconds == InfiniteNanoseconds; } }

        /// <summary><paramref name="ms"/> milliseconds.</summary>
        public static Duration FromMilliseconds(long ms)
        {
            return new Duration(checked((int)(ms / 1000)), (uint)(ms % 1000) * 1000000u);
        }

        /// <summary><paramref name="span"/> as a duration.</summary>
        public static Duration FromTimeSpan(TimeSpan span)
        {
            long ns = span.Ticks * 100;
            return new Duration(checked((int)(ns / 1000000000)), (uint)(ns % 1000000000));
        }

        /// <summary>Nanoseconds as the C API counts them (<see cref="Native.Infinity"/> for
        /// infinite).</summary>
        internal long ToNanoseconds()
        {
            return IsInfinite ? Native.Infinity : Seconds * 1000000000L + NanoSeconds;
        }

        /// <inheritdoc/>
        public bool Equals(Duration other) { return Seconds == other.Seconds && NanoSeconds == other.NanoSeconds; }
        /// <inheritdoc/>
        public override bool Equals(object obj) { return obj is Duration && Equals((Duration)obj); }
        /// <inheritdoc/>
        public override int GetHashCode() { return Seconds * 31 + (int)NanoSeconds; }
        /// <inheritdoc/>
        public override string ToString() { return IsInfinite ? "infinite" : Seconds + "s " + NanoSeconds + "ns"; }
    }

    /// <summary>A DDS Time_t: a point in time since 1970.</summary>
    public struct Timestamp : IEquatable<Timestamp>
    {
        /// <summary>Whole seconds since 1970.</summary>
        public int Seconds;
        /// <summary>Nanoseconds past <see cref="Seconds"/>.</summary>
        public uint NanoSeconds;

        /// <summary>TIME_INVALID: the writer did not say when.</summary>
        public static Timestamp Invalid { get { return new Timestamp { Seconds = -1, NanoSeconds = uint.MaxValue }; } }

        /// <summary>The time <paramref name="ns"/> nanoseconds after 1970 (negative: invalid).</summary>
        public static Timestamp FromNanoseconds(long ns)
        {
            if (ns < 0)
            {
                return Invalid;
            }
            return new Timestamp { Seconds = (int)(ns / 1000000000), NanoSeconds = (uint)(ns % 1000000000) };
        }

        /// <summary>Nanoseconds since 1970 (-1 when invalid).</summary>
        public long ToNanoseconds()
        {
            return Seconds < 0 ? -1 : Seconds * 1000000000L + NanoSeconds;
        }

        /// <summary>The time <paramref name="time"/> (UTC) stands for.</summary>
        public static Timestamp FromDateTime(DateTime time)
        {
            return FromNanoseconds((time.ToUniversalTime() - new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc)).Ticks * 100);
        }

        /// <inheritdoc/>
        public bool Equals(Timestamp other) { return Seconds == other.Seconds && NanoSeconds == other.NanoSeconds; }
        /// <inheritdoc/>
        public override bool Equals(object obj) { return obj is Timestamp && Equals((Timestamp)obj); }
        /// <inheritdoc/>
        public override int GetHashCode() { return Seconds * 31 + (int)NanoSeconds; }
    }

    /// <summary>An instance (its key hash), or a writer or reader (its GUID): 16 bytes.</summary>
    public struct InstanceHandle : IEquatable<InstanceHandle>
    {
        // The 16 bytes, first byte most significant in High, so that ToString prints them in order.
        private readonly ulong _high;
        private readonly ulong _low;

        private InstanceHandle(ulong high, ulong low)
        {
            _high = high;
            _low = low;
        }

        /// <summary>HANDLE_NIL: no instance, no entity.</summary>
        public static InstanceHandle HandleNil { get { return default(InstanceHandle); } }

        /// <summary>Whether it is <see cref="HandleNil"/>.</summary>
        public bool IsNil { get { return _high == 0 && _low == 0; } }

        /// <summary>The handle of 16 bytes at <paramref name="bytes"/>.</summary>
        internal static unsafe InstanceHandle From(byte* bytes)
        {
            ulong high = 0, low = 0;
            for (int i = 0; i < 8; i++)
            {
                high = high << 8 | bytes[i];
                low = low << 8 | bytes[i + 8];
            }
            return new InstanceHandle(high, low);
        }

        /// <summary>The 16 bytes.</summary>
        public byte[] ToArray()
        {
            var bytes = new byte[16];
            for (int i = 0; i < 8; i++)
            {
                bytes[i] = (byte)(_high >> (56 - 8 * i));
                bytes[i + 8] = (byte)(_low >> (56 - 8 * i));
            }
            return bytes;
        }

        /// <inheritdoc/>
        public bool Equals(InstanceHandle other) { return _high == other._high && _low == other._low; }
        /// <inheritdoc/>
        public override bool Equals(object obj) { return obj is InstanceHandle && Equals((InstanceHandle)obj); }
        /// <inheritdoc/>
        public override int GetHashCode() { return (_high ^ _low).GetHashCode(); }
        /// <summary>Equality.</summary>
        public static bool operator ==(InstanceHandle a, InstanceHandle b) { return a.Equals(b); }
        /// <summary>Inequality.</summary>
        public static bool operator !=(InstanceHandle a, InstanceHandle b) { return !a.Equals(b); }
        /// <summary>The 16 bytes in hex.</summary>
        public override string ToString() { return _high.ToString("x16") + _low.ToString("x16"); }
    }

    /// <summary>Whether a sample was read before (DCPS SampleStateKind; a mask when or'ed).</summary>
    [Flags]
    public enum SampleStateKind : uint
    {
        /// <summary>Read before.</summary>
        ReadSampleState = 1,
        /// <summary>Not read before.</summary>
        NotReadSampleState = 2,
        /// <summary>Either.</summary>
        AnySampleState = 3,
    }

    /// <summary>Whether the reader saw the instance before (DCPS ViewStateKind).</summary>
    [Flags]
    public enum ViewStateKind : uint
    {
        /// <summary>The instance is new to the reader.</summary>
        NewViewState = 1,
        /// <summary>The instance was seen before.</summary>
        NotNewViewState = 2,
        /// <summary>Either.</summary>
        AnyViewState = 3,
    }

    /// <summary>An instance's state (DCPS InstanceStateKind).</summary>
    [Flags]
    public enum InstanceStateKind : uint
    {
        /// <summary>Alive.</summary>
        AliveInstanceState = 1,
        /// <summary>Disposed by a writer.</summary>
        NotAliveDisposedInstanceState = 2,
        /// <summary>No writer left.</summary>
        NotAliveNoWritersInstanceState = 4,
        /// <summary>Disposed or without writers.</summary>
        NotAliveInstanceState = 6,
        /// <summary>Any.</summary>
        AnyInstanceState = 7,
    }

    /// <summary>The state masks in the C API's one word (Cyclone DDS's DDS_*_STATE bits).</summary>
    internal static class StateMask
    {
        internal static uint Of(SampleStateKind samples, ViewStateKind views, InstanceStateKind instances)
        {
            if (((uint)samples & ~3u) != 0 || ((uint)views & ~3u) != 0 || ((uint)instances & ~7u) != 0)
            {
                throw new ArgumentOutOfRangeException("samples", "a state that is none of the DCPS states");
            }
            return (uint)samples | (uint)views << 2 | (uint)instances << 4;
        }
    }

    /// <summary>Communication statuses (DCPS StatusKind), or'ed into a mask.</summary>
    [Flags]
    public enum StatusMask : uint
    {
        /// <summary>No status.</summary>
        None = 0,
        /// <summary>INCONSISTENT_TOPIC, of a topic.</summary>
        InconsistentTopicStatus = 1,
        /// <summary>OFFERED_DEADLINE_MISSED, of a writer.</summary>
        OfferedDeadlineMissedStatus = 2,
        /// <summary>REQUESTED_DEADLINE_MISSED, of a reader.</summary>
        RequestedDeadlineMissedStatus = 4,
        /// <summary>OFFERED_INCOMPATIBLE_QOS, of a writer.</summary>
        OfferedIncompatibleQosStatus = 32,
        /// <summary>REQUESTED_INCOMPATIBLE_QOS, of a reader.</summary>
        RequestedIncompatibleQosStatus = 64,
        /// <summary>SAMPLE_LOST, of a reader.</summary>
        SampleLostStatus = 128,
        /// <summary>SAMPLE_REJECTED, of a reader.</summary>
        SampleRejectedStatus = 256,
        /// <summary>DATA_ON_READERS, of a subscriber.</summary>
        DataOnReadersStatus = 512,
        /// <summary>DATA_AVAILABLE, of a reader.</summary>
        DataAvailableStatus = 1024,
        /// <summary>LIVELINESS_LOST, of a writer.</summary>
        LivelinessLostStatus = 2048,
        /// <summary>LIVELINESS_CHANGED, of a reader.</summary>
        LivelinessChangedStatus = 4096,
        /// <summary>PUBLICATION_MATCHED, of a writer.</summary>
        PublicationMatchedStatus = 8192,
        /// <summary>SUBSCRIPTION_MATCHED, of a reader.</summary>
        SubscriptionMatchedStatus = 16384,
        /// <summary>Every status.</summary>
        DefaultStatusMask = 0x7fe7,
    }

    /// <summary>A sample's information (DCPS SampleInfo).</summary>
    public struct SampleInfo
    {
        /// <summary>Whether the sample was read before.</summary>
        public SampleStateKind SampleState;
        /// <summary>Whether the instance was seen before.</summary>
        public ViewStateKind ViewState;
        /// <summary>The instance's state when it was taken or read.</summary>
        public InstanceStateKind InstanceState;
        /// <summary>False for a sample that only reports an instance state change: its data
        /// holds the key alone.</summary>
        public bool ValidData;
        /// <summary>When the writer wrote it (<see cref="Timestamp.Invalid"/> when it did
        /// not say).</summary>
        public Timestamp SourceTimestamp;
        /// <summary>The instance.</summary>
        public InstanceHandle InstanceHandle;
        /// <summary>The writer.</summary>
        public InstanceHandle PublicationHandle;
        /// <summary>The writer's sequence number of the sample.</summary>
        public long SequenceNumber;

        internal static unsafe SampleInfo From(NativeSampleInfo* info)
        {
            return new SampleInfo
            {
                SampleState = (SampleStateKind)info->SampleState,
                ViewState = (ViewStateKind)(info->ViewState >> 2),
                InstanceState = (InstanceStateKind)(info->InstanceState >> 4),
                ValidData = info->ValidData != 0,
                SourceTimestamp = Timestamp.FromNanoseconds(info->SourceTimestampNs),
                InstanceHandle = InstanceHandle.From(info->InstanceHandle),
                PublicationHandle = InstanceHandle.From(info->PublicationHandle),
                SequenceNumber = info->SequenceNumber,
            };
        }
    }

    /// <summary>INCONSISTENT_TOPIC of a topic.</summary>
    public struct InconsistentTopicStatus
    {
        /// <summary>Remote topics of the same name and another type found.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
    }

    /// <summary>PUBLICATION_MATCHED of a writer.</summary>
    public struct PublicationMatchedStatus
    {
        /// <summary>Readers matched ever.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
        /// <summary>Readers matched now.</summary>
        public long CurrentCount;
        /// <summary>Change of CurrentCount since the status was last read.</summary>
        public long CurrentCountChange;
        /// <summary>The reader that matched or left last (nil: none yet).</summary>
        public InstanceHandle LastSubscriptionHandle;
    }

    /// <summary>SUBSCRIPTION_MATCHED of a reader.</summary>
    public struct SubscriptionMatchedStatus
    {
        /// <summary>Writers matched ever.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
        /// <summary>Writers matched now.</summary>
        public long CurrentCount;
        /// <summary>Change of CurrentCount since the status was last read.</summary>
        public long CurrentCountChange;
        /// <summary>The writer that matched or left last (nil: none yet).</summary>
        public InstanceHandle LastPublicationHandle;
    }

    /// <summary>LIVELINESS_CHANGED of a reader.</summary>
    public struct LivelinessChangedStatus
    {
        /// <summary>Matched writers alive now.</summary>
        public int AliveCount;
        /// <summary>Matched writers not alive now.</summary>
        public int NotAliveCount;
        /// <summary>Change of AliveCount since the status was last read (a read resets it).</summary>
        public int AliveCountChange;
        /// <summary>Change of NotAliveCount since the status was last read.</summary>
        public int NotAliveCountChange;
        /// <summary>The writer whose liveliness changed last.</summary>
        public InstanceHandle LastPublicationHandle;
    }

    /// <summary>LIVELINESS_LOST of a writer.</summary>
    public struct LivelinessLostStatus
    {
        /// <summary>Times the writer was not alive in time.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
    }

    /// <summary>OFFERED_DEADLINE_MISSED of a writer.</summary>
    public struct OfferedDeadlineMissedStatus
    {
        /// <summary>Deadlines missed.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
        /// <summary>The instance that missed last.</summary>
        public InstanceHandle LastInstanceHandle;
    }

    /// <summary>REQUESTED_DEADLINE_MISSED of a reader.</summary>
    public struct RequestedDeadlineMissedStatus
    {
        /// <summary>Deadlines missed.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
        /// <summary>The instance that missed last.</summary>
        public InstanceHandle LastInstanceHandle;
    }

    /// <summary>OFFERED_INCOMPATIBLE_QOS of a writer.</summary>
    public struct OfferedIncompatibleQosStatus
    {
        /// <summary>Readers found incompatible.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
        /// <summary>The DDS QosPolicyId_t of the policy found incompatible last (0: none).</summary>
        public int LastPolicyId;
    }

    /// <summary>REQUESTED_INCOMPATIBLE_QOS of a reader.</summary>
    public struct RequestedIncompatibleQosStatus
    {
        /// <summary>Writers found incompatible.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
        /// <summary>The DDS QosPolicyId_t of the policy found incompatible last (0: none).</summary>
        public int LastPolicyId;
    }

    /// <summary>SAMPLE_LOST of a reader.</summary>
    public struct SampleLostStatus
    {
        /// <summary>Samples the reader will never receive.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
    }

    /// <summary>Why a sample was rejected (DCPS SampleRejectedStatusKind).</summary>
    public enum SampleRejectedStatusKind
    {
        /// <summary>None yet.</summary>
        NotRejected = 0,
        /// <summary>RESOURCE_LIMITS max_instances.</summary>
        RejectedByInstancesLimit = 1,
        /// <summary>RESOURCE_LIMITS max_samples.</summary>
        RejectedBySamplesLimit = 2,
        /// <summary>RESOURCE_LIMITS max_samples_per_instance.</summary>
        RejectedBySamplesPerInstanceLimit = 3,
        /// <summary>The bytes were not a sample of the type (FerroDDS's own reason).</summary>
        RejectedUndecodable = 4,
    }

    /// <summary>SAMPLE_REJECTED of a reader.</summary>
    public struct SampleRejectedStatus
    {
        /// <summary>Samples rejected.</summary>
        public long TotalCount;
        /// <summary>Change of TotalCount since the status was last read (a read resets it).</summary>
        public long TotalCountChange;
        /// <summary>Why the last one was.</summary>
        public SampleRejectedStatusKind LastReason;
    }
}
