// Conditions and wait sets. Every condition is a C API handle (a reader's read and query
// conditions, a writer's or reader's status condition); a wait set hands the C API one
// number per attached condition and maps the numbers it hands back to the conditions that
// hold.
using System;
using System.Collections.Generic;

namespace FerroDDS
{
    /// <summary>What a <see cref="WaitSet"/> waits for.</summary>
    public abstract class Condition
    {
        // The wait sets it is attached to (guarded by itself), for a status condition
        // whose C API handle changes.
        internal readonly List<WaitSet> WaitSets = new List<WaitSet>();

        internal Condition()
        {
        }

        /// <summary>The handle in the binding's tree of entities.</summary>
        internal abstract Child Node { get; }
    }

    /// <summary>A writer's or reader's status condition: it holds while one of
    /// <see cref="EnabledStatuses"/> changed since the application last read that status
    /// (DATA_AVAILABLE: while samples not read yet wait). Made by the entity's
    /// <see cref="Entity.StatusCondition"/>, deleted with it.</summary>
    public sealed class StatusCondition : Condition
    {
        private Child _node;

        internal StatusCondition(Entity entity)
        {
            Entity = entity;
            EnabledStatuses = StatusMask.DefaultStatusMask;
            _node = Create(entity, EnabledStatuses);
        }

        private static Child Create(Entity entity, StatusMask mask)
        {
            return new Child(Native.Check(Native.ferrodds_create_statuscondition(entity.Handle, (uint)mask)), entity);
        }

        /// <summary>Its entity.</summary>
        public Entity Entity { get; private set; }

        /// <summary>The statuses it holds for (all, at first).</summary>
        public StatusMask EnabledStatuses { get; private set; }

        internal override Child Node { get { return _node; } }

        /// <summary>Holds for the statuses in <paramref name="mask"/> from now on (the wait
        /// sets it is attached to wait for them).</summary>
        public void SetEnabledStatuses(StatusMask mask)
        {
            lock (WaitSets)
            {
                // The C API's status conditions keep their mask: a new one replaces it.
                Child old = _node;
                _node = Create(Entity, mask);
                EnabledStatuses = mask;
                foreach (var waitSet in WaitSets)
                {
                    waitSet.Replace(this, old);
                }
                old.Dispose();
            }
        }
    }

    /// <summary>A condition that holds while its reader has samples in the states it
    /// selects; taking or reading through it hands out only those. Deleted with its reader,
    /// or by <see cref="Dispose"/>.</summary>
    public class ReadCondition : Condition, IDisposable
    {
        private readonly Child _node;

        internal ReadCondition(int handle, DataReader reader, SampleStateKind sampleStates, ViewStateKind viewStates, InstanceStateKind instanceStates)
        {
            _node = new Child(handle, reader);
            DataReader = reader;
            SampleStateMask = sampleStates;
            ViewStateMask = viewStates;
            InstanceStateMask = instanceStates;
        }

        internal override Child Node { get { return _node; } }

        /// <summary>Its reader.</summary>
        public DataReader DataReader { get; private set; }

        /// <summary>The sample states it selects.</summary>
        public SampleStateKind SampleStateMask { get; private set; }

        /// <summary>The view states it selects.</summary>
        public ViewStateKind ViewStateMask { get; private set; }

        /// <summary>The instance states it selects.</summary>
        public InstanceStateKind InstanceStateMask { get; private set; }

        /// <summary>Deletes it (nothing when it was deleted already).</summary>
        public void Dispose()
        {
            _node.Dispose();
        }
    }

    /// <summary>A read condition that also filters by content: a DDS SQL expression over
    /// the type's members, <c>%n</c> standing for <see cref="QueryParameters"/>[n].</summary>
    public sealed class QueryCondition : ReadCondition
    {
        internal QueryCondition(int handle, DataReader reader, SampleStateKind sampleStates, ViewStateKind viewStates,
            InstanceStateKind instanceStates, string expression, IList<string> parameters)
            : base(handle, reader, sampleStates, viewStates, instanceStates)
        {
            QueryExpression = expression;
            QueryParameters = new List<string>(parameters ?? new string[0]).AsReadOnly();
        }

        /// <summary>The expression.</summary>
        public string QueryExpression { get; private set; }

        /// <summary>Its parameters.</summary>
        public IList<string> QueryParameters { get; private set; }
    }

    /// <summary>A handle the C API made that is no DCPS entity (a condition, a wait set),
    /// kept in the tree so that deleting its parent forgets it.</summary>
    internal sealed class Child : Entity
    {
        internal Child(int handle, Entity parent) : base(handle, parent)
        {
        }
    }

    /// <summary>Blocks until one of its conditions holds. Of one participant (the C API's
    /// wait sets are); deleted with it, or by <see cref="Dispose"/>.</summary>
    public sealed class WaitSet : IDisposable
    {
        private readonly Child _node;
        // Guards the attached conditions (never held while waiting: conditions may be
        // attached meanwhile).
        private readonly object _lock = new object();
        private readonly Dictionary<long, Condition> _attached = new Dictionary<long, Condition>();
        private long _last;
        // One Wait at a time, as DCPS allows; guards _holding.
        private readonly object _waiting = new object();
        private IntPtr[] _holding = new IntPtr[4];

        internal WaitSet(int handle, DomainParticipant participant)
        {
            _node = new Child(handle, participant);
        }

        /// <summary>Attaches <paramref name="condition"/>.</summary>
        public void AttachCondition(Condition condition)
        {
            if (condition == null)
            {
                // The C API names the missing condition (handle 0).
                Native.Check(Native.ferrodds_waitset_attach(_node.Handle, 0, IntPtr.Zero));
            }
            lock (condition.WaitSets)
            lock (_lock)
            {
                long id = _last + 1;
                Native.Check(Native.ferrodds_waitset_attach(_node.Handle, condition.Node.Handle, (IntPtr)id));
                _last = id;
                _attached.Add(id, condition);
                condition.WaitSets.Add(this);
            }
        }

        /// <summary>Detaches <paramref name="condition"/>.</summary>
        public void DetachCondition(Condition condition)
        {
            if (condition == null)
            {
                Native.Check(Native.ferrodds_waitset_detach(_node.Handle, 0));
            }
            lock (condition.WaitSets)
            lock (_lock)
            {
                Native.Check(Native.ferrodds_waitset_detach(_node.Handle, condition.Node.Handle));
                _attached.Remove(IdOf(condition));
                condition.WaitSets.Remove(this);
            }
        }

        /// <summary>Attaches <paramref name="condition"/>'s new handle in place of
        /// <paramref name="old"/> (the caller holds the condition's lock).</summary>
        internal void Replace(Condition condition, Child old)
        {
            lock (_lock)
            {
                Native.Check(Native.ferrodds_waitset_detach(_node.Handle, old.Handle));
                Native.Check(Native.ferrodds_waitset_attach(_node.Handle, condition.Node.Handle, (IntPtr)IdOf(condition)));
            }
        }

        private long IdOf(Condition condition)
        {
            foreach (var pair in _attached)
            {
                if (pair.Value == condition)
                {
                    return pair.Key;
                }
            }
            return 0;
        }

        /// <summary>The attached conditions, into <paramref name="conditions"/> (cleared first).</summary>
        public void GetConditions(ICollection<Condition> conditions)
        {
            lock (_lock)
            {
                conditions.Clear();
                foreach (var c in _attached.Values)
                {
                    conditions.Add(c);
                }
            }
        }

        /// <summary>Waits up to <paramref name="timeout"/> for attached conditions to hold;
        /// those that do go into <paramref name="activeConditions"/> (cleared first).
        /// <see cref="ReturnCode.Ok"/>, or <see cref="ReturnCode.Timeout"/> when none held.</summary>
        public unsafe ReturnCode Wait(ICollection<Condition> activeConditions, Duration timeout)
        {
            if (activeConditions == null)
            {
                throw new ArgumentNullException("activeConditions");
            }
            lock (_waiting)
            {
                activeConditions.Clear();
                lock (_lock)
                {
                    if (_holding.Length < _attached.Count)
                    {
                        _holding = new IntPtr[_attached.Count];
                    }
                }
                int n;
                fixed (IntPtr* holding = _holding)
                {
                    n = Native.Check(Native.ferrodds_waitset_wait(_node.Handle, holding, (UIntPtr)_holding.Length, timeout.ToNanoseconds()));
                }
                lock (_lock)
                {
                    for (int i = 0; i < Math.Min(n, _holding.Length); i++)
                    {
                        Condition c;
                        if (_attached.TryGetValue((long)_holding[i], out c))
                        {
                            activeConditions.Add(c);
                        }
                    }
                }
                return n == 0 ? ReturnCode.Timeout : ReturnCode.Ok;
            }
        }

        /// <summary>Deletes it (nothing when it was deleted already).</summary>
        public void Dispose()
        {
            _node.Dispose();
        }
    }
}
