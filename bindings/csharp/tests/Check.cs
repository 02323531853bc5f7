// Checks and a runner for the C# test programs, which crates/ferrodds-c/tests/csharp.rs
// builds and runs: PROGRAM DOMAIN CASE... runs each case, prints "ok CASE" for each that
// passes, and exits 1 at the first that fails, saying what failed.
using System;
using System.Collections.Generic;
using System.Threading;
using FerroDDS;

namespace FerroDDS.Tests
{
    public sealed class CheckFailed : Exception
    {
        public CheckFailed(string message) : base(message) { }
    }

    public static class Check
    {
        public static void True(bool condition, string what)
        {
            if (!condition)
            {
                throw new CheckFailed(what);
            }
        }

        public static void Equal<T>(T expected, T actual, string what)
        {
            if (!EqualityComparer<T>.Default.Equals(expected, actual))
            {
                throw new CheckFailed(what + ": expected " + expected + ", got " + actual);
            }
        }

        public static void EqualItems<T>(IList<T> expected, IList<T> actual, string what)
        {
            Equal(expected.Count, actual.Count, what + " (how many)");
            for (int i = 0; i < expected.Count; i++)
            {
                Equal(expected[i], actual[i], what + " [" + i + "]");
            }
        }

        /// <summary>Runs <paramref name="action"/>, which must throw a DdsException with
        /// <paramref name="code"/> and a message holding <paramref name="text"/>.</summary>
        public static DdsException Throws(ReturnCode code, string text, Action action)
        {
            var e = Throws<DdsException>(action);
            if (e.ReturnCode != code || !e.Message.Contains(text))
            {
                throw new CheckFailed("expected " + code + " with \"" + text + "\", got " + e.ReturnCode + ": " + e.Message);
            }
            Console.WriteLine("  " + e.ReturnCode + ": " + e.Message);
            return e;
        }

        /// <summary>Runs <paramref name="action"/>, which must throw a <typeparamref name="E"/>.</summary>
        public static E Throws<E>(Action action) where E : Exception
        {
            try
            {
                action();
            }
            catch (E e)
            {
                return e;
            }
            catch (Exception e)
            {
                throw new CheckFailed("expected " + typeof(E).Name + ", got " + e);
            }
            throw new CheckFailed("expected " + typeof(E).Name + ", got no exception");
        }

        /// <summary>Waits up to <paramref name="seconds"/> for <paramref name="condition"/>.</summary>
        public static void Until(Func<bool> condition, string what, int seconds = 10)
        {
            var end = DateTime.UtcNow.AddSeconds(seconds);
            while (!condition())
            {
                if (DateTime.UtcNow > end)
                {
                    throw new CheckFailed("timed out: " + what);
                }
                Thread.Sleep(10);
            }
        }
    }

    public static class Runner
    {
        public static int Run(string[] args, IDictionary<string, Action<int>> cases)
        {
            int domain;
            if (args.Length < 2 || !int.TryParse(args[0], out domain))
            {
                Console.Error.WriteLine("usage: DOMAIN CASE... (cases: " + string.Join(", ", cases.Keys) + ")");
                return 2;
            }
            for (int i = 1; i < args.Length; i++)
            {
                Action<int> run;
                if (!cases.TryGetValue(args[i], out run))
                {
                    Console.Error.WriteLine("no case " + args[i]);
                    return 2;
                }
                try
                {
                    run(domain);
                }
                catch (Exception e)
                {
                    Console.WriteLine("FAILED " + args[i] + ": " + e);
                    return 1;
                }
                Console.WriteLine("ok " + args[i]);
            }
            return 0;
        }
    }
}
