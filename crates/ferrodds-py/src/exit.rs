//! Leaving Python without a crash. When the interpreter finalizes, a thread that takes the
//! GIL again (returning from a call that released it, or a FerroDDS thread calling a
//! listener) is ended by CPython with a forced unwind, which aborts the process once it
//! meets Rust frames. So `ferrodds` registers [`at_exit`] with `atexit`: from then on no
//! call releases the GIL or calls a listener, and it waits (briefly, GIL released) for
//! the threads that are inside such a call to come back. Waits are made in short slices so
//! that a thread blocked in one comes back soon.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

use crate::error::DDSException;

/// Set by [`at_exit`]: the interpreter is going away.
static EXITING: AtomicBool = AtomicBool::new(false);
/// Threads inside a call that released the GIL, or about to call a listener.
static INSIDE: AtomicUsize = AtomicUsize::new(0);

/// How long a wait sleeps before it looks at [`EXITING`] again.
const SLICE: Duration = Duration::from_millis(50);
/// How long [`at_exit`] waits for the threads inside to come back.
const DRAIN: Duration = Duration::from_secs(2);

/// Runs `f` with the GIL released; refused once the interpreter exits.
pub(crate) fn released<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    if EXITING.load(Ordering::Acquire) {
        return Err(DDSException::new_err("the Python interpreter is exiting"));
    }
    INSIDE.fetch_add(1, Ordering::AcqRel);
    let out = py.detach(f);
    INSIDE.fetch_sub(1, Ordering::AcqRel);
    Ok(out)
}

/// [`released`] for a wait of up to `timeout`, made of slices of `wait` (which returns
/// true when done) so that it ends soon after the interpreter starts to exit.
pub(crate) fn wait(
    py: Python<'_>,
    timeout: Duration,
    wait: impl Fn(Duration) -> bool + Send + Sync,
) -> PyResult<bool> {
    released(py, || {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if wait(left.min(SLICE)) {
                return true;
            }
            if left <= SLICE || EXITING.load(Ordering::Acquire) {
                return false;
            }
        }
    })
}

/// Calls `f` with the GIL from a FerroDDS thread (a listener), unless the interpreter exits.
pub(crate) fn call_python(f: impl FnOnce(Python<'_>)) {
    INSIDE.fetch_add(1, Ordering::AcqRel);
    if !EXITING.load(Ordering::Acquire) {
        Python::attach(|py| {
            // Checked again with the GIL: `at_exit` may have run while this thread waited.
            if !EXITING.load(Ordering::Acquire) {
                f(py);
            }
        });
    }
    INSIDE.fetch_sub(1, Ordering::AcqRel);
}

/// Registered with `atexit` by `ferrodds/__init__.py`.
#[pyfunction]
pub(crate) fn at_exit(py: Python<'_>) {
    EXITING.store(true, Ordering::Release);
    py.detach(|| {
        let deadline = Instant::now() + DRAIN;
        while INSIDE.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

/// Holds a FerroDDS entity and drops it with the GIL released. The last handle of a
/// participant stops its threads and waits for them; a thread of it may be waiting for
/// the GIL to call a listener, so dropping it on a thread that holds the GIL (as Python
/// frees objects) would wait for ever.
pub(crate) struct DropReleased<T: Send>(Option<T>);

impl<T: Send> DropReleased<T> {
    pub(crate) fn new(inner: T) -> Self {
        DropReleased(Some(inner))
    }
}

impl<T: Send> std::ops::Deref for DropReleased<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // INVARIANT: `Some` from `new` until `drop`.
        self.0
            .as_ref()
            .expect("a FerroDDS entity used after it was dropped")
    }
}

impl<T: Send> Drop for DropReleased<T> {
    fn drop(&mut self) {
        if let Some(inner) = self.0.take() {
            Python::attach(|py| py.detach(move || drop(inner)));
        }
    }
}
