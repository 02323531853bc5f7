// QoS as DCPS's C# users write it (OpenDDSharp's names): a QoS object per entity kind, a
// policy object per policy, each starting at the DCPS default. Creating an entity sets every
// policy of its QoS on a C API QoS (ferrodds_qset_*), so the C API checks the values and
// names what is wrong; its defaults are the same DCPS defaults.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace FerroDDS
{
    /// <summary>RELIABILITY kinds.</summary>
    public enum ReliabilityQosPolicyKind
    {
        /// <summary>Best effort.</summary>
        BestEffortReliabilityQos = 0,
        /// <summary>Reliable.</summary>
        ReliableReliabilityQos = 1,
    }

    /// <summary>DURABILITY kinds.</summary>
    public enum DurabilityQosPolicyKind
    {
        /// <summary>Nothing for late joiners.</summary>
        VolatileDurabilityQos = 0,
        /// <summary>The writer keeps its history for late joiners.</summary>
        TransientLocalDurabilityQos = 1,
        /// <summary>A durability service keeps it beyond the writer.</summary>
        TransientDurabilityQos = 2,
        /// <summary>… and on disk.</summary>
        PersistentDurabilityQos = 3,
    }

    /// <summary>HISTORY kinds.</summary>
    public enum HistoryQosPolicyKind
    {
        /// <summary>The last <see cref="HistoryQosPolicy.Depth"/> samples of each instance.</summary>
        KeepLastHistoryQos = 0,
        /// <summary>Every sample, within the resource limits.</summary>
        KeepAllHistoryQos = 1,
    }

    /// <summary>OWNERSHIP kinds.</summary>
    public enum OwnershipQosPolicyKind
    {
        /// <summary>Every writer updates every instance.</summary>
        SharedOwnershipQos = 0,
        /// <summary>The strongest writer owns an instance.</summary>
        ExclusiveOwnershipQos = 1,
    }

    /// <summary>LIVELINESS kinds.</summary>
    public enum LivelinessQosPolicyKind
    {
        /// <summary>FerroDDS asserts it.</summary>
        AutomaticLivelinessQos = 0,
        /// <summary>The application asserts the participant's.</summary>
        ManualByParticipantLivelinessQos = 1,
        /// <summary>The application asserts each writer's.</summary>
        ManualByTopicLivelinessQos = 2,
    }

    /// <summary>DESTINATION_ORDER kinds.</summary>
    public enum DestinationOrderQosPolicyKind
    {
        /// <summary>In the order received.</summary>
        ByReceptionTimestampDestinationOrderQos = 0,
        /// <summary>In the order written.</summary>
        BySourceTimestampDestinationOrderQos = 1,
    }

    /// <summary>PRESENTATION access scopes.</summary>
    public enum PresentationQosPolicyAccessScopeKind
    {
        /// <summary>Per instance.</summary>
        InstancePresentationQos = 0,
        /// <summary>Across the instances of a writer or reader.</summary>
        TopicPresentationQos = 1,
        /// <summary>Across the writers of a publisher.</summary>
        GroupPresentationQos = 2,
    }

    /// <summary>RELIABILITY.</summary>
    public sealed class ReliabilityQosPolicy
    {
        /// <summary>Best effort or reliable.</summary>
        public ReliabilityQosPolicyKind Kind { get; set; }
        /// <summary>How long a reliable writer's write may block on a full history.</summary>
        public Duration MaxBlockingTime { get; set; }

        internal ReliabilityQosPolicy(ReliabilityQosPolicyKind kind)
        {
            Kind = kind;
            MaxBlockingTime = Duration.FromMilliseconds(100);
        }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_reliability(q, (int)Kind, MaxBlockingTime.ToNanoseconds())); }
    }

    /// <summary>DURABILITY.</summary>
    public sealed class DurabilityQosPolicy
    {
        /// <summary>What late joiners get.</summary>
        public DurabilityQosPolicyKind Kind { get; set; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_durability(q, (int)Kind)); }
    }

    /// <summary>HISTORY.</summary>
    public sealed class HistoryQosPolicy
    {
        /// <summary>Keep last or keep all.</summary>
        public HistoryQosPolicyKind Kind { get; set; }
        /// <summary>Samples kept per instance (keep last).</summary>
        public int Depth { get; set; }

        internal HistoryQosPolicy() { Depth = 1; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_history(q, (int)Kind, Depth)); }
    }

    /// <summary>RESOURCE_LIMITS.</summary>
    public sealed class ResourceLimitsQosPolicy
    {
        /// <summary>No limit (DDS LENGTH_UNLIMITED).</summary>
        public const int LengthUnlimited = -1;

        /// <summary>Samples in all.</summary>
        public int MaxSamples { get; set; }
        /// <summary>Instances.</summary>
        public int MaxInstances { get; set; }
        /// <summary>Samples of one instance.</summary>
        public int MaxSamplesPerInstance { get; set; }

        internal ResourceLimitsQosPolicy()
        {
            MaxSamples = LengthUnlimited;
            MaxInstances = LengthUnlimited;
            MaxSamplesPerInstance = LengthUnlimited;
        }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_resource_limits(q, MaxSamples, MaxInstances, MaxSamplesPerInstance)); }
    }

    /// <summary>DEADLINE.</summary>
    public sealed class DeadlineQosPolicy
    {
        /// <summary>The longest time between two samples of an instance.</summary>
        public Duration Period { get; set; }

        internal DeadlineQosPolicy() { Period = Duration.Infinite; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_deadline(q, Period.ToNanoseconds())); }
    }

    /// <summary>LIFESPAN.</summary>
    public sealed class LifespanQosPolicy
    {
        /// <summary>How long a sample stays valid.</summary>
        public Duration Duration { get; set; }

        internal LifespanQosPolicy() { Duration = Duration.Infinite; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_lifespan(q, Duration.ToNanoseconds())); }
    }

    /// <summary>LIVELINESS.</summary>
    public sealed class LivelinessQosPolicy
    {
        /// <summary>Who asserts liveliness.</summary>
        public LivelinessQosPolicyKind Kind { get; set; }
        /// <summary>How long a writer stays alive without asserting it.</summary>
        public Duration LeaseDuration { get; set; }

        internal LivelinessQosPolicy() { LeaseDuration = Duration.Infinite; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_liveliness(q, (int)Kind, LeaseDuration.ToNanoseconds())); }
    }

    /// <summary>OWNERSHIP.</summary>
    public sealed class OwnershipQosPolicy
    {
        /// <summary>Shared or exclusive.</summary>
        public OwnershipQosPolicyKind Kind { get; set; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_ownership(q, (int)Kind)); }
    }

    /// <summary>OWNERSHIP_STRENGTH of a writer.</summary>
    public sealed class OwnershipStrengthQosPolicy
    {
        /// <summary>The strength (the strongest writer owns an exclusive instance).</summary>
        public int Value { get; set; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_ownership_strength(q, Value)); }
    }

    /// <summary>PARTITION of a publisher or subscriber.</summary>
    public sealed class PartitionQosPolicy
    {
        /// <summary>The partition names (none: the default partition).</summary>
        public IList<string> Name { get; set; }

        internal PartitionQosPolicy() { Name = new List<string>(); }

        internal unsafe void Apply(IntPtr q)
        {
            var names = Utf8.Z(Name);
            using (var pinned = new PinnedArrays(names))
            {
                Native.Check(Native.ferrodds_qset_partition(q, (uint)names.Count, pinned.Pointers));
            }
        }
    }

    /// <summary>DESTINATION_ORDER.</summary>
    public sealed class DestinationOrderQosPolicy
    {
        /// <summary>By reception or by source timestamp.</summary>
        public DestinationOrderQosPolicyKind Kind { get; set; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_destination_order(q, (int)Kind)); }
    }

    /// <summary>TIME_BASED_FILTER of a reader.</summary>
    public sealed class TimeBasedFilterQosPolicy
    {
        /// <summary>The shortest time between two samples of an instance handed out.</summary>
        public Duration MinimumSeparation { get; set; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_time_based_filter(q, MinimumSeparation.ToNanoseconds())); }
    }

    /// <summary>DATA_REPRESENTATION: the XCDR versions offered (a writer sends the first)
    /// or accepted.</summary>
    public sealed class DataRepresentationQosPolicy
    {
        /// <summary>The representations; empty: the entity's default (a writer: XCDR1 for
        /// a final type, XCDR2 otherwise; a reader: both).</summary>
        public IList<DataRepresentation> Value { get; set; }

        internal DataRepresentationQosPolicy() { Value = new List<DataRepresentation>(); }

        internal bool IsSet { get { return Value != null && Value.Count > 0; } }

        internal void Apply(IntPtr q)
        {
            if (IsSet)
            {
                var values = new short[Value.Count];
                for (int i = 0; i < values.Length; i++)
                {
                    values[i] = (short)Value[i];
                }
                Set(q, values);
            }
        }

        internal static unsafe void Set(IntPtr q, short[] values)
        {
            fixed (short* p = values)
            {
                Native.Check(Native.ferrodds_qset_data_representation(q, (uint)values.Length, p));
            }
        }
    }

    /// <summary>PRESENTATION of a publisher or subscriber.</summary>
    public sealed class PresentationQosPolicy
    {
        /// <summary>The scope of coherent and ordered access.</summary>
        public PresentationQosPolicyAccessScopeKind AccessScope { get; set; }
        /// <summary>Whether changes come as coherent sets.</summary>
        public bool CoherentAccess { get; set; }
        /// <summary>Whether changes keep their order across the scope.</summary>
        public bool OrderedAccess { get; set; }

        internal void Apply(IntPtr q)
        {
            Native.Check(Native.ferrodds_qset_presentation(q, (int)AccessScope, (byte)(CoherentAccess ? 1 : 0), (byte)(OrderedAccess ? 1 : 0)));
        }
    }

    /// <summary>WRITER_DATA_LIFECYCLE.</summary>
    public sealed class WriterDataLifecycleQosPolicy
    {
        /// <summary>Whether unregistering an instance (and deleting the writer) disposes it.</summary>
        public bool AutodisposeUnregisteredInstances { get; set; }

        internal WriterDataLifecycleQosPolicy() { AutodisposeUnregisteredInstances = true; }

        internal void Apply(IntPtr q) { Native.Check(Native.ferrodds_qset_writer_data_lifecycle(q, (byte)(AutodisposeUnregisteredInstances ? 1 : 0))); }
    }

    /// <summary>A QoS that can be set on a C API QoS object.</summary>
    internal interface INativeQos
    {
        void Apply(IntPtr q);
    }

    /// <summary>The QoS of a DataWriter (defaults: reliable with 100 ms blocking, volatile,
    /// keep last 1).</summary>
    public sealed class DataWriterQos : INativeQos
    {
        /// <summary>DURABILITY.</summary>
        public DurabilityQosPolicy Durability { get; private set; }
        /// <summary>DEADLINE.</summary>
        public DeadlineQosPolicy Deadline { get; private set; }
        /// <summary>LIVELINESS.</summary>
        public LivelinessQosPolicy Liveliness { get; private set; }
        /// <summary>RELIABILITY.</summary>
        public ReliabilityQosPolicy Reliability { get; private set; }
        /// <summary>DESTINATION_ORDER.</summary>
        public DestinationOrderQosPolicy DestinationOrder { get; private set; }
        /// <summary>HISTORY.</summary>
        public HistoryQosPolicy History { get; private set; }
        /// <summary>RESOURCE_LIMITS.</summary>
        public ResourceLimitsQosPolicy ResourceLimits { get; private set; }
        /// <summary>LIFESPAN.</summary>
        public LifespanQosPolicy Lifespan { get; private set; }
        /// <summary>OWNERSHIP.</summary>
        public OwnershipQosPolicy Ownership { get; private set; }
        /// <summary>OWNERSHIP_STRENGTH.</summary>
        public OwnershipStrengthQosPolicy OwnershipStrength { get; private set; }
        /// <summary>WRITER_DATA_LIFECYCLE.</summary>
        public WriterDataLifecycleQosPolicy WriterDataLifecycle { get; private set; }
        /// <summary>DATA_REPRESENTATION.</summary>
        public DataRepresentationQosPolicy DataRepresentation { get; private set; }

        /// <summary>The defaults.</summary>
        public DataWriterQos()
        {
            Durability = new DurabilityQosPolicy();
            Deadline = new DeadlineQosPolicy();
            Liveliness = new LivelinessQosPolicy();
            Reliability = new ReliabilityQosPolicy(ReliabilityQosPolicyKind.ReliableReliabilityQos);
            DestinationOrder = new DestinationOrderQosPolicy();
            History = new HistoryQosPolicy();
            ResourceLimits = new ResourceLimitsQosPolicy();
            Lifespan = new LifespanQosPolicy();
            Ownership = new OwnershipQosPolicy();
            OwnershipStrength = new OwnershipStrengthQosPolicy();
            WriterDataLifecycle = new WriterDataLifecycleQosPolicy();
            DataRepresentation = new DataRepresentationQosPolicy();
        }

        void INativeQos.Apply(IntPtr q)
        {
            Durability.Apply(q);
            Deadline.Apply(q);
            Liveliness.Apply(q);
            Reliability.Apply(q);
            DestinationOrder.Apply(q);
            History.Apply(q);
            ResourceLimits.Apply(q);
            Lifespan.Apply(q);
            Ownership.Apply(q);
            OwnershipStrength.Apply(q);
            WriterDataLifecycle.Apply(q);
            DataRepresentation.Apply(q);
        }
    }

    /// <summary>The QoS of a DataReader (defaults: best effort, volatile, keep last 1,
    /// accepting XCDR1 and XCDR2).</summary>
    public sealed class DataReaderQos : INativeQos
    {
        /// <summary>DURABILITY.</summary>
        public DurabilityQosPolicy Durability { get; private set; }
        /// <summary>DEADLINE.</summary>
        public DeadlineQosPolicy Deadline { get; private set; }
        /// <summary>LIVELINESS.</summary>
        public LivelinessQosPolicy Liveliness { get; private set; }
        /// <summary>RELIABILITY.</summary>
        public ReliabilityQosPolicy Reliability { get; private set; }
        /// <summary>DESTINATION_ORDER.</summary>
        public DestinationOrderQosPolicy DestinationOrder { get; private set; }
        /// <summary>HISTORY.</summary>
        public HistoryQosPolicy History { get; private set; }
        /// <summary>RESOURCE_LIMITS.</summary>
        public ResourceLimitsQosPolicy ResourceLimits { get; private set; }
        /// <summary>OWNERSHIP.</summary>
        public OwnershipQosPolicy Ownership { get; private set; }
        /// <summary>TIME_BASED_FILTER.</summary>
        public TimeBasedFilterQosPolicy TimeBasedFilter { get; private set; }
        /// <summary>DATA_REPRESENTATION.</summary>
        public DataRepresentationQosPolicy DataRepresentation { get; private set; }

        /// <summary>The defaults.</summary>
        public DataReaderQos()
        {
            Durability = new DurabilityQosPolicy();
            Deadline = new DeadlineQosPolicy();
            Liveliness = new LivelinessQosPolicy();
            Reliability = new ReliabilityQosPolicy(ReliabilityQosPolicyKind.BestEffortReliabilityQos);
            DestinationOrder = new DestinationOrderQosPolicy();
            History = new HistoryQosPolicy();
            ResourceLimits = new ResourceLimitsQosPolicy();
            Ownership = new OwnershipQosPolicy();
            TimeBasedFilter = new TimeBasedFilterQosPolicy();
            DataRepresentation = new DataRepresentationQosPolicy();
        }

        void INativeQos.Apply(IntPtr q)
        {
            Durability.Apply(q);
            Deadline.Apply(q);
            Liveliness.Apply(q);
            Reliability.Apply(q);
            DestinationOrder.Apply(q);
            History.Apply(q);
            ResourceLimits.Apply(q);
            Ownership.Apply(q);
            TimeBasedFilter.Apply(q);
            DataRepresentation.Apply(q);
        }
    }

    /// <summary>USER_DATA: bytes the application announces with its entity (a participant's
    /// in SPDP).</summary>
    public sealed class UserDataQosPolicy
    {
        /// <summary>The bytes (empty: none).</summary>
        public IList<byte> Value { get; set; }

        internal UserDataQosPolicy() { Value = new List<byte>(); }

        internal unsafe void Apply(IntPtr q)
        {
            byte[] bytes = Value == null ? new byte[0] : new List<byte>(Value).ToArray();
            fixed (byte* p = bytes)
            {
                Native.Check(Native.ferrodds_qset_userdata(q, (IntPtr)p, (UIntPtr)bytes.Length));
            }
        }
    }

    /// <summary>The QoS of a DomainParticipant.</summary>
    public sealed class DomainParticipantQos : INativeQos
    {
        /// <summary>USER_DATA, announced in SPDP (Cyclone's and FerroDDS's
        /// <c>DCPSParticipant</c> built-in topic show it).</summary>
        public UserDataQosPolicy UserData { get; private set; }

        /// <summary>The defaults.</summary>
        public DomainParticipantQos()
        {
            UserData = new UserDataQosPolicy();
        }

        /// <summary>A copy of <paramref name="other"/>'s values into this one.</summary>
        internal void CopyFrom(DomainParticipantQos other)
        {
            UserData.Value = new List<byte>(other.UserData.Value ?? new List<byte>());
        }

        void INativeQos.Apply(IntPtr q)
        {
            UserData.Apply(q);
        }
    }

    /// <summary>The QoS of a Publisher.</summary>
    public sealed class PublisherQos : INativeQos
    {
        /// <summary>PRESENTATION.</summary>
        public PresentationQosPolicy Presentation { get; private set; }
        /// <summary>PARTITION.</summary>
        public PartitionQosPolicy Partition { get; private set; }

        /// <summary>The defaults.</summary>
        public PublisherQos()
        {
            Presentation = new PresentationQosPolicy();
            Partition = new PartitionQosPolicy();
        }

        void INativeQos.Apply(IntPtr q)
        {
            Presentation.Apply(q);
            Partition.Apply(q);
        }
    }

    /// <summary>The QoS of a Subscriber.</summary>
    public sealed class SubscriberQos : INativeQos
    {
        /// <summary>PRESENTATION.</summary>
        public PresentationQosPolicy Presentation { get; private set; }
        /// <summary>PARTITION.</summary>
        public PartitionQosPolicy Partition { get; private set; }

        /// <summary>The defaults.</summary>
        public SubscriberQos()
        {
            Presentation = new PresentationQosPolicy();
            Partition = new PartitionQosPolicy();
        }

        void INativeQos.Apply(IntPtr q)
        {
            Presentation.Apply(q);
            Partition.Apply(q);
        }
    }

    /// <summary>Creating an entity with a QoS: a C API QoS object for the one call.</summary>
    internal static class NativeQos
    {
        /// <summary>The handle <paramref name="create"/> makes with <paramref name="qos"/>
        /// (null: the defaults) set on a C API QoS; throws what the C API says is wrong.</summary>
        internal static int Create(INativeQos qos, Func<IntPtr, int> create)
        {
            IntPtr q = Native.ferrodds_create_qos();
            try
            {
                if (qos != null)
                {
                    qos.Apply(q);
                }
                return Native.Check(create(q));
            }
            finally
            {
                Native.ferrodds_delete_qos(q);
            }
        }
    }

    /// <summary>Byte arrays pinned for one call that takes an array of pointers to them
    /// (partition names, TypeObjects); a null array is a null pointer.</summary>
    internal sealed unsafe class PinnedArrays : IDisposable
    {
        private readonly GCHandle[] _handles;
        private readonly GCHandle _pointers;

        internal PinnedArrays(IList<byte[]> arrays)
        {
            _handles = new GCHandle[arrays.Count];
            var pointers = new IntPtr[arrays.Count];
            for (int i = 0; i < arrays.Count; i++)
            {
                if (arrays[i] != null)
                {
                    _handles[i] = GCHandle.Alloc(arrays[i], GCHandleType.Pinned);
                    pointers[i] = _handles[i].AddrOfPinnedObject();
                }
            }
            _pointers = GCHandle.Alloc(pointers, GCHandleType.Pinned);
        }

        /// <summary>The pointers (valid until disposed).</summary>
        internal byte** Pointers { get { return (byte**)_pointers.AddrOfPinnedObject(); } }

        public void Dispose()
        {
            foreach (var h in _handles)
            {
                if (h.IsAllocated)
                {
                    h.Free();
                }
            }
            _pointers.Free();
        }
    }
}
