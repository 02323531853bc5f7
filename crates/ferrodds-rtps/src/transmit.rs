//! What the protocol asks the driver to send.

use crate::wire::Locator;

/// One datagram and where it goes. `#[must_use]`: dropping it loses traffic.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Transmit {
    /// Destinations (the same bytes go to each).
    pub destinations: Vec<Locator>,
    /// A complete RTPS message.
    pub payload: Vec<u8>,
}
