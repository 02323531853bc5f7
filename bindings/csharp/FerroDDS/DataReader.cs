// Readers. Taking or reading fills a pooled array of the C API's samples, whose bytes the
// reader lends; each sample is copied once into a pooled byte[] and deserialized from it (or
// decoded as JSON text), and the loan is returned before the call returns, whatever happens.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace FerroDDS
{
    /// <summary>A reader of one topic: samples as JSON text (FerroDDS's JSON view of the
    /// type), read conditions and the reader's statuses. <see cref="DataReader{T}"/> adds
    /// typed samples. Its calls may come from any thread.</summary>
    public class DataReader : Entity
    {
        // The most samples one call of the C API hands out (the C API takes a bound): all a
        // Read hands out, while a Take repeats until the reader has no more.
        private const int MaxBatch = 4096;

        // The C API's samples, reused; also the lock of a take or read.
        private NativeSample[] _loans = new NativeSample[32];
        private readonly object _collecting = new object();

        internal DataReader(int handle, Subscriber subscriber, Topic topic) : base(handle, subscriber)
        {
            Topic = topic;
        }

        /// <summary>Its topic.</summary>
        public Topic Topic { get; private set; }

        /// <summary>Its subscriber.</summary>
        public Subscriber Subscriber { get { return (Subscriber)Parent; } }

        /// <summary>Its GUID.</summary>
        public InstanceHandle InstanceHandle { get { return Statuses.Guid(Handle); } }

        /// <summary>Takes up to <paramref name="maxSamples"/> samples in the states given,
        /// as JSON text, into <paramref name="samples"/> and <paramref name="infos"/>
        /// (cleared first): <see cref="ReturnCode.NoData"/> when there were none.</summary>
        public ReturnCode TakeJson(List<string> samples, List<SampleInfo> infos, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.TakeJson, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, JsonText.Instance, false);
        }

        /// <summary><see cref="TakeJson"/>, leaving the samples in the reader, marked read.
        /// At most 4096 per call.</summary>
        public ReturnCode ReadJson(List<string> samples, List<SampleInfo> infos, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.ReadJson, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, JsonText.Instance, false);
        }

        /// <summary><see cref="TakeJson"/>, each sample's JSON read into a
        /// <typeparamref name="T"/> by <paramref name="json"/> (the JSON code
        /// <c>ferrodds idl --lang csharp</c> generates) straight from the UTF-8 text FerroDDS
        /// lends, without a string made of it. A sample without data (a dispose or an
        /// unregister) comes as the key members with the others at their defaults (null when
        /// FerroDDS got no more of it than a key hash).</summary>
        public ReturnCode TakeJson<T>(List<T> samples, List<SampleInfo> infos, IJsonSupport<T> json, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.TakeJson, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, JsonSamples(json), false);
        }

        /// <summary><see cref="TakeJson{T}"/>, leaving the samples in the reader, marked
        /// read. At most 4096 per call.</summary>
        public ReturnCode ReadJson<T>(List<T> samples, List<SampleInfo> infos, IJsonSupport<T> json, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.ReadJson, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, JsonSamples(json), false);
        }

        /// <summary><see cref="TakeJson{T}"/> into the objects <paramref name="samples"/>
        /// already holds (as <c>DataReader&lt;T&gt;.TakeReusing</c> takes CDR): their nested
        /// objects, lists and arrays of octets of the same length are filled in place, so
        /// that taking samples of the same shape again and again allocates only their
        /// strings and a short string per float (its digits). What the application kept
        /// from an earlier reusing take is overwritten: copy it first.</summary>
        public ReturnCode TakeJsonReusing<T>(List<T> samples, List<SampleInfo> infos, IJsonSupport<T> json, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.TakeJson, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, JsonSamples(json), true);
        }

        /// <summary><see cref="ReadJson{T}"/> into the objects <paramref name="samples"/>
        /// already holds, as <see cref="TakeJsonReusing{T}"/> takes.</summary>
        public ReturnCode ReadJsonReusing<T>(List<T> samples, List<SampleInfo> infos, IJsonSupport<T> json, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.ReadJson, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, JsonSamples(json), true);
        }

        // The converter of the last JSON type support used, kept: one per reader in practice.
        private object _jsonSamples;

        private JsonConverter<T> JsonSamples<T>(IJsonSupport<T> json)
        {
            if (json == null)
            {
                throw new ArgumentNullException("json");
            }
            var kept = _jsonSamples as JsonConverter<T>;
            if (kept == null || kept.Support != json)
            {
                kept = new JsonConverter<T>(json);
                _jsonSamples = kept;
            }
            return kept;
        }

        /// <summary>JSON text read into samples by generated code.</summary>
        private sealed unsafe class JsonConverter<T> : Converter<T>
        {
            internal readonly IJsonSupport<T> Support;
            private readonly JsonReader _reader = new JsonReader(new byte[0], 0, 0);

            internal JsonConverter(IJsonSupport<T> support)
            {
                Support = support;
            }

            internal override T Convert(byte* data, int size, T into)
            {
                if (data == null || size == 0)
                {
                    // FerroDDS had no more of it than a key hash.
                    return default(T);
                }
                _reader.Load(data, size);
                return Support.FromJson(_reader, into);
            }
        }

        /// <summary>How the C API is asked for samples.</summary>
        internal enum Access
        {
            Take,
            Read,
            TakeJson,
            ReadJson,
            TakeInstance,
            ReadInstance,
            TakeNextInstance,
            ReadNextInstance,
        }

        /// <summary>Turns one lent sample into an item of the caller's list.</summary>
        internal abstract unsafe class Converter<TItem>
        {
            /// <summary>The item of the <paramref name="size"/> bytes at <paramref name="data"/>
            /// (null when the C API had none: a dispose that came as a key hash only), read
            /// into <paramref name="into"/> where the item can be (null: a new one).</summary>
            internal abstract TItem Convert(byte* data, int size, TItem into);

            // Items cut from a reusing call's list, to read into (at most MaxSpares).
            private const int MaxSpares = 4096;
            private Stack<TItem> _spares;

            /// <summary>An item of an earlier reusing call to read into, if one is spare.</summary>
            internal TItem Spare()
            {
                return _spares != null && _spares.Count > 0 ? _spares.Pop() : default(TItem);
            }

            /// <summary>An item a reusing call cut from the caller's list: kept to read
            /// into later.</summary>
            internal void Recycle(TItem item)
            {
                if (item == null)
                {
                    return;
                }
                if (_spares == null)
                {
                    _spares = new Stack<TItem>();
                }
                if (_spares.Count < MaxSpares)
                {
                    _spares.Push(item);
                }
            }
        }

        private sealed unsafe class JsonText : Converter<string>
        {
            internal static readonly JsonText Instance = new JsonText();

            internal override string Convert(byte* data, int size, string into)
            {
                return data == null ? "" : System.Text.Encoding.UTF8.GetString(data, size);
            }
        }

        /// <summary>Takes or reads up to <paramref name="maxSamples"/> samples (negative: no
        /// limit) from <paramref name="source"/> (this reader, or a condition of it) into
        /// <paramref name="items"/> and <paramref name="infos"/>; with <paramref name="reuse"/>,
        /// the items already in the list are read into, and the list cut to what was taken.</summary>
        internal unsafe ReturnCode Collect<TItem>(Access access, int source, int maxSamples, uint mask, List<TItem> items, List<SampleInfo> infos, Converter<TItem> converter, bool reuse, InstanceHandle instance = default(InstanceHandle))
        {
            if (items == null)
            {
                throw new ArgumentNullException("items");
            }
            if (infos == null)
            {
                throw new ArgumentNullException("infos");
            }
            lock (_collecting)
            {
                if (!reuse)
                {
                    items.Clear();
                }
                infos.Clear();
                try
                {
                    return CollectLocked(access, source, maxSamples, mask, items, infos, converter, reuse, instance);
                }
                finally
                {
                    // What a reusing call did not read into goes (and all, after an error),
                    // kept for the next reusing call, so that takes of varying counts do
                    // not allocate either.
                    if (items.Count > infos.Count)
                    {
                        // Last first, so that the next call reads into them in their order.
                        for (int i = items.Count - 1; i >= infos.Count; i--)
                        {
                            converter.Recycle(items[i]);
                        }
                        items.RemoveRange(infos.Count, items.Count - infos.Count);
                    }
                }
            }
        }

        private unsafe ReturnCode CollectLocked<TItem>(Access access, int source, int maxSamples, uint mask, List<TItem> items, List<SampleInfo> infos, Converter<TItem> converter, bool reuse, InstanceHandle instance)
        {
            // Repeated for more only where a repeat takes more of the same: not a next
            // instance, which would move on to the instance after.
            bool take = access == Access.Take || access == Access.TakeJson || access == Access.TakeInstance;
            bool byHandle = access == Access.TakeInstance || access == Access.ReadInstance
                || ((access == Access.TakeNextInstance || access == Access.ReadNextInstance) && !instance.IsNil);
            byte[] handle = byHandle ? instance.ToArray() : null;
            int remaining = maxSamples < 0 ? int.MaxValue : maxSamples;
            int batch = Math.Min(remaining, take ? _loans.Length : MaxBatch);
            while (remaining > 0)
            {
                if (_loans.Length < batch)
                {
                    _loans = new NativeSample[batch];
                }
                int n;
                fixed (NativeSample* samples = _loans)
                fixed (byte* h = handle)
                {
                    n = Call(access, source, samples, batch, mask, h);
                    if (n == -(int)ReturnCode.NoData)
                    {
                        break;
                    }
                    Native.Check(n);
                    try
                    {
                        for (int i = 0; i < n; i++)
                        {
                            int at = infos.Count;
                            TItem into = !reuse ? default(TItem) : at < items.Count ? items[at] : converter.Spare();
                            TItem item = converter.Convert(samples[i].Data, checked((int)samples[i].Size), into);
                            if (at < items.Count)
                            {
                                items[at] = item;
                            }
                            else
                            {
                                items.Add(item);
                            }
                            infos.Add(SampleInfo.From(&samples[i].Info));
                        }
                    }
                    finally
                    {
                        Native.Check(Native.ferrodds_return_loan(Handle, samples, (UIntPtr)n));
                    }
                }
                remaining -= n;
                // A read cannot be repeated for more: the samples it read stay, marked read.
                if (!take || n < batch)
                {
                    break;
                }
                batch = Math.Min(remaining, Math.Min(batch * 2, MaxBatch));
            }
            return infos.Count == 0 ? ReturnCode.NoData : ReturnCode.Ok;
        }

        private static unsafe int Call(Access access, int source, NativeSample* samples, int max, uint mask, byte* handle)
        {
            var n = (UIntPtr)max;
            switch (access)
            {
                case Access.Take: return Native.ferrodds_take(source, samples, n, mask);
                case Access.Read: return Native.ferrodds_read(source, samples, n, mask);
                case Access.TakeJson: return Native.ferrodds_take_json(source, samples, n, mask);
                case Access.ReadJson: return Native.ferrodds_read_json(source, samples, n, mask);
                case Access.TakeInstance: return Native.ferrodds_take_instance(source, samples, n, mask, handle);
                case Access.ReadInstance: return Native.ferrodds_read_instance(source, samples, n, mask, handle);
                case Access.TakeNextInstance: return Native.ferrodds_take_next_instance(source, samples, n, mask, handle);
                default: return Native.ferrodds_read_next_instance(source, samples, n, mask, handle);
            }
        }

        /// <summary>A read condition that holds while samples in the states given wait here.</summary>
        public ReadCondition CreateReadCondition(SampleStateKind sampleStates = SampleStateKind.AnySampleState,
            ViewStateKind viewStates = ViewStateKind.AnyViewState, InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            uint mask = StateMask.Of(sampleStates, viewStates, instanceStates);
            int handle = Native.Check(Native.ferrodds_create_readcondition(Handle, mask));
            return new ReadCondition(handle, this, sampleStates, viewStates, instanceStates);
        }

        /// <summary>A query condition: a read condition that also keeps only the samples
        /// <paramref name="queryExpression"/> (DDS SQL over the type's members, <c>%n</c>
        /// for <paramref name="queryParameters"/>[n]) holds for.</summary>
        public unsafe QueryCondition CreateQueryCondition(SampleStateKind sampleStates, ViewStateKind viewStates, InstanceStateKind instanceStates,
            string queryExpression, params string[] queryParameters)
        {
            uint mask = StateMask.Of(sampleStates, viewStates, instanceStates);
            var parameters = Utf8.Z(queryParameters);
            using (var pinned = new PinnedArrays(parameters))
            fixed (byte* expression = Utf8.Z(queryExpression))
            {
                int handle = Native.Check(Native.ferrodds_create_querycondition(Handle, mask, expression, pinned.Pointers, (UIntPtr)parameters.Count));
                return new QueryCondition(handle, this, sampleStates, viewStates, instanceStates, queryExpression, queryParameters);
            }
        }

        /// <summary>Deletes <paramref name="condition"/> (made by this reader).</summary>
        public void DeleteReadCondition(ReadCondition condition)
        {
            DeleteChild(condition == null ? null : condition.Node);
        }

        /// <summary>Waits up to <paramref name="timeout"/> until at least
        /// <paramref name="count"/> writers matched: <see cref="ReturnCode.Ok"/>, or
        /// <see cref="ReturnCode.Timeout"/>.</summary>
        public ReturnCode WaitForMatched(int count, Duration timeout)
        {
            return Statuses.OkOrTimeout(Native.ferrodds_wait_for_matched(Handle, (uint)Math.Max(count, 0), timeout.ToNanoseconds()));
        }

        /// <summary>Changes its QoS to <paramref name="qos"/>: only the policies DDS lets
        /// change may differ (deadline, latency budget, partition, user/topic/group data,
        /// time-based filter, the reader data lifecycle); matches follow the change. A
        /// <see cref="DdsException"/> with <see cref="ReturnCode.ImmutablePolicy"/> when
        /// another policy would change, and nothing changes.</summary>
        public void SetQos(DataReaderQos qos)
        {
            NativeQos.Create(qos, q => Native.ferrodds_set_qos(Handle, q));
        }

        /// <summary>SUBSCRIPTION_MATCHED.</summary>
        public SubscriptionMatchedStatus GetSubscriptionMatchedStatus()
        {
            var m = Statuses.Matched(Handle);
            return new SubscriptionMatchedStatus
            {
                TotalCount = m.Total, TotalCountChange = m.TotalChange, CurrentCount = m.Current,
                CurrentCountChange = m.CurrentChange, LastPublicationHandle = m.Last,
            };
        }

        /// <summary>LIVELINESS_CHANGED.</summary>
        public unsafe LivelinessChangedStatus GetLivelinessChangedStatus()
        {
            NativeLivelinessChangedStatus s;
            Native.Check(Native.ferrodds_get_liveliness_changed_status(Handle, &s));
            return new LivelinessChangedStatus
            {
                AliveCount = (int)s.AliveCount,
                NotAliveCount = (int)s.NotAliveCount,
                AliveCountChange = s.AliveCountChange,
                NotAliveCountChange = s.NotAliveCountChange,
                LastPublicationHandle = InstanceHandle.From(s.LastPublicationHandle),
            };
        }

        /// <summary>REQUESTED_DEADLINE_MISSED.</summary>
        public RequestedDeadlineMissedStatus GetRequestedDeadlineMissedStatus()
        {
            var c = Statuses.Count(Handle, StatusMask.RequestedDeadlineMissedStatus);
            return new RequestedDeadlineMissedStatus { TotalCount = c.Total, TotalCountChange = c.TotalChange, LastInstanceHandle = c.LastInstance };
        }

        /// <summary>REQUESTED_INCOMPATIBLE_QOS.</summary>
        public RequestedIncompatibleQosStatus GetRequestedIncompatibleQosStatus()
        {
            var c = Statuses.Count(Handle, StatusMask.RequestedIncompatibleQosStatus);
            return new RequestedIncompatibleQosStatus { TotalCount = c.Total, TotalCountChange = c.TotalChange, LastPolicyId = c.LastReason };
        }

        /// <summary>SAMPLE_LOST.</summary>
        public SampleLostStatus GetSampleLostStatus()
        {
            var c = Statuses.Count(Handle, StatusMask.SampleLostStatus);
            return new SampleLostStatus { TotalCount = c.Total, TotalCountChange = c.TotalChange };
        }

        /// <summary>SAMPLE_REJECTED.</summary>
        public SampleRejectedStatus GetSampleRejectedStatus()
        {
            var c = Statuses.Count(Handle, StatusMask.SampleRejectedStatus);
            return new SampleRejectedStatus { TotalCount = c.Total, TotalCountChange = c.TotalChange, LastReason = (SampleRejectedStatusKind)c.LastReason };
        }

        /// <summary>Sets its listener for the statuses in <paramref name="mask"/> (null or
        /// <see cref="StatusMask.None"/> removes it).</summary>
        public void SetListener(DataReaderListener listener, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            SetListenerCore(listener, mask);
        }
    }

    /// <summary>A reader of <typeparamref name="T"/> samples, deserialized by the topic's
    /// <see cref="ITypeSupport{T}"/>.</summary>
    public sealed class DataReader<T> : DataReader
    {
        private readonly Samples _samples;

        private readonly ITypeSupport<T> _typeSupport;
        // The key of LookupInstance's sample; also the lock that keeps one in it at a time.
        private readonly CdrWriter _keys = new CdrWriter();

        internal DataReader(int handle, Subscriber subscriber, Topic<T> topic) : base(handle, subscriber, topic)
        {
            _samples = new Samples(topic.TypeSupport);
            _typeSupport = topic.TypeSupport;
        }

        /// <summary>Takes up to <paramref name="maxSamples"/> samples in the states given
        /// into <paramref name="samples"/> and <paramref name="infos"/> (cleared first):
        /// <see cref="ReturnCode.NoData"/> when there were none. A sample without valid data
        /// (<see cref="SampleInfo.ValidData"/> false) holds its instance's key.</summary>
        public ReturnCode Take(List<T> samples, List<SampleInfo> infos, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.Take, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, _samples, false);
        }

        /// <summary><see cref="Take"/> into the objects <paramref name="samples"/> already
        /// holds: the i-th sample taken is read into <c>samples[i]</c> in place (every member
        /// overwritten, nested objects and arrays too, a sequence of octets into its array
        /// when the length is the same), new objects are made only past the list's end, and
        /// the list is then cut to the samples taken; the objects cut are kept by the reader
        /// and read into when a later call's list is shorter than what it takes. Taking
        /// samples of the same sizes again and again allocates nothing. What the application
        /// kept from an earlier reusing take (a sample, one of its arrays) is overwritten:
        /// copy it first.</summary>
        public ReturnCode TakeReusing(List<T> samples, List<SampleInfo> infos, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.Take, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, _samples, true);
        }

        /// <summary><see cref="Take"/>, leaving the samples in the reader, marked read.
        /// At most 4096 per call.</summary>
        public ReturnCode Read(List<T> samples, List<SampleInfo> infos, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.Read, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, _samples, false);
        }

        /// <summary><see cref="Read"/> into the objects <paramref name="samples"/> already
        /// holds, as <see cref="TakeReusing"/> takes.</summary>
        public ReturnCode ReadReusing(List<T> samples, List<SampleInfo> infos, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.Read, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, _samples, true);
        }

        /// <summary><see cref="Take"/> of the samples of one instance (DCPS
        /// <c>take_instance</c>).</summary>
        public ReturnCode TakeInstance(List<T> samples, List<SampleInfo> infos, InstanceHandle handle, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.TakeInstance, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, _samples, false, handle);
        }

        /// <summary><see cref="Read"/> of the samples of one instance (DCPS
        /// <c>read_instance</c>).</summary>
        public ReturnCode ReadInstance(List<T> samples, List<SampleInfo> infos, InstanceHandle handle, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.ReadInstance, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, _samples, false, handle);
        }

        /// <summary><see cref="Take"/> of the samples of the first instance after
        /// <paramref name="previousHandle"/> (<see cref="InstanceHandle.HandleNil"/>: from the
        /// first) that has any in the states given, in instance-handle order: DCPS
        /// <c>take_next_instance</c>. One instance per call; <see cref="ReturnCode.NoData"/>
        /// past the last.</summary>
        public ReturnCode TakeNextInstance(List<T> samples, List<SampleInfo> infos, InstanceHandle previousHandle, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.TakeNextInstance, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, _samples, false, previousHandle);
        }

        /// <summary><see cref="TakeNextInstance"/>, leaving the samples in the reader,
        /// marked read (DCPS <c>read_next_instance</c>).</summary>
        public ReturnCode ReadNextInstance(List<T> samples, List<SampleInfo> infos, InstanceHandle previousHandle, int maxSamples = ResourceLimitsQosPolicy.LengthUnlimited,
            SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState,
            InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            return Collect(Access.ReadNextInstance, Handle, maxSamples, StateMask.Of(sampleStates, viewStates, instanceStates), samples, infos, _samples, false, previousHandle);
        }

        /// <summary>The instance of <paramref name="instance"/> (its key members count) as
        /// this reader holds it, or <see cref="InstanceHandle.HandleNil"/> (DCPS
        /// <c>lookup_instance</c>).</summary>
        public InstanceHandle LookupInstance(T instance)
        {
            if (instance == null)
            {
                throw new ArgumentNullException("instance");
            }
            lock (_keys)
            {
                _keys.Reset();
                _typeSupport.Serialize(instance, _keys, DataRepresentation.Xcdr2);
                return Instances.Lookup(Handle, _keys);
            }
        }

        /// <summary><see cref="Take"/> of the samples <paramref name="condition"/> selects.</summary>
        public ReturnCode TakeWithCondition(List<T> samples, List<SampleInfo> infos, int maxSamples, ReadCondition condition)
        {
            return Collect(Access.Take, SourceOf(condition), maxSamples, 0, samples, infos, _samples, false);
        }

        /// <summary><see cref="Read"/> of the samples <paramref name="condition"/> selects.</summary>
        public ReturnCode ReadWithCondition(List<T> samples, List<SampleInfo> infos, int maxSamples, ReadCondition condition)
        {
            return Collect(Access.Read, SourceOf(condition), maxSamples, 0, samples, infos, _samples, false);
        }

        // The C API takes through a condition (0, for none, it names).
        private static int SourceOf(ReadCondition condition)
        {
            return condition == null ? 0 : condition.Node.Handle;
        }

        /// <summary>Samples deserialized from a pooled copy of the lent bytes.</summary>
        private sealed unsafe class Samples : Converter<T>
        {
            private readonly ITypeSupport<T> _typeSupport;
            // Generated type supports read the lent bytes where they are.
            private readonly INativeCdrSupport<T> _native;
            // Guarded by the reader's take or read in progress.
            private byte[] _bytes = new byte[256];

            internal Samples(ITypeSupport<T> typeSupport)
            {
                _typeSupport = typeSupport;
                _native = typeSupport as INativeCdrSupport<T>;
            }

            internal override T Convert(byte* data, int size, T into)
            {
                if (data == null)
                {
                    return default(T);
                }
                if (_bytes.Length < size)
                {
                    _bytes = new byte[Math.Max(size, _bytes.Length * 2)];
                }
                if (_native != null)
                {
                    return _native.Deserialize((IntPtr)data, size, _bytes, into);
                }
                Marshal.Copy((IntPtr)data, _bytes, 0, size);
                return into == null ? _typeSupport.Deserialize(_bytes, 0, size) : _typeSupport.Deserialize(_bytes, 0, size, into);
            }
        }
    }
}
