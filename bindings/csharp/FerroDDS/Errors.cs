// DDS return codes and the exception a failed call throws. Only outcomes that are not
// failures come back as a ReturnCode (NoData from Take/Read, Timeout from the waits); every
// other failure of the C API is a DdsException carrying its code and the C API's message.
using System;

namespace FerroDDS
{
    /// <summary>DDS ReturnCode_t (the C API returns them negated).</summary>
    public enum ReturnCode
    {
        /// <summary>Success.</summary>
        Ok = 0,
        /// <summary>A failure no other code names.</summary>
        Error = 1,
        /// <summary>Not supported.</summary>
        Unsupported = 2,
        /// <summary>An argument is invalid: a null, an entity of the wrong kind, bytes that
        /// are not a sample.</summary>
        BadParameter = 3,
        /// <summary>The call does not fit the entities' state.</summary>
        PreconditionNotMet = 4,
        /// <summary>A resource limit was reached.</summary>
        OutOfResources = 5,
        /// <summary>A QoS change of a policy that may not change once the entity exists.</summary>
        ImmutablePolicy = 7,
        /// <summary>The entity was deleted.</summary>
        AlreadyDeleted = 9,
        /// <summary>The operation did not complete in its time.</summary>
        Timeout = 10,
        /// <summary>Nothing to take or read.</summary>
        NoData = 11,
        /// <summary>A buffer was too small (Cyclone DDS's code).</summary>
        BufferTooSmall = 30,
    }

    /// <summary>A call of the C API failed: <see cref="ReturnCode"/> says how, the message
    /// (<c>"ferrodds_function: what was wrong"</c>) what.</summary>
    public class DdsException : Exception
    {
        /// <summary>Why the call failed.</summary>
        public ReturnCode ReturnCode { get; private set; }

        /// <summary>A failure with <paramref name="code"/> and <paramref name="message"/>.</summary>
        public DdsException(ReturnCode code, string message) : base(message)
        {
            ReturnCode = code;
        }

        /// <summary>The failure <paramref name="rc"/> (negative) of the call this thread made
        /// last, with its message.</summary>
        internal static unsafe DdsException FromLastError(int rc)
        {
            string message = Native.Text(Native.ferrodds_last_error());
            if (message.Length == 0)
            {
                message = Native.Text(Native.ferrodds_strretcode(rc));
            }
            return new DdsException((ReturnCode)(-rc), message);
        }
    }
}
