// The C# binding's own tests: ApiTests.exe DOMAIN CASE... (crates/ferrodds-c/tests/csharp.rs
// runs them on Mono). Each case makes its own participants and topics and deletes them.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using demo;
using FerroDDS;

namespace FerroDDS.Tests
{
    public static class ApiTests
    {
        private static readonly ReadingTypeSupport Readings = new ReadingTypeSupport();
        private static readonly Duration Second = new Duration(1, 0);
        private static readonly Duration FiveSeconds = new Duration(5, 0);

        public static int Main(string[] args)
        {
            return Runner.Run(args, new Dictionary<string, Action<int>>
            {
                { "entities_and_qos", EntitiesAndQos },
                { "write_take", WriteTake },
                { "dispose_and_instance_states", DisposeAndInstanceStates },
                { "late_joiner", LateJoiner },
                { "waitset_and_conditions", WaitSetAndConditions },
                { "listeners", Listeners },
                { "json", Json },
                { "null_arguments", NullArguments },
                { "deleted_entities", DeletedEntities },
                { "wrong_kind_of_entity", WrongKindOfEntity },
                { "bytes_that_are_not_a_sample", BytesThatAreNotASample },
                { "group_order_and_participant_qos", GroupOrderAndParticipantQos },
                { "instances_by_handle", InstancesByHandle },
            });
        }

        private static DataWriterQos ReliableWriter(bool keepAll = true)
        {
            var qos = new DataWriterQos();
            qos.Reliability.Kind = ReliabilityQosPolicyKind.ReliableReliabilityQos;
            qos.Reliability.MaxBlockingTime = Second;
            if (keepAll)
            {
                qos.History.Kind = HistoryQosPolicyKind.KeepAllHistoryQos;
            }
            return qos;
        }

        private static DataReaderQos ReliableReader()
        {
            var qos = new DataReaderQos();
            qos.Reliability.Kind = ReliabilityQosPolicyKind.ReliableReliabilityQos;
            qos.History.Kind = HistoryQosPolicyKind.KeepAllHistoryQos;
            return qos;
        }

        /// <summary>Takes from <paramref name="reader"/>, waiting on a read condition, until
        /// <paramref name="count"/> samples came (10 s at most).</summary>
        private static List<T> TakeAtLeast<T>(DomainParticipant participant, DataReader<T> reader, int count, List<SampleInfo> infos)
        {
            var taken = new List<T>();
            infos.Clear();
            var samples = new List<T>();
            var batch = new List<SampleInfo>();
            var active = new List<Condition>();
            using (var waitSet = participant.CreateWaitSet())
            using (var unread = reader.CreateReadCondition(SampleStateKind.NotReadSampleState))
            {
                waitSet.AttachCondition(unread);
                var end = DateTime.UtcNow.AddSeconds(10);
                while (taken.Count < count && DateTime.UtcNow < end)
                {
                    waitSet.Wait(active, Duration.FromMilliseconds(200));
                    if (reader.Take(samples, batch) == ReturnCode.Ok)
                    {
                        taken.AddRange(samples);
                        infos.AddRange(batch);
                    }
                }
            }
            Check.True(taken.Count >= count, "took " + taken.Count + " samples of " + count);
            return taken;
        }

        private static void EntitiesAndQos(int domain)
        {
            var factory = DomainParticipantFactory.Instance;
            var participant = factory.CreateParticipant(domain);
            Check.Equal(domain, participant.DomainId, "the domain");
            var topic = participant.CreateTopic("cs_entities", Readings);
            Check.Equal("cs_entities", topic.Name, "the topic's name");
            Check.Equal("demo::Reading", topic.TypeName, "the type's name");
            Check.True(ReferenceEquals(topic.Type, participant.CreateTopic("cs_entities_too", Readings).Type), "a type support's type is registered once");

            var publisherQos = new PublisherQos();
            publisherQos.Partition.Name.Add("csharp");
            publisherQos.Presentation.AccessScope = PresentationQosPolicyAccessScopeKind.TopicPresentationQos;
            publisherQos.Presentation.CoherentAccess = true;
            var subscriberQos = new SubscriberQos();
            subscriberQos.Partition.Name.Add("csharp");
            subscriberQos.Presentation.AccessScope = PresentationQosPolicyAccessScopeKind.TopicPresentationQos;
            subscriberQos.Presentation.CoherentAccess = true;
            var publisher = participant.CreatePublisher(publisherQos);
            var subscriber = participant.CreateSubscriber(subscriberQos);
            Check.True(publisher.Participant == participant && subscriber.Participant == participant, "their participant");

            // Every policy away from its default.
            var writerQos = new DataWriterQos();
            writerQos.Reliability.Kind = ReliabilityQosPolicyKind.ReliableReliabilityQos;
            writerQos.Reliability.MaxBlockingTime = Second;
            writerQos.Durability.Kind = DurabilityQosPolicyKind.TransientLocalDurabilityQos;
            writerQos.History.Kind = HistoryQosPolicyKind.KeepLastHistoryQos;
            writerQos.History.Depth = 4;
            writerQos.ResourceLimits.MaxSamples = 100;
            writerQos.ResourceLimits.MaxInstances = 10;
            writerQos.ResourceLimits.MaxSamplesPerInstance = 10;
            writerQos.Deadline.Period = new Duration(30, 0);
            writerQos.Lifespan.Duration = new Duration(60, 0);
            writerQos.Liveliness.Kind = LivelinessQosPolicyKind.AutomaticLivelinessQos;
            writerQos.Liveliness.LeaseDuration = new Duration(30, 0);
            writerQos.Ownership.Kind = OwnershipQosPolicyKind.SharedOwnershipQos;
            writerQos.OwnershipStrength.Value = 3;
            writerQos.DestinationOrder.Kind = DestinationOrderQosPolicyKind.BySourceTimestampDestinationOrderQos;
            writerQos.WriterDataLifecycle.AutodisposeUnregisteredInstances = false;
            writerQos.DataRepresentation.Value.Add(DataRepresentation.Xcdr2);
            var readerQos = new DataReaderQos();
            readerQos.Reliability.Kind = ReliabilityQosPolicyKind.ReliableReliabilityQos;
            readerQos.Durability.Kind = DurabilityQosPolicyKind.TransientLocalDurabilityQos;
            readerQos.History.Kind = HistoryQosPolicyKind.KeepAllHistoryQos;
            readerQos.ResourceLimits.MaxSamples = 100;
            readerQos.ResourceLimits.MaxInstances = 10;
            readerQos.ResourceLimits.MaxSamplesPerInstance = 10;
            readerQos.Deadline.Period = new Duration(30, 0);
            readerQos.Liveliness.LeaseDuration = new Duration(30, 0);
            readerQos.DestinationOrder.Kind = DestinationOrderQosPolicyKind.BySourceTimestampDestinationOrderQos;
            readerQos.TimeBasedFilter.MinimumSeparation = Duration.Zero;
            readerQos.DataRepresentation.Value.Add(DataRepresentation.Xcdr1);
            readerQos.DataRepresentation.Value.Add(DataRepresentation.Xcdr2);

            var writer = publisher.CreateDataWriter(topic, writerQos);
            Check.Equal(DataRepresentation.Xcdr2, writer.Representation, "the representation the QoS names");
            var reader = subscriber.CreateDataReader(topic, readerQos);
            Check.True(writer.Publisher == publisher && reader.Subscriber == subscriber && writer.Topic == topic, "their parents");
            Check.Equal(ReturnCode.Ok, writer.WaitForMatched(1, FiveSeconds), "the writer matched");
            Check.Equal(ReturnCode.Ok, reader.WaitForMatched(1, FiveSeconds), "the reader matched");
            var published = writer.GetPublicationMatchedStatus();
            Check.Equal(1L, published.CurrentCount, "readers matched");
            Check.Equal(reader.InstanceHandle, published.LastSubscriptionHandle, "the reader matched last");
            var subscribed = reader.GetSubscriptionMatchedStatus();
            Check.Equal(1L, subscribed.TotalCount, "writers matched ever");
            Check.Equal(writer.InstanceHandle, subscribed.LastPublicationHandle, "the writer matched last");
            Check.True(published.TotalCountChange == 1 && published.CurrentCountChange == 1, "the changes since the writer was made");
            var reread = writer.GetPublicationMatchedStatus();
            Check.True(reread.TotalCountChange == 0 && reread.CurrentCountChange == 0 && reread.CurrentCount == 1, "a read resets the changes");

            var infos = new List<SampleInfo>();
            writer.Write(new Reading(1, "in XCDR2"));
            Check.EqualItems(new[] { new Reading(1, "in XCDR2") }, TakeAtLeast(participant, reader, 1, infos), "an XCDR2 sample");
            publisher.BeginCoherentChanges();
            writer.Write(new Reading(2, "a coherent"));
            writer.Write(new Reading(3, "set"));
            publisher.EndCoherentChanges();
            Check.EqualItems(new[] { new Reading(2, "a coherent"), new Reading(3, "set") }, TakeAtLeast(participant, reader, 2, infos), "a coherent set");

            Check.Equal(0L, writer.GetLivelinessLostStatus().TotalCount, "liveliness lost");
            Check.Equal(0L, writer.GetOfferedDeadlineMissedStatus().TotalCount, "offered deadlines missed");
            Check.Equal(0L, writer.GetOfferedIncompatibleQosStatus().TotalCount, "offered incompatible");
            Check.Equal(0L, reader.GetRequestedDeadlineMissedStatus().TotalCount, "requested deadlines missed");
            Check.Equal(0L, reader.GetSampleLostStatus().TotalCount, "samples lost");
            Check.Equal(0L, reader.GetSampleRejectedStatus().TotalCount, "samples rejected");
            Check.Equal(1, reader.GetLivelinessChangedStatus().AliveCount, "writers alive");
            participant.AssertLiveliness();

            // A writer whose QoS names no representation sends the type's: XCDR1 for a final
            // struct, XCDR2 (with its DHEADER) for an appendable one.
            var final = publisher.CreateDataWriter(topic);
            Check.Equal(DataRepresentation.Xcdr1, final.Representation, "a final type's default");
            var appendableTopic = participant.CreateTopic("cs_entities_appendable", new AppendableReadingTypeSupport());
            var appendable = publisher.CreateDataWriter(appendableTopic, ReliableWriter());
            Check.Equal(DataRepresentation.Xcdr2, appendable.Representation, "an appendable type's default");
            var appendableReader = subscriber.CreateDataReader(appendableTopic, ReliableReader());
            appendable.WaitForMatched(1, FiveSeconds);
            appendable.Write(new AppendableReading { id = 4, text = "delimited" });
            var delimited = TakeAtLeast(participant, appendableReader, 1, infos);
            Check.True(delimited.Count == 1 && delimited[0].id == 4 && delimited[0].text == "delimited", "an XCDR2 appendable sample");

            // A best-effort writer and a reliable reader: REQUESTED_INCOMPATIBLE_QOS names
            // RELIABILITY (QosPolicyId 11).
            var other = participant.CreateTopic("cs_entities_incompatible", Readings);
            var strict = subscriber.CreateDataReader(other, ReliableReader());
            var loose = new DataWriterQos();
            loose.Reliability.Kind = ReliabilityQosPolicyKind.BestEffortReliabilityQos;
            publisher.CreateDataWriter(other, loose);
            Check.Until(() => strict.GetRequestedIncompatibleQosStatus().TotalCount >= 1, "an incompatible writer");
            Check.Equal(11, strict.GetRequestedIncompatibleQosStatus().LastPolicyId, "the policy found incompatible");

            // SetQos: a writer that offers no deadline does not match a reader that requests
            // one, and matches once it offers it; a policy that may not change is refused,
            // named, and nothing changes.
            var timely = participant.CreateTopic("cs_entities_set_qos", Readings);
            var wantsDeadline = ReliableReader();
            wantsDeadline.Deadline.Period = new Duration(1, 0);
            var demanding = subscriber.CreateDataReader(timely, wantsDeadline);
            var offering = ReliableWriter();
            var late = publisher.CreateDataWriter(timely, offering);
            Check.Until(() => demanding.GetRequestedIncompatibleQosStatus().TotalCount >= 1, "a writer without the deadline");
            offering.Deadline.Period = Duration.FromMilliseconds(500);
            late.SetQos(offering);
            Check.Equal(ReturnCode.Ok, late.WaitForMatched(1, FiveSeconds), "matched once it offers the deadline");
            offering.History.Kind = HistoryQosPolicyKind.KeepLastHistoryQos;
            offering.History.Depth = 3;
            Check.Throws(ReturnCode.ImmutablePolicy, "HISTORY", () => late.SetQos(offering));
            Check.Equal(1L, late.GetPublicationMatchedStatus().CurrentCount, "still matched after the refusal");
            // The publisher's new partition moves its writers: the reader is lost, then found
            // again when it comes back; its presentation may not change.
            publisherQos.Partition.Name.Clear();
            publisherQos.Partition.Name.Add("csharp-elsewhere");
            publisher.SetQos(publisherQos);
            Check.Until(() => late.GetPublicationMatchedStatus().CurrentCount == 0, "the reader lost in another partition");
            publisherQos.Partition.Name.Clear();
            publisherQos.Partition.Name.Add("csharp");
            publisher.SetQos(publisherQos);
            Check.Equal(ReturnCode.Ok, late.WaitForMatched(1, FiveSeconds), "matched again in its partition");
            publisherQos.Presentation.AccessScope = PresentationQosPolicyAccessScopeKind.GroupPresentationQos;
            Check.Throws(ReturnCode.ImmutablePolicy, "PRESENTATION", () => publisher.SetQos(publisherQos));
            publisherQos.Presentation.AccessScope = PresentationQosPolicyAccessScopeKind.TopicPresentationQos;

            // A QoS the C API refuses: it says which policy and why.
            var shallow = new DataWriterQos();
            shallow.History.Depth = 0;
            Check.Throws(ReturnCode.BadParameter, "at least 1", () => publisher.CreateDataWriter(topic, shallow));

            // Types out as TypeObjects and back.
            var objects = topic.Type.GetTypeObjects();
            Check.True(objects.Count >= 1 && objects[0].Length > 16, "a TypeObject");
            using (var again = TopicType.FromTypeObjects(objects, "demo::Reading"))
            {
                Check.EqualItems(objects[0], again.GetTypeObjects()[0], "the TypeObject of the type it made");
            }

            // Deleting deletes what was made from it.
            publisher.DeleteDataWriter(final);
            Check.Throws(ReturnCode.AlreadyDeleted, "was deleted", () => final.Write(new Reading(5, "")));
            participant.DeleteContainedEntities();
            Check.Throws(ReturnCode.AlreadyDeleted, "was deleted", () => writer.Write(new Reading(5, "")));
            Check.Throws(ReturnCode.AlreadyDeleted, "was deleted", () => reader.Take(new List<Reading>(), infos));
            participant.CreatePublisher().Dispose();
            factory.DeleteParticipant(participant);
            participant.Dispose();
        }

        /// <summary>GetDataReaders lists a GROUP-ordered subscriber's readers one entry per
        /// sample, in the order its publisher wrote them across topics; a participant's
        /// QoS (USER_DATA) is given at creation and changed.</summary>
        private static void GroupOrderAndParticipantQos(int domain)
        {
            var participantQos = new DomainParticipantQos();
            participantQos.UserData.Value = new List<byte> { 1, 2, 3 };
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain, participantQos))
            {
                var got = new DomainParticipantQos();
                participant.GetQos(got);
                Check.EqualItems(new byte[] { 1, 2, 3 }, got.UserData.Value.ToArray(), "the USER_DATA given");
                participantQos.UserData.Value = new List<byte> { 9 };
                participant.SetQos(participantQos);
                participant.GetQos(got);
                Check.EqualItems(new byte[] { 9 }, got.UserData.Value.ToArray(), "the USER_DATA set");

                var publisherQos = new PublisherQos();
                publisherQos.Presentation.AccessScope = PresentationQosPolicyAccessScopeKind.GroupPresentationQos;
                publisherQos.Presentation.OrderedAccess = true;
                var subscriberQos = new SubscriberQos();
                subscriberQos.Presentation.AccessScope = PresentationQosPolicyAccessScopeKind.GroupPresentationQos;
                subscriberQos.Presentation.OrderedAccess = true;
                var publisher = participant.CreatePublisher(publisherQos);
                var subscriber = participant.CreateSubscriber(subscriberQos);
                var a = participant.CreateTopic("cs_group_a", Readings);
                var b = participant.CreateTopic("cs_group_b", Readings);
                var wa = publisher.CreateDataWriter(a, ReliableWriter());
                var wb = publisher.CreateDataWriter(b, ReliableWriter());
                var ra = subscriber.CreateDataReader(a, ReliableReader());
                var rb = subscriber.CreateDataReader(b, ReliableReader());
                Check.Equal(ReturnCode.Ok, wa.WaitForMatched(1, FiveSeconds), "a matched");
                Check.Equal(ReturnCode.Ok, wb.WaitForMatched(1, FiveSeconds), "b matched");
                wb.Write(new Reading(1, "b1"));
                wa.Write(new Reading(2, "a1"));
                wb.Write(new Reading(3, "b2"));
                Check.Equal(ReturnCode.Ok, wa.WaitForAcknowledgments(FiveSeconds), "a acknowledged");
                Check.Equal(ReturnCode.Ok, wb.WaitForAcknowledgments(FiveSeconds), "b acknowledged");
                var readers = new List<DataReader>();
                subscriber.BeginAccess();
                subscriber.GetDataReaders(readers);
                subscriber.EndAccess();
                Check.Equal(3, readers.Count, "an entry per sample");
                Check.True(ReferenceEquals(readers[0], rb) && ReferenceEquals(readers[1], ra) && ReferenceEquals(readers[2], rb), "the order written");
                subscriber.GetDataReaders(readers, SampleStateKind.ReadSampleState);
                Check.Equal(0, readers.Count, "none read yet");
            }
        }

        /// <summary>RegisterInstance, LookupInstance (writer and reader), Read/TakeInstance,
        /// Take/ReadNextInstance, and Dispose/UnregisterInstance by handle.</summary>
        private static void InstancesByHandle(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                var topic = participant.CreateTopic("cs_instances", Readings);
                var writer = participant.CreatePublisher().CreateDataWriter(topic, ReliableWriter());
                var reader = participant.CreateSubscriber().CreateDataReader(topic, ReliableReader());
                Check.Equal(ReturnCode.Ok, writer.WaitForMatched(1, FiveSeconds), "matched");
                var one = writer.RegisterInstance(new Reading(1, "key only"));
                Check.True(!one.IsNil, "a handle");
                Check.Equal(one, writer.LookupInstance(new Reading(1, "other text")), "found by its key");
                Check.True(writer.LookupInstance(new Reading(2, "")).IsNil, "not registered: nil");
                writer.Write(new Reading(1, "a"));
                writer.Write(new Reading(2, "b"));
                writer.Write(new Reading(1, "c"));
                Check.Equal(ReturnCode.Ok, writer.WaitForAcknowledgments(FiveSeconds), "acknowledged");
                Check.Until(() => !reader.LookupInstance(new Reading(2, "")).IsNil, "the reader holds instance 2");
                var r1 = reader.LookupInstance(new Reading(1, ""));
                var samples = new List<Reading>();
                var infos = new List<SampleInfo>();
                Check.Equal(ReturnCode.Ok, reader.ReadInstance(samples, infos, r1), "read instance 1");
                Check.EqualItems(new[] { new Reading(1, "a"), new Reading(1, "c") }, samples.ToArray(), "instance 1's samples");
                Check.Equal(r1, infos[0].InstanceHandle, "their instance");
                // One instance per call, in handle order, then none.
                var seen = new List<Reading>();
                var previous = InstanceHandle.HandleNil;
                for (int i = 0; i < 3; i++)
                {
                    if (reader.TakeNextInstance(samples, infos, previous) != ReturnCode.Ok)
                    {
                        break;
                    }
                    Check.True(infos.All(x => x.InstanceHandle == infos[0].InstanceHandle), "one instance per call");
                    Check.True(infos[0].InstanceHandle != previous, "the next one");
                    previous = infos[0].InstanceHandle;
                    seen.AddRange(samples);
                }
                Check.Equal(3, seen.Count, "every sample, instance by instance");
                Check.Equal(ReturnCode.NoData, reader.TakeNextInstance(samples, infos, previous), "none after the last");
                writer.Dispose(new Reading(1, ""), one);
                Check.Until(() => reader.ReadInstance(samples, infos, r1) == ReturnCode.Ok
                    && infos[infos.Count - 1].InstanceState == InstanceStateKind.NotAliveDisposedInstanceState, "disposed by handle");
                writer.UnregisterInstance(new Reading(2, ""), writer.LookupInstance(new Reading(2, "")));
                // A handle that names no instance of this writer (the writer's own GUID).
                Check.Throws(ReturnCode.BadParameter, "is not registered with this writer",
                    () => writer.UnregisterInstance(new Reading(3, ""), writer.InstanceHandle));
            }
        }

        private static void WriteTake(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                var topic = participant.CreateTopic("cs_write_take", Readings);
                var writer = participant.CreatePublisher().CreateDataWriter(topic, ReliableWriter());
                var reader = participant.CreateSubscriber().CreateDataReader(topic, ReliableReader());
                Check.Equal(ReturnCode.Ok, writer.WaitForMatched(1, FiveSeconds), "matched");

                // Values compared exactly: empty, non-ASCII, escapes, long enough to grow
                // every buffer on the way.
                var sent = new List<Reading>();
                for (int i = 0; i < 24; i++)
                {
                    string[] texts = { "", "hi", "h\u00e9", "\u4e2d\u6587 \ud83d\ude00", "tab\t \"quoted\" \\ " + i, new string('x', 1000 + 37 * i) };
                    sent.Add(new Reading(i % 4, texts[i % texts.Length]));
                }
                foreach (var r in sent)
                {
                    writer.Write(r);
                }
                var stamp = Timestamp.FromNanoseconds(1700000000123456789L);
                var stamped = new Reading(-7, "stamped");
                writer.Write(stamped, stamp);
                sent.Add(stamped);
                var infos = new List<SampleInfo>();
                Check.EqualItems(sent, TakeAtLeast(participant, reader, sent.Count, infos), "the samples taken");
                var me = writer.InstanceHandle;
                var instances = new Dictionary<int, InstanceHandle>();
                for (int i = 0; i < infos.Count; i++)
                {
                    var info = infos[i];
                    Check.True(info.ValidData, "valid data");
                    Check.Equal(InstanceStateKind.AliveInstanceState, info.InstanceState, "alive");
                    Check.Equal(SampleStateKind.NotReadSampleState, info.SampleState, "not read before");
                    Check.Equal(me, info.PublicationHandle, "the writer");
                    Check.True(i == 0 || info.SequenceNumber > infos[i - 1].SequenceNumber, "sequence numbers rise");
                    // (Samples of an instance taken together share its view state.)
                    InstanceHandle seen;
                    bool known = instances.TryGetValue(sent[i].id, out seen);
                    Check.True(known || info.ViewState == ViewStateKind.NewViewState, "an instance's first sample is new");
                    Check.True(!known || seen == info.InstanceHandle, "one handle per instance");
                    instances[sent[i].id] = info.InstanceHandle;
                }
                Check.Equal(5, instances.Values.Distinct().Count(), "a handle per key");
                Check.Equal(stamp, infos[infos.Count - 1].SourceTimestamp, "the timestamp written");

                // Read leaves samples, marked read; a state mask selects.
                var a = new Reading(1, "a");
                var b = new Reading(2, "b");
                writer.Write(a);
                writer.Write(b);
                // Both there before the first read: a read that found only the first would
                // mark it read.
                Check.Equal(ReturnCode.Ok, writer.WaitForAcknowledgments(FiveSeconds), "both acknowledged");
                var samples = new List<Reading>();
                Check.Until(() => reader.Read(samples, infos) == ReturnCode.Ok && samples.Count == 2, "two samples to read");
                Check.EqualItems(new[] { a, b }, samples, "read");
                Check.True(infos.All(i => i.SampleState == SampleStateKind.NotReadSampleState), "not read before");
                Check.True(infos.All(i => i.ViewState == ViewStateKind.NotNewViewState), "instances seen before");
                Check.Equal(ReturnCode.Ok, reader.Read(samples, infos), "read again");
                Check.True(infos.All(i => i.SampleState == SampleStateKind.ReadSampleState), "read before");
                Check.Equal(ReturnCode.NoData, reader.Take(samples, infos, ResourceLimitsQosPolicy.LengthUnlimited, SampleStateKind.NotReadSampleState), "nothing unread");
                Check.Equal(ReturnCode.Ok, reader.Take(samples, infos, 1), "take one");
                Check.EqualItems(new[] { a }, samples, "the first");
                Check.Equal(ReturnCode.Ok, reader.Take(samples, infos), "take the rest");
                Check.EqualItems(new[] { b }, samples, "the second");
                Check.Equal(ReturnCode.NoData, reader.Take(samples, infos), "nothing left");

                // Writing allocates nothing of the binding's own once its buffer has grown
                // (where the runtime counts a thread's allocations).
                var same = new Reading(3, "the same sample, many times");
                writer.Write(same);
                WritesAllocateNothing(writer, same, 1000, "1000 writes");
                // A take with no limit takes them all, in batches that grow.
                var many = TakeAtLeast(participant, reader, 1001, infos);
                Check.Equal(1001, many.Count, "every sample written");
                Check.True(many.All(r => r.Equals(same)), "every one the same");

                // A sample of 32 KiB or more after one of 32 KiB or more is serialized into a
                // buffer the native writer lends (a little larger than the last sample): one
                // that outgrows it goes on in managed memory and is written from there, the
                // next gets a larger buffer. Non-ASCII text, the timestamp kept.
                var large = new List<Reading>();
                foreach (int n in new[] { 40000, 41000, 90000, 90001, 35000, 300, 70000, 40000 })
                {
                    large.Add(new Reading(n, new string('\u00e9', n / 4) + "\ud83d\ude00" + new string('y', n)));
                }
                foreach (var r in large)
                {
                    writer.Write(r);
                }
                var stampedLarge = new Reading(11, new string('z', 40000));
                writer.Write(stampedLarge, stamp);
                large.Add(stampedLarge);
                Check.EqualItems(large, TakeAtLeast(participant, reader, large.Count, infos), "the large samples taken");
                Check.Equal(stamp, infos[infos.Count - 1].SourceTimestamp, "the timestamp of a sample written in place");
                WritesAllocateNothing(writer, stampedLarge, 200, "200 writes of 40 KB in place");
                var written = TakeAtLeast(participant, reader, 200, infos);
                Check.Equal(200, written.Count, "every sample written in place");
                Check.True(written.All(r => r.Equals(stampedLarge)), "every one as written");

                // TakeReusing reads into the objects of the last take, makes new ones only
                // past the list's end, and cuts the list to what it took.
                var reused = new List<Reading> { new Reading(-1, "to be overwritten"), new Reading(-2, "and this") };
                var first = reused[0];
                writer.Write(new Reading(8, "eight"));
                // (A call that finds nothing cuts the list to nothing; the reader keeps the
                // objects, in their order, for the next.)
                Check.Until(() => reader.TakeReusing(reused, infos) == ReturnCode.Ok, "a sample to take into an object");
                Check.EqualItems(new[] { new Reading(8, "eight") }, reused, "the sample, the list cut to it");
                Check.True(ReferenceEquals(first, reused[0]), "the object read into is the one the list held");
                writer.Write(new Reading(9, "nine"));
                writer.Write(new Reading(10, "ten"));
                var taken = new List<Reading>();
                Check.Until(() =>
                {
                    if (reader.TakeReusing(reused, infos) == ReturnCode.Ok)
                    {
                        taken.AddRange(reused.Select(r => new Reading(r.id, r.text)));
                    }
                    return taken.Count >= 2;
                }, "two samples to take into one object and a new one");
                Check.EqualItems(new[] { new Reading(9, "nine"), new Reading(10, "ten") }, taken, "both samples");
                Check.True(ReferenceEquals(first, reused[0]), "the first read into the same object again");
                Check.Equal(ReturnCode.NoData, reader.TakeReusing(reused, infos), "nothing left");
                Check.Equal(0, reused.Count, "the list cut to nothing");
            }
        }

        /// <summary>Writes <paramref name="sample"/> <paramref name="count"/> times and checks
        /// that this allocated (almost) nothing, where the runtime counts a thread's
        /// allocations.</summary>
        private static void WritesAllocateNothing(DataWriter<Reading> writer, Reading sample, int count, string what)
        {
            long allocated = AllocatedBytes(() =>
            {
                for (int i = 0; i < count; i++)
                {
                    writer.Write(sample);
                }
            });
            if (allocated >= 0)
            {
                Console.WriteLine("  " + what + " allocated " + allocated + " bytes");
                Check.True(allocated < 1000, what + " allocated " + allocated + " bytes");
            }
            else
            {
                Console.WriteLine("  (this runtime does not count a thread's allocations)");
            }
        }

        /// <summary>The bytes this thread allocated running <paramref name="action"/>; -1
        /// when the runtime does not say (GC.GetAllocatedBytesForCurrentThread is newer than
        /// netstandard2.0).</summary>
        private static long AllocatedBytes(Action action)
        {
            var count = typeof(GC).GetMethod("GetAllocatedBytesForCurrentThread", Type.EmptyTypes);
            if (count == null)
            {
                action();
                return -1;
            }
            var measure = (Func<long>)Delegate.CreateDelegate(typeof(Func<long>), count);
            long before = measure();
            action();
            return measure() - before;
        }

        private static void DisposeAndInstanceStates(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                var topic = participant.CreateTopic("cs_dispose", Readings);
                var writerQos = ReliableWriter();
                writerQos.WriterDataLifecycle.AutodisposeUnregisteredInstances = false;
                var writer = participant.CreatePublisher().CreateDataWriter(topic, writerQos);
                var reader = participant.CreateSubscriber().CreateDataReader(topic, ReliableReader());
                writer.WaitForMatched(1, FiveSeconds);
                var infos = new List<SampleInfo>();
                writer.Write(new Reading(1, "one"));
                writer.Write(new Reading(2, "two"));
                TakeAtLeast(participant, reader, 2, infos);
                InstanceHandle one = infos[0].InstanceHandle, two = infos[1].InstanceHandle;

                // Dispose: a sample without data, holding the key.
                writer.Dispose(new Reading(1, ""));
                var taken = TakeAtLeast(participant, reader, 1, infos);
                Check.Equal(1, taken.Count, "one sample");
                Check.True(!infos[0].ValidData, "no data");
                Check.Equal(InstanceStateKind.NotAliveDisposedInstanceState, infos[0].InstanceState, "disposed");
                Check.Equal(1, taken[0].id, "the key");
                Check.Equal(one, infos[0].InstanceHandle, "the instance");

                // Unregister (without autodispose): no writers left.
                writer.UnregisterInstance(new Reading(2, ""));
                taken = TakeAtLeast(participant, reader, 1, infos);
                Check.True(!infos[0].ValidData, "no data");
                Check.Equal(InstanceStateKind.NotAliveNoWritersInstanceState, infos[0].InstanceState, "no writers");
                Check.Equal(2, taken[0].id, "the key");
                Check.Equal(two, infos[0].InstanceHandle, "the instance");

                // Written again, the instance is alive and new again.
                writer.Write(new Reading(1, "again"));
                taken = TakeAtLeast(participant, reader, 1, infos);
                Check.Equal(new Reading(1, "again"), taken[0], "the sample");
                Check.Equal(InstanceStateKind.AliveInstanceState, infos[0].InstanceState, "alive");
                Check.Equal(ViewStateKind.NewViewState, infos[0].ViewState, "new again");

                // Instance states select.
                writer.Write(new Reading(3, "three"));
                writer.Dispose(new Reading(3, ""));
                using (var waitSet = participant.CreateWaitSet())
                using (var disposed = reader.CreateReadCondition(SampleStateKind.AnySampleState, ViewStateKind.AnyViewState, InstanceStateKind.NotAliveDisposedInstanceState))
                {
                    waitSet.AttachCondition(disposed);
                    Check.Equal(ReturnCode.Ok, waitSet.Wait(new List<Condition>(), FiveSeconds), "the dispose came");
                }
                var samples = new List<Reading>();
                Check.Equal(ReturnCode.NoData, reader.Take(samples, infos, -1, SampleStateKind.AnySampleState, ViewStateKind.AnyViewState, InstanceStateKind.AliveInstanceState), "nothing alive");
                Check.Equal(ReturnCode.Ok, reader.Take(samples, infos, -1, SampleStateKind.AnySampleState, ViewStateKind.AnyViewState, InstanceStateKind.NotAliveInstanceState), "the disposed instance's");
                Check.Equal(new Reading(3, "three"), samples[0], "its sample");
                Check.True(infos.All(i => i.InstanceState == InstanceStateKind.NotAliveDisposedInstanceState), "all disposed");
            }
        }

        private static void LateJoiner(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                var topic = participant.CreateTopic("cs_late_joiner", Readings);
                var writerQos = ReliableWriter(keepAll: false);
                writerQos.History.Depth = 8;
                writerQos.Durability.Kind = DurabilityQosPolicyKind.TransientLocalDurabilityQos;
                var writer = participant.CreatePublisher().CreateDataWriter(topic, writerQos);
                var sent = new List<Reading>();
                for (int i = 0; i < 5; i++)
                {
                    sent.Add(new Reading(7, "before the reader " + i));
                    writer.Write(sent[i]);
                }
                var readerQos = ReliableReader();
                readerQos.Durability.Kind = DurabilityQosPolicyKind.TransientLocalDurabilityQos;
                var reader = participant.CreateSubscriber().CreateDataReader(topic, readerQos);
                var infos = new List<SampleInfo>();
                Check.EqualItems(sent, TakeAtLeast(participant, reader, 5, infos), "what was written before the reader");
            }
        }

        private static void WaitSetAndConditions(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                var topic = participant.CreateTopic("cs_waitset", Readings);
                var publisher = participant.CreatePublisher();
                var writerQos = ReliableWriter();
                writerQos.WriterDataLifecycle.AutodisposeUnregisteredInstances = false;
                var writer = publisher.CreateDataWriter(topic, writerQos);
                var subscriber = participant.CreateSubscriber();
                var reader = subscriber.CreateDataReader(topic, ReliableReader());
                Check.Equal(ReturnCode.Ok, writer.WaitForMatched(1, FiveSeconds), "matched");

                var waitSet = participant.CreateWaitSet();
                var disposed = reader.CreateReadCondition(SampleStateKind.NotReadSampleState, ViewStateKind.AnyViewState, InstanceStateKind.NotAliveDisposedInstanceState);
                var data = reader.StatusCondition;
                data.SetEnabledStatuses(StatusMask.DataAvailableStatus);
                Check.Equal(StatusMask.DataAvailableStatus, data.EnabledStatuses, "enabled statuses");
                waitSet.AttachCondition(disposed);
                waitSet.AttachCondition(data);
                var attached = new List<Condition>();
                waitSet.GetConditions(attached);
                Check.Equal(2, attached.Count, "conditions attached");
                var active = new List<Condition>();
                Check.Equal(ReturnCode.Timeout, waitSet.Wait(active, Duration.FromMilliseconds(200)), "nothing holds");
                Check.Equal(0, active.Count, "no condition");

                writer.Write(new Reading(7, "seven"));
                Check.Equal(ReturnCode.Ok, waitSet.Wait(active, FiveSeconds), "data came");
                Check.True(active.Contains(data) && !active.Contains(disposed), "the status condition only");
                var samples = new List<Reading>();
                var infos = new List<SampleInfo>();
                Check.Equal(ReturnCode.Ok, reader.Take(samples, infos), "take");

                writer.Dispose(new Reading(7, ""));
                Check.Equal(ReturnCode.Ok, waitSet.Wait(active, FiveSeconds), "the dispose came");
                Check.True(active.Contains(disposed), "the read condition holds");
                Check.Equal(ReturnCode.Ok, reader.TakeWithCondition(samples, infos, -1, disposed), "take through the condition");
                Check.True(samples.Count == 1 && samples[0].id == 7 && !infos[0].ValidData, "the dispose of 7");

                // A query condition: the states and a filter on the members.
                var query = reader.CreateQueryCondition(SampleStateKind.AnySampleState, ViewStateKind.AnyViewState, InstanceStateKind.AnyInstanceState, "id > %0", "10");
                waitSet.DetachCondition(data);
                waitSet.DetachCondition(disposed);
                waitSet.AttachCondition(query);
                writer.Write(new Reading(5, "five"));
                writer.Write(new Reading(11, "eleven"));
                Check.Equal(ReturnCode.Ok, waitSet.Wait(active, FiveSeconds), "eleven came");
                Check.True(active.Count == 1 && active[0] == query, "the query condition holds");
                Check.Until(() => reader.Read(samples, infos, -1, SampleStateKind.NotReadSampleState) == ReturnCode.Ok && samples.Count == 2, "both came");
                Check.Equal(ReturnCode.Ok, reader.TakeWithCondition(samples, infos, -1, query), "take through the query");
                Check.EqualItems(new[] { new Reading(11, "eleven") }, samples, "what the query keeps");
                Check.Equal(ReturnCode.Ok, reader.Take(samples, infos), "take the rest");
                Check.EqualItems(new[] { new Reading(5, "five") }, samples, "what it left");
                reader.DeleteReadCondition(disposed);
                query.Dispose();
                waitSet.Dispose();

                // A writer's status condition: PUBLICATION_MATCHED changed (the first match)
                // until the status is read, and again when a reader joins.
                using (var matches = participant.CreateWaitSet())
                {
                    var matched = writer.StatusCondition;
                    matched.SetEnabledStatuses(StatusMask.PublicationMatchedStatus);
                    matches.AttachCondition(matched);
                    Check.Equal(ReturnCode.Ok, matches.Wait(active, FiveSeconds), "matched before");
                    writer.GetPublicationMatchedStatus();
                    Check.Equal(ReturnCode.Timeout, matches.Wait(active, Duration.FromMilliseconds(200)), "read since");
                    subscriber.CreateDataReader(topic, ReliableReader());
                    Check.Equal(ReturnCode.Ok, matches.Wait(active, FiveSeconds), "a reader joined");
                    Check.Equal(2L, writer.GetPublicationMatchedStatus().CurrentCount, "two readers");
                }
            }
        }

        private sealed class ReaderEvents : DataReaderListener
        {
            public readonly List<Reading> Taken = new List<Reading>();
            public int DataAvailable;
            public SubscriptionMatchedStatus Matched;

            public override void OnDataAvailable(DataReader reader)
            {
                // The API may be called from a listener: take on FerroDDS's thread.
                var samples = new List<Reading>();
                ((DataReader<Reading>)reader).Take(samples, new List<SampleInfo>());
                lock (Taken)
                {
                    DataAvailable++;
                    Taken.AddRange(samples);
                }
            }

            public override void OnSubscriptionMatched(DataReader reader, SubscriptionMatchedStatus status)
            {
                lock (Taken)
                {
                    Matched = status;
                }
            }
        }

        private sealed class WriterEvents : DataWriterListener
        {
            public PublicationMatchedStatus Matched;

            public override void OnPublicationMatched(DataWriter writer, PublicationMatchedStatus status)
            {
                lock (this)
                {
                    Matched = status;
                }
            }
        }

        private sealed class SubscriberEvents : SubscriberListener
        {
            public int DataOnReaders;
            public Subscriber Subscriber;

            public override void OnDataOnReaders(Subscriber subscriber)
            {
                lock (this)
                {
                    DataOnReaders++;
                    Subscriber = subscriber;
                }
            }
        }

        private sealed class TopicEvents : TopicListener
        {
            public InconsistentTopicStatus Status;
            public Topic Topic;

            public override void OnInconsistentTopic(Topic topic, InconsistentTopicStatus status)
            {
                lock (this)
                {
                    Topic = topic;
                    Status = status;
                }
            }
        }

        private sealed class Throwing : DataReaderListener
        {
            public int Calls;

            public override void OnDataAvailable(DataReader reader)
            {
                Interlocked.Increment(ref Calls);
                throw new InvalidOperationException("a listener that throws (as the test wants)");
            }
        }

        private static void Listeners(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                var topic = participant.CreateTopic("cs_listeners", Readings);
                var readerEvents = new ReaderEvents();
                var writerEvents = new WriterEvents();
                var reader = participant.CreateSubscriber().CreateDataReader(topic, ReliableReader(), readerEvents);
                var writer = participant.CreatePublisher().CreateDataWriter(topic, ReliableWriter(), writerEvents,
                    StatusMask.PublicationMatchedStatus);
                Check.Until(() => { lock (writerEvents) { return writerEvents.Matched.CurrentCount == 1; } }, "PUBLICATION_MATCHED");
                Check.Until(() => { lock (readerEvents.Taken) { return readerEvents.Matched.CurrentCount == 1; } }, "SUBSCRIPTION_MATCHED");
                Check.Equal(writer.InstanceHandle, readerEvents.Matched.LastPublicationHandle, "the writer matched");
                Check.Equal(reader.InstanceHandle, writerEvents.Matched.LastSubscriptionHandle, "the reader matched");

                var sent = new List<Reading> { new Reading(1, "one"), new Reading(2, "two"), new Reading(3, "three") };
                foreach (var r in sent)
                {
                    writer.Write(r);
                }
                Check.Until(() => { lock (readerEvents.Taken) { return readerEvents.Taken.Count == 3; } }, "three samples taken by the listener");
                lock (readerEvents.Taken)
                {
                    Check.EqualItems(sent, readerEvents.Taken, "what the listener took");
                }

                // A subscriber's listener hears DATA_ON_READERS of its readers.
                var subscriberEvents = new SubscriberEvents();
                var subscriber = participant.CreateSubscriber(null, subscriberEvents, StatusMask.DataOnReadersStatus);
                var second = subscriber.CreateDataReader(topic, ReliableReader());
                Check.Equal(ReturnCode.Ok, second.WaitForMatched(1, FiveSeconds), "the second reader matched");
                writer.Write(new Reading(4, "four"));
                Check.Until(() => { lock (subscriberEvents) { return subscriberEvents.DataOnReaders >= 1; } }, "DATA_ON_READERS");
                Check.True(subscriberEvents.Subscriber == subscriber, "of the subscriber");

                // Without its listener, the reader is not called.
                int before;
                lock (readerEvents.Taken)
                {
                    before = readerEvents.DataAvailable;
                }
                reader.SetListener(null);
                writer.Write(new Reading(5, "five"));
                var infos = new List<SampleInfo>();
                Check.EqualItems(new[] { new Reading(5, "five") }, TakeAtLeast(participant, reader, 1, infos), "the sample came");
                lock (readerEvents.Taken)
                {
                    Check.Equal(before, readerEvents.DataAvailable, "DATA_AVAILABLE calls after the listener was removed");
                }

                // A listener that throws does not reach FerroDDS.
                var throwing = new Throwing();
                reader.SetListener(throwing, StatusMask.DataAvailableStatus);
                writer.Write(new Reading(6, "six"));
                Check.Until(() => throwing.Calls >= 1, "the throwing listener was called");
                Check.EqualItems(new[] { new Reading(6, "six") }, TakeAtLeast(participant, reader, 1, infos), "the reader goes on");

                // A topic's listener hears of a remote topic of its name and another type.
                var topicEvents = new TopicEvents();
                var mine = participant.CreateTopic("cs_inconsistent", Readings, topicEvents);
                participant.CreatePublisher().CreateDataWriter(mine);
                using (var other = DomainParticipantFactory.Instance.CreateParticipant(domain))
                {
                    var theirs = other.CreateTopic("cs_inconsistent", new AppendableReadingTypeSupport());
                    other.CreateSubscriber().CreateDataReader(theirs);
                    Check.Until(() => { lock (topicEvents) { return topicEvents.Status.TotalCount >= 1; } }, "INCONSISTENT_TOPIC");
                    Check.True(topicEvents.Topic == mine, "of the topic");
                    Check.True(mine.GetInconsistentTopicStatus().TotalCount >= 1, "the status");
                }
            }
        }

        private static void Json(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                var type = TopicType.FromIdl(Readings.Idl, "demo::Reading");
                var topic = participant.CreateTopic("cs_json", type);
                var publisher = participant.CreatePublisher();
                var subscriber = participant.CreateSubscriber();
                var writer = publisher.CreateDataWriter(topic, ReliableWriter());
                var reader = subscriber.CreateDataReader(topic, ReliableReader());
                writer.WaitForMatched(1, FiveSeconds);
                var texts = new List<string>();
                var infos = new List<SampleInfo>();

                writer.WriteJson("{\"id\": 7, \"text\": \"hi\"}");
                writer.WriteJson("{\"id\": 8, \"text\": \"h\\u00e9 \u4e2d\"}");
                Check.Until(() => reader.ReadJson(texts, infos) == ReturnCode.Ok && texts.Count == 2, "two JSON samples");
                Check.EqualItems(new[] { "{\"id\":7,\"text\":\"hi\"}", "{\"id\":8,\"text\":\"h\u00e9 \u4e2d\"}" }, texts, "the JSON read");
                Check.Equal(ReturnCode.Ok, reader.TakeJson(texts, infos), "take them");
                Check.True(infos.All(i => i.SampleState == SampleStateKind.ReadSampleState), "read before");

                writer.DisposeJson("{\"id\": 7}");
                writer.UnregisterInstanceJson("{\"id\": 8}");
                Check.Until(() => reader.ReadJson(texts, infos) == ReturnCode.Ok && texts.Count == 2, "the dispose and the unregister");
                Check.Equal(ReturnCode.Ok, reader.TakeJson(texts, infos), "take them");
                Check.True(!infos[0].ValidData && texts[0].Contains("\"id\":7"), "the dispose's key: " + texts[0]);
                Check.Equal(InstanceStateKind.NotAliveDisposedInstanceState, infos[0].InstanceState, "disposed");
                Check.True(texts[1].Contains("\"id\":8"), "the unregister's key: " + texts[1]);

                // Octets as base64, long enough for the native encoder and decoder (Json.cs,
                // Base64.NativeFrom) and short enough for the loops: the same text and bytes.
                foreach (int size in new[] { 0, 1, 2, 127, 128, 129, 1000, 65536 })
                {
                    var bytes = new byte[size];
                    for (int i = 0; i < size; i++)
                    {
                        bytes[i] = (byte)(i * 7 + 3);
                    }
                    var octets = new JsonWriter(4);
                    octets.WriteOctets(bytes);
                    string text = "\"" + Convert.ToBase64String(bytes) + "\"";
                    Check.Equal(text, octets.ToString(), "the base64 of " + size + " bytes");
                    var utf8 = System.Text.Encoding.ASCII.GetBytes(text + ",");
                    Check.EqualItems(bytes, new JsonReader(utf8, 0, utf8.Length).ReadOctets(), size + " bytes read back");
                    if (size >= 4)
                    {
                        // A character that is no digit, in the middle: the error is where it is.
                        int bad = 1 + size / 3 / 2 * 4 + 2;
                        utf8[bad] = (byte)'*';
                        try
                        {
                            new JsonReader(utf8, 0, utf8.Length).ReadOctets();
                            Check.True(false, "bad base64 of " + size + " bytes is refused");
                        }
                        catch (JsonException e)
                        {
                            Check.Equal(bad - 2, e.Offset, "the group the bad digit is in, of " + size + " bytes");
                        }
                    }
                }

                // Typed and JSON samples on one topic, both ways.
                var typed = participant.CreateTopic("cs_json_typed", Readings);
                var typedWriter = publisher.CreateDataWriter(typed, ReliableWriter());
                var jsonWriter = publisher.CreateDataWriter((Topic)typed, ReliableWriter());
                var typedReader = subscriber.CreateDataReader(typed, ReliableReader());
                var jsonReader = subscriber.CreateDataReader((Topic)typed, ReliableReader());
                typedWriter.WaitForMatched(2, FiveSeconds);
                jsonWriter.WaitForMatched(2, FiveSeconds);
                typedWriter.Write(new Reading(9, "nine \u00e9"));
                jsonWriter.WriteJson("{\"id\": 10, \"text\": \"ten \\u4e2d\"}");
                var fromBoth = TakeAtLeast(participant, typedReader, 2, infos).OrderBy(r => r.id).ToList();
                Check.EqualItems(new[] { new Reading(9, "nine \u00e9"), new Reading(10, "ten \u4e2d") }, fromBoth, "typed samples of both writers");
                var all = new List<string>();
                Check.Until(() =>
                {
                    if (jsonReader.TakeJson(texts, infos) == ReturnCode.Ok)
                    {
                        all.AddRange(texts);
                    }
                    return all.Count == 2;
                }, "JSON samples of both writers");
                all.Sort(StringComparer.Ordinal);
                Check.EqualItems(new[] { "{\"id\":10,\"text\":\"ten \u4e2d\"}", "{\"id\":9,\"text\":\"nine \u00e9\"}" }, all, "JSON of both writers");

                // The generated JSON code: a typed sample's JSON written through the JSON
                // writer from a reused JsonWriter, and the JSON taken read into typed samples.
                var json = new JsonWriter(4);
                Readings.ToJson(new Reading(11, "eleven \"q\" \\ \u4e2d\n\u0001"), json);
                Check.Equal("{\"id\":11,\"text\":\"eleven \\\"q\\\" \\\\ \u4e2d\\n\\u0001\"}", json.ToString(), "the JSON written");
                jsonWriter.WriteJson(json);
                typedWriter.Write(new Reading(12, "twelve"));
                var typedBoth = TakeAtLeast(participant, typedReader, 2, infos).OrderBy(r => r.id).ToList();
                Check.EqualItems(new[] { new Reading(11, "eleven \"q\" \\ \u4e2d\n\u0001"), new Reading(12, "twelve") }, typedBoth, "typed samples of the generated JSON");
                all.Clear();
                Check.Until(() =>
                {
                    if (jsonReader.TakeJson(texts, infos) == ReturnCode.Ok)
                    {
                        all.AddRange(texts);
                    }
                    return all.Count == 2;
                }, "JSON samples of both");
                Check.EqualItems(typedBoth, all.Select(Readings.FromJson).OrderBy(r => r.id).ToList(), "the JSON taken, read by the generated code");
                // Taken straight into typed samples through the generated JSON code.
                Readings.ToJson(new Reading(13, "thirteen \u00e9"), json);
                jsonWriter.WriteJson(json);
                typedWriter.Write(new Reading(14, "fourteen"));
                typedWriter.Dispose(new Reading(14, "fourteen"));
                var viaJson = new List<Reading>();
                var viaJsonInfos = new List<SampleInfo>();
                var batch = new List<Reading>();
                Check.Until(() =>
                {
                    if (jsonReader.TakeJson(batch, infos, Readings) == ReturnCode.Ok)
                    {
                        viaJson.AddRange(batch);
                        viaJsonInfos.AddRange(infos);
                    }
                    return viaJson.Count == 3;
                }, "JSON samples taken as typed samples");
                Check.EqualItems(new[] { new Reading(13, "thirteen \u00e9"), new Reading(14, "fourteen") },
                    viaJson.Where((r, i) => viaJsonInfos[i].ValidData).OrderBy(r => r.id).ToList(), "the typed samples of the JSON");
                var disposed = viaJson.Where((r, i) => !viaJsonInfos[i].ValidData).Single();
                Check.Equal(new Reading(14, ""), disposed, "the dispose: its key, the rest at its defaults");
                // Taken into the objects of the last take.
                var reused = new List<Reading>();
                Readings.ToJson(new Reading(15, "fifteen"), json);
                jsonWriter.WriteJson(json);
                Check.Until(() => jsonReader.TakeJsonReusing(reused, infos, Readings) == ReturnCode.Ok, "a sample taken reusing");
                Check.EqualItems(new[] { new Reading(15, "fifteen") }, reused, "the sample taken reusing");
                var first = reused[0];
                Readings.ToJson(new Reading(16, "sixteen"), json);
                jsonWriter.WriteJson(json);
                Check.Until(() => jsonReader.TakeJsonReusing(reused, infos, Readings) == ReturnCode.Ok, "another sample taken reusing");
                Check.EqualItems(new[] { new Reading(16, "sixteen") }, reused, "the next sample taken reusing");
                Check.True(ReferenceEquals(first, reused[0]), "read into the object of the last take");
                Check.Equal(new Reading(3, "t"), Readings.FromJson(" {\"x\": [1, {\"y\": null}], \"text\": \"t\", \"id\": 3} "), "unknown members skipped");
                JsonRefused("{\"id\": 1.5, \"text\": \"x\"}", "demo::Reading.id: expected an integer from -2147483648 to 2147483647, found '1' (at byte 7)");
                JsonRefused("{\"id\": 1}", "demo::Reading.text: absent from the object (at byte 9)");
                JsonRefused("{\"id\": 1, \"text\": 2}", "demo::Reading.text: expected a string, found '2' (at byte 18)");
                JsonRefused("{\"id\": 1, \"text\": \"t\"} x", "demo::Reading: expected the end of the text, found 'x' (at byte 23)");
                JsonRefused("[", "demo::Reading: expected an object, found '[' (at byte 0)");
                try
                {
                    Readings.ToJson(new Reading(1, null));
                    Check.True(false, "a null string refused");
                }
                catch (JsonException e)
                {
                    Check.Equal("demo::Reading.text: null where the IDL type has a value (only @optional members may be null)", e.Message, "the error");
                }
                type.Dispose();
            }
        }

        /// <summary>The generated JSON code refuses <paramref name="text"/> with <paramref name="message"/>.</summary>
        private static void JsonRefused(string text, string message)
        {
            try
            {
                Readings.FromJson(text);
                Check.True(false, "refused: " + text);
            }
            catch (JsonException e)
            {
                Check.Equal(message, e.Message, "the error for " + text);
            }
        }

        private static void NullArguments(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                Check.Throws(ReturnCode.BadParameter, "ferrodds_create_topic: name is a null pointer", () => participant.CreateTopic(null, Readings));
                Check.Throws(ReturnCode.BadParameter, "ferrodds_create_type_from_idl: idl is a null pointer", () => participant.CreateTopic<Reading>("cs_null", null));
                Check.Throws(ReturnCode.BadParameter, "ferrodds_create_type_from_idl: type_name is a null pointer", () => TopicType.FromIdl(Readings.Idl, null));
                var topic = participant.CreateTopic("cs_null", Readings);
                var publisher = participant.CreatePublisher();
                var subscriber = participant.CreateSubscriber();
                var writer = publisher.CreateDataWriter(topic);
                var reader = subscriber.CreateDataReader(topic);
                Check.Throws(ReturnCode.BadParameter, "ferrodds_write_json: json is a null pointer", () => writer.WriteJson((string)null));
                Check.Throws(ReturnCode.BadParameter, "ferrodds_create_writer: 0 is not an entity handle", () => publisher.CreateDataWriter((Topic<Reading>)null));
                Check.Throws(ReturnCode.BadParameter, "ferrodds_create_reader: 0 is not an entity handle", () => subscriber.CreateDataReader((Topic)null));
                Check.Throws(ReturnCode.BadParameter, "ferrodds_delete: 0 is not an entity handle", () => participant.DeletePublisher(null));
                Check.Throws(ReturnCode.BadParameter, "ferrodds_create_querycondition: expression is a null pointer",
                    () => reader.CreateQueryCondition(SampleStateKind.AnySampleState, ViewStateKind.AnyViewState, InstanceStateKind.AnyInstanceState, null));
                var partitioned = new PublisherQos();
                partitioned.Partition.Name.Add(null);
                Check.Throws(ReturnCode.BadParameter, "names[0] is a null pointer", () => participant.CreatePublisher(partitioned));
                using (var waitSet = participant.CreateWaitSet())
                {
                    Check.Throws(ReturnCode.BadParameter, "ferrodds_waitset_attach: 0 is not an entity handle", () => waitSet.AttachCondition(null));
                }
                // Samples and lists the C API never sees are the binding's to check.
                Check.Throws<ArgumentNullException>(() => writer.Write(null));
                Check.Throws<ArgumentNullException>(() => writer.Dispose((Reading)null));
                Check.Throws<ArgumentNullException>(() => reader.Take(null, new List<SampleInfo>()));
            }
        }

        private static void DeletedEntities(int domain)
        {
            var participant = DomainParticipantFactory.Instance.CreateParticipant(domain);
            var type = TopicType.FromIdl(Readings.Idl, "demo::Reading");
            var topic = participant.CreateTopic("cs_deleted", Readings);
            var publisher = participant.CreatePublisher();
            var subscriber = participant.CreateSubscriber();
            var writer = publisher.CreateDataWriter(topic);
            var reader = subscriber.CreateDataReader(topic);
            var condition = reader.CreateReadCondition();
            var waitSet = participant.CreateWaitSet();

            writer.Dispose();
            Check.Throws(ReturnCode.AlreadyDeleted, "ferrodds_write: entity " , () => writer.Write(new Reading(1, "")));
            Check.Throws(ReturnCode.AlreadyDeleted, "was deleted", () => writer.WriteJson("{\"id\": 1}"));
            writer.Dispose();
            Check.Throws(ReturnCode.AlreadyDeleted, "ferrodds_delete: entity", () => publisher.DeleteDataWriter(writer));

            participant.DeleteSubscriber(subscriber);
            Check.Throws(ReturnCode.AlreadyDeleted, "ferrodds_take: entity", () => reader.Take(new List<Reading>(), new List<SampleInfo>()));
            Check.Throws(ReturnCode.AlreadyDeleted, "was deleted", () => reader.GetSubscriptionMatchedStatus());
            Check.Throws(ReturnCode.AlreadyDeleted, "ferrodds_waitset_attach: entity", () => waitSet.AttachCondition(condition));
            condition.Dispose();

            type.Dispose();
            Check.Throws(ReturnCode.AlreadyDeleted, "ferrodds_create_topic: entity", () => participant.CreateTopic("cs_deleted_type", type));

            DomainParticipantFactory.Instance.DeleteParticipant(participant);
            Check.Throws(ReturnCode.AlreadyDeleted, "ferrodds_create_publisher: entity", () => participant.CreatePublisher());
            Check.Throws(ReturnCode.AlreadyDeleted, "was deleted", () => publisher.CreateDataWriter(topic));
            Check.Throws(ReturnCode.AlreadyDeleted, "ferrodds_waitset_wait: entity", () => waitSet.Wait(new List<Condition>(), Duration.Zero));
            Check.Throws(ReturnCode.AlreadyDeleted, "ferrodds_delete: entity", () => DomainParticipantFactory.Instance.DeleteParticipant(participant));
            participant.Dispose();
            waitSet.Dispose();
        }

        private static void WrongKindOfEntity(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            using (var other = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                var topic = participant.CreateTopic("cs_wrong_kind", Readings);
                var publisher = participant.CreatePublisher();
                var reader = participant.CreateSubscriber().CreateDataReader(topic);
                Check.Throws(ReturnCode.BadParameter, "ferrodds_create_statuscondition: entity", () => { var c = topic.StatusCondition; });
                Check.Throws(ReturnCode.BadParameter, "is a topic, not a writer or reader", () => { var c = topic.StatusCondition; });
                Check.Throws(ReturnCode.BadParameter, "is a publisher, not a writer or reader", () => { var c = publisher.StatusCondition; });
                Check.Throws(ReturnCode.BadParameter, "is a participant, not a writer or reader", () => { var c = participant.StatusCondition; });

                var otherTopic = other.CreateTopic("cs_wrong_kind", Readings);
                Check.Throws(ReturnCode.PreconditionNotMet, "belongs to participant", () => publisher.CreateDataWriter(otherTopic));
                var otherReader = other.CreateSubscriber().CreateDataReader(otherTopic);
                using (var waitSet = participant.CreateWaitSet())
                {
                    Check.Throws(ReturnCode.PreconditionNotMet, "nothing is attached", () => waitSet.Wait(new List<Condition>(), Duration.Zero));
                    Check.Throws(ReturnCode.PreconditionNotMet, "belongs to participant", () => waitSet.AttachCondition(otherReader.StatusCondition));
                    waitSet.AttachCondition(reader.StatusCondition);
                    Check.Throws(ReturnCode.PreconditionNotMet, "is attached already", () => waitSet.AttachCondition(reader.StatusCondition));
                }
                var otherWriter = other.CreatePublisher().CreateDataWriter(otherTopic);
                Check.Throws(ReturnCode.PreconditionNotMet, "was not made from", () => publisher.DeleteDataWriter(otherWriter));
                Check.Throws<ArgumentOutOfRangeException>(() => reader.Take(new List<Reading>(), new List<SampleInfo>(), -1, (SampleStateKind)8));
            }
        }

        /// <summary>A type support that writes what is not a sample, and cannot read one.</summary>
        private sealed class Garbage : ITypeSupport<Reading>
        {
            private readonly byte[] _bytes;

            public Garbage(byte[] bytes) { _bytes = bytes; }

            public string TypeName { get { return Readings.TypeName; } }
            public string Idl { get { return Readings.Idl; } }

            public void Serialize(Reading sample, CdrWriter writer, DataRepresentation representation)
            {
                writer.WriteBytes(_bytes, 0, _bytes.Length);
            }

            public Reading Deserialize(byte[] data, int offset, int length)
            {
                throw new FormatException("not a sample this type support reads");
            }

            public Reading Deserialize(byte[] data, int offset, int length, Reading into)
            {
                return Deserialize(data, offset, length);
            }
        }

        private static void BytesThatAreNotASample(int domain)
        {
            using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
            {
                var publisher = participant.CreatePublisher();
                var abc = publisher.CreateDataWriter(participant.CreateTopic("cs_garbage", new Garbage(new byte[] { 0x61, 0x62, 0x63 })));
                Check.Throws(ReturnCode.BadParameter, "ferrodds_write: the serialized sample's encapsulation", () => abc.Write(new Reading(1, "")));
                // XCDR2's header where the writer sends XCDR1.
                var xcdr2 = publisher.CreateDataWriter(participant.CreateTopic("cs_garbage_xcdr2",
                    new Garbage(new byte[] { 0, 7, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 })));
                Check.Throws(ReturnCode.BadParameter, "encapsulation", () => xcdr2.Write(new Reading(1, "")));
                Check.Throws(ReturnCode.BadParameter, "not a sample of the writer's type", () => abc.WriteJson("{\"id\": \"seven\"}"));
                Check.Throws(ReturnCode.BadParameter, "the IDL", () => TopicType.FromIdl("module m { struct X { long a; };", "m::X"));
                Check.Throws(ReturnCode.BadParameter, "no type demo::Missing", () => TopicType.FromIdl(Readings.Idl, "demo::Missing"));
                Check.Throws(ReturnCode.BadParameter, "objects[0]", () => TopicType.FromTypeObjects(new[] { new byte[] { 1, 2, 3 } }));
                var topic = participant.CreateTopic("cs_garbage_filtered", Readings);
                var filtered = participant.CreateContentFilteredTopic("cs_filtered", topic, "id >");
                Check.Throws(ReturnCode.BadParameter, "ferrodds_create_filtered_reader:", () => participant.CreateSubscriber().CreateDataReader(filtered));

                // Received bytes the type support cannot read: its exception, the loan given
                // back (the reader goes on).
                using (var sender = DomainParticipantFactory.Instance.CreateParticipant(domain))
                {
                    var sent = sender.CreateTopic("cs_garbage_received", Readings);
                    var writer = sender.CreatePublisher().CreateDataWriter(sent, ReliableWriter());
                    var received = participant.CreateTopic("cs_garbage_received", new Garbage(new byte[0]));
                    var reader = participant.CreateSubscriber().CreateDataReader(received, ReliableReader());
                    writer.WaitForMatched(1, FiveSeconds);
                    writer.Write(new Reading(1, "one"));
                    var samples = new List<Reading>();
                    var infos = new List<SampleInfo>();
                    Check.Until(() =>
                    {
                        try
                        {
                            return reader.Read(samples, infos) == ReturnCode.Ok;
                        }
                        catch (FormatException)
                        {
                            return true;
                        }
                    }, "the sample came");
                    Check.Throws<FormatException>(() => reader.Take(samples, infos));
                    Check.Equal(ReturnCode.NoData, reader.Take(samples, infos), "taken, though not read");
                }
            }
        }
    }
}
