// Listeners as DCPS's C# users subclass them. The C API calls one static function for every
// listener of the program, with the owner's handle as its argument; the binding finds the
// owner, reads the status that changed (the C API passes only which one) and calls the
// listener's method. One delegate, kept for the program's life, means no entity's deletion
// can leave C holding a pointer to a collected delegate, and a call for a deleted entity
// finds nothing and does nothing.
using System;

namespace FerroDDS
{
    internal interface ITopicListener
    {
        void OnInconsistentTopic(Topic topic, InconsistentTopicStatus status);
    }

    internal interface IWriterListener
    {
        void OnOfferedDeadlineMissed(DataWriter writer, OfferedDeadlineMissedStatus status);
        void OnOfferedIncompatibleQos(DataWriter writer, OfferedIncompatibleQosStatus status);
        void OnLivelinessLost(DataWriter writer, LivelinessLostStatus status);
        void OnPublicationMatched(DataWriter writer, PublicationMatchedStatus status);
    }

    internal interface IReaderListener
    {
        void OnRequestedDeadlineMissed(DataReader reader, RequestedDeadlineMissedStatus status);
        void OnRequestedIncompatibleQos(DataReader reader, RequestedIncompatibleQosStatus status);
        void OnSampleRejected(DataReader reader, SampleRejectedStatus status);
        void OnLivelinessChanged(DataReader reader, LivelinessChangedStatus status);
        void OnDataAvailable(DataReader reader);
        void OnSubscriptionMatched(DataReader reader, SubscriptionMatchedStatus status);
        void OnSampleLost(DataReader reader, SampleLostStatus status);
    }

    internal interface IDataOnReadersListener
    {
        void OnDataOnReaders(Subscriber subscriber);
    }

    /// <summary>A topic's listener (as <see cref="DataWriterListener"/>, for topics).</summary>
    public abstract class TopicListener : ITopicListener
    {
        /// <summary>A remote topic of the same name and another type was found.</summary>
        public virtual void OnInconsistentTopic(Topic topic, InconsistentTopicStatus status) { }
    }

    /// <summary>A writer's listener: override what to hear of. It runs on a FerroDDS thread
    /// (or the thread whose call changed the status) and may call the API; an exception it
    /// throws is written to standard error, since it cannot cross into FerroDDS.</summary>
    public abstract class DataWriterListener : IWriterListener
    {
        /// <summary>OFFERED_DEADLINE_MISSED changed.</summary>
        public virtual void OnOfferedDeadlineMissed(DataWriter writer, OfferedDeadlineMissedStatus status) { }
        /// <summary>OFFERED_INCOMPATIBLE_QOS changed.</summary>
        public virtual void OnOfferedIncompatibleQos(DataWriter writer, OfferedIncompatibleQosStatus status) { }
        /// <summary>LIVELINESS_LOST changed.</summary>
        public virtual void OnLivelinessLost(DataWriter writer, LivelinessLostStatus status) { }
        /// <summary>PUBLICATION_MATCHED changed.</summary>
        public virtual void OnPublicationMatched(DataWriter writer, PublicationMatchedStatus status) { }
    }

    /// <summary>A publisher's listener: its writers' statuses they have no listener for.</summary>
    public abstract class PublisherListener : DataWriterListener
    {
    }

    /// <summary>A reader's listener (as <see cref="DataWriterListener"/>, for readers).</summary>
    public abstract class DataReaderListener : IReaderListener
    {
        /// <summary>REQUESTED_DEADLINE_MISSED changed.</summary>
        public virtual void OnRequestedDeadlineMissed(DataReader reader, RequestedDeadlineMissedStatus status) { }
        /// <summary>REQUESTED_INCOMPATIBLE_QOS changed.</summary>
        public virtual void OnRequestedIncompatibleQos(DataReader reader, RequestedIncompatibleQosStatus status) { }
        /// <summary>SAMPLE_REJECTED changed.</summary>
        public virtual void OnSampleRejected(DataReader reader, SampleRejectedStatus status) { }
        /// <summary>LIVELINESS_CHANGED changed.</summary>
        public virtual void OnLivelinessChanged(DataReader reader, LivelinessChangedStatus status) { }
        /// <summary>Data arrived (DATA_AVAILABLE).</summary>
        public virtual void OnDataAvailable(DataReader reader) { }
        /// <summary>SUBSCRIPTION_MATCHED changed.</summary>
        public virtual void OnSubscriptionMatched(DataReader reader, SubscriptionMatchedStatus status) { }
        /// <summary>SAMPLE_LOST changed.</summary>
        public virtual void OnSampleLost(DataReader reader, SampleLostStatus status) { }
    }

    /// <summary>A subscriber's listener: its readers' statuses they have no listener for,
    /// and DATA_ON_READERS (which comes instead of their DATA_AVAILABLE).</summary>
    public abstract class SubscriberListener : DataReaderListener, IDataOnReadersListener
    {
        /// <summary>Data arrived at one of its readers.</summary>
        public virtual void OnDataOnReaders(Subscriber subscriber) { }
    }

    /// <summary>A participant's listener: the statuses of every writer and reader that
    /// neither it nor its publisher or subscriber has a listener for. (It does not hear
    /// INCONSISTENT_TOPIC: the C API does not say of which topic.)</summary>
    public abstract class DomainParticipantListener : SubscriberListener, IWriterListener
    {
        /// <summary>OFFERED_DEADLINE_MISSED changed.</summary>
        public virtual void OnOfferedDeadlineMissed(DataWriter writer, OfferedDeadlineMissedStatus status) { }
        /// <summary>OFFERED_INCOMPATIBLE_QOS changed.</summary>
        public virtual void OnOfferedIncompatibleQos(DataWriter writer, OfferedIncompatibleQosStatus status) { }
        /// <summary>LIVELINESS_LOST changed.</summary>
        public virtual void OnLivelinessLost(DataWriter writer, LivelinessLostStatus status) { }
        /// <summary>PUBLICATION_MATCHED changed.</summary>
        public virtual void OnPublicationMatched(DataWriter writer, PublicationMatchedStatus status) { }
    }

    internal static class ListenerDispatch
    {
        /// <summary>The one function the C API calls (never collected: a static field).</summary>
        internal static readonly NativeListener Callback = OnStatus;

        private static void OnStatus(int entity, uint status, IntPtr arg)
        {
            try
            {
                Entity owner = Entity.Find(arg.ToInt32());
                object listener = owner == null ? null : owner.Listener;
                if (listener == null)
                {
                    return;
                }
                Entity source = entity == owner.Handle ? owner : Entity.Find(entity);
                Deliver(listener, owner, source, (StatusMask)status);
            }
            catch (DdsException e) when (e.ReturnCode == ReturnCode.AlreadyDeleted)
            {
                // Deleted (by another thread) between the change and reading its status.
            }
            catch (Exception e)
            {
                Console.Error.WriteLine("FerroDDS: a listener threw: " + e);
            }
        }

        private static void Deliver(object listener, Entity owner, Entity source, StatusMask status)
        {
            var reader = source as DataReader;
            if (status == StatusMask.DataOnReadersStatus)
            {
                var l = listener as IDataOnReadersListener;
                var subscriber = owner as Subscriber ?? (reader == null ? null : reader.Subscriber);
                if (l != null && subscriber != null)
                {
                    l.OnDataOnReaders(subscriber);
                }
                return;
            }
            var topic = source as Topic;
            var tl = listener as ITopicListener;
            if (topic != null && tl != null && status == StatusMask.InconsistentTopicStatus)
            {
                tl.OnInconsistentTopic(topic, topic.GetInconsistentTopicStatus());
                return;
            }
            var writer = source as DataWriter;
            var wl = listener as IWriterListener;
            if (writer != null && wl != null)
            {
                switch (status)
                {
                    case StatusMask.OfferedDeadlineMissedStatus: wl.OnOfferedDeadlineMissed(writer, writer.GetOfferedDeadlineMissedStatus()); break;
                    case StatusMask.OfferedIncompatibleQosStatus: wl.OnOfferedIncompatibleQos(writer, writer.GetOfferedIncompatibleQosStatus()); break;
                    case StatusMask.LivelinessLostStatus: wl.OnLivelinessLost(writer, writer.GetLivelinessLostStatus()); break;
                    case StatusMask.PublicationMatchedStatus: wl.OnPublicationMatched(writer, writer.GetPublicationMatchedStatus()); break;
                }
                return;
            }
            var rl = listener as IReaderListener;
            if (reader != null && rl != null)
            {
                switch (status)
                {
                    case StatusMask.RequestedDeadlineMissedStatus: rl.OnRequestedDeadlineMissed(reader, reader.GetRequestedDeadlineMissedStatus()); break;
                    case StatusMask.RequestedIncompatibleQosStatus: rl.OnRequestedIncompatibleQos(reader, reader.GetRequestedIncompatibleQosStatus()); break;
                    case StatusMask.SampleRejectedStatus: rl.OnSampleRejected(reader, reader.GetSampleRejectedStatus()); break;
                    case StatusMask.LivelinessChangedStatus: rl.OnLivelinessChanged(reader, reader.GetLivelinessChangedStatus()); break;
                    case StatusMask.DataAvailableStatus: rl.OnDataAvailable(reader); break;
                    case StatusMask.SubscriptionMatchedStatus: rl.OnSubscriptionMatched(reader, reader.GetSubscriptionMatchedStatus()); break;
                    case StatusMask.SampleLostStatus: rl.OnSampleLost(reader, reader.GetSampleLostStatus()); break;
                }
            }
        }
    }
}
