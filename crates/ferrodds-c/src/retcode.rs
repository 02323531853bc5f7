//! Return codes (DDS `ReturnCode_t`, negative as Cyclone DDS's C API returns them) and the
//! calling thread's message for the last call that failed.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A return code: zero or a count on success, one of the negative `FERRODDS_RETCODE_*` on
/// failure.
#[allow(non_camel_case_types)]
pub type ferrodds_return_t = i32;

/// Success.
pub const FERRODDS_RETCODE_OK: ferrodds_return_t = 0;
/// A failure no other code names.
pub const FERRODDS_RETCODE_ERROR: ferrodds_return_t = -1;
/// The operation is not supported.
pub const FERRODDS_RETCODE_UNSUPPORTED: ferrodds_return_t = -2;
/// An argument is invalid: a null pointer, a handle of the wrong kind, bytes that are not a
/// sample of the type.
pub const FERRODDS_RETCODE_BAD_PARAMETER: ferrodds_return_t = -3;
/// The call does not fit the entities' state: a topic of another participant, a wait set
/// with nothing attached, an entity attached twice.
pub const FERRODDS_RETCODE_PRECONDITION_NOT_MET: ferrodds_return_t = -4;
/// A resource limit was reached (a history full past its blocking time counts as timeout).
pub const FERRODDS_RETCODE_OUT_OF_RESOURCES: ferrodds_return_t = -5;
/// `ferrodds_set_qos` would change a policy that may not change once the entity exists;
/// nothing changed.
pub const FERRODDS_RETCODE_IMMUTABLE_POLICY: ferrodds_return_t = -7;
/// The handle names an entity that was deleted.
pub const FERRODDS_RETCODE_ALREADY_DELETED: ferrodds_return_t = -9;
/// The operation did not complete in its time.
pub const FERRODDS_RETCODE_TIMEOUT: ferrodds_return_t = -10;
/// Nothing to take or read.
pub const FERRODDS_RETCODE_NO_DATA: ferrodds_return_t = -11;
/// The caller's buffer is too small; the size needed was written where the call says.
pub const FERRODDS_RETCODE_BUFFER_TOO_SMALL: ferrodds_return_t = -30;

/// Why a call failed: its return code and what to tell the caller.
#[derive(Debug)]
pub(crate) struct Fail {
    pub(crate) code: ferrodds_return_t,
    pub(crate) message: String,
}

impl Fail {
    pub(crate) fn new(code: ferrodds_return_t, message: impl Into<String>) -> Fail {
        Fail {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn bad(message: impl Into<String>) -> Fail {
        Fail::new(FERRODDS_RETCODE_BAD_PARAMETER, message)
    }

    pub(crate) fn null(what: &str) -> Fail {
        Fail::bad(format!("{what} is a null pointer"))
    }
}

impl From<ferrodds::Error> for Fail {
    fn from(e: ferrodds::Error) -> Fail {
        use ferrodds::Error as E;
        let code = match &e {
            E::Timeout(..) => FERRODDS_RETCODE_TIMEOUT,
            E::Closed => FERRODDS_RETCODE_ALREADY_DELETED,
            E::TooLarge(_) => FERRODDS_RETCODE_OUT_OF_RESOURCES,
            E::ImmutablePolicy(_) => FERRODDS_RETCODE_IMMUTABLE_POLICY,
            E::BadParameter(_)
            | E::Encode(_)
            | E::Decode(_)
            | E::Encapsulation { .. }
            | E::UnknownInstance(_)
            | E::Type(_)
            | E::Filter { .. } => FERRODDS_RETCODE_BAD_PARAMETER,
            _ => FERRODDS_RETCODE_ERROR,
        };
        Fail::new(code, e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(function: &str, message: &str) {
    let text = format!("{function}: {message}").replace('\0', "\\0");
    let text = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = text);
}

/// Runs the body of C function `function`: its value on success; on failure its code, with
/// the message kept for [`ferrodds_last_error`]. A panic is caught here, never unwinding
/// into C, and reported as `FERRODDS_RETCODE_ERROR`.
pub(crate) fn call(function: &str, body: impl FnOnce() -> Result<i32, Fail>) -> i32 {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(fail)) => {
            set_last_error(function, &fail.message);
            fail.code
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".to_owned());
            set_last_error(function, &format!("internal error (a panic: {what})"));
            FERRODDS_RETCODE_ERROR
        }
    }
}

/// What went wrong in this thread's last call that failed: `"function: message"`, or an
/// empty string when none has. The text lives until this thread's next failing call.
#[no_mangle]
pub extern "C" fn ferrodds_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// A short name of return code `code` (`"BAD_PARAMETER"`, …); a static string.
#[no_mangle]
pub extern "C" fn ferrodds_strretcode(code: ferrodds_return_t) -> *const c_char {
    let name: &'static [u8] = match code {
        c if c >= 0 => b"OK\0",
        FERRODDS_RETCODE_UNSUPPORTED => b"UNSUPPORTED\0",
        FERRODDS_RETCODE_BAD_PARAMETER => b"BAD_PARAMETER\0",
        FERRODDS_RETCODE_PRECONDITION_NOT_MET => b"PRECONDITION_NOT_MET\0",
        FERRODDS_RETCODE_OUT_OF_RESOURCES => b"OUT_OF_RESOURCES\0",
        FERRODDS_RETCODE_ALREADY_DELETED => b"ALREADY_DELETED\0",
        FERRODDS_RETCODE_TIMEOUT => b"TIMEOUT\0",
        FERRODDS_RETCODE_NO_DATA => b"NO_DATA\0",
        FERRODDS_RETCODE_BUFFER_TOO_SMALL => b"BUFFER_TOO_SMALL\0",
        _ => b"ERROR\0",
    };
    name.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: ferrodds_last_error returns this thread's NUL-terminated message.
        unsafe { CStr::from_ptr(ferrodds_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_failure_keeps_its_message_and_a_panic_does_not_escape() {
        assert_eq!(call("f", || Err(Fail::null("name"))), -3);
        assert_eq!(last(), "f: name is a null pointer");
        assert_eq!(call("g", || panic!("boom")), FERRODDS_RETCODE_ERROR);
        assert!(last().starts_with("g: internal error"), "{}", last());
        assert_eq!(call("h", || Ok(7)), 7);
        assert!(
            last().starts_with("g:"),
            "a success leaves the last failure's message"
        );
    }
}
