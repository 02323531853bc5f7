// A FerroDDS peer in C# for the interop tests (crates/ferrodds-c/tests/csharp.rs):
//
//   InteropPeer.exe pub DOMAIN TOPIC COUNT        interop::Reading (tests/interop/README.md) as
//                                                 JSON, TRANSIENT_LOCAL: readings 0..COUNT-1,
//                                                 then a dispose of sensor 1; waits for
//                                                 acknowledgments
//   InteropPeer.exe sub DOMAIN TOPIC COUNT        prints each interop::Reading taken as one
//                                                 JSON line; exits once COUNT valid samples
//                                                 and a dispose came (1 after 30 s)
//   InteropPeer.exe typed-pub DOMAIN TOPIC COUNT  demo::Reading through the typed writer:
//                                                 { i % 3, Text(i) }, then a dispose of id 1
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;
using demo;
using FerroDDS;

namespace FerroDDS.Tests
{
    public static class InteropPeer
    {
        private const string Idl = "module interop {\n"
            + "  @final struct Position { double x; double y; double z; };\n"
            + "  @appendable struct Reading {\n"
            + "    @key int32 sensor_id; @key string name; string unit; Position pos;\n"
            + "    sequence<double> values; sequence<uint8> blob; int64 stamp;\n"
            + "  };\n"
            + "};\n";

        private static readonly Duration Timeout = new Duration(15, 0);

        public static int Main(string[] args)
        {
            if (args.Length != 4)
            {
                Console.Error.WriteLine("usage: InteropPeer.exe pub|sub|typed-pub DOMAIN TOPIC COUNT");
                return 4;
            }
            int domain = int.Parse(args[1], CultureInfo.InvariantCulture);
            int count = int.Parse(args[3], CultureInfo.InvariantCulture);
            try
            {
                using (var participant = DomainParticipantFactory.Instance.CreateParticipant(domain))
                {
                    switch (args[0])
                    {
                        case "pub": return Publish(participant, args[2], count);
                        case "sub": return Subscribe(participant, args[2], count);
                        case "typed-pub": return PublishTyped(participant, args[2], count);
                        default:
                            Console.Error.WriteLine("no mode " + args[0]);
                            return 4;
                    }
                }
            }
            catch (Exception e)
            {
                Console.Error.WriteLine("InteropPeer: " + e);
                return 4;
            }
        }

        /// <summary>The text of demo::Reading i: non-ASCII on purpose.</summary>
        public static string Text(int i)
        {
            return "reading " + i + " \u00b0C \u4e2d";
        }

        private static DataWriterQos WriterQos()
        {
            var qos = new DataWriterQos();
            qos.Reliability.Kind = ReliabilityQosPolicyKind.ReliableReliabilityQos;
            qos.Reliability.MaxBlockingTime = new Duration(10, 0);
            qos.History.Kind = HistoryQosPolicyKind.KeepAllHistoryQos;
            qos.WriterDataLifecycle.AutodisposeUnregisteredInstances = false;
            return qos;
        }

        private static string Number(double d)
        {
            string s = d.ToString("R", CultureInfo.InvariantCulture);
            return s.IndexOf('.') < 0 && s.IndexOf('E') < 0 ? s + ".0" : s;
        }

        /// <summary>Reading i of tests/interop/README.md in FerroDDS's JSON view.</summary>
        private static string ReadingJson(int i)
        {
            var json = new StringBuilder();
            json.Append("{\"sensor_id\": ").Append(i % 3)
                .Append(", \"name\": \"sensor-").Append(i % 3).Append('"')
                .Append(", \"unit\": \"\u00b0C\"")
                .Append(", \"pos\": {\"x\": ").Append(Number(i)).Append(", \"y\": ").Append(Number(-i))
                .Append(", \"z\": ").Append(Number(0.5 * i)).Append("}, \"values\": [");
            for (int k = 0; k < i % 5; k++)
            {
                json.Append(k > 0 ? ", " : "").Append(Number(i * 0.25));
            }
            var blob = new byte[i % 11];
            for (int k = 0; k < blob.Length; k++)
            {
                blob[k] = (byte)((i * 7 + k) % 256);
            }
            json.Append("], \"blob\": \"").Append(Convert.ToBase64String(blob))
                .Append("\", \"stamp\": ").Append(1700000000000L + i).Append('}');
            return json.ToString();
        }

        private static int Publish(DomainParticipant participant, string topicName, int count)
        {
            var topic = participant.CreateTopic(topicName, TopicType.FromIdl(Idl, "interop::Reading"));
            // Cyclone's writers offer XCDR2 only; so does this one. TRANSIENT_LOCAL, for a
            // reader that learns of this writer after it matched the reader and wrote.
            var qos = WriterQos();
            qos.DataRepresentation.Value.Add(DataRepresentation.Xcdr2);
            qos.Durability.Kind = DurabilityQosPolicyKind.TransientLocalDurabilityQos;
            var writer = participant.CreatePublisher().CreateDataWriter(topic, qos);
            if (writer.WaitForMatched(1, Timeout) != ReturnCode.Ok)
            {
                Console.Error.WriteLine("InteropPeer: no reader matched");
                return 2;
            }
            for (int i = 0; i < count; i++)
            {
                writer.WriteJson(ReadingJson(i));
            }
            writer.DisposeJson("{\"sensor_id\": 1, \"name\": \"sensor-1\"}");
            var acked = writer.WaitForAcknowledgments(Timeout);
            Console.WriteLine("{\"done\": " + count + ", \"acked\": " + (acked == ReturnCode.Ok ? "true" : "false") + "}");
            return acked == ReturnCode.Ok ? 0 : 3;
        }

        private static int Subscribe(DomainParticipant participant, string topicName, int count)
        {
            var topic = participant.CreateTopic(topicName, TopicType.FromIdl(Idl, "interop::Reading"));
            var qos = new DataReaderQos();
            qos.Reliability.Kind = ReliabilityQosPolicyKind.ReliableReliabilityQos;
            qos.History.Kind = HistoryQosPolicyKind.KeepAllHistoryQos;
            var reader = participant.CreateSubscriber().CreateDataReader(topic, qos);
            var waitSet = participant.CreateWaitSet();
            waitSet.AttachCondition(reader.CreateReadCondition(SampleStateKind.NotReadSampleState));
            var active = new List<Condition>();
            var samples = new List<string>();
            var infos = new List<SampleInfo>();
            int valid = 0;
            bool disposed = false;
            var end = DateTime.UtcNow.AddSeconds(30);
            while ((valid < count || !disposed) && DateTime.UtcNow < end)
            {
                waitSet.Wait(active, new Duration(1, 0));
                if (reader.TakeJson(samples, infos) != ReturnCode.Ok)
                {
                    continue;
                }
                for (int i = 0; i < samples.Count; i++)
                {
                    Console.WriteLine("{\"valid_data\": " + (infos[i].ValidData ? "true" : "false")
                        + ", \"instance_state\": \"" + infos[i].InstanceState + "\", \"sample\": " + samples[i] + "}");
                    valid += infos[i].ValidData ? 1 : 0;
                    disposed |= infos[i].InstanceState == InstanceStateKind.NotAliveDisposedInstanceState;
                }
            }
            if (valid < count || !disposed)
            {
                Console.Error.WriteLine("InteropPeer: timeout: " + valid + "/" + count + " valid samples, dispose " + (disposed ? "seen" : "not seen"));
                return 1;
            }
            return 0;
        }

        private static int PublishTyped(DomainParticipant participant, string topicName, int count)
        {
            var topic = participant.CreateTopic(topicName, new ReadingTypeSupport());
            var writer = participant.CreatePublisher().CreateDataWriter(topic, WriterQos());
            if (writer.WaitForMatched(1, Timeout) != ReturnCode.Ok)
            {
                Console.Error.WriteLine("InteropPeer: no reader matched");
                return 2;
            }
            for (int i = 0; i < count; i++)
            {
                writer.Write(new Reading(i % 3, Text(i)));
            }
            writer.Dispose(new Reading(1, ""));
            var acked = writer.WaitForAcknowledgments(Timeout);
            Console.WriteLine("{\"done\": " + count + ", \"acked\": " + (acked == ReturnCode.Ok ? "true" : "false") + "}");
            return acked == ReturnCode.Ok ? 0 : 3;
        }
    }
}
