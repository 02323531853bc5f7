// Entities: C# objects over the C API's int32 handles. The binding keeps the tree of what
// was made from what, as the C API does, so that deleting an entity (Dispose, a Delete*
// call, DeleteContainedEntities) forgets its descendants too, and so that a listener told of
// a handle finds its object. Entities are not finalized: as in DCPS, an entity lives until
// deleted, whether or not the program still holds its object.
using System;
using System.Collections.Generic;

namespace FerroDDS
{
    /// <summary>A DCPS entity. <see cref="Dispose()"/> deletes it and everything made from it.</summary>
    public abstract class Entity : IDisposable
    {
        // Guards every entity's children and deleted flag, and ByHandle. Never held across
        // a call into the C API: those may run listeners, which look entities up here.
        private static readonly object Tree = new object();
        private static readonly Dictionary<int, Entity> ByHandle = new Dictionary<int, Entity>();

        private readonly Entity _parent;
        private List<Entity> _children;
        private bool _deleted;
        private readonly object _statusConditionLock = new object();
        private StatusCondition _statusCondition;

        /// <summary>The C API's handle.</summary>
        internal int Handle { get; private set; }

        /// <summary>The listener (read by the C API's threads).</summary>
        internal volatile object Listener;

        internal Entity(int handle, Entity parent)
        {
            Handle = handle;
            _parent = parent;
            lock (Tree)
            {
                ByHandle[handle] = this;
                if (parent != null)
                {
                    if (parent._children == null)
                    {
                        parent._children = new List<Entity>();
                    }
                    parent._children.Add(this);
                }
            }
        }

        /// <summary>The entity it was made from (null for a participant).</summary>
        internal Entity Parent { get { return _parent; } }

        /// <summary>The entity of <paramref name="handle"/>, if made here and not deleted.</summary>
        internal static Entity Find(int handle)
        {
            lock (Tree)
            {
                Entity e;
                return ByHandle.TryGetValue(handle, out e) ? e : null;
            }
        }

        /// <summary>Its status condition (DCPS get_statuscondition): made at the first call,
        /// for a writer or a reader (the C API has no others: it says so).</summary>
        public StatusCondition StatusCondition
        {
            get
            {
                lock (_statusConditionLock)
                {
                    if (_statusCondition == null)
                    {
                        _statusCondition = new StatusCondition(this);
                    }
                    return _statusCondition;
                }
            }
        }

        /// <summary>Deletes the entity and everything made from it; nothing when it was
        /// deleted already.</summary>
        public void Dispose()
        {
            bool deleted;
            lock (Tree)
            {
                deleted = _deleted;
            }
            if (!deleted)
            {
                Delete();
            }
        }

        /// <summary>Deletes it in the C API (which says so when it was deleted already) and
        /// forgets it and its descendants.</summary>
        internal void Delete()
        {
            // Listeners hear nothing of entities being deleted (the C API may report their
            // last status changes while it deletes them).
            lock (Tree)
            {
                Walk(this, e => e.Listener = null);
            }
            Native.Check(Native.ferrodds_delete(Handle));
            lock (Tree)
            {
                if (_parent != null && _parent._children != null)
                {
                    _parent._children.Remove(this);
                }
                Walk(this, e =>
                {
                    e._deleted = true;
                    e._children = null;
                    ByHandle.Remove(e.Handle);
                });
            }
        }

        /// <summary>Deletes every entity made from this one.</summary>
        public void DeleteContainedEntities()
        {
            Entity[] children;
            lock (Tree)
            {
                children = _children == null ? new Entity[0] : _children.ToArray();
            }
            foreach (var child in children)
            {
                child.Dispose();
            }
        }

        /// <summary>Visits <paramref name="e"/>'s descendants, then <paramref name="e"/>
        /// (the caller holds Tree).</summary>
        private static void Walk(Entity e, Action<Entity> visit)
        {
            if (e._children != null)
            {
                foreach (var child in e._children)
                {
                    Walk(child, visit);
                }
            }
            visit(e);
        }

        /// <summary>Deletes <paramref name="child"/>, which must have been made from this
        /// entity (the DCPS <c>delete_*</c> operations).</summary>
        internal void DeleteChild(Entity child)
        {
            Delete(child, this);
        }

        /// <summary>Deletes <paramref name="entity"/>, which must have been made from
        /// <paramref name="parent"/> (null: a participant).</summary>
        internal static void Delete(Entity entity, Entity parent)
        {
            if (entity == null)
            {
                // The C API names the missing entity (handle 0).
                Native.Check(Native.ferrodds_delete(0));
            }
            if (entity._parent != parent)
            {
                throw new DdsException(ReturnCode.PreconditionNotMet,
                    "entity " + entity.Handle + " was not made from " + (parent == null ? "the factory" : "entity " + parent.Handle));
            }
            entity.Delete();
        }

        /// <summary>Sets <paramref name="listener"/> for the statuses in <paramref name="mask"/>
        /// (null or an empty mask removes it).</summary>
        internal void SetListenerCore(object listener, StatusMask mask)
        {
            if (listener == null || mask == StatusMask.None)
            {
                Native.Check(Native.ferrodds_set_listener(Handle, 0, null, IntPtr.Zero));
                Listener = null;
                return;
            }
            // Set first: the C API may call it before ferrodds_set_listener returns.
            object previous = Listener;
            Listener = listener;
            try
            {
                Native.Check(Native.ferrodds_set_listener(Handle, (uint)mask, ListenerDispatch.Callback, (IntPtr)Handle));
            }
            catch
            {
                Listener = previous;
                throw;
            }
        }
    }

    /// <summary>Where participants come from (a singleton, as in DCPS).</summary>
    public sealed class DomainParticipantFactory
    {
        private static readonly DomainParticipantFactory TheInstance = new DomainParticipantFactory();

        private DomainParticipantFactory()
        {
        }

        /// <summary>The factory.</summary>
        public static DomainParticipantFactory Instance { get { return TheInstance; } }

        /// <summary>A participant in domain <paramref name="domainId"/>, configured by
        /// <c>FERRODDS_CONFIG</c> as every FerroDDS participant is.</summary>
        public DomainParticipant CreateParticipant(int domainId, DomainParticipantListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            return CreateParticipant(domainId, null, listener, mask);
        }

        /// <summary>A participant in domain <paramref name="domainId"/> with
        /// <paramref name="qos"/> (its USER_DATA announced in SPDP).</summary>
        public DomainParticipant CreateParticipant(int domainId, DomainParticipantQos qos, DomainParticipantListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            // A negative id reaches the C API as a large one, which it rejects by name.
            int handle = NativeQos.Create(qos, q => Native.ferrodds_create_participant(unchecked((uint)domainId), q));
            var participant = new DomainParticipant(handle, domainId);
            if (qos != null)
            {
                participant.Qos.CopyFrom(qos);
            }
            participant.SetListener(listener, mask);
            return participant;
        }

        /// <summary>Deletes <paramref name="participant"/> and everything made from it.</summary>
        public void DeleteParticipant(DomainParticipant participant)
        {
            Entity.Delete(participant, null);
        }
    }

    /// <summary>A domain participant: the factory of topics, publishers, subscribers and
    /// wait sets of one domain.</summary>
    public sealed class DomainParticipant : Entity
    {
        internal DomainParticipant(int handle, int domainId) : base(handle, null)
        {
            DomainId = domainId;
            Qos = new DomainParticipantQos();
        }

        /// <summary>Its domain.</summary>
        public int DomainId { get; private set; }

        /// <summary>The QoS it was given last (only this object changes it).</summary>
        internal DomainParticipantQos Qos { get; private set; }

        /// <summary>Changes its QoS: the new USER_DATA is announced at once.</summary>
        public void SetQos(DomainParticipantQos qos)
        {
            if (qos == null)
            {
                throw new ArgumentNullException("qos");
            }
            NativeQos.Create(qos, q => Native.ferrodds_set_qos(Handle, q));
            Qos.CopyFrom(qos);
        }

        /// <summary>Copies its QoS into <paramref name="qos"/>.</summary>
        public void GetQos(DomainParticipantQos qos)
        {
            if (qos == null)
            {
                throw new ArgumentNullException("qos");
            }
            qos.CopyFrom(Qos);
        }

        /// <summary>Topic <paramref name="name"/> of the type <paramref name="typeSupport"/>
        /// describes (registered from its IDL the first time).</summary>
        public Topic<T> CreateTopic<T>(string name, ITypeSupport<T> typeSupport, TopicListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            TopicType type = TopicType.Of(typeSupport);
            var topic = new Topic<T>(CreateTopicHandle(name, type), this, name, type, typeSupport);
            topic.SetListener(listener, mask);
            return topic;
        }

        /// <summary>Topic <paramref name="name"/> of <paramref name="type"/>, for untyped
        /// (JSON) writers and readers.</summary>
        public Topic CreateTopic(string name, TopicType type, TopicListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            var topic = new Topic(CreateTopicHandle(name, type), this, name, type);
            topic.SetListener(listener, mask);
            return topic;
        }

        private unsafe int CreateTopicHandle(string name, TopicType type)
        {
            fixed (byte* n = Utf8.Z(name))
            {
                return Native.Check(Native.ferrodds_create_topic(Handle, n, type == null ? 0 : type.Handle));
            }
        }

        /// <summary>A content-filtered topic: <paramref name="relatedTopic"/>'s samples that
        /// <paramref name="filterExpression"/> (DDS SQL over the type's members, <c>%n</c>
        /// for <paramref name="expressionParameters"/>[n]) holds for.</summary>
        public ContentFilteredTopic<T> CreateContentFilteredTopic<T>(string name, Topic<T> relatedTopic, string filterExpression, params string[] expressionParameters)
        {
            return new ContentFilteredTopic<T>(name, relatedTopic, filterExpression, expressionParameters);
        }

        /// <summary>A content-filtered topic of an untyped (JSON) topic.</summary>
        public ContentFilteredTopic CreateContentFilteredTopic(string name, Topic relatedTopic, string filterExpression, params string[] expressionParameters)
        {
            return new ContentFilteredTopic(name, relatedTopic, filterExpression, expressionParameters);
        }

        /// <summary>A publisher (<paramref name="qos"/> null: the defaults).</summary>
        public Publisher CreatePublisher(PublisherQos qos = null, PublisherListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            var publisher = new Publisher(NativeQos.Create(qos, q => Native.ferrodds_create_publisher(Handle, q)), this);
            publisher.SetListener(listener, mask);
            return publisher;
        }

        /// <summary>A subscriber (<paramref name="qos"/> null: the defaults).</summary>
        public Subscriber CreateSubscriber(SubscriberQos qos = null, SubscriberListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            var subscriber = new Subscriber(NativeQos.Create(qos, q => Native.ferrodds_create_subscriber(Handle, q)), this);
            subscriber.SetListener(listener, mask);
            return subscriber;
        }

        /// <summary>A wait set for this participant's readers and read conditions.</summary>
        public WaitSet CreateWaitSet()
        {
            return new WaitSet(Native.Check(Native.ferrodds_create_waitset(Handle)), this);
        }

        /// <summary>Deletes <paramref name="topic"/> (made by this participant).</summary>
        public void DeleteTopic(Topic topic) { DeleteChild(topic); }

        /// <summary>Deletes <paramref name="publisher"/> and its writers.</summary>
        public void DeletePublisher(Publisher publisher) { DeleteChild(publisher); }

        /// <summary>Deletes <paramref name="subscriber"/> and its readers.</summary>
        public void DeleteSubscriber(Subscriber subscriber) { DeleteChild(subscriber); }

        /// <summary>Asserts the liveliness of its MANUAL_BY_PARTICIPANT writers.</summary>
        public void AssertLiveliness() { Native.Check(Native.ferrodds_assert_liveliness(Handle)); }

        /// <summary>Sets its listener: it hears of the statuses in <paramref name="mask"/>
        /// of every writer and reader without a listener of its own for them.</summary>
        public void SetListener(DomainParticipantListener listener, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            SetListenerCore(listener, mask);
        }
    }

    /// <summary>A type topics are made of, registered from IDL or XTypes TypeObjects. Types
    /// belong to no participant; <see cref="Dispose"/> forgets it (topics made of it keep
    /// what they need).</summary>
    public sealed class TopicType : IDisposable
    {
        // One registration per type support's name and IDL, for the program's life.
        private static readonly Dictionary<string, TopicType> Registered = new Dictionary<string, TopicType>();

        internal int Handle { get; private set; }

        /// <summary>Its name, <c>module::Name</c>.</summary>
        public string Name { get; private set; }

        private TopicType(int handle, string name)
        {
            Handle = handle;
            Name = name;
        }

        /// <summary>The type <paramref name="typeName"/> that <paramref name="idl"/> declares.</summary>
        public static unsafe TopicType FromIdl(string idl, string typeName)
        {
            fixed (byte* i = Utf8.Z(idl))
            fixed (byte* n = Utf8.Z(typeName))
            {
                return new TopicType(Native.Check(Native.ferrodds_create_type_from_idl(i, n)), typeName);
            }
        }

        /// <summary>The type the serialized COMPLETE TypeObjects describe (its own first,
        /// then those of the types it uses), named <paramref name="typeName"/> or, when null,
        /// as its TypeObject names it.</summary>
        public static unsafe TopicType FromTypeObjects(IList<byte[]> typeObjects, string typeName = null)
        {
            var sizes = new UIntPtr[typeObjects.Count];
            for (int i = 0; i < sizes.Length; i++)
            {
                sizes[i] = (UIntPtr)(typeObjects[i] == null ? 0 : typeObjects[i].Length);
            }
            using (var pinned = new PinnedArrays(typeObjects))
            fixed (UIntPtr* s = sizes)
            fixed (byte* n = Utf8.Z(typeName))
            {
                int handle = Native.Check(Native.ferrodds_create_type_from_type_objects(pinned.Pointers, s, (UIntPtr)sizes.Length, n));
                return new TopicType(handle, typeName);
            }
        }

        /// <summary>Its COMPLETE TypeObjects, serialized: its own, then those of the types it
        /// uses (what <see cref="FromTypeObjects"/> takes).</summary>
        public unsafe List<byte[]> GetTypeObjects()
        {
            var objects = new List<byte[]>();
            for (uint index = 0; ; index++)
            {
                UIntPtr size;
                int rc = Native.ferrodds_get_type_object(Handle, index, null, UIntPtr.Zero, &size);
                if (rc != -(int)ReturnCode.BufferTooSmall)
                {
                    Native.Check(rc);
                }
                var bytes = new byte[(int)size];
                int count;
                fixed (byte* b = bytes)
                {
                    count = Native.Check(Native.ferrodds_get_type_object(Handle, index, b, size, &size));
                }
                objects.Add(bytes);
                if (index + 1 >= count)
                {
                    return objects;
                }
            }
        }

        /// <summary>The registered type of <paramref name="typeSupport"/>.</summary>
        internal static TopicType Of<T>(ITypeSupport<T> typeSupport)
        {
            if (typeSupport == null)
            {
                // The C API names what is missing.
                return FromIdl(null, null);
            }
            string key = typeSupport.TypeName + "\n" + typeSupport.Idl;
            lock (Registered)
            {
                TopicType type;
                if (!Registered.TryGetValue(key, out type))
                {
                    type = FromIdl(typeSupport.Idl, typeSupport.TypeName);
                    Registered.Add(key, type);
                }
                return type;
            }
        }

        /// <summary>Forgets the type (topics made of it keep what they need).</summary>
        public void Dispose()
        {
            Native.Check(Native.ferrodds_delete(Handle));
        }
    }

    /// <summary>A topic: a name and a type in a participant. Writers and readers made from
    /// a plain Topic take and hand out samples as JSON text.</summary>
    public class Topic : Entity
    {
        internal Topic(int handle, DomainParticipant participant, string name, TopicType type) : base(handle, participant)
        {
            Name = name;
            Type = type;
        }

        /// <summary>Its name.</summary>
        public string Name { get; private set; }

        /// <summary>Its type.</summary>
        public TopicType Type { get; private set; }

        /// <summary>The type's name.</summary>
        public string TypeName { get { return Type.Name; } }

        /// <summary>Its participant.</summary>
        public DomainParticipant Participant { get { return (DomainParticipant)Parent; } }

        /// <summary>INCONSISTENT_TOPIC.</summary>
        public InconsistentTopicStatus GetInconsistentTopicStatus()
        {
            var c = Statuses.Count(Handle, StatusMask.InconsistentTopicStatus);
            return new InconsistentTopicStatus { TotalCount = c.Total, TotalCountChange = c.TotalChange };
        }

        /// <summary>Sets its listener for INCONSISTENT_TOPIC (null or
        /// <see cref="StatusMask.None"/> removes it).</summary>
        public void SetListener(TopicListener listener, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            SetListenerCore(listener, mask);
        }
    }

    /// <summary>A topic whose samples are <typeparamref name="T"/>, serialized by an
    /// <see cref="ITypeSupport{T}"/>.</summary>
    public sealed class Topic<T> : Topic
    {
        internal Topic(int handle, DomainParticipant participant, string name, TopicType type, ITypeSupport<T> typeSupport)
            : base(handle, participant, name, type)
        {
            TypeSupport = typeSupport;
        }

        /// <summary>Its type support.</summary>
        public ITypeSupport<T> TypeSupport { get; private set; }
    }

    /// <summary>A topic's samples that a filter expression holds for. Not an entity of the
    /// C API: the C API checks the expression when a reader is made of it.</summary>
    public class ContentFilteredTopic
    {
        internal ContentFilteredTopic(string name, Topic relatedTopic, string filterExpression, string[] expressionParameters)
        {
            Name = name;
            RelatedTopic = relatedTopic;
            FilterExpression = filterExpression;
            ExpressionParameters = new List<string>(expressionParameters ?? new string[0]).AsReadOnly();
        }

        /// <summary>Its name.</summary>
        public string Name { get; private set; }

        /// <summary>The topic it filters.</summary>
        public Topic RelatedTopic { get; private set; }

        /// <summary>The DDS SQL expression.</summary>
        public string FilterExpression { get; private set; }

        /// <summary>What <c>%n</c> in the expression stands for.</summary>
        public IList<string> ExpressionParameters { get; private set; }
    }

    /// <summary>A content-filtered topic of <typeparamref name="T"/> samples.</summary>
    public sealed class ContentFilteredTopic<T> : ContentFilteredTopic
    {
        internal ContentFilteredTopic(string name, Topic<T> relatedTopic, string filterExpression, string[] expressionParameters)
            : base(name, relatedTopic, filterExpression, expressionParameters)
        {
            RelatedTopic = relatedTopic;
        }

        /// <summary>The topic it filters.</summary>
        public new Topic<T> RelatedTopic { get; private set; }
    }

    /// <summary>A publisher: the factory of writers, sharing a partition and PRESENTATION.</summary>
    public sealed class Publisher : Entity
    {
        internal Publisher(int handle, DomainParticipant participant) : base(handle, participant)
        {
        }

        /// <summary>Its participant.</summary>
        public DomainParticipant Participant { get { return (DomainParticipant)Parent; } }

        /// <summary>A writer of <paramref name="topic"/>'s <typeparamref name="T"/>.</summary>
        public DataWriter<T> CreateDataWriter<T>(Topic<T> topic, DataWriterQos qos = null, DataWriterListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            int handle = CreateHandle(topic, qos);
            DataRepresentation representation;
            try
            {
                // The binding serializes in what the writer sends: the C API says which.
                representation = (DataRepresentation)Native.Check(Native.ferrodds_get_data_representation(handle));
            }
            catch
            {
                Native.ferrodds_delete(handle);
                throw;
            }
            var writer = new DataWriter<T>(handle, this, topic, representation);
            writer.SetListener(listener, mask);
            return writer;
        }

        /// <summary>A writer of <paramref name="topic"/> that takes samples as JSON text.</summary>
        public DataWriter CreateDataWriter(Topic topic, DataWriterQos qos = null, DataWriterListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            var writer = new DataWriter(CreateHandle(topic, qos), this, topic);
            writer.SetListener(listener, mask);
            return writer;
        }

        private int CreateHandle(Topic topic, DataWriterQos qos)
        {
            int topicHandle = topic == null ? 0 : topic.Handle;
            return NativeQos.Create(qos, q => Native.ferrodds_create_writer(Handle, topicHandle, q));
        }

        /// <summary>Deletes <paramref name="writer"/> (made by this publisher).</summary>
        public void DeleteDataWriter(DataWriter writer) { DeleteChild(writer); }

        /// <summary>Changes its QoS: its PARTITION moves the writers it made and those it
        /// makes. Its PRESENTATION may not change (a <see cref="DdsException"/> with
        /// <see cref="ReturnCode.ImmutablePolicy"/>).</summary>
        public void SetQos(PublisherQos qos)
        {
            NativeQos.Create(qos, q => Native.ferrodds_set_qos(Handle, q));
        }

        /// <summary>Starts a coherent set (PRESENTATION with coherent access).</summary>
        public void BeginCoherentChanges() { Native.Check(Native.ferrodds_begin_coherent(Handle)); }

        /// <summary>Ends the coherent set.</summary>
        public void EndCoherentChanges() { Native.Check(Native.ferrodds_end_coherent(Handle)); }

        /// <summary>Sets its listener: it hears of the statuses in <paramref name="mask"/> of
        /// its writers without a listener of their own for them.</summary>
        public void SetListener(PublisherListener listener, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            SetListenerCore(listener, mask);
        }
    }

    /// <summary>A subscriber: the factory of readers, sharing a partition and PRESENTATION.</summary>
    public sealed class Subscriber : Entity
    {
        internal Subscriber(int handle, DomainParticipant participant) : base(handle, participant)
        {
        }

        /// <summary>Its participant.</summary>
        public DomainParticipant Participant { get { return (DomainParticipant)Parent; } }

        /// <summary>A reader of <paramref name="topic"/>'s <typeparamref name="T"/>.</summary>
        public DataReader<T> CreateDataReader<T>(Topic<T> topic, DataReaderQos qos = null, DataReaderListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            return Listening(new DataReader<T>(CreateHandle(topic, qos, null), this, topic), listener, mask);
        }

        /// <summary>A reader of <paramref name="topic"/> that hands samples out as JSON text.</summary>
        public DataReader CreateDataReader(Topic topic, DataReaderQos qos = null, DataReaderListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            return Listening(new DataReader(CreateHandle(topic, qos, null), this, topic), listener, mask);
        }

        /// <summary>A reader of the <typeparamref name="T"/> samples of
        /// <paramref name="topic"/>'s related topic that its filter holds for.</summary>
        public DataReader<T> CreateDataReader<T>(ContentFilteredTopic<T> topic, DataReaderQos qos = null, DataReaderListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            var related = topic == null ? null : topic.RelatedTopic;
            return Listening(new DataReader<T>(CreateHandle(related, qos, topic), this, related), listener, mask);
        }

        /// <summary>A reader, as JSON text, of the samples of <paramref name="topic"/>'s
        /// related topic that its filter holds for.</summary>
        public DataReader CreateDataReader(ContentFilteredTopic topic, DataReaderQos qos = null, DataReaderListener listener = null, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            var related = topic == null ? null : topic.RelatedTopic;
            return Listening(new DataReader(CreateHandle(related, qos, topic), this, related), listener, mask);
        }

        private static TReader Listening<TReader>(TReader reader, DataReaderListener listener, StatusMask mask) where TReader : DataReader
        {
            reader.SetListener(listener, mask);
            return reader;
        }

        private unsafe int CreateHandle(Topic topic, DataReaderQos qos, ContentFilteredTopic filter)
        {
            int topicHandle = topic == null ? 0 : topic.Handle;
            if (filter == null)
            {
                return NativeQos.Create(qos, q => Native.ferrodds_create_reader(Handle, topicHandle, q));
            }
            var parameters = Utf8.Z(filter.ExpressionParameters);
            byte[] expression = Utf8.Z(filter.FilterExpression);
            using (var pinned = new PinnedArrays(parameters))
            {
                return NativeQos.Create(qos, q =>
                {
                    fixed (byte* e = expression)
                    {
                        return Native.ferrodds_create_filtered_reader(Handle, topicHandle, q, e, pinned.Pointers, (UIntPtr)parameters.Count);
                    }
                });
            }
        }

        /// <summary>Deletes <paramref name="reader"/> (made by this subscriber).</summary>
        public void DeleteDataReader(DataReader reader) { DeleteChild(reader); }

        /// <summary>Changes its QoS: its PARTITION moves the readers it made and those it
        /// makes. Its PRESENTATION may not change (a <see cref="DdsException"/> with
        /// <see cref="ReturnCode.ImmutablePolicy"/>).</summary>
        public void SetQos(SubscriberQos qos)
        {
            NativeQos.Create(qos, q => Native.ferrodds_set_qos(Handle, q));
        }

        /// <summary>DCPS <c>get_datareaders</c>: fills <paramref name="readers"/> with its
        /// readers holding samples in the given states, one entry per sample, in the order
        /// that taking one sample from each in turn reads them in (with GROUP ordered access,
        /// the order its publisher wrote them across topics). Call it between
        /// <see cref="BeginAccess"/> and <see cref="EndAccess"/>.</summary>
        public unsafe void GetDataReaders(IList<DataReader> readers, SampleStateKind sampleStates = SampleStateKind.AnySampleState, ViewStateKind viewStates = ViewStateKind.AnyViewState, InstanceStateKind instanceStates = InstanceStateKind.AnyInstanceState)
        {
            if (readers == null)
            {
                throw new ArgumentNullException("readers");
            }
            uint mask = StateMask.Of(sampleStates, viewStates, instanceStates);
            int[] handles = new int[16];
            int n;
            // Bounded: the count only grows when samples arrive, which an access holds back.
            for (int attempt = 0; ; attempt++)
            {
                fixed (int* p = handles)
                {
                    n = Native.Check(Native.ferrodds_get_datareaders(Handle, mask, p, (UIntPtr)handles.Length));
                }
                if (n <= handles.Length || attempt == 3)
                {
                    break;
                }
                handles = new int[n];
            }
            readers.Clear();
            for (int i = 0; i < Math.Min(n, handles.Length); i++)
            {
                var reader = Entity.Find(handles[i]) as DataReader;
                if (reader != null)
                {
                    readers.Add(reader);
                }
            }
        }

        /// <summary>Starts an access: sets completed meanwhile are held back until
        /// <see cref="EndAccess"/>.</summary>
        public void BeginAccess() { Native.Check(Native.ferrodds_begin_coherent(Handle)); }

        /// <summary>Ends the access.</summary>
        public void EndAccess() { Native.Check(Native.ferrodds_end_coherent(Handle)); }

        /// <summary>Sets its listener: it hears of the statuses in <paramref name="mask"/> of
        /// its readers without a listener of their own for them, and DATA_ON_READERS.</summary>
        public void SetListener(SubscriberListener listener, StatusMask mask = StatusMask.DefaultStatusMask)
        {
            SetListenerCore(listener, mask);
        }
    }
}
