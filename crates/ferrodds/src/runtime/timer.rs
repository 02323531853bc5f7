//! One timer thread for all the participants of a process.
//!
//! Each participant's protocol deadlines (announcements, heartbeats, leases, DCPS
//! deadlines) come due on this thread, which sleeps until the earliest of all of them (at
//! most [`TIMER_IDLE_WAIT`]). A participant whose input brings its next deadline forward
//! kicks it ([`ProcessTimer::kick`]). Before, every participant had a timer thread of its
//! own: a hundred participants, a hundred threads, each waking on its own.
//!
//! Work that comes due runs here one participant after the other, listeners included, as
//! it ran on each participant's own timer thread.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Instant;

use ferrodds_rtps::Timestamp;

use super::{Core, Shared, TIMER_IDLE_WAIT};

/// The process's timer: a handle on its thread, held by each participant ([`Shared`]). The
/// thread starts with the first participant and stops when the last handle goes.
#[derive(Debug)]
pub(crate) struct ProcessTimer {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Debug, Default)]
struct Inner {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct State {
    participants: Vec<Weak<Shared>>,
    /// A participant's deadline came forward since the thread last looked at them all.
    kicked: bool,
    stopped: bool,
}

/// The timer of this process, if one runs, with the id of the process that started it: a
/// child made by `fork` (Python's `multiprocessing` does that) inherits the parent's timer
/// without its thread, and must start its own.
static TIMER: Mutex<(u32, Weak<ProcessTimer>)> = Mutex::new((0, Weak::new()));

/// What `slot` holds, if process `pid` made it and it is still alive.
fn of_process<T>(slot: &(u32, Weak<T>), pid: u32) -> Option<Arc<T>> {
    if slot.0 == pid {
        slot.1.upgrade()
    } else {
        None
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ProcessTimer {
    /// The process's timer, started if none runs.
    pub(crate) fn get() -> std::io::Result<Arc<ProcessTimer>> {
        let mut current = lock(&TIMER);
        let pid = std::process::id();
        if let Some(timer) = of_process(&current, pid) {
            return Ok(timer);
        }
        let inner = Arc::new(Inner::default());
        let thread = {
            let inner = Arc::clone(&inner);
            std::thread::Builder::new()
                .name("ferrodds-timer".into())
                .spawn(move || run(&inner))?
        };
        let timer = Arc::new(ProcessTimer {
            inner,
            thread: Mutex::new(Some(thread)),
        });
        *current = (pid, Arc::downgrade(&timer));
        Ok(timer)
    }

    /// Adds a participant, whose deadlines it then keeps.
    pub(crate) fn add(&self, shared: Weak<Shared>) {
        let mut state = lock(&self.inner.state);
        state.participants.retain(|p| p.strong_count() > 0);
        state.participants.push(shared);
        state.kicked = true;
        self.inner.wake.notify_one();
    }

    /// Tells the thread that a participant's next deadline came forward (or work was
    /// deferred to it): it looks at every participant again.
    pub(crate) fn kick(&self) {
        lock(&self.inner.state).kicked = true;
        self.inner.wake.notify_one();
    }
}

impl Drop for ProcessTimer {
    fn drop(&mut self) {
        lock(&self.inner.state).stopped = true;
        self.inner.wake.notify_one();
        if let Some(t) = lock(&self.thread).take() {
            // The last participant may end on the timer thread itself (a listener that
            // held its last handle): that thread ends once it returns.
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

fn run(inner: &Inner) {
    loop {
        let participants = {
            let mut state = lock(&inner.state);
            if state.stopped {
                return;
            }
            state.kicked = false;
            state.participants.retain(|p| p.strong_count() > 0);
            state.participants.clone()
        };
        let mut earliest = Instant::now() + TIMER_IDLE_WAIT;
        for p in participants {
            if let Some(shared) = p.upgrade().filter(|s| !s.is_shut_down()) {
                earliest = earliest.min(run_due(&shared));
            }
        }
        let mut state = lock(&inner.state);
        let now = Instant::now();
        if state.kicked || state.stopped || earliest <= now {
            continue;
        }
        state = match inner.wake.wait_timeout(state, earliest - now) {
            Ok((s, _)) => s,
            Err(p) => p.into_inner().0,
        };
        drop(state);
    }
}

/// Runs what came due for `shared`; when its next deadline is.
fn run_due(shared: &Shared) -> Instant {
    let mut core = shared.lock();
    loop {
        let now = shared.now();
        let next = core.next_timeout();
        if next.is_some_and(|t| t <= now) || !core.deferred.is_empty() {
            core.node.handle_timeout(now);
            core = shared.prepare(core, now);
            core.after_input();
            let Core {
                pending, deferred, ..
            } = &mut *core;
            pending.append(deferred);
            shared.finish(core);
            core = shared.lock();
            continue;
        }
        let wait = next
            .map_or(TIMER_IDLE_WAIT, |t| t.since(now))
            .min(TIMER_IDLE_WAIT);
        // An input that brings the deadline before this kicks the thread.
        core.timer_wakes_at = now.after(wait);
        return Instant::now() + wait;
    }
}

/// Says, for [`Shared::finish`], that the timer looks at `core` again by itself only at
/// `timer_wakes_at` (kept in the core, set by [`run_due`]).
pub(crate) fn must_kick(core: &Core, next: Option<Timestamp>) -> bool {
    !core.deferred.is_empty() || next.is_some_and(|t| t < core.timer_wakes_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forked_child_does_not_take_its_parents_timer() {
        let alive = Arc::new(1);
        let slot = (42, Arc::downgrade(&alive));
        assert!(of_process(&slot, 42).is_some(), "the process that made it");
        assert!(of_process(&slot, 43).is_none(), "a child made by fork");
        drop(alive);
        assert!(of_process(&slot, 42).is_none(), "gone");
    }
}
